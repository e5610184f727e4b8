// MULTI, EXEC, DISCARD, WATCH, UNWATCH through the real dispatcher and Store. Every expected
// reply was checked against redis-server 7.0.15 (tests/blackbox/test_transactions.py compares
// the two servers side by side).
#include <doctest/doctest.h>

#include <atomic>
#include <string>
#include <vector>

#include "sluice/store.h"
#include "tests/server/harness.h"

namespace sluice::server::testing {

namespace {

const std::string kQueued = Simple("QUEUED");
const std::string kExecAbort = "-EXECABORT Transaction discarded because of previous errors.\r\n";

// A second connection on the same server and store.
struct Other {
  explicit Other(Harness& h) : h(h), dispatcher(h.table()) {
    client.id = h.server().clients().NextId();
    client.authenticated = true;
  }
  ~Other() { h.server().watches().UnwatchAll(&client); }
  std::string Cmd(const std::string& line) {
    std::vector<std::string> parts;
    size_t start = 0;
    while (start <= line.size()) {
      size_t sp = line.find(' ', start);
      if (sp == std::string::npos) sp = line.size();
      parts.push_back(line.substr(start, sp - start));
      start = sp + 1;
    }
    std::vector<std::string_view> args(parts.begin(), parts.end());
    std::string reply;
    protocol::ReplyWriter out(&reply, client.resp);
    CommandContext ctx{h.store(), h.server(), client, out};
    dispatcher.Dispatch(ctx, args);
    return reply;
  }
  Harness& h;
  Dispatcher dispatcher;
  ClientState client;
};

}  // namespace

TEST_CASE("MULTI queues, EXEC runs everything in order and replies with an array") {
  Harness h;
  CHECK(h.Cmd("MULTI") == Ok());
  CHECK(h.Cmd("SET a 1") == kQueued);
  CHECK(h.Cmd("INCR a") == kQueued);
  CHECK(h.Cmd("GET a") == kQueued);
  CHECK(h.Cmd("GET a") == kQueued);
  CHECK(h.Cmd("EXEC") == Arr({Ok(), Int(2), Bulk("2"), Bulk("2")}));
  CHECK(h.Cmd("GET a") == Bulk("2"));
  CHECK(h.Cmd("MULTI") == Ok());
  CHECK(h.Cmd("EXEC") == Arr({}));
}

TEST_CASE("nothing queued is visible to another client before EXEC") {
  Harness h;
  Other other(h);
  CHECK(h.Cmd("MULTI") == Ok());
  CHECK(h.Cmd("SET a 1") == kQueued);
  CHECK(other.Cmd("GET a") == Nil());
  CHECK(h.Cmd("EXEC") == Arr({Ok()}));
  CHECK(other.Cmd("GET a") == Bulk("1"));
}

TEST_CASE("runtime errors inside EXEC are replies; the other commands still apply") {
  Harness h;
  MakeNonString(h, "conc");
  CHECK(h.Cmd("MULTI") == Ok());
  CHECK(h.Cmd("SET a 1") == kQueued);
  CHECK(h.Cmd("INCR conc") == kQueued);
  CHECK(h.Cmd("SET b x XX NX") == kQueued);
  CHECK(h.Cmd("INCR a") == kQueued);
  CHECK(h.Cmd("EXEC") == Arr({Ok(), WrongTypeErr(), SyntaxErr(), Int(2)}));
  CHECK(h.Cmd("GET a") == Bulk("2"));
}

TEST_CASE("a command refused while queuing dooms the transaction") {
  Harness h;
  CHECK(h.Cmd("MULTI") == Ok());
  CHECK(h.Cmd("SET a 1") == kQueued);
  CHECK(h.Cmd("NOSUCH x") == Err("ERR unknown command 'NOSUCH', with args beginning with: 'x' "));
  CHECK(h.Cmd("GET") == ArityErr("get"));
  CHECK(h.Cmd("SHUTDOWN") == Err("ERR Command not allowed inside a transaction"));
  CHECK(h.Cmd("EXEC") == kExecAbort);
  CHECK(h.Cmd("GET a") == Nil());
  CHECK(h.Cmd("EXEC") == Err("ERR EXEC without MULTI"));  // the transaction is over
}

TEST_CASE("MULTI/EXEC/DISCARD/WATCH misuse gets Redis's errors") {
  Harness h;
  CHECK(h.Cmd("EXEC") == Err("ERR EXEC without MULTI"));
  CHECK(h.Cmd("DISCARD") == Err("ERR DISCARD without MULTI"));
  CHECK(h.Cmd("MULTI") == Ok());
  CHECK(h.Cmd("MULTI") == Err("ERR MULTI calls can not be nested"));
  CHECK(h.Cmd("WATCH x") == Err("ERR WATCH inside MULTI is not allowed"));
  CHECK(h.Cmd("UNWATCH") == kQueued);   // queued, as in Redis
  CHECK(h.Cmd("EXEC") == Arr({Ok()}));  // neither error doomed it
  CHECK(h.Cmd("EXEC x") ==
        "-EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' "
        "command\r\n");
  CHECK(h.Cmd("MULTI x") == ArityErr("multi"));
  CHECK(h.Cmd("WATCH") == ArityErr("watch"));
}

TEST_CASE("DISCARD drops the queue") {
  Harness h;
  CHECK(h.Cmd("MULTI") == Ok());
  CHECK(h.Cmd("SET k v") == kQueued);
  CHECK(h.Cmd("DISCARD") == Ok());
  CHECK(h.Cmd("GET k") == Nil());
  CHECK(h.Cmd("EXEC") == Err("ERR EXEC without MULTI"));
}

TEST_CASE("SELECT inside MULTI changes the database of the commands after it") {
  Harness h;
  CHECK(h.Cmd("MULTI") == Ok());
  CHECK(h.Cmd("SELECT 3") == kQueued);
  CHECK(h.Cmd("SET k v") == kQueued);
  CHECK(h.Cmd("EXEC") == Arr({Ok(), Ok()}));
  CHECK(h.Cmd("GET k") == Bulk("v"));
  CHECK(h.Cmd("SELECT 0") == Ok());
  CHECK(h.Cmd("GET k") == Nil());
}

TEST_CASE("EXPIRE 0 and FLUSHDB inside EXEC are seen by the commands after them") {
  Harness h;
  CHECK(h.Cmd("SET old 1") == Ok());
  CHECK(h.Cmd("MULTI") == Ok());
  CHECK(h.Cmd("SET m 1") == kQueued);
  CHECK(h.Cmd("EXPIRE m 0") == kQueued);
  CHECK(h.Cmd("GET m") == kQueued);
  CHECK(h.Cmd("SET f 1") == kQueued);
  CHECK(h.Cmd("FLUSHDB") == kQueued);
  CHECK(h.Cmd("GET f") == kQueued);
  CHECK(h.Cmd("SET g 2") == kQueued);
  CHECK(h.Cmd("KEYS *") == kQueued);
  CHECK(h.Cmd("DBSIZE") == kQueued);
  CHECK(h.Cmd("EXEC") ==
        Arr({Ok(), Int(1), Nil(), Ok(), Ok(), Nil(), Ok(), Arr({Bulk("g")}), Int(1)}));
  CHECK(h.Cmd("KEYS *") == Arr({Bulk("g")}));
}

TEST_CASE("limiter commands inside MULTI share the transaction's time and state") {
  Harness h;
  CHECK(h.Cmd("MULTI") == Ok());
  for (int i = 0; i < 3; ++i) CHECK(h.Cmd("GCRA.TAKE k 2 1s") == kQueued);
  const std::string reply = h.Cmd("EXEC");
  CHECK(reply == Arr({Arr({Int(1), Int(1), Int(0), Int(500), Int(2)}),
                      Arr({Int(1), Int(0), Int(0), Int(1000), Int(2)}),
                      Arr({Int(0), Int(0), Int(500), Int(1000), Int(2)})}));
  CHECK(h.Cmd("GCRA.TAKE k 2 1s") == Arr({Int(0), Int(0), Int(500), Int(1000), Int(2)}));
}

TEST_CASE("EXEC under RESP3 replies with an array of RESP3 replies, and _ when aborted") {
  Harness h;
  h.Resp3();
  Other other(h);
  CHECK(h.Cmd("MULTI") == Ok());
  CHECK(h.Cmd("GET nothing") == kQueued);
  CHECK(h.Cmd("EXEC") == Arr({Null()}));
  CHECK(h.Cmd("WATCH w") == Ok());
  CHECK(other.Cmd("SET w 1") == Ok());
  CHECK(h.Cmd("MULTI") == Ok());
  CHECK(h.Cmd("SET a 1") == kQueued);
  CHECK(h.Cmd("EXEC") == Null());
}

TEST_CASE("WATCH: a write by anyone, a delete or an expiry since makes EXEC return nil") {
  Harness h;
  Other other(h);
  SUBCASE("another client writes") {
    CHECK(h.Cmd("WATCH w") == Ok());
    CHECK(other.Cmd("SET w 1") == Ok());
  }
  SUBCASE("the same client writes") {
    CHECK(h.Cmd("WATCH w") == Ok());
    CHECK(h.Cmd("SET w 1") == Ok());
  }
  SUBCASE("a delete") {
    CHECK(h.Cmd("SET w 1") == Ok());
    CHECK(h.Cmd("WATCH w") == Ok());
    CHECK(other.Cmd("DEL w") == Int(1));
  }
  SUBCASE("a limiter take") {
    CHECK(h.Cmd("WATCH w") == Ok());
    CHECK(other.Cmd("GCRA.TAKE w 5 1s").substr(0, 8) == "*5\r\n:1\r\n");
  }
  SUBCASE("an expiry") {
    CHECK(h.Cmd("SET w 1 PX 100") == Ok());
    CHECK(h.Cmd("WATCH w") == Ok());
    h.AdvanceMs(101);
  }
  SUBCASE("FLUSHDB of a key that existed") {
    CHECK(h.Cmd("SET w 1") == Ok());
    CHECK(h.Cmd("WATCH w") == Ok());
    CHECK(other.Cmd("FLUSHDB") == Ok());
  }
  // A consumer group's read and acknowledgement change the stream key (Redis signals it), though
  // the stream's own entries and metadata stay as they were.
  SUBCASE("XREADGROUP and XACK on a watched stream") {
    CHECK(h.Cmd("XADD w 1-1 f v") == Bulk("1-1"));
    CHECK(h.Cmd("XGROUP CREATE w g 0") == Ok());
    CHECK(h.Cmd("WATCH w") == Ok());
    CHECK(other.Cmd("XREADGROUP GROUP g c COUNT 1 STREAMS w >") ==
          Arr({Arr({Bulk("w"), Arr({Arr({Bulk("1-1"), Arr({Bulk("f"), Bulk("v")})})})})}));
    CHECK(h.Cmd("MULTI") == Ok());
    CHECK(h.Cmd("SET a 1") == kQueued);
    CHECK(h.Cmd("EXEC") == NilArray());
    CHECK(h.Cmd("WATCH w") == Ok());
    CHECK(other.Cmd("XACK w g 1-1") == Int(1));
  }
  SUBCASE("XCLAIM on a watched stream") {
    CHECK(h.Cmd("XADD w 1-1 f v") == Bulk("1-1"));
    CHECK(h.Cmd("XGROUP CREATE w g 0") == Ok());
    CHECK(h.Cmd("XREADGROUP GROUP g c COUNT 1 STREAMS w >").substr(0, 4) == "*1\r\n");
    CHECK(h.Cmd("WATCH w") == Ok());
    CHECK(other.Cmd("XCLAIM w g c2 0 1-1 JUSTID") == Arr({Bulk("1-1")}));
  }
  CHECK(h.Cmd("MULTI") == Ok());
  CHECK(h.Cmd("SET a 1") == kQueued);
  CHECK(h.Cmd("EXEC") == NilArray());
  CHECK(h.Cmd("GET a") == Nil());
  // The watch ends with EXEC: the next transaction runs.
  CHECK(h.Cmd("MULTI") == Ok());
  CHECK(h.Cmd("SET a 1") == kQueued);
  CHECK(h.Cmd("EXEC") == Arr({Ok()}));
}

TEST_CASE("WATCH: untouched keys, UNWATCH, DISCARD and a flush of a missing key let EXEC run") {
  Harness h;
  Other other(h);
  SUBCASE("nothing happened") { CHECK(h.Cmd("WATCH w v") == Ok()); }
  SUBCASE("another key was written") {
    CHECK(h.Cmd("WATCH w") == Ok());
    CHECK(other.Cmd("SET v 1") == Ok());
  }
  SUBCASE("UNWATCH") {
    CHECK(h.Cmd("WATCH w") == Ok());
    CHECK(h.Cmd("UNWATCH") == Ok());
    CHECK(other.Cmd("SET w 1") == Ok());
  }
  SUBCASE("DISCARD") {
    CHECK(h.Cmd("WATCH w") == Ok());
    CHECK(h.Cmd("MULTI") == Ok());
    CHECK(h.Cmd("DISCARD") == Ok());
    CHECK(other.Cmd("SET w 1") == Ok());
  }
  SUBCASE("FLUSHDB of a key that did not exist") {
    CHECK(h.Cmd("WATCH w") == Ok());
    CHECK(other.Cmd("FLUSHDB") == Ok());
  }
  SUBCASE("a write in another database") {
    CHECK(h.Cmd("WATCH w") == Ok());
    CHECK(other.Cmd("SELECT 1") == Ok());
    CHECK(other.Cmd("SET w 1") == Ok());
  }
  CHECK(h.Cmd("MULTI") == Ok());
  CHECK(h.Cmd("SET a 1") == kQueued);
  CHECK(h.Cmd("EXEC") == Arr({Ok()}));
}

TEST_CASE("RESET leaves MULTI and forgets watched keys") {
  Harness h;
  Other other(h);
  CHECK(h.Cmd("WATCH w") == Ok());
  CHECK(h.Cmd("MULTI") == Ok());
  CHECK(h.Cmd("SET a 1") == kQueued);
  CHECK(h.Cmd("RESET") == Simple("RESET"));
  CHECK(h.Cmd("EXEC") == Err("ERR EXEC without MULTI"));
  CHECK(other.Cmd("SET w 1") == Ok());
  CHECK(h.Cmd("MULTI") == Ok());
  CHECK(h.Cmd("EXEC") == Arr({}));
}

TEST_CASE("EXEC in a batch joins the commit group, unless its client WATCHes keys") {
  CommitCounter counting;  // outlives the store
  Harness h;
  REQUIRE(h.store().AddCommitObserver(&counting).ok());
  // The batch's writes and the transaction's are one RocksDB write; each sees the earlier ones.
  CHECK(h.RunBatch({{"SET", "a", "1"},
                    {"MULTI"},
                    {"INCR", "a"},
                    {"INCR", "b"},
                    {"EXEC"},
                    {"MGET", "a", "b"}}) == std::vector<std::string>{Ok(), Ok(), kQueued, kQueued,
                                                                     Arr({Int(2), Int(1)}),
                                                                     Arr({Bulk("2"), Bulk("1")})});
  CHECK(counting.commits.load() == 1);
  // With a watched key the group is written before EXEC looks at the watch: the batch's own
  // write to the key (earlier in the same batch) fails the transaction, as on Redis.
  counting.commits = 0;
  CHECK(h.RunBatch({{"WATCH", "a"}, {"SET", "a", "5"}, {"MULTI"}, {"INCR", "a"}, {"EXEC"}}) ==
        std::vector<std::string>{Ok(), Ok(), Ok(), kQueued, NilArray()});
  CHECK(counting.commits.load() == 1);  // the SET; the EXEC wrote nothing
  // A command that needs every stripe runs alone, after the group's writes.
  counting.commits = 0;
  CHECK(h.RunBatch({{"SET", "c", "1"}, {"MULTI"}, {"DBSIZE"}, {"INCR", "c"}, {"EXEC"}}) ==
        std::vector<std::string>{Ok(), Ok(), kQueued, kQueued, Arr({Int(3), Int(2)})});
  CHECK(counting.commits.load() == 2);
  CHECK(h.Run({"GET", "c"}) == Bulk("2"));
}

TEST_CASE("COPY to another database inside MULTI locks its destination too") {
  Harness h;
  CHECK(h.Cmd("MULTI") == Ok());
  CHECK(h.Cmd("SET c 1") == kQueued);
  CHECK(h.Cmd("COPY c c2 DB 5") == kQueued);
  CHECK(h.Cmd("EXEC") == Arr({Ok(), Int(1)}));
  CHECK(h.Cmd("SELECT 5") == Ok());
  CHECK(h.Cmd("GET c2") == Bulk("1"));
}

}  // namespace sluice::server::testing
