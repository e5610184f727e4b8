// Commands across the keyspace and its databases: TOUCH, MOVE, SWAPDB, LASTSAVE, and OBJECT
// REFCOUNT/IDLETIME/FREQ (ENCODING is with the key commands).
#include <optional>
#include <string>

#include "server/commands/commands.h"
#include "server/commands/notify_events.h"
#include "server/commands/replies.h"
#include "server/core/args.h"
#include "server/core/client_state.h"
#include "server/core/cluster_route.h"
#include "server/core/config_compat.h"
#include "server/core/errors.h"
#include "server/core/errors_introspection.h"
#include "server/core/key_access.h"
#include "server/core/server_state.h"
#include "sluice/store.h"

namespace sluice::server {

namespace {

// Redis's getIntFromObjectOrReply: a 64-bit integer that fits a C int. With `custom` set, every
// failure gives that error; without, Redis's two texts.
Status ParseIntArg(std::string_view text, int* out, std::optional<Status> custom = {}) {
  std::optional<int64_t> v = ParseInt64(text);
  if (!v) return custom ? *custom : NotAnInteger();
  if (*v < INT32_MIN || *v > INT32_MAX) return custom ? *custom : IntOutOfRange();
  *out = static_cast<int>(*v);
  return Status::Ok();
}

bool ValidDb(int db) { return db >= 0 && db < kNumDatabases; }

// TOUCH key [key ...]: how many of the keys exist (a repeated key counts each time, as Redis).
// Sluice keeps no access times, so nothing else changes.
void Touch(CommandContext& ctx, Args args) {
  ReplyInteger(ctx, ctx.txn().Exists(ctx.client.db, args.subspan(1)));
}

// MOVE key db: Redis checks the db (integer, range, not the current one) before the key.
void Move(CommandContext& ctx, Args args) {
  if (ctx.server.cluster() != nullptr) return ReplyError(ctx.out, MoveNotAllowedInCluster());
  int db = 0;
  if (Status s = ParseIntArg(args[2], &db); !s.ok()) return ReplyError(ctx.out, s);
  if (!ValidDb(db)) return ReplyError(ctx.out, DbIndexOutOfRange());
  if (db == ctx.client.db) return ReplyError(ctx.out, SameObject());
  Result<bool> r = ctx.txn().Move(ctx.client.db, db, args[1]);
  if (r.ok() && *r) {
    // Redis adds the key to the target first (class n), then reports both sides.
    NotifyKeyspaceEvent(kNotifyNew, "new", db, args[1]);
    NotifyKeyspaceEvent(kNotifyGeneric, "move_from", ctx.client.db, args[1]);
    NotifyKeyspaceEvent(kNotifyGeneric, "move_to", db, args[1]);
  }
  ReplyBool(ctx, r);
}

// SWAPDB index1 index2: atomic (one write); clients keep their selected db and see the other's
// data. A db swapped with itself is OK and unchanged.
void SwapDb(CommandContext& ctx, Args args) {
  if (ctx.server.cluster() != nullptr) return ReplyError(ctx.out, SwapDbNotAllowedInCluster());
  int a = 0;
  int b = 0;
  if (Status s = ParseIntArg(args[1], &a, InvalidDbIndex(true)); !s.ok()) {
    return ReplyError(ctx.out, s);
  }
  if (Status s = ParseIntArg(args[2], &b, InvalidDbIndex(false)); !s.ok()) {
    return ReplyError(ctx.out, s);
  }
  if (!ValidDb(a) || !ValidDb(b)) return ReplyError(ctx.out, DbIndexOutOfRange());
  Status s = ctx.txn().SwapDb(a, b);
  if (!s.ok()) return ReplyError(ctx.out, s);
  ctx.out.Simple("OK");
}

void LastSave(CommandContext& ctx, Args) { ctx.out.Integer(ctx.server.last_save_unix()); }

// OBJECT's answers for a key: nil when missing (Redis's order: the key first).
Result<std::optional<ValueKind>> ObjectKind(CommandContext& ctx, Args args) {
  return ctx.txn().Type(ctx.client.db, args[2]);
}

// OBJECT REFCOUNT: Redis shares the objects of the integers 0..9999 (INT_MAX references, with
// maxmemory 0); every other value is referenced once.
void ObjectRefcount(CommandContext& ctx, Args args) {
  auto kind = ObjectKind(ctx, args);
  if (!kind.ok()) return ReplyError(ctx.out, kind.status());
  if (!kind->has_value()) return ctx.out.NullBulk();
  int64_t refs = 1;
  if (**kind == ValueKind::kString) {
    Result<std::optional<std::string>> v = ctx.txn().Get(ctx.client.db, args[2]);
    if (!v.ok()) return ReplyError(ctx.out, v.status());
    std::optional<int64_t> n = v->has_value() ? ParseInt64(**v) : std::nullopt;
    if (n && *n >= 0 && *n < 10000 && std::to_string(*n) == **v) refs = INT32_MAX;
  }
  ctx.out.Integer(refs);
}

// OBJECT IDLETIME: seconds since the key was last read or written, from the in-memory access
// clock (server/core/key_access.h: approximate, never overstated, not kept across restarts).
// Under an LFU maxmemory-policy Redis tracks no idle time and says so.
void ObjectIdletime(CommandContext& ctx, Args args) {
  auto kind = ObjectKind(ctx, args);
  if (!kind.ok()) return ReplyError(ctx.out, kind.status());
  if (!kind->has_value()) return ctx.out.NullBulk();
  if (const CompatOption* policy = FindCompatOption("maxmemory-policy")) {
    if (GetCompatValue(ctx.server.config(), *policy).find("lfu") != std::string::npos) {
      return ReplyError(ctx.out, LfuSelected());
    }
  }
  ctx.out.Integer(KeyAccess().IdleSeconds(ctx.client.db, args[2]));
}

// OBJECT FREQ: Redis's answer under its default (non-LFU) maxmemory-policy, the only one here.
void ObjectFreq(CommandContext& ctx, Args args) {
  auto kind = ObjectKind(ctx, args);
  if (!kind.ok()) return ReplyError(ctx.out, kind.status());
  if (!kind->has_value()) return ctx.out.NullBulk();
  ReplyError(ctx.out, LfuNotSelected());
}

}  // namespace

void RegisterKeyspaceCommands(CommandTable& table) {
  table.Add(MakeSpec("generic", "touch", -2, kReadOnly | kFast, {1, -1, 1}, Touch,
                     "Alters the last access time of a key(s). Returns the number of existing "
                     "keys specified.",
                     "3.2.1", "key [key ...]"));
  table.Add(MakeSpec("generic", "move", 3, kWrite | kFast, {1, 1, 1}, Move,
                     "Move a key to another database", "1.0.0", "key db"));
  table.Add(MakeSpec("server", "swapdb", 3, kWrite | kFast, {}, SwapDb, "Swaps two Redis databases",
                     "4.0.0", "index1 index2"));
  table.Add(MakeSpec("generic", "object|refcount", 3, kReadOnly, {2, 2, 1}, ObjectRefcount,
                     "Get the number of references to the value of the key", "2.2.3", "key"));
  table.Add(MakeSpec("generic", "object|idletime", 3, kReadOnly, {2, 2, 1}, ObjectIdletime,
                     "Get the time since a Redis object was last accessed", "2.2.3", "key"));
  table.Add(MakeSpec("generic", "object|freq", 3, kReadOnly, {2, 2, 1}, ObjectFreq,
                     "Get the logarithmic access frequency counter of a Redis object", "4.0.0",
                     "key"));
  table.Add(MakeSpec("server", "lastsave", 1, kLoading | kStale | kFast, {}, LastSave,
                     "Get the UNIX time stamp of the last successful save to disk", "1.0.0", ""));
}

}  // namespace sluice::server
