// CLUSTER and its subcommands (cmd_cluster.cc: the read-only ones and the registration;
// cmd_cluster_admin.cc: the ones that change the cluster). Outside cluster mode every
// subcommand answers "ERR This instance has cluster support disabled", as Redis does.
#pragma once

#include "server/cluster/cluster.h"
#include "server/commands/commands.h"

namespace sluice::server {

// The process's cluster, or nullptr after replying ClusterDisabled.
cluster::Cluster* ClusterOrReply(CommandContext& ctx);
// Whether the client is shown nodes' plain ports (Redis's use_pport): tls-cluster is yes and the
// client's connection is not TLS.
bool PlainClient(const CommandContext& ctx, const cluster::Cluster& c);
// A slot argument: nullopt after replying "Invalid or out of range slot".
std::optional<int> SlotOrReply(CommandContext& ctx, std::string_view arg);
// DEBUG DROP-CLUSTER-PACKET-FILTER <type>: the bus drops messages of that type (-1: none).
// Accepted outside cluster mode too, as Redis does (cmd_cluster_admin.cc).
void DebugDropClusterPacketFilter(CommandContext& ctx, Args args);
// The admin subcommands' specs (cmd_cluster_admin.cc).
void RegisterClusterAdminCommands(CommandTable& table);

}  // namespace sluice::server
