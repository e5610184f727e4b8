// rate-limit-redis's increment and get scripts (server/scripting/native/library_scripts/README.md):
//   increment: windowMs = tonumber(ARGV[1]); t = PTTL KEYS[1];
//              if t <= 0: SET KEYS[1] 1 PX windowMs, return {1, windowMs}
//              return {INCR KEYS[1], t}
//   get:       return {GET KEYS[1], PTTL KEYS[1]}
#include "server/core/expiry_args.h"
#include "server/scripting/native/native_ops.h"

namespace sluice::server::native {

bool RateLimitRedisIncrement(Call& c) {
  if (c.keys.empty() || c.argv.empty()) return false;
  const std::string_view key = c.keys[0];
  const std::optional<int64_t> window_ms = CanonicalLuaInt(c.argv[0]);
  if (!window_ms) return false;
  int64_t set_at = 0;  // SET ... PX windowMs, the number printed back to the same text
  if (!PositiveExpiryAt(*window_ms, /*seconds=*/false, /*relative=*/true, c.now_ms, "set", &set_at)
           .ok()) {
    return false;
  }
  Result<int64_t> ttl = c.txn.PTtl(c.db, key);
  if (!ttl.ok()) return false;
  if (*ttl <= 0) {
    SetOptions options;
    options.expiry = {ExpiryChange::Kind::kSetAt, set_at};
    Result<SetReply> set = c.txn.Set(c.db, key, "1", options);
    if (!set.ok()) return false;  // the first write: a failure staged nothing
    c.commands = 2;
    c.ctx.out.Array(2);
    c.ctx.out.Integer(1);
    c.ctx.out.Integer(*window_ms);
    return true;
  }
  Result<int64_t> hits = c.txn.IncrBy(c.db, key, 1);
  if (!hits.ok()) return false;  // the only write: a failure staged nothing
  c.commands = 2;
  c.ctx.out.Array(2);
  c.ctx.out.Integer(ViaLuaNumber(*hits));
  c.ctx.out.Integer(ViaLuaNumber(*ttl));
  return true;
}

bool RateLimitRedisGet(Call& c) {
  if (c.keys.empty()) return false;
  const std::string_view key = c.keys[0];
  Result<std::optional<std::string_view>> value = GetValue(c, key);
  if (!value.ok()) return false;  // WRONGTYPE: Lua raises it
  Result<int64_t> ttl = c.txn.PTtl(c.db, key);
  if (!ttl.ok()) return false;
  c.commands = 2;
  c.ctx.out.Array(2);
  // GET's nil is Lua's false, which a script reply turns back into a nil bulk.
  if (value->has_value()) {
    c.ctx.out.Bulk(**value);
  } else {
    c.ctx.out.NullBulk();
  }
  c.ctx.out.Integer(ViaLuaNumber(*ttl));
  return true;
}

}  // namespace sluice::server::native
