#include "server/core/blocking.h"

#include <cmath>
#include <iterator>
#include <string>
#include <vector>

#include "server/core/args.h"
#include "server/core/blocked_command.h"
#include "server/core/client_state.h"
#include "server/core/errors.h"

namespace sluice::server {

namespace {

std::string Slot(int db, std::string_view key) {
  std::string slot(1, static_cast<char>(db));
  slot.append(key);
  return slot;
}

// Longer waits are for ever (no timer): 100 years, far below steady_clock's range.
constexpr int64_t kForeverMs = int64_t{100} * 365 * 24 * 3600 * 1000;

}  // namespace

// ---- BlockingRegistry

void BlockingRegistry::Park(ClientState* client, int db, std::span<const std::string_view> keys,
                            WakeFn wake) {
  std::lock_guard<std::mutex> l(mu_);
  std::unique_ptr<Waiter>& w = by_client_[client->id];
  if (w) {  // parking again after a wake: same keys, same places; the woken key's chain ends
    const bool was_woken = w->woken;
    w->woken = false;
    w->woken_for.clear();
    w->wake = std::move(wake);
    if (was_woken) KickPending();
    return;
  }
  w = std::make_unique<Waiter>();
  w->client = client;
  w->wake = std::move(wake);
  for (std::string_view key : keys) {
    std::string slot = Slot(db, key);
    bool seen = false;  // BLPOP k k: one place
    for (const Place& p : w->places) seen = seen || p.slot == slot;
    if (seen) continue;
    Queue& queue = by_key_[slot];
    queue.push_back(w.get());
    w->places.push_back(Place{std::move(slot), std::prev(queue.end())});
  }
  count_.fetch_add(1, std::memory_order_relaxed);
}

void BlockingRegistry::Kick(const std::string& slot) {
  auto q = by_key_.find(slot);
  if (q == by_key_.end()) return;
  for (const Waiter* w : q->second) {
    if (w->woken && w->woken_for == slot) return;  // its chain runs: it passes the wake on
  }
  Waiter* first = q->second.front();
  if (first->woken) {  // busy for another key: this key's turn comes when it is done
    for (const std::string& p : pending_) {
      if (p == slot) return;
    }
    pending_.push_back(slot);
    return;
  }
  first->woken = true;
  first->woken_for = slot;
  first->wake(BlockEvent::kRetry);
}

void BlockingRegistry::KickPending() {
  if (pending_.empty()) return;
  std::vector<std::string> pending;
  pending.swap(pending_);
  for (const std::string& slot : pending) Kick(slot);
}

std::string BlockingRegistry::WokenKey(const ClientState* client) {
  std::lock_guard<std::mutex> l(mu_);
  auto found = by_client_.find(client->id);
  if (found == by_client_.end() || !found->second->woken) return {};
  const std::string& slot = found->second->woken_for;
  return slot.empty() ? std::string() : slot.substr(1);
}

void BlockingRegistry::RemoveLocked(uint64_t id) {
  auto found = by_client_.find(id);
  if (found == by_client_.end()) return;
  std::unique_ptr<Waiter> w = std::move(found->second);
  by_client_.erase(found);
  for (Place& p : w->places) {
    auto q = by_key_.find(p.slot);
    q->second.erase(p.it);
    if (q->second.empty()) by_key_.erase(q);
  }
  count_.fetch_sub(1, std::memory_order_relaxed);
  if (!w->woken) return;
  // The wake it had goes on to the next waiter of that key (the element may still be there),
  // then the keys that waited for this waiter get their turn.
  if (!w->woken_for.empty()) Kick(w->woken_for);
  KickPending();
}

void BlockingRegistry::Remove(ClientState* client) {
  std::lock_guard<std::mutex> l(mu_);
  RemoveLocked(client->id);
}

bool BlockingRegistry::Unblock(uint64_t client_id, BlockEvent how) {
  std::lock_guard<std::mutex> l(mu_);
  auto found = by_client_.find(client_id);
  if (found == by_client_.end()) return false;
  found->second->wake(how);
  RemoveLocked(client_id);
  return true;
}

void BlockingRegistry::OnCommit(std::span<const KeyRef> written, uint32_t flushed_dbs) {
  if (count_.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard<std::mutex> l(mu_);
  if (flushed_dbs != 0) {
    // A flush (FLUSHALL, FLUSHDB, SWAPDB's two databases) deleted every key of its databases:
    // their waiters retry, as Redis's scanDatabaseForDeletedStreams wakes a group's reader to
    // answer UNBLOCKED; a list, sorted set or plain XREAD waiter finds nothing and parks again
    // in its place, as it stays blocked in Redis.
    std::vector<std::string> flushed;
    for (const auto& [slot, queue] : by_key_) {
      const auto db = static_cast<unsigned char>(slot[0]);
      if (db < 32 && (flushed_dbs & (1u << db)) != 0) flushed.push_back(slot);
    }
    for (const std::string& slot : flushed) Kick(slot);
  }
  std::string slot;
  for (const KeyRef& k : written) {  // in write order; a key written twice is kicked once
    slot.assign(1, static_cast<char>(k.db));
    slot.append(k.key);
    Kick(slot);
  }
}

// ---- Handler side

Result<BlockTimeout> ParseBlockTimeout(std::string_view arg) {
  std::optional<long double> seconds = ParseLongDouble(arg);
  if (!seconds) return TimeoutNotFloat();
  const long double ms = std::ceil(*seconds * 1000.0L);
  // Redis converts to long long without a range check: on x86 anything out of range becomes
  // LLONG_MIN, which it then reports as negative.
  if (!(ms >= -9223372036854775808.0L && ms < 9223372036854775808.0L)) return TimeoutNegative();
  const auto value = static_cast<int64_t>(ms);
  if (value < 0) return TimeoutNegative();
  return BlockTimeout{value >= kForeverMs ? 0 : value};
}

bool BlockClient(CommandContext& ctx, std::span<const std::string_view> keys,
                 BlockTimeout timeout) {
  return ctx.blocking != nullptr && ctx.blocking->Park(ctx.client.db, keys, timeout);
}

void BlockRewriteArg(CommandContext& ctx, size_t index, std::string value) {
  if (ctx.blocking != nullptr) ctx.blocking->RewriteArg(index, std::move(value));
}

bool BlockRetrying(const CommandContext& ctx) {
  return ctx.blocking != nullptr && ctx.blocking->retrying();
}

std::string_view BlockWokenKey(const CommandContext& ctx) {
  return BlockRetrying(ctx) ? ctx.blocking->woken_key() : std::string_view();
}

Result<std::vector<std::string_view>> KeysOfKind(CommandContext& ctx,
                                                 std::span<const std::string_view> keys,
                                                 ValueKind kind) {
  std::vector<std::string_view> out;
  for (std::string_view key : keys) {
    auto type = ctx.txn().Type(ctx.client.db, key);
    if (!type.ok()) return type.status();
    if (!type->has_value() || **type == kind) out.push_back(key);
  }
  return out;
}

bool ParseMPopArgs(CommandContext& ctx, std::span<const std::string_view> args, size_t first,
                   bool blocking, bool (*valid_end)(std::string_view), MPopArgs* out) {
  std::optional<int64_t> numkeys = ParseInt64(args[first]);
  if (!numkeys || *numkeys < 1) {
    ReplyError(ctx.out, NumkeysNotPositive());
    return false;
  }
  if (*numkeys > static_cast<int64_t>(args.size() - first) - 2) {
    ReplyError(ctx.out, SyntaxError());
    return false;
  }
  const size_t where = first + 1 + static_cast<size_t>(*numkeys);
  if (!valid_end(args[where])) {
    ReplyError(ctx.out, SyntaxError());
    return false;
  }
  out->end = args[where];
  bool counted = false;
  for (size_t j = where + 1; j < args.size(); ++j) {
    const bool more = j + 1 < args.size();
    if (!counted && EqualsIgnoreCase(args[j], "count") && more) {
      std::optional<int64_t> c = ParseInt64(args[++j]);
      if (!c || *c < 1) {
        ReplyError(ctx.out, CountNotPositive());
        return false;
      }
      out->count = *c;
      counted = true;
    } else {
      ReplyError(ctx.out, SyntaxError());
      return false;
    }
  }
  if (blocking) {
    auto t = ParseBlockTimeout(args[1]);
    if (!t.ok()) {
      ReplyError(ctx.out, t.status());
      return false;
    }
    out->timeout = *t;
  }
  out->keys = args.subspan(first + 1, static_cast<size_t>(*numkeys));
  return true;
}

bool BlockCandidates(CommandContext& ctx, std::span<const std::string_view> keys, ValueKind kind,
                     std::vector<std::string_view>* out) {
  if (!BlockRetrying(ctx)) {
    out->assign(keys.begin(), keys.end());
    return true;
  }
  // Only the key it was woken for (when known), and only where the command names it.
  std::string_view woken = BlockWokenKey(ctx);
  std::vector<std::string_view> only;
  for (std::string_view key : keys) {
    if (!woken.empty() && key == woken && only.empty()) only.push_back(key);
  }
  if (!only.empty()) keys = only;
  auto of_kind = KeysOfKind(ctx, keys, kind);
  if (!of_kind.ok()) {
    ReplyError(ctx.out, of_kind.status());
    return false;
  }
  *out = std::move(*of_kind);
  return true;
}

}  // namespace sluice::server
