// Internal to the server family (cmd_server.cc registers them all through
// RegisterServerCommands): INFO, CONFIG and COMMAND live in their own files.
#pragma once

#include <string>

#include "server/commands/commands.h"
#include "server/core/config.h"

namespace sluice::server {

void RegisterInfoCommand(CommandTable& table);      // cmd_info.cc
void RegisterConfigCommands(CommandTable& table);   // cmd_config.cc
void RegisterCommandCommands(CommandTable& table);  // cmd_command.cc
// INFO latencystats (cmd_latency.cc): per command latency percentiles, as Redis 7.0.
void LatencyStatsSection(CommandContext& ctx, const Config& config, std::string& out);
// CONFIG REWRITE (cmd_config_rewrite.cc): kept minimal and apart (replication's replicaof line)
// so a general rewrite can replace it.
// CONFIG REWRITE's replicaof line (cmd_config_rewrite.cc), hooked into the general rewrite.
void RegisterReplicaofRewrite();

// Builds a CommandSpec of group "server" (or `group`), without key positions.
CommandSpec ServerSpec(const char* name, int arity, uint32_t flags, Handler handler,
                       const char* summary, const char* since, const char* hint,
                       const char* group = "server");

}  // namespace sluice::server
