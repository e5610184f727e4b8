// Removal of expired keys by the active expiry cycle (ExpiryCycle::RemoveExpired, through
// Store::Impl): batches of keys removed in one write with exact counts, without a read when the
// stripe's write mark shows nothing changed since the cycle's iterator read them, and never a key
// written after that read. The cycle is driven by hand (no expiry thread), with the manual clock.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "storage/engine/txn.h"
#include "test_util.h"

namespace sluice::testing {
namespace {

using SV = std::string_view;
constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

std::string Raw(SV key) { return internal::EncodeKey(0, key); }

// A key of db 0 whose stripe is the stripe of `of`, other than `of`.
std::string SameStripeAs(SV of) {
  const size_t stripe = internal::LockPool::StripeOf(Raw(of));
  for (int i = 0;; ++i) {
    std::string k = "twin" + std::to_string(i);
    if (internal::LockPool::StripeOf(Raw(k)) == stripe) return k;
  }
}

// Writes n keys of db 0 named prefix0..prefix{n-1}, the i-th in stored order (by hash slot)
// expiring at kT0Ms + 100 when expiring(i), else much later, then a persistent key behind the
// store's back (Fixture::PutRaw reopens it): the saved expiry state is stale, so the next cycle
// starts a pass that samples them in that order. The store is f.store afterwards.
template <typename Expiring>
void LayOutForAPass(Fixture& f, SV prefix, int n, Expiring expiring) {
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.push_back(std::string(prefix) + std::to_string(i));
  std::sort(names.begin(), names.end(),
            [](const std::string& a, const std::string& b) { return Raw(a) < Raw(b); });
  for (size_t i = 0; i < names.size(); ++i) {
    const int64_t at = kT0Ms + (expiring(i) ? 100 : 10'000'000);
    REQUIRE(f.store->Set(0, names[i], "v", SetAt(at)).ok());
  }
  f.PutRaw(0, "persistent", ValueKind::kString, "v");
}

}  // namespace

TEST_CASE("expiry cycle: removes every expired key in batches, counts exact, then sleeps") {
  Fixture f;
  Store& s = *f.store;
  for (int db = 0; db < 3; ++db) {
    for (int i = 0; i < 300; ++i) {
      REQUIRE(s.Set(db, "t" + std::to_string(i), "v", SetAt(kT0Ms + 100)).ok());
    }
    for (int i = 0; i < 50; ++i) {
      REQUIRE(s.Set(db, "p" + std::to_string(i), "v", SetPlain()).ok());
      REQUIRE(s.Set(db, "later" + std::to_string(i), "v", SetAt(kT0Ms + 100000)).ok());
    }
  }
  RunCycles(s);  // nothing due yet
  CHECK(s.GetStats().expired_keys == 0);
  f.AdvanceMs(101);
  CHECK(RunCycles(s) == 900);
  CHECK(s.GetStats().expired_keys == 900);
  for (int db = 0; db < 3; ++db) {
    CHECK(*s.DbSize(db) == 100);
    CHECK(s.Keyspace(db)->expires == 50);
  }
  RequireConsistent(s);
  // The pass saw the later keys: nothing to do, not even a walk, until they are due.
  const int64_t scans = s.GetStats().expiry_scans;
  f.AdvanceMs(50000);
  CHECK(s.impl().RunExpiryCycle(1'000'000) == 0);
  CHECK(s.GetStats().expiry_scans == scans);
  f.AdvanceMs(50000);
  CHECK(RunCycles(s) == 150);  // remembered by the pass: removed without another walk
  CHECK(s.GetStats().expiry_scans == scans);
  for (int db = 0; db < 3; ++db) CHECK(s.Keyspace(db)->expires == 0);
  RequireConsistent(s);
  f.Reopen();  // the persisted counts match too
  for (int db = 0; db < 3; ++db) CHECK(*f.store->DbSize(db) == 50);
}

TEST_CASE("a commit sets the write mark of its stripes past its write") {
  Fixture f;
  Store::Impl& impl = f.store->impl();
  const uint64_t before = impl.db()->GetLatestSequenceNumber();
  REQUIRE(f.store->Set(0, "k", "v", SetPlain()).ok());
  internal::LockPool::MultiGuard guard(impl.locks(), std::vector<std::string>{Raw("k")});
  CHECK(impl.locks().WriteMark(Raw("k")) > before);
  CHECK(impl.locks().WriteMark(Raw("k")) >= impl.db()->GetLatestSequenceNumber());
}

// The window the write marks guard: the cycle's iterator has read a key as expired, and before
// the cycle holds its stripe a unit writes the key (or another key of its stripe).
TEST_CASE("RemoveExpired: keys written after the iterator read them are kept, counts exact") {
  Fixture f;
  Store& s = *f.store;
  const std::vector<std::string> names = {"rewritten", "new-ttl", "lazily-removed", "untouched",
                                          "shares-stripe"};
  for (const auto& k : names) REQUIRE(s.Set(0, k, "old", SetAt(kT0Ms + 10)).ok());
  f.AdvanceMs(20);
  // What the cycle's iterator saw: every key stored and expired, at this sequence.
  const uint64_t seen_seq = s.impl().db()->GetLatestSequenceNumber();
  internal::ExpiryCandidates c;
  for (const auto& k : names) c.Add(Raw(k), kT0Ms + 10, seen_seq);

  REQUIRE(s.Set(0, "rewritten", "new", SetPlain()).ok());
  REQUIRE(s.Set(0, "new-ttl", "new", SetAt(kT0Ms + 3600000)).ok());
  CHECK(*s.Get(0, "lazily-removed") == std::nullopt);  // a read removes it (lazy expiry)
  const std::string twin = SameStripeAs("shares-stripe");
  REQUIRE(s.Set(0, twin, "x", SetPlain()).ok());
  CHECK(s.GetStats().expired_keys == 1);
  CHECK(*s.DbSize(0) == 5);  // 4 of the names (one removed) + the twin

  const size_t due_before = s.impl().expiry_due().size();
  int64_t next_due = kNever;
  CHECK(s.impl().RemoveExpired(c, &next_due) == 2);  // untouched, shares-stripe
  CHECK(c.n == 0);
  CHECK(next_due == kNever);  // new-ttl read again, live: back in the due list, no pass
  CHECK(s.impl().expiry_due().size() == due_before + 1);
  CHECK(*s.Get(0, "rewritten") == "new");
  CHECK(*s.Get(0, "new-ttl") == "new");
  CHECK(*s.PTtl(0, "lazily-removed") == -2);
  CHECK(*s.PTtl(0, "untouched") == -2);
  CHECK(*s.PTtl(0, "shares-stripe") == -2);
  CHECK(*s.Get(0, twin) == "x");
  CHECK(s.GetStats().expired_keys == 3);
  CHECK(*s.DbSize(0) == 3);
  CHECK(s.Keyspace(0)->expires == 1);
  RequireConsistent(s);
}

TEST_CASE("RemoveExpired: a key the clock no longer sees expired stays and is due again") {
  Fixture f;
  Store& s = *f.store;
  REQUIRE(s.Set(0, "k", "v", SetAt(kT0Ms + 10)).ok());
  f.AdvanceMs(20);
  const uint64_t seen_seq = s.impl().db()->GetLatestSequenceNumber();
  internal::ExpiryCandidates c;
  c.Add(Raw("k"), kT0Ms + 10, seen_seq);
  f.clock->SetManualNs(kT0Ms * 1000000);  // back before the expiry (DEBUG CLOCK SET)
  int64_t next_due = kNever;
  CHECK(s.impl().RemoveExpired(c, &next_due) == 0);
  CHECK(next_due == kT0Ms + 10);
  CHECK(*s.Get(0, "k") == "v");
  CHECK(*s.DbSize(0) == 1);
  RequireConsistent(s);
}

// Keys a pass remembered (not yet due) and that units then rewrite, delete or remove lazily
// before they are due: kept when live, never counted out twice.
TEST_CASE("expiry cycle: remembered keys changed before they are due") {
  Fixture f;
  Store& s = *f.store;
  for (SV k : {"rewritten", "new-ttl", "deleted", "lazily-removed", "untouched"}) {
    REQUIRE(s.Set(0, k, "old", SetAt(kT0Ms + 100)).ok());
  }
  REQUIRE(s.Set(0, "due-first", "v", SetAt(kT0Ms + 10)).ok());
  f.AdvanceMs(11);
  CHECK(RunCycles(s) == 1);  // a pass: due-first removed, the others remembered
  const int64_t scans = s.GetStats().expiry_scans;
  REQUIRE(s.Set(0, "rewritten", "new", SetPlain()).ok());
  REQUIRE(s.Set(0, "new-ttl", "new", SetAt(kT0Ms + 1000)).ok());
  const SV del[] = {"deleted"};
  CHECK(*s.Del(0, del) == 1);
  f.AdvanceMs(100);
  CHECK(*s.Get(0, "lazily-removed") == std::nullopt);
  CHECK(RunCycles(s) == 1);                   // untouched
  CHECK(s.GetStats().expiry_scans == scans);  // no walk: from the due list
  CHECK(s.GetStats().expired_keys == 3);      // due-first, lazily-removed, untouched
  CHECK(*s.Get(0, "rewritten") == "new");
  CHECK(*s.Get(0, "new-ttl") == "new");
  CHECK(*s.DbSize(0) == 2);
  RequireConsistent(s);
  f.AdvanceMs(1000);  // new-ttl's write handed its expiry to the cycle: no walk either
  CHECK(RunCycles(s) == 1);
  CHECK(s.GetStats().expiry_scans == scans);
  CHECK(*s.DbSize(0) == 1);
  RequireConsistent(s);
}

// Expiries written while the store is open reach the cycle from their writes (ExpiryIntake): a
// key is removed when due without a walk, whether its write created it, shortened its expiry,
// or extended it (a write that extends hands nothing: the earlier entry, read when due, finds
// the key live and keeps it due).
TEST_CASE("expiry cycle: written expiries are removed when due, without a walk") {
  Fixture f;
  Store& s = *f.store;
  RunCycles(s);
  const int64_t scans = s.GetStats().expiry_scans;
  for (int i = 0; i < 500; ++i) {
    REQUIRE(s.Set(0, "new" + std::to_string(i), "v", SetAt(kT0Ms + 100)).ok());
  }
  REQUIRE(s.Set(0, "shortened", "v", SetAt(kT0Ms + 100000)).ok());
  REQUIRE(s.Set(0, "shortened", "v", SetAt(kT0Ms + 50)).ok());
  REQUIRE(s.Set(0, "persisted", "v", SetAt(kT0Ms + 50)).ok());
  REQUIRE(s.Set(0, "persisted", "v", SetPlain()).ok());
  for (int i = 1; i <= 20; ++i) {  // extended 20 times, 10 ms a step
    REQUIRE(s.Set(0, "extended", std::to_string(i), SetAt(kT0Ms + 50 + 10 * i)).ok());
  }
  CHECK(*s.DbSize(0) == 503);
  f.AdvanceMs(51);
  CHECK(RunCycles(s) == 1);  // shortened
  f.AdvanceMs(50);
  CHECK(RunCycles(s) == 500);
  CHECK(*s.Get(0, "extended") == "20");  // due at +250
  f.AdvanceMs(150);
  CHECK(RunCycles(s) == 1);
  CHECK(*s.PTtl(0, "extended") == -2);
  CHECK(*s.Get(0, "persisted") == "v");
  CHECK(s.GetStats().expiry_scans == scans);
  CHECK(s.GetStats().expired_keys == 502);
  CHECK(*s.DbSize(0) == 1);
  RequireConsistent(s);
  // Left: the entry of shortened's first expiry. When due, a read finds nothing to remove.
  CHECK(s.impl().expiry_due().size() == 1);
  f.AdvanceMs(100000);
  CHECK(RunCycles(s) == 0);
  CHECK(s.impl().expiry_due().size() == 0);
  CHECK(s.GetStats().expiry_scans == scans);
  RequireConsistent(s);
}

// More expiries written between two cycles than the intake holds: the rest fall back to the
// pass hint, and a pass finds them; each key is removed (and counted out) once.
TEST_CASE("expiry cycle: an overflowing intake falls back to a pass") {
  Fixture f;
  Store& s = *f.store;
  RunCycles(s);
  const int64_t scans = s.GetStats().expiry_scans;
  constexpr int kKeys = static_cast<int>(internal::ExpiryIntake::kShardCapacity) + 1000;
  for (int i = 0; i < kKeys; ++i) {
    REQUIRE(s.Set(0, "k" + std::to_string(i), "v", SetAt(kT0Ms + 10)).ok());
  }
  f.AdvanceMs(11);
  CHECK(RunCycles(s) == kKeys);
  CHECK(s.GetStats().expiry_scans > scans);
  CHECK(*s.DbSize(0) == 0);
  RequireConsistent(s);
}

// Redis 7.0's rule: a pass goes on while more than 10% of a sample of 20 keys with a TTL was
// expired. Keys laid out so that each sample holds exactly `expired_per_sample` expired keys
// (in stored order, which is by hash slot), known to no cycle (the saved state is made stale),
// then one cycle with time to spare: 3 in 20 (15%) walks on to the end, 2 in 20 (10%) stops
// after the first sample. INFO's stale estimate and time-cap count follow.
TEST_CASE("expiry cycle: a pass goes on while more than 10% of a sample is expired") {
  for (int expired_per_sample : {3, 2}) {
    CAPTURE(expired_per_sample);
    Fixture f;
    RunCycles(*f.store);  // nothing stored: nothing to do
    LayOutForAPass(f, "s", 200,
                   [&](size_t i) { return static_cast<int>(i % 20) < expired_per_sample; });
    Store& s = *f.store;
    REQUIRE(s.impl().expiry_due().size() == 0);
    f.AdvanceMs(101);
    const int64_t capped = s.GetStats().expiry_time_cap_reached;
    const int64_t removed = s.impl().RunExpiryCycle(10'000'000);
    CHECK(s.GetStats().expiry_time_cap_reached == capped);
    if (expired_per_sample == 3) {
      CHECK(removed == 30);  // every sample: 15%
      CHECK(s.GetStats().expired_stale == doctest::Approx(0.05 * 0.15));
    } else {
      CHECK(removed == 2);  // 10% is not more than 10%
      CHECK(s.GetStats().expired_stale == doctest::Approx(0.05 * 0.10));
      s.impl().RunExpiryCycle(0);  // out of time after one sample
      CHECK(s.GetStats().expiry_time_cap_reached == capped + 1);
      CHECK(RunCycles(s) == 16);  // the rest, a sample per cycle
    }
    CHECK(*s.DbSize(0) == 201 - 10 * expired_per_sample);
    RequireConsistent(s);
  }
}

// Redis runs extra cycles while its estimate of the expired share is above 10%; here the cycle
// walks on instead. The first 4 samples are all expired (one per cycle: the estimate becomes
// 1 - 0.95^4 = 18.5%), the rest 2 in 20 (10%, not more): with the estimate that high, one cycle
// walks to the end rather than stopping after its first sample.
TEST_CASE("expiry cycle: a pass goes on while the estimated expired share is above 10%") {
  Fixture f;
  RunCycles(*f.store);
  LayOutForAPass(f, "m", 280, [](size_t i) { return i < 80 || i % 20 < 2; });
  Store& s = *f.store;
  f.AdvanceMs(101);
  for (int i = 0; i < 4; ++i) CHECK(s.impl().RunExpiryCycle(0) == 20);  // a sample per cycle
  CHECK(s.GetStats().expired_stale == doctest::Approx(1 - 0.95 * 0.95 * 0.95 * 0.95));
  CHECK(s.impl().RunExpiryCycle(10'000'000) == 20);  // 2 in each of the last 10 samples
  CHECK(*s.DbSize(0) == 181);
  RequireConsistent(s);
}

// Redis 7.0's scaling of activeExpireCycle by active-expire-effort, every value.
TEST_CASE("expiry cycle parameters follow active-expire-effort") {
  using internal::ExpiryCycleParams;
  const ExpiryCycleParams expected[] = {{20, 10, 25}, {25, 9, 27}, {30, 8, 29}, {35, 7, 31},
                                        {40, 6, 33},  {45, 5, 35}, {50, 4, 37}, {55, 3, 39},
                                        {60, 2, 41},  {65, 1, 43}};
  for (int effort = 1; effort <= 10; ++effort) {
    CAPTURE(effort);
    CHECK(ExpiryCycleParams::ForEffort(effort) == expected[effort - 1]);
  }
  CHECK(ExpiryCycleParams::ForEffort(0) == expected[0]);  // clamped
  CHECK(ExpiryCycleParams::ForEffort(11) == expected[9]);
}

// One expired key in 20: at the default effort a sample of 20 holds 5% (not more than 10%), so
// one cycle stops after its first sample; at effort 10 a sample of 65 holds 3 or 4 (more than
// 1%), so one cycle walks to the end. The store's setting is read by each cycle.
TEST_CASE("expiry cycle: a higher active-expire-effort walks on at a lower expired share") {
  for (int effort : {1, 10}) {
    CAPTURE(effort);
    Fixture f;
    RunCycles(*f.store);
    LayOutForAPass(f, "e", 260, [](size_t i) { return i % 20 == 0; });
    Store& s = *f.store;
    s.set_active_expire_effort(effort);
    REQUIRE(s.impl().expiry_due().size() == 0);
    f.AdvanceMs(101);
    CHECK(s.impl().RunExpiryCycle(10'000'000) == (effort == 1 ? 1 : 13));
    CHECK(*s.DbSize(0) == (effort == 1 ? 260 : 248));
    RequireConsistent(s);
  }
}

// The pass at open looks for keys with an expiry stored before it: a store holding none
// (by its exact counts) starts none; one holding some, unknown to the cycle, does.
TEST_CASE("expiry cycle: no pass at open when no stored key has an expiry") {
  Fixture f;
  CHECK(RunCycles(*f.store) == 0);
  CHECK(f.store->GetStats().expiry_scans == 0);        // a fresh store
  f.PutRaw(0, "persistent", ValueKind::kString, "v");  // no saved state is used
  CHECK(RunCycles(*f.store) == 0);
  CHECK(f.store->GetStats().expiry_scans == 0);
  f.PutRaw(0, "expiring", ValueKind::kString, "v", kT0Ms + 10);
  f.AdvanceMs(11);
  CHECK(RunCycles(*f.store) == 1);
  CHECK(f.store->GetStats().expiry_scans > 0);
  CHECK(*f.store->DbSize(0) == 1);
  RequireConsistent(*f.store);
}

TEST_CASE("ExpiryIntake: every entry added is drained once, also while writers add") {
  using internal::ExpiryIntake;
  ExpiryIntake intake;
  std::vector<ExpiryIntake::Entry> out;
  intake.Drain(&out);
  CHECK(out.empty());
  const std::string one = "k";
  const std::string* keys[] = {&one};
  const int64_t at[] = {42};
  REQUIRE(intake.Add(keys, at, 1, 7) == 1);
  intake.Drain(&out);
  REQUIRE(out.size() == 1);
  CHECK((out[0].key == "k" && out[0].at_ms == 42 && out[0].seq == 7));
  out.clear();
  intake.Drain(&out);
  CHECK(out.empty());

  constexpr int kWriters = 4, kEach = 20000;
  std::atomic<int> running{kWriters};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < kEach; ++i) {
        const std::string key = std::to_string(w) + ":" + std::to_string(i);
        const std::string* k[] = {&key};
        const int64_t a[] = {i};
        REQUIRE(intake.Add(k, a, 1, 1) == 1);
      }
      running.fetch_sub(1);
    });
  }
  std::vector<ExpiryIntake::Entry> all;
  while (running.load() > 0) intake.Drain(&all);
  for (auto& t : writers) t.join();
  intake.Drain(&all);
  std::vector<std::string> seen;
  for (const auto& e : all) seen.push_back(e.key);
  std::sort(seen.begin(), seen.end());
  CHECK(seen.size() == size_t{kWriters} * kEach);
  CHECK(std::adjacent_find(seen.begin(), seen.end()) == seen.end());
}

