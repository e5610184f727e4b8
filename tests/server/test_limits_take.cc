// LIMITS.TAKE, REFUND n and HEADERS [POLICY name] through the real dispatcher and Store
// (tests/server/harness.h), with exact reply bytes in RESP2 and RESP3, every argument error,
// the KeyFinder and INFO limiters.
#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "tests/server/harness.h"

namespace sluice::server::testing {
namespace {

std::string Ints(std::vector<int64_t> values) {
  std::vector<std::string> items;
  for (int64_t v : values) items.push_back(Int(v));
  return Arr(items);
}

// A limiter reply with a trailing `headers` field (RESP2).
std::string WithHeaders(std::vector<int64_t> fields, std::vector<std::string> lines) {
  std::vector<std::string> items;
  for (int64_t v : fields) items.push_back(Int(v));
  std::vector<std::string> bulks;
  for (const std::string& l : lines) bulks.push_back(Bulk(l));
  items.push_back(Arr(bulks));
  return Arr(items);
}

// LIMITS.TAKE's RESP2 reply: five fields, binding, then one five-field array per group.
std::string Multi(std::vector<int64_t> five, int64_t binding,
                  std::vector<std::vector<int64_t>> groups) {
  std::vector<std::string> items;
  for (int64_t v : five) items.push_back(Int(v));
  items.push_back(Int(binding));
  std::vector<std::string> limits;
  for (const auto& g : groups) limits.push_back(Ints(g));
  items.push_back(Arr(limits));
  return Arr(items);
}

std::string FiveMap(std::vector<int64_t> five, std::vector<std::string> extra = {}) {
  const char* names[] = {"allowed", "remaining", "retry_after_ms", "reset_after_ms", "limit"};
  std::vector<std::string> items;
  for (size_t i = 0; i < 5; ++i) {
    items.push_back(Bulk(names[i]));
    items.push_back(Int(five[i]));
  }
  for (const std::string& item : extra) items.push_back(item);
  return Map(items);
}

const std::string kSecDay = "LIMITS.TAKE LIMIT sec GCRA 2 1s LIMIT day WINDOW 3 1d";

}  // namespace

TEST_CASE("LIMITS.TAKE: per second and per day in one call, all or nothing") {
  Harness h;
  CHECK(h.Cmd(kSecDay) ==
        Multi({1, 1, 0, 86400000, 2}, 1, {{1, 1, 0, 500, 2}, {1, 2, 0, 86400000, 3}}));
  CHECK(h.Cmd(kSecDay) ==
        Multi({1, 0, 0, 86400000, 2}, 1, {{1, 0, 0, 1000, 2}, {1, 1, 0, 86400000, 3}}));
  // The per-second limit denies: the day counter is not consumed; its group says it would allow.
  CHECK(h.Cmd(kSecDay) ==
        Multi({0, 0, 500, 86400000, 2}, 1, {{0, 0, 500, 1000, 2}, {1, 1, 0, 86400000, 3}}));
  CHECK(h.Cmd("GET day") == Bulk("2"));
  h.AdvanceMs(1000);
  CHECK(h.Cmd(kSecDay) ==
        Multi({1, 0, 0, 86399000, 3}, 2, {{1, 1, 0, 500, 2}, {1, 0, 0, 86399000, 3}}));
  h.AdvanceMs(1000);
  // The day denies; the per-second key had expired and is not created.
  CHECK(h.Cmd(kSecDay) ==
        Multi({0, 0, 86398000, 86398000, 3}, 2, {{1, 2, 0, 0, 2}, {0, 0, 86398000, 86398000, 3}}));
  CHECK(h.Cmd("EXISTS sec") == Int(0));
  // COST above a limit: never (-1), that group binds.
  CHECK(h.Cmd("LIMITS.TAKE COST 3 LIMIT sec GCRA 2 1s LIMIT other SLIDING 5 1m") ==
        Multi({0, 2, -1, 0, 2}, 1, {{0, 2, -1, 0, 2}, {1, 5, 0, 0, 5}}));
}

TEST_CASE("LIMITS.TAKE: every algorithm, options inside groups, COST 0") {
  Harness h;
  const std::string cmd =
      "LIMITS.TAKE COST 2 LIMIT g GCRA 10 1s BURST 20 LIMIT w WINDOW 5 10s LIMIT s SLIDING 4 1m "
      "LIMIT l LEAKY 1 1s BURST 3 NODELAY";
  CHECK(h.Cmd(cmd) ==
        Multi({1, 2, 0, 60000, 4}, 3,
              {{1, 18, 0, 200, 20}, {1, 3, 0, 10000, 5}, {1, 2, 0, 60000, 4}, {1, 2, 0, 2000, 4}}));
  CHECK(h.Cmd("TYPE s") == Simple("sliding"));
  CHECK(h.Cmd("TYPE l") == Simple("leaky"));
  CHECK(h.Cmd("GET w") == Bulk("2"));
  // COST 0 looks and writes nothing.
  CHECK(h.Cmd("LIMITS.TAKE COST 0 LIMIT w WINDOW 5 10s LIMIT new GCRA 1 1s") ==
        Multi({1, 1, 0, 10000, 1}, 2, {{1, 3, 0, 10000, 5}, {1, 1, 0, 0, 1}}));
  CHECK(h.Cmd("EXISTS new") == Int(0));
  // Lower-case keywords and algorithms.
  CHECK(h.Cmd("limits.take cost 1 limit w window 5 10s") ==
        Multi({1, 2, 0, 10000, 5}, 1, {{1, 2, 0, 10000, 5}}));
}

TEST_CASE("LIMITS.TAKE: a key of another type fails the whole call, writing nothing") {
  Harness h;
  h.Cmd("SET text hello");
  MakeNonString(h, "conc");
  CHECK(h.Cmd("LIMITS.TAKE LIMIT a GCRA 1 1s LIMIT text WINDOW 1 1s") == NotIntegerErr());
  CHECK(h.Cmd("LIMITS.TAKE LIMIT a GCRA 1 1s LIMIT conc SLIDING 1 1s") == WrongTypeErr());
  CHECK(h.Cmd("EXISTS a") == Int(0));
  CHECK(h.Cmd("GET text") == Bulk("hello"));
}

TEST_CASE("LIMITS.TAKE: RESP3 map, limits an array of maps") {
  Harness h;
  h.Resp3();
  CHECK(h.Cmd("LIMITS.TAKE LIMIT a GCRA 2 1s LIMIT b WINDOW 1 1m") ==
        FiveMap({1, 0, 0, 60000, 1},
                {Bulk("binding"), Int(2), Bulk("limits"),
                 Arr({FiveMap({1, 1, 0, 500, 2}), FiveMap({1, 0, 0, 60000, 1})})}));
  CHECK(h.Cmd("LIMITS.TAKE HEADERS LIMIT a GCRA 2 1s LIMIT b WINDOW 1 1m") ==
        FiveMap(
            {0, 0, 60000, 60000, 1},
            {Bulk("binding"), Int(2), Bulk("limits"),
             Arr({FiveMap({1, 1, 0, 500, 2}), FiveMap({0, 0, 60000, 60000, 1})}), Bulk("headers"),
             Arr({Bulk("RateLimit-Policy: \"p1\";q=2;w=1, \"p2\";q=1;w=60"),
                  Bulk("RateLimit: \"p1\";r=1;t=1, \"p2\";r=0;t=60"), Bulk("Retry-After: 60")})}));
  CHECK(h.Cmd("GCRA.TAKE g 10 1s HEADERS") ==
        FiveMap({1, 9, 0, 100, 10},
                {Bulk("headers"), Arr({Bulk("RateLimit-Policy: \"default\";q=10;w=1"),
                                       Bulk("RateLimit: \"default\";r=9;t=1")})}));
  CHECK(h.Cmd("LEAKY.TAKE l 10 1s REFUND 1") ==
        FiveMap({1, 1, 0, 0, 1}, {Bulk("delay_ms"), Int(0)}));
}

TEST_CASE("REFUND n on every take and on LIMITS.TAKE") {
  Harness h;
  CHECK(h.Cmd("GCRA.TAKE r 10 1s COST 5") == Ints({1, 5, 0, 500, 10}));
  CHECK(h.Cmd("GCRA.TAKE r 10 1s REFUND 2") == Ints({1, 7, 0, 300, 10}));
  CHECK(h.Cmd("PTTL r") == Int(300));
  CHECK(h.Cmd("GCRA.TAKE r 10 1s refund 99") == Ints({1, 10, 0, 0, 10}));
  CHECK(h.Cmd("EXISTS r") == Int(0));
  CHECK(h.Cmd("WINDOW.TAKE w 5 10s COST 4") == Ints({1, 1, 0, 10000, 5}));
  h.AdvanceMs(2000);
  CHECK(h.Cmd("WINDOW.TAKE w 5 10s REFUND 1") == Ints({1, 2, 0, 8000, 5}));
  CHECK(h.Cmd("GET w") == Bulk("3"));
  CHECK(h.Cmd("PTTL w") == Int(8000));
  CHECK(h.Cmd("SLIDING.TAKE s 3 10s COST 2") == Ints({1, 1, 0, 10000, 3}));
  CHECK(h.Cmd("SLIDING.TAKE s 3 10s REFUND 1") == Ints({1, 2, 0, 10000, 3}));
  CHECK(h.Cmd("LEAKY.TAKE l 10 1s BURST 5 COST 3") == Ints({1, 3, 0, 300, 6, 200}));
  CHECK(h.Cmd("LEAKY.TAKE l 10 1s BURST 5 REFUND 1") == Ints({1, 4, 0, 200, 6, 0}));
  CHECK(h.Cmd("WINDOW.TAKE missing 5 10s REFUND 1") == Ints({1, 5, 0, 0, 5}));
  CHECK(h.Cmd("EXISTS missing") == Int(0));
  CHECK(h.Cmd("LIMITS.TAKE COST 2 LIMIT a GCRA 2 1s LIMIT b WINDOW 5 1m") ==
        Multi({1, 0, 0, 60000, 2}, 1, {{1, 0, 0, 1000, 2}, {1, 3, 0, 60000, 5}}));
  CHECK(h.Cmd("LIMITS.TAKE REFUND 1 LIMIT a GCRA 2 1s LIMIT b WINDOW 5 1m") ==
        Multi({1, 1, 0, 60000, 2}, 1, {{1, 1, 0, 500, 2}, {1, 4, 0, 60000, 5}}));
  CHECK(h.Cmd("GET b") == Bulk("1"));
  MakeNonString(h, "conc");
  CHECK(h.Cmd("GCRA.TAKE conc 1 1s REFUND 1") == WrongTypeErr());
}

TEST_CASE("HEADERS [POLICY name]: RateLimit-Policy, RateLimit and Retry-After lines") {
  Harness h;
  CHECK(h.Cmd("GCRA.TAKE api 10 1s HEADERS") ==
        WithHeaders({1, 9, 0, 100, 10},
                    {"RateLimit-Policy: \"default\";q=10;w=1", "RateLimit: \"default\";r=9;t=1"}));
  CHECK(h.Cmd("WINDOW.TAKE w 1 1m HEADERS POLICY minute") ==
        WithHeaders({1, 0, 0, 60000, 1},
                    {"RateLimit-Policy: \"minute\";q=1;w=60", "RateLimit: \"minute\";r=0;t=60"}));
  h.AdvanceMs(1500);
  CHECK(
      h.Cmd("WINDOW.TAKE w 1 1m headers policy minute") ==
      WithHeaders({0, 0, 58500, 58500, 1}, {"RateLimit-Policy: \"minute\";q=1;w=60",
                                            "RateLimit: \"minute\";r=0;t=59", "Retry-After: 59"}));
  // Never allowed: no Retry-After, t is the reset time.
  CHECK(h.Cmd("GCRA.TAKE api 10 1s COST 11 HEADERS") ==
        WithHeaders({0, 10, -1, 0, 10},
                    {"RateLimit-Policy: \"default\";q=10;w=1", "RateLimit: \"default\";r=10;t=0"}));
  // LEAKY keeps delay_ms before headers; windows round up to whole seconds, at least 1.
  CHECK(h.Cmd("LEAKY.TAKE l 10 1s BURST 5 HEADERS") ==
        WithHeaders({1, 5, 0, 100, 6, 0},
                    {"RateLimit-Policy: \"default\";q=10;w=1", "RateLimit: \"default\";r=5;t=1"}));
  CHECK(h.Cmd("SLIDING.TAKE s 5 1500ms HEADERS POLICY a-b.c") ==
        WithHeaders({1, 4, 0, 1500, 5},
                    {"RateLimit-Policy: \"a-b.c\";q=5;w=2", "RateLimit: \"a-b.c\";r=4;t=2"}));
  CHECK(h.Cmd("GCRA.TAKE fast 10 250ms HEADERS") ==
        WithHeaders({1, 9, 0, 25, 10},
                    {"RateLimit-Policy: \"default\";q=10;w=1", "RateLimit: \"default\";r=9;t=1"}));
  // LIMITS.TAKE: one item per group, in order, names from POLICY or p1, p2, ...
  CHECK(h.Cmd("LIMITS.TAKE HEADERS LIMIT a GCRA 2 1s POLICY burst LIMIT b WINDOW 100 1d") ==
        Arr({Int(1), Int(1), Int(0), Int(86400000), Int(2), Int(1),
             Arr({Ints({1, 1, 0, 500, 2}), Ints({1, 99, 0, 86400000, 100})}),
             Arr({Bulk("RateLimit-Policy: \"burst\";q=2;w=1, \"p2\";q=100;w=86400"),
                  Bulk("RateLimit: \"burst\";r=1;t=1, \"p2\";r=99;t=86400")})}));
}

TEST_CASE("LIMITS.TAKE, REFUND and HEADERS argument errors") {
  Harness h;
  std::string seventeen = "LIMITS.TAKE";
  for (int i = 0; i < 17; ++i) seventeen += " LIMIT k" + std::to_string(i) + " GCRA 1 1s";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"LIMITS.TAKE LIMIT k GCRA 1 1s LIMIT k WINDOW 1 1s",
       "ERR group 2: duplicate key (the same key as group 1)"},
      {"LIMITS.TAKE LIMIT k FOO 1 1s",
       "ERR group 1: unknown algorithm 'FOO' (use GCRA, WINDOW, SLIDING or LEAKY)"},
      {"LIMITS.TAKE LIMIT k GCRA 0 1s", "ERR group 1: invalid quota: must be a positive integer"},
      {"LIMITS.TAKE LIMIT j GCRA 1 1s LIMIT k WINDOW 1 1x",
       "ERR group 2: invalid window '1x': unknown unit (use ms, s, m, h or d)"},
      {"LIMITS.TAKE LIMIT k LEAKY 1 1s BURST -1",
       "ERR group 1: invalid BURST: must be a non-negative integer"},
      {"LIMITS.TAKE LIMIT k SLIDING 10001 1s",
       "ERR group 1: invalid limit: at most 10000 for SLIDING.TAKE; use GCRA.TAKE for larger "
       "limits"},
      {"LIMITS.TAKE LIMIT k GCRA 1 1s NODELAY", "ERR group 1: unknown option 'NODELAY'"},
      {"LIMITS.TAKE LIMIT k GCRA 1 1s COST 2",
       "ERR group 1: COST goes before the first LIMIT, for every group"},
      {"LIMITS.TAKE LIMIT k GCRA 1 1s REFUND 2",
       "ERR group 1: REFUND goes before the first LIMIT, for every group"},
      {"LIMITS.TAKE LIMIT k GCRA 1 1s HEADERS",
       "ERR group 1: HEADERS goes before the first LIMIT, for every group"},
      {"LIMITS.TAKE LIMIT k GCRA 1 1s POLICY x",
       "ERR group 1: invalid POLICY: only together with HEADERS"},
      {"LIMITS.TAKE LIMIT j GCRA 1 1s LIMIT k",
       "ERR group 2: wrong number of arguments (LIMIT key ALGO count duration [options])"},
      {"LIMITS.TAKE COST 1 REFUND 1 LIMIT k GCRA 1 1s",
       "ERR invalid REFUND: not allowed together with COST"},
      {"LIMITS.TAKE COST -1 LIMIT k GCRA 1 1s", "ERR invalid COST: must be a non-negative integer"},
      {"LIMITS.TAKE FOO LIMIT k GCRA 1 1s", "ERR unknown option 'FOO'"},
      {"LIMITS.TAKE BURST 2 LIMIT k GCRA 1 1s", "ERR unknown option 'BURST'"},
      {"LIMITS.TAKE LIMIT k GCRA 1", "ERR wrong number of arguments for 'limits.take' command"},
      {seventeen, "ERR too many groups: at most 16 LIMIT groups"},
      {"GCRA.TAKE k 1 1s COST 1 REFUND 1", "ERR invalid REFUND: not allowed together with COST"},
      {"WINDOW.TAKE k 1 1s REFUND -1", "ERR invalid REFUND: must be a non-negative integer"},
      {"SLIDING.TAKE k 1 1s REFUND", "ERR missing value for option 'REFUND'"},
      {"LEAKY.TAKE k 1 1s POLICY x", "ERR invalid POLICY: only together with HEADERS"},
      {"GCRA.TAKE k 1 1s HEADERS POLICY a\"b",
       "ERR invalid POLICY: 1 to 64 printable ASCII characters, no '\"' or '\\'"},
      {"GCRA.TAKE k 1 1s HEADERS HEADERS", "ERR duplicate option 'HEADERS'"},
      {"CONC.ACQUIRE k 1 1s HEADERS", "ERR unknown option 'HEADERS'"},
  };
  for (const auto& [command, error] : cases) {
    CAPTURE(command);
    CHECK(h.Cmd(command) == Err(error));
    CHECK(h.Cmd("EXISTS k j k0") == Int(0));
  }
  CHECK(h.server().limiter_stats().InfoSection().find("_calls:1") == std::string::npos);
  CHECK(h.server().limiter_stats().InfoSection().find("_refunds:1") == std::string::npos);
  // 16 groups are fine.
  std::string sixteen = "LIMITS.TAKE";
  for (int i = 0; i < 16; ++i) sixteen += " LIMIT k" + std::to_string(i) + " GCRA 1 1s";
  CHECK(h.Cmd(sixteen).substr(0, 8) == "*7\r\n:1\r\n");
}

