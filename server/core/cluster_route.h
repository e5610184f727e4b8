// Redis Cluster's routing of a client's command at the gate (Redis 7.0's getNodeByQuery and
// clusterRedirectClient): in cluster mode (ServerState::cluster() set) the dispatcher asks
// RouteCommand whether this node serves a command's keys, and replies -MOVED, -ASK, -TRYAGAIN,
// -CROSSSLOT or -CLUSTERDOWN when it does not. A unit is routed as a whole: one command, EXEC's
// queued commands together, or (RouteScriptCommand) a script's command against the slot of the
// keys the script touched before. Standalone mode never reaches this file (one null check in
// the dispatcher). Thread-safe: reads the router and the store; changes only the calling
// client's own fields.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "server/core/cluster_router.h"
#include "server/core/command.h"
#include "sluice/status.h"

namespace sluice::server {

// One command of a routed unit.
struct RoutedCommand {
  const CommandSpec* spec = nullptr;
  Args args;
};

// Where a unit goes (Redis's CLUSTER_REDIR_* codes).
struct ClusterRoute {
  enum class Kind : uint8_t {
    kServe,         // this node runs it
    kCrossSlot,     // keys of more than one slot
    kUnstable,      // several keys, some missing, in a migrating/importing slot: -TRYAGAIN
    kDown,          // cluster down: -CLUSTERDOWN The cluster is down
    kDownReadOnly,  // cluster down, reads allowed, this unit writes
    kDownUnbound,   // the slot is served by nobody: -CLUSTERDOWN Hash slot not served
    kMoved,
    kAsk,
  };
  Kind kind = Kind::kServe;
  int slot = -1;          // the keys' slot; -1 when the unit has no key
  ClusterNodeAddress to;  // kMoved: the slot's owner; kAsk: the node it migrates to
  // kServe of a command that writes keys of a MIGRATING slot (all present at the gate): the
  // gate looked without the keys' locks, so MIGRATE may move one before the command runs.
  // RecheckMigratingKeys runs again under the unit's locks; `to` is the migration's target.
  bool recheck_under_locks = false;
};

// What a client brings to routing: its ASKING and READONLY flags.
struct ClusterClientFlags {
  bool asking = false;    // ASKING before this command (or before the MULTI of this EXEC)
  bool readonly = false;  // READONLY
};

// Redis's getCommandFlags, for routing: whether a kScriptUnit command's call writes, as its
// script's shebang flags (EVAL family: Redis's evalGetCommandFlags) or its function's flags
// (FCALL family) say: a script or function without no-writes writes. nullopt when they say
// nothing (a script without a shebang, an unknown SHA1 or function): the command's own flags
// decide. Runs on the client's thread.
using ScriptWritesCheck = std::optional<bool> (*)(CommandContext& ctx, const CommandSpec& spec,
                                                  Args args);
// Registered by the scripting commands (`functions`: the FCALL family's, else the EVAL
// family's) when they are added to a command table; until then every call is routed by its
// command's flags. Any thread.
void SetScriptWritesCheck(bool functions, ScriptWritesCheck check);
// The registered check's answer for a kScriptUnit call (nullopt: none registered, or the
// script's flags say nothing). Also CLIENT PAUSE WRITE's: a no-writes script is not held.
std::optional<bool> ScriptCallWrites(CommandContext& ctx, const CommandSpec& spec, Args args);

// Routes `unit` (Redis's getNodeByQuery): its keys (shard channels count as keys) must share
// one slot. `running` is the command being run and `running_writes` whether it writes (its
// flags, a script's flags included: EXEC's own for a transaction decide the cluster-down
// cases, as in Redis); `unit_writes` whether the unit writes (EXEC: any queued command
// writes). Counts missing keys in db 0 of `store` only for a migrating/importing slot.
ClusterRoute RouteUnit(const ClusterRouter& router, Store& store, const CommandSpec& running,
                       std::span<const RoutedCommand> unit, bool running_writes, bool unit_writes,
                       ClusterClientFlags client);

// The gate's check for a top-level command in cluster mode (Redis's processCommand): a
// command that can name no key (no key positions, no finder, not EXEC) is served; EXEC is
// routed with its queue; a primary's replication link is obeyed. Sets ctx.client.cluster_slot
// (the slot scripts must keep to, -1 when none).
ClusterRoute RouteCommand(const ClusterRouter& router, CommandContext& ctx, const CommandSpec& spec,
                          Args args);

// For a route with recheck_under_locks, called by the dispatcher inside the command's unit
// (its key locks held, so a MIGRATE of these keys either committed or waits for it): OK when
// every key is still here, else the -ASK (all gone) or -TRYAGAIN (some gone) error to reply
// instead of running the command: Redis's single thread makes its gate check and the command
// one step; this makes them one step under the keys' locks.
Status RecheckMigratingKeys(CommandContext& ctx, const CommandSpec& spec, Args args,
                            const ClusterRoute& route);

// The error reply for a route that is not kServe (Redis's clusterRedirectClient); a TLS client
// is sent the node's tls port when it has one. In errors_cluster_route.cc.
Status ClusterRedirectError(const ClusterRoute& route, bool tls_client);

// A command a script runs (redis.call) in cluster mode (Redis's scriptVerifyClusterState):
// routed with the script caller's ASKING/READONLY flags, and kept to the slot of the keys the
// script declared or touched first unless `allow_cross_slot` (the script's
// allow-cross-slot-keys flag). OK or the error redis.call raises.
Status RouteScriptCommand(const ClusterRouter& router, CommandContext& ctx, const CommandSpec& spec,
                          Args args, bool allow_cross_slot);

// A parked blocking command (server/core/blocking.h) whose keys this node no longer serves
// (Redis's clusterRedirectBlockedClientIfNeeded): -CLUSTERDOWN The cluster is down while the
// cluster is down, -CLUSTERDOWN Hash slot not served for an unassigned slot, -MOVED when
// another node serves it and it is not importing here (a READONLY client's read on its
// master's slot stays); nullopt: it stays parked.
std::optional<Status> BlockedClientRedirect(const ClusterRouter& router, CommandContext& ctx,
                                            const CommandSpec& spec, Args args);

// Errors of cluster mode's client side (errors_cluster_route.cc).
Status ClusterSupportDisabled();     // "ERR This instance has cluster support disabled"
Status SelectNotAllowedInCluster();  // "ERR SELECT is not allowed in cluster mode"
Status MoveNotAllowedInCluster();    // "ERR MOVE is not allowed in cluster mode"
Status SwapDbNotAllowedInCluster();  // "ERR SWAPDB is not allowed in cluster mode"
Status CopyDbNotAllowedInCluster();  // "ERR Copying to another database is not allowed ..."
Status ScriptNoClusterFlag();        // "ERR Can not run script on cluster, 'no-cluster' ..."
// redis.call refused in cluster mode (Redis's scriptVerifyClusterState).
Status ScriptClusterDown();          // "ERR Script attempted to execute a command while ..."
Status ScriptClusterDownReadOnly();  // "... a write command while the cluster is down ..."
Status ScriptNonLocalKey();          // "ERR Script attempted to access a non local key ..."
Status ScriptCrossSlot();            // "ERR Script attempted to access keys that do not ..."

}  // namespace sluice::server
