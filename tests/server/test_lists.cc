// List commands through the real dispatcher and Store. Expected replies are redis-server
// 7.0.15's (checked by hand; tests/blackbox/test_collections.py compares side by side).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/server/harness.h"

namespace sluice::server::testing {

TEST_CASE("LPUSH/RPUSH/LPUSHX/RPUSHX, LRANGE, LLEN, TYPE") {
  Harness h;
  CHECK(h.Cmd("RPUSH l a b") == Int(2));
  CHECK(h.Cmd("LPUSH l x y") == Int(4));
  CHECK(h.Cmd("LRANGE l 0 -1") == Arr({Bulk("y"), Bulk("x"), Bulk("a"), Bulk("b")}));
  CHECK(h.Cmd("LRANGE l 1 1") == Arr({Bulk("x")}));
  CHECK(h.Cmd("LRANGE l 5 9") == Arr({}));
  CHECK(h.Cmd("LRANGE nokey 0 -1") == Arr({}));
  CHECK(h.Cmd("LRANGE nokey x 1") == NotIntegerErr());
  CHECK(h.Cmd("LLEN l") == Int(4));
  CHECK(h.Cmd("LLEN nokey") == Int(0));
  CHECK(h.Cmd("LPUSHX nokey a") == Int(0));
  CHECK(h.Cmd("RPUSHX nokey a") == Int(0));
  CHECK(h.Cmd("EXISTS nokey") == Int(0));
  CHECK(h.Cmd("RPUSHX l z") == Int(5));
  CHECK(h.Cmd("LPUSHX l w v") == Int(7));
  CHECK(h.Cmd("LINDEX l 0") == Bulk("v"));
  CHECK(h.Cmd("LINDEX l -1") == Bulk("z"));
  CHECK(h.Cmd("TYPE l") == Simple("list"));
  CHECK(h.Cmd("OBJECT ENCODING l") == Bulk("quicklist"));
  CHECK(h.Cmd("LPUSH l") == ArityErr("lpush"));
  CHECK(h.Cmd("RPUSHX l") == ArityErr("rpushx"));
}

TEST_CASE("LPOP/RPOP with and without count, RESP2 and RESP3") {
  Harness h;
  CHECK(h.Cmd("RPUSH l a b c d") == Int(4));
  CHECK(h.Cmd("LPOP l") == Bulk("a"));
  CHECK(h.Cmd("RPOP l") == Bulk("d"));
  CHECK(h.Cmd("LPOP l 0") == Arr({}));
  CHECK(h.Cmd("RPOP l 5") == Arr({Bulk("c"), Bulk("b")}));
  CHECK(h.Cmd("EXISTS l") == Int(0));
  CHECK(h.Cmd("LPOP l") == Nil());
  CHECK(h.Cmd("LPOP l 0") == NilArray());
  CHECK(h.Cmd("RPOP l 2") == NilArray());
  CHECK(h.Cmd("LPOP l -1") == Err("ERR value is out of range, must be positive"));
  CHECK(h.Cmd("LPOP l x") == Err("ERR value is out of range, must be positive"));
  CHECK(h.Cmd("LPOP l 1 2") == ArityErr("lpop"));
  CHECK(h.Cmd("RPOP") == ArityErr("rpop"));
  h.Resp3();
  CHECK(h.Cmd("LPOP l") == Null());
  CHECK(h.Cmd("LPOP l 2") == Null());
  CHECK(h.Cmd("RPUSH l a") == Int(1));
  CHECK(h.Cmd("LPOP l 0") == Arr({}));
}

TEST_CASE("LINDEX and LSET: missing keys, bad indices, out of range") {
  Harness h;
  CHECK(h.Cmd("RPUSH l a b c") == Int(3));
  CHECK(h.Cmd("LINDEX l 3") == Nil());
  CHECK(h.Cmd("LINDEX l -4") == Nil());
  CHECK(h.Cmd("LINDEX l x") == NotIntegerErr());
  CHECK(h.Cmd("LINDEX nokey x") == Nil());  // the key is looked up first
  CHECK(h.Cmd("LSET l 1 B") == Ok());
  CHECK(h.Cmd("LSET l -1 C") == Ok());
  CHECK(h.Cmd("LRANGE l 0 -1") == Arr({Bulk("a"), Bulk("B"), Bulk("C")}));
  CHECK(h.Cmd("LSET l 3 x") == Err("ERR index out of range"));
  CHECK(h.Cmd("LSET l x x") == NotIntegerErr());
  CHECK(h.Cmd("LSET nokey 0 x") == Err("ERR no such key"));
  CHECK(h.Cmd("LSET nokey x x") == Err("ERR no such key"));
  CHECK(h.Cmd("EXISTS nokey") == Int(0));
}

TEST_CASE("LTRIM, LREM, LINSERT") {
  Harness h;
  CHECK(h.Cmd("RPUSH l a x b x c x") == Int(6));
  CHECK(h.Cmd("LREM l -2 x") == Int(2));
  CHECK(h.Cmd("LRANGE l 0 -1") == Arr({Bulk("a"), Bulk("x"), Bulk("b"), Bulk("c")}));
  CHECK(h.Cmd("LREM l 0 x") == Int(1));
  CHECK(h.Cmd("LREM l x a") == NotIntegerErr());
  CHECK(h.Cmd("LREM nokey 1 a") == Int(0));
  CHECK(h.Cmd("LINSERT l BEFORE b 1") == Int(4));
  CHECK(h.Cmd("LINSERT l after c 2") == Int(5));
  CHECK(h.Cmd("LINSERT l before zz 3") == Int(-1));
  CHECK(h.Cmd("LINSERT nokey before a 3") == Int(0));
  CHECK(h.Cmd("LINSERT l middle a 3") == SyntaxErr());
  CHECK(h.Cmd("LRANGE l 0 -1") == Arr({Bulk("a"), Bulk("1"), Bulk("b"), Bulk("c"), Bulk("2")}));
  CHECK(h.Cmd("LTRIM l 1 -2") == Ok());
  CHECK(h.Cmd("LRANGE l 0 -1") == Arr({Bulk("1"), Bulk("b"), Bulk("c")}));
  CHECK(h.Cmd("LTRIM l x 1") == NotIntegerErr());
  CHECK(h.Cmd("LTRIM nokey 0 1") == Ok());
  CHECK(h.Cmd("LTRIM l 2 1") == Ok());
  CHECK(h.Cmd("EXISTS l") == Int(0));
}

TEST_CASE("LPOS options and errors") {
  Harness h;
  CHECK(h.Cmd("RPUSH l a b c 1 2 3 c c") == Int(8));
  CHECK(h.Cmd("LPOS l c") == Int(2));
  CHECK(h.Cmd("LPOS l c RANK 2") == Int(6));
  CHECK(h.Cmd("LPOS l c RANK -1") == Int(7));
  CHECK(h.Cmd("LPOS l c COUNT 0") == Arr({Int(2), Int(6), Int(7)}));
  CHECK(h.Cmd("LPOS l c COUNT 2 RANK -1") == Arr({Int(7), Int(6)}));
  CHECK(h.Cmd("LPOS l c COUNT 0 MAXLEN 3") == Arr({Int(2)}));
  CHECK(h.Cmd("LPOS l c RANK -9223372036854775808") == Int(7));
  CHECK(h.Cmd("LPOS l z") == Nil());
  CHECK(h.Cmd("LPOS l z COUNT 2") == Arr({}));
  CHECK(h.Cmd("LPOS nokey z") == Nil());
  CHECK(h.Cmd("LPOS nokey z COUNT 0") == Arr({}));
  CHECK(h.Cmd("LPOS l a RANK 0") ==
        Err("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... "
            "or use negative to start from the end of the list"));
  CHECK(h.Cmd("LPOS l a RANK x") == NotIntegerErr());
  CHECK(h.Cmd("LPOS l a COUNT -1") == Err("ERR COUNT can't be negative"));
  CHECK(h.Cmd("LPOS l a MAXLEN -1") == Err("ERR MAXLEN can't be negative"));
  CHECK(h.Cmd("LPOS l a RANK") == SyntaxErr());
  CHECK(h.Cmd("LPOS l a foo") == SyntaxErr());
  h.Resp3();
  CHECK(h.Cmd("LPOS l z") == Null());
}

TEST_CASE("LMOVE, RPOPLPUSH, LMPOP") {
  Harness h;
  CHECK(h.Cmd("RPUSH s a b c") == Int(3));
  CHECK(h.Cmd("LMOVE s d RIGHT LEFT") == Bulk("c"));
  CHECK(h.Cmd("LMOVE s d left right") == Bulk("a"));
  CHECK(h.Cmd("RPOPLPUSH d d") == Bulk("a"));  // rotation
  CHECK(h.Cmd("LRANGE d 0 -1") == Arr({Bulk("a"), Bulk("c")}));
  CHECK(h.Cmd("RPOPLPUSH s d") == Bulk("b"));
  CHECK(h.Cmd("EXISTS s") == Int(0));
  CHECK(h.Cmd("RPOPLPUSH s d") == Nil());
  CHECK(h.Cmd("LMOVE s d up left") == SyntaxErr());
  CHECK(h.Cmd("SET str v") == Ok());
  CHECK(h.Cmd("LMOVE s str left left") == Nil());  // a missing source is not a type error
  CHECK(h.Cmd("LMOVE d str left left") == WrongTypeErr());
  CHECK(h.Cmd("LMOVE str d left left") == WrongTypeErr());
  CHECK(h.Cmd("LRANGE d 0 -1") == Arr({Bulk("b"), Bulk("a"), Bulk("c")}));

  CHECK(h.Cmd("LMPOP 2 nokey d RIGHT COUNT 2") == Arr({Bulk("d"), Arr({Bulk("c"), Bulk("a")})}));
  CHECK(h.Cmd("LMPOP 1 d left") == Arr({Bulk("d"), Arr({Bulk("b")})}));
  CHECK(h.Cmd("LMPOP 1 d left") == NilArray());
  CHECK(h.Cmd("LMPOP 2 nokey str left") == WrongTypeErr());
  CHECK(h.Cmd("LMPOP 0 d left") == Err("ERR numkeys should be greater than 0"));
  CHECK(h.Cmd("LMPOP x d left") == Err("ERR numkeys should be greater than 0"));
  CHECK(h.Cmd("LMPOP 2 d left") == SyntaxErr());
  CHECK(h.Cmd("LMPOP 1 d middle") == SyntaxErr());
  CHECK(h.Cmd("LMPOP 1 d left COUNT 0") == Err("ERR count should be greater than 0"));
  CHECK(h.Cmd("LMPOP 1 d left COUNT x") == Err("ERR count should be greater than 0"));
  CHECK(h.Cmd("LMPOP 1 d left COUNT 1 COUNT 2") == SyntaxErr());
  CHECK(h.Cmd("LMPOP 1 d left foo") == SyntaxErr());
  CHECK(h.Cmd("LMPOP 1 d") == ArityErr("lmpop"));
  h.Resp3();
  CHECK(h.Cmd("LMPOP 1 d left") == Null());
}

TEST_CASE("list commands on another kind are WRONGTYPE and write nothing") {
  Harness h;
  CHECK(h.Cmd("SET s v") == Ok());
  for (const char* cmd :
       {"LPUSH s a", "RPUSH s a", "LPUSHX s a", "RPUSHX s a", "LPOP s", "RPOP s 2", "LLEN s",
        "LINDEX s 0", "LINDEX s x", "LSET s 0 a", "LRANGE s 0 -1", "LTRIM s 0 1", "LREM s 0 a",
        "LINSERT s before a b", "LPOS s a", "LMOVE s d left left", "RPOPLPUSH s d"}) {
    CAPTURE(cmd);
    CHECK(h.Cmd(cmd) == WrongTypeErr());
  }
  CHECK(h.Cmd("GET s") == Bulk("v"));
  CHECK(h.Cmd("HSET h f v") == Int(1));
  CHECK(h.Cmd("LPUSH h a") == WrongTypeErr());
  CHECK(h.Cmd("RPUSH l a") == Int(1));
  CHECK(h.Cmd("HSET l f v") == WrongTypeErr());
  CHECK(h.Cmd("GET l") == WrongTypeErr());
}

TEST_CASE("COMMAND INFO lpush: Redis 7.0's flags, keys and categories") {
  Harness h;
  // Redis's reply continues with key specs after the categories; Sluice has none.
  const std::string want =
      "*1\r\n*10\r\n$5\r\nlpush\r\n:-3\r\n*3\r\n+write\r\n+denyoom\r\n+fast\r\n"
      ":1\r\n:1\r\n:1\r\n*3\r\n+@write\r\n+@list\r\n+@fast\r\n";
  CHECK(h.Cmd("COMMAND INFO lpush").substr(0, want.size()) == want);
}

TEST_CASE("RENAME, COPY, EXPIRE and DEL of a list keep or drop it whole") {
  Harness h;
  CHECK(h.Cmd("RPUSH l a b c") == Int(3));
  CHECK(h.Cmd("LPUSH l z") == Int(4));
  CHECK(h.Cmd("RENAME l m") == Ok());
  CHECK(h.Cmd("LRANGE m 0 -1") == Arr({Bulk("z"), Bulk("a"), Bulk("b"), Bulk("c")}));
  CHECK(h.Cmd("COPY m n") == Int(1));
  CHECK(h.Cmd("LPOP n") == Bulk("z"));
  CHECK(h.Cmd("RPUSH n d") == Int(4));
  CHECK(h.Cmd("LRANGE n 0 -1") == Arr({Bulk("a"), Bulk("b"), Bulk("c"), Bulk("d")}));
  CHECK(h.Cmd("LLEN m") == Int(4));
  CHECK(h.Cmd("PEXPIRE m 100") == Int(1));
  h.AdvanceMs(101);
  CHECK(h.Cmd("LLEN m") == Int(0));
  CHECK(h.Cmd("RPUSH m x") == Int(1));  // a new list: old elements never come back
  CHECK(h.Cmd("LRANGE m 0 -1") == Arr({Bulk("x")}));
  CHECK(h.Cmd("DEL n") == Int(1));
  CHECK(h.Cmd("LRANGE n 0 -1") == Arr({}));
}

TEST_CASE("list commands inside MULTI see each other's writes") {
  Harness h;
  CHECK(h.Cmd("MULTI") == Ok());
  CHECK(h.Cmd("RPUSH l a b c") == Simple("QUEUED"));
  CHECK(h.Cmd("LTRIM l 1 -1") == Simple("QUEUED"));
  CHECK(h.Cmd("LRANGE l 0 -1") == Simple("QUEUED"));
  CHECK(h.Cmd("EXEC") == Arr({Int(3), Ok(), Arr({Bulk("b"), Bulk("c")})}));
}

}  // namespace sluice::server::testing

