// Redis 7.0's parameters that Sluice stores without acting on them (config_compat.h), and
// CONFIG REWRITE (config_rewrite.h): values, aliases, Redis's errors, the file's rewrite.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "server/core/config.h"
#include "server/core/config_compat.h"
#include "server/core/config_rewrite.h"
#include "tests/server/harness.h"

namespace sluice::server::testing {

namespace {

std::string SetErr(std::string_view name, std::string_view reason) {
  return Err("ERR CONFIG SET failed (possibly related to argument '" + std::string(name) + "') - " +
             std::string(reason));
}

}  // namespace

TEST_CASE("Redis parameters: defaults, aliases, CONFIG SET stores them") {
  Harness h;
  CHECK(h.Cmd("CONFIG GET list-max-ziplist-size") ==
        Arr({Bulk("list-max-ziplist-size"), Bulk("-2")}));
  CHECK(h.Cmd("CONFIG SET list-max-ziplist-size 4") == Ok());
  CHECK(h.Cmd("CONFIG GET list-max-listpack-size list-max-ziplist-size") ==
        Arr({Bulk("list-max-listpack-size"), Bulk("4"), Bulk("list-max-ziplist-size"), Bulk("4")}));
  CHECK(h.Cmd("CONFIG SET stream-node-max-entries 10 hash-max-ziplist-value 1kb") == Ok());
  CHECK(h.Cmd("CONFIG GET stream-node-max-entries hash-max-listpack-value") ==
        Arr({Bulk("stream-node-max-entries"), Bulk("10"), Bulk("hash-max-listpack-value"),
             Bulk("1024")}));
  // A glob shows an alias as well as its option (as Redis does).
  CHECK(h.Cmd("CONFIG GET zset-max-*-entries") ==
        Arr({Bulk("zset-max-listpack-entries"), Bulk("128"), Bulk("zset-max-ziplist-entries"),
             Bulk("128")}));
  CHECK(h.Cmd("CONFIG SET maxmemory 100mb maxmemory-policy ALLKEYS-LRU") == Ok());
  CHECK(h.Cmd("CONFIG GET maxmemory maxmemory-policy") ==
        Arr({Bulk("maxmemory"), Bulk("104857600"), Bulk("maxmemory-policy"), Bulk("allkeys-lru")}));
  CHECK(h.Run({"CONFIG", "SET", "save", "900 1 300 10"}) == Ok());
  CHECK(h.Cmd("CONFIG GET save") == Arr({Bulk("save"), Bulk("900 1 300 10")}));
  CHECK(h.Run({"CONFIG", "SET", "save", ""}) == Ok());
  CHECK(h.Cmd("CONFIG GET save") == Arr({Bulk("save"), Bulk("")}));
  CHECK(h.Cmd("CONFIG SET maxmemory-clients 10%") == Ok());
  CHECK(h.Cmd("CONFIG GET maxmemory-clients") == Arr({Bulk("maxmemory-clients"), Bulk("10%")}));
  CHECK(h.Run({"CONFIG", "SET", "shutdown-on-sigint", "now save"}) == Ok());
  CHECK(h.Cmd("CONFIG GET shutdown-on-sigint") ==
        Arr({Bulk("shutdown-on-sigint"), Bulk("save now")}));
  CHECK(h.Cmd("CONFIG SET oom-score-adj relative") == Ok());
  CHECK(h.Cmd("CONFIG GET oom-score-adj") == Arr({Bulk("oom-score-adj"), Bulk("yes")}));
  CHECK(h.Run({"CONFIG", "SET", "latency-tracking-info-percentiles", "50 99.90 100"}) == Ok());
  CHECK(h.Cmd("CONFIG GET latency-tracking-info-percentiles") ==
        Arr({Bulk("latency-tracking-info-percentiles"), Bulk("50 99.9 100")}));
  // Hidden parameters answer only by name.
  CHECK(h.Cmd("CONFIG GET key-load-delay") == Arr({Bulk("key-load-delay"), Bulk("0")}));
  CHECK(h.Cmd("CONFIG GET key-load-*") == Arr({}));
  CHECK(h.Cmd("CONFIG SET latency-monitor-threshold 100") == Ok());
  CHECK(h.server().config().latency_monitor_threshold == 100);
}

TEST_CASE("Redis parameters: Redis 7.0.15's errors, nothing changes on error") {
  Harness h;
  CHECK(h.Cmd("CONFIG SET loglevel foo") ==
        SetErr("loglevel",
               "argument(s) must be one of the following: debug, verbose, notice, warning"));
  CHECK(h.Cmd("CONFIG SET hash-max-ziplist-entries -1") ==
        SetErr("hash-max-ziplist-entries",
               "argument must be between 0 and 9223372036854775807 inclusive"));
  CHECK(h.Cmd("CONFIG SET maxmemory-clients 200%") ==
        SetErr("maxmemory-clients", "percentage argument must be less or equal to 100"));
  CHECK(h.Cmd("CONFIG SET maxmemory-clients -5") ==
        SetErr("maxmemory-clients", "argument must be a memory or percent value"));
  CHECK(h.Cmd("CONFIG SET maxmemory x") == SetErr("maxmemory", "argument must be a memory value"));
  CHECK(h.Cmd("CONFIG SET activerehashing maybe") ==
        SetErr("activerehashing", "argument must be 'yes' or 'no'"));
  CHECK(h.Cmd("CONFIG SET unixsocketperm 700") ==
        SetErr("unixsocketperm", "can't set immutable config"));
  CHECK(h.Cmd("CONFIG SET dbfilename x.rdb") == SetErr("dbfilename", "can't set protected config"));
  CHECK(h.Cmd("CONFIG SET dir /tmp") == SetErr("dir", "can't set protected config"));
  CHECK(h.Run({"CONFIG", "SET", "shutdown-on-sigint", "save nosave"}) ==
        SetErr("shutdown-on-sigint",
               "shutdown options SAVE and NOSAVE can't be used simultaneously"));
  CHECK(h.Run({"CONFIG", "SET", "save", "900"}) == SetErr("save", "Invalid save parameters"));
  CHECK(h.Run({"CONFIG", "SET", "save", "0 1"}) == SetErr("save", "Invalid save parameters"));
  CHECK(h.Cmd("CONFIG SET hz 2x") == SetErr("hz", "argument couldn't be parsed into an integer"));
  CHECK(h.Run({"CONFIG", "SET", "oom-score-adj-values", "1 2"}) ==
        SetErr("oom-score-adj-values", "wrong number of arguments"));
  CHECK(h.Cmd("CONFIG SET active-defrag-cycle-min 100") ==
        SetErr("active-defrag-cycle-min", "argument must be between 1 and 99 inclusive"));
  // All or nothing across Sluice's options and Redis's.
  CHECK(h.Cmd("CONFIG SET timeout 5 hz 20 maxmemory-policy nope").rfind("-ERR", 0) == 0);
  CHECK(h.Cmd("CONFIG GET timeout hz") ==
        Arr({Bulk("timeout"), Bulk("0"), Bulk("hz"), Bulk("10")}));
  CHECK(h.Cmd("CONFIG SET hz 20 list-max-ziplist-size 5 hz 30") ==
        SetErr("hz", "duplicate parameter"));
  CHECK(h.Cmd("CONFIG SET nosuch 1 hz x") ==
        Err("ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'"));
  CHECK(h.Cmd("CONFIG REWRITE") == Err("ERR The server is running without a config file"));
}

TEST_CASE(
    "XREAD BLOCK from a script is refused as Redis; ~ trims' default LIMIT follows "
    "stream-node-max-entries") {
  Harness h;
  CHECK(h.Run({"EVAL", "return redis.call('xread','block',0,'streams','s','$')", "0"})
            .find("xread command is not allowed with BLOCK option from scripts") !=
        std::string::npos);
  CHECK(h.Cmd("CONFIG SET stream-node-max-entries 1") == Ok());
  CHECK(h.server().stream_node_max_entries() == 1);
  for (int i = 0; i < 250; ++i) h.Cmd("XADD s * f v");
  // Nodes of 1 entry (stream-node-max-entries acts, as in Redis); LIMIT 100 * 1: 100 go.
  CHECK(h.Cmd("XTRIM s MAXLEN ~ 1") == Int(100));
  CHECK(h.Cmd("CONFIG SET stream-node-max-entries 100") == Ok());
  CHECK(h.Cmd("XTRIM s MAXLEN ~ 1") == Int(149));  // LIMIT 10000: every node but the last
  CHECK(h.Cmd("XLEN s") == Int(1));                // (redis-server 7.0.15: 100, 149, 1)
}

TEST_CASE("config file and flags take Redis's parameters; save lines add up") {
  Config c;  // the file may set an immutable parameter, as in Redis
  CHECK(ApplyConfigText(c, "slave-read-only no\ndatabases 16\n", "f").empty());
  CHECK(FindCompatOption("replica-read-only") == nullptr);  // a real option (replication)
  CHECK(FindConfigOption("replica-read-only")->get(c) == "no");
  Config d;
  CHECK(ApplyConfigText(d, "save 900 1\nsave 300 10\nmaxmemory 1gb\nhash-max-ziplist-entries 64\n",
                        "f")
            .empty());
  CHECK(GetCompatValue(d, *FindCompatOption("save")) == "900 1 300 10");
  CHECK(GetCompatValue(d, *FindCompatOption("maxmemory")) == "1073741824");
  CHECK(GetCompatValue(d, *FindCompatOption("hash-max-listpack-entries")) == "64");
  Config e;
  CHECK(ApplyConfigText(e, "loglevel loud\n", "f") ==
        "f:1: bad value 'loud' for 'loglevel': argument(s) must be one of the following: debug, "
        "verbose, notice, warning");
  const char* argv[] = {"sluice-server", "--save", "", "--databases", "16", "--port", "7000"};
  CommandLineResult r = ParseCommandLine(7, argv);
  REQUIRE(r.parsed);
  CHECK(r.parsed->config.port == 7000);
}

TEST_CASE("CONFIG REWRITE keeps comments and unknown lines, updates in place, appends") {
  Config c;
  std::string old_text =
      "# my server\n"
      "port 7000\n"
      "\n"
      "maxmemory 10mb\n"
      "hash-max-ziplist-entries 64\n"
      "save 900 1\n"
      "save 300 10\n"
      "frobnicate yes\n"
      "bind 127.0.0.1\n"
      "include /etc/other.conf\n";
  REQUIRE(ApplyConfigText(c, "port 7000\nmaxmemory 10mb\n", "f").empty());
  REQUIRE(SetCompatValue(c, *FindCompatOption("maxmemory"), "2gb") == std::nullopt);
  REQUIRE(SetCompatValue(c, *FindCompatOption("save"), "60 5") == std::nullopt);
  REQUIRE(SetCompatValue(c, *FindCompatOption("hz"), "20") == std::nullopt);
  c.timeout = 30;
  c.dir = "/var/lib/sluice";
  std::string text = RewriteConfigText(old_text, c);
  CHECK(text ==
        "# my server\n"
        "port 7000\n"
        "\n"
        "maxmemory 2gb\n"
        "hash-max-listpack-entries 512\n"  // the option's own name, as Redis
        "save 60 5\n"
        "\n"
        "# ??? frobnicate yes\n"
        "\n"  // bind at its default: dropped
        "include /etc/other.conf\n"
        "\n"
        "# Generated by CONFIG REWRITE\n"
        "dir \"/var/lib/sluice\"\n"
        "timeout 30\n"
        "hz 20\n"
        "latency-tracking-info-percentiles 50 99 99.9\n");  // always written, as Redis
  // Rewriting again changes nothing but the one blank line Redis leaves at the end.
  std::string again = RewriteConfigText(text, c);
  CHECK(again == text + "\n");
  CHECK(RewriteConfigText(again, c) == again);

  // A real file: CONFIG REWRITE through the command, then the server could start from it.
  Harness h;
  std::filesystem::path path = std::filesystem::path(h.dir()) / "sluice.conf";
  {
    std::ofstream out(path);
    out << "# comment kept\nport 6380\nslowlog-max-len 10\n";
  }
  Config live = h.server().config();
  live.config_file = path.string();
  live.port = 6380;
  live.slowlog_max_len = 10;
  h.server().set_config(live);
  CHECK(h.Cmd("CONFIG SET slowlog-max-len 99 list-max-ziplist-size 8") == Ok());
  CHECK(h.Cmd("CONFIG REWRITE") == Ok());
  std::ifstream in(path);
  std::stringstream written;
  written << in.rdbuf();
  std::string file = written.str();
  CHECK(file.rfind("# comment kept\nport 6380\nslowlog-max-len 99\n", 0) == 0);
  CHECK(file.find("\nlist-max-listpack-size 8\n") != std::string::npos);
  Config reread;
  CHECK(ApplyConfigText(reread, file, path.string()).empty());
  CHECK(reread.slowlog_max_len == 99);
}

}  // namespace sluice::server::testing