TEST_CASE("ExpiryDueList: earliest first, bounded, keeps the earliest expiries") {
  using internal::ExpiryDueList;
  ExpiryDueList due;
  CHECK(due.earliest() == ExpiryDueList::kNone);
  CHECK(due.Add("b", 200, 7) == ExpiryDueList::kNone);
  CHECK(due.Add("a", 100, 8) == ExpiryDueList::kNone);
  CHECK(due.Add("c", 100, 9) == ExpiryDueList::kNone);
  CHECK(due.earliest() == 100);
  internal::ExpiryCandidates c;
  due.TakeExpired(/*now_ms=*/100, 10, &c);  // none has passed its millisecond yet
  CHECK(c.n == 0);
  due.TakeExpired(/*now_ms=*/150, 1, &c);  // at most 1
  REQUIRE(c.n == 1);
  CHECK(c.keys[0] == "a");
  CHECK(c.seen_seq[0] == 8);
  due.TakeExpired(/*now_ms=*/1000, 10, &c);
  REQUIRE(c.n == 3);
  CHECK(c.keys[1] == "c");
  CHECK(c.keys[2] == "b");
  CHECK(c.expire_at_ms[2] == 200);
  CHECK(due.size() == 0);

  constexpr size_t kCapacity = 1000;
  ExpiryDueList small(kCapacity);
  for (size_t i = 0; i < kCapacity; ++i) {
    REQUIRE(small.Add("k" + std::to_string(i), 1000 + static_cast<int64_t>(i), 1) ==
            ExpiryDueList::kNone);
  }
  const int64_t last = 1000 + static_cast<int64_t>(kCapacity) - 1;
  CHECK(small.Add("later", last + 5, 1) == last + 5);  // full: the later one is not kept
  CHECK(small.Add("sooner", 10, 1) == last);           // kept; the last one is dropped
  CHECK(small.size() == kCapacity);
  CHECK(small.earliest() == 10);
}

