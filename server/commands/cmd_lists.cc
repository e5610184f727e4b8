// List commands: LPUSH, RPUSH, LPUSHX, RPUSHX, LPOP, RPOP, LLEN, LINDEX, LSET, LRANGE, LTRIM,
// LREM, LINSERT, LPOS, LMOVE, RPOPLPUSH, LMPOP, and the blocking BLPOP, BRPOP, BLMOVE,
// BRPOPLPUSH, BLMPOP (server/core/blocking.h). Each parses its arguments in Redis 7.0's order (so
// the same bad input gets the same error), makes one call on ctx.txn() and replies.
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "server/commands/commands.h"
#include "server/commands/notify_events.h"
#include "server/commands/replies.h"
#include "server/core/args.h"
#include "server/core/blocking.h"
#include "server/core/client_state.h"
#include "server/core/errors.h"
#include "sluice/transaction.h"

namespace sluice::server {

namespace {

using ListEnd = Store::Transaction::ListEnd;
using Elements = std::vector<std::string>;

void ReplyElements(protocol::ReplyWriter& out, const Elements& elements) {
  out.Array(elements.size());
  for (const std::string& e : elements) out.Bulk(e);
}

// LEFT|RIGHT, case-insensitive; nullopt for anything else (a syntax error).
std::optional<ListEnd> ParseEnd(std::string_view s) {
  if (EqualsIgnoreCase(s, "left")) return ListEnd::kLeft;
  if (EqualsIgnoreCase(s, "right")) return ListEnd::kRight;
  return std::nullopt;
}

void PushCore(CommandContext& ctx, Args args, ListEnd end, bool only_if_exists) {
  const bool was_missing = MissingForNew(ctx, args[1]);
  auto r = ctx.txn().ListPush(ctx.client.db, args[1], end, args.subspan(2), only_if_exists);
  if (r.ok() && *r > 0) {
    NotifyWrite(ctx, kNotifyList, end == ListEnd::kLeft ? "lpush" : "rpush", args[1], was_missing);
  }
  ReplyInteger(ctx, r);
}
void LPushCommand(CommandContext& ctx, Args args) { PushCore(ctx, args, ListEnd::kLeft, false); }
void RPushCommand(CommandContext& ctx, Args args) { PushCore(ctx, args, ListEnd::kRight, false); }
void LPushXCommand(CommandContext& ctx, Args args) { PushCore(ctx, args, ListEnd::kLeft, true); }
void RPushXCommand(CommandContext& ctx, Args args) { PushCore(ctx, args, ListEnd::kRight, true); }

// LPOP/RPOP key [count]: without count one element or nil; with count an array (nil array for
// a missing key, empty array for count 0).
void PopCore(CommandContext& ctx, Args args, ListEnd end) {
  if (args.size() > 3) return ReplyError(ctx.out, WrongArity(ToLower(args[0])));
  const bool has_count = args.size() == 3;
  int64_t count = 1;
  if (has_count) {
    std::optional<int64_t> c = ParseInt64(args[2]);
    if (!c || *c < 0) return ReplyError(ctx.out, NotPositive());
    count = *c;
  }
  auto r = ctx.txn().ListPop(ctx.client.db, args[1], end, count);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  if (!r->has_value()) return has_count ? ctx.out.NullArray() : ctx.out.NullBulk();
  if (!(*r)->empty()) {
    NotifyKeyspaceEvent(kNotifyList, end == ListEnd::kLeft ? "lpop" : "rpop", ctx.client.db,
                        args[1]);
    NotifyIfEmptied(ctx, args[1]);
  }
  if (has_count) return ReplyElements(ctx.out, **r);
  ctx.out.Bulk((*r)->front());
}
void LPopCommand(CommandContext& ctx, Args args) { PopCore(ctx, args, ListEnd::kLeft); }
void RPopCommand(CommandContext& ctx, Args args) { PopCore(ctx, args, ListEnd::kRight); }

void LLenCommand(CommandContext& ctx, Args args) {
  ReplyInteger(ctx, ctx.txn().LLen(ctx.client.db, args[1]));
}

// LINDEX key index: Redis looks the key up (nil, WRONGTYPE) before parsing the index.
void LIndexCommand(CommandContext& ctx, Args args) {
  Result<int64_t> len = ctx.txn().LLen(ctx.client.db, args[1]);
  if (!len.ok()) return ReplyError(ctx.out, len.status());
  if (*len == 0) return ctx.out.NullBulk();
  std::optional<int64_t> index = ParseInt64(args[2]);
  if (!index) return ReplyError(ctx.out, NotAnInteger());
  auto r = ctx.txn().LIndex(ctx.client.db, args[1], *index);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  ReplyOptional(ctx.out, *r);
}

// LSET key index element: Redis looks the key up (no such key, WRONGTYPE) before the index.
void LSetCommand(CommandContext& ctx, Args args) {
  Result<int64_t> len = ctx.txn().LLen(ctx.client.db, args[1]);
  if (!len.ok()) return ReplyError(ctx.out, len.status());
  if (*len == 0) return ReplyError(ctx.out, Status::NoSuchKey());
  std::optional<int64_t> index = ParseInt64(args[2]);
  if (!index) return ReplyError(ctx.out, NotAnInteger());
  Status s = ctx.txn().LSet(ctx.client.db, args[1], *index, args[3]);
  if (!s.ok()) return ReplyError(ctx.out, s);
  NotifyKeyspaceEvent(kNotifyList, "lset", ctx.client.db, args[1]);
  ctx.out.Simple("OK");
}

// Parses two integer arguments at args[i], args[i + 1]; false after replying the error.
bool ParseTwo(CommandContext& ctx, Args args, size_t i, int64_t* a, int64_t* b) {
  std::optional<int64_t> x = ParseInt64(args[i]);
  std::optional<int64_t> y = ParseInt64(args[i + 1]);
  if (!x || !y) {
    ReplyError(ctx.out, NotAnInteger());
    return false;
  }
  *a = *x;
  *b = *y;
  return true;
}

void LRangeCommand(CommandContext& ctx, Args args) {
  int64_t start = 0;
  int64_t stop = 0;
  if (!ParseTwo(ctx, args, 2, &start, &stop)) return;
  Result<Elements> r = ctx.txn().LRange(ctx.client.db, args[1], start, stop);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  ReplyElements(ctx.out, *r);
}

void LTrimCommand(CommandContext& ctx, Args args) {
  int64_t start = 0;
  int64_t stop = 0;
  if (!ParseTwo(ctx, args, 2, &start, &stop)) return;
  const bool existed = NotifyEnabled(kNotifyList | kNotifyGeneric) && KeyLive(ctx, args[1]);
  Status s = ctx.txn().LTrim(ctx.client.db, args[1], start, stop);
  if (!s.ok()) return ReplyError(ctx.out, s);
  if (existed) {
    NotifyKeyspaceEvent(kNotifyList, "ltrim", ctx.client.db, args[1]);
    NotifyIfEmptied(ctx, args[1]);
  }
  ctx.out.Simple("OK");
}

void LRemCommand(CommandContext& ctx, Args args) {
  std::optional<int64_t> count = ParseInt64(args[2]);
  if (!count) return ReplyError(ctx.out, NotAnInteger());
  Result<int64_t> r = ctx.txn().LRem(ctx.client.db, args[1], *count, args[3]);
  if (r.ok() && *r > 0) {
    NotifyKeyspaceEvent(kNotifyList, "lrem", ctx.client.db, args[1]);
    NotifyIfEmptied(ctx, args[1]);
  }
  ReplyInteger(ctx, r);
}

// LINSERT key BEFORE|AFTER pivot element.
void LInsertCommand(CommandContext& ctx, Args args) {
  bool after = false;
  if (EqualsIgnoreCase(args[2], "after")) {
    after = true;
  } else if (!EqualsIgnoreCase(args[2], "before")) {
    return ReplyError(ctx.out, SyntaxError());
  }
  Result<int64_t> r = ctx.txn().LInsert(ctx.client.db, args[1], after, args[3], args[4]);
  if (r.ok() && *r > 0) NotifyKeyspaceEvent(kNotifyList, "linsert", ctx.client.db, args[1]);
  ReplyInteger(ctx, r);
}

// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]: without COUNT the first
// match's index or nil, with COUNT an array.
void LPosCommand(CommandContext& ctx, Args args) {
  int64_t rank = 1;
  int64_t count = -1;  // no COUNT option
  int64_t maxlen = 0;
  for (size_t j = 3; j < args.size(); ++j) {
    const bool more = j + 1 < args.size();
    if (EqualsIgnoreCase(args[j], "rank") && more) {
      std::optional<int64_t> r = ParseInt64(args[++j]);
      if (!r) return ReplyError(ctx.out, NotAnInteger());
      if (*r == 0) return ReplyError(ctx.out, RankZero());
      rank = *r;
    } else if (EqualsIgnoreCase(args[j], "count") && more) {
      std::optional<int64_t> c = ParseInt64(args[++j]);
      if (!c || *c < 0) return ReplyError(ctx.out, CountNegative());
      count = *c;
    } else if (EqualsIgnoreCase(args[j], "maxlen") && more) {
      std::optional<int64_t> m = ParseInt64(args[++j]);
      if (!m || *m < 0) return ReplyError(ctx.out, MaxlenNegative());
      maxlen = *m;
    } else {
      return ReplyError(ctx.out, SyntaxError());
    }
  }
  auto r = ctx.txn().LPos(ctx.client.db, args[1], args[2], rank, count < 0 ? 1 : count, maxlen);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  if (count < 0) {
    if (r->empty()) return ctx.out.NullBulk();
    return ctx.out.Integer(r->front());
  }
  ctx.out.Array(r->size());
  for (int64_t i : *r) ctx.out.Integer(i);
}

// LMOVE's events as Redis fires them: the push on the destination ("new" first when created),
// then the pop on the source, then "del" when the source is gone.
void NotifyMove(CommandContext& ctx, Args args, ListEnd from, ListEnd to, bool dst_missing) {
  NotifyWrite(ctx, kNotifyList, to == ListEnd::kLeft ? "lpush" : "rpush", args[2], dst_missing);
  NotifyKeyspaceEvent(kNotifyList, from == ListEnd::kLeft ? "lpop" : "rpop", ctx.client.db,
                      args[1]);
  NotifyIfEmptied(ctx, args[1]);
}

void MoveCore(CommandContext& ctx, Args args, ListEnd from, ListEnd to) {
  const bool dst_missing = MissingForNew(ctx, args[2]);
  auto r = ctx.txn().LMove(ctx.client.db, args[1], args[2], from, to);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  if (r->has_value()) NotifyMove(ctx, args, from, to, dst_missing);
  ReplyOptional(ctx.out, *r);
}

// LMOVE source destination LEFT|RIGHT LEFT|RIGHT.
void LMoveCommand(CommandContext& ctx, Args args) {
  std::optional<ListEnd> from = ParseEnd(args[3]);
  std::optional<ListEnd> to = ParseEnd(args[4]);
  if (!from || !to) return ReplyError(ctx.out, SyntaxError());
  MoveCore(ctx, args, *from, *to);
}

void RPopLPushCommand(CommandContext& ctx, Args args) {
  MoveCore(ctx, args, ListEnd::kRight, ListEnd::kLeft);
}

// The keys a (possibly woken) blocking list command may pop from (server/core/blocking.h).
bool CandidateKeys(CommandContext& ctx, Args keys, std::vector<std::string_view>* out) {
  return BlockCandidates(ctx, keys, ValueKind::kList, out);
}

// LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count] -> [key, [elements]] or a nil array;
// BLMPOP timeout numkeys ...: the same from args[2] on (`first` is numkeys' position), blocking
// while every key is empty; its timeout is parsed after the other arguments, as Redis does.
void MPopCore(CommandContext& ctx, Args args, size_t first, bool blocking) {
  MPopArgs mpop;
  auto valid_end = [](std::string_view w) { return ParseEnd(w).has_value(); };
  if (!ParseMPopArgs(ctx, args, first, blocking, valid_end, &mpop)) return;
  const ListEnd end = *ParseEnd(mpop.end);
  const Args keys = mpop.keys;
  const int64_t count = mpop.count;
  const BlockTimeout timeout = mpop.timeout;
  std::vector<std::string_view> candidates;
  if (!CandidateKeys(ctx, keys, &candidates)) return;
  if (!candidates.empty()) {
    auto r = ctx.txn().LMPop(ctx.client.db, candidates, end, count);
    if (!r.ok()) return ReplyError(ctx.out, r.status());
    if (r->has_value()) {
      NotifyKeyspaceEvent(kNotifyList, end == ListEnd::kLeft ? "lpop" : "rpop", ctx.client.db,
                          (*r)->first);
      NotifyIfEmptied(ctx, (*r)->first);
      ctx.out.Array(2);
      ctx.out.Bulk((*r)->first);
      return ReplyElements(ctx.out, (*r)->second);
    }
  }
  if (blocking && BlockClient(ctx, keys, timeout)) return;
  ctx.out.NullArray();
}

void LMPopCommand(CommandContext& ctx, Args args) { MPopCore(ctx, args, 1, false); }
// BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count].
void BLMPopCommand(CommandContext& ctx, Args args) { MPopCore(ctx, args, 2, true); }

// BLPOP/BRPOP key [key ...] timeout -> [key, element], or a nil array on timeout.
void BPopCore(CommandContext& ctx, Args args, ListEnd end) {
  auto timeout = ParseBlockTimeout(args.back());
  if (!timeout.ok()) return ReplyError(ctx.out, timeout.status());
  Args keys = args.subspan(1, args.size() - 2);
  std::vector<std::string_view> candidates;
  if (!CandidateKeys(ctx, keys, &candidates)) return;
  if (!candidates.empty()) {
    auto r = ctx.txn().LMPop(ctx.client.db, candidates, end, 1);
    if (!r.ok()) return ReplyError(ctx.out, r.status());
    if (r->has_value()) {
      NotifyKeyspaceEvent(kNotifyList, end == ListEnd::kLeft ? "lpop" : "rpop", ctx.client.db,
                          (*r)->first);
      NotifyIfEmptied(ctx, (*r)->first);
      ctx.out.Array(2);
      ctx.out.Bulk((*r)->first);
      return ctx.out.Bulk((*r)->second.front());
    }
  }
  if (BlockClient(ctx, keys, *timeout)) return;
  ctx.out.NullArray();
}
void BLPopCommand(CommandContext& ctx, Args args) { BPopCore(ctx, args, ListEnd::kLeft); }
void BRPopCommand(CommandContext& ctx, Args args) { BPopCore(ctx, args, ListEnd::kRight); }

// BLMOVE/BRPOPLPUSH: LMOVE that blocks while the source is empty; a null bulk where it may not
// block (MULTI), a null array on a timeout (as every blocking command: BlockedCommand). A
// woken client whose source now holds another type waits on (Redis serves it only from a
// list); a destination of another type is still WRONGTYPE.
void BMoveCore(CommandContext& ctx, Args args, ListEnd from, ListEnd to, std::string_view arg) {
  auto timeout = ParseBlockTimeout(arg);
  if (!timeout.ok()) return ReplyError(ctx.out, timeout.status());
  std::vector<std::string_view> candidates;
  if (!CandidateKeys(ctx, args.subspan(1, 1), &candidates)) return;
  if (!candidates.empty()) {
    const bool dst_missing = MissingForNew(ctx, args[2]);
    auto r = ctx.txn().LMove(ctx.client.db, args[1], args[2], from, to);
    if (!r.ok()) return ReplyError(ctx.out, r.status());
    if (r->has_value()) {
      NotifyMove(ctx, args, from, to, dst_missing);
      return ctx.out.Bulk(**r);
    }
  }
  if (BlockClient(ctx, args.subspan(1, 1), *timeout)) return;
  ctx.out.NullBulk();
}

// BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout: the ends are parsed first.
void BLMoveCommand(CommandContext& ctx, Args args) {
  std::optional<ListEnd> from = ParseEnd(args[3]);
  std::optional<ListEnd> to = ParseEnd(args[4]);
  if (!from || !to) return ReplyError(ctx.out, SyntaxError());
  BMoveCore(ctx, args, *from, *to, args[5]);
}

void BRPopLPushCommand(CommandContext& ctx, Args args) {
  BMoveCore(ctx, args, ListEnd::kRight, ListEnd::kLeft, args[3]);
}

// The keys of LMPOP (numkeys at 1) and BLMPOP (numkeys at 2): numkeys of them after the count;
// nothing for bad input.
void MPopKeys(Args args, size_t first, std::vector<int>* positions) {
  if (args.size() <= first) return;
  std::optional<int64_t> n = ParseInt64(args[first]);
  if (!n || *n < 1 || *n > static_cast<int64_t>(args.size() - first) - 2) return;
  for (int64_t i = 0; i < *n; ++i) positions->push_back(static_cast<int>(first + 1 + i));
}
void LMPopKeys(Args args, std::vector<int>* positions) { MPopKeys(args, 1, positions); }
void BLMPopKeys(Args args, std::vector<int>* positions) { MPopKeys(args, 2, positions); }

void Add(CommandTable& table, std::string name, int arity, uint32_t flags, KeyRange keys,
         Handler handler, std::string summary, std::string since, std::string hint) {
  table.Add(MakeSpec("list", std::move(name), arity, flags, keys, handler, std::move(summary),
                     std::move(since), std::move(hint)));
}

}  // namespace

void RegisterListCommands(CommandTable& table) {
  constexpr KeyRange kOne{1, 1, 1};
  constexpr KeyRange kTwo{1, 2, 1};
  constexpr uint32_t kRo = kReadOnly;
  constexpr uint32_t kW = kWrite | kDenyOom;
  constexpr uint32_t kWFast = kWrite | kDenyOom | kFast;
  Add(table, "lpush", -3, kWFast, kOne, LPushCommand, "Prepend one or multiple elements to a list",
      "1.0.0", "key element [element ...]");
  Add(table, "rpush", -3, kWFast, kOne, RPushCommand, "Append one or multiple elements to a list",
      "1.0.0", "key element [element ...]");
  Add(table, "lpushx", -3, kWFast, kOne, LPushXCommand,
      "Prepend an element to a list, only if the list exists", "2.2.0",
      "key element [element ...]");
  Add(table, "rpushx", -3, kWFast, kOne, RPushXCommand,
      "Append an element to a list, only if the list exists", "2.2.0", "key element [element ...]");
  Add(table, "lpop", -2, kWrite | kFast, kOne, LPopCommand,
      "Remove and get the first elements in a list", "1.0.0", "key [count]");
  Add(table, "rpop", -2, kWrite | kFast, kOne, RPopCommand,
      "Remove and get the last elements in a list", "1.0.0", "key [count]");
  Add(table, "llen", 2, kReadOnly | kFast, kOne, LLenCommand, "Get the length of a list", "1.0.0",
      "key");
  Add(table, "lindex", 3, kRo, kOne, LIndexCommand, "Get an element from a list by its index",
      "1.0.0", "key index");
  Add(table, "lset", 4, kW, kOne, LSetCommand, "Set the value of an element in a list by its index",
      "1.0.0", "key index element");
  Add(table, "lrange", 4, kRo, kOne, LRangeCommand, "Get a range of elements from a list", "1.0.0",
      "key start stop");
  Add(table, "ltrim", 4, kWrite, kOne, LTrimCommand, "Trim a list to the specified range", "1.0.0",
      "key start stop");
  Add(table, "lrem", 4, kWrite, kOne, LRemCommand, "Remove elements from a list", "1.0.0",
      "key count element");
  Add(table, "linsert", 5, kW, kOne, LInsertCommand,
      "Insert an element before or after another element in a list", "2.2.0",
      "key BEFORE|AFTER pivot element");
  Add(table, "lpos", -3, kRo, kOne, LPosCommand, "Return the index of matching elements on a list",
      "6.0.6", "key element [RANK rank] [COUNT num-matches] [MAXLEN len]");
  Add(table, "lmove", 5, kW, kTwo, LMoveCommand,
      "Pop an element from a list, push it to another list and return it", "6.2.0",
      "source destination LEFT|RIGHT LEFT|RIGHT");
  Add(table, "rpoplpush", 3, kW, kTwo, RPopLPushCommand,
      "Remove the last element in a list, prepend it to another list and return it", "1.2.0",
      "source destination");
  CommandSpec mpop =
      MakeSpec("list", "lmpop", -4, kWrite, KeyRange{}, LMPopCommand, "Pop elements from a list",
               "7.0.0", "numkeys key [key ...] LEFT|RIGHT [COUNT count]");
  mpop.find_keys = LMPopKeys;
  table.Add(std::move(mpop));
  // Blocking forms (server/core/blocking.h): write, noscript and blocking, as in Redis 7.0;
  // BLMPOP is not noscript (in a script it does not block).
  constexpr uint32_t kBlockingFlags = kWrite | kNoScript | kBlocking;
  Add(table, "blpop", -3, kBlockingFlags, KeyRange{1, -2, 1}, BLPopCommand,
      "Remove and get the first element in a list, or block until one is available", "2.0.0",
      "key [key ...] timeout");
  Add(table, "brpop", -3, kBlockingFlags, KeyRange{1, -2, 1}, BRPopCommand,
      "Remove and get the last element in a list, or block until one is available", "2.0.0",
      "key [key ...] timeout");
  Add(table, "blmove", 6, kWrite | kDenyOom | kNoScript | kBlocking, kTwo, BLMoveCommand,
      "Pop an element from a list, push it to another list and return it; or block until one is "
      "available",
      "6.2.0", "source destination LEFT|RIGHT LEFT|RIGHT timeout");
  Add(table, "brpoplpush", 4, kWrite | kDenyOom | kNoScript | kBlocking, kTwo, BRPopLPushCommand,
      "Pop an element from a list, push it to another list and return it; or block until one is "
      "available",
      "2.2.0", "source destination timeout");
  CommandSpec bmpop = MakeSpec("list", "blmpop", -5, kWrite | kBlocking, KeyRange{}, BLMPopCommand,
                               "Pop elements from a list, or block until one is available", "7.0.0",
                               "timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]");
  bmpop.find_keys = BLMPopKeys;
  table.Add(std::move(bmpop));
}

}  // namespace sluice::server
