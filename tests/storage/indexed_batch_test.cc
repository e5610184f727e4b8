// IndexedBatch (storage/engine/indexed_batch.h) checked against RocksDB's WriteBatchWithIndex,
// which it replaces: the same random puts, deletes and single deletes (two column families,
// savepoints rolled back or kept), then every point read of the batch, and the batch merged over a
// database's iterator, walked with random seeks and steps that change direction, must agree.
#include "storage/engine/indexed_batch.h"

#include <doctest/doctest.h>
#include <rocksdb/db.h>
#include <rocksdb/utilities/write_batch_with_index.h>

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "test_util.h"

namespace sluice::testing {
namespace {

using internal::IndexedBatch;

std::string RandomKey(std::mt19937_64& rng) {
  static const char* const kKeys[] = {"a", "ab", "abc", "b",  "ba", "c", "d", "da", "e",  "f",
                                      "g", "h",  "k1",  "k2", "k3", "x", "y", "z",  "zz", "zzz"};
  return kKeys[rng() % (sizeof kKeys / sizeof kKeys[0])];
}

// The latest record of every key of cf_id in [lower, upper), read from the batch's bytes (a
// later record of a key replaces an earlier one): what Sorted must return, as "key=value" or
// "key deleted".
std::vector<std::string> LatestRecords(const rocksdb::WriteBatch& batch, uint32_t cf_id,
                                       const std::string& lower, const std::string& upper) {
  class Latest final : public rocksdb::WriteBatch::Handler {
   public:
    explicit Latest(uint32_t cf) : cf_(cf) {}
    rocksdb::Status PutCF(uint32_t cf, const rocksdb::Slice& k, const rocksdb::Slice& v) override {
      if (cf == cf_) records[k.ToString()] = k.ToString() + "=" + v.ToString();
      return rocksdb::Status::OK();
    }
    rocksdb::Status DeleteCF(uint32_t cf, const rocksdb::Slice& k) override {
      if (cf == cf_) records[k.ToString()] = k.ToString() + " deleted";
      return rocksdb::Status::OK();
    }
    std::map<std::string, std::string> records;

   private:
    uint32_t cf_;
  } latest(cf_id);
  REQUIRE(batch.Iterate(&latest).ok());
  std::vector<std::string> out;
  for (const auto& [key, record] : latest.records) {
    if (key >= lower && key < upper) out.push_back(record);
  }
  return out;
}

std::string Pos(rocksdb::Iterator& it) {
  if (!it.Valid()) return "(end)";
  return it.key().ToString() + "=" + it.value().ToString();
}

}  // namespace

TEST_CASE("IndexedBatch reads and iterates as WriteBatchWithIndex does") {
  TempDir dir;
  TwoFamilyDb d(dir.sub("db"));
  std::mt19937_64 rng(7);
  // Stored keys under the batch: some the batch overwrites or deletes, some it leaves.
  for (int i = 0; i < 12; ++i) {
    for (auto* cf : d.cfs) {
      REQUIRE(d.db->Put(rocksdb::WriteOptions(), cf, RandomKey(rng), "stored" + std::to_string(i))
                  .ok());
    }
  }
  for (int round = 0; round < 300; ++round) {
    IndexedBatch ours;
    rocksdb::WriteBatchWithIndex theirs(rocksdb::BytewiseComparator(), 0, /*overwrite_key=*/true);
    const int ops = static_cast<int>(rng() % 30);
    int savepoints = 0;
    for (int i = 0; i < ops; ++i) {
      rocksdb::ColumnFamilyHandle* cf = d.cfs[rng() % 2];
      const std::string k = RandomKey(rng);
      const std::string v = "v" + std::to_string(round) + "." + std::to_string(i);
      switch (rng() % 8) {
        case 0:
          ours.Delete(cf, k);
          REQUIRE(theirs.Delete(cf, k).ok());
          break;
        case 1:  // as a sorted set's score element is erased (read back as a Delete)
          ours.SingleDelete(cf, k);
          REQUIRE(theirs.SingleDelete(cf, k).ok());
          break;
        case 2:
          ours.SetSavePoint();
          theirs.SetSavePoint();
          ++savepoints;
          break;
        case 3:
          if (savepoints > 0) {
            --savepoints;
            if (rng() % 2) {
              REQUIRE(ours.RollbackToSavePoint().ok());
              REQUIRE(theirs.RollbackToSavePoint().ok());
            } else {
              REQUIRE(ours.PopSavePoint().ok());
              REQUIRE(theirs.PopSavePoint().ok());
            }
          }
          break;
        default:
          ours.Put(cf, k, v);
          REQUIRE(theirs.Put(cf, k, v).ok());
      }
    }
    CHECK(ours.Count() == theirs.GetWriteBatch()->Count());
    CHECK(ours.batch()->Data() == theirs.GetWriteBatch()->Data());
    for (auto* cf : d.cfs) {
      for (const char* k : {"a", "ab", "abc", "b", "c", "k2", "zz", "zzz", "missing"}) {
        std::string_view mine;
        std::string expected;
        const rocksdb::Status s = theirs.GetFromBatch(cf, rocksdb::DBOptions(), k, &expected);
        switch (ours.Find(cf->GetID(), k, &mine)) {
          case IndexedBatch::Staged::kPut:
            CHECK(s.ok());
            CHECK(mine == expected);
            break;
          case IndexedBatch::Staged::kDeleted:
            CHECK(s.IsNotFound());
            CHECK(theirs.GetFromBatchAndDB(d.db.get(), rocksdb::ReadOptions(), cf, k, &expected)
                      .IsNotFound());
            break;
          case IndexedBatch::Staged::kNone: {
            CHECK(s.IsNotFound());
            // Not staged at all: the database's value (or none) shows through.
            std::string stored, merged;
            const rocksdb::Status a = d.db->Get(rocksdb::ReadOptions(), cf, k, &stored);
            const rocksdb::Status b =
                theirs.GetFromBatchAndDB(d.db.get(), rocksdb::ReadOptions(), cf, k, &merged);
            CHECK(a.code() == b.code());
            CHECK(stored == merged);
            break;
          }
        }
      }
      // Merged over the stored keys. The bounds cut nothing: WriteBatchWithIndex does not bound
      // its delta (Txn's BoundedIterator does, over either).
      const std::string lower = "a", upper = "zzzz";
      rocksdb::Slice lo(lower), up(upper);
      rocksdb::ReadOptions ro;
      ro.iterate_lower_bound = &lo;
      ro.iterate_upper_bound = &up;
      std::unique_ptr<rocksdb::Iterator> a =
          ours.NewIteratorWithBase(cf->GetID(), d.db->NewIterator(ro, cf), lower, upper);
      std::unique_ptr<rocksdb::Iterator> b(
          theirs.NewIteratorWithBase(cf, d.db->NewIterator(ro, cf), &ro));
      a->SeekToFirst();
      b->SeekToFirst();
      for (int step = 0; step < 60; ++step) {
        CHECK(Pos(*a) == Pos(*b));
        const uint64_t r = rng() % 10;
        if (r == 0) {
          const std::string t = RandomKey(rng);
          a->Seek(t);
          b->Seek(t);
        } else if (r == 1) {
          const std::string t = RandomKey(rng);
          a->SeekForPrev(t);
          b->SeekForPrev(t);
        } else if (r == 2) {
          a->SeekToLast();
          b->SeekToLast();
        } else if (!a->Valid() || !b->Valid()) {
          a->SeekToFirst();
          b->SeekToFirst();
        } else if (r < 6) {
          a->Next();
          b->Next();
        } else {
          a->Prev();
          b->Prev();
        }
      }
      CHECK(Pos(*a) == Pos(*b));
    }
  }
}

// Sorted keeps its order across calls and merges in what was indexed since: asked after every
// write, through savepoints rolled back, tables grown and the batch cleared, it must list what
// the batch's bytes say.
TEST_CASE("IndexedBatch: Sorted between writes agrees with the batch's latest records") {
  TempDir dir;
  TwoFamilyDb d(dir.sub("db"));
  std::mt19937_64 rng(11);
  IndexedBatch ours;
  int savepoints = 0;
  for (int i = 0; i < 3000; ++i) {
    rocksdb::ColumnFamilyHandle* cf = d.cfs[rng() % 2];
    const std::string k = RandomKey(rng) + std::to_string(rng() % 60);  // grows past 64 slots
    switch (rng() % 40) {
      case 0:
        ours.SetSavePoint();
        ++savepoints;
        break;
      case 1:
        if (savepoints > 0) {
          --savepoints;
          REQUIRE(ours.RollbackToSavePoint().ok());
        }
        break;
      case 2:
        if (rng() % 8 == 0) {
          while (savepoints > 0 && ours.PopSavePoint().ok()) --savepoints;
          ours.Clear();
        }
        break;
      case 3:
      case 4:
      case 5:
        ours.Delete(cf, k);
        break;
      default:
        ours.Put(cf, k, "v" + std::to_string(i));
    }
    if (rng() % 3 != 0) continue;
    const uint32_t cf_id = d.cfs[rng() % 2]->GetID();
    const std::string lower = RandomKey(rng), upper = lower + "~";
    std::vector<IndexedBatch::Delta> sorted;
    ours.Sorted(cf_id, lower, upper, &sorted);
    std::vector<std::string> got;
    for (const auto& delta : sorted) {
      got.push_back(std::string(delta.key) +
                    (delta.deleted ? " deleted" : "=" + std::string(delta.value)));
    }
    INFO("step ", i, " [", lower, ", ", upper, ")");
    CHECK(got == LatestRecords(*ours.batch(), cf_id, lower, upper));
  }
}

TEST_CASE("IndexedBatch: cleared, reused, grown past its first table, trimmed") {
  TempDir dir;
  TwoFamilyDb d(dir.sub("db"));
  IndexedBatch b;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 5000; ++i) b.Put(d.cfs[0], "key" + std::to_string(i), std::to_string(i));
    for (int i = 0; i < 5000; i += 2) b.Delete(d.cfs[0], "key" + std::to_string(i));
    std::string_view v;
    CHECK(b.Find(0, "key4001", &v) == IndexedBatch::Staged::kPut);
    CHECK(v == "4001");
    CHECK(b.Find(0, "key4000", &v) == IndexedBatch::Staged::kDeleted);
    CHECK(b.Find(d.cfs[1]->GetID(), "key4001", &v) == IndexedBatch::Staged::kNone);
    std::vector<IndexedBatch::Delta> sorted;
    b.Sorted(0, "key1", "key2", &sorted);
    CHECK(sorted.size() == 1111);  // key1, key10..key19, key100..key199, key1000..key1999
    CHECK(sorted.front().key == "key1");
    CHECK(sorted.back().key == "key1999");
    b.Clear();
    CHECK(b.Count() == 0);
    CHECK(b.Find(0, "key4001", &v) == IndexedBatch::Staged::kNone);
    b.Trim(1 << 10);
  }
}

TEST_CASE("IndexedBatch: turning around at either end of the stored keys") {
  TempDir dir;
  TwoFamilyDb d(dir.sub("db"));
  for (const char* k : {"b", "c"}) REQUIRE(d.db->Put(rocksdb::WriteOptions(), k, "stored").ok());
  IndexedBatch b;
  b.Put(d.cfs[0], "a", "first");  // before every stored key
  b.Put(d.cfs[0], "d", "last");   // after every stored key
  std::unique_ptr<rocksdb::Iterator> it =
      b.NewIteratorWithBase(0, d.db->NewIterator(rocksdb::ReadOptions()), "", "");
  it->SeekForPrev("a");  // the stored side is before its start
  CHECK(Pos(*it) == "a=first");
  it->Next();
  CHECK(Pos(*it) == "b=stored");
  it->Seek("d");  // the stored side is past its end
  CHECK(Pos(*it) == "d=last");
  it->Prev();
  CHECK(Pos(*it) == "c=stored");
  it->Next();
  CHECK(Pos(*it) == "d=last");
  it->Next();
  CHECK(Pos(*it) == "(end)");
}

}  // namespace sluice::testing
