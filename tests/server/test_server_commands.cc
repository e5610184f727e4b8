// PING, ECHO, TIME, DBSIZE, FLUSHDB, FLUSHALL, SHUTDOWN, DEBUG, INFO and COMMAND, byte for byte.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "server/core/command.h"
#include "tests/server/harness.h"

namespace sluice::server::testing {

namespace {
bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}
}  // namespace

TEST_CASE("PING and ECHO") {
  Harness h;
  CHECK(h.Cmd("PING") == Simple("PONG"));
  CHECK(h.Cmd("PING hello") == Bulk("hello"));
  CHECK(h.Cmd("PING a b") == Err("ERR wrong number of arguments for 'ping' command"));
  CHECK(h.Cmd("ECHO hi") == Bulk("hi"));
  CHECK(h.Run({"ECHO", ""}) == Bulk(""));
  CHECK(h.Cmd("ECHO") == Err("ERR wrong number of arguments for 'echo' command"));
  CHECK(h.Cmd("ECHO a b") == Err("ERR wrong number of arguments for 'echo' command"));
  h.Resp3();
  CHECK(h.Cmd("PING") == Simple("PONG"));
}

TEST_CASE("TIME follows the server clock") {
  Harness h;  // manual time 1'700'000'000'000 ms
  CHECK(h.Cmd("TIME") == Arr({Bulk("1700000000"), Bulk("0")}));
  h.AdvanceMs(1500);
  CHECK(h.Cmd("TIME") == Arr({Bulk("1700000001"), Bulk("500000")}));
  CHECK(h.Cmd("TIME x") == Err("ERR wrong number of arguments for 'time' command"));
}

TEST_CASE("DBSIZE, FLUSHDB and FLUSHALL") {
  Harness h;
  CHECK(h.Cmd("DBSIZE") == Int(0));
  h.Cmd("SET a 1");
  h.Cmd("SET b 2");
  CHECK(h.Cmd("DBSIZE") == Int(2));
  h.Cmd("SELECT 1");
  h.Cmd("SET c 3");
  CHECK(h.Cmd("DBSIZE") == Int(1));
  CHECK(h.Cmd("FLUSHDB") == Ok());
  CHECK(h.Cmd("DBSIZE") == Int(0));
  h.Cmd("SELECT 0");
  CHECK(h.Cmd("DBSIZE") == Int(2));
  CHECK(h.Cmd("FLUSHDB x") == Err("ERR syntax error"));
  CHECK(h.Cmd("FLUSHDB ASYNC x") == Err("ERR syntax error"));
  CHECK(h.Cmd("DBSIZE x") == Err("ERR wrong number of arguments for 'dbsize' command"));
  h.Cmd("SELECT 5");
  h.Cmd("SET d 4");
  CHECK(h.Cmd("FLUSHALL SYNC") == Ok());
  CHECK(h.Cmd("DBSIZE") == Int(0));
  h.Cmd("SELECT 0");
  CHECK(h.Cmd("DBSIZE") == Int(0));
  CHECK(h.Cmd("FLUSHALL async") == Ok());
  CHECK(h.Cmd("FLUSHALL x") == Err("ERR syntax error"));
}

TEST_CASE("SHUTDOWN requests a shutdown and sends no reply") {
  Harness h;
  int calls = 0;
  h.server().set_shutdown_hook([&calls] { ++calls; });
  CHECK(h.Cmd("SHUTDOWN bogus") == Err("ERR syntax error"));
  CHECK(calls == 0);
  CHECK(h.Cmd("SHUTDOWN NOSAVE") == "");
  CHECK(calls == 1);
  CHECK(h.server().shutdown_requested());
  CHECK(h.client().close_after_reply);
  h.server().set_shutdown_hook(nullptr);
}

