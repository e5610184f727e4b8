// ACLs in process: rule parsing and describing (acl_user.h), categories, the gate's checks
// (acl_check.h) through the dispatcher, and the check's cost on the fast path.
#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "server/core/acl_categories.h"
#include "server/core/acl_check.h"
#include "server/core/acl_user.h"
#include "tests/server/harness.h"

namespace sluice::server::testing {

namespace {

std::string Describe(Harness& h, const std::vector<std::string>& rules) {
  AclUser user("u");
  const std::string error = ApplyAclRules(user, rules, h.table());
  if (!error.empty()) return "error: " + error;
  return DescribeAclUser(user, h.table());
}

AclDenial Check(Harness& h, const std::vector<std::string>& rules,
                std::vector<std::string_view> args) {
  AclUser user("u");
  REQUIRE(ApplyAclRules(user, rules, h.table()).empty());
  const CommandSpec* spec = Dispatcher(h.table()).Resolve(args);
  REQUIRE(spec != nullptr);
  return CheckAclUser(user, *spec, args).denial;
}

void LoginAs(Harness& h, const std::string& user, const std::string& pass) {
  REQUIRE(h.Run({"auth", user, pass}) == Ok());
}

}  // namespace

TEST_CASE("ACL rules describe themselves as Redis 7.0 does") {
  Harness h;
  CHECK(Describe(h, {}) == "off resetchannels -@all");
  CHECK(Describe(h, {"reset"}) == "off sanitize-payload resetchannels -@all");
  CHECK(Describe(h, {"on", "allkeys", "allchannels", "allcommands"}) == "on ~* &* +@all");
  CHECK(Describe(h, {"on", "nopass", "~a*", "%R~b*", "%W~c*", "%RW~d*", "+get"}) ==
        "on nopass ~a* %R~b* %W~c* ~d* resetchannels -@all +get");
  CHECK(Describe(h, {"+@all", "-get"}) == "off resetchannels +@all -get");
  CHECK(Describe(h, {"-@all", "+select|0", "+select|1"}) ==
        "off resetchannels -@all +select|0 +select|1");
  CHECK(Describe(h, {">a", ">a", "#" + std::string(64, 'f')}) ==
        "off #ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb #" +
            std::string(64, 'f') + " resetchannels -@all");
  CHECK(Describe(h, {"(~x", "+get)", "clearselectors", "(+set)"}) ==
        "off resetchannels -@all (resetchannels -@all +set)");
  CHECK(Describe(h, {"~*", "~x"}).starts_with("error: Error in ACL SETUSER modifier '~x': Adding"));
  CHECK(Describe(h, {"+nosuch"}) ==
        "error: Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL");
  CHECK(Describe(h, {"(~x"}) == "error: Unmatched parenthesis in acl selector starting at '(~x'.");
  CHECK(Describe(h, {"<nope"}) ==
        "error: Error in ACL SETUSER modifier '<nope': The password you are trying to remove "
        "from the user does not exist");
}

TEST_CASE("ACL categories: Redis's for its commands, the limiters' own, a safe default") {
  Harness h;
  auto cats = [&](const char* name) { return h.table().Find(name)->acl_categories; };
  CHECK(cats("get") == (kAclRead | kAclString | kAclFast));
  CHECK(cats("flushall") == (kAclKeyspace | kAclWrite | kAclSlow | kAclDangerous));
  CHECK(cats("config|set") == (kAclAdmin | kAclSlow | kAclDangerous));
  CHECK(cats("gcra.take") == (kAclWrite | kAclFast | kAclRateLimit));
  CHECK(cats("limits.take") == (cats("limits.take") | kAclWrite | kAclRateLimit));
  CommandSpec unknown;
  unknown.name = "brand.new";
  unknown.group = "something-new";
  CHECK((AclCategoriesOf(unknown) & kAclDangerous) != 0);
}

TEST_CASE("Key patterns, read and write permissions, selectors") {
  Harness h;
  CHECK(Check(h, {"+@all", "~rl:*"}, {"gcra.take", "rl:a", "1", "1s"}) == AclDenial::kNone);
  CHECK(Check(h, {"+@all", "~rl:*"}, {"gcra.take", "x", "1", "1s"}) == AclDenial::kKey);
  CHECK(Check(h, {"+gcra.take", "~*"}, {"gcra.take", "x", "1", "1s"}) == AclDenial::kNone);
  CHECK(Check(h, {"+gcra.take", "~*"}, {"get", "x"}) == AclDenial::kCommand);
  CHECK(Check(h, {"+@all", "%R~r*"}, {"get", "r1"}) == AclDenial::kNone);
  CHECK(Check(h, {"+@all", "%R~r*"}, {"set", "r1", "v"}) == AclDenial::kKey);
  CHECK(Check(h, {"+@all", "%W~w*"}, {"set", "w1", "v"}) == AclDenial::kNone);
  CHECK(Check(h, {"+@all", "%W~w*"}, {"set", "w1", "v", "GET"}) == AclDenial::kKey);
  CHECK(Check(h, {"+@all", "%W~w*"}, {"incr", "w1"}) == AclDenial::kKey);  // reads too
  CHECK(Check(h, {"+@all", "%R~s*", "%W~d*"}, {"copy", "s1", "d1"}) == AclDenial::kNone);
  CHECK(Check(h, {"+get", "~a*", "(+set ~b*)"}, {"set", "b1", "v"}) == AclDenial::kNone);
  CHECK(Check(h, {"+get", "~a*", "(+set ~b*)"}, {"set", "a1", "v"}) == AclDenial::kKey);
  CHECK(Check(h, {"-@all", "+select|0"}, {"select", "0"}) == AclDenial::kNone);
  CHECK(Check(h, {"-@all", "+select|0"}, {"select", "1"}) == AclDenial::kCommand);
  CHECK(Check(h, {"-@all", "+config|get"}, {"config", "get", "port"}) == AclDenial::kNone);
  CHECK(Check(h, {"-@all", "+config|get"}, {"config", "set", "port", "1"}) == AclDenial::kCommand);
  CHECK(Check(h, {"-@all", "+@ratelimit", "~*"}, {"leaky.take", "k", "1", "1s"}) ==
        AclDenial::kNone);
}

TEST_CASE("Channel patterns: publishes and subscribes checked, unsubscribes never") {
  Harness h;
  CHECK(Check(h, {"+@all", "&news.*"}, {"publish", "news.a", "m"}) == AclDenial::kNone);
  CHECK(Check(h, {"+@all", "&news.*"}, {"publish", "other", "m"}) == AclDenial::kChannel);
  CHECK(Check(h, {"+@all", "&news.*"}, {"spublish", "other", "m"}) == AclDenial::kChannel);
  CHECK(Check(h, {"+@all", "&news.*"}, {"subscribe", "news.a", "news.b"}) == AclDenial::kNone);
  CHECK(Check(h, {"+@all", "&news.*"}, {"subscribe", "news.a", "x"}) == AclDenial::kChannel);
  CHECK(Check(h, {"+@all", "&news.*"}, {"ssubscribe", "x"}) == AclDenial::kChannel);
  // A pattern must equal an allowed pattern: a narrower one is refused, as in Redis 7.0.
  CHECK(Check(h, {"+@all", "&news.*"}, {"psubscribe", "news.*"}) == AclDenial::kNone);
  CHECK(Check(h, {"+@all", "&news.*"}, {"psubscribe", "news.a*"}) == AclDenial::kChannel);
  CHECK(Check(h, {"+@all", "resetchannels"}, {"unsubscribe", "x"}) == AclDenial::kNone);
  CHECK(Check(h, {"+@all", "resetchannels"}, {"punsubscribe", "x*"}) == AclDenial::kNone);
  CHECK(Check(h, {"+@all", "allchannels"}, {"publish", "any", "m"}) == AclDenial::kNone);
  CHECK(h.Run({"acl", "setuser", "pub", "on", ">pw", "+@all", "resetchannels", "&ok"}) == Ok());
  LoginAs(h, "pub", "pw");
  CHECK(h.Run({"publish", "no", "m"}) ==
        "-NOPERM this user has no permissions to access one of the channels used as "
        "arguments\r\n");
  CHECK(h.Run({"publish", "ok", "m"}) == ":0\r\n");
}

TEST_CASE("The gate: NOPERM, MULTI, scripts, AUTH and user changes") {
  Harness h;
  REQUIRE(h.Cmd("acl setuser lim on >pw ~rl:* -@all +gcra.take +multi +exec +eval") == Ok());
  LoginAs(h, "lim", "pw");
  CHECK(h.Cmd("acl whoami") ==
        "-NOPERM this user has no permissions to run the 'acl|whoami' command\r\n");
  CHECK(h.Cmd("gcra.take other 10 1s") ==
        "-NOPERM this user has no permissions to access one of the keys used as arguments\r\n");
  CHECK(h.Cmd("gcra.take rl:a 10 1s").starts_with("*5\r\n:1\r\n"));
  CHECK(h.Cmd("multi") == Ok());
  CHECK(h.Cmd("get rl:a") == "-NOPERM this user has no permissions to run the 'get' command\r\n");
  CHECK(h.Cmd("exec") == "-EXECABORT Transaction discarded because of previous errors.\r\n");
  CHECK(h.Run({"eval", "return 1", "0"}) == ":1\r\n");
  CHECK(h.Run({"auth", "lim", "wrong"}) ==
        "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
  LoginAs(h, "default", "anything");  // default is nopass
  CHECK(h.Cmd("acl whoami") == Bulk("default"));
  REQUIRE(h.Cmd("acl setuser default -debug") == Ok());
  CHECK(h.Cmd("debug clock real") ==
        "-NOPERM this user has no permissions to run the 'debug' command\r\n");
}

// The goal is < 3% of GCRA.TAKE's CPU; the bound here is looser so a loaded machine does not
// fail it, and the measured shares are printed (docs/security.md has the numbers).
TEST_CASE("ACL check cost against GCRA.TAKE's") {
  Harness h;
  const CommandSpec* spec = h.table().Find("gcra.take");
  std::vector<std::string_view> args = {"gcra.take", "rl:a", "1000000", "1s"};
  std::string out;
  protocol::ReplyWriter writer(&out, 2);
  CommandContext ctx(h.store(), h.server(), h.client(), writer);
  REQUIRE(CheckClientAcl(ctx, *spec, args, "toplevel") == AclDenial::kNone);
  CHECK(h.client().acl_unrestricted);
  REQUIRE(h.Cmd("acl setuser lim on nopass ~rl:* -@all +gcra.take") == Ok());
  const AclUser lim = *h.server().acl().Find("lim");
  using Clock = std::chrono::steady_clock;
  auto per_call_ns = [](int n, auto&& fn) {
    const auto start = Clock::now();
    for (int i = 0; i < n; ++i) fn();
    return std::chrono::duration<double, std::nano>(Clock::now() - start).count() / n;
  };
  int denied = 0;
  const double take_ns = per_call_ns(20000, [&] { h.Cmd("gcra.take rl:a 1000000 1s"); });
  const double fast_ns = per_call_ns(
      200000, [&] { denied += CheckClientAcl(ctx, *spec, args, "toplevel") != AclDenial::kNone; });
  const double restricted_ns = per_call_ns(
      200000, [&] { denied += CheckAclUser(lim, *spec, args).denial != AclDenial::kNone; });
  CHECK(denied == 0);
  MESSAGE("GCRA.TAKE " << take_ns << " ns; ACL check: default user " << fast_ns << " ns ("
                       << 100 * fast_ns / take_ns << "%), restricted user " << restricted_ns
                       << " ns (" << 100 * restricted_ns / take_ns << "%)");
  CHECK(fast_ns < 0.03 * take_ns);
  CHECK(restricted_ns < 0.10 * take_ns);
}

}  // namespace sluice::server::testing
