// BulkLoad (sluice/bulk_load.h): keys known to be new, written in big units without a read of
// what they replace: values, expiries and the keyspace counts (DBSIZE, INFO keyspace's
// expires) exact across unit boundaries and a reopen; and WalkKeys (sluice/key_walk.h): one
// walk of a database's live keys with their kind, expiry and value.
#include "sluice/bulk_load.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sluice/key_walk.h"
#include "sluice/transaction.h"
#include "test_util.h"

namespace sluice::testing {
namespace {

WholeValue Str(std::string s) {
  WholeValue v;
  v.kind = ValueKind::kString;
  v.string = std::move(s);
  return v;
}

KeyspaceCheckReport Check(Store& s, int db) {
  Store::Transaction t(s, {}, TransactionOptions{.all_keys = true, .isolate_reads = false});
  Result<KeyspaceCheckReport> r = t.KeyspaceCheck(db);
  REQUIRE(r.ok());
  return *r;
}

}  // namespace

TEST_CASE("bulk load: strings, expiries, collections and entries across units, counts exact") {
  Fixture f;
  Store& s = *f.store;
  {
    BulkLoad load(s, BulkLoadOptions{.keys_per_unit = 7});  // many units
    for (int i = 0; i < 50; ++i) {
      const int64_t at = i % 3 == 0 ? kT0Ms + 10000 + i : 0;
      REQUIRE(load.Add(i % 2, "k" + std::to_string(i), Str("v" + std::to_string(i)), at).ok());
    }
    WholeValue hash;
    hash.kind = ValueKind::kHash;
    hash.fields = {{"f1", "a"}, {"f2", "b"}};
    REQUIRE(load.Add(0, "h", hash, kT0Ms + 5000).ok());
    WholeValue list;
    list.kind = ValueKind::kList;
    list.elements = {"x", "y", "z"};
    REQUIRE(load.Add(3, "l", list, 0).ok());
    Store::Transaction::RawEntry gcra{ValueKind::kString, kT0Ms + 7000, "123"};
    REQUIRE(load.AddEntry(3, "g", gcra).ok());
    CHECK(load.added() == 53);
    REQUIRE(load.Finish().ok());
  }
  // 50 strings: 25 in db 0, 25 in db 1; every third (i = 0, 3, ..., 48: 17) with an expiry.
  CHECK(*s.Keyspace(0) == KeyspaceInfo{26, 9 + 1});  // even i: 0, 6, ..., 48 has 9; the hash
  CHECK(*s.Keyspace(1) == KeyspaceInfo{25, 8});
  CHECK(*s.Keyspace(3) == KeyspaceInfo{2, 1});
  for (int db : {0, 1, 3}) CHECK(Check(s, db).ok());
  CHECK(*s.Get(0, "k10") == "v10");
  CHECK(*s.Get(1, "k11") == "v11");
  CHECK(*s.Get(3, "g") == "123");
  CHECK(*s.PTtl(0, "k0") == 10000);
  CHECK(*s.PTtl(0, "k2") == -1);
  CHECK(*s.PTtl(0, "h") == 5000);
  CHECK(*s.PTtl(3, "g") == 7000);
  {
    Store::Transaction t(s, {}, TransactionOptions{.isolate_reads = false});
    CHECK(t.HGetAll(0, "h")->size() == 2);
    CHECK(*t.LRange(3, "l", 0, -1) == std::vector<std::string>{"x", "y", "z"});
  }
  f.Reopen();  // the persisted count records agree
  CHECK(*f.store->Keyspace(0) == KeyspaceInfo{26, 10});
  for (int db : {0, 1, 3}) CHECK(Check(*f.store, db).ok());
  // The keys expire as any key does, and leave the counts.
  f.AdvanceMs(20000);
  {
    Store::Transaction t(*f.store, {}, TransactionOptions{.all_keys = true});
    const std::string_view keys[] = {"k0", "k3"};
    CHECK(*t.Exists(0, keys) == 0);
    REQUIRE(t.Commit().ok());
  }
}

TEST_CASE("bulk load: a load dropped before Finish writes nothing of its open unit") {
  Fixture f;
  Store& s = *f.store;
  {
    BulkLoad load(s, BulkLoadOptions{.keys_per_unit = 4});
    for (int i = 0; i < 6; ++i) REQUIRE(load.Add(0, "k" + std::to_string(i), Str("v"), 0).ok());
  }  // the first unit (4 keys) committed; the open one (2) rolled back
  CHECK(*s.Keyspace(0) == KeyspaceInfo{4, 0});
  CHECK(Check(s, 0).ok());
}

TEST_CASE("WalkKeys: live keys in order with kind, expiry and single-entry values") {
  Fixture f;
  Store& s = *f.store;
  REQUIRE(s.Set(2, "b", "2", SetAt(kT0Ms + 3000)).ok());
  REQUIRE(s.Set(2, "a", "1", SetPlain()).ok());
  REQUIRE(s.Set(2, "gone", "x", SetAt(kT0Ms + 10)).ok());
  {
    const std::pair<std::string_view, std::string_view> fields[] = {{"f", "v"}};
    const KeyRef keys[] = {{2, "h"}};
    Store::Transaction w(s, keys);
    REQUIRE(w.HSet(2, "h", fields).ok());
    REQUIRE(w.Commit().ok());
  }
  REQUIRE(s.Set(1, "other", "db", SetPlain()).ok());
  f.AdvanceMs(100);  // "gone" expired, not yet removed
  Store::Transaction t(s, {}, TransactionOptions{.isolate_reads = false});
  std::vector<std::string> seen;
  REQUIRE(WalkKeys(t, 2, [&](const WalkedKey& k) {
            seen.push_back(std::string(k.key) + "|" + TypeName(k.kind) + "|" +
                           std::to_string(k.expire_at_ms) + "|" + std::string(k.payload));
            return Status::Ok();
          }).ok());
  std::sort(seen.begin(), seen.end());  // the walk's order is the engine's (slot first)
  CHECK(seen == std::vector<std::string>{"a|string|0|1",
                                         "b|string|" + std::to_string(kT0Ms + 3000) + "|2",
                                         "h|hash|0|"});
  // A visitor's error stops the walk.
  int n = 0;
  Status st = WalkKeys(t, 2, [&](const WalkedKey&) {
    ++n;
    return Status::InvalidArgument("stop");
  });
  CHECK(!st.ok());
  CHECK(n == 1);
}

}  // namespace sluice::testing
