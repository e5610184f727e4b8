// Cluster mode's routing at the gate (server/core/cluster_route.h) against a fake slot map:
// Redis 7.0.15's exact replies for -MOVED, -ASK, -TRYAGAIN, -CROSSSLOT, -CLUSTERDOWN, ASKING,
// READONLY/READWRITE, MULTI/EXEC, scripts, LIMITS.TAKE, shard channels and the commands refused
// in cluster mode; and standalone mode's refusals of the cluster-only commands.
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <string>

#include "server/core/cluster_router.h"
#include "server/scripting/lua_sha1.h"
#include "sluice/key_slot.h"
#include "tests/server/harness.h"

namespace sluice::server::testing {

namespace {

// Every slot is this node's unless set otherwise.
class FakeRouter : public ClusterRouter {
 public:
  bool StateOk() const override { return state_ok; }
  bool AllowReadsWhenDown() const override { return allow_reads_when_down; }
  ClusterSlotRoute Route(uint16_t slot) const override {
    auto it = slots.find(slot);
    if (it != slots.end()) return it->second;
    ClusterSlotRoute mine;
    mine.owner = ClusterSlotRoute::Owner::kMe;
    return mine;
  }

  // The slot's entry, created as this node's.
  ClusterSlotRoute& Slot(std::string_view key) {
    auto [it, added] = slots.try_emplace(KeyHashSlot(key));
    if (added) it->second.owner = ClusterSlotRoute::Owner::kMe;
    return it->second;
  }
  void OwnedElsewhere(std::string_view key) {
    ClusterSlotRoute& r = Slot(key);
    r.owner = ClusterSlotRoute::Owner::kOther;
    r.owner_address = {"10.0.0.2", 7001, 17001};
  }

