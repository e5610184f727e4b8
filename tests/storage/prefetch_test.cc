// PrefetchElements (sluice/prefetch.h): only a hint. Runs on every kind of key (hash, set, sorted
// set, list, string, missing), in runs of one and several, before and after a flush, and with
// RocksDB's own memtable; nothing it touches changes, and the reads after it see what was written.
#include "sluice/prefetch.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sluice/transaction.h"
#include "test_util.h"
#include "write_prefetch.h"

namespace sluice::testing {

namespace {
using SV = std::string_view;
using Txn = Store::Transaction;

void Fill(Store& store) {
  Txn t(store, {});
  for (int i = 0; i < 300; ++i) {
    const std::string m = "m" + std::to_string(i);
    const SV one[] = {m};
    REQUIRE(t.SAdd(0, "s", one).ok());
    const std::pair<SV, SV> field[] = {{m, "v"}};
    REQUIRE(t.HSet(0, "h", field).ok());
    const std::pair<double, SV> scored[] = {{static_cast<double>(i), m}};
    REQUIRE(t.ZAdd(0, "z", {}, scored).ok());
    REQUIRE(t.ListPush(0, "l", Txn::ListEnd::kRight, one, false).ok());
  }
  REQUIRE(t.Set(0, "str", "x", {}).ok());
  REQUIRE(t.Commit().ok());
}

void PrefetchAll(Store& store) {
  const std::vector<ElementRef> items = {
      {"s", "m1"},  {"s", "m2"},   {"s", "nope"}, {"h", "m3"}, {"h", "m4"},  {"z", "m5"},
      {"z", "m6"},  {"z", "m7"},   {"l", "m1"},   {"l", "m2"}, {"str", "a"}, {"str", "b"},
      {"gone", ""}, {"gone", "x"}, {"s", "m8"},   {"h", "m9"}, {"z", "m10"}, {"z", ""}};
  PrefetchElements(store, 0, items);
  PrefetchElements(store, 0, std::span<const ElementRef>());
  std::vector<ElementRef> many(40, ElementRef{"s", "m1"});  // longer than one run's limit
  PrefetchElements(store, 0, many);
}

void CheckUnchanged(Store& store) {
  Txn t(store, {});
  CHECK(*t.SCard(0, "s") == 300);
  CHECK(*t.HLen(0, "h") == 300);
  CHECK(*t.ZCard(0, "z") == 300);
  CHECK(*t.LLen(0, "l") == 300);
  CHECK(**t.ZScore(0, "z", "m7") == 7);
  CHECK(*t.Get(0, "str") == std::optional<std::string>("x"));
}
}  // namespace

TEST_CASE("PrefetchElements: a hint on any key, with either memtable") {
  for (MemTableKind kind : {MemTableKind::kSluice, MemTableKind::kRocksDb}) {
    TempDir dir;
    Options o;
    o.path = dir.path();
    o.clock = ManualClock();
    o.memtable = kind;
    auto store = Store::Open(o);
    REQUIRE(store.ok());
    Fill(**store);
    PrefetchAll(**store);
    CheckUnchanged(**store);
    // New, empty memtables; the elements in table files.
    auto& impl = (*store)->impl();
    REQUIRE(impl.db()->Flush(rocksdb::FlushOptions(), impl.db()->DefaultColumnFamily()).ok());
    for (int i = 0; i < internal::kNumElementCfs; ++i) {
      const auto cf = impl.element_cf(static_cast<internal::ElementCf>(i));
      REQUIRE(impl.db()->Flush(rocksdb::FlushOptions(), cf).ok());
    }
    PrefetchAll(**store);
    CheckUnchanged(**store);
  }
}

}  // namespace sluice::testing

namespace sluice::testing {

// The write path's warming of element memtables (storage/engine/write_prefetch.h): a batch's
// element writes are handed to the prefetchers, its plain keys are not, and a lone write or a
// batch too large to stay cached is left alone.
TEST_CASE("PrefetchElementWrites: a unit's element writes, and only those, are warmed") {
  TempDir dir;
  Options o;
  o.path = dir.path();
  o.clock = ManualClock();
  o.set_inline_max_members = 0;  // the sets' members are element writes, not one inline record
  auto store = Store::Open(o);
  REQUIRE(store.ok());
  const auto prefetched = [] { return internal::ElementWritesPrefetchedOnThisThread(); };
  {
    const uint64_t before = prefetched();
    Txn t(**store, {});
    for (int i = 0; i < 50; ++i) {
      const std::string m = "m" + std::to_string(i);
      const SV one[] = {m};
      REQUIRE(t.SAdd(0, "s", one).ok());
      REQUIRE(t.SAdd(0, "s2", one).ok());
    }
    REQUIRE(t.Commit().ok());
    CHECK(prefetched() - before == 100);  // the two sets' members
  }
  {
    const uint64_t before = prefetched();
    Txn t(**store, {});
    for (int i = 0; i < 50; ++i) REQUIRE(t.Set(0, "k" + std::to_string(i), "v", {}).ok());
    REQUIRE(t.Commit().ok());
    CHECK(prefetched() == before);  // strings have no elements
  }
  {
    const uint64_t before = prefetched();
    Txn t(**store, {});
    for (int i = 0; i < 3000; ++i) {
      const std::string m = "big" + std::to_string(i);
      const SV one[] = {m};
      REQUIRE(t.SAdd(0, "big", one).ok());
    }
    REQUIRE(t.Commit().ok());
    CHECK(prefetched() == before);  // past kMaxPrefetchedEntries: its lines would not stay
  }
  Txn t(**store, {});
  CHECK(*t.SCard(0, "s") == 50);
  CHECK(*t.SCard(0, "s2") == 50);
  CHECK(*t.SCard(0, "big") == 3000);
}

}  // namespace sluice::testing