TEST_CASE("DEBUG CLOCK drives key expiry") {
  Harness h;
  CHECK(h.Cmd("SET k v PX 100") == Ok());
  CHECK(h.Cmd("DEBUG CLOCK ADVANCE 99") == Ok());
  CHECK(h.Cmd("GET k") == Bulk("v"));
  CHECK(h.Cmd("DEBUG CLOCK ADVANCE 2") == Ok());
  CHECK(h.Cmd("GET k") == Nil());
  CHECK(h.Cmd("DEBUG CLOCK SET 1800000000000") == Ok());
  CHECK(h.Cmd("DEBUG CLOCK GET") == Int(1800000000000));
  CHECK(h.Cmd("TIME") == Arr({Bulk("1800000000"), Bulk("0")}));
  CHECK(h.Cmd("DEBUG CLOCK REAL") == Ok());
  CHECK(!h.clock().manual());
}

TEST_CASE("DEBUG errors") {
  Harness h;
  CHECK(h.Cmd("DEBUG CLOCK SET x") == Err("ERR value is not an integer or out of range"));
  CHECK(h.Cmd("DEBUG CLOCK SET -5") == Err("ERR value is not an integer or out of range"));
  CHECK(h.Cmd("DEBUG CLOCK ADVANCE 99999999999999999") ==
        Err("ERR value is not an integer or out of range"));
  CHECK(h.Cmd("DEBUG CLOCK") == Err("ERR syntax error"));
  CHECK(h.Cmd("DEBUG CLOCK JUMP 5") == Err("ERR syntax error"));
}

// Regression (UBSan: signed integer overflow in AdjustableClock::AdvanceNs): an advance that
// would take the clock past int64 nanoseconds, or before the epoch, is refused and changes
// nothing, in manual and in real mode alike.
TEST_CASE("DEBUG CLOCK ADVANCE cannot overflow the clock") {
  Harness h;
  const std::string out_of_range = Err("ERR value is not an integer or out of range");
  constexpr int64_t kMaxMs = INT64_MAX / 1'000'000;  // 9223372036854
  CHECK(h.Cmd("DEBUG CLOCK SET " + std::to_string(kMaxMs)) == Ok());
  CHECK(h.Cmd("DEBUG CLOCK ADVANCE " + std::to_string(kMaxMs)) == out_of_range);
  CHECK(h.Cmd("DEBUG CLOCK ADVANCE 1") == out_of_range);
  CHECK(h.Cmd("DEBUG CLOCK GET") == Int(kMaxMs));
  CHECK(h.Cmd("DEBUG CLOCK ADVANCE -" + std::to_string(kMaxMs)) == Ok());
  CHECK(h.Cmd("DEBUG CLOCK GET") == Int(0));
  CHECK(h.Cmd("DEBUG CLOCK ADVANCE -1") == out_of_range);
  CHECK(h.Cmd("DEBUG CLOCK REAL") == Ok());
  CHECK(h.Cmd("DEBUG CLOCK ADVANCE " + std::to_string(kMaxMs)) == out_of_range);
  CHECK(h.Cmd("DEBUG CLOCK ADVANCE -" + std::to_string(kMaxMs)) == out_of_range);
  CHECK(!h.clock().manual());
  CHECK(h.Cmd("DEBUG CLOCK ADVANCE 1000") == Ok());
  CHECK(h.clock().manual());
}

TEST_CASE("DEBUG errors, continued") {
  Harness h;
  CHECK(h.Cmd("DEBUG JMAP") == Err("ERR unknown subcommand 'JMAP'. Try DEBUG HELP."));
  CHECK(h.Cmd("DEBUG") == Err("ERR wrong number of arguments for 'debug' command"));
  CHECK(h.Cmd("DEBUG SLEEP x") == Err("ERR value is not a valid float"));
  CHECK(h.Cmd("DEBUG SLEEP 0") == Ok());
  CHECK(h.Cmd("DEBUG HELP").rfind("*28\r\n+DEBUG <subcommand>", 0) == 0);
}

