// Set commands: SADD, SREM, SISMEMBER, SMISMEMBER, SMEMBERS, SCARD, SPOP, SRANDMEMBER, SMOVE,
// SINTER, SUNION, SDIFF and their STORE forms, SINTERCARD, SSCAN. Arguments are parsed in Redis
// 7.0's order; sets are RESP3 set replies where Redis sends them (SMEMBERS, SPOP with a count,
// SINTER/SUNION/SDIFF), arrays elsewhere (SRANDMEMBER with a count).
#include <limits>
#include <string>
#include <vector>

#include "server/commands/commands.h"
#include "server/commands/element_scan.h"
#include "server/commands/notify_events.h"
#include "server/commands/replies.h"
#include "server/core/args.h"
#include "server/core/client_state.h"
#include "server/core/errors.h"
#include "sluice/transaction.h"

namespace sluice::server {

namespace {

// A negative count repeats picks, so its reply is -count elements long whatever the collection
// holds: beyond this it is refused rather than built in memory (Redis would try to send it).
constexpr int64_t kMaxRepeatedPicks = 10'000'000;

Status TooManyPicks() { return NotSupported("a negative count below -10000000"); }

using Members = std::vector<std::string>;
using SetOp = Store::Transaction::SetOp;

// A set reply (RESP3 ~) or an array.
void ReplyMembers(CommandContext& ctx, const Result<Members>& r, bool as_set) {
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  if (as_set) {
    ctx.out.Set(r->size());
  } else {
    ctx.out.Array(r->size());
  }
  for (const auto& m : *r) ctx.out.Bulk(m);
}

void SAddCommand(CommandContext& ctx, Args args) {
  const bool was_missing = MissingForNew(ctx, args[1]);
  Result<int64_t> r = ctx.txn().SAdd(ctx.client.db, args[1], args.subspan(2));
  if (r.ok() && *r > 0) NotifyWrite(ctx, kNotifySet, "sadd", args[1], was_missing);
  ReplyInteger(ctx, r);
}

void SRemCommand(CommandContext& ctx, Args args) {
  Result<int64_t> r = ctx.txn().SRem(ctx.client.db, args[1], args.subspan(2));
  if (r.ok() && *r > 0) {
    NotifyKeyspaceEvent(kNotifySet, "srem", ctx.client.db, args[1]);
    NotifyIfEmptied(ctx, args[1]);
  }
  ReplyInteger(ctx, r);
}

void SIsMemberCommand(CommandContext& ctx, Args args) {
  ReplyBool(ctx, ctx.txn().SIsMember(ctx.client.db, args[1], args[2]));
}

void SMIsMemberCommand(CommandContext& ctx, Args args) {
  Result<std::vector<bool>> r = ctx.txn().SMIsMember(ctx.client.db, args[1], args.subspan(2));
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  ctx.out.Array(r->size());
  for (bool b : *r) ctx.out.Integer(b ? 1 : 0);
}

void SMembersCommand(CommandContext& ctx, Args args) {
  ReplyMembers(ctx, ctx.txn().SMembers(ctx.client.db, args[1]), /*as_set=*/true);
}

void SCardCommand(CommandContext& ctx, Args args) {
  ReplyInteger(ctx, ctx.txn().SCard(ctx.client.db, args[1]));
}

// SPOP key [count]: without count one member or nil; with count a set (empty when missing).
void SPopCommand(CommandContext& ctx, Args args) {
  if (args.size() > 3) return ReplyError(ctx.out, SyntaxError());
  if (args.size() == 2) {
    Result<Members> r = ctx.txn().SPop(ctx.client.db, args[1], 1);
    if (!r.ok()) return ReplyError(ctx.out, r.status());
    if (r->empty()) return ctx.out.NullBulk();
    NotifyKeyspaceEvent(kNotifySet, "spop", ctx.client.db, args[1]);
    NotifyIfEmptied(ctx, args[1]);
    return ctx.out.Bulk(r->front());
  }
  // Redis reads the count as a positive long: a non-integer gets the same error as a negative.
  std::optional<int64_t> count = ParseInt64(args[2]);
  if (!count || *count < 0) return ReplyError(ctx.out, NotPositive());
  Result<Members> r = ctx.txn().SPop(ctx.client.db, args[1], *count);
  if (r.ok() && !r->empty()) {
    NotifyKeyspaceEvent(kNotifySet, "spop", ctx.client.db, args[1]);
    NotifyIfEmptied(ctx, args[1]);
  }
  ReplyMembers(ctx, r, /*as_set=*/true);
}

// SRANDMEMBER key [count]: without count one member or nil; with count an array.
void SRandMemberCommand(CommandContext& ctx, Args args) {
  if (args.size() > 3) return ReplyError(ctx.out, SyntaxError());
  if (args.size() == 2) {
    Result<Members> r = ctx.txn().SRandMember(ctx.client.db, args[1], 1);
    if (!r.ok()) return ReplyError(ctx.out, r.status());
    if (r->empty()) return ctx.out.NullBulk();
    return ctx.out.Bulk(r->front());
  }
  std::optional<int64_t> count = ParseInt64(args[2]);
  if (!count) return ReplyError(ctx.out, NotAnInteger());
  if (*count == std::numeric_limits<int64_t>::min()) {
    return ReplyError(ctx.out, CountOutOfLongRange());
  }
  if (*count < -kMaxRepeatedPicks) return ReplyError(ctx.out, TooManyPicks());
  ReplyMembers(ctx, ctx.txn().SRandMember(ctx.client.db, args[1], *count), /*as_set=*/false);
}

void SMoveCommand(CommandContext& ctx, Args args) {
  const bool dst_missing = MissingForNew(ctx, args[2]);
  bool dst_had = false;
  if (NotifyEnabled(kNotifySet) && args[1] != args[2]) {
    Result<bool> had = ctx.txn().SIsMember(ctx.client.db, args[2], args[3]);
    dst_had = had.ok() && *had;
  }
  Result<bool> r = ctx.txn().SMove(ctx.client.db, args[1], args[2], args[3]);
  if (r.ok() && *r && args[1] != args[2]) {
    NotifyKeyspaceEvent(kNotifySet, "srem", ctx.client.db, args[1]);
    NotifyIfEmptied(ctx, args[1]);
    if (dst_missing && KeyLive(ctx, args[2])) {
      NotifyKeyspaceEvent(kNotifyNew, "new", ctx.client.db, args[2]);
    }
    if (!dst_had) NotifyKeyspaceEvent(kNotifySet, "sadd", ctx.client.db, args[2]);
  }
  ReplyBool(ctx, r);
}

void Algebra(CommandContext& ctx, Args args, SetOp op) {
  ReplyMembers(ctx, ctx.txn().SetAlgebra(ctx.client.db, op, args.subspan(1)), /*as_set=*/true);
}
void AlgebraStore(CommandContext& ctx, Args args, SetOp op) {
  const bool existed = StoreDestinationExisted(ctx, args[1]);
  Result<int64_t> r = ctx.txn().SetAlgebraStore(ctx.client.db, op, args[1], args.subspan(2));
  NotifyStore(ctx, r, kNotifySet,
              op == SetOp::kInter   ? "sinterstore"
              : op == SetOp::kUnion ? "sunionstore"
                                    : "sdiffstore",
              args[1], existed);
  ReplyInteger(ctx, r);
}
void SInterCommand(CommandContext& ctx, Args args) { Algebra(ctx, args, SetOp::kInter); }
void SUnionCommand(CommandContext& ctx, Args args) { Algebra(ctx, args, SetOp::kUnion); }
void SDiffCommand(CommandContext& ctx, Args args) { Algebra(ctx, args, SetOp::kDiff); }
void SInterStoreCommand(CommandContext& ctx, Args args) { AlgebraStore(ctx, args, SetOp::kInter); }
void SUnionStoreCommand(CommandContext& ctx, Args args) { AlgebraStore(ctx, args, SetOp::kUnion); }
void SDiffStoreCommand(CommandContext& ctx, Args args) { AlgebraStore(ctx, args, SetOp::kDiff); }

// SINTERCARD numkeys key [key ...] [LIMIT limit]
void SInterCardCommand(CommandContext& ctx, Args args) {
  std::optional<int64_t> numkeys = ParseInt64(args[1]);
  if (!numkeys || *numkeys < 1) return ReplyError(ctx.out, NumkeysNotPositive());
  if (*numkeys > static_cast<int64_t>(args.size()) - 2) {
    return ReplyError(ctx.out, NumKeysTooMany());
  }
  int64_t limit = 0;
  for (size_t j = 2 + static_cast<size_t>(*numkeys); j < args.size(); ++j) {
    const bool more = j + 1 < args.size();
    if (EqualsIgnoreCase(args[j], "limit") && more) {
      std::optional<int64_t> l = ParseInt64(args[++j]);
      if (!l || *l < 0) return ReplyError(ctx.out, LimitNegative());
      limit = *l;
    } else {
      return ReplyError(ctx.out, SyntaxError());
    }
  }
  ReplyInteger(ctx, ctx.txn().SInterCard(ctx.client.db,
                                         args.subspan(2, static_cast<size_t>(*numkeys)), limit));
}

// SINTERCARD's keys: numkeys of them after the count; nothing for bad input.
void SInterCardKeys(Args args, std::vector<int>* positions) {
  if (args.size() < 2) return;
  std::optional<int64_t> n = ParseInt64(args[1]);
  if (!n || *n < 1 || *n > static_cast<int64_t>(args.size()) - 2) return;
  for (int64_t i = 0; i < *n; ++i) positions->push_back(static_cast<int>(2 + i));
}

Result<int64_t> SetSize(CommandContext& ctx, std::string_view key) {
  return ctx.txn().SCard(ctx.client.db, key);
}
Result<ElementScanReply> SetScan(CommandContext& ctx, std::string_view key,
                                 const ElementScanArgs& a) {
  return ctx.txn().SScan(ctx.client.db, key, a.cursor, a.match, a.count);
}
void SScanCommand(CommandContext& ctx, Args args) {
  ElementScanCommand(ctx, args, SetSize, SetScan, /*values=*/false);
}

void Add(CommandTable& table, std::string name, int arity, uint32_t flags, KeyRange keys,
         Handler handler, std::string summary, std::string since, std::string hint) {
  table.Add(MakeSpec("set", std::move(name), arity, flags, keys, handler, std::move(summary),
                     std::move(since), std::move(hint)));
}

}  // namespace

void RegisterSetCommands(CommandTable& table) {
  constexpr uint32_t kRo = kReadOnly;
  constexpr uint32_t kRoFast = kReadOnly | kFast;
  constexpr uint32_t kW = kWrite | kDenyOom;
  constexpr KeyRange kOne{1, 1, 1};
  constexpr KeyRange kAll{1, -1, 1};
  Add(table, "sadd", -3, kW | kFast, kOne, SAddCommand, "Add one or more members to a set", "1.0.0",
      "key member [member ...]");
  Add(table, "srem", -3, kWrite | kFast, kOne, SRemCommand, "Remove one or more members from a set",
      "1.0.0", "key member [member ...]");
  Add(table, "sismember", 3, kRoFast, kOne, SIsMemberCommand,
      "Determine if a given value is a member of a set", "1.0.0", "key member");
  Add(table, "smismember", -3, kRoFast, kOne, SMIsMemberCommand,
      "Returns the membership associated with the given elements for a set", "6.2.0",
      "key member [member ...]");
  Add(table, "smembers", 2, kRo, kOne, SMembersCommand, "Get all the members in a set", "1.0.0",
      "key");
  Add(table, "scard", 2, kRoFast, kOne, SCardCommand, "Get the number of members in a set", "1.0.0",
      "key");
  Add(table, "spop", -2, kWrite | kFast, kOne, SPopCommand,
      "Remove and return one or multiple random members from a set", "1.0.0", "key [count]");
  Add(table, "srandmember", -2, kRo, kOne, SRandMemberCommand,
      "Get one or multiple random members from a set", "1.0.0", "key [count]");
  Add(table, "smove", 4, kWrite | kFast, KeyRange{1, 2, 1}, SMoveCommand,
      "Move a member from one set to another", "1.0.0", "source destination member");
  Add(table, "sinter", -2, kRo, kAll, SInterCommand, "Intersect multiple sets", "1.0.0",
      "key [key ...]");
  Add(table, "sunion", -2, kRo, kAll, SUnionCommand, "Add multiple sets", "1.0.0", "key [key ...]");
  Add(table, "sdiff", -2, kRo, kAll, SDiffCommand, "Subtract multiple sets", "1.0.0",
      "key [key ...]");
  Add(table, "sinterstore", -3, kW, kAll, SInterStoreCommand,
      "Intersect multiple sets and store the resulting set in a key", "1.0.0",
      "destination key [key ...]");
  Add(table, "sunionstore", -3, kW, kAll, SUnionStoreCommand,
      "Add multiple sets and store the resulting set in a key", "1.0.0",
      "destination key [key ...]");
  Add(table, "sdiffstore", -3, kW, kAll, SDiffStoreCommand,
      "Subtract multiple sets and store the resulting set in a key", "1.0.0",
      "destination key [key ...]");
  CommandSpec card = MakeSpec("set", "sintercard", -3, kRo, KeyRange{}, SInterCardCommand,
                              "Intersect multiple sets and return the cardinality of the result",
                              "7.0.0", "numkeys key [key ...] [LIMIT limit]");
  card.find_keys = SInterCardKeys;
  table.Add(std::move(card));
  Add(table, "sscan", -3, kRo, kOne, SScanCommand, "Incrementally iterate Set elements", "2.6.0",
      "key cursor [MATCH pattern] [COUNT count]");
}

}  // namespace sluice::server
