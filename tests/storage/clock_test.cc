// The injectable clocks: manual time, switching back to real time, saturation.
#include "sluice/clock.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>

namespace sluice {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST_CASE("AdjustableClock: manual time, advance, back to real") {
  AdjustableClock clock;
  CHECK_FALSE(clock.manual());
  clock.SetManualNs(1'700'000'000'000'000'000);
  CHECK(clock.manual());
  CHECK(clock.NowNs() == 1'700'000'000'000'000'000);
  CHECK(clock.NowMs() == 1'700'000'000'000);
  clock.AdvanceNs(250'000'000);
  CHECK(clock.NowNs() == 1'700'000'000'250'000'000);
  clock.AdvanceNs(-250'000'000);  // a clock may step back; limiter math clamps it
  CHECK(clock.NowNs() == 1'700'000'000'000'000'000);
  clock.UseReal();
  CHECK_FALSE(clock.manual());
  CHECK(clock.NowNs() > 1'700'000'000'000'000'000);  // the real clock is past 2023
}

TEST_CASE("AdjustableClock: advancing saturates instead of overflowing") {
  AdjustableClock clock;
  clock.SetManualNs(kMax - 5);
  clock.AdvanceNs(10);
  CHECK(clock.NowNs() == kMax);
  clock.SetManualNs(kMin + 5);
  clock.AdvanceNs(-10);
  CHECK(clock.NowNs() == kMin);
  clock.UseReal();
  clock.AdvanceNs(kMax);  // from real time: switches to manual, saturated
  CHECK(clock.manual());
  CHECK(clock.NowNs() == kMax);
}

}  // namespace
}  // namespace sluice
