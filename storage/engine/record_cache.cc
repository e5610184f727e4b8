// The record cache (record_cache.h has the contract).
#include "record_cache.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

namespace sluice::internal {

namespace {
constexpr size_t kFirstTableSize = 64;  // buckets of a shard's index; a power of two
}  // namespace

RecordCache::RecordCache(size_t capacity_bytes, size_t slots)
    : capacity_per_shard_(capacity_bytes / kShards),
      shards_(new Shard[kShards]),
      per_slot_(new std::atomic<uint64_t>[slots]()),
      wanted_(new std::atomic<uint64_t>[(slots + 63) / 64]()),
      seen_(new std::atomic<uint32_t>[slots]()) {}

uint64_t RecordCache::Hash(std::string_view key) { return XXH3_64bits(key.data(), key.size()); }

RecordCache::Entry* RecordCache::NewEntry(std::string_view key, std::string_view record) {
  void* block = ::operator new(sizeof(Entry) + key.size() + record.size());
  Entry* e = new (block) Entry;
  char* bytes = reinterpret_cast<char*>(e + 1);
  std::memcpy(bytes, key.data(), key.size());
  std::memcpy(bytes + key.size(), record.data(), record.size());
  e->key_size = static_cast<uint32_t>(key.size());
  e->record_size = static_cast<uint32_t>(record.size());
  return e;
}

void RecordCache::FreeEntry(Entry* e) {
  e->~Entry();
  ::operator delete(e);
}

RecordCache::Shard::~Shard() {
  while (front != nullptr) {
    Entry* next = front->older;
    FreeEntry(front);
    front = next;
  }
}

void RecordCache::Shard::PushFront(Entry* e) {
  e->newer = nullptr;
  e->older = front;
  if (front != nullptr) front->newer = e;
  front = e;
  if (back == nullptr) back = e;
  ++records;
}

void RecordCache::Shard::Unlink(Entry* e) {
  (e->newer != nullptr ? e->newer->older : front) = e->older;
  (e->older != nullptr ? e->older->newer : back) = e->newer;
  e->newer = e->older = nullptr;
  --records;
}

size_t RecordCache::Find(const Shard& s, uint64_t hash, std::string_view key) {
  const size_t n = s.table.size();
  if (n == 0) return 0;
  const size_t mask = n - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const Bucket& b = s.table[i];
    if (b.entry == nullptr) return n;
    if (b.hash == hash && b.entry->key() == key) return i;
  }
}

void RecordCache::Index(Shard& s, uint64_t hash, Entry* entry) {
  auto place = [](std::vector<Bucket>& table, uint64_t h, Entry* e) {
    const size_t mask = table.size() - 1;
    size_t i = h & mask;
    while (table[i].entry != nullptr) i = (i + 1) & mask;
    table[i] = Bucket{h, e};
  };
  if (2 * s.records > s.table.size()) {  // at most half full (records already counts entry)
    std::vector<Bucket> grown(std::max(kFirstTableSize, 2 * s.table.size()));
    for (const Bucket& b : s.table) {
      if (b.entry != nullptr) place(grown, b.hash, b.entry);
    }
    s.table = std::move(grown);
  }
  place(s.table, hash, entry);
}

// Linear probing's deletion without tombstones: the entries after the hole that probed past it
// move back into it, so every entry stays reachable from its home bucket.
void RecordCache::Unindex(Shard& s, size_t hole) {
  const size_t mask = s.table.size() - 1;
  s.table[hole].entry = nullptr;
  for (size_t j = (hole + 1) & mask; s.table[j].entry != nullptr; j = (j + 1) & mask) {
    const size_t home = s.table[j].hash & mask;
    // The entry at j stays when its home lies cyclically in (hole, j].
    const bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (stays) continue;
    s.table[hole] = s.table[j];
    s.table[j].entry = nullptr;
    hole = j;
  }
}

