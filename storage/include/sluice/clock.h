// The one injectable clock. All of Sluice's time (key expiry, limiter decisions) comes from a
// Clock so that tests can replay timed scenarios exactly. Units: nanoseconds since the Unix
// epoch (wall-clock time, so persisted state keeps its meaning across restarts).
#pragma once

#include <atomic>
#include <cstdint>

namespace sluice {

// Thread-safe: NowNs() may be called from any thread concurrently.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t NowNs() const = 0;
  int64_t NowMs() const { return NowNs() / 1000000; }
};

// CLOCK_REALTIME.
class WallClock final : public Clock {
 public:
  int64_t NowNs() const override;
};

// The wall clock by default; can be switched to a manual time and back (the server's
// DEBUG CLOCK SET/ADVANCE/REAL). Thread-safe.
class AdjustableClock final : public Clock {
 public:
  int64_t NowNs() const override;
  void SetManualNs(int64_t unix_ns);  // freezes time at unix_ns
  // Manual mode: moves time by delta_ns; real mode: switches to manual at now + delta_ns.
  // Saturates at the int64 range rather than overflowing.
  void AdvanceNs(int64_t delta_ns);
  void UseReal();  // back to the wall clock
  bool manual() const { return manual_.load(std::memory_order_acquire); }

 private:
  WallClock wall_;
  std::atomic<bool> manual_{false};
  std::atomic<int64_t> manual_ns_{0};
};

}  // namespace sluice
