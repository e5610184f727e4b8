// The memtable representation Sluice gives RocksDB: the recent writes, indexed by a hash table
// on the user key and kept in key order by sorted runs of the distinct keys (memtable_order.h),
// each key holding its versions newest first.
//
// Why our own: every write inserts into the memtable and nearly every command reads it first
// (INCR, every limiter take, the keyspace counts' read of a blind SET). RocksDB's InlineSkipList
// holds every version of every key in one skiplist: a lookup or an insert walks ~log4(entries)
// levels, a cache miss at nearly every level once the memtable is larger than the CPU's caches
// (a 64 MB memtable of rewritten limiter keys holds ~1M entries), and Debian's librocksdb,
// built with assertions, compares keys twice per step through three virtual calls. Here a point
// lookup and the insert of a new version of a key already in the memtable are a hash lookup
// and a pointer store; the first write of a key appends it to the order's unsorted tail, which
// is sorted and merged in batches (no walk of a linked structure per key). Entries are compared
// inline (first 16 bytes as two integers, memcmp, then the tag). The entry format it reads is
// the one RocksDB documents as frozen (MemTable::Add: varint32 internal-key length, user key,
// 8-byte tag, value).
//
// Contract:
// - Only for column families ordered by RocksDB's BytewiseComparator (all of Sluice's). The
//   factory checks the comparator it is given and falls back to RocksDB's own skiplist for any
//   other order.
// - Point lookups never lock. Inserts may come from many threads at once
//   (allow_concurrent_memtable_write: each member of a parallel write group inserts its own
//   batch, on its own core, with the keys it prefetched warm there) or one at a time; a new key
//   and a new iterator take the key order's mutex briefly. An iterator sees the keys inserted
//   before it was made (RocksDB shows it no entry newer than that), or, refreshed, before its
//   first positioning in a FreshIteratorRead (below).
// - Large merges of the key order run on one thread per process ("sluice-merge"), never on a
//   writer.
// - Point lookups read the key out of RocksDB's LookupKey (its first three pointers, a layout
//   unchanged since LevelDB); every lookup checks that layout and aborts with a clear message
//   if a RocksDB build ever changes it.
#pragma once

#include <rocksdb/memtablerep.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>

namespace sluice::internal {

// Follows the newest memtable of one column family (its factory registers each memtable it
// makes, which is the newest: RocksDB makes one only to switch to it; the one exception,
// RocksDB's experimental MemPurge, which a flush may use to make an immutable one, is off
// unless experimental_mempurge_threshold is set, and Sluice never sets it). Thread-safe; must
// outlive every memtable of the factory it was given to. Serves:
// - Prefetch: warms the CPU caches for point lookups of keys that are about to be looked up (a
//   pipelined batch's keys), so that their lookups' dependent cache misses (hash bucket, key
//   node, newest version: three per lookup, ~18% of the server's CPU under INCR at pipeline 16)
//   overlap instead of stalling one command after another. Only a hint.
// - ReadNewest: a point read answered by the newest memtable alone, without RocksDB's read path
//   (DBImpl::GetImpl, its SuperVersion, LookupKey and callbacks: ~1.8k instructions and a fifth
//   of a BullMQ job's instruction-cache misses). Exact because a key's versions in the newest
//   memtable are newer than all of its versions elsewhere: the newest one a reader sees there
//   is the answer, unless a range deletion newer than it covers it. Range deletions live in
//   RocksDB's own table beside the list, which the list never sees, so writers announce them
//   (BeginRangeDelete / EndRangeDelete) and a memtable that may hold one answers nothing.
// A reader-writer lock for state read on every point read and written once per memtable:
// readers lock only their own thread's shard (a cache line no other core's readers write),
// writers lock every shard. One shared_mutex read-locked by every reader moved its cache line
// between the cores twice per read.
class ShardedSharedMutex {
 public:
  std::shared_mutex& ForThisThread() const;  // the calling thread's shard, to lock shared
  void lock();                               // every shard, in order
  void unlock();

 private:
  static constexpr size_t kShards = 8;
  struct alignas(64) Shard {
    std::shared_mutex mu;
  };
  mutable Shard shards_[kShards];
};

class NewestMemTable {
 public:
  static constexpr size_t kMaxKeys = 16;
  // Prefetches the entries of at most kMaxKeys user keys (the rest are ignored).
  void Prefetch(const std::string_view* user_keys, size_t n) const;