// Replies as redis-server 7.0.15 gave them for the same commands.
TEST_CASE("DEBUG POPULATE: count keys <prefix>:<n> holding value:<n>, sized; existing kept") {
  Harness h;
  CHECK(h.Cmd("SET key:0 mine") == Ok());
  CHECK(h.Cmd("DEBUG POPULATE 3") == Ok());
  CHECK(h.Cmd("DEBUG POPULATE 2 p 10") == Ok());
  CHECK(h.Cmd("DEBUG POPULATE 2 q 3") == Ok());
  CHECK(h.Cmd("DBSIZE") == ":7\r\n");
  CHECK(h.Cmd("GET key:0") == "$4\r\nmine\r\n");
  CHECK(h.Cmd("GET key:2") == "$7\r\nvalue:2\r\n");
  CHECK(h.Cmd("GET p:1") == std::string("$10\r\nvalue:1\0\0\0\r\n", 17));
  CHECK(h.Cmd("GET q:1") == "$3\r\nval\r\n");
  const std::string not_positive = Err("ERR value is out of range, must be positive");
  CHECK(h.Cmd("DEBUG POPULATE -1") == not_positive);
  CHECK(h.Cmd("DEBUG POPULATE x") == not_positive);
  CHECK(h.Cmd("DEBUG POPULATE 1 k -2") == not_positive);
  CHECK(h.Cmd("DEBUG POPULATE 0") == Ok());
}

// Sluice's own digits (not redis-server's): what the cluster units compare is that equal
// datasets give equal digests, whatever the order they were written in, and an empty one zeros.
TEST_CASE("DEBUG DIGEST / DIGEST-VALUE: equal datasets, equal digests; empty is zeros") {
  const std::string zeros = Bulk(std::string(40, '0'));
  Harness a, b;
  CHECK(a.Cmd("DEBUG DIGEST") == zeros);
  CHECK(a.Cmd("SET k v") == Ok());
  CHECK(a.Cmd("RPUSH l x y") == Int(2));
  CHECK(a.Cmd("SELECT 2") == Ok());
  CHECK(a.Cmd("HSET h f v") == Int(1));
  CHECK(b.Cmd("SELECT 2") == Ok());
  CHECK(b.Cmd("HSET h f v") == Int(1));
  CHECK(b.Cmd("SELECT 0") == Ok());
  CHECK(b.Cmd("RPUSH l x y") == Int(2));
  CHECK(b.Cmd("DEBUG DIGEST") != a.Cmd("DEBUG DIGEST"));
  CHECK(b.Cmd("SET k v") == Ok());
  const std::string digest = a.Cmd("DEBUG DIGEST");
  CHECK(digest != zeros);
  CHECK(b.Cmd("DEBUG DIGEST") == digest);
  CHECK(b.Cmd("EXPIRE k 100") == Int(1));
  CHECK(b.Cmd("DEBUG DIGEST") != digest);
  CHECK(a.Cmd("DEBUG DIGEST x") == Err("ERR syntax error"));
  CHECK(a.Cmd("SELECT 0") == Ok());
  const std::string values = a.Cmd("DEBUG DIGEST-VALUE k nosuchkey");
  CHECK(values.substr(0, 4) == "*2\r\n");
  CHECK(values.substr(values.size() - zeros.size()) == zeros);
  CHECK(b.Cmd("DEBUG DIGEST-VALUE k nosuchkey") == values);  // the TTL is not part of it
}

TEST_CASE("DEBUG DROP-CLUSTER-PACKET-FILTER: accepted outside cluster mode, as Redis") {
  Harness h;
  CHECK(h.Cmd("DEBUG DROP-CLUSTER-PACKET-FILTER 1") == Ok());
  CHECK(h.Cmd("DEBUG DROP-CLUSTER-PACKET-FILTER -1") == Ok());
  CHECK(h.Cmd("DEBUG DROP-CLUSTER-PACKET-FILTER x") ==
        Err("ERR value is not an integer or out of range"));
}

TEST_CASE("DEBUG KEYSPACE-CHECK: the DBSIZE counts against a walk of every key") {
  Harness h;
  CHECK(h.Cmd("DEBUG KEYSPACE-CHECK") == Ok());
  CHECK(h.Cmd("SET a 1") == Ok());
  CHECK(h.Cmd("SET t 1 PX 100") == Ok());
  CHECK(h.Cmd("HSET h f v") == Int(1));
  CHECK(h.Cmd("SELECT 3") == Ok());
  CHECK(h.Cmd("RPUSH l x") == Int(1));
  CHECK(h.Cmd("DEBUG keyspace-check") == Ok());
  CHECK(h.Cmd("DEBUG KEYSPACE-CHECK x") == Err("ERR syntax error"));
  CHECK(h.Cmd("LPOP l") == Bulk("x"));
  CHECK(h.Cmd("DBSIZE") == Int(0));
  CHECK(h.Cmd("SELECT 0") == Ok());
  CHECK(h.Cmd("DBSIZE") == Int(3));
  CHECK(h.Cmd("INFO keyspace") == Bulk("# Keyspace\r\ndb0:keys=3,expires=1,avg_ttl=0\r\n"));
  CHECK(h.Cmd("DEBUG KEYSPACE-CHECK") == Ok());
}

