// CLUSTER INFO, MYID, NODES, SLOTS, SHARDS, KEYSLOT, COUNTKEYSINSLOT, GETKEYSINSLOT, LINKS, HELP
// over the cluster state (server/cluster), with Redis 7.0.15's replies.
#include "server/commands/cmd_cluster.h"

#include "server/core/args.h"
#include "server/core/errors.h"
#include "server/core/errors_cluster.h"
#include "server/core/server_state.h"

namespace sluice::server {

cluster::Cluster* ClusterOrReply(CommandContext& ctx) {
  cluster::Cluster* c = cluster::Instance();
  if (c == nullptr) ReplyError(ctx.out, ClusterDisabled());
  return c;
}

bool PlainClient(const CommandContext& ctx, const cluster::Cluster& c) {
  return c.tls_cluster() && !ctx.client.tls;
}

std::optional<int> SlotOrReply(CommandContext& ctx, std::string_view arg) {
  std::optional<int64_t> v = ParseInt64(arg);
  if (!v || *v < 0 || *v >= cluster::kSlots) {
    ReplyError(ctx.out, InvalidSlot());
    return std::nullopt;
  }
  return static_cast<int>(*v);
}

namespace {

void ClusterInfo(CommandContext& ctx, Args) {
  if (cluster::Cluster* c = ClusterOrReply(ctx)) ctx.out.Verbatim("txt", c->InfoText());
}

void ClusterMyId(CommandContext& ctx, Args) {
  if (cluster::Cluster* c = ClusterOrReply(ctx)) ctx.out.Bulk(c->MyId());
}

void ClusterNodes(CommandContext& ctx, Args) {
  if (cluster::Cluster* c = ClusterOrReply(ctx)) {
    ctx.out.Verbatim("txt", c->NodesText(PlainClient(ctx, *c)));
  }
}

// One node of CLUSTER SLOTS (Redis's addNodeToNodeReply): the preferred endpoint (null for
// unknown-endpoint), port, id, and a map of the other addresses known: the ip unless it is the
// endpoint, the hostname (when set) unless it is.
void SlotsMember(CommandContext& ctx, const cluster::Cluster::SlotRange::Member& m) {
  using cluster::EndpointType;
  ctx.out.Array(4);
  if (m.endpoint_type == EndpointType::kUnknown) {
    ctx.out.NullBulk();
  } else {
    ctx.out.Bulk(m.endpoint);
  }
  ctx.out.Integer(m.port);
  ctx.out.Bulk(m.name);
  const bool ip = m.endpoint_type != EndpointType::kIp;
  const bool hostname = m.endpoint_type != EndpointType::kHostname && !m.hostname.empty();
  ctx.out.Map((ip ? 1 : 0) + (hostname ? 1 : 0));
  if (ip) {
    ctx.out.Bulk("ip");
    ctx.out.Bulk(m.ip);
  }
  if (hostname) {
    ctx.out.Bulk("hostname");
    ctx.out.Bulk(m.hostname);
  }
}

void ClusterSlots(CommandContext& ctx, Args) {
  cluster::Cluster* c = ClusterOrReply(ctx);
  if (c == nullptr) return;
  const std::vector<cluster::Cluster::SlotRange> ranges = c->SlotRanges(PlainClient(ctx, *c));
  ctx.out.Array(ranges.size());
  for (const auto& r : ranges) {
    ctx.out.Array(2 + r.members.size());
    ctx.out.Integer(r.start);
    ctx.out.Integer(r.end);
    for (const auto& m : r.members) SlotsMember(ctx, m);
  }
}

void ShardMember(CommandContext& ctx, const cluster::Cluster::SlotRange::Member& m) {
  ctx.out.Map((m.hostname.empty() ? 6 : 7) + (m.plain_port != 0) + (m.tls_port != 0));
  ctx.out.Bulk("id");
  ctx.out.Bulk(m.name);
  if (m.plain_port != 0) {
    ctx.out.Bulk("port");
    ctx.out.Integer(m.plain_port);
  }
  if (m.tls_port != 0) {
    ctx.out.Bulk("tls-port");
    ctx.out.Integer(m.tls_port);
  }
  ctx.out.Bulk("ip");
  ctx.out.Bulk(m.ip);
  ctx.out.Bulk("endpoint");
  ctx.out.Bulk(m.endpoint);
  if (!m.hostname.empty()) {
    ctx.out.Bulk("hostname");
    ctx.out.Bulk(m.hostname);
  }
  ctx.out.Bulk("role");
  ctx.out.Bulk(m.master ? "master" : "replica");
  ctx.out.Bulk("replication-offset");
  ctx.out.Integer(m.offset);
  ctx.out.Bulk("health");
  ctx.out.Bulk(m.fail ? "fail" : (!m.master && m.offset == 0) ? "loading" : "online");
}

void ClusterShards(CommandContext& ctx, Args) {
  cluster::Cluster* c = ClusterOrReply(ctx);
  if (c == nullptr) return;
  const std::vector<cluster::Cluster::Shard> shards = c->Shards();
  ctx.out.Array(shards.size());
  for (const auto& s : shards) {
    ctx.out.Map(2);
    ctx.out.Bulk("slots");
    ctx.out.Array(s.slots.size() * 2);
    for (const auto& [start, end] : s.slots) {
      ctx.out.Integer(start);
      ctx.out.Integer(end);
    }
    ctx.out.Bulk("nodes");
    ctx.out.Array(s.members.size());
    for (const auto& m : s.members) ShardMember(ctx, m);
  }
}

void ClusterKeySlot(CommandContext& ctx, Args args) {
  if (ClusterOrReply(ctx) != nullptr) ctx.out.Integer(Store::KeySlot(args[2]));
}

void ClusterCountKeysInSlot(CommandContext& ctx, Args args) {
  cluster::Cluster* c = ClusterOrReply(ctx);
  if (c == nullptr) return;
  std::optional<int64_t> slot = ParseInt64(args[2]);
  if (!slot) return ReplyError(ctx.out, Status::NotInteger());
  if (*slot < 0 || *slot >= cluster::kSlots) return ReplyError(ctx.out, InvalidSlotShort());
  auto n = ctx.store.CountKeysInSlot(ctx.client.db, static_cast<uint16_t>(*slot));
  if (!n.ok()) return ReplyError(ctx.out, n.status());
  ctx.out.Integer(*n);
}

void ClusterGetKeysInSlot(CommandContext& ctx, Args args) {
  cluster::Cluster* c = ClusterOrReply(ctx);
  if (c == nullptr) return;
  std::optional<int64_t> slot = ParseInt64(args[2]);
  std::optional<int64_t> count = ParseInt64(args[3]);
  if (!slot || !count) return ReplyError(ctx.out, Status::NotInteger());
  if (*slot < 0 || *slot >= cluster::kSlots || *count < 0) {
    return ReplyError(ctx.out, InvalidSlotOrKeys());
  }
  auto keys = ctx.store.KeysInSlot(ctx.client.db, static_cast<uint16_t>(*slot), *count);
  if (!keys.ok()) return ReplyError(ctx.out, keys.status());
  ctx.out.Array(keys->size());
  for (const std::string& k : *keys) ctx.out.Bulk(k);
}

void ClusterLinks(CommandContext& ctx, Args) {
  cluster::Cluster* c = ClusterOrReply(ctx);
  if (c == nullptr) return;
  const std::vector<cluster::Cluster::LinkInfo> links = c->Links();
  ctx.out.Array(links.size());
  for (const auto& l : links) {
    ctx.out.Map(6);
    ctx.out.Bulk("direction");
    ctx.out.Bulk(l.dir);
    ctx.out.Bulk("node");
    ctx.out.Bulk(l.node);
    ctx.out.Bulk("create-time");
    ctx.out.Integer(l.create_time);
    ctx.out.Bulk("events");
    ctx.out.Bulk(l.events);
    ctx.out.Bulk("send-buffer-allocated");
    ctx.out.Integer(l.send_buffer_allocated);
    ctx.out.Bulk("send-buffer-used");
    ctx.out.Integer(l.send_buffer_used);
  }
}

void ClusterHelp(CommandContext& ctx, Args) {
  if (ClusterOrReply(ctx) == nullptr) return;
  static constexpr const char* kLines[] = {
      "CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "ADDSLOTS <slot> [<slot> ...]",
      "    Assign slots to current node.",
      "ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
      "    Assign slots which are between <start-slot> and <end-slot> to current node.",
      "BUMPEPOCH",
      "    Advance the cluster config epoch.",
      "COUNT-FAILURE-REPORTS <node-id>",
      "    Return number of failure reports for <node-id>.",
      "COUNTKEYSINSLOT <slot>",
      "    Return the number of keys in <slot>.",
      "DELSLOTS <slot> [<slot> ...]",
      "    Delete slots information from current node.",
      "DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
      "    Delete slots information which are between <start-slot> and <end-slot> from current "
      "node.",
      "FAILOVER [FORCE|TAKEOVER]",
      "    Promote current replica node to being a master.",
      "FORGET <node-id>",
      "    Remove a node from the cluster.",
      "GETKEYSINSLOT <slot> <count>",
      "    Return key names stored by current node in a slot.",
      "FLUSHSLOTS",
      "    Delete current node own slots information.",
      "INFO",
      "    Return information about the cluster.",
      "KEYSLOT <key>",
      "    Return the hash slot for <key>.",
      "LINKS",
      "    Return information about all network links between this node and its peers.",
      "    Output format is an array where each array element is a map containing attributes of "
      "a link",
      "MEET <ip> <port> [<bus-port>]",
      "    Connect nodes into a working cluster.",
      "MYID",
      "    Return the node id.",
      "NODES",
      "    Return cluster configuration seen by node. Output format:",
      "    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
      "REPLICATE <node-id>",
      "    Configure current node as replica to <node-id>.",
      "RESET [HARD|SOFT]",
      "    Reset current node (default: soft).",
      "SET-CONFIG-EPOCH <epoch>",
      "    Set config epoch of current node.",
      "SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
      "    Set slot state.",
      "REPLICAS <node-id>",
      "    Return <node-id> replicas.",
      "SAVECONFIG",
      "    Force saving cluster configuration on disk.",
      "SLOTS",
      "    Return information about slots range mappings. Each range is made of:",
      "    start, end, master and replicas IP addresses, ports and ids",
      "SHARDS",
      "    Return information about slot range mappings and the nodes associated with them.",
      "HELP",
      "    Prints this help.",
  };
  ctx.out.Array(std::size(kLines));
  for (const char* line : kLines) ctx.out.Simple(line);
}

}  // namespace

void RegisterClusterCommands(CommandTable& table) {
  constexpr uint32_t kInfoFlags = kLoading | kStale;
  auto add = [&](const char* name, int arity, uint32_t flags, Handler h, const char* summary,
                 const char* since, const char* hint) {
    table.Add(MakeSpec("cluster", name, arity, flags, {}, h, summary, since, hint));
  };
  add("cluster", -2, 0, nullptr, "A container for Redis Cluster commands", "3.0.0", "subcommand");
  add("cluster|info", 2, kInfoFlags, ClusterInfo,
      "Provides information about Redis Cluster node state", "3.0.0", "");
  add("cluster|myid", 2, kInfoFlags, ClusterMyId, "Return the node id", "3.0.0", "");
  add("cluster|nodes", 2, kInfoFlags, ClusterNodes, "Get Cluster config for the node", "3.0.0", "");
  add("cluster|slots", 2, kInfoFlags, ClusterSlots, "Get array of Cluster slot to node mappings",
      "3.0.0", "");
  add("cluster|shards", 2, kInfoFlags, ClusterShards, "Get array of cluster slots to node mappings",
      "7.0.0", "");
  add("cluster|keyslot", 3, kInfoFlags, ClusterKeySlot,
      "Returns the hash slot of the specified key", "3.0.0", "key");
  add("cluster|countkeysinslot", 3, kInfoFlags, ClusterCountKeysInSlot,
      "Return the number of local keys in the specified hash slot", "3.0.0", "slot");
  add("cluster|getkeysinslot", 4, kInfoFlags, ClusterGetKeysInSlot,
      "Return local key names in the specified hash slot", "3.0.0", "slot count");
  add("cluster|links", 2, kInfoFlags, ClusterLinks,
      "Returns a list of all TCP links to and from peer nodes in cluster", "7.0.0", "");
  add("cluster|help", 2, kInfoFlags, ClusterHelp,
      "Show helpful text about the different subcommands", "5.0.0", "");
  RegisterClusterAdminCommands(table);
}

}  // namespace sluice::server
