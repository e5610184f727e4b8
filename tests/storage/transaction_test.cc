// Store::Transaction, the unit of work every operation runs in: read-your-writes, one time,
// lock planning and try-lock of undeclared keys, one commit, rollback, FLUSHDB inside a unit,
// commit observers, and no deadlock between units with overlapping keys.
#include <doctest/doctest.h>
#include <rocksdb/db.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "sluice/limiter.h"
#include "storage/engine/txn.h"
#include "test_util.h"

namespace sluice::testing {
namespace {

using SV = std::string_view;
using Txn = Store::Transaction;

// Records every commit it is told of.
class RecordingObserver : public CommitObserver {
 public:
  void OnCommit(std::span<const KeyRef> written, uint32_t flushed_dbs) override {
    std::lock_guard<std::mutex> l(mu);
    std::vector<std::string> keys;
    for (const KeyRef& k : written) keys.push_back(std::to_string(k.db) + ":" + std::string(k.key));
    commits.push_back(keys);
    flushed.push_back(flushed_dbs);
  }
  void OnExpired(std::span<const KeyRef> removed) override {
    std::lock_guard<std::mutex> l(mu);
    for (const KeyRef& k : removed)
      expired.push_back(std::to_string(k.db) + ":" + std::string(k.key));
  }
  std::mutex mu;
  std::vector<std::vector<std::string>> commits;
  std::vector<uint32_t> flushed;
  std::vector<std::string> expired;  // OnExpired's keys, in order
};

limiter::GcraParams Gcra(int64_t quota, int64_t period_ms) {
  limiter::GcraParams p;
  REQUIRE(limiter::MakeGcraParams(quota, period_ms * 1'000'000, 0, &p).empty());
  return p;
}

}  // namespace

TEST_CASE("a unit reads its own writes before commit; others see nothing until then") {
  Fixture f;
  const KeyRef keys[] = {{0, "a"}, {0, "b"}};
  Txn t(*f.store, keys);
  REQUIRE(t.Set(0, "a", "1", SetPlain()).ok());
  CHECK(*t.IncrBy(0, "a", 41) == 42);
  CHECK(*t.Get(0, "a") == std::optional<std::string>("42"));
  CHECK(*t.Append(0, "b", "xy") == 2);
  CHECK(*t.StrLen(0, "b") == 2);
  const SV both[] = {"a", "b", "c"};
  CHECK(*t.Exists(0, both) == 2);
  // Not committed: invisible to everyone else.
  CHECK(*f.store->Get(0, "a") == std::nullopt);
  REQUIRE(t.Commit().ok());
  CHECK(*f.store->Get(0, "a") == std::optional<std::string>("42"));
  CHECK(*f.store->Get(0, "b") == std::optional<std::string>("xy"));
}

TEST_CASE("deletes and expiry inside a unit are seen by its later reads") {
  Fixture f;
  REQUIRE(f.store->Set(0, "k", "v", SetPlain()).ok());
  const KeyRef keys[] = {{0, "k"}, {0, "m"}};
  Txn t(*f.store, keys);
  const SV k[] = {"k"};
  CHECK(*t.Del(0, k) == 1);
  CHECK(*t.Get(0, "k") == std::nullopt);
  CHECK(*t.Del(0, k) == 0);
  REQUIRE(t.Set(0, "m", "1", SetPlain()).ok());
  CHECK(*t.ExpireAt(0, "m", f.clock->NowMs(), ExpireCondition::kAlways));  // at now: deleted
  CHECK(*t.Get(0, "m") == std::nullopt);
  CHECK(*t.PTtl(0, "m") == -2);
  REQUIRE(t.Commit().ok());
  CHECK(*f.store->Get(0, "k") == std::nullopt);
}

TEST_CASE("a unit's time is fixed when it starts") {
  Fixture f;
  const KeyRef keys[] = {{0, "k"}};
  Txn t(*f.store, keys);
  const int64_t start = t.NowMs();
  REQUIRE(t.Set(0, "k", "v", SetAt(start + 1000)).ok());
  f.AdvanceMs(5000);  // the clock moves on, the unit does not
  CHECK(t.NowMs() == start);
  CHECK(*t.PTtl(0, "k") == 1000);
  CHECK(*t.Get(0, "k") == std::optional<std::string>("v"));
  REQUIRE(t.Commit().ok());
  CHECK(*f.store->Get(0, "k") == std::nullopt);  // expired by now
}

TEST_CASE("limiters in one unit: all or nothing across keys") {
  Fixture f;
  const auto per_sec = Gcra(1, 1000);
  const KeyRef keys[] = {{0, "sec"}, {0, "day"}};
  {
    Txn t(*f.store, keys);
    CHECK(t.GcraTake(0, "sec", per_sec, 1)->allowed);
    CHECK(t.GcraTake(0, "day", per_sec, 1)->allowed);
    CHECK_FALSE(t.GcraTake(0, "sec", per_sec, 1)->allowed);  // sees its own first take
    t.Rollback();                                            // neither is consumed
    REQUIRE(t.Commit().ok());
  }
  CHECK(*f.store->Get(0, "sec") == std::nullopt);
  CHECK(*f.store->Get(0, "day") == std::nullopt);
  {
    Txn t(*f.store, keys);
    CHECK(t.GcraTake(0, "sec", per_sec, 1)->allowed);
    CHECK(t.GcraTake(0, "day", per_sec, 1)->allowed);
    REQUIRE(t.Commit().ok());
  }
  CHECK_FALSE(f.store->GcraTake(0, "sec", per_sec, 1)->allowed);
  CHECK_FALSE(f.store->GcraTake(0, "day", per_sec, 1)->allowed);
}

TEST_CASE("a unit commits as one RocksDB write") {
  Fixture f;
  rocksdb::DB* db = f.store->impl().db();
  const uint64_t before = db->GetLatestSequenceNumber();
  const KeyRef keys[] = {{0, "a"}, {0, "b"}, {0, "c"}};
  Txn t(*f.store, keys);
  for (SV k : {"a", "b", "c"}) REQUIRE(t.Set(0, k, "v", SetPlain()).ok());
  REQUIRE(t.Commit().ok());
  // One write batch of three puts and the keyspace count's merge: the sequence advances by 4,
  // in one WAL record.
  CHECK(db->GetLatestSequenceNumber() == before + 4);
  std::unique_ptr<rocksdb::TransactionLogIterator> it;
  REQUIRE(db->GetUpdatesSince(before + 1, &it).ok());
  REQUIRE(it->Valid());
  CHECK(it->GetBatch().writeBatchPtr->Count() == 4);
  it->Next();
  CHECK_FALSE(it->Valid());
}

TEST_CASE("a key rewritten in a unit is staged once; every read sees each step") {
  Fixture f;
  rocksdb::DB* db = f.store->impl().db();
  REQUIRE(f.store->Set(0, "old", "7", SetPlain()).ok());
  const uint64_t before = db->GetLatestSequenceNumber();
  const int64_t now = f.clock->NowMs();
  const KeyRef keys[] = {{0, "a"}, {0, "b"}, {0, "old"}, {0, "gone"}};
  Txn t(*f.store, keys);
  CHECK(*t.IncrBy(0, "a", 5) == 5);
  CHECK(*t.ExpireAt(0, "a", now + 10000, ExpireCondition::kAlways));
  CHECK(*t.PTtl(0, "a") == 10000);
  CHECK(*t.Get(0, "a") == std::optional<std::string>("5"));
  CHECK(*t.IncrBy(0, "a", 1) == 6);  // INCR keeps the TTL it was given
  CHECK(*t.PTtl(0, "a") == 10000);
  REQUIRE(t.Set(0, "b", "x", SetPlain()).ok());  // a's last write stays pending beside it
  CHECK(*t.Get(0, "a") == std::optional<std::string>("6"));
  CHECK(*t.IncrBy(0, "a", 1) == 7);
  CHECK(*t.Get(0, "old") == std::optional<std::string>("7"));  // read twice: the same
  CHECK(*t.PTtl(0, "old") == -1);
  CHECK(*t.IncrBy(0, "gone", 1) == 1);
  const SV gone[] = {"gone"};
  CHECK(*t.Del(0, gone) == 1);  // the deletion replaces the unit's own write
  CHECK(*t.Get(0, "gone") == std::nullopt);
  REQUIRE(t.Commit().ok());
  // a once (its Put stayed pending while b was written: pending_puts.h), b once, the deletion
  // of "gone", and the keyspace count's merge.
  CHECK(db->GetLatestSequenceNumber() == before + 4);
  CHECK(*f.store->Get(0, "a") == std::optional<std::string>("7"));
  CHECK(*f.store->PTtl(0, "a") == 10000);
  CHECK(*f.store->Get(0, "b") == std::optional<std::string>("x"));
  CHECK(*f.store->Get(0, "gone") == std::nullopt);
  CHECK(*f.store->DbSize(0) == 3);
}

TEST_CASE("a unit's own last write is seen by its walks, flushes and rollbacks") {
  Fixture f;
  REQUIRE(f.store->Set(0, "stored", "1", SetPlain()).ok());
  TransactionOptions all;
  all.all_keys = true;
  {
    Txn t(*f.store, {}, all);
    REQUIRE(t.Set(0, "k1", "v", SetPlain()).ok());
    CHECK(*t.Keys(0, "*") == std::vector<std::string>{"k1", "stored"});
    REQUIRE(t.Set(1, "other", "v", SetPlain()).ok());
    REQUIRE(t.FlushDb(1).ok());  // drops the write made just before
    REQUIRE(t.Set(1, "after", "v", SetPlain()).ok());
    CHECK(*t.Keys(1, "*") == std::vector<std::string>{"after"});
    CHECK(*t.DbSize(1) == 1);
    REQUIRE(t.Commit().ok());
  }
  CHECK(*f.store->Keys(1, "*") == std::vector<std::string>{"after"});
  CHECK(*f.store->Get(0, "k1") == std::optional<std::string>("v"));
  {
    const KeyRef keys[] = {{0, "stored"}};
    Txn t(*f.store, keys);
    CHECK(*t.IncrBy(0, "stored", 1) == 2);
    t.Rollback();
    CHECK(*t.Get(0, "stored") == std::optional<std::string>("1"));
    CHECK(*t.IncrBy(0, "stored", 10) == 11);
    REQUIRE(t.Commit().ok());
  }
  CHECK(*f.store->Get(0, "stored") == std::optional<std::string>("11"));
}

TEST_CASE("a read is given again only under the key's lock") {
  Fixture f;
  REQUIRE(f.store->Set(0, "x", "1", SetPlain()).ok());
  TransactionOptions unlocked;
  unlocked.isolate_reads = false;
  Txn reader(*f.store, {}, unlocked);  // locks nothing: each read sees the latest commit
  CHECK(*reader.Get(0, "x") == std::optional<std::string>("1"));
  REQUIRE(f.store->Set(0, "x", "2", SetPlain()).ok());  // another unit, same thread
  CHECK(*reader.Get(0, "x") == std::optional<std::string>("2"));
  // Taking the key for a write reads it again under the lock.
  REQUIRE(f.store->Set(0, "x", "3", SetPlain()).ok());
  CHECK(*reader.IncrBy(0, "x", 1) == 4);
  REQUIRE(reader.Commit().ok());
  CHECK(*f.store->Get(0, "x") == std::optional<std::string>("4"));
}

TEST_CASE("an undeclared key: taken when free, kLockConflict when another unit holds it") {
  Fixture f;
  const KeyRef a[] = {{0, "a"}};
  const KeyRef b[] = {{0, "b"}};
  Txn holder(*f.store, b);
  Txn t(*f.store, a);
  REQUIRE(t.Set(0, "c", "free", SetPlain()).ok());  // undeclared, stripe free: locked now
  auto r = t.Set(0, "b", "held", SetPlain());
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == Code::kLockConflict);
  CHECK(t.conflicted());
  t.Rollback();
  CHECK_FALSE(t.conflicted());
}

