// Expiry (expiry.cc): the element compaction filter (stale collection elements), and the active
// expiry cycle's lists of keys to remove. Internal header.
#pragma once

#include <rocksdb/compaction_filter.h>
#include <rocksdb/db.h>

#include <atomic>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/clock.h"

namespace sluice::internal {

// The compaction filter of the element column families (collection.h): drops a sub-key whose
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

// Expired keys the active expiry cycle found, awaiting removal in one unit: the first n raw keys
// (their strings are reused from one batch to the next), each with its expiry as it was read
// and the sequence number that read was at or after (Store::Impl::RemoveExpired). Not
// thread-safe (the expiry thread's own).
struct ExpiryCandidates {
  std::vector<std::string> keys;
  std::vector<int64_t> expire_at_ms;
  std::vector<uint64_t> seen_seq;
  size_t n = 0;
  void Add(std::string_view raw_key, int64_t at_ms, uint64_t seq);
};

// Keys a pass of the expiry cycle read as stored with an expiry not yet due, so that each is
// removed when due without walking the keyspace again (after a mass removal such a walk steps
// over a deletion marker per removed key). Holds at most kCapacity keys, those expiring first
// (to within one bucket). A key is in the list at most once: a pass visits a key once, and the
// list is cleared when a pass starts. Not thread-safe (the expiry thread's own).
//
// Keys sit in buckets of 64 ms of expiry, each an unordered vector: adding is a lookup among
// the few hundred buckets of a TTL's span and an append. A std::set of every key (one node
// and one allocation each, a tree walk of 18 cache misses per insert when full) was 23% of the
// cycle's CPU while it removed 6M keys after a churn.
class ExpiryDueList {
 public:
  // ~60 bytes a key: at most ~16 MB.
  static constexpr size_t kCapacity = 1 << 18;

  // Remembers raw_key, read at sequence seq or later, as expiring at at_ms. When the list is
  // full it keeps the earlier expiries: returns the expiry of the key it does not keep (this
  // one's, when it falls in the last bucket or later, or the one it drops from the last bucket
  // for it), else kNone.
  static constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  int64_t Add(std::string_view raw_key, int64_t at_ms, uint64_t seq);
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
};

}  // namespace sluice::internal
