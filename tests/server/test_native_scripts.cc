// The native-scripts registry through the real dispatcher: which bodies are recognised (exactly
// the recorded ones, never a body one byte off), EVAL/EVALSHA/SCRIPT LOAD going native, CONFIG
// SET native-scripts, INFO native_scripts counters, and each op's replies, errors, keys and TTLs
// against the same body run in Lua (a second harness with native-scripts no).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "server/core/args.h"
#include "server/scripting/lua_sha1.h"
#include "server/scripting/native/native_ops.h"
#include "server/scripting/native/native_scripts.h"
#include "tests/server/harness.h"
#include "tests/server/script_bodies.h"

namespace sluice::server::testing {

namespace {

const char* const kFiles[kNativeScriptCount] = {
    "rate-limiter-flexible_incr_ttl.lua",
    "limits_incr_expire.lua",
    "rate-limit-redis_increment.lua",
    "rate-limit-redis_get.lua",
    "fastify-rate-limit_incr.lua",
    "fastify-rate-limit_read.lua",
    "limits_acquire_moving_window.lua",
    "limits_moving_window.lua",
    "limits_clear_keys.lua",
    "redis_rate_allow_n.lua",
    "redis_rate_allow_at_most.lua",
    "ulule-limiter_incr.lua",
    "ulule-limiter_peek.lua",
};

// "native=N,interpreted=M" of one script in INFO native_scripts.
std::string Counts(Harness& h, const std::string& name) {
  const std::string info = h.Cmd("INFO native_scripts");
  const std::string tag = "native_script_" + name + ":";
  const size_t at = info.find(tag);
  REQUIRE(at != std::string::npos);
  const size_t from = info.find(",native=", at) + 1;
  return info.substr(from, info.find("\r\n", from) - from);
}

std::string Eval(Harness& h, const std::string& body, std::vector<std::string> rest) {
  std::vector<std::string> args = {"EVAL", body};
  args.insert(args.end(), rest.begin(), rest.end());
  return h.Run(args);
}

// Runs the same commands on a native harness and an interpreting one; every reply must match.
struct Pair {
  Harness native;
  Harness lua;
  Pair() {
    REQUIRE(native.Cmd("CONFIG SET native-scripts yes") == Ok());
    REQUIRE(lua.Cmd("CONFIG SET native-scripts no") == Ok());
  }
  std::string Run(const std::vector<std::string>& args) {
    const std::string a = native.Run(args);
    const std::string b = lua.Run(args);
    CHECK_MESSAGE(a == b, "command: " << args[0] << " " << (args.size() > 2 ? args[2] : ""));
    return a;
  }
  std::string Eval(const std::string& body, std::vector<std::string> rest) {
    std::vector<std::string> args = {"EVAL", body};
    args.insert(args.end(), rest.begin(), rest.end());
    return Run(args);
  }
  void Advance(int64_t ms) {
    native.AdvanceMs(ms);
    lua.AdvanceMs(ms);
  }
  // Value and PTTL of `key` on both sides must match.
  void SameKey(const std::string& key) {
    Run({"TYPE", key});
    Run({"GET", key});
    Run({"LRANGE", key, "0", "-1"});
    Run({"PTTL", key});
  }
};

}  // namespace

TEST_CASE("native scripts: the registry holds exactly the recorded bodies") {
  const auto& scripts = NativeScripts();
  for (size_t i = 0; i < kNativeScriptCount; ++i) {
    const std::string body = Body(kFiles[i]);
    CHECK(Sha1Hex(body) == scripts[i].sha);
    CHECK(body.size() == scripts[i].bytes);
    CHECK(MayBeNativeScriptBody(body.size()));
    CHECK(FindNativeScript(Sha1Hex(body)) == static_cast<int>(i));
    std::string upper = scripts[i].sha;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    CHECK(FindNativeScript(upper) == static_cast<int>(i));
    CHECK(FindNativeScript(Sha1Hex(body + " ")) == -1);
    CHECK(FindNativeScript(Sha1Hex(body.substr(1))) == -1);
  }
  CHECK(FindNativeScript("") == -1);
  CHECK_FALSE(MayBeNativeScriptBody(0));
  CHECK_FALSE(MayBeNativeScriptBody(100));
  CHECK(FindNativeScript(std::string(40, '0')) == -1);
}

TEST_CASE("native scripts: EVAL, EVALSHA and SCRIPT LOAD go native; one byte off runs in Lua") {
  Harness h;
  const std::string body = Body("rate-limiter-flexible_incr_ttl.lua");
  const std::string name = "rate_limiter_flexible_incr_ttl";
  CHECK(Counts(h, name) == "native=0,interpreted=0");
  CHECK(Eval(h, body, {"1", "rl:a", "2", "60", "5", "60"}) == Arr({Int(2), Int(60000)}));
  CHECK(Counts(h, name) == "native=1,interpreted=0");
  // EVAL cached the body: EVALSHA of it, any case, also goes native.
  CHECK(h.Run({"EVALSHA", Sha1Hex(body), "1", "rl:a", "1", "60"}) == Arr({Int(3), Int(60000)}));
  h.AdvanceMs(1500);
  CHECK(h.Run({"SCRIPT", "LOAD", body}) == Bulk(Sha1Hex(body)));
  std::string upper = Sha1Hex(body);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  CHECK(h.Run({"EVALSHA", upper, "1", "rl:a", "1", "60"}) == Arr({Int(4), Int(58500)}));
  CHECK(Counts(h, name) == "native=3,interpreted=0");
  // One byte more: another script, run by Lua with the same result, and not counted.
  CHECK(Eval(h, body + "\n", {"1", "rl:a", "1", "60"}) == Arr({Int(5), Int(58500)}));
  CHECK(Counts(h, name) == "native=3,interpreted=0");
  CHECK(h.Cmd("GET rl:a") == Bulk("5"));
  CHECK(h.Cmd("PTTL rl:a") == Int(58500));
}

TEST_CASE("native scripts: CONFIG SET native-scripts no runs recognised bodies in Lua") {
  Harness h;
  const std::string body = Body("limits_incr_expire.lua");
  const std::string name = "limits_incr_expire";
  CHECK(h.Cmd("CONFIG GET native-scripts") == Arr({Bulk("native-scripts"), Bulk("yes")}));
  CHECK(Eval(h, body, {"1", "lim", "10", "1"}) == Int(1));
  CHECK(h.Cmd("CONFIG SET native-scripts no") == Ok());
  CHECK(h.Cmd("CONFIG GET native-scripts") == Arr({Bulk("native-scripts"), Bulk("no")}));
  CHECK(h.Run({"EVALSHA", Sha1Hex(body), "1", "lim", "10", "1"}) == Int(2));
  CHECK(Counts(h, name) == "native=1,interpreted=1");
  CHECK(h.Cmd("CONFIG SET native-scripts maybe") ==
        Err("ERR CONFIG SET failed (possibly related to argument 'native-scripts') - argument(s) "
            "must be one of the following: no, yes"));
  CHECK(h.Cmd("CONFIG SET native-scripts yes") == Ok());
  CHECK(Eval(h, body, {"1", "lim", "10", "1"}) == Int(3));
  CHECK(Counts(h, name) == "native=2,interpreted=1");
  CHECK(h.Cmd("PTTL lim") == Int(10000));
  CHECK(h.Cmd("CONFIG RESETSTAT") == Ok());
  CHECK(Counts(h, name) == "native=0,interpreted=0");
}

TEST_CASE("native scripts: a declined call runs in Lua and is counted as interpreted") {
  Harness h;
  const std::string body = Body("rate-limiter-flexible_incr_ttl.lua");
  // Bad duration: SET's own error, raised by the Lua run.
  const std::string r = Eval(h, body, {"1", "rl:b", "1", "soon"});
  CHECK(r.rfind("-ERR value is not an integer or out of range script: ", 0) == 0);
  // EVAL_RO of a writing body: Lua refuses the write.
  const std::string ro = h.Run({"EVAL_RO", body, "1", "rl:b", "1", "60"});
  CHECK(ro.rfind("-ERR Write commands are not allowed from read-only scripts.", 0) == 0);
  CHECK(Counts(h, "rate_limiter_flexible_incr_ttl") == "native=0,interpreted=2");
  CHECK(h.Cmd("EXISTS rl:b") == Int(0));
  // The read-only get script goes native under EVAL_RO too.
  const std::string get = Body("rate-limit-redis_get.lua");
  CHECK(h.Run({"EVAL_RO", get, "1", "rl:b"}) == Arr({Nil(), Int(-2)}));
  CHECK(Counts(h, "rate_limit_redis_get") == "native=1,interpreted=0");
}

TEST_CASE("native scripts: the cache, MULTI/EXEC and WATCH work as for any script") {
  Harness h;
  const std::string body = Body("rate-limit-redis_increment.lua");
  const std::string sha = Sha1Hex(body);
  const std::string name = "rate_limit_redis_increment";
  // Recognised, but not cached: EVALSHA is NOSCRIPT, and nothing is counted.
  CHECK(h.Run({"EVALSHA", sha, "1", "w", "1000"}) ==
        "-NOSCRIPT No matching script. Please use EVAL.\r\n");
  CHECK(h.Run({"SCRIPT", "EXISTS", sha}) == Arr({Int(0)}));
  CHECK(Eval(h, body, {"1", "w", "1000"}) == Arr({Int(1), Int(1000)}));
  CHECK(h.Run({"SCRIPT", "EXISTS", sha}) == Arr({Int(1)}));
  CHECK(h.Cmd("SCRIPT FLUSH") == Ok());
  CHECK(h.Run({"EVALSHA", sha, "1", "w", "1000"}) ==
        "-NOSCRIPT No matching script. Please use EVAL.\r\n");
  CHECK(Counts(h, name) == "native=1,interpreted=0");
  // Inside MULTI: queued, then run in the EXEC's unit, after the command before it.
  CHECK(h.Cmd("MULTI") == Ok());
  CHECK(h.Cmd("SET w 10 PX 5000") == Simple("QUEUED"));
  CHECK(h.Run({"EVAL", body, "1", "w", "1000"}) == Simple("QUEUED"));
  CHECK(h.Cmd("PTTL w") == Simple("QUEUED"));
  CHECK(h.Cmd("EXEC") == Arr({Ok(), Arr({Int(11), Int(5000)}), Int(5000)}));
  CHECK(Counts(h, name) == "native=2,interpreted=0");
  // A native run's write is a write WATCH sees.
  CHECK(h.Cmd("WATCH w") == Ok());
  CHECK(Eval(h, body, {"1", "w", "1000"}) == Arr({Int(12), Int(5000)}));
  CHECK(h.Cmd("MULTI") == Ok());
  CHECK(h.Cmd("GET w") == Simple("QUEUED"));
  CHECK(h.Cmd("EXEC") == NilArray());
  CHECK(Counts(h, name) == "native=3,interpreted=0");
}

TEST_CASE("native scripts: every op matches its Lua run, RESP2 and RESP3") {
  for (bool resp3 : {false, true}) {
    Pair p;
    if (resp3) {
      p.native.Resp3();
      p.lua.Resp3();
    }
    const std::string rlf = Body("rate-limiter-flexible_incr_ttl.lua");
    const std::string lim = Body("limits_incr_expire.lua");
    const std::string inc = Body("rate-limit-redis_increment.lua");
    const std::string get = Body("rate-limit-redis_get.lua");
    const std::string fin = Body("fastify-rate-limit_incr.lua");
    const std::string frd = Body("fastify-rate-limit_read.lua");
    // Fresh keys, repeats, time passing, expiry.
    for (int i = 0; i < 4; ++i) {
      p.Eval(rlf, {"1", "a", "3", "2", "10", "2"});
      p.Eval(lim, {"1", "b", "2", "1"});
      p.Eval(inc, {"1", "c", "1500"});
      p.Eval(get, {"1", "c"});
      p.Eval(fin, {"1", "d", "1000", "2", "false", "true"});
      p.Eval(fin, {"1", "e", "1000", "2", "true", "false"});
      p.Eval(frd, {"1", "d"});
      p.Advance(700);
    }
    // A counter without a TTL, a non-integer value, a non-string key, odd arguments.
    p.Run({"SET", "x", "7"});
    p.Run({"SET", "y", "abc"});
    MakeNonString(p.native, "z");
    MakeNonString(p.lua, "z");
    for (const std::string key : {"x", "y", "z", "fresh"}) {
      p.Eval(rlf, {"1", key, "1", "30"});
      p.Eval(lim, {"1", key, "-5", "3"});
      p.Eval(inc, {"1", key, "100"});
      p.Eval(get, {"1", key});
      p.Eval(fin, {"1", key, "100", "0", "true", "true"});
      p.Eval(frd, {"1", key});
      p.SameKey(key);
    }
    for (const std::string bad : {"abc", "0", "-1", "1.5", "+3", "01", "", "9007199254740993"}) {
      p.Eval(rlf, {"1", "m", bad, bad});
      p.Eval(lim, {"1", "m", bad, bad});
      p.Eval(inc, {"1", "m", bad});
      p.Eval(fin, {"1", "m", bad, bad, "true", "true"});
      p.Eval(frd, {"1", "m"});
      p.SameKey("m");
    }
    p.Eval(rlf, {"0"});
    p.Eval(lim, {"1", "n"});
    p.Eval(inc, {"0", "200"});
    p.Run({"EVALSHA", Sha1Hex(fin), "1", "d", "1000", "2"});
    for (const std::string key : {"a", "b", "c", "d", "e", "m"}) p.SameKey(key);
    // A native run counts the commands the body would have called, as the Lua run does.
    CHECK(p.native.server().stats().total_commands_processed.load() ==
          p.lua.server().stats().total_commands_processed.load());
    // The comparison was native against Lua: every op ran natively on one side only.
    for (size_t i = 0; i < 6; ++i) {  // the six scripts this case runs
      const NativeScript& script = NativeScripts()[i];
      CAPTURE(script.name);
      const std::string native = Counts(p.native, script.name);
      CHECK(native.rfind("native=0,", 0) != 0);
      CHECK(Counts(p.lua, script.name).rfind("native=0,", 0) == 0);
    }
  }
}

TEST_CASE("native scripts: limits' moving window and clear, redis_rate, ulule match Lua") {
  for (bool resp3 : {false, true}) {
    Pair p;
    if (resp3) {
      p.native.Resp3();
      p.lua.Resp3();
    }
    const std::string acquire = Body("limits_acquire_moving_window.lua");
    const std::string window = Body("limits_moving_window.lua");
    const std::string clear = Body("limits_clear_keys.lua");
    const std::string allow_n = Body("redis_rate_allow_n.lua");
    const std::string at_most = Body("redis_rate_allow_at_most.lua");
    const std::string incr = Body("ulule-limiter_incr.lua");
    const std::string peek = Body("ulule-limiter_peek.lua");
    // redis_rate at the harness's start (TIME = 1700000000 s): now = 216771200 since 2017.
    CHECK(p.Eval(allow_n, {"1", "g", "10", "10", "1", "1"}) ==
          Arr({Int(1), Int(9), Bulk("-1"), Bulk("0.099999994039536")}));
    CHECK(p.Run({"GET", "g"}) == Bulk("216771200.09999999"));
    CHECK(p.Run({"TTL", "g"}) == Int(1));
    // limits: three hits in a window of 2 per 10 s, the third refused (Lua false).
    CHECK(p.Eval(acquire, {"1", "w", "100.5", "2", "10", "1"}) == Int(1));
    CHECK(p.Eval(acquire, {"1", "w", "101", "2", "10", "1"}) == Int(1));
    CHECK(p.Eval(acquire, {"1", "w", "102", "2", "10", "1"}) == (resp3 ? Null() : Nil()));
    CHECK(p.Eval(window, {"1", "w", "95", "2"}) == Arr({Int(101), Int(2)}));
    CHECK(p.Eval(window, {"1", "w", "200", "2"}) == Arr({}));
    for (int i = 0; i < 6; ++i) {
      p.Eval(allow_n, {"1", "g", "3", "2", "1", std::to_string(i % 3)});
      p.Eval(at_most, {"1", "h", "5", "1", "0.5", std::to_string(i * 2)});
      p.Eval(acquire, {"1", "w", std::to_string(103 + i * 3), "3", "5", std::to_string(1 + i % 2)});
      p.Eval(window, {"1", "w", std::to_string(100 + i * 2), "3"});
      p.Eval(incr, {"1", "u", "1", "1500"});
      p.Eval(peek, {"1", "u"});
      p.Advance(400);
    }
    // Keys of other types and values neither script wrote; odd and missing arguments.
    p.Run({"SET", "s", "abc"});
    p.Run({"RPUSH", "l", "x", "7"});
    p.Run({"HSET", "hh", "f", "v"});
    MakeNonString(p.native, "z");
    MakeNonString(p.lua, "z");
    for (const std::string key : {"s", "l", "z", "hh", "fresh"}) {
      p.Eval(acquire, {"1", key, "10", "3", "60", "1"});
      p.Eval(window, {"1", key, "0", "5"});
      p.Eval(allow_n, {"1", key, "1", "1", "60", "1"});
      p.Eval(at_most, {"1", key, "1", "1", "60", "1"});
      p.Eval(incr, {"1", key, "2", "1000"});
      p.Eval(peek, {"1", key});
      p.SameKey(key);
    }
    for (const std::string bad : {"abc", "0", "-1", "1.5", " 5", "0x10", "1e400", ""}) {
      p.Eval(acquire, {"1", "m", bad, "3", bad, bad});
      p.Eval(window, {"1", "m", bad, bad});
      p.Eval(allow_n, {"1", "n", bad, "1", bad, bad});
      p.Eval(at_most, {"1", "n", "2", bad, "1", bad});
      p.Eval(incr, {"1", "u", bad, bad});
      p.SameKey("m");
      p.SameKey("n");
    }
    p.Eval(acquire, {"1", "m"});
    p.Eval(allow_n, {"0"});
    p.Eval(incr, {"1", "u"});
    // clear_keys deletes keys of every type; an empty match deletes nothing.
    CHECK(p.Eval(clear, {"1", "nothing*"}) == Int(0));
    p.Eval(clear, {"1", "[gh]"});
    const std::string keys = p.Run({"DBSIZE"});
    CHECK(keys != Int(0));
    CHECK(p.Eval(clear, {"1", "*"}) == keys);
    CHECK(p.Run({"DBSIZE"}) == Int(0));
    p.Eval(clear, {"0"});
    CHECK(p.native.server().stats().total_commands_processed.load() ==
          p.lua.server().stats().total_commands_processed.load());
    for (size_t i = 6; i < kNativeScriptCount; ++i) {
      const NativeScript& script = NativeScripts()[i];
      CAPTURE(script.name);
      CHECK(Counts(p.native, script.name).rfind("native=0,", 0) != 0);
      CHECK(Counts(p.lua, script.name).rfind("native=0,", 0) == 0);
    }
  }
}

TEST_CASE("native scripts: Lua's number texts, printed and read as printf and strtod do") {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) {
    double d = 0;
    if (i % 6 == 0) {
      const uint64_t bits = rng();
      std::memcpy(&d, &bits, sizeof d);
      if (!std::isfinite(d)) continue;
    } else if (i % 6 == 1) {
      d = static_cast<double>(static_cast<int64_t>(rng() % 4'000'000'000'000) - 2'000'000'000'000) /
          1000.0;
    } else if (i % 6 == 2) {
      d = std::ldexp(static_cast<double>(rng() >> 11), static_cast<int>(rng() % 140) - 70);
    } else if (i % 6 == 3) {
      // Timestamps as limiter libraries send them: seconds with a fraction (time.time()).
      d = 1.7e9 + static_cast<double>(rng() % 100'000'000'000) / 1e6;
    } else if (i % 6 == 4) {
      // Exact binary fractions of 13 to 19 digits: ties when rounded to 14 or 17 digits.
      d = std::ldexp(static_cast<double>(rng() % 100'000'000'000'000'000), -(1 + rng() % 8));
    } else {
      // Short decimals, as a script's arguments are typed: counts, periods, "0.5", "1e-3".
      char text[32];
      std::snprintf(
          text, sizeof text, "%llu.%llue%d", static_cast<unsigned long long>(rng() % 100'000),
          static_cast<unsigned long long>(rng() % 1'000), static_cast<int>(rng() % 9) - 6);
      d = std::strtod(text, nullptr);
    }
    char want[64];
    for (int precision : {14, 17}) {
      const int n = std::snprintf(want, sizeof want, "%.*g", precision, d);
      const native::NumberText got =
          precision == 14 ? native::LuaToString(d) : native::LuaNumberArg(d);
      REQUIRE(std::string_view(got) == std::string_view(want, static_cast<size_t>(n)));
      // Read back: LuaDecimal takes the plain decimals and gives strtod's double.
      const std::optional<double> read = native::LuaDecimal(got);
      if (read) REQUIRE(*read == std::strtod(want, nullptr));
      if (std::string_view(got).find_first_of("e") == std::string_view::npos) {
        REQUIRE(read.has_value());
      }
    }
    // LuaIntegerArg is the integer ParseInt64 reads from "%.17g", exactly when it reads one.
    const native::NumberText text = native::LuaNumberArg(d);
    const std::optional<int64_t> parsed = ParseInt64(text);
    const std::optional<int64_t> integer = native::LuaIntegerArg(d);
    if (integer) REQUIRE(parsed == integer);
  }
  CHECK(native::LuaIntegerArg(-0.0) == std::nullopt);
  CHECK(native::LuaIntegerArg(0.0) == 0);
  CHECK(native::LuaIntegerArg(99999999999999984.0) == 99999999999999984);
  CHECK(native::LuaIntegerArg(1e17) == std::nullopt);  // "1e+17"
  CHECK(native::LuaIntegerArg(2.5) == std::nullopt);
  CHECK(native::LuaDecimal("1e400") == std::nullopt);
  CHECK(native::LuaDecimal("-12.5E-1") == -1.25);
  CHECK(native::LuaDecimal("0x10") == std::nullopt);
  // Plain decimals as typed, read as strtod does (the fast path's range and just past it).
  for (std::string_view text :
       {"0", "-0", "1700000000.5", "9007199254740992", "9007199254740993", "0.1", "-0.000001",
        "123456789012345678901234567890", "1.0000000000000000000000001", "00012.3400"}) {
    CAPTURE(text);
    const std::optional<double> read = native::LuaDecimal(text);
    REQUIRE(read.has_value());
    const double want = std::strtod(std::string(text).c_str(), nullptr);
    CHECK(std::memcmp(&*read, &want, sizeof want) == 0);  // -0 too
  }
}

}  // namespace sluice::server::testing