void RecordCache::Erase(Shard& s, size_t bucket) {
  Entry* it = s.table[bucket].entry;
  std::atomic<uint64_t>& per_slot = per_slot_[it->slot];
  const uint64_t left = per_slot.load(std::memory_order_relaxed) - 1;  // under s.mu
  per_slot.store((left & 0xffffffff) == 0 ? 0 : left, std::memory_order_relaxed);
  s.bytes -= Cost(*it);
  Unindex(s, bucket);
  s.Unlink(it);
  FreeEntry(it);
}

void RecordCache::EvictOne(Shard& s, const Entry* keep) {
  // Second chance: each pass clears the flags it passes, so this ends within two passes. The
  // record just inserted (keep, unread so far) is passed over without being taken: else, when
  // every older record had been read, the pass would clear them all and take it.
  for (;;) {
    Entry* last = s.back;
    if (last == keep && s.records > 1) {
      s.Unlink(last);
      s.PushFront(last);
      continue;
    }
    if (!last->referenced) return Erase(s, Find(s, last->hash, last->key()));
    last->referenced = false;
    s.Unlink(last);
    s.PushFront(last);
  }
}

bool RecordCache::Lookup(size_t slot, std::string_view key, uint64_t version, uint64_t visible,
                         std::string* out, bool* absent) {
  if (!enabled()) return false;
  const uint64_t hash = Hash(key);
  if ((per_slot_[slot].load(std::memory_order_relaxed) & FilterBit(hash)) == 0) return false;
  Shard& s = ShardOf(slot);
  std::lock_guard<std::mutex> l(s.mu);
  const size_t bucket = Find(s, hash, key);
  if (bucket == s.table.size()) {
    ++s.misses;
    return false;
  }
  Entry& e = *s.table[bucket].entry;
  if (e.version != version) {  // a write under the slot since: stale
    Erase(s, bucket);
    ++s.misses;
    return false;
  }
  if (e.fill_seq > visible || (e.absent && absent == nullptr)) {  // an older snapshot's reader
    ++s.misses;
    return false;
  }
  e.referenced = true;
  if (e.absent) {
    *absent = true;
  } else {
    if (absent != nullptr) *absent = false;
    out->assign(e.record());
  }
  ++s.hits;
  return true;
}

void RecordCache::Insert(size_t slot, std::string_view key, uint64_t version, uint64_t fill_seq,
                         std::string_view record) {
  Add(slot, key, version, fill_seq, record, /*absent=*/false);
}

void RecordCache::InsertAbsent(size_t slot, std::string_view key, uint64_t version,
                               uint64_t fill_seq) {
  Add(slot, key, version, fill_seq, {}, /*absent=*/true);
}

void RecordCache::Add(size_t slot, std::string_view key, uint64_t version, uint64_t fill_seq,
                      std::string_view record, bool absent) {
  if (!enabled() || record.size() > kMaxRecordBytes) return;
  const uint64_t hash = Hash(key);
  Shard& s = ShardOf(slot);
  std::lock_guard<std::mutex> l(s.mu);
  if (const size_t found = Find(s, hash, key); found != s.table.size()) Erase(s, found);
  Entry* e = NewEntry(key, record);
  e->hash = hash;
  e->version = version;
  e->fill_seq = fill_seq;
  e->slot = static_cast<uint32_t>(slot);
  e->absent = absent;
  s.PushFront(e);
  Index(s, hash, e);
  std::atomic<uint64_t>& per_slot = per_slot_[slot];
  per_slot.store((per_slot.load(std::memory_order_relaxed) + 1) | FilterBit(hash),
                 std::memory_order_relaxed);  // under s.mu
  s.bytes += Cost(*e);
  while (s.bytes > capacity_per_shard_ && s.back != nullptr) EvictOne(s, e);
}

RecordCache::Counters RecordCache::counters() const {
  Counters c;
  for (size_t i = 0; i < kShards; ++i) {
    const Shard& s = shards_[i];
    std::lock_guard<std::mutex> l(s.mu);
    c.hits += s.hits;
    c.misses += s.misses;
    c.bytes += s.bytes;
    c.records += s.records;
  }
  return c;
}

}  // namespace sluice::internal
