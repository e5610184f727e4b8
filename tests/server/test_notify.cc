// Keyspace notifications (server/core/notify.h) through the dispatcher: the class text as Redis
// parses and shows it, events after the commit, and "expired" from a read that finds the key
// expired (the access path, without the expiry cycle's timing). The side-by-side comparison
// with redis-server is tests/blackbox/test_notify.py.
#include <doctest/doctest.h>

#include <optional>
#include <string>

#include "server/core/notify.h"
#include "server/core/pubsub_hub.h"
#include "server/core/server_state.h"
#include "tests/server/harness.h"

namespace sluice::server::testing {

namespace {

// What the harness's client (RESP3, so it may subscribe and write) was pushed.
std::string Taken(Harness& h) {
  std::string bytes;
  h.client().outbox.TakeInto(&bytes);
  return bytes;
}

std::string Event(const std::string& channel, const std::string& message) {
  return ">4\r\n" + Bulk("pmessage") + Bulk("__key*__:*") + Bulk(channel) + Bulk(message);
}

}  // namespace

TEST_CASE("notify-keyspace-events: Redis's parsing and canonical form") {
  CHECK(FormatNotifyClasses(*ParseNotifyClasses("KEA")) == "AKE");
  CHECK(FormatNotifyClasses(*ParseNotifyClasses("KEAnm")) == "AKEm");
  CHECK(FormatNotifyClasses(*ParseNotifyClasses("g$lshzxetdKE")) == "AKE");
  CHECK(FormatNotifyClasses(*ParseNotifyClasses("nE$g")) == "g$nE");
  CHECK(FormatNotifyClasses(*ParseNotifyClasses("")).empty());
  CHECK(!ParseNotifyClasses("KEQ"));
  CHECK(!ParseNotifyClasses("k"));
  Harness h;
  CHECK(h.Cmd("CONFIG SET notify-keyspace-events Elx") == "+OK\r\n");
  CHECK(h.Cmd("CONFIG GET notify-keyspace-events") ==
        Arr({Bulk("notify-keyspace-events"), Bulk("lxE")}));
  CHECK(h.Cmd("CONFIG SET notify-keyspace-events KZ") ==
        "-ERR CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - "
        "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.\r\n");
  CHECK(h.Cmd("CONFIG GET notify-keyspace-events") ==
        Arr({Bulk("notify-keyspace-events"), Bulk("lxE")}));
  CHECK(h.Run({"config", "set", "notify-keyspace-events", ""}) == "+OK\r\n");
  CHECK(!NotifyEnabled(kNotifyList));
}

TEST_CASE("events fire once the command committed; 'expired' when a read finds the key expired") {
  std::optional<ExpiredEventsObserver> expired;  // outlives the harness's Store
  Harness h;
  expired.emplace(h.server());
  REQUIRE(h.store().AddCommitObserver(&*expired).ok());
  h.Resp3();
  h.Run({"psubscribe", "__key*__:*"});
  CHECK(h.Cmd("CONFIG SET notify-keyspace-events KEA") == "+OK\r\n");
  CHECK(h.Cmd("SET k v PX 100") == "+OK\r\n");
  CHECK(Taken(h) == Event("__keyspace@0__:k", "set") + Event("__keyevent@0__:set", "k") +
                        Event("__keyspace@0__:k", "expire") + Event("__keyevent@0__:expire", "k"));
  CHECK(h.Cmd("INCR k") == "-ERR value is not an integer or out of range\r\n");
  CHECK(Taken(h).empty());  // a failed command fires nothing
  h.clock().AdvanceNs(200'000'000);
  CHECK(h.Cmd("GET k") == "_\r\n");
  CHECK(Taken(h) == Event("__keyspace@0__:k", "expired") + Event("__keyevent@0__:expired", "k"));
  CHECK(h.Run({"config", "set", "notify-keyspace-events", ""}) == "+OK\r\n");
  CHECK(h.Cmd("SET k v") == "+OK\r\n");
  CHECK(Taken(h).empty());
  h.server().pubsub()->ForgetClient(h.client());
}

}  // namespace sluice::server::testing
