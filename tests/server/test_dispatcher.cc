// The command table and the Dispatcher: lookup, arity, unknown command text, NOAUTH.
#include <doctest/doctest.h>

#include <string>
#include <thread>
#include <vector>

#include "server/commands/commands.h"
#include "server/core/command.h"
#include "server/core/errors.h"
#include "server/core/stat_counter.h"
#include "tests/server/harness.h"

namespace sluice::server::testing {

TEST_CASE("unknown command lists its first arguments as Redis 7.0 does") {
  Harness h;
  CHECK(h.Cmd("foo a b") == Err("ERR unknown command 'foo', with args beginning with: 'a' 'b' "));
  CHECK(h.Cmd("foo") == Err("ERR unknown command 'foo', with args beginning with: "));
  CHECK(h.Run({"FOO", "a b", "c"}) ==
        Err("ERR unknown command 'FOO', with args beginning with: 'a b' 'c' "));
}

TEST_CASE("unknown command text is cut at 128 characters like Redis's") {
  Harness h;
  std::string long_arg(200, 'x');
  // One argument: printed with at most 128 characters.
  CHECK(h.Run({"nope", long_arg, "second"}) ==
        Err("ERR unknown command 'nope', with args beginning with: '" + std::string(128, 'x') +
            "' "));
  // The list stops growing once it reaches 128 characters; the last one is cut to the room left.
  std::string a(100, 'a');
  std::string b(100, 'b');
  CHECK(h.Run({"nope", a, b, "c"}) ==
        Err("ERR unknown command 'nope', with args beginning with: '" + a + "' '" +
            std::string(25, 'b') + "' "));
  CHECK(h.Run({std::string(300, 'n')}) ==
        Err("ERR unknown command '" + std::string(128, 'n') + "', with args beginning with: "));
}

TEST_CASE("lookup is case-insensitive and arity is checked centrally") {
  Harness h;
  CHECK(h.Cmd("PiNg") == Simple("PONG"));
  CHECK(h.Cmd("ping a b") == Err("ERR wrong number of arguments for 'ping' command"));
  CHECK(h.Cmd("echo") == Err("ERR wrong number of arguments for 'echo' command"));
}

TEST_CASE("container commands resolve subcommands") {
  Harness h;
  CHECK(h.Cmd("config") == Err("ERR wrong number of arguments for 'config' command"));
  CHECK(h.Cmd("config foo") == Err("ERR unknown subcommand 'foo'. Try CONFIG HELP."));
  CHECK(h.Cmd("client foo") == Err("ERR unknown subcommand 'foo'. Try CLIENT HELP."));
  CHECK(h.Cmd("CONFIG GET") == Err("ERR wrong number of arguments for 'config|get' command"));
  CHECK(h.Cmd("client kill") == Err("ERR wrong number of arguments for 'client|kill' command"));
}

TEST_CASE("NOAUTH until AUTH when a password is set; unknown and arity come first") {
  Harness h;
  CHECK(h.Cmd("config set requirepass pw") == Ok());
  h.client().authenticated = false;
  CHECK(h.Cmd("ping") == Err("NOAUTH Authentication required."));
  CHECK(h.Cmd("get k") == Err("NOAUTH Authentication required."));
  CHECK(h.Cmd("foo") == Err("ERR unknown command 'foo', with args beginning with: "));
  CHECK(h.Cmd("get") == Err("ERR wrong number of arguments for 'get' command"));
  CHECK(h.Cmd("auth wrong") ==
        Err("WRONGPASS invalid username-password pair or user is disabled."));
  CHECK(h.Cmd("ping") == Err("NOAUTH Authentication required."));
  CHECK(h.Cmd("auth pw") == Ok());
  CHECK(h.Cmd("ping") == Simple("PONG"));
}

TEST_CASE("the dispatcher records the last command and counts commands") {
  Harness h;
  int64_t before = h.server().stats().total_commands_processed.load();
  h.Cmd("ping");
  h.Cmd("client id");
  REQUIRE(h.client().last_command.load() != nullptr);
  CHECK(*h.client().last_command.load() == "client|id");
  CHECK(h.server().stats().total_commands_processed.load() == before + 2);
}

TEST_CASE("a StatCounter sums every thread's adds; store resets it") {
  StatCounter counter;
  std::vector<std::thread> threads;
  // More threads than shards: some share one.
  for (size_t t = 0; t < StatCounter::kShards + 4; ++t) {
    threads.emplace_back([&counter, t] {
      for (int i = 0; i < 10000; ++i) counter.fetch_add(static_cast<int64_t>(t));
    });
  }
  for (auto& th : threads) th.join();
  int64_t want = 0;
  for (size_t t = 0; t < StatCounter::kShards + 4; ++t) want += 10000 * static_cast<int64_t>(t);
  CHECK(counter.load() == want);
  counter.store(7);
  CHECK(counter.load() == 7);
  counter.fetch_add(-2);
  CHECK(counter.load() == 5);
}

TEST_CASE("ReplyError maps every status code to Redis's text") {
  std::string buf;
  protocol::ReplyWriter out(&buf);
  auto text = [&](const Status& s) {
    buf.clear();
    ReplyError(out, s);
    return buf;
  };
  CHECK(text(Status::WrongType()) ==
        Err("WRONGTYPE Operation against a key holding the wrong kind of value"));
  CHECK(text(Status::NotInteger()) == Err("ERR value is not an integer or out of range"));
  CHECK(text(Status::NotFloat()) == Err("ERR value is not a valid float"));
  CHECK(text(Status::Overflow()) == Err("ERR increment or decrement would overflow"));
  CHECK(text(Status::NoSuchKey()) == Err("ERR no such key"));
  CHECK(text(Status::InvalidArgument("bad thing")) == Err("ERR bad thing"));
  CHECK(text(Status::InvalidArgument("NOAUTH x y")) == Err("NOAUTH x y"));
  CHECK(text(Status::IOError("disk full")) == Err("ERR disk full"));
  CHECK(text(SyntaxError()) == Err("ERR syntax error"));
  CHECK(text(InvalidExpireTime("set")) == Err("ERR invalid expire time in 'set' command"));
  CHECK(text(DbIndexOutOfRange()) == Err("ERR DB index is out of range"));
  CHECK(text(ConfigSetImmutable("port")) ==
        Err("ERR CONFIG SET failed (possibly related to argument 'port') - can't set immutable "
            "config"));
}

TEST_CASE("CommandTable::Find") {
  CommandTable table;
  RegisterAllCommands(table);
  REQUIRE(table.Find("PING") != nullptr);
  CHECK(table.Find("PING")->name == "ping");
  CHECK(table.Find("nosuch") == nullptr);
  CHECK(table.Find("") == nullptr);
  CHECK(table.Find("config|get") != nullptr);
  CHECK(ArityOk(*table.Find("ping"), 1));
  CHECK(ArityOk(*table.Find("ping"), 2));
  CHECK(!ArityOk(*table.Find("echo"), 1));
}

// Find remembers the last name it found on each thread: lookups that alternate between tables
// holding a name at different positions, copies that diverge, and other cases of one name
// still find each table's own command.
TEST_CASE("CommandTable::Find across tables, copies and cases") {
  auto spec = [](const char* name, int arity) {
    return MakeSpec("test", name, arity, 0, {}, nullptr, "", "", "");
  };
  CommandTable a;
  a.Add(spec("one", 1));
  a.Add(spec("two", 2));
  CommandTable b;
  b.Add(spec("two", 3));
  CommandTable c = a;  // copies, then diverge
  c.Add(spec("three", 4));
  a.Add(spec("four", 5));
  for (int round = 0; round < 2; ++round) {
    REQUIRE(a.Find("two") != nullptr);
    CHECK(a.Find("two")->arity == 2);
    REQUIRE(b.Find("two") != nullptr);
    CHECK(b.Find("two")->arity == 3);
    CHECK(a.Find("TWO")->arity == 2);
    CHECK(b.Find("Two")->arity == 3);
    REQUIRE(c.Find("three") != nullptr);
    CHECK(c.Find("three")->arity == 4);
    CHECK(a.Find("three") == nullptr);
    REQUIRE(a.Find("four") != nullptr);
    CHECK(a.Find("four")->arity == 5);
    CHECK(c.Find("four") == nullptr);
  }
}

}  // namespace sluice::server::testing
