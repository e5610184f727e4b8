// Stream commands through the real dispatcher and Store. Expected replies are redis-server
// 7.0.15's (tests/blackbox/test_streams.py and collection_gen_stream.py compare side by side).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/server/harness.h"

namespace sluice::server::testing {

namespace {
std::string Entry(std::string_view id, std::vector<std::string> fields) {
  std::vector<std::string> items;
  for (const auto& f : fields) items.push_back(Bulk(f));
  return Arr({Bulk(id), Arr(items)});
}
}  // namespace

TEST_CASE("XADD IDs: explicit, <ms>-*, * on the test clock, and Redis's refusals") {
  Harness h;
  CHECK(h.Cmd("XADD s 5-1 a 1") == Bulk("5-1"));
  CHECK(h.Cmd("XADD s 5-* b 2") == Bulk("5-2"));
  CHECK(h.Cmd("XADD s 6-* c 3") == Bulk("6-0"));
  CHECK(h.Cmd("XADD s 6 c 3") ==
        Err("ERR The ID specified in XADD is equal or smaller than the target stream top item"));
  CHECK(h.Cmd("XADD s 0-0 a 1") == Err("ERR The ID specified in XADD must be greater than 0-0"));
  CHECK(h.Cmd("XADD s * a 1") == Bulk("1700000000000-0"));
  CHECK(h.Cmd("XADD s * a 1") == Bulk("1700000000000-1"));
  h.AdvanceMs(5);
  CHECK(h.Cmd("XADD s * a 1") == Bulk("1700000000005-0"));
  CHECK(h.Cmd("XADD s a 1 2") == Err("ERR Invalid stream ID specified as stream command argument"));
  CHECK(h.Cmd("XADD s 9-1 a") == Err("ERR wrong number of arguments for 'xadd' command"));
  CHECK(h.Cmd("XADD n NOMKSTREAM 1-1 a 1") == Nil());
  CHECK(h.Cmd("EXISTS n") == Int(0));
  CHECK(h.Cmd("XLEN s") == Int(6));
  CHECK(h.Cmd("TYPE s") == Simple("stream"));
  CHECK(h.Cmd("SET str x") == Ok());
  CHECK(h.Cmd("XADD str 1-1 a 1") ==
        "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
}

TEST_CASE("XRANGE/XREVRANGE bounds, exclusive bounds and COUNT") {
  Harness h;
  for (const char* id : {"1-1", "1-2", "2-0", "3-5"}) {
    CHECK(h.Run({"XADD", "s", id, "f", id}) == Bulk(id));
  }
  CHECK(h.Cmd("XRANGE s (1-1 2") == Arr({Entry("1-2", {"f", "1-2"}), Entry("2-0", {"f", "2-0"})}));
  CHECK(h.Cmd("XREVRANGE s + - COUNT 1") == Arr({Entry("3-5", {"f", "3-5"})}));
  CHECK(h.Cmd("XRANGE s - + COUNT 0") == NilArray());
  CHECK(h.Cmd("XRANGE nokey - + COUNT 0") == Arr({}));
  CHECK(h.Cmd("XRANGE s - (0-0") == Err("ERR invalid end ID for the interval"));
  CHECK(h.Cmd("XRANGE s - + LIMIT 1") == Err("ERR syntax error"));
}

TEST_CASE("XDEL, XTRIM exact and approximate, XSETID") {
  Harness h;
  for (int i = 1; i <= 250; ++i) {
    CHECK(h.Run({"XADD", "s", std::to_string(i) + "-0", "f", "v"}) ==
          Bulk(std::to_string(i) + "-0"));
  }
  CHECK(h.Cmd("XDEL s 1-0 2-0 1000-0") == Int(2));
  // Nodes hold 100 entries: "~" removes only the first node (98 live entries after XDEL).
  CHECK(h.Cmd("XTRIM s MAXLEN ~ 120") == Int(98));
  CHECK(h.Cmd("XLEN s") == Int(150));
  CHECK(h.Cmd("XTRIM s MAXLEN 120") == Int(30));
  CHECK(h.Cmd("XRANGE s - + COUNT 1") == Arr({Entry("131-0", {"f", "v"})}));
  CHECK(h.Cmd("XTRIM s MINID 200") == Int(69));
  CHECK(h.Cmd("XTRIM s MAXLEN 1 LIMIT 2") ==
        Err("ERR syntax error, LIMIT cannot be used without the special ~ option"));
  CHECK(h.Cmd("XSETID s 10-0") ==
        Err("ERR The ID specified in XSETID is smaller than the target stream top item"));
  CHECK(h.Cmd("XSETID s 300-0 ENTRIESADDED 500 MAXDELETEDID 299-0") == Ok());
  CHECK(h.Cmd("XADD s 300-* f v") == Bulk("300-1"));
  CHECK(h.Cmd("XTRIM s MAXLEN 0") == Int(52));
  CHECK(h.Cmd("XLEN s") == Int(0));
  CHECK(h.Cmd("EXISTS s") == Int(1));  // an empty stream stays
}

TEST_CASE("XREAD: COUNT, $, several streams, RESP3 map; no blocking where a client cannot") {
  Harness h;
  CHECK(h.Cmd("XADD a 1-0 f 1") == Bulk("1-0"));
  CHECK(h.Cmd("XADD b 2-0 g 2") == Bulk("2-0"));
  CHECK(h.Cmd("XREAD COUNT 1 STREAMS a b 0 1") ==
        Arr({Arr({Bulk("a"), Arr({Entry("1-0", {"f", "1"})})}),
             Arr({Bulk("b"), Arr({Entry("2-0", {"g", "2"})})})}));
  CHECK(h.Cmd("XREAD STREAMS a $") == NilArray());
  CHECK(h.Cmd("XREAD BLOCK 0 STREAMS a $") == NilArray());  // the harness cannot park
  h.Resp3();
  CHECK(h.Cmd("XREAD STREAMS a 0") == Map({Bulk("a"), Arr({Entry("1-0", {"f", "1"})})}));
}

TEST_CASE("A stream survives RENAME, COPY and keeps its metadata") {
  Harness h;
  CHECK(h.Cmd("XADD s 1-0 f 1") == Bulk("1-0"));
  CHECK(h.Cmd("XADD s 2-0 f 2") == Bulk("2-0"));
  CHECK(h.Cmd("XDEL s 2-0") == Int(1));
  CHECK(h.Cmd("RENAME s t") == Ok());
  CHECK(h.Cmd("COPY t u") == Int(1));
  CHECK(h.Cmd("XADD u 2-* f 3") == Bulk("2-1"));
  CHECK(h.Cmd("XRANGE t - +") == Arr({Entry("1-0", {"f", "1"})}));
  CHECK(h.Cmd("DEL t u") == Int(2));
  CHECK(h.Cmd("XLEN t") == Int(0));
}

TEST_CASE("Consumer groups: read, pending with idle times on the test clock, ack, claim") {
  Harness h;
  CHECK(h.Cmd("XADD s 1-0 f 1") == Bulk("1-0"));
  CHECK(h.Cmd("XADD s 2-0 f 2") == Bulk("2-0"));
  CHECK(h.Cmd("XGROUP CREATE s g 0") == Ok());
  CHECK(h.Cmd("XGROUP CREATE s g 0") == "-BUSYGROUP Consumer Group name already exists\r\n");
  CHECK(h.Cmd("XREADGROUP GROUP g alice COUNT 1 STREAMS s >") ==
        Arr({Arr({Bulk("s"), Arr({Entry("1-0", {"f", "1"})})})}));
  h.AdvanceMs(100);
  CHECK(h.Cmd("XREADGROUP GROUP g bob STREAMS s >") ==
        Arr({Arr({Bulk("s"), Arr({Entry("2-0", {"f", "2"})})})}));
  CHECK(h.Cmd("XREADGROUP GROUP g bob STREAMS s >") == NilArray());
  h.AdvanceMs(50);
  CHECK(h.Cmd("XPENDING s g") ==
        Arr({Int(2), Bulk("1-0"), Bulk("2-0"),
             Arr({Arr({Bulk("alice"), Bulk("1")}), Arr({Bulk("bob"), Bulk("1")})})}));
  CHECK(h.Cmd("XPENDING s g IDLE 100 - + 10") ==
        Arr({Arr({Bulk("1-0"), Bulk("alice"), Int(150), Int(1)})}));
  CHECK(h.Cmd("XCLAIM s g bob 120 1-0 JUSTID") == Arr({Bulk("1-0")}));
  CHECK(h.Cmd("XPENDING s g - + 10 bob") ==
        Arr({Arr({Bulk("1-0"), Bulk("bob"), Int(0), Int(1)}),
             Arr({Bulk("2-0"), Bulk("bob"), Int(50), Int(1)})}));
  CHECK(h.Cmd("XDEL s 2-0") == Int(1));
  CHECK(h.Cmd("XREADGROUP GROUP g bob STREAMS s 0") ==
        Arr({Arr({Bulk("s"), Arr({Entry("1-0", {"f", "1"}), Arr({Bulk("2-0"), NilArray()})})})}));
  CHECK(h.Cmd("XAUTOCLAIM s g carol 0 0") ==
        Arr({Bulk("0-0"), Arr({Entry("1-0", {"f", "1"})}), Arr({Bulk("2-0")})}));
  CHECK(h.Cmd("XACK s g 1-0 1-0") == Int(1));
  CHECK(h.Cmd("XPENDING s g") == Arr({Int(0), Nil(), Nil(), NilArray()}));
  CHECK(h.Cmd("XINFO GROUPS s") ==
        Arr({Arr({Bulk("name"), Bulk("g"), Bulk("consumers"), Int(3), Bulk("pending"), Int(0),
                  Bulk("last-delivered-id"), Bulk("2-0"), Bulk("entries-read"), Int(2), Bulk("lag"),
                  Int(0)})}));
  CHECK(h.Cmd("XGROUP DELCONSUMER s g alice") == Int(0));
  CHECK(h.Cmd("XREADGROUP GROUP nog c STREAMS s >") ==
        "-NOGROUP No such key 's' or consumer group 'nog' in XREADGROUP with GROUP option\r\n");
  // One stream read with ">" skips the probe: the read itself answers as the probe would.
  CHECK(h.Cmd("XREADGROUP GROUP g c STREAMS nokey >") ==
        "-NOGROUP No such key 'nokey' or consumer group 'g' in XREADGROUP with GROUP option\r\n");
  CHECK(h.Cmd("SET str v") == "+OK\r\n");
  CHECK(h.Cmd("XREADGROUP GROUP g c STREAMS str >") ==
        "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
  // Two streams: every key is checked before any is read (Redis's order).
  CHECK(h.Cmd("XREADGROUP GROUP g c STREAMS s nokey > >") ==
        "-NOGROUP No such key 'nokey' or consumer group 'g' in XREADGROUP with GROUP option\r\n");
  CHECK(h.Cmd("XPENDING s g") == Arr({Int(0), Nil(), Nil(), NilArray()}));
  CHECK(h.Cmd("XGROUP DESTROY s g") == Int(1));
  CHECK(h.Cmd("XINFO GROUPS s") == Arr({}));
}

}  // namespace sluice::server::testing
