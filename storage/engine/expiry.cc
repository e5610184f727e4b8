// Physical removal of expired data, the pieces without the engine: the element compaction filter
// (stale collection elements), the active expiry cycle's knobs and the lists it keeps (expiry.h).
// The cycle itself is expiry_cycle.cc.
#include "expiry.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iterator>
#include <limits>
#include <memory>

#include "collection_layout.h"

namespace sluice {
namespace internal {
namespace {

// One compaction's filter of an element column family. Sub-keys of one collection are
// contiguous, so the last metadata looked up is remembered.
class ElementFilter final : public rocksdb::CompactionFilter {
 public:
  ElementFilter(rocksdb::DB* db, const Clock* clock) : db_(db), clock_(clock) {}

  Decision FilterV2(int /*level*/, const rocksdb::Slice& key, ValueType type,
                    const rocksdb::Slice& /*value*/, std::string* /*new_value*/,
                    std::string* /*skip_until*/) const override {
    if (type != ValueType::kValue) return Decision::kKeep;
    uint64_t version = 0;
    std::string_view element;
    if (!DecodeSubKey(key.ToStringView(), &meta_key_, &version, &element)) return Decision::kKeep;
    if (meta_key_ != cached_key_) {
      cached_key_ = meta_key_;
      cached_ = LookUp();
    }
    if (cached_ == kUnknown) return Decision::kKeep;
    return cached_ == version ? Decision::kKeep : Decision::kRemove;
  }
  const char* Name() const override { return "sluice.ElementFilter"; }

 private:
  static constexpr uint64_t kUnknown = ~uint64_t{0};
  // The live version of cached_key_'s collection, 0 when there is none, kUnknown on doubt.
  uint64_t LookUp() const {
    std::string raw;
    auto s = db_->Get(rocksdb::ReadOptions(), db_->DefaultColumnFamily(), cached_key_, &raw);
    if (s.IsNotFound()) return 0;
    if (!s.ok()) return kUnknown;
    auto v = DecodeValue(raw);
    if (!v) return kUnknown;
    if (!IsCollection(v->kind) || IsExpired(v->expire_at_ms, clock_->NowMs())) return 0;
    auto meta = DecodeMeta(v->payload);
    return meta ? meta->version : kUnknown;
  }

