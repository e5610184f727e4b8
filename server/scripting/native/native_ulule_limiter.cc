// ulule/limiter v3's Redis store scripts (server/scripting/native/library_scripts/README.md):
//   incr: count, ttl = tonumber(ARGV[1]), tonumber(ARGV[2]); ret = INCRBY KEYS[1] ARGV[1];
//     if ret == count: (if ttl > 0: PEXPIRE KEYS[1] ARGV[2]); return {ret, ttl}
//     ttl = PTTL KEYS[1]; return {ret, ttl}
//   peek: v = GET KEYS[1]; if v == false: return {0, 0}; ttl = PTTL KEYS[1];
//     return {tonumber(v), ttl} (a nil first element ends the reply: an empty array)
#include "server/core/expiry_args.h"
#include "server/scripting/native/native_ops.h"

namespace sluice::server::native {

bool UluleIncr(Call& c) {
  if (c.keys.empty() || c.argv.size() < 2) return false;
  const std::string_view key = c.keys[0];
  // Canonical texts: INCRBY and PEXPIRE read the integers Lua's tonumber does.
  const std::optional<int64_t> count = CanonicalLuaInt(c.argv[0]);
  const std::optional<int64_t> ttl = CanonicalLuaInt(c.argv[1]);
  if (!count || !ttl) return false;
  int64_t expire_at = 0;
  if (*ttl > 0 && !ExpireTimeAt(*ttl, /*seconds=*/false, c.now_ms, "pexpire", &expire_at).ok()) {
    return false;
  }
  Result<int64_t> ret = c.txn.IncrBy(c.db, key, *count);
  if (!ret.ok()) return false;  // the first op: nothing staged
  c.commands = 1;
  int64_t ttl_reply = *ttl;
  // `ret == count` on Lua numbers: ret rounded to a double, count exact (|count| < 2^53).
  if (static_cast<double>(*ret) == static_cast<double>(*count)) {
    if (*ttl > 0) {
      ++c.commands;
      Result<bool> expired = c.txn.ExpireAt(c.db, key, expire_at, ExpireCondition::kAlways);
      if (!expired.ok()) return FailAfterWrite(c, expired.status());
    }
  } else {
    ++c.commands;
    Result<int64_t> pttl = c.txn.PTtl(c.db, key);
    if (!pttl.ok()) return FailAfterWrite(c, pttl.status());
    ttl_reply = ViaLuaNumber(*pttl);
  }
  c.ctx.out.Array(2);
  c.ctx.out.Integer(ViaLuaNumber(*ret));
  c.ctx.out.Integer(ttl_reply);
  return true;
}

bool UlulePeek(Call& c) {
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
  // tonumber(v) is Lua's strtod of a plain decimal; other texts Lua reads its own way.
  const std::optional<double> current = LuaDecimal(**value);
  if (!current) return false;
  Result<int64_t> ttl = c.txn.PTtl(c.db, key);
  if (!ttl.ok()) return false;
  c.commands = 2;
  c.ctx.out.Array(2);
  c.ctx.out.Integer(LuaNumberToInteger(*current));
  c.ctx.out.Integer(ViaLuaNumber(*ttl));
  return true;
}

}  // namespace sluice::server::native
