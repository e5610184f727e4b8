// Expiry: invisible to every read, absent to every write, kept across reopen, kept by
// compaction (so the keyspace counts stay exact) and removed by the active expiry cycle.
#include <doctest/doctest.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>

#include <chrono>
#include <thread>
#include <vector>

#include "test_util.h"

namespace sluice::testing {
namespace {
using SV = std::string_view;

template <typename F>
bool Eventually(F cond) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return cond();
}

// RocksDB opened directly on a store's directory, with the store's options and filter.
struct RawDb {
  RawDb(const std::string& path, std::shared_ptr<const Clock> clock)
      : db_(path, std::move(clock)) {}
  void Put(SV key, int64_t expire_at_ms, SV payload) {
    REQUIRE(db_->Put(rocksdb::WriteOptions(), internal::EncodeKey(0, key),
                     internal::EncodeValue(ValueKind::kString, expire_at_ms, payload))
                .ok());
  }
  // The payload RocksDB itself returns (expired or not), or nullopt when it has none.
  std::optional<std::string> Payload(SV key) {
    std::string raw;
    auto s = db_->Get(rocksdb::ReadOptions(), internal::EncodeKey(0, key), &raw);
    if (s.IsNotFound()) return std::nullopt;
    REQUIRE(s.ok());
    return std::string(internal::DecodeValue(raw)->payload);
  }
  void Flush() { REQUIRE(db_->Flush(rocksdb::FlushOptions()).ok()); }
  void CompactAll() {
    REQUIRE(db_->CompactRange(rocksdb::CompactRangeOptions(), nullptr, nullptr).ok());
  }
  int FilesAtLevel(int level) {
    std::string v;
    REQUIRE(db_->GetProperty("rocksdb.num-files-at-level" + std::to_string(level), &v));
    return std::stoi(v);
  }
  int64_t CountEntries() {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
    int64_t n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
    return n;
  }
  RawStoreDb db_;
};

}  // namespace

TEST_CASE("an expired key is invisible to every read") {
  Fixture f;
  REQUIRE(f.store->Set(0, "k", "hello", SetAt(kT0Ms + 100)).ok());
  f.AdvanceMs(100);
  CHECK(*f.store->Get(0, "k") == "hello");  // the expiry millisecond itself is still live
  f.AdvanceMs(1);
  std::vector<SV> keys{"k"};
  CHECK(*f.store->Get(0, "k") == std::nullopt);
  CHECK(*f.store->Exists(0, keys) == 0);
  CHECK(*f.store->Type(0, "k") == std::nullopt);
  CHECK(f.store->Keys(0, "*")->empty());
  CHECK(f.store->Scan(0, 0, std::nullopt, 10, std::nullopt)->keys.empty());
  // The first read removed it (Redis's lazy expiry): no longer counted.
  CHECK(*f.store->DbSize(0) == 0);
  CHECK(f.store->Keyspace(0)->expires == 0);
  CHECK(*f.store->PTtl(0, "k") == -2);
  CHECK(*f.store->ExpireTimeMs(0, "k") == -2);
  CHECK(*f.store->MGet(0, keys) == std::vector<std::optional<std::string>>{std::nullopt});
  CHECK(*f.store->StrLen(0, "k") == 0);
  CHECK(*f.store->GetRange(0, "k", 0, -1) == "");
  CHECK(*f.store->RandomKey(0) == std::nullopt);
}

TEST_CASE("an expired key is absent to every write") {
  Fixture f;
  auto expire_all = [&] {
    for (SV k : {"a", "b", "c", "d", "e", "g", "h", "i", "j"}) {
      REQUIRE(f.store->Set(0, k, "7", SetAt(f.store->NowMs() + 10)).ok());
    }
    f.AdvanceMs(11);
  };
  expire_all();
  CHECK(*f.store->IncrBy(0, "a", 1) == 1);
  CHECK(*f.store->Append(0, "b", "x") == 1);
  CHECK(*f.store->SetRange(0, "c", 1, "x") == 2);
  CHECK(f.store->Rename(0, "d", "z", false).status().code() == Code::kNoSuchKey);
  CHECK_FALSE(*f.store->Copy(0, "e", 0, "z", false));
  CHECK_FALSE(*f.store->Persist(0, "g"));
  CHECK_FALSE(*f.store->ExpireAt(0, "h", f.store->NowMs() + 1000, ExpireCondition::kAlways));
  CHECK(*f.store->GetDel(0, "i") == std::nullopt);
  CHECK(*f.store->GetEx(0, "j", {ExpiryChange::Kind::kPersist, 0}) == std::nullopt);
  CHECK(*f.store->IncrByFloat(0, "a", 0.5L) == "1.5");
  CHECK(f.store->GetStats().expired_keys == 9);  // each write removed the expired value
  f.store.reset();
  RawDb raw(f.dir.path(), f.clock);
  CHECK(raw.CountEntries() == 3);  // a, b, c: the rest are gone physically too
}

