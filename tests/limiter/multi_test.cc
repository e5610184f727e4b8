// LIMITS.TAKE's decision: CombineDecisions (binding group, remaining, retry, reset, limit) as a
// table, and TakeAll / RefundAll over several fake keys (all or nothing, per-group replies).
#include <doctest/doctest.h>

#include <ostream>
#include <vector>

#include "sluice/limiter.h"
#include "tests/limiter/fake_key.h"

namespace sluice::limiter {
namespace {

using testing::At;
using testing::FakeKey;
using testing::kStartMs;
using W = Outcome::Write;

Decision D(bool allowed, int64_t remaining, int64_t retry, int64_t reset, int64_t limit) {
  Decision d;
  d.allowed = allowed;
  d.remaining = remaining;
  d.retry_after_ns = retry;
  d.reset_after_ns = reset;
  d.limit = limit;
  return d;
}

// allowed, remaining, retry, reset, limit, binding
struct Combined {
  int64_t allowed, remaining, retry, reset, limit, binding;
  bool operator==(const Combined&) const = default;
};
std::ostream& operator<<(std::ostream& os, const Combined& c) {
  return os << "[" << c.allowed << ", " << c.remaining << ", " << c.retry << ", " << c.reset << ", "
            << c.limit << ", binding " << c.binding << "]";
}

Combined Of(const MultiDecision& m) {
  const Decision& d = m.decision;
  return {d.allowed ? 1 : 0, d.remaining, d.retry_after_ns, d.reset_after_ns, d.limit, m.binding};
}

struct CombineRow {
  std::vector<Decision> groups;
  Combined expected;
};

TEST_CASE("CombineDecisions: binding, minimum remaining, largest retry and reset") {
  const std::vector<CombineRow> rows = {
      // One group: its own reply.
      {{D(true, 4, 0, 100, 5)}, {1, 4, 0, 100, 5, 1}},
      {{D(false, 0, 30, 100, 5)}, {0, 0, 30, 100, 5, 1}},
      // Allowed: the fewest remaining binds; the lowest index on ties.
      {{D(true, 9, 0, 100, 10), D(true, 2, 0, 5000, 3)}, {1, 2, 0, 5000, 3, 2}},
      {{D(true, 2, 0, 100, 10), D(true, 2, 0, 5000, 3)}, {1, 2, 0, 5000, 10, 1}},
      {{D(true, 7, 0, 9, 8), D(true, 5, 0, 1, 6), D(true, 5, 0, 3, 7)}, {1, 5, 0, 9, 6, 2}},
      // Denied: the denying group with the largest retry binds; allowed groups never bind.
      {{D(true, 0, 0, 100, 10), D(false, 3, 50, 200, 4)}, {0, 0, 50, 200, 4, 2}},
      {{D(false, 1, 50, 10, 4), D(false, 0, 70, 20, 5), D(true, 9, 0, 900, 9)},
       {0, 0, 70, 900, 5, 2}},
      {{D(false, 1, 70, 10, 4), D(false, 0, 70, 20, 5)}, {0, 0, 70, 20, 4, 1}},
      // -1 (never) is the largest retry, wherever it is.
      {{D(false, 1, 999, 10, 4), D(false, 2, -1, 20, 5), D(false, 0, 5, 30, 6)},
       {0, 0, -1, 30, 5, 2}},
      {{D(false, 1, -1, 10, 4), D(false, 2, -1, 20, 5)}, {0, 1, -1, 20, 4, 1}},
  };
  for (size_t i = 0; i < rows.size(); ++i) {
    CAPTURE(i);
    CHECK(Of(CombineDecisions(rows[i].groups)) == rows[i].expected);
  }
}

TEST_CASE("CombineDecisions: delay is the largest when allowed, 0 when denied") {
  Decision a = D(true, 1, 0, 10, 2), b = D(true, 1, 0, 10, 2);
  a.delay_ns = 5;
  b.delay_ns = 9;
  const Decision both[] = {a, b};
  CHECK(CombineDecisions(both).decision.delay_ns == 9);
  const Decision denied[] = {a, D(false, 0, 1, 1, 1)};
  CHECK(CombineDecisions(denied).decision.delay_ns == 0);
}

// Several fake keys driven together as the engine drives them.
struct Keys {
  std::vector<LimitParams> params;
  std::vector<FakeKey> keys;

