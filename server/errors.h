// The one place Redis error text is produced. Handlers never spell an error themselves: they
// reply with a Status (engine errors and argument errors alike) or one of the helpers below.
#pragma once

#include <span>
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
//                                            when it starts with an upper-case word and a space;
//                                            so a message whose first word is all upper case but
//                                            is not a code must spell "ERR " itself)
//   kIOError/kCorruption -> "ERR " + message
void ReplyError(protocol::ReplyWriter& out, const Status& status);

// Common argument errors, as Status, so handlers return them through ReplyError.
Status SyntaxError();                         // "ERR syntax error"
Status WrongArity(std::string_view command);  // "ERR wrong number of arguments for 'get' command"
// `args` are the arguments after the name. Redis's text, incl. truncation to 128 characters:
// "ERR unknown command 'foo', with args beginning with: 'a' 'b' "
Status UnknownCommand(std::string_view name, std::span<const std::string_view> args);
// "ERR unknown subcommand 'foo'. Try CONFIG HELP." (command upper-cased)
Status UnknownSubcommand(std::string_view command, std::string_view sub);
Status InvalidExpireTime(std::string_view command);  // "ERR invalid expire time in 'set' command"
Status NotAnInteger();                               // kNotInteger
Status NotAFloat();                                  // kNotFloat
Status NoAuth();                                     // "NOAUTH Authentication required."
Status WrongPass();  // "WRONGPASS invalid username-password pair or user is disabled."

// Server-core errors (connection, server and config commands). Each message carries its code.
Status DbIndexOutOfRange();    // "ERR DB index is out of range"
Status NoProto();              // "NOPROTO unsupported protocol version"
Status AuthWithoutPassword();  // "ERR AUTH <password> called without any password ..."
Status DebugNotAllowed();      // "ERR DEBUG command not allowed. If the ..."
Status MaxClientsReached();    // "ERR max number of clients reached"
Status NoSuchClient();         // "ERR No such client"
Status ClientIdNotPositive();  // "ERR client-id should be greater than 0"
Status BadClientName();        // "ERR Client names cannot contain spaces, ..."
Status BadClientInfo(std::string_view field);         // "ERR lib-name cannot contain spaces, ..."
Status ProtocolError(std::string_view parser_error);  // "ERR Protocol error: ..."
Status HelloNoAuth();         // "NOAUTH HELLO must be called with the client ..."
Status BadProtocolVersion();  // "ERR Protocol version is not an integer or out of range"
Status HelloSyntax(std::string_view option);      // "ERR Syntax error in HELLO option 'FOO'"
Status UnknownClientType(std::string_view type);  // "ERR Unknown client type 'x'"
Status InvalidClientId();                         // "ERR Invalid client ID"
Status NoSuchUser(std::string_view user);         // "ERR No such user 'x'"
Status UnrecognizedOption(std::string_view opt);  // "ERR Unrecognized option 'x'"
Status NotSupported(std::string_view what);       // "ERR <what> is not supported by Sluice"
Status InternalError(std::string_view what);      // "ERR internal error: <what>"
// MULTI/EXEC (Redis 7.0's texts).
Status ExecWithoutMulti();     // "ERR EXEC without MULTI"
Status DiscardWithoutMulti();  // "ERR DISCARD without MULTI"
Status MultiNested();          // "ERR MULTI calls can not be nested"
Status WatchInsideMulti();     // "ERR WATCH inside MULTI is not allowed"
Status NotAllowedInMulti();    // "ERR Command not allowed inside a transaction"
Status ExecAborted();          // "EXECABORT Transaction discarded because of previous errors."
// An EXEC rejected at the gate: "EXECABORT Transaction discarded because of: <error>", the
// error's text without its "ERR " code.
Status ExecAbortedBecause(const Status& error);
Status MultiQueueTooLarge();  // "ERR MULTI queue exceeds the client query buffer limit (1gb)"
// Collection commands (Redis 7.0's texts).
Status NotPositive();  // "ERR value is out of range, must be positive"
Status
CountOutOfLongRange();     // "ERR value is out of range, value must between -LONG_MAX and LONG_MAX"
Status ValueOutOfRange();  // "ERR value is out of range"
Status NumkeysNotPositive();  // "ERR numkeys should be greater than 0"
Status NumkeysTooMany();      // "ERR Number of keys can't be greater than number of args"
Status LimitNegative();       // "ERR LIMIT can't be negative"
Status InvalidCursor();       // "ERR invalid cursor"
// List commands (Redis 7.0's texts).
Status RankZero();          // "ERR RANK can't be zero: use 1 to start from the first match, ..."
Status CountNegative();     // "ERR COUNT can't be negative"
Status MaxlenNegative();    // "ERR MAXLEN can't be negative"
Status CountNotPositive();  // "ERR count should be greater than 0"
// Sorted set commands (Redis 7.0's texts).
Status MinOrMaxNotFloat();    // "ERR min or max is not a float"
Status ZAddXxNx();            // "ERR XX and NX options at the same time are not compatible"
Status ZAddGtLtNx();          // "ERR GT, LT, and/or NX options at the same time are not compatible"
Status ZAddIncrPairs();       // "ERR INCR option supports a single increment-element pair"
Status ZRangeLimitNeedsBy();  // "ERR syntax error, LIMIT is only supported in combination ..."
// The full error line ReplyError writes for `status` ("ERR ...", "WRONGTYPE ...").
std::string ErrorText(const Status& status);

// "ERR CONFIG SET failed (possibly related to argument 'port') - can't set immutable config"
Status ConfigSetFailed(std::string_view name, std::string_view reason);
Status ConfigSetImmutable(std::string_view name);
// "ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'"
Status ConfigSetUnknown(std::string_view name);

}  // namespace sluice::server