  enum class Read { kFound, kDeleted, kUnknown };
  // The newest version of user_key with a sequence number at or below `visible` (a snapshot's,
  // or the latest published one read before this call), when the newest memtable holds one:
  // kFound with its value in *value, kDeleted for a deletion. kUnknown (nothing written to
  // *value): ask RocksDB (the key is not there, or its version there is of a kind a point read
  // must leave to RocksDB: a merge, a blob; or a range deletion may be in this memtable).
  Read ReadNewest(std::string_view user_key, uint64_t visible, std::string* value) const;

  // A writer brackets every write that may carry a range deletion (WriteBatch::HasDeleteRange)
  // with these; ReadNewest answers kUnknown from the start of one until the memtable it may
  // have landed in is no longer the newest.
  void BeginRangeDelete();
  void EndRangeDelete();
  // After recovery: the newest memtable may hold range deletions replayed from the log.
  void DistrustCurrent();
  // Right after recovery, given RocksDB's count of the entries in the family's active memtable
  // (num-entries-active-mem-table), which counts its range deletions too: distrusts the newest
  // memtable unless its list holds exactly that many. A replay inserts one entry at a time, and
  // the list counts those (not concurrent inserts, whose count would cost a locked instruction
  // per write: a memtable that had any is distrusted, which is always safe).
  void DistrustUnlessOnlyListed(uint64_t rocksdb_entries);

  // The factory's side: the memtable made last becomes the newest; a destroyed one is
  // forgotten.
  bool active() const;  // whether a memtable is registered (it is while the database is open)
  // The SingleDeletes inserted into the newest memtable (0 with none): RocksDB's count of a
  // memtable's deletions (num-deletes-active-mem-table) leaves them out, and the idle flush
  // asks.
  uint64_t SingleDeletesInCurrent() const;
  void SetCurrent(const rocksdb::MemTableRep* list);
  void Forget(const rocksdb::MemTableRep* list);

 private:
  ShardedSharedMutex mu_;
  const rocksdb::MemTableRep* current_ = nullptr;  // a HashedList; guarded by mu_
  uint64_t generation_ = 0;                        // current_'s, counted by SetCurrent; mu_
  // Range deletions being written, and the newest generation one may have landed in.
  std::atomic<uint64_t> range_deletes_in_flight_{0};
  std::atomic<uint64_t> range_delete_generation_{0};
};

// A factory for the column families' memtables (ColumnFamilyOptions::memtable_factory), sized
// for memtables of write_buffer_size bytes. With a NewestMemTable (which must outlive the
// factory's memtables), each memtable made registers there.
std::shared_ptr<rocksdb::MemTableRepFactory> NewMemTableFactory(
    size_t write_buffer_size, NewestMemTable* prefetcher = nullptr);

// How many memtables, process-wide, were made with Sluice's list (not the fallback).
uint64_t SluiceMemTablesCreated();

// How many point reads the calling thread had answered by a newest memtable alone
// (NewestMemTable::ReadNewest; tests: with RocksDB's perf context's get_from_memtable_count,
// the memtable lookups a unit made).
uint64_t NewestMemTableReadsOnThisThread();

// How many entries the calling thread inserted as a member of a parallel write group (tests:
// proof that inserts did run concurrently).
uint64_t ConcurrentMemTableInsertsOnThisThread();

// While one lives, the memtable iterators the calling thread positions start a new read, as
// if newly made: each one's first positioning in the scope takes a new snapshot of its
// memtable's key order when keys were added since its own, and the read's sequence number for
// the erased pairs it hides. For an iterator RocksDB refreshed (Iterator::Refresh: with no
// flush since it was made, the memtables' iterators are kept, and the next read is at a newer
// sequence number), around its first positioning after the refresh; an iterator of Sluice's
// memtable would otherwise not show a key added after it was made. Scopes do not nest; other
// iterators must not be positioned inside one. RocksDB's own skiplist (the fallback) needs none.
class FreshIteratorRead {
 public:
  FreshIteratorRead();
  ~FreshIteratorRead();
  FreshIteratorRead(const FreshIteratorRead&) = delete;
  FreshIteratorRead& operator=(const FreshIteratorRead&) = delete;
};

}  // namespace sluice::internal
