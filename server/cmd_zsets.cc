// Sorted set commands: ZADD, ZINCRBY, ZREM, ZCARD, ZSCORE, ZCOUNT, ZRANGE (by rank or BYSCORE,
// REV, LIMIT, WITHSCORES), ZREVRANGE, ZRANGEBYSCORE, ZREVRANGEBYSCORE, ZREMRANGEBYRANK,
// ZREMRANGEBYSCORE. Each parses its arguments in Redis 7.0's order (so the same bad input gets
// the same error), makes one call on ctx.txn() and replies.
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "server/args.h"
#include "server/client_state.h"
#include "server/command.h"
#include "server/errors.h"
#include "server/replies.h"
#include "sluice/transaction.h"

namespace sluice::server {

namespace {

using Txn = Store::Transaction;
using ScoreBound = Txn::ScoreBound;

// Redis's getDoubleFromObject: the whole argument, no leading space, no NaN, no overflow.
std::optional<double> ParseScore(std::string_view s) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return std::nullopt;
  const std::string text(s);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || std::isnan(v)) return std::nullopt;
  if (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || v == 0)) return std::nullopt;
  return v;
}

// A score range bound: "(" for exclusive, then a float (inf allowed, NaN not).
std::optional<ScoreBound> ParseBound(std::string_view s) {
  ScoreBound b;
  if (!s.empty() && s[0] == '(') {
    b.exclusive = true;
    s.remove_prefix(1);
  }
  const std::string text(s);
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || std::isnan(v)) return std::nullopt;
  b.value = v;
  return b;
}

bool ParseRange(CommandContext& ctx, std::string_view min, std::string_view max, ScoreBound* lo,
                ScoreBound* hi) {
  std::optional<ScoreBound> a = ParseBound(min);
  std::optional<ScoreBound> b = ParseBound(max);
  if (!a || !b) {
    ReplyError(ctx.out, MinOrMaxNotFloat());
    return false;
  }
  *lo = *a;
  *hi = *b;
  return true;
}

void ReplyScore(CommandContext& ctx, const std::optional<double>& score) {
  if (score) {
    ctx.out.Double(*score);
  } else {
    ctx.out.NullBulk();
  }
}

// ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]
void ZAddCommand(CommandContext& ctx, Args args) {
  Txn::ZAddFlags f;
  size_t i = 2;
  for (; i < args.size(); ++i) {
    const std::string_view a = args[i];
    if (EqualsIgnoreCase(a, "nx")) {
      f.nx = true;
    } else if (EqualsIgnoreCase(a, "xx")) {
      f.xx = true;
    } else if (EqualsIgnoreCase(a, "gt")) {
      f.gt = true;
    } else if (EqualsIgnoreCase(a, "lt")) {
      f.lt = true;
    } else if (EqualsIgnoreCase(a, "ch")) {
      f.ch = true;
    } else if (EqualsIgnoreCase(a, "incr")) {
      f.incr = true;
    } else {
      break;
    }
  }
  const size_t elements = args.size() - i;
  if (elements == 0 || elements % 2 != 0) return ReplyError(ctx.out, SyntaxError());
  if (f.nx && f.xx) return ReplyError(ctx.out, ZAddXxNx());
  if ((f.gt && f.nx) || (f.lt && f.nx) || (f.gt && f.lt)) return ReplyError(ctx.out, ZAddGtLtNx());
  if (f.incr && elements > 2) return ReplyError(ctx.out, ZAddIncrPairs());
  std::vector<std::pair<double, std::string_view>> pairs;
  for (size_t j = i; j + 1 < args.size(); j += 2) {
    std::optional<double> score = ParseScore(args[j]);
    if (!score) return ReplyError(ctx.out, NotAFloat());
    pairs.emplace_back(*score, args[j + 1]);
  }
  auto r = ctx.txn().ZAdd(ctx.client.db, args[1], f, pairs);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  if (f.incr) return ReplyScore(ctx, r->score);
  ctx.out.Integer(r->count);
}

