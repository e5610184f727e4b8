// Limiter takes through the store: kinds, stored forms, errors, atomicity. The math itself is
// tested in tests/limiter; here: what the store reads, writes and reports.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "test_util.h"

namespace sluice::testing {
namespace {

constexpr int64_t kSec = limiter::kNsPerSecond;

limiter::GcraParams Gcra(int64_t quota, int64_t period_ns) {
  limiter::GcraParams p;
  REQUIRE(limiter::MakeGcraParams(quota, period_ns, 0, &p).empty());
  return p;
}
limiter::WindowParams Window(int64_t limit, int64_t window_ns) {
  limiter::WindowParams p;
  REQUIRE(limiter::MakeWindowParams(limit, window_ns, &p).empty());
  return p;
}
limiter::LeakyParams Leaky(int64_t rate, int64_t period_ns) {
  limiter::LeakyParams p;
  REQUIRE(limiter::MakeLeakyParams(rate, period_ns, 0, 0, false, &p).empty());
  return p;
}
limiter::SlidingParams Sliding(int64_t limit, int64_t window_ns) {
  limiter::SlidingParams p;
  REQUIRE(limiter::MakeSlidingParams(limit, window_ns, &p).empty());
  return p;
}
limiter::ConcParams Conc(int64_t limit, int64_t lease_ns) {
  limiter::ConcParams p;
  REQUIRE(limiter::MakeConcParams(limit, lease_ns, &p).empty());
  return p;
}

}  // namespace

TEST_CASE("GCRA: stored as decimal TAT ns in a string that expires at the TAT") {
  Fixture f;
  auto p = Gcra(10, kSec);  // T = 100 ms, capacity 10
  auto d = f.store->GcraTake(0, "g", p, 1);
  REQUIRE(d.ok());
  CHECK(d->allowed);
  CHECK(d->remaining == 9);
  CHECK(d->limit == 10);
  const int64_t tat_ns = (kT0Ms + 100) * 1000000;
  CHECK(*f.store->Get(0, "g") == std::to_string(tat_ns));
  CHECK(**f.store->Type(0, "g") == ValueKind::kString);
  CHECK(*f.store->PTtl(0, "g") == 100);
  for (int i = 0; i < 9; ++i) CHECK(f.store->GcraTake(0, "g", p, 1)->allowed);
  auto denied = f.store->GcraTake(0, "g", p, 1);
  CHECK_FALSE(denied->allowed);
  CHECK(denied->retry_after_ns == 100 * 1000000);
  CHECK(*f.store->PTtl(0, "g") == 1000);  // the denied call changed nothing
  f.AdvanceMs(100);
  CHECK(f.store->GcraTake(0, "g", p, 1)->allowed);
}

TEST_CASE("GCRA: COST 0 never writes; an expired state counts as fresh") {
  Fixture f;
  auto p = Gcra(2, kSec);
  CHECK(f.store->GcraTake(0, "g", p, 0)->remaining == 2);
  CHECK(*f.store->Exists(0, std::vector<std::string_view>{"g"}) == 0);
  CHECK(f.store->GcraTake(0, "g", p, 2)->allowed);
  CHECK_FALSE(f.store->GcraTake(0, "g", p, 1)->allowed);
  f.AdvanceMs(1001);
  CHECK(*f.store->Exists(0, std::vector<std::string_view>{"g"}) == 0);
  CHECK(f.store->GcraTake(0, "g", p, 2)->allowed);
}

TEST_CASE("GCRA and WINDOW: wrong kind and non-numeric strings") {
  Fixture f;
  REQUIRE(f.store->Set(0, "text", "hello", SetPlain()).ok());
  CHECK(f.store->GcraTake(0, "text", Gcra(1, kSec), 1).status().code() == Code::kNotInteger);
  CHECK(f.store->WindowTake(0, "text", Window(1, kSec), 1).status().code() == Code::kNotInteger);
  CHECK(*f.store->Get(0, "text") == "hello");
  f.PutRaw(0, "leaky", ValueKind::kLeaky, "x");
  CHECK(f.store->GcraTake(0, "leaky", Gcra(1, kSec), 1).status().code() == Code::kWrongType);
  CHECK(f.store->WindowTake(0, "leaky", Window(1, kSec), 1).status().code() == Code::kWrongType);
}

TEST_CASE("WINDOW works on an INCR-made counter and gives it a TTL") {
  Fixture f;
  REQUIRE(*f.store->IncrBy(0, "w", 1) == 1);
  CHECK(*f.store->PTtl(0, "w") == -1);
  auto d = f.store->WindowTake(0, "w", Window(3, 10 * kSec), 1);
  CHECK(d->allowed);
  CHECK(d->remaining == 1);
  CHECK(*f.store->Get(0, "w") == "2");
  CHECK(*f.store->PTtl(0, "w") == 10000);
  CHECK(f.store->WindowTake(0, "w", Window(3, 10 * kSec), 1)->allowed);
  CHECK_FALSE(f.store->WindowTake(0, "w", Window(3, 10 * kSec), 1)->allowed);
  CHECK(*f.store->Get(0, "w") == "3");
  f.AdvanceMs(10001);
  CHECK(f.store->WindowTake(0, "w", Window(3, 10 * kSec), 1)->allowed);
  CHECK(*f.store->Get(0, "w") == "1");
}

TEST_CASE("LEAKY and SLIDING keep binary state under their own kind") {
  Fixture f;
  CHECK(f.store->LeakyTake(0, "l", Leaky(1, kSec), 1)->allowed);
  CHECK(**f.store->Type(0, "l") == ValueKind::kLeaky);
  CHECK(f.store->Get(0, "l").status().code() == Code::kWrongType);
  CHECK_FALSE(f.store->LeakyTake(0, "l", Leaky(1, kSec), 1)->allowed);
  CHECK(f.store->SlidingTake(0, "l", Sliding(5, kSec), 1).status().code() == Code::kWrongType);

  CHECK(f.store->SlidingTake(0, "s", Sliding(2, kSec), 1)->allowed);
  CHECK(f.store->SlidingTake(0, "s", Sliding(2, kSec), 1)->allowed);
  CHECK_FALSE(f.store->SlidingTake(0, "s", Sliding(2, kSec), 1)->allowed);
  CHECK(**f.store->Type(0, "s") == ValueKind::kSliding);
  CHECK(*f.store->PTtl(0, "s") > 0);
  REQUIRE(f.store->Set(0, "str", "1", SetPlain()).ok());
  CHECK(f.store->LeakyTake(0, "str", Leaky(1, kSec), 1).status().code() == Code::kWrongType);
  CHECK(f.store->SlidingTake(0, "str", Sliding(1, kSec), 1).status().code() == Code::kWrongType);
}

TEST_CASE("binary limiter state that cannot be decoded is kCorruption") {
  Fixture f;
  f.PutRaw(0, "l", ValueKind::kLeaky, "garbage!");
  f.PutRaw(0, "s", ValueKind::kSliding, "garbage!");
  f.PutRaw(0, "c", ValueKind::kConc, "garbage!");
  auto l = f.store->LeakyTake(0, "l", Leaky(1, kSec), 1);
  CHECK(l.status().code() == Code::kCorruption);
  CHECK(l.status().message() == "invalid limiter state");
  CHECK(f.store->SlidingTake(0, "s", Sliding(1, kSec), 1).status().code() == Code::kCorruption);
  CHECK(f.store->ConcAcquire(0, "c", Conc(1, kSec), "").status().code() == Code::kCorruption);
}

TEST_CASE("CONC: generated tokens, limit, renew, release") {
  Fixture f;
  auto p = Conc(1, 10 * kSec);
  auto a = f.store->ConcAcquire(0, "c", p, "");
  REQUIRE(a.ok());
  CHECK(a->decision.allowed);
  CHECK(a->token.size() == 32);
  CHECK(a->token.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(**f.store->Type(0, "c") == ValueKind::kConc);
  auto b = f.store->ConcAcquire(0, "c", p, "");
  CHECK_FALSE(b->decision.allowed);
  CHECK(b->token.empty());
  f.AdvanceMs(5000);
  auto renew = f.store->ConcAcquire(0, "c", p, a->token);
  CHECK(renew->decision.allowed);
  CHECK(renew->token == a->token);
  CHECK(*f.store->ConcRelease(0, "c", a->token));
  CHECK_FALSE(*f.store->ConcRelease(0, "c", a->token));
  auto mine = f.store->ConcAcquire(0, "c", p, "my-token");
  CHECK(mine->decision.allowed);
  CHECK(mine->token == "my-token");
  CHECK(f.store->ConcAcquire(0, "other", p, "")->token != a->token);
  REQUIRE(f.store->Set(0, "str", "x", SetPlain()).ok());
  CHECK(f.store->ConcRelease(0, "str", "t").status().code() == Code::kWrongType);
}

TEST_CASE("limiter keys are ordinary keys: RENAME, TTL survive reopen") {
  Fixture f;
  REQUIRE(f.store->LeakyTake(0, "l", Leaky(1, kSec), 1).ok());
  const int64_t ttl = *f.store->PTtl(0, "l");
  CHECK(ttl > 0);
  CHECK(*f.store->Rename(0, "l", "l2", false));
  f.Reopen();
  CHECK(*f.store->PTtl(0, "l2") == ttl);
  CHECK_FALSE(f.store->LeakyTake(0, "l2", Leaky(1, kSec), 1)->allowed);
}

TEST_CASE("concurrent GCRA takes never over-admit") {
  TempDir dir;
  auto clock = ManualClock();
  auto s = OpenStore(dir.path(), clock, false, Durability::kNo);
  auto p = Gcra(500, 3600 * kSec);
  std::atomic<int> allowed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) {
        auto d = s->GcraTake(0, "g", p, 1);
        REQUIRE(d.ok());
        if (d->allowed) ++allowed;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(allowed.load() == 500);
}

}  // namespace sluice::testing
