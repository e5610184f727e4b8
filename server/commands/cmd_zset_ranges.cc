// Sorted set range commands: ZRANGE (by rank, BYSCORE or BYLEX, REV, LIMIT, WITHSCORES),
// ZRANGESTORE, ZREVRANGE, ZRANGEBYSCORE, ZREVRANGEBYSCORE, ZRANGEBYLEX, ZREVRANGEBYLEX, ZCOUNT,
// ZLEXCOUNT, ZREMRANGEBYRANK, ZREMRANGEBYSCORE, ZREMRANGEBYLEX. Arguments are checked in Redis
// 7.0's order (options, then the range, then the key), so the same bad input gets the same error.
#include <string>
#include <utility>

#include "server/commands/commands.h"
#include "server/commands/notify_events.h"
#include "server/commands/replies.h"
#include "server/commands/zset_args.h"
#include "server/core/args.h"
#include "server/core/client_state.h"
#include "server/core/errors.h"
#include "sluice/transaction.h"

namespace sluice::server {

namespace {

using Txn = Store::Transaction;
using ScoreBound = Txn::ScoreBound;
using LexBound = Txn::LexBound;
using Query = Txn::ZRangeQuery;

enum class RangeType { kAuto, kRank, kScore, kLex };
enum class Direction { kAuto, kForward, kReverse };

// Redis 7.0's zrangeGenericCommand. `at` is the source key's position (ZRANGESTORE: 2); `store`
// refuses WITHSCORES and stores the range at args[1] instead of replying it.
// ZREMRANGEBY*: the event when members went (then "del" when the key did), and the reply.
void NotifyRemRange(CommandContext& ctx, const Result<int64_t>& r, std::string_view event,
                    std::string_view key) {
  if (r.ok() && *r > 0) {
    NotifyKeyspaceEvent(kNotifyZset, event, ctx.client.db, key);
    NotifyIfEmptied(ctx, key);
  }
  ReplyInteger(ctx, r);
}

void ZRangeCore(CommandContext& ctx, Args args, size_t at, bool store, RangeType type,
                Direction dir) {
  bool with_scores = false;
  Query q;
  for (size_t j = at + 3; j < args.size(); ++j) {
    const size_t left = args.size() - j - 1;
    if (!store && EqualsIgnoreCase(args[j], "withscores")) {
      with_scores = true;
    } else if (EqualsIgnoreCase(args[j], "limit") && left >= 2) {
      std::optional<int64_t> o = ParseInt64(args[j + 1]);
      std::optional<int64_t> l = ParseInt64(args[j + 2]);
      if (!o || !l) return ReplyError(ctx.out, NotAnInteger());
      q.offset = *o;
      q.count = *l;
      j += 2;
    } else if (dir == Direction::kAuto && EqualsIgnoreCase(args[j], "rev")) {
      dir = Direction::kReverse;
    } else if (type == RangeType::kAuto && EqualsIgnoreCase(args[j], "bylex")) {
      type = RangeType::kLex;
    } else if (type == RangeType::kAuto && EqualsIgnoreCase(args[j], "byscore")) {
      type = RangeType::kScore;
    } else {
      return ReplyError(ctx.out, SyntaxError());
    }
  }
  q.rev = dir == Direction::kReverse;
  if (type == RangeType::kAuto) type = RangeType::kRank;
  if (q.count != -1 && type == RangeType::kRank) return ReplyError(ctx.out, ZRangeLimitNeedsBy());
  if (with_scores && type == RangeType::kLex) return ReplyError(ctx.out, ZRangeLexWithScores());
  // BYSCORE and BYLEX with REV give the range as max, min.
  const bool swap = q.rev && type != RangeType::kRank;
  const std::string_view min = args[swap ? at + 2 : at + 1];
  const std::string_view max = args[swap ? at + 1 : at + 2];
  if (type == RangeType::kRank) {
    std::optional<int64_t> start = ParseInt64(min);
    std::optional<int64_t> stop = ParseInt64(max);
    if (!start || !stop) return ReplyError(ctx.out, NotAnInteger());
    q.by = Query::By::kRank;
    q.start = *start;
    q.stop = *stop;
  } else if (type == RangeType::kScore) {
    q.by = Query::By::kScore;
    if (!ParseScoreRange(ctx, min, max, &q.score_min, &q.score_max)) return;
  } else {
    q.by = Query::By::kLex;
    if (!ParseLexRange(ctx, min, max, &q.lex_min, &q.lex_max)) return;
  }
  if (store) {
    const bool existed = StoreDestinationExisted(ctx, args[1]);
    Result<int64_t> r = ctx.txn().ZRangeStore(ctx.client.db, args[1], args[2], q);
    NotifyStore(ctx, r, kNotifyZset, "zrangestore", args[1], existed);
    return ReplyInteger(ctx, r);
  }
  auto r = ctx.txn().ZRange(ctx.client.db, args[at], q);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  ReplyScoredMembers(ctx, *r, with_scores);
}

void ZRangeCommand(CommandContext& ctx, Args args) {
  ZRangeCore(ctx, args, 1, false, RangeType::kAuto, Direction::kAuto);
}
void ZRangeStoreCommand(CommandContext& ctx, Args args) {
  ZRangeCore(ctx, args, 2, true, RangeType::kAuto, Direction::kAuto);
}
void ZRevRangeCommand(CommandContext& ctx, Args args) {
  ZRangeCore(ctx, args, 1, false, RangeType::kRank, Direction::kReverse);
}
void ZRangeByScoreCommand(CommandContext& ctx, Args args) {
  ZRangeCore(ctx, args, 1, false, RangeType::kScore, Direction::kForward);
}
void ZRevRangeByScoreCommand(CommandContext& ctx, Args args) {
  ZRangeCore(ctx, args, 1, false, RangeType::kScore, Direction::kReverse);
}
void ZRangeByLexCommand(CommandContext& ctx, Args args) {
  ZRangeCore(ctx, args, 1, false, RangeType::kLex, Direction::kForward);
}
void ZRevRangeByLexCommand(CommandContext& ctx, Args args) {
  ZRangeCore(ctx, args, 1, false, RangeType::kLex, Direction::kReverse);
}

void ZCountCommand(CommandContext& ctx, Args args) {
  ScoreBound lo, hi;
  if (!ParseScoreRange(ctx, args[2], args[3], &lo, &hi)) return;
  ReplyInteger(ctx, ctx.txn().ZCount(ctx.client.db, args[1], lo, hi));
}

void ZLexCountCommand(CommandContext& ctx, Args args) {
  LexBound lo, hi;
  if (!ParseLexRange(ctx, args[2], args[3], &lo, &hi)) return;
  ReplyInteger(ctx, ctx.txn().ZLexCount(ctx.client.db, args[1], lo, hi));
}

void ZRemRangeByRankCommand(CommandContext& ctx, Args args) {
  std::optional<int64_t> start = ParseInt64(args[2]);
  std::optional<int64_t> stop = ParseInt64(args[3]);
  if (!start || !stop) return ReplyError(ctx.out, NotAnInteger());
  NotifyRemRange(ctx, ctx.txn().ZRemRangeByRank(ctx.client.db, args[1], *start, *stop),
                 "zremrangebyrank", args[1]);
}

void ZRemRangeByScoreCommand(CommandContext& ctx, Args args) {
  ScoreBound lo, hi;
  if (!ParseScoreRange(ctx, args[2], args[3], &lo, &hi)) return;
  NotifyRemRange(ctx, ctx.txn().ZRemRangeByScore(ctx.client.db, args[1], lo, hi),
                 "zremrangebyscore", args[1]);
}

void ZRemRangeByLexCommand(CommandContext& ctx, Args args) {
  LexBound lo, hi;
  if (!ParseLexRange(ctx, args[2], args[3], &lo, &hi)) return;
  NotifyRemRange(ctx, ctx.txn().ZRemRangeByLex(ctx.client.db, args[1], lo, hi), "zremrangebylex",
                 args[1]);
}

void Add(CommandTable& table, std::string name, int arity, uint32_t flags, KeyRange keys,
         Handler handler, std::string summary, std::string since, std::string hint) {
  table.Add(MakeSpec("sorted-set", std::move(name), arity, flags, keys, handler, std::move(summary),
                     std::move(since), std::move(hint)));
}

}  // namespace

void RegisterZSetRangeCommands(CommandTable& table) {
  constexpr uint32_t kRo = kReadOnly;
  constexpr uint32_t kRoFast = kReadOnly | kFast;
  constexpr KeyRange kOne{1, 1, 1};
  Add(table, "zcount", 4, kRoFast, kOne, ZCountCommand,
      "Count the members in a sorted set with scores within the given values", "2.0.0",
      "key min max");
  Add(table, "zlexcount", 4, kRoFast, kOne, ZLexCountCommand,
      "Count the number of members in a sorted set between a given lexicographical range", "2.8.9",
      "key min max");
  Add(table, "zrange", -4, kRo, kOne, ZRangeCommand, "Return a range of members in a sorted set",
      "1.2.0", "key min max [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES]");
  Add(table, "zrangestore", -5, kWrite | kDenyOom, KeyRange{1, 2, 1}, ZRangeStoreCommand,
      "Store a range of members from sorted set into another key", "6.2.0",
      "dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]");
  Add(table, "zrevrange", -4, kRo, kOne, ZRevRangeCommand,
      "Return a range of members in a sorted set, by index, with scores ordered from high to low",
      "1.2.0", "key start stop [WITHSCORES]");
  Add(table, "zrangebyscore", -4, kRo, kOne, ZRangeByScoreCommand,
      "Return a range of members in a sorted set, by score", "1.0.5",
      "key min max [WITHSCORES] [LIMIT offset count]");
  Add(table, "zrevrangebyscore", -4, kRo, kOne, ZRevRangeByScoreCommand,
      "Return a range of members in a sorted set, by score, with scores ordered from high to low",
      "2.2.0", "key max min [WITHSCORES] [LIMIT offset count]");
  Add(table, "zrangebylex", -4, kRo, kOne, ZRangeByLexCommand,
      "Return a range of members in a sorted set, by lexicographical range", "2.8.9",
      "key min max [LIMIT offset count]");
  Add(table, "zrevrangebylex", -4, kRo, kOne, ZRevRangeByLexCommand,
      "Return a range of members in a sorted set, by lexicographical range, ordered from higher "
      "to lower strings.",
      "2.8.9", "key max min [LIMIT offset count]");
  Add(table, "zremrangebyrank", 4, kWrite, kOne, ZRemRangeByRankCommand,
      "Remove all members in a sorted set within the given indexes", "2.0.0", "key start stop");
  Add(table, "zremrangebyscore", 4, kWrite, kOne, ZRemRangeByScoreCommand,
      "Remove all members in a sorted set within the given scores", "1.2.0", "key min max");
  Add(table, "zremrangebylex", 4, kWrite, kOne, ZRemRangeByLexCommand,
      "Remove all members in a sorted set between the given lexicographical range", "2.8.9",
      "key min max");
}

}  // namespace sluice::server
