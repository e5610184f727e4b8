// RecordCache: stored records that a point read found in a table file, kept in memory so that
// reading them again does not walk RocksDB's filters, indexes and blocks (~1.6 us a read against
// ~0.1 us here): records of the default column family (keys' values and collections' metadata)
// and element records (hash fields, set and sorted-set members, a sorted set's head record);
// also the absence of a record that RocksDB's whole read (past the newest memtable: older
// memtables, every table file's filter) found missing, when the same key is read that way again.
//
// Why it is exact: a record is cached with the write version its key's lock stripe had before
// it was read (lock_pool.h: even, and odd while a write under the stripe is in flight) and
// served only to a reader that finds the same even version. Every unit that writes a key of the
// default family holds its stripe and makes the version odd before its RocksDB write and even
// again after it, so an unchanged even version means no write to any key of the stripe began
// since the record was read: the record is still what is stored, for readers with or without
// the stripe. The one writer that does not count, the expiry cycle, only removes records that
// carry an expiry, and those are never cached. Element records work the same way with versions
// of their own, per bucket of element keys (element_versions.h), in the slots past the stripes'
// (Txn::GetRaw), so a write to one member of a collection retires only its bucket's records.
// The cached record is also the newest one at the latest sequence number read before it
// (fill_seq); a reader at a snapshot older than that is not served. Rules the caller keeps
// (txn.cc, ReadThroughCache): read the version, then fill_seq, then the record; never fill while
// the version is odd; fill only from a read of the current state or of a snapshot at or after
// fill_seq.
//
// Keys are looked up with their slot (the caller's: the key's lock stripe, or past the stripes
// an element record's bucket), which also picks the shard. Each slot notes whether a read of one
// of its keys found a record worth caching (Want), and counts its cached records; a slot never
// wanted is not interesting (it holds nothing: only reads in wanted slots fill), and a read there
// checks nothing else (most reads: of keys in the memtable). A record is cached by the second
// read that finds it in a table file with no other key's such read in its slot between
// (ReadAgain), and served from the third. Bounded by bytes (least recently used out first).
// Thread-safe: a mutex per shard, each held for a lookup or an insert only.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::internal {

class RecordCache {
 public:
  // Records larger than this are not cached (a big string is read whole anyway).
  static constexpr size_t kMaxRecordBytes = 1024;

  // slots: the number of distinct slots callers use (0 <= slot < slots).
  RecordCache(size_t capacity_bytes, size_t slots);

  bool enabled() const { return capacity_per_shard_ > 0; }
  // Whether a read in slot was wanted (and so may hold records): one relaxed load of a bit, in a
  // bitmap small enough to stay in the core's caches (a 4-byte count per slot, 320 KB, missed
  // them: 4% of a pipelined SADD's CPU went to that one load).
  bool Interesting(size_t slot) const {
    return (wanted_[slot / 64].load(std::memory_order_relaxed) & (uint64_t{1} << (slot % 64))) != 0;
  }
  // A read of a key in slot found a record worth caching: the next reads there look up and fill.
  // Never undone.
  void Want(size_t slot) {
    if (!Interesting(slot)) {
      wanted_[slot / 64].fetch_or(uint64_t{1} << (slot % 64), std::memory_order_relaxed);
    }
  }
  static uint64_t Hash(std::string_view key);  // XXH3_64bits, as LockPool::HashOf
  // Notes that a key's record was read from a table file in slot (or its absence through
  // RocksDB's whole read); true when the last key so noted in slot was the same key: read again
  // without being cached, so worth caching (a key read once and then written, as HSET or INCR
  // do, never is). key_hash: Hash(key), which the caller may have at hand. A 32-bit fingerprint
  // per slot; a collision only caches a record early.
  bool ReadAgain(size_t slot, uint64_t key_hash) {
    const uint32_t fp = static_cast<uint32_t>(key_hash >> 32) | 1;
    if (seen_[slot].load(std::memory_order_relaxed) == fp) return true;
    seen_[slot].store(fp, std::memory_order_relaxed);
    return false;
  }
  // The record cached for key under write version `version`, into *out, if a reader at
  // sequence `visible` sees it; false when there is none (one cached under another version is
  // dropped). A cached absence (InsertAbsent) sets *absent and leaves *out alone; with `absent`
  // null it is not served.
  bool Lookup(size_t slot, std::string_view key, uint64_t version, uint64_t visible,
              std::string* out, bool* absent = nullptr);
  // Caches key's record, read under `version` and the newest at `fill_seq`, replacing any other.
  void Insert(size_t slot, std::string_view key, uint64_t version, uint64_t fill_seq,
              std::string_view record);
  // Caches that key has no record, as Insert does a record: a key read again and again while it
  // does not exist (a job queue's empty delayed set, checked by every job) costs RocksDB's whole
  // read, every memtable and table file, each time.
  void InsertAbsent(size_t slot, std::string_view key, uint64_t version, uint64_t fill_seq);

