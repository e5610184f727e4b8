// Sorted set commands through the real dispatcher and Store. Expected replies are redis-server
// 7.0.15's (checked by hand; tests/blackbox/test_collections.py compares side by side).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/server/harness.h"

namespace sluice::server::testing {

TEST_CASE("ZADD flags, ZSCORE, ZINCRBY, ZCARD") {
  Harness h;
  CHECK(h.Cmd("ZADD z 1 a 2 b 3 c -1.5 d inf e") == Int(5));
  CHECK(h.Cmd("ZADD z nx xx 1 a") ==
        Err("ERR XX and NX options at the same time are not compatible"));
  CHECK(h.Cmd("ZADD z gt lt 1 a") ==
        Err("ERR GT, LT, and/or NX options at the same time are not compatible"));
  CHECK(h.Cmd("ZADD z nx gt 1 a") ==
        Err("ERR GT, LT, and/or NX options at the same time are not compatible"));
  CHECK(h.Cmd("ZADD z incr 1 a 2 b") ==
        Err("ERR INCR option supports a single increment-element pair"));
  CHECK(h.Cmd("ZADD z 1") == ArityErr("zadd"));
  CHECK(h.Cmd("ZADD z 1 a 2") == SyntaxErr());
  CHECK(h.Cmd("ZADD z x a") == NotFloatErr());
  CHECK(h.Cmd("ZADD z nan a") == NotFloatErr());
  CHECK(h.Cmd("ZADD z ch gt 5 a 0 b 7 f") == Int(2));
  CHECK(h.Cmd("ZADD z incr 2.5 a") == Bulk("7.5"));
  CHECK(h.Cmd("ZADD z xx incr 1 nope") == Nil());
  CHECK(h.Cmd("ZADD z nx 9 a") == Int(0));
  CHECK(h.Cmd("ZADD nokey xx 1 a") == Int(0));
  CHECK(h.Cmd("EXISTS nokey") == Int(0));
  CHECK(h.Cmd("ZSCORE z a") == Bulk("7.5"));
  CHECK(h.Cmd("ZSCORE z nope") == Nil());
  CHECK(h.Cmd("ZSCORE nokey a") == Nil());
  CHECK(h.Cmd("ZINCRBY z 1e3 b") == Bulk("1002"));
  CHECK(h.Cmd("ZINCRBY z x b") == NotFloatErr());
  CHECK(h.Cmd("ZADD z incr -inf e") == Err("ERR resulting score is not a number (NaN)"));
  CHECK(h.Cmd("ZCARD z") == Int(6));
  CHECK(h.Cmd("ZCARD nokey") == Int(0));
  CHECK(h.Cmd("TYPE z") == Simple("zset"));
  CHECK(h.Cmd("OBJECT ENCODING z") == Bulk("listpack"));
  h.Resp3();
  CHECK(h.Cmd("ZSCORE z a") == ",7.5\r\n");
  CHECK(h.Cmd("ZSCORE z nope") == Null());
}

TEST_CASE("ZRANGE family, ZCOUNT, ZREMRANGEBY*, ZREM") {
  Harness h;
  CHECK(h.Cmd("ZADD z -1.5 d 3 c 7 f 7.5 a 1002 b inf e") == Int(6));
  CHECK(h.Cmd("ZCOUNT z -inf +inf") == Int(6));
  CHECK(h.Cmd("ZCOUNT z (3 7") == Int(1));
  CHECK(h.Cmd("ZCOUNT z x 3") == Err("ERR min or max is not a float"));
  CHECK(h.Cmd("ZRANGE z 0 1 WITHSCORES") == Arr({Bulk("d"), Bulk("-1.5"), Bulk("c"), Bulk("3")}));
  CHECK(h.Cmd("ZRANGE z 0 1 REV") == Arr({Bulk("e"), Bulk("b")}));
  CHECK(h.Cmd("ZRANGE z (3 +inf BYSCORE LIMIT 1 2 WITHSCORES") ==
        Arr({Bulk("a"), Bulk("7.5"), Bulk("b"), Bulk("1002")}));
  CHECK(h.Cmd("ZRANGE z 7.5 (3 BYSCORE REV") == Arr({Bulk("a"), Bulk("f")}));
  CHECK(h.Cmd("ZRANGE z 0 -1 LIMIT 0 1") ==
        Err("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or "
            "BYLEX"));
  CHECK(h.Cmd("ZRANGE z 0 1 LIMIT 0 -1") == Arr({Bulk("d"), Bulk("c")}));
  CHECK(h.Cmd("ZRANGE z 0 -1 BYSCORE BYSCORE") == SyntaxErr());
  CHECK(h.Cmd("ZRANGE z x 1") == NotIntegerErr());
  CHECK(h.Cmd("ZREVRANGE z 0 0 WITHSCORES") == Arr({Bulk("e"), Bulk("inf")}));
  CHECK(h.Cmd("ZRANGEBYSCORE z -inf inf LIMIT -1 2") == Arr({}));
  CHECK(h.Cmd("ZRANGEBYSCORE z 0 10 REV") == SyntaxErr());
  CHECK(h.Cmd("ZREVRANGEBYSCORE z 10 3") == Arr({Bulk("a"), Bulk("f"), Bulk("c")}));
  CHECK(h.Cmd("ZRANGEBYSCORE nokey 0 1") == Arr({}));
  CHECK(h.Cmd("ZREMRANGEBYSCORE z (3 7") == Int(1));
  CHECK(h.Cmd("ZREMRANGEBYRANK z 0 0") == Int(1));
  CHECK(h.Cmd("ZREM z a b nope") == Int(2));
  CHECK(h.Cmd("ZRANGE z 0 -1") == Arr({Bulk("c"), Bulk("e")}));
  CHECK(h.Cmd("ZREMRANGEBYRANK z 0 -1") == Int(2));
  CHECK(h.Cmd("EXISTS z") == Int(0));
  h.Resp3();
  CHECK(h.Cmd("ZADD z 0.1 x 2 y") == Int(2));
  CHECK(h.Cmd("ZRANGE z 0 -1 WITHSCORES") ==
        Arr({Arr({Bulk("x"), ",0.10000000000000001\r\n"}), Arr({Bulk("y"), ",2\r\n"})}));
}

TEST_CASE("sorted set commands on another kind are WRONGTYPE") {
  Harness h;
  CHECK(h.Cmd("SET s v") == Ok());
  for (const char* cmd :
       {"ZADD s 1 a", "ZINCRBY s 1 a", "ZREM s a", "ZCARD s", "ZSCORE s a", "ZCOUNT s 0 1",
        "ZRANGE s 0 1", "ZRANGEBYSCORE s 0 1", "ZREMRANGEBYRANK s 0 1", "ZREMRANGEBYSCORE s 0 1"}) {
    CAPTURE(cmd);
    CHECK(h.Cmd(cmd) == WrongTypeErr());
  }
  CHECK(h.Cmd("ZRANGE s x 1") == NotIntegerErr());  // arguments are parsed first
  CHECK(h.Cmd("GET s") == Bulk("v"));
}

}  // namespace sluice::server::testing

