// Sorted set commands: ZADD, ZINCRBY, ZREM, ZCARD, ZSCORE, ZMSCORE, ZRANK, ZREVRANK, ZPOPMIN,
// ZPOPMAX, ZMPOP, BZPOPMIN, BZPOPMAX, BZMPOP, ZRANDMEMBER, ZSCAN; cmd_zset_ranges.cc has the range
// commands and cmd_zset_algebra.cc ZUNION/ZINTER/ZDIFF. Each parses its arguments in Redis 7.0's
// order (so the same bad input gets the same error), makes one call on ctx.txn() and replies.
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "server/commands/commands.h"
#include "server/commands/element_scan.h"
#include "server/commands/notify_events.h"
#include "server/commands/replies.h"
#include "server/commands/zset_args.h"
#include "server/core/args.h"
#include "server/core/blocking.h"
#include "server/core/client_state.h"
#include "server/core/errors.h"
#include "sluice/transaction.h"

namespace sluice::server {

namespace {

using Txn = Store::Transaction;
using ZEnd = Txn::ZEnd;

// A negative count repeats picks, so its reply is -count elements long whatever the set holds:
// beyond this it is refused rather than built in memory (as SRANDMEMBER and HRANDFIELD).
constexpr int64_t kMaxRepeatedPicks = 10'000'000;

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
  if (!NotifyEnabled(kNotifyZset | kNotifyNew)) {
    auto r = ctx.txn().ZAdd(ctx.client.db, args[1], f, pairs);
    if (!r.ok()) return ReplyError(ctx.out, r.status());
    if (f.incr) return ReplyScore(ctx, r->score);
    return ctx.out.Integer(r->count);
  }
  // Redis fires "zadd" (or "zincr") when a member was added or its score changed: run it with
  // CH, and count the added members by the cardinality when the client did not ask for CH.
  Txn::ZAddFlags changed = f;
  changed.ch = true;
  Result<int64_t> before = ctx.txn().ZCard(ctx.client.db, args[1]);
  if (!before.ok()) return ReplyError(ctx.out, before.status());
  auto r = ctx.txn().ZAdd(ctx.client.db, args[1], changed, pairs);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  Result<int64_t> after = ctx.txn().ZCard(ctx.client.db, args[1]);
  if (!after.ok()) return ReplyError(ctx.out, after.status());
  if (f.incr ? r->score.has_value() && r->count > 0 : r->count > 0) {
    if (*before == 0 && *after > 0) NotifyKeyspaceEvent(kNotifyNew, "new", ctx.client.db, args[1]);
    NotifyKeyspaceEvent(kNotifyZset, f.incr ? "zincr" : "zadd", ctx.client.db, args[1]);
  }
  if (f.incr) return ReplyScore(ctx, r->score);
  ctx.out.Integer(f.ch ? r->count : *after - *before);
}

void ZIncrByCommand(CommandContext& ctx, Args args) {
  std::optional<double> by = ParseScore(args[2]);
  if (!by) return ReplyError(ctx.out, NotAFloat());
  Txn::ZAddFlags f;
  f.incr = true;
  const std::pair<double, std::string_view> pair[] = {{*by, args[3]}};
  const bool was_missing = MissingForNew(ctx, args[1]);
  auto r = ctx.txn().ZAdd(ctx.client.db, args[1], f, pair);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  NotifyWrite(ctx, kNotifyZset, "zincr", args[1], was_missing);
  ReplyScore(ctx, r->score);
}

void ZRemCommand(CommandContext& ctx, Args args) {
  Result<int64_t> r = ctx.txn().ZRem(ctx.client.db, args[1], args.subspan(2));
  if (r.ok() && *r > 0) {
    NotifyKeyspaceEvent(kNotifyZset, "zrem", ctx.client.db, args[1]);
    NotifyIfEmptied(ctx, args[1]);
  }
  ReplyInteger(ctx, r);
}

void ZCardCommand(CommandContext& ctx, Args args) {
  ReplyInteger(ctx, ctx.txn().ZCard(ctx.client.db, args[1]));
}

void ZScoreCommand(CommandContext& ctx, Args args) {
  auto r = ctx.txn().ZScore(ctx.client.db, args[1], args[2]);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  ReplyScore(ctx, *r);
}

void ZMScoreCommand(CommandContext& ctx, Args args) {
  auto r = ctx.txn().ZMScore(ctx.client.db, args[1], args.subspan(2));
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  ctx.out.Array(r->size());
  for (const auto& score : *r) ReplyScore(ctx, score);
}

void RankCore(CommandContext& ctx, Args args, bool rev) {
  auto r = ctx.txn().ZRank(ctx.client.db, args[1], args[2], rev);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  if (!r->has_value()) return ctx.out.NullBulk();
  ctx.out.Integer(**r);
}
void ZRankCommand(CommandContext& ctx, Args args) { RankCore(ctx, args, false); }
void ZRevRankCommand(CommandContext& ctx, Args args) { RankCore(ctx, args, true); }

// ZPOPMIN/ZPOPMAX key [count]: without a count a flat [member, score] (empty when missing);
// with one RESP3 gets [member, score] pairs.
void PopCore(CommandContext& ctx, Args args, ZEnd end) {
  if (args.size() > 3) return ReplyError(ctx.out, SyntaxError());
  int64_t count = 1;
  if (args.size() == 3) {
    std::optional<int64_t> c = ParseInt64(args[2]);
    if (!c || *c < 0) return ReplyError(ctx.out, NotPositive());
    count = *c;
  }
  auto r = ctx.txn().ZPop(ctx.client.db, args[1], end, count);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  if (!r->empty()) {
    NotifyKeyspaceEvent(kNotifyZset, end == ZEnd::kMin ? "zpopmin" : "zpopmax", ctx.client.db,
                        args[1]);
    NotifyIfEmptied(ctx, args[1]);
  }
  ReplyScoredMembers(ctx, *r, /*with_scores=*/true, /*flat=*/args.size() == 2);
}
void ZPopMinCommand(CommandContext& ctx, Args args) { PopCore(ctx, args, ZEnd::kMin); }
void ZPopMaxCommand(CommandContext& ctx, Args args) { PopCore(ctx, args, ZEnd::kMax); }

// ZMPOP numkeys key [key ...] MIN|MAX [COUNT count] -> [key, [[member, score], ...]] or a nil
// array; BZMPOP timeout numkeys ...: the same from args[2] on (`first` is numkeys' position),
// blocking while every key is empty, its timeout parsed after the other arguments (as Redis).
void MPopCore(CommandContext& ctx, Args args, size_t first, bool blocking) {
  MPopArgs mpop;
  auto valid_end = [](std::string_view w) {
    return EqualsIgnoreCase(w, "min") || EqualsIgnoreCase(w, "max");
  };
  if (!ParseMPopArgs(ctx, args, first, blocking, valid_end, &mpop)) return;
  const ZEnd end = EqualsIgnoreCase(mpop.end, "max") ? ZEnd::kMax : ZEnd::kMin;
  const Args keys = mpop.keys;
  const int64_t count = mpop.count;
  const BlockTimeout timeout = mpop.timeout;
  std::vector<std::string_view> candidates;
  if (!BlockCandidates(ctx, keys, ValueKind::kZSet, &candidates)) return;
  if (!candidates.empty()) {
    auto r = ctx.txn().ZMPop(ctx.client.db, candidates, end, count);
    if (!r.ok()) return ReplyError(ctx.out, r.status());
    if (r->has_value()) {
      NotifyKeyspaceEvent(kNotifyZset, end == ZEnd::kMin ? "zpopmin" : "zpopmax", ctx.client.db,
                          (*r)->first);
      NotifyIfEmptied(ctx, (*r)->first);
      ctx.out.Array(2);
      ctx.out.Bulk((*r)->first);
      ctx.out.Array((*r)->second.size());
      for (const auto& [member, score] : (*r)->second) {
        ctx.out.Array(2);
        ctx.out.Bulk(member);
        ctx.out.Double(score);
      }
      return;
    }
  }
  if (blocking && BlockClient(ctx, keys, timeout)) return;
  ctx.out.NullArray();
}
void ZMPopCommand(CommandContext& ctx, Args args) { MPopCore(ctx, args, 1, false); }
// BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count].
void BZMPopCommand(CommandContext& ctx, Args args) { MPopCore(ctx, args, 2, true); }

// BZPOPMIN/BZPOPMAX key [key ...] timeout -> [key, member, score], or a nil array on timeout
// (and inside MULTI when every key is empty).
void BPopCore(CommandContext& ctx, Args args, ZEnd end) {
  auto timeout = ParseBlockTimeout(args.back());
  if (!timeout.ok()) return ReplyError(ctx.out, timeout.status());
  Args keys = args.subspan(1, args.size() - 2);
  std::vector<std::string_view> candidates;
  if (!BlockCandidates(ctx, keys, ValueKind::kZSet, &candidates)) return;
  if (!candidates.empty()) {
    auto r = ctx.txn().ZMPop(ctx.client.db, candidates, end, 1);
    if (!r.ok()) return ReplyError(ctx.out, r.status());
    if (r->has_value()) {
      NotifyKeyspaceEvent(kNotifyZset, end == ZEnd::kMin ? "zpopmin" : "zpopmax", ctx.client.db,
                          (*r)->first);
      NotifyIfEmptied(ctx, (*r)->first);
      ctx.out.Array(3);
      ctx.out.Bulk((*r)->first);
      ctx.out.Bulk((*r)->second.front().first);
      return ctx.out.Double((*r)->second.front().second);
    }
  }
  if (BlockClient(ctx, keys, *timeout)) return;
  ctx.out.NullArray();
}
void BZPopMinCommand(CommandContext& ctx, Args args) { BPopCore(ctx, args, ZEnd::kMin); }
void BZPopMaxCommand(CommandContext& ctx, Args args) { BPopCore(ctx, args, ZEnd::kMax); }

// ZMPOP's keys (numkeys at `first`): numkeys of them after it; nothing for bad input.
void MPopKeys(Args args, size_t first, std::vector<int>* positions) {
  if (args.size() <= first) return;
  std::optional<int64_t> n = ParseInt64(args[first]);
  if (!n || *n < 1 || *n > static_cast<int64_t>(args.size() - first) - 2) return;
  for (int64_t i = 0; i < *n; ++i) positions->push_back(static_cast<int>(first + 1 + i));
}
void ZMPopKeys(Args args, std::vector<int>* positions) { MPopKeys(args, 1, positions); }
void BZMPopKeys(Args args, std::vector<int>* positions) { MPopKeys(args, 2, positions); }

// ZRANDMEMBER key [count [WITHSCORES]]: without a count one member or nil; with one an array.
void ZRandMemberCommand(CommandContext& ctx, Args args) {
  if (args.size() == 2) {
    auto r = ctx.txn().ZRandMember(ctx.client.db, args[1], 1);
    if (!r.ok()) return ReplyError(ctx.out, r.status());
    if (r->empty()) return ctx.out.NullBulk();
    return ctx.out.Bulk(r->front().first);
  }
  std::optional<int64_t> count = ParseInt64(args[2]);
  if (!count) return ReplyError(ctx.out, NotAnInteger());
  if (*count == std::numeric_limits<int64_t>::min()) {
    return ReplyError(ctx.out, CountOutOfLongRange());
  }
  if (args.size() > 4 || (args.size() == 4 && !EqualsIgnoreCase(args[3], "withscores"))) {
    return ReplyError(ctx.out, SyntaxError());
  }
  const bool with_scores = args.size() == 4;
  constexpr int64_t kHalf = std::numeric_limits<int64_t>::max() / 2;
  if (with_scores && (*count < -kHalf || *count > kHalf)) {
    return ReplyError(ctx.out, ValueOutOfRange());
  }
  if (*count < -kMaxRepeatedPicks) {
    return ReplyError(ctx.out, NotSupported("a negative count below -10000000"));
  }
  auto r = ctx.txn().ZRandMember(ctx.client.db, args[1], *count);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  ReplyScoredMembers(ctx, *r, with_scores);
}

// ZSCAN's scores are strings, as Redis's listpack holds them ("%.17g"; inf, -inf).
std::string ScoreText(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 17);
  return std::string(buf, r.ptr);
}

