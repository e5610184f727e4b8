// Blocking commands: the BlockingRegistry (FIFO per key, wake on commit, passing a wake on,
// CLIENT UNBLOCK), the timeout parser, and the commands through the dispatcher where they do
// not block (no connection: as inside MULTI/EXEC, they answer as on a timeout). Parking, waking
// and timeouts over real connections are in tests/blackbox/test_blocking.py. Expected replies
// are redis-server 7.0.15's (checked by hand).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "server/core/blocking.h"
#include "server/core/client_state.h"
#include "tests/server/harness.h"

namespace sluice::server::testing {

namespace {

// Records the events each test client receives.
struct Recorder {
  std::vector<std::pair<uint64_t, BlockEvent>> events;
  BlockingRegistry::WakeFn For(uint64_t id) {
    return [this, id](BlockEvent e) { events.emplace_back(id, e); };
  }
};

// Test clients with ids 1, 2, 3, ...
struct Clients {
  ClientState c[4];
  Clients() {
    for (uint64_t i = 0; i < 4; ++i) c[i].id = i + 1;
  }
};

void Commit(BlockingRegistry& r, std::vector<std::string_view> keys, int db = 0) {
  std::vector<KeyRef> refs;
  for (std::string_view k : keys) refs.push_back(KeyRef{db, k});
  r.OnCommit(refs, 0);
}

}  // namespace

TEST_CASE("registry: a commit wakes the first parked waiter of the key, FIFO") {
  BlockingRegistry r;
  Recorder rec;
  Clients cl;
  ClientState &a = cl.c[0], &b = cl.c[1], &c = cl.c[2];
  std::vector<std::string_view> k{"k"};
  r.Park(&a, 0, k, rec.For(1));
  r.Park(&b, 0, k, rec.For(2));
  r.Park(&c, 0, k, rec.For(3));
  CHECK(r.blocked_clients() == 3);
  Commit(r, {"other"});
  Commit(r, {"k"}, /*db=*/1);  // another database's k
  CHECK(rec.events.empty());
  Commit(r, {"k", "k"});  // a key written twice by one unit wakes one waiter
  REQUIRE(rec.events.size() == 1);
  CHECK(rec.events[0].first == 1);
  CHECK(rec.events[0].second == BlockEvent::kRetry);
  // The woken client's pop commits (it is still registered): it runs for k, so nothing more is
  // woken until it leaves (one key's waiters are served one after another, as in Redis).
  Commit(r, {"k"});
  CHECK(rec.events.size() == 1);
  // a was served and leaves: it passes the wake on to b.
  r.Remove(&a);
  REQUIRE(rec.events.size() == 2);
  CHECK(rec.events[1].first == 2);
  CHECK(r.blocked_clients() == 2);
  // b found the key empty again and parks again: it keeps its place before c.
  r.Park(&b, 0, k, rec.For(2));
  Commit(r, {"k"});
  REQUIRE(rec.events.size() == 3);
  CHECK(rec.events[2].first == 2);
}

TEST_CASE("registry: a waiter leaving after a wake passes it on; parked leavers do not") {
  BlockingRegistry r;
  Recorder rec;
  Clients cl;
  ClientState &a = cl.c[0], &b = cl.c[1], &c = cl.c[2];
  std::vector<std::string_view> ab{"x", "y"};
  std::vector<std::string_view> y{"y"};
  r.Park(&a, 0, ab, rec.For(1));
  r.Park(&b, 0, y, rec.For(2));
  r.Park(&c, 0, y, rec.For(3));
  Commit(r, {"y"});  // a is first on y
  REQUIRE(rec.events.size() == 1);
  CHECK(rec.events[0].first == 1);
  // a was served from x (pushed meanwhile): y's element must not stay behind b and c.
  r.Remove(&a);
  REQUIRE(rec.events.size() == 2);
  CHECK(rec.events[1].first == 2);
  r.Remove(&c);  // parked: nothing to pass on
  CHECK(rec.events.size() == 2);
  r.Remove(&b);
  CHECK(r.blocked_clients() == 0);
  Commit(r, {"x", "y"});
  CHECK(rec.events.size() == 2);
}

TEST_CASE("registry: CLIENT UNBLOCK removes the waiter and sends it the reason") {
  BlockingRegistry r;
  Recorder rec;
  Clients cl;
  ClientState& a = cl.c[0];
  std::vector<std::string_view> k{"k", "k"};  // a key named twice waits once
  r.Park(&a, 0, k, rec.For(1));
  CHECK_FALSE(r.Unblock(8, BlockEvent::kError));
  CHECK(r.Unblock(1, BlockEvent::kError));
  REQUIRE(rec.events.size() == 1);
  CHECK(rec.events[0].second == BlockEvent::kError);
  CHECK(r.blocked_clients() == 0);
  CHECK_FALSE(r.Unblock(1, BlockEvent::kTimeout));
  Commit(r, {"k"});
  CHECK(rec.events.size() == 1);
  r.Remove(&a);  // already gone: no-op
}

TEST_CASE("ParseBlockTimeout follows Redis 7.0") {
  auto ms = [](std::string_view s) { return ParseBlockTimeout(s).value().ms; };
  CHECK(ms("0") == 0);
  CHECK(ms("1") == 1000);
  CHECK(ms("0.1") == 100);
  CHECK(ms("0.0001") == 1);  // rounded up
  CHECK(ms("1e-400") == 1);
  CHECK(ms("-0") == 0);
  CHECK(ms("-0.0001") == 0);  // ceil(-0.1) is 0: for ever
  CHECK(ms("0x10") == 16000);
  CHECK(ms("1e15") == 0);  // beyond a century: for ever
  for (const char* bad : {"abc", "", " 1", "nan", "1e5000", "1x"}) {
    CHECK(ParseBlockTimeout(bad).status().message() ==
          "ERR timeout is not a float or out of range");
  }
  for (const char* neg : {"-1", "-0.5", "inf", "-inf", "1e300", "9223372036854775807"}) {
    CHECK(ParseBlockTimeout(neg).status().message() == "ERR timeout is negative");
  }
}

TEST_CASE("BLPOP/BRPOP serve at once when an element is there") {
  Harness h;
  CHECK(h.Cmd("RPUSH l2 a b c") == Int(3));
  CHECK(h.Cmd("BLPOP l1 l2 0") == Arr({Bulk("l2"), Bulk("a")}));
  CHECK(h.Cmd("BRPOP l1 l2 0") == Arr({Bulk("l2"), Bulk("c")}));
  CHECK(h.Cmd("BLPOP l2 l2 1") == Arr({Bulk("l2"), Bulk("b")}));
  CHECK(h.Cmd("EXISTS l2") == Int(0));
  CHECK(h.Cmd("SET s x") == Ok());
  CHECK(h.Cmd("BLPOP nokey s 0") == WrongTypeErr());
  CHECK(h.Cmd("BLPOP l") == ArityErr("blpop"));
  CHECK(h.Cmd("BLPOP l abc") == Err("ERR timeout is not a float or out of range"));
  CHECK(h.Cmd("BLPOP s -1") == Err("ERR timeout is negative"));  // the timeout is parsed first
}

TEST_CASE("BLMOVE/BRPOPLPUSH/BLMPOP serve at once; argument errors in Redis's order") {
  Harness h;
  CHECK(h.Cmd("RPUSH src a b c d") == Int(4));
  CHECK(h.Cmd("BLMOVE src dst LEFT RIGHT 0") == Bulk("a"));
  CHECK(h.Cmd("BRPOPLPUSH src dst 0") == Bulk("d"));
  CHECK(h.Cmd("LRANGE dst 0 -1") == Arr({Bulk("d"), Bulk("a")}));
  CHECK(h.Cmd("BLMPOP 0 2 nokey src RIGHT COUNT 5") ==
        Arr({Bulk("src"), Arr({Bulk("c"), Bulk("b")})}));
  CHECK(h.Cmd("BLMOVE src dst UP RIGHT x") == SyntaxErr());
  CHECK(h.Cmd("BLMOVE src dst LEFT RIGHT x") == Err("ERR timeout is not a float or out of range"));
  // BLMPOP parses its timeout after the other arguments.
  CHECK(h.Cmd("BLMPOP x 0 src LEFT") == Err("ERR numkeys should be greater than 0"));
  CHECK(h.Cmd("BLMPOP x 1 src UP") == SyntaxErr());
  CHECK(h.Cmd("BLMPOP x 1 src LEFT") == Err("ERR timeout is not a float or out of range"));
  CHECK(h.Cmd("BLMPOP 0 0 src LEFT") == Err("ERR numkeys should be greater than 0"));
  CHECK(h.Cmd("BLMPOP 0 2 src LEFT") == SyntaxErr());
  CHECK(h.Cmd("BLMPOP 0 1 src LEFT COUNT 0") == Err("ERR count should be greater than 0"));
  CHECK(h.Cmd("BLMPOP 0 1 src") == ArityErr("blmpop"));
  CHECK(h.Cmd("SET s x") == Ok());
  CHECK(h.Cmd("RPUSH l x") == Int(1));
  CHECK(h.Cmd("BLMOVE l s LEFT LEFT 0") == WrongTypeErr());
  CHECK(h.Cmd("LLEN l") == Int(1));
}

TEST_CASE("without a connection to park (as in MULTI), empty keys answer as on a timeout") {
  Harness h;
  CHECK(h.Cmd("BLPOP a b 0") == NilArray());
  CHECK(h.Cmd("BRPOP a 0.1") == NilArray());
  CHECK(h.Cmd("BLMOVE a b LEFT LEFT 0") == Nil());
  CHECK(h.Cmd("BRPOPLPUSH a b 0") == Nil());
  CHECK(h.Cmd("BLMPOP 0 1 a LEFT") == NilArray());
  CHECK(h.Cmd("MULTI") == Ok());
  CHECK(h.Cmd("BLPOP a 0") == Simple("QUEUED"));
  CHECK(h.Cmd("BLMOVE a b LEFT LEFT 0") == Simple("QUEUED"));
  CHECK(h.Cmd("RPUSH a x") == Simple("QUEUED"));
  CHECK(h.Cmd("BLMPOP 0 1 a LEFT") == Simple("QUEUED"));
  CHECK(h.Cmd("EXEC") == Arr({NilArray(), Nil(), Int(1), Arr({Bulk("a"), Arr({Bulk("x")})})}));
  h.Resp3();
  CHECK(h.Cmd("BLPOP a 0") == Null());
  CHECK(h.Cmd("BLMOVE a b LEFT LEFT 0") == Null());
}

TEST_CASE("scripts may not call blocking commands; CLIENT UNBLOCK; INFO blocked_clients") {
  Harness h;
  const std::string refused = h.Run({"EVAL", "return redis.call('blpop','x',0)", "0"});
  CHECK(refused.rfind("-ERR This Redis command is not allowed from script", 0) == 0);
  CHECK(h.Cmd("CLIENT UNBLOCK 12345") == Int(0));
  CHECK(h.Cmd("CLIENT UNBLOCK 12345 ERROR") == Int(0));
  CHECK(h.Cmd("CLIENT UNBLOCK 1 foo") ==
        Err("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR"));
  CHECK(h.Cmd("CLIENT UNBLOCK abc") == NotIntegerErr());
  CHECK(h.Cmd("CLIENT UNBLOCK 1 2 3") ==
        Err("ERR unknown subcommand or wrong number of arguments for 'UNBLOCK'. Try CLIENT HELP."));
  CHECK(h.Cmd("INFO clients").find("blocked_clients:0\r\n") != std::string::npos);
}

TEST_CASE("COMMAND INFO shows the blocking flag and @blocking, as Redis 7.0") {
  Harness h;
  const std::string info = h.Cmd("COMMAND INFO brpoplpush");
  CHECK(info.find("+write\r\n+denyoom\r\n+noscript\r\n+blocking\r\n") != std::string::npos);
  CHECK(info.find("@slow\r\n+@blocking\r\n") != std::string::npos);
  CHECK(h.Cmd("COMMAND INFO lpop").find("blocking") == std::string::npos);
}

}  // namespace sluice::server::testing