TEST_CASE("LIMITS.TAKE: the KeyFinder finds every group's key, the Dispatcher's unit locks them") {
  Harness h;
  const CommandSpec* spec = h.table().Find("limits.take");
  REQUIRE(spec != nullptr);
  auto positions = [&](std::vector<std::string_view> args) {
    std::vector<int> out;
    CommandKeyPositions(*spec, args, &out);
    return out;
  };
  CHECK(positions({"LIMITS.TAKE", "LIMIT", "a", "GCRA", "1", "1s"}) == std::vector<int>{2});
  CHECK(positions({"LIMITS.TAKE", "COST",  "2",     "HEADERS", "LIMIT", "a", "LEAKY",
                   "1",           "1s",    "BURST", "2",       "DELAY", "1", "POLICY",
                   "LIMIT",       "LIMIT", "limit", "WINDOW",  "1",     "1s"}) ==
        std::vector<int>{5, 16});
  // A key named LIMIT, and a policy named LIMIT, are still keys and names.
  CHECK(positions({"LIMITS.TAKE", "LIMIT", "LIMIT", "GCRA", "1", "1s", "LIMIT", "b", "GCRA", "1",
                   "1s"}) == std::vector<int>{2, 7});
  CHECK(h.Cmd("LIMITS.TAKE HEADERS LIMIT LIMIT GCRA 1 1s POLICY LIMIT LIMIT b GCRA 1 1s")
            .substr(0, 8) == "*8\r\n:1\r\n");
  CHECK(h.Cmd("EXISTS LIMIT b") == Int(2));
  CHECK(positions({"LIMITS.TAKE", "LIMIT"}).empty());
}

