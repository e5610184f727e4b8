// WINDOW.TAKE: fixed windows, INCR compatibility, expiry handling, validation.
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

WindowParams Params(int64_t limit, int64_t window_ns) {
  WindowParams p;
  REQUIRE(MakeWindowParams(limit, window_ns, &p) == "");
  return p;
}

struct Row {
  int64_t t_ms, cost;
  bool allowed;
  int64_t remaining, retry_after_ns, reset_after_ns;
  Outcome::Write write;
  std::string value;        // the key's value after the call ("" when missing)
  int64_t expire_after_ms;  // the key's expiry after the call, ms after the start
};

void Run(const WindowParams& p, FakeKey& key, const std::vector<Row>& rows) {
  for (size_t i = 0; i < rows.size(); ++i) {
    CAPTURE(i);
    const Row& r = rows[i];
    Outcome o = WindowTake(p, key.Get(At(r.t_ms)), At(r.t_ms), r.cost);
    REQUIRE_FALSE(o.corrupt);
    key.Apply(o);
    CHECK(o.decision.allowed == r.allowed);
    CHECK(o.decision.remaining == r.remaining);
    CHECK(o.decision.retry_after_ns == r.retry_after_ns);
    CHECK(o.decision.reset_after_ns == r.reset_after_ns);
    CHECK(o.decision.limit == p.limit);
    CHECK(o.write == r.write);
    REQUIRE(key.exists());
    CHECK(key.value() == r.value);
    CHECK(key.expire_at_ms() - kStartMs == r.expire_after_ms);
  }
}

constexpr auto kPut = Outcome::Write::kPut;
constexpr auto kNone = Outcome::Write::kNone;

TEST_CASE("WINDOW: a window starts at the first request and ends with the key") {
  WindowParams p = Params(3, 10 * kNsPerSecond);
  FakeKey key;
  Run(p, key,
      {
          {0, 1, true, 2, 0, Ms(10000), kPut, "1", 10000},
          {1, 1, true, 1, 0, Ms(9999), kPut, "2", 10000},
          {2, 0, true, 1, 0, Ms(9998), kNone, "2", 10000},
          {2, 1, true, 0, 0, Ms(9998), kPut, "3", 10000},
          {3, 1, false, 0, Ms(9997), Ms(9997), kNone, "3", 10000},
          {9999, 4, false, 0, -1, Ms(1), kNone, "3", 10000},
          {9999, 1, false, 0, Ms(1), Ms(1), kNone, "3", 10000},
      });
  // At the window's end the key has expired: a new window.
  Run(p, key, {{10000, 2, true, 1, 0, Ms(10000), kPut, "2", 20000}});
  // Up to 2 x limit across a boundary: the documented limitation.
  Run(p, key, {{19999, 1, true, 0, 0, Ms(1), kPut, "3", 20000}});
  Run(p, key, {{20000, 3, true, 0, 0, Ms(10000), kPut, "3", 30000}});
}

TEST_CASE("WINDOW: cost 0 on a fresh key peeks, cost above the limit is -1") {
  WindowParams p = Params(5, kNsPerSecond);
  Outcome o = WindowTake(p, nullptr, At(0), 0);
  CHECK(o.decision.allowed);
  CHECK(o.decision.remaining == 5);
  CHECK(o.decision.reset_after_ns == 0);  // still fresh: no key, PTTL -2
  CHECK(o.write == kNone);
  for (int64_t cost : {int64_t{6}, kMax}) {
    o = WindowTake(p, nullptr, At(0), cost);
    CHECK_FALSE(o.decision.allowed);
    CHECK(o.decision.retry_after_ns == -1);
    CHECK(o.decision.remaining == 5);
    CHECK(o.decision.reset_after_ns == 0);
    CHECK(o.write == kNone);
  }
}

TEST_CASE("WINDOW: keys made by INCR + EXPIRE keep their expiry") {
  WindowParams p = Params(10, 60 * kNsPerSecond);
  FakeKey key;
  key.Set("5", kStartMs + 4000);
  Run(p, key,
      {
          {0, 5, true, 0, 0, Ms(4000), kPut, "10", 4000},
          {1000, 1, false, 0, Ms(3000), Ms(3000), kNone, "10", 4000},
      });
}

TEST_CASE("WINDOW: a counter without a TTL gets one") {
  WindowParams p = Params(10, 60 * kNsPerSecond);
  FakeKey key;
  key.Set("2");
  Run(p, key, {{0, 1, true, 7, 0, Ms(60000), kPut, "3", 60000}});
  // A full counter without TTL: denied, count unchanged, but the TTL is repaired so the key
  // cannot deny forever.
  FakeKey full;
  full.Set("10");
  Outcome o = WindowTake(p, full.Get(At(0)), At(0), 0);
  CHECK(o.write == kNone);  // COST 0 never writes
  CHECK(o.decision.reset_after_ns == Ms(60000));
  Run(p, full, {{0, 1, false, 0, Ms(60000), Ms(60000), kPut, "10", 60000}});
  Run(p, full, {{1000, 1, false, 0, Ms(59000), Ms(59000), kNone, "10", 60000}});
}

