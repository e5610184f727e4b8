// CONFIG SET port / bind at run time (Redis 7.0's changeListenPort / changeBindAddr): the core
// asks the network server (server/net, attached once it exists) to listen anew. A process-wide
// hook, kept out of ServerState so that adding it rebuilt nothing else.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace sluice::server {

enum class ListenApplyResult { kOk, kPortFailed, kBindFailed };

// Listens on `port` (0: no plain TCP listener) at the `bind` addresses instead of the current
// listeners; on failure the current listeners stay. Existing connections are never touched.
using ListenApplyFn =
    std::function<ListenApplyResult(int port, const std::vector<std::string>& bind)>;

// Set by the network server once it listens; nullptr when it goes. Thread-safe.
void SetListenApply(ListenApplyFn fn);
// Called by CONFIG SET with the configuration lock held. kOk when no server is attached
// (in-process tests).
ListenApplyResult ApplyListen(int port, const std::vector<std::string>& bind);

}  // namespace sluice::server