TEST_CASE("COMMAND INFO / GETKEYS / DOCS describe LIMITS.TAKE's keys and syntax") {
  Harness h;
  const std::string key_spec = Arr(
      {Bulk("flags"), Arr({Simple("RW"), Simple("ACCESS"), Simple("UPDATE"), Simple("INCOMPLETE")}),
       Bulk("begin_search"),
       Arr({Bulk("type"), Bulk("keyword"), Bulk("spec"),
            Arr({Bulk("keyword"), Bulk("LIMIT"), Bulk("startfrom"), Int(1)})}),
       Bulk("find_keys"),
       Arr({Bulk("type"), Bulk("range"), Bulk("spec"),
            Arr({Bulk("lastkey"), Int(0), Bulk("keystep"), Int(1), Bulk("limit"), Int(0)})})});
  CHECK(h.Cmd("COMMAND INFO limits.take") ==
        Arr({Arr({Bulk("limits.take"), Int(-6),
                  Arr({Simple("write"), Simple("denyoom"), Simple("fast"), Simple("movablekeys")}),
                  Int(0), Int(0), Int(0),
                  Arr({Simple("@write"), Simple("@fast"), Simple("@ratelimit")}), Arr({}),
                  Arr({key_spec}), Arr({})})}));
  CHECK(h.Cmd("COMMAND GETKEYS LIMITS.TAKE COST 2 LIMIT a GCRA 1 1s BURST 2 LIMIT b WINDOW 1 1s") ==
        Arr({Bulk("a"), Bulk("b")}));
  CHECK(h.Cmd("COMMAND GETKEYS GCRA.TAKE k 1 1s") == Arr({Bulk("k")}));
  CHECK(h.Cmd("COMMAND GETKEYS MSET a 1 b 2") == Arr({Bulk("a"), Bulk("b")}));
  CHECK(h.Cmd("COMMAND GETKEYS NOPE a") == Err("ERR Invalid command specified"));
  CHECK(h.Cmd("COMMAND GETKEYS GET a b") ==
        Err("ERR Invalid number of arguments specified for command"));
  CHECK(h.Cmd("COMMAND GETKEYS PING x") == Err("ERR The command has no key arguments"));
  CHECK(h.Cmd("COMMAND GETKEYS GET") ==
        Err("ERR wrong number of arguments for 'command|getkeys' command"));
  const std::string docs = h.Cmd("COMMAND DOCS limits.take");
  CHECK(docs.find("[COST n|REFUND n] [HEADERS] LIMIT key GCRA|WINDOW|SLIDING|LEAKY") !=
        std::string::npos);
  CHECK(h.Cmd("COMMAND DOCS gcra.take").find("[COST n|REFUND n] [HEADERS [POLICY name]]") !=
        std::string::npos);
}