TEST_CASE("ExpiryDueList: keys in 64 ms buckets come out by expiry, not by insertion") {
  using internal::ExpiryDueList;
  ExpiryDueList due;
  due.Add("c130", 130, 1);  // bucket 2
  due.Add("b65", 65, 1);    // bucket 1
  due.Add("d200", 200, 1);  // bucket 3
  due.Add("a64", 64, 1);    // bucket 1
  CHECK(due.earliest() == 64);
  CHECK(due.size() == 4);
  internal::ExpiryCandidates c;
  due.TakeExpired(/*now_ms=*/65, 10, &c);  // 64 has passed, 65 not yet
  REQUIRE(c.n == 1);
  CHECK(c.keys[0] == "a64");
  CHECK(due.earliest() == 65);
  due.TakeExpired(/*now_ms=*/131, 10, &c);
  REQUIRE(c.n == 3);
  CHECK(c.keys[1] == "b65");
  CHECK(c.keys[2] == "c130");
  CHECK(due.earliest() == 200);
  CHECK(due.size() == 1);
  due.Clear();
  CHECK(due.earliest() == ExpiryDueList::kNone);
  CHECK(due.size() == 0);
}

// A pass over many deletion markers walks them in bounded steps and resumes where a step
// stopped, also with no time at all in each cycle. A key with many old versions is handled (and
// counted out) once.
TEST_CASE("expiry cycle: steps over deletion markers and many versions, each key once") {
  Fixture f;
  Store& s = *f.store;
  for (int i = 0; i < 30000; ++i) {
    REQUIRE(s.Set(0, "gone" + std::to_string(i), "v", SetAt(kT0Ms + 10)).ok());
  }
  for (int i = 0; i < 12000; ++i) {  // versions of one key in the memtable
    REQUIRE(s.Set(0, "hot", std::to_string(i), SetAt(kT0Ms + 10)).ok());
  }
  f.AdvanceMs(11);
  CHECK(RunCycles(s) == 30001);  // 30,001 deletion markers now
  CHECK(s.GetStats().expired_keys == 30001);
  RequireConsistent(s);
  for (int i = 0; i < 5; ++i) {
    REQUIRE(s.Set(0, "left" + std::to_string(i), "v", SetAt(kT0Ms + 20)).ok());
  }
  f.AdvanceMs(10);
  CHECK(RunCycles(s, 10000, /*budget_us=*/0) == 5);
  CHECK(*s.DbSize(0) == 0);
  CHECK(s.GetStats().expired_keys == 30006);
  RequireConsistent(s);
}

