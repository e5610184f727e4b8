// SAVE and BGSAVE: a consistent point-in-time copy of the data (Store::Checkpoint, a RocksDB
// checkpoint) in <dir>/checkpoints/<unix-ms>, a data dir a server can start from
// (sluice-server --dir <it>), and from it a Redis RDB file <dir>/<dbfilename> (rdb_save.h). One
// save at a time, as Redis; the log names the copy; LASTSAVE and INFO persistence report it.
// Sluice's data is always on disk (the write-ahead log): a save is a backup, not what makes writes
// durable.
#include <filesystem>
#include <string>
#include <system_error>

#include "server/commands/commands.h"
#include "server/commands/rdb_save.h"
#include "server/core/args.h"
#include "server/core/config_compat.h"
#include "server/core/errors.h"
#include "server/core/logging.h"
#include "server/core/saves.h"
#include "server/core/server_state.h"
#include "server/scripting/scripting_state.h"
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

// The Redis-format copy of the checkpoint: <dir>/<dbfilename> (dump.rdb), which redis-server
// 7.0 loads (the way back to Redis) and tools that read RDB files take.
Status SaveRdbFile(ServerState& server, const std::string& data_dir,
                   const std::string& checkpoint) {
  const int64_t start = ServerState::RealNowMs();
  const std::string path =
      data_dir + "/" + GetCompatValue(server.config(), *FindCompatOption("dbfilename"));
  RdbSaveStats stats;
  Status s =
      WriteRdbFromCheckpoint(checkpoint, server.scripting().functions, data_dir, path, &stats);
  if (!s.ok()) {
    LogError("save failed writing " + path + ": " + s.message());
    return s;
  }
  std::string skipped;
  if (stats.skipped_limiters > 0) {
    skipped += ", " + std::to_string(stats.skipped_limiters) +
               " LEAKY/SLIDING/CONC states not written (no Redis form)";
  }
  LogInfo("DB saved on disk: " + path + " (" + std::to_string(stats.keys) + " keys, " +
          std::to_string(stats.bytes) + " bytes, " +
          std::to_string(ServerState::RealNowMs() - start) + " ms" + skipped + ")");
  return Status::Ok();
}

// Runs one save (the caller holds the save slot) and records how it went: the checkpoint, then
// the RDB file from it.
Status RunSave(Store& store, ServerState& server, const std::string& data_dir) {
  const int64_t start = ServerState::RealNowMs();
  const int64_t dirty_at_start = server.dirty().load();
  Result<std::string> dir = MakeCheckpoint(store, data_dir);
  Status s = dir.ok() ? Status::Ok() : dir.status();
  if (dir.ok()) {
    LogInfo("DB saved on disk: checkpoint " + *dir + " (" +
            std::to_string(ServerState::RealNowMs() - start) + " ms)");
    s = SaveRdbFile(server, data_dir, *dir);
  } else {
    LogError("save failed: " + s.message());
  }
  const int64_t end = ServerState::RealNowMs();
  server.saves().End(s.ok(), end / 1000, end - start, dir.ok() ? *dir : std::string());
  if (!s.ok()) return s;
  server.set_last_save_unix(end / 1000);
  server.dirty().Saved(dirty_at_start);
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
  constexpr uint32_t kFlags = kAdmin | kNoScript | kNoMulti | kNoAsyncLoading;
  table.Add(MakeSpec("server", "save", 1, kFlags, {}, Save,
                     "Synchronously save the dataset to disk", "1.0.0", ""));
  table.Add(MakeSpec("server", "bgsave", -1, kAdmin | kNoScript | kNoAsyncLoading, {}, BgSave,
                     "Asynchronously save the dataset to disk", "1.0.0", "[SCHEDULE]"));
}

}  // namespace sluice::server
