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

#include <cstddef>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string_view>

namespace sluice::internal {

// Warms the CPU caches for point lookups of keys that are about to be looked up, in the newest
// memtable of one column family: a pipelined batch's keys, so that their lookups' dependent
// cache misses (hash bucket, key node, newest version: three per lookup, ~18% of the server's
// CPU under INCR at pipeline 16) overlap instead of stalling one command after another. Only a
// hint: it changes nothing, and a key it did not warm is looked up as usual. Thread-safe; must
// outlive every memtable of the factory it was given to.
class KeyPrefetcher {
 public:
  static constexpr size_t kMaxKeys = 16;
  // Prefetches the entries of at most kMaxKeys user keys (the rest are ignored).
  void Prefetch(const std::string_view* user_keys, size_t n) const;

  // The factory's side: the memtable made last becomes the one prefetched; a destroyed one is
  // forgotten.
  bool active() const;  // whether a memtable is registered (it is while the database is open)
  // The SingleDeletes inserted into the newest memtable (0 with none): RocksDB's count of a
  // memtable's deletions (num-deletes-active-mem-table) leaves them out, and the idle flush
  // asks. Kept here because this is what follows the newest memtable.
  uint64_t SingleDeletesInCurrent() const;
  void SetCurrent(const rocksdb::MemTableRep* list);
  void Forget(const rocksdb::MemTableRep* list);

 private:
  mutable std::shared_mutex mu_;
  const rocksdb::MemTableRep* current_ = nullptr;  // a HashedList; guarded by mu_
};

// A factory for the column families' memtables (ColumnFamilyOptions::memtable_factory), sized
// for memtables of write_buffer_size bytes. With a prefetcher (which must outlive the
// factory's memtables), the newest memtable is the one it warms.
std::shared_ptr<rocksdb::MemTableRepFactory> NewMemTableFactory(
    size_t write_buffer_size, KeyPrefetcher* prefetcher = nullptr);

// How many memtables, process-wide, were made with Sluice's list (not the fallback).
uint64_t SluiceMemTablesCreated();

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
