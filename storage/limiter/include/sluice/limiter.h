// Pure limiter math (see ../shared/spec/LIMITERS.md and docs/limiters.md): functions of
// (parameters, previous state, now) -> (decision, next state). No clock reads, no storage, no
// floating point where it changes a decision; all arithmetic is overflow-checked.
// Thread-safe: every function here is pure.
//
// Units: all times are int64 nanoseconds (durations) or ns since the Unix epoch (instants).
// Parameters are built and validated by the Make*Params functions, which return an error message
// naming the argument ("" when valid); the take functions assume valid parameters.
//
// Common rules of every take (LIMITERS.md): `cost` >= 0 (callers validate; a negative cost is
// treated as 0); cost 0 peeks and never writes; a denied call never writes (the one exception is
// WINDOW's TTL repair, see WindowTake); a cost that can never fit (cost > limit) is denied with
// retry_after_ns = -1; a `now` earlier than the stored state is treated as no time having passed;
// state older than its window or period is treated as fresh. Every kPut carries the expiry (ms,
// rounded up) at which the state is fresh again, and reset_after_ns agrees with it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace sluice::limiter {

inline constexpr int64_t kNsPerMs = 1000000;
inline constexpr int64_t kNsPerSecond = 1000000000;
// Durations above this (10 years) are rejected.
inline constexpr int64_t kMaxDurationNs = int64_t{10} * 365 * 24 * 3600 * kNsPerSecond;
inline constexpr int64_t kMaxSlidingLimit = 10000;
// The longest a full bucket may take to refill (GCRA's tau, LEAKY's (burst + 1) * period / rate):
// 100 years. Larger bursts are rejected by Make*Params so that `now + tau` can never overflow.
inline constexpr int64_t kMaxToleranceNs = 10 * kMaxDurationNs;

// The outcome of one call, common to every limiter. Field meanings: LIMITERS.md "Common rules".
struct Decision {
  bool allowed = false;
  int64_t remaining = 0;
  int64_t retry_after_ns = 0;  // 0 when allowed; -1 when it can never be allowed
  int64_t reset_after_ns = 0;  // until the state is fresh again
  int64_t limit = 0;
  int64_t delay_ns = 0;  // LEAKY.TAKE only: how long to hold the request before serving it
};

// Milliseconds rounded up (so a client never retries too early); negative values pass through
// unchanged as -1.
int64_t CeilMs(int64_t ns);
// redis-cell's seconds: whole seconds, plus one if the millisecond part is non-zero
// (1.0004 s -> 1, 1.001 s -> 2); negative values give -1.
int64_t CellSeconds(int64_t ns);

// The stored state a take reads. nullptr means missing or expired. A key still visible during
// the millisecond of its expiry is fine: every take checks times itself.
struct StoredState {
  std::string_view value;     // payload bytes (decimal text for GCRA and WINDOW)
  int64_t expire_at_ms = -1;  // the key's absolute expiry, -1 when it has none (WINDOW reads it)
};

// What a take wants the store to do, atomically with replying.
struct Outcome {
  Decision decision;
  enum class Write { kNone, kPut, kDelete } write = Write::kNone;
  std::string value;          // kPut: the new payload
  int64_t expire_at_ms = -1;  // kPut: absolute expiry in ms (rounded up); -1 for none
  // The stored state could not be decoded (GCRA/WINDOW: not an integer; binary kinds: bad
  // version, truncated or inconsistent); nothing else is valid and nothing is written.
  bool corrupt = false;
};

// ---- GCRA (GCRA.TAKE, CL.THROTTLE). State: decimal TAT in ns since the epoch, as text; a value
// that is not a non-negative decimal int64 is corrupt. Expiry: the new TAT.
struct GcraParams {
  int64_t emission_ns = 0;   // T = period / quota
  int64_t capacity = 0;      // burst capacity; the reply's limit
  int64_t tolerance_ns = 0;  // tau = T * capacity
};
// GCRA.TAKE key quota period [BURST capacity]; capacity 0 means "default: quota".
// Errors: quota <= 0; period outside (0, kMaxDurationNs]; capacity < 0; T < 1 ns;
// tau > kMaxToleranceNs.
std::string MakeGcraParams(int64_t quota, int64_t period_ns, int64_t capacity, GcraParams* out);
// CL.THROTTLE key max_burst count period: limit = max_burst + 1, T = period_s / count.
// Errors: max_burst < 0; count < 1; period_s < 1 or above 10 years; T < 1 ns; tau too large.
std::string MakeCellParams(int64_t max_burst, int64_t count, int64_t period_s, GcraParams* out);
Outcome GcraTake(const GcraParams& p, const StoredState* state, int64_t now_ns, int64_t cost);
// The same take, overwriting *out and reusing out->value's capacity, so a caller that keeps one
// Outcome per thread takes without allocating (the engine's hot path).
void GcraTakeInto(const GcraParams& p, const StoredState* state, int64_t now_ns, int64_t cost,
                  Outcome* out);

