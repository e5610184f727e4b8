// Striped per-key locks. A key's stripe is XXH3_64bits(encoded key) mod kStripes, so two
// different keys may share a stripe (harmless: only more serialization). Multi-key operations
// lock their distinct stripes in ascending order, which makes deadlock impossible.
// Thread-safe.
//
// Write marks: each stripe also keeps a RocksDB sequence number at or after the last write
// committed under it (0 before any). A unit that committed marks its stripes before releasing
// them (LockSet::MarkWritten), so a holder of a stripe whose mark is at most S knows that no key
// of the stripe changed after sequence S: a view of them at S or later (an iterator's) is still
// what is stored. The active expiry cycle removes expired keys it iterated this way without
// reading them again (expiry_cycle.cc).
//
// Write versions: each stripe also counts the writes committed under it, odd while one is in
// flight (LockSet::BeginWrite before the unit's RocksDB write, EndWrite after it). Read by any
// thread without the stripe: an even version that has not moved since a read began means no
// write to a key of the stripe started since, so what the read found is still what is stored
// (the record cache relies on this: record_cache.h).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <vector>

namespace sluice::internal {

class LockPool {
 public:
  // A commit group holds its members' stripes until its write (up to 64 stripes per I/O thread),
  // and a member whose stripe another thread's group holds makes its own group write early and
  // then waits. With 4096 stripes and two threads, those waits were two thirds of the server's
  // futex calls under SET at pipeline 16; more stripes cut them by 7x and raised INCR and
  // GCRA.TAKE 4-10% (docs/engine.md, "Writes on many cores"). More stripes cost the units that
  // lock all of them (FLUSHDB: 0.1 ms at 4096, 0.3 ms at 16384, 1.3 ms at 65536). 48 bytes each,
  // and 8 for the write version (a dense array of its own: a read that checks it touches 128 KB,
  // not the stripes' 768 KB).
  static constexpr size_t kStripes = 16384;

  static size_t StripeOf(std::string_view raw_key);
  // StripeOf in two steps, for a caller that keeps the key's hash (XXH3_64bits, the record
  // cache's too).
  static uint64_t HashOf(std::string_view raw_key);
  static size_t StripeOfHash(uint64_t hash) { return static_cast<size_t>(hash % kStripes); }
  std::mutex& ForKey(std::string_view raw_key) { return stripes_[StripeOf(raw_key)].mu; }
  // The write mark of raw_key's stripe (see the header comment). The caller holds that stripe.
  uint64_t WriteMark(std::string_view raw_key) const {
    return stripes_[StripeOf(raw_key)].write_mark;
  }
  // The write version of raw_key's stripe (see the header comment); any thread, no lock needed.
  uint64_t WriteVersion(size_t stripe) const {
    return write_versions_[stripe].load(std::memory_order_seq_cst);
  }
  // Raises raw_key's stripe's mark to seq, a sequence number at or after a write under it that
  // was not made by a unit holding a LockSet (the expiry cycle's removal after a read). The
  // caller holds that stripe.
  void SetWriteMark(std::string_view raw_key, uint64_t seq) {
    uint64_t& mark = stripes_[StripeOf(raw_key)].write_mark;
    if (seq > mark) mark = seq;
  }
  // Sets every stripe's mark to seq: at open, before any unit runs (Store::Impl's restore of the
  // expiry state), so that an entry restored as seen at seq - 1 is read again before a removal.
  void SetAllWriteMarks(uint64_t seq) {
    for (auto& stripe : stripes_) stripe.write_mark = seq;
  }

  // Holds the stripes of a set of keys (or every stripe) until destroyed.
  class MultiGuard {
   public:
    MultiGuard(LockPool& pool, const std::vector<std::string_view>& raw_keys);
    MultiGuard(LockPool& pool, const std::vector<std::string>& raw_keys);
    // The first n keys of raw_keys.
    MultiGuard(LockPool& pool, const std::vector<std::string>& raw_keys, size_t n);
    static MultiGuard All(LockPool& pool);  // every stripe: for FLUSHDB/FLUSHALL
    ~MultiGuard();
    MultiGuard(MultiGuard&& other) noexcept;
    MultiGuard(const MultiGuard&) = delete;
    MultiGuard& operator=(const MultiGuard&) = delete;
    MultiGuard& operator=(MultiGuard&&) = delete;

   private:
    MultiGuard(LockPool& pool, std::vector<size_t> stripes);
    LockPool* pool_;
    std::vector<size_t> stripes_;  // sorted, distinct, all locked
  };

 private:
  friend class LockSet;
  struct Stripe {
    std::mutex mu;
    uint64_t write_mark = 0;  // guarded by mu
  };
  Stripe stripes_[kStripes];
  std::atomic<uint64_t> write_versions_[kStripes] = {};  // changed under the stripe's mu
};

// The stripes one unit of work holds (a Store::Transaction). Planned from the unit's keys,
// locked once in ascending order (so units never deadlock), extended later only by try-lock
// (never blocking, so still deadlock free). Reusable: Unlock() keeps the vector's capacity.
// Not thread-safe: one unit, one thread at a time.
class LockSet {
 public:
  LockSet() = default;
  ~LockSet() { Unlock(); }
  LockSet(const LockSet&) = delete;
  LockSet& operator=(const LockSet&) = delete;

  // Planning, before Lock(): the stripe of raw_key, or every stripe.
  void Plan(std::string_view raw_key) { stripes_.push_back(LockPool::StripeOf(raw_key)); }
  void PlanAll() { all_ = true; }
  // Locks the planned stripes in ascending order, blocking until each is free.
  void Lock(LockPool& pool);
  bool Holds(std::string_view raw_key) const;
  // Holds raw_key's stripe afterwards: true if it already did or the stripe was free now.
  bool TryAcquire(std::string_view raw_key);
  // Sets the write mark of every stripe held to seq, a sequence number at or after the unit's
  // committed write (call it after the write, before Unlock).
  void MarkWritten(uint64_t seq);
  // Around the unit's RocksDB write (succeeded or not), every stripe held: the write versions
  // become odd, then even again (see LockPool's header comment).
  void BeginWrite() { BumpVersions(); }
  void EndWrite() { BumpVersions(); }
  // Releases every stripe held and forgets the plan.
  void Unlock();
  bool holds_all() const { return all_ && pool_ != nullptr; }
  size_t held() const { return pool_ == nullptr ? 0 : stripes_.size(); }  // stripes held

 private:
  void BumpVersions();

  LockPool* pool_ = nullptr;     // set while locked
  std::vector<size_t> stripes_;  // sorted and distinct once locked
  bool all_ = false;
};

}  // namespace sluice::internal
