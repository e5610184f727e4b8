// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE] [AUTH password |
// AUTH2 username password] [KEYS key [key ...]]: moves keys to another Redis-protocol server by
// sending it RESTORE commands carrying DUMP payloads (Redis 7.0's behaviour and texts).
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/commands/commands.h"
#include "server/commands/migrate_cache.h"
#include "server/commands/migrate_link.h"
#include "server/core/args.h"
#include "server/core/client_state.h"
#include "server/core/errors.h"
#include "server/core/server_state.h"
#include "sluice/transaction.h"
#include "storage/formats/dump_payload.h"

namespace sluice::server {

namespace {

struct MigrateArgs {
  bool copy = false, replace = false;
  std::optional<std::string_view> user, password;
  size_t first_key = 3, num_keys = 1;
  int64_t timeout_ms = 0, db = 0;
};

// Redis's order: the options, then the timeout and the database index.
Status ParseMigrate(Args args, MigrateArgs* m) {
  for (size_t j = 6; j < args.size(); ++j) {
    const size_t more = args.size() - j - 1;
    if (EqualsIgnoreCase(args[j], "copy")) {
      m->copy = true;
    } else if (EqualsIgnoreCase(args[j], "replace")) {
      m->replace = true;
    } else if (EqualsIgnoreCase(args[j], "auth") && more >= 1) {
      m->password = args[++j];
    } else if (EqualsIgnoreCase(args[j], "auth2") && more >= 2) {
      m->user = args[++j];
      m->password = args[++j];
    } else if (EqualsIgnoreCase(args[j], "keys")) {
      if (!args[3].empty()) return MigrateKeysNeedEmptyKey();
      m->first_key = j + 1;
      m->num_keys = more;
      break;
    } else {
      return SyntaxError();
    }
  }
  std::optional<int64_t> timeout = ParseInt64(args[5]);
  std::optional<int64_t> db = ParseInt64(args[4]);
  if (!timeout || !db) return NotAnInteger();
  m->timeout_ms = *timeout <= 0 ? 1000 : std::min<int64_t>(*timeout, 1 << 30);
  m->db = *db;
  return Status::Ok();
}

// The keys MIGRATE reads and deletes: argument 3, or the ones after KEYS when it is empty
// (skipping AUTH/AUTH2 values, which may spell "keys").
void MigrateKeys(Args args, std::vector<int>* positions) {
  if (!args[3].empty()) return positions->push_back(3);
  for (size_t i = 6; i < args.size(); ++i) {
    if (EqualsIgnoreCase(args[i], "auth")) {
      ++i;
    } else if (EqualsIgnoreCase(args[i], "auth2")) {
      i += 2;
    } else if (EqualsIgnoreCase(args[i], "keys")) {
      for (size_t k = i + 1; k < args.size(); ++k) positions->push_back(static_cast<int>(k));
      return;
    }
  }
}

struct Outgoing {
  std::string_view key;
  std::string payload;
  int64_t ttl_ms = 0;
};

// The keys that exist, with their payloads and remaining TTLs (already expired ones skipped).
Status CollectKeys(CommandContext& ctx, Args args, const MigrateArgs& m,
                   std::vector<Outgoing>* out) {
  for (size_t i = m.first_key; i < m.first_key + m.num_keys; ++i) {
    Result<std::optional<WholeValue>> value = ctx.txn().ReadWhole(ctx.client.db, args[i]);
    if (!value.ok()) return value.status();
    if (!value->has_value()) continue;
    Result<int64_t> pttl = ctx.txn().PTtl(ctx.client.db, args[i]);
    if (!pttl.ok()) return pttl.status();
    out->push_back({args[i], formats::MakeDumpPayload(**value), *pttl < 0 ? 0 : *pttl});
    if (*pttl >= 0 && out->back().ttl_ms < 1) out->back().ttl_ms = 1;
  }
  return Status::Ok();
}

// The commands of one attempt: AUTH when given (every time, as Redis), SELECT only when the
// connection's selected database differs, then a RESTORE per key (RESTORE-ASKING in cluster
// mode, as Redis: the target serves it on a slot it is importing, without a redirect).
std::string BuildCommands(const MigrateArgs& m, bool select, bool cluster,
                          const std::vector<Outgoing>& keys) {
  std::string out;
  if (m.password && m.user) AppendCommand({"AUTH", *m.user, *m.password}, &out);
  if (m.password && !m.user) AppendCommand({"AUTH", *m.password}, &out);
  const std::string db = std::to_string(m.db);
  if (select) AppendCommand({"SELECT", db}, &out);
  for (const Outgoing& k : keys) {
    const std::string ttl = std::to_string(k.ttl_ms);
    std::vector<std::string_view> restore = {cluster ? "RESTORE-ASKING" : "RESTORE", k.key, ttl,
                                             k.payload};
    if (m.replace) restore.push_back("REPLACE");
    AppendCommand(restore, &out);
  }
  return out;
}

// One attempt over one connection. A socket error before the target answered anything about a
// key sets *retry (when the step did not time out): the cached connection may have been closed
// by the target since, and Redis then tries once more on a fresh one.
void MigrateOnce(CommandContext& ctx, const MigrateArgs& m, const std::vector<Outgoing>& keys,
                 MigrateCache::Lease& lease, bool* retry) {
  *retry = false;
  const int timeout = static_cast<int>(m.timeout_ms);
  const bool select = lease.last_db != m.db;
  MigrateLink& link = lease.link;
  if (!link.WriteAll(BuildCommands(m, select, ctx.server.cluster() != nullptr, keys), timeout)) {
    *retry = !link.timed_out();
    link.Close();
    return ReplyError(ctx.out, MigrateIoError("writing to target instance"));
  }
  std::string auth_reply, select_reply, reply;
  if ((m.password && !link.ReadLine(&auth_reply, timeout)) ||
      (select && !link.ReadLine(&select_reply, timeout))) {
    *retry = !link.timed_out();
    link.Close();
    return ReplyError(ctx.out, MigrateIoError("reading to target instance"));
  }
  if (select && !select_reply.starts_with('-')) lease.last_db = m.db;
  // As Redis: the first error (AUTH's, SELECT's, then a key's) is the reply; keys the target
  // took are deleted here (without COPY) whatever happened to the others.
  std::optional<std::string> target_error;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!link.ReadLine(&reply, timeout)) {
      *retry = i == 0 && !target_error && !link.timed_out();
      link.Close();
      if (target_error) break;
      return ReplyError(ctx.out, MigrateIoError("reading to target instance"));
    }
    const bool failed =
        auth_reply.starts_with('-') || select_reply.starts_with('-') || reply.starts_with('-');
    if (failed && !target_error) {
      const std::string& e = auth_reply.starts_with('-')     ? auth_reply
                             : select_reply.starts_with('-') ? select_reply
                                                             : reply;
      target_error = e.substr(1);
    }
    if (!failed && !m.copy) {
      const std::string_view one[] = {keys[i].key};
      if (Result<int64_t> d = ctx.txn().Del(ctx.client.db, one); !d.ok()) {
        return ReplyError(ctx.out, d.status());
      }
    }
  }
  if (target_error) return ReplyError(ctx.out, TargetReplied(*target_error));
  ctx.out.Simple("OK");
}

