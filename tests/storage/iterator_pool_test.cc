// The units' reused range iterators (storage/engine/iterator_pool.h): a refreshed iterator shows
// what was written since it was made (keys new to the memtable included), reads only its own
// lease's bounds, hides what was erased since, and agrees with a model through random writes,
// erasures, flushes and reads; a reader never sees a range older than an acknowledged write;
// idle iterators are let go.
#include "iterator_pool.h"

#include <doctest/doctest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "sluice/transaction.h"
#include "stale_reads.h"
#include "store_impl.h"
#include "test_util.h"

namespace sluice::testing {
namespace {

// Every sorted set keeps its members in the element families, where reads take iterators.
std::unique_ptr<Store> OpenBigSets(const std::string& path) {
  return OpenStoreWith(path, [](Options& o) { o.zset_inline_max_members = 0; });
}

void ZRem(Store& s, std::string_view key, std::string_view member) {
  const KeyRef keys[] = {{0, key}};
  Store::Transaction t(s, keys);
  const std::string_view one[] = {member};
  REQUIRE(t.ZRem(0, key, one).ok());
  REQUIRE(t.Commit().ok());
}

// ZRANGEBYSCORE key -inf +inf as "member:score" strings; `locked` as the server runs it (the
// key declared), else a unit that locks nothing and reads at a snapshot.
std::vector<std::string> Range(Store& s, std::string_view key, bool locked = true) {
  const KeyRef keys[] = {{0, key}};
  const KeyRef none[] = {{0, "other"}};
  Store::Transaction t(s, locked ? std::span<const KeyRef>(keys) : std::span<const KeyRef>(none),
                       TransactionOptions{.isolate_reads = locked});
  auto r = t.ZRangeByScore(0, key, {-1e300, false}, {1e300, false}, false, 0, -1);
  REQUIRE(r.ok());
  std::vector<std::string> out;
  for (const auto& [member, score] : *r) out.push_back(member + ":" + std::to_string(int(score)));
  return out;
}

internal::IteratorPool& Pool(Store& s) { return s.impl().iterators(); }

TEST_CASE("A reused range iterator shows the members added since it was made") {
  TempDir dir;
  auto s = OpenBigSets(dir.sub("db"));
  ZAdd(*s, "z", 1, "a");
  CHECK(Range(*s, "z") == std::vector<std::string>{"a:1"});
  const uint64_t reused = Pool(*s).counts().reused;
  ZAdd(*s, "z", 2, "b");  // a key new to the memtable, after the iterator's order snapshot
  CHECK(Range(*s, "z") == std::vector<std::string>{"a:1", "b:2"});
  ZAdd(*s, "z", 0, "c");
  CHECK(Range(*s, "z", /*locked=*/false) == std::vector<std::string>{"c:0", "a:1", "b:2"});
  CHECK(Pool(*s).counts().reused >= reused + 2);
  CHECK(s->GetStats().iterators_reused == static_cast<int64_t>(Pool(*s).counts().reused));
}

TEST_CASE("A reused range iterator reads only its own lease's bounds") {
  TempDir dir;
  auto s = OpenBigSets(dir.sub("db"));
  for (int i = 0; i < 5; ++i) {
    ZAdd(*s, "z1", i, "m" + std::to_string(i));
    ZAdd(*s, "z2", 10 + i, "n" + std::to_string(i));
  }
  const std::vector<std::string> z1 = {"m0:0", "m1:1", "m2:2", "m3:3", "m4:4"};
  const std::vector<std::string> z2 = {"n0:10", "n1:11", "n2:12", "n3:13", "n4:14"};
  for (int round = 0; round < 3; ++round) {
    CHECK(Range(*s, "z2") == z2);
    CHECK(Range(*s, "z1") == z1);
    CHECK(Range(*s, "nothing").empty());
    REQUIRE(s->Checkpoint(dir.sub("copy" + std::to_string(round))).ok());  // files change
  }
  CHECK(Pool(*s).counts().reused > 0);
}

TEST_CASE("A reused range iterator hides members erased since, and shows them re-added") {
  TempDir dir;
  auto s = OpenBigSets(dir.sub("db"));
  ZAdd(*s, "z", 1, "a");
  ZAdd(*s, "z", 2, "b");
  CHECK(Range(*s, "z") == std::vector<std::string>{"a:1", "b:2"});
  ZRem(*s, "z", "a");  // its score element: a SingleDelete after its Put, both in the memtable
  CHECK(Range(*s, "z") == std::vector<std::string>{"b:2"});
  ZAdd(*s, "z", 3, "a");
  CHECK(Range(*s, "z") == std::vector<std::string>{"b:2", "a:3"});
  ZAdd(*s, "z", 1, "a");  // re-scored: the score-3 element erased, the score-1 one written again
  CHECK(Range(*s, "z", /*locked=*/false) == std::vector<std::string>{"a:1", "b:2"});
}

// Random ZADDs, ZREMs and full-range reads of a few sets (locked and not), with the memtables
// flushed now and then, against a model; every read exact.
TEST_CASE("Reused range iterators agree with a model through writes, erasures and flushes") {
  TempDir dir;
  auto s = OpenBigSets(dir.sub("db"));
  std::mt19937 rng(11);
  std::map<std::string, std::map<std::string, int>> sets;  // key -> member -> score
  int flushes = 0;
  for (int step = 0; step < 3000; ++step) {
    const std::string key = "z" + std::to_string(rng() % 4);
    const std::string member = "m" + std::to_string(rng() % 20);
    const unsigned op = rng() % 10;
    if (op < 3) {
      const int score = static_cast<int>(rng() % 50);
      ZAdd(*s, key, score, member);
      sets[key][member] = score;
    } else if (op < 5) {
      ZRem(*s, key, member);
      sets[key].erase(member);
    } else if (op == 5 && step % 7 == 0) {
      REQUIRE(s->Checkpoint(dir.sub("copy" + std::to_string(flushes++))).ok());
    } else {
      std::vector<std::pair<int, std::string>> ordered;
      for (const auto& [m, score] : sets[key]) ordered.emplace_back(score, m);
      std::sort(ordered.begin(), ordered.end());
      std::vector<std::string> want;
      for (const auto& [score, m] : ordered) want.push_back(m + ":" + std::to_string(score));
      CHECK(Range(*s, key, op != 9) == want);
    }
  }
  CHECK(flushes > 10);
  CHECK(Pool(*s).counts().reused > 500);
}

// A writer adds members with scores 1..kCountTo (each acknowledged once its ZADD returns) while
// the set's memtables are flushed again and again and two readers, one holding the key's lock
// and one not, read its highest score: neither may see a score lower than one acknowledged
// before its read began (a refreshed iterator that missed a key new to the memtable would).
TEST_CASE("A reused range iterator never misses an acknowledged write") {
  TempDir dir;
  auto s = OpenBigSets(dir.sub("db"));
  ZAdd(*s, "z", 0, "m0");
  const int stale = CountStaleReads(
      *s, dir, [&](int i) { ZAdd(*s, "z", i, "m" + std::to_string(i)); },
      [&](bool locked) -> std::optional<std::string> {
        const KeyRef keys[] = {{0, "z"}};
        const KeyRef none[] = {{0, "other"}};
        Store::Transaction t(*s,
                             locked ? std::span<const KeyRef>(keys) : std::span<const KeyRef>(none),
                             TransactionOptions{.isolate_reads = locked});
        auto r = t.ZRangeByScore(0, "z", {-1e300, false}, {1e300, false}, /*rev=*/true, 0, 1);
        REQUIRE(r.ok());
        if (r->empty()) return std::nullopt;
        return std::to_string(static_cast<int>(r->front().second));
      });
  CHECK(stale == 0);
  CHECK(Pool(*s).counts().reused > 0);
}

TEST_CASE("IteratorPool: at most a few free iterators per family; idle ones are let go") {
  TempDir dir;
  auto s = OpenBigSets(dir.sub("db"));
  ZAdd(*s, "z", 1, "a");
  rocksdb::DB* db = s->impl().db();
  rocksdb::ColumnFamilyHandle* cf = s->impl().element_cf(internal::ElementCf::kZScore);
  internal::IteratorPool pool;  // the store's own is swept by its everysec thread
  {
    std::vector<std::unique_ptr<rocksdb::Iterator>> leased;
    for (size_t i = 0; i < internal::IteratorPool::kMaxFreePerFamily + 3; ++i) {
      leased.push_back(pool.Lease(db, cf, "", "\xff", nullptr));
      REQUIRE(leased.back() != nullptr);
      leased.back()->SeekToFirst();
      CHECK(leased.back()->Valid());
    }
    CHECK(pool.free_count() == 0);
  }
  CHECK(pool.free_count() == internal::IteratorPool::kMaxFreePerFamily);
  CHECK(pool.counts().made == internal::IteratorPool::kMaxFreePerFamily + 3);
  {
    auto again = pool.Lease(db, s->impl().db()->DefaultColumnFamily(), "", "\xff", nullptr);
    CHECK(pool.counts().made == internal::IteratorPool::kMaxFreePerFamily + 4);  // another family
    auto same = pool.Lease(db, cf, "", "\xff", nullptr);
    CHECK(pool.counts().reused == 1);
  }
  const size_t kept = pool.free_count();
  CHECK(kept == internal::IteratorPool::kMaxFreePerFamily + 1);
  pool.DropIdle();  // each was given back since the last sweep: kept
  CHECK(pool.free_count() == kept);
  pool.DropIdle();  // none leased since: freed
  CHECK(pool.free_count() == 0);
  // A unit at a snapshot older than the latest state is declined.
  const rocksdb::Snapshot* old = db->GetSnapshot();
  ZAdd(*s, "z", 2, "b");
  CHECK(pool.Lease(db, cf, "", "\xff", old) == nullptr);
  CHECK(pool.counts().declined == 1);
  db->ReleaseSnapshot(old);
}

}  // namespace
}  // namespace sluice::testing