TEST_CASE("DEBUG is refused unless enable-debug-command is yes") {
  Harness h;
  Config config = h.server().config();
  config.enable_debug_command = false;
  h.server().set_config(config);
  CHECK(h.Cmd("DEBUG CLOCK ADVANCE 1") ==
        Err("ERR DEBUG command not allowed. If the enable-debug-command option is set to "
            "\"local\", you can run it from a local connection, otherwise you need to set this "
            "option in the configuration file, and then restart the server."));
}

TEST_CASE("INFO has the required sections and fields") {
  Harness h;
  h.Cmd("SET a 1");
  h.Cmd("SET b 2 PX 5000");
  h.Cmd("SELECT 3");
  h.Cmd("SET c 3");
  std::string info = h.Cmd("INFO");
  REQUIRE(info.rfind("$", 0) == 0);
  for (const char* field : {"# Server\r\nredis_version:7.0.15\r\n",
                            "sluice_version:" SLUICE_VERSION "\r\n",
                            "redis_mode:standalone\r\n",
                            "\r\nos:",
                            "\r\narch_bits:64\r\n",
                            "\r\nprocess_id:",
                            "\r\ntcp_port:",
                            "\r\nuptime_in_seconds:",
                            "\r\nuptime_in_days:",
                            "\r\nexecutable:",
                            "\r\nconfig_file:",
                            "\r\n\r\n# Clients\r\nconnected_clients:1\r\n",
                            "# Memory\r\n",
                            "# Persistence\r\nloading:0\r\n",
                            "\r\naof_enabled:1\r\n",
                            "\r\nappendfsync:everysec\r\n",
                            "\r\nsluice_background_running:",
                            "\r\nsluice_background_pending:",
                            "# Stats\r\n",
                            "\r\ntotal_commands_processed:",
                            "\r\nexpired_keys:0\r\nexpired_stale_perc:0.00\r\n"
                            "expired_time_cap_reached_count:",
                            "\r\nexpire_cycle_cpu_milliseconds:",
                            "# Keyspace\r\n",
                            "db0:keys=2,expires=1,avg_ttl=0\r\ndb3:keys=1,expires=0,avg_ttl=0\r\n",
                            "# Limiters\r\ngcra_take_calls:0\r\n"}) {
    CAPTURE(field);
    CHECK(Contains(info, field));
  }
}

TEST_CASE("INFO sections, case and unknown names") {
  Harness h;
  std::string keyspace = h.Cmd("INFO keyspace");
  CHECK(keyspace == Bulk("# Keyspace\r\n"));
  CHECK(h.Cmd("INFO nosuch") == Bulk(""));
  std::string two = h.Cmd("INFO KEYSPACE persistence");
  CHECK(Contains(two, "# Persistence\r\n"));
  CHECK(Contains(two, "\r\n\r\n# Keyspace\r\n"));
  CHECK(!Contains(two, "# Server"));
  h.server().limiter_stats().Record(LimiterCommand::kGcraTake, true);
  h.server().limiter_stats().Record(LimiterCommand::kGcraTake, false);
  std::string limiters = h.Cmd("INFO limiters");
  CHECK(Contains(limiters,
                 "# Limiters\r\ngcra_take_calls:2\r\ngcra_take_allowed:1\r\n"
                 "gcra_take_denied:1\r\n"));
  CHECK(Contains(limiters, "conc_release_denied:0\r\n"));
  for (const char* all : {"all", "everything", "default"}) {
    std::string text = h.Cmd(std::string("INFO ") + all);
    for (const char* section :
         {"# Server\r\n", "# Clients\r\n", "# Memory\r\n", "# Persistence\r\n", "# Stats\r\n",
          "# Keyspace\r\n", "# Limiters\r\n"}) {
      CHECK(Contains(text, section));
    }
  }
  h.Resp3();
  CHECK(h.Cmd("INFO keyspace") == "=16\r\ntxt:# Keyspace\r\n\r\n");
}

