// Per-command and per-error statistics: INFO commandstats (calls, usec, rejected_calls,
// failed_calls of every command and subcommand, as Redis 7.0 counts them) and INFO errorstats
// (error replies by their first word, "ERR", "WRONGTYPE", ...).
//
// Thread-safety: Record* may be called from any thread; each thread counts into its own block
// (no shared cache line on the command path: relaxed stores to memory only that thread writes),
// registered once per thread and kept for the process's life. Sum* and Reset* read and clear
// every block from any thread; a count made during a Reset may survive it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/core/command_latency.h"

namespace sluice::server {

// The most commands and subcommands a table may hold (CommandSpec::id below it).
inline constexpr size_t kMaxCommandStats = 1024;

namespace command_stats_detail {
struct Counters {
  std::atomic<uint64_t> calls{0}, ticks{0}, rejected{0}, failed{0};
};
// Registers this thread's block (once per thread) and returns its kMaxCommandStats counters.
Counters* RegisterThisThread();
// This thread's counters, or null before its first count. Constant-initialised: reading it is
// one TLS load, with no guard or wrapper call (the command path's cost).
inline thread_local Counters* t_counters = nullptr;
inline Counters& CountersFor(size_t command_id) {
  Counters* counters = t_counters;
  if (__builtin_expect(counters == nullptr, 0)) counters = RegisterThisThread();
  return counters[command_id];
}
// Only its thread adds (load + store, no read-modify-write instruction); readers sum with
// relaxed loads.
inline void Add(std::atomic<uint64_t>& counter, uint64_t n) {
  counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}
// True once the tick source is known to be the TSC (set by its first use, at the start).
inline std::atomic<bool> g_ticks_are_tsc{false};
uint64_t CommandTicksSlow();
}  // namespace command_stats_detail

// A command's duration is measured in ticks: the CPU's time-stamp counter where it is invariant
// (x86 with constant_tsc and nonstop_tsc: one instruction, where a clock read costs a vDSO call
// on every command), else steady_clock nanoseconds. Ticks turn into microseconds only when the
// statistics are read, at the rate measured since the process started. Inline: the TSC case is
// a flag test and RDTSC.
inline uint64_t CommandTicksNow() {
#if defined(__x86_64__)
  if (command_stats_detail::g_ticks_are_tsc.load(std::memory_order_relaxed)) {
    return __builtin_ia32_rdtsc();
  }
#endif
  return command_stats_detail::CommandTicksSlow();
}

// Microseconds in `ticks` (CommandTicksNow's units), at the rate measured since the start.
// Costs a clock read.
uint64_t CommandTicksToMicros(uint64_t ticks);
// Fewer ticks than this many per microsecond are never counted (a TSC runs at >= 100 MHz;
// steady_clock ticks are nanoseconds): a duration of fewer than N * this ticks is under N us.
inline constexpr uint64_t kMinCommandTicksPerMicro = 100;

// LATENCY HISTOGRAM / INFO latencystats (command_latency.h): `ticks` in microseconds, into the
// command's histogram (when latency-tracking is on).
void RecordCommandLatencyTicks(size_t command_id, uint64_t ticks);

// A command ran (its handler was called) for `ticks` (CommandTicksNow's units); `failed` when
// it replied with an error.
inline void RecordCommandCall(size_t command_id, uint64_t ticks, bool failed) {
  if (command_id >= kMaxCommandStats) return;
  command_stats_detail::Counters& c = command_stats_detail::CountersFor(command_id);
  command_stats_detail::Add(c.calls, 1);
  command_stats_detail::Add(c.ticks, ticks);
  if (failed) command_stats_detail::Add(c.failed, 1);
  if (LatencyTrackingEnabled()) RecordCommandLatencyTicks(command_id, ticks);
}
// A blocked command, run again when woken, replied with an error (-NOGROUP after XGROUP
// DESTROY, -UNBLOCKED...): as Redis's updateStatsOnUnblock, a failure of the call counted when
// it blocked, not a second call.
inline void RecordCommandFailedOnWake(size_t command_id) {
  if (command_id >= kMaxCommandStats) return;
  command_stats_detail::Add(command_stats_detail::CountersFor(command_id).failed, 1);
}
// A command was refused before it ran (arity, authentication, ACL, -BUSY, MULTI rules...).
inline void RecordCommandRejected(size_t command_id) {
  if (command_id >= kMaxCommandStats) return;
  command_stats_detail::Add(command_stats_detail::CountersFor(command_id).rejected, 1);
}
// An error reply was sent; `message` starts with its code ("ERR syntax error"). As Redis, at
// most 128 distinct codes are tracked (later new codes are not counted by code).
void RecordErrorReply(std::string_view message);

struct CommandTotals {
  uint64_t calls = 0;
  uint64_t usec = 0;  // microseconds
  uint64_t rejected = 0;
  uint64_t failed = 0;
};
// Totals over every thread, indexed by command id (size kMaxCommandStats).
std::vector<CommandTotals> SumCommandStats();
// (code, count) over every thread, codes in ascending order.
std::vector<std::pair<std::string, uint64_t>> SumErrorStats();
// CONFIG RESETSTAT.
void ResetCommandStats();

}  // namespace sluice::server
