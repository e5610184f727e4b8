// @fastify/rate-limit's RedisStore scripts (server/scripting/native/library_scripts/README.md):
//   incr: timeWindow, max = tonumber(ARGV[1]), tonumber(ARGV[2]); continueExceeding,
//         exponentialBackoff = ARGV[3] == 'true', ARGV[4] == 'true'; current = INCR KEYS[1];
//         if current == 1 or (continueExceeding and current > max): PEXPIRE KEYS[1] timeWindow
//         elseif exponentialBackoff and current > max:
//           timeWindow = min(timeWindow * 2^(current - max - 1), 2^53 - 1); PEXPIRE it
//         else timeWindow = PTTL KEYS[1]
//         return {current, timeWindow}
//   read: v = GET KEYS[1]; if not v: return {0, 0}; ttl = max(PTTL KEYS[1], 0) (as ttl < 0 -> 0);
//         return {tonumber(v), ttl}
#include <cmath>

#include "server/core/errors.h"
#include "server/core/expiry_args.h"
#include "server/scripting/native/native_ops.h"

namespace sluice::server::native {

namespace {

bool ArgIsTrue(Args argv, size_t i) { return i < argv.size() && argv[i] == "true"; }

}  // namespace

bool FastifyIncr(Call& c) {
  if (c.keys.empty() || c.argv.size() < 2) return false;
  const std::string_view key = c.keys[0];
  const std::optional<int64_t> window = CanonicalLuaInt(c.argv[0]);
  const std::optional<int64_t> max = CanonicalLuaInt(c.argv[1]);
  // A positive window keeps every PEXPIRE argument an integer in [1, 2^53 - 1] (0 * 2^big would
  // be NaN): each one parses.
  if (!window || !max || *window <= 0) return false;
  const bool continue_exceeding = ArgIsTrue(c.argv, 2);
  const bool exponential_backoff = ArgIsTrue(c.argv, 3);
  Result<int64_t> incr = c.txn.IncrBy(c.db, key, 1);
  if (!incr.ok()) return false;  // the first op: nothing staged
  // The script's arithmetic is on Lua numbers (doubles).
  const double current = static_cast<double>(*incr);
  const double max_d = static_cast<double>(*max);
  double time_window = static_cast<double>(*window);
  bool pexpire = false;
  if (current == 1 || (continue_exceeding && current > max_d)) {
    pexpire = true;
  } else if (exponential_backoff && current > max_d) {
    constexpr double kMaxSafeInteger = 9007199254740991.0;  // (2^53) - 1
    const double backoff = time_window * std::pow(2.0, current - max_d - 1);
    time_window = kMaxSafeInteger < backoff ? kMaxSafeInteger : backoff;  // Lua's math.min
    pexpire = true;
  }
  int64_t reply_window = 0;
  c.commands = 2;
  if (pexpire) {
    int64_t at = 0;
    const std::optional<int64_t> ms = LuaIntegerArg(time_window);  // PEXPIRE's argument
    Status s = ms ? ExpireTimeAt(*ms, /*seconds=*/false, c.now_ms, "pexpire", &at) : NotAnInteger();
    if (!s.ok()) return FailAfterWrite(c, s);
    Result<bool> expired = c.txn.ExpireAt(c.db, key, at, ExpireCondition::kAlways);
    if (!expired.ok()) return FailAfterWrite(c, expired.status());
    reply_window = LuaNumberToInteger(time_window);
  } else {
    Result<int64_t> ttl = c.txn.PTtl(c.db, key);
    if (!ttl.ok()) return FailAfterWrite(c, ttl.status());
    reply_window = ViaLuaNumber(*ttl);
  }
  c.ctx.out.Array(2);
  c.ctx.out.Integer(LuaNumberToInteger(current));
  c.ctx.out.Integer(reply_window);
  return true;
}

bool FastifyRead(Call& c) {
  if (c.keys.empty()) return false;
  const std::string_view key = c.keys[0];
  Result<std::optional<std::string_view>> value = GetValue(c, key);
  if (!value.ok()) return false;  // WRONGTYPE: Lua raises it
  if (!value->has_value()) {
    c.commands = 1;
    c.ctx.out.Array(2);
    c.ctx.out.Integer(0);
    c.ctx.out.Integer(0);
    return true;
  }
  // tonumber(v) is exact for canonical integers; anything else Lua reads its own way.
  const std::optional<int64_t> current = CanonicalLuaInt(**value);
  if (!current) return false;
  Result<int64_t> ttl = c.txn.PTtl(c.db, key);
  if (!ttl.ok()) return false;
  c.commands = 2;
  c.ctx.out.Array(2);
  c.ctx.out.Integer(*current);
  c.ctx.out.Integer(*ttl < 0 ? 0 : ViaLuaNumber(*ttl));
  return true;
}

}  // namespace sluice::server::native
