// Replication's commands (server/replication does the work): REPLICAOF/SLAVEOF, ROLE, REPLCONF,
// PSYNC/SYNC (a replica's connection becomes a link fed through its outbox), WAIT, and
// SLUICE.SETENTRY (how the stream carries a limiter state, which has no Redis form).
#include <string>
#include <string_view>

#include "server/cluster/cluster.h"
#include "server/commands/commands.h"
#include "server/core/args.h"
#include "server/core/blocking.h"
#include "server/core/client_state.h"
#include "server/core/errors.h"
#include "server/core/errors_cluster.h"
#include "server/core/errors_failover.h"
#include "server/core/server_state.h"
#include "server/replication/replication.h"
#include "sluice/transaction.h"

namespace sluice::server {

namespace {

using replication::Instance;
using replication::Replication;

using replication::kWaitKey;

void ReplicaOfCommand(CommandContext& ctx, Args args) {
  // A cluster node's master is the cluster's to choose (CLUSTER REPLICATE), as in Redis.
  if (cluster::Instance() != nullptr) return ReplyError(ctx.out, ReplicaOfInClusterMode());
  Replication* repl = Instance();
  if (repl == nullptr) return ctx.out.Simple("OK");
  if (repl->failing_over()) return ReplyError(ctx.out, ReplicaOfWhileFailingOver());
  if (EqualsIgnoreCase(args[1], "no") && EqualsIgnoreCase(args[2], "one")) {
    repl->PromoteToPrimary();
    return ctx.out.Simple("OK");
  }
  if (ctx.client.repl_kind.load() == ClientState::kReplicaLink) {
    return ReplyError(ctx.out, ReplicaOfByReplica());
  }
  std::optional<int64_t> port = ParseInt64(args[2]);
  if (!port || *port < 0 || *port > 65535) return ReplyError(ctx.out, InvalidMasterPort());
  bool already = false;
  if (Status s = repl->ReplicaOf(std::string(args[1]), static_cast<int>(*port), &already);
      !s.ok()) {
    return ReplyError(ctx.out, s);
  }
  ctx.out.Simple(already ? "OK Already connected to specified master" : "OK");
}

void RoleCommand(CommandContext& ctx, Args) {
  Replication* repl = Instance();
  if (repl == nullptr) {
    ctx.out.Array(3);
    ctx.out.Bulk("master");
    ctx.out.Integer(0);
    ctx.out.Array(0);
    return;
  }
  repl->RoleReply(ctx.out);
}

void ReplconfCommand(CommandContext& ctx, Args args) {
  if (args.size() % 2 == 0) return ReplyError(ctx.out, SyntaxError());
  Replication* repl = Instance();
  for (size_t i = 1; i + 1 < args.size(); i += 2) {
    const std::string_view opt = args[i];
    const std::string_view val = args[i + 1];
    if (EqualsIgnoreCase(opt, "listening-port")) {
      std::optional<int64_t> port = ParseInt64(val);
      if (!port) return ReplyError(ctx.out, NotAnInteger());
      if (repl != nullptr) repl->Announce(ctx.client, static_cast<int>(*port), "");
    } else if (EqualsIgnoreCase(opt, "ip-address")) {
      if (repl != nullptr) repl->Announce(ctx.client, -1, std::string(val));
    } else if (EqualsIgnoreCase(opt, "capa") || EqualsIgnoreCase(opt, "rdb-only") ||
               EqualsIgnoreCase(opt, "rdb-filter-only")) {
      // Sluice always sends a length-prefixed RDB; the capabilities change nothing.
    } else if (EqualsIgnoreCase(opt, "ack")) {
      std::optional<int64_t> offset = ParseInt64(val);
      if (offset && repl != nullptr) repl->Ack(ctx.client, *offset);
      return;  // no reply, as Redis
    } else if (EqualsIgnoreCase(opt, "getack")) {
      return;  // only a replica answers, on its link (server/replication/replica_link.cc)
    } else {
      return ReplyError(ctx.out, UnrecognizedReplconf(opt));
    }
  }
  ctx.out.Simple("OK");
}

void PsyncCommand(CommandContext& ctx, Args args) {
  Replication* repl = Instance();
  if (repl == nullptr) return ReplyError(ctx.out, NoMasterLink());
  // PSYNC replid offset FAILOVER: our primary hands over to us (FAILOVER on it).
  if (args.size() > 3 && EqualsIgnoreCase(args[3], "failover")) {
    if (Status s = repl->AcceptFailover(args[1]); !s.ok()) return ReplyError(ctx.out, s);
  }
  if (repl->failing_over()) return ReplyError(ctx.out, SyncWhileFailingOver());
  if (repl->is_replica()) return ReplyError(ctx.out, NoMasterLink());
  const bool sync = args.size() == 1;
  int64_t offset = -1;
  if (!sync) {
    std::optional<int64_t> o = ParseInt64(args[2]);
    if (o) offset = *o;
  }
  // The replies (+FULLRESYNC / +CONTINUE, the RDB, the stream) go through the outbox.
  repl->Psync(ctx.client, sync ? std::string_view("?") : args[1], offset, sync);
}

// FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms], parsed as Redis 7.0 parses it (ABORT
// only alone; each option once); server/replication/failover.cc does the rest.
void FailoverCommand(CommandContext& ctx, Args args) {
  Replication::FailoverRequest r;
  if (args.size() == 2 && EqualsIgnoreCase(args[1], "abort")) {
    r.abort = true;
  } else {
    for (size_t j = 1; j < args.size(); ++j) {
      if (EqualsIgnoreCase(args[j], "timeout") && j + 1 < args.size() && r.timeout_ms == 0) {
        std::optional<int64_t> ms = ParseInt64(args[j + 1]);
        if (!ms) return ReplyError(ctx.out, NotAnInteger());
        if (*ms <= 0) return ReplyError(ctx.out, FailoverTimeoutPositive());
        r.timeout_ms = *ms;
        ++j;
      } else if (EqualsIgnoreCase(args[j], "to") && j + 2 < args.size() && !r.has_target) {
        std::optional<int64_t> port = ParseInt64(args[j + 2]);
        if (!port) return ReplyError(ctx.out, NotAnInteger());
        r.has_target = true;
        r.host = std::string(args[j + 1]);
        r.port = static_cast<int>(*port);
        j += 2;
      } else if (EqualsIgnoreCase(args[j], "force") && !r.force) {
        r.force = true;
      } else {
        return ReplyError(ctx.out, SyntaxError());
      }
    }
  }
  Replication* repl = Instance();
  if (repl == nullptr) {
    return ReplyError(ctx.out, r.abort ? NoFailoverInProgress() : FailoverNoReplicas());
  }
  if (Status s = repl->Failover(r); !s.ok()) return ReplyError(ctx.out, s);
  ctx.out.Simple("OK");
}

// WAIT numreplicas timeout. Parks (without blocking the I/O thread) until enough replicas
// acknowledged the stream's offset at the call, or the timeout; the retry finds the target and
// the deadline in the rewritten timeout argument ("@target:deadline").
void WaitCommand(CommandContext& ctx, Args args) {
  Replication* repl = Instance();
  if (repl != nullptr && repl->is_replica()) return ReplyError(ctx.out, WaitOnReplica());
  std::optional<int64_t> want = ParseInt64(args[1]);
  if (!want) return ReplyError(ctx.out, NotAnInteger());
  int64_t target = 0;
  int64_t deadline = 0;
  if (args[2].size() > 1 && args[2][0] == '@') {
    const std::string_view rest = args[2].substr(1);
    const size_t colon = rest.find(':');
    target = ParseInt64(rest.substr(0, colon)).value_or(0);
    deadline = ParseInt64(rest.substr(colon + 1)).value_or(0);
  } else {
    std::optional<int64_t> timeout = ParseInt64(args[2]);
    if (!timeout) return ReplyError(ctx.out, TimeoutNotInteger());
    if (*timeout < 0) return ReplyError(ctx.out, TimeoutNegative());
    if (repl == nullptr) return ctx.out.Integer(0);
    target = repl->offset();
    deadline = *timeout == 0 ? 0 : ServerState::RealNowMs() + *timeout;
    if (repl->CountAcked(target) < *want) repl->RequestAcks();
  }
  const int64_t acked = repl == nullptr ? 0 : repl->CountAcked(target);
  if (acked >= *want || (deadline != 0 && ServerState::RealNowMs() >= deadline)) {
    return ctx.out.Integer(acked);
  }
  BlockRewriteArg(ctx, 2, "@" + std::to_string(target) + ":" + std::to_string(deadline));
  const std::string_view keys[] = {kWaitKey};
  if (BlockClient(ctx, keys, BlockTimeout{0})) return;
  ctx.out.Integer(acked);
}

// SLUICE.SETENTRY key kind expire-at-ms payload: a limiter state as the primary stored it.
void SetEntryCommand(CommandContext& ctx, Args args) {
  std::optional<int64_t> kind = ParseInt64(args[2]);
  std::optional<int64_t> at = ParseInt64(args[3]);
  if (!kind || !at || *kind < 0 || *kind > 3 || *at < 0) return ReplyError(ctx.out, SyntaxError());
  Store::Transaction::RawEntry e;
  e.kind = static_cast<ValueKind>(*kind);
  e.expire_at_ms = *at;
  e.payload.assign(args[4]);
  if (Status s = ctx.txn().WriteEntry(ctx.client.db, args[1], e); !s.ok()) {
    return ReplyError(ctx.out, s);
  }
  ctx.out.Simple("OK");
}

}  // namespace

void RegisterReplicationCommands(CommandTable& table) {
  const char* g = "server";
  table.Add(MakeSpec(g, "replicaof", 3, kAdmin | kNoScript | kStale | kNoAsyncLoading, {},
                     ReplicaOfCommand,
                     "Configures a server as replica of another, or promotes it to a master.",
                     "5.0.0", "host port"));
  table.Add(MakeSpec(g, "slaveof", 3, kAdmin | kNoScript | kStale | kNoAsyncLoading, {},
                     ReplicaOfCommand,
                     "Sets a Redis server as a replica of another, or promotes it to being a "
                     "master.",
                     "1.0.0", "host port"));
  table.Add(MakeSpec(g, "role", 1, kNoScript | kLoading | kStale | kFast, {}, RoleCommand,
                     "Returns the replication role.", "2.8.12", ""));
  table.Add(MakeSpec(g, "replconf", -1, kAdmin | kNoScript | kLoading | kStale | kAllowBusy, {},
                     ReplconfCommand, "An internal command for configuring the replication stream.",
                     "3.0.0", ""));
  table.Add(MakeSpec(g, "psync", -3, kAdmin | kNoScript | kNoMulti | kNoAsyncLoading, {},
                     PsyncCommand, "An internal command used in replication.", "2.8.0",
                     "replicationid offset"));
  table.Add(MakeSpec(g, "sync", 1, kAdmin | kNoScript | kNoMulti | kNoAsyncLoading, {},
                     PsyncCommand, "An internal command used in replication.", "1.0.0", ""));
  table.Add(MakeSpec(g, "failover", -1, kAdmin | kNoScript | kStale, {}, FailoverCommand,
                     "Starts a coordinated failover from a server to one of its replicas.", "6.2.0",
                     "[TO host port [FORCE]] [ABORT] [TIMEOUT milliseconds]"));
  table.Add(MakeSpec("generic", "wait", 3, kNoScript, {}, WaitCommand,
                     "Blocks until the asynchronous replication of all preceding write commands "
                     "sent by the connection is completed.",
                     "3.0.0", "numreplicas timeout"));
  table.Add(MakeSpec("rate-limit", "sluice.setentry", 5, kWrite | kDenyOom, {1, 1, 1},
                     SetEntryCommand,
                     "Replication: stores a limiter state as the primary stored it.", "0.1.0",
                     "key kind expire-at-ms payload"));
}

}  // namespace sluice::server
