#include "server/core/dispatcher.h"

#include <algorithm>

#include "server/core/acl_check.h"
#include "server/core/args.h"
#include "server/core/blocked_command.h"
#include "server/core/client_state.h"
#include "server/core/cluster_route.h"
#include "server/core/command_stats.h"
#include "server/core/crash_report.h"
#include "server/core/errors.h"
#include "server/core/key_access.h"
#include "server/core/loading_state.h"
#include "server/core/notify.h"
#include "server/core/replication_hook.h"
#include "server/core/server_state.h"
#include "server/core/slow_commands.h"
#include "server/core/tracking.h"

namespace sluice::server {

namespace {

// A MULTI queue holds at most as many argument bytes as one client's query buffer may.
constexpr size_t kMaxQueuedBytes = size_t{1} << 30;

// "config" + "|" + "get" into a per-thread buffer (keeps its capacity: no steady-state
// allocation).
std::string_view SubcommandName(std::string_view container, std::string_view sub) {
  thread_local std::string name;
  name.assign(container);
  name += '|';
  name += sub;
  return name;
}

// A container command is registered without a handler; its subcommands carry the handlers.
bool IsContainer(const CommandSpec& spec) { return spec.handler == nullptr; }

void NoteLastCommand(CommandContext& ctx, const CommandSpec& spec) {
  // Atomics read by CLIENT LIST and the idle sweep: no shared lock on the hot path.
  ctx.client.last_command.store(&spec.name, std::memory_order_relaxed);
  ctx.client.last_interaction_ms.store(ServerState::RealNowMs(), std::memory_order_relaxed);
}

// A command refused at the gate. Inside MULTI it also dooms the transaction (EXEC will reply
// EXECABORT); an EXEC refused at the gate discards the transaction at once, as Redis's
// execCommandAbort does.
// INFO errorstats: the code of the error reply that starts at `start` ("-ERR ...\r\n").
void RecordErrorReplyAt(const std::string& buffer, size_t start) {
  const std::string_view reply(buffer);
  const size_t end = reply.find('\r', start);
  if (start + 1 < reply.size()) RecordErrorReply(reply.substr(start + 1, end - start - 1));
}

void RejectReply(CommandContext& ctx, const CommandSpec* spec, const Status& error, Args args) {
  if (spec != nullptr && spec->name == "exec") {
    // Monitors saw MULTI: they see the EXEC that ends it, as from Redis.
    if (!args.empty() && !ctx.server.monitors().empty()) {
      ctx.server.monitors().Feed(ctx.client, ctx.from_script, ctx.client.db, args,
                                 ctx.server.output_buffer_limit());
    }
    ctx.client.multi = MultiState{};
    ctx.server.watches().UnwatchAll(&ctx.client);
    return ReplyError(ctx.out, ExecAbortedBecause(error));
  }
  if (ctx.client.multi.active) ctx.client.multi.aborted = true;
  ReplyError(ctx.out, error);
}

void Reject(CommandContext& ctx, const CommandSpec* spec, const Status& error, Args args = {}) {
  ctx.server.stats().total_error_replies.fetch_add(1, std::memory_order_relaxed);
  if (spec != nullptr) RecordCommandRejected(spec->id);
  const size_t start = ctx.out.buffer()->size();
  RejectReply(ctx, spec, error, args);
  RecordErrorReplyAt(*ctx.out.buffer(), start);
}

void Queue(CommandContext& ctx, const CommandSpec& spec, Args args) {
  size_t bytes = 0;
  for (std::string_view a : args) bytes += a.size();
  MultiState& multi = ctx.client.multi;
  if (bytes > kMaxQueuedBytes - multi.queued_bytes) {
    return Reject(ctx, &spec, MultiQueueTooLarge());
  }
  multi.queued_bytes += bytes;
  multi.queue.push_back(QueuedCommand{&spec, std::vector<std::string>(args.begin(), args.end())});
  ctx.out.Simple("QUEUED");
}

// Commits the unit the command ran in; on failure its reply becomes the error (nothing it did
// was written, so nothing of it may be acknowledged).
bool FinishOwnUnit(CommandContext& ctx, size_t reply_start) {
  Status s = ctx.own_unit->Commit();
  ctx.own_unit.reset();
  ctx.unit = nullptr;
  if (s.ok()) return true;
  ctx.out.buffer()->resize(reply_start);
  ReplyError(ctx.out, s);
  return false;
}

// Plain data commands (reads and writes of declared keys) and scripts (EVAL, FCALL: their
// undeclared keys are claimed into the group's locks; a conflict runs them again alone) join
// the connection's commit group; MULTI, DISCARD and EXEC leave it to EXEC (kKeepsGroup).
// Everything else (WATCH, keyspace-wide commands, server commands) runs after the group's
// writes are flushed, so it sees them committed and never waits for a lock the group holds.
bool JoinsGroup(const CommandSpec& spec, const UnitPlan& plan) {
  if (!plan.data || plan.all_keys) return false;
  if (spec.flags & kScriptUnit) return true;
  return !plan.isolate_reads && (spec.flags & (kWrite | kReadOnly)) != 0 &&
         (spec.flags & kMultiControl) == 0;
}

// A top-level command stopped before it committed and is about to run again: what the stopped
// run handed to replication, and the keyspace events and script messages it queued, go with its
// writes.
void ForgetStoppedRun() {
  if (ReplicationHook* repl = GetReplicationHook(); repl != nullptr) repl->AbandonSteps();
  DropQueuedEvents();
}

// Gives the command its own unit: planned from the command table, or for a data call (see
// DataCallCheck) the script's declared keys without isolated reads. `alone`: never as a member
// of the commit group (a script that conflicted as one runs again so).
// Returns whether the unit joined the round's commit group (its commit is then written with
// other clients' commands: no single writer for NOLOOP).
bool PlanOwnUnit(CommandContext& ctx, const CommandSpec& spec, Args args, bool data_call,
                 bool alone = false) {
  thread_local std::vector<KeyRef> keys;
  keys.clear();
  UnitPlan plan = PlanUnit(spec, args, ctx.client.db, &keys);
  if (data_call) plan.isolate_reads = false;
  TransactionOptions options = UnitOptions(plan.all_keys, plan.isolate_reads);
  // A NOLOOP tracking client's writes (and scripts, which may write) commit alone, so that
  // their invalidations know the writer.
  const bool noloop = (ctx.client.tracking.load(std::memory_order_relaxed) & kTrackingNoloop) != 0;
  if (ctx.group != nullptr && !(spec.flags & kKeepsGroup)) {
    if (!alone && JoinsGroup(spec, plan) && !(noloop && (spec.flags & (kWrite | kScriptUnit)))) {
      options.group = ctx.group;
    } else {
      static_cast<void>(ctx.group->Flush());  // a failure sticks: the connection sees it
    }
  }
  if (plan.data) ctx.unit = &ctx.own_unit.emplace(ctx.store, keys, options);
  return options.group != nullptr;
}

// Client-side caching: the script running on this thread (its declared keys are what a
// tracking caller remembers when the script runs a read-only command, as Redis).
struct ScriptCall {
  const CommandSpec* spec = nullptr;
  Args args;
};
thread_local ScriptCall t_script;

// Remembers the keys `spec` reads in `args` for the tracking client (see tracking.h).
void RememberKeys(CommandContext& ctx, const CommandSpec& spec, Args args) {
  thread_local std::vector<int> positions;
  thread_local std::vector<std::string_view> keys;
  positions.clear();
  keys.clear();
  CommandKeyPositions(spec, args, &positions);
  for (int p : positions) keys.push_back(args[static_cast<size_t>(p)]);
  ctx.server.tracking().Remember(ctx.client, keys);
}

// True when the command's keys are to be remembered for a tracking client: a read-only command
// (not a script itself: a script's commands are) while the client tracks in default mode.
bool TracksRead(CommandContext& ctx, const CommandSpec& spec) {
  if (!ctx.server.tracking().active()) return false;
  if (!(spec.flags & kReadOnly) || (spec.flags & kScriptUnit)) return false;
  const uint32_t flags = ctx.client.tracking.load(std::memory_order_relaxed);
  return (flags & kTrackingOn) && !(flags & kTrackingBcast);
}

// After a read the tracking client made: its keys, or inside a script the script's keys.
void RememberRead(CommandContext& ctx, const CommandSpec& spec, Args args) {
  if (ctx.from_script) {
    if (t_script.spec != nullptr) RememberKeys(ctx, *t_script.spec, t_script.args);
    return;
  }
  RememberKeys(ctx, spec, args);
}

// MONITOR: what the command shows (admin commands are not shown, as in Redis).
void FeedMonitors(CommandContext& ctx, Args args) {
  ctx.server.monitors().Feed(ctx.client, ctx.from_script, ctx.client.db, args,
                             ctx.server.output_buffer_limit());
}

// notify-keyspace-events m: "keymiss" for each key a command reads through Redis's
// lookupKeyRead and finds missing, in argument order, looked at before the command runs: every
// key of a read-only command, and the source keys of the writes that read them (a STORE
// command's sources, PFMERGE's keys, COPY's source, a BITFIELD of GETs only).
void NotifyKeyMisses(CommandContext& ctx, const CommandSpec& spec, Args args) {
  // Reads that look their keys up without notifying, as in Redis.
  for (const char* quiet :
       {"object|encoding", "object|freq", "object|idletime", "object|refcount", "memory|usage"}) {
    if (spec.name == quiet) return;
  }
  thread_local std::vector<int> positions;
  positions.clear();
  CommandKeyPositions(spec, args, &positions);
  size_t first = 0;
  size_t last = positions.size();
  if (spec.flags & kWrite) {
    const std::string& n = spec.name;
    if (n == "sinterstore" || n == "sunionstore" || n == "sdiffstore" || n == "zunionstore" ||
        n == "zinterstore" || n == "zdiffstore" || n == "bitop") {
      first = 1;
    } else if (n == "zrangestore" || n == "geosearchstore") {
      first = 1;
      last = std::min<size_t>(last, 2);
    } else if (n == "sort" || n == "georadius" || n == "georadiusbymember" || n == "copy") {
      last = std::min<size_t>(last, 1);
    } else if (n == "bitfield") {
      for (size_t i = 2; i < args.size(); ++i) {
        if (EqualsIgnoreCase(args[i], "set") || EqualsIgnoreCase(args[i], "incrby")) return;
      }
    } else if (n != "pfmerge") {
      return;
    }
  }
  for (size_t i = first; i < last; ++i) {
    const std::string_view key = args[static_cast<size_t>(positions[i])];
    auto n = ctx.txn().Exists(ctx.client.db, std::span<const std::string_view>(&key, 1));
    if (n.ok() && *n == 0) QueueKeyspaceEvent(kNotifyKeyMiss, "keymiss", ctx.client.db, key);
  }
}

// OBJECT IDLETIME's clock (key_access.h): the command's keys were accessed now. A script's
// keys are stamped by the commands it runs.
void StampKeys(CommandContext& ctx, const CommandSpec& spec, Args args) {
  if (spec.flags & kScriptUnit) return;
  if (spec.first_key == 0 && spec.find_keys == nullptr) return;
  if (!KeyAccessClock::Touches(spec)) return;
  thread_local std::vector<int> positions;
  positions.clear();
  CommandKeyPositions(spec, args, &positions);
  KeyAccessClock& clock = KeyAccess();
  for (int p : positions) clock.Touch(ctx.client.db, args[static_cast<size_t>(p)]);
  // MOVE and COPY ... DB write a key in another database: Redis moves or creates the object
  // there, just accessed.
  const std::string& n = spec.name;
  if ((n == "move" || n == "copy") && !positions.empty()) {
    const std::string_view key = args[static_cast<size_t>(positions.back())];
    size_t at = n == "move" ? 2 : 0;  // MOVE key db; COPY source destination [DB db] ...
    for (size_t i = 3; at == 0 && i + 1 < args.size(); ++i) {
      if (EqualsIgnoreCase(args[i], "db")) at = i + 1;
    }
    if (at != 0 && at < args.size()) {
      if (std::optional<int64_t> db = ParseInt64(args[at]); db && *db >= 0 && *db < 1024) {
        clock.Touch(static_cast<int>(*db), key);
      }
    }
  }
}

// Runs the handler, in ctx.unit when the caller set one (EXEC, scripts), else in a unit of its
// own planned from the command table. A data call whose handler asked for a script unit runs
// again in one. A command whose own unit hit a key it did not declare (kLockConflict: a key the
// table cannot name, e.g. COPY's DB destination) runs once more holding every stripe.
// A command the cluster gate admitted on a MIGRATING slot (ClusterAdmits), checked again under
// its unit's locks before its handler runs: the client it belongs to (constant-initialised, so
// the hot path pays one TLS load) and the route (its migration target).
thread_local const ClientState* t_recheck_client = nullptr;
ClusterRoute& MigratingRecheck() {
  thread_local ClusterRoute route;
  return route;
}

void Run(CommandContext& ctx, const CommandSpec& spec, Args args, bool count) {
  if (count) ctx.server.stats().total_commands_processed.fetch_add(1, std::memory_order_relaxed);
  const uint64_t start = count ? CommandTicksNow() : 0;
  // Monitors see a command once it ran; a script before it runs, so that its commands follow
  // it. A parked command run again (count false) is not shown again.
  const bool monitored = count && !ctx.server.monitors().empty() && !(spec.flags & kAdmin);
  if (monitored && (spec.flags & kScriptUnit)) FeedMonitors(ctx, args);
  std::string* buffer = ctx.out.buffer();
  const size_t reply_start = buffer->size();
  const bool top = ctx.unit == nullptr;
  // StampKeys' access-clock line, a likely cache miss, loads while the command runs (a pipelined
  // batch prefetches it earlier, in the connection's lookahead; at pipeline 1 this is the first
  // chance: 6% of a GET's CPU was that miss).
  if (spec.first_key > 0 && static_cast<size_t>(spec.first_key) < args.size()) {
    KeyAccess().Prefetch(ctx.client.db, args[static_cast<size_t>(spec.first_key)]);
  }
  // Tracking: a read's keys are remembered before it reads (a write committing meanwhile
  // invalidates them) and again after it (its own expiry removal forgot them).
  const bool tracks_read = TracksRead(ctx, spec);
  if (tracks_read) RememberRead(ctx, spec, args);
  // The writer that commits on this thread, for NOLOOP: none while a group holds other clients'.
  std::optional<TrackingRegistry::CommitterScope> committer;
  // SWAPDB invalidates nothing (Redis 7.0 sends no invalidation for it).
  std::optional<TrackingRegistry::SuppressScope> suppress;
  if (top && ctx.server.tracking().active() && spec.name == "swapdb") suppress.emplace();
  ScriptCall saved_script = t_script;
  bool joined = false;  // the command's own unit is a member of the round's commit group
  if (top) {
    ctx.data_call = spec.data_call != nullptr && spec.data_call(ctx, args);
    joined = PlanOwnUnit(ctx, spec, args, ctx.data_call);
    committer.emplace(joined ? nullptr : &ctx.client);
    if (spec.flags & kScriptUnit) t_script = ScriptCall{&spec, args};
  }
  if (NotifyEnabled(kNotifyKeyMiss) && (spec.flags & (kReadOnly | kWrite)) &&
      !(spec.flags & kScriptUnit)) {
    NotifyKeyMisses(ctx, spec, args);
  }
  if (t_effect_override.set) t_effect_override.Clear();
  if (top && t_recheck_client == &ctx.client) [[unlikely]] {
    t_recheck_client = nullptr;
    if (Status s = RecheckMigratingKeys(ctx, spec, args, MigratingRecheck()); !s.ok()) {
      ReplyError(ctx.out, s);  // nothing ran: the unit commits nothing
    } else {
      spec.handler(ctx, args);
    }
  } else {
    spec.handler(ctx, args);
  }
  if (top && ctx.needs_script_unit) {
    // Nothing was staged or replied; the member's rollback leaves the group as it was.
    ForgetStoppedRun();
    ctx.own_unit.reset();
    ctx.unit = nullptr;
    ctx.data_call = false;
    ctx.needs_script_unit = false;
    buffer->resize(reply_start);
    committer.reset();
    joined = PlanOwnUnit(ctx, spec, args, /*data_call=*/false);
    committer.emplace(joined ? nullptr : &ctx.client);
    spec.handler(ctx, args);
  }
  if (top && joined && ctx.own_unit && ctx.own_unit->conflicted() && (spec.flags & kScriptUnit)) {
    // A script that met a key another thread holds, or turned busy while other members wait
    // for the group's write (lua_vm.cc), runs again alone, after that write: as a script unit
    // of its own. Conflicting again, it runs once more holding every stripe (below).
    ForgetStoppedRun();
    ctx.own_unit.reset();
    ctx.unit = nullptr;
    ctx.data_call = false;
    committer.reset();
    buffer->resize(reply_start);
    if (t_effect_override.set) t_effect_override.Clear();
    joined = PlanOwnUnit(ctx, spec, args, /*data_call=*/false, /*alone=*/true);
    committer.emplace(&ctx.client);
    spec.handler(ctx, args);
  }
  if (top && ctx.own_unit && ctx.own_unit->conflicted()) {
    ctx.own_unit.reset();
    ctx.data_call = false;
    committer.reset();
    if (ctx.group != nullptr) static_cast<void>(ctx.group->Flush());
    committer.emplace(&ctx.client);
    buffer->resize(reply_start);
    ctx.unit = &ctx.own_unit.emplace(ctx.store, std::span<const KeyRef>{},
                                     UnitOptions(/*all_keys=*/true, /*isolate_reads=*/false));
    ForgetStoppedRun();
    if (t_effect_override.set) t_effect_override.Clear();
    spec.handler(ctx, args);
  }
  // Until replication is engaged its calls would only clear the effect a handler recorded.
  ReplicationHook* const repl = EngagedReplicationHook();
  if (repl == nullptr && t_effect_override.set) t_effect_override.Clear();
  if (!top && ctx.unit != nullptr && repl != nullptr) {
    // A command of EXEC or a script: its effect, for a unit that writes a stream.
    repl->Step(ctx, *ctx.unit, spec, args);
  }
  bool committed = true;
  if (top && ctx.own_unit) {
    // Replication stages the unit's effect while its locks are held (replication_hook.h).
    if (repl != nullptr) repl->Capture(ctx, *ctx.own_unit, spec, args);
    committed = FinishOwnUnit(ctx, reply_start);
    if (!committed && repl != nullptr) repl->DropCaptured();
  }
  committer.reset();
  suppress.reset();
  if (top) t_script = saved_script;
  if (tracks_read) RememberRead(ctx, spec, args);
  if (top && ctx.server.tracking().OverLimit()) ctx.server.tracking().EnforceLimit();
  // Keyspace notifications fire once the top-level unit (command, EXEC, script) committed, in
  // the order its commands fired them, with the messages a script published; a failed commit
  // wrote nothing to report.
  if (top && HasQueuedEvents()) {
    if (committed) {
      PublishQueuedEvents(ctx.server.pubsub());
    } else {
      DropQueuedEvents();
    }
  }
  if (monitored && !(spec.flags & kScriptUnit)) FeedMonitors(ctx, args);
  StampKeys(ctx, spec, args);
  const bool failed = buffer->size() > reply_start && (*buffer)[reply_start] == '-';
  // A script's command's error is counted once, as the script's own error reply when it
  // returns it (Redis counts it once too; an error the script swallows with redis.pcall is
  // the one Redis counts and Sluice does not).
  if (failed && !ctx.from_script) {
    ctx.server.stats().total_error_replies.fetch_add(1, std::memory_order_relaxed);
    RecordErrorReplyAt(*buffer, reply_start);
  }
  if (count) {
    const uint64_t ticks = CommandTicksNow() - start;
    RecordCommandCall(spec.id, ticks, failed);
    // SLOWLOG/LATENCY see what a client sent and a handler ran (each command of an EXEC; not a
    // script's calls, not a command rejected or queued); a command that parks its client is
    // logged when it is served (BlockedCommand::Resume).
    if (!ctx.from_script) {
      const bool parks = ctx.blocking != nullptr && ctx.blocking->park_requested() &&
                         buffer->size() == reply_start;
      RecordCommandTime(ctx.server, ctx.client, args, spec, ticks, !parks);
    }
  } else if (failed && !ctx.from_script) {
    RecordCommandFailedOnWake(spec.id);
  }
}

// While a script has run past busy-reply-threshold, other clients get -BUSY (as from Redis)
// except for the allow_busy commands (kAllowBusy). Lock-free when no script runs.
bool RejectedAsBusy(CommandContext& ctx, const CommandSpec& spec) {
  // A command of a script or EXEC already running, or no script at all: nothing to check.
  if (ctx.unit != nullptr || ctx.server.running_scripts().empty()) return false;
  const auto busy = ctx.server.running_scripts().Busy(RunningScripts::SteadyNowMs(),
                                                      ctx.server.busy_reply_threshold_ms());
  if (busy == RunningScripts::BusyKind::kNone || (spec.flags & kAllowBusy)) return false;
  Reject(ctx, &spec, Busy(busy == RunningScripts::BusyKind::kFunction));
  return true;
}

// RESP2 subscribed mode (Redis's CLIENT_PUBSUB with RESP2): only these commands run.
bool AllowedWhileSubscribed(const CommandSpec& spec) {
  for (const char* name : {"ping", "subscribe", "ssubscribe", "unsubscribe", "sunsubscribe",
                           "psubscribe", "punsubscribe", "quit", "reset"}) {
    if (spec.name == name) return true;
  }
  return false;
}

// Cluster mode's redirections (server/core/cluster_route.h). A refused EXEC discards its
// transaction and replies the redirection itself (Redis's discardTransaction), any other
// refused command dooms the transaction it was being queued in (flagTransaction). Kept out of
// line: standalone mode pays only the null check in Gate.
[[gnu::noinline]] bool ClusterAdmits(CommandContext& ctx, const ClusterRouter& router,
                                     const CommandSpec& spec, Args args) {
  t_recheck_client = nullptr;
  const ClusterRoute route = RouteCommand(router, ctx, spec, args);
  if (route.kind == ClusterRoute::Kind::kServe) {
    // Run checks it again under the locks; a queued command is checked again at EXEC.
    if (route.recheck_under_locks && !ctx.client.multi.active) {
      MigratingRecheck() = route;
      t_recheck_client = &ctx.client;
    }
    return true;
  }
  const Status error = ClusterRedirectError(route, ctx.client.tls);
  if (spec.name != "exec") {
    Reject(ctx, &spec, error, args);
    return false;
  }
  ctx.client.multi = MultiState{};
  ctx.server.watches().UnwatchAll(&ctx.client);
  ctx.server.stats().total_error_replies.fetch_add(1, std::memory_order_relaxed);
  RecordCommandRejected(spec.id);
  const size_t start = ctx.out.buffer()->size();
  ReplyError(ctx.out, error);
  RecordErrorReplyAt(*ctx.out.buffer(), start);
  return false;
}

// Arity, authentication and the MULTI rules, then queue or run: the common tail once `spec`
// is resolved.
void Gate(CommandContext& ctx, const CommandSpec& spec, Args args, bool count) {
  if (!ArityOk(spec, args.size())) return Reject(ctx, &spec, WrongArity(spec.name), args);
  if (!ctx.client.authenticated && !(spec.flags & kNoAuth) && ctx.server.requirepass_set()) {
    return Reject(ctx, &spec, NoAuth(), args);
  }
  if (ctx.client.resp == 2 && ctx.unit == nullptr && ctx.client.subscribed() &&
      !AllowedWhileSubscribed(spec)) {
    return Reject(ctx, &spec, SubscribedModeOnly(spec.name), args);
  }
  if (ctx.unit == nullptr) {  // inside EXEC or a script the caller checked (RunQueued)
    const AclDenial denial =
        CheckClientAcl(ctx, spec, args, ctx.client.multi.active ? "multi" : "toplevel");
    if (denial != AclDenial::kNone) return Reject(ctx, &spec, NoPerm(denial, spec.name));
    // Cluster mode: is the command's slot served here (queued commands are checked as they
    // are queued, and again together at EXEC, as by Redis)?
    if (const ClusterRouter* router = ctx.server.cluster(); router != nullptr) {
      if (!ClusterAdmits(ctx, *router, spec, args)) return;
    }
  }
  NoteLastCommand(ctx, spec);
  if (RejectedAsBusy(ctx, spec)) return;
  if (ReplicationHook* repl = EngagedReplicationHook(); repl != nullptr) {
    // -READONLY, -MASTERDOWN, -NOREPLICAS (a replica's primary link passes).
    if (Status s = repl->Admit(ctx, spec); !s.ok()) return Reject(ctx, &spec, s, args);
  }
  // A replica loading its primary's full sync (loading_state.h): only `loading` commands run.
  if (Loading() && !(spec.flags & kLoading) &&
      ctx.client.repl_kind.load(std::memory_order_relaxed) != ClientState::kMasterLink) {
    return Reject(ctx, &spec, LoadingDataset(), args);
  }
  if (ctx.client.multi.active && ctx.unit == nullptr) {
    if (spec.flags & kNoMulti) return Reject(ctx, &spec, NotAllowedInMulti());
    if (!(spec.flags & kMultiControl)) return Queue(ctx, spec, args);
  }
  Run(ctx, spec, args, count);
}

}  // namespace

UnitPlan PlanUnit(const CommandSpec& spec, Args args, int db, std::vector<KeyRef>* keys) {
  thread_local std::vector<int> positions;
  positions.clear();
  CommandKeyPositions(spec, args, &positions);
  UnitPlan plan;
  if (spec.flags & kScriptUnit) {
    plan.data = true;
    plan.lock_keys = true;
    plan.isolate_reads = true;
  } else if (spec.flags & kWrite) {
    plan.data = true;
    plan.all_keys = positions.empty();
    plan.lock_keys = !positions.empty();
  } else if (spec.flags & kReadOnly) {
    plan.data = true;
  } else if (!positions.empty()) {
    plan.data = true;
    plan.lock_keys = true;
  }
  if (plan.lock_keys) {
    for (int p : positions) keys->push_back(KeyRef{db, args[static_cast<size_t>(p)]});
  }
  return plan;
}

namespace {

// The command a client names: never a subcommand's own entry ("config|get" names nothing, as in
// Redis; the table keeps subcommands under such names for COMMAND INFO and the ACLs).
const CommandSpec* FindTopLevel(const CommandTable& table, std::string_view name) {
  if (name.find('|') != std::string_view::npos) return nullptr;
  return table.Find(name);
}

}  // namespace

const CommandSpec* Dispatcher::Resolve(Args args) const {
  if (args.empty()) return nullptr;
  const CommandSpec* spec = FindTopLevel(table_, args[0]);
  if (spec == nullptr || !IsContainer(*spec) || args.size() < 2) return spec;
  return table_.Find(SubcommandName(spec->name, args[1]));
}

// CLIENT CACHING yes|no covers the next command, or the next transaction: cleared after any
// top-level command but CLIENT's own subcommands, unless in MULTI (as Redis's resetClient).
void EndCachingScope(CommandContext& ctx, Args args) {
  if (ctx.unit != nullptr) return;
  if (!(ctx.client.tracking.load(std::memory_order_relaxed) & kTrackingCaching)) return;
  if (ctx.client.multi.active || EqualsIgnoreCase(args[0], "client")) return;
  ctx.client.tracking.fetch_and(~static_cast<uint32_t>(kTrackingCaching),
                                std::memory_order_relaxed);
}

// ASKING covers the next command, or the transaction it began: cleared after any top-level
// command but ASKING itself, unless in MULTI (as Redis's resetClient). Only ever set in
// cluster mode.
void EndAskingScope(CommandContext& ctx, Args args) {
  if (ctx.unit != nullptr || ctx.client.multi.active || EqualsIgnoreCase(args[0], "asking")) {
    return;
  }
  ctx.client.cluster_asking = false;
}

void Dispatcher::Dispatch(CommandContext& ctx, Args args) const {
  if (args.empty()) return;
  struct CachingScope {
    CommandContext& ctx;
    Args args;
    ~CachingScope() {
      EndCachingScope(ctx, args);
      if (ctx.client.cluster_asking) EndAskingScope(ctx, args);
    }
  } caching{ctx, args};
  RunningCommandScope running(ctx.client, args);  // for the crash report
  const CommandSpec* spec = FindTopLevel(table_, args[0]);
  if (spec == nullptr) return Reject(ctx, nullptr, UnknownCommand(args[0], args.subspan(1)));
  if (!IsContainer(*spec)) return Gate(ctx, *spec, args, true);
  if (args.size() < 2) return Reject(ctx, spec, WrongArity(spec->name));
  const CommandSpec* sub = table_.Find(SubcommandName(spec->name, args[1]));
  // As Redis, an unknown subcommand is no command's call: not counted as rejected.
  if (sub == nullptr) return Reject(ctx, nullptr, UnknownSubcommand(spec->name, args[1]));
  Gate(ctx, *sub, args, true);
}

void Dispatcher::RunQueued(CommandContext& ctx, const CommandSpec& spec, Args args) const {
  Run(ctx, spec, args, true);
}

void Dispatcher::RunAgain(CommandContext& ctx, const CommandSpec& spec, Args args) const {
  Run(ctx, spec, args, false);
}

void DispatchSubcommand(CommandContext& ctx, const CommandTable& table,
                        const CommandSpec& container, Args args) {
  const CommandSpec* sub = table.Find(SubcommandName(container.name, args[1]));
  if (sub == nullptr) return Reject(ctx, nullptr, UnknownSubcommand(container.name, args[1]));
  Gate(ctx, *sub, args, false);
}

}  // namespace sluice::server
