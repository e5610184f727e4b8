// Several limits in one decision (LIMITS.TAKE): all or nothing.
//
// In plain words: every group is evaluated against its own state at the same `now`. If every
// group allows, every group consumes; if any group denies, nothing is consumed anywhere, and each
// group reports what its own command would say at that instant without consuming (a group that
// would have allowed is evaluated again with cost 0, keeping allowed = 1). The combined reply
// names the "binding" group: the one that decided the outcome.
#include <string>
#include <type_traits>

#include "internal.h"

namespace sluice::limiter {

Outcome TakeLimit(const LimitParams& p, const StoredState* state, int64_t now_ns, int64_t cost) {
  return std::visit(
      [&](const auto& params) -> Outcome {
        using T = std::decay_t<decltype(params)>;
        if constexpr (std::is_same_v<T, GcraParams>) {
          return GcraTake(params, state, now_ns, cost);
        } else if constexpr (std::is_same_v<T, WindowParams>) {
          return WindowTake(params, state, now_ns, cost);
        } else if constexpr (std::is_same_v<T, SlidingParams>) {
          return SlidingTake(params, state, now_ns, cost);
        } else {
          return LeakyTake(params, state, now_ns, cost);
        }
      },
      p);
}

Outcome RefundLimit(const LimitParams& p, const StoredState* state, int64_t now_ns, int64_t units) {
  return std::visit(
      [&](const auto& params) -> Outcome {
        using T = std::decay_t<decltype(params)>;
        if constexpr (std::is_same_v<T, GcraParams>) {
          return GcraRefund(params, state, now_ns, units);
        } else if constexpr (std::is_same_v<T, WindowParams>) {
          return WindowRefund(params, state, now_ns, units);
        } else if constexpr (std::is_same_v<T, SlidingParams>) {
          return SlidingRefund(params, state, now_ns, units);
        } else {
          return LeakyRefund(params, state, now_ns, units);
        }
      },
      p);
}

namespace {

// Orders retry_after values for "the largest": -1 (never) beats every finite wait.
bool LongerWait(int64_t a, int64_t b) {
  if (a == b) return false;
  if (a < 0) return true;
  if (b < 0) return false;
  return a > b;
}

}  // namespace

MultiDecision CombineDecisions(std::span<const Decision> groups) {
  MultiDecision m;
  Decision& d = m.decision;
  d.allowed = true;
  for (const Decision& g : groups) d.allowed = d.allowed && g.allowed;
  size_t bind = groups.size();
  for (size_t i = 0; i < groups.size(); ++i) {
    const Decision& g = groups[i];
    if (i == 0 || g.remaining < d.remaining) d.remaining = g.remaining;
    if (g.reset_after_ns > d.reset_after_ns) d.reset_after_ns = g.reset_after_ns;
    if (g.delay_ns > d.delay_ns) d.delay_ns = g.delay_ns;
    if (d.allowed) {
      if (bind == groups.size() || g.remaining < groups[bind].remaining) bind = i;
    } else if (!g.allowed) {
      if (bind == groups.size() || LongerWait(g.retry_after_ns, groups[bind].retry_after_ns)) {
        bind = i;
      }
    }
  }
  if (bind == groups.size()) return m;  // no groups: a caller error, reported as denied-nothing
  d.retry_after_ns = d.allowed ? 0 : groups[bind].retry_after_ns;
  if (!d.allowed) d.delay_ns = 0;
  d.limit = groups[bind].limit;
  m.binding = static_cast<int>(bind) + 1;
  return m;
}

namespace {

// Fills in the combined reply from the groups' decisions.
void Combine(MultiOutcome* m) {
  std::vector<Decision> decisions;
  decisions.reserve(m->groups.size());
  for (const Outcome& o : m->groups) decisions.push_back(o.decision);
  m->combined = CombineDecisions(decisions);
}

// Marks the first undecodable group; true when there is one.
bool FindCorrupt(MultiOutcome* m) {
  for (size_t i = 0; i < m->groups.size(); ++i) {
    if (m->groups[i].corrupt) {
      m->corrupt = static_cast<int>(i) + 1;
      m->write = false;
      return true;
    }
  }
  return false;
}

}  // namespace

MultiOutcome TakeAll(std::span<const LimitParams> params,
                     std::span<const StoredState* const> states, int64_t now_ns, int64_t cost) {
  MultiOutcome m;
  m.groups.reserve(params.size());
  bool all_allowed = true;
  for (size_t i = 0; i < params.size(); ++i) {
    m.groups.push_back(TakeLimit(params[i], states[i], now_ns, cost));
    all_allowed = all_allowed && m.groups.back().decision.allowed;
  }
  if (FindCorrupt(&m)) return m;
  if (!all_allowed) {
    for (size_t i = 0; i < params.size(); ++i) {
      Outcome& o = m.groups[i];
      if (o.decision.allowed) {
        // Would have allowed alone: report its state as it stays (a look, cost 0).
        o = TakeLimit(params[i], states[i], now_ns, 0);
        o.decision.allowed = true;
        o.decision.delay_ns = 0;
      }
      o.write = Outcome::Write::kNone;
      o.value.clear();
      o.expire_at_ms = -1;
    }
  }
  m.write = all_allowed;
  Combine(&m);
  return m;
}

MultiOutcome RefundAll(std::span<const LimitParams> params,
                       std::span<const StoredState* const> states, int64_t now_ns, int64_t units) {
  MultiOutcome m;
  m.groups.reserve(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    m.groups.push_back(RefundLimit(params[i], states[i], now_ns, units));
  }
  if (FindCorrupt(&m)) return m;
  m.write = true;
  Combine(&m);
  return m;
}

}  // namespace sluice::limiter
