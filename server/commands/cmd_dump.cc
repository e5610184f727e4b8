// DUMP, RESTORE and RESTORE-ASKING: a key's value as Redis 7.0's DUMP payload and back
// (storage/formats/dump_payload.h), so keys move between Redis and Sluice either way.
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "server/commands/commands.h"
#include "server/core/args.h"
#include "server/core/client_state.h"
#include "server/core/errors.h"
#include "server/core/logging.h"
#include "server/scripting/lua_sha1.h"
#include "sluice/transaction.h"
#include "storage/formats/dump_payload.h"

namespace sluice::server {

namespace {

void DumpCommand(CommandContext& ctx, Args args) {
  Result<std::optional<WholeValue>> r = ctx.txn().ReadWhole(ctx.client.db, args[1]);
  if (!r.ok()) return ReplyError(ctx.out, r.status());
  if (!r->has_value()) return ctx.out.NullBulk();
  ctx.out.Bulk(formats::MakeDumpPayload(**r));
}

// XORs the 40 hex digits of `digest` into `*acc` (digit by digit: the same as XORing the bytes).
void MixDigest(std::string* acc, const std::string& digest) {
  auto value = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  for (size_t i = 0; i < acc->size(); ++i) {
    (*acc)[i] = "0123456789abcdef"[value((*acc)[i]) ^ value(digest[i])];
  }
}

}  // namespace

// DEBUG DIGEST: 40 hex digits summing up the whole dataset, 40 zeros when it is empty; equal
// datasets (a master and its in-sync replica) give equal digests, whatever order their keys
// were written in (each key's SHA1 of db, name, DUMP payload and expiry, XORed). Sluice's own
// digest: the digits differ from redis-server's (docs/server.md, DEBUG).
void DebugDigest(CommandContext& ctx, Args args) {
  if (args.size() != 2) return ReplyError(ctx.out, SyntaxError());
  std::string acc(40, '0');
  for (int db = 0; db < kNumDatabases; ++db) {
    Result<std::vector<std::string>> keys = ctx.txn().Keys(db, "*");
    if (!keys.ok()) return ReplyError(ctx.out, keys.status());
    for (const std::string& key : *keys) {
      Result<std::optional<WholeValue>> v = ctx.txn().ReadWhole(db, key);
      if (!v.ok()) return ReplyError(ctx.out, v.status());
      if (!v->has_value()) continue;
      Result<int64_t> expire = ctx.txn().ExpireTimeMs(db, key);
      if (!expire.ok()) return ReplyError(ctx.out, expire.status());
      std::string item(1, static_cast<char>(db));
      item.append(key).push_back('\0');
      item.append(formats::MakeDumpPayload(**v)).append(std::to_string(*expire));
      MixDigest(&acc, Sha1Hex(item));
    }
  }
  ctx.out.Bulk(acc);
}

// DEBUG DIGEST-VALUE key [key ...]: one digest per key of its value alone (40 zeros for a
// missing key), as Redis replies; Sluice's own digits, as DEBUG DIGEST.
void DebugDigestValue(CommandContext& ctx, Args args) {
  ctx.out.Array(args.size() - 2);
  for (size_t i = 2; i < args.size(); ++i) {
    Result<std::optional<WholeValue>> v = ctx.txn().ReadWhole(ctx.client.db, args[i]);
    if (!v.ok() || !v->has_value()) {
      ctx.out.Bulk(std::string(40, '0'));
      continue;
    }
    ctx.out.Bulk(Sha1Hex(formats::MakeDumpPayload(**v)));
  }
}

namespace {

struct RestoreOptions {
  bool replace = false;
  bool absttl = false;
  // Parsed and checked as Redis does, then unused: Sluice keeps no LRU/LFU data.
  std::optional<int64_t> idle_seconds, frequency;
};

// [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency] after `key ttl payload`, in Redis's
// order of checks (IDLETIME and FREQ exclude each other: the second is a syntax error).
Status ParseRestoreOptions(Args args, RestoreOptions* o) {
  for (size_t i = 4; i < args.size(); ++i) {
    const bool has_value = i + 1 < args.size();
    if (EqualsIgnoreCase(args[i], "replace")) {
      o->replace = true;
    } else if (EqualsIgnoreCase(args[i], "absttl")) {
      o->absttl = true;
    } else if (EqualsIgnoreCase(args[i], "idletime") && has_value && !o->frequency) {
      o->idle_seconds = ParseInt64(args[++i]);
      if (!o->idle_seconds) return NotAnInteger();
      if (*o->idle_seconds < 0) return InvalidIdleTime();
    } else if (EqualsIgnoreCase(args[i], "freq") && has_value && !o->idle_seconds) {
      o->frequency = ParseInt64(args[++i]);
      if (!o->frequency) return NotAnInteger();
      if (*o->frequency < 0 || *o->frequency > 255) return InvalidFreq();
    } else {
      return SyntaxError();
    }
  }
  return Status::Ok();
}

// RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME s] [FREQ f]. Checks in Redis's order:
// options, an existing key without REPLACE (BUSYKEY), the TTL, the payload's footer, the
// object. Nothing is written unless every check passed. A TTL already in the past only deletes
// the old key (with REPLACE) and says OK.
void RestoreCommand(CommandContext& ctx, Args args) {
  RestoreOptions o;
  if (Status s = ParseRestoreOptions(args, &o); !s.ok()) return ReplyError(ctx.out, s);
  const int db = ctx.client.db;
  const std::string_view keys[] = {args[1]};
  if (!o.replace) {
    Result<int64_t> exists = ctx.txn().Exists(db, keys);
    if (!exists.ok()) return ReplyError(ctx.out, exists.status());
    if (*exists > 0) return ReplyError(ctx.out, BusyKey());
  }
  std::optional<int64_t> ttl = ParseInt64(args[2]);
  if (!ttl) return ReplyError(ctx.out, NotAnInteger());
  if (*ttl < 0) return ReplyError(ctx.out, InvalidTtlValue());
  WholeValue value;
  Status why;
  switch (formats::ParseDumpPayload(args[3], &value, &why)) {
    case formats::PayloadCheck::kVersionOrChecksum:
      return ReplyError(ctx.out, BadDumpPayload());
    case formats::PayloadCheck::kBadFormat:
      LogError("RESTORE refused a payload: " + why.message());
      return ReplyError(ctx.out, BadDataFormat());
    case formats::PayloadCheck::kOk:
      break;
  }
  int64_t at_ms = *ttl;
  const int64_t now = ctx.txn().NowMs();
  // A relative TTL past int64 wraps in Redis to a time long gone: the key is expired at once.
  if (at_ms != 0 && !o.absttl)
    at_ms = at_ms > std::numeric_limits<int64_t>::max() - now ? std::numeric_limits<int64_t>::min()
                                                              : at_ms + now;
  if (at_ms != 0 && at_ms <= now) {
    if (o.replace) {
      Result<int64_t> d = ctx.txn().Del(db, keys);
      if (!d.ok()) return ReplyError(ctx.out, d.status());
    }
    return ctx.out.Simple("OK");
  }
  Status s = ctx.txn().WriteWhole(db, args[1], value, at_ms);
  if (!s.ok()) return ReplyError(ctx.out, s);
  ctx.out.Simple("OK");
}

void Add(CommandTable& table, std::string name, int arity, uint32_t flags, int first_key,
         int last_key, Handler handler, std::string summary, std::string since, std::string hint) {
  const KeyRange keys{first_key, last_key, 1};
  table.Add(MakeSpec("generic", std::move(name), arity, flags, keys, handler, std::move(summary),
                     std::move(since), std::move(hint)));
}

}  // namespace

void RegisterDumpCommands(CommandTable& table) {
  Add(table, "dump", 2, kReadOnly, 1, 1, DumpCommand,
      "Return a serialized version of the value stored at the specified key.", "2.6.0", "key");
  const char* restore_hint =
      "key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]";
  Add(table, "restore", -4, kWrite | kDenyOom, 1, 1, RestoreCommand,
      "Create a key using the provided serialized value, previously obtained using DUMP.", "2.6.0",
      restore_hint);
  // The cluster's resharding form (a slot being imported); the same command until Sluice has a
  // cluster mode.
  Add(table, "restore-asking", -4, kWrite | kDenyOom | kAsking, 1, 1, RestoreCommand,
      "An internal command for migrating keys in a cluster", "3.0.0", restore_hint);
  RegisterMigrateCommand(table);
}

}  // namespace sluice::server