namespace sluice::server::testing {

// Redis parses score bounds with strtod over the C string: "" is 0 and "(" is exclusive 0.
TEST_CASE("score bounds: an empty string and a bare ( are 0") {
  Harness h;
  CHECK(h.Cmd("ZADD z -1 a 0 b 1 c") == Int(3));
  CHECK(h.Run({"ZRANGEBYSCORE", "z", "", "+inf"}) == Arr({Bulk("b"), Bulk("c")}));
  CHECK(h.Run({"ZRANGEBYSCORE", "z", "(", "+inf"}) == Arr({Bulk("c")}));
  CHECK(h.Run({"ZREVRANGEBYSCORE", "z", "(", "-inf"}) == Arr({Bulk("a")}));
  CHECK(h.Run({"ZRANGE", "z", "-inf", "", "BYSCORE"}) == Arr({Bulk("a"), Bulk("b")}));
  CHECK(h.Run({"ZCOUNT", "z", "", ""}) == Int(1));
  CHECK(h.Run({"ZRANGESTORE", "d", "z", "(", "+inf", "BYSCORE"}) == Int(1));
  CHECK(h.Run({"ZCOUNT", "z", "((", "1"}) == Err("ERR min or max is not a float"));
}

// -0 orders as 0 (then by member) in small and big sorted sets alike; a big one keeps the sign.
TEST_CASE("a -0 score orders as 0 in small and big sorted sets") {
  Harness h;
  CHECK(h.Cmd("ZADD s 0 b -0 a 0 c") == Int(3));
  CHECK(h.Cmd("ZRANGE s 0 -1") == Arr({Bulk("a"), Bulk("b"), Bulk("c")}));
  std::vector<std::string> add = {"ZADD", "big"};
  for (int i = 0; i < 140; ++i) {
    add.push_back(std::to_string(i + 1));
    add.push_back("m" + std::to_string(i));
  }
  CHECK(h.Run(add) == Int(140));
  CHECK(h.Cmd("ZADD big 0 b -0 a -0 c") == Int(3));
  CHECK(h.Cmd("ZRANGEBYSCORE big -1 0 WITHSCORES") ==
        Arr({Bulk("a"), Bulk("-0"), Bulk("b"), Bulk("0"), Bulk("c"), Bulk("-0")}));
  CHECK(h.Cmd("ZRANK big c") == Int(2));
  CHECK(h.Cmd("ZSCORE big c") == Bulk("-0"));
  CHECK(h.Cmd("ZADD big 0 c") == Int(0));  // 0 == -0: no change, the score stays -0
  CHECK(h.Cmd("ZREM big a") == Int(1));
  CHECK(h.Cmd("ZRANGE big 0 1 WITHSCORES") == Arr({Bulk("b"), Bulk("0"), Bulk("c"), Bulk("-0")}));
  CHECK(h.Cmd("ZCARD big") == Int(142));
}

}  // namespace sluice::server::testing
