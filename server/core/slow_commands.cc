#include "server/core/slow_commands.h"

#include <algorithm>

#include "server/core/command_stats.h"
#include "server/core/server_state.h"

namespace sluice::server {

void RecordCommandTime(ServerState& server, const ClientState& client, Args args,
                       const CommandSpec& spec, uint64_t ticks, bool to_slowlog) {
  const int64_t threshold = to_slowlog ? server.slowlog_slower_than_us() : -1;
  const int64_t latency_threshold_ms = server.latency_threshold_ms();
  if (threshold < 0 && latency_threshold_ms <= 0) return;
  // Ticks (the TSC, one instruction) turn into microseconds only for a command that may have
  // passed a threshold: that conversion reads a clock.
  uint64_t smallest_us = threshold >= 0 ? static_cast<uint64_t>(threshold) : UINT64_MAX / 2;
  if (latency_threshold_ms > 0) {
    smallest_us = std::min(smallest_us, static_cast<uint64_t>(latency_threshold_ms) * 1000);
  }
  if (smallest_us < UINT64_MAX / (2 * kMinCommandTicksPerMicro) &&
      ticks < smallest_us * kMinCommandTicksPerMicro) {
    return;
  }
  const auto micros = static_cast<int64_t>(CommandTicksToMicros(ticks));
  if (latency_threshold_ms > 0 && micros / 1000 >= latency_threshold_ms) {
    // LATENCY's "command" and "fast-command" events, as Redis names them.
    const bool fast = (spec.flags & kFast) != 0;
    server.latency().Add(fast ? "fast-command" : "command", micros / 1000,
                         ServerState::RealNowMs() / 1000);
  }
  if (threshold < 0 || micros < threshold) return;
  if (spec.flags & kSkipSlowlog) return;
  server.slowlog().MaybeRecord(micros, args, client.addr, client.name, threshold,
                               server.slowlog_max_len());
}

}  // namespace sluice::server
