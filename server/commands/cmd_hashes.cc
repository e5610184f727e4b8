// Hash commands: HSET, HMSET, HSETNX, HGET, HMGET, HGETALL, HKEYS, HVALS, HDEL, HLEN, HSTRLEN,
// HEXISTS, HINCRBY, HINCRBYFLOAT, HRANDFIELD, HSCAN. Each parses its arguments in Redis 7.0's
// order (so the same bad input gets the same error), makes one call on ctx.txn() and replies.
#include <cmath>
#include <limits>
#include <string>
#include <utility>
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

using Pairs = std::vector<std::pair<std::string_view, std::string_view>>;
using FieldValues = std::vector<std::pair<std::string, std::string>>;

// Parses field/value pairs from args[2...]; false (and an arity error) when one is unpaired.
bool ParsePairs(CommandContext& ctx, Args args, Pairs* pairs) {
  if ((args.size() - 2) % 2 != 0) {
    ReplyError(ctx.out, WrongArity(ToLower(args[0])));
    return false;
  }
  pairs->reserve((args.size() - 2) / 2);
  for (size_t i = 2; i + 1 < args.size(); i += 2) pairs->emplace_back(args[i], args[i + 1]);
  return true;
}

// HSET key field value [field value ...] -> the number of new fields.
void HSetCommand(CommandContext& ctx, Args args) {
  Pairs pairs;
  if (!ParsePairs(ctx, args, &pairs)) return;
  const bool was_missing = MissingForNew(ctx, args[1]);
  Result<int64_t> r = ctx.txn().HSet(ctx.client.db, args[1], pairs);
  if (r.ok()) NotifyWrite(ctx, kNotifyHash, "hset", args[1], was_missing);
  ReplyInteger(ctx, r);
}

// HMSET key field value [field value ...] -> OK.
void HMSetCommand(CommandContext& ctx, Args args) {
  Pairs pairs;
  if (!ParsePairs(ctx, args, &pairs)) return;
  const bool was_missing = MissingForNew(ctx, args[1]);
  Result<int64_t> r = ctx.txn().HSet(ctx.client.db, args[1], pairs);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  NotifyWrite(ctx, kNotifyHash, "hset", args[1], was_missing);
  ctx.out.Simple("OK");
}

void HSetNxCommand(CommandContext& ctx, Args args) {
  const bool was_missing = MissingForNew(ctx, args[1]);
  Result<bool> r = ctx.txn().HSetNx(ctx.client.db, args[1], args[2], args[3]);
  if (r.ok() && *r) NotifyWrite(ctx, kNotifyHash, "hset", args[1], was_missing);
  ReplyBool(ctx, r);
}

void HGetCommand(CommandContext& ctx, Args args) {
  Result<std::optional<std::string>> r = ctx.txn().HGet(ctx.client.db, args[1], args[2]);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  ReplyOptional(ctx.out, *r);
}

void HMGetCommand(CommandContext& ctx, Args args) {
  auto r = ctx.txn().HMGet(ctx.client.db, args[1], args.subspan(2));
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  ctx.out.Array(r->size());
  for (const auto& v : *r) ReplyOptional(ctx.out, v);
}

// HGETALL (a map in RESP3), HKEYS, HVALS: one read of every field, in insertion order.
enum class Part { kBoth, kFields, kValues };
void HGetAllCore(CommandContext& ctx, Args args, Part part) {
  Result<FieldValues> r = ctx.txn().HGetAll(ctx.client.db, args[1]);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  if (part == Part::kBoth) {
    ctx.out.Map(r->size());
  } else {
    ctx.out.Array(r->size());
  }
  for (const auto& [field, value] : *r) {
    if (part != Part::kValues) ctx.out.Bulk(field);
    if (part != Part::kFields) ctx.out.Bulk(value);
  }
}
void HGetAllCommand(CommandContext& ctx, Args args) { HGetAllCore(ctx, args, Part::kBoth); }
void HKeysCommand(CommandContext& ctx, Args args) { HGetAllCore(ctx, args, Part::kFields); }
void HValsCommand(CommandContext& ctx, Args args) { HGetAllCore(ctx, args, Part::kValues); }

