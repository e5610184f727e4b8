// The one place Redis error text is produced. Handlers never spell an error themselves: they
// reply with a Status (engine errors and argument errors alike) or one of the helpers below.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "protocol/reply_writer.h"
#include "sluice/status.h"

namespace sluice {
struct KeyspaceCheckReport;  // sluice/store.h
}  // namespace sluice

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
//   kCannotPersist   -> "MISCONF Errors writing to the write-ahead log (<message>): Sluice cannot
//                        persist writes, ..."
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
Status DbIndexOutOfRange();  // "ERR DB index is out of range"
Status IntOutOfRange();      // "ERR value is out of range, value must between -2147483648 and ..."
Status SameObject();         // "ERR source and destination objects are the same"
// SWAPDB's "ERR invalid first DB index" / "ERR invalid second DB index".
Status InvalidDbIndex(bool first);
// Geo (GEOADD, GEOSEARCH, GEORADIUS, ...).
Status GeoBadLonLat(double lon, double lat);  // "ERR invalid longitude,latitude pair %f,%f"
Status GeoBadUnit();  // "ERR unsupported unit provided. please use M, KM, FT, MI"
Status GeoNeedNumeric(std::string_view what);  // "ERR need numeric radius" (width, height)
Status GeoRadiusNegative();                    // "ERR radius cannot be negative"
Status GeoBoxNegative();                       // "ERR height or width cannot be negative"
Status GeoCountNotPositive();                  // "ERR COUNT must be > 0"
Status GeoNoMember();                          // "ERR could not decode requested zset member"
Status GeoStoreWith(bool geosearchstore);  // "ERR STORE option in GEORADIUS is not compatible..."
Status GeoNeedFrom(std::string_view command);  // "ERR exactly one of FROMMEMBER or FROMLONLAT..."
Status GeoNeedBy(std::string_view command);    // "ERR exactly one of BYRADIUS and BYBOX ..."
Status GeoAnyNeedsCount();                     // "ERR the ANY argument requires COUNT argument"
Status SortNotDouble();      // "ERR One or more scores can't be converted into double"
Status BgSaveInProgress();   // "ERR Background save already in progress"
Status PauseModeBad();       // "ERR CLIENT PAUSE mode must be WRITE or ALL"
Status TimeoutNotInteger();  // "ERR timeout is not an integer or out of range"
Status TimeoutOutOfRange();  // "ERR timeout is out of range"
Status SlowlogCountBad();    // "ERR count should be greater than or equal to -1"
Status LfuNotSelected();     // "ERR An LFU maxmemory policy is not selected, access frequency ..."
Status NoProto();            // "NOPROTO unsupported protocol version"
Status AuthWithoutPassword();       // "ERR AUTH <password> called without any password ..."
Status ModuleCommandNotAllowed();   // "ERR MODULE command not allowed. If the ..."
Status ModuleLoadFailed();          // "ERR Error loading the extension. Please check ..."
Status ModuleUnloadNoSuchModule();  // "ERR Error unloading module: no such module ..."
Status DebugNotAllowed();           // "ERR DEBUG command not allowed. If the ..."
// DEBUG KEYSPACE-CHECK found db's maintained counts different from a walk of its keys.
Status KeyspaceCountsDiffer(int db, const KeyspaceCheckReport& report);
Status MaxClientsReached();    // "ERR max number of clients reached"
Status ProtectedModeDenied();  // "DENIED Redis is running in protected mode because ..."
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
// COMMAND GETKEYS (Redis 7.0's texts).
Status GetKeysInvalidCommand();  // "ERR Invalid command specified"
Status GetKeysInvalidArity();    // "ERR Invalid number of arguments specified for command"
Status GetKeysNoKeys();          // "ERR The command has no key arguments"
// Collection commands (Redis 7.0's texts).
Status NotPositive();  // "ERR value is out of range, must be positive"
Status
CountOutOfLongRange();     // "ERR value is out of range, value must between -LONG_MAX and LONG_MAX"
Status ValueOutOfRange();  // "ERR value is out of range"
Status NumkeysNotPositive();      // "ERR numkeys should be greater than 0"
Status LimitNegative();           // "ERR LIMIT can't be negative"
Status InvalidCursor();           // "ERR invalid cursor"
Status IncrementNaNOrInfinity();  // "ERR value is NaN or Infinity" (HINCRBYFLOAT)
// Bitmaps, BITFIELD and LCS (Redis 7.0's texts).
Status BitOffsetInvalid();      // "ERR bit offset is not an integer or out of range"
Status BitValueInvalid();       // "ERR bit is not an integer or out of range"
Status BitArgumentInvalid();    // "ERR The bit argument must be 1 or 0."
Status BitOpNotOneKey();        // "ERR BITOP NOT must be called with a single source key."
Status BitfieldTypeInvalid();   // "ERR Invalid bitfield type. Use something like i16 u8. ..."
Status BitfieldOverflowType();  // "ERR Invalid OVERFLOW type specified"
Status BitfieldRoOnlyGet();     // "ERR BITFIELD_RO only supports the GET subcommand"
Status LcsNeedsStrings();       // "ERR The specified keys must contain string values"
Status LcsLenAndIdx();      // "ERR If you want both the length and indexes, please just use IDX."
Status LcsTooMuchMemory();  // "ERR Insufficient memory, transient memory for LCS exceeds ..."
Status PfDebugNoKey();      // "ERR The specified key does not exist"
Status PfDebugUnknown(std::string_view sub);  // "ERR Unknown PFDEBUG subcommand 'x'"
// List commands (Redis 7.0's texts).
Status RankZero();          // "ERR RANK can't be zero: use 1 to start from the first match, ..."
Status CountNegative();     // "ERR COUNT can't be negative"
Status MaxlenNegative();    // "ERR MAXLEN can't be negative"
Status CountNotPositive();  // "ERR count should be greater than 0"
// Blocking commands (server/core/blocking.h) and CLIENT UNBLOCK.
Status TimeoutNotFloat();    // "ERR timeout is not a float or out of range"
Status TimeoutNegative();    // "ERR timeout is negative"
Status UnblockReason();      // "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR"
Status UnblockedByClient();  // "UNBLOCKED client unblocked via CLIENT UNBLOCK"
// "ERR unknown subcommand or wrong number of arguments for 'UNBLOCK'. Try CLIENT HELP."
Status SubcommandSyntax(std::string_view command, std::string_view sub);
// Sorted set commands (Redis 7.0's texts).
Status MinOrMaxNotFloat();    // "ERR min or max is not a float"
Status ZAddXxNx();            // "ERR XX and NX options at the same time are not compatible"
Status ZAddGtLtNx();          // "ERR GT, LT, and/or NX options at the same time are not compatible"
Status ZAddIncrPairs();       // "ERR INCR option supports a single increment-element pair"
Status ZRangeLimitNeedsBy();  // "ERR syntax error, LIMIT is only supported in combination ..."
Status ZRangeLexWithScores();  // "ERR syntax error, WITHSCORES not supported in combination ..."
Status LexRangeNotValid();     // "ERR min or max not valid string range item"
Status WeightNotAFloat();      // "ERR weight value is not a float"
// "ERR at least 1 input key is needed for 'zunionstore' command"
Status ZAtLeastOneKey(std::string_view command);
// Stream commands (Redis 7.0's texts).
Status StreamBadId();            // "ERR Invalid stream ID specified as stream command argument"
Status StreamIdZero();           // "ERR The ID specified in XADD must be greater than 0-0"
Status StreamIdTooSmall();       // "ERR The ID specified in XADD is equal or smaller than ..."
Status StreamExhausted();        // "ERR The stream has exhausted the last possible ID, ..."
Status StreamMaxlenAndMinid();   // "ERR syntax error, MAXLEN and MINID options at the same ..."
Status StreamMaxlenNegative();   // "ERR The MAXLEN argument must be >= 0."
Status StreamLimitNegative();    // "ERR The LIMIT argument must be >= 0."
Status StreamLimitNoStrategy();  // "ERR syntax error, LIMIT cannot be used without specifying ..."
Status StreamTrimNoStrategy();   // "ERR syntax error, XTRIM must be called with a trimming ..."
Status StreamLimitNoApprox();    // "ERR syntax error, LIMIT cannot be used without the special ~"
Status StreamBadStart();         // "ERR invalid start ID for the interval"
Status StreamBadEnd();           // "ERR invalid end ID for the interval"
Status XReadUnbalanced();        // "ERR Unbalanced XREAD list of streams: for each stream key ..."
Status XReadOnlyGroupOption(std::string_view option);  // "ERR The GROUP option is only ..."
Status XReadGreaterThanId();     // "ERR The > ID can be specified only when calling XREADGROUP ..."
Status XSetIdEntriesNegative();  // "ERR entries_added must be positive"
Status
XSetIdBelowMaxDeleted();  // "ERR The ID specified in XSETID is smaller than the provided ..."
Status XSetIdBelowTop();  // "ERR The ID specified in XSETID is smaller than the target ..."
Status XSetIdEntriesBelowLength();  // "ERR The entries_added specified in XSETID is smaller ..."
// Stream consumer groups (Redis 7.0's texts).
Status XGroupNeedsKey();  // "ERR The XGROUP subcommand requires the key to exist. Note that ..."
// "NOGROUP No such consumer group 'g' for key name 'k'"
Status NoGroupForKey(std::string_view group, std::string_view key);
Status BusyGroup();            // "BUSYGROUP Consumer Group name already exists"
Status EntriesReadNegative();  // "ERR value for ENTRIESREAD must be positive or -1"
// "NOGROUP No such key 'k' or consumer group 'g'" (+ " in XREADGROUP with GROUP option")
Status NoKeyOrGroup(std::string_view key, std::string_view group, bool xreadgroup);
// A parked XREADGROUP woken because its group was destroyed / its stream key deleted.
Status BlockedGroupDestroyed();
Status BlockedStreamDeleted();
Status XReadGroupDollar();      // "ERR The $ ID is meaningless in the context of XREADGROUP: ..."
Status XReadGroupNeedsGroup();  // "ERR Missing GROUP option for XREADGROUP"
// "ERR Invalid <what> argument for <command>" (XCLAIM's and XAUTOCLAIM's numbers)
Status XClaimInvalid(std::string_view what, std::string_view command);
Status XClaimUnrecognized(std::string_view option);  // "ERR Unrecognized XCLAIM option 'x'"
Status XAutoClaimCount();                            // "ERR COUNT must be > 0"
// The full error line ReplyError writes for `status` ("ERR ...", "WRONGTYPE ...").
std::string ErrorText(const Status& status);

