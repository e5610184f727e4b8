// Configuration: the file format, flags, --help, memory units, CONFIG GET/SET/RESETSTAT.
#include <doctest/doctest.h>
#include <sched.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "protocol/reply_writer.h"
#include "server/core/config.h"
#include "server/core/dispatcher.h"
#include "tests/server/harness.h"

namespace sluice::server::testing {

namespace {

CommandLineResult Parse(std::vector<std::string> args) {
  std::vector<const char*> argv = {"sluice-server"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  return ParseCommandLine(static_cast<int>(argv.size()), argv.data());
}

// A config file in its own temp dir, removed with the object.
struct TempConfigFile {
  explicit TempConfigFile(const std::string& text) : dir(MakeTempDir()) {
    path = dir + "/sluice.conf";
    std::ofstream(path) << text;
  }
  ~TempConfigFile() { std::filesystem::remove_all(dir); }
  std::string dir, path;
};

}  // namespace

// threads 0 counts the cores the process may run on (taskset), not every online core. Affinity
// is per thread: a thread limited to one core sees 1, the others keep theirs.
TEST_CASE("threads 0 means one per core of the CPU affinity") {
  Config c;
  cpu_set_t allowed;
  REQUIRE(sched_getaffinity(0, sizeof(allowed), &allowed) == 0);
  CHECK(c.EffectiveThreads() == CPU_COUNT(&allowed));
  int first = 0;
  while (!CPU_ISSET(first, &allowed)) ++first;
  int seen = 0;
  std::thread([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    if (sched_setaffinity(0, sizeof(one), &one) == 0) seen = c.EffectiveThreads();
  }).join();
  CHECK(seen == 1);
  c.threads = 3;
  CHECK(c.EffectiveThreads() == 3);
}

TEST_CASE("defaults") {
  CommandLineResult r = Parse({});
  REQUIRE(r.parsed);
  const Config& c = r.parsed->config;
  CHECK(c.port == 6379);
  CHECK(c.bind == std::vector<std::string>{"127.0.0.1"});
  CHECK(c.dir == "./data");
  CHECK(c.threads == 0);
  CHECK(c.EffectiveThreads() >= 1);
  CHECK(c.appendfsync == Durability::kEverySec);
  CHECK(c.requirepass.empty());
  CHECK(c.maxclients == 10000);
  CHECK(c.timeout == 0);
  CHECK(c.proto_max_bulk_len == 512LL * 1024 * 1024);
  CHECK(!c.enable_debug_command);
  CHECK(c.protected_mode);
}

TEST_CASE("flags") {
  CommandLineResult r = Parse({"--port", "7000",
                               "--bind", "127.0.0.1",
                               "::1",    "--dir",
                               "/x",     "--threads",
                               "3",      "--appendfsync",
                               "always", "--requirepass",
                               "pw",     "--maxclients",
                               "5",      "--timeout",
                               "30",     "--proto-max-bulk-len",
                               "1gb",    "--enable-debug-command",
                               "yes"});
  REQUIRE(r.parsed);
  const Config& c = r.parsed->config;
  CHECK(c.port == 7000);
  CHECK(c.bind == std::vector<std::string>{"127.0.0.1", "::1"});
  CHECK(c.dir == "/x");
  CHECK(c.threads == 3);
  CHECK(c.appendfsync == Durability::kAlways);
  CHECK(c.requirepass == "pw");
  CHECK(c.maxclients == 5);
  CHECK(c.timeout == 30);
  CHECK(c.proto_max_bulk_len == 1024LL * 1024 * 1024);
  CHECK(c.enable_debug_command);
  CHECK(Parse({"--memtable", "rocksdb"}).parsed->config.memtable == MemTableKind::kRocksDb);
  CHECK(Parse({}).parsed->config.memtable == MemTableKind::kSluice);
  CHECK(Parse({}).parsed->config.write_buffer_size == 256LL << 20);
  CHECK(Parse({"--write-buffer-size", "32mb"}).parsed->config.write_buffer_size == 32LL << 20);
  CHECK(Parse({}).parsed->config.block_size == 4096);
  CHECK(Parse({"--block-size", "1kb"}).parsed->config.block_size == 1024);
  CHECK(Parse({"--block-size", "256"}).parsed->config.block_size == 256);
  CHECK(Parse({"--record-cache-size", "0"}).parsed->config.record_cache_size == 0);
  CHECK(Parse({"--record-cache-size", "64mb"}).parsed->config.record_cache_size == 64 << 20);
  CHECK(Parse({}).parsed->config.compression == Compression::kSnappy);
  CHECK(Parse({"--compression", "LZ4"}).parsed->config.compression == Compression::kLz4);
  CHECK(Parse({"--compression", "zstd"}).parsed->config.compression == Compression::kZstd);
  CHECK(Parse({"--compression", "none"}).parsed->config.compression == Compression::kNone);
  CHECK(Parse({}).parsed->config.list_inline_max_entries == 128);
  CHECK(Parse({"--list-inline-max-entries", "0"}).parsed->config.list_inline_max_entries == 0);
  CHECK(Parse({}).parsed->config.list_inline_max_bytes == 1024);
  CHECK(Parse({"--list-inline-max-bytes", "4kb"}).parsed->config.list_inline_max_bytes == 4096);
  CHECK(Parse({}).parsed->config.set_inline_max_members == 128);
  CHECK(Parse({"--set-inline-max-bytes", "2kb"}).parsed->config.set_inline_max_bytes == 2048);
  CHECK(Parse({}).parsed->config.zset_inline_max_members == 128);
  CHECK(Parse({"--zset-inline-max-members", "0"}).parsed->config.zset_inline_max_members == 0);
  CHECK(Parse({}).parsed->config.zset_inline_max_bytes == 2048);
  CHECK(Parse({"--zset-inline-max-bytes", "4kb"}).parsed->config.zset_inline_max_bytes == 4096);
  CHECK(Parse({}).parsed->config.hash_inline_max_fields == 128);
  CHECK(Parse({"--hash-inline-max-fields", "0"}).parsed->config.hash_inline_max_fields == 0);
  CHECK(Parse({}).parsed->config.hash_inline_max_bytes == 1024);
  CHECK(Parse({"--hash-inline-max-bytes", "2kb"}).parsed->config.hash_inline_max_bytes == 2048);
  CHECK(Parse({"--hash-inline-max-bytes", "65kb"}).error ==
        "bad value '65kb' for 'hash-inline-max-bytes': argument must be between 0 and 65536 "
        "inclusive");
  CHECK(Parse({"--help"}).parsed->show_help);
  CHECK(Parse({"--version"}).parsed->show_version);
}

TEST_CASE("bad flags are clear errors") {
  CHECK(Parse({"--nosuch", "1"}).error == "unknown option '--nosuch'");
  CHECK(Parse({"--port"}).error == "option '--port' needs a value");
  CHECK(Parse({"--port", "x"}).error ==
        "bad value 'x' for 'port': argument couldn't be parsed into an integer");
  CHECK(Parse({"--port", "70000"}).error ==
        "bad value '70000' for 'port': argument must be between 0 and 65535 inclusive");
  CHECK(Parse({"--appendfsync", "sometimes"}).error ==
        "bad value 'sometimes' for 'appendfsync': argument(s) must be one of the following: "
        "everysec, always, no");
  CHECK(Parse({"--enable-debug-command", "maybe"}).error ==
        "bad value 'maybe' for 'enable-debug-command': argument(s) must be one of the following: "
        "no, yes");
  CHECK(Parse({"--proto-max-bulk-len", "1x"}).error ==
        "bad value '1x' for 'proto-max-bulk-len': argument must be a memory value");
  CHECK(Parse({"--memtable", "vector"}).error ==
        "bad value 'vector' for 'memtable': argument(s) must be one of the following: sluice, "
        "rocksdb");
  CHECK(Parse({"--compression", "gzip"}).error ==
        "bad value 'gzip' for 'compression': argument(s) must be one of the following: snappy, "
        "lz4, zstd, none");
  CHECK(Parse({"--block-size", "255"}).error ==
        "bad value '255' for 'block-size': argument must be between 256 and 1048576 inclusive");
  CHECK(Parse({"--block-size", "2mb"}).error ==
        "bad value '2mb' for 'block-size': argument must be between 256 and 1048576 inclusive");
  CHECK(Parse({"--write-buffer-size", "100k"}).error ==
        "bad value '100k' for 'write-buffer-size': argument must be between 1048576 and "
        "4294967296 inclusive");
  CHECK(Parse({"--list-inline-max-entries", "-1"}).error ==
        "bad value '-1' for 'list-inline-max-entries': argument must be between 0 and 4096 "
        "inclusive");
  CHECK(Parse({"--list-inline-max-bytes", "65537"}).error ==
        "bad value '65537' for 'list-inline-max-bytes': argument must be between 0 and 65536 "
        "inclusive");
  CHECK(Parse({"/no/such/file.conf"}).error == "cannot read config file '/no/such/file.conf'");
  CHECK(Parse({"--port", "1", "stray"}).error.find("unexpected argument 'stray'") == 0);
}

TEST_CASE("config file: comments, quotes, and flags override it") {
  TempConfigFile file(
      "# a comment\n"
      "\n"
      "port 7001\n"
      "  bind 127.0.0.1 -::1   \n"
      "requirepass \"pa ss\\\"word\"\n"
      "dir '/tmp/it\\'s'\n"
      "appendfsync no\r\n"
      "maxclients 100\n");
  CommandLineResult r = Parse({file.path, "--port", "7002"});
  REQUIRE(r.parsed);
  const Config& c = r.parsed->config;
  CHECK(c.port == 7002);
  CHECK(c.bind == std::vector<std::string>{"127.0.0.1", "-::1"});
  CHECK(c.requirepass == "pa ss\"word");
  CHECK(c.dir == "/tmp/it's");
  CHECK(c.appendfsync == Durability::kNo);
  CHECK(c.maxclients == 100);
  CHECK(c.config_file == std::filesystem::absolute(file.path).string());
}

TEST_CASE("config file errors name the line") {
  TempConfigFile bad("port 7001\nfrobnicate yes\n");
  CHECK(Parse({bad.path}).error == bad.path + ":2: unknown option 'frobnicate'");
  TempConfigFile quotes("requirepass \"open\n");
  CHECK(Parse({quotes.path}).error == quotes.path + ":1: unbalanced quotes");
  TempConfigFile arity("port 1 2\n");
  CHECK(Parse({arity.path}).error == arity.path + ":1: wrong number of arguments for 'port'");
}

TEST_CASE("escapes in double quotes") {
  Config c;
  CHECK(ApplyConfigText(c, "requirepass \"a\\x41\\n\\tb\"\n", "t") == "");
  CHECK(c.requirepass == "aA\n\tb");
}

TEST_CASE("memory units as Redis") {
  CHECK(ParseMemory("42") == 42);
  CHECK(ParseMemory("100k") == 100000);
  CHECK(ParseMemory("100kb") == 102400);
  CHECK(ParseMemory("2m") == 2000000);
  CHECK(ParseMemory("512mb") == 512LL << 20);
  CHECK(ParseMemory("1GB") == 1LL << 30);
  CHECK(ParseMemory("1g") == 1000000000);
  CHECK(!ParseMemory(""));
  CHECK(!ParseMemory("mb"));
  CHECK(!ParseMemory("-1"));
  CHECK(!ParseMemory("1tb"));
  CHECK(!ParseMemory("99999999999999999999"));
}

TEST_CASE("--help lists every option with its default") {
  std::string usage = UsageText("sluice-server");
  for (const ConfigOption& o : ConfigOptions()) {
    CAPTURE(o.name);
    CHECK(usage.find(std::string("--") + o.name) != std::string::npos);
    CHECK(usage.find(o.default_text) != std::string::npos);
  }
}

TEST_CASE("CONFIG GET: exact names, globs, several patterns, RESP2 and RESP3") {
  Harness h;
  CHECK(h.Cmd("CONFIG GET maxclients") == Arr({Bulk("maxclients"), Bulk("10000")}));
  CHECK(h.Cmd("CONFIG GET Port") == Arr({Bulk("Port"), Bulk("6379")}));
  CHECK(h.Cmd("CONFIG GET nosuch") == Arr({}));
  CHECK(h.Cmd("CONFIG GET save appendonly databases maxmemory") ==
        Arr({Bulk("save"), Bulk(""), Bulk("appendonly"), Bulk("yes"), Bulk("databases"), Bulk("16"),
             Bulk("maxmemory"), Bulk("0")}));
  CHECK(
      h.Cmd("CONFIG GET proto* appendfsync proto-max-bulk-len") ==
      Arr({Bulk("proto-max-bulk-len"), Bulk("536870912"), Bulk("appendfsync"), Bulk("everysec")}));
  CHECK(h.Cmd("CONFIG GET *debug*") == Arr({Bulk("enable-debug-command"), Bulk("yes")}));
  h.Resp3();
  CHECK(h.Cmd("CONFIG GET timeout") == Map({Bulk("timeout"), Bulk("0")}));
}

TEST_CASE("CONFIG SET live options take effect") {
  Harness h;
  CHECK(h.Cmd("CONFIG SET appendfsync always") == Ok());
  CHECK(h.store().durability() == Durability::kAlways);
  CHECK(h.Cmd("CONFIG GET appendfsync") == Arr({Bulk("appendfsync"), Bulk("always")}));
  CHECK(h.Cmd("CONFIG SET maxclients 7 timeout 60") == Ok());
  CHECK(h.server().maxclients() == 7);
  CHECK(h.server().timeout_seconds() == 60);
  CHECK(h.Cmd("CONFIG SET proto-max-bulk-len 2mb") == Ok());
  CHECK(h.server().proto_max_bulk_len() == 2 * 1024 * 1024);
  CHECK(h.Cmd("CONFIG GET proto-max-bulk-len") ==
        Arr({Bulk("proto-max-bulk-len"), Bulk("2097152")}));
  CHECK(h.Cmd("CONFIG GET block-cache-size") ==
        Arr({Bulk("block-cache-size"), Bulk("268435456")}));  // 256mb by default
  CHECK(h.Cmd("CONFIG SET block-cache-size 64mb") == Ok());   // resizes the live cache
  CHECK(h.Cmd("CONFIG GET block-cache-size") == Arr({Bulk("block-cache-size"), Bulk("67108864")}));
  CHECK(h.Cmd("CONFIG SET block-cache-size 1k") ==
        Err("ERR CONFIG SET failed (possibly related to argument 'block-cache-size') - argument "
            "must be between 1048576 and 9223372036854775807 inclusive"));
  CHECK(h.Cmd("CONFIG GET active-expire-effort") == Arr({Bulk("active-expire-effort"), Bulk("1")}));
  CHECK(h.store().active_expire_effort() == 1);
  CHECK(h.Cmd("CONFIG SET active-expire-effort 7") == Ok());  // read by the next expiry cycle
  CHECK(h.store().active_expire_effort() == 7);
  CHECK(h.Cmd("CONFIG SET active-expire-effort 11") ==
        Err("ERR CONFIG SET failed (possibly related to argument 'active-expire-effort') - "
            "argument must be between 1 and 10 inclusive"));
  CHECK(h.store().active_expire_effort() == 7);
  CHECK(h.Cmd("CONFIG GET hll-sparse-max-bytes") ==
        Arr({Bulk("hll-sparse-max-bytes"), Bulk("3000")}));
  CHECK(h.Cmd("CONFIG SET hll-sparse-max-bytes 0") == Ok());
  for (const char* bad : {"-1", "abc"}) {
    CHECK(h.Run({"CONFIG", "SET", "hll-sparse-max-bytes", bad}) ==
          Err("ERR CONFIG SET failed (possibly related to argument 'hll-sparse-max-bytes') - "
              "argument must be a memory value"));
  }
  CHECK(h.Cmd("CONFIG SET hll-sparse-max-bytes 5kb") == Ok());
  CHECK(h.Cmd("CONFIG GET hll-sparse-max-bytes") ==
        Arr({Bulk("hll-sparse-max-bytes"), Bulk("5120")}));
  CHECK(h.Cmd("CONFIG SET requirepass pw") == Ok());
  CHECK(h.server().requirepass_set());
  h.client().authenticated = false;
  CHECK(h.Cmd("GET x") == Err("NOAUTH Authentication required."));
  CHECK(h.Cmd("AUTH pw") == Ok());
  CHECK(h.Run({"CONFIG", "SET", "requirepass", ""}) == Ok());
  CHECK(!h.server().requirepass_set());
  CHECK(h.Cmd("CONFIG GET protected-mode") == Arr({Bulk("protected-mode"), Bulk("yes")}));
  CHECK(h.Cmd("CONFIG SET protected-mode no") == Ok());
  CHECK(!h.server().protected_mode());
  CHECK(h.Cmd("CONFIG GET protected-mode") == Arr({Bulk("protected-mode"), Bulk("no")}));
  CHECK(h.Cmd("CONFIG SET protected-mode maybe") ==
        Err("ERR CONFIG SET failed (possibly related to argument 'protected-mode') - argument "
            "must be 'yes' or 'no'"));
}

// Redis's "CONFIG sanity" test writes back every value CONFIG GET * gives (skipping Redis's own
// immutable options): each of Sluice's immutable options must take its own value, including
// those added after this test (record-cache-size once did not).
TEST_CASE("Every immutable option of Sluice's own may be set to the value CONFIG GET gives") {
  Harness h;
  const std::set<std::string> redis_immutable = {"dir", "aclfile", "enable-debug-command",
                                                 "replicaof", "slaveof"};
  int own = 0;
  for (const ConfigOption& o : ConfigOptions()) {
    if (o.mutable_at_runtime) continue;
    const std::string name = o.name;
    const std::string value = o.get(h.server().config());
    const std::string reply = h.Run({"CONFIG", "SET", name, value});
    if (redis_immutable.count(name) != 0) {
      CHECK(reply.find("-ERR CONFIG SET failed") == 0);
    } else {
      INFO(name);
      CHECK(reply == Ok());
      ++own;
    }
  }
  CHECK(own >= 15);
  CHECK(h.Cmd("CONFIG SET record-cache-size 1mb") ==
        Err("ERR CONFIG SET failed (possibly related to argument 'record-cache-size') - can't set "
            "immutable config"));
}

TEST_CASE("CONFIG SET errors as Redis words them, and nothing changes on error") {
  Harness h;
  CHECK(h.Cmd("CONFIG SET threads 3") ==
        Err("ERR CONFIG SET failed (possibly related to argument 'threads') - can't set "
            "immutable config"));
  // Sluice's own immutable options may be set to the value they have (CONFIG GET * written
  // back); Redis's keep Redis's error whatever the value.
  CHECK(h.Cmd("CONFIG SET compression snappy") == Ok());
  CHECK(h.Cmd("CONFIG SET compression none") ==
        Err("ERR CONFIG SET failed (possibly related to argument 'compression') - can't set "
            "immutable config"));
  CHECK(h.Cmd("CONFIG SET databases 3") ==
        Err("ERR CONFIG SET failed (possibly related to argument 'databases') - can't set "
            "immutable config"));
  CHECK(h.Cmd("CONFIG SET nosuch 1") ==
        Err("ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'"));
  CHECK(h.Cmd("CONFIG SET maxclients abc") ==
        Err("ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument "
            "couldn't be parsed into an integer"));
  CHECK(h.Cmd("CONFIG SET maxclients 0") ==
        Err("ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument must "
            "be between 1 and 4294967295 inclusive"));
  CHECK(h.Cmd("CONFIG SET appendfsync foo") ==
        Err("ERR CONFIG SET failed (possibly related to argument 'appendfsync') - argument(s) "
            "must be one of the following: everysec, always, no"));
  CHECK(h.Cmd("CONFIG SET timeout -1") ==
        Err("ERR CONFIG SET failed (possibly related to argument 'timeout') - argument must be "
            "between 0 and 2147483647 inclusive"));
  CHECK(h.Cmd("CONFIG SET proto-max-bulk-len 1k") ==
        Err("ERR CONFIG SET failed (possibly related to argument 'proto-max-bulk-len') - "
            "argument must be between 1048576 and 9223372036854775807 inclusive"));
  CHECK(h.Cmd("CONFIG SET proto-max-bulk-len 1x") ==
        Err("ERR CONFIG SET failed (possibly related to argument 'proto-max-bulk-len') - "
            "argument must be a memory value"));
  CHECK(h.Cmd("CONFIG SET timeout 1 timeout 2") ==
        Err("ERR CONFIG SET failed (possibly related to argument 'timeout') - duplicate "
            "parameter"));
  CHECK(h.Cmd("CONFIG SET maxclients 10 timeout") == Err("ERR syntax error"));
  CHECK(h.Cmd("CONFIG SET maxclients") ==
        Err("ERR wrong number of arguments for 'config|set' command"));
  // All or nothing: the valid first pair is not applied when the second fails.
  CHECK(h.Cmd("CONFIG SET timeout 5 maxclients x").rfind("-ERR CONFIG SET failed", 0) == 0);
  CHECK(h.server().timeout_seconds() == 0);
  CHECK(h.Cmd("CONFIG GET memtable") == Arr({Bulk("memtable"), Bulk("sluice")}));
  CHECK(h.Cmd("CONFIG SET memtable rocksdb") ==
        Err("ERR CONFIG SET failed (possibly related to argument 'memtable') - can't set "
            "immutable config"));
  CHECK(h.Cmd("CONFIG GET block-size") == Arr({Bulk("block-size"), Bulk("4096")}));
  CHECK(h.Cmd("CONFIG SET block-size 1kb") ==
        Err("ERR CONFIG SET failed (possibly related to argument 'block-size') - can't set "
            "immutable config"));
  CHECK(h.Cmd("CONFIG GET write-buffer-size compression") ==
        Arr({Bulk("write-buffer-size"), Bulk("268435456"), Bulk("compression"), Bulk("snappy")}));
  CHECK(h.Cmd("CONFIG GET list-inline-max-*") ==
        Arr({Bulk("list-inline-max-entries"), Bulk("128"), Bulk("list-inline-max-bytes"),
             Bulk("1024")}));
  CHECK(h.Cmd("CONFIG SET list-inline-max-entries 0") ==
        Err("ERR CONFIG SET failed (possibly related to argument 'list-inline-max-entries') - "
            "can't set immutable config"));
  CHECK(h.Cmd("CONFIG SET compression lz4") ==
        Err("ERR CONFIG SET failed (possibly related to argument 'compression') - can't set "
            "immutable config"));
  CHECK(h.Cmd("CONFIG SET enable-debug-command no") ==
        Err("ERR CONFIG SET failed (possibly related to argument 'enable-debug-command') - "
            "can't set immutable config"));
}

TEST_CASE("client-output-buffer-limit and client-query-buffer-limit") {
  CommandLineResult r = Parse({"--client-output-buffer-limit", "normal", "1mb", "0", "0", "pubsub",
                               "1", "2", "3", "--client-query-buffer-limit", "2mb"});
  REQUIRE(r.parsed);
  const Config& c = r.parsed->config;
  CHECK(c.client_output_buffer_limit[kObufNormal] == OutputBufferLimit{1 << 20, 0, 0});
  CHECK(c.client_output_buffer_limit[kObufReplica] == OutputBufferLimit{256 << 20, 64 << 20, 60});
  CHECK(c.client_output_buffer_limit[kObufPubsub] == OutputBufferLimit{1, 2, 3});
  CHECK(c.client_query_buffer_limit == 2 << 20);

  Harness h;
  CHECK(h.server().output_buffer_limit() == OutputBufferLimit{0, 0, 0});
  CHECK(h.server().query_buffer_limit() == int64_t{1} << 30);
  CHECK(h.Run({"CONFIG", "SET", "client-output-buffer-limit", "normal 4mb 1mb 10"}) == Ok());
  CHECK(h.server().output_buffer_limit() == OutputBufferLimit{4 << 20, 1 << 20, 10});
  CHECK(h.Run({"CONFIG", "SET", "client-output-buffer-limit", "normal 1 2"}) ==
        Err("ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') "
            "- Wrong number of arguments in buffer limit configuration."));
  CHECK(h.server().output_buffer_limit() == OutputBufferLimit{4 << 20, 1 << 20, 10});
  CHECK(h.Cmd("CONFIG SET client-query-buffer-limit 3mb") == Ok());
  CHECK(h.server().query_buffer_limit() == 3 << 20);
}

TEST_CASE("CONFIG RESETSTAT and HELP") {
  Harness h;
  h.Cmd("PING");
  h.server().limiter_stats().Record(LimiterCommand::kLeakyTake, true);
  CHECK(h.Cmd("CONFIG RESETSTAT") == Ok());
  CHECK(h.server().stats().total_commands_processed.load() == 0);
  CHECK(h.Cmd("INFO limiters").find("leaky_take_calls:0\r\n") != std::string::npos);
  CHECK(h.Cmd("CONFIG HELP").rfind("*11\r\n+CONFIG <subcommand>", 0) == 0);
  CHECK(h.Cmd("CONFIG RESETSTAT x") ==
        Err("ERR wrong number of arguments for 'config|resetstat' command"));
}

// Two connections changing different options at once must not undo each other's change: each
// CONFIG SET is one atomic read-modify-write of the configuration (a copy taken, edited and put
// back without a lock around the whole lost concurrent updates), and the Store's durability
// always agrees with CONFIG GET.
TEST_CASE("concurrent CONFIG SET of different options loses no update") {
  Harness h;
  Dispatcher dispatcher(h.table());
  constexpr int kRounds = 2000;
  std::atomic<int> regressions{0};
  auto hammer = [&](const char* option, auto read_back) {
    ClientState client;
    client.authenticated = true;
    std::string reply;
    for (int i = 1; i <= kRounds; ++i) {
      reply.clear();
      protocol::ReplyWriter out(&reply);
      CommandContext ctx{h.store(), h.server(), client, out};
      std::string value = std::to_string(i);
      std::string_view args[] = {"CONFIG", "SET", option, value};
      dispatcher.Dispatch(ctx, args);
      if (reply != Ok() || read_back() < i) regressions.fetch_add(1);
    }
  };
  std::thread a([&] { hammer("timeout", [&] { return h.server().timeout_seconds(); }); });
  std::thread b([&] { hammer("maxclients", [&] { return h.server().maxclients(); }); });
  a.join();
  b.join();
  CHECK(regressions.load() == 0);
  CHECK(h.server().timeout_seconds() == kRounds);
  CHECK(h.server().maxclients() == kRounds);
  CHECK(h.server().config().timeout == kRounds);
  CHECK(h.server().config().maxclients == kRounds);
}

TEST_CASE("concurrent CONFIG SET appendfsync: the Store agrees with CONFIG GET") {
  Harness h;
  Dispatcher dispatcher(h.table());
  auto hammer = [&](const char* mode) {
    ClientState client;
    client.authenticated = true;
    std::string reply;
    for (int i = 0; i < 1000; ++i) {
      reply.clear();
      protocol::ReplyWriter out(&reply);
      CommandContext ctx{h.store(), h.server(), client, out};
      std::string_view args[] = {"CONFIG", "SET", "appendfsync", mode};
      dispatcher.Dispatch(ctx, args);
    }
  };
  std::thread a([&] { hammer("always"); });
  std::thread b([&] { hammer("no"); });
  a.join();
  b.join();
  CHECK(h.store().durability() == h.server().config().appendfsync);
}

}  // namespace sluice::server::testing
