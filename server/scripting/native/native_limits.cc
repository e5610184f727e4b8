// limits 2.8's Redis scripts (server/scripting/native/library_scripts/README.md):
//   incr_expire: amount = tonumber(ARGV[2]); current = INCRBY KEYS[1] amount;
//     if tonumber(current) == amount: EXPIRE KEYS[1] ARGV[1]; return current
//   acquire_moving_window: ts, limit, expiry, amount = tonumber(ARGV[1..4]);
//     entry = LINDEX KEYS[1] (limit - amount); if entry and tonumber(entry) >= ts - expiry:
//     return false; LPUSH KEYS[1] ts (amount times); LTRIM KEYS[1] 0 (limit - 1);
//     EXPIRE KEYS[1] expiry; return true
//   moving_window: items = LRANGE KEYS[1] 0 tonumber(ARGV[2]); expiry = tonumber(ARGV[1]);
//     count the leading items with tonumber(item) >= expiry; return {oldest, count} where
//     oldest is the first of them (no oldest: the table ends at its nil, an empty array)
//   clear_keys: keys = KEYS KEYS[1]; DEL them 5000 at a time; return the sum of the DELs
// Lua numbers reach commands as "%.17g" (LuaNumberArg).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "server/core/args.h"
#include "server/core/expiry_args.h"
#include "server/scripting/native/native_ops.h"

