// ExpiryCycle: the active expiry (Redis's activeExpireCycle, adapted to an ordered keyspace) and
// its state across restarts. It owns the cycle's state (the pass, the due list, the intake of
// written expiries, INFO's counters) and reaches the engine only through EngineHost
// (engine_host.h): its removals are units (Txn) like any other. Store::Impl owns one and runs it
// on its expiry thread. Internal header.
//
// Files: expiry_cycle.cc (a cycle, the removal of expired keys), expiry_state.cc (saving and
// restoring the state), expiry.h (the lists it keeps, and the element compaction filter).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine_host.h"
#include "expiry.h"
#include "expiry_state.h"
#include "keyspace_counts.h"
#include "sluice/store.h"

namespace sluice::internal {

class ExpiryCycle {
 public:
  explicit ExpiryCycle(EngineHost& engine) : engine_(engine) {}
  ExpiryCycle(const ExpiryCycle&) = delete;
  ExpiryCycle& operator=(const ExpiryCycle&) = delete;

  // One cycle of the active expiry (expiry_cycle.cc); returns the keys it removed. Does nothing
  // (not even a seek) while no stored key can be due, so an idle server costs nothing.
  int64_t Run(int64_t budget_us);
  // The end of a cycle that began at start with a budget to deadline: INFO's fields of the
  // cycle (Stats::expired_stale, expiry_time_cap_reached, expire_cycle_ms). Called by the expiry
  // thread (or a test driving cycles) only.
  void RecordCycle(std::chrono::steady_clock::time_point start,
                   std::chrono::steady_clock::time_point deadline, int64_t sampled, int64_t expired,
                   bool idle);
  // Removes, in one unit holding their stripes, the first c.n candidates (then sets c.n to 0):
  // keys read (at their seen_seq or later) as stored with the given expiry, expired at the time
  // they were checked, and not removed by the expiry cycle since. Returns how many it removed
  // (keyspace counts and Stats::expired_keys follow). A candidate that stays (rewritten since,
  // the clock went back, a read error) lowers *next_due_ms to when it should be looked at
  // again. The expiry thread's (also called by tests); one caller at a time.
  int64_t RemoveExpired(ExpiryCandidates& c, int64_t* next_due_ms);
  // Hands the expiry cycle keys[i] expiring at at_ms[i], i < n, written by one commit that set
  // the write mark `seq` on their stripes (ExpiryIntake): each is removed when due without a
  // walk. What the intake refuses (full) falls back to NoteExpiry. Thread-safe; called once
  // the write is visible, with its stripes still held (Txn::Commit).
  void HandExpiries(const std::string* const* keys, const int64_t* at_ms, size_t n, uint64_t seq) {
    size_t taken = expiry_intake_.Add(keys, at_ms, n, seq);
    for (; taken < n; ++taken) NoteExpiry(at_ms[taken]);
  }
  // Tells the expiry cycle that a key expiring at at_ms (ms since the epoch) is stored: it
  // wakes up by then. Lock-free; called once a write with an expiry is visible (Txn::Commit).
  // The exchange is sequentially consistent: it pairs with the reset at a pass's start.
  void NoteExpiry(int64_t at_ms) {
    int64_t due = next_expiry_due_ms_.load(std::memory_order_relaxed);
    while (at_ms < due && !next_expiry_due_ms_.compare_exchange_weak(due, at_ms)) {
    }
  }
  const ExpiryDueList& expiry_due() const { return expiry_due_; }  // tests

  // Saves the cycle's state for the next open (expiry_state.cc). The expiry thread's, or the
  // store's destructor's once that thread has stopped (closing: the final log sync covers it);
  // also called by tests, one caller at a time.
  void SaveState(bool closing);
  // The expiry thread's, after each cycle: saves the state once the store has been quiet for
  // after_ms, at most once every every_ms (SetQuietSaveTimes).
  void SaveStateWhenQuiet();
  // At open, before any write and before the expiry thread starts.
  void RestoreState();
  // At open, after the keyspace counts are loaded: no pass while no stored key has an expiry.
  void SkipPassWithoutExpiries(const KeyspaceCounts& counts);
  // Defaults 30 s and 10 min; tests shorten them. Thread-safe.
  void SetQuietSaveTimes(int64_t after_ms, int64_t every_ms) {
    quiet_save_after_ms_.store(after_ms, std::memory_order_relaxed);
    quiet_save_every_ms_.store(every_ms, std::memory_order_relaxed);
  }
  // The sequence number the last saved state named (the everysec thread reads it: that write
  // does not end a quiet spell). Thread-safe.
  uint64_t state_seq() const { return expiry_state_seq_.load(std::memory_order_relaxed); }

