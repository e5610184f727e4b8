// LIMITS.TAKE and REFUND through the store: all or nothing across keys, one `now`, kinds,
// errors that write nothing, and the contract under concurrent callers. The math itself is
// tested in tests/limiter (multi_test.cc, refund_test.cc).
#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "test_util.h"

namespace sluice::testing {
namespace {

constexpr int64_t kSec = limiter::kNsPerSecond;

limiter::LimitParams GcraP(int64_t quota, int64_t period_ns) {
  limiter::GcraParams p;
  REQUIRE(limiter::MakeGcraParams(quota, period_ns, 0, &p).empty());
  return p;
}
limiter::LimitParams WindowP(int64_t limit, int64_t window_ns) {
  limiter::WindowParams p;
  REQUIRE(limiter::MakeWindowParams(limit, window_ns, &p).empty());
  return p;
}
limiter::LimitParams SlidingP(int64_t limit, int64_t window_ns) {
  limiter::SlidingParams p;
  REQUIRE(limiter::MakeSlidingParams(limit, window_ns, &p).empty());
  return p;
}
limiter::LimitParams LeakyP(int64_t rate, int64_t period_ns, int64_t burst) {
  limiter::LeakyParams p;
  REQUIRE(limiter::MakeLeakyParams(rate, period_ns, burst, 0, true, &p).empty());
  return p;
}

}  // namespace

TEST_CASE("LIMITS.TAKE: every group consumes, or none does") {
  Fixture f;
  const LimitGroup groups[] = {{"sec", GcraP(2, kSec)}, {"day", WindowP(3, 86400 * kSec)}};
  auto r = f.store->LimitsTake(0, groups, 1);
  REQUIRE(r.ok());
  CHECK(r->decision.allowed);
  CHECK(r->decision.remaining == 1);
  CHECK(r->binding == 1);
  REQUIRE(r->groups.size() == 2);
  CHECK(r->groups[1].remaining == 2);
  CHECK(*f.store->Get(0, "day") == "1");
  CHECK(*f.store->PTtl(0, "day") == 86400000);
  CHECK(*f.store->PTtl(0, "sec") == 500);
  REQUIRE(f.store->LimitsTake(0, groups, 1)->decision.allowed);
  // The per-second limit is spent: denied, and the day counter stays at 2.
  r = f.store->LimitsTake(0, groups, 1);
  REQUIRE(r.ok());
  CHECK_FALSE(r->decision.allowed);
  CHECK(r->binding == 1);
  CHECK(r->decision.retry_after_ns == 500 * 1000000);
  CHECK(r->groups[1].allowed);
  CHECK(r->groups[1].remaining == 1);
  CHECK(*f.store->Get(0, "day") == "2");
  CHECK(*f.store->Get(0, "sec") == std::to_string((kT0Ms + 1000) * 1000000));
  f.AdvanceMs(1000);
  r = f.store->LimitsTake(0, groups, 1);
  CHECK(r->decision.allowed);
  CHECK(r->binding == 2);
  CHECK(*f.store->Get(0, "day") == "3");
  // Now the day denies: the per-second limit is not consumed.
  f.AdvanceMs(1000);
  r = f.store->LimitsTake(0, groups, 1);
  CHECK_FALSE(r->decision.allowed);
  CHECK(r->binding == 2);
  CHECK(r->groups[0].allowed);
  CHECK(r->groups[0].remaining == 2);
  CHECK(*f.store->Exists(0, std::vector<std::string_view>{"sec"}) == 0);
}

TEST_CASE("LIMITS.TAKE: kinds, wrong types and bad groups write nothing") {
  Fixture f;
  const LimitGroup groups[] = {{"g", GcraP(5, kSec)},
                               {"w", WindowP(5, 10 * kSec)},
                               {"s", SlidingP(5, 10 * kSec)},
                               {"l", LeakyP(5, kSec, 4)}};
  auto r = f.store->LimitsTake(0, groups, 2);
  REQUIRE(r.ok());
  CHECK(r->decision.allowed);
  CHECK(**f.store->Type(0, "g") == ValueKind::kString);
  CHECK(**f.store->Type(0, "w") == ValueKind::kString);
  CHECK(**f.store->Type(0, "s") == ValueKind::kSliding);
  CHECK(**f.store->Type(0, "l") == ValueKind::kLeaky);
  const std::string g_before = **f.store->Get(0, "g");

  REQUIRE(f.store->Set(0, "text", "hello", {}).ok());
  const LimitGroup bad_int[] = {{"g", GcraP(5, kSec)}, {"text", WindowP(5, kSec)}};
  CHECK(f.store->LimitsTake(0, bad_int, 1).status().code() == Code::kNotInteger);
  const LimitGroup wrong[] = {{"g", GcraP(5, kSec)}, {"text", SlidingP(5, kSec)}};
  CHECK(f.store->LimitsTake(0, wrong, 1).status().code() == Code::kWrongType);
  const LimitGroup kind_clash[] = {{"g", GcraP(5, kSec)}, {"s", LeakyP(5, kSec, 0)}};
  CHECK(f.store->LimitsTake(0, kind_clash, 1).status().code() == Code::kWrongType);
  const LimitGroup dup[] = {{"g", GcraP(5, kSec)}, {"g", WindowP(5, kSec)}};
  CHECK(f.store->LimitsTake(0, dup, 1).status().code() == Code::kInvalidArgument);
  CHECK(f.store->LimitsTake(0, std::span<const LimitGroup>{}, 1).status().code() ==
        Code::kInvalidArgument);
  std::vector<std::string> names;
  for (int i = 0; i < 17; ++i) names.push_back("k" + std::to_string(i));
  std::vector<LimitGroup> seventeen;
  for (const std::string& n : names) seventeen.push_back({n, GcraP(5, kSec)});
  CHECK(f.store->LimitsTake(0, seventeen, 1).status().code() == Code::kInvalidArgument);
  seventeen.pop_back();
  CHECK(f.store->LimitsTake(0, seventeen, 1)->decision.allowed);
  CHECK(**f.store->Get(0, "g") == g_before);
}

TEST_CASE("REFUND through the store: one key, and every group of LIMITS.TAKE") {
  Fixture f;
  const limiter::LimitParams gcra = GcraP(10, kSec);
  REQUIRE(f.store->GcraTake(0, "a", std::get<limiter::GcraParams>(gcra), 4).ok());
  auto d = f.store->LimitRefund(0, "a", gcra, 3);
  REQUIRE(d.ok());
  CHECK(d->allowed);
  CHECK(d->remaining == 9);
  CHECK(*f.store->PTtl(0, "a") == 100);
  d = f.store->LimitRefund(0, "a", gcra, 3);
  CHECK(d->remaining == 10);
  CHECK(*f.store->PTtl(0, "a") == -2);  // fresh again: the key is gone
  d = f.store->LimitRefund(0, "missing", gcra, 1);
  CHECK(d->remaining == 10);
  CHECK(*f.store->PTtl(0, "missing") == -2);
  REQUIRE(f.store->Set(0, "str", "x", {}).ok());
  CHECK(f.store->LimitRefund(0, "str", SlidingP(3, kSec), 1).status().code() == Code::kWrongType);

  const LimitGroup groups[] = {{"w", WindowP(5, 10 * kSec)}, {"l", LeakyP(10, kSec, 9)}};
  REQUIRE(f.store->LimitsTake(0, groups, 4)->decision.allowed);
  auto r = f.store->LimitsRefund(0, groups, 1);
  REQUIRE(r.ok());
  CHECK(r->decision.allowed);
  CHECK(r->groups[0].remaining == 2);
  CHECK(r->groups[1].remaining == 7);
  CHECK(r->binding == 1);
  CHECK(*f.store->Get(0, "w") == "3");
  CHECK(*f.store->PTtl(0, "w") == 10000);
  CHECK(*f.store->PTtl(0, "l") == 300);
}

TEST_CASE("LIMITS.TAKE under concurrency: no limit admits more than its quota") {
  Fixture f;
  // Overlapping key sets: every caller uses "shared" (quota 50) plus its own key (quota 20).
  constexpr int kThreads = 4, kCalls = 60;
  std::atomic<int> admitted{0}, errors{0};
  std::vector<std::atomic<int>> own(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string mine = "own" + std::to_string(t);
      const LimitGroup groups[] = {{"shared", WindowP(50, 3600 * kSec)},
                                   {mine, WindowP(20, 3600 * kSec)}};
      for (int i = 0; i < kCalls; ++i) {
        auto r = f.store->LimitsTake(0, groups, 1);
        if (!r.ok()) {
          errors.fetch_add(1);  // doctest's assertions are not for other threads
        } else if (r->decision.allowed) {
          admitted.fetch_add(1);
          own[t].fetch_add(1);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(errors.load() == 0);
  CHECK(admitted.load() == 50);
  CHECK(*f.store->Get(0, "shared") == "50");
  int own_total = 0;
  for (int t = 0; t < kThreads; ++t) {
    CHECK(own[t].load() <= 20);
    // A denied call consumed nothing: each own counter equals what its thread was admitted.
    CHECK(f.store->Get(0, "own" + std::to_string(t))->value_or("0") ==
          std::to_string(own[t].load()));
    own_total += own[t].load();
  }
  CHECK(own_total == 50);
}

}  // namespace sluice::testing
