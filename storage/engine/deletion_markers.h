// The table-file collector that marks a file of mostly deletion markers for compaction soon:
// RocksDB's CompactOnDeletionCollector, shown every SingleDelete as a Delete.
//
// Why: RocksDB 7.8's collector counts only Deletes, and sorted sets' score elements are erased
// with SingleDelete (Txn::EraseOnceRaw). A flush drops a score element's Put and SingleDelete
// when both are in the memtable, but a re-score of an element already in a table file leaves
// its SingleDelete in the next file as a marker, which score ranges step over until a compaction
// meets the Put. Counted as deletions, files of them are compacted as soon as files of Deletes.
#pragma once

#include <rocksdb/table_properties.h>

#include <cstddef>
#include <memory>

namespace sluice::internal {

// As rocksdb::NewCompactOnDeletionCollectorFactory(window, trigger, ratio), counting
// SingleDeletes too. Thread-safe (RocksDB makes one collector per file it writes).
std::shared_ptr<rocksdb::TablePropertiesCollectorFactory> NewDeletionMarkerCollectorFactory(
    size_t window, size_t trigger, double ratio);

}  // namespace sluice::internal