// CL.THROTTLE's reply, redis-cell's five integers, mapped from a GcraTake decision made with
// MakeCellParams: limited = !allowed; retry_after_s = -1 when allowed or never allowable, else
// CellSeconds(retry_after_ns); reset_after_s = CellSeconds(reset_after_ns).
struct CellReply {
  int64_t limited = 0;  // 1 when denied
  int64_t limit = 0;
  int64_t remaining = 0;
  int64_t retry_after_s = -1;
  int64_t reset_after_s = 0;
  bool operator==(const CellReply&) const = default;
};
CellReply ToCellReply(const Decision& d);

// ---- LEAKY (nginx limit_req). State: binary, kind ValueKind::kLeaky in the store: version byte,
// the level scaled by the period (exact), the last update and that period. Expiry: the instant
// the level drains to 0. limit = burst + 1.
struct LeakyParams {
  int64_t rate = 0;  // requests leaked per period
  int64_t period_ns = 0;
  int64_t burst = 0;     // requests that may wait beyond the one being served
  int64_t delay = 0;     // excess requests passed without delay (nginx "delay=")
  bool nodelay = false;  // never delay
};
std::string MakeLeakyParams(int64_t rate, int64_t period_ns, int64_t burst, int64_t delay,
                            bool nodelay, LeakyParams* out);
Outcome LeakyTake(const LeakyParams& p, const StoredState* state, int64_t now_ns, int64_t cost);

// ---- WINDOW (fixed window; INCR + EXPIRE made atomic). State: decimal count, as text (Redis
// integer syntax; anything else is corrupt). The window ends at the key's expiry: set on the
// window's first request, kept after. A counter found without expiry gets now + window on any
// call with cost > 0, even a denied one (the count is then rewritten unchanged), so that a full
// counter made by a bare INCR cannot deny forever.
struct WindowParams {
  int64_t limit = 0;
  int64_t window_ns = 0;
};
std::string MakeWindowParams(int64_t limit, int64_t window_ns, WindowParams* out);
Outcome WindowTake(const WindowParams& p, const StoredState* state, int64_t now_ns, int64_t cost);
// As GcraTakeInto: overwrites *out, reusing its capacity.
void WindowTakeInto(const WindowParams& p, const StoredState* state, int64_t now_ns, int64_t cost,
                    Outcome* out);

// ---- SLIDING (exact sliding log). State: binary, kind kSliding: version byte, run count, runs of
// (timestamp delta varint, units varint) oldest first. Expiry: newest entry + window.
struct SlidingParams {
  int64_t limit = 0;  // at most kMaxSlidingLimit
  int64_t window_ns = 0;
};
std::string MakeSlidingParams(int64_t limit, int64_t window_ns, SlidingParams* out);
Outcome SlidingTake(const SlidingParams& p, const StoredState* state, int64_t now_ns, int64_t cost);

// ---- CONC (concurrency with leases). State: binary, kind kConc: version byte, holder count,
// (token length varint, token bytes, lease end varint) per holder. Expiry: the latest lease end.
struct ConcParams {
  int64_t limit = 0;
  int64_t lease_ns = 0;
};
std::string MakeConcParams(int64_t limit, int64_t lease_ns, ConcParams* out);
// Acquires (or renews, if `token` already holds a live lease) one slot for `token`.
Outcome ConcAcquire(const ConcParams& p, const StoredState* state, int64_t now_ns,
                    std::string_view token);
// decision.allowed is true iff `token` held a live lease, which is now released (kPut, or kDelete
// when no holder remains); otherwise nothing is written. decision.limit and remaining are 0
// (release has no parameters); reset_after_ns is until the latest remaining lease ends.
Outcome ConcRelease(const StoredState* state, int64_t now_ns, std::string_view token);

