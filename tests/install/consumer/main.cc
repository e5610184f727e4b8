// Uses an installed Sluice: opens a Store in the directory given as argv[1] and checks a GCRA
// limiter's decisions on a manual clock. Exits 0 when everything is as expected.
#include <sluice/clock.h>
#include <sluice/limiter.h>
#include <sluice/store.h>

#include <cstdio>
#include <memory>

namespace {

int failures = 0;

void Expect(bool ok, const char* what) {
  std::printf("%s: %s\n", ok ? "ok  " : "FAIL", what);
  if (!ok) ++failures;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <data-dir>\n", argv[0]);
    return 2;
  }
  auto clock = std::make_shared<sluice::AdjustableClock>();
  clock->SetManualNs(int64_t{1'700'000'000'000} * 1'000'000);
  sluice::Options options;
  options.path = argv[1];
  options.clock = clock;
  auto opened = sluice::Store::Open(options);
  if (!opened.ok()) {
    std::fprintf(stderr, "Store::Open: %s\n", opened.status().ToString().c_str());
    return 1;
  }
  std::unique_ptr<sluice::Store> store = std::move(opened).value();

  sluice::limiter::GcraParams params;  // 2 per second: T = 500 ms, capacity 2
  Expect(sluice::limiter::MakeGcraParams(2, sluice::limiter::kNsPerSecond, 0, &params).empty(),
         "MakeGcraParams accepts 2 per second");
  auto first = store->GcraTake(0, "k", params, 1);
  auto second = store->GcraTake(0, "k", params, 1);
  auto third = store->GcraTake(0, "k", params, 1);
  Expect(first.ok() && first->allowed && first->remaining == 1, "first take allowed, 1 left");
  Expect(second.ok() && second->allowed && second->remaining == 0, "second take allowed, 0 left");
  Expect(third.ok() && !third->allowed && third->retry_after_ns == 500'000'000,
         "third take denied, retry after 500 ms");
  clock->AdvanceNs(500'000'000);
  auto fourth = store->GcraTake(0, "k", params, 1);
  Expect(fourth.ok() && fourth->allowed, "allowed again 500 ms later");
  auto pttl = store->PTtl(0, "k");
  Expect(pttl.ok() && *pttl == 1000, "the state key expires when the limiter is fresh again");
  return failures == 0 ? 0 : 1;
}
