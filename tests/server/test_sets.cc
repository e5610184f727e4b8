// Set commands through the real dispatcher and Store. Expected replies are redis-server
// 7.0.15's (checked by hand; tests/blackbox/test_collections.py compares side by side). Intsets
// reply in numeric order, as Redis's do, so small integer sets have exact replies here.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/server/harness.h"

namespace sluice::server::testing {

namespace {
std::string Set3(std::vector<std::string> items) {  // RESP3 set reply
  std::string out = "~" + std::to_string(items.size()) + "\r\n";
  for (auto& i : items) out += i;
  return out;
}
}  // namespace

TEST_CASE("SADD/SREM/SISMEMBER/SMISMEMBER/SMEMBERS/SCARD") {
  Harness h;
  CHECK(h.Cmd("SADD s 3 1 2 1") == Int(3));
  CHECK(h.Cmd("SADD s 2 10") == Int(1));
  CHECK(h.Cmd("SMEMBERS s") == Arr({Bulk("1"), Bulk("2"), Bulk("3"), Bulk("10")}));
  CHECK(h.Cmd("SCARD s") == Int(4));
  CHECK(h.Cmd("SCARD nokey") == Int(0));
  CHECK(h.Cmd("SISMEMBER s 10") == Int(1));
  CHECK(h.Cmd("SISMEMBER s 11") == Int(0));
  CHECK(h.Cmd("SISMEMBER nokey 1") == Int(0));
  CHECK(h.Cmd("SMISMEMBER s 1 x 3") == Arr({Int(1), Int(0), Int(1)}));
  CHECK(h.Cmd("SMISMEMBER nokey 1") == Arr({Int(0)}));
  CHECK(h.Cmd("OBJECT ENCODING s") == Bulk("intset"));
  CHECK(h.Cmd("SREM s 1 99 1") == Int(1));
  CHECK(h.Cmd("SREM nokey 1") == Int(0));
  CHECK(h.Cmd("SMEMBERS nokey") == Arr({}));
  CHECK(h.Cmd("SADD s a") == Int(1));
  CHECK(h.Cmd("OBJECT ENCODING s") == Bulk("hashtable"));
  CHECK(h.Cmd("SREM s 2 3 10 a") == Int(4));
  CHECK(h.Cmd("EXISTS s") == Int(0));
  CHECK(h.Cmd("SADD s 5") == Int(1));
  CHECK(h.Cmd("OBJECT ENCODING s") == Bulk("intset"));  // a new set
  h.Resp3();
  CHECK(h.Cmd("SMEMBERS s") == Set3({Bulk("5")}));
  CHECK(h.Cmd("SMEMBERS nokey") == Set3({}));
}

TEST_CASE("SPOP and SRANDMEMBER shapes, counts and ranges") {
  Harness h;
  CHECK(h.Cmd("SPOP nokey") == Nil());
  CHECK(h.Cmd("SPOP nokey 2") == Arr({}));
  CHECK(h.Cmd("SRANDMEMBER nokey") == Nil());
  CHECK(h.Cmd("SRANDMEMBER nokey 2") == Arr({}));
  CHECK(h.Cmd("SADD s 7") == Int(1));
  CHECK(h.Cmd("SRANDMEMBER s") == Bulk("7"));
  CHECK(h.Cmd("SRANDMEMBER s -3") == Arr({Bulk("7"), Bulk("7"), Bulk("7")}));
  CHECK(h.Cmd("SRANDMEMBER s 5") == Arr({Bulk("7")}));
  CHECK(h.Cmd("SRANDMEMBER s 0") == Arr({}));
  CHECK(h.Cmd("SRANDMEMBER s x") == NotIntegerErr());
  CHECK(h.Cmd("SRANDMEMBER s 1 2") == SyntaxErr());
  CHECK(h.Cmd("SRANDMEMBER s -9223372036854775808") ==
        Err("ERR value is out of range, value must between -9223372036854775807 and "
            "9223372036854775807"));
  CHECK(h.Cmd("SRANDMEMBER s -9223372036854775807") ==
        Err("ERR a negative count below -10000000 is not supported by Sluice"));
  CHECK(h.Cmd("SPOP s -1") == Err("ERR value is out of range, must be positive"));
  // Redis reads SPOP's count as a positive long: a non-integer has the negative's error.
  CHECK(h.Cmd("SPOP s x") == Err("ERR value is out of range, must be positive"));
  CHECK(h.Cmd("SPOP s 1.5") == Err("ERR value is out of range, must be positive"));
  CHECK(h.Cmd("SPOP s 1 2") == SyntaxErr());
  CHECK(h.Cmd("SPOP s 0") == Arr({}));
  CHECK(h.Cmd("SPOP s") == Bulk("7"));
  CHECK(h.Cmd("EXISTS s") == Int(0));
  CHECK(h.Cmd("SADD s 1 2 3") == Int(3));
  CHECK(h.Cmd("SPOP s 10") == Arr({Bulk("1"), Bulk("2"), Bulk("3")}));
  CHECK(h.Cmd("EXISTS s") == Int(0));
  CHECK(h.Cmd("SADD s 1 2 3") == Int(3));
  CHECK(h.Cmd("SPOP s 2").rfind("*2\r\n", 0) == 0);
  CHECK(h.Cmd("SCARD s") == Int(1));
}

TEST_CASE("SMOVE") {
  Harness h;
  CHECK(h.Cmd("SADD a 1 2") == Int(2));
  CHECK(h.Cmd("SMOVE a b 1") == Int(1));
  CHECK(h.Cmd("SMOVE a b 9") == Int(0));
  CHECK(h.Cmd("SMOVE a a 2") == Int(1));
  CHECK(h.Cmd("SMOVE a b 2") == Int(1));
  CHECK(h.Cmd("EXISTS a") == Int(0));
  CHECK(h.Cmd("SMEMBERS b") == Arr({Bulk("1"), Bulk("2")}));
  CHECK(h.Cmd("SET str x") == Ok());
  CHECK(h.Cmd("SMOVE b str 1") == WrongTypeErr());
  CHECK(h.Cmd("SMOVE str b 1") == WrongTypeErr());
  CHECK(h.Cmd("SMOVE nokey str 1") == Int(0));  // a missing source wins
  CHECK(h.Cmd("SMOVE nokey b 1") == Int(0));
}

TEST_CASE("SINTER/SUNION/SDIFF, their STORE forms and SINTERCARD") {
  Harness h;
  CHECK(h.Cmd("SADD a 1 2 3 4") == Int(4));
  CHECK(h.Cmd("SADD b 3 4 5") == Int(3));
  CHECK(h.Cmd("SINTER a b") == Arr({Bulk("3"), Bulk("4")}));
  CHECK(h.Cmd("SINTER a nokey") == Arr({}));
  CHECK(h.Cmd("SUNION a nokey b") == Arr({Bulk("1"), Bulk("2"), Bulk("3"), Bulk("4"), Bulk("5")}));
  CHECK(h.Cmd("SDIFF a b") == Arr({Bulk("1"), Bulk("2")}));
  CHECK(h.Cmd("SDIFF nokey a") == Arr({}));
  CHECK(h.Cmd("SINTERSTORE d a b") == Int(2));
  CHECK(h.Cmd("SMEMBERS d") == Arr({Bulk("3"), Bulk("4")}));
  CHECK(h.Cmd("SET str x") == Ok());
  CHECK(h.Cmd("SUNIONSTORE str a") == Int(4));  // any type is replaced
  CHECK(h.Cmd("TYPE str") == Simple("set"));
  CHECK(h.Cmd("SDIFFSTORE d a a") == Int(0));  // empty result: the destination is deleted
  CHECK(h.Cmd("EXISTS d") == Int(0));
  CHECK(h.Cmd("SINTERCARD 2 a b") == Int(2));
  CHECK(h.Cmd("SINTERCARD 2 a b LIMIT 1") == Int(1));
  CHECK(h.Cmd("SINTERCARD 1 a LIMIT 0") == Int(4));
  CHECK(h.Cmd("SINTERCARD 0 a") == Err("ERR numkeys should be greater than 0"));
  CHECK(h.Cmd("SINTERCARD x a") == Err("ERR numkeys should be greater than 0"));
  CHECK(h.Cmd("SINTERCARD 3 a b") ==
        Err("ERR Number of keys can't be greater than number of args"));
  CHECK(h.Cmd("SINTERCARD 1 a LIMIT -1") == Err("ERR LIMIT can't be negative"));
  CHECK(h.Cmd("SINTERCARD 1 a LIMIT") == SyntaxErr());
  CHECK(h.Cmd("SINTERCARD 1 a FOO 1") == SyntaxErr());
  CHECK(h.Cmd("SET s2 x") == Ok());
  // Every key's type is checked, even after a missing key (Redis 7.0).
  CHECK(h.Cmd("SINTER nokey s2") == WrongTypeErr());
  CHECK(h.Cmd("SINTERCARD 2 nokey s2") == WrongTypeErr());
  CHECK(h.Cmd("SINTER a s2") == WrongTypeErr());
  CHECK(h.Cmd("SUNION nokey s2") == WrongTypeErr());
  CHECK(h.Cmd("SDIFF a s2") == WrongTypeErr());
}

TEST_CASE("SSCAN and set errors") {
  Harness h;
  CHECK(h.Cmd("SSCAN nokey 0") == Arr({Bulk("0"), Arr({})}));
  CHECK(h.Cmd("SADD s 20 3 100") == Int(3));
  CHECK(h.Cmd("SSCAN s 0") == Arr({Bulk("0"), Arr({Bulk("3"), Bulk("20"), Bulk("100")})}));
  CHECK(h.Cmd("SSCAN s 0 MATCH 1*") == Arr({Bulk("0"), Arr({Bulk("100")})}));
  CHECK(h.Cmd("SSCAN s 0 COUNT 0") == SyntaxErr());
  CHECK(h.Cmd("SSCAN s abc") == Err("ERR invalid cursor"));
  CHECK(h.Cmd("SET str x") == Ok());
  for (const char* cmd :
       {"SADD str a", "SREM str a", "SISMEMBER str a", "SMEMBERS str", "SCARD str", "SPOP str",
        "SRANDMEMBER str", "SSCAN str 0", "SMISMEMBER str a"}) {
    CAPTURE(cmd);
    CHECK(h.Cmd(cmd) == WrongTypeErr());
  }
  CHECK(h.Cmd("GET s") == WrongTypeErr());
  CHECK(h.Cmd("SADD s") == ArityErr("sadd"));
  CHECK(h.Cmd("SINTERCARD 1") == ArityErr("sintercard"));
}

TEST_CASE("limiter commands on collections, and collection commands on limiter state") {
  Harness h;
  CHECK(h.Cmd("SADD s a") == Int(1));
  CHECK(h.Cmd("HSET h f v") == Int(1));
  for (const char* cmd :
       {"GCRA.TAKE s 10 1s", "WINDOW.TAKE h 10 1s", "CL.THROTTLE s 1 1 1", "LEAKY.TAKE h 10 1s",
        "SLIDING.TAKE s 10 1s", "CONC.ACQUIRE h 10 1s", "CONC.RELEASE s t"}) {
    CAPTURE(cmd);
    CHECK(h.Cmd(cmd) == WrongTypeErr());
  }
  CHECK(h.Cmd("SLIDING.TAKE lim 10 1s").rfind("*", 0) == 0);
  CHECK(h.Cmd("SADD lim x") == WrongTypeErr());
  CHECK(h.Cmd("HGET lim f") == WrongTypeErr());
  CHECK(h.Cmd("TYPE s") == Simple("set"));
  CHECK(h.Cmd("SCARD s") == Int(1));  // unchanged
}

}  // namespace sluice::server::testing
