// CONC.ACQUIRE / CONC.RELEASE: slots, renewals, expiry, release, codec and corrupt state.
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
using testing::Ms;

constexpr int64_t kMax = INT64_MAX;

ConcParams Params(int64_t limit, int64_t lease_ns) {
  ConcParams p;
  REQUIRE(MakeConcParams(limit, lease_ns, &p) == "");
  return p;
}

Outcome Acquire(const ConcParams& p, FakeKey& key, int64_t now_ns, std::string_view token) {
  Outcome o = ConcAcquire(p, key.Get(now_ns), now_ns, token);
  REQUIRE_FALSE(o.corrupt);
  CHECK(o.write == (o.decision.allowed ? Outcome::Write::kPut : Outcome::Write::kNone));
  CHECK(o.decision.limit == p.limit);
  if (o.write == Outcome::Write::kPut) {
    CHECK(o.expire_at_ms == CeilMs(now_ns + o.decision.reset_after_ns));
  }
  key.Apply(o);
  return o;
}

Outcome Release(FakeKey& key, int64_t now_ns, std::string_view token) {
  Outcome o = ConcRelease(key.Get(now_ns), now_ns, token);
  REQUIRE_FALSE(o.corrupt);
  key.Apply(o);
  return o;
}

struct Row {
  int64_t t_ms;
  bool acquire;  // else release
  std::string token;
  bool allowed;
  int64_t remaining, retry_after_ms, reset_after_ms;
  Outcome::Write write;
};

constexpr auto kPut = Outcome::Write::kPut;
constexpr auto kNone = Outcome::Write::kNone;
constexpr auto kDelete = Outcome::Write::kDelete;

TEST_CASE("CONC: acquire, deny, renew, expire, release") {
  ConcParams p = Params(2, 10 * kNsPerSecond);
  FakeKey key;
  std::vector<Row> rows = {
      {0, true, "A", true, 1, 0, 10000, kPut},         {1000, true, "B", true, 0, 0, 10000, kPut},
      {2000, true, "C", false, 0, 8000, 9000, kNone},   // A ends first, at 10 s
      {3000, true, "A", true, 0, 0, 10000, kPut},       // renewal: A now ends at 13 s
      {10000, true, "C", false, 0, 1000, 3000, kNone},  // B ends at 11 s
      {11000, true, "C", true, 0, 0, 10000, kPut},      // B's lease ended: C takes its slot
      {12000, false, "A", true, 0, 0, 9000, kPut},      // released; C ends at 21 s
      {12000, false, "A", false, 0, 0, 9000, kNone},    // no longer held
      {12000, false, "B", false, 0, 0, 9000, kNone},    // expired leases are not released
      {12000, true, "D", true, 0, 0, 10000, kPut},     {13000, false, "C", true, 0, 0, 9000, kPut},
      {13000, false, "D", true, 0, 0, 0, kDelete},  // the last holder: the key goes
  };
  for (size_t i = 0; i < rows.size(); ++i) {
    CAPTURE(i);
    const Row& r = rows[i];
    Outcome o =
        r.acquire ? Acquire(p, key, At(r.t_ms), r.token) : Release(key, At(r.t_ms), r.token);
    CHECK(o.decision.allowed == r.allowed);
    CHECK(o.decision.remaining == r.remaining);
    CHECK(o.decision.retry_after_ns == Ms(r.retry_after_ms));
    CHECK(o.decision.reset_after_ns == Ms(r.reset_after_ms));
    CHECK(o.write == r.write);
  }
  CHECK_FALSE(key.exists());
}

TEST_CASE("CONC: leases end exactly at their end; the key expires with the last one") {
  ConcParams p = Params(1, kNsPerSecond);
  FakeKey key;
  Outcome o = Acquire(p, key, At(0) + 1, "A");
  CHECK(o.expire_at_ms == kStartMs + 1001);
  StoredState s{key.value(), -1};  // as if the key had not expired yet
  o = ConcAcquire(p, &s, At(1000), "B");
  CHECK_FALSE(o.decision.allowed);
  CHECK(o.decision.retry_after_ns == 1);
  o = ConcAcquire(p, &s, At(1000) + 1, "B");
  CHECK(o.decision.allowed);
  o = ConcRelease(&s, At(1000) + 1, "A");
  CHECK_FALSE(o.decision.allowed);
  CHECK(o.write == kNone);
}

TEST_CASE("CONC: a clock that steps back never shortens a lease") {
  ConcParams p = Params(1, 10 * kNsPerSecond);
  FakeKey key;
  Acquire(p, key, At(5000), "A");  // ends at 15 s
  Outcome o = Acquire(p, key, At(0), "A");
  CHECK(o.decision.allowed);
  CHECK(o.decision.reset_after_ns == Ms(15000));
  CHECK(o.expire_at_ms == kStartMs + 15000);
  o = Acquire(p, key, At(0), "B");
  CHECK_FALSE(o.decision.allowed);
  CHECK(o.decision.retry_after_ns == Ms(15000));
}

