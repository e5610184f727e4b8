// The process's open-file limit (RLIMIT_NOFILE) against maxclients, as Redis sizes it: every
// client is a descriptor, and kReservedFds more are kept for listeners, the event loops and the
// store's files.
#pragma once

#include <cstdint>
#include <string>

namespace sluice::server {

constexpr int64_t kReservedFds = 32;  // Redis's CONFIG_MIN_RESERVED_FDS

struct OpenFilesFit {
  int64_t maxclients = 0;  // what fits: the requested value, or less (0: not even one client)
  std::string message;     // what changed, for the log; empty when nothing did
};

// Raises the soft RLIMIT_NOFILE towards maxclients + kReservedFds, never above the hard limit
// (`ulimit -Hn`), and never lowers it. Returns the maxclients the resulting limit allows.
// Process-wide; call from one thread (start-up, CONFIG SET under the configuration lock).
OpenFilesFit FitOpenFiles(int64_t maxclients);

}  // namespace sluice::server
