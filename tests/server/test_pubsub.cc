// Pub/sub through the dispatcher (several clients of one server, in-process) and the pieces
// under it: the ClientOutbox and the PubSubRegistry. Byte for byte as Redis 7.0.15 replies;
// the side-by-side comparison with redis-server is tests/blackbox/test_pubsub.py.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "server/core/client_outbox.h"
#include "server/core/monitors.h"
#include "server/pubsub/pubsub_registry.h"
#include "tests/server/harness.h"

namespace sluice::server::testing {

namespace {

// A second client of the harness's server.
struct OtherClient {
  explicit OtherClient(Harness& h) : h(h), dispatcher(h.table()) { client.id = 1000 + ++count; }
  std::string Run(std::vector<std::string> args) {
    std::vector<std::string_view> views(args.begin(), args.end());
    std::string reply;
    protocol::ReplyWriter out(&reply, client.resp);
    CommandContext ctx{h.store(), h.server(), client, out};
    dispatcher.Dispatch(ctx, views);
    return reply;
  }
  std::string Taken() {
    std::string bytes;
    client.outbox.TakeInto(&bytes);
    return bytes;
  }
  ~OtherClient() {
    h.server().pubsub()->ForgetClient(client);
    h.server().monitors().Remove(&client);
  }

  Harness& h;
  Dispatcher dispatcher;
  ClientState client;
  static inline int count = 0;
};

std::string Frame(char type, std::vector<std::string> items) {
  std::string s = type + std::to_string(items.size()) + "\r\n";
  for (const std::string& i : items) s += i;
  return s;
}

}  // namespace

TEST_CASE("SUBSCRIBE confirms each channel; PUBLISH reaches every subscriber's outbox") {
  Harness h;
  OtherClient a(h), b(h);
  CHECK(a.Run({"subscribe", "ch", "other", "ch"}) ==
        Frame('*', {Bulk("subscribe"), Bulk("ch"), Int(1)}) +
            Frame('*', {Bulk("subscribe"), Bulk("other"), Int(2)}) +
            Frame('*', {Bulk("subscribe"), Bulk("ch"), Int(2)}));
  b.client.resp = 3;
  CHECK(b.Run({"psubscribe", "c*"}) == Frame('>', {Bulk("psubscribe"), Bulk("c*"), Int(1)}));
  CHECK(h.Run({"publish", "ch", "hi"}) == Int(2));
  CHECK(a.Taken() == Frame('*', {Bulk("message"), Bulk("ch"), Bulk("hi")}));
  CHECK(b.Taken() == Frame('>', {Bulk("pmessage"), Bulk("c*"), Bulk("ch"), Bulk("hi")}));
  CHECK(h.Run({"publish", "nobody", "x"}) == Int(0));
  CHECK(h.Cmd("PUBSUB NUMSUB ch c* none") ==
        Arr({Bulk("ch"), Int(1), Bulk("c*"), Int(0), Bulk("none"), Int(0)}));
  CHECK(h.Cmd("PUBSUB NUMPAT") == Int(1));
  CHECK(h.Cmd("PUBSUB CHANNELS o*") == Arr({Bulk("other")}));
  CHECK(a.Run({"unsubscribe", "ch", "nosuch"}) ==
        Frame('*', {Bulk("unsubscribe"), Bulk("ch"), Int(1)}) +
            Frame('*', {Bulk("unsubscribe"), Bulk("nosuch"), Int(1)}));
  CHECK(b.Run({"punsubscribe"}) == Frame('>', {Bulk("punsubscribe"), Bulk("c*"), Int(0)}));
  CHECK(b.Run({"punsubscribe"}) == Frame('>', {Bulk("punsubscribe"), Null(), Int(0)}));
  CHECK(h.Cmd("PUBSUB NUMPAT") == Int(0));
}

TEST_CASE("shard channels: SSUBSCRIBE, SPUBLISH, PUBSUB SHARDCHANNELS/SHARDNUMSUB") {
  Harness h;
  OtherClient a(h);
  CHECK(a.Run({"ssubscribe", "s1", "s2"}) ==
        Frame('*', {Bulk("ssubscribe"), Bulk("s1"), Int(1)}) +
            Frame('*', {Bulk("ssubscribe"), Bulk("s2"), Int(2)}));
  CHECK(a.Run({"psubscribe", "s*"}) == Frame('*', {Bulk("psubscribe"), Bulk("s*"), Int(1)}));
  CHECK(h.Cmd("SPUBLISH s1 m") == Int(1));  // patterns never match shard channels
  CHECK(a.Taken() == Frame('*', {Bulk("smessage"), Bulk("s1"), Bulk("m")}));
  CHECK(h.Cmd("PUBLISH s1 m") == Int(1));  // the pattern only
  CHECK(h.Cmd("PUBSUB SHARDNUMSUB s1 x") == Arr({Bulk("s1"), Int(1), Bulk("x"), Int(0)}));
  CHECK(h.Cmd("PUBSUB SHARDCHANNELS *2") == Arr({Bulk("s2")}));
  CHECK(h.Cmd("PUBSUB CHANNELS") == Arr({}));
  const std::string info = h.Cmd("INFO stats");
  CHECK(info.find("pubsub_channels:0\r\npubsub_patterns:1\r\npubsubshard_channels:2\r\n") !=
        std::string::npos);
}

TEST_CASE("RESP2 subscribed mode allows only Redis's commands; PING answers a frame") {
  Harness h;
  h.Cmd("SUBSCRIBE ch");
  CHECK(h.Cmd("GET k") ==
        Err("ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / "
            "RESET are allowed in this context"));
  CHECK(h.Cmd("CLIENT ID") ==
        Err("ERR Can't execute 'client|id': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / "
            "QUIT / RESET are allowed in this context"));
  CHECK(h.Cmd("PING") == Arr({Bulk("pong"), Bulk("")}));
  CHECK(h.Cmd("PING hi") == Arr({Bulk("pong"), Bulk("hi")}));
  CHECK(h.Cmd("SUBSCRIBE") == ArityErr("subscribe"));
  h.Resp3();
  CHECK(h.Cmd("PING") == Simple("PONG"));  // RESP3: no restriction
  CHECK(h.Cmd("GET k") == Null());
  CHECK(h.Cmd("RESET") == Simple("RESET"));
  CHECK(h.Cmd("PUBSUB NUMSUB ch") == Arr({Bulk("ch"), Int(0)}));
  CHECK(h.Cmd("PING") == Simple("PONG"));
}

TEST_CASE("PUBSUB errors and HELP as Redis") {
  Harness h;
  CHECK(h.Cmd("PUBSUB CHANNELS a b") ==
        Err("ERR unknown subcommand or wrong number of arguments for 'CHANNELS'. Try PUBSUB "
            "HELP."));
  CHECK(h.Cmd("PUBSUB NUMPAT x") ==
        Err("ERR wrong number of arguments for 'pubsub|numpat' command"));
  CHECK(h.Cmd("PUBLISH a") == ArityErr("publish"));
  const std::string help = h.Cmd("PUBSUB HELP");
  CHECK(help.rfind("*14\r\n+PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", 0) ==
        0);
}

// A script that meets a key another unit holds stops and runs again (test_scripting.cc): what
// its first run published or fired must not reach subscribers twice.
TEST_CASE("a script run again after a lock conflict publishes and notifies once") {
  Harness h;
  OtherClient sub(h);
  sub.client.resp = 3;
  sub.Run({"subscribe", "ch"});
  sub.Run({"psubscribe", "__keyspace@0__:*"});
  sub.Taken();
  CHECK(h.Cmd("CONFIG SET notify-keyspace-events K$") == Ok());
  const std::string script =
      "local n = redis.call('publish', 'ch', 'm') redis.call('set', KEYS[1], n) "
      "return redis.call('incrby', 'hot', 5)";
  const std::string message = Frame('>', {Bulk("message"), Bulk("ch"), Bulk("m")});
  const auto event = [](const std::string& key, const std::string& what) {
    return Frame('>', {Bulk("pmessage"), Bulk("__keyspace@0__:*"), Bulk("__keyspace@0__:" + key),
                       Bulk(what)});
  };
  {
    // Alone: the first run stops at "hot" and the script runs again under every stripe.
    const HeldKey hot(h.store(), "hot", "10");
    CHECK(h.Run({"EVAL", script, "1", "k"}) == Int(15));
  }
  CHECK(h.Run({"GET", "k"}) == Bulk("1"));  // PUBLISH's reply counted the subscriber
  CHECK(sub.Taken() == message + event("k", "set") + event("hot", "incrby"));
  {
    // In a batch: it stops as a member of the commit group, runs again alone, then again under
    // every stripe; the SET before it fires once.
    const HeldKey hot(h.store(), "hot", "10");
    CHECK(h.RunBatch({{"SET", "before", "1"}, {"EVAL", script, "1", "k"}}) ==
          std::vector<std::string>{Ok(), Int(15)});
  }
  CHECK(sub.Taken() ==
        event("before", "set") + message + event("k", "set") + event("hot", "incrby"));
  CHECK(h.Run({"config", "set", "notify-keyspace-events", ""}) == Ok());
}

TEST_CASE("SSUBSCRIBE inside EXEC is refused; SUBSCRIBE is not") {
  Harness h;
  h.Cmd("MULTI");
  h.Cmd("SUBSCRIBE a");
  h.Cmd("SSUBSCRIBE b");
  CHECK(h.Cmd("EXEC") == "*2\r\n" + Frame('*', {Bulk("subscribe"), Bulk("a"), Int(1)}) +
                             Err("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client"));
}

TEST_CASE("CLIENT LIST shows flags=P and the subscription counts; TYPE pubsub") {
  Harness h;
  OtherClient a(h);
  a.Run({"subscribe", "x", "y"});
  a.Run({"psubscribe", "p"});
  a.Run({"ssubscribe", "s"});
  a.client.resp = 3;  // RESP2's subscribed mode would refuse CLIENT INFO
  std::string info = a.Run({"client", "info"});
  CHECK(info.find(" flags=P db=0 sub=2 psub=1 ssub=1 ") != std::string::npos);
}

TEST_CASE("ClientOutbox: one wake per take, RESP3 pushes, dropped past the hard limit") {
  ClientOutbox box;
  int wakes = 0;
  box.set_wake([&] { ++wakes; });
  CHECK(box.Push(1, Bulk("a"), {}));
  CHECK(box.Push(1, Bulk("b"), {}));
  CHECK(wakes == 1);
  std::string out;
  box.TakeInto(&out);
  CHECK(out == "*1\r\n$1\r\na\r\n*1\r\n$1\r\nb\r\n");
  CHECK(box.Push(1, Bulk("s"), {0, 15, 60}));  // the first after a take: a wake
  CHECK(box.Push(1, Bulk("t"), {0, 15, 60}));  // 22 bytes pass soft: a wake again
  CHECK(box.Push(1, Bulk("u"), {0, 15, 60}));  // still over soft: none
  CHECK(wakes == 3);
  out.clear();
  box.TakeInto(&out);
  box.set_resp(3);
  CHECK(box.Push(1, Bulk("c"), {}));
  CHECK(wakes == 4);
  CHECK(box.queued_bytes() == 11);
  box.set_unsent(10);
  CHECK_FALSE(box.Push(1, Bulk("d"), {25, 0, 0}));  // 11 queued + 11 + 10 unsent > 25
  CHECK(box.overflowed());
  CHECK(wakes == 5);  // the overflow wakes the owner though no take came since the last wake
  CHECK_FALSE(box.Push(1, Bulk("e"), {}));  // an overflowed outbox takes nothing more
  out.clear();
  box.TakeInto(&out);
  CHECK(out == ">1\r\n$1\r\nc\r\n");
  box.Close();
  CHECK_FALSE(box.Push(1, Bulk("f"), {}));
}

TEST_CASE("PubSubRegistry: ForgetClient drops every subscription and the counts") {
  Harness h;
  PubSubRegistry& registry = PubSubOf(h.server());
  ClientState a, b;
  CHECK(registry.Subscribe(a, ChannelKind::kGlobal, "c"));
  CHECK_FALSE(registry.Subscribe(a, ChannelKind::kGlobal, "c"));
  CHECK(registry.Subscribe(b, ChannelKind::kGlobal, "c"));
  CHECK(registry.SubscribePattern(a, "p*"));
  CHECK(registry.SubscribePattern(a, "q*"));
  CHECK(registry.Subscribe(a, ChannelKind::kShard, "c"));
  CHECK(registry.PatternsOf(a) == std::vector<std::string>{"p*", "q*"});
  CHECK(registry.Publish("c", "m") == 2);
  CHECK(registry.Publish("pc", "m") == 1);
  CHECK(registry.PublishShard("c", "m") == 1);
  registry.ForgetClient(a);
  CHECK_FALSE(a.subscribed());
  CHECK(b.subscribed());
  CHECK(registry.NumPat() == 0);
  CHECK(registry.NumSub(ChannelKind::kGlobal, "c") == 1);
  CHECK(registry.NumSub(ChannelKind::kShard, "c") == 0);
  CHECK(registry.Publish("c", "m") == 1);
  registry.ForgetClient(b);
  const PubSubRegistry::Counts counts = registry.counts();
  CHECK(counts.channels + counts.patterns + counts.shard_channels == 0);
}

TEST_CASE("MONITOR lines: Redis's quoting, the origin, redaction; a monitor gets each command") {
  std::vector<std::string> args = {"SET", "k", std::string("a\"\\\n\x01\xff", 6)};
  CHECK(MonitorLine(1700000000000042, 3, "127.0.0.1:5000",
                    Args(std::vector<std::string_view>(args.begin(), args.end()))) ==
        "+1700000000.000042 [3 127.0.0.1:5000] \"SET\" \"k\" \"a\\\"\\\\\\n\\x01\\xff\"\r\n");
  std::vector<std::string_view> hello = {"hello", "3", "AUTH", "u", "p", "SETNAME", "n"};
  CHECK(MonitorLine(0, 0, "lua", hello) ==
        "+0.000000 [0 lua] \"hello\" \"3\" \"AUTH\" \"(redacted)\" \"(redacted)\" \"SETNAME\" "
        "\"n\"\r\n");

  Harness h;
  OtherClient m(h);
  CHECK(m.Run({"monitor"}) == Simple("OK"));
  CHECK(m.Run({"monitor"}).empty());  // already monitoring: no reply, as from Redis
  CHECK(h.Cmd("SET k v") == Ok());
  CHECK(h.Cmd("CONFIG GET maxmemory").size() > 0);  // admin: not shown
  const std::string lines = m.Taken();
  CHECK(lines.find("] \"SET\" \"k\" \"v\"\r\n") != std::string::npos);
  CHECK(lines.find("CONFIG") == std::string::npos);
  CHECK(m.Run({"reset"}) == Simple("RESET"));
  h.Cmd("GET k");
  CHECK(m.Taken().empty());
}

}  // namespace sluice::server::testing
