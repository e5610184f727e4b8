// SAVE and BGSAVE: a consistent point-in-time copy of the data (Store::Checkpoint, a RocksDB
// checkpoint) in <dir>/checkpoints/<unix-ms>, a data dir a server can start from
// (sluice-server --dir <it>). One save at a time, as Redis; the log names the copy; LASTSAVE
// and INFO persistence report it. Sluice's data is always on disk (the write-ahead log): a save
// is a backup, not what makes writes durable.
#include <filesystem>
#include <string>
#include <system_error>

#include "server/commands/commands.h"
#include "server/core/args.h"
#include "server/core/errors.h"
#include "server/core/logging.h"
#include "server/core/saves.h"
#include "server/core/server_state.h"
#include "sluice/store.h"

namespace sluice::server {

namespace {

// Makes a checkpoint under the data dir; its path, or the error.
Result<std::string> MakeCheckpoint(Store& store, const std::string& data_dir) {
  const std::filesystem::path parent = std::filesystem::path(data_dir) / "checkpoints";
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  if (ec) return Status::IOError("cannot create " + parent.string() + ": " + ec.message());
  const std::string base = std::to_string(ServerState::RealNowMs());
  std::filesystem::path dir = parent / base;
  for (int n = 1; std::filesystem::exists(dir); ++n)
    dir = parent / (base + "-" + std::to_string(n));
  Status s = store.Checkpoint(dir.string());
  if (!s.ok()) return s;
  return dir.string();
}

// Runs one save (the caller holds the save slot) and records how it went.
Status RunSave(Store& store, ServerState& server, const std::string& data_dir) {
  const int64_t start = ServerState::RealNowMs();
  const int64_t dirty_at_start = server.dirty().load();
  Result<std::string> dir = MakeCheckpoint(store, data_dir);
  const int64_t end = ServerState::RealNowMs();
  server.saves().End(dir.ok(), end / 1000, end - start, dir.ok() ? *dir : std::string());
  if (!dir.ok()) {
    LogError("save failed: " + dir.status().message());
    return dir.status();
  }
  server.set_last_save_unix(end / 1000);
  server.dirty().Saved(dirty_at_start);
  LogInfo("DB saved on disk: checkpoint " + *dir + " (" + std::to_string(end - start) + " ms)");
  return Status::Ok();
}

void Save(CommandContext& ctx, Args) {
  if (!ctx.server.saves().Begin()) {
    return ReplyError(ctx.out, BgSaveInProgress());
  }
  if (Status s = RunSave(ctx.store, ctx.server, ctx.server.config().dir); !s.ok()) {
    return ReplyError(ctx.out, s);
  }
  ctx.out.Simple("OK");
}

// BGSAVE [SCHEDULE]: with nothing else running, SCHEDULE starts at once too (as Redis without
// an AOF rewrite).
void BgSave(CommandContext& ctx, Args args) {
  if (args.size() > 2 || (args.size() == 2 && !EqualsIgnoreCase(args[1], "schedule"))) {
    return ReplyError(ctx.out, SyntaxError());
  }
  if (!ctx.server.saves().Begin()) {
    return ReplyError(ctx.out, BgSaveInProgress());
  }
  Store* store = &ctx.store;
  ServerState* server = &ctx.server;
  const std::string dir = ctx.server.config().dir;
  LogInfo("Background saving started");
  ctx.server.saves().StartBackground(
      [store, server, dir] { static_cast<void>(RunSave(*store, *server, dir)); });
  ctx.out.Simple("Background saving started");
}

}  // namespace

void RegisterPersistenceCommands(CommandTable& table) {
  constexpr uint32_t kFlags = kAdmin | kNoScript | kNoMulti;
  table.Add(MakeSpec("server", "save", 1, kFlags, {}, Save,
                     "Synchronously save the dataset to disk", "1.0.0", ""));
  table.Add(MakeSpec("server", "bgsave", -1, kAdmin | kNoScript, {}, BgSave,
                     "Asynchronously save the dataset to disk", "1.0.0", "[SCHEDULE]"));
}

}  // namespace sluice::server