// Scripting (EVAL, SCRIPT, the Lua `redis` API), Redis 7.0's texts. The Lua API's errors are
// raised into the script as Lua errors; ErrorText() gives their line.
Status NoScript();         // "NOSCRIPT No matching script. Please use EVAL."
Status NumKeysNegative();  // "ERR Number of keys can't be negative"
Status NumKeysTooMany();   // "ERR Number of keys can't be greater than number of args"
Status ShebangEngine(std::string_view line);  // "ERR Unexpected engine in script shebang: #!x"
Status ShebangOption(std::string_view opt);   // "ERR Unknown lua shebang option: name=x"
Status ShebangFlag(std::string_view flag);    // "ERR Unexpected flag in script shebang: x"
Status ScriptCompile(std::string_view lua_message);  // "ERR Error compiling script (new ..."
// "ERR Error running script (call to <name>): <message>" (errors without a position, such as
// running out of memory)
Status ScriptRunError(std::string_view name, std::string_view lua_message);
Status ScriptUnknownCommand();   // "ERR Unknown Redis command called from script"
Status ScriptWrongArity();       // "ERR Wrong number of args calling Redis command from script"
Status ScriptNoScriptCommand();  // "ERR This Redis command is not allowed from script"
Status ScriptWriteInReadOnly();  // "ERR Write commands are not allowed from read-only scripts."
Status ScriptNoArguments();      // "ERR Please specify at least one argument for this redis ..."
Status ScriptBadArgument();      // "ERR Lua redis lib command arguments must be strings or ..."
// Raised inside a script whose unit met a locked undeclared key; never replied (the script
// runs again): "ERR script stopped: an undeclared key is locked by another client"
Status ScriptLockConflict();
Status ScriptStackLimit();  // "ERR reached lua stack limit" (a reply nested too deep)
Status ScriptKilled();      // "ERR Script killed by user with SCRIPT KILL..."
Status ScriptNotBusy();     // "NOTBUSY No scripts in execution right now."
Status ScriptUnkillable();  // "UNKILLABLE Sorry the script already executed write ..."
// "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
// (FUNCTION KILL when a function is busy)
Status Busy(bool function);
Status ScriptResetNeedsArg();       // "ERR redis.setresp() requires one argument."
Status ScriptBadResp();             // "ERR RESP version must be 2 or 3."
Status ScriptLogNeedsArgs();        // "ERR redis.log() requires two arguments or more."
Status ScriptBadLogLevel();         // "ERR Invalid debug level."
Status ScriptWrongArgs();           // "ERR wrong number of arguments" (redis.sha1hex, ...)
Status ScriptWrongArgsOrType();     // "ERR wrong number or type of arguments" (error_reply, ...)
Status ScriptSetReplArgs();         // "ERR redis.set_repl() requires one argument."
Status ScriptAclCheckOutsideRun();  // "ERR redis.acl_check_cmd can only be called ..."
Status ScriptAclCheckUnknownCommand();  // "ERR Invalid command passed to redis.acl_check_cmd()"
Status ScriptBadReplFlags();            // "ERR Invalid replication flags. Use REPL_AOF, ..."
Status ScriptRoWithWrites();  // "ERR Can not execute a script with write flag using *_ro ..."
Status ScriptFlushOption();   // "ERR SCRIPT FLUSH only support SYNC|ASYNC option"
// Functions (FUNCTION, FCALL, redis.register_function), Redis 7.0's texts.
Status MissingLibraryMetadata();                // "ERR Missing library metadata"
Status EngineNotFound(std::string_view name);   // "ERR Engine 'x' not found"
Status InvalidMetadata(std::string_view part);  // "ERR Invalid metadata value given: foo=bar"
Status InvalidLibraryMetadata();  // "ERR Invalid library metadata" (unbalanced quotes)
Status LibraryNameRepeated();     // "ERR Invalid metadata value, name argument was given ..."
Status LibraryNameMissing();      // "ERR Library name was not given"
Status BadLibraryName();          // "ERR Library names can only contain ..."
Status FunctionCompile(std::string_view lua_message);      // "ERR Error compiling function: ..."
Status FunctionRegistering(std::string_view lua_message);  // "ERR Error registering functions: "
Status NoFunctionsRegistered();                            // "ERR No functions registered"
Status FunctionExists(std::string_view name);              // "ERR Function f already exists"
Status RestoredLibraryExists(std::string_view name);       // FUNCTION RESTORE: no quotes, as Redis
Status LibraryExists(std::string_view name);               // "ERR Library 'x' already exists"
Status LibraryNotFound();                                  // "ERR Library not found"
Status FunctionLoadTimeout();                              // "ERR FUNCTION LOAD timeout"
Status FcallBadNumKeys();                                  // "ERR Bad number of keys provided"
Status FunctionNotFound();                                 // "ERR Function not found"
Status BadDumpPayload();       // "ERR DUMP payload version or checksum are wrong"
Status FunctionFlushOption();  // "ERR FUNCTION FLUSH only supports SYNC|ASYNC option"
Status UnknownOptionGiven(std::string_view opt);  // "ERR Unknown option given: FOO"
Status UnknownArgument(std::string_view arg);     // "ERR Unknown argument FOO"
Status LibraryNameArgMissing();                   // "ERR library name argument was not given"
Status BadRestorePolicy();             // "ERR Wrong restore policy given, value should be ..."
Status ScriptFunctionBadFlag();        // "ERR unknown flag given"
Status ScriptFunctionNameNotString();  // "ERR function_name argument given to ..."
Status ScriptFunctionCallbackNotFunction();   // "ERR callback argument given to ..."
Status ScriptFunctionDescriptionNotString();  // "ERR description argument given to ..."
Status ScriptFunctionFlagsNotTable();         // "ERR flags argument to redis.register_function ..."
Status ScriptFunctionBadArgument();     // "ERR unknown argument given to redis.register_function"
Status ScriptFunctionNeedsName();       // "ERR first argument to redis.register_function must ..."
Status ScriptFunctionNeedsCallback();   // "ERR second argument to redis.register_function must ..."
Status ScriptFunctionSingleArgument();  // "ERR calling redis.register_function with a single ..."
Status ScriptFunctionWrongArgs();    // "ERR wrong number of arguments to redis.register_function"
Status ScriptFunctionNotLoading();   // "ERR redis.register_function can only be called on ..."
Status ScriptFunctionDuplicate();    // "ERR Function already exists in the library"
Status ScriptFunctionNamedNoName();  // "ERR redis.register_function must get a function ..."
Status ScriptFunctionNamedNoCallback();  // "ERR redis.register_function must get a callback ..."
// "Script attempted to access nonexistent global variable 'x'" and "Attempt to modify a
// readonly table": Lua error messages (the script position is prefixed, "ERR " added later).
std::string NonexistentGlobal(std::string_view name);
std::string ReadonlyTable();