namespace sluice::server::testing {

// Pops from a list whose elements a SAVE flushed into table files read them ahead, a run per
// unit (docs/engine.md, "Read-ahead of list pops"), counted in INFO memory; an LSET in between
// is seen, in the same MULTI and after it.
TEST_CASE("LPOP/RPOP with a count on a flushed list: read ahead, counted in INFO memory") {
  Harness h;
  std::vector<std::string> rpush = {"RPUSH", "l"};
  for (int i = 0; i < 300; ++i) rpush.push_back("e" + std::to_string(i));
  CHECK(h.Run(rpush) == Int(300));
  CHECK(h.Cmd("SAVE") == Ok());
  auto field = [&](const std::string& name) {
    const std::string info = h.Run({"INFO", "memory"});
    const std::string at = "\r\n" + name + ":";
    const size_t pos = info.find(at);
    REQUIRE(pos != std::string::npos);
    return std::stoll(info.substr(pos + at.size()));
  };
  CHECK(field("sluice_read_ahead_fills") == 0);
  CHECK(h.Cmd("LPOP l 3") == Arr({Bulk("e0"), Bulk("e1"), Bulk("e2")}));
  CHECK(field("sluice_read_ahead_fills") == 1);  // from the second pop on
  CHECK(field("sluice_read_ahead_hits") == 1);
  CHECK(h.Cmd("MULTI") == Ok());
  CHECK(h.Cmd("LPOP l 2") == Simple("QUEUED"));
  CHECK(h.Cmd("LSET l 1 changed") == Simple("QUEUED"));
  CHECK(h.Cmd("LPOP l 2") == Simple("QUEUED"));
  CHECK(h.Cmd("RPOP l 2") == Simple("QUEUED"));
  CHECK(h.Cmd("EXEC") ==
        Arr({Arr({Bulk("e3"), Bulk("e4")}), Ok(), Arr({Bulk("e5"), Bulk("changed")}),
             Arr({Bulk("e299"), Bulk("e298")})}));
  CHECK(h.Cmd("LSET l 0 fresh") == Ok());
  CHECK(h.Cmd("LPOP l 2") == Arr({Bulk("fresh"), Bulk("e8")}));
  CHECK(h.Cmd("LLEN l") == Int(289));
  // EXEC's unit read e3 and e4 from table files, filled at e4 and served e5; e6 was its own
  // LSET's; RPOP's read of e299, the unit's third from a table file, filled downward and served
  // e298. The last LPOP's unit read one element from a table file (fresh was in a memtable): no
  // fill.
  CHECK(field("sluice_read_ahead_fills") == 3);
  CHECK(field("sluice_read_ahead_hits") == 3);
}

}  // namespace sluice::server::testing