TEST_CASE("CONC: tokens are arbitrary bytes") {
  ConcParams p = Params(3, kNsPerSecond);
  FakeKey key;
  const std::string nul("a\0b", 3), other("a\0c", 3), high("\xff\x80", 2), empty;
  const std::string long_token(300, 'z');  // a 2-byte length varint
  CHECK(Acquire(p, key, At(0), nul).decision.allowed);
  CHECK(Acquire(p, key, At(0), high).decision.allowed);
  CHECK(Acquire(p, key, At(0), empty).decision.allowed);
  CHECK_FALSE(Acquire(p, key, At(0), other).decision.allowed);
  CHECK(Acquire(p, key, At(1), nul).decision.remaining == 0);  // a renewal, not a new slot
  CHECK(Release(key, At(2), high).decision.allowed);
  CHECK_FALSE(Release(key, At(2), "a").decision.allowed);  // a prefix is another token
  CHECK(Acquire(p, key, At(3), long_token).decision.allowed);
  CHECK(Release(key, At(4), long_token).decision.allowed);
  CHECK(Release(key, At(4), empty).decision.allowed);
  CHECK(Release(key, At(4), nul).decision.allowed);
  CHECK_FALSE(key.exists());
}

TEST_CASE("CONC: a lower limit keeps existing holders and their renewals") {
  ConcParams wide = Params(3, kNsPerSecond);
  ConcParams narrow = Params(1, kNsPerSecond);
  FakeKey key;
  for (const char* t : {"A", "B", "C"}) Acquire(wide, key, At(0), t);
  Outcome o = Acquire(narrow, key, At(10), "D");
  CHECK_FALSE(o.decision.allowed);
  CHECK(o.decision.remaining == 0);
  o = Acquire(narrow, key, At(10), "B");
  CHECK(o.decision.allowed);
  CHECK(o.decision.remaining == 0);
}

TEST_CASE("CONC: extreme limits and leases") {
  ConcParams p = Params(kMax, kMaxDurationNs);
  FakeKey key;
  Outcome o = Acquire(p, key, At(0), "A");
  CHECK(o.decision.remaining == kMax - 1);
  CHECK(o.decision.reset_after_ns == kMaxDurationNs);
  CHECK(o.expire_at_ms == kStartMs + kMaxDurationNs / kNsPerMs);
  // A lease ending past INT64_MAX saturates.
  o = ConcAcquire(p, nullptr, kMax - 5, "A");
  CHECK(o.decision.allowed);
  CHECK(o.decision.reset_after_ns == 5);
}

TEST_CASE("CONC: corrupt or truncated state is reported, never trusted") {
  ConcParams p = Params(3, kNsPerSecond);
  FakeKey key;
  Acquire(p, key, At(0), "first");
  Acquire(p, key, At(0), std::string("\0\1", 2));
  const std::string good = key.value();
  for (size_t n = 0; n < good.size(); ++n) {
    CAPTURE(n);
    StoredState s{std::string_view(good).substr(0, n), -1};
    CHECK(ConcAcquire(p, &s, At(1), "x").corrupt);
    CHECK(ConcRelease(&s, At(1), "first").corrupt);
  }
  std::vector<std::string> bad = {
      good + "x",
      std::string("\x02\x00", 2),  // unknown version
      std::string("\x01\x02\x01"
                  "A\x05\x01"
                  "A\x05",
                  9),                              // a duplicate token
      std::string("\x01\xff\xff\xff\xff\x0f", 6),  // a huge holder count
      std::string("\x01\x01\x7f"
                  "A\x05",
                  5),  // token longer than the value
      std::string("\x01\x01\x01"
                  "A\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
                  14),  // end > max
  };
  for (size_t i = 0; i < bad.size(); ++i) {
    CAPTURE(i);
    StoredState s{bad[i], -1};
    Outcome o = ConcAcquire(p, &s, At(1), "x");
    CHECK(o.corrupt);
    CHECK(o.write == kNone);
    CHECK(ConcRelease(&s, At(1), "A").corrupt);
  }
  StoredState s{good, -1};
  Outcome o = ConcAcquire(p, &s, At(1), "x");
  CHECK_FALSE(o.corrupt);
  CHECK(o.decision.remaining == 0);
}

TEST_CASE("MakeConcParams errors name the argument") {
  ConcParams p;
  const std::string kLease = "invalid lease: must be a positive duration of at most 10 years";
  CHECK(MakeConcParams(0, kNsPerSecond, &p) == "invalid limit: must be a positive integer");
  CHECK(MakeConcParams(-2, kNsPerSecond, &p) == "invalid limit: must be a positive integer");
  CHECK(MakeConcParams(1, 0, &p) == kLease);
  CHECK(MakeConcParams(1, -1, &p) == kLease);
  CHECK(MakeConcParams(1, kMaxDurationNs + 1, &p) == kLease);
  CHECK(MakeConcParams(kMax, kMaxDurationNs, &p) == "");
}

}  // namespace
}  // namespace sluice::limiter
