#include "server/scripting/native/native_scripts.h"

#include "server/core/errors.h"
#include "server/core/server_state.h"
#include "server/scripting/native/native_ops.h"
#include "server/scripting/scripting_state.h"

namespace sluice::server {

namespace {

// Bodies: server/scripting/native/library_scripts/*.lua; their sources:
// server/scripting/native/library_scripts/README.md.
constexpr std::array<NativeScript, kNativeScriptCount> kScripts = {{
    {"a1de965f42e177aa339706bd580f049065eca79a", 256, "rate_limiter_flexible_incr_ttl",
     "rate-limiter-flexible", "11.4.0", true, true},
    {"628bd136a573a06b346879695681af12ccef300f", 195, "limits_incr_expire", "limits", "2.8.0", true,
     true},
    {"895b92e1712734e1b464999be23953485475357b", 271, "rate_limit_redis_increment",
     "rate-limit-redis", "6.0.1", true, true},
    {"6aeb97ed6086dcdeafdc6fda3999a0d0e38ec96a", 128, "rate_limit_redis_get", "rate-limit-redis",
     "6.0.1", false, true},
    {"b8a19d47785922bb04e7a9fdb49e90d89be1b8af", 930, "fastify_rate_limit_incr",
     "@fastify/rate-limit", "11.2.0", true, true},
    {"4c7d9ef62b3d4f8efd8d11d5d2fd1a56b1e723bc", 588, "fastify_rate_limit_read",
     "@fastify/rate-limit", "11.2.0", false, true},
    {"d19f37c18768a509dbf1310a257bfc35be65609f", 492, "limits_acquire_moving_window", "limits",
     "2.8.0", true, true},
    {"3136f0028c572d2959b5cdc5ec15b287fab6a9ff", 352, "limits_moving_window", "limits", "2.8.0",
     false, true},
    {"f2994557f1daca13bfef97c2a31ca4b174e031ca", 184, "limits_clear_keys", "limits", "2.8.0", true,
     false},
    {"f52a5b566060d79fd321d695df55bc918339c4aa", 1718, "redis_rate_allow_n", "go-redis/redis_rate",
     "v10", true, true},
    {"054143318f521948424aa25df61d7f7ba835a9d7", 1786, "redis_rate_allow_at_most",
     "go-redis/redis_rate", "v10", true, true},
    {"f74233f556d3f99c50b61169cf8aa8d5deb63fb2", 282, "ulule_limiter_incr", "ulule/limiter", "v3",
     true, true},
    {"566f5c6a17e5fddb9a10bf389f754edd0d899c61", 154, "ulule_limiter_peek", "ulule/limiter", "v3",
     false, true},
}};

// Same order as kScripts.
constexpr std::array<native::Op, kNativeScriptCount> kOps = {
    native::RateLimiterFlexibleIncrTtl,
    native::LimitsIncrExpire,
    native::RateLimitRedisIncrement,
    native::RateLimitRedisGet,
    native::FastifyIncr,
    native::FastifyRead,
    native::LimitsAcquireMovingWindow,
    native::LimitsMovingWindow,
    native::LimitsClearKeys,
    native::RedisRateAllowN,
    native::RedisRateAllowAtMost,
    native::UluleIncr,
    native::UlulePeek,
};

bool SameShaIgnoreCase(std::string_view sha, const char* lower) {
  for (size_t i = 0; i < 40; ++i) {
    char c = sha[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lower[i]) return false;
  }
  return true;
}

}  // namespace

const std::array<NativeScript, kNativeScriptCount>& NativeScripts() { return kScripts; }

bool MayBeNativeScriptBody(size_t bytes) {
  for (const NativeScript& script : kScripts) {
    if (script.bytes == bytes) return true;
  }
  return false;
}

int FindNativeScript(std::string_view sha) {
  if (sha.size() != 40) return -1;
  for (size_t i = 0; i < kScripts.size(); ++i) {
    if (SameShaIgnoreCase(sha, kScripts[i].sha)) return static_cast<int>(i);
  }
  return -1;
}

void NativeScriptStats::Reset() {
  for (auto& n : native_) n.store(0, std::memory_order_relaxed);
  for (auto& n : interpreted_) n.store(0, std::memory_order_relaxed);
}

bool TryRunNativeScript(CommandContext& ctx, int index, Args keys, Args argv, bool read_only) {
  if (index < 0) return false;
  const NativeScript& script = kScripts[static_cast<size_t>(index)];
  // EVAL_RO of a writing body: Lua gives the read-only error at its first write.
  if (!ctx.server.native_scripts_enabled() || (read_only && script.writes)) return false;
  Store::Transaction& txn = ctx.txn();
  native::Call call{ctx, keys, argv, txn, ctx.client.db, txn.NowMs()};
  if (!kOps[static_cast<size_t>(index)](call)) {
    // An undeclared key (KEYS): the unit's owner rolls back and runs the call again holding
    // every stripe, discarding this attempt. Nothing to reply; the calls made so far count, as
    // the Lua attempt's would.
    if (!txn.conflicted()) return false;
    ctx.server.stats().total_commands_processed.fetch_add(call.commands, std::memory_order_relaxed);
    return true;
  }
  ctx.server.scripting().native_stats.CountNative(index);
  ctx.server.stats().total_commands_processed.fetch_add(call.commands, std::memory_order_relaxed);
  return true;
}

bool NativeScriptRunsAsDataCall(const CommandContext& ctx, int index, bool read_only) {
  if (index < 0 || !ctx.server.native_scripts_enabled()) return false;
  const NativeScript& script = kScripts[static_cast<size_t>(index)];
  return script.declared_keys_only && !(read_only && script.writes);
}

void CountInterpretedScript(CommandContext& ctx, int index) {
  if (index < 0 || ctx.txn().conflicted()) return;  // a conflicted attempt runs again
  ctx.server.scripting().native_stats.CountInterpreted(index);
}

std::string NativeScriptsInfo(CommandContext& ctx) {
  const NativeScriptStats& stats = ctx.server.scripting().native_stats;
  std::string out = "native_scripts:";
  out += ctx.server.native_scripts_enabled() ? "yes\r\n" : "no\r\n";
  for (size_t i = 0; i < kScripts.size(); ++i) {
    const int index = static_cast<int>(i);
    out += "native_script_";
    out += kScripts[i].name;
    out += ":sha=";
    out += kScripts[i].sha;
    out += ",native=" + std::to_string(stats.native(index));
    out += ",interpreted=" + std::to_string(stats.interpreted(index));
    out += "\r\n";
  }
  return out;
}

namespace native {

std::optional<int64_t> CanonicalLuaInt(std::string_view text) {
  if (text.empty() || text.size() > 17) return std::nullopt;
  size_t i = 0;
  const bool negative = text[0] == '-';
  if (negative) ++i;
  if (i == text.size()) return std::nullopt;
  if (text[i] == '0' && (negative || text.size() > 1)) return std::nullopt;  // "-0", "01"
  int64_t v = 0;
  for (; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    v = v * 10 + (text[i] - '0');
  }
  if (v >= kLuaExactLimit) return std::nullopt;
  return negative ? -v : v;
}

Result<std::optional<std::string_view>> GetValue(Call& call, std::string_view key) {
  thread_local std::string value;
  bool found = false;
  if (Status s = call.txn.GetInto(call.db, key, &value, &found); !s.ok()) return s;
  if (!found) return std::optional<std::string_view>();
  return std::optional<std::string_view>(value);
}

int64_t LuaNumberToInteger(double d) {
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return INT64_MIN;
  return static_cast<int64_t>(d);
}

bool FailAfterWrite(Call& call, const Status& status) {
  ReplyError(call.ctx.out, status);
  return true;
}

}  // namespace native

}  // namespace sluice::server
