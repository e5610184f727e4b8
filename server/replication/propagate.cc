// The primary's stream: a unit's effect staged before its commit (Capture), appended once it is
// applied (OnCommit); expired keys as DEL (OnExpired); the gate's checks (Admit). The design is
// in replication.h's comment and docs/replication.md.
#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "server/core/args.h"
#include "server/core/errors.h"
#include "server/replication/replication.h"
#include "sluice/transaction.h"
#include "storage/formats/dump_payload.h"

namespace sluice::server::replication {

namespace {

// One staged command: its db (-1: MULTI/EXEC, no SELECT) and its RESP bytes.
struct Staged {
  int db;
  std::string resp;
};
thread_local std::vector<Staged> t_staged;
thread_local int64_t t_written_offset = 0;  // TakeWrittenOffset

// Commands whose argv does the same on a replica holding the same data (no time, no randomness,
// no reply-dependent choice): they propagate as given.
bool Verbatim(const CommandSpec& spec, Args args) {
  static const std::unordered_set<std::string_view> names = {"mset",
                                                             "msetnx",
                                                             "del",
                                                             "unlink",
                                                             "hset",
                                                             "hmset",
                                                             "hsetnx",
                                                             "hdel",
                                                             "hincrby",
                                                             "sadd",
                                                             "srem",
                                                             "smove",
                                                             "zadd",
                                                             "zrem",
                                                             "zincrby",
                                                             "lpush",
                                                             "rpush",
                                                             "lpushx",
                                                             "rpushx",
                                                             "lpop",
                                                             "rpop",
                                                             "lrem",
                                                             "lset",
                                                             "ltrim",
                                                             "linsert",
                                                             "lmove",
                                                             "rpoplpush",
                                                             "incr",
                                                             "decr",
                                                             "incrby",
                                                             "decrby",
                                                             "append",
                                                             "setrange",
                                                             "setbit",
                                                             "rename",
                                                             "renamenx",
                                                             "getset",
                                                             "getdel",
                                                             "setnx",
                                                             "pfadd",
                                                             "zremrangebyrank",
                                                             "zremrangebyscore",
                                                             "zremrangebylex",
                                                             "sinterstore",
                                                             "sunionstore",
                                                             "sdiffstore",
                                                             "bitop",
                                                             "copy",
                                                             "move",
                                                             "hdel",
                                                             "zunionstore",
                                                             "zinterstore",
                                                             "zdiffstore"};
  if (spec.name == "set") {
    // SET k v [NX|XX] [GET] [KEEPTTL] [EXAT|PXAT t]: absolute or no expiry.
    for (size_t i = 3; i < args.size(); ++i) {
      if (EqualsIgnoreCase(args[i], "ex") || EqualsIgnoreCase(args[i], "px")) return false;
    }
    return true;
  }
  return names.count(spec.name) > 0;
}

bool ExpiryOnly(const CommandSpec& spec) {
  return spec.name == "expire" || spec.name == "pexpire" || spec.name == "expireat" ||
         spec.name == "pexpireat" || spec.name == "persist";
}

bool Flushes(const CommandSpec& spec) {
  return spec.name == "flushdb" || spec.name == "flushall" || spec.name == "swapdb";
}

void Stage(int db, std::string resp) { t_staged.push_back(Staged{db, std::move(resp)}); }

// The state of one key the unit wrote, as commands (RESTORE / SLUICE.SETENTRY / DEL). False
// when the key's kind has no such form (a stream): the caller falls back to the argv.
bool StageKeyState(Store::Transaction& unit, int db, std::string_view key) {
  std::string resp;
  Result<std::optional<ValueKind>> type = unit.Type(db, key);
  if (!type.ok()) return true;  // a read error: nothing sensible to send
  if (!type->has_value()) {
    AppendCommand({"DEL", key}, &resp);
    Stage(db, std::move(resp));
    return true;
  }
  const ValueKind kind = **type;
  if (kind == ValueKind::kStream) return false;
  if (kind == ValueKind::kLeaky || kind == ValueKind::kSliding || kind == ValueKind::kConc) {
    auto e = unit.ReadEntry(db, key);
    if (!e.ok() || !e->has_value()) return true;
    AppendCommand({"SLUICE.SETENTRY", key, std::to_string(static_cast<int>((*e)->kind)),
                   std::to_string((*e)->expire_at_ms), (*e)->payload},
                  &resp);
    Stage(db, std::move(resp));
    return true;
  }
  auto whole = unit.ReadWhole(db, key);
  if (!whole.ok() || !whole->has_value()) return true;
  auto at = unit.ExpireTimeMs(db, key);
  const int64_t expire_at = at.ok() && *at > 0 ? *at : 0;
  AppendCommand({"RESTORE", key, std::to_string(expire_at), formats::MakeDumpPayload(**whole),
                 "REPLACE", "ABSTTL"},
                &resp);
  Stage(db, std::move(resp));
  return true;
}

}  // namespace

void AppendCommand(std::initializer_list<std::string_view> args, std::string* out) {
  out->append("*" + std::to_string(args.size()) + "\r\n");
  for (std::string_view a : args) {
    out->append("$" + std::to_string(a.size()) + "\r\n");
    out->append(a);
    out->append("\r\n");
  }
}

void AppendCommandArgs(Args args, std::string* out) {
  out->append("*" + std::to_string(args.size()) + "\r\n");
  for (std::string_view a : args) {
    out->append("$" + std::to_string(a.size()) + "\r\n");
    out->append(a);
    out->append("\r\n");
  }
}

void Replication::Capture(CommandContext& ctx, Store::Transaction& unit, const CommandSpec& spec,
                          Args args) {
  if (!propagating_.load(std::memory_order_acquire)) return;
  if (ctx.client.repl_kind.load(std::memory_order_relaxed) == ClientState::kMasterLink) return;
  thread_local std::vector<KeyRef> written;
  written.clear();
  uint32_t flushed = 0;
  unit.WrittenKeys(&written, &flushed);
  if (written.empty() && flushed == 0) return;  // wrote nothing: propagates nothing
  const size_t start = t_staged.size();
  if (Flushes(spec)) {
    std::string resp;
    AppendCommandArgs(args, &resp);
    Stage(ctx.client.db, std::move(resp));
    return;
  }
  if (!args.empty() && Verbatim(spec, args)) {
    std::string resp;
    AppendCommandArgs(args, &resp);
    Stage(ctx.client.db, std::move(resp));
    return;
  }
  // Distinct keys, in first-write order.
  thread_local std::vector<std::pair<int, std::string>> keys;
  keys.clear();
  for (const KeyRef& k : written) {
    bool seen = false;
    for (const auto& [db, key] : keys) {
      if (db == k.db && key == k.key) {
        seen = true;
        break;
      }
    }
    if (!seen) keys.emplace_back(k.db, std::string(k.key));
  }
  bool fallback = false;
  if (ExpiryOnly(spec)) {
    for (const auto& [db, key] : keys) {
      std::string resp;
      auto at = unit.ExpireTimeMs(db, key);
      if (!at.ok()) continue;
      if (*at == -2) {
        AppendCommand({"DEL", key}, &resp);
      } else if (*at == -1) {
        AppendCommand({"PERSIST", key}, &resp);
      } else {
        AppendCommand({"PEXPIREAT", key, std::to_string(*at)}, &resp);
      }
      Stage(db, std::move(resp));
    }
  } else {
    for (const auto& [db, key] : keys) {
      if (!StageKeyState(unit, db, key)) fallback = true;
    }
  }
  if (fallback && !args.empty()) {
    // A stream has no whole form: the command itself (exact for deterministic stream commands;
    // XADD * and the like may differ on the replica: docs/replication.md's limits).
    t_staged.resize(start);
    std::string resp;
    AppendCommandArgs(args, &resp);
    Stage(ctx.client.db, std::move(resp));
    return;
  }
  if (t_staged.size() - start > 1) {
    std::string multi, exec;
    AppendCommand({"MULTI"}, &multi);
    AppendCommand({"EXEC"}, &exec);
    t_staged.insert(t_staged.begin() + static_cast<std::ptrdiff_t>(start), Staged{-1, multi});
    t_staged.push_back(Staged{-1, exec});
  }
}

void Replication::DropCaptured() { t_staged.clear(); }

int64_t Replication::TakeWrittenOffset() {
  const int64_t offset = t_written_offset;
  t_written_offset = 0;
  return offset;
}

void Replication::WhenAcked(int64_t offset, std::function<void()> done) {
  std::vector<std::function<void()>> ready;
  {
    std::lock_guard lock(mu_);
    ack_waiters_.push_back(AckWaiter{
        offset, ServerState::RealNowMs() + ack_timeout_ms_.load(std::memory_order_relaxed),
        std::move(done)});
    TakeReadyWaitersLocked(0, &ready);
  }
  for (auto& fn : ready) fn();
}

void Replication::TakeReadyWaitersLocked(int64_t now_ms,
                                         std::vector<std::function<void()>>* ready) {
  const int64_t need = ack_writes_.load(std::memory_order_relaxed);
  for (size_t i = 0; i < ack_waiters_.size();) {
    AckWaiter& w = ack_waiters_[i];
    int64_t acked = 0;
    for (auto& r : replicas_) {
      if (r->state == ReplicaEntry::State::kOnline && r->ack_offset >= w.offset) ++acked;
    }
    if (acked >= need || is_replica_.load() || (now_ms > 0 && now_ms >= w.deadline_ms)) {
      ready->push_back(std::move(w.done));
      ack_waiters_.erase(ack_waiters_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
}

void Replication::OnCommit(std::span<const KeyRef>, uint32_t) {
  if (t_staged.empty()) return;
  std::lock_guard lock(mu_);
  if (backlog_ != nullptr && !is_replica_.load(std::memory_order_relaxed)) {
    for (const Staged& s : t_staged) EmitLocked(s.db, s.resp);
    if (ack_writes_.load(std::memory_order_relaxed) > 0) t_written_offset = backlog_->offset();
  }
  t_staged.clear();
}

void Replication::OnExpired(std::span<const KeyRef> expired) {
  if (!propagating_.load(std::memory_order_acquire) || expired.empty()) return;
  std::lock_guard lock(mu_);
  if (backlog_ == nullptr || is_replica_.load(std::memory_order_relaxed)) return;
  std::string resp;
  for (const KeyRef& k : expired) {
    resp.clear();
    AppendCommand({"DEL", k.key}, &resp);
    EmitLocked(k.db, resp);
  }
}

void Replication::EmitLocked(int db, std::string_view command) {
  if (db >= 0 && db != last_db_) {
    std::string select;
    AppendCommand({"SELECT", std::to_string(db)}, &select);
    AppendLocked(select);
    last_db_ = db;
  }
  AppendLocked(command);
}

Status Replication::Admit(const CommandContext& ctx, const CommandSpec& spec) {
  if (ctx.client.repl_kind.load(std::memory_order_relaxed) == ClientState::kMasterLink) {
    return Status::Ok();
  }
  if (is_replica_.load(std::memory_order_acquire)) {
    if (!serve_stale_.load(std::memory_order_relaxed) && !link_up_.load() &&
        !(spec.flags & kStale)) {
      return MasterDown();
    }
    if ((spec.flags & kWrite) && read_only_.load(std::memory_order_relaxed)) {
      return ReadOnlyReplica();
    }
    return Status::Ok();
  }
  const int64_t need = min_replicas_.load(std::memory_order_relaxed);
  if (need > 0 && (spec.flags & kWrite) && good_replicas_.load() < need) return NoReplicas();
  return Status::Ok();
}

}  // namespace sluice::server::replication
