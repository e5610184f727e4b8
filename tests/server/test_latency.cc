// LATENCY's monitor (server/core/latency.h) and commands, MEMORY's replies through the
// dispatcher, and INFO's dirty counter.
#include <doctest/doctest.h>

#include <string>

#include "server/core/latency.h"
#include "tests/server/harness.h"

namespace sluice::server::testing {

TEST_CASE("latency monitor: one sample a second (the worst), 160 kept, max, reset") {
  LatencyMonitor m;
  m.Add("command", 5, 1000);
  m.Add("command", 9, 1000);  // same second: the worst stays
  m.Add("command", 3, 1001);
  m.Add("fast-command", 2, 1001);
  auto history = m.History("command");
  REQUIRE(history.size() == 2);
  CHECK(history[0].time == 1000);
  CHECK(history[0].latency_ms == 9);
  CHECK(history[1].latency_ms == 3);
  auto latest = m.LatestAll();
  REQUIRE(latest.size() == 2);
  CHECK(latest[0].event == "command");
  CHECK(latest[0].last.time == 1001);
  CHECK(latest[0].max_ms == 9);
  for (int i = 0; i < 200; ++i) m.Add("command", i, 2000 + i);
  CHECK(m.History("command").size() == LatencyMonitor::kSamples);
  CHECK(m.History("command").front().time == 2000 + 200 - 160);
  std::string graph;
  CHECK(m.Graph("command", 2300, &graph));
  CHECK(graph.rfind("command - high 199 ms, low 40 ms (all time high 199 ms)\n", 0) == 0);
  CHECK(!m.Graph("nosuch", 2300, &graph));
  CHECK(m.Doctor(0, 2300).rfind("Dave, I have observed latency spikes", 0) == 0);
  CHECK(m.Reset({"COMMAND", "nosuch"}) == 1);
  CHECK(m.Reset({}) == 1);
  CHECK(m.Doctor(0, 2300).rfind("I'm sorry, Dave, I can't do that.", 0) == 0);
  CHECK(m.Doctor(10, 2300).rfind("Dave, no latency spike was observed", 0) == 0);
}

TEST_CASE("LATENCY and MEMORY replies as Redis 7.0") {
  Harness h;
  CHECK(h.Cmd("LATENCY LATEST") == Arr({}));
  CHECK(h.Cmd("LATENCY HISTORY command") == Arr({}));
  CHECK(h.Cmd("LATENCY GRAPH command") == Err("ERR No samples available for event 'command'"));
  CHECK(h.Cmd("LATENCY RESET") == Int(0));
  h.server().latency().Add("command", 12, 1700000000);
  CHECK(h.Cmd("LATENCY LATEST") ==
        Arr({Arr({Bulk("command"), Int(1700000000), Int(12), Int(12)})}));
  CHECK(h.Cmd("LATENCY HISTORY command") == Arr({Arr({Int(1700000000), Int(12)})}));
  CHECK(h.Cmd("LATENCY RESET command") == Int(1));
  CHECK(h.Cmd("MEMORY USAGE nokey").rfind("$-1", 0) == 0);
  CHECK(h.Cmd("SET k v") == Ok());
  CHECK(h.Cmd("MEMORY USAGE k") == Int(56));
  CHECK(h.Cmd("MEMORY USAGE k SAMPLES") == Err("ERR syntax error"));
  CHECK(h.Cmd("MEMORY USAGE k SAMPLES -1") == Err("ERR syntax error"));
  CHECK(h.Cmd("MEMORY USAGE k SAMPLES x") == Err("ERR value is not an integer or out of range"));
  h.Cmd("RPUSH l a b c d e f g h i j");
  const std::string all = h.Cmd("MEMORY USAGE l SAMPLES 0");
  CHECK(all == h.Cmd("MEMORY USAGE l"));  // equal elements: the estimate is the same
  CHECK(h.Cmd("MEMORY PURGE") == Ok());
  CHECK(h.Cmd("MEMORY MALLOC-STATS") == Bulk("Stats not supported for the current allocator"));
  CHECK(h.Cmd("PFSELFTEST") == Ok());
}

TEST_CASE("INFO rdb_changes_since_last_save counts writes, not no-op writes; SAVE resets it") {
  Harness h;
  auto dirty = [&] {
    std::string info = h.Cmd("INFO persistence");
    size_t at = info.find("rdb_changes_since_last_save:");
    REQUIRE(at != std::string::npos);
    return std::stoll(info.substr(at + 28));
  };
  const int64_t start = dirty();
  h.Cmd("SETBIT foo 0 0");
  CHECK(dirty() == start + 1);
  h.Cmd("SETBIT foo 0 0");  // no change
  CHECK(dirty() == start + 1);
  h.Cmd("SETBIT foo 0 1");
  h.Cmd("MSET a 1 b 2");
  CHECK(dirty() == start + 4);
  CHECK(h.Cmd("SAVE") == Ok());
  CHECK(dirty() == 0);
}

}  // namespace sluice::server::testing