  MultiOutcome Call(int64_t t_ms, int64_t n, bool refund) {
    std::vector<const StoredState*> states;
    for (FakeKey& k : keys) states.push_back(k.Get(At(t_ms)));
    MultiOutcome m =
        refund ? RefundAll(params, states, At(t_ms), n) : TakeAll(params, states, At(t_ms), n);
    REQUIRE(m.corrupt == 0);
    REQUIRE(m.groups.size() == keys.size());
    if (m.write) {
      for (size_t i = 0; i < keys.size(); ++i) keys[i].Apply(m.groups[i]);
    } else {
      for (const Outcome& o : m.groups) CHECK(o.write == W::kNone);
    }
    return m;
  }
};

struct Five {
  int64_t allowed, remaining, retry_ms, reset_ms, limit;
  bool operator==(const Five&) const = default;
};
std::ostream& operator<<(std::ostream& os, const Five& r) {
  return os << "[" << r.allowed << ", " << r.remaining << ", " << r.retry_ms << ", " << r.reset_ms
            << ", " << r.limit << "]";
}
Five F(const Decision& d) {
  return {d.allowed ? 1 : 0, d.remaining, CeilMs(d.retry_after_ns), CeilMs(d.reset_after_ns),
          d.limit};
}

// Per second 2, per day 3 (GCRA both), the web-app example of docs/limiters.md.
Keys SecondAndDay() {
  Keys k;
  GcraParams sec, day;
  REQUIRE(MakeGcraParams(2, kNsPerSecond, 0, &sec) == "");
  REQUIRE(MakeGcraParams(3, 86400 * kNsPerSecond, 0, &day) == "");
  k.params = {sec, day};
  k.keys.resize(2);
  return k;
}

TEST_CASE("TakeAll: all or nothing, per-group replies, binding") {
  Keys k = SecondAndDay();
  MultiOutcome m = k.Call(0, 1, false);
  CHECK(m.write);
  CHECK(F(m.groups[0].decision) == Five{1, 1, 0, 500, 2});
  CHECK(F(m.groups[1].decision) == Five{1, 2, 0, 28800000, 3});
  CHECK(Of(m.combined) == Combined{1, 1, 0, 28800000 * kNsPerMs, 2, 1});
  m = k.Call(0, 1, false);
  CHECK(F(m.groups[0].decision) == Five{1, 0, 0, 1000, 2});
  CHECK(F(m.groups[1].decision) == Five{1, 1, 0, 57600000, 3});
  CHECK(m.combined.binding == 1);
  // The per-second limit denies: the per-day one is not consumed and says it would allow,
  // describing its state as it stays.
  const std::string day_before = k.keys[1].value();
  m = k.Call(0, 1, false);
  CHECK_FALSE(m.write);
  CHECK(F(m.groups[0].decision) == Five{0, 0, 500, 1000, 2});
  CHECK(F(m.groups[1].decision) == Five{1, 1, 0, 57600000, 3});
  CHECK(Of(m.combined) == Combined{0, 0, 500 * kNsPerMs, 57600000 * kNsPerMs, 2, 1});
  CHECK(k.keys[1].value() == day_before);
  // A second later: the per-day limit has 1 left, the per-second 1 after this call; tie -> 1.
  m = k.Call(1000, 1, false);
  CHECK(m.write);
  CHECK(F(m.groups[0].decision) == Five{1, 1, 0, 500, 2});
  CHECK(F(m.groups[1].decision) == Five{1, 0, 0, 86399000, 3});
  CHECK(m.combined.binding == 2);
  CHECK(m.combined.decision.remaining == 0);
  // Now the day denies, the second allows: the day binds and nothing is written.
  m = k.Call(2000, 1, false);
  CHECK_FALSE(m.write);
  CHECK(F(m.groups[0].decision) == Five{1, 2, 0, 0, 2});
  CHECK(F(m.groups[1].decision) == Five{0, 0, 28798000, 86398000, 3});
  CHECK(m.combined.binding == 2);
  CHECK_FALSE(k.keys[0].exists());  // expired at +1.5 s, and not written again
  // COST above one limit: never (-1), that group binds.
  m = k.Call(2000, 3, false);
  CHECK(Of(m.combined).retry == -1);
  CHECK(m.combined.binding == 1);
  CHECK(m.combined.decision.limit == 2);
}

TEST_CASE("TakeAll: a denied call writes nothing, not even WINDOW's TTL repair") {
  Keys k;
  WindowParams w;
  SlidingParams s;
  REQUIRE(MakeWindowParams(3, 10 * kNsPerSecond, &w) == "");
  REQUIRE(MakeSlidingParams(1, 10 * kNsPerSecond, &s) == "");
  k.params = {w, s};
  k.keys.resize(2);
  k.keys[0].Set("3");  // a full counter without TTL: WINDOW.TAKE alone would repair it
  MultiOutcome m = k.Call(0, 1, false);
  CHECK_FALSE(m.write);
  CHECK(F(m.groups[0].decision) == Five{0, 0, 10000, 10000, 3});
  CHECK(F(m.groups[1].decision) == Five{1, 1, 0, 0, 1});
  CHECK(k.keys[0].expire_at_ms() == -1);
  CHECK_FALSE(k.keys[1].exists());
}

TEST_CASE("TakeAll: COST 0 looks at every group and writes nothing") {
  Keys k = SecondAndDay();
  k.Call(0, 1, false);
  MultiOutcome m = k.Call(0, 0, false);
  CHECK(m.write);
  for (const Outcome& o : m.groups) CHECK(o.write == W::kNone);
  CHECK(F(m.groups[0].decision) == Five{1, 1, 0, 500, 2});
}

TEST_CASE("RefundAll: every group gives back, the reply describes the state after") {
  Keys k = SecondAndDay();
  k.Call(0, 2, false);
  MultiOutcome m = k.Call(0, 1, true);
  CHECK(m.write);
  CHECK(F(m.groups[0].decision) == Five{1, 1, 0, 500, 2});
  CHECK(F(m.groups[1].decision) == Five{1, 2, 0, 28800000, 3});
  CHECK(Of(m.combined) == Combined{1, 1, 0, 28800000 * kNsPerMs, 2, 1});
  m = k.Call(0, 5, true);
  CHECK(m.groups[0].write == W::kDelete);
  CHECK(m.groups[1].write == W::kDelete);
  CHECK(Of(m.combined) == Combined{1, 2, 0, 0, 2, 1});
  CHECK_FALSE(k.keys[0].exists());
}

TEST_CASE("TakeAll and RefundAll name the first undecodable group") {
  Keys k = SecondAndDay();
  k.keys[1].Set("not a number");
  std::vector<const StoredState*> states = {k.keys[0].Get(At(0)), k.keys[1].Get(At(0))};
  MultiOutcome m = TakeAll(k.params, states, At(0), 1);
  CHECK(m.corrupt == 2);
  CHECK_FALSE(m.write);
  m = RefundAll(k.params, states, At(0), 1);
  CHECK(m.corrupt == 2);
  CHECK_FALSE(m.write);
}

}  // namespace
}  // namespace sluice::limiter
