// rate-limiter-flexible's RateLimiterRedis consume script
// (server/scripting/native/library_scripts/README.md):
//   SET KEYS[1] 0 EX ARGV[2] NX; consumed = INCRBY KEYS[1] ARGV[1]; ttl = PTTL KEYS[1];
//   if ttl == -1: EXPIRE KEYS[1] ARGV[2], ttl = 1000 * ARGV[2]; return {consumed, ttl}
#include "server/core/args.h"
#include "server/core/expiry_args.h"
#include "server/scripting/native/native_ops.h"

namespace sluice::server::native {

bool RateLimiterFlexibleIncrTtl(Call& c) {
  if (c.keys.empty() || c.argv.size() < 2) return false;
  const std::string_view key = c.keys[0];
  const std::optional<int64_t> points = ParseInt64(c.argv[0]);  // INCRBY's parse
  // ARGV[2] is also a Lua number (1000 * ARGV[2]): keep it where that product is exact.
  const std::optional<int64_t> seconds = CanonicalLuaInt(c.argv[1]);
  if (!points || !seconds || *seconds <= 0 || *seconds >= kLuaExactLimit / 1000) return false;
  int64_t set_at = 0;
  int64_t expire_at = 0;
  // SET's EX and EXPIRE read ARGV[2] as the integer CanonicalLuaInt found.
  if (!PositiveExpiryAt(*seconds, /*seconds=*/true, /*relative=*/true, c.now_ms, "set", &set_at)
           .ok() ||
      !ExpireTimeAt(*seconds, /*seconds=*/true, c.now_ms, "expire", &expire_at).ok()) {
    return false;
  }
  SetOptions options;
  options.condition = SetCondition::kIfAbsent;
  options.expiry = {ExpiryChange::Kind::kSetAt, set_at};
  Result<SetReply> set = c.txn.Set(c.db, key, "0", options);
  if (!set.ok()) return false;
  // After a write of "0" INCRBY cannot fail; without one, a failure staged nothing: decline.
  Result<int64_t> consumed = c.txn.IncrBy(c.db, key, *points);
  if (!consumed.ok()) return set->written ? FailAfterWrite(c, consumed.status()) : false;
  Result<int64_t> ttl = c.txn.PTtl(c.db, key);
  if (!ttl.ok()) return FailAfterWrite(c, ttl.status());
  int64_t ttl_reply = ViaLuaNumber(*ttl);
  c.commands = 3;
  if (*ttl == -1) {
    ++c.commands;
    Result<bool> expired = c.txn.ExpireAt(c.db, key, expire_at, ExpireCondition::kAlways);
    if (!expired.ok()) return FailAfterWrite(c, expired.status());
    ttl_reply = 1000 * *seconds;
  }
  c.ctx.out.Array(2);
  c.ctx.out.Integer(ViaLuaNumber(*consumed));
  c.ctx.out.Integer(ttl_reply);
  return true;
}

}  // namespace sluice::server::native
