// SLOWLOG and LATENCY's command events for one command call, as Redis's call() and its
// updateStatsOnUnblock record them: every command a client sent (each one inside EXEC, not EXEC
// itself, whose spec has kSkipSlowlog; a blocking command when it is served or times out, not
// when it parks), never a script's own calls. Secrets are redacted (redaction.h).
//
// Thread-safety: any thread; the logs lock themselves.
#pragma once

#include <cstdint>

#include "server/core/client_state.h"
#include "server/core/command.h"

namespace sluice::server {

class ServerState;

// Records a command (`spec`) that ran for `ticks` (CommandTicksNow's units); the usual fast
// command pays one clock-free comparison. `to_slowlog`: false for a call that parked its
// client (its entry is written when it is served).
void RecordCommandTime(ServerState& server, const ClientState& client, Args args,
                       const CommandSpec& spec, uint64_t ticks, bool to_slowlog = true);

}  // namespace sluice::server
