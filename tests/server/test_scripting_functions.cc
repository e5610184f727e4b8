// FUNCTION and FCALL through the real dispatcher and Store. Expected replies were checked
// against redis-server 7.0.15 (tests/blackbox/test_scripting.py compares the two side by side).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/server/harness.h"

namespace sluice::server::testing {

namespace {

const std::string kLib =
    "#!lua name=mylib\n"
    "redis.register_function('incr2', function(keys, args) "
    "return redis.call('incrby', keys[1], args[1]) end)\n"
    "redis.register_function{function_name='peek', callback=function(keys) "
    "return redis.call('get', keys[1]) end, flags={'no-writes'}, description='reads'}";

}  // namespace

TEST_CASE("FUNCTION LOAD then FCALL and FCALL_RO") {
  Harness h;
  CHECK(h.Run({"FUNCTION", "LOAD", kLib}) == Bulk("mylib"));
  CHECK(h.Run({"FCALL", "incr2", "1", "n", "5"}) == Int(5));
  CHECK(h.Run({"FCALL", "incr2", "1", "n", "2"}) == Int(7));
  CHECK(h.Run({"FCALL_RO", "peek", "1", "n"}) == Bulk("7"));
  CHECK(h.Run({"FCALL_RO", "incr2", "1", "n", "1"}) ==
        Err("ERR Can not execute a script with write flag using *_ro command."));
  CHECK(h.Run({"FCALL", "nope", "0"}) == Err("ERR Function not found"));
  // Names are case-insensitive, as Redis's function dictionary.
  CHECK(h.Run({"FCALL", "INCR2", "1", "n", "0"}) == Int(7));
  CHECK(h.Run({"FCALL_RO", "Peek", "1", "n"}) == Bulk("7"));
  CHECK(h.Run({"FUNCTION", "LOAD",
               "#!lua name=other\nredis.register_function('Incr2', function() return 1 end)"}) ==
        Err("ERR Function Incr2 already exists"));
  CHECK(h.Run({"FCALL", "incr2", "-1"}) == Err("ERR Number of keys can't be negative"));
  CHECK(h.Run({"FCALL", "incr2", "3", "a"}) ==
        Err("ERR Number of keys can't be greater than number of args"));
  CHECK(h.Run({"FUNCTION", "LOAD", kLib}) == Err("ERR Library 'mylib' already exists"));
  CHECK(h.Run({"FUNCTION", "LOAD", "REPLACE", kLib}) == Bulk("mylib"));
  CHECK(h.Run({"FUNCTION", "LOAD",
               "#!lua name=other\nredis.register_function('peek', "
               "function() return 1 end)"}) == Err("ERR Function peek already exists"));
}

TEST_CASE("FUNCTION LOAD errors are Redis 7.0's") {
  Harness h;
  CHECK(h.Run({"FUNCTION", "LOAD", "return 1"}) == Err("ERR Missing library metadata"));
  CHECK(h.Run({"FUNCTION", "LOAD", "#!lua\nreturn 1"}) == Err("ERR Library name was not given"));
  CHECK(h.Run({"FUNCTION", "LOAD", "#!lu name=x\nreturn 1"}) == Err("ERR Engine 'lu' not found"));
  CHECK(h.Run({"FUNCTION", "LOAD", "#!lua name=x\nreturn 1"}) ==
        Err("ERR No functions registered"));
  CHECK(h.Run({"FUNCTION", "LOAD",
               "#!lua name=x\nredis.register_function('f', function() end) "
               "redis.call('ping')"}) ==
        Err("ERR Error registering functions: ERR user_function:2: Script attempted to access "
            "nonexistent global variable 'call'"));
  CHECK(h.Run({"FUNCTION", "LOAD", "#!lua name=x\nreturn +"}) ==
        Err("ERR Error compiling function: user_function:2: unexpected symbol near '+'"));
  CHECK(h.Run({"FUNCTION", "LOAD",
               "#!lua name=x\nredis.register_function('f', function() end) "
               "redis.register_function('f', function() end)"}) ==
        Err("ERR Error registering functions: ERR Function already exists in the library"));
  CHECK(h.Run({"FUNCTION", "LOAD", "FOO", "x"}) == Err("ERR Unknown option given: FOO"));
  CHECK(h.Run({"FUNCTION", "LIST"}) == Arr({}));  // nothing half loaded
}

TEST_CASE("FUNCTION LIST, STATS, DELETE, FLUSH, DUMP and RESTORE") {
  Harness h;
  REQUIRE(h.Run({"FUNCTION", "LOAD", kLib}) == Bulk("mylib"));
  const std::string fn_incr2 =
      Arr({Bulk("name"), Bulk("incr2"), Bulk("description"), Nil(), Bulk("flags"), Arr({})});
  const std::string fn_peek = Arr({Bulk("name"), Bulk("peek"), Bulk("description"), Bulk("reads"),
                                   Bulk("flags"), Arr({Simple("no-writes")})});
  CHECK(h.Run({"FUNCTION", "LIST"}) ==
        Arr({Arr({Bulk("library_name"), Bulk("mylib"), Bulk("engine"), Bulk("LUA"),
                  Bulk("functions"), Arr({fn_incr2, fn_peek})})}));
  CHECK(h.Run({"FUNCTION", "LIST", "LIBRARYNAME", "other*"}) == Arr({}));
  CHECK(h.Run({"FUNCTION", "LIST", "WITHCODE"}).find(Bulk(kLib)) != std::string::npos);
  CHECK(h.Run({"FUNCTION", "STATS"}) ==
        Arr({Bulk("running_script"), Nil(), Bulk("engines"),
             Arr({Bulk("LUA"),
                  Arr({Bulk("libraries_count"), Int(1), Bulk("functions_count"), Int(2)})})}));
  const std::string dump = h.Run({"FUNCTION", "DUMP"});
  REQUIRE(dump[0] == '$');
  const std::string payload =
      dump.substr(dump.find("\r\n") + 2, dump.size() - dump.find("\r\n") - 4);
  CHECK(h.Run({"FUNCTION", "DELETE", "mylib"}) == Ok());
  CHECK(h.Run({"FUNCTION", "DELETE", "mylib"}) == Err("ERR Library not found"));
  CHECK(h.Run({"FCALL", "peek", "1", "n"}) == Err("ERR Function not found"));
  CHECK(h.Run({"FUNCTION", "RESTORE", payload}) == Ok());
  CHECK(h.Run({"FUNCTION", "RESTORE", payload}) == Err("ERR Library mylib already exists"));
  CHECK(h.Run({"FUNCTION", "RESTORE", payload, "REPLACE"}) == Ok());
  CHECK(h.Run({"FUNCTION", "RESTORE", "garbage"}) ==
        Err("ERR DUMP payload version or checksum are wrong"));
  CHECK(h.Run({"FCALL", "incr2", "1", "n", "3"}) == Int(3));
  CHECK(h.Run({"FUNCTION", "FLUSH", "bad"}) ==
        Err("ERR FUNCTION FLUSH only supports SYNC|ASYNC option"));
  CHECK(h.Run({"FUNCTION", "FLUSH"}) == Ok());
  CHECK(h.Run({"FUNCTION", "LIST"}) == Arr({}));
  CHECK(h.Run({"FUNCTION", "KILL"}) == "-NOTBUSY No scripts in execution right now.\r\n");
}

TEST_CASE("function errors carry the function's name and position") {
  Harness h;
  REQUIRE(h.Run({"FUNCTION", "LOAD",
                 "#!lua name=x\nredis.register_function('f', function() return x end)"}) ==
          Bulk("x"));
  CHECK(h.Run({"FCALL", "f", "0"}) ==
        "-ERR user_function:2: Script attempted to access nonexistent global variable 'x' "
        "script: f, on @user_function:2.\r\n");
}

namespace {

int64_t InfoField(const std::string& info, const std::string& name) {
  const size_t at = info.find("\r\n" + name + ":");
  REQUIRE(at != std::string::npos);
  return std::stoll(info.substr(at + name.size() + 3));
}

}  // namespace

TEST_CASE("INFO memory counts the EVAL and the function Lua states apart, as Redis") {
  Harness h;
  CHECK(h.Run({"FUNCTION", "LOAD", kLib}) == Bulk("mylib"));
  CHECK(h.Run({"FCALL", "incr2", "1", "n", "1"}) == Int(1));  // this thread's functions state
  CHECK(h.Run({"EVAL", "return 1", "0"}) == Int(1));
  const std::string info = h.Run({"INFO", "memory"});
  const int64_t eval = InfoField(info, "used_memory_lua");
  const int64_t functions = InfoField(info, "used_memory_vm_functions");
  CHECK(eval > 0);
  CHECK(functions > 0);
  CHECK(InfoField(info, "used_memory_vm_eval") == eval);
  CHECK(InfoField(info, "used_memory_vm_total") == eval + functions);
}

}  // namespace sluice::server::testing