Result<int64_t> ZSetSize(CommandContext& ctx, std::string_view key) {
  return ctx.txn().ZCard(ctx.client.db, key);
}
Result<ElementScanReply> ZSetScan(CommandContext& ctx, std::string_view key,
                                  const ElementScanArgs& a) {
  auto r = ctx.txn().ZScan(ctx.client.db, key, a.cursor, a.match, a.count);
  if (!r.ok()) return r.status();
  ElementScanReply reply;
  reply.next_cursor = r->next_cursor;
  reply.items.reserve(r->items.size());
  for (auto& [member, score] : r->items)
    reply.items.emplace_back(std::move(member), ScoreText(score));
  return reply;
}
void ZScanCommand(CommandContext& ctx, Args args) {
  ElementScanCommand(ctx, args, ZSetSize, ZSetScan, /*values=*/true);
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
  Add(table, "zmscore", -3, kRoFast, ZMScoreCommand,
      "Get the score associated with the given members in a sorted set", "6.2.0",
      "key member [member ...]");
  Add(table, "zrank", 3, kRoFast, ZRankCommand, "Determine the index of a member in a sorted set",
      "2.0.0", "key member");
  Add(table, "zrevrank", 3, kRoFast, ZRevRankCommand,
      "Determine the index of a member in a sorted set, with scores ordered from high to low",
      "2.0.0", "key member");
  Add(table, "zpopmin", -2, kWrite | kFast, ZPopMinCommand,
      "Remove and return members with the lowest scores in a sorted set", "5.0.0", "key [count]");
  Add(table, "zpopmax", -2, kWrite | kFast, ZPopMaxCommand,
      "Remove and return members with the highest scores in a sorted set", "5.0.0", "key [count]");
  CommandSpec mpop = MakeSpec("sorted-set", "zmpop", -4, kWrite, KeyRange{}, ZMPopCommand,
                              "Remove and return members with scores in a sorted set", "7.0.0",
                              "numkeys key [key ...] MIN|MAX [COUNT count]");
  mpop.find_keys = ZMPopKeys;
  table.Add(std::move(mpop));
  // Blocking forms (server/core/blocking.h), with Redis 7.0's flags.
  constexpr uint32_t kBlockingFast = kWrite | kNoScript | kFast | kBlocking;
  table.Add(MakeSpec("sorted-set", "bzpopmin", -3, kBlockingFast, KeyRange{1, -2, 1},
                     BZPopMinCommand,
                     "Remove and return the member with the lowest score from one or more sorted "
                     "sets, or block until one is available",
                     "5.0.0", "key [key ...] timeout"));
  table.Add(MakeSpec("sorted-set", "bzpopmax", -3, kBlockingFast, KeyRange{1, -2, 1},
                     BZPopMaxCommand,
                     "Remove and return the member with the highest score from one or more sorted "
                     "sets, or block until one is available",
                     "5.0.0", "key [key ...] timeout"));
  CommandSpec bmpop =
      MakeSpec("sorted-set", "bzmpop", -5, kWrite | kBlocking, KeyRange{}, BZMPopCommand,
               "Remove and return members with scores in a sorted set or block until one is "
               "available",
               "7.0.0", "timeout numkeys key [key ...] MIN|MAX [COUNT count]");
  bmpop.find_keys = BZMPopKeys;
  table.Add(std::move(bmpop));
  Add(table, "zrandmember", -2, kRo, ZRandMemberCommand,
      "Get one or multiple random elements from a sorted set", "6.2.0", "key [count [WITHSCORES]]");
  Add(table, "zscan", -3, kRo, ZScanCommand,
      "Incrementally iterate sorted sets elements and associated scores", "2.8.0",
      "key cursor [MATCH pattern] [COUNT count]");
  RegisterZSetRangeCommands(table);
  RegisterZSetAlgebraCommands(table);
}

}  // namespace sluice::server
