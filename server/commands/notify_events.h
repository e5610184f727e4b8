// Helpers the command families use to fire keyspace notifications (server/core/notify.h) as
// Redis's commands do: the command's own event, "new" (class n) when the write created the key,
// "del" (class g) when a collection lost its last element. Each looks at the key only while the
// class it serves is on, so with notify-keyspace-events "" they cost one relaxed load.
#pragma once

#include <span>
#include <string_view>

#include "server/core/client_state.h"
#include "server/core/command.h"
#include "server/core/notify.h"
#include "sluice/transaction.h"

namespace sluice::server {

// After XREADGROUP/XCLAIM/XAUTOCLAIM: "xgroup-createconsumer" when the command created its
// consumer (StreamGroupChange::consumer_created), as Redis.
inline void NotifyConsumerCreated(CommandContext& ctx, std::string_view key, bool created) {
  if (created && NotifyEnabled(kNotifyStream)) {
    NotifyKeyspaceEvent(kNotifyStream, "xgroup-createconsumer", ctx.client.db, key);
  }
}

// Whether `key` holds a live value in the command's unit (its own writes included).
inline bool KeyLive(CommandContext& ctx, std::string_view key) {
  auto r = ctx.txn().Exists(ctx.client.db, std::span<const std::string_view>(&key, 1));
  return r.ok() && *r > 0;
}

// Before a write that may create `key`: true when it is missing and class n is on.
inline bool MissingForNew(CommandContext& ctx, std::string_view key) {
  return NotifyEnabled(kNotifyNew) && !KeyLive(ctx, key);
}

// After a write to `key`: "new" first when it was missing and now exists, then the event.
inline void NotifyWrite(CommandContext& ctx, int type, std::string_view event, std::string_view key,
                        bool was_missing = false) {
  if (was_missing && KeyLive(ctx, key)) {
    NotifyKeyspaceEvent(kNotifyNew, "new", ctx.client.db, key);
  }
  NotifyKeyspaceEvent(type, event, ctx.client.db, key);
}

// After removing elements of the collection `key`: "del" when it is gone.
inline void NotifyIfEmptied(CommandContext& ctx, std::string_view key) {
  if (NotifyEnabled(kNotifyGeneric) && !KeyLive(ctx, key)) {
    NotifyKeyspaceEvent(kNotifyGeneric, "del", ctx.client.db, key);
  }
}

// The STORE commands (SINTERSTORE, ZUNIONSTORE, ZRANGESTORE, ...): `event` on `dst` ("new" first
// when it did not exist) when the result has members, else "del" when it existed. Call
// StoreDestinationExisted before the write.
inline bool StoreDestinationExisted(CommandContext& ctx, std::string_view dst) {
  return NotifyEnabled(kNotifyGeneric | kNotifyNew) && KeyLive(ctx, dst);
}
inline void NotifyStore(CommandContext& ctx, const Result<int64_t>& r, int type,
                        std::string_view event, std::string_view dst, bool existed) {
  if (!r.ok()) return;
  if (*r > 0) {
    NotifyWrite(ctx, type, event, dst, NotifyEnabled(kNotifyNew) && !existed);
  } else if (existed) {
    NotifyKeyspaceEvent(kNotifyGeneric, "del", ctx.client.db, dst);
  }
}

// After a limiter operation on `key` that staged writes (Store::Transaction::staged_writes grew
// from `writes_before`): reported as the string write it is to tools that watch keys, as
// `SET key state PXAT t` would be: "new" when it created the key, "set" (class $), then
// "expire" (class g) when the state has an expiry; "del" (class g) when it removed the state.
inline void NotifyLimiterWrite(CommandContext& ctx, std::string_view key, size_t writes_before,
                               bool was_missing) {
  if (ctx.txn().staged_writes() <= writes_before) return;
  if (!KeyLive(ctx, key)) {
    if (!was_missing) NotifyKeyspaceEvent(kNotifyGeneric, "del", ctx.client.db, key);
    return;
  }
  NotifyWrite(ctx, kNotifyString, "set", key, was_missing);
  if (NotifyEnabled(kNotifyGeneric)) {
    Result<int64_t> ttl = ctx.txn().PTtl(ctx.client.db, key);
    if (ttl.ok() && *ttl >= 0) NotifyKeyspaceEvent(kNotifyGeneric, "expire", ctx.client.db, key);
  }
}

// NotifyLimiterWrite's state before the operation: whether notifications are on at all, the
// staged writes, and whether the key was missing (only looked at while they are on).
struct LimiterWriteWatch {
  bool on = false;
  size_t writes = 0;
  bool missing = false;
  LimiterWriteWatch(CommandContext& ctx, std::string_view key)
      : on(NotifyEnabled(kNotifyString | kNotifyGeneric | kNotifyNew)) {
    if (!on) return;
    writes = ctx.txn().staged_writes();
    missing = !KeyLive(ctx, key);
  }
  void Fire(CommandContext& ctx, std::string_view key) const {
    if (on) NotifyLimiterWrite(ctx, key, writes, missing);
  }
};

}  // namespace sluice::server
