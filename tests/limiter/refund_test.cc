// REFUND n for GCRA, WINDOW, SLIDING and LEAKY: tables of takes and refunds on one key, checking
// every reply field, what is written and the key's state and expiry after each step.
#include <doctest/doctest.h>

#include <ostream>
#include <string>
#include <vector>

#include "sluice/limiter.h"
#include "tests/limiter/fake_key.h"

namespace sluice::limiter {
namespace {

using testing::At;
using testing::FakeKey;
using testing::kStartMs;
using W = Outcome::Write;

// A reply as the server sends it: times in ms, rounded up.
struct Reply {
  int64_t allowed, remaining, retry_after_ms, reset_after_ms, limit;
  bool operator==(const Reply&) const = default;
};
std::ostream& operator<<(std::ostream& os, const Reply& r) {
  return os << "[" << r.allowed << ", " << r.remaining << ", " << r.retry_after_ms << ", "
            << r.reset_after_ms << ", " << r.limit << "]";
}
Reply ToReply(const Decision& d) {
  return {d.allowed ? 1 : 0, d.remaining, CeilMs(d.retry_after_ns), CeilMs(d.reset_after_ns),
          d.limit};
}

enum Op { kTake, kRefund };

struct Row {
  int64_t t_ms;
  Op op;
  int64_t n;
  Reply reply;
  W write;
  // The key after the step: -2 missing, else its expiry in ms after kStartMs (-1: none).
  int64_t expire_after_ms;
};

void Run(const LimitParams& p, FakeKey& key, const std::vector<Row>& rows) {
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    CAPTURE(i);
    const int64_t now = At(row.t_ms);
    const StoredState* st = key.Get(now);
    Outcome o = row.op == kTake ? TakeLimit(p, st, now, row.n) : RefundLimit(p, st, now, row.n);
    REQUIRE_FALSE(o.corrupt);
    CHECK(ToReply(o.decision) == row.reply);
    if (row.op == kRefund) CHECK(o.decision.delay_ns == 0);
    CHECK(o.write == row.write);
    key.Apply(o);
    if (row.expire_after_ms == -2) {
      CHECK_FALSE(key.exists());
    } else {
      REQUIRE(key.exists());
      CHECK(key.expire_at_ms() ==
            (row.expire_after_ms == -1 ? -1 : kStartMs + row.expire_after_ms));
    }
  }
}

GcraParams Gcra(int64_t quota, int64_t period_ns, int64_t burst = 0) {
  GcraParams p;
  REQUIRE(MakeGcraParams(quota, period_ns, burst, &p) == "");
  return p;
}

TEST_CASE("GCRA refund: TAT moves back by n * T, never before now") {
  FakeKey key;
  const LimitParams p = Gcra(10, kNsPerSecond);  // T = 100 ms, capacity 10
  Run(p, key,
      {
          {0, kRefund, 3, {1, 10, 0, 0, 10}, W::kNone, -2},    // missing key: nothing written
          {0, kTake, 5, {1, 5, 0, 500, 10}, W::kPut, 500},     // TAT = +500
          {0, kRefund, 2, {1, 7, 0, 300, 10}, W::kPut, 300},   // TAT = +300
          {0, kRefund, 0, {1, 7, 0, 300, 10}, W::kNone, 300},  // 0 only looks
          {100, kRefund, 1, {1, 9, 0, 100, 10}, W::kPut, 200},
          {100, kRefund, 50, {1, 10, 0, 0, 10}, W::kDelete, -2},  // fresh: the key goes
          {100, kTake, 10, {1, 0, 0, 1000, 10}, W::kPut, 1100},
          {100, kTake, 1, {0, 0, 100, 1000, 10}, W::kNone, 1100},
          {100, kRefund, 1, {1, 1, 0, 900, 10}, W::kPut, 1000},
          {100, kTake, 1, {1, 0, 0, 1000, 10}, W::kPut, 1100},  // the refunded unit is usable
      });
  CHECK(key.value() == std::to_string(At(1100)));
}

TEST_CASE("GCRA refund: huge n, stale TAT and corrupt state") {
  const GcraParams p = Gcra(1, kNsPerSecond, 5);
  FakeKey key;
  key.Set(std::to_string(At(3000)), kStartMs + 3000);
  Outcome o = GcraRefund(p, key.Get(At(0)), At(0), INT64_MAX);
  CHECK(o.write == W::kDelete);
  CHECK(ToReply(o.decision) == Reply{1, 5, 0, 0, 5});
  // A TAT already in the past (the key still visible in its last ms) is fresh.
  key.Set(std::to_string(At(0) - 10), kStartMs);
  o = GcraRefund(p, key.Get(At(0)), At(0), 1);
  CHECK(o.write == W::kDelete);
  CHECK(ToReply(o.decision) == Reply{1, 5, 0, 0, 5});
  key.Set("abc");
  CHECK(GcraRefund(p, key.Get(At(0)), At(0), 1).corrupt);
  key.Set("-5");
  CHECK(GcraRefund(p, key.Get(At(0)), At(0), 1).corrupt);
}

TEST_CASE("WINDOW refund: count goes down, never below 0, the window end is kept") {
  WindowParams w;
  REQUIRE(MakeWindowParams(5, 10 * kNsPerSecond, &w) == "");
  FakeKey key;
  Run(w, key,
      {
          {0, kRefund, 1, {1, 5, 0, 0, 5}, W::kNone, -2},
          {0, kTake, 3, {1, 2, 0, 10000, 5}, W::kPut, 10000},
          {2000, kRefund, 1, {1, 3, 0, 8000, 5}, W::kPut, 10000},
          {3000, kRefund, 9, {1, 5, 0, 7000, 5}, W::kPut, 10000},
          {4000, kTake, 5, {1, 0, 0, 6000, 5}, W::kPut, 10000},
          {5000, kTake, 1, {0, 0, 5000, 5000, 5}, W::kNone, 10000},
          {5000, kRefund, 2, {1, 2, 0, 5000, 5}, W::kPut, 10000},
          {5000, kRefund, 0, {1, 2, 0, 5000, 5}, W::kNone, 10000},
      });
  CHECK(key.value() == "3");
  // At the window's end there is nothing to refund (the key is gone for the next take).
  Outcome o = WindowRefund(w, key.Get(At(10000)), At(10000), 1);
  CHECK(o.write == W::kNone);
  CHECK(ToReply(o.decision) == Reply{1, 5, 0, 0, 5});
}

TEST_CASE("WINDOW refund: a counter without TTL gets one; a negative count stays") {
  WindowParams w;
  REQUIRE(MakeWindowParams(5, 10 * kNsPerSecond, &w) == "");
  FakeKey key;
  key.Set("4");
  Run(w, key, {{0, kRefund, 1, {1, 2, 0, 10000, 5}, W::kPut, 10000}});
  CHECK(key.value() == "3");
  key.Set("-2", kStartMs + 500);
  Run(w, key, {{0, kRefund, 1, {1, 7, 0, 500, 5}, W::kPut, 500}});
  CHECK(key.value() == "-2");
  key.Set("x1");
  CHECK(WindowRefund(w, key.Get(At(0)), At(0), 1).corrupt);
}

TEST_CASE("SLIDING refund: the newest admitted units go first") {
  SlidingParams s;
  REQUIRE(MakeSlidingParams(5, 10 * kNsPerSecond, &s) == "");
  FakeKey key;
  Run(s, key,
      {
          {0, kRefund, 1, {1, 5, 0, 0, 5}, W::kNone, -2},
          {0, kTake, 2, {1, 3, 0, 10000, 5}, W::kPut, 10000},
          {1000, kTake, 2, {1, 1, 0, 10000, 5}, W::kPut, 11000},
          // Removes both units of +1 s and one of +0: one unit at +0 is left.
          {2000, kRefund, 3, {1, 4, 0, 8000, 5}, W::kPut, 10000},
          {3000, kTake, 4, {1, 0, 0, 10000, 5}, W::kPut, 13000},
          {3000, kTake, 1, {0, 0, 7000, 10000, 5}, W::kNone, 13000},
          {3000, kRefund, 1, {1, 1, 0, 10000, 5}, W::kPut, 13000},
          {3000, kTake, 1, {1, 0, 0, 10000, 5}, W::kPut, 13000},
          // At +10.5 s the unit of +0 has left the window; refunding 9 empties it.
          {10500, kRefund, 9, {1, 5, 0, 0, 5}, W::kDelete, -2},
      });
  key.Set("\x07garbage");
  CHECK(SlidingRefund(s, key.Get(At(0)), At(0), 1).corrupt);
}

TEST_CASE("LEAKY refund: the drained level goes down, never below empty") {
  LeakyParams l;
  REQUIRE(MakeLeakyParams(10, kNsPerSecond, 5, 0, false, &l) == "");  // limit 6, 100 ms a unit
  FakeKey key;
  Run(l, key,
      {
          {0, kRefund, 1, {1, 6, 0, 0, 6}, W::kNone, -2},
          {0, kTake, 4, {1, 2, 0, 400, 6}, W::kPut, 400},
          {0, kRefund, 1, {1, 3, 0, 300, 6}, W::kPut, 300},
          {100, kRefund, 1, {1, 5, 0, 100, 6}, W::kPut, 200},  // drained to 2, then 1
          {100, kRefund, 0, {1, 5, 0, 100, 6}, W::kNone, 200},
          {150, kRefund, 3, {1, 6, 0, 0, 6}, W::kDelete, -2},
          {150, kTake, 6, {1, 0, 0, 600, 6}, W::kPut, 750},
      });
  key.Set("bad");
  CHECK(LeakyRefund(l, key.Get(At(0)), At(0), 1).corrupt);
}

}  // namespace
}  // namespace sluice::limiter
