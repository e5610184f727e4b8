#include "server/core/cluster_route.h"

#include <atomic>
#include <optional>
#include <string_view>
#include <vector>

#include "server/core/client_state.h"
#include "server/core/errors.h"
#include "server/core/server_state.h"
#include "sluice/key_slot.h"
#include "sluice/store.h"

namespace sluice::server {

namespace {

bool IsShardPubSub(const CommandSpec& spec) {
  return spec.name == "ssubscribe" || spec.name == "sunsubscribe" || spec.name == "spublish";
}

// The command's keys as Redis's getKeysFromCommand finds them for routing: the key positions,
// and a shard channel command's channels (a "not_key" key spec, keys to the cluster only).
void RoutedKeyPositions(const CommandSpec& spec, Args args, std::vector<int>* positions) {
  CommandKeyPositions(spec, args, positions);
  if (!positions->empty() || !IsShardPubSub(spec)) return;
  const KeySpec& ks = spec.key_specs.front();
  const int argc = static_cast<int>(args.size());
  const int last = ks.lastkey < 0 ? argc + ks.lastkey : ks.index + ks.lastkey;
  for (int i = ks.index; i <= last && i < argc; ++i) positions->push_back(i);
}

// Redis's lookupKeyReadWithFlags(db 0, NOTOUCH|NOEXPIRE...) != NULL: the key exists and has
// not expired. A failed read counts as missing (the client is asked to retry elsewhere).
bool KeyExists(Store& store, std::string_view key) {
  auto n = store.Exists(0, std::span<const std::string_view>(&key, 1));
  return n.ok() && *n > 0;
}

std::atomic<ScriptWritesCheck> eval_writes_check{nullptr}, fcall_writes_check{nullptr};

// Whether `spec` called with `args` writes, for routing: its write flag, or for EVAL/FCALL what
// the script's or function's flags say.
bool WritesForRouting(CommandContext& ctx, const CommandSpec& spec, Args args) {
  if (spec.flags & kScriptUnit) {
    if (std::optional<bool> writes = ScriptCallWrites(ctx, spec, args)) return *writes;
  }
  return (spec.flags & kWrite) != 0;
}

}  // namespace

std::optional<bool> ScriptCallWrites(CommandContext& ctx, const CommandSpec& spec, Args args) {
  if (!(spec.flags & kScriptUnit)) return std::nullopt;
  const bool functions = spec.name.starts_with("fcall");
  const ScriptWritesCheck check =
      (functions ? fcall_writes_check : eval_writes_check).load(std::memory_order_acquire);
  if (check == nullptr) return std::nullopt;
  return check(ctx, spec, args);
}

void SetScriptWritesCheck(bool functions, ScriptWritesCheck check) {
  (functions ? fcall_writes_check : eval_writes_check).store(check, std::memory_order_release);
}

ClusterRoute RouteUnit(const ClusterRouter& router, Store& store, const CommandSpec& running,
                       std::span<const RoutedCommand> unit, bool running_writes, bool unit_writes,
                       ClusterClientFlags client) {
  ClusterRoute out;
  const bool pubsub_shard = IsShardPubSub(running);
  thread_local std::vector<int> positions;
  std::string_view first_key;
  bool have_key = false, multiple_keys = false, open_slot = false, migrating = false;
  bool importing = false;
  int missing = 0, existing = 0;
  ClusterSlotRoute route;
  for (const RoutedCommand& cmd : unit) {
    positions.clear();
    RoutedKeyPositions(*cmd.spec, cmd.args, &positions);
    for (int p : positions) {
      const std::string_view key = cmd.args[static_cast<size_t>(p)];
      const int slot = KeyHashSlot(key);
      if (!have_key) {
        have_key = true;
        first_key = key;
        out.slot = slot;
        route = router.Route(static_cast<uint16_t>(slot));
        if (route.owner == ClusterSlotRoute::Owner::kNobody) {
          out.kind = ClusterRoute::Kind::kDownUnbound;
          out.slot = -1;
          return out;
        }
        migrating = route.owner == ClusterSlotRoute::Owner::kMe && route.migrating;
        importing = !migrating && route.importing;
        open_slot = migrating || importing;
      } else if (key != first_key) {
        if (slot != out.slot) {
          out.kind = ClusterRoute::Kind::kCrossSlot;
          out.slot = -1;
          return out;
        }
        multiple_keys = true;
      }
      if (open_slot && !pubsub_shard) {
        if (KeyExists(store, key)) {
          ++existing;
        } else {
          ++missing;
        }
      }
    }
  }
  if (!have_key) return out;  // no key: served here, whatever the cluster's state
  if (!router.StateOk()) {
    ClusterRoute down;
    // cluster-allow-pubsubshard-when-down is yes (Redis's default): shard channels pass.
    if (!pubsub_shard) {
      if (!router.AllowReadsWhenDown()) {
        down.kind = ClusterRoute::Kind::kDown;
        return down;
      }
      if (running_writes) {
        down.kind = ClusterRoute::Kind::kDownReadOnly;
        return down;
      }
    }
  }
  // MIGRATE runs on an open slot's node whatever keys it has (moving keys out of it).
  if (open_slot && running.name == "migrate") return out;
  if (migrating && missing > 0) {
    if (existing > 0) {
      out.kind = ClusterRoute::Kind::kUnstable;
    } else {
      out.kind = ClusterRoute::Kind::kAsk;
      out.to = route.migrating_to;
    }
    return out;
  }
  if (importing && (client.asking || running.name == "restore-asking")) {
    if (multiple_keys && missing > 0) out.kind = ClusterRoute::Kind::kUnstable;
    return out;
  }
  const bool writes = running_writes || unit_writes;
  if (migrating && writes && existing > 0) {
    out.recheck_under_locks = true;
    out.to = route.migrating_to;
  }
  if ((client.readonly || pubsub_shard) && !writes && route.served_by_my_master) return out;
  if (route.owner != ClusterSlotRoute::Owner::kMe) {
    out.kind = ClusterRoute::Kind::kMoved;
    out.to = route.owner_address;
  }
  return out;
}

Status RecheckMigratingKeys(CommandContext& ctx, const CommandSpec& spec, Args args,
                            const ClusterRoute& route) {
  thread_local std::vector<int> positions;
  positions.clear();
  RoutedKeyPositions(spec, args, &positions);
  int missing = 0;
  for (int p : positions) {
    const std::string_view key = args[static_cast<size_t>(p)];
    auto n = ctx.txn().Exists(0, std::span<const std::string_view>(&key, 1));
    if (!n.ok() || *n == 0) ++missing;
  }
  if (missing == 0) return Status::Ok();
  ClusterRoute redirect = route;
  redirect.kind = missing == static_cast<int>(positions.size()) ? ClusterRoute::Kind::kAsk
                                                                : ClusterRoute::Kind::kUnstable;
  return ClusterRedirectError(redirect, ctx.client.tls);
}

ClusterRoute RouteCommand(const ClusterRouter& router, CommandContext& ctx, const CommandSpec& spec,
                          Args args) {
  ClientState& client = ctx.client;
  client.cluster_slot = -1;
  const bool exec = spec.name == "exec";
  // Redis's mustObeyClient: what our primary sends is applied, never redirected.
  if (client.repl_kind.load(std::memory_order_relaxed) == ClientState::kMasterLink) return {};
  if (!exec && spec.first_key == 0 && spec.find_keys == nullptr && spec.key_specs.empty()) {
    return {};
  }
  const ClusterClientFlags flags{client.cluster_asking, client.cluster_readonly};
  ClusterRoute route;
  if (exec) {
    if (!client.multi.active) return {};  // EXEC without MULTI only replies its error
    thread_local std::vector<std::vector<std::string_view>> views;
    thread_local std::vector<RoutedCommand> unit;
    views.resize(client.multi.queue.size());
    unit.clear();
    bool writes = false;
    for (size_t i = 0; i < client.multi.queue.size(); ++i) {
      const QueuedCommand& q = client.multi.queue[i];
      views[i].assign(q.args.begin(), q.args.end());
      unit.push_back(RoutedCommand{q.spec, views[i]});
      writes = writes || WritesForRouting(ctx, *q.spec, views[i]);
    }
    route = RouteUnit(router, ctx.store, spec, unit, (spec.flags & kWrite) != 0, writes, flags);
  } else {
    const RoutedCommand one{&spec, args};
    route = RouteUnit(router, ctx.store, spec, std::span<const RoutedCommand>(&one, 1),
                      WritesForRouting(ctx, spec, args), false, flags);
  }
  if (route.kind == ClusterRoute::Kind::kServe) client.cluster_slot = route.slot;
  return route;
}

Status RouteScriptCommand(const ClusterRouter& router, CommandContext& ctx, const CommandSpec& spec,
                          Args args, bool allow_cross_slot) {
  ClientState& client = ctx.client;
  if (client.repl_kind.load(std::memory_order_relaxed) == ClientState::kMasterLink) {
    return Status::Ok();
  }
  const RoutedCommand one{&spec, args};
  const ClusterRoute route = RouteUnit(
      router, ctx.store, spec, std::span<const RoutedCommand>(&one, 1), (spec.flags & kWrite) != 0,
      false, ClusterClientFlags{client.cluster_asking, client.cluster_readonly});
  if (route.kind == ClusterRoute::Kind::kDownReadOnly) return ScriptClusterDownReadOnly();
  if (route.kind == ClusterRoute::Kind::kDown) return ScriptClusterDown();
  if (route.kind != ClusterRoute::Kind::kServe) return ScriptNonLocalKey();
  if (route.slot != -1 && !allow_cross_slot) {
    if (client.cluster_slot == -1) {
      client.cluster_slot = route.slot;
    } else if (client.cluster_slot != route.slot) {
      return ScriptCrossSlot();
    }
  }
  return Status::Ok();
}

std::optional<Status> BlockedClientRedirect(const ClusterRouter& router, CommandContext& ctx,
                                            const CommandSpec& spec, Args args) {
  thread_local std::vector<int> positions;
  positions.clear();
  RoutedKeyPositions(spec, args, &positions);
  if (positions.empty()) return std::nullopt;  // WAIT and the like: no key to move
  ClusterRoute route;
  if (!router.StateOk()) {
    route.kind = ClusterRoute::Kind::kDown;
    return ClusterRedirectError(route, ctx.client.tls);
  }
  // All keys share one slot (the gate checked): the first decides.
  const int slot = KeyHashSlot(args[static_cast<size_t>(positions.front())]);
  const ClusterSlotRoute r = router.Route(static_cast<uint16_t>(slot));
  if (r.owner == ClusterSlotRoute::Owner::kMe || r.importing) return std::nullopt;
  if (ctx.client.cluster_readonly && !(spec.flags & kWrite) && r.served_by_my_master) {
    return std::nullopt;
  }
  if (r.owner == ClusterSlotRoute::Owner::kNobody) {
    route.kind = ClusterRoute::Kind::kDownUnbound;
  } else {
    route.kind = ClusterRoute::Kind::kMoved;
    route.slot = slot;
    route.to = r.owner_address;
  }
  return ClusterRedirectError(route, ctx.client.tls);
}

}  // namespace sluice::server
