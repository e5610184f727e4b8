#include "server/core/errors_introspection.h"

namespace sluice::server {

namespace {
// ReplyError prefixes "ERR " to a message without its own code (errors.cc).
Status Err(std::string message) { return Status::InvalidArgument(std::move(message)); }
}  // namespace

Status GetKeysInvalidArgs() { return Err("Invalid arguments specified for command"); }

}  // namespace sluice::server
