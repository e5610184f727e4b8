// HELLO, AUTH, SELECT, QUIT, RESET and CLIENT, byte for byte as Redis 7.0.15 replies.
#include <doctest/doctest.h>

#include <string>

#include "tests/server/harness.h"

namespace sluice::server::testing {

namespace {

// HELLO's map for this client, as Redis writes it.
std::string HelloReply(int proto, uint64_t id) {
  std::vector<std::string> kv = {Bulk("server"),  Bulk("redis"),
                                 Bulk("version"), Bulk("7.0.15"),
                                 Bulk("proto"),   Int(proto),
                                 Bulk("id"),      Int(static_cast<int64_t>(id)),
                                 Bulk("mode"),    Bulk("standalone"),
                                 Bulk("role"),    Bulk("master"),
                                 Bulk("modules"), Arr({})};
  if (proto == 3) return Map(kv);
  return Arr(kv);
}

void SetPassword(Harness& h, const std::string& pw) {
  REQUIRE(h.Run({"config", "set", "requirepass", pw}) == Ok());
  h.client().authenticated = false;  // as a client connecting now
}

}  // namespace

TEST_CASE("HELLO switches protocol and replies with Redis's map") {
  Harness h;
  uint64_t id = h.client().id;
  CHECK(h.Cmd("HELLO") == HelloReply(2, id));
  CHECK(h.Cmd("HELLO 3") == HelloReply(3, id));
  CHECK(h.client().resp == 3);
  CHECK(h.Cmd("HELLO") == HelloReply(3, id));
  CHECK(h.Cmd("HELLO 2") == HelloReply(2, id));
  CHECK(h.client().resp == 2);
}

TEST_CASE("HELLO errors") {
  Harness h;
  CHECK(h.Cmd("HELLO 4") == Err("NOPROTO unsupported protocol version"));
  CHECK(h.Cmd("HELLO 1") == Err("NOPROTO unsupported protocol version"));
  CHECK(h.Cmd("HELLO x") == Err("ERR Protocol version is not an integer or out of range"));
  CHECK(h.Cmd("HELLO 3 FOO") == Err("ERR Syntax error in HELLO option 'FOO'"));
  CHECK(h.Cmd("HELLO 3 AUTH a") == Err("ERR Syntax error in HELLO option 'AUTH'"));
  CHECK(h.Cmd("HELLO 3 SETNAME") == Err("ERR Syntax error in HELLO option 'SETNAME'"));
  CHECK(h.Run({"HELLO", "3", "SETNAME", "a b"}) ==
        Err("ERR Client names cannot contain spaces, newlines or special characters."));
  CHECK(h.client().resp == 2);
}

TEST_CASE("HELLO SETNAME and HELLO AUTH") {
  Harness h;
  CHECK(h.Cmd("HELLO 2 SETNAME nm") == HelloReply(2, h.client().id));
  CHECK(h.Cmd("CLIENT GETNAME") == Bulk("nm"));
  SetPassword(h, "pw");
  CHECK(h.Cmd("HELLO 3") ==
        Err("NOAUTH HELLO must be called with the client already authenticated, otherwise the "
            "HELLO AUTH <user> <pass> option can be used to authenticate the client and select "
            "the RESP protocol version at the same time"));
  CHECK(h.Cmd("HELLO 3 AUTH default x") ==
        Err("WRONGPASS invalid username-password pair or user is disabled."));
  CHECK(h.Cmd("HELLO 3 AUTH bob pw") ==
        Err("WRONGPASS invalid username-password pair or user is disabled."));
  CHECK(h.Cmd("HELLO 3 AUTH default pw") == HelloReply(3, h.client().id));
  CHECK(h.Cmd("PING") == Simple("PONG"));
}

TEST_CASE("AUTH without a password configured") {
  Harness h;
  CHECK(h.Cmd("AUTH x") ==
        Err("ERR AUTH <password> called without any password configured for the default user. "
            "Are you sure your configuration is correct?"));
  // The default user is "nopass": AUTH default <anything> succeeds, other users do not exist.
  CHECK(h.Cmd("AUTH default x") == Ok());
  CHECK(h.Cmd("AUTH bob x") ==
        Err("WRONGPASS invalid username-password pair or user is disabled."));
  CHECK(h.Cmd("AUTH a b c") == Err("ERR syntax error"));
  CHECK(h.Cmd("AUTH") == Err("ERR wrong number of arguments for 'auth' command"));
}

TEST_CASE("AUTH / NOAUTH flow with requirepass") {
  Harness h;
  SetPassword(h, "s3cret");
  CHECK(h.Cmd("GET k") == Err("NOAUTH Authentication required."));
  CHECK(h.Cmd("CLIENT ID") == Err("NOAUTH Authentication required."));
  CHECK(h.Cmd("AUTH nope") == Err("WRONGPASS invalid username-password pair or user is disabled."));
  CHECK(!h.client().authenticated);
  CHECK(h.Cmd("AUTH default nope") ==
        Err("WRONGPASS invalid username-password pair or user is disabled."));
  CHECK(h.Cmd("AUTH s3cret") == Ok());
  CHECK(h.Cmd("GET k") == Nil());
  // RESET drops authentication again.
  CHECK(h.Cmd("RESET") == Simple("RESET"));
  CHECK(h.Cmd("GET k") == Err("NOAUTH Authentication required."));
  CHECK(h.Cmd("AUTH default s3cret") == Ok());
  CHECK(h.Cmd("GET k") == Nil());
  // QUIT is allowed without authentication.
  h.client().authenticated = false;
  CHECK(h.Cmd("QUIT") == Ok());
  CHECK(h.client().close_after_reply);
}

TEST_CASE("SELECT range and errors") {
  Harness h;
  CHECK(h.Cmd("SELECT 15") == Ok());
  CHECK(h.client().db == 15);
  CHECK(h.Cmd("SELECT 0") == Ok());
  CHECK(h.Cmd("SELECT 16") == Err("ERR DB index is out of range"));
  CHECK(h.Cmd("SELECT -1") == Err("ERR DB index is out of range"));
  CHECK(h.Cmd("SELECT x") == Err("ERR value is not an integer or out of range"));
  CHECK(h.Cmd("SELECT 1.5") == Err("ERR value is not an integer or out of range"));
  CHECK(h.Cmd("SELECT 99999999999") == Err("ERR value is not an integer or out of range"));
  CHECK(h.Cmd("SELECT") == Err("ERR wrong number of arguments for 'select' command"));
  CHECK(h.client().db == 0);
}

TEST_CASE("SELECT isolates keys per database") {
  Harness h;
  CHECK(h.Cmd("SET k zero") == Ok());
  CHECK(h.Cmd("SELECT 3") == Ok());
  CHECK(h.Cmd("GET k") == Nil());
  CHECK(h.Cmd("DBSIZE") == Int(0));
  CHECK(h.Cmd("SELECT 0") == Ok());
  CHECK(h.Cmd("GET k") == Bulk("zero"));
}

TEST_CASE("RESET returns to RESP2, db 0 and no name") {
  Harness h;
  h.Cmd("HELLO 3 SETNAME n");
  h.Cmd("SELECT 4");
  CHECK(h.Cmd("RESET") == Simple("RESET"));
  CHECK(h.client().resp == 2);
  CHECK(h.client().db == 0);
  CHECK(h.Cmd("CLIENT GETNAME") == Nil());
}

TEST_CASE("CLIENT ID, SETNAME, GETNAME") {
  Harness h;
  CHECK(h.Cmd("CLIENT ID") == Int(static_cast<int64_t>(h.client().id)));
  CHECK(h.Cmd("CLIENT GETNAME") == Nil());
  CHECK(h.Cmd("CLIENT SETNAME worker-1") == Ok());
  CHECK(h.Cmd("CLIENT GETNAME") == Bulk("worker-1"));
  CHECK(h.Run({"CLIENT", "SETNAME", "a b"}) ==
        Err("ERR Client names cannot contain spaces, newlines or special characters."));
  CHECK(h.Run({"CLIENT", "SETNAME", "a\nb"}) ==
        Err("ERR Client names cannot contain spaces, newlines or special characters."));
  CHECK(h.Run({"CLIENT", "SETNAME", ""}) == Ok());
  CHECK(h.Cmd("CLIENT GETNAME") == Nil());
  CHECK(h.Cmd("CLIENT SETNAME") ==
        Err("ERR wrong number of arguments for 'client|setname' command"));
  CHECK(h.Cmd("CLIENT ID x") == Err("ERR wrong number of arguments for 'client|id' command"));
}

TEST_CASE("CLIENT SETINFO") {
  Harness h;
  CHECK(h.Cmd("CLIENT SETINFO LIB-NAME redis-py") == Ok());
  CHECK(h.Cmd("CLIENT SETINFO lib-ver 5.0.1") == Ok());
  CHECK(h.client().lib_name == "redis-py");
  CHECK(h.client().lib_ver == "5.0.1");
  CHECK(h.Cmd("CLIENT SETINFO FOO x") == Err("ERR Unrecognized option 'FOO'"));
  CHECK(h.Run({"CLIENT", "SETINFO", "LIB-NAME", "a b"}) ==
        Err("ERR lib-name cannot contain spaces, newlines or special characters."));
}

TEST_CASE("CLIENT LIST and CLIENT INFO use Redis's line format") {
  Harness h;
  h.Cmd("CLIENT SETNAME me");
  h.Cmd("CLIENT SETINFO LIB-NAME lib");
  h.Cmd("SELECT 2");
  std::string id = std::to_string(h.client().id);
  std::string line = "id=" + id +
                     " addr=127.0.0.1:50000 laddr=127.0.0.1:6379 fd=-1 name=me age=0 idle=0 "
                     "flags=N db=2 sub=0 psub=0 ssub=0 multi=-1 qbuf=0 qbuf-free=0 argv-mem=0 "
                     "multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 events=r "
                     "cmd=client|list user=default redir=-1 resp=2 lib-name=lib lib-ver=\n";
  CHECK(h.Cmd("CLIENT LIST") == Bulk(line));
  CHECK(h.Cmd("CLIENT LIST TYPE normal") == Bulk(line));
  CHECK(h.Cmd("CLIENT LIST TYPE pubsub") == Bulk(""));
  CHECK(h.Cmd("CLIENT LIST ID " + id + " 999") == Bulk(line));
  CHECK(h.Cmd("CLIENT LIST ID 999") == Bulk(""));
  std::string info = line;
  info.replace(info.find("cmd=client|list"), 15, "cmd=client|info");
  CHECK(h.Cmd("CLIENT INFO") == Bulk(info));
  CHECK(h.Cmd("CLIENT LIST TYPE x") == Err("ERR Unknown client type 'x'"));
  CHECK(h.Cmd("CLIENT LIST ID 1 x") == Err("ERR Invalid client ID"));
  CHECK(h.Cmd("CLIENT LIST x") == Err("ERR syntax error"));
  h.Resp3();
  CHECK(h.Cmd("CLIENT INFO").rfind("=" + std::to_string(info.size() + 4) + "\r\ntxt:", 0) == 0);
}

TEST_CASE("CLIENT KILL by address and filters") {
  Harness h;
  ClientState other;
  other.id = h.server().clients().NextId();
  other.addr = "10.0.0.1:1234";
  other.laddr = "127.0.0.1:6379";
  int kills = 0;
  h.server().clients().Add(&other, [&kills] { ++kills; });
  CHECK(h.Cmd("CLIENT KILL 1.2.3.4:5") == Err("ERR No such client"));
  CHECK(h.Cmd("CLIENT KILL 10.0.0.1:1234") == Ok());
  CHECK(kills == 1);
  CHECK(other.kill_requested.load());
  CHECK(h.Cmd("CLIENT KILL ID 0") == Err("ERR client-id should be greater than 0"));
  CHECK(h.Cmd("CLIENT KILL ID abc") == Err("ERR client-id should be greater than 0"));
  CHECK(h.Cmd("CLIENT KILL ID 99999") == Int(0));
  CHECK(h.Cmd("CLIENT KILL ID " + std::to_string(other.id)) == Int(1));
  CHECK(h.Cmd("CLIENT KILL LADDR 127.0.0.1:6379") == Int(1));  // SKIPME yes by default
  CHECK(h.Cmd("CLIENT KILL ADDR 10.0.0.1:1234 SKIPME x") == Err("ERR syntax error"));
  CHECK(h.Cmd("CLIENT KILL USER x") == Err("ERR No such user 'x'"));
  CHECK(h.Cmd("CLIENT KILL TYPE x") == Err("ERR Unknown client type 'x'"));
  CHECK(h.Cmd("CLIENT KILL TYPE pubsub") == Int(0));
  CHECK(h.Cmd("CLIENT KILL FOO x") == Err("ERR syntax error"));
  CHECK(h.Cmd("CLIENT KILL ID 1 SKIPME") == Err("ERR syntax error"));
  CHECK(kills == 3);
  CHECK(!h.client().close_after_reply);
  // Killing yourself closes after the reply.
  CHECK(h.Cmd("CLIENT KILL ID " + std::to_string(h.client().id) + " SKIPME no") == Int(1));
  CHECK(h.client().close_after_reply);
  h.server().clients().Remove(&other);
}

TEST_CASE("CLIENT NO-EVICT, REPLY, PAUSE, HELP and unknown subcommands") {
  Harness h;
  CHECK(h.Cmd("CLIENT NO-EVICT on") == Ok());
  CHECK(h.Cmd("CLIENT NO-EVICT off") == Ok());
  CHECK(h.Cmd("CLIENT NO-EVICT x") == Err("ERR syntax error"));
  CHECK(h.Cmd("CLIENT NO-EVICT") ==
        Err("ERR wrong number of arguments for 'client|no-evict' command"));
  CHECK(h.Cmd("CLIENT REPLY ON") == Ok());
  CHECK(h.Cmd("CLIENT REPLY OFF").empty());  // no reply: the connection drops what follows
  CHECK(h.client().reply_off);
  CHECK(h.Cmd("CLIENT REPLY ON") == Ok());
  CHECK_FALSE(h.client().reply_off);
  CHECK(h.Cmd("CLIENT REPLY SKIP").empty());
  CHECK(h.client().reply_skip_next);
  CHECK(h.Cmd("CLIENT REPLY foo") == Err("ERR syntax error"));
  CHECK(h.Cmd("CLIENT HELP").rfind("*38\r\n+CLIENT <subcommand>", 0) == 0);
  CHECK(h.Cmd("CLIENT PAUSE 0") == Ok());
  CHECK(h.Cmd("CLIENT PAUSE 1 BOTH") == Err("ERR CLIENT PAUSE mode must be WRITE or ALL"));
  CHECK(h.Cmd("CLIENT UNPAUSE") == Ok());
  CHECK(h.Cmd("CLIENT BOGUS 1") == Err("ERR unknown subcommand 'BOGUS'. Try CLIENT HELP."));
}

}  // namespace sluice::server::testing
