// SLOWLOG through the dispatcher (which calls are logged) and the arguments MONITOR and SLOWLOG
// redact (server/core/redaction.h), by Redis 7.0's rules; tests/blackbox/test_surface.py and
// test_monitor.py compare both with redis-server.
#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "server/core/redaction.h"
#include "server/core/slowlog.h"
#include "tests/server/harness.h"

namespace sluice::server::testing {

namespace {

// Each argument, or "*" where it is redacted.
std::vector<std::string> Shown(std::vector<std::string_view> args) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    out.push_back(RedactedArgument(args, i) ? "*" : std::string(args[i]));
  }
  return out;
}

using V = std::vector<std::string>;

}  // namespace

TEST_CASE("AUTH and HELLO AUTH hide their credentials") {
  CHECK(Shown({"AUTH", "pw"}) == V{"AUTH", "*"});
  CHECK(Shown({"auth", "user", "pw"}) == V{"auth", "*", "*"});
  CHECK(Shown({"AUTH", "a", "b", "c"}) == V{"AUTH", "*", "*", "*"});  // Redis shows these
  CHECK(Shown({"HELLO", "3", "AUTH", "u", "p", "SETNAME", "n"}) ==
        V{"HELLO", "3", "AUTH", "*", "*", "SETNAME", "n"});
  CHECK(Shown({"HELLO", "3", "SETNAME", "auth", "AUTH", "u", "p"}) ==
        V{"HELLO", "3", "SETNAME", "auth", "AUTH", "*", "*"});
  CHECK(Shown({"HELLO", "3", "AUTH", "u"}) == V{"HELLO", "3", "AUTH", "u"});  // no pair: refused
  CHECK(Shown({"HELLO"}) == V{"HELLO"});
}

TEST_CASE("ACL SETUSER hides every argument from the username on") {
  CHECK(Shown({"ACL", "SETUSER", "bob", "on", ">pw"}) == V{"ACL", "SETUSER", "*", "*", "*"});
  CHECK(Shown({"acl", "setuser", "bob"}) == V{"acl", "setuser", "*"});
  CHECK(Shown({"ACL", "DELUSER", "bob"}) == V{"ACL", "DELUSER", "bob"});
  CHECK(Shown({"ACL", "SETUSER"}) == V{"ACL", "SETUSER"});
}

TEST_CASE("CONFIG SET hides the values of masteruser, masterauth and requirepass") {
  CHECK(Shown({"CONFIG", "SET", "requirepass", "pw", "maxmemory", "1", "MasterAuth", "x"}) ==
        V{"CONFIG", "SET", "requirepass", "*", "maxmemory", "1", "MasterAuth", "*"});
  CHECK(Shown({"CONFIG", "SET", "masteruser", "u"}) == V{"CONFIG", "SET", "masteruser", "*"});
  // An arity error comes first: nothing to hide, as Redis.
  CHECK(Shown({"CONFIG", "SET", "requirepass"}) == V{"CONFIG", "SET", "requirepass"});
  CHECK(Shown({"CONFIG", "GET", "requirepass", "x"}) == V{"CONFIG", "GET", "requirepass", "x"});
}

TEST_CASE("MIGRATE hides AUTH's password and AUTH2's username and password") {
  CHECK(Shown({"MIGRATE", "h", "1", "k", "0", "5", "AUTH", "pw"}) ==
        V{"MIGRATE", "h", "1", "k", "0", "5", "AUTH", "*"});
  CHECK(Shown({"MIGRATE", "h", "1", "", "0", "5", "COPY", "AUTH2", "u", "p", "KEYS", "a"}) ==
        V{"MIGRATE", "h", "1", "", "0", "5", "COPY", "AUTH2", "*", "*", "KEYS", "a"});
  // A key named like an option is a key: options start at the sixth argument.
  CHECK(Shown({"MIGRATE", "h", "1", "AUTH", "0", "5"}) == V{"MIGRATE", "h", "1", "AUTH", "0", "5"});
  CHECK(Shown({"MIGRATE", "h", "1", "", "0", "5", "KEYS", "AUTH", "x"}) ==
        V{"MIGRATE", "h", "1", "", "0", "5", "KEYS", "AUTH", "x"});
  CHECK(Shown({"GET", "AUTH", "pw"}) == V{"GET", "AUTH", "pw"});
}

TEST_CASE("the slow log records secrets as (redacted)") {
  SlowLog log;
  const std::vector<std::string_view> args = {"CONFIG", "SET", "requirepass", "hunter2"};
  log.MaybeRecord(5, args, "127.0.0.1:1", "", 0, 10);
  const auto entries = log.Get(10);
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].args == V{"CONFIG", "SET", "requirepass", "(redacted)"});
}

TEST_CASE("SLOWLOG logs each command EXEC runs, not EXEC, and not what was only queued") {
  Harness h;
  CHECK(h.Run({"CONFIG", "SET", "slowlog-log-slower-than", "0"}) == Ok());
  CHECK(h.Run({"SLOWLOG", "RESET"}) == Ok());
  CHECK(h.Run({"MULTI"}) == Ok());
  CHECK(h.Run({"SET", "a", "1"}) == Simple("QUEUED"));
  CHECK(h.Run({"NOSUCH"}).rfind("-ERR unknown command", 0) == 0);  // rejected: never logged
  CHECK(h.Run({"DISCARD"}) == Ok());
  CHECK(h.Run({"MULTI"}) == Ok());
  CHECK(h.Run({"SET", "a", "1"}) == Simple("QUEUED"));
  CHECK(h.Run({"INCR", "a"}) == Simple("QUEUED"));
  CHECK(h.Run({"EXEC"}) == Arr({Ok(), Int(2)}));
  CHECK(h.Run({"EVAL", "return redis.call('get', 'a')", "0"}) == Bulk("2"));
  CHECK(h.Run({"CONFIG", "SET", "slowlog-log-slower-than", "-1"}) == Ok());
  std::vector<std::string> logged;
  for (const SlowLogEntry& e : h.server().slowlog().Get(100)) {
    std::string line;
    for (const std::string& a : e.args) line += (line.empty() ? "" : " ") + a;
    logged.push_back(line);
  }
  // Newest first; the script's own GET is not logged.
  CHECK(logged == V{"EVAL return redis.call('get', 'a') 0", "INCR a", "SET a 1", "MULTI", "DISCARD",
                    "MULTI", "SLOWLOG RESET"});
}

}  // namespace sluice::server::testing