namespace sluice::server::native {

namespace {

// Pushes at most this many entries per call natively (Lua's unpack stops near 8000; more is
// no rate limit anyone configures).
constexpr double kMaxAcquireAmount = 1000;

}  // namespace

bool LimitsIncrExpire(Call& c) {
  if (c.keys.empty() || c.argv.size() < 2) return false;
  const std::string_view key = c.keys[0];
  // A canonical ARGV[2] reaches INCRBY as the same text ("%.17g" of the number).
  const std::optional<int64_t> amount = CanonicalLuaInt(c.argv[1]);
  if (!amount) return false;
  int64_t expire_at = 0;  // EXPIRE's parse of ARGV[1] (a past time deletes the key)
  if (!ParseExpireTime(c.argv[0], /*seconds=*/true, c.now_ms, "expire", &expire_at).ok()) {
    return false;
  }
  Result<int64_t> current = c.txn.IncrBy(c.db, key, *amount);
  if (!current.ok()) return false;  // the first op: nothing staged
  // As doubles the two compare equal exactly when the integers do, since |amount| < 2^53.
  c.commands = 1;
  if (*current == *amount) {
    ++c.commands;
    Result<bool> expired = c.txn.ExpireAt(c.db, key, expire_at, ExpireCondition::kAlways);
    if (!expired.ok()) return FailAfterWrite(c, expired.status());
  }
  c.ctx.out.Integer(ViaLuaNumber(*current));
  return true;
}

bool LimitsAcquireMovingWindow(Call& c) {
  if (c.keys.empty() || c.argv.size() < 4) return false;
  const std::string_view key = c.keys[0];
  const std::optional<double> timestamp = LuaDecimal(c.argv[0]);
  const std::optional<double> limit = LuaDecimal(c.argv[1]);
  const std::optional<double> expiry = LuaDecimal(c.argv[2]);
  const std::optional<double> amount = LuaDecimal(c.argv[3]);
  if (!timestamp || !limit || !expiry || !amount) return false;
  // Every argument the body passes must be one its command takes, checked before anything is
  // staged: LINDEX's index, LTRIM's stop, EXPIRE's seconds, and at least one LPUSH element.
  const std::optional<int64_t> index = LuaIntegerArg(*limit - *amount);
  const std::optional<int64_t> stop = LuaIntegerArg(*limit - 1);
  if (!index || !stop || !(*amount >= 1) || *amount > kMaxAcquireAmount) return false;
  const double floor_line = *timestamp - *expiry;
  const std::optional<int64_t> expiry_seconds = LuaIntegerArg(*expiry);  // EXPIRE's argument
  int64_t expire_at = 0;
  if (!std::isfinite(floor_line) || !expiry_seconds ||
      !ExpireTimeAt(*expiry_seconds, /*seconds=*/true, c.now_ms, "expire", &expire_at).ok()) {
    return false;
  }
  Result<std::optional<std::string>> entry = c.txn.LIndex(c.db, key, *index);
  if (!entry.ok()) return false;  // WRONGTYPE: Lua raises it; a read, nothing staged
  if (entry->has_value()) {
    const std::optional<double> oldest = LuaDecimal(**entry);
    if (!oldest) return false;
    if (*oldest >= floor_line) {
      c.commands = 1;
      c.ctx.out.NullBulk();  // Lua false
      return true;
    }
  }
  // `for i = 1, amount`: one entry per whole step up to amount.
  const size_t count = static_cast<size_t>(std::floor(*amount));
  const NumberText element = LuaNumberArg(*timestamp);
  thread_local std::vector<std::string_view> elements;  // keeps its capacity
  elements.assign(count, element);
  Result<int64_t> pushed =
      c.txn.ListPush(c.db, key, Store::Transaction::ListEnd::kLeft, elements, false);
  if (!pushed.ok()) return false;  // ruled out by the LINDEX; nothing staged when it fails
  c.commands = 4;
  Status trimmed = c.txn.LTrim(c.db, key, 0, *stop);
  if (!trimmed.ok()) return FailAfterWrite(c, trimmed);
  Result<bool> expired = c.txn.ExpireAt(c.db, key, expire_at, ExpireCondition::kAlways);
  if (!expired.ok()) return FailAfterWrite(c, expired.status());
  c.ctx.out.Integer(1);  // Lua true
  return true;
}

bool LimitsMovingWindow(Call& c) {
  if (c.keys.empty() || c.argv.size() < 2) return false;
  const std::optional<int64_t> stop = CanonicalLuaInt(c.argv[1]);  // LRANGE reads the same text
  const std::optional<double> expiry = LuaDecimal(c.argv[0]);
  if (!stop || !expiry) return false;
  Result<std::vector<std::string>> items = c.txn.LRange(c.db, c.keys[0], 0, *stop);
  if (!items.ok()) return false;  // WRONGTYPE; a read, nothing staged
  int64_t count = 0;
  double oldest = 0;
  for (const std::string& item : *items) {
    const std::optional<double> value = LuaDecimal(item);
    if (!value) return false;  // Lua's tonumber may read it otherwise, or fail on nil
    if (!(*value >= *expiry)) break;
    if (count == 0) oldest = *value;
    ++count;
  }
  c.commands = 1;
  if (count == 0) {
    c.ctx.out.Array(0);  // {nil, 0}: the reply stops at the nil
    return true;
  }
  c.ctx.out.Array(2);
  c.ctx.out.Integer(LuaNumberToInteger(oldest));
  c.ctx.out.Integer(count);
  return true;
}

bool LimitsClearKeys(Call& c) {
  if (c.keys.empty()) return false;
  c.commands = 1;  // KEYS, counted also when it conflicts (it needs every stripe)
  Result<std::vector<std::string>> keys = c.txn.Keys(c.db, c.keys[0]);
  if (!keys.ok()) return false;    // a read, nothing staged
  constexpr size_t kBatch = 5000;  // the body's DEL batch
  int64_t removed = 0;
  for (size_t from = 0; from < keys->size(); from += kBatch) {
    const size_t to = std::min(keys->size(), from + kBatch);
    const std::vector<std::string_view> batch(keys->begin() + static_cast<ptrdiff_t>(from),
                                              keys->begin() + static_cast<ptrdiff_t>(to));
    Result<int64_t> n = c.txn.Del(c.db, batch);
    if (!n.ok()) return from == 0 ? false : FailAfterWrite(c, n.status());
    removed += *n;
    ++c.commands;
  }
  c.ctx.out.Integer(ViaLuaNumber(removed));
  return true;
}

}  // namespace sluice::server::native