void MigrateCommand(CommandContext& ctx, Args args) {
  MigrateArgs m;
  if (Status s = ParseMigrate(args, &m); !s.ok()) return ReplyError(ctx.out, s);
  std::vector<Outgoing> keys;
  if (Status s = CollectKeys(ctx, args, m, &keys); !s.ok()) return ReplyError(ctx.out, s);
  if (keys.empty()) return ctx.out.Simple("NOKEY");
  const std::string host(args[1]), port(args[2]);
  for (bool may_retry = true;; may_retry = false) {
    MigrateCache::Lease lease;
    if (!TheMigrateCache().Take(host, port, static_cast<int>(m.timeout_ms), &lease)) {
      return ReplyError(ctx.out, MigrateIoError("connecting to the client"));
    }
    // A retried attempt's error reply is taken back.
    const size_t mark = ctx.out.buffer()->size();
    bool retry = false;
    MigrateOnce(ctx, m, keys, lease, &retry);
    if (retry && may_retry) {
      ctx.out.buffer()->resize(mark);
      continue;
    }
    TheMigrateCache().Return(std::move(lease));
    return;
  }
}

}  // namespace

void RegisterMigrateCommand(CommandTable& table) {
  CommandSpec spec =
      MakeSpec("generic", "migrate", -6, kWrite, {3, 3, 1}, MigrateCommand,
               "Atomically transfer a key from a Redis instance to another one.", "2.6.0",
               "host port key|\"\" destination-db timeout [COPY] [REPLACE] [AUTH password | AUTH2 "
               "username password] [KEYS key [key ...]]");
  spec.find_keys = MigrateKeys;  // COMMAND INFO shows Redis's 3 3 1 beside movablekeys
  table.Add(std::move(spec));
}

}  // namespace sluice::server
