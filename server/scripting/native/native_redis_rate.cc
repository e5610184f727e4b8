// go-redis/redis_rate v10's GCRA scripts (server/scripting/native/library_scripts/README.md), on
// Lua numbers:
//   ei = ARGV[3] / ARGV[2] (period / rate); burst_offset = ei * ARGV[1]; cost = ARGV[4];
//   now = TIME as seconds since 2017-01-01 (seconds - 1483228800 + micros / 1e6);
//   tat = max(tonumber(GET KEYS[1]) or now, now)
//   allowN: new_tat = tat + ei * cost; diff = now - (new_tat - burst_offset);
//     remaining = diff / ei; if remaining < 0: {0, 0, tostring(-diff), tostring(tat - now)}
//     else reset = new_tat - now; if reset > 0: SET KEYS[1] new_tat EX ceil(reset);
//       {cost, remaining, "-1", tostring(reset)}
//   allowAtMost: diff = now - (tat - burst_offset); remaining = diff / ei;
//     if remaining < 1: {0, 0, tostring(ei - diff), tostring(tat - now)}
//     cost = min(cost, remaining) (remaining -= cost, or 0 when cost was cut);
//     new_tat = tat + ei * cost; reset as allowN; {cost, remaining, "-1", tostring(reset)}
// TIME is the unit's `now` (the server clock, as the TIME command reads it).
#include <cmath>
#include <initializer_list>

#include "server/core/expiry_args.h"
#include "server/scripting/native/native_ops.h"

namespace sluice::server::native {

namespace {

// The script's inputs, each as Lua reads it; nullopt when the op declines.
struct GcraInputs {
  double burst = 0;
  double emission_interval = 0;
  double cost = 0;
  double now = 0;  // seconds since 2017-01-01, as the script computes it
  double tat = 0;  // after math.max(tat, now)
};

bool AllFinite(std::initializer_list<double> values) {
  for (double v : values) {
    if (!std::isfinite(v)) return false;
  }
  return true;
}

// Parses ARGV, reads TIME and GET (the body's first two calls, both reads). False: decline.
bool ReadInputs(Call& c, GcraInputs* in) {
  if (c.keys.empty() || c.argv.size() < 4) return false;
  const std::optional<double> burst = LuaDecimal(c.argv[0]);
  const std::optional<double> rate = LuaDecimal(c.argv[1]);
  const std::optional<double> period = LuaDecimal(c.argv[2]);
  const std::optional<double> cost = LuaDecimal(c.argv[3]);
  if (!burst || !rate || !period || !cost) return false;
  in->burst = *burst;
  in->emission_interval = *period / *rate;
  in->cost = *cost;
  const int64_t ns = c.txn.NowNs();
  const double seconds = static_cast<double>(ns / 1'000'000'000);
  const double micros = static_cast<double>((ns % 1'000'000'000) / 1000);
  in->now = (seconds - 1483228800.0) + (micros / 1000000.0);
  Result<std::optional<std::string_view>> stored = GetValue(c, c.keys[0]);
  if (!stored.ok()) return false;  // WRONGTYPE: Lua raises it
  double tat = in->now;
  if (stored->has_value()) {
    const std::optional<double> parsed = LuaDecimal(**stored);
    if (!parsed) return false;
    tat = *parsed;
  }
  in->tat = in->now > tat ? in->now : tat;  // math.max keeps the first unless one is greater
  return AllFinite({in->emission_interval, in->now, in->tat}) && in->emission_interval != 0;
}

// The SET KEYS[1] new_tat EX ceil(reset_after) both scripts end with, when reset_after > 0.
// Checked before anything is staged: false when SET would refuse the EX argument.
bool PlanSet(Call& c, double reset_after, int64_t* at_ms) {
  if (!(reset_after > 0)) return true;
  const std::optional<int64_t> seconds = LuaIntegerArg(std::ceil(reset_after));
  return seconds &&
         PositiveExpiryAt(*seconds, /*seconds=*/true, /*relative=*/true, c.now_ms, "set", at_ms)
             .ok();
}

// Runs that SET (at_ms from PlanSet) and counts the body's calls. False when the SET failed
// (ruled out by PlanSet and the GET before it): the error is the reply, nothing more to write.
bool RunSet(Call& c, double new_tat, double reset_after, int64_t at_ms) {
  c.commands = 2;  // TIME, GET
  if (!(reset_after > 0)) return true;
  ++c.commands;
  SetOptions options;
  options.expiry = {ExpiryChange::Kind::kSetAt, at_ms};
  Result<SetReply> set = c.txn.Set(c.db, c.keys[0], LuaNumberArg(new_tat), options);
  if (!set.ok()) {
    FailAfterWrite(c, set.status());
    return false;
  }
  return true;
}

void Reply(Call& c, double allowed, double remaining, std::string_view retry_after,
           double reset_after) {
  c.ctx.out.Array(4);
  c.ctx.out.Integer(LuaNumberToInteger(allowed));
  c.ctx.out.Integer(LuaNumberToInteger(remaining));
  c.ctx.out.Bulk(retry_after);
  c.ctx.out.Bulk(LuaToString(reset_after));
}

}  // namespace

bool RedisRateAllowN(Call& c) {
  GcraInputs in;
  if (!ReadInputs(c, &in)) return false;
  const double increment = in.emission_interval * in.cost;
  const double burst_offset = in.emission_interval * in.burst;
  const double new_tat = in.tat + increment;
  const double allow_at = new_tat - burst_offset;
  const double diff = in.now - allow_at;
  const double remaining = diff / in.emission_interval;
  if (!AllFinite({increment, burst_offset, new_tat, allow_at, diff, remaining})) return false;
  if (remaining < 0) {
    c.commands = 2;
    Reply(c, 0, 0, LuaToString(diff * -1), in.tat - in.now);
    return true;
  }
  const double reset_after = new_tat - in.now;
  int64_t at_ms = 0;
  if (!PlanSet(c, reset_after, &at_ms)) return false;
  if (!RunSet(c, new_tat, reset_after, at_ms)) return true;
  Reply(c, in.cost, remaining, "-1", reset_after);
  return true;
}

bool RedisRateAllowAtMost(Call& c) {
  GcraInputs in;
  if (!ReadInputs(c, &in)) return false;
  const double burst_offset = in.emission_interval * in.burst;
  const double diff = in.now - (in.tat - burst_offset);
  double remaining = diff / in.emission_interval;
  if (!AllFinite({burst_offset, diff, remaining})) return false;
  if (remaining < 1) {
    c.commands = 2;
    Reply(c, 0, 0, LuaToString(in.emission_interval - diff), in.tat - in.now);
    return true;
  }
  double cost = in.cost;
  if (remaining < cost) {
    cost = remaining;
    remaining = 0;
  } else {
    remaining = remaining - cost;
  }
  const double increment = in.emission_interval * cost;
  const double new_tat = in.tat + increment;
  const double reset_after = new_tat - in.now;
  if (!AllFinite({remaining, increment, new_tat, reset_after})) return false;
  int64_t at_ms = 0;
  if (!PlanSet(c, reset_after, &at_ms)) return false;
  if (!RunSet(c, new_tat, reset_after, at_ms)) return true;
  Reply(c, cost, remaining, "-1", reset_after);
  return true;
}

}  // namespace sluice::server::native