TEST_CASE("WINDOW: expiry rounds up to whole ms") {
  WindowParams p = Params(2, kNsPerSecond);
  Outcome o = WindowTake(p, nullptr, At(0) + 1, 1);
  CHECK(o.expire_at_ms == kStartMs + 1001);
  CHECK(o.decision.reset_after_ns == Ms(1001) - 1);
  CHECK(CeilMs(o.decision.reset_after_ns) == 1001);
  // Inside the key's last ms the window is still on: the wait is what is left of it.
  StoredState s{"2", kStartMs + 1};
  o = WindowTake(p, &s, At(1) - 1, 1);
  CHECK_FALSE(o.decision.allowed);
  CHECK(o.decision.retry_after_ns == 1);
  CHECK(o.decision.reset_after_ns == 1);
  // The store still shows a key during the ms of its expiry (Redis: expired once now_ms >
  // expiry), but the window has ended at that instant: a new window starts.
  for (int64_t at : {At(1), At(1) + 999999}) {
    CAPTURE(at);
    o = WindowTake(p, &s, at, 1);
    CHECK(o.decision.allowed);
    CHECK(o.decision.remaining == 1);
    CHECK(o.value == "1");
    CHECK(o.expire_at_ms == CeilMs(at + kNsPerSecond));
    // A cost that can never fit does not touch the ended window's key.
    o = WindowTake(p, &s, at, 3);
    CHECK(o.decision.retry_after_ns == -1);
    CHECK(o.write == kNone);
  }
  // A counter without expiry never ends by itself; any call with a cost gives it one.
  StoredState no_ttl{"2", -1};
  o = WindowTake(p, &no_ttl, At(5000), 3);
  CHECK(o.decision.retry_after_ns == -1);
  CHECK(o.decision.remaining == 0);
  CHECK(o.write == kPut);
  CHECK(o.value == "2");
  CHECK(o.expire_at_ms == kStartMs + 6000);
}

TEST_CASE("WINDOW: INCR-compatible text; anything else is corrupt") {
  WindowParams p = Params(10, kNsPerSecond);
  for (const std::string& bad : std::vector<std::string>{"", "abc", "1.5", " 1", "1 ", "+1", "01",
                                                         "-0", "9223372036854775808", "0x10"}) {
    CAPTURE(bad);
    StoredState s{bad, kStartMs + 1000};
    Outcome o = WindowTake(p, &s, At(0), 1);
    CHECK(o.corrupt);
    CHECK(o.write == kNone);
  }
  // DECRBY can make a negative count: more room.
  StoredState neg{"-5", kStartMs + 1000};
  Outcome o = WindowTake(p, &neg, At(0), 1);
  CHECK(o.decision.allowed);
  CHECK(o.value == "-4");
  CHECK(o.decision.remaining == 14);
}

TEST_CASE("WINDOW: counts and costs near INT64_MAX") {
  WindowParams p = Params(10, kNsPerSecond);
  StoredState huge{"9223372036854775807", kStartMs + 1000};
  Outcome o = WindowTake(p, &huge, At(0), 1);
  CHECK_FALSE(o.decision.allowed);
  CHECK(o.decision.remaining == 0);
  CHECK(o.decision.retry_after_ns == Ms(1000));
  WindowParams big = Params(kMax, kMaxDurationNs);
  FakeKey key;
  o = WindowTake(big, key.Get(At(0)), At(0), kMax);
  CHECK(o.decision.allowed);
  CHECK(o.value == "9223372036854775807");
  CHECK(o.expire_at_ms == kStartMs + kMaxDurationNs / kNsPerMs);
  key.Apply(o);
  o = WindowTake(big, key.Get(At(0)), At(0), 1);
  CHECK_FALSE(o.decision.allowed);
  CHECK(o.decision.retry_after_ns == kMaxDurationNs);
  StoredState far{"1", kMax};  // an expiry at the end of time
  o = WindowTake(p, &far, At(0), 1);
  CHECK(o.decision.allowed);
  CHECK(o.decision.reset_after_ns == kMax);
}

TEST_CASE("MakeWindowParams errors name the argument") {
  WindowParams p;
  const std::string kWindow = "invalid window: must be a positive duration of at most 10 years";
  CHECK(MakeWindowParams(0, kNsPerSecond, &p) == "invalid limit: must be a positive integer");
  CHECK(MakeWindowParams(-1, kNsPerSecond, &p) == "invalid limit: must be a positive integer");
  CHECK(MakeWindowParams(1, 0, &p) == kWindow);
  CHECK(MakeWindowParams(1, -1, &p) == kWindow);
  CHECK(MakeWindowParams(1, kMaxDurationNs + 1, &p) == kWindow);
  CHECK(MakeWindowParams(kMax, kMaxDurationNs, &p) == "");
  CHECK(MakeWindowParams(1, 1, &p) == "");
}

}  // namespace
}  // namespace sluice::limiter