void HDelCommand(CommandContext& ctx, Args args) {
  Result<int64_t> r = ctx.txn().HDel(ctx.client.db, args[1], args.subspan(2));
  if (r.ok() && *r > 0) {
    NotifyKeyspaceEvent(kNotifyHash, "hdel", ctx.client.db, args[1]);
    NotifyIfEmptied(ctx, args[1]);
  }
  ReplyInteger(ctx, r);
}

void HLenCommand(CommandContext& ctx, Args args) {
  ReplyInteger(ctx, ctx.txn().HLen(ctx.client.db, args[1]));
}

void HStrLenCommand(CommandContext& ctx, Args args) {
  ReplyInteger(ctx, ctx.txn().HStrLen(ctx.client.db, args[1], args[2]));
}

void HExistsCommand(CommandContext& ctx, Args args) {
  ReplyBool(ctx, ctx.txn().HExists(ctx.client.db, args[1], args[2]));
}

void HIncrByCommand(CommandContext& ctx, Args args) {
  std::optional<int64_t> delta = ParseInt64(args[3]);
  if (!delta) return ReplyError(ctx.out, NotAnInteger());
  const bool was_missing = MissingForNew(ctx, args[1]);
  Result<int64_t> r = ctx.txn().HIncrBy(ctx.client.db, args[1], args[2], *delta);
  if (r.ok()) NotifyWrite(ctx, kNotifyHash, "hincrby", args[1], was_missing);
  ReplyInteger(ctx, r);
}

void HIncrByFloatCommand(CommandContext& ctx, Args args) {
  std::optional<long double> delta = ParseLongDouble(args[3]);
  if (!delta) return ReplyError(ctx.out, NotAFloat());
  // Redis refuses an infinite increment before it looks at the key or the field.
  if (std::isinf(*delta)) return ReplyError(ctx.out, IncrementNaNOrInfinity());
  const bool was_missing = MissingForNew(ctx, args[1]);
  Result<std::string> r = ctx.txn().HIncrByFloat(ctx.client.db, args[1], args[2], *delta);
  if (r.ok()) NotifyWrite(ctx, kNotifyHash, "hincrbyfloat", args[1], was_missing);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  ctx.out.Bulk(*r);
}

// HRANDFIELD key [count [WITHVALUES]]. Without count: one field or nil. With count: an array
// (RESP3 with values: an array of [field, value] pairs).
void HRandFieldCommand(CommandContext& ctx, Args args) {
  if (args.size() == 2) {
    Result<FieldValues> r = ctx.txn().HRandField(ctx.client.db, args[1], 1);
    if (!r.ok()) return ReplyError(ctx.out, r.status());
    if (r->empty()) return ctx.out.NullBulk();
    return ctx.out.Bulk(r->front().first);
  }
  std::optional<int64_t> count = ParseInt64(args[2]);
  if (!count) return ReplyError(ctx.out, NotAnInteger());
  if (*count == std::numeric_limits<int64_t>::min()) {
    return ReplyError(ctx.out, CountOutOfLongRange());
  }
  const bool with_values = args.size() == 4;
  if (args.size() > 4 || (with_values && !EqualsIgnoreCase(args[3], "withvalues"))) {
    return ReplyError(ctx.out, SyntaxError());
  }
  constexpr int64_t kHalf = std::numeric_limits<int64_t>::max() / 2;
  if (with_values && (*count < -kHalf || *count > kHalf)) {
    return ReplyError(ctx.out, ValueOutOfRange());
  }
  if (*count < -kMaxRepeatedPicks) return ReplyError(ctx.out, TooManyPicks());
  Result<FieldValues> r = ctx.txn().HRandField(ctx.client.db, args[1], *count);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  const bool pairs = with_values && ctx.out.resp() == 3;
  ctx.out.Array(r->size() * (with_values && !pairs ? 2 : 1));
  for (const auto& [field, value] : *r) {
    if (pairs) ctx.out.Array(2);
    ctx.out.Bulk(field);
    if (with_values) ctx.out.Bulk(value);
  }
}

