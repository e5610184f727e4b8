// One CLIENT LIST line for a client (CLIENT LIST, CLIENT INFO, ACL LOG's client-info).
#pragma once

#include <cstdint>
#include <string>

#include "server/core/client_state.h"

namespace sluice::server {

// Redis 7.0's fields plus 7.2's lib-name/lib-ver, ending in '\n'. Needs the client registry's
// lock held (server_state.h).
std::string ClientInfoLine(const ClientState& c, int64_t now_ms);

}  // namespace sluice::server
