// Redis 7.0's exact error text, checked against redis-server 7.0.15.
#include "server/errors.h"

#include <cctype>
#include <string>

namespace sluice::server {

namespace {

// True when `message` starts with an all-upper-case word followed by a space ("NOAUTH ...").
bool HasOwnCode(std::string_view message) {
  size_t i = 0;
  while (i < message.size() && message[i] >= 'A' && message[i] <= 'Z') ++i;
  return i > 0 && i < message.size() && message[i] == ' ';
}

Status Err(std::string message) { return Status::InvalidArgument(std::move(message)); }

// Redis's "%.*s": at most `limit` bytes of `s`.
std::string_view Truncate(std::string_view s, size_t limit) { return s.substr(0, limit); }

}  // namespace

namespace {

// The fixed text of codes whose reply never varies; empty for the others.
std::string_view FixedErrorText(Code code) {
  switch (code) {
    case Code::kOk:
      return "ERR internal error: OK status replied as an error";
    case Code::kWrongType:
      return "WRONGTYPE Operation against a key holding the wrong kind of value";
    case Code::kNotInteger:
      return "ERR value is not an integer or out of range";
    case Code::kNotFloat:
      return "ERR value is not a valid float";
    case Code::kOverflow:
      return "ERR increment or decrement would overflow";
    case Code::kNoSuchKey:
      return "ERR no such key";
    default:
      return {};
  }
}

}  // namespace

std::string ErrorText(const Status& status) {
  std::string_view fixed = FixedErrorText(status.code());
  if (!fixed.empty()) return std::string(fixed);
  if (status.code() == Code::kInvalidArgument && HasOwnCode(status.message())) {
    return status.message();
  }
  return "ERR " + status.message();
}

// Fixed texts are written without building a string (no allocation on common error replies).
void ReplyError(protocol::ReplyWriter& out, const Status& status) {
  std::string_view fixed = FixedErrorText(status.code());
  if (!fixed.empty()) return out.Error(fixed);
  out.Error(ErrorText(status));
}

Status ExecWithoutMulti() { return Err("ERR EXEC without MULTI"); }
Status DiscardWithoutMulti() { return Err("ERR DISCARD without MULTI"); }
Status MultiNested() { return Err("ERR MULTI calls can not be nested"); }
Status WatchInsideMulti() { return Err("ERR WATCH inside MULTI is not allowed"); }
Status NotAllowedInMulti() { return Err("ERR Command not allowed inside a transaction"); }
Status ExecAborted() { return Err("EXECABORT Transaction discarded because of previous errors."); }
Status ExecAbortedBecause(const Status& error) {
  std::string text = ErrorText(error);
  if (text.compare(0, 4, "ERR ") == 0) text.erase(0, 4);
  return Err("EXECABORT Transaction discarded because of: " + text);
}
Status MultiQueueTooLarge() {
  return Err("ERR MULTI queue exceeds the client query buffer limit (1gb)");
}

Status SyntaxError() { return Err("ERR syntax error"); }

Status WrongArity(std::string_view command) {
  return Err("ERR wrong number of arguments for '" + std::string(command) + "' command");
}

Status UnknownCommand(std::string_view name, std::span<const std::string_view> args) {
  // As Redis's processCommand: arguments are appended as 'arg' plus a space while the list is
  // shorter than 128 characters, each cut to the room left.
  constexpr size_t kLimit = 128;
  std::string listed;
  for (std::string_view arg : args) {
    if (listed.size() >= kLimit) break;
    listed += '\'';
    listed += Truncate(arg, kLimit - listed.size() + 1);
    listed += "' ";
  }
  return Err("ERR unknown command '" + std::string(Truncate(name, kLimit)) +
             "', with args beginning with: " + listed);
}

Status UnknownSubcommand(std::string_view command, std::string_view sub) {
  std::string upper(command);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return Err("ERR unknown subcommand '" + std::string(Truncate(sub, 128)) + "'. Try " + upper +
             " HELP.");
}

Status InvalidExpireTime(std::string_view command) {
  return Err("ERR invalid expire time in '" + std::string(command) + "' command");
}

Status NotAnInteger() { return Status::NotInteger(); }
Status NotAFloat() { return Status::NotFloat(); }
Status NoAuth() { return Err("NOAUTH Authentication required."); }
Status WrongPass() { return Err("WRONGPASS invalid username-password pair or user is disabled."); }

Status DbIndexOutOfRange() { return Err("ERR DB index is out of range"); }
Status NoProto() { return Err("NOPROTO unsupported protocol version"); }

Status AuthWithoutPassword() {
  return Err(
      "ERR AUTH <password> called without any password configured for the default user. Are you "
      "sure your configuration is correct?");
}

Status DebugNotAllowed() {
  return Err(
      "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", "
      "you can run it from a local connection, otherwise you need to set this option in the "
      "configuration file, and then restart the server.");
}

Status MaxClientsReached() { return Err("ERR max number of clients reached"); }
Status NoSuchClient() { return Err("ERR No such client"); }
Status ClientIdNotPositive() { return Err("ERR client-id should be greater than 0"); }

Status BadClientName() {
  return Err("ERR Client names cannot contain spaces, newlines or special characters.");
}

Status BadClientInfo(std::string_view field) {
  return Err("ERR " + std::string(field) +
             " cannot contain spaces, newlines or special characters.");
}

Status ProtocolError(std::string_view parser_error) {
  return Err("ERR " + std::string(parser_error));
}

Status HelloNoAuth() {
  return Err(
      "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO "
      "AUTH <user> <pass> option can be used to authenticate the client and select the RESP "
      "protocol version at the same time");
}

Status BadProtocolVersion() {
  return Err("ERR Protocol version is not an integer or out of range");
}

Status HelloSyntax(std::string_view option) {
  return Err("ERR Syntax error in HELLO option '" + std::string(option) + "'");
}

Status UnknownClientType(std::string_view type) {
  return Err("ERR Unknown client type '" + std::string(type) + "'");
}

Status InvalidClientId() { return Err("ERR Invalid client ID"); }

Status NoSuchUser(std::string_view user) {
  return Err("ERR No such user '" + std::string(user) + "'");
}

Status UnrecognizedOption(std::string_view opt) {
  return Err("ERR Unrecognized option '" + std::string(opt) + "'");
}

Status NotSupported(std::string_view what) {
  return Err("ERR " + std::string(what) + " is not supported by Sluice");
}

Status InternalError(std::string_view what) {
  return Err("ERR internal error: " + std::string(what));
}

Status ConfigSetFailed(std::string_view name, std::string_view reason) {
  return Err("ERR CONFIG SET failed (possibly related to argument '" + std::string(name) + "') - " +
             std::string(reason));
}

Status ConfigSetImmutable(std::string_view name) {
  return ConfigSetFailed(name, "can't set immutable config");
}

Status ConfigSetUnknown(std::string_view name) {
  return Err("ERR Unknown option or number of arguments for CONFIG SET - '" + std::string(name) +
             "'");
}

Status NotPositive() { return Err("ERR value is out of range, must be positive"); }
Status CountOutOfLongRange() {
  return Err(
      "ERR value is out of range, value must between -9223372036854775807 and "
      "9223372036854775807");
}
Status ValueOutOfRange() { return Err("ERR value is out of range"); }
Status NumkeysNotPositive() { return Err("ERR numkeys should be greater than 0"); }
Status NumkeysTooMany() { return Err("ERR Number of keys can't be greater than number of args"); }
Status LimitNegative() { return Err("ERR LIMIT can't be negative"); }
Status InvalidCursor() { return Err("ERR invalid cursor"); }
Status RankZero() {
  return Err(
      "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use "
      "negative to start from the end of the list");
}
Status CountNegative() { return Err("ERR COUNT can't be negative"); }
Status MaxlenNegative() { return Err("ERR MAXLEN can't be negative"); }
Status CountNotPositive() { return Err("ERR count should be greater than 0"); }
Status MinOrMaxNotFloat() { return Err("ERR min or max is not a float"); }
Status ZAddXxNx() { return Err("ERR XX and NX options at the same time are not compatible"); }
Status ZAddGtLtNx() {
  return Err("ERR GT, LT, and/or NX options at the same time are not compatible");
}
Status ZAddIncrPairs() { return Err("ERR INCR option supports a single increment-element pair"); }
Status ZRangeLimitNeedsBy() {
  return Err(
      "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
}

}  // namespace sluice::server