// RESTORE (Redis 7.0's texts).
Status BadDataFormat();    // "ERR Bad data format"
Status BusyKey();          // "BUSYKEY Target key name already exists."
Status InvalidTtlValue();  // "ERR Invalid TTL value, must be >= 0"
Status InvalidIdleTime();  // "ERR Invalid IDLETIME value, must be >= 0"
Status InvalidFreq();      // "ERR Invalid FREQ value, must be >= 0 and <= 255"
// MIGRATE (Redis 7.0's texts).
// "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string"
Status MigrateKeysNeedEmptyKey();
Status MigrateIoError(std::string_view what);  // "IOERR error or timeout <what>"
// "ERR Target instance replied with error: <message>"
Status TargetReplied(std::string_view message);

// "ERR CONFIG SET failed (possibly related to argument 'port') - can't set immutable config"
Status ConfigSetFailed(std::string_view name, std::string_view reason);
Status ConfigSetImmutable(std::string_view name);
// CONFIG SET maxclients beyond the open files limit: the reason for ConfigSetFailed,
// "The operating system is not able to handle the specified number of clients, try with N".
std::string MaxclientsOverOsLimit(int64_t fits);
// "ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'"
Status ConfigSetUnknown(std::string_view name);
// CONFIG SET of a tls-* option whose new TLS context cannot be built: "ERR CONFIG SET failed
// (possibly related to argument 'tls-cert-file') - Unable to update TLS configuration. Check
// server logs."
Status TlsConfigureFailed(std::string_view name);
// "... - can't set protected config" (dir, dbfilename without enable-protected-configs).
Status ConfigSetProtected(std::string_view name);
Status NoConfigFile();  // "ERR The server is running without a config file" (CONFIG REWRITE)
// "ERR Rewriting config file: <strerror text>"
Status ConfigRewriteFailed(std::string_view reason);
// "ERR xread command is not allowed with BLOCK option from scripts" (`command` as given).
Status BlockFromScript(std::string_view command);
// "ERR No samples available for event '<event>'" (LATENCY GRAPH)
Status LatencyNoSamples(std::string_view event);
// CONFIG SET tls-port to a port that cannot be bound: "ERR CONFIG SET failed (possibly related
// to argument 'tls-port') - Unable to listen on this port. Check server logs."
Status TlsListenFailed();

