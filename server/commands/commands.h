// The command families: every Redis and Sluice command, one file per family (cmd_*.cc), with the
// argument parsers they share. Each family registers its commands in the one CommandTable
// (server/core/command.h) by an explicit call; RegisterAllCommands is what the server and the
// test harnesses call.
#pragma once

#include <string>

#include "server/core/command.h"

namespace sluice::server {

// Families (one file each in this folder).
void RegisterServerCommands(CommandTable& table);         // cmd_server.cc: PING, INFO, CONFIG, ...
void RegisterClusterClientCommands(CommandTable& table);  // cmd_cluster_client.cc: ASKING, ...
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
void RegisterPubSubCommands(CommandTable& table);       // cmd_pubsub.cc: SUBSCRIBE, PUBLISH, ...
void RegisterModuleCommands(CommandTable& table);       // cmd_module.cc: MODULE, OBJECT HELP
void RegisterKeyspaceCommands(CommandTable& table);     // cmd_keyspace.cc: TOUCH, MOVE, SWAPDB, ...
void RegisterSortCommands(CommandTable& table);         // cmd_sort.cc: SORT, SORT_RO
void RegisterGeoCommands(CommandTable& table);          // cmd_geo.cc, geo_search.cc: GEO*
void RegisterClientPauseCommands(CommandTable& table);  // cmd_client_pause.cc
void RegisterTrackingCommands(CommandTable& table);     // cmd_tracking.cc: CLIENT TRACKING, ...
void RegisterPersistenceCommands(CommandTable& table);  // cmd_persistence.cc: SAVE, BGSAVE
void RegisterSlowlogCommands(CommandTable& table);      // cmd_slowlog.cc: SLOWLOG
void RegisterLatencyCommands(CommandTable& table);      // cmd_latency.cc: LATENCY
void RegisterMemoryCommands(CommandTable& table);       // cmd_memory.cc: MEMORY
void RegisterBitmapCommands(CommandTable& table);       // cmd_bitmaps.cc: SETBIT, BITFIELD, ...
void RegisterHyperLogLogCommands(CommandTable& table);  // cmd_hyperloglog.cc: PFADD, ...
void RegisterLcsCommand(CommandTable& table);           // cmd_lcs.cc
void RegisterDumpCommands(CommandTable& table);         // cmd_dump.cc: DUMP, RESTORE
void RegisterStreamCommands(CommandTable& table);       // cmd_streams.cc, cmd_stream_read.cc
// All of the above, in that order.
void RegisterAclCommands(CommandTable& table);          // cmd_acl.cc: ACL and its subcommands
void RegisterReplicationCommands(CommandTable& table);  // cmd_replication.cc: REPLICAOF, WAIT..
void RegisterClusterCommands(CommandTable& table);      // cmd_cluster*.cc: CLUSTER ...
void RegisterAllCommands(CommandTable& table);
// Replaces the ACL users with those of the ACL file at `path` (ACL LOAD, and startup with an
// aclfile), closing the connections of the users replaced. Returns "" or the error.
std::string LoadAclFile(ServerState& server, const std::string& path);
// LIMITS.TAKE (cmd_limits_take.cc); RegisterLimiterCommands calls it.
void RegisterLimitsTakeCommand(CommandTable& table);
// MIGRATE (cmd_migrate.cc); RegisterDumpCommands calls it.
void RegisterMigrateCommand(CommandTable& table);

}  // namespace sluice::server
