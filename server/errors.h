// The one place Redis error text is produced. Handlers never spell an error themselves: they
// reply with a Status (engine errors and argument errors alike) or one of the helpers below.
#pragma once

#include <string>
#include <string_view>

#include "protocol/reply_writer.h"
#include "sluice/status.h"

namespace sluice::server {

// Writes the Redis error for `status` (which must not be OK):
//   kWrongType       -> "WRONGTYPE Operation against a key holding the wrong kind of value"
//   kNotInteger      -> "ERR value is not an integer or out of range"
//   kNotFloat        -> "ERR value is not a valid float"
//   kOverflow        -> "ERR increment or decrement would overflow"
//   kNoSuchKey       -> "ERR no such key"
//   kInvalidArgument -> "ERR " + message   (a message may carry its own code, e.g. "NOAUTH ...",
//                                            when it starts with an upper-case word and a space)
//   kIOError/kCorruption -> "ERR " + message
void ReplyError(protocol::ReplyWriter& out, const Status& status);

// Common argument errors, as Status, so handlers return them through ReplyError.
Status SyntaxError();                         // "ERR syntax error"
Status WrongArity(std::string_view command);  // "ERR wrong number of arguments for 'get' command"
Status UnknownCommand(std::string_view name, std::span<const std::string_view> args);
Status UnknownSubcommand(std::string_view command, std::string_view sub);
Status InvalidExpireTime(std::string_view command);  // "ERR invalid expire time in 'set' command"
Status NotAnInteger();                               // kNotInteger
Status NotAFloat();                                  // kNotFloat
Status NoAuth();                                     // "NOAUTH Authentication required."
Status WrongPass();  // "WRONGPASS invalid username-password pair or user is disabled."

}  // namespace sluice::server
