// Key commands through the real dispatcher and Store. Every expected reply below was checked
// against redis-server 7.0.15 (manual clock here, so TTLs are exact).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sluice/limiter.h"
#include "tests/server/harness.h"

namespace sluice::server::testing {

namespace {

constexpr int64_t kNow = 1'700'000'000'000;  // the harness's manual clock, in ms

const std::string kNotInt = NotIntegerErr();
const std::string kSyntax = SyntaxErr();
const std::string kNxAndOthers =
    Err("ERR NX and XX, GT or LT options at the same time are not compatible");
const std::string kGtAndLt = Err("ERR GT and LT options at the same time are not compatible");

std::string Arity(const std::string& cmd) { return ArityErr(cmd); }
std::string BadExpire(const std::string& cmd) { return BadExpireErr(cmd); }

// Splits a raw RESP2 reply "*N\r\n$len\r\nkey\r\n..." of bulk strings into the keys (tests only
// use keys without CR/LF).
std::vector<std::string> ParseBulkArray(const std::string& reply, size_t* pos) {
  std::vector<std::string> keys;
  REQUIRE(reply[*pos] == '*');
  size_t eol = reply.find("\r\n", *pos);
  int n = std::stoi(reply.substr(*pos + 1, eol - *pos - 1));
  *pos = eol + 2;
  for (int i = 0; i < n; ++i) {
    REQUIRE(reply[*pos] == '$');
    eol = reply.find("\r\n", *pos);
    size_t len = std::stoul(reply.substr(*pos + 1, eol - *pos - 1));
    keys.push_back(reply.substr(eol + 2, len));
    *pos = eol + 2 + len + 2;
  }
  return keys;
}

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<std::string> KeysOf(Harness& h, const std::string& pattern) {
  std::string reply = h.Run({"keys", pattern});
  size_t pos = 0;
  std::vector<std::string> keys = ParseBulkArray(reply, &pos);
  CHECK(pos == reply.size());
  return Sorted(keys);
}

// Runs a full SCAN iteration with the given options; returns every key seen (with repeats)
// and checks each page's shape.
std::vector<std::string> ScanAll(Harness& h, std::vector<std::string> options) {
  std::vector<std::string> seen;
  std::string cursor = "0";
  for (int round = 0; round < 10000; ++round) {
    std::vector<std::string> args = {"scan", cursor};
    args.insert(args.end(), options.begin(), options.end());
    std::string reply = h.Run(args);
    REQUIRE(reply.rfind("*2\r\n$", 0) == 0);
    size_t eol = reply.find("\r\n", 4);
    size_t len = std::stoul(reply.substr(5, eol - 5));
    cursor = reply.substr(eol + 2, len);
    size_t pos = eol + 2 + len + 2;
    std::vector<std::string> page = ParseBulkArray(reply, &pos);
    CHECK(pos == reply.size());
    seen.insert(seen.end(), page.begin(), page.end());
    if (cursor == "0") return seen;
  }
  FAIL("SCAN never returned cursor 0");
  return seen;
}

}  // namespace

TEST_CASE("key commands check arity") {
  Harness h;
  struct Case {
    const char* line;
    const char* name;
  };
  const std::vector<Case> cases = {
      {"del", "del"},
      {"unlink", "unlink"},
      {"exists", "exists"},
      {"expire k", "expire"},
      {"pexpire k", "pexpire"},
      {"expireat k", "expireat"},
      {"pexpireat k", "pexpireat"},
      {"ttl", "ttl"},
      {"ttl a b", "ttl"},
      {"pttl", "pttl"},
      {"expiretime", "expiretime"},
      {"pexpiretime a b", "pexpiretime"},
      {"persist", "persist"},
      {"type", "type"},
      {"type a b", "type"},
      {"rename a", "rename"},
      {"rename a b c", "rename"},
      {"renamenx a", "renamenx"},
      {"copy a", "copy"},
      {"keys", "keys"},
      {"keys a b", "keys"},
      {"scan", "scan"},
      {"randomkey x", "randomkey"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.line);
    CHECK(h.Cmd(c.line) == Arity(c.name));
  }
}

TEST_CASE("DEL, UNLINK, EXISTS") {
  Harness h;
  CHECK(h.Cmd("mset a 1 b 2 c 3") == Ok());
  MakeNonString(h, "conc");
  CHECK(h.Cmd("exists a a nokey b conc") == Int(4));
  CHECK(h.Cmd("exists nokey") == Int(0));
  CHECK(h.Cmd("del a nokey a") == Int(1));
  CHECK(h.Cmd("del a") == Int(0));
  CHECK(h.Cmd("unlink b c conc x") == Int(3));
  CHECK(h.Cmd("exists a b c conc") == Int(0));
  // An expired key does not exist and is not counted as deleted. As in Redis, a key is
  // expired once now > its expiry time: at exactly that time it still exists (PTTL 0).
  CHECK(h.Cmd("set t v px 10") == Ok());
  h.AdvanceMs(10);
  CHECK(h.Cmd("exists t") == Int(1));
  CHECK(h.Cmd("pttl t") == Int(0));
  h.AdvanceMs(1);
  CHECK(h.Cmd("exists t") == Int(0));
  CHECK(h.Cmd("del t") == Int(0));
}

TEST_CASE("EXPIRE family sets absolute expiries from the injected clock") {
  Harness h;
  CHECK(h.Cmd("expire nokey 10") == Int(0));
  CHECK(h.Cmd("set k v") == Ok());
  CHECK(h.Cmd("expire k 10") == Int(1));
  CHECK(h.Cmd("pexpiretime k") == Int(kNow + 10000));
  CHECK(h.Cmd("pexpire k 1234") == Int(1));
  CHECK(h.Cmd("pttl k") == Int(1234));
  CHECK(h.Cmd("expireat k 1700000100") == Int(1));
  CHECK(h.Cmd("ttl k") == Int(100));
  CHECK(h.Cmd("expiretime k") == Int(1700000100));
  CHECK(h.Cmd("pexpireat k 1700000000500") == Int(1));
  CHECK(h.Cmd("pttl k") == Int(500));
  CHECK(h.Cmd("EXPIRE k 5") == Int(1));
  h.AdvanceMs(4999);
  CHECK(h.Cmd("pttl k") == Int(1));
  CHECK(h.Cmd("get k") == Bulk("v"));
  h.AdvanceMs(1);
  CHECK(h.Cmd("pttl k") == Int(0));
  CHECK(h.Cmd("get k") == Bulk("v"));  // expired only once now > expiry, as Redis
  h.AdvanceMs(1);
  CHECK(h.Cmd("get k") == Nil());
  CHECK(h.Cmd("ttl k") == Int(-2));
  // Works on any type.
  MakeNonString(h, "conc");
  CHECK(h.Cmd("pexpire conc 100000") == Int(1));
  CHECK(h.Cmd("pttl conc") == Int(100000));
}

TEST_CASE("EXPIRE with zero, negative and past times deletes the key") {
  Harness h;
  for (const char* line :
       {"expire k 0", "expire k -1", "pexpire k -5000", "expireat k 1", "pexpireat k 0",
        "pexpireat k 1700000000000", "expire k -9223372036854775", "pexpire k -9223372036854775808",
        "pexpireat k -9223372036854775808"}) {
    CAPTURE(line);
    CHECK(h.Cmd("set k v") == Ok());
    CHECK(h.Cmd(line) == Int(1));
    CHECK(h.Cmd("exists k") == Int(0));
    CHECK(h.Cmd(line) == Int(0));  // missing now
  }
  // NX with a past time on a key without TTL also deletes it.
  CHECK(h.Cmd("set k v") == Ok());
  CHECK(h.Cmd("expire k -5 nx") == Int(1));
  CHECK(h.Cmd("exists k") == Int(0));
  // GT fails on a key without TTL (infinite), LT succeeds.
  CHECK(h.Cmd("set k v") == Ok());
  CHECK(h.Cmd("expire k -1 gt") == Int(0));
  CHECK(h.Cmd("exists k") == Int(1));
  CHECK(h.Cmd("expire k -1 lt") == Int(1));
  CHECK(h.Cmd("exists k") == Int(0));
}

TEST_CASE("EXPIRE time overflow and non-integers") {
  Harness h;
  CHECK(h.Cmd("set k v") == Ok());
  CHECK(h.Cmd("expire k 9223372036854775807") == BadExpire("expire"));
  CHECK(h.Cmd("expire k 9223372036854775") == BadExpire("expire"));  // ms + now overflows
  CHECK(h.Cmd("expire k 9223372036854774") == BadExpire("expire"));
  CHECK(h.Cmd("expire k -9223372036854775808") == BadExpire("expire"));
  CHECK(h.Cmd("expire k -9223372036854776") == BadExpire("expire"));
  CHECK(h.Cmd("pexpire k 9223372036854775807") == BadExpire("pexpire"));
  CHECK(h.Cmd("pexpire k 9223370336854775808") == BadExpire("pexpire"));
  CHECK(h.Cmd("expireat k 9223372036854775807") == BadExpire("expireat"));
  CHECK(h.Cmd("expireat k 9223372036854776") == BadExpire("expireat"));
  CHECK(h.Cmd("pexpire nokey 9223372036854775807") == BadExpire("pexpire"));
  CHECK(h.Cmd("ttl k") == Int(-1));
  // The largest that fit.
  CHECK(h.Cmd("pexpire k 9223370336854775807") == Int(1));
  CHECK(h.Cmd("pexpiretime k") == Int(9223372036854775807));
  CHECK(h.Cmd("expiretime k") == Int(9223372036854776));  // rounded without overflow
  CHECK(h.Cmd("pttl k") == Int(9223370336854775807));
  CHECK(h.Cmd("ttl k") == Int(9223370336854776));
  CHECK(h.Cmd("expireat k 9223372036854775") == Int(1));
  CHECK(h.Cmd("pexpiretime k") == Int(9223372036854775000));
  CHECK(h.Cmd("pexpireat k 9223372036854775807") == Int(1));
  CHECK(h.Cmd("pexpiretime k") == Int(9223372036854775807));
  for (const char* bad : {"abc", "1.5", "+1", "01", " 1", "1 ", "", "9223372036854775808"}) {
    CAPTURE(bad);
    CHECK(h.Run({"expire", "k", bad}) == kNotInt);
    CHECK(h.Run({"pexpireat", "nokey", bad}) == kNotInt);
  }
}

TEST_CASE("EXPIRE NX, XX, GT, LT") {
  Harness h;
  CHECK(h.Cmd("set k v") == Ok());
  CHECK(h.Cmd("expire k 100 xx") == Int(0));
  CHECK(h.Cmd("expire k 100 gt") == Int(0));
  CHECK(h.Cmd("ttl k") == Int(-1));
  CHECK(h.Cmd("expire k 100 nx") == Int(1));
  CHECK(h.Cmd("ttl k") == Int(100));
  CHECK(h.Cmd("expire k 200 nx") == Int(0));
  CHECK(h.Cmd("expire k 50 gt") == Int(0));
  CHECK(h.Cmd("expire k 100 gt") == Int(0));  // equal is not greater
  CHECK(h.Cmd("expire k 150 GT") == Int(1));
  CHECK(h.Cmd("expire k 200 lt") == Int(0));
  CHECK(h.Cmd("expire k 150 lt") == Int(0));
  CHECK(h.Cmd("expire k 50 Lt") == Int(1));
  CHECK(h.Cmd("ttl k") == Int(50));
  CHECK(h.Cmd("expire k 60 xx") == Int(1));
  CHECK(h.Cmd("expire k 70 xx gt") == Int(1));
  CHECK(h.Cmd("expire k 65 xx lt") == Int(1));
  CHECK(h.Cmd("ttl k") == Int(65));
  CHECK(h.Cmd("expire k 65 gt gt") == Int(0));
  CHECK(h.Cmd("persist k") == Int(1));
  // XX LT needs a TTL, while LT alone treats "no TTL" as infinite.
  CHECK(h.Cmd("expire k 10 xx lt") == Int(0));
  CHECK(h.Cmd("ttl k") == Int(-1));
  CHECK(h.Cmd("expire k 10 lt") == Int(1));
  CHECK(h.Cmd("ttl k") == Int(10));
  CHECK(h.Cmd("expire nokey 10 nx") == Int(0));
  CHECK(h.Cmd("expire nokey 10 lt") == Int(0));
}

// Every accepted option spelling of PEXPIREAT on a missing key, a key without TTL and a key
// with one, at five times. Each outcome is redis-server 7.0.15's (checked with redis-cli):
// 'D' = 1 and the key is deleted, 'S' = 1 and PEXPIRETIME is the new time, '0' = 0 and nothing
// changes. A missing key always gives 0 and stays missing.
TEST_CASE("PEXPIREAT: every option combination on keys with and without TTL, as Redis 7") {
  Harness h;
  constexpr int64_t kTtl = kNow + 10'000;  // the existing expiry
  // Columns: a past time, a negative time, before kTtl, equal to kTtl, after kTtl.
  const int64_t times[] = {kNow - 1000, -5, kTtl - 1000, kTtl, kTtl + 1000};
  struct Row {
    const char* options;   // appended to "pexpireat k <time>"
    const char* no_ttl;    // outcomes on a key without TTL, one per column
    const char* with_ttl;  // outcomes on a key whose expiry is kTtl
  };
  const Row rows[] = {
      {"", "DDSSS", "DDSSS"},          {" NX", "DDSSS", "00000"},
      {" XX", "00000", "DDSSS"},       {" GT", "00000", "0000S"},
      {" LT", "DDSSS", "DDS00"},       {" XX GT", "00000", "0000S"},
      {" XX LT", "00000", "DDS00"},    {" GT XX", "00000", "0000S"},
      {" LT XX", "00000", "DDS00"},    {" xx lt", "00000", "DDS00"},
      {" XX XX LT", "00000", "DDS00"}, {" gt xx gt", "00000", "0000S"},
      {" nx nx", "DDSSS", "00000"},
  };
  for (const Row& row : rows) {
    for (int col = 0; col < 5; ++col) {
      const std::string line = "pexpireat k " + std::to_string(times[col]) + row.options;
      CAPTURE(line);
      h.Cmd("del k");
      CHECK(h.Cmd(line) == Int(0));  // missing key
      CHECK(h.Cmd("pexpiretime k") == Int(-2));
      for (bool with_ttl : {false, true}) {
        CAPTURE(with_ttl);
        CHECK(h.Cmd(with_ttl ? "set k v pxat " + std::to_string(kTtl) : "set k v") == Ok());
        const char expected = (with_ttl ? row.with_ttl : row.no_ttl)[col];
        CHECK(h.Cmd(line) == Int(expected == '0' ? 0 : 1));
        const int64_t before = with_ttl ? kTtl : -1;
        const int64_t after = expected == 'D' ? -2 : expected == 'S' ? times[col] : before;
        CHECK(h.Cmd("pexpiretime k") == Int(after));
      }
    }
  }
}

// The relative and second forms go through the same conditions. Checked against
// redis-server 7.0.15; the two "equal" lines need the manual clock (a live server's clock
// moves between commands, so there the new time is no longer equal to the old one).
TEST_CASE("EXPIRE, PEXPIRE, EXPIREAT with XX GT and XX LT") {
  Harness h;
  CHECK(h.Cmd("set k v") == Ok());
  for (const char* line :
       {"expire k 100 xx gt", "expire k 100 gt xx", "expire k 100 xx lt", "expire k 100 lt xx",
        "pexpire k 100 xx lt", "expireat k 1 xx lt", "pexpireat k 1 lt xx", "expire k -1 xx lt",
        "expireat k 9999999999 xx gt"}) {
    CAPTURE(line);
    CHECK(h.Cmd(line) == Int(0));  // no TTL: XX fails whatever GT/LT would say
    CHECK(h.Cmd("ttl k") == Int(-1));
  }
  CHECK(h.Cmd("expire k 100") == Int(1));
  CHECK(h.Cmd("expire k 200 lt xx") == Int(0));
  CHECK(h.Cmd("expire k 100 xx lt") == Int(0));  // equal is not less
  CHECK(h.Cmd("expire k 50 XX LT") == Int(1));
  CHECK(h.Cmd("ttl k") == Int(50));
  CHECK(h.Cmd("pexpire k 50000 xx gt") == Int(0));  // equal is not greater
  CHECK(h.Cmd("pexpire k 50001 gt xx") == Int(1));
  CHECK(h.Cmd("pttl k") == Int(50001));
  CHECK(h.Cmd("expireat k 1700000060 xx gt") == Int(1));
  CHECK(h.Cmd("ttl k") == Int(60));
  CHECK(h.Cmd("expireat k 1700000001 lt xx") == Int(1));
  CHECK(h.Cmd("pttl k") == Int(1000));
  CHECK(h.Cmd("expire k -1 xx lt") == Int(1));  // a past time under XX LT deletes the key
  CHECK(h.Cmd("exists k") == Int(0));
  CHECK(h.Cmd("expire k 10 xx lt") == Int(0));
  CHECK(h.Cmd("expire k 10 xx gt") == Int(0));
}

TEST_CASE("EXPIRE option errors and their precedence") {
  Harness h;
  CHECK(h.Cmd("set k v") == Ok());
  CHECK(h.Cmd("expire k 100 nx xx") == kNxAndOthers);
  CHECK(h.Cmd("expire k 100 nx gt") == kNxAndOthers);
  CHECK(h.Cmd("expire k 100 lt nx") == kNxAndOthers);
  CHECK(h.Cmd("expire k 100 gt lt") == kGtAndLt);
  CHECK(h.Cmd("pexpire k 100 lt xx gt") == kGtAndLt);
  CHECK(h.Cmd("expire k 100 nx gt lt") == kNxAndOthers);
  CHECK(h.Cmd("expire k 100 foo") == Err("ERR Unsupported option foo"));
  CHECK(h.Cmd("expire k 100 nx FOO") == Err("ERR Unsupported option FOO"));
  CHECK(h.Cmd("expire k 100 nx xx bar") == Err("ERR Unsupported option bar"));
  // Options are checked before the time.
  CHECK(h.Cmd("expire k abc foo") == Err("ERR Unsupported option foo"));
  CHECK(h.Cmd("expire k abc nx xx") == kNxAndOthers);
  CHECK(h.Cmd("expire k 9223372036854775807 foo") == Err("ERR Unsupported option foo"));
  CHECK(h.Cmd("expire nokey 10 foo") == Err("ERR Unsupported option foo"));
  CHECK(h.Cmd("ttl k") == Int(-1));
}

TEST_CASE("TTL, PTTL, EXPIRETIME, PEXPIRETIME, PERSIST") {
  Harness h;
  for (const char* cmd : {"ttl", "pttl", "expiretime", "pexpiretime"}) {
    CAPTURE(cmd);
    CHECK(h.Run({cmd, "nokey"}) == Int(-2));
  }
  CHECK(h.Cmd("set k v") == Ok());
  for (const char* cmd : {"ttl", "pttl", "expiretime", "pexpiretime"}) {
    CAPTURE(cmd);
    CHECK(h.Run({cmd, "k"}) == Int(-1));
  }
  // TTL rounds to the nearest second: (pttl + 500) / 1000.
  CHECK(h.Cmd("pexpire k 1499") == Int(1));
  CHECK(h.Cmd("ttl k") == Int(1));
  CHECK(h.Cmd("pexpire k 1500") == Int(1));
  CHECK(h.Cmd("ttl k") == Int(2));
  CHECK(h.Cmd("pexpire k 499") == Int(1));
  CHECK(h.Cmd("ttl k") == Int(0));
  CHECK(h.Cmd("pexpiretime k") == Int(kNow + 499));
  CHECK(h.Cmd("expiretime k") == Int(1700000000));
  CHECK(h.Cmd("pexpire k 500") == Int(1));
  CHECK(h.Cmd("ttl k") == Int(1));
  CHECK(h.Cmd("expiretime k") == Int(1700000001));
  h.AdvanceMs(200);
  CHECK(h.Cmd("pttl k") == Int(300));
  CHECK(h.Cmd("ttl k") == Int(0));
  CHECK(h.Cmd("pexpiretime k") == Int(kNow + 500));
  CHECK(h.Cmd("persist k") == Int(1));
  CHECK(h.Cmd("persist k") == Int(0));
  CHECK(h.Cmd("persist nokey") == Int(0));
  CHECK(h.Cmd("ttl k") == Int(-1));
  h.AdvanceMs(1000);
  CHECK(h.Cmd("get k") == Bulk("v"));
  MakeNonString(h, "conc");
  CHECK(h.Cmd("expire conc 10") == Int(1));
  CHECK(h.Cmd("ttl conc") == Int(10));
  CHECK(h.Cmd("persist conc") == Int(1));
  CHECK(h.Cmd("ttl conc") == Int(-1));
}

TEST_CASE("TYPE") {
  Harness h;
  CHECK(h.Cmd("type nokey") == Simple("none"));
  CHECK(h.Cmd("set k v") == Ok());
  CHECK(h.Cmd("type k") == Simple("string"));
  MakeNonString(h, "conc");
  CHECK(h.Cmd("type conc") == Simple("conc"));
  CHECK(h.Cmd("set t v px 5") == Ok());
  h.AdvanceMs(6);
  CHECK(h.Cmd("type t") == Simple("none"));
  h.Resp3();
  CHECK(h.Cmd("type k") == Simple("string"));
}

TEST_CASE("RENAME and RENAMENX") {
  Harness h;
  CHECK(h.Cmd("rename nokey x") == Err("ERR no such key"));
  CHECK(h.Cmd("rename nokey nokey") == Err("ERR no such key"));
  CHECK(h.Cmd("renamenx nokey x") == Err("ERR no such key"));
  CHECK(h.Cmd("renamenx nokey nokey") == Err("ERR no such key"));
  CHECK(h.Cmd("set k v ex 100") == Ok());
  CHECK(h.Cmd("rename k k") == Ok());
  CHECK(h.Cmd("renamenx k k") == Int(0));
  CHECK(h.Cmd("get k") == Bulk("v"));
  CHECK(h.Cmd("ttl k") == Int(100));
  CHECK(h.Cmd("rename k k2") == Ok());
  CHECK(h.Cmd("exists k") == Int(0));
  CHECK(h.Cmd("get k2") == Bulk("v"));
  CHECK(h.Cmd("ttl k2") == Int(100));  // the TTL moves with the value
  CHECK(h.Cmd("set other o") == Ok());
  CHECK(h.Cmd("renamenx k2 other") == Int(0));
  CHECK(h.Cmd("get other") == Bulk("o"));
  CHECK(h.Cmd("renamenx k2 k3") == Int(1));
  CHECK(h.Cmd("get k3") == Bulk("v"));
  CHECK(h.Cmd("rename k3 other") == Ok());  // RENAME overwrites, TTL included
  CHECK(h.Cmd("get other") == Bulk("v"));
  CHECK(h.Cmd("ttl other") == Int(100));
  CHECK(h.Cmd("set plain p") == Ok());
  CHECK(h.Cmd("rename plain other") == Ok());
  CHECK(h.Cmd("ttl other") == Int(-1));
  MakeNonString(h, "conc");
  CHECK(h.Cmd("rename conc c2") == Ok());
  CHECK(h.Cmd("type c2") == Simple("conc"));
  CHECK(h.Cmd("set e v px 1") == Ok());
  h.AdvanceMs(2);
  CHECK(h.Cmd("rename e f") == Err("ERR no such key"));
}

TEST_CASE("COPY") {
  Harness h;
  CHECK(h.Cmd("set a v ex 100") == Ok());
  CHECK(h.Cmd("copy a a") == Err("ERR source and destination objects are the same"));
  CHECK(h.Cmd("copy a a db 0") == Err("ERR source and destination objects are the same"));
  CHECK(h.Cmd("copy nokey nokey") == Err("ERR source and destination objects are the same"));
  CHECK(h.Cmd("copy a b db 16") == Err("ERR DB index is out of range"));
  CHECK(h.Cmd("copy a b db -1") == Err("ERR DB index is out of range"));
  CHECK(h.Cmd("copy a b db abc") == kNotInt);
  CHECK(h.Cmd("copy a b db 99999999999999999999") == kNotInt);
  CHECK(h.Cmd("copy a b db 2147483648") ==
        Err("ERR value is out of range, value must between -2147483648 and 2147483647"));
  CHECK(h.Cmd("copy a b db -2147483649") ==
        Err("ERR value is out of range, value must between -2147483648 and 2147483647"));
  CHECK(h.Cmd("copy a b db 2147483647") == Err("ERR DB index is out of range"));
  CHECK(h.Cmd("copy a b db") == kSyntax);
  CHECK(h.Cmd("copy a b foo") == kSyntax);
  CHECK(h.Cmd("copy a a foo") == kSyntax);  // options before the same-key check
  CHECK(h.Cmd("copy nokey b") == Int(0));
  CHECK(h.Cmd("copy a b") == Int(1));
  CHECK(h.Cmd("get b") == Bulk("v"));
  CHECK(h.Cmd("ttl b") == Int(100));  // the TTL is copied
  CHECK(h.Cmd("set a w") == Ok());
  CHECK(h.Cmd("copy a b") == Int(0));
  CHECK(h.Cmd("get b") == Bulk("v"));
  CHECK(h.Cmd("copy a b REPLACE") == Int(1));
  CHECK(h.Cmd("get b") == Bulk("w"));
  CHECK(h.Cmd("ttl b") == Int(-1));
  // Another database, including the same key name.
  CHECK(h.Cmd("copy a a db 1") == Int(1));
  CHECK(h.Cmd("copy a a db 1") == Int(0));
  CHECK(h.Cmd("copy a a DB 1 replace") == Int(1));
  CHECK(h.Cmd("exists a") == Int(1));
  h.client().db = 1;
  CHECK(h.Cmd("get a") == Bulk("w"));
  CHECK(h.Cmd("copy a a db 1") == Err("ERR source and destination objects are the same"));
  CHECK(h.Cmd("copy a z db 0") == Int(1));
  h.client().db = 0;
  CHECK(h.Cmd("get z") == Bulk("w"));
  MakeNonString(h, "conc");
  CHECK(h.Cmd("copy conc conc2") == Int(1));
  CHECK(h.Cmd("type conc2") == Simple("conc"));
}

TEST_CASE("KEYS patterns") {
  Harness h;
  CHECK(h.Cmd("keys *") == Arr({}));
  CHECK(h.Cmd("mset hello 1 hallo 2 hxllo 3 hllo 4 heeeello 5 foo 6 f*o 7") == Ok());
  MakeNonString(h, "conc");
  CHECK(KeysOf(h, "*") ==
        Sorted({"hello", "hallo", "hxllo", "hllo", "heeeello", "foo", "f*o", "conc"}));
  CHECK(KeysOf(h, "h?llo") == Sorted({"hello", "hallo", "hxllo"}));
  CHECK(KeysOf(h, "h*llo") == Sorted({"hello", "hallo", "hxllo", "hllo", "heeeello"}));
  CHECK(KeysOf(h, "h[ae]llo") == Sorted({"hello", "hallo"}));
  CHECK(KeysOf(h, "h[^e]llo") == Sorted({"hallo", "hxllo"}));
  CHECK(KeysOf(h, "h[a-b]llo") == Sorted({"hallo"}));
  CHECK(KeysOf(h, "f\\*o") == Sorted({"f*o"}));
  CHECK(KeysOf(h, "foo") == Sorted({"foo"}));
  CHECK(KeysOf(h, "nomatch*") == Sorted({}));
  CHECK(KeysOf(h, "[") == Sorted({}));
  CHECK(h.Cmd("set gone v px 1") == Ok());
  h.AdvanceMs(2);
  CHECK(KeysOf(h, "g*") == Sorted({}));  // expired keys are invisible
  h.client().db = 3;
  CHECK(h.Cmd("keys *") == Arr({}));  // databases are separate
}

TEST_CASE("SCAN arguments") {
  Harness h;
  CHECK(h.Cmd("scan abc") == Err("ERR invalid cursor"));
  CHECK(h.Cmd("scan 1x") == Err("ERR invalid cursor"));
  CHECK(h.Run({"scan", " 1"}) == Err("ERR invalid cursor"));
  CHECK(h.Cmd("scan 18446744073709551616") == Err("ERR invalid cursor"));
  CHECK(h.Cmd("scan abc count 0") == Err("ERR invalid cursor"));  // the cursor first
  CHECK(h.Cmd("scan 0 count 0") == kSyntax);
  CHECK(h.Cmd("scan 0 count -1") == kSyntax);
  CHECK(h.Cmd("scan 0 count abc") == kNotInt);
  CHECK(h.Cmd("scan 0 count") == kSyntax);
  CHECK(h.Cmd("scan 0 match") == kSyntax);
  CHECK(h.Cmd("scan 0 type") == kSyntax);
  CHECK(h.Cmd("scan 0 foo") == kSyntax);
  CHECK(h.Cmd("scan 0 foo bar") == kSyntax);
  CHECK(h.Cmd("scan 0") == Arr({Bulk("0"), Arr({})}));
  CHECK(h.Run({"scan", ""}) == Arr({Bulk("0"), Arr({})}));  // strtoul reads "" as 0
  CHECK(h.Cmd("set k v") == Ok());
  CHECK(h.Cmd("scan 0 MATCH k* COUNT 100 TYPE string") == Arr({Bulk("0"), Arr({Bulk("k")})}));
  CHECK(h.Cmd("scan 0 type nosuchtype") == Arr({Bulk("0"), Arr({})}));
  h.Resp3();
  CHECK(h.Cmd("scan 0") == Arr({Bulk("0"), Arr({Bulk("k")})}));
}

TEST_CASE("SCAN visits every key exactly once, with MATCH, COUNT and TYPE") {
  Harness h;
  std::vector<std::string> all;
  for (int i = 0; i < 250; ++i) {
    std::string key = (i % 2 ? "odd:" : "even:") + std::to_string(i);
    CHECK(h.Run({"set", key, "v"}) == Ok());
    all.push_back(key);
  }
  MakeNonString(h, "conc:1");
  MakeNonString(h, "conc:2");
  std::vector<std::string> with_conc = all;
  with_conc.push_back("conc:1");
  with_conc.push_back("conc:2");

  // Our keyspace is ordered, so a stable keyspace is visited exactly once (Redis promises
  // only "at least once"): no duplicates, nothing missed.
  CHECK(Sorted(ScanAll(h, {})) == Sorted(with_conc));
  CHECK(Sorted(ScanAll(h, {"count", "1"})) == Sorted(with_conc));
  CHECK(Sorted(ScanAll(h, {"count", "7"})) == Sorted(with_conc));
  CHECK(Sorted(ScanAll(h, {"count", "1000"})) == Sorted(with_conc));
  CHECK(Sorted(ScanAll(h, {"match", "*"})) == Sorted(with_conc));
  std::vector<std::string> odd;
  for (const std::string& k : all) {
    if (k.rfind("odd:", 0) == 0) odd.push_back(k);
  }
  CHECK(Sorted(ScanAll(h, {"match", "odd:*", "count", "5"})) == Sorted(odd));
  CHECK(Sorted(ScanAll(h, {"type", "string"})) == Sorted(all));
  CHECK(Sorted(ScanAll(h, {"type", "conc", "count", "3"})) == Sorted({"conc:1", "conc:2"}));
  // The TYPE name is matched case-insensitively, as Redis.
  CHECK(Sorted(ScanAll(h, {"match", "conc:[1]", "type", "CONC"})) == Sorted({"conc:1"}));
  CHECK(Sorted(ScanAll(h, {"match", "nomatch*"})).empty());
}

TEST_CASE("RANDOMKEY") {
  Harness h;
  CHECK(h.Cmd("randomkey") == Nil());
  CHECK(h.Cmd("set only v") == Ok());
  CHECK(h.Cmd("randomkey") == Bulk("only"));
  CHECK(h.Cmd("mset a 1 b 2") == Ok());
  for (int i = 0; i < 50; ++i) {
    std::string reply = h.Cmd("randomkey");
    bool known = reply == Bulk("only") || reply == Bulk("a") || reply == Bulk("b");
    CHECK(known);
  }
  CHECK(h.Cmd("del only a b") == Int(3));
  CHECK(h.Cmd("set t v px 1") == Ok());
  h.AdvanceMs(2);
  CHECK(h.Cmd("randomkey") == Nil());
  h.Resp3();
  CHECK(h.Cmd("randomkey") == Null());
}

}  // namespace sluice::server::testing
