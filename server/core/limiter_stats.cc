#include "server/core/limiter_stats.h"

namespace sluice::server {

namespace {

// INFO field prefixes, indexed by LimiterCommand.
constexpr const char* kNames[] = {
    "gcra_take",    "cl_throttle",  "leaky_take",   "window_take",
    "sliding_take", "conc_acquire", "conc_release", "limits_take",
};

// Whether the command takes REFUND n (and so shows a refunds line).
bool Refundable(size_t i) {
  switch (static_cast<LimiterCommand>(i)) {
    case LimiterCommand::kGcraTake:
    case LimiterCommand::kLeakyTake:
    case LimiterCommand::kWindowTake:
    case LimiterCommand::kSlidingTake:
    case LimiterCommand::kLimitsTake:
      return true;
    default:
      return false;
  }
}
static_assert(std::size(kNames) == static_cast<size_t>(LimiterCommand::kCount));

void AppendField(std::string& out, const char* prefix, const char* suffix, int64_t value) {
  out += prefix;
  out += suffix;
  out += ':';
  out += std::to_string(value);
  out += "\r\n";
}

}  // namespace

void LimiterStats::Record(LimiterCommand cmd, bool allowed) {
  Counters& c = counters_[static_cast<size_t>(cmd)];
  c.calls.fetch_add(1, std::memory_order_relaxed);
  (allowed ? c.allowed : c.denied).fetch_add(1, std::memory_order_relaxed);
}

void LimiterStats::RecordRefund(LimiterCommand cmd) {
  counters_[static_cast<size_t>(cmd)].refunds.fetch_add(1, std::memory_order_relaxed);
}

std::string LimiterStats::InfoSection() const {
  std::string out;
  for (size_t i = 0; i < counters_.size(); ++i) {
    const Counters& c = counters_[i];
    AppendField(out, kNames[i], "_calls", c.calls.load(std::memory_order_relaxed));
    AppendField(out, kNames[i], "_allowed", c.allowed.load(std::memory_order_relaxed));
    AppendField(out, kNames[i], "_denied", c.denied.load(std::memory_order_relaxed));
    if (Refundable(i)) {
      AppendField(out, kNames[i], "_refunds", c.refunds.load(std::memory_order_relaxed));
    }
  }
  return out;
}

void LimiterStats::Reset() {
  for (Counters& c : counters_) {
    c.calls.store(0, std::memory_order_relaxed);
    c.allowed.store(0, std::memory_order_relaxed);
    c.denied.store(0, std::memory_order_relaxed);
    c.refunds.store(0, std::memory_order_relaxed);
  }
}

}  // namespace sluice::server
