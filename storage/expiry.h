// The element compaction filter (expiry.cc): stale collection elements. Internal header.
#pragma once

#include <rocksdb/compaction_filter.h>
#include <rocksdb/db.h>

#include <atomic>
#include <memory>

#include "sluice/clock.h"

namespace sluice::internal {

// The compaction filter of the element column families (collection.h): drops a sub-key whose
// metadata (read from the default column family) is missing, expired on `clock`, not a
// collection, or of another version. Keeps everything until set_db() is given the open database
// and whatever it cannot decide (undecodable keys, read errors): never loses live data.
class ElementFilterFactory final : public rocksdb::CompactionFilterFactory {
 public:
  explicit ElementFilterFactory(std::shared_ptr<const Clock> clock) : clock_(std::move(clock)) {}
  void set_db(rocksdb::DB* db) { db_.store(db, std::memory_order_release); }
  std::unique_ptr<rocksdb::CompactionFilter> CreateCompactionFilter(
      const rocksdb::CompactionFilter::Context& context) override;
  const char* Name() const override { return "sluice.ElementFilterFactory"; }

 private:
  std::shared_ptr<const Clock> clock_;
  std::atomic<rocksdb::DB*> db_{nullptr};
};

}  // namespace sluice::internal