  rocksdb::DB* db_;
  const Clock* clock_;
  mutable std::string meta_key_;
  mutable std::string cached_key_;
  mutable uint64_t cached_ = kUnknown;
};

// Redis 7.0's defaults (active-expire-effort 1), which ExpiryCycleParams scales.
// ACTIVE_EXPIRE_CYCLE_KEYS_PER_LOOP: keys with a TTL examined per sample.
constexpr int kSampleSize = 20;
// ACTIVE_EXPIRE_CYCLE_ACCEPTABLE_STALE: a pass goes on while more than this percentage of a
// sample was expired. Redis 5's rule (more than a quarter) ends a cycle early one sample in
// eight even where 40% of the keys are expired: under churn a pass then crawled at ~160 keys a
// cycle while millions of expired keys waited for it (docs/engine.md, "Expiry").
constexpr int kAcceptableStalePercent = 10;
// ACTIVE_EXPIRE_CYCLE_SLOW_TIME_PERC: a cycle's budget, as a share of its period.
constexpr int kTimePercent = 25;
// Keeps every entry (the store is not open yet).
class KeepAll final : public rocksdb::CompactionFilter {
 public:
  bool Filter(int, const rocksdb::Slice&, const rocksdb::Slice&, std::string*,
              bool*) const override {
    return false;
  }
  const char* Name() const override { return "sluice.KeepAll"; }
};

}  // namespace

std::unique_ptr<rocksdb::CompactionFilter> ElementFilterFactory::CreateCompactionFilter(
    const rocksdb::CompactionFilter::Context& /*context*/) {
  rocksdb::DB* db = db_.load(std::memory_order_acquire);
  if (db == nullptr) return std::make_unique<KeepAll>();
  return std::make_unique<ElementFilter>(db, clock_.get());
}

// Redis 7.0's activeExpireCycle: effort 1..10 rescaled to 0..9, each step a quarter more keys
// per sample, 2 points more of the period, 1 point less of acceptable staleness.
ExpiryCycleParams ExpiryCycleParams::ForEffort(int effort) {
  const int step = std::clamp(effort, kMinExpireEffort, kMaxExpireEffort) - 1;
  return ExpiryCycleParams{kSampleSize + kSampleSize / 4 * step, kAcceptableStalePercent - step,
                           kTimePercent + 2 * step};
}

void ExpiryCandidates::Add(std::string_view raw_key, int64_t at_ms, uint64_t seq) {
  if (n == keys.size()) {
    keys.emplace_back();
    expire_at_ms.emplace_back();
    seen_seq.emplace_back();
  }
  keys[n].assign(raw_key);
  expire_at_ms[n] = at_ms;
  seen_seq[n] = seq;
  ++n;
}

size_t ExpiryIntake::Add(const std::string* const* keys, const int64_t* at_ms, size_t n,
                         uint64_t seq) {
  // Each thread keeps to one shard (assigned round robin), so writers on different cores rarely
  // share a lock.
  static std::atomic<size_t> next_shard{0};
  thread_local const size_t mine = next_shard.fetch_add(1, std::memory_order_relaxed) % kShards;
  Shard& shard = shards_[mine];
  std::lock_guard<std::mutex> l(shard.mu);
  const size_t take = std::min(n, kShardCapacity - std::min(kShardCapacity, shard.entries.size()));
  for (size_t i = 0; i < take; ++i) shard.entries.push_back(Entry{*keys[i], at_ms[i], seq});
  return take;
}

void ExpiryIntake::Drain(std::vector<Entry>* out) {
  for (Shard& shard : shards_) {
    std::lock_guard<std::mutex> l(shard.mu);
    if (shard.entries.empty()) continue;
    if (out->empty()) {
      out->swap(shard.entries);  // the common case: one busy shard, no moves
      continue;
    }
    std::move(shard.entries.begin(), shard.entries.end(), std::back_inserter(*out));
    shard.entries.clear();
  }
}

int64_t ExpiryDueList::Add(std::string raw_key, int64_t at_ms, uint64_t seq) {
  const int64_t bucket = at_ms >> kBucketShift;
  int64_t dropped = kNone;
  if (size_ >= capacity_) {
    auto last = std::prev(buckets_.end());
    if (bucket >= last->first) return at_ms;
    dropped = last->second.entries.back().at_ms;
    last->second.entries.pop_back();  // its min_at stays a lower bound
    if (last->second.entries.empty()) buckets_.erase(last);
    --size_;
  }
  Bucket& b = buckets_[bucket];
  b.entries.push_back(Entry{at_ms, std::move(raw_key), seq});
  b.min_at = std::min(b.min_at, at_ms);
  ++size_;
  return dropped;
}

void ExpiryDueList::TakeExpired(int64_t now_ms, size_t max, ExpiryCandidates* c) {
  while (c->n < max && !buckets_.empty()) {
    auto first = buckets_.begin();
    Bucket& b = first->second;
    if (!IsExpired(b.min_at, now_ms)) return;
    // Takes the expired entries in insertion order, keeps the rest (and the exact minimum).
    int64_t min_at = kNone;
    size_t kept = 0;
    for (size_t i = 0; i < b.entries.size(); ++i) {
      Entry& e = b.entries[i];
      if (c->n < max && IsExpired(e.at_ms, now_ms)) {
        c->Add(e.key, e.at_ms, e.seq);
        --size_;
        continue;
      }
      min_at = std::min(min_at, e.at_ms);
      if (kept != i) b.entries[kept] = std::move(e);
      ++kept;
    }
    b.entries.resize(kept);
    if (kept > 0) {
      b.min_at = min_at;
      return;  // what is left of the earliest bucket is not due, or c is full
    }
    buckets_.erase(first);
  }
}

}  // namespace internal
}  // namespace sluice