TEST_CASE("keyspace walks need every stripe in an isolating unit") {
  Fixture f;
  const KeyRef a[] = {{0, "a"}};
  {
    Txn t(*f.store, a);
    CHECK(t.Keys(0, "*").status().code() == Code::kLockConflict);
    CHECK(t.FlushDb(0).code() == Code::kLockConflict);
  }
  {
    Txn reads(*f.store, a, TransactionOptions{.all_keys = false, .isolate_reads = false});
    CHECK(reads.Keys(0, "*").ok());  // a walk that does not isolate needs no lock
  }
  Txn all(*f.store, {}, TransactionOptions{.all_keys = true});
  CHECK(all.Keys(0, "*").ok());
}

TEST_CASE("FLUSHDB inside a unit: earlier writes gone, later writes kept, other dbs untouched") {
  Fixture f;
  REQUIRE(f.store->Set(0, "old", "1", SetPlain()).ok());
  REQUIRE(f.store->Set(1, "other", "1", SetPlain()).ok());
  Txn t(*f.store, {}, TransactionOptions{.all_keys = true});
  REQUIRE(t.Set(0, "before", "1", SetPlain()).ok());
  REQUIRE(t.FlushDb(0).ok());
  CHECK(*t.Get(0, "old") == std::nullopt);
  CHECK(*t.Get(0, "before") == std::nullopt);
  CHECK(*t.DbSize(0) == 0);
  REQUIRE(t.Set(0, "after", "2", SetPlain()).ok());
  CHECK(*t.Keys(0, "*") == std::vector<std::string>{"after"});
  CHECK(*t.Get(0, "after") == std::optional<std::string>("2"));
  CHECK(*t.Get(1, "other") == std::optional<std::string>("1"));
  REQUIRE(t.Commit().ok());
  CHECK(*f.store->Keys(0, "*") == std::vector<std::string>{"after"});
  CHECK(*f.store->Keys(1, "*") == std::vector<std::string>{"other"});
}

