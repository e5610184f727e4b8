// The active expiry cycle (expiry_cycle.h): Redis's activeExpireCycle, adapted to an ordered
// keyspace. Keys are removed only by units (this cycle's, or a locked read's), so that the
// keyspace counts change in the same write (keyspace_counts.h).
#include "expiry_cycle.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iterator>
#include <memory>
#include <mutex>
#include <utility>

#include "encoding.h"
#include "lock_pool.h"
#include "sluice/expiry_latency.h"
#include "txn.h"

namespace sluice::internal {
namespace {

// Keys without a TTL are walked over too (Redis never sees them); cap that walk per sample
// and per cycle so a keyspace of persistent keys costs little.
constexpr int kMaxVisitsPerSampleFactor = 20;
constexpr int kMaxVisitsWithoutTtl = 5000;
// Expired keys removed per unit (one lock round, one write, one count record), at most. Larger
// units hold more stripes for longer; see docs/engine.md ("Expiry") for the measurements.
constexpr size_t kRemoveBatch = 128;
// Deletion markers and stale versions one step of the cycle's iterator may walk over before it
// stops (and the cycle checks its time): ~10-20 ms with Debian's librocksdb.
constexpr uint64_t kMaxSkippedPerStep = 10000;

}  // namespace

// A candidate whose stripe's write mark is at most its seen_seq has not been written by any unit
// since it was read or written (lock_pool.h), nor removed by the cycle without a read (of the
// entries that describe one stored version, only one can pass this check: ExpiryDueList), so
// what was seen (stored, with that expiry) is still what is stored: it is removed without a
// read, and counted out as a key with an expiry. Any other is read again under the lock:
// - expired: removed, and its stripe marked, so that no other entry of that version passes the
//   check afterwards;
// - live with an expiry (rewritten since): back into the due list with the new expiry and its
//   old seen_seq, so that it is read again then. A write that extended a key's expiry hands
//   nothing to the cycle (Txn::Commit): this entry is what covers the new expiry.
// The unit's time is read once the stripes are held, like any unit's; a candidate not expired
// then (the clock went back) stays, and lowers *next_due_ms. One write: the deletions and the
// count record change together.
int64_t ExpiryCycle::RemoveExpired(ExpiryCandidates& c, int64_t* next_due_ms) {
  const size_t n = c.n;
  c.n = 0;
  if (n == 0) return 0;
  LockPool::MultiGuard guard(engine_.locks(), c.keys, n);
  Txn txn(engine_.unit_engine());
  reread_removed_.clear();
  // A key may be in the batch more than once (ExpiryDueList): only the entry seen last (the
  // highest seen_seq, the only one that may pass the check) is looked at.
  auto& order = removal_order_;
  order.resize(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const int cmp = c.keys[a].compare(c.keys[b]);
    return cmp != 0 ? cmp < 0 : c.seen_seq[a] > c.seen_seq[b];
  });
  for (size_t j = 0; j < n; ++j) {
    const size_t i = order[j];
    const std::string& key = c.keys[i];
    if (j > 0 && c.keys[order[j - 1]] == key) continue;
    if (engine_.locks().WriteMark(key) <= c.seen_seq[i]) {
      if (IsExpired(c.expire_at_ms[i], txn.now_ms())) {
        txn.RemoveExpired(key);
      } else {
        *next_due_ms = std::min(*next_due_ms, c.expire_at_ms[i]);
      }
      continue;
    }
    const int64_t found_before = txn.expired_found();
    auto v = txn.ReadView(key);  // an expired value found here is removed by the commit
    if (!v.ok()) {
      *next_due_ms = std::min(*next_due_ms, txn.now_ms());  // look again at the next pass
    } else if (txn.expired_found() > found_before) {
      reread_removed_.push_back(i);
    } else if (v->has_value() && (*v)->expire_at_ms != kNoExpiry) {
      const int64_t dropped = expiry_due_.Add(key, (*v)->expire_at_ms, c.seen_seq[i]);
      *next_due_ms = std::min(*next_due_ms, dropped);
    }
  }
  const int64_t removed = txn.expired_found();
  // A removal's write never reports failure (Txn::Commit); a refused one removed nothing.
  if (!txn.Commit(/*durable=*/false).ok() || engine_.writes_refused()) {
    *next_due_ms = std::min(*next_due_ms, txn.now_ms());
    return 0;
  }
  if (!reread_removed_.empty()) {
    const uint64_t seq = engine_.db()->GetLatestSequenceNumber();
    for (size_t i : reread_removed_) engine_.locks().SetWriteMark(c.keys[i], seq);
  }
  return removed;
}

