// Which arguments of a command are secrets that MONITOR and SLOWLOG show as "(redacted)", by
// Redis 7.0's rules (each command's redactClientCommandArgument calls), a little wider where
// Redis shows a secret of a call it rejects (AUTH with too many arguments, HELLO with a bad
// protocol version):
//   AUTH              every argument
//   HELLO ... AUTH    the username and password after each AUTH with both present
//   ACL SETUSER       every argument from the username on
//   CONFIG SET        the value of masteruser, masterauth and requirepass
//   MIGRATE           the password after AUTH, the username and password after AUTH2
// Pure functions; thread-safe.
#pragma once

#include <cstddef>

#include "server/core/command.h"

namespace sluice::server {

// True when args[i] is redacted.
bool RedactedArgument(Args args, size_t i);

}  // namespace sluice::server
