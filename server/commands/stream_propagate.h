// What the stream commands send down the replication stream in place of their argv, as Redis
// 7.0 (rewriteClientCommandVector / alsoPropagate in t_stream.c): XADD with the ID it chose, an
// approximate trim as the exact one it amounted to, and a consumer group's reads and claims as
// XCLAIM ... FORCE JUSTID LASTID per delivered entry plus XGROUP SETID with the group's
// ENTRIESREAD (so a replica's XPENDING / XINFO equal the primary's). Recorded through
// PropagateAs (server/core/replication_hook.h) only while replication is attached.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "server/commands/stream_args.h"
#include "server/core/command.h"
#include "sluice/stream.h"

namespace sluice::server {

// XADD (id: the entry added) or XTRIM (id nullopt) that wrote: `args` with the chosen ID and,
// for a `~` trim, "= <length>" (MAXLEN) or "= <first ID>" (MINID) without LIMIT, taken from
// `trimmed`, what the trim left. (An XTRIM that removed nothing wrote nothing: Redis does not
// propagate it, and neither should the caller.)
void PropagateAddOrTrim(Args args, const StreamAddArgs& parsed, std::optional<StreamId> id,
                        const StreamTrimOutcome& trimmed);

// The StreamGroupChange a group read or claim should fill (passed to its op), or null when
// neither the replication stream nor the stream class of keyspace events needs it.
StreamGroupChange* WantGroupChange(StreamGroupChange* change);

// After XREADGROUP / XCLAIM / XAUTOCLAIM on one stream succeeded, with the change its op filled:
// XGROUP CREATECONSUMER when it made the consumer, XCLAIM ... FORCE JUSTID LASTID per entry it
// made or left pending, XACK per ID it dropped from the PEL (`dropped`), XGROUP SETID when the
// group's last ID or entries-read moved; nothing at all when none of these happened.
void PropagateGroupChange(std::string_view key, std::string_view group, std::string_view consumer,
                          const StreamGroupChange& change, std::span<const StreamId> dropped);

}  // namespace sluice::server
