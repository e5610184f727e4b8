#include "server/core/errors_introspection.h"

#include "server/core/errors.h"

namespace sluice::server {

namespace {
// ReplyError prefixes "ERR " to a message without its own code (errors.cc).
Status Err(std::string message) { return Status::InvalidArgument(std::move(message)); }
}  // namespace

Status GetKeysInvalidArgs() { return Err("Invalid arguments specified for command"); }

Status PortListenFailed() {
  return ConfigSetFailed("port", "Unable to listen on this port. Check server logs.");
}

Status LfuSelected() {
  return Err(
      "An LFU maxmemory policy is selected, idle time not tracked. Please note that when "
      "switching between policies at runtime LRU and LFU data will take some time to adjust.");
}

Status BindFailed() { return ConfigSetFailed("bind", "Failed to bind to specified addresses."); }

}  // namespace sluice::server