// One cycle. First the remembered keys that are due (ExpiryDueList), then, while a pass is
// active: from the pass's cursor, sample keys with a TTL, remove the expired ones, remember the
// others, and keep going while more than 10% of a sample (or of the recent samples, INFO's
// expired_stale_perc) was expired and the time budget lasts (Redis 7.0's activeExpireCycle;
// sample size and percentage per active-expire-effort). A pass ends
// at the end of the keyspace; the next one starts only once an expiry it did not remember (or one
// written since it began) is due.
int64_t ExpiryCycle::Run(int64_t budget_us) {
  if (engine_.writes_refused() || paused()) return 0;  // nothing could (or may) be removed
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::microseconds(budget_us);
  auto out_of_time = [&] { return std::chrono::steady_clock::now() >= deadline; };
  int64_t removed = 0;
  // The pass's samples, for INFO's expired_stale_perc; recorded however the cycle ends.
  int64_t sampled_total = 0;
  int64_t expired_total = 0;
  struct RecordCycle {
    ExpiryCycle& cycle;
    std::chrono::steady_clock::time_point start, deadline;
    const int64_t& sampled;
    const int64_t& expired;
    bool idle = false;  // nothing due, no pass: no clock read at the end
    ~RecordCycle() { cycle.RecordCycle(start, deadline, sampled, expired, idle); }
  } record_cycle{*this, start, deadline, sampled_total, expired_total};
  // The earliest expiry this cycle leaves to a later pass: noted when the cycle ends (a note
  // during a pass only matters once it is over, so it is as good as one at its end).
  int64_t later = kNever;
  struct NoteLater {
    ExpiryCycle& cycle;
    const int64_t& at_ms;
    ~NoteLater() { cycle.NoteExpiry(at_ms); }
  } note_later{*this, later};
  TakeIntake(&later);
  while (IsExpired(expiry_due_.earliest(), engine_.clock().NowMs())) {
    expiry_due_.TakeExpired(engine_.clock().NowMs(), kRemoveBatch, &expiry_batch_);
    removed += RemoveExpired(expiry_batch_, &later);
    if (out_of_time()) return removed;
  }
  if (!expiry_pass_active_) {
    if (engine_.clock().NowMs() <= next_expiry_due_ms_.load(std::memory_order_relaxed)) {
      record_cycle.idle = removed == 0;
      return removed;
    }
    // Notes from now on lower the hint again; the pass accounts for what is stored. The fence
    // orders the reset before the pass's iterators read the latest sequence: a note made after
    // a commit became visible (Txn::Commit) is either kept or its value seen by the pass.
    next_expiry_due_ms_.exchange(kNever);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    expiry_pass_active_ = true;
    expiry_cursor_.clear();
    expiry_done_.clear();
    expiry_due_.Clear();  // the pass sees every key again
    pass_segments_.clear();
  }
  expiry_scans_.fetch_add(1, std::memory_order_relaxed);
  // Read before the iterator is made: its view is at this sequence or later. TakeIntake needs
  // to know which keys this cycle read at it.
  const uint64_t seen_seq = engine_.db()->GetLatestSequenceNumber();
  bool segment_noted = false;  // the first key this cycle reads starts its PassSegment
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  // After a mass removal one step can walk over a deletion marker per removed key: bounded, so
  // that the cycle keeps to its budget (it resumes where the step stopped).
  ro.max_skippable_internal_keys = kMaxSkippedPerStep;
  std::unique_ptr<rocksdb::Iterator> it(engine_.db()->NewIterator(ro));
  // A step can stop on the key the pass handled last (walking its old versions): a key is
  // handled once per pass, so that it is never removed twice.
  auto seek = [&](const std::string& target) {
    it->Seek(target);
    if (it->Valid() && !expiry_done_.empty() && it->key().ToStringView() == expiry_done_) {
      it->Next();
    }
  };
  // For an iterator on no key: true when a step stopped (expiry_cursor_ is where); otherwise
  // the pass is complete (the end of the keyspace, or an error: then a new pass starts soon).
  bool complete = false;
  auto stopped = [&] {
    std::string stop;
    if (it->status().IsIncomplete() &&
        it->GetProperty("rocksdb.iterator.internal-key", &stop).ok()) {
      expiry_cursor_ = std::move(stop);
      return true;
    }
    if (!it->status().ok()) later = std::min(later, engine_.clock().NowMs());
    complete = true;
    return false;
  };
  // Whether the iterator stands on a key, seeking on after stopped steps while time remains.
  auto on_key = [&] {
    while (!it->Valid()) {
      if (!stopped() || out_of_time()) return false;
      seek(expiry_cursor_);
    }
    return true;
  };
  seek(expiry_cursor_);
  const auto params = ExpiryCycleParams::ForEffort(expire_effort());
  const int max_visits_per_sample = kMaxVisitsPerSampleFactor * params.sample_size;
  // Redis runs extra 1 ms "fast" cycles between its event loop's turns while its estimate of
  // the expired share (INFO's expired_stale_perc) is above the acceptable one, so one sample
  // that happens to hold few expired keys does not end its work. This cycle has a thread of its
  // own: it keeps walking instead, within its budget. Without that, under churn with 20-40% of
  // the samples expired, one sample in ten or so still holds at most 2 of 20, and the cycles
  // used 3-17% of a core of their 25% while millions of expired keys stayed stored
  // (docs/engine.md, "Expiry").
  const bool stale_estimate_high =
      expired_stale_.load(std::memory_order_relaxed) * 100 > params.acceptable_stale_percent;
  int visits_without_ttl = 0;
  while (on_key()) {
    int sampled = 0;
    int visited = 0;
    int expired = 0;
    const int64_t now_ms = engine_.clock().NowMs();
    for (; sampled < params.sample_size && visited < max_visits_per_sample && on_key();
         it->Next()) {
      ++visited;
      const std::string_view key = it->key().ToStringView();
      expiry_done_.assign(key);
      if (!segment_noted) {
        pass_segments_.push_back(PassSegment{std::string(key), seen_seq});
        segment_noted = true;
      }
      auto expiry = DecodeExpiry(it->value().ToStringView());
      if (!expiry || *expiry == kNoExpiry) continue;
      ++sampled;
      if (IsExpired(*expiry, now_ms)) {
        ++expired;
        expiry_batch_.Add(key, *expiry, seen_seq);
      } else {
        later = std::min(later, expiry_due_.Add(std::string(key), *expiry, seen_seq));
      }
    }
    if (expiry_batch_.n + params.sample_size > kRemoveBatch) {
      removed += RemoveExpired(expiry_batch_, &later);
    }
    sampled_total += sampled;
    expired_total += expired;
    if (sampled == 0) visits_without_ttl += visited;
    bool keep_going = sampled == 0 ? visits_without_ttl < kMaxVisitsWithoutTtl
                                   : expired * 100 / sampled > params.acceptable_stale_percent ||
                                         stale_estimate_high;
    if (!keep_going || out_of_time()) break;
  }
  // Where the next cycle resumes: the key the iterator stands on, or where a step stopped.
  if (it->Valid()) {
    expiry_cursor_ = it->key().ToString();
  } else if (!complete) {
    stopped();
  }
  if (complete) {
    expiry_cursor_.clear();
    expiry_done_.clear();
    expiry_pass_active_ = false;
  }
  removed += RemoveExpired(expiry_batch_, &later);
  return removed;
}

