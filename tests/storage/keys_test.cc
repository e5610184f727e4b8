// Generic key commands: DEL, EXISTS, expiry family, TYPE, RENAME, COPY.
#include <doctest/doctest.h>

#include <vector>

#include "test_util.h"

namespace sluice::testing {
namespace {
using SV = std::string_view;
using Keys = std::vector<SV>;

void Put(Store& s, SV key, SV value = "v", int db = 0) {
  REQUIRE(s.Set(db, key, value, SetPlain()).ok());
}
}  // namespace

TEST_CASE("DEL counts distinct live keys; EXISTS counts repeats") {
  Fixture f;
  Put(*f.store, "a");
  Put(*f.store, "b");
  CHECK(*f.store->Exists(0, Keys{"a", "a", "b", "nope"}) == 3);
  CHECK(*f.store->Del(0, Keys{"a", "a", "nope"}) == 1);
  CHECK(*f.store->Exists(0, Keys{"a", "b"}) == 1);
  CHECK(*f.store->Del(0, Keys{"a"}) == 0);
  REQUIRE(f.store->Set(0, "t", "v", SetAt(kT0Ms + 5)).ok());
  f.AdvanceMs(6);
  CHECK(*f.store->Del(0, Keys{"t"}) == 0);  // expired: not counted
  CHECK(f.store->GetStats().expired_keys == 1);
}

TEST_CASE("EXPIREAT conditions follow Redis 7 (no TTL = infinite for GT/LT)") {
  Fixture f;
  Put(*f.store, "k");
  using C = ExpireCondition;
  CHECK_FALSE(*f.store->ExpireAt(0, "k", kT0Ms + 1000, C::kGT));
  CHECK_FALSE(*f.store->ExpireAt(0, "k", kT0Ms + 1000, C::kXX));
  CHECK(*f.store->ExpireAt(0, "k", kT0Ms + 1000, C::kLT));
  CHECK(*f.store->PTtl(0, "k") == 1000);
  CHECK_FALSE(*f.store->ExpireAt(0, "k", kT0Ms + 2000, C::kLT));
  CHECK_FALSE(*f.store->ExpireAt(0, "k", kT0Ms + 1000, C::kLT));  // equal is not less
  CHECK_FALSE(*f.store->ExpireAt(0, "k", kT0Ms + 1000, C::kGT));  // equal is not greater
  CHECK(*f.store->ExpireAt(0, "k", kT0Ms + 2000, C::kGT));
  CHECK_FALSE(*f.store->ExpireAt(0, "k", kT0Ms + 500, C::kGT));
  CHECK_FALSE(*f.store->ExpireAt(0, "k", kT0Ms + 500, C::kNX));
  CHECK(*f.store->ExpireAt(0, "k", kT0Ms + 500, C::kXX));
  CHECK(*f.store->ExpireTimeMs(0, "k") == kT0Ms + 500);
  CHECK(*f.store->Persist(0, "k"));
  CHECK_FALSE(*f.store->Persist(0, "k"));
  CHECK(*f.store->ExpireAt(0, "k", kT0Ms + 700, C::kNX));
  CHECK_FALSE(*f.store->ExpireAt(0, "missing", kT0Ms + 700, C::kAlways));
}

// Every accepted set of conditions, on a key without TTL and on a key with one, at five
// times. The expected outcomes are redis-server 7.0.15's replies to PEXPIREAT (checked with
// redis-cli): 'D' = 1 and the key is deleted, 'S' = 1 and the expiry is the new time,
// '0' = 0 and nothing changes. A missing key always gives 0.
TEST_CASE("EXPIREAT every accepted condition set matches Redis 7, checked in one step") {
  using C = ExpireCondition;
  constexpr int64_t kTtl = kT0Ms + 10'000;  // the existing expiry
  // Columns: a past time, a negative time, before kTtl, equal to kTtl, after kTtl.
  const int64_t times[] = {kT0Ms - 1000, -5, kTtl - 1000, kTtl, kTtl + 1000};
  struct Row {
    const char* name;
    C cond;
    const char* no_ttl;    // outcomes on a key without TTL, one per column
    const char* with_ttl;  // outcomes on a key whose expiry is kTtl
  };
  const Row rows[] = {
      {"none", C::kAlways, "DDSSS", "DDSSS"},
      {"NX", C::kNX, "DDSSS", "00000"},
      {"XX", C::kXX, "00000", "DDSSS"},
      {"GT", C::kGT, "00000", "0000S"},  // no TTL = infinite: never greater
      {"LT", C::kLT, "DDSSS", "DDS00"},  // no TTL = infinite: always less
      {"XX GT", C::kXX | C::kGT, "00000", "0000S"},
      {"XX LT", C::kXX | C::kLT, "00000", "DDS00"},  // XX wins over "infinite"
      {"GT XX", C::kGT | C::kXX, "00000", "0000S"},
      {"LT XX", C::kLT | C::kXX, "00000", "DDS00"},
  };
  Fixture f;
  for (const Row& row : rows) {
    for (int col = 0; col < 5; ++col) {
      const int64_t at = times[col];
      CAPTURE(row.name);
      CAPTURE(at);
      REQUIRE(*f.store->Del(0, Keys{"k"}) <= 1);
      CHECK_FALSE(*f.store->ExpireAt(0, "k", at, row.cond));  // missing key
      CHECK(*f.store->ExpireTimeMs(0, "k") == -2);
      for (bool with_ttl : {false, true}) {
        CAPTURE(with_ttl);
        REQUIRE(f.store->Set(0, "k", "v", with_ttl ? SetAt(kTtl) : SetPlain()).ok());
        const char expected = (with_ttl ? row.with_ttl : row.no_ttl)[col];
        const int64_t before = with_ttl ? kTtl : -1;
        CHECK(*f.store->ExpireAt(0, "k", at, row.cond) == (expected != '0'));
        const int64_t after = expected == 'D' ? -2 : expected == 'S' ? at : before;
        CHECK(*f.store->ExpireTimeMs(0, "k") == after);
        if (expected != 'D') CHECK(*f.store->Get(0, "k") == "v");
      }
    }
  }
}

TEST_CASE("EXPIREAT XX|LT never gives a TTL to a key without one; LT alone does") {
  Fixture f;
  using C = ExpireCondition;
  Put(*f.store, "k");
  CHECK_FALSE(*f.store->ExpireAt(0, "k", kT0Ms + 100, C::kXX | C::kLT));
  CHECK(*f.store->PTtl(0, "k") == -1);
  CHECK(*f.store->ExpireAt(0, "k", kT0Ms + 100, C::kLT));
  CHECK(*f.store->PTtl(0, "k") == 100);
  CHECK(*f.store->ExpireAt(0, "k", kT0Ms + 50, C::kXX | C::kLT));
  CHECK(*f.store->PTtl(0, "k") == 50);
  CHECK(*f.store->Persist(0, "k"));  // what the old two-step emulation could race with
  CHECK_FALSE(*f.store->ExpireAt(0, "k", kT0Ms + 10, C::kXX | C::kLT));
  CHECK(*f.store->PTtl(0, "k") == -1);
  CHECK_FALSE(*f.store->ExpireAt(0, "k", kT0Ms + 10, C::kXX | C::kGT));
  CHECK(*f.store->PTtl(0, "k") == -1);
}

TEST_CASE("EXPIREAT rejects the condition sets Redis rejects, before looking at the key") {
  Fixture f;
  using C = ExpireCondition;
  Put(*f.store, "k");
  REQUIRE(f.store->Set(0, "t", "v", SetAt(kT0Ms + 1000)).ok());
  const C bad[] = {C::kNX | C::kXX,   C::kNX | C::kGT,          C::kNX | C::kLT,
                   C::kGT | C::kLT,   C::kXX | C::kGT | C::kLT, C::kNX | C::kXX | C::kGT | C::kLT,
                   static_cast<C>(16)};
  for (C cond : bad) {
    CAPTURE(static_cast<unsigned>(cond));
    for (SV key : {SV("k"), SV("t"), SV("missing")}) {
      CAPTURE(key);
      auto r = f.store->ExpireAt(0, key, kT0Ms + 500, cond);
      CHECK(r.status().code() == Code::kInvalidArgument);
      r = f.store->ExpireAt(0, key, kT0Ms - 500, cond);  // a past time deletes nothing either
      CHECK(r.status().code() == Code::kInvalidArgument);
    }
  }
  CHECK(*f.store->ExpireTimeMs(0, "k") == -1);
  CHECK(*f.store->ExpireTimeMs(0, "t") == kT0Ms + 1000);
  CHECK(*f.store->ExpireTimeMs(0, "missing") == -2);
}

TEST_CASE("EXPIREAT at or before now deletes and returns true") {
  Fixture f;
  Put(*f.store, "k");
  CHECK(*f.store->ExpireAt(0, "k", kT0Ms, ExpireCondition::kAlways));
  CHECK(*f.store->Exists(0, Keys{"k"}) == 0);
  Put(*f.store, "k");
  CHECK(*f.store->ExpireAt(0, "k", -1, ExpireCondition::kLT));
  CHECK(*f.store->Exists(0, Keys{"k"}) == 0);
}

TEST_CASE("PTTL and PEXPIRETIME: -2 missing, -1 persistent, else ms; expiry ms is still live") {
  Fixture f;
  CHECK(*f.store->PTtl(0, "k") == -2);
  CHECK(*f.store->ExpireTimeMs(0, "k") == -2);
  Put(*f.store, "k");
  CHECK(*f.store->PTtl(0, "k") == -1);
  CHECK(*f.store->ExpireTimeMs(0, "k") == -1);
  REQUIRE(*f.store->ExpireAt(0, "k", kT0Ms + 250, ExpireCondition::kAlways));
  f.AdvanceMs(50);
  CHECK(*f.store->PTtl(0, "k") == 200);
  f.AdvanceMs(200);
  CHECK(*f.store->PTtl(0, "k") == 0);  // Redis: expired only once now > expiry
  f.AdvanceMs(1);
  CHECK(*f.store->PTtl(0, "k") == -2);
  CHECK(*f.store->ExpireTimeMs(0, "k") == -2);
}

TEST_CASE("TYPE") {
  Fixture f;
  CHECK(*f.store->Type(0, "k") == std::nullopt);
  Put(*f.store, "k");
  CHECK(**f.store->Type(0, "k") == ValueKind::kString);
  f.PutRaw(0, "s", ValueKind::kSliding, "x");
  CHECK(**f.store->Type(0, "s") == ValueKind::kSliding);
  CHECK(std::string(TypeName(ValueKind::kString)) == "string");
  CHECK(std::string(TypeName(ValueKind::kLeaky)) == "leaky");
  CHECK(std::string(TypeName(ValueKind::kSliding)) == "sliding");
  CHECK(std::string(TypeName(ValueKind::kConc)) == "conc");
}

TEST_CASE("RENAME moves value and TTL; RENAMENX; same key; missing source") {
  Fixture f;
  CHECK(f.store->Rename(0, "nope", "x", false).status().code() == Code::kNoSuchKey);
  CHECK(f.store->Rename(0, "nope", "nope", true).status().code() == Code::kNoSuchKey);
  REQUIRE(f.store->Set(0, "a", "1", SetAt(kT0Ms + 900)).ok());
  CHECK(*f.store->Rename(0, "a", "a", false));
  CHECK_FALSE(*f.store->Rename(0, "a", "a", true));  // Redis 7: RENAMENX k k replies 0
  CHECK(*f.store->Get(0, "a") == "1");
  CHECK(*f.store->Rename(0, "a", "b", false));
  CHECK(*f.store->Exists(0, Keys{"a"}) == 0);
  CHECK(*f.store->Get(0, "b") == "1");
  CHECK(*f.store->PTtl(0, "b") == 900);
  Put(*f.store, "c", "3");
  CHECK_FALSE(*f.store->Rename(0, "b", "c", true));
  CHECK(*f.store->Get(0, "b") == "1");
  CHECK(*f.store->Rename(0, "c", "b", false));  // overwrites, TTL of the source (none)
  CHECK(*f.store->Get(0, "b") == "3");
  CHECK(*f.store->PTtl(0, "b") == -1);
  f.PutRaw(0, "lim", ValueKind::kConc, "state");
  CHECK(*f.store->Rename(0, "lim", "lim2", false));
  CHECK(**f.store->Type(0, "lim2") == ValueKind::kConc);
}

TEST_CASE("RENAMENX onto an expired destination succeeds") {
  Fixture f;
  Put(*f.store, "src", "s");
  REQUIRE(f.store->Set(0, "dst", "d", SetAt(kT0Ms + 1)).ok());
  f.AdvanceMs(2);
  CHECK(*f.store->Rename(0, "src", "dst", true));
  CHECK(*f.store->Get(0, "dst") == "s");
}

TEST_CASE("COPY: with TTL, across dbs, REPLACE, same object") {
  Fixture f;
  auto same = f.store->Copy(0, "a", 0, "a", false);
  CHECK(same.status().code() == Code::kInvalidArgument);
  CHECK(same.status().message() == "source and destination objects are the same");
  CHECK_FALSE(*f.store->Copy(0, "missing", 0, "b", false));
  REQUIRE(f.store->Set(0, "a", "1", SetAt(kT0Ms + 400)).ok());
  CHECK(*f.store->Copy(0, "a", 0, "b", false));
  CHECK(*f.store->Get(0, "b") == "1");
  CHECK(*f.store->PTtl(0, "b") == 400);
  CHECK(*f.store->Copy(0, "a", 3, "a", false));  // same name, other db: fine
  CHECK(*f.store->Get(3, "a") == "1");
  Put(*f.store, "c", "3");
  CHECK_FALSE(*f.store->Copy(0, "c", 0, "b", false));
  CHECK(*f.store->Get(0, "b") == "1");
  CHECK(*f.store->Copy(0, "c", 0, "b", true));
  CHECK(*f.store->Get(0, "b") == "3");
  CHECK(*f.store->PTtl(0, "b") == -1);
  CHECK(*f.store->Get(0, "c") == "3");
}

}  // namespace sluice::testing