Result<int64_t> HashSize(CommandContext& ctx, std::string_view key) {
  return ctx.txn().HLen(ctx.client.db, key);
}
Result<ElementScanReply> HashScan(CommandContext& ctx, std::string_view key,
                                  const ElementScanArgs& a) {
  return ctx.txn().HScan(ctx.client.db, key, a.cursor, a.match, a.count);
}
void HScanCommand(CommandContext& ctx, Args args) {
  ElementScanCommand(ctx, args, HashSize, HashScan, /*values=*/true);
}

void Add(CommandTable& table, std::string name, int arity, uint32_t flags, Handler handler,
         std::string summary, std::string since, std::string hint) {
  table.Add(MakeSpec("hash", std::move(name), arity, flags, KeyRange{1, 1, 1}, handler,
                     std::move(summary), std::move(since), std::move(hint)));
}

}  // namespace

void RegisterHashCommands(CommandTable& table) {
  constexpr uint32_t kRo = kReadOnly;
  constexpr uint32_t kRoFast = kReadOnly | kFast;
  constexpr uint32_t kWFast = kWrite | kDenyOom | kFast;
  Add(table, "hset", -4, kWFast, HSetCommand, "Set the string value of a hash field", "2.0.0",
      "key field value [field value ...]");
  Add(table, "hmset", -4, kWFast, HMSetCommand, "Set multiple hash fields to multiple values",
      "2.0.0", "key field value [field value ...]");
  Add(table, "hsetnx", 4, kWFast, HSetNxCommand,
      "Set the value of a hash field, only if the field does not exist", "2.0.0",
      "key field value");
  Add(table, "hget", 3, kRoFast, HGetCommand, "Get the value of a hash field", "2.0.0",
      "key field");
  Add(table, "hmget", -3, kRoFast, HMGetCommand, "Get the values of all the given hash fields",
      "2.0.0", "key field [field ...]");
  Add(table, "hgetall", 2, kRo, HGetAllCommand, "Get all the fields and values in a hash", "2.0.0",
      "key");
  Add(table, "hkeys", 2, kRo, HKeysCommand, "Get all the fields in a hash", "2.0.0", "key");
  Add(table, "hvals", 2, kRo, HValsCommand, "Get all the values in a hash", "2.0.0", "key");
  Add(table, "hdel", -3, kWrite | kFast, HDelCommand, "Delete one or more hash fields", "2.0.0",
      "key field [field ...]");
  Add(table, "hlen", 2, kRoFast, HLenCommand, "Get the number of fields in a hash", "2.0.0", "key");
  Add(table, "hstrlen", 3, kRoFast, HStrLenCommand, "Get the length of the value of a hash field",
      "3.2.0", "key field");
  Add(table, "hexists", 3, kRoFast, HExistsCommand, "Determine if a hash field exists", "2.0.0",
      "key field");
  Add(table, "hincrby", 4, kWFast, HIncrByCommand,
      "Increment the integer value of a hash field by the given number", "2.0.0",
      "key field increment");
  Add(table, "hincrbyfloat", 4, kWFast, HIncrByFloatCommand,
      "Increment the float value of a hash field by the given amount", "2.6.0",
      "key field increment");
  Add(table, "hrandfield", -2, kRo, HRandFieldCommand,
      "Get one or multiple random fields from a hash", "6.2.0", "key [count [WITHVALUES]]");
  Add(table, "hscan", -3, kRo, HScanCommand,
      "Incrementally iterate hash fields and associated values", "2.8.0",
      "key cursor [MATCH pattern] [COUNT count]");
}

}  // namespace sluice::server
