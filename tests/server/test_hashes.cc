// Hash commands through the real dispatcher and Store. Expected replies are redis-server
// 7.0.15's (checked by hand; tests/blackbox/test_collections.py compares side by side).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/server/harness.h"

namespace sluice::server::testing {

TEST_CASE("HSET/HGET/HMGET/HGETALL/HKEYS/HVALS/HLEN in insertion order") {
  Harness h;
  CHECK(h.Cmd("HSET h b 1 a 2") == Int(2));
  CHECK(h.Cmd("HSET h b 3 c 4") == Int(1));  // b overwritten in place
  CHECK(h.Cmd("HGET h b") == Bulk("3"));
  CHECK(h.Cmd("HGET h nope") == Nil());
  CHECK(h.Cmd("HGET nokey f") == Nil());
  CHECK(h.Cmd("HMGET h a nope c") == Arr({Bulk("2"), Nil(), Bulk("4")}));
  CHECK(h.Cmd("HMGET nokey a") == Arr({Nil()}));
  CHECK(h.Cmd("HGETALL h") ==
        Arr({Bulk("b"), Bulk("3"), Bulk("a"), Bulk("2"), Bulk("c"), Bulk("4")}));
  CHECK(h.Cmd("HKEYS h") == Arr({Bulk("b"), Bulk("a"), Bulk("c")}));
  CHECK(h.Cmd("HVALS h") == Arr({Bulk("3"), Bulk("2"), Bulk("4")}));
  CHECK(h.Cmd("HLEN h") == Int(3));
  CHECK(h.Cmd("HLEN nokey") == Int(0));
  CHECK(h.Cmd("HGETALL nokey") == Arr({}));
  CHECK(h.Cmd("HMSET h d 5") == Ok());
  CHECK(h.Cmd("TYPE h") == Simple("hash"));
  h.Resp3();
  CHECK(h.Cmd("HGETALL h") == Map({Bulk("b"), Bulk("3"), Bulk("a"), Bulk("2"), Bulk("c"), Bulk("4"),
                                   Bulk("d"), Bulk("5")}));
  CHECK(h.Cmd("HGETALL nokey") == Map({}));
}

TEST_CASE("HDEL removes fields and the key with the last one; HEXISTS, HSTRLEN, HSETNX") {
  Harness h;
  CHECK(h.Cmd("HSET h a 1 b 22") == Int(2));
  CHECK(h.Cmd("HSETNX h a 9") == Int(0));
  CHECK(h.Cmd("HSETNX h c 333") == Int(1));
  CHECK(h.Cmd("HSETNX new f v") == Int(1));
  CHECK(h.Cmd("HEXISTS h a") == Int(1));
  CHECK(h.Cmd("HEXISTS h z") == Int(0));
  CHECK(h.Cmd("HEXISTS nokey z") == Int(0));
  CHECK(h.Cmd("HSTRLEN h c") == Int(3));
  CHECK(h.Cmd("HSTRLEN h z") == Int(0));
  CHECK(h.Cmd("HDEL h a z a") == Int(1));
  CHECK(h.Cmd("HDEL nokey a") == Int(0));
  CHECK(h.Cmd("HDEL h b c") == Int(2));
  CHECK(h.Cmd("EXISTS h") == Int(0));
  // A re-created hash starts empty: old fields never come back.
  CHECK(h.Cmd("HSET h x 1") == Int(1));
  CHECK(h.Cmd("HGETALL h") == Arr({Bulk("x"), Bulk("1")}));
}

TEST_CASE("HINCRBY and HINCRBYFLOAT") {
  Harness h;
  CHECK(h.Cmd("HINCRBY h n 5") == Int(5));
  CHECK(h.Cmd("HINCRBY h n -7") == Int(-2));
  CHECK(h.Cmd("HINCRBYFLOAT h f 1.5") == Bulk("1.5"));
  CHECK(h.Cmd("HINCRBYFLOAT h f 1e2") == Bulk("101.5"));
  CHECK(h.Cmd("HINCRBYFLOAT h n 0.5") == Bulk("-1.5"));
  CHECK(h.Cmd("HSET h s abc") == Int(1));
  CHECK(h.Cmd("HINCRBY h s 1") == Err("ERR hash value is not an integer"));
  CHECK(h.Cmd("HINCRBYFLOAT h s 1") == Err("ERR hash value is not a float"));
  CHECK(h.Cmd("HINCRBY h n x") == NotIntegerErr());
  CHECK(h.Cmd("HINCRBYFLOAT h n x") == NotFloatErr());
  CHECK(h.Cmd("HSET h big 9223372036854775807") == Int(1));
  CHECK(h.Cmd("HINCRBY h big 1") == Err("ERR increment or decrement would overflow"));
  // An infinite increment is refused before the key or the field is looked at.
  CHECK(h.Cmd("HINCRBYFLOAT h f inf") == Err("ERR value is NaN or Infinity"));
  CHECK(h.Cmd("HINCRBYFLOAT nokey f -inf") == Err("ERR value is NaN or Infinity"));
  CHECK(h.Cmd("SET str x") == Simple("OK"));
  CHECK(h.Cmd("HINCRBYFLOAT str f +inf") == Err("ERR value is NaN or Infinity"));
  CHECK(h.Cmd("EXISTS nokey") == Int(0));
  CHECK(h.Cmd("HGET h big") == Bulk("9223372036854775807"));
}

TEST_CASE("HRANDFIELD shapes and ranges") {
  Harness h;
  CHECK(h.Cmd("HRANDFIELD nokey") == Nil());
  CHECK(h.Cmd("HRANDFIELD nokey 3") == Arr({}));
  CHECK(h.Cmd("HSET h a 1") == Int(1));
  CHECK(h.Cmd("HRANDFIELD h") == Bulk("a"));
  CHECK(h.Cmd("HRANDFIELD h 5") == Arr({Bulk("a")}));
  CHECK(h.Cmd("HRANDFIELD h 0") == Arr({}));
  CHECK(h.Cmd("HRANDFIELD h -3") == Arr({Bulk("a"), Bulk("a"), Bulk("a")}));
  CHECK(h.Cmd("HRANDFIELD h -2 WITHVALUES") == Arr({Bulk("a"), Bulk("1"), Bulk("a"), Bulk("1")}));
  CHECK(h.Cmd("HRANDFIELD h 1 withvalue") == SyntaxErr());
  CHECK(h.Cmd("HRANDFIELD h 1 WITHVALUES x") == SyntaxErr());
  CHECK(h.Cmd("HRANDFIELD h x") == NotIntegerErr());
  CHECK(h.Cmd("HRANDFIELD h -9223372036854775808") ==
        Err("ERR value is out of range, value must between -9223372036854775807 and "
            "9223372036854775807"));
  CHECK(h.Cmd("HRANDFIELD h 4611686018427387904 WITHVALUES") == Err("ERR value is out of range"));
  // A reply that could not fit in memory is refused (Redis would try to build it).
  CHECK(h.Cmd("HRANDFIELD h -10000001") ==
        Err("ERR a negative count below -10000000 is not supported by Sluice"));
  h.Resp3();
  CHECK(h.Cmd("HRANDFIELD h 1 WITHVALUES") == Arr({Arr({Bulk("a"), Bulk("1")})}));
}

TEST_CASE("HSCAN: small hashes in one page; big ones in pages; errors in Redis's order") {
  Harness h;
  CHECK(h.Cmd("HSCAN nokey 0 COUNT 0") == Arr({Bulk("0"), Arr({})}));  // key first
  CHECK(h.Cmd("HSCAN nokey x") == Err("ERR invalid cursor"));
  CHECK(h.Cmd("HSET h b 1 a 2") == Int(2));
  CHECK(h.Cmd("HSCAN h 0") == Arr({Bulk("0"), Arr({Bulk("b"), Bulk("1"), Bulk("a"), Bulk("2")})}));
  CHECK(h.Cmd("HSCAN h 0 MATCH a* COUNT 1") == Arr({Bulk("0"), Arr({Bulk("a"), Bulk("2")})}));
  CHECK(h.Cmd("HSCAN h 0 COUNT 0") == SyntaxErr());
  CHECK(h.Cmd("HSCAN h 0 COUNT x") == NotIntegerErr());
  CHECK(h.Cmd("HSCAN h 0 TYPE hash") == SyntaxErr());
  CHECK(h.Cmd("HSCAN h 0 MATCH") == SyntaxErr());
  CHECK(h.Cmd("SET s v") == Ok());
  CHECK(h.Cmd("HSCAN s 0") == WrongTypeErr());
  // 600 fields (past Redis 7.0's hash-max-listpack-entries, 512): a hashtable, paged.
  std::vector<std::string> args{"HSET", "big"};
  for (int i = 0; i < 600; ++i) {
    args.push_back("f" + std::to_string(i));
    args.push_back("v");
  }
  CHECK(h.Run(args) == Int(600));
  CHECK(h.Cmd("OBJECT ENCODING big") == Bulk("hashtable"));
  std::string cursor = "0";
  int pages = 0;
  size_t fields = 0;
  do {
    std::string reply = h.Run({"HSCAN", "big", cursor, "COUNT", "50"});
    REQUIRE(reply.rfind("*2\r\n$", 0) == 0);
    size_t eol = reply.find("\r\n", 4);
    size_t len = std::stoul(reply.substr(5, eol - 5));
    cursor = reply.substr(eol + 2, len);
    size_t at = eol + 2 + len + 2;
    size_t arr_eol = reply.find("\r\n", at);
    fields += std::stoul(reply.substr(at + 1, arr_eol - at - 1)) / 2;
    ++pages;
  } while (cursor != "0" && pages < 100);
  CHECK(fields == 600);
  CHECK(pages == 12);
}

TEST_CASE("hash errors: WRONGTYPE both ways, arity, OBJECT ENCODING thresholds") {
  Harness h;
  CHECK(h.Cmd("SET s v") == Ok());
  for (const char* cmd : {"HSET s f v", "HGET s f", "HGETALL s", "HDEL s f", "HLEN s",
                          "HINCRBY s f 1", "HRANDFIELD s", "HSETNX s f v", "HEXISTS s f"}) {
    CAPTURE(cmd);
    CHECK(h.Cmd(cmd) == WrongTypeErr());
  }
  CHECK(h.Cmd("HSET h f v") == Int(1));
  CHECK(h.Cmd("GET h") == WrongTypeErr());
  CHECK(h.Cmd("INCR h") == WrongTypeErr());
  CHECK(h.Cmd("APPEND h x") == WrongTypeErr());
  CHECK(h.Cmd("HSET h f") == ArityErr("hset"));
  CHECK(h.Cmd("HSET h f v g") == ArityErr("hset"));
  CHECK(h.Cmd("HMSET h f v g") == ArityErr("hmset"));
  CHECK(h.Cmd("HGET h") == ArityErr("hget"));
  CHECK(h.Cmd("OBJECT ENCODING h") == Bulk("listpack"));
  CHECK(h.Run({"HSET", "h", "long", std::string(65, 'x')}) == Int(1));
  CHECK(h.Cmd("OBJECT ENCODING h") == Bulk("hashtable"));
  CHECK(h.Cmd("OBJECT ENCODING nokey") == Nil());
  CHECK(h.Cmd("SET n 12") == Ok());
  CHECK(h.Cmd("OBJECT ENCODING n") == Bulk("int"));
  CHECK(h.Cmd("OBJECT ENCODING s") == Bulk("embstr"));
  CHECK(h.Cmd("OBJECT NOPE s") == Err("ERR unknown subcommand 'NOPE'. Try OBJECT HELP."));
  // The thresholds as configured (process-wide: put back below); never back while the key lives.
  CHECK(h.Cmd("CONFIG SET hash-max-ziplist-entries 1 zset-max-listpack-value 2 "
              "set-max-intset-entries 1") == Ok());
  CHECK(h.Cmd("HSET h2 a 1") == Int(1));
  CHECK(h.Cmd("OBJECT ENCODING h2") == Bulk("listpack"));
  CHECK(h.Cmd("HSET h2 b 2") == Int(1));
  CHECK(h.Cmd("OBJECT ENCODING h2") == Bulk("hashtable"));
  CHECK(h.Cmd("HDEL h2 b") == Int(1));
  CHECK(h.Cmd("OBJECT ENCODING h2") == Bulk("hashtable"));
  CHECK(h.Cmd("ZADD z2 1 ab 2 abc") == Int(2));
  CHECK(h.Cmd("OBJECT ENCODING z2") == Bulk("skiplist"));
  CHECK(h.Cmd("SADD s2 1 2") == Int(2));
  CHECK(h.Cmd("OBJECT ENCODING s2") == Bulk("hashtable"));
  CHECK(h.Cmd("CONFIG SET hash-max-listpack-entries 512 zset-max-listpack-value 64 "
              "set-max-intset-entries 512") == Ok());
  CHECK(h.Cmd("OBJECT ENCODING h2") == Bulk("hashtable"));
  // SET replaces a hash; the hash's fields are gone.
  CHECK(h.Cmd("SET h plain") == Ok());
  CHECK(h.Cmd("HSET h f v") == WrongTypeErr());
  CHECK(h.Cmd("DEL h") == Int(1));
  CHECK(h.Cmd("HLEN h") == Int(0));
}

TEST_CASE("key commands on hashes: EXPIRE, TTL, PERSIST, RENAME, COPY, SCAN TYPE, DBSIZE") {
  Harness h;
  CHECK(h.Cmd("HSET h a 1 b 2") == Int(2));
  CHECK(h.Cmd("EXPIRE h 10") == Int(1));
  CHECK(h.Cmd("TTL h") == Int(10));
  CHECK(h.Cmd("HSET h c 3") == Int(1));
  CHECK(h.Cmd("TTL h") == Int(10));  // writes keep the TTL
  CHECK(h.Cmd("RENAME h h2") == Ok());
  CHECK(h.Cmd("TTL h2") == Int(10));
  CHECK(h.Cmd("HGETALL h2") ==
        Arr({Bulk("a"), Bulk("1"), Bulk("b"), Bulk("2"), Bulk("c"), Bulk("3")}));
  CHECK(h.Cmd("COPY h2 h3") == Int(1));
  CHECK(h.Cmd("PERSIST h3") == Int(1));
  CHECK(h.Cmd("HDEL h2 a") == Int(1));
  CHECK(h.Cmd("HLEN h3") == Int(3));
  CHECK(h.Cmd("SCAN 0 TYPE hash COUNT 100").find("h3") != std::string::npos);
  CHECK(h.Cmd("DBSIZE") == Int(2));
  h.AdvanceMs(10'001);
  CHECK(h.Cmd("HLEN h2") == Int(0));
  CHECK(h.Cmd("DBSIZE") == Int(1));
  CHECK(h.Cmd("HSET h2 z 1") == Int(1));  // a new hash: the expired fields are gone
  CHECK(h.Cmd("HGETALL h2") == Arr({Bulk("z"), Bulk("1")}));
}

TEST_CASE("hash commands in MULTI see each other's writes") {
  Harness h;
  CHECK(h.Cmd("MULTI") == Ok());
  CHECK(h.Cmd("HSET h a 1") == Simple("QUEUED"));
  CHECK(h.Cmd("HINCRBY h a 2") == Simple("QUEUED"));
  CHECK(h.Cmd("HGETALL h") == Simple("QUEUED"));
  CHECK(h.Cmd("EXEC") == Arr({Int(1), Int(3), Arr({Bulk("a"), Bulk("3")})}));
}

TEST_CASE("WATCH sees field writes; FLUSHDB inside EXEC then HSET starts a new hash") {
  Harness h;
  CHECK(h.Cmd("HSET h a 1") == Int(1));
  CHECK(h.Cmd("WATCH h") == Ok());
  CHECK(h.Cmd("HSET h a 2") == Int(0));  // an overwrite changes no count, still a write
  CHECK(h.Cmd("MULTI") == Ok());
  CHECK(h.Cmd("HGET h a") == Simple("QUEUED"));
  CHECK(h.Cmd("EXEC") == NilArray());
  CHECK(h.Cmd("MULTI") == Ok());
  CHECK(h.Cmd("FLUSHDB") == Simple("QUEUED"));
  CHECK(h.Cmd("HSET h b 1") == Simple("QUEUED"));
  CHECK(h.Cmd("HGETALL h") == Simple("QUEUED"));
  CHECK(h.Cmd("EXEC") == Arr({Ok(), Int(1), Arr({Bulk("b"), Bulk("1")})}));
  CHECK(h.Cmd("HGETALL h") == Arr({Bulk("b"), Bulk("1")}));
  CHECK(h.Cmd("DBSIZE") == Int(1));
}

TEST_CASE("COMMAND INFO hset and sadd: Redis 7.0's categories @hash and @set") {
  Harness h;
  // Redis's reply continues with key specs after the categories; Sluice has none.
  const std::string hset =
      "*1\r\n*10\r\n$4\r\nhset\r\n:-4\r\n*3\r\n+write\r\n+denyoom\r\n+fast\r\n"
      ":1\r\n:1\r\n:1\r\n*3\r\n+@write\r\n+@hash\r\n+@fast\r\n";
  CHECK(h.Cmd("COMMAND INFO hset").substr(0, hset.size()) == hset);
  const std::string sadd =
      "*1\r\n*10\r\n$4\r\nsadd\r\n:-3\r\n*3\r\n+write\r\n+denyoom\r\n+fast\r\n"
      ":1\r\n:1\r\n:1\r\n*3\r\n+@write\r\n+@set\r\n+@fast\r\n";
  CHECK(h.Cmd("COMMAND INFO sadd").substr(0, sadd.size()) == sadd);
}

}  // namespace sluice::server::testing