TEST_CASE("iterators merge the unit's writes over stored keys") {
  Fixture f;
  for (SV k : {"a", "c", "e"}) REQUIRE(f.store->Set(0, k, "s", SetPlain()).ok());
  Txn t(*f.store, {}, TransactionOptions{.all_keys = true});
  REQUIRE(t.Set(0, "b", "t", SetPlain()).ok());
  const SV del[] = {"c"};
  REQUIRE(t.Del(0, del).ok());
  REQUIRE(t.Set(0, "f", "t", SetPlain()).ok());
  auto sorted = [](std::vector<std::string> v) {  // keys are walked in slot order
    std::sort(v.begin(), v.end());
    return v;
  };
  CHECK(sorted(*t.Keys(0, "*")) == std::vector<std::string>{"a", "b", "e", "f"});
  auto page = t.Scan(0, 0, std::nullopt, 100, std::nullopt);
  REQUIRE(page.ok());
  CHECK(sorted(page->keys) == std::vector<std::string>{"a", "b", "e", "f"});
  CHECK(page->next_cursor == 0);
}

TEST_CASE("commit observers hear every committed write, and nothing rolled back") {
  Fixture f;
  RecordingObserver obs;
  REQUIRE(f.store->AddCommitObserver(&obs).ok());
  REQUIRE(f.store->Set(0, "a", "1", SetPlain()).ok());
  REQUIRE(f.store->Get(0, "a").ok());  // reads tell nothing
  {
    const KeyRef keys[] = {{2, "x"}, {2, "y"}};
    Txn t(*f.store, keys);
    REQUIRE(t.Set(2, "x", "1", SetPlain()).ok());
    t.Rollback();
    REQUIRE(t.Set(2, "y", "1", SetPlain()).ok());
    REQUIRE(t.Commit().ok());
  }
  REQUIRE(f.store->FlushDb(3).ok());
  std::lock_guard<std::mutex> l(obs.mu);
  REQUIRE(obs.commits.size() == 3);
  CHECK(obs.commits[0] == std::vector<std::string>{"0:a"});
  CHECK(obs.commits[1] == std::vector<std::string>{"2:y"});
  CHECK(obs.commits[2].empty());
  CHECK(obs.flushed[2] == (1u << 3));
}

