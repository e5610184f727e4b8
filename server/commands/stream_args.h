// Argument parsers the stream commands share (cmd_streams.cc): stream IDs in Redis 7.0's forms
// and XADD's/XTRIM's trimming options, each with Redis's acceptance rules and error order.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "server/core/command.h"
#include "sluice/status.h"
#include "sluice/stream.h"

namespace sluice::server {

// <ms>-<seq>, <ms> (seq = missing_seq), and unless `strict` "-" (0-0) and "+" (the largest).
// With seq_given, also "<ms>-*" (*seq_given false). kInvalidArgument StreamBadId() otherwise.
Result<StreamId> ParseStreamId(std::string_view arg, uint64_t missing_seq, bool strict,
                               bool* seq_given = nullptr);

// A range bound of XRANGE/XREVRANGE: "(" makes it exclusive (moved one ID inwards; Redis's
// "invalid start/end ID" errors at the ends of the ID space).
Result<StreamId> ParseRangeStart(std::string_view arg);
Result<StreamId> ParseRangeEnd(std::string_view arg);

// XADD's options before the ID (xadd true; returns the ID's position) or XTRIM's (returns
// args.size()). Replies the error and returns nullopt on bad input.
struct StreamAddArgs {
  StreamAddOptions options;
  size_t id_pos = 0;
};
std::optional<StreamAddArgs> ParseAddOrTrimArgs(CommandContext& ctx, Args args, bool xadd);

// Entries as Redis replies them: an array of [id, [field, value, ...]].
void ReplyStreamEntries(protocol::ReplyWriter& out, const std::vector<StreamEntry>& entries);

}  // namespace sluice::server
