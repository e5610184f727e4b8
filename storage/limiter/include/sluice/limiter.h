// Pure limiter math (see ../shared/spec/LIMITERS.md and docs/limiters.md): functions of
// (parameters, previous state, now) -> (decision, next state). No clock reads, no storage, no
// floating point where it changes a decision; all arithmetic is overflow-checked.
// Thread-safe: every function here is pure.
//
// Units: all times are int64 nanoseconds (durations) or ns since the Unix epoch (instants).
// Parameters are built and validated by the Make*Params functions, which return an error message
// naming the argument ("" when valid); the take functions assume valid parameters.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::limiter {

inline constexpr int64_t kNsPerMs = 1000000;
inline constexpr int64_t kNsPerSecond = 1000000000;
// Durations above this (10 years) are rejected.
inline constexpr int64_t kMaxDurationNs = int64_t{10} * 365 * 24 * 3600 * kNsPerSecond;
inline constexpr int64_t kMaxSlidingLimit = 10000;

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
// redis-cell's seconds: whole seconds, plus one if the millisecond part is non-zero.
int64_t CellSeconds(int64_t ns);

// The stored state a take reads. nullptr means missing or expired.
struct StoredState {
  std::string_view value;     // payload bytes (decimal text for GCRA and WINDOW)
  int64_t expire_at_ms = -1;  // the key's absolute expiry, -1 when it has none
};

// What a take wants the store to do, atomically with replying.
struct Outcome {
  Decision decision;
  enum class Write { kNone, kPut, kDelete } write = Write::kNone;
  std::string value;          // kPut: the new payload
  int64_t expire_at_ms = -1;  // kPut: absolute expiry in ms (rounded up); -1 for none
  bool corrupt = false;       // the stored state could not be decoded; nothing else is valid
};

// ---- GCRA (GCRA.TAKE, CL.THROTTLE). State: decimal TAT in ns since the epoch, as text.
struct GcraParams {
  int64_t emission_ns = 0;   // T = period / quota
  int64_t capacity = 0;      // burst capacity; the reply's limit
  int64_t tolerance_ns = 0;  // tau = T * capacity
};
// GCRA.TAKE key quota period [BURST capacity]; capacity 0 means "default: quota".
std::string MakeGcraParams(int64_t quota, int64_t period_ns, int64_t capacity, GcraParams* out);
// CL.THROTTLE key max_burst count period: limit = max_burst + 1, T = period_s / count.
std::string MakeCellParams(int64_t max_burst, int64_t count, int64_t period_s, GcraParams* out);
Outcome GcraTake(const GcraParams& p, const StoredState* state, int64_t now_ns, int64_t cost);

// ---- LEAKY (nginx limit_req). State: binary, kind ValueKind::kLeaky in the store.
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

// ---- WINDOW (fixed window; INCR + EXPIRE made atomic). State: decimal count, as text.
struct WindowParams {
  int64_t limit = 0;
  int64_t window_ns = 0;
};
std::string MakeWindowParams(int64_t limit, int64_t window_ns, WindowParams* out);
Outcome WindowTake(const WindowParams& p, const StoredState* state, int64_t now_ns, int64_t cost);

// ---- SLIDING (exact sliding log). State: binary, kind kSliding.
struct SlidingParams {
  int64_t limit = 0;  // at most kMaxSlidingLimit
  int64_t window_ns = 0;
};
std::string MakeSlidingParams(int64_t limit, int64_t window_ns, SlidingParams* out);
Outcome SlidingTake(const SlidingParams& p, const StoredState* state, int64_t now_ns, int64_t cost);

// ---- CONC (concurrency with leases). State: binary, kind kConc.
struct ConcParams {
  int64_t limit = 0;
  int64_t lease_ns = 0;
};
std::string MakeConcParams(int64_t limit, int64_t lease_ns, ConcParams* out);
// Acquires (or renews, if `token` already holds a live lease) one slot for `token`.
Outcome ConcAcquire(const ConcParams& p, const StoredState* state, int64_t now_ns,
                    std::string_view token);
// decision.allowed is true iff `token` held a live lease, which is now released.
Outcome ConcRelease(const StoredState* state, int64_t now_ns, std::string_view token);

// Duration text for limiter arguments: a positive integer with an optional unit ms, s, m, h, d
// (none means seconds), at most kMaxDurationNs. Returns "" and sets *ns, or an error message
// naming `arg_name`.
std::string ParseDuration(std::string_view text, std::string_view arg_name, int64_t* ns);

}  // namespace sluice::limiter