// "ERR MONITOR isn't allowed for DENY BLOCKING client" (MONITOR inside EXEC).
Status MonitorDenyBlocking();
// Pub/sub. "ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT /
// RESET are allowed in this context" (RESP2 subscribed mode; `name` as "client|list").
Status SubscribedModeOnly(std::string_view name);
// "ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client" (`command` in capitals; EXEC).
Status SubscribeDenyBlocking(std::string_view command);
// Client-side caching (CLIENT TRACKING / CACHING), Redis 7.0.15's texts.
enum class TrackingError : int {
  kRedirectTwice,       // "ERR A client can only redirect to a single other client"
  kNoRedirectTarget,    // "ERR The client ID you want redirect to does not exist"
  kPrefixNeedsBcast,    // "ERR PREFIX option requires BCAST mode to be enabled"
  kSwitchBcast,         // "ERR You can't switch BCAST mode on/off before disabling tracking ..."
  kOptBcast,            // "ERR OPTIN and OPTOUT are not compatible with BCAST"
  kOptinAndOptout,      // "ERR You can't specify both OPTIN mode and OPTOUT mode"
  kSwitchOpt,           // "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking ..."
  kCachingNotTracking,  // "ERR CLIENT CACHING can be called only when the client is in ..."
  kCachingYes,  // "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN ..."
  kCachingNo,   // "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT ..."
};
Status Tracking(TrackingError error);
// "ERR Prefix 'a' overlaps with an existing prefix 'ab'. Prefixes for a single client must not
// overlap." (`existing` false: "... with another provided prefix ...").
Status TrackingPrefixOverlap(std::string_view prefix, std::string_view other, bool existing);
// ACLs (server/core/acl_*.h), Redis 7.0.15's texts.
enum class AclRuleError : int;
// The reason part of "Error in ACL SETUSER modifier '...': <reason>".
std::string_view AclRuleErrorText(AclRuleError error);
// Why the gate refused a command: which permission was missing.
enum class AclDenial : uint8_t { kNone, kCommand, kKey, kChannel };
// "NOPERM this user has no permissions to run the 'get' command" / "... access one of the keys
// used as arguments" / "... one of the channels used as arguments"
Status NoPerm(AclDenial denial, std::string_view command);
// At EXEC, for a queued command the user may no longer run: "NOPERM ACLs rules changed ...".
Status ExecNoPerm(AclDenial denial);
// redis.call refused: "The user executing the script can't run this command or subcommand" ...
Status ScriptNoPerm(AclDenial denial);
// ACL DRYRUN's denial, a bulk reply: "This user has no permissions to run the 'get' command".
std::string DryRunDenial(AclDenial denial, std::string_view command, std::string_view arg);
Status AclUsernameSpaces();          // "ERR Usernames can't contain spaces or null characters"
Status AclDefaultUserUndeletable();  // "ERR The 'default' user cannot be removed"
Status AclNoAclFile();   // "ERR This Redis instance is not configured to use an ACL file..."
Status AclSaveFailed();  // "ERR There was an error trying to save the ACLs. ..."
Status AclUnknownCategory(std::string_view name);  // "ERR Unknown category 'x'"
Status AclGenpassBits();                           // "ERR ACL GENPASS argument must be ..."
Status AclUserNotFound(std::string_view name);     // "ERR User 'x' not found"
Status AclCommandNotFound(std::string_view name);  // "ERR Command 'x' not found"