// Redis's accounting of its cycle: the time spent, whether the cycle used its whole budget, and
// a moving average of the share of sampled keys that were expired (each cycle weighs 5%; one
// that sampled nothing counts as 0%, so the estimate decays once nothing is expired). An idle
// cycle's microseconds are not counted: recording them (a clock read and stores to memory gone
// cold during the sleep) was 5.6% of an idle server's samples, and idle should cost nothing.
namespace {
std::mutex& ListenerMutex() {
  static std::mutex* mu = new std::mutex;
  return *mu;
}
ExpiryCycleListener& Listener() {
  static ExpiryCycleListener* listener = new ExpiryCycleListener;
  return *listener;
}
std::atomic<bool> g_has_listener{false};  // the common case (none) takes no lock

void NotifyExpiryCycleListener(int64_t micros) {
  if (!g_has_listener.load(std::memory_order_acquire)) return;
  std::lock_guard lock(ListenerMutex());
  if (Listener()) Listener()(micros);
}
}  // namespace

void ExpiryCycle::RecordCycle(std::chrono::steady_clock::time_point start,
                              std::chrono::steady_clock::time_point deadline, int64_t sampled,
                              int64_t expired, bool idle) {
  const double average = expired_stale_.load(std::memory_order_relaxed);
  if (idle) {
    if (average != 0.0) expired_stale_.store(average * 0.95, std::memory_order_relaxed);
    return;
  }
  const auto end = std::chrono::steady_clock::now();
  const int64_t micros = std::chrono::duration_cast<std::chrono::microseconds>(end - start).count();
  expire_cycle_us_.fetch_add(micros, std::memory_order_relaxed);
  NotifyExpiryCycleListener(micros);
  if (end >= deadline) expiry_time_cap_reached_.fetch_add(1, std::memory_order_relaxed);
  const double current = sampled > 0 ? static_cast<double>(expired) / sampled : 0.0;
  expired_stale_.store(current * 0.05 + average * 0.95, std::memory_order_relaxed);
}

