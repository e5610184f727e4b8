// String commands: GET, SET, SETNX, SETEX, PSETEX, GETSET, GETDEL, GETEX, MGET, MSET, MSETNX,
// INCR, INCRBY, DECR, DECRBY, INCRBYFLOAT, APPEND, STRLEN, GETRANGE (SUBSTR), SETRANGE.
// Each handler parses its arguments (in Redis's order, so the same bad input gets the same
// error), makes one Store call and writes the reply. Arity is checked by the Dispatcher.
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/commands/commands.h"
#include "server/commands/notify_events.h"
#include "server/commands/replies.h"
#include "server/core/args.h"
#include "server/core/client_state.h"
#include "server/core/errors.h"
#include "server/core/expiry_args.h"
#include "sluice/store.h"

namespace sluice::server {

namespace {

using Pairs = std::vector<std::pair<std::string_view, std::string_view>>;

// Replies with the value of a Result<std::optional<std::string>> or its error.

// The shared core of SET, SETNX, SETEX, PSETEX and GETSET: one Store::Set, replying OK (or the
// old value with GET) when written and nil when the NX/XX condition failed.
void SetCore(CommandContext& ctx, std::string_view key, std::string_view value,
             const SetOptions& options) {
  const bool was_missing = MissingForNew(ctx, key);
  Result<SetReply> r = ctx.txn().Set(ctx.client.db, key, value, options);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  if (r->written) {
    NotifyWrite(ctx, kNotifyString, "set", key, was_missing);
    if (options.expiry.kind == ExpiryChange::Kind::kSetAt) {
      NotifyKeyspaceEvent(kNotifyGeneric, "expire", ctx.client.db, key);
    }
  }
  if (options.return_old) return ReplyOptional(ctx.out, r->old_value);
  if (r->written) {
    ctx.out.Simple("OK");
  } else {
    ctx.out.NullBulk();
  }
}

// SET key value [NX|XX] [GET] [EX s|PX ms|EXAT s|PXAT ms|KEEPTTL]
void SetCommand(CommandContext& ctx, Args args) {
  StringOptions parsed;
  Status s = ParseStringOptions(args, 3, StringCommandKind::kSet, &parsed);
  if (!s.ok()) return ReplyError(ctx.out, s);
  SetOptions options;
  options.condition = parsed.condition;
  options.return_old = parsed.get;
  s = ResolveStringExpiry(parsed, ctx.txn().NowMs(), "set", ExpiryChange::Kind::kPersist,
                          &options.expiry);
  if (!s.ok()) return ReplyError(ctx.out, s);
  SetCore(ctx, args[1], args[2], options);
}

// SETNX key value -> 1 when set, 0 when the key existed.
void SetNxCommand(CommandContext& ctx, Args args) {
  SetOptions options;
  options.condition = SetCondition::kIfAbsent;
  const bool was_missing = MissingForNew(ctx, args[1]);
  Result<SetReply> r = ctx.txn().Set(ctx.client.db, args[1], args[2], options);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  if (r->written) NotifyWrite(ctx, kNotifyString, "set", args[1], was_missing);
  ctx.out.Integer(r->written ? 1 : 0);
}

// SETEX key seconds value / PSETEX key milliseconds value.
void SetWithTtl(CommandContext& ctx, Args args, bool seconds, std::string_view command) {
  SetOptions options;
  options.expiry.kind = ExpiryChange::Kind::kSetAt;
  Status s = ParsePositiveExpiry(args[2], seconds, /*relative=*/true, ctx.txn().NowMs(), command,
                                 &options.expiry.at_ms);
  if (!s.ok()) return ReplyError(ctx.out, s);
  SetCore(ctx, args[1], args[3], options);
}
void SetExCommand(CommandContext& ctx, Args args) { SetWithTtl(ctx, args, true, "setex"); }
void PSetExCommand(CommandContext& ctx, Args args) { SetWithTtl(ctx, args, false, "psetex"); }

// GETSET key value: SET ... GET without options (clears the TTL).
void GetSetCommand(CommandContext& ctx, Args args) {
  SetOptions options;
  options.return_old = true;
  SetCore(ctx, args[1], args[2], options);
}

// Reads into a per-thread buffer that keeps its capacity, so a GET in steady state allocates
// nothing (a buffer grown past kKeepGetBuffer by a large value is given back after the reply).
void GetCommand(CommandContext& ctx, Args args) {
  constexpr size_t kKeepGetBuffer = 64 << 10;
  thread_local std::string value;
  bool found = false;
  Status s = ctx.txn().GetInto(ctx.client.db, args[1], &value, &found);
  if (!s.ok()) {
    ReplyError(ctx.out, s);
  } else if (found) {
    ctx.out.Bulk(value);
  } else {
    ctx.out.NullBulk();
  }
  if (value.capacity() > kKeepGetBuffer) std::string().swap(value);
}

void GetDelCommand(CommandContext& ctx, Args args) {
  auto r = ctx.txn().GetDel(ctx.client.db, args[1]);
  if (r.ok() && r->has_value()) NotifyKeyspaceEvent(kNotifyGeneric, "del", ctx.client.db, args[1]);
  ReplyOptional(ctx, std::move(r));
}

// GETEX key [EX s|PX ms|EXAT s|PXAT ms|PERSIST]. Redis reports a syntax error first, then a
// missing key (nil) or WRONGTYPE, and only then a bad time value; so when the time is bad we
// look at the key before choosing the reply.
void GetExCommand(CommandContext& ctx, Args args) {
  StringOptions parsed;
  Status s = ParseStringOptions(args, 2, StringCommandKind::kGetEx, &parsed);
  if (!s.ok()) return ReplyError(ctx.out, s);
  ExpiryChange change;
  s = ResolveStringExpiry(parsed, ctx.txn().NowMs(), "getex", ExpiryChange::Kind::kKeep, &change);
  if (!s.ok()) {
    Result<std::optional<ValueKind>> type = ctx.txn().Type(ctx.client.db, args[1]);
    if (!type.ok()) return ReplyError(ctx.out, type.status());
    if (!type->has_value()) return ctx.out.NullBulk();
    if (**type != ValueKind::kString) return ReplyError(ctx.out, Status::WrongType());
    return ReplyError(ctx.out, s);
  }
  bool had_ttl = false;
  if (change.kind == ExpiryChange::Kind::kPersist && NotifyEnabled(kNotifyGeneric)) {
    Result<int64_t> ttl = ctx.txn().PTtl(ctx.client.db, args[1]);
    had_ttl = ttl.ok() && *ttl >= 0;
  }
  auto r = ctx.txn().GetEx(ctx.client.db, args[1], change);
  if (r.ok() && had_ttl) NotifyKeyspaceEvent(kNotifyGeneric, "persist", ctx.client.db, args[1]);
  if (r.ok() && r->has_value() && change.kind == ExpiryChange::Kind::kSetAt) {
    // A time in the past deletes the key, as Redis's GETEX does.
    NotifyKeyspaceEvent(kNotifyGeneric, KeyLive(ctx, args[1]) ? "expire" : "del", ctx.client.db,
                        args[1]);
  }
  ReplyOptional(ctx, std::move(r));
}

// MGET key [key ...]: nil for missing and non-string keys.
void MGetCommand(CommandContext& ctx, Args args) {
  auto r = ctx.txn().MGet(ctx.client.db, args.subspan(1));
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  ctx.out.Array(r->size());
  for (const std::optional<std::string>& v : *r) ReplyOptional(ctx.out, v);
}

// MSET/MSETNX key value [key value ...]: an odd count is an arity error, as Redis reports it.
bool CollectPairs(CommandContext& ctx, Args args, std::string_view command, Pairs* pairs) {
  if (args.size() % 2 == 0) {
    ReplyError(ctx.out, WrongArity(command));
    return false;
  }
  pairs->reserve(args.size() / 2);
  for (size_t i = 1; i + 1 < args.size(); i += 2) pairs->emplace_back(args[i], args[i + 1]);
  return true;
}

void MSetCommand(CommandContext& ctx, Args args) {
  Pairs pairs;
  if (!CollectPairs(ctx, args, "mset", &pairs)) return;
  std::vector<bool> missing;
  if (NotifyEnabled(kNotifyNew)) {
    for (const auto& [k, v] : pairs) missing.push_back(!KeyLive(ctx, k));
  }
  Status s = ctx.txn().MSet(ctx.client.db, pairs);
  if (!s.ok()) return ReplyError(ctx.out, s);
  for (size_t i = 0; i < pairs.size(); ++i) {
    NotifyWrite(ctx, kNotifyString, "set", pairs[i].first, !missing.empty() && missing[i]);
  }
  ctx.out.Simple("OK");
}

void MSetNxCommand(CommandContext& ctx, Args args) {
  Pairs pairs;
  if (!CollectPairs(ctx, args, "msetnx", &pairs)) return;
  auto r = ctx.txn().MSetNx(ctx.client.db, pairs);
  if (r.ok() && *r) {
    for (const auto& [k, v] : pairs) NotifyWrite(ctx, kNotifyString, "set", k, true);
  }
  ReplyBool(ctx, std::move(r));
}

// The shared core of INCR, DECR, INCRBY and DECRBY.
void IncrCore(CommandContext& ctx, std::string_view key, int64_t delta) {
  const bool was_missing = MissingForNew(ctx, key);
  auto r = ctx.txn().IncrBy(ctx.client.db, key, delta);
  if (r.ok()) NotifyWrite(ctx, kNotifyString, "incrby", key, was_missing);
  ReplyInteger(ctx, std::move(r));
}
void IncrCommand(CommandContext& ctx, Args args) { IncrCore(ctx, args[1], 1); }
void DecrCommand(CommandContext& ctx, Args args) { IncrCore(ctx, args[1], -1); }
void IncrByCommand(CommandContext& ctx, Args args) {
  std::optional<int64_t> delta = ParseInt64(args[2]);
  if (!delta) return ReplyError(ctx.out, NotAnInteger());
  IncrCore(ctx, args[1], *delta);
}
void DecrByCommand(CommandContext& ctx, Args args) {
  std::optional<int64_t> delta = ParseInt64(args[2]);
  if (!delta) return ReplyError(ctx.out, NotAnInteger());
  // -LLONG_MIN does not exist; Redis has its own text for it.
  if (*delta == std::numeric_limits<int64_t>::min()) {
    return ReplyError(ctx.out, Status::InvalidArgument("decrement would overflow"));
  }
  IncrCore(ctx, args[1], -*delta);
}

// INCRBYFLOAT key increment: the reply is a bulk string in RESP2 and RESP3 alike, as Redis's.
// Unlike INCRBY, Redis checks the key's type before the increment: a bad increment on a
// non-string key is WRONGTYPE.
void IncrByFloatCommand(CommandContext& ctx, Args args) {
  std::optional<long double> delta = ParseLongDouble(args[2]);
  if (!delta) {
    Result<std::optional<ValueKind>> type = ctx.txn().Type(ctx.client.db, args[1]);
    if (!type.ok()) return ReplyError(ctx.out, type.status());
    if (type->has_value() && **type != ValueKind::kString) {
      return ReplyError(ctx.out, Status::WrongType());
    }
    return ReplyError(ctx.out, NotAFloat());
  }
  const bool was_missing = MissingForNew(ctx, args[1]);
  Result<std::string> r = ctx.txn().IncrByFloat(ctx.client.db, args[1], *delta);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  NotifyWrite(ctx, kNotifyString, "incrbyfloat", args[1], was_missing);
  ctx.out.Bulk(*r);
}

void AppendCommand(CommandContext& ctx, Args args) {
  const bool was_missing = MissingForNew(ctx, args[1]);
  auto r = ctx.txn().Append(ctx.client.db, args[1], args[2]);
  if (r.ok()) NotifyWrite(ctx, kNotifyString, "append", args[1], was_missing);
  ReplyInteger(ctx, std::move(r));
}

void StrLenCommand(CommandContext& ctx, Args args) {
  ReplyInteger(ctx, ctx.txn().StrLen(ctx.client.db, args[1]));
}

// GETRANGE key start end (and its old name SUBSTR): "" for a missing key.
void GetRangeCommand(CommandContext& ctx, Args args) {
  std::optional<int64_t> start = ParseInt64(args[2]);
  std::optional<int64_t> end = ParseInt64(args[3]);
  if (!start || !end) return ReplyError(ctx.out, NotAnInteger());
  Result<std::string> r = ctx.txn().GetRange(ctx.client.db, args[1], *start, *end);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  ctx.out.Bulk(*r);
}

// SETRANGE key offset value: a negative offset fails before the key is looked at.
void SetRangeCommand(CommandContext& ctx, Args args) {
  std::optional<int64_t> offset = ParseInt64(args[2]);
  if (!offset) return ReplyError(ctx.out, NotAnInteger());
  if (*offset < 0) return ReplyError(ctx.out, Status::InvalidArgument("offset is out of range"));
  const bool was_missing = MissingForNew(ctx, args[1]);
  auto r = ctx.txn().SetRange(ctx.client.db, args[1], *offset, args[3]);
  if (r.ok() && !args[3].empty()) NotifyWrite(ctx, kNotifyString, "setrange", args[1], was_missing);
  ReplyInteger(ctx, std::move(r));
}

void Add(CommandTable& table, std::string name, int arity, uint32_t flags, int first_key,
         int last_key, int key_step, Handler handler, std::string summary, std::string since,
         std::string hint) {
  table.Add(MakeSpec("string", std::move(name), arity, flags, {first_key, last_key, key_step},
                     handler, std::move(summary), std::move(since), std::move(hint)));
}

}  // namespace

void RegisterStringCommands(CommandTable& table) {
  constexpr uint32_t kRoFast = kReadOnly | kFast;
  constexpr uint32_t kWriteOom = kWrite | kDenyOom;
  constexpr uint32_t kWriteOomFast = kWrite | kDenyOom | kFast;
  Add(table, "get", 2, kRoFast, 1, 1, 1, GetCommand, "Get the value of a key", "1.0.0", "key");
  Add(table, "set", -3, kWriteOom, 1, 1, 1, SetCommand,
      "Set the string value of a key, with optional conditions and expiry", "1.0.0",
      "key value [NX|XX] [GET] [EX seconds|PX milliseconds|EXAT unix-time-seconds|"
      "PXAT unix-time-milliseconds|KEEPTTL]");
  Add(table, "setnx", 3, kWriteOomFast, 1, 1, 1, SetNxCommand,
      "Set the value of a key, only if the key does not exist", "1.0.0", "key value");
  Add(table, "setex", 4, kWriteOom, 1, 1, 1, SetExCommand, "Set the value and expiration of a key",
      "2.0.0", "key seconds value");
  Add(table, "psetex", 4, kWriteOom, 1, 1, 1, PSetExCommand,
      "Set the value and expiration in milliseconds of a key", "2.6.0", "key milliseconds value");
  Add(table, "getset", 3, kWriteOomFast, 1, 1, 1, GetSetCommand,
      "Set the string value of a key and return its old value", "1.0.0", "key value");
  Add(table, "getdel", 2, kWrite | kFast, 1, 1, 1, GetDelCommand,
      "Get the value of a key and delete the key", "6.2.0", "key");
  Add(table, "getex", -2, kWrite | kFast, 1, 1, 1, GetExCommand,
      "Get the value of a key and optionally set its expiration", "6.2.0",
      "key [EX seconds|PX milliseconds|EXAT unix-time-seconds|PXAT unix-time-milliseconds|"
      "PERSIST]");
  Add(table, "mget", -2, kRoFast, 1, -1, 1, MGetCommand, "Get the values of all the given keys",
      "1.0.0", "key [key ...]");
  Add(table, "mset", -3, kWriteOom, 1, -1, 2, MSetCommand, "Set multiple keys to multiple values",
      "1.0.1", "key value [key value ...]");
  Add(table, "msetnx", -3, kWriteOom, 1, -1, 2, MSetNxCommand,
      "Set multiple keys to multiple values, only if none of the keys exist", "1.0.1",
      "key value [key value ...]");
  Add(table, "incr", 2, kWriteOomFast, 1, 1, 1, IncrCommand,
      "Increment the integer value of a key by one", "1.0.0", "key");
  Add(table, "incrby", 3, kWriteOomFast, 1, 1, 1, IncrByCommand,
      "Increment the integer value of a key by the given amount", "1.0.0", "key increment");
  Add(table, "decr", 2, kWriteOomFast, 1, 1, 1, DecrCommand,
      "Decrement the integer value of a key by one", "1.0.0", "key");
  Add(table, "decrby", 3, kWriteOomFast, 1, 1, 1, DecrByCommand,
      "Decrement the integer value of a key by the given number", "1.0.0", "key decrement");
  Add(table, "incrbyfloat", 3, kWriteOomFast, 1, 1, 1, IncrByFloatCommand,
      "Increment the float value of a key by the given amount", "2.6.0", "key increment");
  Add(table, "append", 3, kWriteOomFast, 1, 1, 1, AppendCommand, "Append a value to a key", "2.0.0",
      "key value");
  Add(table, "strlen", 2, kRoFast, 1, 1, 1, StrLenCommand,
      "Get the length of the value stored in a key", "2.2.0", "key");
  Add(table, "getrange", 4, kReadOnly, 1, 1, 1, GetRangeCommand,
      "Get a substring of the string stored at a key", "2.4.0", "key start end");
  Add(table, "substr", 4, kReadOnly, 1, 1, 1, GetRangeCommand,
      "Get a substring of the string stored at a key", "1.0.0", "key start end");
  Add(table, "setrange", 4, kWriteOom, 1, 1, 1, SetRangeCommand,
      "Overwrite part of a string at key starting at the specified offset", "2.2.0",
      "key offset value");
}

}  // namespace sluice::server
