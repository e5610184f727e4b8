// Store::Checkpoint: a point-in-time copy of the store as a RocksDB checkpoint, for SAVE and
// BGSAVE. The write-ahead log's buffer (manual_wal_flush) goes to the OS first, so every write
// applied before the call is in the copy; the memtables are flushed into table files (which
// the checkpoint hard-links), so the copy opens without replaying a long log. The copy gets
// the data dir's SLUICE-FORMAT file, so it opens as what it is.
#include <rocksdb/utilities/checkpoint.h>

#include <memory>
#include <string>

#include "engine_host.h"
#include "store_impl.h"

namespace sluice {

Status Store::Impl::Checkpoint(const std::string& dir) {
  if (Status s = FlushLog(); !s.ok()) return s;
  rocksdb::Checkpoint* raw = nullptr;
  if (Status s = internal::FromRocks(rocksdb::Checkpoint::Create(db_.get(), &raw)); !s.ok()) {
    return s;
  }
  std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
  Status s = internal::FromRocks(checkpoint->CreateCheckpoint(dir, /*log_size_for_flush=*/0));
  // Without its format file a data dir holding a database reads as format 0 (format.cc).
  return s.ok() ? WriteCurrentFormat(dir) : s;
}

}  // namespace sluice
