// Recognised library scripts inside a connection's read batch: a call whose native op keeps to
// its declared keys runs as a plain data command, a member of the batch's commit group (one
// RocksDB write for the batch). Every batch runs once with native-scripts yes and once with no
// (the bodies in Lua, each in a script unit of its own) and must give the same replies, keys,
// values and TTLs; the number of commits shows which way the calls ran.
#include <doctest/doctest.h>

#include <atomic>
#include <span>
#include <string>
#include <vector>

#include "server/scripting/lua_sha1.h"
#include "tests/server/harness.h"
#include "tests/server/script_bodies.h"

namespace sluice::server::testing {

namespace {

// "native=N,interpreted=M" of one script in INFO native_scripts.
std::string Counts(Harness& h, const std::string& name) {
  const std::string info = h.Cmd("INFO native_scripts");
  const size_t at = info.find("native_script_" + name + ":");
  REQUIRE(at != std::string::npos);
  const size_t from = info.find(",native=", at) + 1;
  return info.substr(from, info.find("\r\n", from) - from);
}

using Batch = std::vector<std::vector<std::string>>;

// One harness with native-scripts yes, one with no; the counters outlive their stores.
struct Pair {
  CommitCounter native_commits;
  CommitCounter lua_commits;
  Harness native;
  Harness lua;
  Pair() {
    REQUIRE(native.store().AddCommitObserver(&native_commits).ok());
    REQUIRE(lua.store().AddCommitObserver(&lua_commits).ok());
    REQUIRE(native.Cmd("CONFIG SET native-scripts yes") == Ok());
    REQUIRE(lua.Cmd("CONFIG SET native-scripts no") == Ok());
  }
  std::vector<std::string> bodies;  // loaded on both sides
  // Each harness has its own script cache, and a thread's Lua state follows the cache it last
  // served: SCRIPT LOAD again on the side about to run, as a server's single cache would have
  // them compiled on its threads already.
  void Prime(Harness& h) {
    for (const std::string& body : bodies) REQUIRE(h.Run({"SCRIPT", "LOAD", body}) != "");
  }
  // Runs the batch on both; every reply must match. Returns the native side's replies.
  std::vector<std::string> Batch(const testing::Batch& commands) {
    Prime(native);
    const std::vector<std::string> a = native.RunBatch(commands);
    Prime(lua);
    const std::vector<std::string> b = lua.RunBatch(commands);
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      CAPTURE(i);
      CAPTURE(commands[i][0]);
      CHECK(a[i] == b[i]);
    }
    return a;
  }
  void Run(const std::vector<std::string>& args) { Batch({args}); }
  void Advance(int64_t ms) {
    native.AdvanceMs(ms);
    lua.AdvanceMs(ms);
  }
  void SameKey(const std::string& key) {
    Batch({{"TYPE", key}, {"GET", key}, {"LRANGE", key, "0", "-1"}, {"PTTL", key}});
  }
  // Loads the body on both sides (outside any measured batch); returns its SHA1.
  std::string Load(const std::string& body) {
    const std::string sha = Sha1Hex(body);
    REQUIRE(native.Run({"SCRIPT", "LOAD", body}) == Bulk(sha));
    REQUIRE(lua.Run({"SCRIPT", "LOAD", body}) == Bulk(sha));
    bodies.push_back(body);
    return sha;
  }
  // Commits made by the last call of f on each side.
  template <typename F>
  std::pair<int, int> CommitsOf(F f) {
    const int n0 = native_commits.commits.load();
    const int l0 = lua_commits.commits.load();
    f();
    return {native_commits.commits.load() - n0, lua_commits.commits.load() - l0};
  }
};

}  // namespace

