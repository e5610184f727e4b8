// Redis 7.0's exact error text, checked against redis-server 7.0.15.
#include "server/core/errors.h"

#include <cctype>
#include <cstdio>
#include <string>

#include "server/core/acl_user.h"
#include "sluice/store.h"

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
  if (status.code() == Code::kCannotPersist) {
    // Redis's MISCONF, adapted: Sluice persists through its write-ahead log.
    return "MISCONF Errors writing to the write-ahead log (" + status.message() +
           "): Sluice cannot persist writes, so commands that may modify the data set are "
           "refused until it can write again. Reads keep working. See the server log.";
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
Status GetKeysInvalidCommand() { return Err("Invalid command specified"); }
Status GetKeysInvalidArity() { return Err("Invalid number of arguments specified for command"); }
Status GetKeysNoKeys() { return Err("The command has no key arguments"); }

Status MultiQueueTooLarge() {
  return Err("ERR MULTI queue exceeds the client query buffer limit (1gb)");
}

Status NoScript() { return Err("NOSCRIPT No matching script. Please use EVAL."); }
Status NumKeysNegative() { return Err("ERR Number of keys can't be negative"); }
Status NumKeysTooMany() { return Err("ERR Number of keys can't be greater than number of args"); }
Status ShebangEngine(std::string_view line) {
  return Err("ERR Unexpected engine in script shebang: " + std::string(line));
}
Status BadDumpPayload() { return Err("ERR DUMP payload version or checksum are wrong"); }
Status BadDataFormat() { return Err("ERR Bad data format"); }
Status BusyKey() { return Err("BUSYKEY Target key name already exists."); }
Status InvalidTtlValue() { return Err("ERR Invalid TTL value, must be >= 0"); }
Status InvalidIdleTime() { return Err("ERR Invalid IDLETIME value, must be >= 0"); }
Status InvalidFreq() { return Err("ERR Invalid FREQ value, must be >= 0 and <= 255"); }
Status MigrateKeysNeedEmptyKey() {
  return Err(
      "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string");
}
Status MigrateIoError(std::string_view what) {
  return Err("IOERR error or timeout " + std::string(what));
}
Status TargetReplied(std::string_view message) {
  return Err("ERR Target instance replied with error: " + std::string(message));
}
Status FunctionFlushOption() { return Err("ERR FUNCTION FLUSH only supports SYNC|ASYNC option"); }
Status UnknownOptionGiven(std::string_view opt) {
  return Err("ERR Unknown option given: " + std::string(opt));
}
Status UnknownArgument(std::string_view arg) {
  return Err("ERR Unknown argument " + std::string(arg));
}
Status LibraryNameArgMissing() { return Err("ERR library name argument was not given"); }
Status BadRestorePolicy() {
  return Err("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.");
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
Status IntOutOfRange() {
  return Err("ERR value is out of range, value must between -2147483648 and 2147483647");
}
Status SameObject() { return Err("ERR source and destination objects are the same"); }
Status InvalidDbIndex(bool first) {
  return Err(first ? "ERR invalid first DB index" : "ERR invalid second DB index");
}
Status GeoBadLonLat(double lon, double lat) {
  char buf[160];
  std::snprintf(buf, sizeof(buf), "ERR invalid longitude,latitude pair %f,%f", lon, lat);
  return Err(buf);
}
Status GeoBadUnit() { return Err("ERR unsupported unit provided. please use M, KM, FT, MI"); }
Status GeoNeedNumeric(std::string_view what) {
  return Err("ERR need numeric " + std::string(what));
}
Status GeoRadiusNegative() { return Err("ERR radius cannot be negative"); }
Status GeoBoxNegative() { return Err("ERR height or width cannot be negative"); }
Status GeoCountNotPositive() { return Err("ERR COUNT must be > 0"); }
Status GeoNoMember() { return Err("ERR could not decode requested zset member"); }
Status GeoStoreWith(bool geosearchstore) {
  return Err(std::string("ERR ") +
             (geosearchstore ? "GEOSEARCHSTORE" : "STORE option in GEORADIUS") +
             " is not compatible with WITHDIST, WITHHASH and WITHCOORD options");
}
Status GeoNeedFrom(std::string_view command) {
  return Err("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for " +
             std::string(command));
}
Status GeoNeedBy(std::string_view command) {
  return Err("ERR exactly one of BYRADIUS and BYBOX can be specified for " + std::string(command));
}
Status GeoAnyNeedsCount() { return Err("ERR the ANY argument requires COUNT argument"); }
Status SortNotDouble() { return Err("ERR One or more scores can't be converted into double"); }
Status BgSaveInProgress() { return Err("ERR Background save already in progress"); }
Status PauseModeBad() { return Err("ERR CLIENT PAUSE mode must be WRITE or ALL"); }
Status TimeoutNotInteger() { return Err("ERR timeout is not an integer or out of range"); }
Status TimeoutOutOfRange() { return Err("ERR timeout is out of range"); }
Status SlowlogCountBad() { return Err("ERR count should be greater than or equal to -1"); }
Status LfuNotSelected() {
  return Err(
      "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note "
      "that when switching between policies at runtime LRU and LFU data will take some time to "
      "adjust.");
}
Status NoProto() { return Err("NOPROTO unsupported protocol version"); }

Status AuthWithoutPassword() {
  return Err(
      "ERR AUTH <password> called without any password configured for the default user. Are you "
      "sure your configuration is correct?");
}

Status KeyspaceCountsDiffer(int db, const KeyspaceCheckReport& r) {
  auto pair = [](const KeyspaceInfo& i) {
    return "keys=" + std::to_string(i.keys) + ",expires=" + std::to_string(i.expires);
  };
  return Err("ERR keyspace counts differ in db" + std::to_string(db) + ": counted " +
             pair(r.counted) + ", stored " + pair(r.stored) + ", walked " + pair(r.walked));
}

Status DebugNotAllowed() {
  return Err(
      "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", "
      "you can run it from a local connection, otherwise you need to set this option in the "
      "configuration file, and then restart the server.");
}

Status ModuleCommandNotAllowed() {
  return Err(
      "ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", "
      "you can run it from a local connection, otherwise you need to set this option in the "
      "configuration file, and then restart the server.");
}
Status ModuleLoadFailed() {
  return Err("ERR Error loading the extension. Please check the server logs.");
}
Status ModuleUnloadNoSuchModule() {
  return Err("ERR Error unloading module: no such module with that name");
}

Status MaxClientsReached() { return Err("ERR max number of clients reached"); }

// Redis 7.0.15's text, byte for byte (clients and operators search for it).
Status ProtectedModeDenied() {
  return Err(
      "DENIED Redis is running in protected mode because protected mode is enabled and no "
      "password is set for the default user. In this mode connections are only accepted from "
      "the loopback interface. If you want to connect from external computers to Redis you may "
      "adopt one of the following solutions: 1) Just disable protected mode sending the command "
      "'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from "
      "the same host the server is running, however MAKE SURE Redis is not publicly accessible "
      "from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) "
      "Alternatively you can just disable the protected mode by editing the Redis configuration "
      "file, and setting the protected mode option to 'no', and then restarting the server. 3) "
      "If you started the server manually just for testing, restart it with the "
      "'--protected-mode no' option. 4) Setup a an authentication password for the default "
      "user. NOTE: You only need to do one of the above things in order for the server to start "
      "accepting connections from the outside.");
}
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

std::string MaxclientsOverOsLimit(int64_t fits) {
  return "The operating system is not able to handle the specified number of clients, try "
         "with " +
         std::to_string(fits);
}

Status ConfigSetUnknown(std::string_view name) {
  return Err("ERR Unknown option or number of arguments for CONFIG SET - '" + std::string(name) +
             "'");
}

Status TlsConfigureFailed(std::string_view name) {
  return ConfigSetFailed(name, "Unable to update TLS configuration. Check server logs.");
}

Status ConfigSetProtected(std::string_view name) {
  return ConfigSetFailed(name, "can't set protected config");
}

Status NoConfigFile() { return Err("ERR The server is running without a config file"); }

Status ConfigRewriteFailed(std::string_view reason) {
  return Err("ERR Rewriting config file: " + std::string(reason));
}

Status BlockFromScript(std::string_view command) {
  return Err("ERR " + std::string(command) +
             " command is not allowed with BLOCK option from scripts");
}

Status LatencyNoSamples(std::string_view event) {
  return Err("ERR No samples available for event '" + std::string(event) + "'");
}

Status TlsListenFailed() {
  return ConfigSetFailed("tls-port", "Unable to listen on this port. Check server logs.");
}

Status NotPositive() { return Err("ERR value is out of range, must be positive"); }
Status CountOutOfLongRange() {
  return Err(
      "ERR value is out of range, value must between -9223372036854775807 and "
      "9223372036854775807");
}
Status ValueOutOfRange() { return Err("ERR value is out of range"); }
Status NumkeysNotPositive() { return Err("ERR numkeys should be greater than 0"); }
Status LimitNegative() { return Err("ERR LIMIT can't be negative"); }
Status InvalidCursor() { return Err("ERR invalid cursor"); }
Status IncrementNaNOrInfinity() { return Err("ERR value is NaN or Infinity"); }
Status BitOffsetInvalid() { return Err("ERR bit offset is not an integer or out of range"); }
Status BitValueInvalid() { return Err("ERR bit is not an integer or out of range"); }
Status BitArgumentInvalid() { return Err("ERR The bit argument must be 1 or 0."); }
Status BitOpNotOneKey() { return Err("ERR BITOP NOT must be called with a single source key."); }
Status BitfieldTypeInvalid() {
  return Err(
      "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but "
      "i64 is.");
}
Status BitfieldOverflowType() { return Err("ERR Invalid OVERFLOW type specified"); }
Status BitfieldRoOnlyGet() { return Err("ERR BITFIELD_RO only supports the GET subcommand"); }
Status LcsNeedsStrings() { return Err("ERR The specified keys must contain string values"); }
Status LcsLenAndIdx() {
  return Err("ERR If you want both the length and indexes, please just use IDX.");
}
Status PfDebugNoKey() { return Err("ERR The specified key does not exist"); }
Status PfDebugUnknown(std::string_view sub) {
  return Err("ERR Unknown PFDEBUG subcommand '" + std::string(sub) + "'");
}
Status LcsTooMuchMemory() {
  return Err("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
}
Status RankZero() {
  return Err(
      "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use "
      "negative to start from the end of the list");
}
Status CountNegative() { return Err("ERR COUNT can't be negative"); }
Status MaxlenNegative() { return Err("ERR MAXLEN can't be negative"); }
Status CountNotPositive() { return Err("ERR count should be greater than 0"); }
Status TimeoutNotFloat() { return Err("ERR timeout is not a float or out of range"); }
Status TimeoutNegative() { return Err("ERR timeout is negative"); }
Status UnblockReason() { return Err("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR"); }
Status UnblockedByClient() { return Err("UNBLOCKED client unblocked via CLIENT UNBLOCK"); }
Status SubcommandSyntax(std::string_view command, std::string_view sub) {
  std::string upper(command);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return Err("ERR unknown subcommand or wrong number of arguments for '" + std::string(sub) +
             "'. Try " + upper + " HELP.");
}
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
Status ZRangeLexWithScores() {
  return Err("ERR syntax error, WITHSCORES not supported in combination with BYLEX");
}
Status LexRangeNotValid() { return Err("ERR min or max not valid string range item"); }
Status WeightNotAFloat() { return Err("ERR weight value is not a float"); }
Status ZAtLeastOneKey(std::string_view command) {
  return Err("ERR at least 1 input key is needed for '" + std::string(command) + "' command");
}

Status MonitorDenyBlocking() { return Err("ERR MONITOR isn't allowed for DENY BLOCKING client"); }

Status SubscribedModeOnly(std::string_view name) {
  return Err("ERR Can't execute '" + std::string(name) +
             "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in "
             "this context");
}

Status Tracking(TrackingError error) {
  const char* text = "";
  switch (error) {
    case TrackingError::kRedirectTwice:
      text = "ERR A client can only redirect to a single other client";
      break;
    case TrackingError::kNoRedirectTarget:
      text = "ERR The client ID you want redirect to does not exist";
      break;
    case TrackingError::kPrefixNeedsBcast:
      text = "ERR PREFIX option requires BCAST mode to be enabled";
      break;
    case TrackingError::kSwitchBcast:
      text =
          "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and "
          "then re-enabling it with a different mode.";
      break;
    case TrackingError::kOptBcast:
      text = "ERR OPTIN and OPTOUT are not compatible with BCAST";
      break;
    case TrackingError::kOptinAndOptout:
      text = "ERR You can't specify both OPTIN mode and OPTOUT mode";
      break;
    case TrackingError::kSwitchOpt:
      text =
          "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and "
          "then re-enabling it with a different mode.";
      break;
    case TrackingError::kCachingNotTracking:
      text =
          "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN "
          "or OPTOUT mode enabled";
      break;
    case TrackingError::kCachingYes:
      text = "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.";
      break;
    case TrackingError::kCachingNo:
      text = "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.";
      break;
  }
  return Err(text);
}

Status TrackingPrefixOverlap(std::string_view prefix, std::string_view other, bool existing) {
  return Err("ERR Prefix '" + std::string(prefix) + "' overlaps with " +
             (existing ? "an existing" : "another provided") + " prefix '" + std::string(other) +
             "'. Prefixes for a single client must not overlap.");
}

Status SubscribeDenyBlocking(std::string_view command) {
  return Err("ERR " + std::string(command) + " isn't allowed for a DENY BLOCKING client");
}

std::string_view AclRuleErrorText(AclRuleError error) {
  switch (error) {
    case AclRuleError::kUnknownCommand:
      return "Unknown command or category name in ACL";
    case AclRuleError::kSyntax:
      return "Syntax error";
    case AclRuleError::kKeysAfterAll:
      return "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does "
             "not have any effect. Try 'resetkeys' to start with an empty list of patterns";
    case AclRuleError::kChannelsAfterAll:
      return "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and "
             "does not have any effect. Try 'resetchannels' to start with an empty list of "
             "channels";
    case AclRuleError::kNoSuchPassword:
      return "The password you are trying to remove from the user does not exist";
    case AclRuleError::kBadHash:
      return "The password hash must be exactly 64 characters and contain only lowercase "
             "hexadecimal characters";
    case AclRuleError::kFirstArgOfSub:
      return "Allowing first-arg of a subcommand is not supported";
    default:
      return "Wrong format";
  }
}

Status NoPerm(AclDenial denial, std::string_view command) {
  switch (denial) {
    case AclDenial::kCommand:
      return Err("NOPERM this user has no permissions to run the '" + std::string(command) +
                 "' command");
    case AclDenial::kKey:
      return Err("NOPERM this user has no permissions to access one of the keys used as arguments");
    case AclDenial::kChannel:
      return Err(
          "NOPERM this user has no permissions to access one of the channels used as arguments");
    default:
      return Err("ERR no permission");
  }
}

Status ExecNoPerm(AclDenial denial) {
  std::string reason = "no permission";
  if (denial == AclDenial::kCommand) reason = "no permission to execute the command or subcommand";
  if (denial == AclDenial::kKey) reason = "no permission to touch the specified keys";
  if (denial == AclDenial::kChannel) {
    reason = "no permission to access one of the channels used as arguments";
  }
  return Err(
      "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC "
      "call. This command is no longer allowed for the following reason: " +
      reason);
}

Status ScriptNoPerm(AclDenial denial) {
  std::string text = "ERR The user executing the script ";
  if (denial == AclDenial::kCommand) text += "can't run this command or subcommand";
  if (denial == AclDenial::kKey) {
    text += "can't access at least one of the keys mentioned in the command arguments";
  }
  if (denial == AclDenial::kChannel)
    text += "can't publish to the channel mentioned in the command";
  return Err(std::move(text));
}

std::string DryRunDenial(AclDenial denial, std::string_view command, std::string_view arg) {
  if (denial == AclDenial::kCommand) {
    return "This user has no permissions to run the '" + std::string(command) + "' command";
  }
  const char* what = denial == AclDenial::kKey ? "' key" : "' channel";
  return "This user has no permissions to access the '" + std::string(arg) + what;
}

Status AclUsernameSpaces() { return Err("ERR Usernames can't contain spaces or null characters"); }
Status AclDefaultUserUndeletable() { return Err("ERR The 'default' user cannot be removed"); }
Status AclNoAclFile() {
  return Err(
      "ERR This Redis instance is not configured to use an ACL file. You may want to specify "
      "users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a "
      "Redis configuration file set) in order to store users in the Redis configuration.");
}
Status AclSaveFailed() {
  return Err(
      "ERR There was an error trying to save the ACLs. Please check the server logs for more "
      "information");
}
Status AclUnknownCategory(std::string_view name) {
  return Err("ERR Unknown category '" + std::string(name.substr(0, 128)) + "'");
}
Status AclGenpassBits() {
  return Err(
      "ERR ACL GENPASS argument must be the number of bits for the output password, a positive "
      "number up to 4096");
}
Status AclUserNotFound(std::string_view name) {
  return Err("ERR User '" + std::string(name) + "' not found");
}
Status AclCommandNotFound(std::string_view name) {
  return Err("ERR Command '" + std::string(name) + "' not found");
}

// Stream commands.
Status StreamBadId() { return Err("ERR Invalid stream ID specified as stream command argument"); }
Status StreamIdZero() { return Err("ERR The ID specified in XADD must be greater than 0-0"); }
Status StreamIdTooSmall() {
  return Err("ERR The ID specified in XADD is equal or smaller than the target stream top item");
}
Status StreamExhausted() {
  return Err("ERR The stream has exhausted the last possible ID, unable to add more items");
}
Status StreamMaxlenAndMinid() {
  return Err("ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
}
Status StreamMaxlenNegative() { return Err("ERR The MAXLEN argument must be >= 0."); }
Status StreamLimitNegative() { return Err("ERR The LIMIT argument must be >= 0."); }
Status StreamLimitNoStrategy() {
  return Err("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
}
Status StreamTrimNoStrategy() {
  return Err("ERR syntax error, XTRIM must be called with a trimming strategy");
}
Status StreamLimitNoApprox() {
  return Err("ERR syntax error, LIMIT cannot be used without the special ~ option");
}
Status StreamBadStart() { return Err("ERR invalid start ID for the interval"); }
Status StreamBadEnd() { return Err("ERR invalid end ID for the interval"); }
Status XReadUnbalanced() {
  return Err(
      "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be "
      "specified.");
}
Status XReadOnlyGroupOption(std::string_view option) {
  return Err("ERR The " + std::string(option) +
             " option is only supported by XREADGROUP. You called XREAD instead.");
}
Status XReadGreaterThanId() {
  return Err(
      "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> "
      "<consumer> option.");
}
Status XSetIdEntriesNegative() { return Err("ERR entries_added must be positive"); }
Status XSetIdBelowMaxDeleted() {
  return Err("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id");
}
Status XSetIdBelowTop() {
  return Err("ERR The ID specified in XSETID is smaller than the target stream top item");
}
Status XSetIdEntriesBelowLength() {
  return Err("ERR The entries_added specified in XSETID is smaller than the target stream length");
}

// Stream consumer groups.
Status XGroupNeedsKey() {
  return Err(
      "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want "
      "to use the MKSTREAM option to create an empty stream automatically.");
}
Status NoGroupForKey(std::string_view group, std::string_view key) {
  return Err("NOGROUP No such consumer group '" + std::string(group) + "' for key name '" +
             std::string(key) + "'");
}
Status BusyGroup() { return Err("BUSYGROUP Consumer Group name already exists"); }
Status EntriesReadNegative() { return Err("ERR value for ENTRIESREAD must be positive or -1"); }
Status BlockedGroupDestroyed() {
  return Err("NOGROUP the consumer group this client was blocked on no longer exists");
}
Status BlockedStreamDeleted() { return Err("UNBLOCKED the stream key no longer exists"); }
Status NoKeyOrGroup(std::string_view key, std::string_view group, bool xreadgroup) {
  return Err("NOGROUP No such key '" + std::string(key) + "' or consumer group '" +
             std::string(group) + "'" + (xreadgroup ? " in XREADGROUP with GROUP option" : ""));
}
Status XReadGroupDollar() {
  return Err(
      "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history "
      "of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ "
      "ID would just return an empty result set.");
}
Status XReadGroupNeedsGroup() { return Err("ERR Missing GROUP option for XREADGROUP"); }
Status XClaimInvalid(std::string_view what, std::string_view command) {
  return Err("ERR Invalid " + std::string(what) + " argument for " + std::string(command));
}
Status XClaimUnrecognized(std::string_view option) {
  return Err("ERR Unrecognized XCLAIM option '" + std::string(option) + "'");
}
Status XAutoClaimCount() { return Err("ERR COUNT must be > 0"); }

}  // namespace sluice::server