  // active-expire-effort (ExpiryCycleParams), read by each cycle. Thread-safe.
  int expire_effort() const { return expire_effort_.load(std::memory_order_relaxed); }
  void set_expire_effort(int effort) {
    expire_effort_.store(std::clamp(effort, kMinExpireEffort, kMaxExpireEffort),
                         std::memory_order_relaxed);
  }
  // A replica's store (Store::set_keep_expired), or one whose server's clients are paused
  // (set_keep_expired_paused): no cycle removes anything. Thread-safe.
  bool paused() const {
    return paused_.load(std::memory_order_relaxed) || held_.load(std::memory_order_relaxed);
  }
  void set_paused(bool on) { paused_.store(on, std::memory_order_relaxed); }
  void set_held(bool on) { held_.store(on, std::memory_order_relaxed); }
  // The cycle's fields of Store::Stats (expiry_scans, expired_stale, expiry_time_cap_reached,
  // expire_cycle_ms). Thread-safe.
  void AddStats(Store::Stats* st) const;

 private:
  void TakeIntake(int64_t* later);  // ExpiryIntake -> expiry_due_
  void CollectDueKeys(std::vector<ExpiryState::Key>* out);
  bool PassSees(const std::string& raw_key, uint64_t seq) const;

  EngineHost& engine_;
  // A pass walks the keyspace over as many cycles as it takes; it starts only when an expiry it
  // may find is due: next_expiry_due_ms_ is the minimum of the expiries a pass saw and did not
  // keep in expiry_due_ (which removes those when due), and of every expiry written since the
  // last pass began (NoteExpiry). 0 at open: the first pass runs at once, unless the last close
  // saved the state (RestoreState) or no stored key has an expiry (SkipPassWithoutExpiries).
  // The rest is the expiry thread's own.
  std::atomic<int64_t> next_expiry_due_ms_{0};
  std::atomic<int64_t> expiry_scans_{0};
  std::atomic<int> expire_effort_{1};                // set_expire_effort
  std::atomic<bool> paused_{false};                  // set_paused
  std::atomic<bool> held_{false};                    // set_held
  std::atomic<int64_t> expire_cycle_us_{0};          // time spent in cycles
  std::atomic<int64_t> expiry_time_cap_reached_{0};  // cycles that used their whole budget
  std::atomic<double> expired_stale_{0.0};           // written by the expiry thread only
  std::string expiry_cursor_;                        // encoded key where the pass resumes
  std::string expiry_done_;                          // the last key the pass handled (handled once)
  bool expiry_pass_active_ = false;
  // The sequence number the last saved expiry state named (written by the expiry thread; the
  // everysec thread reads it: that write does not end a quiet spell), and the expiry thread's
  // view of the latest sequence number: since when it has not moved (SaveStateWhenQuiet).
  std::atomic<uint64_t> expiry_state_seq_{0};
  uint64_t quiet_seq_ = 0;
  std::chrono::steady_clock::time_point quiet_since_;
  std::optional<std::chrono::steady_clock::time_point> last_quiet_save_;
  std::atomic<int64_t> quiet_save_after_ms_{30'000};
  std::atomic<int64_t> quiet_save_every_ms_{600'000};
  ExpiryCandidates expiry_batch_;  // found by the cycle, not yet removed
  ExpiryDueList expiry_due_;       // written or seen by a pass, not yet due
  // The current or last pass's walk, cycle by cycle: the first key each cycle read, and the
  // sequence its iterator read at (or after). Cleared when a pass starts.
  struct PassSegment {
    std::string start;
    uint64_t seen_seq;
  };
  std::vector<PassSegment> pass_segments_;
  std::vector<ExpiryIntake::Entry> intake_drained_;  // TakeIntake's scratch
  std::vector<size_t> reread_removed_;               // RemoveExpired's scratch
  std::vector<size_t> removal_order_;                // RemoveExpired's scratch
  ExpiryIntake expiry_intake_;                       // thread-safe: written expiries, not yet taken
};

}  // namespace sluice::internal
