// EVAL, EVALSHA, EVAL_RO, SCRIPT and the Lua `redis` API through the real dispatcher and Store.
// Expected replies were checked against redis-server 7.0.15 (tests/blackbox/test_scripting.py
// compares the two servers side by side).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "server/scripting/lua_sha1.h"
#include "sluice/transaction.h"
#include "tests/server/harness.h"

namespace sluice::server::testing {

namespace {

std::string Eval(Harness& h, const std::string& script, std::vector<std::string> rest = {"0"}) {
  std::vector<std::string> args = {"EVAL", script};
  args.insert(args.end(), rest.begin(), rest.end());
  return h.Run(args);
}

std::string ScriptErr(const std::string& message, const std::string& script, int line = 1) {
  return "-" + message + " script: " + Sha1Hex(script) +
         ", on @user_script:" + std::to_string(line) + ".\r\n";
}

}  // namespace

TEST_CASE("SHA1 of scripts is Redis's") {
  CHECK(Sha1Hex("") == "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  CHECK(Sha1Hex("return 1") == "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
  CHECK(Sha1Hex(std::string(1000, 'a')) == "291e9a6c66994949b57ba5e650361e98fc36b1ba");
}

TEST_CASE("EVAL's memo of body digests answers as SHA1 does, for repeats and evictions") {
  // 300 bodies over 64 slots, each asked three times in turns (hits, and slots taken over by
  // other bodies), some longer than the memo keeps.
  std::vector<std::string> bodies;
  for (int i = 0; i < 300; ++i) {
    const size_t length = i % 50 == 0 ? kSha1MemoMaxBytes + 1 + i : static_cast<size_t>(i * 7);
    bodies.push_back(std::string(length, static_cast<char>('a' + i % 26)) + std::to_string(i));
  }
  for (int round = 0; round < 3; ++round) {
    for (const std::string& body : bodies) {
      char memo[kSha1HexLength];
      Sha1HexMemoTo(body, memo);
      CHECK(std::string(memo, kSha1HexLength) == Sha1Hex(body));
    }
  }
}

TEST_CASE("Lua values become RESP2 replies by Redis's rules") {
  Harness h;
  CHECK(Eval(h, "return 3.99") == Int(3));
  CHECK(Eval(h, "return -3.99") == Int(-3));
  CHECK(Eval(h, "return 'x'") == Bulk("x"));
  CHECK(Eval(h, "return nil") == Nil());
  CHECK(Eval(h, "return true") == Int(1));
  CHECK(Eval(h, "return false") == Nil());
  CHECK(Eval(h, "return {1,2,3.7,'x',nil,5}") == Arr({Int(1), Int(2), Int(3), Bulk("x")}));
  CHECK(Eval(h, "return {1,{2,{3}},{err='x'},{ok='y'}}") ==
        Arr({Int(1), Arr({Int(2), Arr({Int(3)})}), "-x\r\n", Simple("y")}));
  CHECK(Eval(h, "return {double=1.5}") == Bulk("1.5"));
  CHECK(Eval(h, "return {double=0.1}") == Bulk("0.10000000000000001"));
  CHECK(Eval(h, "return {map={a=1}}") == Arr({Bulk("a"), Int(1)}));
  CHECK(Eval(h, "return {set={a=true}}") == Arr({Bulk("a")}));
  CHECK(Eval(h, "return {big_number='123'}") == Bulk("123"));
  CHECK(Eval(h, "return {verbatim_string={format='txt',string='hi'}}") == Bulk("hi"));
  CHECK(Eval(h, "return {KEYS[1],ARGV[1],#KEYS,#ARGV}", {"1", "k", "a"}) ==
        Arr({Bulk("k"), Bulk("a"), Int(1), Int(1)}));
}

TEST_CASE("Lua values become RESP3 replies; booleans follow redis.setresp") {
  Harness h;
  h.Resp3();
  CHECK(Eval(h, "return nil") == Null());
  CHECK(Eval(h, "return {true,false}") == Arr({Int(1), Null()}));
  CHECK(Eval(h, "redis.setresp(3) return {true,false}") == Arr({Bool(true), Bool(false)}));
  CHECK(Eval(h, "return {double=1.5}") == Double(1.5));
  CHECK(Eval(h, "return {map={a=1}}") == Map({Bulk("a"), Int(1)}));
  CHECK(Eval(h, "return {set={a=true}}") == "~1\r\n" + Bulk("a"));
  CHECK(Eval(h, "return {big_number='123'}") == "(123\r\n");
  CHECK(Eval(h, "return {verbatim_string={format='txt',string='hi'}}") == "=6\r\ntxt:hi\r\n");
}

TEST_CASE("redis.call replies become Lua values in the protocol redis.setresp chose") {
  Harness h;
  CHECK(Eval(h, "return type(redis.call('get','missing'))") == Bulk("boolean"));
  CHECK(Eval(h, "redis.setresp(3) return type(redis.call('get','missing'))") == Bulk("nil"));
  CHECK(Eval(h, "return redis.call('ping')['ok']") == Bulk("PONG"));
  CHECK(Eval(h, "return redis.call('set',KEYS[1],ARGV[1])", {"1", "k", "v"}) == Ok());
  CHECK(h.Run({"GET", "k"}) == Bulk("v"));
  CHECK(Eval(h, "redis.call('set','n',0.1) return redis.call('get','n')") ==
        Bulk("0.10000000000000001"));
  CHECK(Eval(h, "redis.call('set','n',1e20) return redis.call('get','n')") == Bulk("1e+20"));
  // Integers below 2^53 take a shortcut (to_chars) that must print what "%.17g" prints.
  const std::pair<const char*, const char*> numbers[] = {
      {"0", "0"},
      {"-0.0", "-0"},
      {"7", "7"},
      {"-42", "-42"},
      {"3.0", "3"},
      {"1700000000123", "1700000000123"},
      {"2^53 - 1", "9007199254740991"},
      {"-(2^53 - 1)", "-9007199254740991"},
      {"2^53", "9007199254740992"},
      {"1e16", "10000000000000000"},
      {"1e17", "1e+17"},
      {"-2.5", "-2.5"},
      {"1/0", "inf"},
      {"-1/0", "-inf"},
  };
  for (const auto& [lua, text] : numbers) {
    CAPTURE(lua);
    CHECK(Eval(h, std::string("redis.call('set','n',") + lua + ") return redis.call('get','n')") ==
          Bulk(text));
  }
  CHECK(Eval(h, "return redis.call('incr','n2')") == Int(1));
  CHECK(Eval(h, "redis.call('set','s','abc') return {pcall(redis.call,'incr','s')}") ==
        Arr({Nil(), Bulk("ERR value is not an integer or out of range")}));
  CHECK(Eval(h, "return redis.pcall('incr','s')") == NotIntegerErr());
  CHECK(Eval(h, "return redis.call('gcra.take', KEYS[1], 1, 1)", {"1", "lim"}).substr(0, 2) ==
        "*5");
}

TEST_CASE("script errors carry Redis 7.0's text and position") {
  Harness h;
  const std::string s1 = "return x";
  CHECK(Eval(h, s1) ==
        ScriptErr("ERR user_script:1: Script attempted to access nonexistent global variable 'x'",
                  s1));
  const std::string s2 = "x = 1";
  CHECK(Eval(h, s2) == ScriptErr("ERR user_script:1: Attempt to modify a readonly table", s2));
  const std::string s3 = "redis.call('set','s','abc') return redis.call('incr','s')";
  CHECK(Eval(h, s3) == ScriptErr("ERR value is not an integer or out of range", s3));
  const std::string s4 = "return redis.call('nosuch')";
  CHECK(Eval(h, s4) == ScriptErr("ERR Unknown Redis command called from script", s4));
  const std::string s5 = "return redis.call('get')";
  CHECK(Eval(h, s5) == ScriptErr("ERR Wrong number of args calling Redis command from script", s5));
  const std::string s6 = "return redis.call('multi')";
  CHECK(Eval(h, s6) == ScriptErr("ERR This Redis command is not allowed from script", s6));
  const std::string s7 = "return error({err='boom'})";
  CHECK(Eval(h, s7) == ScriptErr("boom", s7));
  const std::string s8 = "\n\nerror('boom')";
  CHECK(Eval(h, s8) == ScriptErr("ERR user_script:3: boom", s8, 3));
  CHECK(Eval(h, "return 'a' ..") ==
        Err("ERR Error compiling script (new function): user_script:1: unexpected symbol near "
            "'<eof>'"));
  CHECK(Eval(h, "return redis.error_reply('My Error')") == "-My Error\r\n");
  CHECK(Eval(h, "return redis.error_reply('oops')") == Err("ERR oops"));
  CHECK(Eval(h, "return redis.status_reply('fine')") == Simple("fine"));
}

TEST_CASE("EVAL argument errors, EVALSHA and SCRIPT LOAD / EXISTS / FLUSH") {
  Harness h;
  CHECK(Eval(h, "return 1", {"-1"}) == Err("ERR Number of keys can't be negative"));
  CHECK(Eval(h, "return 1", {"2", "a"}) ==
        Err("ERR Number of keys can't be greater than number of args"));
  CHECK(Eval(h, "return 1", {"x"}) == NotIntegerErr());
  const std::string sha = Sha1Hex("return 1");
  CHECK(h.Run({"EVALSHA", sha, "0"}) == "-NOSCRIPT No matching script. Please use EVAL.\r\n");
  CHECK(h.Run({"SCRIPT", "LOAD", "return 1"}) == Bulk(sha));
  CHECK(h.Run({"EVALSHA", sha, "0"}) == Int(1));
  CHECK(h.Run({"EVALSHA", "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB", "0"}) == Int(1));
  CHECK(h.Run({"SCRIPT", "EXISTS", sha, "nope"}) == Arr({Int(1), Int(0)}));
  CHECK(h.Run({"SCRIPT", "FLUSH", "foo"}) ==
        Err("ERR SCRIPT FLUSH only support SYNC|ASYNC option"));
  CHECK(h.Run({"SCRIPT", "FLUSH", "ASYNC"}) == Ok());
  CHECK(h.Run({"SCRIPT", "EXISTS", sha}) == Arr({Int(0)}));
  CHECK(h.Run({"EVALSHA", sha, "0"}) == "-NOSCRIPT No matching script. Please use EVAL.\r\n");
  CHECK(Eval(h, "return 1") == Int(1));  // EVAL caches the script too
  CHECK(h.Run({"EVALSHA", sha, "0"}) == Int(1));
  CHECK(
      h.Run({"SCRIPT", "LOAD", "return +"}) ==
      Err("ERR Error compiling script (new function): user_script:1: unexpected symbol near '+'"));
  CHECK(h.Run({"SCRIPT", "KILL"}) == "-NOTBUSY No scripts in execution right now.\r\n");
  CHECK(h.Run({"INFO", "memory"}).find("number_of_cached_scripts:1") != std::string::npos);
}

TEST_CASE("shebang flags, EVAL_RO and no-writes") {
  Harness h;
  CHECK(Eval(h, "#!lua\nreturn 1") == Int(1));
  CHECK(Eval(h, "#!lua name=x\nreturn 1") == Err("ERR Unknown lua shebang option: name=x"));
  CHECK(Eval(h, "#!lua flags=bogus\nreturn 1") ==
        Err("ERR Unexpected flag in script shebang: bogus"));
  CHECK(Eval(h, "#!lu\nreturn 1") == Err("ERR Unexpected engine in script shebang: #!lu"));
  const std::string nw = "#!lua flags=no-writes,allow-oom\nreturn redis.call('set','a','b')";
  CHECK(Eval(h, nw) ==
        ScriptErr("ERR Write commands are not allowed from read-only scripts.", nw, 2));
  const std::string ro = "return redis.call('set','a','b')";
  CHECK(h.Run({"EVAL_RO", ro, "0"}) ==
        ScriptErr("ERR Write commands are not allowed from read-only scripts.", ro));
  // May-replicate commands count as writes there (so CLIENT PAUSE WRITE may run them), not in
  // a script that may write.
  for (const std::string call :
       {"return redis.call('publish','ch','m')", "return redis.call('pfcount','h')"}) {
    CHECK(h.Run({"EVAL_RO", call, "0"}) ==
          ScriptErr("ERR Write commands are not allowed from read-only scripts.", call));
    CHECK(Eval(h, call) == Int(0));
  }
  CHECK(h.Run({"EVAL_RO", "#!lua\nreturn 1", "0"}) ==
        Err("ERR Can not execute a script with write flag using *_ro command."));
  CHECK(Eval(h, "#!lua\nreturn 1") == Int(1));  // compiled and remembered with its flags
  CHECK(h.Run({"EVAL_RO", "#!lua\nreturn 1", "0"}) ==
        Err("ERR Can not execute a script with write flag using *_ro command."));
  CHECK(h.Run({"EVALSHA_RO", Sha1Hex("#!lua\nreturn 1"), "0"}) ==
        Err("ERR Can not execute a script with write flag using *_ro command."));
  CHECK(h.Run({"EVALSHA", Sha1Hex(nw), "0"}) ==
        ScriptErr("ERR Write commands are not allowed from read-only scripts.", nw, 2));
  CHECK(h.Run({"SET", "a", "1"}) == Ok());
  CHECK(h.Run({"EVAL_RO", "return redis.call('get', KEYS[1])", "1", "a"}) == Bulk("1"));
}

TEST_CASE(
    "the sandbox: no os/io/print, protected globals and libraries, cjson/bit/struct/cmsgpack") {
  Harness h;
  CHECK(Eval(h, "return print").find("nonexistent global variable 'print'") != std::string::npos);
  CHECK(Eval(h, "return os").find("nonexistent global variable 'os'") != std::string::npos);
  CHECK(Eval(h, "return type(loadfile)").find("'loadfile'") != std::string::npos);
  CHECK(Eval(h, "string.x = 1").find("Attempt to modify a readonly table") != std::string::npos);
  CHECK(Eval(h, "rawset(_G, 'x', 1)").find("-ERR Attempt to modify a readonly table script:") == 0);
  CHECK(Eval(h, "redis = nil").find("Attempt to modify a readonly table") != std::string::npos);
  CHECK(Eval(h, "return redis.call('ping')['ok']") == Bulk("PONG"));  // redis survived
  CHECK(Eval(h, "return cjson.encode({1,2,{a=1}})") == Bulk("[1,2,{\"a\":1}]"));
  CHECK(Eval(h, "return {pcall(cjson.decode, '[1,')}").substr(0, 9) == "*2\r\n$-1\r\n");
  CHECK(Eval(h, "return bit.band(7,3)") == Int(3));
  CHECK(Eval(h, "return struct.pack('>I2',258)") == Bulk("\x01\x02"));
  CHECK(Eval(h, "return {struct.unpack('>I2','\\1\\2')}") == Arr({Int(258), Int(3)}));
  CHECK(Eval(h, "return {struct.unpack('<i4>hB', struct.pack('<i4>hB', -5, -2, 200))}") ==
        Arr({Int(-5), Int(-2), Int(200), Int(8)}));
  CHECK(Eval(h, "return struct.size('>I2 i8 d')") == Int(18));
  CHECK(Eval(h, "return cmsgpack.pack({1,2,3})") == Bulk("\x93\x01\x02\x03"));
  CHECK(Eval(h, "return cmsgpack.unpack(cmsgpack.pack({1,'a',{b=2}}))") ==
        Arr({Int(1), Bulk("a"), Arr({})}));
  CHECK(Eval(h,
             "local t = cmsgpack.unpack(cmsgpack.pack({-100, 70000, 5000000000, 1.5, 'x'}))"
             " return {t[1], t[2], t[3], t[4] * 2, t[5]}") ==
        Arr({Int(-100), Int(70000), Int(5000000000), Int(3), Bulk("x")}));
  // unpack_one / unpack_limit: the next value's offset first, -1 once the input is used up.
  CHECK(Eval(h, "return {cmsgpack.unpack_one(cmsgpack.pack(7, 'ab', 9))}") ==
        Arr({Int(1), Int(7)}));
  CHECK(Eval(h, "return {cmsgpack.unpack_one(cmsgpack.pack(7, 'ab', 9), 1)}") ==
        Arr({Int(4), Bulk("ab")}));
  CHECK(Eval(h, "return {cmsgpack.unpack_limit(cmsgpack.pack(7, 'ab', 9), 5, 1)}") ==
        Arr({Int(-1), Bulk("ab"), Int(9)}));
  CHECK(Eval(h, "return {cmsgpack.unpack_limit(cmsgpack.pack(7, 8), 0)}") == Arr({Int(7), Int(8)}));
  CHECK(Eval(h, "return {cmsgpack.unpack_one(cmsgpack.pack(7), 1)}") == Arr({Int(-1)}));
  CHECK(Eval(h, "return {pcall(cmsgpack.unpack_one, 'abc', 4)}") ==
        Arr({Nil(), Bulk("Start offset 4 greater than input length 3.")}));
  CHECK(Eval(h, "return {pcall(cmsgpack.unpack_limit, 'abc', -1)}") ==
        Arr({Nil(), Bulk("Invalid request to unpack with offset of 0 and limit of 3.")}));
}

TEST_CASE("a script that allocates without bound gets an error and the server goes on") {
  Harness h;
  CHECK(Eval(h,
             "local s = string.rep('x', 1048576) local t = {} "
             "for i = 1, 100000 do t[i] = s .. i end return #t")
            .find("not enough memory") != std::string::npos);
  CHECK(Eval(h, "return 1") == Int(1));
}

TEST_CASE("inside MULTI, EVAL is queued and runs in the EXEC's unit") {
  Harness h;
  CHECK(h.Run({"MULTI"}) == Ok());
  CHECK(Eval(h, "return redis.call('incr', KEYS[1])", {"1", "c"}) == Simple("QUEUED"));
  CHECK(h.Run({"INCR", "c"}) == Simple("QUEUED"));
  CHECK(h.Run({"EXEC"}) == Arr({Int(1), Int(2)}));
}

TEST_CASE("a script's writes commit together; SELECT inside a script does not outlive it") {
  Harness h;
  CHECK(Eval(h, "redis.call('set','a','1') redis.call('set','b','2') return 1") == Int(1));
  CHECK(h.Run({"MGET", "a", "b"}) == Arr({Bulk("1"), Bulk("2")}));
  CHECK(Eval(h, "redis.call('select', 1) redis.call('set','a','other') return 1") == Int(1));
  CHECK(h.Run({"GET", "a"}) == Bulk("1"));
  // An error stops the script; what it wrote before stays (as in Redis).
  CHECK(Eval(h, "redis.call('set','c','1') error('stop')").find("stop") != std::string::npos);
  CHECK(h.Run({"GET", "c"}) == Bulk("1"));
}

TEST_CASE("an undeclared key held by another unit makes the script run again under every stripe") {
  Harness h;
  {
    const HeldKey hot(h.store(), "hot", "10");
    // "hot" is not declared: its stripe is busy, so the first run stops and the whole script
    // runs again once every stripe is free; the effects of the first run are discarded.
    CHECK(Eval(h, "redis.call('incr', KEYS[1]) return redis.call('incrby', 'hot', 5)",
               {"1", "counter"}) == Int(15));
  }
  CHECK(h.Run({"GET", "counter"}) == Bulk("1"));
  CHECK(h.Run({"GET", "hot"}) == Bulk("15"));
}

TEST_CASE("a script in a batch joins its commit group; a busy undeclared key runs it alone") {
  CommitCounter counting;  // outlives the store
  Harness h;
  REQUIRE(h.store().AddCommitObserver(&counting).ok());
  // Joined: the batch's SET and the script that reads and writes keys it did not declare are
  // one RocksDB write (a commit observer hears one commit).
  const std::string script = "return redis.call('incrby', 'other', redis.call('get', KEYS[1]))";
  CHECK(h.RunBatch({{"SET", "n", "4"}, {"EVAL", script, "1", "n"}, {"GET", "other"}}) ==
        std::vector<std::string>{Ok(), Int(4), Bulk("4")});
  CHECK(counting.commits.load() == 1);
  // "hot" is held by another unit: the script stops as a member, runs again alone after the
  // group's write (and, the stripe still busy, once more under every stripe); the SET before
  // it is written once, and the script's first runs leave nothing.
  {
    const HeldKey hot(h.store(), "hot", "10");
    counting.commits = 0;
    CHECK(h.RunBatch({{"SET", "before", "1"},
                      {"EVAL", "redis.call('incr', KEYS[1]) return redis.call('incrby', 'hot', 5)",
                       "1", "counter"},
                      {"GET", "counter"}}) == std::vector<std::string>{Ok(), Int(15), Bulk("1")});
  }
  CHECK(counting.commits.load() == 2);  // the group (SET), then the script alone
  CHECK(h.Run({"GET", "before"}) == Bulk("1"));
  CHECK(h.Run({"GET", "hot"}) == Bulk("15"));
}

}  // namespace sluice::server::testing
