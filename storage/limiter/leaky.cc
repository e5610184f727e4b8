// LEAKY: nginx's limit_req as a bucket that leaks continuously.
//
// In plain words: every request pours `cost` units into a bucket that drains at `rate` units per
// `period`. A request is allowed if, after draining for the time since the last update and adding
// its cost, the bucket holds at most burst + 1 units (the one being served plus `burst` waiting).
// The level over 1 is nginx's "excess"; a request that finds excess beyond `delay` should be held
// for as long as it takes the bucket to drain back to `delay` (nginx's delay), unless NODELAY.
//
// Exact arithmetic: the level is kept scaled by the period, in units * period_ns (a 128-bit
// integer), so draining for `elapsed` ns removes exactly elapsed * rate and no rounding ever
// accumulates. Bounds: the level never exceeds INT64_MAX * period (<= 2^63 * 2^59), and
// elapsed * rate is only formed when it is below the level, so nothing overflows 128 bits.
//
// Stored form (33 bytes): version byte 1, the scaled level as 16 bytes little-endian, the instant
// of the last update (ns since the epoch) and the period the level is scaled by, 8 bytes each. A
// later call with another period rescales the level (rounding up, towards "fuller").
#include <string>

#include "internal.h"

namespace sluice::limiter {

using internal::CeilDiv;
using internal::ClampNonNeg;
using internal::i128;

namespace {

constexpr char kLeakyVersion = 1;
constexpr size_t kLeakySize = 1 + 16 + 8 + 8;

struct LeakyState {
  i128 level = 0;  // units * period_ns
  int64_t last_ns = 0;
  int64_t period_ns = 0;
};

std::string EncodeLeaky(const LeakyState& s) {
  std::string out;
  out.reserve(kLeakySize);
  out.push_back(kLeakyVersion);
  unsigned __int128 level = static_cast<unsigned __int128>(s.level);
  internal::PutFixed64(&out, static_cast<uint64_t>(level));
  internal::PutFixed64(&out, static_cast<uint64_t>(level >> 64));
  internal::PutFixed64(&out, static_cast<uint64_t>(s.last_ns));
  internal::PutFixed64(&out, static_cast<uint64_t>(s.period_ns));
  return out;
}

bool DecodeLeaky(std::string_view in, LeakyState* s) {
  if (in.size() != kLeakySize || in[0] != kLeakyVersion) return false;
  in.remove_prefix(1);
  uint64_t lo = 0, hi = 0, last = 0, period = 0;
  internal::GetFixed64(&in, &lo);
  internal::GetFixed64(&in, &hi);
  internal::GetFixed64(&in, &last);
  internal::GetFixed64(&in, &period);
  if (hi >> 63 != 0 || last > static_cast<uint64_t>(internal::kI64Max) || period == 0 ||
      period > static_cast<uint64_t>(kMaxDurationNs)) {
    return false;
  }
  s->level = static_cast<i128>((static_cast<unsigned __int128>(hi) << 64) | lo);
  s->last_ns = static_cast<int64_t>(last);
  s->period_ns = static_cast<int64_t>(period);
  // A level above INT64_MAX units was never written by us.
  if (s->level / s->period_ns > internal::kI64Max) return false;
  return true;
}

// The same level expressed in units * to_period, rounded up.
i128 Rescale(i128 level, int64_t from_period, int64_t to_period) {
  i128 whole = level / from_period;
  i128 part = level % from_period;
  return whole * to_period + CeilDiv(part * to_period, from_period);
}

}  // namespace

std::string MakeLeakyParams(int64_t rate, int64_t period_ns, int64_t burst, int64_t delay,
                            bool nodelay, LeakyParams* out) {
  if (rate <= 0) return "invalid rate: must be a positive integer";
  if (period_ns <= 0 || period_ns > kMaxDurationNs) {
    return "invalid period: must be a positive duration of at most 10 years";
  }
  if (rate > period_ns) return "invalid rate: above 1 per nanosecond (rate / period > 1 per ns)";
  if (burst < 0) return "invalid BURST: must be a non-negative integer";
  if (burst == internal::kI64Max) return "invalid BURST: too large";
  if (delay < 0) return "invalid DELAY: must be a non-negative integer";
  // The time a full bucket takes to drain, like GCRA's tau, must stay representable.
  if (CeilDiv(static_cast<i128>(burst + 1) * period_ns, rate) > kMaxToleranceNs) {
    return "invalid BURST: too large for the rate ((burst + 1) * period / rate above 100 years)";
  }
  out->rate = rate;
  out->period_ns = period_ns;
  out->burst = burst;
  out->delay = delay;
  out->nodelay = nodelay;
  return "";
}

Outcome LeakyTake(const LeakyParams& p, const StoredState* state, int64_t now_ns, int64_t cost) {
  const int64_t limit = p.burst + 1;
  Outcome o = internal::OutcomeWithLimit(limit);
  if (cost < 0) cost = 0;
  const i128 period = p.period_ns;
  const i128 rate = p.rate;
  const i128 full = static_cast<i128>(limit) * period;  // the largest allowed level
  const i128 now = now_ns;

  // `t` is the effective now: a clock that stepped back behind the last update has not moved.
  i128 t = now;
  i128 level = 0;
  if (state != nullptr) {
    LeakyState s;
    if (!DecodeLeaky(state->value, &s)) return internal::CorruptOutcome(limit);
    level = s.period_ns == p.period_ns ? s.level : Rescale(s.level, s.period_ns, p.period_ns);
    if (s.last_ns > t) t = s.last_ns;
    i128 elapsed = t - s.last_ns;
    // Drain: remove elapsed * rate, but not below empty.
    if (elapsed >= CeilDiv(level, rate)) {
      level = 0;
    } else {
      level -= elapsed * rate;
    }
  }
  Decision& d = o.decision;
  // Whole units of room left, and the time until the bucket is empty, for a given level.
  auto remaining = [&](i128 lv) { return lv >= full ? 0 : ClampNonNeg((full - lv) / period); };
  auto reset = [&](i128 lv) { return ClampNonNeg(t + CeilDiv(lv, rate) - now); };

  if (cost > limit) {
    d.allowed = false;
    d.remaining = remaining(level);
    d.retry_after_ns = -1;
    d.reset_after_ns = reset(level);
    return o;
  }
  i128 new_level = level + static_cast<i128>(cost) * period;
  if (new_level <= full) {
    d.allowed = true;
    d.remaining = remaining(new_level);
    d.retry_after_ns = 0;
    d.reset_after_ns = reset(new_level);
    // nginx: excess = level - 1; hold the request for (excess - delay) / rate.
    i128 excess = new_level - period;
    i128 undelayed = static_cast<i128>(p.delay) * period;
    if (!p.nodelay && excess > undelayed)
      d.delay_ns = ClampNonNeg(CeilDiv(excess - undelayed, rate));
    if (cost > 0) {
      LeakyState next;
      next.level = new_level;
      next.last_ns = ClampNonNeg(t);
      next.period_ns = p.period_ns;
      o.write = Outcome::Write::kPut;
      o.value = EncodeLeaky(next);
      o.expire_at_ms = internal::ExpireAtMs(t + CeilDiv(new_level, rate));
    }
  } else {
    d.allowed = false;
    d.remaining = remaining(level);
    // Wait until the level has drained enough for the cost to fit.
    d.retry_after_ns = ClampNonNeg(t + CeilDiv(new_level - full, rate) - now);
    d.reset_after_ns = reset(level);
  }
  return o;
}

Outcome LeakyRefund(const LeakyParams& p, const StoredState* state, int64_t now_ns, int64_t units) {
  const int64_t limit = p.burst + 1;
  Outcome o = internal::OutcomeWithLimit(limit);
  Decision& d = o.decision;
  d.allowed = true;
  d.remaining = limit;
  if (state == nullptr) return o;
  LeakyState s;
  if (!DecodeLeaky(state->value, &s)) return internal::CorruptOutcome(limit);
  if (units < 0) units = 0;
  const i128 period = p.period_ns;
  const i128 rate = p.rate;
  i128 level = s.period_ns == p.period_ns ? s.level : Rescale(s.level, s.period_ns, p.period_ns);
  const i128 t = s.last_ns > now_ns ? s.last_ns : now_ns;
  const i128 elapsed = t - s.last_ns;
  level = elapsed >= CeilDiv(level, rate) ? 0 : level - elapsed * rate;
  // units * period < 2^63 * 2^59: no overflow in 128 bits.
  const i128 give_back = static_cast<i128>(units) * period;
  level = level > give_back ? level - give_back : 0;
  const i128 full = static_cast<i128>(limit) * period;
  d.remaining = level >= full ? 0 : ClampNonNeg((full - level) / period);
  d.reset_after_ns = ClampNonNeg(t + CeilDiv(level, rate) - now_ns);
  if (units == 0) return o;
  if (level == 0) {
    o.write = Outcome::Write::kDelete;
    return o;
  }
  LeakyState next;
  next.level = level;
  next.last_ns = ClampNonNeg(t);
  next.period_ns = p.period_ns;
  o.write = Outcome::Write::kPut;
  o.value = EncodeLeaky(next);
  o.expire_at_ms = internal::ExpireAtMs(t + CeilDiv(level, rate));
  return o;
}

}  // namespace sluice::limiter
