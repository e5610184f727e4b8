#include "server/core/command_stats.h"

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "server/core/command_latency.h"
#include "server/core/per_thread_blocks.h"

namespace sluice::server {

namespace {

constexpr size_t kMaxErrorCodes = 128;  // Redis's ERROR_STATS_NUMBER

using command_stats_detail::Add;
using command_stats_detail::Counters;

uint64_t SteadyNanos() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// The CPU's flags say its time-stamp counter runs at one rate in every state (Linux's
// constant_tsc and nonstop_tsc).
bool InvariantTsc() {
#if defined(__x86_64__)
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) == 0) {
      return line.find(" constant_tsc") != std::string::npos &&
             line.find(" nonstop_tsc") != std::string::npos;
    }
  }
#endif
  return false;
}

// The tick source and its origin, fixed at the first use (before any command runs: the
// server's start calls CommandTicksNow once).
struct TickSource {
  bool tsc = InvariantTsc();
  uint64_t origin_ticks = 0;
  uint64_t origin_nanos = 0;
  TickSource() {
    origin_nanos = SteadyNanos();
    origin_ticks = Read();
    command_stats_detail::g_ticks_are_tsc.store(tsc, std::memory_order_relaxed);
  }
  uint64_t Read() const {
#if defined(__x86_64__)
    if (tsc) return __rdtsc();
#endif
    return SteadyNanos();
  }
  // Ticks per microsecond, measured from the origin to now (steady_clock: 1000).
  double TicksPerMicro() const {
    if (!tsc) return 1000.0;
    const uint64_t nanos = SteadyNanos() - origin_nanos;
    const uint64_t ticks = Read() - origin_ticks;
    if (nanos < 1000 || ticks == 0) return 1000.0;
    return static_cast<double>(ticks) * 1000.0 / static_cast<double>(nanos);
  }
};

const TickSource& Ticks() {
  static const TickSource source;
  return source;
}

// Microseconds per tick in 32.32 fixed point, for the latency histograms (one multiply on the
// command path). 0 until the first command measures it (by then the process has run long
// enough, through the data's load, for a precise rate); INFO measures it again.
std::atomic<uint64_t> micros_per_tick_q32{0};

uint64_t MeasureMicrosPerTick() {
  const auto q32 = static_cast<uint64_t>(4294967296.0 / Ticks().TicksPerMicro());
  micros_per_tick_q32.store(q32, std::memory_order_relaxed);
  return q32;
}

uint64_t TicksToMicros(uint64_t ticks) {
  uint64_t q32 = micros_per_tick_q32.load(std::memory_order_relaxed);
  if (q32 == 0) q32 = MeasureMicrosPerTick();
  return static_cast<uint64_t>((static_cast<unsigned __int128>(ticks) * q32) >> 32);
}

// One thread's counts (command_stats_detail::Add).
struct Block {
  Counters commands[kMaxCommandStats];
  std::mutex errors_mu;  // uncontended but for INFO: errors are off the fast path
  std::map<std::string, uint64_t, std::less<>> errors;
};

using Blocks = PerThreadBlocks<Block>;

}  // namespace

uint64_t CommandTicksToMicros(uint64_t ticks) {
  return static_cast<uint64_t>(static_cast<double>(ticks) / Ticks().TicksPerMicro());
}

void RecordCommandLatencyTicks(size_t command_id, uint64_t ticks) {
  RecordCommandLatency(command_id, TicksToMicros(ticks));
}

namespace command_stats_detail {

uint64_t CommandTicksSlow() { return Ticks().Read(); }

Counters* RegisterThisThread() {
  t_counters = Blocks::Mine().commands;
  return t_counters;
}

}  // namespace command_stats_detail

void RecordErrorReply(std::string_view message) {
  const std::string_view code = message.substr(0, message.find(' '));
  Block& block = Blocks::Mine();
  std::lock_guard<std::mutex> l(block.errors_mu);
  auto it = block.errors.find(code);
  if (it != block.errors.end()) {
    ++it->second;
  } else if (block.errors.size() < kMaxErrorCodes) {
    block.errors.emplace(std::string(code), 1);
  }
}

std::vector<CommandTotals> SumCommandStats() {
  std::vector<CommandTotals> out(kMaxCommandStats);
  std::vector<uint64_t> ticks(kMaxCommandStats);
  Blocks::ForEach([&](const Block& block) {
    for (size_t i = 0; i < kMaxCommandStats; ++i) {
      const Counters& c = block.commands[i];
      out[i].calls += c.calls.load(std::memory_order_relaxed);
      ticks[i] += c.ticks.load(std::memory_order_relaxed);
      out[i].rejected += c.rejected.load(std::memory_order_relaxed);
      out[i].failed += c.failed.load(std::memory_order_relaxed);
    }
  });
  const double per_micro = Ticks().TicksPerMicro();
  MeasureMicrosPerTick();
  for (size_t i = 0; i < kMaxCommandStats; ++i) {
    out[i].usec = static_cast<uint64_t>(static_cast<double>(ticks[i]) / per_micro);
  }
  return out;
}

std::vector<std::pair<std::string, uint64_t>> SumErrorStats() {
  std::map<std::string, uint64_t> sum;
  Blocks::ForEach([&](Block& block) {
    std::lock_guard<std::mutex> el(block.errors_mu);
    for (const auto& [code, n] : block.errors) {
      if (sum.count(code) > 0 || sum.size() < kMaxErrorCodes) sum[code] += n;
    }
  });
  return {sum.begin(), sum.end()};
}

void ResetCommandStats() {
  Blocks::ForEach([](Block& block) {
    for (Counters& c : block.commands) {
      c.calls.store(0, std::memory_order_relaxed);
      c.ticks.store(0, std::memory_order_relaxed);
      c.rejected.store(0, std::memory_order_relaxed);
      c.failed.store(0, std::memory_order_relaxed);
    }
    std::lock_guard<std::mutex> el(block.errors_mu);
    block.errors.clear();
  });
}

}  // namespace sluice::server