TEST_CASE("INFO limiters counts LIMITS.TAKE and refunds") {
  Harness h;
  h.Cmd(kSecDay);
  h.Cmd(kSecDay);
  h.Cmd(kSecDay);
  h.Cmd("LIMITS.TAKE REFUND 1 LIMIT sec GCRA 2 1s");
  h.Cmd("GCRA.TAKE g 1 1s REFUND 1");
  h.Cmd("GCRA.TAKE g 1 1s");
  const std::string info = h.Cmd("INFO limiters");
  CHECK(info.find("limits_take_calls:3\r\nlimits_take_allowed:2\r\nlimits_take_denied:1\r\n"
                  "limits_take_refunds:1\r\n") != std::string::npos);
  CHECK(info.find("gcra_take_calls:1\r\ngcra_take_allowed:1\r\ngcra_take_denied:0\r\n"
                  "gcra_take_refunds:1\r\n") != std::string::npos);
  CHECK(info.find("cl_throttle_refunds") == std::string::npos);
  h.Cmd("CONFIG RESETSTAT");
  CHECK(h.Cmd("INFO limiters").find("limits_take_refunds:0\r\n") != std::string::npos);
}

}  // namespace sluice::server::testing

namespace sluice::server::testing {

TEST_CASE("LIMITS.TAKE in MULTI/EXEC; a denied call writes no key, so no WATCH fires") {
  Harness h;
  CHECK(h.Cmd("MULTI") == Ok());
  CHECK(h.Cmd(kSecDay) == Simple("QUEUED"));
  CHECK(h.Cmd("EXEC") ==
        Arr({Multi({1, 1, 0, 86400000, 2}, 1, {{1, 1, 0, 500, 2}, {1, 2, 0, 86400000, 3}})}));
  CHECK(h.Cmd(kSecDay).substr(0, 8) == "*7\r\n:1\r\n");
  CHECK(h.Cmd("WATCH day sec") == Ok());
  CHECK(h.Cmd(kSecDay).substr(0, 8) == "*7\r\n:0\r\n");  // denied
  CHECK(h.Cmd("MULTI") == Ok());
  CHECK(h.Cmd("GET day") == Simple("QUEUED"));
  CHECK(h.Cmd("EXEC") == Arr({Bulk("2")}));
  CHECK(h.Cmd("WATCH day") == Ok());
  h.AdvanceMs(1000);
  CHECK(h.Cmd(kSecDay).substr(0, 8) == "*7\r\n:1\r\n");  // allowed: writes day
  CHECK(h.Cmd("MULTI") == Ok());
  CHECK(h.Cmd("GET day") == Simple("QUEUED"));
  CHECK(h.Cmd("EXEC") == NilArray());
}

}  // namespace sluice::server::testing
