// Counters behind `INFO limiters`: for each limiter command, calls, allowed, denied; for the
// commands that take REFUND n also refunds (calls with REFUND, not counted in calls).
// Thread-safe (StatCounter); owned by ServerState.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

#include "server/core/stat_counter.h"

namespace sluice::server {

enum class LimiterCommand {
  kGcraTake,
  kClThrottle,
  kLeakyTake,
  kWindowTake,
  kSlidingTake,
  kConcAcquire,
  kConcRelease,
  kLimitsTake,
  kCount
};

class LimiterStats {
 public:
  void Record(LimiterCommand cmd, bool allowed);
  void RecordRefund(LimiterCommand cmd);
  // The `# Limiters` INFO section body: "gcra_take_calls:3\r\ngcra_take_allowed:2\r\n..."
  std::string InfoSection() const;
  void Reset();  // CONFIG RESETSTAT

 private:
  struct Counters {
    StatCounter calls, allowed, denied, refunds;
  };
  std::array<Counters, static_cast<size_t>(LimiterCommand::kCount)> counters_;
};

}  // namespace sluice::server
