// The native ops behind server/scripting/native/native_scripts.h, one file per library
// (native_<library>.cc). Internal to the native-scripts files.
//
// Contract of every op: it either declines (returns false) having staged nothing and written no
// reply, so the body then runs in Lua; or it runs the body's key operations in the body's order
// on call.txn and writes exactly the reply the body's Lua run would (numbers through a Lua
// number: LuaNumberToInteger), and returns true. An op declines on every input for which the
// Lua run would raise an error or read an argument in a way the op does not reproduce.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "server/core/command.h"
#include "sluice/transaction.h"

namespace sluice::server::native {

struct Call {
  CommandContext& ctx;
  Args keys;  // KEYS
  Args argv;  // ARGV
  Store::Transaction& txn;
  int db;
  int64_t now_ms;  // the unit's time
  // The redis.call()s the body would have made, for INFO's total_commands_processed (the Lua
  // run counts each one). Set by an op that runs, and by one that declines on a lock conflict
  // (the calls made up to it, as the Lua attempt counts them).
  int commands = 0;
};

using Op = bool (*)(Call& call);

// Integers a Lua script can hold exactly and print back unchanged (|v| < 2^53).
inline constexpr int64_t kLuaExactLimit = int64_t{1} << 53;

// `text` as an integer when it is one in canonical decimal form ("12", "-3"; not "+1", "012",
// "-0", " 1", "1.0") with |v| < 2^53: then Lua's tonumber(text) is exactly v, and a redis.call
// argument made of that number reads "%.17g" = text again.
std::optional<int64_t> CanonicalLuaInt(std::string_view text);

// GET of `key` (on call.txn, in call.db) into a per-thread buffer, so a value of any length
// costs no allocation once the buffer has grown: the value, nullopt when the key is missing, or
// Get's error. The view is valid until the next GetValue on this thread.
Result<std::optional<std::string_view>> GetValue(Call& call, std::string_view key);

// An integer reply after its trip through a Lua number (redis.call reply -> Lua -> script
// reply): rounded to a double, then truncated as lua_convert's Truncate does.
int64_t LuaNumberToInteger(double d);
inline int64_t ViaLuaNumber(int64_t v) { return LuaNumberToInteger(static_cast<double>(v)); }

// A printed number in a buffer of its own (no allocation), used as a string_view.
struct NumberText {
  char data[32];
  size_t size = 0;
  operator std::string_view() const { return std::string_view(data, size); }
};

// A Lua number as redis.call passes it to a command: "%.17g". Meant for finite d.
NumberText LuaNumberArg(double d);

// The integer a command reads (ParseInt64) from LuaNumberArg(d), when it reads one: d is
// integral and |d| < 1e17, where "%.17g" prints its exact digits without an exponent (not -0,
// printed "-0"). nullopt otherwise: the command would refuse the text, the op declines.
std::optional<int64_t> LuaIntegerArg(double d);

// Lua's reading of `text` as a number (tonumber, or a string in arithmetic) for the texts it
// reads as plain decimals: [-]digits[.digits][(e|E)[+|-]digits], nothing before or after, at
// most 64 bytes. Lua reads them with strtod; this reads them with std::from_chars, which rounds
// the same way (correctly), so the number is the same. nullopt for every other text (hex,
// spaces, "inf", ".5", ...) and for a result out of range: the op declines and Lua reads it its
// own way.
std::optional<double> LuaDecimal(std::string_view text);

// tostring(n) of a Lua number: "%.14g". Meant for finite n.
NumberText LuaToString(double d);

// An operation failed after the op had staged a write, which each op's preconditions rule out:
// replies the error (the unit keeps what was staged, as a Lua run that stops there would) and
// returns true. Never reached by inputs the ops accept; a guard, not a path.
bool FailAfterWrite(Call& call, const Status& status);

// The ops (native_<library>.cc).
bool RateLimiterFlexibleIncrTtl(Call& call);
bool LimitsIncrExpire(Call& call);
bool RateLimitRedisIncrement(Call& call);
bool RateLimitRedisGet(Call& call);
bool FastifyIncr(Call& call);
bool FastifyRead(Call& call);
bool LimitsAcquireMovingWindow(Call& call);
bool LimitsMovingWindow(Call& call);
bool LimitsClearKeys(Call& call);
bool RedisRateAllowN(Call& call);
bool RedisRateAllowAtMost(Call& call);
bool UluleIncr(Call& call);
bool UlulePeek(Call& call);

}  // namespace sluice::server::native
