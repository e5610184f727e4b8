// Expiry (expiry.cc): the element compaction filter (stale collection elements), and the active
// expiry cycle's lists of keys to remove. Internal header.
#pragma once

#include <rocksdb/compaction_filter.h>
#include <rocksdb/db.h>

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <set>
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
// over a deletion marker per removed key). Holds at most kCapacity keys, those expiring first.
// A key is in the list at most once: a pass visits a key once, and the list is cleared when a
// pass starts. Not thread-safe (the expiry thread's own).
class ExpiryDueList {
 public:
  // ~100 bytes a key: at most ~26 MB.
  static constexpr size_t kCapacity = 1 << 18;

  // Remembers raw_key, read at sequence seq or later, as expiring at at_ms. When the list is
  // full it keeps the earliest expiries: returns the expiry of the key it does not keep (this
  // one's, or the one it drops for it), else kNone.
  static constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  int64_t Add(std::string_view raw_key, int64_t at_ms, uint64_t seq);
  // The earliest expiry remembered, or kNone.
  int64_t earliest() const { return entries_.empty() ? kNone : entries_.begin()->at_ms; }
  // Moves the keys expired at now_ms (IsExpired), at most max - c->n of them, into *c.
  void TakeExpired(int64_t now_ms, size_t max, ExpiryCandidates* c);
  void Clear() { entries_.clear(); }
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    int64_t at_ms;
    std::string key;
    uint64_t seq;
    bool operator<(const Entry& o) const {
      return at_ms != o.at_ms ? at_ms < o.at_ms : key < o.key;
    }
  };
  std::set<Entry> entries_;
};

}  // namespace sluice::internal