// ---- Refunds (REFUND n on GCRA.TAKE, WINDOW.TAKE, SLIDING.TAKE, LEAKY.TAKE and LIMITS.TAKE).
// Gives back `units` (>= 0; negative is treated as 0) taken earlier, never making the state
// fresher than fresh: GCRA: TAT = max(now, TAT - units * T). WINDOW: count = max(0, count -
// units), the expiry kept (a counter without one gets now + window, as a take would give it).
// SLIDING: the `units` newest admitted units still in the window are removed. LEAKY: level =
// max(0, drained level - units). A missing (or expired) key writes nothing; state that becomes
// fresh is deleted (GCRA, SLIDING, LEAKY; WINDOW keeps its counter, possibly "0", until the
// window ends); units 0 only looks. The decision has allowed = true, retry_after_ns = 0,
// delay_ns = 0, and remaining / reset_after_ns / limit describe the state after the refund.
Outcome GcraRefund(const GcraParams& p, const StoredState* state, int64_t now_ns, int64_t units);
Outcome WindowRefund(const WindowParams& p, const StoredState* state, int64_t now_ns,
                     int64_t units);
Outcome SlidingRefund(const SlidingParams& p, const StoredState* state, int64_t now_ns,
                      int64_t units);
Outcome LeakyRefund(const LeakyParams& p, const StoredState* state, int64_t now_ns, int64_t units);

// ---- Several limits in one decision (LIMITS.TAKE).
inline constexpr size_t kMaxLimitGroups = 16;
// One group's limiter: which algorithm and its validated parameters.
using LimitParams = std::variant<GcraParams, WindowParams, SlidingParams, LeakyParams>;
// The group's take or refund (the functions above, chosen by the variant).
Outcome TakeLimit(const LimitParams& p, const StoredState* state, int64_t now_ns, int64_t cost);
Outcome RefundLimit(const LimitParams& p, const StoredState* state, int64_t now_ns, int64_t units);

// The combined reply of several groups (LIMITERS.md, LIMITS.TAKE): allowed iff every group
// allows; remaining the minimum; retry_after_ns 0 when allowed, else the largest over the
// denying groups (-1, "never", counts as largest); reset_after_ns the largest; limit the binding
// group's; delay_ns the largest when allowed, else 0. `binding` (1-based): when denied, the denying
// group with the largest retry_after; when allowed, the group with the fewest remaining; the lowest
// index on ties. `groups` must not be empty.
struct MultiDecision {
  Decision decision;
  int binding = 0;
};
MultiDecision CombineDecisions(std::span<const Decision> groups);

// All groups of one LIMITS.TAKE, decided under one `now`. states[i] is group i's stored state
// (nullptr when missing); params and states have the same, non-zero, size.
struct MultiOutcome {
  MultiDecision combined;
  // Per group, in order: the outcome whose write the engine applies when `write` is true. When
  // the call is denied, every group's decision is its own command's reply evaluated without
  // consuming (a group that would have allowed says allowed with its current remaining and
  // reset), and nothing is to be written.
  std::vector<Outcome> groups;
  bool write = false;  // apply every group's write (all allowed, or a refund)
  int corrupt = 0;     // 1-based index of a group whose state could not be decoded, else 0
};
// Takes `cost` from every group if every group allows, else from none (and nothing is written,
// not even WINDOW's TTL repair).
MultiOutcome TakeAll(std::span<const LimitParams> params,
                     std::span<const StoredState* const> states, int64_t now_ns, int64_t cost);
// Refunds `units` to every group (each as RefundLimit); the reply's allowed is 1.
MultiOutcome RefundAll(std::span<const LimitParams> params,
                       std::span<const StoredState* const> states, int64_t now_ns, int64_t units);

// Duration text for limiter arguments: a positive integer with an optional unit ms, s, m, h, d
// (none means seconds), at most kMaxDurationNs. Returns "" and sets *ns, or an error message
// naming `arg_name` and quoting the text, e.g. "invalid period '5x': unknown unit (use ms, s, m,
// h or d)". Units are lowercase; signs, spaces, leading zeros and fractions are rejected.
std::string ParseDuration(std::string_view text, std::string_view arg_name, int64_t* ns);

}  // namespace sluice::limiter