  bool state_ok = true;
  bool allow_reads_when_down = false;
  std::map<uint16_t, ClusterSlotRoute> slots;
};

struct ClusterHarness {
  ClusterHarness() { h.server().attach_cluster(router); }
  std::string Cmd(std::string_view line) { return h.Cmd(line); }
  Harness h;
  std::shared_ptr<FakeRouter> router = std::make_shared<FakeRouter>();
};

std::string Moved(std::string_view key, int port = 7001) {
  return "-MOVED " + std::to_string(KeyHashSlot(key)) + " 10.0.0.2:" + std::to_string(port) +
         "\r\n";
}

const std::string kCrossSlot = "-CROSSSLOT Keys in request don't hash to the same slot\r\n";
const std::string kTryAgain = "-TRYAGAIN Multiple keys request during rehashing of slot\r\n";

}  // namespace

TEST_CASE("standalone: ASKING, READONLY, READWRITE refused; SELECT, MOVE as ever") {
  Harness h;
  const std::string disabled = Err("ERR This instance has cluster support disabled");
  CHECK(h.Cmd("ASKING") == disabled);
  CHECK(h.Cmd("READONLY") == disabled);
  CHECK(h.Cmd("READWRITE") == disabled);
  CHECK(h.Cmd("SELECT 1") == Ok());
  CHECK(h.Cmd("MSET foo 1 bar 2") == Ok());
}

TEST_CASE("cluster: keys of one slot run, keys of several are -CROSSSLOT") {
  ClusterHarness c;
  CHECK(c.Cmd("SET foo 1") == Ok());
  CHECK(c.Cmd("MSET foo 1 bar 2") == kCrossSlot);
  CHECK(c.Cmd("MSET {a}x 1 {a}y 2") == Ok());
  CHECK(c.Cmd("MGET foo foo") == Arr({Bulk("1"), Bulk("1")}));
  CHECK(c.Cmd("PING") == Simple("PONG"));  // no key: always served
  CHECK(c.Cmd("LIMITS.TAKE LIMIT sec GCRA 2 1s LIMIT day WINDOW 3 1d") == kCrossSlot);
  CHECK(c.Cmd("LIMITS.TAKE LIMIT {u}sec GCRA 2 1s LIMIT {u}day WINDOW 3 1d")[0] == '*');
  CHECK(c.h.Run({"EVAL", "return 1", "2", "foo", "bar"}) == kCrossSlot);
  CHECK(c.Cmd("ZUNIONSTORE {a}d 2 {a}x bar") == kCrossSlot);
}

TEST_CASE("cluster: a slot served elsewhere is -MOVED, to the tls port for a TLS client") {
  ClusterHarness c;
  c.router->OwnedElsewhere("foo");
  CHECK(c.Cmd("GET foo") == Moved("foo"));
  CHECK(c.Cmd("SET foo 1") == Moved("foo"));
  CHECK(c.Cmd("SPUBLISH foo hello") == Moved("foo"));
  CHECK(c.Cmd("GET bar") == Nil());
  c.h.client().tls = true;
  CHECK(c.Cmd("GET foo") == Moved("foo", 17001));
  c.router->Slot("foo").owner_address.tls_port = 0;
  CHECK(c.Cmd("GET foo") == Moved("foo", 7001));
}

TEST_CASE("cluster: unbound slot and cluster down") {
  ClusterHarness c;
  c.router->Slot("foo").owner = ClusterSlotRoute::Owner::kNobody;
  CHECK(c.Cmd("GET foo") == "-CLUSTERDOWN Hash slot not served\r\n");
  c.router->slots.clear();
  c.router->state_ok = false;
  CHECK(c.Cmd("GET foo") == "-CLUSTERDOWN The cluster is down\r\n");
  CHECK(c.Cmd("PING") == Simple("PONG"));
  c.router->allow_reads_when_down = true;
  CHECK(c.Cmd("GET foo") == Nil());
  CHECK(c.Cmd("SET foo 1") ==
        "-CLUSTERDOWN The cluster is down and only accepts read commands\r\n");
}

TEST_CASE("cluster: a migrating slot sends missing keys on with -ASK, mixed ones -TRYAGAIN") {
  ClusterHarness c;
  CHECK(c.Cmd("SET {a}x 1") == Ok());
  ClusterSlotRoute& r = c.router->Slot("{a}x");
  r.migrating = true;
  r.migrating_to = {"10.0.0.3", 7002, 0};
  const std::string ask = "-ASK " + std::to_string(KeyHashSlot("a")) + " 10.0.0.3:7002\r\n";
  CHECK(c.Cmd("GET {a}x") == Bulk("1"));
  CHECK(c.Cmd("GET {a}y") == ask);
  CHECK(c.Cmd("MGET {a}y {a}z") == ask);
  CHECK(c.Cmd("MGET {a}x {a}y") == kTryAgain);
}

TEST_CASE("cluster: an importing slot serves ASKING clients for one command") {
  ClusterHarness c;
  c.router->OwnedElsewhere("{a}x");
  c.router->Slot("{a}x").importing = true;
  CHECK(c.Cmd("GET {a}x") == Moved("{a}x"));
  CHECK(c.Cmd("ASKING") == Ok());
  CHECK(c.Cmd("SET {a}x 1") == Ok());
  CHECK(c.Cmd("GET {a}x") == Moved("{a}x"));  // one-shot
  CHECK(c.Cmd("ASKING") == Ok());
  CHECK(c.Cmd("MGET {a}x {a}y") == kTryAgain);  // several keys, one missing
  CHECK(c.Cmd("ASKING") == Ok());
  CHECK(c.Cmd("MGET {a}x {a}x") == Arr({Bulk("1"), Bulk("1")}));
  // ASKING covers a whole MULTI ... EXEC, then ends.
  CHECK(c.Cmd("ASKING") == Ok());
  CHECK(c.Cmd("MULTI") == Ok());
  CHECK(c.Cmd("GET {a}x") == Simple("QUEUED"));
  CHECK(c.Cmd("EXEC") == Arr({Bulk("1")}));
  CHECK(c.Cmd("GET {a}x") == Moved("{a}x"));
}

TEST_CASE("cluster: a replica serves its primary's slots' reads to READONLY clients") {
  ClusterHarness c;
  c.router->OwnedElsewhere("foo");
  c.router->Slot("foo").served_by_my_master = true;
  CHECK(c.Cmd("GET foo") == Moved("foo"));
  CHECK(c.Cmd("READONLY") == Ok());
  CHECK(c.Cmd("GET foo") == Nil());
  CHECK(c.Cmd("SET foo 1") == Moved("foo"));
  CHECK(c.Cmd("MULTI") == Ok());
  CHECK(c.Cmd("GET foo") == Simple("QUEUED"));
  CHECK(c.Cmd("EXEC") == Arr({Nil()}));
  CHECK(c.Cmd("READWRITE") == Ok());
  CHECK(c.Cmd("GET foo") == Moved("foo"));
  CHECK(c.Cmd("READONLY") == Ok());
  CHECK(c.Cmd("RESET") == Simple("RESET"));
  CHECK(c.Cmd("GET foo") == Moved("foo"));
}

TEST_CASE("cluster: MULTI/EXEC is checked as commands queue and as a unit at EXEC") {
  ClusterHarness c;
  CHECK(c.Cmd("MULTI") == Ok());
  CHECK(c.Cmd("SET foo 1") == Simple("QUEUED"));
  CHECK(c.Cmd("SET bar 1") == Simple("QUEUED"));
  CHECK(c.Cmd("EXEC") == kCrossSlot);                     // discarded, not aborted
  CHECK(c.Cmd("EXEC") == Err("ERR EXEC without MULTI"));  // no transaction left
  c.router->OwnedElsewhere("foo");
  CHECK(c.Cmd("MULTI") == Ok());
  CHECK(c.Cmd("GET foo") == Moved("foo"));
  CHECK(c.Cmd("GET bar") == Simple("QUEUED"));
  CHECK(c.Cmd("EXEC") == "-EXECABORT Transaction discarded because of previous errors.\r\n");
  // The slot moves away between queueing and EXEC.
  c.router->slots.clear();
  CHECK(c.Cmd("MULTI") == Ok());
  CHECK(c.Cmd("SET foo 1") == Simple("QUEUED"));
  c.router->OwnedElsewhere("foo");
  CHECK(c.Cmd("EXEC") == Moved("foo"));
  CHECK(c.Cmd("DISCARD") == Err("ERR DISCARD without MULTI"));
}

TEST_CASE("cluster: scripts are routed by their declared keys and kept to one slot") {
  ClusterHarness c;
  auto eval = [&](const std::string& body, std::vector<std::string> rest) {
    std::vector<std::string> args = {"EVAL", body};
    args.insert(args.end(), rest.begin(), rest.end());
    return c.h.Run(args);
  };
  auto script_err = [](const std::string& message, const std::string& body) {
    return "-ERR " + message + " script: " + Sha1Hex(body) + ", on @user_script:1.\r\n";
  };
  const std::string two = "redis.call('get',KEYS[1]) return redis.call('get','bar')";
  CHECK(eval(two, {"1", "foo"}) ==
        script_err("Script attempted to access keys that do not hash to the same slot", two));
  const std::string one = "return redis.call('get','foo')";
  CHECK(eval(one, {"0"}) == Nil());
  const std::string flagged = "#!lua flags=allow-cross-slot-keys\n" + two;
  CHECK(eval(flagged, {"1", "foo"}) == Nil());
  const std::string no_cluster = "#!lua flags=no-cluster\nreturn 1";
  CHECK(eval(no_cluster, {"0"}) ==
        Err("ERR Can not run script on cluster, 'no-cluster' flag is set."));
  c.router->OwnedElsewhere("bar");
  CHECK(eval(one, {"1", "bar"}) == Moved("bar"));
  const std::string other = "return redis.call('get','bar')";
  CHECK(eval(other, {"0"}) ==
        script_err("Script attempted to access a non local key in a cluster node", other));
  c.router->slots.clear();
  c.router->state_ok = false;
  c.router->allow_reads_when_down = true;
  const std::string write = "return redis.call('set','foo','1')";
  CHECK(eval(write, {"0"}) ==
        script_err("Script attempted to execute a write command while the cluster is down and "
                   "readonly",
                   write));
  c.router->allow_reads_when_down = false;
  CHECK(eval(write, {"0"}) ==
        script_err("Script attempted to execute a command while the cluster is down", write));
}

TEST_CASE("cluster: only db 0: SELECT, MOVE, SWAPDB and COPY ... DB refused") {
  ClusterHarness c;
  CHECK(c.Cmd("SELECT 1") == Err("ERR SELECT is not allowed in cluster mode"));
  CHECK(c.Cmd("SELECT x") == NotIntegerErr());
  CHECK(c.Cmd("SELECT 0") == Ok());
  CHECK(c.Cmd("MOVE foo 1") == Err("ERR MOVE is not allowed in cluster mode"));
  CHECK(c.Cmd("SWAPDB 0 1") == Err("ERR SWAPDB is not allowed in cluster mode"));
  CHECK(c.Cmd("COPY {a}x {a}y DB 1") ==
        Err("ERR Copying to another database is not allowed in cluster mode"));
}

}  // namespace sluice::server::testing
