// The command families: every Redis and Sluice command, one file per family (cmd_*.cc), with the
// argument parsers they share. Each family registers its commands in the one CommandTable
// (server/core/command.h) by an explicit call; RegisterAllCommands is what the server and the
// test harnesses call.
#pragma once

#include "server/core/command.h"

namespace sluice::server {

// Families (one file each in this folder).
void RegisterServerCommands(CommandTable& table);  // cmd_server.cc: PING, INFO, CONFIG, ...
void RegisterConnectionCommands(
    CommandTable& table);                           // cmd_connection.cc: HELLO, AUTH, CLIENT, ...
void RegisterStringCommands(CommandTable& table);   // cmd_strings.cc
void RegisterKeyCommands(CommandTable& table);      // cmd_keys.cc
void RegisterLimiterCommands(CommandTable& table);  // cmd_limiters.cc
void RegisterTransactionCommands(CommandTable& table);  // cmd_multi.cc: MULTI, EXEC, WATCH, ...
void RegisterScriptingCommands(CommandTable& table);    // cmd_scripting.cc: EVAL, SCRIPT, ...
void RegisterFunctionCommands(CommandTable& table);     // cmd_functions.cc: FUNCTION, FCALL
void RegisterHashCommands(CommandTable& table);         // cmd_hashes.cc
void RegisterSetCommands(CommandTable& table);          // cmd_sets.cc
void RegisterListCommands(CommandTable& table);         // cmd_lists.cc
void RegisterZSetCommands(CommandTable& table);         // cmd_zsets.cc
void RegisterStreamCommands(CommandTable& table);       // cmd_streams.cc, cmd_stream_read.cc
// All of the above, in that order.
void RegisterAllCommands(CommandTable& table);
// LIMITS.TAKE (cmd_limits_take.cc); RegisterLimiterCommands calls it.
void RegisterLimitsTakeCommand(CommandTable& table);

}  // namespace sluice::server
