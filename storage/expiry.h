// The expiry compaction filter (expiry.cc). Internal header.
#pragma once

#include <rocksdb/compaction_filter.h>

#include <memory>

#include "sluice/clock.h"

namespace sluice::internal {

// A factory of filters that drop values whose expiry has passed on `clock`. A dropped value
// is turned by RocksDB into a deletion marker at the same sequence number (Decision::kRemove,
// never kRemoveAndSkipUntil or kPurge), so an older version of the key in a lower level stays
// shadowed until the marker itself reaches the bottommost level; nothing can reappear.
std::shared_ptr<rocksdb::CompactionFilterFactory> NewExpiryFilterFactory(
    std::shared_ptr<const Clock> clock);

}  // namespace sluice::internal