TEST_CASE("commit observers hear the expired keys a read removed (OnExpired), once") {
  Fixture f;
  RecordingObserver obs;
  REQUIRE(f.store->AddCommitObserver(&obs).ok());
  SetOptions ttl = SetPlain();
  ttl.expiry.kind = ExpiryChange::Kind::kSetAt;
  ttl.expiry.at_ms = f.clock->NowMs() + 100;
  REQUIRE(f.store->Set(1, "e", "v", ttl).ok());
  REQUIRE(f.store->Set(1, "live", "v", SetPlain()).ok());
  {
    std::lock_guard<std::mutex> l(obs.mu);
    CHECK(obs.expired.empty());
  }
  f.AdvanceMs(200);
  {
    const KeyRef keys[] = {{1, "e"}, {1, "live"}};
    Txn t(*f.store, keys);
    CHECK(!t.Get(1, "e")->has_value());
    CHECK(t.Get(1, "live")->has_value());
    REQUIRE(t.Commit().ok());
  }
  CHECK(!f.store->Get(1, "e")->has_value());  // already removed: not reported again
  std::lock_guard<std::mutex> l(obs.mu);
  CHECK(obs.expired == std::vector<std::string>{"1:e"});
}

TEST_CASE("many threads, overlapping multi-key units: no deadlock, sums exact") {
  Fixture f;
  constexpr int kThreads = 8, kUnits = 300, kKeys = 6;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      for (int i = 0; i < kUnits; ++i) {
        // Three distinct keys in a random order: the locks are still taken sorted.
        std::vector<std::string> names;
        while (names.size() < 3) {
          std::string k = "k" + std::to_string(rng() % kKeys);
          if (std::find(names.begin(), names.end(), k) == names.end()) names.push_back(k);
        }
        std::vector<KeyRef> keys;
        for (const auto& n : names) keys.push_back({0, n});
        Txn unit(*f.store, keys);
        for (const auto& n : names) REQUIRE(unit.IncrBy(0, n, 1).ok());
        REQUIRE(unit.Commit().ok());
      }
    });
  }
  for (auto& th : threads) th.join();
  int64_t total = 0;
  for (int k = 0; k < kKeys; ++k) {
    auto v = f.store->Get(0, "k" + std::to_string(k));
    if (v->has_value()) total += std::stoll(**v);
  }
  CHECK(total == int64_t{kThreads} * kUnits * 3);
}

}  // namespace sluice::testing
