// Point reads answered by the newest memtable alone (storage/engine/memtable.h, NewestMemTable::
// ReadNewest), checked against RocksDB's own point reads: every answer it gives at every
// snapshot while writes, deletes, SingleDeletes and merges go on and memtables switch; the
// range deletions it cannot see (announced, in flight, replayed from the log); and through the
// store, FLUSHDB and FLUSHALL followed by reads in the same memtable and after a restart.
#include <doctest/doctest.h>
#include <rocksdb/db.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include <atomic>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "storage/engine/memtable.h"
#include "test_util.h"

namespace sluice::testing {
namespace {

using Read = internal::NewestMemTable::Read;

class Concat final : public rocksdb::AssociativeMergeOperator {
 public:
  bool Merge(const rocksdb::Slice&, const rocksdb::Slice* existing, const rocksdb::Slice& value,
             std::string* out, rocksdb::Logger*) const override {
    out->assign(existing == nullptr ? "" : existing->ToString()).append(value.ToString());
    return true;
  }
  const char* Name() const override { return "test.Concat"; }
};

// A database whose memtables are Sluice's, registered with `newest` (which must outlive it).
std::unique_ptr<rocksdb::DB> OpenWith(const std::string& path, internal::NewestMemTable* newest,
                                      size_t write_buffer_size) {
  rocksdb::Options o;
  o.create_if_missing = true;
  o.merge_operator = std::make_shared<Concat>();
  o.write_buffer_size = write_buffer_size;
  o.memtable_factory = internal::NewMemTableFactory(o.write_buffer_size, newest);
  rocksdb::DB* db = nullptr;
  REQUIRE(rocksdb::DB::Open(o, path, &db).ok());
  return std::unique_ptr<rocksdb::DB>(db);
}

// RocksDB's answer for key at seq: found with *value, or not.
bool RocksGet(rocksdb::DB& db, const std::string& key, const rocksdb::Snapshot* at,
              std::string* value) {
  rocksdb::ReadOptions ro;
  ro.snapshot = at;
  const rocksdb::Status s = db.Get(ro, key, value);
  REQUIRE((s.ok() || s.IsNotFound()));
  return s.ok();
}

TEST_CASE("newest memtable: every answer agrees with RocksDB's read, at every snapshot") {
  TempDir dir;
  internal::NewestMemTable newest;
  auto db = OpenWith(dir.sub("db"), &newest, 256 << 10);  // switches every few thousand writes
  std::mt19937 rng(11);
  std::vector<const rocksdb::Snapshot*> snapshots;
  int found = 0, deleted = 0, unknown = 0;
  // Keys "key:N" take Puts, Deletes and merges; keys "once:N" a Put then a SingleDelete, in
  // turn (SingleDelete's contract: never mixed with Delete, one Put before each).
  constexpr int kKeys = 200;
  auto key = [](uint32_t i) { return (i % 4 == 0 ? "once:" : "key:") + std::to_string(i); };
  std::vector<bool> once_put(kKeys, false);
  for (int round = 0; round < 40000; ++round) {
    const uint32_t i = rng() % kKeys;
    const std::string k = key(i);
    const uint32_t op = rng() % 100;
    rocksdb::Status s;
    if (i % 4 == 0 && op < 85) {
      s = once_put[i] ? db->SingleDelete(rocksdb::WriteOptions(), k)
                      : db->Put(rocksdb::WriteOptions(), k, std::string(1 + rng() % 32, 'o'));
      once_put[i] = !once_put[i];
    } else if (op < 60) {
      s = db->Put(rocksdb::WriteOptions(), k, std::string(rng() % 64, 'a' + rng() % 26));
    } else if (op < 85) {
      s = db->Delete(rocksdb::WriteOptions(), k);
    } else if (i % 4 == 0) {
      // no merges on SingleDelete's keys
    } else if (op < 92) {
      s = db->Merge(rocksdb::WriteOptions(), k, "+");
    } else if (op < 94) {
      snapshots.push_back(db->GetSnapshot());
    } else {
      // A read of a few keys, at the latest state and at a random snapshot.
      for (int r = 0; r < 8; ++r) {
        const std::string rk = key(rng() % kKeys);
        const rocksdb::Snapshot* at =
            snapshots.empty() || rng() % 2 == 0 ? nullptr : snapshots[rng() % snapshots.size()];
        const uint64_t visible =
            at != nullptr ? at->GetSequenceNumber() : db->GetLatestSequenceNumber();
        std::string ours, theirs;
        const Read read = newest.ReadNewest(rk, visible, &ours);
        const bool present = RocksGet(*db, rk, at, &theirs);
        switch (read) {
          case Read::kFound:
            ++found;
            REQUIRE(present);
            CHECK(ours == theirs);
            break;
          case Read::kDeleted:
            ++deleted;
            CHECK_FALSE(present);
            break;
          case Read::kUnknown:
            ++unknown;
            CHECK(ours.empty());  // nothing written
            break;
        }
      }
    }
    REQUIRE_MESSAGE(s.ok(), s.ToString());
    if (snapshots.size() > 16) {
      db->ReleaseSnapshot(snapshots.front());
      snapshots.erase(snapshots.begin());
    }
  }
  for (const auto* snap : snapshots) db->ReleaseSnapshot(snap);
  MESSAGE("answered " << found << " found, " << deleted << " deleted; left " << unknown);
  CHECK(found > 1000);
  CHECK(deleted > 100);
  CHECK(unknown > 100);  // merges, keys only in older memtables, versions newer than a snapshot
}

TEST_CASE("newest memtable: a version newer than the reader is passed over; a merge is left") {
  TempDir dir;
  internal::NewestMemTable newest;
  auto db = OpenWith(dir.sub("db"), &newest, 64 << 20);
  REQUIRE(db->Put(rocksdb::WriteOptions(), "k", "old").ok());
  const uint64_t before = db->GetLatestSequenceNumber();
  REQUIRE(db->Put(rocksdb::WriteOptions(), "k", "new").ok());
  std::string v;
  CHECK(newest.ReadNewest("k", before, &v) == Read::kFound);
  CHECK(v == "old");
  CHECK(newest.ReadNewest("k", db->GetLatestSequenceNumber(), &v) == Read::kFound);
  CHECK(v == "new");
  CHECK(newest.ReadNewest("k", before - 1, &v) == Read::kUnknown);  // older than every version
  CHECK(newest.ReadNewest("absent", db->GetLatestSequenceNumber(), &v) == Read::kUnknown);
  REQUIRE(db->Merge(rocksdb::WriteOptions(), "k", "+").ok());
  CHECK(newest.ReadNewest("k", db->GetLatestSequenceNumber(), &v) == Read::kUnknown);
  REQUIRE(db->SingleDelete(rocksdb::WriteOptions(), "s").ok());
  CHECK(newest.ReadNewest("s", db->GetLatestSequenceNumber(), &v) == Read::kDeleted);
  // A flush replaces the newest memtable: what was in it is RocksDB's to read.
  REQUIRE(db->Flush(rocksdb::FlushOptions()).ok());
  CHECK(newest.ReadNewest("k", db->GetLatestSequenceNumber(), &v) == Read::kUnknown);
  db.reset();
  CHECK(newest.ReadNewest("k", ~uint64_t{0} >> 8, &v) == Read::kUnknown);
}

// The range deletion lands in RocksDB's table beside the list: without the announcement the
// list would still answer "old".
TEST_CASE("newest memtable: nothing is answered while a range deletion may be in it") {
  TempDir dir;
  internal::NewestMemTable newest;
  auto db = OpenWith(dir.sub("db"), &newest, 64 << 20);
  REQUIRE(db->Put(rocksdb::WriteOptions(), "k", "old").ok());
  std::string v;
  CHECK(newest.ReadNewest("k", db->GetLatestSequenceNumber(), &v) == Read::kFound);
  newest.BeginRangeDelete();
  CHECK(newest.ReadNewest("k", db->GetLatestSequenceNumber(), &v) == Read::kUnknown);
  REQUIRE(db->DeleteRange(rocksdb::WriteOptions(), db->DefaultColumnFamily(), "a", "z").ok());
  CHECK(newest.ReadNewest("k", db->GetLatestSequenceNumber(), &v) == Read::kUnknown);
  newest.EndRangeDelete();
  CHECK(newest.ReadNewest("k", db->GetLatestSequenceNumber(), &v) == Read::kUnknown);
  CHECK_FALSE(RocksGet(*db, "k", nullptr, &v));
  REQUIRE(db->Put(rocksdb::WriteOptions(), "k", "after").ok());
  CHECK(newest.ReadNewest("k", db->GetLatestSequenceNumber(), &v) == Read::kUnknown);
  // The next memtable holds none: it answers again.
  REQUIRE(db->Flush(rocksdb::FlushOptions()).ok());
  REQUIRE(db->Put(rocksdb::WriteOptions(), "k", "later").ok());
  CHECK(newest.ReadNewest("k", db->GetLatestSequenceNumber(), &v) == Read::kFound);
  CHECK(v == "later");
  newest.DistrustCurrent();
  CHECK(newest.ReadNewest("k", db->GetLatestSequenceNumber(), &v) == Read::kUnknown);
}

// A writer rewrites one key while readers read it at the latest state: every answer is a value
// the writer wrote, never older than the one read before it.
TEST_CASE("newest memtable: readers alongside a writer and memtable switches") {
  TempDir dir;
  internal::NewestMemTable newest;
  auto db = OpenWith(dir.sub("db"), &newest, 64 << 10);
  REQUIRE(db->Put(rocksdb::WriteOptions(), "hot", "00000000").ok());
  std::atomic<bool> done{false};
  std::thread writer([&] {
    char buf[16];
    for (int i = 1; i <= 30000; ++i) {
      std::snprintf(buf, sizeof buf, "%08d", i);
      REQUIRE(db->Put(rocksdb::WriteOptions(), "hot", buf).ok());
      if (i % 3 == 0)
        REQUIRE(db->Put(rocksdb::WriteOptions(), "cold" + std::to_string(i), buf).ok());
    }
    done.store(true);
  });
  int answered = 0;
  std::string last = "00000000";
  while (!done.load()) {
    std::string v;
    const Read read = newest.ReadNewest("hot", db->GetLatestSequenceNumber(), &v);
    REQUIRE(read != Read::kDeleted);
    if (read == Read::kFound) {
      ++answered;
      REQUIRE(v.size() == 8);
      CHECK(v >= last);
      last = v;
    }
  }
  writer.join();
  std::string v;
  REQUIRE(RocksGet(*db, "hot", nullptr, &v));
  CHECK(v == "00030000");
  MESSAGE(answered << " reads answered by the newest memtable");
  CHECK(answered > 0);
}

// Through the store: FLUSHDB and FLUSHALL write range deletions into the memtable that holds
// the keys they remove; the reads right after, and after a restart that replays the log into
// the newest memtable again, must not see those keys.
TEST_CASE("newest memtable: keys removed by FLUSHDB and FLUSHALL stay removed, after a restart") {
  Fixture f;
  REQUIRE(f.store->Set(0, "a", "1", SetPlain()).ok());
  REQUIRE(f.store->Set(1, "b", "2", SetPlain()).ok());
  {
    Store::Transaction t(*f.store, {});
    const std::pair<std::string_view, std::string_view> fields[] = {{"f", "v"}};
    REQUIRE(t.HSet(0, "h", fields).ok());
    REQUIRE(t.Commit().ok());
  }
  CHECK(*f.store->Get(0, "a") == std::optional<std::string>("1"));
  REQUIRE(f.store->FlushDb(0).ok());
  CHECK(*f.store->Get(0, "a") == std::nullopt);
  CHECK(*f.store->Get(1, "b") == std::optional<std::string>("2"));
  {
    Store::Transaction t(*f.store, {});
    CHECK(*t.HGet(0, "h", "f") == std::nullopt);
  }
  f.Reopen();  // the log (the writes and the range deletions) replays into the memtables
  CHECK(*f.store->Get(0, "a") == std::nullopt);
  CHECK(*f.store->Get(1, "b") == std::optional<std::string>("2"));
  {
    Store::Transaction t(*f.store, {});
    CHECK(*t.HGet(0, "h", "f") == std::nullopt);
  }
  REQUIRE(f.store->FlushAll().ok());
  CHECK(*f.store->Get(1, "b") == std::nullopt);
  REQUIRE(f.store->Set(1, "b", "3", SetPlain()).ok());
  CHECK(*f.store->Get(1, "b") == std::optional<std::string>("3"));
  f.Reopen();
  CHECK(*f.store->Get(1, "b") == std::optional<std::string>("3"));
  CHECK(*f.store->Get(0, "a") == std::nullopt);
}

// The check after a replay (Store::Impl::DistrustReplayedRangeDeletes) distrusts only a
// memtable a range deletion may be in: after a restart that replays plain writes, the newest
// memtable answers the reads of the keys it holds, keys and elements alike.
TEST_CASE("newest memtable: after a replay of plain writes it answers reads") {
  Fixture f;
  REQUIRE(f.store->Set(0, "a", "1", SetPlain()).ok());
  // More fields than a record holds inline (hash-max-listpack-entries): each is an element.
  std::vector<std::string> names;
  for (int i = 0; i < 200; ++i) names.push_back("f" + std::to_string(i));
  {
    Store::Transaction t(*f.store, {});
    std::vector<std::pair<std::string_view, std::string_view>> fields;
    for (const std::string& n : names) fields.emplace_back(n, "v");
    REQUIRE(t.HSet(0, "h", fields).ok());
    REQUIRE(t.Commit().ok());
  }
  f.Reopen();
  uint64_t before = internal::NewestMemTableReadsOnThisThread();
  CHECK(*f.store->Get(0, "a") == std::optional<std::string>("1"));
  CHECK(internal::NewestMemTableReadsOnThisThread() == before + 1);
  before = internal::NewestMemTableReadsOnThisThread();
  {
    Store::Transaction t(*f.store, {});
    CHECK(*t.HGet(0, "h", "f7") == std::optional<std::string>("v"));
  }
  CHECK(internal::NewestMemTableReadsOnThisThread() == before + 2);  // the hash's record, field
}

}  // namespace
}  // namespace sluice::testing