TEST_CASE("COMMAND COUNT equals the number of top-level commands in the table") {
  Harness h;
  int64_t top = 0;
  for (const CommandSpec& spec : h.table().all()) {
    if (spec.name.find('|') == std::string::npos) ++top;
  }
  CHECK(top > 30);
  CHECK(h.Cmd("COMMAND COUNT") == Int(top));
  CHECK(h.Cmd("COMMAND COUNT x") ==
        Err("ERR wrong number of arguments for 'command|count' command"));
  CHECK(h.Cmd("COMMAND FOO") == Err("ERR unknown subcommand 'FOO'. Try COMMAND HELP."));
  CHECK(h.Cmd("COMMAND").rfind("*" + std::to_string(top) + "\r\n", 0) == 0);
}

TEST_CASE("COMMAND INFO in Redis 7's shape") {
  Harness h;
  CHECK(h.Cmd("COMMAND INFO ping nosuch") ==
        Arr({Arr({Bulk("ping"), Int(-1), Arr({Simple("fast")}), Int(0), Int(0), Int(0),
                  Arr({Simple("@fast"), Simple("@connection")}), Arr({}), Arr({}), Arr({})}),
             NilArray()}));
  std::string config = h.Cmd("COMMAND INFO config");
  CHECK(config.rfind("*1\r\n*10\r\n$6\r\nconfig\r\n:-2\r\n", 0) == 0);
  CHECK(Contains(config, "$10\r\nconfig|get\r\n:-3\r\n"));
  h.Resp3();
  CHECK(h.Cmd("COMMAND INFO ping") ==
        Arr({Arr({Bulk("ping"), Int(-1), "~1\r\n+fast\r\n", Int(0), Int(0), Int(0),
                  "~2\r\n+@fast\r\n+@connection\r\n", "~0\r\n", "~0\r\n", "~0\r\n"})}));
  // With subcommands, an array of them (Redis's addReplyCommandSubCommands).
  CHECK(Contains(h.Cmd("COMMAND INFO config"), "~0\r\n*5\r\n*10\r\n$10\r\nconfig|"));
}

TEST_CASE("COMMAND DOCS and COMMAND LIST") {
  Harness h;
  h.Resp3();
  CHECK(h.Cmd("COMMAND DOCS echo") ==
        Map({Bulk("echo"),
             Map({Bulk("summary"), Bulk("Returns the given string."), Bulk("since"), Bulk("1.0.0"),
                  Bulk("group"), Bulk("connection"), Bulk("arguments"),
                  Arr({Map({Bulk("name"), Bulk("message"), Bulk("type"), Bulk("string")})})})}));
  CHECK(h.Cmd("COMMAND DOCS nosuch") == Map({}));
  std::string config = h.Cmd("COMMAND DOCS config");
  CHECK(Contains(config, "$11\r\nsubcommands\r\n%5\r\n$10\r\nconfig|get\r\n"));
  CHECK(h.Cmd("COMMAND LIST FILTERBY PATTERN config*") ==
        Arr({Bulk("config"), Bulk("config|get"), Bulk("config|set"), Bulk("config|resetstat"),
             Bulk("config|rewrite"), Bulk("config|help")}));
  CHECK(h.Cmd("COMMAND LIST FILTERBY MODULE x") == Arr({}));
  CHECK(h.Cmd("COMMAND LIST FILTERBY x y") == Err("ERR syntax error"));
  CHECK(h.Cmd("COMMAND LIST x") == Err("ERR syntax error"));
  std::string all = h.Cmd("COMMAND LIST");
  CHECK(Contains(all, "$4\r\nping\r\n"));
  CHECK(Contains(all, "$11\r\nclient|list\r\n"));
}

}  // namespace sluice::server::testing
