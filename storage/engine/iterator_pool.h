// Reused RocksDB iterators for the units' bounded reads (Txn::NewIterator).
//
// Why: making a RocksDB iterator takes the column family's superversion, builds a merging
// iterator over every memtable and level in an arena, and its first seek opens each level's
// table iterator and index; freeing it undoes all of that. A short range read on a hot key
// (`ZRANGEBYSCORE` of 11 members, `HGETALL` of a small hash, a `ZRANGE` head) paid this on every
// call: ~11% of the server's samples making and freeing, and most of its seek's. A refreshed
// iterator (Iterator::Refresh) keeps all of it while no flush or compaction has changed the
// family's files and memtables, reads at the latest sequence number, and its next seek finds
// the table iterators, index and data block it used last time already open.
//
// Contract:
// - An iterator given out reads the latest state of the family, bounded to [lower, upper); with a
//   snapshot, only when the snapshot's sequence number is the latest both before and after the
//   refresh (so the iterator reads exactly at the snapshot); otherwise Lease declines (nullptr)
//   and the caller makes its own iterator.
// - Bounds are the entry's own strings, which RocksDB's iterators read through ReadOptions'
//   pointers on every seek (RocksDB supports changing them between seeks).
// - Sluice's memtable iterators are told of the new read (FreshIteratorRead, memtable.h) on the
//   first positioning after a refresh.
// - Thread-safe: any thread may lease; a lease is used by one thread at a time. Idle iterators
//   hold their superversion (memtables and table files stay alive), so the everysec thread drops
//   those unused for a whole tick (DropIdle), and Clear drops all of them before the database
//   closes.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/iterator.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

namespace sluice::internal {

class IteratorPool {
 public:
  // Free iterators kept per column family; more are freed when given back.
  static constexpr size_t kMaxFreePerFamily = 4;

  IteratorPool();
  ~IteratorPool();
  IteratorPool(const IteratorPool&) = delete;
  IteratorPool& operator=(const IteratorPool&) = delete;

  // An iterator over cf's keys in [lower, upper), unpositioned, that gives itself back when
  // deleted; nullptr when `snapshot` is not at the latest sequence number (see above).
  std::unique_ptr<rocksdb::Iterator> Lease(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf,
                                           std::string_view lower, std::string_view upper,
                                           const rocksdb::Snapshot* snapshot);
  // Frees the free iterators that were not leased since the previous call.
  void DropIdle();
  // Frees every free iterator (none may be leased: the store is closing).
  void Clear();

  struct Counts {
    uint64_t reused = 0;    // leases served by a refreshed iterator
    uint64_t made = 0;      // leases that made a new one
    uint64_t declined = 0;  // leases refused: the snapshot was older than the latest state
  };
  Counts counts() const;
  size_t free_count() const;

 private:
  struct Entry;
  class Leased;
  // The most recently given back free entry of the family (nullptr: none).
  std::unique_ptr<Entry> Take(uint32_t cf_id);
  void GiveBack(std::unique_ptr<Entry> e);

  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Entry>> free_;  // guarded by mu_; oldest first
  std::atomic<uint64_t> reused_{0}, made_{0}, declined_{0};
};

}  // namespace sluice::internal
