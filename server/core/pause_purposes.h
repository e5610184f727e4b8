// Pauses kept per purpose, as Redis 7.0 keeps them (pause_purpose): CLIENT PAUSE and FAILOVER's
// write pause are separate, so CLIENT UNPAUSE (or a CLIENT PAUSE that ends) never lifts the
// failover's pause, and the failover's end never lifts a client's pause. ServerState holds the
// one pause the connections read (ServerState::Pause; its comment predates this: a CLIENT PAUSE
// merges with one still on, AddPause); it is recomputed from the purposes here:
// the most restrictive kind (ALL over WRITE), until the furthest end of any purpose still on
// (conservative: a shorter ALL pause beside a longer WRITE one holds reads until the next
// RefreshPauses, which the failover's cron calls every 100 ms).
//
// Thread-safety: every function may be called from any thread (one lock inside).
#pragma once

#include <cstdint>

#include "server/core/server_state.h"

namespace sluice::server {

enum class PausePurpose { kClientCommand = 0, kFailover = 1 };

// Sets (replaces) the purpose's pause: until `until_ms` (real ms since the epoch; 0 lifts it),
// every command (`all`) or only those that write.
void SetPause(ServerState& server, PausePurpose purpose, int64_t until_ms, bool all);
// Redis's pauseClients (CLIENT PAUSE): merged with the purpose's pause still on, the more
// restrictive kind until the later end (a shorter CLIENT PAUSE never shortens a longer one);
// `until_ms` may be now (CLIENT PAUSE 0: nothing changes).
void AddPause(ServerState& server, PausePurpose purpose, int64_t until_ms, bool all);
// Lifts the purpose's pause; the others stay.
void LiftPause(ServerState& server, PausePurpose purpose);
// Drops the purposes whose time is up and republishes the combined pause.
void RefreshPauses(ServerState& server);

}  // namespace sluice::server
