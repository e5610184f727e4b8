// Keyspace walks: KEYS, SCAN, RANDOMKEY, DBSIZE, Keyspace, FLUSHDB, FLUSHALL.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "test_util.h"

namespace sluice::testing {
namespace {
using SV = std::string_view;

void Put(Store& s, SV key, int db = 0) { REQUIRE(s.Set(db, key, "v", SetPlain()).ok()); }

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Runs a whole SCAN iteration; returns every key seen (with repeats) and the page count.
std::vector<std::string> ScanAll(Store& s, int db, int64_t count, int* pages,
                                 std::optional<SV> match = std::nullopt,
                                 std::optional<SV> type = std::nullopt) {
  std::vector<std::string> seen;
  uint64_t cursor = 0;
  *pages = 0;
  do {
    auto page = s.Scan(db, cursor, match, count, type);
    REQUIRE(page.ok());
    ++*pages;
    REQUIRE(*pages < 10000);
    seen.insert(seen.end(), page->keys.begin(), page->keys.end());
    cursor = page->next_cursor;
  } while (cursor != 0);
  return seen;
}
}  // namespace

TEST_CASE("KEYS: glob, literal prefix, expired keys hidden, db separation") {
  Fixture f;
  for (SV k : {"user:1", "user:2", "user:10", "admin", "usex"}) Put(*f.store, k);
  Put(*f.store, "user:9", 1);
  REQUIRE(f.store->Set(0, "user:3", "v", SetAt(kT0Ms + 1)).ok());
  f.AdvanceMs(2);
  CHECK(Sorted(*f.store->Keys(0, "user:*")) ==
        std::vector<std::string>{"user:1", "user:10", "user:2"});
  CHECK(Sorted(*f.store->Keys(0, "user:?")) == std::vector<std::string>{"user:1", "user:2"});
  CHECK(Sorted(*f.store->Keys(0, "us[e]?")) == std::vector<std::string>{"usex"});
  CHECK(*f.store->Keys(0, "admin") == std::vector<std::string>{"admin"});
  CHECK(f.store->Keys(0, "nothing*")->empty());
  CHECK(f.store->Keys(0, "*")->size() == 5);
  CHECK(*f.store->Keys(1, "*") == std::vector<std::string>{"user:9"});
}

TEST_CASE("KEYS * includes the empty key; other patterns never match it") {
  Fixture f;
  Put(*f.store, "");
  CHECK(*f.store->Keys(0, "*") == std::vector<std::string>{""});
  CHECK(f.store->Keys(0, "**")->empty());
}

TEST_CASE("SCAN returns every key exactly once across many pages") {
  Fixture f;
  std::set<std::string> expected;
  for (int i = 0; i < 1000; ++i) {
    std::string k = "key:" + std::to_string(i);
    Put(*f.store, k);
    expected.insert(k);
  }
  Put(*f.store, "other-db", 2);
  int pages = 0;
  auto seen = ScanAll(*f.store, 0, 37, &pages);
  CHECK(pages == 28);  // ceil(1000 / 37)
  CHECK(seen.size() == 1000);
  CHECK(std::set<std::string>(seen.begin(), seen.end()) == expected);
}

TEST_CASE("SCAN keeps going while keys change; keys present throughout are seen") {
  Fixture f;
  for (int i = 0; i < 300; ++i) Put(*f.store, "k" + std::to_string(i));
  std::set<std::string> seen;
  uint64_t cursor = 0;
  int step = 0;
  do {
    auto page = f.store->Scan(0, cursor, std::nullopt, 10, std::nullopt);
    REQUIRE(page.ok());
    seen.insert(page->keys.begin(), page->keys.end());
    cursor = page->next_cursor;
    // Churn: add and delete other keys between pages.
    Put(*f.store, "new" + std::to_string(step));
    const std::string old = "new" + std::to_string(step - 1);
    std::vector<SV> del{old};
    REQUIRE(f.store->Del(0, del).ok());
    ++step;
  } while (cursor != 0);
  for (int i = 0; i < 300; ++i) CHECK(seen.count("k" + std::to_string(i)) == 1);
}

TEST_CASE("SCAN MATCH and TYPE filter after sampling; COUNT is a hint") {
  Fixture f;
  // One hash tag: one slot, so the keys are walked in byte order (a*, then b*, then c*).
  for (int i = 0; i < 20; ++i) Put(*f.store, "{t}a" + std::to_string(i));
  for (int i = 0; i < 20; ++i) Put(*f.store, "{t}b" + std::to_string(i));
  f.PutRaw(0, "{t}c-leaky", ValueKind::kLeaky, "x");
  int pages = 0;
  auto only_b = ScanAll(*f.store, 0, 10, &pages, SV("{t}b*"));
  CHECK(only_b.size() == 20);
  CHECK(pages == 5);  // 41 keys / 10 per page: pages of sampled keys, some empty after MATCH
  auto page = f.store->Scan(0, 0, SV("{t}b*"), 10, std::nullopt);
  CHECK(page->keys.empty());  // the first 10 sampled keys are a*: filtered out
  CHECK(page->next_cursor != 0);
  auto leaky = ScanAll(*f.store, 0, 1000, &pages, std::nullopt, SV("leaky"));
  CHECK(leaky == std::vector<std::string>{"{t}c-leaky"});
  CHECK(pages == 1);
  CHECK(ScanAll(*f.store, 0, 1000, &pages, std::nullopt, SV("string")).size() == 40);
  CHECK(ScanAll(*f.store, 0, 1000, &pages, std::nullopt, SV("list")).empty());
}

TEST_CASE("SCAN with an unknown cursor restarts from the beginning") {
  Fixture f;
  for (int i = 0; i < 5; ++i) Put(*f.store, "{t}k" + std::to_string(i));  // one slot
  auto page = f.store->Scan(0, 123456789, std::nullopt, 100, std::nullopt);
  REQUIRE(page.ok());
  CHECK(page->keys.size() == 5);
  CHECK(page->next_cursor == 0);
  // A cursor from another db is unknown there too.
  auto first = f.store->Scan(0, 0, std::nullopt, 2, std::nullopt);
  REQUIRE(first->next_cursor != 0);
  auto other = f.store->Scan(4, first->next_cursor, std::nullopt, 2, std::nullopt);
  CHECK(other->keys.empty());
  CHECK(other->next_cursor == 0);
  // The same cursor can be replayed (a client retry) and gives the same page.
  auto a = f.store->Scan(0, first->next_cursor, std::nullopt, 2, std::nullopt);
  auto b = f.store->Scan(0, first->next_cursor, std::nullopt, 2, std::nullopt);
  CHECK(a->keys == b->keys);
  CHECK(a->keys == std::vector<std::string>{"{t}k2", "{t}k3"});
}

TEST_CASE("SCAN on an empty db completes at once") {
  Fixture f;
  auto page = f.store->Scan(0, 0, std::nullopt, 10, std::nullopt);
  CHECK(page->keys.empty());
  CHECK(page->next_cursor == 0);
}

TEST_CASE("RANDOMKEY: empty db, only expired keys, finds every key eventually") {
  Fixture f;
  CHECK(*f.store->RandomKey(0) == std::nullopt);
  REQUIRE(f.store->Set(0, "gone", "v", SetAt(kT0Ms + 1)).ok());
  f.AdvanceMs(2);
  CHECK(*f.store->RandomKey(0) == std::nullopt);
  std::set<std::string> all{"apple", "banana", "cherry", "date"};
  for (const auto& k : all) Put(*f.store, k);
  Put(*f.store, "other", 1);
  std::set<std::string> seen;
  for (int i = 0; i < 400 && seen.size() < all.size(); ++i) {
    auto k = f.store->RandomKey(0);
    REQUIRE(k->has_value());
    CHECK(all.count(**k) == 1);
    seen.insert(**k);
  }
  CHECK(seen == all);
}

// Regression: RANDOMKEY's iterator was bounded above only, so on an empty db its SeekToLast
// landed on the last key of a lower db; the SeekToFirst that followed was then invalid and its
// key() read (RocksDB assertion `valid_` with Debian's librocksdb; undefined behaviour with a
// release build, possibly a key of another db).
TEST_CASE("RANDOMKEY on an empty db never sees the keys of the other dbs") {
  Fixture f;
  Put(*f.store, "zero", 0);
  Put(*f.store, "two", 2);
  Put(*f.store, "fifteen", 15);
  for (int db : {1, 3, 14}) {
    auto k = f.store->RandomKey(db);
    REQUIRE(k.ok());
    CHECK(*k == std::nullopt);
  }
  for (int i = 0; i < 20; ++i) {
    CHECK(*f.store->RandomKey(0) == std::optional<std::string>("zero"));
    CHECK(*f.store->RandomKey(2) == std::optional<std::string>("two"));
    CHECK(*f.store->RandomKey(15) == std::optional<std::string>("fifteen"));
  }
}

TEST_CASE("DBSIZE and Keyspace count live keys and keys with TTL") {
  Fixture f;
  Put(*f.store, "a");
  Put(*f.store, "b");
  REQUIRE(f.store->Set(0, "t1", "v", SetAt(kT0Ms + 10)).ok());
  REQUIRE(f.store->Set(0, "t2", "v", SetAt(kT0Ms + 1000)).ok());
  Put(*f.store, "x", 15);
  CHECK(*f.store->DbSize(0) == 4);
  CHECK(f.store->Keyspace(0)->expires == 2);
  f.AdvanceMs(11);
  CHECK(*f.store->DbSize(0) == 4);  // t1 expired, but stored until removed (as Redis counts)
  const std::vector<std::string_view> t1{"t1"};
  CHECK(*f.store->Del(0, t1) == 0);  // removes it
  CHECK(*f.store->DbSize(0) == 3);
  CHECK(f.store->Keyspace(0)->keys == 3);
  CHECK(f.store->Keyspace(0)->expires == 1);
  CHECK(*f.store->DbSize(15) == 1);
  CHECK(*f.store->DbSize(7) == 0);
}

TEST_CASE("FLUSHDB empties one db; FLUSHALL all of them") {
  Fixture f;
  for (int db : {0, 1, 15}) {
    Put(*f.store, "a", db);
    Put(*f.store, "b", db);
  }
  REQUIRE(f.store->FlushDb(1).ok());
  CHECK(*f.store->DbSize(1) == 0);
  CHECK(*f.store->DbSize(0) == 2);
  CHECK(*f.store->DbSize(15) == 2);
  Put(*f.store, "c", 1);
  CHECK(*f.store->Get(1, "c") == "v");
  REQUIRE(f.store->FlushAll().ok());
  for (int db = 0; db < kNumDatabases; ++db) CHECK(*f.store->DbSize(db) == 0);
  f.Reopen();
  CHECK(*f.store->DbSize(0) == 0);
  CHECK(*f.store->DbSize(15) == 0);
}

}  // namespace sluice::testing

