// The client side of cluster mode: ASKING, READONLY and READWRITE, the flags a cluster client
// sets on its connection for the dispatcher's routing (server/core/cluster_route.h). Outside
// cluster mode they are refused, as by Redis. The CLUSTER command itself is server/cluster's.
#include "server/commands/commands.h"
#include "server/core/client_state.h"
#include "server/core/cluster_route.h"
#include "server/core/errors.h"
#include "server/core/server_state.h"

namespace sluice::server {

namespace {

// Sets one of the client's cluster flags, or refuses outside cluster mode.
void SetClusterFlag(CommandContext& ctx, bool ClientState::*flag, bool value) {
  if (ctx.server.cluster() == nullptr) return ReplyError(ctx.out, ClusterSupportDisabled());
  ctx.client.*flag = value;
  ctx.out.Simple("OK");
}

void Asking(CommandContext& ctx, Args) { SetClusterFlag(ctx, &ClientState::cluster_asking, true); }
void Readonly(CommandContext& ctx, Args) {
  SetClusterFlag(ctx, &ClientState::cluster_readonly, true);
}
void Readwrite(CommandContext& ctx, Args) {
  SetClusterFlag(ctx, &ClientState::cluster_readonly, false);
}

}  // namespace

void RegisterClusterClientCommands(CommandTable& table) {
  table.Add(MakeSpec("cluster", "asking", 1, kFast, {}, Asking,
                     "Sent by cluster clients after an -ASK redirect", "3.0.0", ""));
  table.Add(MakeSpec("cluster", "readonly", 1, kFast | kLoading | kStale, {}, Readonly,
                     "Enables read queries for a connection to a cluster replica node", "3.0.0",
                     ""));
  table.Add(MakeSpec("cluster", "readwrite", 1, kFast | kLoading | kStale, {}, Readwrite,
                     "Disables read queries for a connection to a cluster replica node", "3.0.0",
                     ""));
}

}  // namespace sluice::server
