// The CLUSTER subcommands that change the cluster: ADDSLOTS(RANGE), DELSLOTS(RANGE),
// FLUSHSLOTS, SETSLOT, MEET, FORGET, REPLICATE, REPLICAS/SLAVES, RESET, FAILOVER,
// SET-CONFIG-EPOCH, BUMPEPOCH, SAVECONFIG, COUNT-FAILURE-REPORTS (Redis 7.0.15's replies).
#include "server/commands/cmd_cluster.h"
#include "server/core/args.h"
#include "server/core/errors.h"
#include "server/core/errors_cluster.h"

namespace sluice::server {

void DebugDropClusterPacketFilter(CommandContext& ctx, Args args) {
  std::optional<int64_t> type = ParseInt64(args[2]);
  if (!type) return ReplyError(ctx.out, NotAnInteger());
  if (cluster::Cluster* c = cluster::Instance()) c->SetDropPacketFilter(*type);
  ctx.out.Simple("OK");
}

namespace {

void ReplyOkOr(CommandContext& ctx, const Status& s) {
  if (s.ok()) {
    ctx.out.Simple("OK");
  } else {
    ReplyError(ctx.out, s);
  }
}

// ADDSLOTS/DELSLOTS: every slot parsed first, then assigned as one-slot ranges.
void SlotsCommand(CommandContext& ctx, Args args, bool del) {
  cluster::Cluster* c = ClusterOrReply(ctx);
  if (c == nullptr) return;
  std::vector<std::pair<int, int>> ranges;
  for (size_t i = 2; i < args.size(); ++i) {
    std::optional<int> slot = SlotOrReply(ctx, args[i]);
    if (!slot) return;
    ranges.emplace_back(*slot, *slot);
  }
  ReplyOkOr(ctx, c->AssignSlots(ranges, del));
}

void SlotsRangeCommand(CommandContext& ctx, Args args, bool del) {
  cluster::Cluster* c = ClusterOrReply(ctx);
  if (c == nullptr) return;
  if (args.size() % 2 == 1)
    return ReplyError(ctx.out, WrongArity(ToLower(args[0]) + "|" + ToLower(args[1])));
  std::vector<std::pair<int, int>> ranges;
  for (size_t i = 2; i + 1 < args.size(); i += 2) {
    std::optional<int> start = SlotOrReply(ctx, args[i]);
    if (!start) return;
    std::optional<int> end = SlotOrReply(ctx, args[i + 1]);
    if (!end) return;
    if (*start > *end) return ReplyError(ctx.out, SlotRangeReversed(*start, *end));
    ranges.emplace_back(*start, *end);
  }
  ReplyOkOr(ctx, c->AssignSlots(ranges, del));
}

void AddSlots(CommandContext& ctx, Args args) { SlotsCommand(ctx, args, false); }
void DelSlots(CommandContext& ctx, Args args) { SlotsCommand(ctx, args, true); }
void AddSlotsRange(CommandContext& ctx, Args args) { SlotsRangeCommand(ctx, args, false); }
void DelSlotsRange(CommandContext& ctx, Args args) { SlotsRangeCommand(ctx, args, true); }

void FlushSlots(CommandContext& ctx, Args) {
  if (cluster::Cluster* c = ClusterOrReply(ctx)) ReplyOkOr(ctx, c->FlushSlots());
}

void SetSlot(CommandContext& ctx, Args args) {
  cluster::Cluster* c = ClusterOrReply(ctx);
  if (c == nullptr) return;
  std::optional<int> slot = SlotOrReply(ctx, args[2]);
  if (!slot) return;
  const std::string how = ToLower(args[3]);
  const bool with_node = how == "migrating" || how == "importing" || how == "node";
  if ((with_node && args.size() != 5) || (how == "stable" && args.size() != 4) ||
      (!with_node && how != "stable")) {
    return ReplyError(ctx.out, InvalidSetSlotAction());
  }
  ReplyOkOr(ctx, c->SetSlot(*slot, how, with_node ? std::string(args[4]) : std::string()));
}

void Meet(CommandContext& ctx, Args args) {
  cluster::Cluster* c = ClusterOrReply(ctx);
  if (c == nullptr) return;
  if (args.size() > 5) return ReplyError(ctx.out, SyntaxError());
  std::optional<int64_t> port = ParseInt64(args[3]);
  if (!port) return ReplyError(ctx.out, InvalidBasePort(args[3]));
  int64_t cport = *port + 10000;
  if (args.size() == 5) {
    std::optional<int64_t> bus = ParseInt64(args[4]);
    if (!bus) return ReplyError(ctx.out, InvalidBusPort(args[4]));
    cport = *bus;
  }
  ReplyOkOr(ctx, c->Meet(std::string(args[2]), static_cast<int>(*port), static_cast<int>(cport)));
}

void Forget(CommandContext& ctx, Args args) {
  if (cluster::Cluster* c = ClusterOrReply(ctx)) ReplyOkOr(ctx, c->Forget(std::string(args[2])));
}

void Replicate(CommandContext& ctx, Args args) {
  if (cluster::Cluster* c = ClusterOrReply(ctx)) ReplyOkOr(ctx, c->Replicate(std::string(args[2])));
}

void Replicas(CommandContext& ctx, Args args) {
  cluster::Cluster* c = ClusterOrReply(ctx);
  if (c == nullptr) return;
  std::vector<std::string> lines;
  if (Status s = c->Replicas(std::string(args[2]), PlainClient(ctx, *c), &lines); !s.ok())
    return ReplyError(ctx.out, s);
  ctx.out.Array(lines.size());
  for (const std::string& l : lines) ctx.out.Bulk(l);
}

void Reset(CommandContext& ctx, Args args) {
  cluster::Cluster* c = ClusterOrReply(ctx);
  if (c == nullptr) return;
  bool hard = false;
  if (args.size() == 3) {
    if (EqualsIgnoreCase(args[2], "hard")) {
      hard = true;
    } else if (!EqualsIgnoreCase(args[2], "soft")) {
      return ReplyError(ctx.out, SyntaxError());
    }
  }
  ReplyOkOr(ctx, c->Reset(hard));
}

void Failover(CommandContext& ctx, Args args) {
  cluster::Cluster* c = ClusterOrReply(ctx);
  if (c == nullptr) return;
  std::string mode;
  if (args.size() == 3) {
    mode = ToLower(args[2]);
    if (mode != "force" && mode != "takeover") return ReplyError(ctx.out, SyntaxError());
  }
  ReplyOkOr(ctx, c->Failover(mode));
}

void SetConfigEpoch(CommandContext& ctx, Args args) {
  cluster::Cluster* c = ClusterOrReply(ctx);
  if (c == nullptr) return;
  std::optional<int64_t> epoch = ParseInt64(args[2]);
  if (!epoch) return ReplyError(ctx.out, Status::NotInteger());
  ReplyOkOr(ctx, c->SetConfigEpoch(*epoch));
}

void BumpEpoch(CommandContext& ctx, Args) {
  cluster::Cluster* c = ClusterOrReply(ctx);
  if (c == nullptr) return;
  bool bumped = false;
  uint64_t epoch = 0;
  (void)c->BumpEpoch(&bumped, &epoch);
  ctx.out.Simple(std::string(bumped ? "BUMPED " : "STILL ") + std::to_string(epoch));
}

void SaveConfig(CommandContext& ctx, Args) {
  if (cluster::Cluster* c = ClusterOrReply(ctx)) ReplyOkOr(ctx, c->SaveConfig());
}

void CountFailureReports(CommandContext& ctx, Args args) {
  cluster::Cluster* c = ClusterOrReply(ctx);
  if (c == nullptr) return;
  int64_t n = 0;
  if (Status s = c->FailureReports(std::string(args[2]), &n); !s.ok()) {
    return ReplyError(ctx.out, s);
  }
  ctx.out.Integer(n);
}

}  // namespace

void RegisterClusterAdminCommands(CommandTable& table) {
  // Redis 7.0's flags: admin and stale; no_async_loading but for the replica listings, the
  // failure reports and RESET, which is noscript instead.
  auto add = [&](const char* name, int arity, Handler h, const char* summary, const char* since,
                 const char* hint) {
    const std::string_view n = name;
    uint32_t flags = kAdmin | kStale;
    if (n == "cluster|reset") {
      flags |= kNoScript;
    } else if (n != "cluster|replicas" && n != "cluster|slaves" &&
               n != "cluster|count-failure-reports") {
      flags |= kNoAsyncLoading;
    }
    table.Add(MakeSpec("cluster", name, arity, flags, {}, h, summary, since, hint));
  };
  add("cluster|addslots", -3, AddSlots, "Assign new hash slots to receiving node", "3.0.0",
      "slot [slot ...]");
  add("cluster|addslotsrange", -4, AddSlotsRange, "Assign new hash slots to receiving node",
      "7.0.0", "start-slot end-slot [start-slot end-slot ...]");
  add("cluster|delslots", -3, DelSlots, "Set hash slots as unbound in receiving node", "3.0.0",
      "slot [slot ...]");
  add("cluster|delslotsrange", -4, DelSlotsRange, "Set hash slots as unbound in receiving node",
      "7.0.0", "start-slot end-slot [start-slot end-slot ...]");
  add("cluster|flushslots", 2, FlushSlots, "Delete a node's own slots information", "3.0.0", "");
  add("cluster|setslot", -4, SetSlot, "Bind a hash slot to a specific node", "3.0.0",
      "slot IMPORTING node-id|MIGRATING node-id|NODE node-id|STABLE");
  add("cluster|meet", -4, Meet, "Force a node cluster to handshake with another node", "3.0.0",
      "ip port [cluster_bus_port]");
  add("cluster|forget", 3, Forget, "Remove a node from the nodes table", "3.0.0", "node-id");
  add("cluster|replicate", 3, Replicate,
      "Reconfigure a node as a replica of the specified master node", "3.0.0", "node-id");
  add("cluster|replicas", 3, Replicas, "List replica nodes of the specified master node", "5.0.0",
      "node-id");
  add("cluster|slaves", 3, Replicas, "List replica nodes of the specified master node", "3.0.0",
      "node-id");
  add("cluster|reset", -2, Reset, "Reset a Redis Cluster node", "3.0.0", "[HARD|SOFT]");
  add("cluster|failover", -2, Failover,
      "Forces a replica to perform a manual failover of its master.", "3.0.0", "[FORCE|TAKEOVER]");
  add("cluster|set-config-epoch", 3, SetConfigEpoch, "Set the configuration epoch in a new node",
      "3.0.0", "config-epoch");
  add("cluster|bumpepoch", 2, BumpEpoch, "Advance the cluster config epoch", "3.0.0", "");
  add("cluster|saveconfig", 2, SaveConfig, "Forces the node to save cluster state on disk", "3.0.0",
      "");
  add("cluster|count-failure-reports", 3, CountFailureReports,
      "Return the number of failure reports active for a given node", "3.0.0", "node-id");
}

}  // namespace sluice::server