void ZIncrByCommand(CommandContext& ctx, Args args) {
  std::optional<double> by = ParseScore(args[2]);
  if (!by) return ReplyError(ctx.out, NotAFloat());
  Txn::ZAddFlags f;
  f.incr = true;
  const std::pair<double, std::string_view> pair[] = {{*by, args[3]}};
  auto r = ctx.txn().ZAdd(ctx.client.db, args[1], f, pair);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  ReplyScore(ctx, r->score);
}

void ZRemCommand(CommandContext& ctx, Args args) {
  ReplyInteger(ctx, ctx.txn().ZRem(ctx.client.db, args[1], args.subspan(2)));
}

void ZCardCommand(CommandContext& ctx, Args args) {
  ReplyInteger(ctx, ctx.txn().ZCard(ctx.client.db, args[1]));
}

void ZScoreCommand(CommandContext& ctx, Args args) {
  auto r = ctx.txn().ZScore(ctx.client.db, args[1], args[2]);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  ReplyScore(ctx, *r);
}

void ZCountCommand(CommandContext& ctx, Args args) {
  ScoreBound lo, hi;
  if (!ParseRange(ctx, args[2], args[3], &lo, &hi)) return;
  ReplyInteger(ctx, ctx.txn().ZCount(ctx.client.db, args[1], lo, hi));
}

enum class RangeType { kAuto, kRank, kScore };
enum class Direction { kAuto, kForward, kReverse };

// Redis 7.0's zrangeGenericCommand: the options after key/min/max, then the range, then the key.
void ZRangeCore(CommandContext& ctx, Args args, RangeType type, Direction dir) {
  bool with_scores = false;
  int64_t offset = 0;
  int64_t limit = -1;
  for (size_t j = 4; j < args.size(); ++j) {
    const size_t left = args.size() - j - 1;
    if (EqualsIgnoreCase(args[j], "withscores")) {
      with_scores = true;
    } else if (EqualsIgnoreCase(args[j], "limit") && left >= 2) {
      std::optional<int64_t> o = ParseInt64(args[j + 1]);
      std::optional<int64_t> l = ParseInt64(args[j + 2]);
      if (!o || !l) return ReplyError(ctx.out, NotAnInteger());
      offset = *o;
      limit = *l;
      j += 2;
    } else if (dir == Direction::kAuto && EqualsIgnoreCase(args[j], "rev")) {
      dir = Direction::kReverse;
    } else if (type == RangeType::kAuto && EqualsIgnoreCase(args[j], "byscore")) {
      type = RangeType::kScore;
    } else if (type == RangeType::kAuto && EqualsIgnoreCase(args[j], "bylex")) {
      return ReplyError(ctx.out, NotSupported("ZRANGE BYLEX"));
    } else {
      return ReplyError(ctx.out, SyntaxError());
    }
  }
  const bool rev = dir == Direction::kReverse;
  if (type == RangeType::kAuto) type = RangeType::kRank;
  if (limit != -1 && type == RangeType::kRank) return ReplyError(ctx.out, ZRangeLimitNeedsBy());
  Result<Txn::ScoredMembers> r = Txn::ScoredMembers{};
  if (type == RangeType::kRank) {
    std::optional<int64_t> start = ParseInt64(args[2]);
    std::optional<int64_t> stop = ParseInt64(args[3]);
    if (!start || !stop) return ReplyError(ctx.out, NotAnInteger());
    r = ctx.txn().ZRangeByRank(ctx.client.db, args[1], *start, *stop, rev);
  } else {
    ScoreBound lo, hi;  // REV gives the range as max, min
    if (!ParseRange(ctx, args[rev ? 3 : 2], args[rev ? 2 : 3], &lo, &hi)) return;
    r = ctx.txn().ZRangeByScore(ctx.client.db, args[1], lo, hi, rev, offset, limit);
  }
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  const bool pairs = with_scores && ctx.out.resp() == 3;
  ctx.out.Array(r->size() * (with_scores && !pairs ? 2 : 1));
  for (const auto& [member, score] : *r) {
    if (pairs) ctx.out.Array(2);
    ctx.out.Bulk(member);
    if (with_scores) ctx.out.Double(score);
  }
}

