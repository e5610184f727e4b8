// Redis 7.0's exact error text of EVAL, the Lua redis library, FUNCTION and FCALL (declared in
// errors.h, with the rest of the server's error text; kept apart only to keep errors.cc small).
#include <string>
#include <string_view>
#include <utility>

#include "server/core/errors.h"

namespace sluice::server {

namespace {

Status Err(std::string message) { return Status::InvalidArgument(std::move(message)); }

}  // namespace

Status ShebangOption(std::string_view opt) {
  return Err("ERR Unknown lua shebang option: " + std::string(opt));
}
Status ShebangFlag(std::string_view flag) {
  return Err("ERR Unexpected flag in script shebang: " + std::string(flag));
}
Status ScriptCompile(std::string_view lua_message) {
  return Err("ERR Error compiling script (new function): " + std::string(lua_message));
}
Status ScriptRunError(std::string_view name, std::string_view lua_message) {
  return Err("ERR Error running script (call to " + std::string(name) +
             "): " + std::string(lua_message));
}
Status ScriptUnknownCommand() { return Err("ERR Unknown Redis command called from script"); }
Status ScriptWrongArity() {
  return Err("ERR Wrong number of args calling Redis command from script");
}
Status ScriptNoScriptCommand() { return Err("ERR This Redis command is not allowed from script"); }
Status ScriptWriteInReadOnly() {
  return Err("ERR Write commands are not allowed from read-only scripts.");
}
Status ScriptNoArguments() {
  return Err("ERR Please specify at least one argument for this redis lib call");
}
Status ScriptBadArgument() {
  return Err("ERR Lua redis lib command arguments must be strings or integers");
}
Status ScriptLockConflict() {
  return Err("ERR script stopped: an undeclared key is locked by another client");
}
Status ScriptStackLimit() { return Err("ERR reached lua stack limit"); }
Status ScriptKilled() { return Err("ERR Script killed by user with SCRIPT KILL..."); }
Status ScriptNotBusy() { return Err("NOTBUSY No scripts in execution right now."); }
Status ScriptUnkillable() {
  return Err(
      "UNKILLABLE Sorry the script already executed write commands against the dataset. You "
      "can either wait the script termination or kill the server in a hard way using the "
      "SHUTDOWN NOSAVE command.");
}
Status Busy(bool function) {
  return Err(std::string("BUSY Redis is busy running a script. You can only call ") +
             (function ? "FUNCTION KILL" : "SCRIPT KILL") + " or SHUTDOWN NOSAVE.");
}
Status ScriptResetNeedsArg() { return Err("ERR redis.setresp() requires one argument."); }
Status ScriptBadResp() { return Err("ERR RESP version must be 2 or 3."); }
Status ScriptLogNeedsArgs() { return Err("ERR redis.log() requires two arguments or more."); }
Status ScriptBadLogLevel() { return Err("ERR Invalid debug level."); }
Status ScriptWrongArgs() { return Err("ERR wrong number of arguments"); }
Status ScriptWrongArgsOrType() { return Err("ERR wrong number or type of arguments"); }
Status ScriptSetReplArgs() { return Err("ERR redis.set_repl() requires one argument."); }
Status ScriptAclCheckOutsideRun() {
  return Err("ERR redis.acl_check_cmd can only be called inside a script invocation");
}
Status ScriptAclCheckUnknownCommand() {
  return Err("ERR Invalid command passed to redis.acl_check_cmd()");
}
Status ScriptBadReplFlags() {
  return Err("ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.");
}
Status ScriptRoWithWrites() {
  return Err("ERR Can not execute a script with write flag using *_ro command.");
}
Status ScriptFlushOption() { return Err("ERR SCRIPT FLUSH only support SYNC|ASYNC option"); }
Status MissingLibraryMetadata() { return Err("ERR Missing library metadata"); }
Status EngineNotFound(std::string_view name) {
  return Err("ERR Engine '" + std::string(name) + "' not found");
}
Status InvalidMetadata(std::string_view part) {
  return Err("ERR Invalid metadata value given: " + std::string(part));
}
Status InvalidLibraryMetadata() { return Err("ERR Invalid library metadata"); }
Status LibraryNameRepeated() {
  return Err("ERR Invalid metadata value, name argument was given multiple times");
}
Status LibraryNameMissing() { return Err("ERR Library name was not given"); }
Status BadLibraryName() {
  return Err(
      "ERR Library names can only contain letters, numbers, or underscores(_) and must be at "
      "least one character long");
}
Status FunctionCompile(std::string_view lua_message) {
  return Err("ERR Error compiling function: " + std::string(lua_message));
}
Status FunctionRegistering(std::string_view lua_message) {
  return Err("ERR Error registering functions: " + std::string(lua_message));
}
Status NoFunctionsRegistered() { return Err("ERR No functions registered"); }
Status FunctionExists(std::string_view name) {
  return Err("ERR Function " + std::string(name) + " already exists");
}
Status RestoredLibraryExists(std::string_view name) {
  return Err("ERR Library " + std::string(name) + " already exists");
}
Status LibraryExists(std::string_view name) {
  return Err("ERR Library '" + std::string(name) + "' already exists");
}
Status LibraryNotFound() { return Err("ERR Library not found"); }
Status FunctionLoadTimeout() { return Err("ERR FUNCTION LOAD timeout"); }
Status FcallBadNumKeys() { return Err("ERR Bad number of keys provided"); }
Status FunctionNotFound() { return Err("ERR Function not found"); }
Status ScriptFunctionBadFlag() { return Err("ERR unknown flag given"); }
Status ScriptFunctionNameNotString() {
  return Err("ERR function_name argument given to redis.register_function must be a string");
}
Status ScriptFunctionCallbackNotFunction() {
  return Err("ERR callback argument given to redis.register_function must be a function");
}
Status ScriptFunctionDescriptionNotString() {
  return Err("ERR description argument given to redis.register_function must be a string");
}
Status ScriptFunctionFlagsNotTable() {
  return Err(
      "ERR flags argument to redis.register_function must be a table representing function "
      "flags");
}
Status ScriptFunctionBadArgument() {
  return Err("ERR unknown argument given to redis.register_function");
}
Status ScriptFunctionNeedsName() {
  return Err("ERR first argument to redis.register_function must be a string");
}
Status ScriptFunctionNeedsCallback() {
  return Err("ERR second argument to redis.register_function must be a function");
}
Status ScriptFunctionSingleArgument() {
  return Err(
      "ERR calling redis.register_function with a single argument is only applicable to Lua "
      "table (representing named arguments).");
}
Status ScriptFunctionWrongArgs() {
  return Err("ERR wrong number of arguments to redis.register_function");
}
Status ScriptFunctionNotLoading() {
  return Err("ERR redis.register_function can only be called on FUNCTION LOAD command");
}
Status ScriptFunctionDuplicate() { return Err("ERR Function already exists in the library"); }
Status ScriptFunctionNamedNoName() {
  return Err("ERR redis.register_function must get a function name argument");
}
Status ScriptFunctionNamedNoCallback() {
  return Err("ERR redis.register_function must get a callback argument");
}
std::string NonexistentGlobal(std::string_view name) {
  return "Script attempted to access nonexistent global variable '" + std::string(name) + "'";
}
std::string ReadonlyTable() { return "Attempt to modify a readonly table"; }

}  // namespace sluice::server