// A copy of the data dir taken while the store runs is what kill -9 leaves behind (the removal's
// write reached the OS before RemoveExpired returned): the deletions and the count record are
// one write-ahead log record, so the copy's counts equal a walk.
TEST_CASE("a crash right after a removal leaves counts equal to the keys") {
  Fixture f;
  Store& s = *f.store;
  for (int i = 0; i < 200; ++i) {
    REQUIRE(s.Set(0, "t" + std::to_string(i), "v", SetAt(kT0Ms + 10)).ok());
  }
  for (int i = 0; i < 20; ++i) REQUIRE(s.Set(0, "p" + std::to_string(i), "v", SetPlain()).ok());
  f.AdvanceMs(20);
  REQUIRE(RunCycles(s) == 200);
  TempDir copy;
  std::filesystem::copy(f.dir.path(), copy.sub("data"), std::filesystem::copy_options::recursive);
  f.store.reset();
  auto crashed = OpenStore(copy.sub("data"), f.clock);
  CHECK(*crashed->DbSize(0) == 20);
  CHECK(crashed->Keyspace(0)->expires == 0);
  RequireConsistent(*crashed);
}

// Writers rewrite, re-expire and delete their own keys while the cycle removes expired ones and
// the clock moves: no live value is ever removed, and the counts stay exact. Writer 0 commits
// through a CommitGroup (as the server does), three units per write. With `bulk` keys stored
// first (unknown to the cycle: the saved state is made stale) and a small budget per cycle, the
// pass at open spans many cycles while the writers write behind and ahead of its cursor (their
// expiries reach the cycle both from their writes and from the pass).
void ConcurrentWritersCase(int bulk, int64_t budget_us) {
  Fixture f;
  for (int i = 0; i < bulk; ++i) {
    REQUIRE(f.store->Set(0, "bulk" + std::to_string(i), "v", SetAt(kT0Ms + 1 + i % 20)).ok());
  }
  if (bulk > 0) f.PutRaw(0, "stale", ValueKind::kString, "v", kT0Ms + 1);
  Store& s = *f.store;
  constexpr int kWriters = 3;
  constexpr int kKeysPerWriter = 64;
  constexpr int kOpsPerWriter = 3000;
  constexpr size_t kUnitsPerGroup = 3;
  struct Expect {
    bool live = false;
    std::string value;
  };
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::vector<std::vector<Expect>> expect(kWriters, std::vector<Expect>(kKeysPerWriter));
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      std::mt19937 rng(w);
      auto& mine = expect[w];
      std::optional<CommitGroup> group;
      std::vector<int> unchecked;  // keys written since the last check
      auto check = [&] {
        if (group) {
          if (!group->Flush().ok()) ++failures;
        }
        for (int i : unchecked) {  // a live value is never removed
          const std::string key = "w" + std::to_string(w) + ":" + std::to_string(i);
          auto got = s.Get(0, key);
          if (!got.ok() || (mine[i].live && *got != mine[i].value)) ++failures;
        }
        unchecked.clear();
      };
      if (w == 0) group.emplace(s, /*defer_durability=*/false);
      for (int op = 0; op < kOpsPerWriter; ++op) {
        const int i = static_cast<int>(rng() % kKeysPerWriter);
        const std::string key = "w" + std::to_string(w) + ":" + std::to_string(i);
        const std::string value = std::to_string(op);
        const KeyRef refs[] = {{0, key}};
        TransactionOptions options;
        if (group) {
          options.isolate_reads = false;
          options.group = &*group;
        }
        Store::Transaction u(s, refs, options);
        const int64_t now = u.NowMs();
        Status st;
        switch (rng() % 4) {
          case 0:  // short-lived: the cycle may remove it any time after
            st = u.Set(0, key, value, SetAt(now + 1 + rng() % 3)).status();
            mine[i] = Expect{};
            break;
          case 1:
            st = u.Set(0, key, value, SetPlain()).status();
            mine[i] = Expect{true, value};
            break;
          case 2:
            st = u.Set(0, key, value, SetAt(now + 3600000)).status();
            mine[i] = Expect{true, value};
            break;
          default: {
            const SV keys[] = {key};
            st = u.Del(0, keys).status();
            mine[i] = Expect{};
          }
        }
        if (!st.ok() || !u.Commit().ok()) ++failures;
        unchecked.push_back(i);
        if (!group || unchecked.size() == kUnitsPerGroup) check();
      }
      check();
    });
  }
  std::thread clock([&] {
    while (!stop.load()) {
      f.AdvanceMs(1);
      std::this_thread::yield();
    }
  });
  std::thread expiry([&] {
    while (!stop.load()) s.impl().RunExpiryCycle(budget_us);
  });
  for (auto& t : threads) t.join();
  stop = true;
  clock.join();
  expiry.join();
  CHECK(failures.load() == 0);
  CHECK(s.GetStats().expired_keys > 0);
  if (bulk > 0) CHECK(s.GetStats().expiry_scans > 1);  // the pass at open, over many cycles

  // Past every expiry but the long ones: the writers' short-lived keys expire at most 3 ms after
  // their write, the bulk keys at kT0Ms + 20 at the latest. (The clock thread may have advanced
  // the clock only a few ms on a loaded machine, so the bulk keys need their own bound.)
  f.AdvanceMs(std::max<int64_t>(10, kT0Ms + 21 - f.clock->NowMs()));
  RunCycles(s);
  int64_t live = 0;
  for (int w = 0; w < kWriters; ++w) {
    for (int i = 0; i < kKeysPerWriter; ++i) {
      const std::string key = "w" + std::to_string(w) + ":" + std::to_string(i);
      INFO(key);
      if (expect[w][i].live) {
        ++live;
        CHECK(*s.Get(0, key) == expect[w][i].value);
      } else {
        CHECK(*s.PTtl(0, key) == -2);
      }
    }
  }
  CHECK(*s.DbSize(0) == live);  // every expired key removed, no more, no less
  RequireConsistent(s);
}

TEST_CASE("expiry removal under concurrent writers") { ConcurrentWritersCase(0, 1'000'000); }

TEST_CASE("expiry removal under concurrent writers during a long pass") {
  ConcurrentWritersCase(20000, 300);
}

}  // namespace sluice::testing
