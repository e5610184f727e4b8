// TOUCH, MOVE, SWAPDB, LASTSAVE and SORT through the real dispatcher and Store; the keyspace
// counts checked against a walk (DEBUG KEYSPACE-CHECK) after collections change databases.
// Expected replies as redis-server 7.0.15 gives them.
#include <doctest/doctest.h>

#include <string>

#include "tests/server/harness.h"

namespace sluice::server::testing {

TEST_CASE("MOVE carries values, collections and TTLs to another db") {
  Harness h;
  h.Cmd("SET s v");
  h.Cmd("PEXPIRE s 5000");
  h.Cmd("HSET hash f1 a f2 b");
  h.Cmd("RPUSH list a b c");
  CHECK(h.Cmd("MOVE s 3") == Int(1));
  CHECK(h.Cmd("MOVE hash 3") == Int(1));
  CHECK(h.Cmd("MOVE list 3") == Int(1));
  CHECK(h.Cmd("MOVE nope 3") == Int(0));
  CHECK(h.Cmd("DBSIZE") == Int(0));
  h.Cmd("SET list x");
  CHECK(h.Cmd("MOVE list 3") == Int(0));  // the target db has it
  h.Cmd("SELECT 3");
  CHECK(h.Cmd("PTTL s") == Int(5000));
  CHECK(h.Cmd("HGET hash f2") == "$1\r\nb\r\n");
  CHECK(h.Cmd("LRANGE list 0 -1") == "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n");
  CHECK(h.Cmd("DEBUG KEYSPACE-CHECK") == "+OK\r\n");
  CHECK(h.Cmd("MOVE s 3") == Err("ERR source and destination objects are the same"));
  CHECK(h.Cmd("MOVE s 16") == Err("ERR DB index is out of range"));
  CHECK(h.Cmd("MOVE s x") == NotIntegerErr());
}

TEST_CASE("SWAPDB trades every key, its elements and its TTL, with exact counts") {
  Harness h;
  h.Cmd("SET a 0");
  h.Cmd("ZADD z 1 m 2 n");
  h.Cmd("SADD set x y");
  h.Cmd("SELECT 1");
  h.Cmd("SET b 1");
  h.Cmd("EXPIRE b 100");
  CHECK(h.Cmd("SWAPDB 0 1") == "+OK\r\n");
  CHECK(h.Cmd("DBSIZE") == Int(3));
  CHECK(h.Cmd("ZRANGE z 0 -1 WITHSCORES") == "*4\r\n$1\r\nm\r\n$1\r\n1\r\n$1\r\nn\r\n$1\r\n2\r\n");
  CHECK(h.Cmd("SCARD set") == Int(2));
  CHECK(h.Cmd("EXISTS b") == Int(0));
  h.Cmd("SELECT 0");
  CHECK(h.Cmd("DBSIZE") == Int(1));
  CHECK(h.Cmd("TTL b") == Int(100));
  CHECK(h.Cmd("DEBUG KEYSPACE-CHECK") == "+OK\r\n");
  CHECK(h.Cmd("SWAPDB 1 1") == "+OK\r\n");
  CHECK(h.Cmd("SWAPDB x 1") == Err("ERR invalid first DB index"));
  CHECK(h.Cmd("SWAPDB 1 -1") == Err("ERR DB index is out of range"));
}

TEST_CASE("TOUCH counts existing keys, repeats included; LASTSAVE is a Unix time") {
  Harness h;
  h.Cmd("SET a 1");
  CHECK(h.Cmd("TOUCH a a b") == Int(2));
  const std::string last = h.Cmd("LASTSAVE");
  REQUIRE(last.size() > 3);
  CHECK(std::stoll(last.substr(1)) > 1'600'000'000);
}

TEST_CASE("SORT: numeric, ALPHA, BY, GET, LIMIT, STORE") {
  Harness h;
  h.Cmd("RPUSH l 3 1 2");
  h.Cmd("MSET w_1 c w_2 b w_3 a o_1 x");
  CHECK(h.Cmd("SORT l") == "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n");
  CHECK(h.Cmd("SORT l BY w_* ALPHA") == "*3\r\n$1\r\n3\r\n$1\r\n2\r\n$1\r\n1\r\n");
  CHECK(h.Cmd("SORT l DESC LIMIT 0 1 GET # GET o_*") == "*2\r\n$1\r\n3\r\n$-1\r\n");
  CHECK(h.Cmd("SORT l STORE dst") == Int(3));
  CHECK(h.Cmd("LRANGE dst 0 -1") == "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n");
  h.Cmd("RPUSH bad x");
  CHECK(h.Cmd("SORT bad") == Err("ERR One or more scores can't be converted into double"));
  CHECK(h.Cmd("SORT_RO l STORE x") == SyntaxErr());
}

}  // namespace sluice::server::testing
