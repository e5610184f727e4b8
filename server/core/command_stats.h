// Per-command and per-error statistics: INFO commandstats (calls, usec, rejected_calls,
// failed_calls of every command and subcommand, as Redis 7.0 counts them) and INFO errorstats
// (error replies by their first word, "ERR", "WRONGTYPE", ...).
//
// Thread-safety: Record* may be called from any thread; each thread counts into its own block
// (no shared cache line on the command path: relaxed stores to memory only that thread writes),
// registered once per thread and kept for the process's life. Sum* and Reset* read and clear
// every block from any thread; a count made during a Reset may survive it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::server {

// The most commands and subcommands a table may hold (CommandSpec::id below it).
inline constexpr size_t kMaxCommandStats = 1024;

// A command's duration is measured in ticks: the CPU's time-stamp counter where it is invariant
// (x86 with constant_tsc and nonstop_tsc: one instruction, where a clock read costs a vDSO call
// on every command), else steady_clock nanoseconds. Ticks turn into microseconds only when the
// statistics are read, at the rate measured since the process started.
uint64_t CommandTicksNow();

// A command ran (its handler was called) for `ticks` (CommandTicksNow's units); `failed` when
// it replied with an error.
void RecordCommandCall(size_t command_id, uint64_t ticks, bool failed);
// A command was refused before it ran (arity, authentication, ACL, -BUSY, MULTI rules...).
void RecordCommandRejected(size_t command_id);
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
