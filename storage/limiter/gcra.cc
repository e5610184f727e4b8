// GCRA, the generic cell rate algorithm (GCRA.TAKE and CL.THROTTLE).
//
// In plain words: a limiter of `quota` units per `period` lets one unit through every emission
// interval T = period / quota, and tolerates bursts of up to `capacity` units. Rather than a
// counter refilled by a timer, GCRA keeps one instant, the theoretical arrival time (TAT): the
// time at which the limiter would be completely idle again if nothing else arrived. Each unit
// taken pushes the TAT forward by T. A request is allowed while the TAT it would produce lies no
// more than tau = T * capacity ahead of now, i.e. while the burst budget is not exhausted.
// A TAT in the past means "idle"; it is moved up to now, so idle time never banks extra credit.
#include <string>

#include "internal.h"

namespace sluice::limiter {

using internal::ClampNonNeg;
using internal::i128;

namespace {

// Shared tail of both Make*Params: T and tau from validated inputs. `burst_arg` names the
// argument to blame when tau is too large.
std::string FinishGcraParams(int64_t emission_ns, int64_t capacity, const char* burst_error,
                             GcraParams* out) {
  int64_t tau = 0;
  if (__builtin_mul_overflow(emission_ns, capacity, &tau) || tau > kMaxToleranceNs) {
    return burst_error;
  }
  out->emission_ns = emission_ns;
  out->capacity = capacity;
  out->tolerance_ns = tau;
  return "";
}

}  // namespace

std::string MakeGcraParams(int64_t quota, int64_t period_ns, int64_t capacity, GcraParams* out) {
  if (quota <= 0) return "invalid quota: must be a positive integer";
  if (period_ns <= 0 || period_ns > kMaxDurationNs) {
    return "invalid period: must be a positive duration of at most 10 years";
  }
  if (capacity < 0) return "invalid BURST: must be a positive integer";
  int64_t emission_ns = period_ns / quota;
  if (emission_ns < 1) {
    return "invalid period: rate above 1 per nanosecond (period / quota < 1ns)";
  }
  return FinishGcraParams(emission_ns, capacity == 0 ? quota : capacity,
                          "invalid BURST: too large for the rate (capacity * period / "
                          "quota above 100 years)",
                          out);
}

std::string MakeCellParams(int64_t max_burst, int64_t count, int64_t period_s, GcraParams* out) {
  if (max_burst < 0) return "invalid max_burst: must be a non-negative integer";
  if (count < 1) return "invalid count: must be a positive integer";
  if (period_s < 1) return "invalid period: must be a positive integer (seconds)";
  if (period_s > kMaxDurationNs / kNsPerSecond) {
    return "invalid period: above the maximum of 10 years";
  }
  if (max_burst == internal::kI64Max) return "invalid max_burst: too large";
  int64_t emission_ns = period_s * kNsPerSecond / count;
  if (emission_ns < 1) {
    return "invalid count: rate above 1 per nanosecond (period / count < 1ns)";
  }
  return FinishGcraParams(emission_ns, max_burst + 1,
                          "invalid max_burst: too large for the rate ((max_burst + 1) * period / "
                          "count above 100 years)",
                          out);
}

void GcraTakeInto(const GcraParams& p, const StoredState* state, int64_t now_ns, int64_t cost,
                  Outcome* out) {
  Outcome& o = *out;
  internal::ResetOutcome(&o, p.capacity);
  if (cost < 0) cost = 0;
  i128 now = now_ns;
  i128 tat = now;
  if (state != nullptr) {
    int64_t stored = 0;
    if (!internal::ParseDecimal(state->value, &stored) || stored < 0) {
      {
        o.corrupt = true;
        return;
      }
    }
    if (stored > tat) tat = stored;
  }
  const i128 t = p.emission_ns;
  const i128 tau = p.tolerance_ns;
  Decision& d = o.decision;

  // Units that fit between TAT_after and the end of the tolerance window.
  auto remaining = [&](i128 tat_after) {
    i128 r = (now + tau - tat_after) / t;
    return r > p.capacity ? p.capacity : ClampNonNeg(r);
  };

  if (cost > p.capacity) {  // More than a full bucket: no amount of waiting helps.
    d.allowed = false;
    d.remaining = remaining(tat);
    d.retry_after_ns = -1;
    d.reset_after_ns = ClampNonNeg(tat - now);
    return;
  }
  // cost <= capacity, so T * cost <= tau fits; tat fits in int64, so new_tat fits in i128.
  i128 new_tat = tat + t * cost;
  if (new_tat - tau <= now) {
    d.allowed = true;
    d.remaining = remaining(new_tat);
    d.retry_after_ns = 0;
    d.reset_after_ns = ClampNonNeg(new_tat - now);
    if (cost > 0) {
      int64_t stored = ClampNonNeg(new_tat);
      o.write = Outcome::Write::kPut;
      internal::AssignDecimal(&o.value, stored);
      o.expire_at_ms = internal::ExpireAtMs(stored);
    }
  } else {
    d.allowed = false;
    d.remaining = remaining(tat);
    d.retry_after_ns = ClampNonNeg(new_tat - tau - now);
    d.reset_after_ns = ClampNonNeg(tat - now);
  }
}

Outcome GcraTake(const GcraParams& p, const StoredState* state, int64_t now_ns, int64_t cost) {
  Outcome o;
  GcraTakeInto(p, state, now_ns, cost, &o);
  return o;
}

Outcome GcraRefund(const GcraParams& p, const StoredState* state, int64_t now_ns, int64_t units) {
  Outcome o = internal::OutcomeWithLimit(p.capacity);
  Decision& d = o.decision;
  d.allowed = true;
  d.remaining = p.capacity;
  if (state == nullptr) return o;
  int64_t stored = 0;
  if (!internal::ParseDecimal(state->value, &stored) || stored < 0) {
    return internal::CorruptOutcome(p.capacity);
  }
  if (units < 0) units = 0;
  const i128 now = now_ns;
  const i128 t = p.emission_ns;
  // units * T < 2^63 * 2^59: no overflow in 128 bits. Never fresher than fresh (TAT = now).
  i128 tat = stored > now ? static_cast<i128>(stored) - t * units : now;
  if (tat < now) tat = now;
  const i128 r = (now + p.tolerance_ns - tat) / t;
  d.remaining = r > p.capacity ? p.capacity : ClampNonNeg(r);
  d.reset_after_ns = ClampNonNeg(tat - now);
  if (units == 0) return o;
  if (tat > now) {
    int64_t next = ClampNonNeg(tat);
    o.write = Outcome::Write::kPut;
    internal::AssignDecimal(&o.value, next);
    o.expire_at_ms = internal::ExpireAtMs(next);
  } else {
    o.write = Outcome::Write::kDelete;  // fresh again: a fresh GCRA is a missing key
  }
  return o;
}

CellReply ToCellReply(const Decision& d) {
  CellReply r;
  r.limited = d.allowed ? 0 : 1;
  r.limit = d.limit;
  r.remaining = d.remaining;
  r.retry_after_s = (d.allowed || d.retry_after_ns < 0) ? -1 : CellSeconds(d.retry_after_ns);
  r.reset_after_s = CellSeconds(d.reset_after_ns);
  return r;
}

}  // namespace sluice::limiter
