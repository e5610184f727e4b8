// Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH, with Redis 7.0's replies and errors.
// The Dispatcher queues commands between MULTI and EXEC (and dooms the transaction when one is
// refused at its gate); EXEC runs the queue in ONE unit of work: the keys of every queued
// command and every watched key locked at once, in sorted order, one time, and one RocksDB
// write at the end, so the transaction is atomic (also across a crash) and isolated (nobody
// sees a state between two of its commands). Errors of single commands (WRONGTYPE, ...) are
// their replies, the others still run, as in Redis.
#include "server/commands/cmd_multi.h"

#include <string_view>
#include <vector>

#include "server/commands/commands.h"
#include "server/core/acl_check.h"
#include "server/core/args.h"
#include "server/core/client_state.h"
#include "server/core/dispatcher.h"
#include "server/core/errors.h"
#include "server/core/replication_hook.h"
#include "server/core/server_state.h"
#include "server/core/tracking.h"
#include "sluice/store.h"
#include "sluice/transaction.h"

namespace sluice::server {

void EndTransaction(ServerState& server, ClientState& client) {
  client.multi = MultiState{};
  server.watches().UnwatchAll(&client);
}

namespace {

// The keys EXEC must lock: every queued command's (following SELECTs, so a key counts in the
// database it will run in) and every watched key. True when some command needs every stripe.
bool PlanExec(const ClientState& client, const std::vector<QueuedCommand>& queue,
              std::vector<KeyRef>* keys) {
  bool all = false;
  int db = client.db;
  std::vector<std::string_view> views;
  for (const QueuedCommand& q : queue) {
    views.assign(q.args.begin(), q.args.end());
    if (q.spec->name == "select") {
      auto index = ParseInt64(views[1]);
      if (index && *index >= 0 && *index < kNumDatabases) db = static_cast<int>(*index);
      continue;
    }
    const UnitPlan plan = PlanUnit(*q.spec, views, db, keys);
    all = all || plan.all_keys;
  }
  for (const WatchedKey& w : client.watched) keys->push_back(KeyRef{w.db, w.key});
  return all;
}

// Redis's CLIENT_DIRTY_CAS, plus its isWatchedKeyExpired: a key that had a TTL when watched and
// has expired since counts as modified. Call with the watched keys locked.
bool WatchBroken(const ClientState& client, int64_t now_ms) {
  if (client.watch_dirty.load(std::memory_order_relaxed)) return true;
  for (const WatchedKey& w : client.watched) {
    if (w.expire_at_ms >= 0 && now_ms > w.expire_at_ms) return true;
  }
  return false;
}

// EXEC's unit joins the I/O round's commit group (one RocksDB write for the round, as a plain
// command's) unless the client WATCHes keys (a write to them may wait in the group, unflushed:
// the watch is dirtied only when it is written, so EXEC must see the group's writes committed
// first) or tracks with NOLOOP (its writes commit alone, so that their invalidations know the
// writer). Otherwise the group is written first, as before every command that does not join it.
CommitGroup* ExecGroup(const CommandContext& ctx) {
  if (ctx.group == nullptr || !ctx.client.watched.empty()) return nullptr;
  if (ctx.client.tracking.load(std::memory_order_relaxed) & kTrackingNoloop) return nullptr;
  return ctx.group;
}

// Runs every queued command in `unit`, replying with the array of their replies.
void RunQueue(CommandContext& ctx, Store::Transaction& unit,
              const std::vector<QueuedCommand>& queue) {
  const Dispatcher dispatcher(ctx.server.commands());
  ctx.out.Array(queue.size());
  std::vector<std::string_view> views;
  for (const QueuedCommand& q : queue) {
    views.assign(q.args.begin(), q.args.end());
    CommandContext sub{ctx.store, ctx.server, ctx.client, ctx.out};
    sub.unit = &unit;
    // Redis checks the ACLs again at EXEC: the rules may have changed since the command queued.
    const AclDenial denial = CheckClientAcl(sub, *q.spec, views, "multi");
    if (denial != AclDenial::kNone) {
      ReplyError(ctx.out, ExecNoPerm(denial));
      continue;
    }
    dispatcher.RunQueued(sub, *q.spec, views);
  }
}

void Multi(CommandContext& ctx, Args) {
  if (ctx.client.multi.active) return ReplyError(ctx.out, MultiNested());
  ctx.client.multi.active = true;
  ctx.out.Simple("OK");
}

void Discard(CommandContext& ctx, Args) {
  if (!ctx.client.multi.active) return ReplyError(ctx.out, DiscardWithoutMulti());
  EndTransaction(ctx.server, ctx.client);
  ctx.out.Simple("OK");
}

void Exec(CommandContext& ctx, Args) {
  if (!ctx.client.multi.active) return ReplyError(ctx.out, ExecWithoutMulti());
  if (ctx.client.multi.aborted) {
    EndTransaction(ctx.server, ctx.client);
    return ReplyError(ctx.out, ExecAborted());
  }
  // The queue leaves the client first: commands run now, not queued again.
  const std::vector<QueuedCommand> queue = std::move(ctx.client.multi.queue);
  ctx.client.multi = MultiState{};
  std::vector<KeyRef> keys;
  const bool all = PlanExec(ctx.client, queue, &keys);
  std::string* buffer = ctx.out.buffer();
  const size_t reply_start = buffer->size();
  const int db_before = ctx.client.db;
  // A queued command that touches a key the table cannot name (kLockConflict) makes the whole
  // transaction run again, holding every stripe.
  CommitGroup* const group = ExecGroup(ctx);
  if (group == nullptr && ctx.group != nullptr) static_cast<void>(ctx.group->Flush());
  for (int attempt = 0; attempt < 2; ++attempt) {
    // A unit that locks every stripe runs alone, after the group's writes (its constructor).
    TransactionOptions options =
        UnitOptions(/*all_keys=*/all || attempt > 0, /*isolate_reads=*/true);
    options.group = group;
    Store::Transaction unit(ctx.store, keys, options);
    if (WatchBroken(ctx.client, unit.NowMs())) {
      ctx.out.NullArray();
      break;
    }
    RunQueue(ctx, unit, queue);
    if (unit.conflicted() && attempt == 0) {
      unit.Rollback();
      if (ReplicationHook* repl = GetReplicationHook(); repl != nullptr) repl->AbandonSteps();
      buffer->resize(reply_start);
      ctx.client.db = db_before;
      continue;
    }
    ReplicationHook* repl = GetReplicationHook();  // stages MULTI, the effects, EXEC
    if (repl != nullptr) repl->Capture(ctx, unit, *ctx.server.commands().Find("exec"), {});
    Status s = unit.Commit();
    if (!s.ok() && repl != nullptr) repl->DropCaptured();
    if (!s.ok()) {  // nothing of the transaction was written: none of its replies may be seen
      buffer->resize(reply_start);
      ReplyError(ctx.out, s);
    }
    break;
  }
  ctx.server.watches().UnwatchAll(&ctx.client);
}

void Watch(CommandContext& ctx, Args args) {
  if (ctx.client.multi.active) return ReplyError(ctx.out, WatchInsideMulti());
  Store::Transaction& unit = ctx.txn();  // holds the keys' locks (the table's key spec)
  for (size_t i = 1; i < args.size(); ++i) {
    bool already = false;
    for (const WatchedKey& w : ctx.client.watched) {
      already = already || (w.db == ctx.client.db && w.key == args[i]);
    }
    if (already) continue;
    auto at = unit.ExpireTimeMs(ctx.client.db, args[i]);  // -2 missing, -1 no TTL
    if (!at.ok()) return ReplyError(ctx.out, at.status());
    // Under the key's lock: no commit can fall between this read and the registration.
    ctx.server.watches().Watch(&ctx.client, ctx.client.db, args[i], *at != -2);
    ctx.client.watched.push_back(WatchedKey{ctx.client.db, std::string(args[i]), *at});
  }
  ctx.out.Simple("OK");
}

void Unwatch(CommandContext& ctx, Args) {
  ctx.server.watches().UnwatchAll(&ctx.client);
  ctx.out.Simple("OK");
}

void Add(CommandTable& table, std::string name, int arity, uint32_t flags, KeyRange keys,
         Handler handler, std::string summary, std::string since, std::string hint) {
  table.Add(MakeSpec("transactions", std::move(name), arity, flags, keys, handler,
                     std::move(summary), std::move(since), std::move(hint)));
}

}  // namespace

void RegisterTransactionCommands(CommandTable& table) {
  constexpr uint32_t kFlags = kNoScript | kLoading | kStale | kMultiControl;
  Add(table, "multi", 1, kFlags | kFast | kAllowBusy | kKeepsGroup, {}, Multi,
      "Starts a transaction.", "1.2.0", "");
  Add(table, "exec", 1, kFlags | kSkipSlowlog | kKeepsGroup, {}, Exec,
      "Executes all commands in a transaction.", "1.2.0", "");
  Add(table, "discard", 1, kFlags | kFast | kAllowBusy | kKeepsGroup, {}, Discard,
      "Discards a transaction.", "2.0.0", "");
  Add(table, "watch", -2, kFlags | kFast | kAllowBusy, {1, -1, 1}, Watch,
      "Monitors changes to keys to determine the execution of a transaction.", "2.2.0",
      "key [key ...]");
  // UNWATCH is queued inside MULTI, as in Redis.
  Add(table, "unwatch", 1, (kFlags & ~kMultiControl) | kFast | kAllowBusy, {}, Unwatch,
      "Forgets about watched keys of a transaction.", "2.2.0", "");
}

}  // namespace sluice::server