TEST_CASE("native scripts in a batch: members of the commit group, replies and keys as Lua") {
  for (bool resp3 : {false, true}) {
    CAPTURE(resp3);
    Pair p;
    if (resp3) {
      p.native.Resp3();
      p.lua.Resp3();
    }
    const std::string incr = p.Load(Body("ulule-limiter_incr.lua"));
    const std::string peek = p.Load(Body("ulule-limiter_peek.lua"));
    const std::string rlf = p.Load(Body("rate-limiter-flexible_incr_ttl.lua"));
    const std::string acquire = p.Load(Body("limits_acquire_moving_window.lua"));
    const std::string window = p.Load(Body("limits_moving_window.lua"));
    const std::string allow = p.Load(Body("redis_rate_allow_n.lua"));
    const std::string get = p.Load(Body("rate-limit-redis_get.lua"));
    const Batch batch = {
        {"SET", "u", "5", "PX", "9000"},
        {"EVALSHA", incr, "1", "u", "2", "60000"},  // an existing counter: PTTL kept
        {"EVALSHA", incr, "1", "v", "1", "60000"},  // a fresh one: PEXPIRE
        {"GET", "v"},
        {"EVALSHA", peek, "1", "v"},
        {"INCR", "v"},
        {"EVALSHA", peek, "1", "v"},
        {"EVALSHA", rlf, "1", "r", "1", "30"},
        {"EVALSHA", rlf, "1", "r", "2", "30"},
        {"PTTL", "r"},
        {"EVALSHA", acquire, "1", "w", "100.5", "2", "10", "1"},
        {"EVALSHA", acquire, "1", "w", "101", "2", "10", "1"},
        {"EVALSHA", acquire, "1", "w", "102", "2", "10", "1"},  // the window is full: false
        {"LRANGE", "w", "0", "-1"},
        {"EVALSHA", window, "1", "w", "95", "2"},
        {"EVALSHA", allow, "1", "g", "10", "10", "1", "1"},
        {"EVALSHA", allow, "1", "g", "10", "10", "1", "1"},
        {"GET", "g"},
        {"EVALSHA_RO", get, "1", "u"},
        {"EVALSHA", incr, "1", "u", "1", "60000"},
    };
    const auto [native_commits, lua_commits] = p.CommitsOf([&] { p.Batch(batch); });
    // The whole batch is one RocksDB write, natively and in Lua: a script interpreted is a
    // member of the commit group too, its reads of undeclared keys claimed into the group's.
    CHECK(native_commits == 1);
    CHECK(lua_commits == 1);
    for (const char* key : {"u", "v", "r", "w", "g"}) p.SameKey(key);
    p.Advance(9500);  // u's TTL ran out; the others keep theirs
    p.Batch({{"EVALSHA", peek, "1", "u"}, {"EVALSHA", incr, "1", "u", "1", "60000"}});
    for (const char* key : {"u", "v", "r", "w", "g"}) p.SameKey(key);
    CHECK(Counts(p.native, "ulule_limiter_incr") == "native=4,interpreted=0");
    CHECK(Counts(p.lua, "ulule_limiter_incr") == "native=0,interpreted=4");
    CHECK(p.native.server().stats().total_commands_processed.load() ==
          p.lua.server().stats().total_commands_processed.load());
  }
}

TEST_CASE("native scripts in a batch: a declined call runs in Lua, in a script unit") {
  Pair p;
  const std::string incr = p.Load(Body("ulule-limiter_incr.lua"));
  const std::string peek = p.Load(Body("ulule-limiter_peek.lua"));
  const std::string allow = p.Load(Body("redis_rate_allow_n.lua"));
  const Batch batch = {
      {"SET", "a", "1"},
      {"EVALSHA", incr, "1", "a", "1", "1000"},
      {"SET", "s", "abc"},
      {"EVALSHA", incr, "1", "s", "1", "1000"},    // INCRBY fails: Lua raises the error
      {"EVALSHA", peek, "1", "s"},                 // read, then declined (tonumber of "abc")
      {"EVALSHA", incr, "1", "b", "1.5", "1000"},  // declined before touching anything
      {"HSET", "h", "f", "v"},
      {"EVALSHA", allow, "1", "h", "1", "1", "60", "1"},  // WRONGTYPE from GET
      {"EVALSHA", incr, "0"},                             // no key: not a data call
      {"EVALSHA", incr, "1", "a", "1", "1000"},
      {"GET", "a"},
  };
  const std::vector<std::string> replies = p.Batch(batch);
  CHECK(replies[1] == Arr({Int(2), Int(-1)}));
  CHECK(replies[3].rfind("-ERR value is not an integer or out of range script: ", 0) == 0);
  CHECK(replies[4] == Arr({}));  // tonumber("abc") is nil: the reply ends there
  CHECK(replies[9] == Arr({Int(3), Int(-1)}));
  CHECK(replies[10] == Bulk("3"));
  for (const char* key : {"a", "s", "b", "h"}) p.SameKey(key);
  CHECK(p.native.server().stats().total_commands_processed.load() ==
        p.lua.server().stats().total_commands_processed.load());
  CHECK(p.native.server().stats().total_error_replies.load() ==
        p.lua.server().stats().total_error_replies.load());
  CHECK(Counts(p.native, "ulule_limiter_incr") == "native=2,interpreted=3");
  CHECK(Counts(p.native, "ulule_limiter_peek") == "native=0,interpreted=1");
  CHECK(Counts(p.native, "redis_rate_allow_n") == "native=0,interpreted=1");
}

