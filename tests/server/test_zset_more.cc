// The sorted set commands beyond ZADD and score/rank ranges, through the real dispatcher and
// Store: lex ranges, ranks, ZMSCORE, pops, ZMPOP, ZRANDMEMBER, ZSCAN, ZRANGESTORE, the algebra.
// Expected replies are redis-server 7.0.15's (checked by hand; tests/blackbox/test_collections.py
// compares side by side).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/server/harness.h"

namespace sluice::server::testing {

namespace {
std::string LexErr() { return Err("ERR min or max not valid string range item"); }
}  // namespace

TEST_CASE("ZLEXCOUNT, ZRANGE BYLEX, ZRANGEBYLEX, ZREVRANGEBYLEX, ZREMRANGEBYLEX") {
  Harness h;
  CHECK(h.Cmd("ZADD s 0 a 0 b 0 c 0 d") == Int(4));
  CHECK(h.Cmd("ZLEXCOUNT s - +") == Int(4));
  CHECK(h.Cmd("ZLEXCOUNT s [b (d") == Int(2));
  CHECK(h.Cmd("ZLEXCOUNT s b d") == LexErr());
  CHECK(h.Cmd("ZLEXCOUNT s - x") == LexErr());
  CHECK(h.Cmd("ZLEXCOUNT s -- +") == LexErr());
  CHECK(h.Cmd("ZLEXCOUNT nokey - +") == Int(0));
  CHECK(h.Cmd("ZRANGEBYLEX s - + LIMIT 1 2") == Arr({Bulk("b"), Bulk("c")}));
  CHECK(h.Cmd("ZRANGEBYLEX s - + LIMIT -1 2") == Arr({}));
  CHECK(h.Cmd("ZRANGEBYLEX s - + LIMIT 0") == SyntaxErr());
  CHECK(h.Cmd("ZRANGEBYLEX s + -") == Arr({}));
  CHECK(h.Cmd("ZRANGEBYLEX s - -") == Arr({}));
  CHECK(h.Cmd("ZRANGEBYLEX s [b [b") == Arr({Bulk("b")}));
  CHECK(h.Cmd("ZRANGEBYLEX s (b [b") == Arr({}));
  CHECK(h.Cmd("ZRANGEBYLEX s [a [c WITHSCORES") ==
        Err("ERR syntax error, WITHSCORES not supported in combination with BYLEX"));
  CHECK(h.Cmd("ZRANGE s [c [a BYLEX REV") == Arr({Bulk("c"), Bulk("b"), Bulk("a")}));
  CHECK(h.Cmd("ZRANGE s [a [c BYLEX REV") == Arr({}));
  CHECK(h.Cmd("ZRANGE s [a [c BYLEX LIMIT 0 1") == Arr({Bulk("a")}));
  CHECK(h.Cmd("ZRANGE s 0 -1 BYLEX") == LexErr());
  CHECK(h.Cmd("ZRANGE s (a [c BYSCORE BYLEX") == SyntaxErr());
  CHECK(h.Cmd("ZREVRANGEBYLEX s + - LIMIT 1 2") == Arr({Bulk("c"), Bulk("b")}));
  CHECK(h.Cmd("ZREMRANGEBYLEX s a c") == LexErr());
  CHECK(h.Cmd("ZREMRANGEBYLEX s [a (c") == Int(2));
  CHECK(h.Cmd("ZRANGE s 0 -1") == Arr({Bulk("c"), Bulk("d")}));
  CHECK(h.Cmd("SET str v") == Ok());
  CHECK(h.Cmd("ZLEXCOUNT str - +") == WrongTypeErr());
  CHECK(h.Cmd("ZLEXCOUNT str x +") == LexErr());  // the range is parsed first
}

TEST_CASE("ZRANK, ZREVRANK, ZMSCORE") {
  Harness h;
  CHECK(h.Cmd("ZADD z 1 a 2 b 3 c") == Int(3));
  CHECK(h.Cmd("ZRANK z c") == Int(2));
  CHECK(h.Cmd("ZREVRANK z c") == Int(0));
  CHECK(h.Cmd("ZRANK z q") == Nil());
  CHECK(h.Cmd("ZRANK nokey a") == Nil());
  CHECK(h.Cmd("ZRANK z a withscore") == ArityErr("zrank"));
  CHECK(h.Cmd("ZMSCORE z a q") == Arr({Bulk("1"), Nil()}));
  CHECK(h.Cmd("ZMSCORE nokey a") == Arr({Nil()}));
  CHECK(h.Cmd("ZMSCORE z") == ArityErr("zmscore"));
  // A small set stores -0 as 0 (Redis's listpack); a weighted union still computes -0.
  CHECK(h.Cmd("ZADD zz 0 a -0.0 b") == Int(2));
  CHECK(h.Cmd("ZRANGE zz 0 -1 WITHSCORES") == Arr({Bulk("a"), Bulk("0"), Bulk("b"), Bulk("0")}));
  CHECK(h.Cmd("ZUNION 1 zz WEIGHTS -1 WITHSCORES") ==
        Arr({Bulk("a"), Bulk("-0"), Bulk("b"), Bulk("-0")}));
  h.Resp3();
  CHECK(h.Cmd("ZRANK z q") == Null());
  CHECK(h.Cmd("ZMSCORE z b q") == Arr({Double(2), Null()}));
}

TEST_CASE("ZPOPMIN, ZPOPMAX, ZMPOP in RESP2 and RESP3") {
  Harness h;
  CHECK(h.Cmd("ZADD z 1 a 2 b 3 c 4 d 5 e 6 f") == Int(6));
  CHECK(h.Cmd("ZPOPMIN z") == Arr({Bulk("a"), Bulk("1")}));
  CHECK(h.Cmd("ZPOPMAX z 2") == Arr({Bulk("f"), Bulk("6"), Bulk("e"), Bulk("5")}));
  CHECK(h.Cmd("ZPOPMIN z -1") == Err("ERR value is out of range, must be positive"));
  CHECK(h.Cmd("ZPOPMIN z x") == Err("ERR value is out of range, must be positive"));
  CHECK(h.Cmd("ZPOPMIN z 0") == Arr({}));
  CHECK(h.Cmd("ZPOPMIN z 1 2") == SyntaxErr());
  CHECK(h.Cmd("ZPOPMIN nokey") == Arr({}));
  CHECK(h.Cmd("ZMPOP 0 z MIN") == Err("ERR numkeys should be greater than 0"));
  CHECK(h.Cmd("ZMPOP x z MIN") == Err("ERR numkeys should be greater than 0"));
  CHECK(h.Cmd("ZMPOP 1 z") == ArityErr("zmpop"));
  CHECK(h.Cmd("ZMPOP 2 z MIN") == SyntaxErr());
  CHECK(h.Cmd("ZMPOP 1 z foo") == SyntaxErr());
  CHECK(h.Cmd("ZMPOP 1 z MIN COUNT 0") == Err("ERR count should be greater than 0"));
  CHECK(h.Cmd("ZMPOP 1 z MIN COUNT 1 COUNT 2") == SyntaxErr());
  CHECK(h.Cmd("ZMPOP 1 nokey MIN") == NilArray());
  CHECK(h.Cmd("ZMPOP 2 nokey z MIN COUNT 2") ==
        Arr({Bulk("z"), Arr({Arr({Bulk("b"), Bulk("2")}), Arr({Bulk("c"), Bulk("3")})})}));
  CHECK(h.Cmd("SET str v") == Ok());
  CHECK(h.Cmd("ZMPOP 2 str z MIN") == WrongTypeErr());
  CHECK(h.Cmd("ZPOPMAX str") == WrongTypeErr());
  h.Resp3();
  CHECK(h.Cmd("ZPOPMIN z") == Arr({Bulk("d"), Double(4)}));
  CHECK(h.Cmd("ZADD z 7 g 5 e") == Int(2));
  CHECK(h.Cmd("ZPOPMAX z 1") == Arr({Arr({Bulk("g"), Double(7)})}));
  CHECK(h.Cmd("ZMPOP 1 nokey MAX") == Null());
  CHECK(h.Cmd("ZMPOP 1 z MAX COUNT 5") == Arr({Bulk("z"), Arr({Arr({Bulk("e"), Double(5)})})}));
  CHECK(h.Cmd("EXISTS z") == Int(0));
}

TEST_CASE("ZRANDMEMBER and ZSCAN") {
  Harness h;
  CHECK(h.Cmd("ZADD z 1.5 a 0.1 e 1e20 c inf d") == Int(4));
  CHECK(h.Cmd("ZRANDMEMBER nokey") == Nil());
  CHECK(h.Cmd("ZRANDMEMBER nokey 2 WITHSCORES") == Arr({}));
  CHECK(h.Cmd("ZRANDMEMBER z 0") == Arr({}));
  CHECK(h.Cmd("ZRANDMEMBER z 2 withscore") == SyntaxErr());
  CHECK(h.Cmd("ZRANDMEMBER z x") == NotIntegerErr());
  CHECK(h.Cmd("ZRANDMEMBER z 1 2 3") == SyntaxErr());
  CHECK(h.Cmd("ZRANDMEMBER z -9223372036854775808") ==
        Err("ERR value is out of range, value must between -9223372036854775807 and "
            "9223372036854775807"));
  CHECK(h.Cmd("ZRANDMEMBER z -4611686018427387904 WITHSCORES") == Err("ERR value is out of range"));
  CHECK(h.Cmd("ZRANDMEMBER z 10") == h.Cmd("ZRANDMEMBER z 4"));  // all of them, in set order
  CHECK(h.Cmd("ZRANDMEMBER z -3").rfind("*3\r\n", 0) == 0);
  CHECK(h.Cmd("ZRANDMEMBER z 4 WITHSCORES").rfind("*8\r\n", 0) == 0);
  CHECK(h.Cmd("ZSCAN z 0") ==
        Arr({Bulk("0"), Arr({Bulk("e"), Bulk("0.10000000000000001"), Bulk("a"), Bulk("1.5"),
                             Bulk("c"), Bulk("1e+20"), Bulk("d"), Bulk("inf")})}));
  CHECK(h.Cmd("ZSCAN z 0 MATCH a*") == Arr({Bulk("0"), Arr({Bulk("a"), Bulk("1.5")})}));
  CHECK(h.Cmd("ZSCAN nokey 0") == Arr({Bulk("0"), Arr({})}));
  h.Resp3();
  CHECK(h.Cmd("ZRANDMEMBER z -2 WITHSCORES").rfind("*2\r\n*2\r\n$", 0) == 0);
  CHECK(h.Cmd("ZSCAN z 0 MATCH d") == Arr({Bulk("0"), Arr({Bulk("d"), Bulk("inf")})}));
}

TEST_CASE("ZRANGESTORE") {
  Harness h;
  CHECK(h.Cmd("ZADD z 1 a 2 b 3 c") == Int(3));
  CHECK(h.Cmd("ZRANGESTORE d z 0 1") == Int(2));
  CHECK(h.Cmd("ZRANGE d 0 -1 WITHSCORES") == Arr({Bulk("a"), Bulk("1"), Bulk("b"), Bulk("2")}));
  CHECK(h.Cmd("ZRANGESTORE d z 0 1 WITHSCORES") == SyntaxErr());
  CHECK(h.Cmd("ZRANGESTORE d z 0 1 LIMIT 0 1") ==
        Err("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or "
            "BYLEX"));
  CHECK(h.Cmd("ZRANGESTORE d z (a [c BYLEX") == Int(2));
  CHECK(h.Cmd("ZRANGESTORE d z 5 (1 BYSCORE REV") == Int(2));
  CHECK(h.Cmd("ZRANGE d 0 -1") == Arr({Bulk("b"), Bulk("c")}));
  CHECK(h.Cmd("SET str v") == Ok());
  CHECK(h.Cmd("ZRANGESTORE d str 0 1") == WrongTypeErr());
  CHECK(h.Cmd("ZRANGESTORE str nokey 0 1") == Int(0));
  CHECK(h.Cmd("TYPE str") == Simple("none"));
  CHECK(h.Cmd("ZRANGESTORE d") == ArityErr("zrangestore"));
}

TEST_CASE("ZUNION, ZINTER, ZDIFF, their STORE forms, ZINTERCARD") {
  Harness h;
  CHECK(h.Cmd("ZADD z 1 a 2 b 3 c") == Int(3));
  CHECK(h.Cmd("SADD st a x") == Int(2));
  CHECK(h.Cmd("SET str v") == Ok());
  CHECK(h.Cmd("ZUNION 2 z st WITHSCORES") == Arr({Bulk("x"), Bulk("1"), Bulk("a"), Bulk("2"),
                                                  Bulk("b"), Bulk("2"), Bulk("c"), Bulk("3")}));
  CHECK(h.Cmd("ZUNION 2 z st WEIGHTS 2 3 AGGREGATE max WITHSCORES") ==
        Arr({Bulk("a"), Bulk("3"), Bulk("x"), Bulk("3"), Bulk("b"), Bulk("4"), Bulk("c"),
             Bulk("6")}));
  CHECK(h.Cmd("ZUNION 0 z") == Err("ERR at least 1 input key is needed for 'zunion' command"));
  CHECK(h.Cmd("ZUNIONSTORE d 0 z") ==
        Err("ERR at least 1 input key is needed for 'zunionstore' command"));
  CHECK(h.Cmd("ZUNION x z") == NotIntegerErr());
  CHECK(h.Cmd("ZUNION 3 z st") == SyntaxErr());
  CHECK(h.Cmd("ZUNION 2 z str WITHSCORES foo") == WrongTypeErr());  // types before options
  CHECK(h.Cmd("ZUNION 2 z st WEIGHTS 1 x") == Err("ERR weight value is not a float"));
  CHECK(h.Cmd("ZUNION 1 z WEIGHTS nan") == Err("ERR weight value is not a float"));
  CHECK(h.Cmd("ZUNION 2 z st WEIGHTS 1") == SyntaxErr());
  CHECK(h.Cmd("ZUNION 2 z st AGGREGATE foo") == SyntaxErr());
  CHECK(h.Cmd("ZUNION 2 z st AGGREGATE") == SyntaxErr());
  CHECK(h.Cmd("ZUNIONSTORE d 2 z st WITHSCORES") == SyntaxErr());
  CHECK(h.Cmd("ZDIFF 2 z st WEIGHTS 1 1") == SyntaxErr());
  CHECK(h.Cmd("ZDIFF 2 z st WITHSCORES") == Arr({Bulk("b"), Bulk("2"), Bulk("c"), Bulk("3")}));
  CHECK(h.Cmd("ZINTER 2 z st WITHSCORES") == Arr({Bulk("a"), Bulk("2")}));
  CHECK(h.Cmd("ZINTER 2 z z WEIGHTS 1 -1") == Arr({Bulk("a"), Bulk("b"), Bulk("c")}));
  CHECK(h.Cmd("ZINTERCARD 2 z st") == Int(1));
  CHECK(h.Cmd("ZINTERCARD 1 z LIMIT 2") == Int(2));
  CHECK(h.Cmd("ZINTERCARD 2 z st LIMIT -1") == Err("ERR LIMIT can't be negative"));
  CHECK(h.Cmd("ZINTERCARD 0 z") ==
        Err("ERR at least 1 input key is needed for 'zintercard' command"));
  CHECK(h.Cmd("ZINTERCARD 2 z st WITHSCORES") == SyntaxErr());
  CHECK(h.Cmd("ZINTERSTORE d 2 z st") == Int(1));
  CHECK(h.Cmd("ZRANGE d 0 -1 WITHSCORES") == Arr({Bulk("a"), Bulk("2")}));
  CHECK(h.Cmd("ZDIFFSTORE d 1 nokey") == Int(0));
  CHECK(h.Cmd("EXISTS d") == Int(0));
  CHECK(h.Cmd("ZUNIONSTORE str 1 z") == Int(3));  // the destination is replaced
  CHECK(h.Cmd("TYPE str") == Simple("zset"));
  CHECK(h.Cmd("ZUNION 1 z WEIGHTS inf WITHSCORES") ==
        Arr({Bulk("a"), Bulk("inf"), Bulk("b"), Bulk("inf"), Bulk("c"), Bulk("inf")}));
  h.Resp3();
  CHECK(h.Cmd("ZINTER 2 z st WITHSCORES") == Arr({Arr({Bulk("a"), Double(2)})}));
}

TEST_CASE("COMMAND GETKEYS finds the keys of the numkeys commands") {
  Harness h;
  CHECK(h.Cmd("COMMAND GETKEYS ZUNIONSTORE d 2 a b WEIGHTS 1 2") ==
        Arr({Bulk("d"), Bulk("a"), Bulk("b")}));
  CHECK(h.Cmd("COMMAND GETKEYS ZINTER 2 a b") == Arr({Bulk("a"), Bulk("b")}));
  CHECK(h.Cmd("COMMAND GETKEYS ZMPOP 2 a b MIN") == Arr({Bulk("a"), Bulk("b")}));
  CHECK(h.Cmd("COMMAND GETKEYS ZRANGESTORE d s 0 1") == Arr({Bulk("d"), Bulk("s")}));
}

// A big sorted set's range reads reuse a pooled RocksDB iterator (docs/engine.md, "Reused range
// iterators"), and see each write in between.
TEST_CASE("ZRANGEBYSCORE on a big set: pooled iterators, counted in INFO memory, see new members") {
  Harness h;
  std::vector<std::string> zadd = {"ZADD", "big"};
  for (int i = 0; i < 200; ++i) {  // past the inline limit (128): elements in their family
    zadd.push_back(std::to_string(i));
    zadd.push_back("m" + std::to_string(i));
  }
  CHECK(h.Run(zadd) == Int(200));
  auto reused = [&] {
    const std::string info = h.Run({"INFO", "memory"});
    const std::string name = "\r\nsluice_iterators_reused:";
    const size_t at = info.find(name);
    REQUIRE(at != std::string::npos);
    return std::stoll(info.substr(at + name.size()));
  };
  CHECK(h.Cmd("ZRANGEBYSCORE big 100 102") == Arr({Bulk("m100"), Bulk("m101"), Bulk("m102")}));
  const int64_t before = reused();
  CHECK(h.Cmd("ZADD big 100.5 new") == Int(1));
  CHECK(h.Cmd("ZRANGEBYSCORE big 100 102") ==
        Arr({Bulk("m100"), Bulk("new"), Bulk("m101"), Bulk("m102")}));
  CHECK(h.Cmd("ZREM big m101") == Int(1));
  CHECK(h.Cmd("ZRANGEBYSCORE big (100 102") == Arr({Bulk("new"), Bulk("m102")}));
  CHECK(reused() >= before + 2);
}

}  // namespace sluice::server::testing
