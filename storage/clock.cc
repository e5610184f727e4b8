#include "sluice/clock.h"

#include <ctime>

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

void AdjustableClock::AdvanceNs(int64_t delta_ns) {
  if (!manual_.load(std::memory_order_acquire)) {
    SetManualNs(wall_.NowNs() + delta_ns);
    return;
  }
  manual_ns_.fetch_add(delta_ns, std::memory_order_acq_rel);
}

void AdjustableClock::UseReal() { manual_.store(false, std::memory_order_release); }

}  // namespace sluice
