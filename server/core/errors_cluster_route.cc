// Redis 7.0's exact error text of cluster mode's client side: redirections (clusterRedirectClient),
// the cluster-only refusals of SELECT, MOVE, SWAPDB, COPY ... DB and scripts, and ASKING /
// READONLY / READWRITE outside cluster mode (declared in cluster_route.h; kept apart only to keep
// errors.cc small).
#include <string>
#include <utility>

#include "server/core/cluster_route.h"

namespace sluice::server {

namespace {

Status Err(std::string message) { return Status::InvalidArgument(std::move(message)); }

}  // namespace

Status ClusterRedirectError(const ClusterRoute& route, bool tls_client) {
  using Kind = ClusterRoute::Kind;
  switch (route.kind) {
    case Kind::kCrossSlot:
      return Err("CROSSSLOT Keys in request don't hash to the same slot");
    case Kind::kUnstable:
      return Err("TRYAGAIN Multiple keys request during rehashing of slot");
    case Kind::kDown:
      return Err("CLUSTERDOWN The cluster is down");
    case Kind::kDownReadOnly:
      return Err("CLUSTERDOWN The cluster is down and only accepts read commands");
    case Kind::kDownUnbound:
      return Err("CLUSTERDOWN Hash slot not served");
    case Kind::kMoved:
    case Kind::kAsk: {
      const int port = tls_client && route.to.tls_port != 0 ? route.to.tls_port : route.to.port;
      std::string text = route.kind == Kind::kAsk ? "ASK " : "MOVED ";
      text += std::to_string(route.slot);
      text += ' ';
      text += route.to.ip;
      text += ':';
      text += std::to_string(port);
      return Err(std::move(text));
    }
    case Kind::kServe:
      break;
  }
  return Err("ERR internal error: a served route replied as a redirection");
}

Status ClusterSupportDisabled() { return Err("ERR This instance has cluster support disabled"); }
Status SelectNotAllowedInCluster() { return Err("ERR SELECT is not allowed in cluster mode"); }
Status MoveNotAllowedInCluster() { return Err("ERR MOVE is not allowed in cluster mode"); }
Status SwapDbNotAllowedInCluster() { return Err("ERR SWAPDB is not allowed in cluster mode"); }
Status CopyDbNotAllowedInCluster() {
  return Err("ERR Copying to another database is not allowed in cluster mode");
}
Status ScriptNoClusterFlag() {
  return Err("ERR Can not run script on cluster, 'no-cluster' flag is set.");
}
Status ScriptClusterDown() {
  return Err("ERR Script attempted to execute a command while the cluster is down");
}
Status ScriptClusterDownReadOnly() {
  return Err(
      "ERR Script attempted to execute a write command while the cluster is down and readonly");
}
Status ScriptNonLocalKey() {
  return Err("ERR Script attempted to access a non local key in a cluster node");
}
Status ScriptCrossSlot() {
  return Err("ERR Script attempted to access keys that do not hash to the same slot");
}

}  // namespace sluice::server
