// The record cache (record_cache.h has the contract).
#include "record_cache.h"

namespace sluice::internal {

RecordCache::RecordCache(size_t capacity_bytes, size_t slots)
    : capacity_per_shard_(capacity_bytes / kShards),
      shards_(kShards),
      per_slot_(new std::atomic<uint32_t>[slots]()) {}

void RecordCache::Erase(Shard& s, std::list<Entry>::iterator it) {
  per_slot_[it->slot].fetch_sub(1, std::memory_order_relaxed);
  s.bytes -= Cost(*it);
  s.index.erase(std::string_view(it->key));
  s.lru.erase(it);
}

bool RecordCache::Lookup(size_t slot, std::string_view key, uint64_t version, uint64_t visible,
                         std::string* out) {
  if (!enabled() || (per_slot_[slot].load(std::memory_order_relaxed) & ~kWanted) == 0) {
    return false;
  }
  Shard& s = ShardOf(slot);
  std::lock_guard<std::mutex> l(s.mu);
  const auto found = s.index.find(key);
  if (found == s.index.end()) {
    ++s.misses;
    return false;
  }
  const auto it = found->second;
  if (it->version != version) {  // a write under the stripe since: stale
    Erase(s, it);
    ++s.misses;
    return false;
  }
  if (it->fill_seq > visible) {  // a reader at an older snapshot
    ++s.misses;
    return false;
  }
  s.lru.splice(s.lru.begin(), s.lru, it);
  out->assign(it->record);
  ++s.hits;
  return true;
}

void RecordCache::Insert(size_t slot, std::string_view key, uint64_t version, uint64_t fill_seq,
                         std::string_view record) {
  if (!enabled() || record.size() > kMaxRecordBytes) return;
  Shard& s = ShardOf(slot);
  std::lock_guard<std::mutex> l(s.mu);
  if (const auto found = s.index.find(key); found != s.index.end()) Erase(s, found->second);
  s.lru.push_front(Entry{std::string(key), std::string(record), version, fill_seq, slot});
  per_slot_[slot].fetch_add(1, std::memory_order_relaxed);
  s.index.emplace(std::string_view(s.lru.front().key), s.lru.begin());
  s.bytes += Cost(s.lru.front());
  while (s.bytes > capacity_per_shard_ && !s.lru.empty()) Erase(s, std::prev(s.lru.end()));
}

RecordCache::Counters RecordCache::counters() const {
  Counters c;
  for (const Shard& s : shards_) {
    std::lock_guard<std::mutex> l(s.mu);
    c.hits += s.hits;
    c.misses += s.misses;
    c.bytes += s.bytes;
    c.records += s.lru.size();
  }
  return c;
}

}  // namespace sluice::internal
