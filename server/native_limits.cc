// limits 2.8's fixed-window script, incr_expire.lua (server/native_scripts/README.md):
//   amount = tonumber(ARGV[2]); current = INCRBY KEYS[1] amount;
//   if tonumber(current) == amount: EXPIRE KEYS[1] ARGV[1]; return current
#include "server/args.h"
#include "server/expiry_args.h"
#include "server/native_ops.h"

namespace sluice::server::native {

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

}  // namespace sluice::server::native
