// The transaction state a connection command must also end (RESET), from cmd_multi.cc.
#pragma once

namespace sluice::server {

class ServerState;
struct ClientState;

// Leaves MULTI (dropping the queue) and forgets every watched key: DISCARD, EXEC's end, RESET.
void EndTransaction(ServerState& server, ClientState& client);

}  // namespace sluice::server
