#include "server/commands/rdb_save.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "server/core/server_state.h"
#include "sluice/store.h"
#include "sluice/transaction.h"
#include "storage/formats/rdb_writer.h"

namespace sluice::server {

namespace {

constexpr int kDatabases = 16;

Status EncodeKeys(Store& store, formats::RdbWriter& w, RdbSaveStats* stats) {
  for (int db = 0; db < kDatabases; ++db) {
    bool selected = false;
    uint64_t cursor = 0;
    do {
      Store::Transaction t(store, {}, UnitOptions(/*all_keys=*/false, /*isolate_reads=*/false));
      Result<ScanPage> page = t.Scan(db, cursor, std::nullopt, 1000, std::nullopt);
      if (!page.ok()) return page.status();
      cursor = page->next_cursor;
      for (const std::string& key : page->keys) {
        Result<std::optional<ValueKind>> type = t.Type(db, key);
        if (!type.ok()) return type.status();
        if (!type->has_value()) continue;
        const ValueKind kind = **type;
        if (kind == ValueKind::kStream) {
          ++stats->skipped_streams;
          continue;
        }
        if (kind == ValueKind::kLeaky || kind == ValueKind::kSliding || kind == ValueKind::kConc) {
          ++stats->skipped_limiters;
          continue;
        }
        auto whole = t.ReadWhole(db, key);
        if (!whole.ok()) return whole.status();
        if (!whole->has_value()) continue;
        auto at = t.ExpireTimeMs(db, key);
        if (!at.ok()) return at.status();
        if (!selected) {
          w.SelectDb(db);
          selected = true;
        }
        w.Key(key, **whole, *at > 0 ? *at : 0);
        ++stats->keys;
      }
    } while (cursor != 0);
  }
  return Status::Ok();
}

}  // namespace

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
    if (Status s = EncodeKeys(**snap, w, stats); !s.ok()) return s;
  }
  w.Finish();
  stats->bytes = static_cast<int64_t>(rdb.size());
  const std::string tmp = path + ".temp-" + std::to_string(getpid());
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IOError("cannot create " + tmp + ": " + std::strerror(errno));
  std::string_view left(rdb);
  bool ok = true;
  while (ok && !left.empty()) {
    const ssize_t n = write(fd, left.data(), left.size());
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) left.remove_prefix(static_cast<size_t>(n));
  }
  ok = ok && fsync(fd) == 0;  // as Redis: the file is on disk before it replaces the old one
  const int err = errno;
  close(fd);
  if (!ok) {
    std::filesystem::remove(tmp, ec);
    return Status::IOError("cannot write " + tmp + ": " + std::strerror(err));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::filesystem::remove(tmp, ec);
    return Status::IOError("cannot rename " + tmp + " to " + path);
  }
  return Status::Ok();
}

}  // namespace sluice::server
