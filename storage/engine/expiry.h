// Expiry (expiry.cc): the element compaction filter (stale collection elements), and the active
// expiry cycle's lists of keys to remove (the cycle itself: expiry_cycle.h). Internal header.
#pragma once

#include <rocksdb/compaction_filter.h>
#include <rocksdb/db.h>

#include <atomic>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/clock.h"

namespace sluice::internal {

// "No expiry due": the pass hint and ExpiryDueList's kNone.
inline constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

// The compaction filter of the element column families (collection_layout.h): drops a sub-key whose
// metadata (read from the default column family) is missing, expired on `clock`, not a
// collection, or of another version. Keeps everything until set_db() is given the open database
// and whatever it cannot decide (undecodable keys, read errors): never loses live data.
class ElementFilterFactory final : public rocksdb::CompactionFilterFactory {
 public:
  explicit ElementFilterFactory(std::shared_ptr<const Clock> clock) : clock_(std::move(clock)) {}
  void set_db(rocksdb::DB* db) { db_.store(db, std::memory_order_release); }
  std::unique_ptr<rocksdb::CompactionFilter> CreateCompactionFilter(
      const rocksdb::CompactionFilter::Context& context) override;
  const char* Name() const override { return "sluice.ElementFilterFactory"; }

 private:
  std::shared_ptr<const Clock> clock_;
  std::atomic<rocksdb::DB*> db_{nullptr};
};

// The active expiry cycle's knobs at an active-expire-effort (1..10, Redis's setting; default
// 1): Redis 7.0's scaling of its per-sample keys, acceptable stale percentage and share of
// each period. A higher effort removes expired keys sooner for more CPU. Pure.
inline constexpr int kMinExpireEffort = 1;
inline constexpr int kMaxExpireEffort = 10;
struct ExpiryCycleParams {
  int sample_size;               // keys with a TTL per sample (20 at effort 1)
  int acceptable_stale_percent;  // a pass goes on while a sample was more expired (10)
  int time_percent;              // the cycle's budget, percent of its period (25)
  static ExpiryCycleParams ForEffort(int effort);  // effort clamped to 1..10
  bool operator==(const ExpiryCycleParams&) const = default;
};

// Expired keys the active expiry cycle found, awaiting removal in one unit: the first n raw keys
// (their strings are reused from one batch to the next), each with its expiry as it was read
// and the sequence number that read was at or after (ExpiryCycle::RemoveExpired). Not
// thread-safe (the expiry thread's own).
struct ExpiryCandidates {
  std::vector<std::string> keys;
  std::vector<int64_t> expire_at_ms;
  std::vector<uint64_t> seen_seq;
  size_t n = 0;
  void Add(std::string_view raw_key, int64_t at_ms, uint64_t seq);
};

// Expiries that committed writes hand to the active expiry cycle, so that it learns of a key
// from its write instead of walking the keyspace to find it: the key, its new expiry, and the
// write mark its commit set on the key's stripe (lock_pool.h). Filled by committing threads
// (one lock of one of kShards shards per commit), drained by the expiry thread. Bounded: a shard
// holds at most kShardCapacity entries between two drains, and Add refuses the rest (the writer
// then falls back to the pass hint, ExpiryCycle::NoteExpiry). Thread-safe.
class ExpiryIntake {
 public:
  static constexpr size_t kShards = 16;
  static constexpr size_t kShardCapacity = 1 << 16;
  struct Entry {
    std::string key;
    int64_t at_ms;
    uint64_t seq;
  };
  // Adds keys[i] expiring at at_ms[i], i < n, all written under write mark seq. Returns how many
  // it took: the first ones; the caller falls back for the rest.
  size_t Add(const std::string* const* keys, const int64_t* at_ms, size_t n, uint64_t seq);
  // Appends every entry to *out (whose strings are then the caller's).
  void Drain(std::vector<Entry>* out);

 private:
  struct alignas(64) Shard {
    std::mutex mu;
    std::vector<Entry> entries;  // guarded by mu
  };
  Shard shards_[kShards];
};

// The keys the active expiry cycle knows to be stored with an expiry not yet due, so that each
// is removed when due without walking the keyspace (after a mass removal such a walk steps over
// a deletion marker per removed key): the expiries written since the store opened (through
// ExpiryIntake) and those a pass read. Holds at most `capacity` keys, those expiring first (to
// within one bucket). Not thread-safe (the expiry thread's own).
//
// A key may be in the list more than once (a write-fed entry for each write that shortened or
// created its expiry, a pass's entry, an entry put back after a re-read); at most one of them
// can let the cycle remove the key without reading it (ExpiryCycle::RemoveExpired).
//
// Keys sit in buckets of 64 ms of expiry, each an unordered vector: adding is a lookup among
// the few hundred buckets of a TTL's span and an append. A std::set of every key (one node
// and one allocation each, a tree walk of 18 cache misses per insert when full) was 23% of the
// cycle's CPU while it removed 6M keys after a churn.
class ExpiryDueList {
 public:
  // ~50-75 bytes a key (keys of up to 15 bytes; longer ones add their length): at most
  // ~20 MB, only while that many keys with an expiry are stored. More made no difference to
  // tools/soak.sh's churn (~5M keys stored) and cost memory: +140 MB RSS with 1M, +335 MB
  // with 4M.
  static constexpr size_t kDefaultCapacity = 1 << 18;
  explicit ExpiryDueList(size_t capacity = kDefaultCapacity) : capacity_(capacity) {}

  // Remembers raw_key, read at sequence seq or later, as expiring at at_ms. When the list is
  // full it keeps the earlier expiries: returns the expiry of the key it does not keep (this
  // one's, when it falls in the last bucket or later, or the one it drops from the last bucket
  // for it), else kNone.
  static constexpr int64_t kNone = kNever;
  int64_t Add(std::string raw_key, int64_t at_ms, uint64_t seq);
  // At most the earliest expiry remembered (exact once TakeExpired has looked at its bucket),
  // or kNone when empty.
  int64_t earliest() const { return buckets_.empty() ? kNone : buckets_.begin()->second.min_at; }
  // Moves the keys expired at now_ms (IsExpired), at most max - c->n of them, into *c.
  void TakeExpired(int64_t now_ms, size_t max, ExpiryCandidates* c);
  void Clear() {
    buckets_.clear();
    size_ = 0;
  }
  size_t size() const { return size_; }
  // Calls f(raw_key, at_ms, seq) for every entry, in no particular order.
  template <typename F>
  void ForEach(F&& f) const {
    for (const auto& [bucket, b] : buckets_) {
      for (const Entry& e : b.entries) f(e.key, e.at_ms, e.seq);
    }
  }

 private:
  static constexpr int kBucketShift = 6;  // 64 ms
  struct Entry {
    int64_t at_ms;
    std::string key;
    uint64_t seq;
  };
  struct Bucket {
    int64_t min_at = kNone;  // at most the smallest at_ms of entries
    std::vector<Entry> entries;
  };
  std::map<int64_t, Bucket> buckets_;  // by at_ms >> kBucketShift
  size_t size_ = 0;
  size_t capacity_;
};

}  // namespace sluice::internal
