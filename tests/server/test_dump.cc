// DUMP / RESTORE / RESTORE-ASKING through the real dispatcher and Store (manual clock, so TTLs
// are exact). Every expected reply was checked against redis-server 7.0.15; the payload bytes
// of "12345" and "hello" are Redis's own DUMP output.
#include <doctest/doctest.h>

#include <string>

#include "tests/server/harness.h"

namespace sluice::server::testing {

namespace {

constexpr int64_t kNow = 1'700'000'000'000;  // the harness's manual clock, in ms

// Redis 7.0.15: DUMP of SET k 12345 (int-encoded) and of SET k hello.
const std::string kIntPayload("\x00\xc1\x39\x30\x0a\x00\x9d\x94\xea\x27\x93\xfc\x08\xb9", 14);
const std::string kHelloPayload("\x00\x05hello\x0a\x00\x63\x72\xdf\x76\x65\x34\x20\x0a", 17);

TEST_CASE("DUMP gives Redis's bytes; RESTORE reads them") {
  Harness h;
  CHECK(h.Run({"SET", "k", "12345"}) == Ok());
  CHECK(h.Run({"DUMP", "k"}) == Bulk(kIntPayload));
  CHECK(h.Run({"DUMP", "missing"}) == Nil());
  CHECK(h.Run({"RESTORE", "h", "0", kHelloPayload}) == Ok());
  CHECK(h.Run({"GET", "h"}) == Bulk("hello"));
  CHECK(h.Run({"PTTL", "h"}) == Int(-1));
  CHECK(h.Run({"RESTORE", "t", "5000", kHelloPayload}) == Ok());
  CHECK(h.Run({"PTTL", "t"}) == Int(5000));
  CHECK(h.Run({"RESTORE", "a", std::to_string(kNow + 7000), kHelloPayload, "ABSTTL"}) == Ok());
  CHECK(h.Run({"PEXPIRETIME", "a"}) == Int(kNow + 7000));
  CHECK(h.Run({"RESTORE-ASKING", "ask", "0", kIntPayload}) == Ok());
  CHECK(h.Run({"GET", "ask"}) == Bulk("12345"));
}

TEST_CASE("RESTORE's errors, in Redis's order, write nothing") {
  Harness h;
  CHECK(h.Run({"SET", "k", "x"}) == Ok());
  const std::string busy = Err("BUSYKEY Target key name already exists.");
  CHECK(h.Run({"RESTORE", "k", "0", kHelloPayload}) == busy);
  CHECK(h.Run({"RESTORE", "k", "-5", kHelloPayload}) == busy);  // BUSYKEY before the TTL
  CHECK(h.Run({"RESTORE", "n", "x", kHelloPayload}) == NotIntegerErr());
  CHECK(h.Run({"RESTORE", "n", "-1", kHelloPayload}) == Err("ERR Invalid TTL value, must be >= 0"));
  CHECK(h.Run({"RESTORE", "n", "0", "abc"}) ==
        Err("ERR DUMP payload version or checksum are wrong"));
  std::string flipped = kHelloPayload;
  flipped[3] ^= 1;
  CHECK(h.Run({"RESTORE", "n", "0", flipped}) ==
        Err("ERR DUMP payload version or checksum are wrong"));
  CHECK(h.Run({"RESTORE", "n", "0", kHelloPayload, "FREQ", "300"}) ==
        Err("ERR Invalid FREQ value, must be >= 0 and <= 255"));
  CHECK(h.Run({"RESTORE", "n", "0", kHelloPayload, "IDLETIME", "-1"}) ==
        Err("ERR Invalid IDLETIME value, must be >= 0"));
  CHECK(h.Run({"RESTORE", "n", "0", kHelloPayload, "FREQ", "1", "IDLETIME", "1"}) == SyntaxErr());
  CHECK(h.Run({"RESTORE", "n", "0", kHelloPayload, "NOPE"}) == SyntaxErr());
  CHECK(h.Run({"EXISTS", "n"}) == Int(0));
  CHECK(h.Run({"GET", "k"}) == Bulk("x"));
  CHECK(h.Run({"RESTORE"}) == ArityErr("restore"));
}

TEST_CASE("RESTORE REPLACE, and a TTL already past") {
  Harness h;
  CHECK(h.Run({"RPUSH", "k", "a", "b"}) == Int(2));
  CHECK(h.Run({"RESTORE", "k", "0", kHelloPayload, "REPLACE"}) == Ok());
  CHECK(h.Run({"GET", "k"}) == Bulk("hello"));
  // Past: REPLACE deletes the old key, nothing is written; without it nothing happens.
  CHECK(h.Run({"RESTORE", "gone", "1", kHelloPayload, "ABSTTL"}) == Ok());
  CHECK(h.Run({"EXISTS", "gone"}) == Int(0));
  CHECK(h.Run({"RESTORE", "k", "1", kHelloPayload, "ABSTTL", "REPLACE"}) == Ok());
  CHECK(h.Run({"EXISTS", "k"}) == Int(0));
}

TEST_CASE("collections survive DUMP then RESTORE, in MULTI too") {
  Harness h;
  CHECK(h.Run({"HSET", "h", "f1", "v1", "f2", "v2"}) == Int(2));
  CHECK(h.Run({"ZADD", "z", "1.5", "a", "-2", "b"}) == Int(2));
  CHECK(h.Run({"SADD", "s", "3", "1", "2"}) == Int(3));
  CHECK(h.Run({"RPUSH", "l", "x", "y", "z"}) == Int(3));
  for (const char* key : {"h", "z", "s", "l"}) {
    std::string reply = h.Run({"DUMP", key});
    REQUIRE(reply[0] == '$');
    std::string payload = reply.substr(reply.find("\r\n") + 2);
    payload.resize(payload.size() - 2);
    CHECK(h.Run({"MULTI"}) == Ok());
    CHECK(h.Run({"RESTORE", std::string(key) + "2", "0", payload}) == "+QUEUED\r\n");
    CHECK(h.Run({"EXEC"}) == Arr({Ok()}));
  }
  CHECK(h.Run({"HGETALL", "h2"}) == Arr({Bulk("f1"), Bulk("v1"), Bulk("f2"), Bulk("v2")}));
  CHECK(h.Run({"ZRANGE", "z2", "0", "-1", "WITHSCORES"}) ==
        Arr({Bulk("b"), Bulk("-2"), Bulk("a"), Bulk("1.5")}));
  CHECK(h.Run({"SMEMBERS", "s2"}) == Arr({Bulk("1"), Bulk("2"), Bulk("3")}));
  CHECK(h.Run({"LRANGE", "l2", "0", "-1"}) == Arr({Bulk("x"), Bulk("y"), Bulk("z")}));
  CHECK(h.Run({"OBJECT", "ENCODING", "s2"}) == Bulk("intset"));
}

}  // namespace
}  // namespace sluice::server::testing
