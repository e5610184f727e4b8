// The record cache (storage/engine/record_cache.h): a record a locked read found in a table file,
// or the absence of a key read missing again and again, is served from memory while its
// stripe's write mark is unchanged, and never after a write;
// records with an expiry are not kept; readers without the key's lock or at an older snapshot
// read RocksDB; random writes, deletes, flushes and reads agree with a model throughout.
#include "record_cache.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "sluice/transaction.h"
#include "stale_reads.h"
#include "test_util.h"

namespace sluice::testing {
namespace {

using internal::RecordCache;

TEST_CASE("RecordCache: a record is served under its version to readers that see it") {
  constexpr uint64_t kLatest = ~uint64_t{0};
  RecordCache cache(1 << 20, 16);
  std::string out;
  CHECK_FALSE(cache.Lookup(1, "k", 4, kLatest, &out));
  cache.Insert(1, "k", 4, 100, "record");
  CHECK(cache.Lookup(1, "k", 4, kLatest, &out));
  CHECK(out == "record");
  CHECK(cache.Lookup(1, "k", 4, 100, &out));  // assigned, not appended
  CHECK(out == "record");
  CHECK_FALSE(cache.Lookup(1, "k", 4, 99, &out));       // a snapshot from before fill_seq
  CHECK(cache.Lookup(1, "k", 4, kLatest, &out));        // ...which dropped nothing
  CHECK_FALSE(cache.Lookup(1, "k", 6, kLatest, &out));  // written since: dropped
  CHECK_FALSE(cache.Lookup(1, "k", 4, kLatest, &out));
  cache.Insert(1, "big", 2, 1, std::string(RecordCache::kMaxRecordBytes + 1, 'x'));
  CHECK_FALSE(cache.Lookup(1, "big", 2, kLatest, &out));
  const auto c = cache.counters();
  CHECK(c.hits == 3);
  CHECK(c.misses == 2);  // lookups in a slot holding nothing are not counted
  CHECK(c.records == 0);
}

TEST_CASE("RecordCache: an absence is served under its version, only to a caller that asks") {
  constexpr uint64_t kLatest = ~uint64_t{0};
  RecordCache cache(1 << 20, 16);
  std::string out = "untouched";
  bool absent = false;
  cache.InsertAbsent(1, "gone", 4, 100);
  CHECK(cache.Lookup(1, "gone", 4, kLatest, &out, &absent));
  CHECK(absent);
  CHECK(out == "untouched");
  CHECK_FALSE(cache.Lookup(1, "gone", 4, kLatest, &out));      // a caller that takes records only
  CHECK_FALSE(cache.Lookup(1, "gone", 4, 99, &out, &absent));  // a snapshot from before
  CHECK_FALSE(cache.Lookup(1, "gone", 6, kLatest, &out, &absent));  // written since: dropped
  CHECK_FALSE(cache.Lookup(1, "gone", 4, kLatest, &out, &absent));
  // An empty record is a record, not an absence.
  cache.Insert(1, "empty", 2, 1, "");
  out = "x";
  CHECK(cache.Lookup(1, "empty", 2, kLatest, &out, &absent));
  CHECK_FALSE(absent);
  CHECK(out.empty());
}

TEST_CASE("RecordCache: bounded by bytes, least recently used out first") {
  RecordCache cache(64 * 4096, 16);  // 4 KB per shard
  for (int i = 0; i < 20000; ++i) {
    cache.Insert(1, "key:" + std::to_string(i), 2, 1, std::string(100, 'v'));
  }
  CHECK(cache.counters().bytes <= 64 * 4096);
  std::string out;
  CHECK(cache.Lookup(1, "key:19999", 2, 1, &out));
  CHECK_FALSE(cache.Lookup(1, "key:0", 2, 1, &out));
  RecordCache off(0, 16);
  off.Insert(1, "k", 2, 1, "v");
  CHECK_FALSE(off.enabled());
  CHECK_FALSE(off.Lookup(1, "k", 2, 1, &out));
}

// Second chance: a record read between inserts is passed over by every eviction, while the
// records nobody reads go (about 8 fit in the shard here).
TEST_CASE("RecordCache: a record read between inserts is never evicted") {
  RecordCache cache(64 * 2048, 1);
  std::string out;
  cache.Insert(0, "hot", 2, 1, std::string(100, 'h'));
  for (int i = 0; i < 200; ++i) {
    cache.Insert(0, "cold:" + std::to_string(i), 2, 1, std::string(100, 'c'));
    REQUIRE(cache.Lookup(0, "hot", 2, 1, &out));
    CHECK(out == std::string(100, 'h'));
  }
  CHECK_FALSE(cache.Lookup(0, "cold:0", 2, 1, &out));
  CHECK(cache.Lookup(0, "cold:199", 2, 1, &out));
  CHECK(cache.counters().records < 10);
}

// The shards' open-addressing index through growth, replacements, stale erasures and
// evictions: a record is never served for another key or with another value, and a record is
// always served right after it was inserted.
TEST_CASE("RecordCache: its index finds exactly what it holds through churn") {
  RecordCache cache(64 * 2048, 4);  // 2 KB per shard: evictions all along
  std::map<std::string, std::pair<uint64_t, std::string>> last;  // what was inserted last
  std::mt19937 rng(3);
  std::string out;
  for (int step = 0; step < 200000; ++step) {
    const unsigned k = rng() % 3000;
    const std::string key = "key" + std::to_string(k);
    const size_t slot = k % 4;  // a key's slot is fixed (its stripe or bucket)
    const uint64_t version = rng() % 3;
    if (rng() % 2 == 0) {
      const std::string record = key + "@" + std::to_string(step);
      cache.Insert(slot, key, version, 1, record);
      last[key] = {version, record};
      REQUIRE(cache.Lookup(slot, key, version, 1, &out));
      REQUIRE(out == record);
    } else if (cache.Lookup(slot, key, version, 1, &out)) {
      const auto it = last.find(key);
      REQUIRE(it != last.end());
      CHECK(it->second.first == version);
      CHECK(out == it->second.second);
    }
  }
  const auto c = cache.counters();
  CHECK(c.bytes <= 64 * 2048);
  CHECK(c.records > 0);
  CHECK(c.hits > 100000);
  // Every record held is reachable: each key's latest insert is the only record it can have.
  uint64_t reachable = 0;
  for (const auto& [key, latest] : last) {
    const size_t slot = std::stoul(key.substr(3)) % 4;
    if (cache.Lookup(slot, key, latest.first, 1, &out)) {
      ++reachable;
      CHECK(out == latest.second);
    }
  }
  CHECK(reachable == c.records);
}

int64_t Hits(Store& s) { return s.GetStats().record_cache_hits; }

// GET as the server runs it: the key declared, so the unit holds its stripe (Store::Get locks
// nothing, and reads RocksDB).
std::optional<std::string> LockedGet(Store& s, std::string_view key) {
  const KeyRef keys[] = {{0, key}};
  Store::Transaction t(s, keys);
  auto r = t.Get(0, key);
  REQUIRE(r.ok());
  return *r;
}

std::vector<std::pair<double, std::string>> Members(Store& s, std::string_view key) {
  const KeyRef keys[] = {{0, key}};
  Store::Transaction t(s, keys);
  auto r = t.ZRangeByRank(0, key, 0, -1, false);
  REQUIRE(r.ok());
  std::vector<std::pair<double, std::string>> out;
  for (auto& [member, score] : *r) out.emplace_back(score, member);
  return out;
}

TEST_CASE("A sorted set's metadata read from a table file is cached until the next write") {
  TempDir dir;
  auto s = OpenStore(dir.sub("db"));
  ZAdd(*s, "z", 1, "a");
  ZAdd(*s, "z", 2, "b");
  REQUIRE(s->Checkpoint(dir.sub("copy1")).ok());  // the metadata is in a table file now
  const int64_t before = Hits(*s);
  CHECK(Members(*s, "z").size() == 2);  // read from the table file: the slot is wanted
  CHECK(Members(*s, "z").size() == 2);  // read from the table file again, cached
  CHECK(Members(*s, "z").size() == 2);  // from the cache
  CHECK(Hits(*s) - before >= 1);
  ZAdd(*s, "z", 3, "c");  // raises the stripe's mark: the cached record is stale
  const int64_t after_write = Hits(*s);
  const auto three = Members(*s, "z");
  REQUIRE(three.size() == 3);
  CHECK(three[2] == std::make_pair(3.0, std::string("c")));
  CHECK(Hits(*s) == after_write);
}

// A key read again and again while it does not exist (a job queue's empty delayed set, checked
// by every job) is answered from memory from its third read on, until a write to its stripe.
TEST_CASE("A key read missing again and again is answered from memory until it is written") {
  TempDir dir;
  auto s = OpenStore(dir.sub("db"));
  REQUIRE(s->Set(0, "other", "v", SetOptions{}).ok());
  const int64_t before = Hits(*s);
  for (int i = 0; i < 5; ++i) CHECK(LockedGet(*s, "missing") == std::nullopt);
  CHECK(Hits(*s) - before == 2);  // seen, wanted, cached, then served twice
  REQUIRE(s->Set(0, "missing", "now", SetOptions{}).ok());
  const int64_t after_write = Hits(*s);
  CHECK(LockedGet(*s, "missing") == std::optional<std::string>("now"));
  CHECK(Hits(*s) == after_write);
  const std::string_view keys[] = {"missing"};
  REQUIRE(*s->Del(0, keys) == 1);
  CHECK(LockedGet(*s, "missing") == std::nullopt);  // the memtable's deletion answers
  // Once in a table file the deletion is RocksDB's to read again; the slot is wanted already
  // and this key the last one read there, so the first such read caches the absence.
  REQUIRE(s->Checkpoint(dir.sub("copy")).ok());
  for (int i = 0; i < 5; ++i) CHECK(LockedGet(*s, "missing") == std::nullopt);
  CHECK(Hits(*s) - after_write == 4);
  REQUIRE(s->Set(0, "missing", "again", SetOptions{}).ok());
  CHECK(LockedGet(*s, "missing") == std::optional<std::string>("again"));
}

TEST_CASE("Records with an expiry are not cached; a read-only unit without the lock is served") {
  TempDir dir;
  auto s = OpenStore(dir.sub("db"));
  const int64_t later_ms = WallClock().NowMs() + 600000;
  REQUIRE(s->Set(0, "ttl", "v", SetOptions{.expiry = {ExpiryChange::Kind::kSetAt, later_ms}}).ok());
  REQUIRE(s->Set(0, "plain", "v", SetOptions{}).ok());
  REQUIRE(s->Checkpoint(dir.sub("copy")).ok());
  for (int i = 0; i < 3; ++i) {
    CHECK(LockedGet(*s, "ttl") == std::optional<std::string>("v"));
    CHECK(LockedGet(*s, "plain") == std::optional<std::string>("v"));
  }
  CHECK(Hits(*s) == 1);  // "plain" wanted, cached, then served; "ttl" never kept
  {
    const KeyRef none[] = {{0, "other"}};
    Store::Transaction t(*s, none, TransactionOptions{.isolate_reads = false});
    CHECK(*t.Get(0, "plain") == std::optional<std::string>("v"));  // not under its lock
  }
  CHECK(Hits(*s) == 2);
  CHECK(*s->Get(0, "ttl") == std::optional<std::string>("v"));  // Store::Get locks nothing
  CHECK(Hits(*s) == 2);
}

// Random SETs, DELs, ZADDs and reads of a few keys (so stripes are shared and rewritten), with
// the memtables flushed now and then, against a model; every read exact.
TEST_CASE("The record cache agrees with a model through random writes, deletes and flushes") {
  TempDir dir;
  auto s = OpenStore(dir.sub("db"));
  std::mt19937 rng(7);
  std::map<std::string, std::string> strings;
  int flushes = 0;
  for (int step = 0; step < 4000; ++step) {
    const std::string key = "k" + std::to_string(rng() % 12);
    const unsigned op = rng() % 10;
    if (op < 2) {
      const std::string value = "v" + std::to_string(step);
      REQUIRE(s->Set(0, key, value, SetOptions{}).ok());
      strings[key] = value;
    } else if (op < 3) {
      const std::string_view keys[] = {key};
      REQUIRE(*s->Del(0, keys) == (strings.erase(key) ? 1 : 0));
    } else if (op < 4 && step % 5 == 0) {
      REQUIRE(s->Checkpoint(dir.sub("copy" + std::to_string(flushes++))).ok());
    } else {
      const auto want = strings.find(key);
      const std::optional<std::string> expected =
          want == strings.end() ? std::nullopt : std::optional(want->second);
      CHECK(LockedGet(*s, key) == expected);
      if (op == 9) CHECK(*s->Get(0, key) == expected);
    }
  }
  CHECK(flushes > 20);
  CHECK(s->GetStats().record_cache_hits > 100);
  Store::Transaction t(*s, {}, TransactionOptions{.all_keys = true, .isolate_reads = false});
  auto check = t.KeyspaceCheck(0);
  REQUIRE(check.ok());
  CHECK(check->counted == check->walked);
  CHECK(check->counted.keys == static_cast<int64_t>(strings.size()));
}

// A writer counts up one key (acknowledging each value once Set returns) while its records are
// flushed into table files again and again and two readers, one holding the key's lock and one
// not, read it: neither may ever see a value older than one acknowledged before its read began.
TEST_CASE("The record cache never serves a value older than an acknowledged write") {
  TempDir dir;
  auto s = OpenStore(dir.sub("db"));
  REQUIRE(s->Set(0, "n", "0", SetOptions{}).ok());
  const int stale = CountStaleReads(
      *s, dir, [&](int i) { REQUIRE(s->Set(0, "n", std::to_string(i), SetOptions{}).ok()); },
      [&](bool locked) { return locked ? LockedGet(*s, "n") : *s->Get(0, "n"); });
  CHECK(stale == 0);
  REQUIRE(s->Checkpoint(dir.sub("last")).ok());
  for (int i = 0; i < 3; ++i) CHECK(LockedGet(*s, "n") == std::optional<std::string>("3000"));
  CHECK(*s->Get(0, "n") == std::optional<std::string>("3000"));  // from the cache
  CHECK(Hits(*s) > 0);
}

}  // namespace
}  // namespace sluice::testing