TEST_CASE("TTLs survive close and reopen") {
  Fixture f;
  REQUIRE(f.store->Set(0, "k", "v", SetAt(kT0Ms + 60000)).ok());
  REQUIRE(f.store->Set(0, "short", "v", SetAt(kT0Ms + 10)).ok());
  f.Reopen();
  CHECK(*f.store->PTtl(0, "k") == 60000);
  CHECK(*f.store->ExpireTimeMs(0, "k") == kT0Ms + 60000);
  f.AdvanceMs(11);
  f.Reopen();
  CHECK(*f.store->Get(0, "short") == std::nullopt);
  CHECK(*f.store->PTtl(0, "k") == 60000 - 11);
}

// Keys have no compaction filter: an expired key stays stored, and counted by DBSIZE as Redis
// counts it, until a unit removes it in a write that also changes the count.
TEST_CASE("compaction keeps expired keys; they stay counted until the expiry cycle removes them") {
  TempDir dir;
  auto clock = ManualClock();
  {
    auto store = OpenStore(dir.path(), clock);
    REQUIRE(store->Set(0, "expiring", "x", SetAt(kT0Ms + 100)).ok());
    REQUIRE(store->Set(0, "persistent", "z", SetPlain()).ok());
  }
  clock->AdvanceNs(200 * 1000000LL);
  {
    RawDb raw(dir.path(), clock);
    raw.Flush();
    raw.CompactAll();
    CHECK(raw.Payload("expiring") == "x");
    CHECK(raw.CountEntries() == 2);
  }
  auto store = OpenStore(dir.path(), clock, /*active_expiry=*/true);
  CHECK(*store->Get(0, "expiring") == std::nullopt);  // invisible at once
  CHECK(Eventually([&] { return *store->DbSize(0) == 1; }));
  CHECK(store->Keyspace(0)->expires == 0);
  CHECK(store->GetStats().expired_keys == 1);
}

TEST_CASE("active expiry removes expired keys with no reads") {
  TempDir dir;
  auto clock = ManualClock();
  auto store = OpenStore(dir.path(), clock, /*active_expiry=*/true);
  for (int i = 0; i < 500; ++i) {
    REQUIRE(store->Set(i % 3, "t" + std::to_string(i), "v", SetAt(kT0Ms + 100)).ok());
  }
  for (int i = 0; i < 50; ++i)
    REQUIRE(store->Set(0, "p" + std::to_string(i), "v", SetPlain()).ok());
  for (int i = 0; i < 50; ++i) {
    REQUIRE(store->Set(0, "later" + std::to_string(i), "v", SetAt(kT0Ms + 100000)).ok());
  }
  clock->AdvanceNs(200 * 1000000LL);
  CHECK(Eventually([&] { return store->GetStats().expired_keys == 500; }));
  CHECK(store->GetStats().expired_keys == 500);
  store.reset();
  RawDb raw(dir.path(), clock);
  CHECK(raw.CountEntries() == 100);  // physically gone, not just invisible
}

TEST_CASE("active expiry sleeps while no stored key can be due") {
  TempDir dir;
  auto clock = ManualClock();
  auto store = OpenStore(dir.path(), clock, /*active_expiry=*/true);
  auto scans = [&] { return store->GetStats().expiry_scans; };
  for (int i = 0; i < 50; ++i) {
    REQUIRE(store->Set(0, "p" + std::to_string(i), "v", SetPlain()).ok());
  }
  // No stored key had an expiry at open, so no pass; cycles walk nothing.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // ~5 cycles at 10 Hz
  const int64_t settled = scans();
  CHECK(settled == 0);
  // A key expiring later: still nothing to do until the clock gets there.
  REQUIRE(store->Set(0, "t", "v", SetAt(kT0Ms + 1000)).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  CHECK(scans() == settled);
  CHECK(store->GetStats().expired_keys == 0);
  clock->AdvanceNs(2000 * 1000000LL);
  CHECK(Eventually([&] { return store->GetStats().expired_keys == 1; }));
  CHECK(scans() == settled);  // its write told the cycle: removed without a walk
  // Asleep again.
  REQUIRE(Eventually([&] {
    const int64_t before = scans();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    return scans() == before;
  }));
}

}  // namespace sluice::testing
