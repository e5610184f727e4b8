// RecordCache: stored records of the default column family (keys' values and collections'
// metadata) that a point read found in a table file, kept in memory so that reading them again
// does not walk RocksDB's filters, indexes and blocks (~1.6 us a read against ~0.1 us here).
//
// Why it is exact: a record is cached with the write version its key's lock stripe had before
// it was read (lock_pool.h: even, and odd while a write under the stripe is in flight) and
// served only to a reader that finds the same even version. Every unit that writes a key of the
// default family holds its stripe and makes the version odd before its RocksDB write and even
// again after it, so an unchanged even version means no write to any key of the stripe began
// since the record was read: the record is still what is stored, for readers with or without
// the stripe. The one writer that does not count, the expiry cycle, only removes records that
// carry an expiry, and those are never cached. The cached record is also the newest one at the
// latest sequence number read before it (fill_seq); a reader at a snapshot older than that is
// not served. Rules the caller keeps (Txn::ReadStored): read the version, then fill_seq, then
// the record; never fill while the version is odd; fill only from a read of the current state
// or of a snapshot at or after fill_seq.
//
// Keys are looked up with their slot (the caller's: the key's lock stripe), which also picks the
// shard. Each slot counts its cached records and notes whether a read of one of its keys found a
// record worth caching (Want); a slot with neither is not interesting, and a read there checks
// nothing else (most reads: of keys in the memtable). So a record is cached by the second read
// that finds it in a table file, and served from the third. Bounded by bytes (least recently used
// out first). Thread-safe: a mutex per shard, each held for a lookup or an insert only.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sluice::internal {

class RecordCache {
 public:
  // Records larger than this are not cached (a big string is read whole anyway).
  static constexpr size_t kMaxRecordBytes = 1024;

  // slots: the number of distinct slots callers use (0 <= slot < slots).
  RecordCache(size_t capacity_bytes, size_t slots);

  bool enabled() const { return capacity_per_shard_ > 0; }
  // Whether slot holds records or was wanted (one relaxed load).
  bool Interesting(size_t slot) const {
    return per_slot_[slot].load(std::memory_order_relaxed) != 0;
  }
  // A read of a key in slot found a record worth caching: the next reads there look up and fill.
  void Want(size_t slot) { per_slot_[slot].fetch_or(kWanted, std::memory_order_relaxed); }
  // The record cached for key under write version `version`, into *out, if a reader at
  // sequence `visible` sees it; false when there is none (one cached under another version is
  // dropped).
  bool Lookup(size_t slot, std::string_view key, uint64_t version, uint64_t visible,
              std::string* out);
  // Caches key's record, read under `version` and the newest at `fill_seq`, replacing any other.
  void Insert(size_t slot, std::string_view key, uint64_t version, uint64_t fill_seq,
              std::string_view record);

  struct Counters {
    uint64_t hits = 0;
    uint64_t misses = 0;  // lookups in a slot holding records that found nothing usable
    uint64_t bytes = 0;
    uint64_t records = 0;
  };
  Counters counters() const;

 private:
  static constexpr size_t kShards = 64;
  static constexpr uint32_t kWanted = uint32_t{1} << 31;  // per_slot_'s flag; the rest: records
  struct Entry {
    std::string key;
    std::string record;
    uint64_t version;
    uint64_t fill_seq;
    size_t slot;
  };
  struct Shard {
    mutable std::mutex mu;
    std::list<Entry> lru;  // most recently used first
    std::unordered_map<std::string_view, std::list<Entry>::iterator> index;  // views into lru
    size_t bytes = 0;
    uint64_t hits = 0;
    uint64_t misses = 0;
  };
  static size_t Cost(const Entry& e) { return e.key.size() + e.record.size() + 96; }
  Shard& ShardOf(size_t slot) { return shards_[slot % kShards]; }
  void Erase(Shard& s, std::list<Entry>::iterator it);  // under s.mu

  const size_t capacity_per_shard_;
  std::vector<Shard> shards_;
  std::unique_ptr<std::atomic<uint32_t>[]> per_slot_;  // cached records per slot
};

}  // namespace sluice::internal
