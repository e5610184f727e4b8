// SLIDING.TAKE: exact sliding log decisions, waits, codec, corrupt state, and a randomized
// property test against a brute-force model.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "sluice/limiter.h"
#include "tests/limiter/fake_key.h"

namespace sluice::limiter {
namespace {

using testing::At;
using testing::FakeKey;
using testing::kStartMs;
using testing::Ms;

constexpr int64_t kMax = INT64_MAX;

SlidingParams Params(int64_t limit, int64_t window_ns) {
  SlidingParams p;
  REQUIRE(MakeSlidingParams(limit, window_ns, &p) == "");
  return p;
}

Outcome Take(const SlidingParams& p, FakeKey& key, int64_t now_ns, int64_t cost) {
  return testing::CheckAndApply(key, SlidingTake(p, key.Get(now_ns), now_ns, cost), cost);
}

struct Row {
  int64_t t_ms, cost;
  bool allowed;
  int64_t remaining, retry_after_ms, reset_after_ms;
};

void Run(const SlidingParams& p, FakeKey& key, const std::vector<Row>& rows) {
  for (size_t i = 0; i < rows.size(); ++i) {
    CAPTURE(i);
    const Row& r = rows[i];
    Outcome o = Take(p, key, At(r.t_ms), r.cost);
    CHECK(o.decision.allowed == r.allowed);
    CHECK(o.decision.remaining == r.remaining);
    CHECK(o.decision.retry_after_ns == (r.retry_after_ms < 0 ? -1 : Ms(r.retry_after_ms)));
    CHECK(o.decision.reset_after_ns == Ms(r.reset_after_ms));
    CHECK(o.decision.limit == p.limit);
    if (o.write == Outcome::Write::kPut) {
      CHECK(o.expire_at_ms == kStartMs + r.t_ms + r.reset_after_ms);
    }
  }
}

TEST_CASE("SLIDING: units in the last window plus cost must fit the limit") {
  SlidingParams p = Params(3, kNsPerSecond);
  FakeKey key;
  Run(p, key,
      {
          {0, 0, true, 3, 0, 0},
          {0, 1, true, 2, 0, 1000},
          {100, 1, true, 1, 0, 1000},
          {200, 1, true, 0, 0, 1000},
          {300, 1, false, 0, 700, 900},  // the entry at 0 leaves the window at 1000
          {300, 4, false, 0, -1, 900},   // more than the limit
          {999, 1, false, 0, 1, 201},
          {1000, 1, true, 0, 0, 1000},     // (0, 1000]: the entry at 0 is out
          {1000, 2, false, 0, 200, 1000},  // needs the entries at 100 and 200 gone
          {1150, 2, false, 1, 50, 850},    // (150, 1150] holds 200 and 1000
          {1200, 2, true, 0, 0, 1000},     // (200, 1200] holds only 1000
          {5000, 0, true, 3, 0, 0},        // everything aged out
          {5000, 3, true, 0, 0, 1000},
      });
}

TEST_CASE("SLIDING: units taken at one instant share a run") {
  SlidingParams p = Params(100, kNsPerSecond);
  FakeKey key;
  for (int i = 0; i < 3; ++i) Take(p, key, At(0), 1);
  // version, run count, absolute timestamp (9-byte varint), count.
  CHECK(key.value().size() == 1 + 1 + 9 + 1);
  Take(p, key, At(1), 5);
  CHECK(key.value().size() == 1 + 1 + 9 + 1 + 3 + 1);  // delta 1e6 ns takes 3 bytes
  Outcome o = Take(p, key, At(2), 0);
  CHECK(o.decision.remaining == 92);
}

TEST_CASE("SLIDING: a clock that steps back is treated as not having moved") {
  SlidingParams p = Params(2, kNsPerSecond);
  FakeKey key;
  Take(p, key, At(1000), 1);
  Outcome o = Take(p, key, At(0), 1);  // counts as 1000
  CHECK(o.decision.allowed);
  CHECK(o.decision.reset_after_ns == Ms(2000));
  CHECK(o.expire_at_ms == kStartMs + 2000);
  o = Take(p, key, At(500), 1);
  CHECK_FALSE(o.decision.allowed);
  CHECK(o.decision.retry_after_ns == Ms(1500));
  // Both entries are stamped 1000, so at 2000 both have left.
  o = Take(p, key, At(2000), 2);
  CHECK(o.decision.allowed);
}

TEST_CASE("SLIDING: 1 ms and 10-year windows, sub-ms timestamps") {
  SlidingParams p = Params(1, kNsPerMs);
  FakeKey key;
  CHECK(Take(p, key, At(0) + 1, 1).decision.allowed);
  Outcome o = Take(p, key, At(0) + 2, 1);
  CHECK_FALSE(o.decision.allowed);
  CHECK(o.decision.retry_after_ns == kNsPerMs - 1);
  CHECK(CeilMs(o.decision.retry_after_ns) == 1);
  CHECK(Take(p, key, At(1) + 1, 1).decision.allowed);

  SlidingParams y = Params(kMaxSlidingLimit, kMaxDurationNs);
  FakeKey slow;
  o = Take(y, slow, At(0), kMaxSlidingLimit);
  CHECK(o.decision.allowed);
  CHECK(o.expire_at_ms == kStartMs + kMaxDurationNs / kNsPerMs);
  o = Take(y, slow, At(1000), 1);
  CHECK_FALSE(o.decision.allowed);
  CHECK(o.decision.retry_after_ns == kMaxDurationNs - Ms(1000));
  o = Take(y, slow, At(1000), kMax);
  CHECK(o.decision.retry_after_ns == -1);
}

TEST_CASE("SLIDING: the log stays compact at the limit") {
  SlidingParams p = Params(kMaxSlidingLimit, 20 * kNsPerSecond);
  FakeKey key;
  for (int i = 0; i < kMaxSlidingLimit; ++i) Take(p, key, At(i), 1);  // one run per ms
  // A 1 ms delta is a 3-byte varint: about 4 bytes a run.
  CHECK(key.value().size() < 4 * kMaxSlidingLimit + 16);
  Outcome o = Take(p, key, At(kMaxSlidingLimit), 1);
  CHECK_FALSE(o.decision.allowed);
  CHECK(o.decision.retry_after_ns == Ms(20000 - kMaxSlidingLimit));
}

TEST_CASE("SLIDING: corrupt or truncated state is reported, never trusted") {
  SlidingParams p = Params(10, kNsPerSecond);
  FakeKey key;
  Take(p, key, At(0), 2);
  Take(p, key, At(5), 3);
  const std::string good = key.value();
  for (size_t n = 0; n < good.size(); ++n) {
    CAPTURE(n);
    StoredState s{std::string_view(good).substr(0, n), -1};
    CHECK(SlidingTake(p, &s, At(6), 1).corrupt);
  }
  std::string ts10(9, static_cast<char>(0xff));  // a 10-byte varint that overflows 64 bits
  ts10 += static_cast<char>(0x7f);
  std::vector<std::string> bad = {
      good + std::string(1, '\0'),                                 // trailing byte
      std::string("\x02\x00", 2),                                  // unknown version
      std::string("\x01\x01\x05\x00", 4),                          // zero count
      std::string("\x01\x02\x05\x01\x00\x01", 6),                  // zero delta
      std::string("\x01\x01", 2) + ts10 + std::string("\x01", 1),  // varint overflow
      std::string("\x01\x7f\x05\x01", 4),                          // run count too big
      std::string("\x01\x02\xff\xff\xff\xff\xff\xff\xff\xff\x7f\x01\x01\x01", 14),  // ts > max
      "12",
  };
  for (size_t i = 0; i < bad.size(); ++i) {
    CAPTURE(i);
    StoredState s{bad[i], -1};
    Outcome o = SlidingTake(p, &s, At(6), 1);
    CHECK(o.corrupt);
    CHECK(o.write == Outcome::Write::kNone);
  }
  const std::string no_runs("\x01\x00", 2);
  StoredState empty_log{no_runs, -1};
  CHECK(SlidingTake(p, &empty_log, At(6), 1).decision.remaining == 9);
  StoredState s{good, -1};
  CHECK(SlidingTake(p, &s, At(6), 0).decision.remaining == 5);
}

TEST_CASE("MakeSlidingParams errors name the argument") {
  SlidingParams p;
  const std::string kWindow = "invalid window: must be a positive duration of at most 10 years";
  CHECK(MakeSlidingParams(0, kNsPerSecond, &p) == "invalid limit: must be a positive integer");
  CHECK(MakeSlidingParams(-1, kNsPerSecond, &p) == "invalid limit: must be a positive integer");
  CHECK(MakeSlidingParams(10001, kNsPerSecond, &p) ==
        "invalid limit: at most 10000 for SLIDING.TAKE; use GCRA.TAKE for larger limits");
  CHECK(MakeSlidingParams(kMax, kNsPerSecond, &p) ==
        "invalid limit: at most 10000 for SLIDING.TAKE; use GCRA.TAKE for larger limits");
  CHECK(MakeSlidingParams(1, 0, &p) == kWindow);
  CHECK(MakeSlidingParams(1, kMaxDurationNs + 1, &p) == kWindow);
  CHECK(MakeSlidingParams(10000, kMaxDurationNs, &p) == "");
}

// The brute-force model: every admitted unit with its (effective) timestamp.
struct Model {
  std::vector<std::pair<int64_t, int64_t>> admitted;  // (ts, cost), ts non-decreasing
  int64_t InWindow(int64_t t, int64_t window) const {
    int64_t sum = 0;
    for (auto [ts, c] : admitted) {
      if (ts > t - window && ts <= t) sum += c;
    }
    return sum;
  }
};

TEST_CASE("SLIDING property: matches a brute-force log; no window ever exceeds the limit") {
  std::mt19937_64 rng(20261122);
  for (int round = 0; round < 60; ++round) {
    CAPTURE(round);
    const int64_t limit = 1 + static_cast<int64_t>(rng() % 12);
    const int64_t window = Ms(1 + static_cast<int64_t>(rng() % 50));
    SlidingParams p = Params(limit, window);
    FakeKey key;
    Model model;
    std::vector<Model> epochs;
    int64_t now = At(0);
    for (int step = 0; step < 300; ++step) {
      CAPTURE(step);
      // Mostly small steps forward, sometimes none, sometimes back, sometimes a long pause.
      int64_t r = static_cast<int64_t>(rng() % 100);
      if (r < 5) {
        now -= static_cast<int64_t>(rng() % Ms(20));
      } else if (r < 10) {
        now += window * 2 + static_cast<int64_t>(rng() % Ms(5));
      } else if (r > 30) {
        now += static_cast<int64_t>(rng() % (window / 4 + 1));
      }
      int64_t cost = static_cast<int64_t>(rng() % (limit + 2));
      const StoredState* state = key.Get(now);
      if (state == nullptr && !model.admitted.empty()) {
        // The key expired (all entries aged out); a clock stepping back after that cannot
        // bring them back, so the model starts a new epoch too.
        epochs.push_back(std::move(model));
        model = Model();
      }
      int64_t t = now;
      if (!model.admitted.empty()) t = std::max(t, model.admitted.back().first);
      const int64_t used = model.InWindow(t, window);
      const bool want_allowed = cost <= limit && used + cost <= limit;

      Outcome o = SlidingTake(p, state, now, cost);
      REQUIRE_FALSE(o.corrupt);
      REQUIRE(o.decision.allowed == want_allowed);
      if (want_allowed && cost > 0) model.admitted.push_back({t, cost});
      const int64_t used_after = model.InWindow(t, window);
      CHECK(o.decision.remaining == limit - used_after);
      if (!want_allowed) {
        if (cost > limit) {
          CHECK(o.decision.retry_after_ns == -1);
        } else {
          // Denied just before the wait ends, allowed at its end.
          const int64_t at = now + o.decision.retry_after_ns;
          CHECK(o.decision.retry_after_ns > 0);
          CHECK(model.InWindow(at - 1, window) + cost > limit);
          CHECK(model.InWindow(at, window) + cost <= limit);
        }
      }
      // reset: the newest live entry leaves the window.
      int64_t want_reset = 0;
      if (used_after > 0) want_reset = model.admitted.back().first + window - now;
      CHECK(o.decision.reset_after_ns == want_reset);
      key.Apply(o);
    }
    // Every interval (x - window, x] holds at most `limit`; checking x at each entry suffices.
    epochs.push_back(std::move(model));
    for (const Model& m : epochs) {
      for (auto [ts, c] : m.admitted) CHECK(m.InWindow(ts + window - 1, window) <= limit);
    }
  }
}

}  // namespace
}  // namespace sluice::limiter
