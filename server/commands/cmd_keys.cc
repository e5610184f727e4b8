// Key commands: DEL, UNLINK, EXISTS, EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT, TTL, PTTL, EXPIRETIME,
// PEXPIRETIME, PERSIST, TYPE, RENAME, RENAMENX, COPY, KEYS, SCAN, RANDOMKEY.
// Each handler parses its arguments in Redis's order (so the same bad input gets the same
// error), makes one Store call and writes the reply. Arity is checked by the Dispatcher.
#include <cctype>
#include <cerrno>
#include <cstdlib>
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
#include "server/core/cluster_route.h"
#include "server/core/errors.h"
#include "server/core/expiry_args.h"
#include "server/core/server_state.h"
#include "sluice/store.h"

namespace sluice::server {

namespace {

void ReplyKeys(CommandContext& ctx, const std::vector<std::string>& keys) {
  ctx.out.Array(keys.size());
  for (const std::string& key : keys) ctx.out.Bulk(key);
}

// DEL and UNLINK (the engine frees nothing lazily, so they are the same).
void DelCommand(CommandContext& ctx, Args args) {
  if (!NotifyEnabled(kNotifyGeneric) && !ctx.server.tracking().active()) {
    return ReplyInteger(ctx, ctx.txn().Del(ctx.client.db, args.subspan(1)));
  }
  // One key at a time, so each deleted key fires its "del" and its invalidation in argument
  // order, as Redis.
  int64_t deleted = 0;
  for (std::string_view key : args.subspan(1)) {
    Result<int64_t> r = ctx.txn().Del(ctx.client.db, std::span<const std::string_view>(&key, 1));
    if (!r.ok()) return ReplyError(ctx.out, r.status());
    if (*r > 0) NotifyKeyspaceEvent(kNotifyGeneric, "del", ctx.client.db, key);
    deleted += *r;
  }
  ctx.out.Integer(deleted);
}

void ExistsCommand(CommandContext& ctx, Args args) {
  ReplyInteger(ctx, ctx.txn().Exists(ctx.client.db, args.subspan(1)));
}

// The shared core of EXPIRE, PEXPIRE, EXPIREAT and PEXPIREAT: key time [NX|XX|GT|LT ...].
// As Redis: options are checked before the time; the time is made absolute with overflow
// checks; a missing key or a failed condition gives 0; a time in the past deletes the key (1).
// The conditions (XX GT and XX LT included) are checked by the Store atomically with the write.
void ExpireCore(CommandContext& ctx, Args args, bool seconds, bool relative,
                std::string_view command) {
  ExpireCondition cond = ExpireCondition::kAlways;
  Status s = ParseExpireOptions(args, 3, &cond);
  if (!s.ok()) return ReplyError(ctx.out, s);
  int64_t at_ms = 0;
  s = ParseExpireTime(args[2], seconds, relative ? ctx.txn().NowMs() : 0, command, &at_ms);
  if (!s.ok()) return ReplyError(ctx.out, s);
  Result<bool> r = ctx.txn().ExpireAt(ctx.client.db, args[1], at_ms, cond);
  if (r.ok() && *r) {
    // A time in the past deletes the key: Redis reports "del" then.
    NotifyKeyspaceEvent(kNotifyGeneric, KeyLive(ctx, args[1]) ? "expire" : "del", ctx.client.db,
                        args[1]);
  }
  ReplyBool(ctx, r);
}
void ExpireCommand(CommandContext& ctx, Args args) {
  ExpireCore(ctx, args, /*seconds=*/true, /*relative=*/true, "expire");
}
void PExpireCommand(CommandContext& ctx, Args args) {
  ExpireCore(ctx, args, /*seconds=*/false, /*relative=*/true, "pexpire");
}
void ExpireAtCommand(CommandContext& ctx, Args args) {
  ExpireCore(ctx, args, /*seconds=*/true, /*relative=*/false, "expireat");
}
void PExpireAtCommand(CommandContext& ctx, Args args) {
  ExpireCore(ctx, args, /*seconds=*/false, /*relative=*/false, "pexpireat");
}

// Redis's (ms + 500) / 1000 for a non-negative ms, without overflowing near INT64_MAX.
int64_t RoundMsToSeconds(int64_t ms) { return ms / 1000 + (ms % 1000 >= 500 ? 1 : 0); }

// The shared core of TTL, PTTL, EXPIRETIME and PEXPIRETIME: -2 for a missing key, -1 for one
// without a TTL, else the remaining (or absolute) time, in seconds rounded to nearest or in ms.
void TtlCore(CommandContext& ctx, Args args, bool absolute, bool in_ms) {
  Result<int64_t> r = absolute ? ctx.txn().ExpireTimeMs(ctx.client.db, args[1])
                               : ctx.txn().PTtl(ctx.client.db, args[1]);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  int64_t v = *r;
  if (v >= 0 && !in_ms) v = RoundMsToSeconds(v);
  ctx.out.Integer(v);
}
void TtlCommand(CommandContext& ctx, Args args) { TtlCore(ctx, args, false, false); }
void PTtlCommand(CommandContext& ctx, Args args) { TtlCore(ctx, args, false, true); }
void ExpireTimeCommand(CommandContext& ctx, Args args) { TtlCore(ctx, args, true, false); }
void PExpireTimeCommand(CommandContext& ctx, Args args) { TtlCore(ctx, args, true, true); }

void PersistCommand(CommandContext& ctx, Args args) {
  Result<bool> r = ctx.txn().Persist(ctx.client.db, args[1]);
  if (r.ok() && *r) NotifyKeyspaceEvent(kNotifyGeneric, "persist", ctx.client.db, args[1]);
  ReplyBool(ctx, r);
}

// TYPE key: a simple string, "none" when the key is missing.
void TypeCommand(CommandContext& ctx, Args args) {
  Result<std::optional<ValueKind>> r = ctx.txn().Type(ctx.client.db, args[1]);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  ctx.out.Simple(r->has_value() ? TypeName(**r) : "none");
}

// OBJECT ENCODING key: Redis's encoding name, nil when the key is missing.
void ObjectEncodingCommand(CommandContext& ctx, Args args) {
  Result<std::optional<std::string>> r = ctx.txn().ObjectEncoding(ctx.client.db, args[2]);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  if (r->has_value()) {
    ctx.out.Bulk(**r);
  } else {
    ctx.out.NullBulk();
  }
}

// RENAME src dst -> OK; RENAMENX src dst -> 1/0. A missing src is "ERR no such key" for both;
// onto itself, RENAME replies OK and RENAMENX 0 (Redis's answers; nothing changes).
void RenameCore(CommandContext& ctx, Args args, bool nx) {
  Result<bool> r = ctx.txn().Rename(ctx.client.db, args[1], args[2], nx);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  if (*r && args[1] != args[2]) {
    // Redis adds the destination anew (class n), then reports both names.
    NotifyKeyspaceEvent(kNotifyNew, "new", ctx.client.db, args[2]);
    NotifyKeyspaceEvent(kNotifyGeneric, "rename_from", ctx.client.db, args[1]);
    NotifyKeyspaceEvent(kNotifyGeneric, "rename_to", ctx.client.db, args[2]);
  }
  if (!nx) return ctx.out.Simple("OK");
  ctx.out.Integer(*r && args[1] != args[2] ? 1 : 0);
}
void RenameCommand(CommandContext& ctx, Args args) { RenameCore(ctx, args, false); }
void RenameNxCommand(CommandContext& ctx, Args args) { RenameCore(ctx, args, true); }

// COPY source destination [DB destination-db] [REPLACE]
void CopyCommand(CommandContext& ctx, Args args) {
  int dst_db = ctx.client.db;
  bool replace = false;
  for (size_t i = 3; i < args.size(); ++i) {
    if (EqualsIgnoreCase(args[i], "replace")) {
      replace = true;
    } else if (EqualsIgnoreCase(args[i], "db") && i + 1 < args.size()) {
      // Redis reads the index as a C int, with its own text for a long outside int's range.
      std::optional<int64_t> db = ParseInt64(args[++i]);
      if (!db) return ReplyError(ctx.out, NotAnInteger());
      if (*db < std::numeric_limits<int>::min() || *db > std::numeric_limits<int>::max()) {
        return ReplyError(ctx.out, Status::InvalidArgument(
                                       "value is out of range, value must between -2147483648 "
                                       "and 2147483647"));
      }
      if (*db < 0 || *db >= kNumDatabases) return ReplyError(ctx.out, DbIndexOutOfRange());
      dst_db = static_cast<int>(*db);
    } else {
      return ReplyError(ctx.out, SyntaxError());
    }
  }
  if (ctx.server.cluster() != nullptr && (ctx.client.db != 0 || dst_db != 0)) {
    return ReplyError(ctx.out, CopyDbNotAllowedInCluster());
  }
  if (dst_db == ctx.client.db && args[1] == args[2]) {
    return ReplyError(ctx.out,
                      Status::InvalidArgument("source and destination objects are the same"));
  }
  Result<bool> r = ctx.txn().Copy(ctx.client.db, args[1], dst_db, args[2], replace);
  if (r.ok() && *r) {
    NotifyKeyspaceEvent(kNotifyNew, "new", dst_db, args[2]);
    NotifyKeyspaceEvent(kNotifyGeneric, "copy_to", dst_db, args[2]);
  }
  ReplyBool(ctx, r);
}

void KeysCommand(CommandContext& ctx, Args args) {
  Result<std::vector<std::string>> r = ctx.txn().Keys(ctx.client.db, args[1]);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  ReplyKeys(ctx, *r);
}

// Redis's SCAN cursor rule (strtoul over the whole text): no leading space, digits only after
// an optional sign, within 64 bits; "" is 0 and "-1" wraps to 2^64-1 as in Redis.

// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type] -> [cursor as bulk, [keys...]]
void ScanCommand(CommandContext& ctx, Args args) {
  std::optional<uint64_t> cursor = ParseScanCursor(args[1]);
  if (!cursor) return ReplyError(ctx.out, Status::InvalidArgument("invalid cursor"));
  std::optional<std::string_view> match;
  std::optional<std::string_view> type;
  std::string type_lower;  // Redis compares type names case-insensitively; ours are lower case
  int64_t count = 10;
  for (size_t i = 2; i < args.size(); i += 2) {
    const bool has_value = i + 1 < args.size();
    if (has_value && EqualsIgnoreCase(args[i], "count")) {
      std::optional<int64_t> n = ParseInt64(args[i + 1]);
      if (!n) return ReplyError(ctx.out, NotAnInteger());
      if (*n < 1) return ReplyError(ctx.out, SyntaxError());
      count = *n;
    } else if (has_value && EqualsIgnoreCase(args[i], "match")) {
      match = args[i + 1];
    } else if (has_value && EqualsIgnoreCase(args[i], "type")) {
      type_lower = ToLower(args[i + 1]);
      type = type_lower;
    } else {
      return ReplyError(ctx.out, SyntaxError());
    }
  }
  if (match && *match == "*") match.reset();  // matches everything: skip the matching
  Result<ScanPage> r = ctx.txn().Scan(ctx.client.db, *cursor, match, count, type);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  ctx.out.Array(2);
  ctx.out.Bulk(std::to_string(r->next_cursor));
  ReplyKeys(ctx, r->keys);
}

void RandomKeyCommand(CommandContext& ctx, Args) {
  Result<std::optional<std::string>> r = ctx.txn().RandomKey(ctx.client.db);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  if (r->has_value()) {
    ctx.out.Bulk(**r);
  } else {
    ctx.out.NullBulk();
  }
}

void Add(CommandTable& table, std::string name, int arity, uint32_t flags, int first_key,
         int last_key, Handler handler, std::string summary, std::string since, std::string hint) {
  const KeyRange keys{first_key, last_key, first_key == 0 ? 0 : 1};
  table.Add(MakeSpec("generic", std::move(name), arity, flags, keys, handler, std::move(summary),
                     std::move(since), std::move(hint)));
}

}  // namespace

void RegisterKeyCommands(CommandTable& table) {
  constexpr uint32_t kRoFast = kReadOnly | kFast;
  constexpr uint32_t kWriteFast = kWrite | kFast;
  Add(table, "del", -2, kWrite, 1, -1, DelCommand, "Delete a key", "1.0.0", "key [key ...]");
  Add(table, "unlink", -2, kWriteFast, 1, -1, DelCommand,
      "Delete a key asynchronously in another thread", "4.0.0", "key [key ...]");
  Add(table, "exists", -2, kRoFast, 1, -1, ExistsCommand, "Determine if a key exists", "1.0.0",
      "key [key ...]");
  Add(table, "expire", -3, kWriteFast, 1, 1, ExpireCommand, "Set a key's time to live in seconds",
      "1.0.0", "key seconds [NX|XX|GT|LT]");
  Add(table, "pexpire", -3, kWriteFast, 1, 1, PExpireCommand,
      "Set a key's time to live in milliseconds", "2.6.0", "key milliseconds [NX|XX|GT|LT]");
  Add(table, "expireat", -3, kWriteFast, 1, 1, ExpireAtCommand,
      "Set the expiration for a key as a UNIX timestamp", "1.2.0",
      "key unix-time-seconds [NX|XX|GT|LT]");
  Add(table, "pexpireat", -3, kWriteFast, 1, 1, PExpireAtCommand,
      "Set the expiration for a key as a UNIX timestamp specified in milliseconds", "2.6.0",
      "key unix-time-milliseconds [NX|XX|GT|LT]");
  Add(table, "ttl", 2, kRoFast, 1, 1, TtlCommand, "Get the time to live for a key in seconds",
      "1.0.0", "key");
  Add(table, "pttl", 2, kRoFast, 1, 1, PTtlCommand,
      "Get the time to live for a key in milliseconds", "2.6.0", "key");
  Add(table, "expiretime", 2, kRoFast, 1, 1, ExpireTimeCommand,
      "Get the expiration Unix timestamp for a key", "7.0.0", "key");
  Add(table, "pexpiretime", 2, kRoFast, 1, 1, PExpireTimeCommand,
      "Get the expiration Unix timestamp for a key in milliseconds", "7.0.0", "key");
  Add(table, "persist", 2, kWriteFast, 1, 1, PersistCommand, "Remove the expiration from a key",
      "2.2.0", "key");
  Add(table, "type", 2, kRoFast, 1, 1, TypeCommand, "Determine the type stored at key", "1.0.0",
      "key");
  Add(table, "object", -2, 0, 0, 0, nullptr, "A container for object introspection commands",
      "2.2.3", "subcommand");
  Add(table, "object|encoding", 3, kReadOnly, 2, 2, ObjectEncodingCommand,
      "Inspect the internal encoding of a Redis object", "2.2.3", "key");
  Add(table, "rename", 3, kWrite, 1, 2, RenameCommand, "Rename a key", "1.0.0", "key newkey");
  Add(table, "renamenx", 3, kWriteFast, 1, 2, RenameNxCommand,
      "Rename a key, only if the new key does not exist", "1.0.0", "key newkey");
  Add(table, "copy", -3, kWrite | kDenyOom, 1, 2, CopyCommand, "Copy a key", "6.2.0",
      "source destination [DB destination-db] [REPLACE]");
  Add(table, "keys", 2, kReadOnly, 0, 0, KeysCommand, "Find all keys matching the given pattern",
      "1.0.0", "pattern");
  Add(table, "scan", -2, kReadOnly, 0, 0, ScanCommand, "Incrementally iterate the keys space",
      "2.8.0", "cursor [MATCH pattern] [COUNT count] [TYPE type]");
  Add(table, "randomkey", 1, kReadOnly, 0, 0, RandomKeyCommand,
      "Return a random key from the keyspace", "1.0.0", "");
}

}  // namespace sluice::server
