// Tests of reads that must not walk over deletion markers: how many a read stepped over.
#pragma once

#include <rocksdb/perf_context.h>
#include <rocksdb/perf_level.h>

#include <cstdint>

namespace sluice::testing {

// Internal keys that `read` stepped over because a deletion hid them (RocksDB's perf context,
// on this thread): how tests see a walk over deletion markers without timing it.
template <typename F>
uint64_t DeletionsSkippedBy(F&& read) {
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  rocksdb::get_perf_context()->Reset();
  read();
  const uint64_t n = rocksdb::get_perf_context()->internal_delete_skipped_count;
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
  return n;
}

}  // namespace sluice::testing
