// Point reads of one consumer group's state, for the server's bookkeeping around a group
// command (replication effects, keyspace events): what XINFO GROUPS / CONSUMERS and XPENDING
// would say about one group, one consumer or one pending entry, without listing them all or
// computing lag. Part of the public API of sluice::Store (transaction.h); reads only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sluice/stream.h"
#include "sluice/transaction.h"

namespace sluice {

struct StreamGroupPeek {
  bool found = false;  // false: no such stream, or no such group in it (or another type)
  StreamId last_delivered;
  int64_t entries_read = -1;    // -1: unknown, as XINFO GROUPS's null
  bool consumer_found = false;  // the consumer asked about exists in the group
};

// The group's last-delivered ID and entries-read, and whether `consumer` (when given) is one
// of its consumers. kWrongType is reported as not found; other failures as themselves.
Result<StreamGroupPeek> PeekStreamGroup(Store::Transaction& unit, int db, std::string_view key,
                                        std::string_view group,
                                        std::optional<std::string_view> consumer);

// The pending entry `id` of the group (XPENDING's extended form for that one ID), or nullopt.
Result<std::optional<StreamPendingEntry>> PeekStreamPending(Store::Transaction& unit, int db,
                                                            std::string_view key,
                                                            std::string_view group, StreamId id);

}  // namespace sluice
