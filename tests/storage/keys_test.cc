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
