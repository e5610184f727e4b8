// WalkKeys: one sequential pass over a database's keys, for walks that read every key (an RDB
// encode of a snapshot: SAVE's dump.rdb, a full sync), where SCAN pages and a point read per
// key per question (TYPE, GET, PEXPIRETIME) cost several lookups each.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "sluice/status.h"
#include "sluice/store.h"
#include "sluice/transaction.h"

namespace sluice {

struct WalkedKey {
  std::string_view key;
  ValueKind kind{};
  int64_t expire_at_ms = 0;  // ms since the epoch; 0: none
  // A single-entry key's (a string's, a limiter state's) stored value, as ReadEntry gives it;
  // empty for a collection (read it with the unit's own operations, e.g. ReadWhole).
  std::string_view payload;
};

// Visits every live key of database db in key order on `unit`'s view (its own writes merged
// over the store), one iterator for the whole walk. The views are valid during the call only.
// `visit` may read through `unit` (ReadWhole of a collection) but must not write through it;
// a non-OK status from it stops the walk and is returned. Reads take no locks: walk a store
// nothing else writes (a checkpoint) or accept a walk that is not a snapshot.
Status WalkKeys(Store::Transaction& unit, int db,
                const std::function<Status(const WalkedKey&)>& visit);

}  // namespace sluice
