// Maintained keyspace counts (DBSIZE, INFO keyspace): exact through every kind of change, equal
// to a walk (Transaction::KeyspaceCheck), kept across reopen, rebuilt for a dir without them;
// RANDOMKEY's bounded walk.
#include <doctest/doctest.h>

#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "sluice/transaction.h"
#include "test_util.h"

namespace sluice::testing {
namespace {

using SV = std::string_view;
using ListEnd = Store::Transaction::ListEnd;

KeyspaceInfo Info(Store& store, int db = 0) { return *store.Keyspace(db); }

limiter::GcraParams Gcra(int64_t quota, int64_t period_ns) {
  limiter::GcraParams p;
  REQUIRE(limiter::MakeGcraParams(quota, period_ns, 0, &p).empty());
  return p;
}

SetOptions SetPx(int64_t at_ms) { return SetAt(at_ms); }

}  // namespace

TEST_CASE("keyspace counts: strings, expiries, deletes") {
  Fixture f;
  Store& s = *f.store;
  CHECK(Info(s) == KeyspaceInfo{0, 0});
  REQUIRE(s.Set(0, "a", "1", SetPlain()).ok());
  REQUIRE(s.Set(0, "a", "2", SetPlain()).ok());  // overwrite: still one
  REQUIRE(s.Set(0, "b", "1", SetPx(kT0Ms + 1000)).ok());
  CHECK(Info(s) == KeyspaceInfo{2, 1});
  REQUIRE(s.Set(0, "b", "x", SetPlain()).ok());  // SET drops the TTL
  CHECK(Info(s) == KeyspaceInfo{2, 0});
  CHECK(*s.ExpireAt(0, "a", kT0Ms + 5000, ExpireCondition::kAlways));
  CHECK(Info(s) == KeyspaceInfo{2, 1});
  CHECK(*s.Persist(0, "a"));
  CHECK(Info(s) == KeyspaceInfo{2, 0});
  const std::pair<SV, SV> pairs[] = {{"c", "1"}, {"a", "3"}, {"d", "4"}, {"c", "5"}};
  REQUIRE(s.MSet(0, pairs).ok());
  CHECK(Info(s) == KeyspaceInfo{4, 0});
  CHECK(*s.IncrBy(0, "n", 1) == 1);
  CHECK(*s.IncrBy(0, "n", 1) == 2);
  CHECK(*s.Append(0, "e", "x") == 1);
  CHECK(Info(s) == KeyspaceInfo{6, 0});
  const SV del[] = {"a", "zz", "a", "n"};
  CHECK(*s.Del(0, del) == 2);
  CHECK(*s.GetDel(0, "e") == "x");
  CHECK(Info(s) == KeyspaceInfo{3, 0});
  // An expiry in the past deletes at once.
  CHECK(*s.ExpireAt(0, "b", kT0Ms - 1, ExpireCondition::kAlways));
  REQUIRE(s.Set(0, "gone", "v", SetPx(kT0Ms - 5)).ok());
  CHECK(Info(s) == KeyspaceInfo{2, 0});
  CHECK(*s.DbSize(1) == 0);
  RequireConsistent(s);
}

TEST_CASE("keyspace counts: limiter states, rename, copy, other databases") {
  Fixture f;
  Store& s = *f.store;
  auto p = Gcra(10, 1'000'000'000);
  REQUIRE(s.GcraTake(0, "g", p, 1)->allowed);
  REQUIRE(s.GcraTake(0, "g", p, 1)->allowed);
  CHECK(Info(s) == KeyspaceInfo{1, 1});
  REQUIRE(s.Set(0, "src", "v", SetPx(kT0Ms + 9000)).ok());
  REQUIRE(s.Set(0, "dst", "old", SetPlain()).ok());
  CHECK(Info(s) == KeyspaceInfo{3, 2});
  CHECK(*s.Rename(0, "src", "dst", false));  // over an existing key: one key fewer
  CHECK(Info(s) == KeyspaceInfo{2, 2});
  CHECK(*s.Rename(0, "dst", "dst2", false));
  CHECK(Info(s) == KeyspaceInfo{2, 2});
  CHECK(*s.Copy(0, "dst2", 3, "c", false));  // to another db
  CHECK(Info(s, 3) == KeyspaceInfo{1, 1});
  REQUIRE(s.Set(0, "plain", "p", SetPlain()).ok());
  CHECK_FALSE(*s.Copy(0, "plain", 0, "g", false));
  CHECK(*s.Copy(0, "plain", 0, "g", true));  // COPY REPLACE: the persistent copy wins
  CHECK(Info(s) == KeyspaceInfo{3, 1});
  RequireConsistent(s);
}

TEST_CASE("keyspace counts: collections created, emptied by pops and removals") {
  Fixture f;
  {
    Store::Transaction t(*f.store, {}, TransactionOptions{.all_keys = true});
    const std::pair<SV, SV> fields[] = {{"f1", "v"}, {"f2", "v"}};
    const SV members[] = {"m1", "m2"};
    const std::pair<double, SV> scored[] = {{1, "a"}, {2, "b"}};
    REQUIRE(t.HSet(0, "h", fields).ok());
    REQUIRE(t.SAdd(0, "s", members).ok());
    REQUIRE(t.ListPush(0, "l", ListEnd::kRight, members, false).ok());
    REQUIRE(t.ZAdd(0, "z", {}, scored).ok());
    REQUIRE(t.Commit().ok());
    CHECK(Info(*f.store) == KeyspaceInfo{4, 0});
    REQUIRE(t.HSet(0, "h", fields).ok());  // an update: same count
    const SV f1[] = {"f1", "f2"};
    CHECK(*t.HDel(0, "h", f1) == 2);
    CHECK(t.SPop(0, "s", 5)->size() == 2);
    CHECK(t.ListPop(0, "l", ListEnd::kLeft, 1)->value().size() == 1);
    REQUIRE(t.Commit().ok());
    CHECK(Info(*f.store) == KeyspaceInfo{2, 0});  // l and z remain
    CHECK(t.ListPop(0, "l", ListEnd::kLeft, 1)->value().size() == 1);
    const SV ab[] = {"a", "b"};
    CHECK(*t.ZRem(0, "z", ab) == 2);
    REQUIRE(t.Commit().ok());
    CHECK(Info(*f.store) == KeyspaceInfo{0, 0});
  }
  RequireConsistent(*f.store);
}

TEST_CASE("keyspace counts: a rolled-back unit changes nothing; a unit sees its own writes") {
  Fixture f;
  REQUIRE(f.store->Set(0, "keep", "v", SetPlain()).ok());
  {
    Store::Transaction t(*f.store, {}, TransactionOptions{.all_keys = true});
    REQUIRE(t.Set(0, "new", "v", SetPx(kT0Ms + 100)).ok());
    const SV keep[] = {"keep"};
    CHECK(*t.Del(0, keep) == 1);
    REQUIRE(t.Set(0, "new2", "v", SetPlain()).ok());
    CHECK(*t.Keyspace(0) == KeyspaceInfo{2, 1});  // DBSIZE inside MULTI sees the queue's writes
    CHECK(Info(*f.store) == KeyspaceInfo{1, 0});  // others do not, yet
    t.Rollback();
    CHECK(*t.Keyspace(0) == KeyspaceInfo{1, 0});
    REQUIRE(t.Commit().ok());
    CHECK(Info(*f.store) == KeyspaceInfo{1, 0});
  }
  RequireConsistent(*f.store);
}

TEST_CASE("keyspace counts: FLUSHDB and FLUSHALL, with writes before and after in one unit") {
  Fixture f;
  for (int db = 0; db < 3; ++db) {
    for (int i = 0; i < 5; ++i) {
      REQUIRE(
          f.store
              ->Set(db, "k" + std::to_string(i), "v", i == 0 ? SetPlain() : SetPx(kT0Ms + 1000 * i))
              .ok());
    }
  }
  {
    Store::Transaction t(*f.store, {}, TransactionOptions{.all_keys = true});
    REQUIRE(t.Set(0, "before", "v", SetPlain()).ok());
    REQUIRE(t.FlushDb(0).ok());
    REQUIRE(t.Set(0, "after", "v", SetPx(kT0Ms + 10)).ok());
    REQUIRE(t.Set(0, "k1", "v", SetPlain()).ok());
    CHECK(*t.Keyspace(0) == KeyspaceInfo{2, 1});
    REQUIRE(t.Commit().ok());
  }
  CHECK(Info(*f.store, 0) == KeyspaceInfo{2, 1});
  CHECK(Info(*f.store, 1) == KeyspaceInfo{5, 4});
  RequireConsistent(*f.store);
  REQUIRE(f.store->FlushAll().ok());
  for (int db = 0; db < kNumDatabases; ++db) CHECK(Info(*f.store, db) == KeyspaceInfo{0, 0});
  RequireConsistent(*f.store);
}

TEST_CASE("keyspace counts: expired keys count until removed, lazily or by the cycle") {
  Fixture f;
  for (int i = 0; i < 10; ++i) {
    REQUIRE(f.store->Set(0, "t" + std::to_string(i), "v", SetPx(kT0Ms + 100)).ok());
  }
  REQUIRE(f.store->Set(0, "p", "v", SetPlain()).ok());
  f.AdvanceMs(200);
  CHECK(Info(*f.store) == KeyspaceInfo{11, 10});  // as Redis: stored until reclaimed
  CHECK(*f.store->Get(0, "t0") == std::nullopt);  // a read removes it (lazy expiry)
  CHECK(Info(*f.store) == KeyspaceInfo{10, 9});
  CHECK(*f.store->IncrBy(0, "t1", 5) == 5);  // a locked read removes it; INCR makes a new one
  const SV t2[] = {"t2"};
  CHECK(*f.store->Del(0, t2) == 0);  // removed, not counted as deleted
  CHECK(Info(*f.store) == KeyspaceInfo{9, 7});
  RequireConsistent(*f.store);
  f.store.reset();
  f.store = OpenStore(f.dir.path(), f.clock, /*active_expiry=*/true);
  for (int i = 0; i < 100 && *f.store->DbSize(0) != 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(Info(*f.store) == KeyspaceInfo{2, 0});  // p and t1
  RequireConsistent(*f.store);
}

TEST_CASE("keyspace counts survive reopen; a data dir without them is counted once at open") {
  Fixture f;
  for (int i = 0; i < 300; ++i) {
    REQUIRE(f.store
                ->Set(i % 2, "k" + std::to_string(i), "v",
                      i % 3 == 0 ? SetPx(kT0Ms + 100000) : SetPlain())
                .ok());
  }
  const KeyspaceInfo db0 = Info(*f.store, 0);
  CHECK(db0 == KeyspaceInfo{150, 50});
  f.Reopen();
  CHECK(Info(*f.store, 0) == db0);
  CHECK(*f.store->DbSize(1) == 150);
  f.store.reset();
  {
    RawStoreDb raw(f.dir.path(), f.clock);
    auto* meta = raw.cf("meta");
    REQUIRE(meta != nullptr);
    REQUIRE(raw->Delete(rocksdb::WriteOptions(), meta, internal::kCountsMarkerKey).ok());
    REQUIRE(raw->Delete(rocksdb::WriteOptions(), meta, internal::CountRecordKey(0)).ok());
  }
  Options o;
  o.path = f.dir.path();
  o.clock = f.clock;
  o.active_expiry = false;
  std::vector<std::string> lines;
  o.on_progress = [&](const std::string& line) { lines.push_back(line); };
  auto r = Store::Open(o);
  REQUIRE(r.ok());
  f.store = std::move(r).value();
  CHECK(Info(*f.store, 0) == db0);
  bool counted = false;
  for (const auto& l : lines) counted |= l.find("counted 300 keys") != std::string::npos;
  CHECK(counted);
  RequireConsistent(*f.store);
}

TEST_CASE("keyspace counts: concurrent writers on shared keys stay exact") {
  Fixture f;
  std::vector<std::thread> threads;
  for (int w = 0; w < 4; ++w) {
    threads.emplace_back([&, w] {
      uint64_t x = 88172645463325252ull + static_cast<uint64_t>(w);
      auto next = [&] {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return x;
      };
      for (int i = 0; i < 1500; ++i) {
        const int db = static_cast<int>(next() % 2);
        const std::string k = "k" + std::to_string(next() % 40);
        const std::string k2 = "k" + std::to_string(next() % 40);
        const SV keys[] = {k, k2};
        switch (next() % 6) {
          case 0:
            (void)f.store->Set(db, k, "v", SetPlain());
            break;
          case 1:
            (void)f.store->Set(db, k, "v", SetPx(kT0Ms + 100000));
            break;
          case 2:
            (void)f.store->Del(db, keys);
            break;
          case 3:
            (void)f.store->IncrBy(db, k, 1);
            break;
          case 4:
            (void)f.store->Rename(db, k, k2, false);
            break;
          default:
            (void)f.store->Persist(db, k);
            break;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  RequireConsistent(*f.store);
  f.Reopen();
  RequireConsistent(*f.store);
}

TEST_CASE("RANDOMKEY: nil only for a db with no live key; bounded when most keys expired") {
  Fixture f;
  CHECK(*f.store->RandomKey(0) == std::nullopt);
  for (int i = 0; i < 50; ++i) {
    REQUIRE(f.store->Set(0, "t" + std::to_string(i), "v", SetPx(kT0Ms + 100)).ok());
  }
  std::set<std::string> seen;
  for (int i = 0; i < 200; ++i) seen.insert(**f.store->RandomKey(0));
  CHECK(seen.size() > 10);  // spread over the keys
  f.AdvanceMs(200);
  // Small and all expired: walked whole, nil (as Redis, which reclaims them on the way).
  CHECK(*f.store->RandomKey(0) == std::nullopt);
  REQUIRE(f.store->Set(0, "live", "v", SetPlain()).ok());
  CHECK(**f.store->RandomKey(0) == "live");
  // Many expired keys around one live key: a bounded walk answers a key either way.
  for (int i = 0; i < 3000; ++i) {
    REQUIRE(f.store->Set(0, "x" + std::to_string(i), "v", SetPx(kT0Ms + 300)).ok());
  }
  f.AdvanceMs(200);
  for (int i = 0; i < 20; ++i) CHECK(f.store->RandomKey(0)->has_value());
}

// Keys of one hash slot differ only after their tag: a random target past the last key (one in
// two here) walks round from the first key and has then seen every key too.
TEST_CASE("RANDOMKEY: nil for a small db of expired keys whatever the random target") {
  Fixture f;
  REQUIRE(f.store->Set(1, "{tag}0", "v", SetPx(kT0Ms + 100)).ok());
  REQUIRE(f.store->Set(1, "{tag}1", "v", SetPx(kT0Ms + 100)).ok());
  f.AdvanceMs(200);
  for (int i = 0; i < 40; ++i) CHECK(*f.store->RandomKey(1) == std::nullopt);
}

TEST_CASE("keyspace counts: a replica's DEL removes a key kept past its expiry") {
  // A replica keeps expired values until its primary's DEL (set_keep_expired); that DEL must
  // remove the stored value and count it out, though a read sees the key as missing.
  Fixture f;
  Store& s = *f.store;
  s.set_keep_expired(true);
  REQUIRE(s.Set(0, "a", "1", SetPx(kT0Ms + 100)).ok());
  REQUIRE(s.Set(0, "b", "1", SetPlain()).ok());
  f.AdvanceMs(200);
  CHECK(!s.Get(0, "a")->has_value());
  CHECK(Info(s) == KeyspaceInfo{2, 1});  // still stored
  const SV del[] = {"a", "missing"};
  CHECK(*s.Del(0, del) == 0);  // the reply of a missing key, as before
  CHECK(Info(s) == KeyspaceInfo{1, 0});
  CHECK(s.DbSize(0).value() == 1);
}

TEST_CASE("keyspace counts: a paused server's reads keep an expired key until the pause ends") {
  // CLIENT PAUSE (set_keep_expired_paused), independent of a replica's set_keep_expired.
  Fixture f;
  Store& s = *f.store;
  REQUIRE(s.Set(0, "a", "1", SetPx(kT0Ms + 100)).ok());
  s.set_keep_expired_paused(true);
  f.AdvanceMs(200);
  CHECK(!s.Get(0, "a")->has_value());
  CHECK(Info(s) == KeyspaceInfo{1, 1});  // still stored
  CHECK(s.GetStats().expired_keys == 0);
  s.set_keep_expired(true);
  s.set_keep_expired(false);  // a replica's end leaves the pause's hold on
  CHECK(!s.Get(0, "a")->has_value());
  CHECK(Info(s) == KeyspaceInfo{1, 1});
  s.set_keep_expired_paused(false);
  CHECK(!s.Get(0, "a")->has_value());  // removed on access now
  CHECK(Info(s) == KeyspaceInfo{0, 0});
  CHECK(s.GetStats().expired_keys == 1);
}

}  // namespace sluice::testing