TEST_CASE("native scripts in a batch: MULTI, WATCH, undeclared keys, CONFIG SET") {
  Pair p;
  const std::string incr_body = Body("ulule-limiter_incr.lua");
  const std::string incr = p.Load(incr_body);
  // MULTI inside the batch: the EVALSHA is queued and runs in the EXEC's unit.
  p.Batch({{"EVALSHA", incr, "1", "m", "1", "5000"},
           {"MULTI"},
           {"EVALSHA", incr, "1", "m", "1", "5000"},
           {"SET", "n", "1"},
           {"EVALSHA", incr, "1", "n", "4", "5000"},
           {"EXEC"},
           {"EVALSHA", incr, "1", "m", "1", "5000"}});
  p.SameKey("m");
  p.SameKey("n");
  // WATCH sees a native write made earlier in the same batch (the group is written before
  // MULTI and EXEC run): the EXEC fails.
  const std::vector<std::string> watched = p.Batch({{"WATCH", "m"},
                                                    {"EVALSHA", incr, "1", "m", "1", "5000"},
                                                    {"MULTI"},
                                                    {"GET", "m"},
                                                    {"EXEC"}});
  CHECK(watched[4] == NilArray());
  // A script that is not recognised reaches a key its call did not declare, which an earlier
  // member of the group locked: it runs after the group's write, in a unit of its own.
  p.Batch({{"SET", "other", "1"},
           {"EVALSHA", incr, "1", "x", "1", "5000"},
           {"EVAL", "return redis.call('INCR', 'other')", "0"},
           {"EVAL", incr_body, "1", "x", "1", "5000"},
           {"GET", "other"}});
  p.SameKey("x");
  // CONFIG SET native-scripts no in the middle of a batch: the next call runs in Lua.
  p.Batch({{"EVALSHA", incr, "1", "c", "1", "5000"},
           {"CONFIG", "SET", "native-scripts", "no"},
           {"EVALSHA", incr, "1", "c", "1", "5000"},
           {"CONFIG", "SET", "native-scripts", "yes"},
           {"EVALSHA", incr, "1", "c", "1", "5000"}});
  p.SameKey("c");
  CHECK(Counts(p.native, "ulule_limiter_incr") == "native=9,interpreted=1");
  // Lua's side ran every call interpreted (its CONFIG SET yes in the batch turned it on for the
  // last call, as on the native side).
  CHECK(Counts(p.lua, "ulule_limiter_incr") == "native=1,interpreted=9");
}

TEST_CASE("native scripts in a batch: hundreds of members on a few keys") {
  Pair p;
  const std::string incr = p.Load(Body("ulule-limiter_incr.lua"));
  const std::string fastify = p.Load(Body("fastify-rate-limit_incr.lua"));
  Batch batch;
  for (int i = 0; i < 150; ++i) {
    const std::string key = "k" + std::to_string(i % 7);
    batch.push_back({"EVALSHA", incr, "1", key, "1", "2000"});
    batch.push_back({"EVALSHA", fastify, "1", "f" + key, "1000", "3", "false", "true"});
    if (i % 10 == 0) batch.push_back({"PTTL", key});
  }
  const auto [native_commits, lua_commits] = p.CommitsOf([&] { p.Batch(batch); });
  // 14 keys: under CommitGroup::kMaxStripes, one write a round, native or interpreted.
  CHECK(native_commits == 1);
  CHECK(lua_commits == 1);
  for (int i = 0; i < 7; ++i) {
    p.SameKey("k" + std::to_string(i));
    p.SameKey("fk" + std::to_string(i));
  }
}

}  // namespace sluice::server::testing
