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

// The effects of the commands of the unit running on this thread (EXEC's, a script's), recorded
// by Step once the unit writes a stream (recording): Capture sends them instead of the state of
// its keys.
struct StepLog {
  bool recording = false;
  std::vector<Staged> effects;
  void Clear() {
    recording = false;
    effects.clear();
  }
};
thread_local StepLog t_steps;

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

// A stream command whose handler records its effect (PropagateAs) whenever it wrote: without
// one it wrote nothing.
bool EffectRecorded(const CommandSpec& spec) {
  return spec.name == "xadd" || spec.name == "xtrim" || spec.name == "xreadgroup" ||
         spec.name == "xclaim" || spec.name == "xautoclaim";
}

bool IsStreamWrite(const CommandSpec& spec) {
  return spec.group == "stream" && (spec.flags & kWrite) != 0;
}

// Key commands that may leave a stream (moved, copied, restored, its TTL changed).
bool MayLeaveStream(const CommandSpec& spec) {
  for (const char* n : {"rename", "renamenx", "copy", "move", "restore", "expire", "pexpire",
                        "expireat", "pexpireat", "persist"}) {
    if (spec.name == n) return true;
  }
  return false;
}

void DeclaredKeys(const CommandSpec& spec, Args args, std::vector<std::string_view>* keys) {
  thread_local std::vector<int> positions;
  positions.clear();
  keys->clear();
  CommandKeyPositions(spec, args, &positions);
  for (int p : positions) keys->push_back(args[static_cast<size_t>(p)]);
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

// EXPIRE's family: the key's absolute expiry (or PERSIST, or DEL when it is gone).
void StageExpiry(Store::Transaction& unit, int db, std::string_view key) {
  std::string resp;
  auto at = unit.ExpireTimeMs(db, key);
  if (!at.ok()) return;
  if (*at == -2) {
    AppendCommand({"DEL", key}, &resp);
  } else if (*at == -1) {
    AppendCommand({"PERSIST", key}, &resp);
  } else {
    AppendCommand({"PEXPIREAT", key, std::to_string(*at)}, &resp);
  }
  Stage(db, std::move(resp));
}

// The commands a handler recorded (PropagateAs), staged in `db`; clears them.
void StageOverride(int db) {
  for (const std::vector<std::string>& argv : t_effect_override.commands) {
    std::string resp;
    resp.append("*" + std::to_string(argv.size()) + "\r\n");
    for (const std::string& a : argv) {
      resp.append("$" + std::to_string(a.size()) + "\r\n");
      resp.append(a);
      resp.append("\r\n");
    }
    Stage(db, std::move(resp));
  }
  t_effect_override.Clear();
}

// Wraps what was staged from `start` in MULTI ... EXEC when it is more than one command.
void WrapFrom(size_t start) {
  if (t_staged.size() - start <= 1) return;
  std::string multi, exec;
  AppendCommand({"MULTI"}, &multi);
  AppendCommand({"EXEC"}, &exec);
  t_staged.insert(t_staged.begin() + static_cast<std::ptrdiff_t>(start), Staged{-1, multi});
  t_staged.push_back(Staged{-1, exec});
}

// One command's effect inside a recording unit, staged (t_staged) for the caller to move.
void StageStepEffect(CommandContext& ctx, Store::Transaction& unit, const CommandSpec& spec,
                     Args args) {
  const int db = ctx.client.db;
  if (t_effect_override.set) return StageOverride(db);
  std::string resp;
  if (IsStreamWrite(spec)) {
    if (EffectRecorded(spec)) return;  // it wrote nothing
    AppendCommandArgs(args, &resp);
    return Stage(db, std::move(resp));
  }
  if (!(spec.flags & kWrite)) return;
  if (Flushes(spec) || Verbatim(spec, args)) {
    AppendCommandArgs(args, &resp);
    return Stage(db, std::move(resp));
  }
  thread_local std::vector<std::string_view> keys;
  DeclaredKeys(spec, args, &keys);
  if (ExpiryOnly(spec)) {
    for (std::string_view k : keys) StageExpiry(unit, db, k);
    return;
  }
  const size_t start = t_staged.size();
  for (std::string_view k : keys) {
    if (!StageKeyState(unit, db, k)) {  // a stream (RENAME/COPY/RESTORE of one): as given
      t_staged.resize(start);
      AppendCommandArgs(args, &resp);
      return Stage(db, std::move(resp));
    }
  }
}

}  // namespace

