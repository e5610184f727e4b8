// WINDOW: a fixed window, the INCR + EXPIRE pattern made atomic.
//
// In plain words: the key holds how many units were taken in the current window as a decimal
// integer (so INCR, GET and existing INCR + EXPIRE keys interoperate) and expires when the window
// ends. The first request of a window creates the key with expiry now + window; later requests
// add to the count and keep that expiry. A request is allowed while count + cost <= limit. When
// the key expires the window is over and the next request starts a new one.
//
// A counter found without an expiry (made by a bare INCR) is given one, now + window, by the next
// call with a non-zero cost, even a denied one: otherwise a full counter would deny forever. That
// write only sets the TTL; the count is left unchanged.
#include <string>

#include "internal.h"

namespace sluice::limiter {

using internal::ClampNonNeg;
using internal::i128;

std::string MakeWindowParams(int64_t limit, int64_t window_ns, WindowParams* out) {
  if (limit <= 0) return "invalid limit: must be a positive integer";
  if (window_ns <= 0 || window_ns > kMaxDurationNs) {
    return "invalid window: must be a positive duration of at most 10 years";
  }
  out->limit = limit;
  out->window_ns = window_ns;
  return "";
}

void WindowTakeInto(const WindowParams& p, const StoredState* state, int64_t now_ns, int64_t cost,
                    Outcome* out) {
  Outcome& o = *out;
  internal::ResetOutcome(&o, p.limit);
  if (cost < 0) cost = 0;
  const i128 now = now_ns;
  int64_t count = 0;
  int64_t expire_ms = -1;
  bool counting = false;  // a live counter exists (else this call starts a new window)
  if (state != nullptr) {
    if (!internal::ParseDecimal(state->value, &count)) {
      o.corrupt = true;
      return;
    }
    expire_ms = state->expire_at_ms;
    counting = true;
    // The window ends exactly at the key's expiry instant, even while the store still shows the
    // key during its last millisecond (Redis expires a key only once now_ms > expiry).
    if (expire_ms >= 0 && static_cast<i128>(expire_ms) * kNsPerMs <= now) {
      count = 0;
      expire_ms = -1;
      counting = false;
    }
  }
  // The expiry a write would set: the existing one, or the end of a window starting now.
  const bool has_expiry = expire_ms >= 0;
  const int64_t end_ms = has_expiry ? expire_ms : internal::ExpireAtMs(now + p.window_ns);
  const int64_t until_end = ClampNonNeg(static_cast<i128>(end_ms) * kNsPerMs - now);
  auto remaining = [&](i128 c) { return ClampNonNeg(static_cast<i128>(p.limit) - c); };

  Decision& d = o.decision;
  const i128 new_count = static_cast<i128>(count) + cost;
  if (cost <= p.limit && new_count <= p.limit) {
    d.allowed = true;
    d.remaining = remaining(new_count);
    d.retry_after_ns = 0;
    // Fresh state (no counter before or after this call) resets in 0, as the key's PTTL says.
    d.reset_after_ns = (counting || cost > 0) ? until_end : 0;
    if (cost > 0) {
      o.write = Outcome::Write::kPut;
      internal::AssignDecimal(&o.value, static_cast<int64_t>(new_count));
      o.expire_at_ms = end_ms;
    }
    return;
  }
  d.allowed = false;
  d.remaining = remaining(count);
  // Denied until the window ends (at least 1 ns: the store's ms clock may lag the expiry).
  d.retry_after_ns = cost > p.limit ? -1 : (until_end > 0 ? until_end : 1);
  d.reset_after_ns = counting ? until_end : 0;
  if (counting && !has_expiry && cost > 0) {  // TTL repair, see the top of this file.
    o.write = Outcome::Write::kPut;
    o.value.assign(state->value);
    o.expire_at_ms = end_ms;
  }
}

Outcome WindowTake(const WindowParams& p, const StoredState* state, int64_t now_ns, int64_t cost) {
  Outcome o;
  WindowTakeInto(p, state, now_ns, cost, &o);
  return o;
}

Outcome WindowRefund(const WindowParams& p, const StoredState* state, int64_t now_ns,
                     int64_t units) {
  Outcome o = internal::OutcomeWithLimit(p.limit);
  Decision& d = o.decision;
  d.allowed = true;
  d.remaining = p.limit;
  if (state == nullptr) return o;
  int64_t count = 0;
  if (!internal::ParseDecimal(state->value, &count)) return internal::CorruptOutcome(p.limit);
  const i128 now = now_ns;
  const int64_t expire_ms = state->expire_at_ms;
  // The window is over at the key's expiry instant (see WindowTakeInto): nothing to refund.
  if (expire_ms >= 0 && static_cast<i128>(expire_ms) * kNsPerMs <= now) return o;
  if (units < 0) units = 0;
  // A count at or below 0 (a DECR'd counter) is already as fresh as it gets.
  const int64_t next = count > units ? count - units : (count < 0 ? count : 0);
  const int64_t end_ms = expire_ms >= 0 ? expire_ms : internal::ExpireAtMs(now + p.window_ns);
  d.remaining = ClampNonNeg(static_cast<i128>(p.limit) - next);
  d.reset_after_ns = ClampNonNeg(static_cast<i128>(end_ms) * kNsPerMs - now);
  if (units > 0) {
    o.write = Outcome::Write::kPut;
    internal::AssignDecimal(&o.value, next);
    o.expire_at_ms = end_ms;
  }
  return o;
}

}  // namespace sluice::limiter