// Replication (server/replication), Redis 7.0.15's text.
Status ReadOnlyReplica();  // "READONLY You can't write against a read only replica."
Status NoReplicas();       // "NOREPLICAS Not enough good replicas to write."
Status MasterDown();  // "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is ..."
Status InvalidMasterPort();          // "ERR Invalid master port"
Status ReplicaOfByReplica();         // "ERR Command is not valid when client is a replica."
Status ReplicaOfWhileFailingOver();  // "ERR REPLICAOF not allowed while failing over."
Status WaitOnReplica();              // "ERR WAIT cannot be used with replica instances. ..."
Status UnrecognizedReplconf(std::string_view option);  // "ERR Unrecognized REPLCONF option: x"
Status NoMasterLink();               // "NOMASTERLINK Can't SYNC while not connected with my master"
Status FailoverOnReplica();          // "ERR FAILOVER is not valid when server is a replica."
Status FailoverNoReplicas();         // "ERR FAILOVER requires connected replicas."
Status FailoverInProgress();         // "ERR FAILOVER already in progress."
Status NoFailoverInProgress();       // "ERR No failover in progress."
Status FailoverTimeoutPositive();    // "ERR FAILOVER timeout must be greater than 0"
Status FailoverForceNeedsTimeout();  // "ERR FAILOVER with force option requires both ..."
Status FailoverTargetUnknown();      // "ERR FAILOVER target HOST and PORT is not a replica."
Status FailoverTargetOffline();      // "ERR FAILOVER target replica is not online."

}  // namespace sluice::server
