#include "sluice/clock.h"

#include <ctime>
#include <limits>

namespace sluice {

int64_t WallClock::NowNs() const {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

int64_t AdjustableClock::NowNs() const {
  if (manual_.load(std::memory_order_acquire)) return manual_ns_.load(std::memory_order_acquire);
  return wall_.NowNs();
}

void AdjustableClock::SetManualNs(int64_t unix_ns) {
  manual_ns_.store(unix_ns, std::memory_order_release);
  manual_.store(true, std::memory_order_release);
}

namespace {

// a + b, clamped to the int64 range instead of overflowing.
int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

}  // namespace

void AdjustableClock::AdvanceNs(int64_t delta_ns) {
  if (!manual_.load(std::memory_order_acquire)) {
    SetManualNs(SaturatingAdd(wall_.NowNs(), delta_ns));
    return;
  }
  int64_t current = manual_ns_.load(std::memory_order_acquire);
  while (!manual_ns_.compare_exchange_weak(current, SaturatingAdd(current, delta_ns),
                                           std::memory_order_acq_rel)) {
  }
}

void AdjustableClock::UseReal() { manual_.store(false, std::memory_order_release); }

}  // namespace sluice
