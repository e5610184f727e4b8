// SLIDING: an exact sliding log.
//
// In plain words: the key remembers when each admitted unit was admitted. A request is allowed if
// the units admitted during the last `window` (the interval (now - window, now]) plus its cost
// stay within `limit`, so no interval of length `window` ever holds more than `limit` units.
// Entries older than the window are dropped on every write. When denied, the caller must wait
// until enough of the oldest entries have left the window for the cost to fit.
//
// Stored form: version byte 1, varint number of runs, then the runs oldest first, each a varint
// timestamp and a varint count of units admitted at that instant; the first timestamp is absolute
// (ns since the epoch), the others are deltas (> 0) from the previous run. Units admitted at the
// same instant share a run. Because limit <= 10000 there are at most 10000 runs, a few bytes each.
// The run count makes any truncation detectable.
#include <string>
#include <vector>

#include "internal.h"

namespace sluice::limiter {

using internal::ClampNonNeg;
using internal::i128;

namespace {

constexpr char kSlidingVersion = 1;

struct Run {
  int64_t ts = 0;     // ns since the epoch
  int64_t count = 0;  // units admitted at ts, >= 1
};

std::string EncodeSliding(const std::vector<Run>& runs) {
  std::string out;
  out.push_back(kSlidingVersion);
  internal::PutVarint(&out, runs.size());
  int64_t prev = 0;
  for (const Run& r : runs) {
    internal::PutVarint(&out, static_cast<uint64_t>(r.ts - prev));
    internal::PutVarint(&out, static_cast<uint64_t>(r.count));
    prev = r.ts;
  }
  return out;
}

bool DecodeSliding(std::string_view in, std::vector<Run>* runs) {
  if (in.empty() || in[0] != kSlidingVersion) return false;
  in.remove_prefix(1);
  uint64_t n = 0;
  // Every run takes at least 2 bytes, which bounds n before anything is allocated.
  if (!internal::GetVarint(&in, &n) || n > in.size() / 2) return false;
  runs->reserve(n);
  int64_t ts = 0;
  int64_t total = 0;
  for (uint64_t i = 0; i < n; ++i) {
    int64_t delta = 0, count = 0;
    if (!internal::GetVarintI64(&in, &delta) || !internal::GetVarintI64(&in, &count)) return false;
    if ((!runs->empty() && delta == 0) || count == 0) return false;
    if (__builtin_add_overflow(ts, delta, &ts) || __builtin_add_overflow(total, count, &total)) {
      return false;
    }
    runs->push_back({ts, count});
  }
  return in.empty();
}

}  // namespace

std::string MakeSlidingParams(int64_t limit, int64_t window_ns, SlidingParams* out) {
  if (limit <= 0) return "invalid limit: must be a positive integer";
  if (limit > kMaxSlidingLimit) {
    return "invalid limit: at most 10000 for SLIDING.TAKE; use GCRA.TAKE for larger limits";
  }
  if (window_ns <= 0 || window_ns > kMaxDurationNs) {
    return "invalid window: must be a positive duration of at most 10 years";
  }
  out->limit = limit;
  out->window_ns = window_ns;
  return "";
}

Outcome SlidingTake(const SlidingParams& p, const StoredState* state, int64_t now_ns,
                    int64_t cost) {
  Outcome o = internal::OutcomeWithLimit(p.limit);
  if (cost < 0) cost = 0;
  std::vector<Run> runs;
  if (state != nullptr && !DecodeSliding(state->value, &runs)) {
    return internal::CorruptOutcome(p.limit);
  }
  // The effective now: a clock that stepped back behind the newest entry has not moved.
  int64_t t = now_ns;
  if (!runs.empty() && runs.back().ts > t) t = runs.back().ts;
  // Keep only entries inside (t - window, t].
  const i128 oldest_kept = static_cast<i128>(t) - p.window_ns;
  size_t first = 0;
  while (first < runs.size() && runs[first].ts <= oldest_kept) ++first;
  runs.erase(runs.begin(), runs.begin() + first);
  i128 in_window = 0;
  for (const Run& r : runs) in_window += r.count;

  const i128 now = now_ns;
  auto reset = [&]() { return runs.empty() ? 0 : ClampNonNeg(runs.back().ts + p.window_ns - now); };
  auto remaining = [&](i128 used) { return ClampNonNeg(p.limit - used); };
  Decision& d = o.decision;

  if (cost > p.limit) {
    d.allowed = false;
    d.remaining = remaining(in_window);
    d.retry_after_ns = -1;
    d.reset_after_ns = reset();
    return o;
  }
  if (in_window + cost <= p.limit) {
    d.allowed = true;
    d.retry_after_ns = 0;
    d.remaining = remaining(in_window + cost);
    if (cost > 0) {
      if (!runs.empty() && runs.back().ts == t) {
        runs.back().count += cost;
      } else {
        runs.push_back({t, cost});
      }
      o.write = Outcome::Write::kPut;
      o.value = EncodeSliding(runs);
      o.expire_at_ms = internal::ExpireAtMs(static_cast<i128>(t) + p.window_ns);
    }
    d.reset_after_ns = reset();
    return o;
  }
  // Denied: find the run whose leaving the window frees enough units for the cost.
  d.allowed = false;
  d.remaining = remaining(in_window);
  d.reset_after_ns = reset();
  const i128 need = in_window + cost - p.limit;
  i128 freed = 0;
  for (const Run& r : runs) {
    freed += r.count;
    if (freed >= need) {
      d.retry_after_ns = ClampNonNeg(static_cast<i128>(r.ts) + p.window_ns - now);
      break;
    }
  }
  return o;
}

Outcome SlidingRefund(const SlidingParams& p, const StoredState* state, int64_t now_ns,
                      int64_t units) {
  Outcome o = internal::OutcomeWithLimit(p.limit);
  Decision& d = o.decision;
  d.allowed = true;
  d.remaining = p.limit;
  if (state == nullptr) return o;
  std::vector<Run> runs;
  if (!DecodeSliding(state->value, &runs)) return internal::CorruptOutcome(p.limit);
  if (units < 0) units = 0;
  int64_t t = now_ns;
  if (!runs.empty() && runs.back().ts > t) t = runs.back().ts;
  const i128 oldest_kept = static_cast<i128>(t) - p.window_ns;
  size_t first = 0;
  while (first < runs.size() && runs[first].ts <= oldest_kept) ++first;
  runs.erase(runs.begin(), runs.begin() + first);
  // Remove the newest units first.
  int64_t left = units;
  while (left > 0 && !runs.empty()) {
    Run& newest = runs.back();
    const int64_t take = newest.count < left ? newest.count : left;
    newest.count -= take;
    left -= take;
    if (newest.count == 0) runs.pop_back();
  }
  i128 in_window = 0;
  for (const Run& r : runs) in_window += r.count;
  d.remaining = ClampNonNeg(p.limit - in_window);
  d.reset_after_ns =
      runs.empty() ? 0 : ClampNonNeg(static_cast<i128>(runs.back().ts) + p.window_ns - now_ns);
  if (units == 0) return o;
  if (runs.empty()) {
    o.write = Outcome::Write::kDelete;
  } else {
    o.write = Outcome::Write::kPut;
    o.value = EncodeSliding(runs);
    o.expire_at_ms = internal::ExpireAtMs(static_cast<i128>(runs.back().ts) + p.window_ns);
  }
  return o;
}

}  // namespace sluice::limiter
