// PubSubHub: what the server core and the network room know of pub/sub. The room server/pubsub
// implements it (PubSubRegistry) and attaches it to the ServerState before serving, so the core
// and net never depend on that room. Thread-safe: any method from any thread.
#pragma once

#include <cstdint>
#include <string_view>

namespace sluice::server {

struct ClientState;

class PubSubHub {
 public:
  virtual ~PubSubHub() = default;
  // Forgets every subscription of `client`, whose connection is closing; no reply. After it
  // returns no publisher touches the client's outbox.
  virtual void ForgetClient(ClientState& client) = 0;
  // PUBLISH: delivers `message` to the subscribers of `channel` and of the patterns matching
  // it; returns how many received it.
  virtual int64_t Publish(std::string_view channel, std::string_view message) = 0;
};

}  // namespace sluice::server
