// The limiter commands through the real dispatcher and Store (tests/server/harness.h), with
// exact reply bytes. Every case of ../shared/spec/VECTORS.md is here as a command sequence;
// argument errors are in test_limiter_errors.cc.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "tests/server/harness.h"

namespace sluice::server::testing {
namespace {

constexpr int64_t kStartNs = int64_t{1'700'000'000'000} * 1'000'000;

// An RESP2 array of integers: a limiter reply.
std::string Ints(std::vector<int64_t> values) {
  std::vector<std::string> items;
  for (int64_t v : values) items.push_back(Int(v));
  return Arr(items);
}

// LEAKY.TAKE's reply: the five fields and delay_ms.
std::string Leaky(int64_t allowed, int64_t remaining, int64_t retry, int64_t reset, int64_t limit,
                  int64_t delay) {
  return Ints({allowed, remaining, retry, reset, limit, delay});
}

// CONC.ACQUIRE's reply: the five fields and the token (nil when empty).
std::string Conc(int64_t allowed, int64_t remaining, int64_t retry, int64_t reset, int64_t limit,
                 std::string_view token) {
  return Arr({Int(allowed), Int(remaining), Int(retry), Int(reset), Int(limit),
              token.empty() ? Nil() : Bulk(token)});
}

// The RESP3 map every limiter replies with, plus extra (name, encoded value) pairs.
std::string DecisionMap(std::vector<int64_t> five, std::vector<std::string> extra = {}) {
  const char* names[] = {"allowed", "remaining", "retry_after_ms", "reset_after_ms", "limit"};
  std::vector<std::string> items;
  for (size_t i = 0; i < 5; ++i) {
    items.push_back(Bulk(names[i]));
    items.push_back(Int(five[i]));
  }
  for (const std::string& item : extra) items.push_back(item);
  return Map(items);
}

struct Step {
  int64_t at_ms;  // from the scenario's start
  std::string command;
  std::string reply;
};

// Runs `steps` in order, moving the clock forward to each step's time.
void RunSteps(Harness& h, const std::vector<Step>& steps) {
  int64_t now = 0;
  for (const Step& step : steps) {
    REQUIRE(step.at_ms >= now);
    h.AdvanceMs(step.at_ms - now);
    now = step.at_ms;
    CAPTURE(step.at_ms);
    CAPTURE(step.command);
    CHECK(h.Cmd(step.command) == step.reply);
  }
}

}  // namespace

// ---------------------------------------------------------------- CL.THROTTLE (redis-cell)

TEST_CASE("CL.THROTTLE scenario A: max_burst 4, 1 per second") {
  Harness h;
  RunSteps(h, {
                  {0, "CL.THROTTLE foo 4 1 1 6", Ints({1, 5, 5, -1, 0})},
                  {0, "CL.THROTTLE foo 4 1 1 1", Ints({0, 5, 4, -1, 1})},
                  {0, "CL.THROTTLE foo 4 1 1 1", Ints({0, 5, 3, -1, 2})},
                  {0, "CL.THROTTLE foo 4 1 1 1", Ints({0, 5, 2, -1, 3})},
                  {0, "CL.THROTTLE foo 4 1 1 1", Ints({0, 5, 1, -1, 4})},
                  {0, "CL.THROTTLE foo 4 1 1 1", Ints({0, 5, 0, -1, 5})},
                  {0, "CL.THROTTLE foo 4 1 1 1", Ints({1, 5, 0, 1, 5})},
                  {3000, "CL.THROTTLE foo 4 1 1 1", Ints({0, 5, 2, -1, 3})},
                  {3100, "CL.THROTTLE foo 4 1 1 1", Ints({0, 5, 1, -1, 4})},
                  {4000, "CL.THROTTLE foo 4 1 1 1", Ints({0, 5, 1, -1, 4})},
                  {8000, "CL.THROTTLE foo 4 1 1 1", Ints({0, 5, 4, -1, 1})},
                  {9500, "CL.THROTTLE foo 4 1 1 1", Ints({0, 5, 4, -1, 1})},
                  {9500, "CL.THROTTLE foo 4 1 1 0", Ints({0, 5, 4, -1, 1})},
                  {9500, "CL.THROTTLE foo 4 1 1 2", Ints({0, 5, 2, -1, 3})},
                  {9500, "CL.THROTTLE foo 4 1 1 5", Ints({1, 5, 2, 3, 3})},
              });
}

TEST_CASE("CL.THROTTLE scenarios B and C") {
  Harness h;
  CHECK(h.Cmd("CL.THROTTLE user123 15 30 60") == Ints({0, 16, 15, -1, 2}));
  RunSteps(h, {
                  {0, "CL.THROTTLE c 0 1 2 1", Ints({0, 1, 0, -1, 2})},
                  {0, "CL.THROTTLE c 0 1 2 1", Ints({1, 1, 0, 2, 2})},
                  {2000, "CL.THROTTLE c 0 1 2 1", Ints({0, 1, 0, -1, 2})},
              });
}

TEST_CASE("CL.THROTTLE stays a 5-integer array under RESP3") {
  Harness h;
  h.Resp3();
  CHECK(h.Cmd("CL.THROTTLE foo 4 1 1") == Ints({0, 5, 4, -1, 1}));
}

// ---------------------------------------------------------------- GCRA.TAKE

TEST_CASE("GCRA.TAKE vectors, then PTTL and GET show the stored TAT") {
  Harness h;
  CHECK(h.Cmd("GCRA.TAKE k 10 1s") == Ints({1, 9, 0, 100, 10}));
  for (int i = 2; i <= 9; ++i) {
    CHECK(h.Cmd("GCRA.TAKE k 10 1s") == Ints({1, 10 - i, 0, 100 * i, 10}));
  }
  CHECK(h.Cmd("GCRA.TAKE k 10 1s") == Ints({1, 0, 0, 1000, 10}));
  CHECK(h.Cmd("GCRA.TAKE k 10 1s") == Ints({0, 0, 100, 1000, 10}));
  h.AdvanceMs(250);
  CHECK(h.Cmd("GCRA.TAKE k 10 1s") == Ints({1, 1, 0, 850, 10}));
  CHECK(h.Cmd("GCRA.TAKE k 10 1s COST 0") == Ints({1, 1, 0, 850, 10}));
  CHECK(h.Cmd("GCRA.TAKE k 10 1s COST 11") == Ints({0, 1, -1, 850, 10}));
  CHECK(h.Cmd("PTTL k") == Int(850));
  // TAT = start + 1100 ms, in ns.
  CHECK(h.Cmd("GET k") == Bulk(std::to_string(kStartNs + 1'100'000'000)));
}

TEST_CASE("GCRA.TAKE BURST and COST") {
  Harness h;
  // 1 per second, bursts of 3: a token bucket of 3 refilled at 1/s.
  CHECK(h.Cmd("GCRA.TAKE b 1 1s BURST 3 COST 3") == Ints({1, 0, 0, 3000, 3}));
  CHECK(h.Cmd("GCRA.TAKE b 1 1s BURST 3") == Ints({0, 0, 1000, 3000, 3}));
  h.AdvanceMs(1000);
  CHECK(h.Cmd("GCRA.TAKE b 1 1s burst 3 cost 1") == Ints({1, 0, 0, 3000, 3}));
  h.AdvanceMs(2500);
  CHECK(h.Cmd("GCRA.TAKE b 1 1s BURST 3 COST 2") == Ints({1, 0, 0, 2500, 3}));
}

TEST_CASE("GCRA.TAKE and CL.THROTTLE share a key") {
  Harness h;
  // CL.THROTTLE k 9 10 1 is GCRA.TAKE k 10 1s: T = 100 ms, limit 10.
  CHECK(h.Cmd("GCRA.TAKE k 10 1s") == Ints({1, 9, 0, 100, 10}));
  CHECK(h.Cmd("CL.THROTTLE k 9 10 1") == Ints({0, 10, 8, -1, 1}));
  CHECK(h.Cmd("GCRA.TAKE k 10 1s") == Ints({1, 7, 0, 300, 10}));
  CHECK(h.Cmd("CL.THROTTLE k 9 10 1 7") == Ints({0, 10, 0, -1, 1}));
  CHECK(h.Cmd("GCRA.TAKE k 10 1s") == Ints({0, 0, 100, 1000, 10}));
  CHECK(h.Cmd("CL.THROTTLE k 9 10 1") == Ints({1, 10, 0, 1, 1}));
}

TEST_CASE("GCRA.TAKE honours a TAT written with SET") {
  Harness h;
  const std::string tat = std::to_string(kStartNs + 500'000'000);  // 500 ms ahead
  CHECK(h.Run({"SET", "k", tat}) == Ok());
  CHECK(h.Cmd("PTTL k") == Int(-1));
  CHECK(h.Cmd("GCRA.TAKE k 10 1s") == Ints({1, 4, 0, 600, 10}));
  CHECK(h.Cmd("PTTL k") == Int(600));
  CHECK(h.Cmd("GET k") == Bulk(std::to_string(kStartNs + 600'000'000)));
  // A TAT in the past counts as idle.
  CHECK(h.Run({"SET", "old", std::to_string(kStartNs - 5'000'000'000)}) == Ok());
  CHECK(h.Cmd("GCRA.TAKE old 10 1s") == Ints({1, 9, 0, 100, 10}));
}

TEST_CASE("a denied GCRA.TAKE writes nothing") {
  Harness h;
  CHECK(h.Cmd("GCRA.TAKE k 1 1s") == Ints({1, 0, 0, 1000, 1}));
  const std::string before = h.Cmd("GET k");
  h.AdvanceMs(300);
  CHECK(h.Cmd("GCRA.TAKE k 1 1s") == Ints({0, 0, 700, 700, 1}));
  CHECK(h.Cmd("GET k") == before);
  CHECK(h.Cmd("PTTL k") == Int(700));
}

// ---------------------------------------------------------------- LEAKY.TAKE (nginx)

TEST_CASE("LEAKY.TAKE NODELAY: nginx limit_req rate=10r/s burst=5 nodelay") {
  Harness h;
  for (int i = 1; i <= 6; ++i) {
    CAPTURE(i);
    CHECK(h.Cmd("LEAKY.TAKE k 10 1s BURST 5 NODELAY") == Leaky(1, 6 - i, 0, 100 * i, 6, 0));
  }
  for (int i = 7; i <= 10; ++i) {
    CAPTURE(i);
    CHECK(h.Cmd("LEAKY.TAKE k 10 1s BURST 5 NODELAY") == Leaky(0, 0, 100, 600, 6, 0));
  }
  RunSteps(h, {
                  {100, "LEAKY.TAKE k 10 1s BURST 5 NODELAY", Leaky(1, 0, 0, 600, 6, 0)},
                  {150, "LEAKY.TAKE k 10 1s BURST 5 NODELAY", Leaky(0, 0, 50, 550, 6, 0)},
                  {200, "LEAKY.TAKE k 10 1s BURST 5 NODELAY", Leaky(1, 0, 0, 600, 6, 0)},
              });
}

TEST_CASE("LEAKY.TAKE with nginx's default delay reports delay_ms") {
  Harness h;
  for (int i = 1; i <= 6; ++i) {
    CAPTURE(i);
    CHECK(h.Cmd("LEAKY.TAKE k 10 1s BURST 5") == Leaky(1, 6 - i, 0, 100 * i, 6, 100 * (i - 1)));
  }
  CHECK(h.Cmd("LEAKY.TAKE k 10 1s BURST 5") == Leaky(0, 0, 100, 600, 6, 0));
}

TEST_CASE("LEAKY.TAKE DELAY n passes n excess requests undelayed") {
  Harness h;
  for (int i = 1; i <= 6; ++i) {
    CAPTURE(i);
    int64_t delay = i <= 3 ? 0 : 100 * (i - 3);
    CHECK(h.Cmd("LEAKY.TAKE k 10 1s BURST 5 DELAY 2") == Leaky(1, 6 - i, 0, 100 * i, 6, delay));
  }
}

TEST_CASE("LEAKY.TAKE without BURST allows one at a time; a denial changes nothing") {
  Harness h;
  CHECK(h.Cmd("LEAKY.TAKE k 2 1s") == Leaky(1, 0, 0, 500, 1, 0));
  CHECK(h.Cmd("PTTL k") == Int(500));
  h.AdvanceMs(200);
  CHECK(h.Cmd("LEAKY.TAKE k 2 1s") == Leaky(0, 0, 300, 300, 1, 0));
  CHECK(h.Cmd("PTTL k") == Int(300));
  h.AdvanceMs(300);
  CHECK(h.Cmd("LEAKY.TAKE k 2 1s") == Leaky(1, 0, 0, 500, 1, 0));
}

// ---------------------------------------------------------------- WINDOW.TAKE

TEST_CASE("WINDOW.TAKE counts in a fixed window from the first request") {
  Harness h;
  CHECK(h.Cmd("WINDOW.TAKE w 3 10s") == Ints({1, 2, 0, 10000, 3}));
  h.AdvanceMs(1000);
  CHECK(h.Cmd("WINDOW.TAKE w 3 10s COST 2") == Ints({1, 0, 0, 9000, 3}));
  CHECK(h.Cmd("WINDOW.TAKE w 3 10s") == Ints({0, 0, 9000, 9000, 3}));
  CHECK(h.Cmd("GET w") == Bulk("3"));
  CHECK(h.Cmd("PTTL w") == Int(9000));
  CHECK(h.Cmd("WINDOW.TAKE w 3 10s COST 4") == Ints({0, 0, -1, 9000, 3}));
  h.AdvanceMs(9000);  // the window is over, though (as in Redis) the key lives out its last ms
  CHECK(h.Cmd("PTTL w") == Int(0));
  CHECK(h.Cmd("WINDOW.TAKE w 3 10s") == Ints({1, 2, 0, 10000, 3}));
  h.AdvanceMs(10001);
  CHECK(h.Cmd("EXISTS w") == Int(0));
}

TEST_CASE("WINDOW.TAKE works on counters made by INCR and EXPIRE") {
  Harness h;
  CHECK(h.Cmd("INCR w") == Int(1));
  CHECK(h.Cmd("INCR w") == Int(2));
  CHECK(h.Cmd("EXPIRE w 5") == Int(1));
  CHECK(h.Cmd("WINDOW.TAKE w 5 10s") == Ints({1, 2, 0, 5000, 5}));
  CHECK(h.Cmd("GET w") == Bulk("3"));
  CHECK(h.Cmd("PTTL w") == Int(5000));  // the existing window keeps its end
  CHECK(h.Cmd("INCR w") == Int(4));     // and INCR still works on it
  SUBCASE("a counter without a TTL gets one") {
    CHECK(h.Cmd("INCR n") == Int(1));
    CHECK(h.Cmd("PTTL n") == Int(-1));
    CHECK(h.Cmd("WINDOW.TAKE n 5 10s") == Ints({1, 3, 0, 10000, 5}));
    CHECK(h.Cmd("PTTL n") == Int(10000));
  }
  SUBCASE("a full counter without a TTL gets one even when denied, so it cannot deny forever") {
    CHECK(h.Cmd("SET f 5") == Ok());
    CHECK(h.Cmd("WINDOW.TAKE f 5 10s") == Ints({0, 0, 10000, 10000, 5}));
    CHECK(h.Cmd("GET f") == Bulk("5"));
    CHECK(h.Cmd("PTTL f") == Int(10000));
    h.AdvanceMs(10001);
    CHECK(h.Cmd("WINDOW.TAKE f 5 10s") == Ints({1, 4, 0, 10000, 5}));
  }
}

// ---------------------------------------------------------------- SLIDING.TAKE

TEST_CASE("SLIDING.TAKE never admits more than limit in any window") {
  Harness h;
  RunSteps(h, {
                  {0, "SLIDING.TAKE s 3 10s", Ints({1, 2, 0, 10000, 3})},
                  {1000, "SLIDING.TAKE s 3 10s", Ints({1, 1, 0, 10000, 3})},
                  {2000, "SLIDING.TAKE s 3 10s", Ints({1, 0, 0, 10000, 3})},
                  {3000, "SLIDING.TAKE s 3 10s", Ints({0, 0, 7000, 9000, 3})},
                  {3000, "SLIDING.TAKE s 3 10s COST 2", Ints({0, 0, 8000, 9000, 3})},
                  {3000, "SLIDING.TAKE s 3 10s COST 4", Ints({0, 0, -1, 9000, 3})},
                  {9999, "SLIDING.TAKE s 3 10s", Ints({0, 0, 1, 2001, 3})},
                  {10000, "SLIDING.TAKE s 3 10s", Ints({1, 0, 0, 10000, 3})},
              });
  CHECK(h.Cmd("TYPE s") == Simple("sliding"));
  CHECK(h.Cmd("PTTL s") == Int(10000));
}

// ---------------------------------------------------------------- CONC.ACQUIRE / RELEASE

TEST_CASE("CONC.ACQUIRE and CONC.RELEASE") {
  Harness h;
  CHECK(h.Cmd("CONC.ACQUIRE c 2 10s ID a") == Conc(1, 1, 0, 10000, 2, "a"));
  CHECK(h.Cmd("CONC.ACQUIRE c 2 10s ID b") == Conc(1, 0, 0, 10000, 2, "b"));
  CHECK(h.Cmd("CONC.ACQUIRE c 2 10s ID x") == Conc(0, 0, 10000, 10000, 2, ""));
  h.AdvanceMs(3000);
  // Renewing a live lease takes no new slot; `a` now holds until 13 s, `b` until 10 s.
  CHECK(h.Cmd("CONC.ACQUIRE c 2 10s ID a") == Conc(1, 0, 0, 10000, 2, "a"));
  CHECK(h.Cmd("CONC.ACQUIRE c 2 10s ID x") == Conc(0, 0, 7000, 10000, 2, ""));
  CHECK(h.Cmd("CONC.RELEASE c b") == Int(1));
  CHECK(h.Cmd("CONC.RELEASE c b") == Int(0));
  CHECK(h.Cmd("CONC.RELEASE c nobody") == Int(0));
  CHECK(h.Cmd("CONC.RELEASE missing a") == Int(0));
  CHECK(h.Cmd("CONC.ACQUIRE c 2 10s ID x") == Conc(1, 0, 0, 10000, 2, "x"));
  CHECK(h.Cmd("TYPE c") == Simple("conc"));
  h.AdvanceMs(10001);  // every lease has ended (at 13 s) and the key has expired
  CHECK(h.Cmd("EXISTS c") == Int(0));
  CHECK(h.Cmd("CONC.RELEASE c a") == Int(0));
}

TEST_CASE("CONC.ACQUIRE generates a token that CONC.RELEASE accepts") {
  Harness h;
  const std::string reply = h.Cmd("CONC.ACQUIRE c 1 1m");
  const std::string head = Ints({1, 0, 0, 60000, 1});
  // The array header says six elements; the sixth is a bulk string.
  const std::string prefix = "*6" + head.substr(head.find("\r\n"));
  REQUIRE(reply.rfind(prefix, 0) == 0);
  std::string bulk = reply.substr(prefix.size());
  REQUIRE(bulk.size() > 4);
  REQUIRE(bulk[0] == '$');
  const size_t crlf = bulk.find("\r\n");
  const std::string token = bulk.substr(crlf + 2, bulk.size() - crlf - 4);
  CHECK(!token.empty());
  CHECK(bulk == Bulk(token));
  CHECK(h.Cmd("CONC.ACQUIRE c 1 1m") == Conc(0, 0, 60000, 60000, 1, ""));
  CHECK(h.Run({"CONC.RELEASE", "c", token}) == Int(1));
  CHECK(h.Cmd("CONC.ACQUIRE c 1 1m ID mine") == Conc(1, 0, 0, 60000, 1, "mine"));
}

// ---------------------------------------------------------------- RESP3

TEST_CASE("RESP3: every limiter replies with a map of named fields") {
  Harness h;
  h.Resp3();
  CHECK(h.Cmd("GCRA.TAKE g 10 1s") == DecisionMap({1, 9, 0, 100, 10}));
  CHECK(h.Cmd("GCRA.TAKE g 10 1s COST 20") == DecisionMap({0, 9, -1, 100, 10}));
  CHECK(h.Cmd("LEAKY.TAKE l 10 1s BURST 5") ==
        DecisionMap({1, 5, 0, 100, 6}, {Bulk("delay_ms"), Int(0)}));
  CHECK(h.Cmd("LEAKY.TAKE l 10 1s BURST 5") ==
        DecisionMap({1, 4, 0, 200, 6}, {Bulk("delay_ms"), Int(100)}));
  CHECK(h.Cmd("WINDOW.TAKE w 3 1m") == DecisionMap({1, 2, 0, 60000, 3}));
  CHECK(h.Cmd("SLIDING.TAKE s 3 1m") == DecisionMap({1, 2, 0, 60000, 3}));
  CHECK(h.Cmd("CONC.ACQUIRE c 1 5s ID t1") ==
        DecisionMap({1, 0, 0, 5000, 1}, {Bulk("token"), Bulk("t1")}));
  CHECK(h.Cmd("CONC.ACQUIRE c 1 5s ID t2") ==
        DecisionMap({0, 0, 5000, 5000, 1}, {Bulk("token"), Null()}));
  CHECK(h.Cmd("CONC.RELEASE c t1") == Int(1));
}

// ---------------------------------------------------------------- keys and types

TEST_CASE("limiter keys are ordinary keys") {
  Harness h;
  CHECK(h.Cmd("GCRA.TAKE g 10 1s") == Ints({1, 9, 0, 100, 10}));
  CHECK(h.Cmd("LEAKY.TAKE l 1 10s") == Leaky(1, 0, 0, 10000, 1, 0));
  CHECK(h.Cmd("WINDOW.TAKE w 5 1m") == Ints({1, 4, 0, 60000, 5}));
  CHECK(h.Cmd("SLIDING.TAKE s 5 1h") == Ints({1, 4, 0, 3600000, 5}));
  CHECK(h.Cmd("CONC.ACQUIRE c 5 1d ID t") == Conc(1, 4, 0, 86400000, 5, "t"));

  CHECK(h.Cmd("TYPE g") == Simple("string"));
  CHECK(h.Cmd("TYPE l") == Simple("leaky"));
  CHECK(h.Cmd("TYPE w") == Simple("string"));
  CHECK(h.Cmd("TYPE s") == Simple("sliding"));
  CHECK(h.Cmd("TYPE c") == Simple("conc"));
  CHECK(h.Cmd("EXISTS g l w s c nope") == Int(5));
  CHECK(h.Cmd("TTL l") == Int(10));
  CHECK(h.Cmd("PTTL s") == Int(3600000));
  CHECK(h.Cmd("TTL c") == Int(86400));

  CHECK(h.Cmd("SCAN 0 TYPE leaky") == Arr({Bulk("0"), Arr({Bulk("l")})}));
  CHECK(h.Cmd("SCAN 0 MATCH s*") == Arr({Bulk("0"), Arr({Bulk("s")})}));

  // RENAME keeps the state and the TTL; the limiter continues under the new name.
  CHECK(h.Cmd("RENAME l l2") == Ok());
  CHECK(h.Cmd("EXISTS l") == Int(0));
  CHECK(h.Cmd("PTTL l2") == Int(10000));
  CHECK(h.Cmd("LEAKY.TAKE l2 1 10s") == Leaky(0, 0, 10000, 10000, 1, 0));
  CHECK(h.Cmd("LEAKY.TAKE l 1 10s") == Leaky(1, 0, 0, 10000, 1, 0));

  // DEL resets a limiter.
  CHECK(h.Cmd("DEL s") == Int(1));
  CHECK(h.Cmd("SLIDING.TAKE s 5 1h") == Ints({1, 4, 0, 3600000, 5}));

  // EXPIRE shortens a limiter's life like any key's.
  CHECK(h.Cmd("PEXPIRE c 100") == Int(1));
  h.AdvanceMs(101);
  CHECK(h.Cmd("EXISTS c") == Int(0));
}

TEST_CASE("WRONGTYPE both ways") {
  Harness h;
  const std::string wrongtype =
      Err("WRONGTYPE Operation against a key holding the wrong kind of value");
  CHECK(h.Cmd("LEAKY.TAKE l 10 1s") == Leaky(1, 0, 0, 100, 1, 0));
  CHECK(h.Cmd("GET l") == wrongtype);
  CHECK(h.Cmd("INCR l") == wrongtype);
  CHECK(h.Cmd("SLIDING.TAKE s 10 1s") == Ints({1, 9, 0, 1000, 10}));
  CHECK(h.Cmd("GCRA.TAKE s 10 1s") == wrongtype);
  CHECK(h.Cmd("WINDOW.TAKE s 10 1s") == wrongtype);
  CHECK(h.Cmd("CL.THROTTLE s 1 1 1") == wrongtype);
  CHECK(h.Cmd("LEAKY.TAKE s 10 1s") == wrongtype);
  CHECK(h.Cmd("CONC.ACQUIRE s 10 1s") == wrongtype);
  CHECK(h.Cmd("CONC.RELEASE s t") == wrongtype);
  CHECK(h.Cmd("SET str hello") == Ok());
  CHECK(h.Cmd("SLIDING.TAKE str 10 1s") == wrongtype);
  CHECK(h.Cmd("CONC.ACQUIRE str 10 1s") == wrongtype);
  // The WRONGTYPE calls changed nothing and were not counted.
  CHECK(h.Cmd("SLIDING.TAKE s 10 1s") == Ints({1, 8, 0, 1000, 10}));
}

TEST_CASE("a string that is not a TAT or a count is an error, not a reset") {
  Harness h;
  CHECK(h.Cmd("SET k hello") == Ok());
  CHECK(h.Cmd("GCRA.TAKE k 10 1s") == Err("ERR value is not an integer or out of range"));
  CHECK(h.Cmd("WINDOW.TAKE k 10 1s") == Err("ERR value is not an integer or out of range"));
  CHECK(h.Cmd("GET k") == Bulk("hello"));
}

// ---------------------------------------------------------------- COST 0 and denials

TEST_CASE("COST 0 looks without writing") {
  Harness h;
  CHECK(h.Cmd("GCRA.TAKE g 10 1s COST 0") == Ints({1, 10, 0, 0, 10}));
  CHECK(h.Cmd("LEAKY.TAKE l 10 1s BURST 2 COST 0") == Leaky(1, 3, 0, 0, 3, 0));
  // A fresh limiter is already "fresh": reset_after_ms 0, as for GCRA, LEAKY and SLIDING.
  CHECK(h.Cmd("WINDOW.TAKE w 10 1s COST 0") == Ints({1, 10, 0, 0, 10}));
  CHECK(h.Cmd("SLIDING.TAKE s 10 1s COST 0") == Ints({1, 10, 0, 0, 10}));
  CHECK(h.Cmd("CL.THROTTLE cl 4 1 1 0") == Ints({0, 5, 5, -1, 0}));
  CHECK(h.Cmd("EXISTS g l w s cl") == Int(0));
  // On existing state COST 0 reports it and leaves the key's TTL alone.
  CHECK(h.Cmd("WINDOW.TAKE w 10 1s COST 4") == Ints({1, 6, 0, 1000, 10}));
  h.AdvanceMs(400);
  CHECK(h.Cmd("WINDOW.TAKE w 10 1s COST 0") == Ints({1, 6, 0, 600, 10}));
  CHECK(h.Cmd("GET w") == Bulk("4"));
  CHECK(h.Cmd("PTTL w") == Int(600));
}

TEST_CASE("denied calls write nothing") {
  Harness h;
  CHECK(h.Cmd("LEAKY.TAKE l 1 10s") == Leaky(1, 0, 0, 10000, 1, 0));
  h.AdvanceMs(2000);
  CHECK(h.Cmd("PTTL l") == Int(8000));
  CHECK(h.Cmd("LEAKY.TAKE l 1 10s") == Leaky(0, 0, 8000, 8000, 1, 0));
  CHECK(h.Cmd("PTTL l") == Int(8000));
  CHECK(h.Cmd("WINDOW.TAKE w 1 10s") == Ints({1, 0, 0, 10000, 1}));
  CHECK(h.Cmd("WINDOW.TAKE w 1 10s") == Ints({0, 0, 10000, 10000, 1}));
  CHECK(h.Cmd("GET w") == Bulk("1"));
  // A limiter that denies the first call never creates its key.
  CHECK(h.Cmd("GCRA.TAKE g 10 1s COST 11") == Ints({0, 10, -1, 0, 10}));
  CHECK(h.Cmd("LEAKY.TAKE l3 10 1s COST 2") == Leaky(0, 1, -1, 0, 1, 0));
  CHECK(h.Cmd("EXISTS g l3") == Int(0));
}

// ---------------------------------------------------------------- concurrency

TEST_CASE("concurrent takes on one key from several clients: exactly the quota passes") {
  Harness h;
  const Dispatcher dispatcher(h.table());
  constexpr int kThreads = 4, kCallsEach = 200;
  std::atomic<int> allowed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      ClientState client;  // each thread is its own connection
      const std::vector<std::string_view> args = {"GCRA.TAKE", "k", "500", "1h"};
      for (int i = 0; i < kCallsEach; ++i) {
        std::string reply;
        protocol::ReplyWriter out(&reply, 2);
        CommandContext ctx{h.store(), h.server(), client, out};
        dispatcher.Dispatch(ctx, args);
        if (reply.rfind("*5\r\n:1\r\n", 0) == 0) ++allowed;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(allowed.load() == 500);
  CHECK(h.Cmd("GCRA.TAKE k 500 1h COST 0") == Ints({1, 0, 0, 3600000, 500}));
  const std::string info = h.Cmd("INFO limiters");
  CHECK(info.find("gcra_take_calls:801\r\ngcra_take_allowed:501\r\ngcra_take_denied:300\r\n") !=
        std::string::npos);
}

// ---------------------------------------------------------------- INFO limiters

TEST_CASE("INFO limiters counts calls, allowed and denied") {
  Harness h;
  h.Cmd("GCRA.TAKE g 1 1s");
  h.Cmd("GCRA.TAKE g 1 1s");
  h.Cmd("GCRA.TAKE g 1 1s");
  h.Cmd("CL.THROTTLE c 0 1 1");
  h.Cmd("CL.THROTTLE c 0 1 1");
  h.Cmd("LEAKY.TAKE l 1 1s");
  h.Cmd("WINDOW.TAKE w 1 1s");
  h.Cmd("SLIDING.TAKE s 1 1s");
  h.Cmd("SLIDING.TAKE s 1 1s");
  h.Cmd("CONC.ACQUIRE k 1 1s ID a");
  h.Cmd("CONC.RELEASE k a");
  h.Cmd("CONC.RELEASE k a");
  h.Cmd("GCRA.TAKE g 0 1s");  // an argument error is not a call
  const std::string info = h.Cmd("INFO limiters");
  const char* expected[] = {
      "gcra_take_calls:3\r\ngcra_take_allowed:1\r\ngcra_take_denied:2\r\n",
      "cl_throttle_calls:2\r\ncl_throttle_allowed:1\r\ncl_throttle_denied:1\r\n",
      "leaky_take_calls:1\r\nleaky_take_allowed:1\r\nleaky_take_denied:0\r\n",
      "window_take_calls:1\r\nwindow_take_allowed:1\r\nwindow_take_denied:0\r\n",
      "sliding_take_calls:2\r\nsliding_take_allowed:1\r\nsliding_take_denied:1\r\n",
      "conc_acquire_calls:1\r\nconc_acquire_allowed:1\r\nconc_acquire_denied:0\r\n",
      "conc_release_calls:2\r\nconc_release_allowed:1\r\nconc_release_denied:1\r\n",
  };
  CHECK(info.find("# Limiters\r\n") != std::string::npos);
  for (const char* fields : expected) {
    CAPTURE(fields);
    CHECK(info.find(fields) != std::string::npos);
  }
}

}  // namespace sluice::server::testing
