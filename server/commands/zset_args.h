// Argument parsing and reply shapes the sorted set command files share (cmd_zsets.cc,
// cmd_zset_ranges.cc, cmd_zset_algebra.cc; zset_args.cc).
#pragma once

#include <optional>
#include <string_view>

#include "server/commands/commands.h"
#include "sluice/transaction.h"

namespace sluice::server {

// Redis's getDoubleFromObject: the whole argument, no leading space, no NaN, no overflow.
std::optional<double> ParseScore(std::string_view s);

// A score range ("(" for exclusive, then a float; inf allowed, NaN not). Replies "min or max
// is not a float" and returns false on bad input.
bool ParseScoreRange(CommandContext& ctx, std::string_view min, std::string_view max,
                     Store::Transaction::ScoreBound* lo, Store::Transaction::ScoreBound* hi);

// A lex range ("-", "+", "[member", "(member"). Replies "min or max not valid string range
// item" and returns false on bad input.
bool ParseLexRange(CommandContext& ctx, std::string_view min, std::string_view max,
                   Store::Transaction::LexBound* lo, Store::Transaction::LexBound* hi);

// A score as a bulk (RESP2) or double (RESP3), or nil.
void ReplyScore(CommandContext& ctx, const std::optional<double>& score);

// Members, with their scores when with_scores: RESP2 one flat array, RESP3 an array of
// [member, score] pairs (flat when `flat`, as ZPOPMIN without a count replies).
void ReplyScoredMembers(CommandContext& ctx, const Store::Transaction::ScoredMembers& r,
                        bool with_scores, bool flat = false);

// Families of sorted set commands (RegisterZSetCommands calls them).
void RegisterZSetRangeCommands(CommandTable& table);    // cmd_zset_ranges.cc
void RegisterZSetAlgebraCommands(CommandTable& table);  // cmd_zset_algebra.cc

}  // namespace sluice::server
