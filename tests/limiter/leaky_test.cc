// LEAKY.TAKE (nginx limit_req): the VECTORS.md scenarios, exact rational draining, delays,
// parameter validation, state codec and corrupt state.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sluice/limiter.h"
#include "tests/limiter/fake_key.h"

namespace sluice::limiter {
namespace {

using testing::At;
using testing::FakeKey;
using testing::kStartMs;
using testing::kStartNs;
using testing::Ms;

constexpr int64_t kMax = INT64_MAX;

LeakyParams Params(int64_t rate, int64_t period_ns, int64_t burst, int64_t delay = 0,
                   bool nodelay = false) {
  LeakyParams p;
  REQUIRE(MakeLeakyParams(rate, period_ns, burst, delay, nodelay, &p) == "");
  return p;
}

Outcome Take(const LeakyParams& p, FakeKey& key, int64_t now_ns, int64_t cost = 1) {
  return testing::CheckAndApply(key, LeakyTake(p, key.Get(now_ns), now_ns, cost), cost);
}

// One row: when, cost, and the expected allowed, remaining, retry_after, reset_after (ns) and
// delay (ns).
struct Row {
  int64_t t_ns;
  int64_t cost;
  bool allowed;
  int64_t remaining, retry_after_ns, reset_after_ns, delay_ns;
};

void Run(const LeakyParams& p, const std::vector<Row>& rows) {
  FakeKey key;
  for (size_t i = 0; i < rows.size(); ++i) {
    CAPTURE(i);
    const Row& r = rows[i];
    Outcome o = Take(p, key, r.t_ns, r.cost);
    CHECK(o.decision.allowed == r.allowed);
    CHECK(o.decision.remaining == r.remaining);
    CHECK(o.decision.retry_after_ns == r.retry_after_ns);
    CHECK(o.decision.reset_after_ns == r.reset_after_ns);
    CHECK(o.decision.delay_ns == r.delay_ns);
    CHECK(o.decision.limit == p.burst + 1);
    if (o.write == Outcome::Write::kPut) {
      // The key expires exactly when the bucket has drained (rounded up to ms).
      CHECK(o.expire_at_ms == CeilMs(r.t_ns + o.decision.reset_after_ns));
    }
  }
}

TEST_CASE("LEAKY vector: 10 1s BURST 5 NODELAY") {
  LeakyParams p = Params(10, kNsPerSecond, 5, 0, true);
  std::vector<Row> rows;
  for (int k = 1; k <= 6; ++k) rows.push_back({At(0), 1, true, 6 - k, 0, Ms(100) * k, 0});
  for (int k = 7; k <= 10; ++k) rows.push_back({At(0), 1, false, 0, Ms(100), Ms(600), 0});
  rows.push_back({At(100), 1, true, 0, 0, Ms(600), 0});
  rows.push_back({At(150), 1, false, 0, Ms(50), Ms(550), 0});
  rows.push_back({At(200), 1, true, 0, 0, Ms(600), 0});
  Run(p, rows);
}

TEST_CASE("LEAKY vector: 10 1s BURST 5 (nginx default delay)") {
  LeakyParams p = Params(10, kNsPerSecond, 5);
  std::vector<Row> rows;
  for (int k = 1; k <= 6; ++k) {
    rows.push_back({At(0), 1, true, 6 - k, 0, Ms(100) * k, Ms(100) * (k - 1)});
  }
  rows.push_back({At(0), 1, false, 0, Ms(100), Ms(600), 0});
  Run(p, rows);
  // The same calls as delay_ms replies.
  FakeKey key;
  std::vector<int64_t> delays;
  for (int k = 0; k < 6; ++k) delays.push_back(CeilMs(Take(p, key, At(0)).decision.delay_ns));
  CHECK(delays == std::vector<int64_t>{0, 100, 200, 300, 400, 500});
  CHECK_FALSE(Take(p, key, At(0)).decision.allowed);
}

TEST_CASE("LEAKY: DELAY n lets n excess requests through undelayed") {
  LeakyParams p = Params(10, kNsPerSecond, 5, 2);
  FakeKey key;
  std::vector<int64_t> delays;
  for (int k = 0; k < 6; ++k) delays.push_back(Take(p, key, At(0)).decision.delay_ns);
  CHECK(delays == std::vector<int64_t>{0, 0, 0, Ms(100), Ms(200), Ms(300)});
  // Delays round up: one excess unit at 3 per second is 333333333.33 ns.
  LeakyParams thirds = Params(3, kNsPerSecond, 2);
  FakeKey key2;
  CHECK(Take(thirds, key2, At(0)).decision.delay_ns == 0);
  CHECK(Take(thirds, key2, At(0)).decision.delay_ns == 333333334);
  CHECK(Take(thirds, key2, At(0)).decision.delay_ns == 666666667);
}

TEST_CASE("LEAKY: draining is exact with a rate that does not divide the period") {
  // 3 per second, no burst: one request every 333333333.33 ns.
  LeakyParams p = Params(3, kNsPerSecond, 0);
  // 333 ms later 0.001 units remain: the wait is 1e6 / 3 ns, rounded up.
  Run(p, {
             {At(0), 1, true, 0, 0, 333333334, 0},
             {At(333), 1, false, 0, 333334, 333334, 0},
             {At(333) + 333333, 1, false, 0, 1, 1, 0},
             {At(333) + 333334, 1, true, 0, 0, 333333334, 0},
         });
}

TEST_CASE("LEAKY: cost 0 peeks, cost above the limit is -1, cost = limit fills the bucket") {
  LeakyParams p = Params(10, kNsPerSecond, 5);
  Run(p, {
             {At(0), 0, true, 6, 0, 0, 0},
             {At(0), 7, false, 6, -1, 0, 0},
             {At(0), kMax, false, 6, -1, 0, 0},
             {At(0), 6, true, 0, 0, Ms(600), Ms(500)},
             {At(0), 0, true, 0, 0, Ms(600), Ms(500)},
             {At(300), 0, true, 3, 0, Ms(300), Ms(200)},
             {At(300), 3, true, 0, 0, Ms(600), Ms(500)},
         });
}

TEST_CASE("LEAKY: a clock that steps back is treated as not having moved") {
  LeakyParams p = Params(10, kNsPerSecond, 5, 0, true);
  FakeKey key;
  for (int k = 0; k < 6; ++k) Take(p, key, At(1000));
  // One second back: still full; waits count from the real now.
  Outcome o = Take(p, key, At(0));
  CHECK_FALSE(o.decision.allowed);
  CHECK(o.decision.retry_after_ns == Ms(1100));
  CHECK(o.decision.reset_after_ns == Ms(1600));
  // Back at 1000 + 100 one unit has leaked.
  CHECK(Take(p, key, At(1050)).decision.allowed == false);
  CHECK(Take(p, key, At(1100)).decision.allowed == true);
  // A take while the clock is behind keeps the later update time.
  FakeKey key2;
  Take(p, key2, At(1000));  // level 1 at 1000
  o = Take(p, key2, At(500));
  CHECK(o.decision.allowed);
  CHECK(o.decision.remaining == 4);             // level 2, as if at 1000
  CHECK(o.decision.reset_after_ns == Ms(700));  // empty at 1200
  CHECK(o.expire_at_ms == kStartMs + 1200);
  CHECK(Take(p, key2, At(1200), 6).decision.allowed);  // drained at 1200, not earlier
}

TEST_CASE("LEAKY: state older than the drain time is fresh") {
  LeakyParams p = Params(10, kNsPerSecond, 5, 0, true);
  FakeKey key;
  for (int k = 0; k < 6; ++k) Take(p, key, At(0));
  StoredState stale{key.value(), -1};  // as if the key had no expiry
  Outcome o = LeakyTake(p, &stale, At(60000), 6);
  CHECK(o.decision.allowed);
  CHECK(o.decision.remaining == 0);
  CHECK(o.decision.reset_after_ns == Ms(600));
}

TEST_CASE("LEAKY: another period rescales the stored level") {
  LeakyParams a = Params(10, kNsPerSecond, 5, 0, true);
  LeakyParams b = Params(20, 2 * kNsPerSecond, 5, 0, true);  // the same rate
  LeakyParams c = Params(1, Ms(100), 9, 0, true);            // the same rate, burst 9
  FakeKey key;
  for (int k = 0; k < 6; ++k) Take(a, key, At(0));
  Outcome o = Take(b, key, At(100));
  CHECK(o.decision.allowed);
  CHECK(o.decision.reset_after_ns == Ms(600));
  o = Take(b, key, At(100));
  CHECK_FALSE(o.decision.allowed);
  CHECK(o.decision.retry_after_ns == Ms(100));
  o = Take(c, key, At(100), 4);
  CHECK(o.decision.allowed);
  CHECK(o.decision.remaining == 0);
  CHECK(o.decision.reset_after_ns == Ms(1000));
  // Periods that do not divide each other round the level up (towards full): at 3 per 1 s, two
  // takes 1 ns apart leave 1.999999997 units; at 1 per 333333333 ns that is
  // 666666665.000000001 ns of drain, which must round up.
  LeakyParams old_params = Params(3, kNsPerSecond, 1);
  LeakyParams d = Params(1, 333333333, 1, 0, true);
  FakeKey key2;
  Take(old_params, key2, At(0));
  Take(old_params, key2, At(0) + 1);
  o = Take(d, key2, At(0) + 1, 0);
  CHECK(o.decision.reset_after_ns == 666666666);
}

TEST_CASE("LEAKY: extreme parameters do not overflow") {
  // A full bucket that takes exactly 100 years to drain.
  LeakyParams p = Params(1, kMaxDurationNs, 9, 0, false);
  FakeKey key;
  Outcome o = Take(p, key, At(0), 10);
  CHECK(o.decision.allowed);
  CHECK(o.decision.reset_after_ns == kMaxToleranceNs);
  CHECK(o.decision.delay_ns == 9 * kMaxDurationNs);
  CHECK(o.expire_at_ms == kStartMs + kMaxToleranceNs / kNsPerMs);
  o = Take(p, key, At(0), 1);
  CHECK_FALSE(o.decision.allowed);
  CHECK(o.decision.retry_after_ns == kMaxDurationNs);
  // The fastest rate (1 per ns) and the biggest bucket that rate allows.
  const int64_t big = kMaxToleranceNs;
  LeakyParams q = Params(kMaxDurationNs, kMaxDurationNs, big - 1, kMax, false);
  CHECK(q.burst + 1 == big);
  FakeKey key2;
  o = Take(q, key2, At(0), big);
  CHECK(o.decision.allowed);
  CHECK(o.decision.remaining == 0);
  CHECK(o.decision.reset_after_ns == big);
  CHECK(o.decision.delay_ns == 0);
  o = Take(q, key2, At(0), 1);
  CHECK_FALSE(o.decision.allowed);
  CHECK(o.decision.retry_after_ns == 1);
  o = Take(q, key2, At(0) + 1, 1);
  CHECK(o.decision.allowed);
  // A long idle time with a fast rate must not overflow the drain.
  StoredState old{key2.value(), -1};
  o = LeakyTake(q, &old, kMax, 1);
  CHECK(o.decision.allowed);
  CHECK(o.decision.remaining == big - 1);
}

TEST_CASE("LEAKY: corrupt or truncated state is reported, never trusted") {
  LeakyParams p = Params(10, kNsPerSecond, 5);
  FakeKey key;
  Take(p, key, At(0));
  const std::string good = key.value();
  REQUIRE(good.size() == 33);
  CHECK(good[0] == 1);
  for (size_t n = 0; n < good.size(); ++n) {
    CAPTURE(n);
    StoredState s{std::string_view(good).substr(0, n), -1};
    CHECK(LeakyTake(p, &s, At(0), 1).corrupt);
  }
  std::vector<std::string> bad;
  bad.push_back(good + "x");  // trailing bytes
  std::string v = good;
  v[0] = 2;  // unknown version
  bad.push_back(v);
  v = good;
  v[16] = static_cast<char>(0x80);  // negative level
  bad.push_back(v);
  v = good;
  v[15] = static_cast<char>(0x7f);  // a level above INT64_MAX units
  bad.push_back(v);
  v = good;
  for (int i = 25; i < 33; ++i) v[i] = 0;  // period 0
  bad.push_back(v);
  v = good;
  v[24] = static_cast<char>(0x80);  // last update negative
  bad.push_back(v);
  bad.push_back("12");  // GCRA-style text
  for (const std::string& b : bad) {
    StoredState s{b, -1};
    Outcome o = LeakyTake(p, &s, At(0), 1);
    CHECK(o.corrupt);
    CHECK(o.write == Outcome::Write::kNone);
  }
  StoredState s{good, -1};
  Outcome o = LeakyTake(p, &s, At(0), 1);
  CHECK_FALSE(o.corrupt);
  CHECK(o.decision.remaining == 4);  // the round trip kept the level
}

TEST_CASE("MakeLeakyParams errors name the argument") {
  struct Row {
    int64_t rate, period_ns, burst, delay;
    std::string want;
  };
  const std::string kPeriod = "invalid period: must be a positive duration of at most 10 years";
  const std::string kRateTooHigh =
      "invalid rate: above 1 per nanosecond (rate / period > 1 per ns)";
  std::vector<Row> rows = {
      {0, kNsPerSecond, 0, 0, "invalid rate: must be a positive integer"},
      {-1, kNsPerSecond, 0, 0, "invalid rate: must be a positive integer"},
      {1, 0, 0, 0, kPeriod},
      {1, -5, 0, 0, kPeriod},
      {1, kMaxDurationNs + 1, 0, 0, kPeriod},
      {1, kNsPerSecond, -1, 0, "invalid BURST: must be a non-negative integer"},
      {1, kNsPerSecond, kMax, 0, "invalid BURST: too large"},
      {1, kNsPerSecond, 0, -1, "invalid DELAY: must be a non-negative integer"},
      {1, kMaxDurationNs, 10, 0,
       "invalid BURST: too large for the rate ((burst + 1) * period / rate above 100 years)"},
      {1, kNsPerSecond, kMax - 1, 0,
       "invalid BURST: too large for the rate ((burst + 1) * period / rate above 100 years)"},
      {1, kMaxDurationNs, 9, 0, ""},
      {kMax, 1, 0, kMax, kRateTooHigh},
      {2000000, kNsPerMs, 0, 0, kRateTooHigh},  // 2 per ns
      {1001, 1000, 0, 0, kRateTooHigh},
      {1000, 1000, 0, kMax, ""},  // exactly 1 per ns
  };
  for (const Row& r : rows) {
    CAPTURE(r.rate);
    CAPTURE(r.burst);
    LeakyParams p;
    CHECK(MakeLeakyParams(r.rate, r.period_ns, r.burst, r.delay, false, &p) == r.want);
  }
}

}  // namespace
}  // namespace sluice::limiter
