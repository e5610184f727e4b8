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

namespace sluice::server {

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

}  // namespace sluice::server
