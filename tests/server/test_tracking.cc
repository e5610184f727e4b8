// Client-side caching (CLIENT TRACKING) through the dispatcher: several clients of one server,
// in-process, with the TrackingRegistry registered as the Store's commit observer. Byte for byte
// as Redis 7.0.15; the side-by-side comparison with redis-server is
// tests/blackbox/test_tracking.py.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "server/core/tracking.h"
#include "tests/server/harness.h"

namespace sluice::server::testing {

namespace {

// A client of the harness's server, registered (a REDIRECT target must exist).
struct Peer {
  explicit Peer(Harness& h, int resp = 2) : h(h), dispatcher(h.table()) {
    client.id = h.server().clients().NextId();
    client.resp = resp;
    client.outbox.set_resp(resp);
    h.server().clients().Add(&client, nullptr);
  }
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
  ~Peer() {
    h.server().tracking().Disable(client);
    if (h.server().pubsub() != nullptr) h.server().pubsub()->ForgetClient(client);
    h.server().clients().Remove(&client);
  }

  Harness& h;
  Dispatcher dispatcher;
  ClientState client;
};

std::string Invalidate(std::vector<std::string> keys) {
  std::string s = ">2\r\n" + Bulk("invalidate") + "*" + std::to_string(keys.size()) + "\r\n";
  for (const std::string& k : keys) s += Bulk(k);
  return s;
}

void Observe(Harness& h) { REQUIRE(h.store().AddCommitObserver(&h.server().tracking()).ok()); }

}  // namespace

TEST_CASE("default mode: a read key is invalidated once by the next write, by anyone") {
  Harness h;
  Observe(h);
  Peer r(h, 3), w(h);
  CHECK(r.Run({"client", "tracking", "on"}) == Ok());
  CHECK(r.Run({"get", "a"}) == Null());
  CHECK(r.Run({"get", "b"}) == Null());
  CHECK(h.server().tracking().total_keys() == 2);
  CHECK(w.Run({"set", "a", "1"}) == Ok());
  CHECK(r.Taken() == Invalidate({"a"}));
  CHECK(w.Run({"set", "a", "2"}) == Ok());
  CHECK(r.Taken().empty());  // forgotten after one invalidation
  // The writer itself, without NOLOOP, hears of its own write (after its reply).
  CHECK(r.Run({"set", "b", "x"}) == Ok());
  CHECK(r.Taken() == Invalidate({"b"}));
  // A write in MULTI/EXEC and by a script.
  CHECK(r.Run({"mget", "a", "b"}) == "*2\r\n$1\r\n2\r\n$1\r\nx\r\n");
  CHECK(w.Run({"multi"}) == Ok());
  CHECK(w.Run({"incr", "a"}) == Simple("QUEUED"));
  CHECK(w.Run({"exec"}) == "*1\r\n:3\r\n");
  CHECK(r.Taken() == Invalidate({"a"}));
  CHECK(w.Run({"eval", "return redis.call('del', KEYS[1])", "1", "b"}) == Int(1));
  CHECK(r.Taken() == Invalidate({"b"}));
  CHECK(h.server().tracking().total_keys() == 0);
  CHECK(h.server().tracking().clients() == 1);
}

TEST_CASE("RESP2 REDIRECT: __redis__:invalidate messages; FLUSHALL sends a null") {
  Harness h;
  Observe(h);
  Peer r(h), sub(h), w(h);
  sub.Run({"subscribe", "__redis__:invalidate"});
  const std::string id = std::to_string(sub.client.id);
  CHECK(r.Run({"client", "tracking", "on", "redirect", id}) == Ok());
  CHECK(r.Run({"client", "getredir"}) == Int(static_cast<int64_t>(sub.client.id)));
  CHECK(r.Run({"get", "k"}) == Nil());
  CHECK(w.Run({"set", "k", "v"}) == Ok());
  const std::string head = "*3\r\n" + Bulk("message") + Bulk("__redis__:invalidate");
  CHECK(sub.Taken() == head + "*1\r\n" + Bulk("k"));
  CHECK(r.Taken().empty());  // RESP2: nothing on the tracking connection itself
  CHECK(w.Run({"flushall"}) == Ok());
  CHECK(sub.Taken() == head + Nil());
  CHECK(r.Run({"client", "tracking", "on", "redirect", "999999"}) ==
        Err("ERR The client ID you want redirect to does not exist"));
}

TEST_CASE("a broken redirect: RESP3 hears tracking-redir-broken, TRACKINGINFO says so") {
  Harness h;
  Observe(h);
  Peer r(h, 3), w(h);
  uint64_t gone = 0;
  {
    Peer target(h, 3);
    gone = target.client.id;
    CHECK(r.Run({"client", "tracking", "on", "redirect", std::to_string(gone)}) == Ok());
    CHECK(r.Run({"get", "k"}) == Null());
  }
  CHECK(w.Run({"set", "k", "v"}) == Ok());
  CHECK(r.Taken() == ">2\r\n" + Bulk("tracking-redir-broken") + Int(static_cast<int64_t>(gone)));
  CHECK(r.Run({"client", "trackinginfo"}) ==
        "%3\r\n" + Bulk("flags") + "~2\r\n" + Bulk("on") + Bulk("broken_redirect") +
            Bulk("redirect") + Int(static_cast<int64_t>(gone)) + Bulk("prefixes") + "*0\r\n");
}

TEST_CASE("BCAST with prefixes and NOLOOP; prefix errors") {
  Harness h;
  Observe(h);
  Peer r(h, 3), n(h, 3), w(h);
  CHECK(r.Run({"client", "tracking", "on", "bcast", "prefix", "a:", "prefix", "b:"}) == Ok());
  CHECK(n.Run({"client", "tracking", "on", "bcast", "noloop"}) == Ok());
  CHECK(h.server().tracking().total_prefixes() == 3);
  CHECK(w.Run({"mset", "a:1", "x", "c:1", "y", "b:1", "z"}) == Ok());
  CHECK(r.Taken() == Invalidate({"a:1"}) + Invalidate({"b:1"}));
  CHECK(n.Taken() == Invalidate({"a:1", "b:1", "c:1"}));
  CHECK(n.Run({"set", "a:2", "x"}) == Ok());
  CHECK(n.Taken().empty());  // NOLOOP: its own write
  CHECK(r.Taken() == Invalidate({"a:2"}));
  CHECK(r.Run({"client", "tracking", "on", "bcast", "prefix", "a"}) ==
        Err("ERR Prefix 'a' overlaps with an existing prefix 'a:'. Prefixes for a single client "
            "must not overlap."));
  CHECK(r.Run({"client", "tracking", "on"}) ==
        Err("ERR You can't switch BCAST mode on/off before disabling tracking for this client, and "
            "then re-enabling it with a different mode."));
  CHECK(r.Run({"client", "tracking", "on", "prefix", "x"}) ==
        Err("ERR PREFIX option requires BCAST mode to be enabled"));
  CHECK(r.Run({"client", "tracking", "off"}) == Ok());
  CHECK(h.server().tracking().total_prefixes() == 1);
}

TEST_CASE("OPTIN/OPTOUT with CLIENT CACHING cover the next command only") {
  Harness h;
  Observe(h);
  Peer r(h, 3), w(h);
  CHECK(r.Run({"client", "caching", "yes"}) ==
        Err("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN "
            "or OPTOUT mode enabled"));
  CHECK(r.Run({"client", "tracking", "on", "optin"}) == Ok());
  CHECK(r.Run({"client", "caching", "no"}) ==
        Err("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode."));
  CHECK(r.Run({"get", "a"}) == Null());  // not cached
  CHECK(r.Run({"client", "caching", "yes"}) == Ok());
  CHECK(r.Run({"get", "b"}) == Null());  // cached
  CHECK(r.Run({"get", "c"}) == Null());  // not: CACHING covered one command
  CHECK(w.Run({"mset", "a", "1", "b", "1", "c", "1"}) == Ok());
  CHECK(r.Taken() == Invalidate({"b"}));
  CHECK(r.Run({"client", "tracking", "on", "optout"}) ==
        Err("ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and "
            "then re-enabling it with a different mode."));
  CHECK(r.Run({"client", "tracking", "on", "optin", "optout"}) ==
        Err("ERR You can't specify both OPTIN mode and OPTOUT mode"));
}

TEST_CASE("tracking-table-max-keys invalidates keys past the limit; SWAPDB invalidates nothing") {
  Harness h;
  Observe(h);
  Peer r(h, 3), w(h);
  CHECK(r.Run({"client", "tracking", "on"}) == Ok());
  CHECK(r.Run({"mget", "a", "b", "c"}) == "*3\r\n_\r\n_\r\n_\r\n");
  CHECK(w.Run({"swapdb", "0", "1"}) == Ok());
  CHECK(r.Taken().empty());
  CHECK(w.Run({"config", "set", "tracking-table-max-keys", "1"}) == Ok());
  CHECK(h.server().tracking().total_keys() == 1);
  const std::string sent = r.Taken();
  CHECK(sent.size() == 2 * Invalidate({"a"}).size());
  CHECK(w.Run({"config", "get", "tracking-table-max-keys"}) ==
        Arr({Bulk("tracking-table-max-keys"), Bulk("1")}));
}

}  // namespace sluice::server::testing