// Whether the current or last pass reads, or read, raw_key at a sequence at or after seq (so
// at that version or a later one): a key the active pass has not walked yet is read later at
// the latest sequence; a key it walked was read at the sequence of the cycle that walked it
// (pass_segments_: each cycle read the keys from the first one it read to the next cycle's
// first; a key before the pass's first key did not exist when the pass began).
// Exact, not a bound either way: dropping a write's entry is safe only when the pass saw its
// version, keeping it only when the pass's own entry for the key is seen before the write.
bool ExpiryCycle::PassSees(const std::string& raw_key, uint64_t seq) const {
  if (expiry_pass_active_ &&
      (raw_key > expiry_cursor_ || (raw_key == expiry_cursor_ && raw_key != expiry_done_))) {
    return true;
  }
  auto it =
      std::upper_bound(pass_segments_.begin(), pass_segments_.end(), raw_key,
                       [](const std::string& k, const PassSegment& seg) { return k < seg.start; });
  if (it == pass_segments_.begin()) return false;
  return seq <= std::prev(it)->seen_seq;
}

// Moves the expiries written since the last cycle into the due list. One whose write the
// current or last pass reads or read (PassSees) is left out: that pass remembers the key at
// that version or a later one, or leaves it to a later pass. Any other entry for the key that
// pass makes carries a sequence below the write's mark, so it is read again before a removal.
void ExpiryCycle::TakeIntake(int64_t* later) {
  intake_drained_.clear();
  expiry_intake_.Drain(&intake_drained_);
  for (auto& e : intake_drained_) {
    if (PassSees(e.key, e.seq)) continue;
    *later = std::min(*later, expiry_due_.Add(std::move(e.key), e.at_ms, e.seq));
  }
}

// The first cycle's pass finds the keys with an expiry stored before this open: with none
// stored (the counts are exact), it has nothing to find. On a fresh store taking traffic at
// once, that pass walked the new keys a sample a cycle while none had expired, and the expiries
// written ahead of its cursor were left to it instead of the due list (docs/engine.md, "Expiry").
void ExpiryCycle::SkipPassWithoutExpiries(const KeyspaceCounts& counts) {
  if (expiry_pass_active_) return;  // a restored pass under way goes on
  for (int db = 0; db < kNumDatabases; ++db) {
    if (counts.Get(db).expires != 0) return;
  }
  next_expiry_due_ms_.store(kNever, std::memory_order_relaxed);
}

void ExpiryCycle::AddStats(Store::Stats* st) const {
  st->expiry_scans = expiry_scans_.load(std::memory_order_relaxed);
  st->expired_stale = expired_stale_.load(std::memory_order_relaxed);
  st->expiry_time_cap_reached = expiry_time_cap_reached_.load(std::memory_order_relaxed);
  st->expire_cycle_ms = expire_cycle_us_.load(std::memory_order_relaxed) / 1000;
}

}  // namespace sluice::internal

namespace sluice {

void SetExpiryCycleListener(ExpiryCycleListener listener) {
  std::lock_guard lock(internal::ListenerMutex());
  internal::g_has_listener.store(static_cast<bool>(listener), std::memory_order_release);
  internal::Listener() = std::move(listener);
}

}  // namespace sluice