  struct Counters {
    uint64_t hits = 0;
    uint64_t misses = 0;  // lookups past the slot's filter that found nothing usable
    uint64_t bytes = 0;
    uint64_t records = 0;
  };
  Counters counters() const;

 private:
  static constexpr size_t kShards = 64;
  // One cached record: this header and, in the same allocation right after it, the key then the
  // record, so a hit reads the index bucket and this one block (a std::list node holding a
  // std::string was two blocks: a third cache miss per hit). Evicted from the back of the
  // shard's list with a second chance (a record read since it was last passed goes to the front
  // instead; a new record starts unread), so a hit only sets `referenced`: moving the entry to the
  // front on every hit touched its neighbours' cold nodes (5% of a pipelined SADD's CPU with 100k
  // members cached). Owned by its shard (NewEntry / FreeEntry).
  struct Entry {
    Entry* newer = nullptr;  // toward the shard's front
    Entry* older = nullptr;  // toward its back
    uint64_t hash = 0;       // Hash(key)
    uint64_t version = 0;
    uint64_t fill_seq = 0;
    uint32_t key_size = 0;
    uint32_t record_size = 0;
    uint32_t slot = 0;
    bool referenced = false;
    bool absent = false;  // no record: key has none (record_size is 0)
    const char* bytes() const { return reinterpret_cast<const char*>(this + 1); }
    std::string_view key() const { return std::string_view(bytes(), key_size); }
    std::string_view record() const { return std::string_view(bytes() + key_size, record_size); }
  };
  static Entry* NewEntry(std::string_view key, std::string_view record);
  // Insert's and InsertAbsent's work.
  void Add(size_t slot, std::string_view key, uint64_t version, uint64_t fill_seq,
           std::string_view record, bool absent);
  static void FreeEntry(Entry* e);
  // The shard's index: open addressing with linear probing over (hash, entry), at most half
  // full (a null entry is a free bucket). A lookup costs the bucket's line and the entry's (a
  // node-based map walked a bucket pointer, the node before and the key's own buffer: 23% of
  // the same run's CPU).
  struct Bucket {
    uint64_t hash = 0;
    Entry* entry = nullptr;
  };
  struct Shard {
    Shard() = default;
    Shard(const Shard&) = delete;
    Shard& operator=(const Shard&) = delete;
    ~Shard();
    void PushFront(Entry* e);
    void Unlink(Entry* e);
    mutable std::mutex mu;
    Entry* front = nullptr;  // newest first (see Entry)
    Entry* back = nullptr;
    size_t records = 0;
    std::vector<Bucket> table;
    size_t bytes = 0;
    uint64_t hits = 0;
    uint64_t misses = 0;
  };

  static uint64_t FilterBit(uint64_t hash) { return uint64_t{1} << (32 + (hash >> 59)); }
  static size_t Cost(const Entry& e) { return e.key_size + e.record_size + 128; }
  Shard& ShardOf(size_t slot) { return shards_[slot % kShards]; }
  // Under s.mu: the bucket holding key (hash), or table.size() when none.
  static size_t Find(const Shard& s, uint64_t hash, std::string_view key);
  static void Index(Shard& s, uint64_t hash, Entry* entry);
  static void Unindex(Shard& s, size_t bucket);
  void Erase(Shard& s, size_t bucket);         // the entry in bucket, under s.mu
  void EvictOne(Shard& s, const Entry* keep);  // under s.mu; s.back not null

  const size_t capacity_per_shard_;
  std::unique_ptr<Shard[]> shards_;
  // Per slot, the records cached there (low 32 bits) and a filter of their keys (high 32: one
  // bit of each key's hash, FilterBit, for the keys cached since the slot last held none), so that
  // a lookup of a key the slot does not hold (a hot hash's field read before HSET rewrites it)
  // costs one load, not the walk of a shard's map over cold memory (10% of such a run's CPU).
  // Written under the slot's shard's mutex; read without it (a stale read only costs a miss or the
  // walk).
  std::unique_ptr<std::atomic<uint64_t>[]> per_slot_;
  std::unique_ptr<std::atomic<uint64_t>[]> wanted_;  // bit per slot: Want
  std::unique_ptr<std::atomic<uint32_t>[]> seen_;    // per slot: ReadAgain's last fingerprint
};

}  // namespace sluice::internal
