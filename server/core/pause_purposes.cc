#include "server/core/pause_purposes.h"

#include <algorithm>
#include <mutex>

namespace sluice::server {

namespace {

struct Purpose {
  int64_t until_ms = 0;  // 0: off
  bool all = false;
};

struct Pauses {
  std::mutex mu;
  const ServerState* owner = nullptr;  // the state these belong to (harnesses make several)
  Purpose purposes[2];
};

Pauses& State() {
  static Pauses pauses;
  return pauses;
}

// mu held: drops expired purposes, then publishes their union to `server`.
void PublishLocked(Pauses& p, ServerState& server) {
  const int64_t now = ServerState::RealNowMs();
  int64_t until = 0;
  bool all = false;
  for (Purpose& q : p.purposes) {
    if (q.until_ms != 0 && q.until_ms <= now) q = Purpose{};
    if (q.until_ms == 0) continue;
    until = std::max(until, q.until_ms);
    all = all || q.all;
  }
  if (until == 0) {
    server.Unpause();
  } else {
    server.Pause(until, all);
  }
}

// mu held: the purposes, reset when they were another ServerState's.
Purpose* PurposesLocked(Pauses& p, const ServerState& server) {
  if (p.owner != &server) {
    p.owner = &server;
    for (Purpose& q : p.purposes) q = Purpose{};
  }
  return p.purposes;
}

}  // namespace

void SetPause(ServerState& server, PausePurpose purpose, int64_t until_ms, bool all) {
  Pauses& p = State();
  std::lock_guard lock(p.mu);
  PurposesLocked(p, server)[static_cast<int>(purpose)] = Purpose{until_ms, all};
  PublishLocked(p, server);
}

void AddPause(ServerState& server, PausePurpose purpose, int64_t until_ms, bool all) {
  Pauses& p = State();
  std::lock_guard lock(p.mu);
  Purpose& q = PurposesLocked(p, server)[static_cast<int>(purpose)];
  if (q.until_ms != 0 && q.until_ms <= ServerState::RealNowMs()) q = Purpose{};  // ended
  if (q.until_ms == 0) {
    q = Purpose{until_ms, all};
  } else {
    q = Purpose{std::max(q.until_ms, until_ms), q.all || all};
  }
  PublishLocked(p, server);
}

void LiftPause(ServerState& server, PausePurpose purpose) { SetPause(server, purpose, 0, false); }

void RefreshPauses(ServerState& server) {
  Pauses& p = State();
  std::lock_guard lock(p.mu);
  PurposesLocked(p, server);
  PublishLocked(p, server);
}

}  // namespace sluice::server