namespace sluice::testing {
namespace {

// Redis Cluster's slot walks: {tag} keys share a slot (CLUSTER KEYSLOT {user}a = 5474).
TEST_CASE("slot walks: count, list with a limit, delete; other slots, dbs and expired untouched") {
  Fixture f;
  for (SV k : {"{user}a", "{user}b", "{user}c", "other"}) Put(*f.store, k);
  Put(*f.store, "{user}z", 1);
  REQUIRE(f.store->Set(0, "{user}gone", "v", SetAt(kT0Ms + 1)).ok());
  f.AdvanceMs(2);
  const uint16_t slot = 5474;
  CHECK(*f.store->CountKeysInSlot(0, slot) == 3);
  CHECK(*f.store->CountKeysInSlot(1, slot) == 1);
  CHECK(*f.store->CountKeysInSlot(0, 0) == 0);
  CHECK(*f.store->CountKeysInSlot(0, 16383) == 0);
  CHECK(*f.store->KeysInSlot(0, slot, 2) == std::vector<std::string>{"{user}a", "{user}b"});
  CHECK(*f.store->KeysInSlot(0, slot, -1) ==
        std::vector<std::string>{"{user}a", "{user}b", "{user}c"});
  CHECK(f.store->KeysInSlot(0, slot, 0)->empty());
  CHECK(*f.store->DeleteKeysInSlot(0, slot) == 3);
  CHECK(*f.store->CountKeysInSlot(0, slot) == 0);
  CHECK(*f.store->Keys(0, "*") == std::vector<std::string>{"other"});
  CHECK(*f.store->CountKeysInSlot(1, slot) == 1);
}

}  // namespace
}  // namespace sluice::testing

TEST_CASE("Store::KeySlot is Redis's CLUSTER KEYSLOT") {
  CHECK(sluice::Store::KeySlot("foo") == 12182);
  CHECK(sluice::Store::KeySlot("{user}a") == 5474);
  CHECK(sluice::Store::KeySlot("{}a") == sluice::Store::KeySlot("{}a"));
}
