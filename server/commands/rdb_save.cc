#include "server/commands/rdb_save.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string_view>
#include <vector>

#include "server/core/durable_file.h"
#include "server/core/server_state.h"
#include "server/replication/full_sync.h"
#include "sluice/store.h"
#include "sluice/transaction.h"
#include "storage/formats/rdb_writer.h"

namespace sluice::server {

Status WriteRdbFromCheckpoint(const std::string& checkpoint_dir, const FunctionRegistry& functions,
                              const std::string& data_dir, const std::string& path,
                              RdbSaveStats* stats) {
  std::string rdb;
  formats::RdbWriter w(&rdb);
  w.Begin(ServerState::RealNowMs() / 1000);
  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::weakly_canonical(data_dir, ec);
  w.Aux(kSavedFromAux, ec ? data_dir : canonical.string());
  std::vector<std::string> codes;
  functions.Snapshot(&codes);
  for (const std::string& code : codes) w.Function(code);
  {
    Options o;
    o.path = checkpoint_dir;
    o.active_expiry = false;
    Result<std::unique_ptr<Store>> snap = Store::Open(o);
    if (!snap.ok()) return snap.status();
    replication::EncodeStats encoded;
    Status s = replication::EncodeRdbKeys(**snap, w, replication::LimiterEntries::kSkip, &encoded);
    if (!s.ok()) return s;
    stats->keys = encoded.keys;
    stats->skipped_limiters = encoded.skipped_limiters;
  }
  w.Finish();
  stats->bytes = static_cast<int64_t>(rdb.size());
  if (const int err = WriteFileDurably(path, rdb); err != 0) {
    return Status::IOError("cannot write " + path + ": " + std::strerror(err));
  }
  return Status::Ok();
}

}  // namespace sluice::server
