// MonitorRegistry: the clients in MONITOR mode and the feed of every command the server runs to
// them, one line each in Redis 7.0's format:
//   +1700000000.123456 [0 127.0.0.1:50000] "set" "k" "v"\r\n
// (seconds.microseconds of the wall clock, the database, the client's address or "lua" for a
// script's command, each argument quoted and escaped as Redis's sdscatrepr). Lines go to each
// monitor's ClientOutbox, written by the monitor's own thread. The dispatcher feeds it
// (server/core/dispatcher.cc): after each command ran, EVAL/EVALSHA/FCALL before (so the
// script's commands follow it); admin commands are not shown, secrets are redacted
// (redaction.h), as in Redis.
//
// Thread-safety: every method may be called from any thread; Feed holds the lock shared.
#pragma once

#include <atomic>
#include <cstdint>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "server/core/client_state.h"
#include "server/core/command.h"

namespace sluice::server {

class MonitorRegistry {
 public:
  // Lock-free: no monitor is registered (the dispatcher's fast path).
  bool empty() const { return count_.load(std::memory_order_relaxed) == 0; }
  // Makes `client` a monitor; false when it already is one. Sets client.monitoring.
  bool Add(ClientState* client);
  // No-op when `client` is not a monitor.
  void Remove(ClientState* client);
  // Sends every monitor the line for `args`, run by `client` (`from_script`: by a script) in
  // database `db`. `limit`: the normal class of client-output-buffer-limit.
  void Feed(const ClientState& client, bool from_script, int db, Args args,
            const OutputBufferLimit& limit);

 private:
  mutable std::shared_mutex mu_;
  std::vector<ClientState*> monitors_;
  std::atomic<size_t> count_{0};
};

// One MONITOR line (with its "+" and "\r\n"); `origin` is "127.0.0.1:50000" or "lua". Secrets
// (server/core/redaction.h: AUTH's, HELLO AUTH's, MIGRATE's) show as "(redacted)".
std::string MonitorLine(int64_t now_us, int db, std::string_view origin, Args args);

}  // namespace sluice::server