void ZRangeCommand(CommandContext& ctx, Args args) {
  ZRangeCore(ctx, args, RangeType::kAuto, Direction::kAuto);
}
void ZRevRangeCommand(CommandContext& ctx, Args args) {
  ZRangeCore(ctx, args, RangeType::kRank, Direction::kReverse);
}
void ZRangeByScoreCommand(CommandContext& ctx, Args args) {
  ZRangeCore(ctx, args, RangeType::kScore, Direction::kForward);
}
void ZRevRangeByScoreCommand(CommandContext& ctx, Args args) {
  ZRangeCore(ctx, args, RangeType::kScore, Direction::kReverse);
}

void ZRemRangeByRankCommand(CommandContext& ctx, Args args) {
  std::optional<int64_t> start = ParseInt64(args[2]);
  std::optional<int64_t> stop = ParseInt64(args[3]);
  if (!start || !stop) return ReplyError(ctx.out, NotAnInteger());
  ReplyInteger(ctx, ctx.txn().ZRemRangeByRank(ctx.client.db, args[1], *start, *stop));
}

void ZRemRangeByScoreCommand(CommandContext& ctx, Args args) {
  ScoreBound lo, hi;
  if (!ParseRange(ctx, args[2], args[3], &lo, &hi)) return;
  ReplyInteger(ctx, ctx.txn().ZRemRangeByScore(ctx.client.db, args[1], lo, hi));
}

void Add(CommandTable& table, std::string name, int arity, uint32_t flags, Handler handler,
         std::string summary, std::string since, std::string hint) {
  table.Add(MakeSpec("sorted-set", std::move(name), arity, flags, KeyRange{1, 1, 1}, handler,
                     std::move(summary), std::move(since), std::move(hint)));
}

}  // namespace

void RegisterZSetCommands(CommandTable& table) {
  constexpr uint32_t kRo = kReadOnly;
  constexpr uint32_t kRoFast = kReadOnly | kFast;
  constexpr uint32_t kWFast = kWrite | kDenyOom | kFast;
  Add(table, "zadd", -4, kWFast, ZAddCommand,
      "Add one or more members to a sorted set, or update its score if it already exists", "1.2.0",
      "key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]");
  Add(table, "zincrby", 4, kWFast, ZIncrByCommand,
      "Increment the score of a member in a sorted set", "1.2.0", "key increment member");
  Add(table, "zrem", -3, kWrite | kFast, ZRemCommand,
      "Remove one or more members from a sorted set", "1.2.0", "key member [member ...]");
  Add(table, "zcard", 2, kRoFast, ZCardCommand, "Get the number of members in a sorted set",
      "1.2.0", "key");
  Add(table, "zscore", 3, kRoFast, ZScoreCommand,
      "Get the score associated with the given member in a sorted set", "1.2.0", "key member");
  Add(table, "zcount", 4, kRoFast, ZCountCommand,
      "Count the members in a sorted set with scores within the given values", "2.0.0",
      "key min max");
  Add(table, "zrange", -4, kRo, ZRangeCommand, "Return a range of members in a sorted set", "1.2.0",
      "key start stop [BYSCORE] [REV] [LIMIT offset count] [WITHSCORES]");
  Add(table, "zrevrange", -4, kRo, ZRevRangeCommand,
      "Return a range of members in a sorted set, by index, with scores ordered from high to low",
      "1.2.0", "key start stop [WITHSCORES]");
  Add(table, "zrangebyscore", -4, kRo, ZRangeByScoreCommand,
      "Return a range of members in a sorted set, by score", "1.0.5",
      "key min max [WITHSCORES] [LIMIT offset count]");
  Add(table, "zrevrangebyscore", -4, kRo, ZRevRangeByScoreCommand,
      "Return a range of members in a sorted set, by score, with scores ordered from high to low",
      "2.2.0", "key max min [WITHSCORES] [LIMIT offset count]");
  Add(table, "zremrangebyrank", 4, kWrite, ZRemRangeByRankCommand,
      "Remove all members in a sorted set within the given indexes", "2.0.0", "key start stop");
  Add(table, "zremrangebyscore", 4, kWrite, ZRemRangeByScoreCommand,
      "Remove all members in a sorted set within the given scores", "1.2.0", "key min max");
}

}  // namespace sluice::server
