// GCRA.TAKE and CL.THROTTLE: the VECTORS.md tables, parameter validation and edge cases.
#include <doctest/doctest.h>

#include <ostream>
#include <string>
#include <vector>

#include "sluice/limiter.h"
#include "tests/limiter/fake_key.h"

namespace sluice::limiter {

// Found by argument-dependent lookup, so doctest prints replies in failures.
std::ostream& operator<<(std::ostream& os, const CellReply& r) {
  return os << "[" << r.limited << ", " << r.limit << ", " << r.remaining << ", " << r.retry_after_s
            << ", " << r.reset_after_s << "]";
}

namespace {

using testing::At;
using testing::FakeKey;
using testing::kStartMs;
using testing::kStartNs;
using testing::Ms;

constexpr int64_t kMax = INT64_MAX;

// A GCRA.TAKE reply as the server sends it: times in ms, rounded up.
struct TakeReply {
  int64_t allowed, remaining, retry_after_ms, reset_after_ms, limit;
  bool operator==(const TakeReply&) const = default;
};
TakeReply ToTakeReply(const Decision& d) {
  return {d.allowed ? 1 : 0, d.remaining, d.allowed ? 0 : CeilMs(d.retry_after_ns),
          CeilMs(d.reset_after_ns), d.limit};
}
std::ostream& operator<<(std::ostream& os, const TakeReply& r) {
  return os << "[" << r.allowed << ", " << r.remaining << ", " << r.retry_after_ms << ", "
            << r.reset_after_ms << ", " << r.limit << "]";
}

// Runs one call against the fake key and applies its write.
Outcome Take(const GcraParams& p, FakeKey& key, int64_t now_ns, int64_t cost) {
  return testing::CheckAndApply(key, GcraTake(p, key.Get(now_ns), now_ns, cost), cost);
}

struct CellRow {
  int64_t t_ms;
  int64_t quantity;
  CellReply reply;
};

void RunCell(int64_t max_burst, int64_t count, int64_t period_s, const std::vector<CellRow>& rows) {
  GcraParams p;
  REQUIRE(MakeCellParams(max_burst, count, period_s, &p) == "");
  FakeKey key;
  for (size_t i = 0; i < rows.size(); ++i) {
    CAPTURE(i);
    CAPTURE(rows[i].t_ms);
    Outcome o = Take(p, key, At(rows[i].t_ms), rows[i].quantity);
    CHECK(ToCellReply(o.decision) == rows[i].reply);
  }
}

TEST_CASE("CL.THROTTLE scenario A: foo 4 1 1") {
  RunCell(4, 1, 1,
          {
              {0, 6, {1, 5, 5, -1, 0}},
              {0, 1, {0, 5, 4, -1, 1}},
              {0, 1, {0, 5, 3, -1, 2}},
              {0, 1, {0, 5, 2, -1, 3}},
              {0, 1, {0, 5, 1, -1, 4}},
              {0, 1, {0, 5, 0, -1, 5}},
              {0, 1, {1, 5, 0, 1, 5}},
              {3000, 1, {0, 5, 2, -1, 3}},
              {3100, 1, {0, 5, 1, -1, 4}},
              {4000, 1, {0, 5, 1, -1, 4}},
              {8000, 1, {0, 5, 4, -1, 1}},
              {9500, 1, {0, 5, 4, -1, 1}},
              {9500, 0, {0, 5, 4, -1, 1}},
              {9500, 2, {0, 5, 2, -1, 3}},
              {9500, 5, {1, 5, 2, 3, 3}},
          });
}

TEST_CASE("CL.THROTTLE scenario B: user123 15 30 60") {
  RunCell(15, 30, 60, {{0, 1, {0, 16, 15, -1, 2}}});
}

TEST_CASE("CL.THROTTLE scenario C: user123 0 1 2") {
  RunCell(0, 1, 2,
          {{0, 1, {0, 1, 0, -1, 2}}, {0, 1, {1, 1, 0, 2, 2}}, {2000, 1, {0, 1, 0, -1, 2}}});
}

TEST_CASE("CL.THROTTLE error vectors") {
  GcraParams p;
  CHECK(MakeCellParams(10, 0, 1, &p) == "invalid count: must be a positive integer");
  CHECK(MakeCellParams(10, 1, 0, &p) == "invalid period: must be a positive integer (seconds)");
}

TEST_CASE("GCRA.TAKE vector: k 10 1s") {
  GcraParams p;
  REQUIRE(MakeGcraParams(10, kNsPerSecond, 0, &p) == "");
  CHECK(p.emission_ns == Ms(100));
  CHECK(p.capacity == 10);
  CHECK(p.tolerance_ns == Ms(1000));
  struct Row {
    int64_t t_ms, cost;
    TakeReply reply;
  };
  std::vector<Row> rows = {{0, 1, {1, 9, 0, 100, 10}}};
  for (int i = 0; i < 9; ++i) rows.push_back({0, 1, {1, 8 - i, 0, 200 + 100 * i, 10}});
  rows.push_back({0, 1, {0, 0, 100, 1000, 10}});
  rows.push_back({250, 1, {1, 1, 0, 850, 10}});
  rows.push_back({250, 0, {1, 1, 0, 850, 10}});
  rows.push_back({250, 11, {0, 1, -1, 850, 10}});
  FakeKey key;
  for (size_t i = 0; i < rows.size(); ++i) {
    CAPTURE(i);
    Outcome o = Take(p, key, At(rows[i].t_ms), rows[i].cost);
    CHECK(ToTakeReply(o.decision) == rows[i].reply);
  }
  // PTTL is 850 and GET shows the TAT in ns since the epoch.
  CHECK(key.expire_at_ms() - (kStartMs + 250) == 850);
  CHECK(key.value() == std::to_string(At(1100)));
}

TEST_CASE("GCRA: expiry is the new TAT rounded up to ms and agrees with reset_after") {
  GcraParams p;
  REQUIRE(MakeGcraParams(3, kNsPerSecond, 0, &p) == "");  // T = 333333333 ns
  FakeKey key;
  Outcome o = Take(p, key, kStartNs + 7, 1);
  CHECK(o.value == std::to_string(kStartNs + 7 + 333333333));
  CHECK(o.decision.reset_after_ns == 333333333);
  CHECK(o.expire_at_ms == kStartMs + 334);
  CHECK(CeilMs(o.decision.reset_after_ns) == 334);
}

TEST_CASE("GCRA: cost 0 on a fresh key peeks without writing") {
  GcraParams p;
  REQUIRE(MakeGcraParams(5, kNsPerSecond, 0, &p) == "");
  Outcome o = GcraTake(p, nullptr, kStartNs, 0);
  CHECK(o.decision.allowed);
  CHECK(o.decision.remaining == 5);
  CHECK(o.decision.reset_after_ns == 0);
  CHECK(o.write == Outcome::Write::kNone);
}

TEST_CASE("GCRA: cost above capacity is -1 and never writes, even near INT64_MAX") {
  GcraParams p;
  REQUIRE(MakeGcraParams(10, kNsPerSecond, 0, &p) == "");
  for (int64_t cost : {int64_t{11}, int64_t{1} << 40, kMax - 1, kMax}) {
    CAPTURE(cost);
    Outcome o = GcraTake(p, nullptr, kStartNs, cost);
    CHECK_FALSE(o.decision.allowed);
    CHECK(o.decision.retry_after_ns == -1);
    CHECK(o.decision.remaining == 10);
    CHECK(o.write == Outcome::Write::kNone);
  }
}

TEST_CASE("GCRA: a clock that steps back is treated as not having moved") {
  GcraParams p;
  REQUIRE(MakeGcraParams(10, kNsPerSecond, 0, &p) == "");
  FakeKey key;
  for (int i = 0; i < 10; ++i) Take(p, key, At(0), 1);  // TAT = start + 1 s
  // 500 ms back in time: the bucket is still full; the wait counts from the real now.
  Outcome o = Take(p, key, At(-500), 1);
  CHECK_FALSE(o.decision.allowed);
  CHECK(o.decision.remaining == 0);
  CHECK(o.decision.retry_after_ns == Ms(600));
  CHECK(o.decision.reset_after_ns == Ms(1500));
  // Half a period back from a half-drained state: TAT is ahead, nothing is refunded.
  FakeKey key2;
  for (int i = 0; i < 5; ++i) Take(p, key2, At(0), 1);  // TAT = start + 500 ms
  o = Take(p, key2, At(-200), 1);
  CHECK(o.decision.allowed);
  CHECK(o.decision.remaining == 2);  // floor((-200 + 1000 - 600) / 100)
  CHECK(key2.value() == std::to_string(At(600)));
}

TEST_CASE("GCRA: state older than the period is fresh") {
  GcraParams p;
  REQUIRE(MakeGcraParams(10, kNsPerSecond, 0, &p) == "");
  FakeKey key;
  key.Set(std::to_string(At(-5000)));  // a TAT long past, key without expiry
  Outcome o = Take(p, key, At(0), 1);
  CHECK(ToTakeReply(o.decision) == TakeReply{1, 9, 0, 100, 10});
  key.Set("0");  // the epoch: also fresh
  o = Take(p, key, At(0), 10);
  CHECK(ToTakeReply(o.decision) == TakeReply{1, 0, 0, 1000, 10});
}

TEST_CASE("GCRA: 1ms and 10-year periods") {
  GcraParams p;
  REQUIRE(MakeGcraParams(1, Ms(1), 0, &p) == "");
  FakeKey key;
  CHECK(ToTakeReply(Take(p, key, At(0), 1).decision) == TakeReply{1, 0, 0, 1, 1});
  CHECK(ToTakeReply(Take(p, key, At(0), 1).decision) == TakeReply{0, 0, 1, 1, 1});
  CHECK(ToTakeReply(Take(p, key, At(1), 1).decision) == TakeReply{1, 0, 0, 1, 1});

  REQUIRE(MakeGcraParams(1, kMaxDurationNs, 0, &p) == "");
  FakeKey slow;
  Outcome o = Take(p, slow, At(0), 1);
  CHECK(o.decision.reset_after_ns == kMaxDurationNs);
  CHECK(o.expire_at_ms == kStartMs + kMaxDurationNs / kNsPerMs);
  o = Take(p, slow, At(1000), 1);
  CHECK_FALSE(o.decision.allowed);
  CHECK(o.decision.retry_after_ns == kMaxDurationNs - Ms(1000));
}

TEST_CASE("GCRA: sub-millisecond emission intervals round up to 1 ms") {
  GcraParams p;
  REQUIRE(MakeGcraParams(1000000, kNsPerSecond, 0, &p) == "");  // T = 1 us
  CHECK(p.emission_ns == 1000);
  FakeKey key;
  Outcome o = Take(p, key, At(0), 1);
  CHECK(o.decision.reset_after_ns == 1000);
  CHECK(ToTakeReply(o.decision) == TakeReply{1, 999999, 0, 1, 1000000});
  CHECK(o.expire_at_ms == kStartMs + 1);
  o = Take(p, key, At(0), 999999);
  CHECK(ToTakeReply(o.decision) == TakeReply{1, 0, 0, 1000, 1000000});
  o = Take(p, key, At(0), 1);
  CHECK_FALSE(o.decision.allowed);
  CHECK(o.decision.retry_after_ns == 1000);
  CHECK(ToTakeReply(o.decision) == TakeReply{0, 0, 1, 1000, 1000000});
  // 1.5 us later one unit has dripped back (1 us), the half does not count.
  o = Take(p, key, At(0) + 1500, 1);
  CHECK(o.decision.allowed);
  CHECK(o.decision.remaining == 0);
}

TEST_CASE("GCRA: huge quotas and capacities stay exact") {
  GcraParams p;
  // 1 per ns, the fastest rate, with the largest capacity accepted.
  REQUIRE(MakeGcraParams(kNsPerSecond, kNsPerSecond, kMaxToleranceNs, &p) == "");
  CHECK(p.tolerance_ns == kMaxToleranceNs);
  FakeKey key;
  Outcome o = Take(p, key, At(0), kMaxToleranceNs);
  CHECK(o.decision.allowed);
  CHECK(o.decision.remaining == 0);
  CHECK(o.decision.reset_after_ns == kMaxToleranceNs);
  CHECK(o.value == std::to_string(kStartNs + kMaxToleranceNs));
  o = Take(p, key, At(0), 1);
  CHECK_FALSE(o.decision.allowed);
  CHECK(o.decision.retry_after_ns == 1);
  o = Take(p, key, At(0), kMax);
  CHECK(o.decision.retry_after_ns == -1);
  // The largest quota a 10-year period accepts: T = 1 ns, a full bucket is 10 years.
  REQUIRE(MakeGcraParams(kMaxDurationNs, kMaxDurationNs, 0, &p) == "");
  CHECK(p.emission_ns == 1);
  CHECK(p.capacity == kMaxDurationNs);
  o = GcraTake(p, nullptr, kStartNs, kMaxDurationNs);
  CHECK(o.decision.allowed);
  CHECK(o.decision.remaining == 0);
  CHECK(o.expire_at_ms == kStartMs + kMaxDurationNs / kNsPerMs);
  o = GcraTake(p, nullptr, kStartNs, kMaxDurationNs - 7);
  CHECK(o.decision.remaining == 7);
}

TEST_CASE("GCRA: a stored TAT near INT64_MAX denies without overflow") {
  GcraParams p;
  REQUIRE(MakeGcraParams(10, kNsPerSecond, 0, &p) == "");
  FakeKey key;
  key.Set(std::to_string(kMax));
  Outcome o = Take(p, key, At(0), 10);
  CHECK_FALSE(o.decision.allowed);
  CHECK(o.decision.remaining == 0);
  CHECK(o.decision.retry_after_ns == kMax - kStartNs);
  CHECK(o.decision.reset_after_ns == kMax - kStartNs);
}

TEST_CASE("GCRA: stored text that is not a non-negative decimal is corrupt") {
  GcraParams p;
  REQUIRE(MakeGcraParams(10, kNsPerSecond, 0, &p) == "");
  for (const std::string& bad : std::vector<std::string>{
           "", "abc", "-5", "12x", " 12", "12 ", "+12", "0012", "1.5", "99999999999999999999",
           "9223372036854775808", std::string("1\0", 2)}) {
    CAPTURE(bad);
    StoredState s{bad, -1};
    Outcome o = GcraTake(p, &s, kStartNs, 1);
    CHECK(o.corrupt);
    CHECK(o.write == Outcome::Write::kNone);
  }
  StoredState ok{"9223372036854775807", -1};
  CHECK_FALSE(GcraTake(p, &ok, kStartNs, 1).corrupt);
}

TEST_CASE("GCRA: GCRA.TAKE and CL.THROTTLE share a key") {
  GcraParams take, cell;
  REQUIRE(MakeGcraParams(1, kNsPerSecond, 5, &take) == "");
  REQUIRE(MakeCellParams(4, 1, 1, &cell) == "");
  CHECK(take.emission_ns == cell.emission_ns);
  CHECK(take.tolerance_ns == cell.tolerance_ns);
  FakeKey key;
  Take(take, key, At(0), 3);
  CHECK(ToCellReply(Take(cell, key, At(0), 1).decision) == CellReply{0, 5, 1, -1, 4});
}

TEST_CASE("ToCellReply maps every field") {
  struct Row {
    Decision d;
    CellReply want;
  };
  std::vector<Row> rows = {
      {{true, 3, 0, Ms(2500), 5, 0}, {0, 5, 3, -1, 3}},
      {{false, 0, Ms(1000) + 400000, Ms(1001), 5, 0}, {1, 5, 0, 1, 2}},
      {{false, 2, -1, 0, 5, 0}, {1, 5, 2, -1, 0}},
      {{false, 0, 1, 1, 1, 0}, {1, 1, 0, 0, 0}},
  };
  for (const Row& r : rows) CHECK(ToCellReply(r.d) == r.want);
}

TEST_CASE("CeilMs and CellSeconds") {
  struct Row {
    int64_t ns, ms, cell_s;
  };
  std::vector<Row> rows = {
      {0, 0, 0},
      {1, 1, 0},
      {999999, 1, 0},
      {1000000, 1, 1},
      {1000001, 2, 1},
      {kNsPerSecond, 1000, 1},
      {kNsPerSecond + 400000, 1001, 1},   // 1.0004 s
      {kNsPerSecond + 1000000, 1001, 2},  // 1.001 s
      {3900 * kNsPerMs, 3900, 4},
      {-1, -1, -1},
      {-12345, -1, -1},
      {kMax, 9223372036855, 9223372037},
  };
  for (const Row& r : rows) {
    CAPTURE(r.ns);
    CHECK(CeilMs(r.ns) == r.ms);
    CHECK(CellSeconds(r.ns) == r.cell_s);
  }
}

TEST_CASE("MakeGcraParams and MakeCellParams errors name the argument") {
  struct Row {
    int64_t a, b, c;
    std::string want;
  };
  const std::string kTau =
      "invalid BURST: too large for the rate (capacity * period / quota above 100 years)";
  std::vector<Row> gcra = {
      {0, kNsPerSecond, 0, "invalid quota: must be a positive integer"},
      {-3, kNsPerSecond, 0, "invalid quota: must be a positive integer"},
      {10, 0, 0, "invalid period: must be a positive duration of at most 10 years"},
      {10, -1, 0, "invalid period: must be a positive duration of at most 10 years"},
      {10, kMaxDurationNs + 1, 0,
       "invalid period: must be a positive duration of at most 10 years"},
      {10, kNsPerSecond, -1, "invalid BURST: must be a positive integer"},
      {kNsPerSecond + 1, kNsPerSecond, 0,
       "invalid period: rate above 1 per nanosecond (period / quota < 1ns)"},
      {kMax, kMaxDurationNs, 0,
       "invalid period: rate above 1 per nanosecond (period / quota < 1ns)"},
      {1, kNsPerSecond, kMax, kTau},
      {kNsPerSecond, kNsPerSecond, kMaxToleranceNs + 1, kTau},
      {10, kNsPerSecond, 0, ""},
      {1, 1, 0, ""},
      {1, kMaxDurationNs, kMaxToleranceNs / kMaxDurationNs, ""},
  };
  for (const Row& r : gcra) {
    CAPTURE(r.a);
    CAPTURE(r.b);
    CAPTURE(r.c);
    GcraParams p;
    CHECK(MakeGcraParams(r.a, r.b, r.c, &p) == r.want);
  }
  std::vector<Row> cell = {
      {-1, 1, 1, "invalid max_burst: must be a non-negative integer"},
      {0, 0, 1, "invalid count: must be a positive integer"},
      {0, -1, 1, "invalid count: must be a positive integer"},
      {0, 1, 0, "invalid period: must be a positive integer (seconds)"},
      {0, 1, -1, "invalid period: must be a positive integer (seconds)"},
      {0, 1, kMaxDurationNs / kNsPerSecond + 1, "invalid period: above the maximum of 10 years"},
      {kMax, 1, 1, "invalid max_burst: too large"},
      {0, kNsPerSecond + 1, 1, "invalid count: rate above 1 per nanosecond (period / count < 1ns)"},
      {kMax - 1, 1, 1,
       "invalid max_burst: too large for the rate ((max_burst + 1) * period / count above 100 "
       "years)"},
      {0, 1, 1, ""},
      {0, kNsPerSecond, 1, ""},
  };
  for (const Row& r : cell) {
    CAPTURE(r.a);
    CAPTURE(r.b);
    CAPTURE(r.c);
    GcraParams p;
    CHECK(MakeCellParams(r.a, r.b, r.c, &p) == r.want);
  }
}

}  // namespace
}  // namespace sluice::limiter