void Replication::Step(CommandContext& ctx, Store::Transaction& unit, const CommandSpec& spec,
                       Args args) {
  if (!propagating_.load(std::memory_order_acquire) ||
      ctx.client.repl_kind.load(std::memory_order_relaxed) == ClientState::kMasterLink ||
      (spec.flags & kScriptUnit) || !(spec.flags & kWrite)) {
    return t_effect_override.Clear();  // reads send nothing; a script's commands stepped
  }
  thread_local std::vector<std::string_view> keys;
  if (!t_steps.recording) {
    bool trigger = IsStreamWrite(spec) || t_effect_override.set;
    if (!trigger && MayLeaveStream(spec)) {
      DeclaredKeys(spec, args, &keys);
      for (std::string_view k : keys) {
        auto type = unit.Type(ctx.client.db, k);
        if (type.ok() && type->has_value() && **type == ValueKind::kStream) trigger = true;
      }
    }
    if (!trigger) return;
    // From here on, command by command. What the unit wrote before this command goes first as
    // the state it left (none of it is a stream: only a command that triggers can leave one),
    // except this command's own keys, which its effect covers.
    t_steps.recording = true;
    DeclaredKeys(spec, args, &keys);
    thread_local std::vector<KeyRef> written;
    written.clear();
    uint32_t flushed = 0;
    unit.WrittenKeys(&written, &flushed);
    const size_t start = t_staged.size();
    for (const KeyRef& k : written) {
      bool own = k.db == ctx.client.db && std::find(keys.begin(), keys.end(), k.key) != keys.end();
      if (!own) StageKeyState(unit, k.db, k.key);
    }
    for (size_t i = start; i < t_staged.size(); ++i) {
      t_steps.effects.push_back(std::move(t_staged[i]));
    }
    t_staged.resize(start);
  }
  const size_t start = t_staged.size();
  StageStepEffect(ctx, unit, spec, args);
  for (size_t i = start; i < t_staged.size(); ++i) {
    t_steps.effects.push_back(std::move(t_staged[i]));
  }
  t_staged.resize(start);
}

void Replication::AbandonSteps() {
  t_steps.Clear();
  t_effect_override.Clear();
}

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
  if (!propagating_.load(std::memory_order_acquire) ||
      ctx.client.repl_kind.load(std::memory_order_relaxed) == ClientState::kMasterLink) {
    t_steps.Clear();
    return t_effect_override.Clear();
  }
  const size_t start = t_staged.size();
  if (t_steps.recording) {
    // A unit that wrote a stream: its commands' effects, in MULTI ... EXEC.
    for (Staged& s : t_steps.effects) t_staged.push_back(std::move(s));
    t_steps.Clear();
    t_effect_override.Clear();
    return WrapFrom(start);
  }
  t_steps.Clear();
  thread_local std::vector<KeyRef> written;
  written.clear();
  uint32_t flushed = 0;
  unit.WrittenKeys(&written, &flushed);
  if (written.empty() && flushed == 0) {  // wrote nothing: propagates nothing
    return t_effect_override.Clear();
  }
  if (t_effect_override.set) {  // XADD *, MAXLEN ~, XREADGROUP...: what the handler recorded
    StageOverride(ctx.client.db);
    return WrapFrom(start);
  }
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
    for (const auto& [db, key] : keys) StageExpiry(unit, db, key);
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
  WrapFrom(start);
}

void Replication::PropagateAsGiven(Args args) {
  if (!propagating_.load(std::memory_order_acquire)) return;
  std::string resp;
  AppendCommandArgs(args, &resp);
  std::lock_guard lock(mu_);
  if (backlog_ == nullptr || is_replica_.load(std::memory_order_relaxed)) return;
  EmitLocked(-1, resp);
}

void Replication::PropagateCommands(const std::vector<std::vector<std::string>>& commands) {
  if (!propagating_.load(std::memory_order_acquire) || commands.empty()) return;
  std::string resp;
  if (commands.size() > 1) AppendCommand({"MULTI"}, &resp);
  for (const std::vector<std::string>& argv : commands) {
    const std::vector<std::string_view> views(argv.begin(), argv.end());
    AppendCommandArgs(views, &resp);
  }
  if (commands.size() > 1) AppendCommand({"EXEC"}, &resp);
  std::lock_guard lock(mu_);
  if (backlog_ == nullptr || is_replica_.load(std::memory_order_relaxed)) return;
  EmitLocked(-1, resp);
}

void Replication::DropCaptured() {
  t_staged.clear();
  t_steps.Clear();
  t_effect_override.Clear();
}

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
  if (is_replica_.load(std::memory_order_acquire) &&
      !serve_stale_.load(std::memory_order_relaxed) && !link_up_.load() && !(spec.flags & kStale)) {
    return MasterDown();
  }
  if (spec.flags & (kWrite | kWritesLibraries)) return AdmitWrite(ctx);
  return Status::Ok();
}

Status Replication::AdmitWrite(const CommandContext& ctx) {
  if (ctx.client.repl_kind.load(std::memory_order_relaxed) == ClientState::kMasterLink) {
    return Status::Ok();
  }
  if (is_replica_.load(std::memory_order_acquire)) {
    return read_only_.load(std::memory_order_relaxed) ? ReadOnlyReplica() : Status::Ok();
  }
  const int64_t need = min_replicas_.load(std::memory_order_relaxed);
  if (need > 0 && good_replicas_.load() < need) return NoReplicas();
  return Status::Ok();
}

}  // namespace sluice::server::replication
