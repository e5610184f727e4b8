// Sluice's memtable (storage/engine/memtable.h), checked against RocksDB's own skiplist: the same
// random writes (puts, deletes, merges, keys sharing long prefixes, bytes 0x00 and 0xff) go to a
// database with each memtable, and every point read (latest and at snapshots), every iteration
// in both directions and every seek must agree, at snapshots, before and after a flush; a hot
// key's thousands of versions; writers on many threads with readers alongside; the fallback to
// RocksDB's list for a column family that is not ordered bytewise.
#include "storage/engine/memtable.h"

#include <doctest/doctest.h>
#include <rocksdb/db.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/options.h>
#include <rocksdb/utilities/debug.h>
#include <rocksdb/write_batch.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "deletions_skipped.h"
#include "storage/engine/memtable_iterator.h"
#include "storage/engine/memtable_order.h"
#include "test_util.h"

namespace sluice::testing {
namespace {

// Appends operands with ','; associative, so RocksDB may fold them in any grouping.
class AppendMerge final : public rocksdb::AssociativeMergeOperator {
 public:
  bool Merge(const rocksdb::Slice&, const rocksdb::Slice* existing, const rocksdb::Slice& value,
             std::string* out, rocksdb::Logger*) const override {
    out->clear();
    if (existing != nullptr) out->assign(existing->data(), existing->size()).append(",");
    out->append(value.data(), value.size());
    return true;
  }
  const char* Name() const override { return "test.AppendMerge"; }
};

std::unique_ptr<rocksdb::DB> OpenDb(const std::string& path, bool sluice_memtable,
                                    const rocksdb::Comparator* cmp = nullptr) {
  rocksdb::Options o;
  o.create_if_missing = true;
  o.merge_operator = std::make_shared<AppendMerge>();
  o.write_buffer_size = 64 << 20;  // everything stays in the memtable until Flush
  if (cmp != nullptr) o.comparator = cmp;
  if (sluice_memtable) {
    o.memtable_factory = internal::NewMemTableFactory(o.write_buffer_size);
  }
  rocksdb::DB* db = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(o, path, &db);
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  return std::unique_ptr<rocksdb::DB>(db);
}

// Keys that stress the comparison: a few shared prefixes longer and shorter than 8 bytes, and
// tails that differ in the first byte past 8, in the last byte, in length, or in 0x00 vs 0xff.
std::string RandomKey(std::mt19937_64& rng) {
  using namespace std::string_view_literals;
  static constexpr std::string_view kPrefixes[] = {
      ""sv, "a"sv, "user:"sv, "user:42:"sv, "\xff\xff"sv, "\x00\x01"sv, "slot-prefix-12345"sv};
  static constexpr char kAlphabet[] = {'\0', '\x01', 'a', 'b', '\x7f', '\x80', '\xff'};
  std::string k(kPrefixes[rng() % std::size(kPrefixes)]);
  const int tail = static_cast<int>(rng() % 4);
  for (int i = 0; i < tail; ++i) k.push_back(kAlphabet[rng() % sizeof kAlphabet]);
  return k;
}

std::vector<std::pair<std::string, std::string>> Scan(rocksdb::DB& db,
                                                      const rocksdb::ReadOptions& ro,
                                                      bool forward) {
  std::vector<std::pair<std::string, std::string>> out;
  std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(ro));
  if (forward) {
    for (it->SeekToFirst(); it->Valid(); it->Next())
      out.emplace_back(it->key().ToString(), it->value().ToString());
  } else {
    for (it->SeekToLast(); it->Valid(); it->Prev())
      out.emplace_back(it->key().ToString(), it->value().ToString());
  }
  REQUIRE(it->status().ok());
  return out;
}

std::string Found(rocksdb::Iterator& it) {
  return it.Valid() ? it.key().ToString() + "=" + it.value().ToString() : "(end)";
}

// Compares everything a reader can see of the two databases, at ro's snapshot.
void ExpectSameView(rocksdb::DB& ours, rocksdb::DB& theirs, const rocksdb::ReadOptions& ro,
                    const std::vector<std::string>& probes) {
  for (const std::string& k : probes) {
    std::string a, b;
    rocksdb::Status sa = ours.Get(ro, k, &a);
    rocksdb::Status sb = theirs.Get(ro, k, &b);
    CHECK(sa.code() == sb.code());
    if (sa.ok() && sb.ok()) CHECK(a == b);
  }
  CHECK(Scan(ours, ro, true) == Scan(theirs, ro, true));
  CHECK(Scan(ours, ro, false) == Scan(theirs, ro, false));
  std::unique_ptr<rocksdb::Iterator> ia(ours.NewIterator(ro));
  std::unique_ptr<rocksdb::Iterator> ib(theirs.NewIterator(ro));
  for (const std::string& k : probes) {
    ia->Seek(k);
    ib->Seek(k);
    CHECK(Found(*ia) == Found(*ib));
    ia->SeekForPrev(k);
    ib->SeekForPrev(k);
    CHECK(Found(*ia) == Found(*ib));
    if (ia->Valid() && ib->Valid()) {  // step both ways from there
      ia->Prev();
      ib->Prev();
      CHECK(Found(*ia) == Found(*ib));
    }
  }
}

// Random walks, both iterators alike: a seek, then steps mixing Next and Prev (direction
// changes reseek the children with other sequence numbers than the first seek's).
void ExpectSameWalks(rocksdb::DB& ours, rocksdb::DB& theirs, const rocksdb::ReadOptions& ra,
                     const rocksdb::ReadOptions& rb, const std::vector<std::string>& probes,
                     std::mt19937_64& rng) {
  std::unique_ptr<rocksdb::Iterator> ia(ours.NewIterator(ra));
  std::unique_ptr<rocksdb::Iterator> ib(theirs.NewIterator(rb));
  for (int walk = 0; walk < 200; ++walk) {
    const std::string& k = probes[rng() % probes.size()];
    ia->Seek(k);
    ib->Seek(k);
    CHECK(Found(*ia) == Found(*ib));
    for (int step = 0; step < 8 && ia->Valid() && ib->Valid(); ++step) {
      if (rng() % 3 == 0) {
        ia->Prev();
        ib->Prev();
      } else {
        ia->Next();
        ib->Next();
      }
      CHECK(Found(*ia) == Found(*ib));
    }
  }
}

}  // namespace

TEST_CASE("memtable: the same view as RocksDB's skiplist under random writes, snapshots, flush") {
  TempDir dir;
  const uint64_t lists_before = internal::SluiceMemTablesCreated();
  auto ours = OpenDb(dir.sub("ours"), true);
  REQUIRE(internal::SluiceMemTablesCreated() > lists_before);  // ours, not the fallback
  auto theirs = OpenDb(dir.sub("theirs"), false);
  std::mt19937_64 rng(20261126);
  std::vector<std::string> probes;
  std::vector<const rocksdb::Snapshot*> snaps_ours, snaps_theirs;
  for (int round = 0; round < 6; ++round) {
    for (int i = 0; i < 1500; ++i) {
      const std::string k = RandomKey(rng);
      probes.push_back(k);
      const std::string v = "v" + std::to_string(round) + "." + std::to_string(i);
      rocksdb::WriteBatch batch;
      switch (rng() % 5) {
        case 0:
          batch.Delete(k);
          break;
        case 1:
          batch.Merge(k, v);
          break;
        case 2:  // one batch writing a key twice: the later write wins
          batch.Put(k, v + "a");
          batch.Put(k, v);
          break;
        default:
          batch.Put(k, v);
      }
      REQUIRE(ours->Write(rocksdb::WriteOptions(), &batch).ok());
      REQUIRE(theirs->Write(rocksdb::WriteOptions(), &batch).ok());
    }
    snaps_ours.push_back(ours->GetSnapshot());
    snaps_theirs.push_back(theirs->GetSnapshot());
    ExpectSameView(*ours, *theirs, rocksdb::ReadOptions(), probes);
  }
  // Every snapshot still reads its own moment (older versions are found behind newer ones),
  // by point reads, scans both ways, seeks and steps back.
  const std::vector<std::string> some_probes(probes.begin(), probes.begin() + 600);
  for (size_t i = 0; i < snaps_ours.size(); ++i) {
    rocksdb::ReadOptions ra, rb;
    ra.snapshot = snaps_ours[i];
    rb.snapshot = snaps_theirs[i];
    for (const std::string& k : probes) {
      std::string a, b;
      CHECK(ours->Get(ra, k, &a).code() == theirs->Get(rb, k, &b).code());
      CHECK(a == b);
    }
    CHECK(Scan(*ours, ra, true) == Scan(*theirs, rb, true));
    CHECK(Scan(*ours, ra, false) == Scan(*theirs, rb, false));
    std::unique_ptr<rocksdb::Iterator> ia(ours->NewIterator(ra));
    std::unique_ptr<rocksdb::Iterator> ib(theirs->NewIterator(rb));
    for (const std::string& k : some_probes) {
      ia->SeekForPrev(k);
      ib->SeekForPrev(k);
      CHECK(Found(*ia) == Found(*ib));
      for (int step = 0; step < 3 && ia->Valid() && ib->Valid(); ++step) {
        ia->Prev();
        ib->Prev();
        CHECK(Found(*ia) == Found(*ib));
      }
      ia->Seek(k);
      ib->Seek(k);
      for (int step = 0; step < 3 && ia->Valid() && ib->Valid(); ++step) {
        ia->Next();
        ib->Next();
        CHECK(Found(*ia) == Found(*ib));
      }
    }
  }
  for (auto* s : snaps_ours) ours->ReleaseSnapshot(s);
  for (auto* s : snaps_theirs) theirs->ReleaseSnapshot(s);
  // Flushed to a table file through our iterator, then read back from the file.
  REQUIRE(ours->Flush(rocksdb::FlushOptions()).ok());
  REQUIRE(theirs->Flush(rocksdb::FlushOptions()).ok());
  ExpectSameView(*ours, *theirs, rocksdb::ReadOptions(), probes);
  CHECK(Scan(*ours, rocksdb::ReadOptions(), true).size() > 100);
}

// Insert orders that stress an ordered structure: ascending, descending, sorted clusters,
// alternating ends, random; enough keys for the key order's tail to seal into many runs and merge.
TEST_CASE("memtable: ascending, descending, clustered and alternating inserts stay in order") {
  TempDir dir;
  auto ours = OpenDb(dir.sub("ours"), true);
  auto theirs = OpenDb(dir.sub("theirs"), false);
  std::mt19937_64 rng(5);
  std::vector<std::string> keys;
  auto key = [](int n) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "k%08d", n);
    return std::string(buf);
  };
  for (int i = 0; i < 3000; ++i) keys.push_back(key(i * 7));      // ascending
  for (int i = 3000; i > 0; --i) keys.push_back(key(i * 7 + 3));  // descending
  for (int c = 0; c < 200; ++c) {                                 // sorted clusters
    const int base = static_cast<int>(rng() % 20000);
    for (int i = 0; i < 20; ++i) keys.push_back(key(base + i * 3 + 1));
  }
  for (int i = 0; i < 2000; ++i) keys.push_back(key(i % 2 ? i : 40000 - i));  // alternating
  for (int i = 0; i < 2000; ++i) keys.push_back(key(static_cast<int>(rng() % 50000)));  // random
  for (const std::string& k : keys) {
    REQUIRE(ours->Put(rocksdb::WriteOptions(), k, k).ok());
    REQUIRE(theirs->Put(rocksdb::WriteOptions(), k, k).ok());
  }
  const auto forward = Scan(*ours, rocksdb::ReadOptions(), true);
  CHECK(forward == Scan(*theirs, rocksdb::ReadOptions(), true));
  CHECK(Scan(*ours, rocksdb::ReadOptions(), false) == Scan(*theirs, rocksdb::ReadOptions(), false));
  CHECK(forward.size() > 10000);
  for (const std::string& k : keys) {
    std::string v;
    REQUIRE(ours->Get(rocksdb::ReadOptions(), k, &v).ok());
    CHECK(v == k);
  }
}

// Enough new keys for the key order's merge thread: scans and snapshots taken while it merges,
// a flush (an iterator over the whole memtable) and the memtable's end right after the last
// write, while a merge of its runs may still be running (the memtable stops it first).
TEST_CASE("memtable: the merge thread's large merges under scans, snapshots and a flush") {
  TempDir dir;
  auto ours = OpenDb(dir.sub("ours"), true);
  auto theirs = OpenDb(dir.sub("theirs"), false);
  const uint64_t merges_before = internal::memtable_nodes::KeyOrder::LargeMergesInProcess();
  std::mt19937_64 rng(11);
  std::vector<std::string> probes;
  std::vector<const rocksdb::Snapshot*> snaps_ours, snaps_theirs;
  for (int batch = 0; batch < 300; ++batch) {
    rocksdb::WriteBatch b;
    for (int i = 0; i < 1000; ++i) {
      std::string k = RandomKey(rng) + std::to_string(rng() % 100000000);
      if (i == 0) probes.push_back(k);
      b.Put(k, std::to_string(batch));
    }
    REQUIRE(ours->Write(rocksdb::WriteOptions(), &b).ok());
    REQUIRE(theirs->Write(rocksdb::WriteOptions(), &b).ok());
    if (batch % 100 == 50) {
      snaps_ours.push_back(ours->GetSnapshot());
      snaps_theirs.push_back(theirs->GetSnapshot());
      ExpectSameView(*ours, *theirs, rocksdb::ReadOptions(), probes);
    }
  }
  for (size_t i = 0; i < snaps_ours.size(); ++i) {
    rocksdb::ReadOptions ro_ours, ro_theirs;
    ro_ours.snapshot = snaps_ours[i];
    ro_theirs.snapshot = snaps_theirs[i];
    CHECK(Scan(*ours, ro_ours, true) == Scan(*theirs, ro_theirs, true));
    ours->ReleaseSnapshot(snaps_ours[i]);
    theirs->ReleaseSnapshot(snaps_theirs[i]);
  }
  // 300k keys make runs of 2^16 and more; the merge thread has had time for one at least.
  for (int i = 0; i < 1000; ++i) {
    if (internal::memtable_nodes::KeyOrder::LargeMergesInProcess() > merges_before) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(internal::memtable_nodes::KeyOrder::LargeMergesInProcess() > merges_before);
  const auto before_flush = Scan(*ours, rocksdb::ReadOptions(), true);
  CHECK(before_flush == Scan(*theirs, rocksdb::ReadOptions(), true));
  CHECK(before_flush.size() > 250000);
  REQUIRE(ours->Flush(rocksdb::FlushOptions()).ok());  // the memtable ends; its merges stop
  CHECK(Scan(*ours, rocksdb::ReadOptions(), true) == before_flush);
}

TEST_CASE("memtable: a key's versions across a batch's sequence numbers, read at each one") {
  TempDir dir;
  const uint64_t lists_before = internal::SluiceMemTablesCreated();
  auto db = OpenDb(dir.sub("db"), true);
  REQUIRE(internal::SluiceMemTablesCreated() > lists_before);
  std::vector<const rocksdb::Snapshot*> snaps;
  for (int i = 0; i < 50; ++i) {
    REQUIRE(db->Put(rocksdb::WriteOptions(), "k", std::to_string(i)).ok());
    snaps.push_back(db->GetSnapshot());
  }
  for (int i = 0; i < 50; ++i) {
    rocksdb::ReadOptions ro;
    ro.snapshot = snaps[i];
    std::string v;
    REQUIRE(db->Get(ro, "k", &v).ok());
    CHECK(v == std::to_string(i));
    db->ReleaseSnapshot(snaps[i]);
  }
  std::string v;
  REQUIRE(db->Merge(rocksdb::WriteOptions(), "k", "m1").ok());
  REQUIRE(db->Merge(rocksdb::WriteOptions(), "k", "m2").ok());
  REQUIRE(db->Get(rocksdb::ReadOptions(), "k", &v).ok());
  CHECK(v == "49,m1,m2");
  REQUIRE(db->Delete(rocksdb::WriteOptions(), "k").ok());
  CHECK(db->Get(rocksdb::ReadOptions(), "k", &v).IsNotFound());
}

// Sorted-set score elements are erased with SingleDelete and written only while absent
// (Txn::EraseOnceRaw); a forward walk of our memtable hides a key whose versions there are a
// Put and, newest, a SingleDelete its reader sees (memtable_iterator.h). Random writes keeping
// that contract (Put when absent, SingleDelete when present, now and then a SingleDelete of an
// absent key or a Put right after a SingleDelete in one batch), with snapshots between them and
// a flush in the middle (so some SingleDeletes' Puts are in a table file): every read, at every
// snapshot, in both directions and with direction changes, must match RocksDB's skiplist.
TEST_CASE(
    "memtable: Put/SingleDelete pairs hidden from forward walks, the same view as RocksDB's") {
  TempDir dir;
  auto ours = OpenDb(dir.sub("ours"), true);
  auto theirs = OpenDb(dir.sub("theirs"), false);
  std::mt19937_64 rng(20261201);
  std::map<std::string, bool> live;
  std::vector<std::string> probes;
  std::vector<const rocksdb::Snapshot*> snaps_ours, snaps_theirs;
  for (int round = 0; round < 6; ++round) {
    for (int i = 0; i < 1500; ++i) {
      const std::string k = RandomKey(rng) + std::to_string(rng() % 8);
      probes.push_back(k);
      const std::string v = "v" + std::to_string(round) + "." + std::to_string(i);
      rocksdb::WriteBatch batch;
      if (live[k]) {
        batch.SingleDelete(k);
        live[k] = rng() % 4 == 0;
        if (live[k]) batch.Put(k, v);  // deleted, then written again
      } else if (rng() % 8 == 0) {
        batch.SingleDelete(k);  // of an absent key
      } else {
        batch.Put(k, v);
        live[k] = true;
      }
      REQUIRE(ours->Write(rocksdb::WriteOptions(), &batch).ok());
      REQUIRE(theirs->Write(rocksdb::WriteOptions(), &batch).ok());
    }
    if (round == 2) {
      REQUIRE(ours->Flush(rocksdb::FlushOptions()).ok());
      REQUIRE(theirs->Flush(rocksdb::FlushOptions()).ok());
    }
    snaps_ours.push_back(ours->GetSnapshot());
    snaps_theirs.push_back(theirs->GetSnapshot());
    ExpectSameView(*ours, *theirs, rocksdb::ReadOptions(), probes);
    ExpectSameWalks(*ours, *theirs, rocksdb::ReadOptions(), rocksdb::ReadOptions(), probes, rng);
  }
  for (size_t i = 0; i < snaps_ours.size(); ++i) {
    rocksdb::ReadOptions ra, rb;
    ra.snapshot = snaps_ours[i];
    rb.snapshot = snaps_theirs[i];
    CHECK(Scan(*ours, ra, true) == Scan(*theirs, rb, true));
    CHECK(Scan(*ours, ra, false) == Scan(*theirs, rb, false));
    ExpectSameWalks(*ours, *theirs, ra, rb, probes, rng);
  }
  for (auto* s : snaps_ours) ours->ReleaseSnapshot(s);
  for (auto* s : snaps_theirs) theirs->ReleaseSnapshot(s);
  REQUIRE(ours->Flush(rocksdb::FlushOptions()).ok());
  REQUIRE(theirs->Flush(rocksdb::FlushOptions()).ok());
  ExpectSameView(*ours, *theirs, rocksdb::ReadOptions(), probes);
}

// What the hiding buys, and for whom: 1,000 keys written, 990 of them SingleDeleted. A forward
// walk at the latest sequence steps over none of the pairs (RocksDB's skiplist hands its iterator
// all 990); a walk at a snapshot taken before the deletions still sees every key; a backward
// walk (which hides nothing) and a walk after a flush (which drops the pairs) see the 10 left.
TEST_CASE(
    "memtable: a forward walk steps over no Put/SingleDelete pair, a snapshot still sees it") {
  TempDir dir;
  auto ours = OpenDb(dir.sub("ours"), true);
  auto theirs = OpenDb(dir.sub("theirs"), false);
  auto key = [](int i) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "k%04d", i);
    return std::string(buf);
  };
  for (auto* db : {ours.get(), theirs.get()}) {
    for (int i = 0; i < 1000; ++i) REQUIRE(db->Put(rocksdb::WriteOptions(), key(i), "v").ok());
  }
  const rocksdb::Snapshot* before_ours = ours->GetSnapshot();
  for (auto* db : {ours.get(), theirs.get()}) {
    for (int i = 0; i < 1000; ++i) {
      if (i % 100 != 0) REQUIRE(db->SingleDelete(rocksdb::WriteOptions(), key(i)).ok());
    }
  }
  auto forward_count = [](rocksdb::DB& db, const rocksdb::ReadOptions& ro) {
    size_t n = 0;
    std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(ro));
    for (it->Seek("k"); it->Valid(); it->Next()) ++n;
    return n;
  };
  size_t n = 0;
  CHECK(DeletionsSkippedBy([&] { n = forward_count(*ours, rocksdb::ReadOptions()); }) == 0);
  CHECK(n == 10);
  CHECK(DeletionsSkippedBy([&] { n = forward_count(*theirs, rocksdb::ReadOptions()); }) == 990);
  CHECK(n == 10);
  rocksdb::ReadOptions at_before;
  at_before.snapshot = before_ours;
  CHECK(forward_count(*ours, at_before) == 1000);
  CHECK(Scan(*ours, rocksdb::ReadOptions(), false).size() == 10);
  ours->ReleaseSnapshot(before_ours);
  REQUIRE(ours->Flush(rocksdb::FlushOptions()).ok());
  CHECK(forward_count(*ours, rocksdb::ReadOptions()) == 10);
  CHECK(Scan(*ours, rocksdb::ReadOptions(), false).size() == 10);
}

// Writers on eight threads, with readers alongside. Each batch writes 16 keys of its own (next
// to the other writers' keys in key order), 16 keys that every writer creates at about the same
// time (writers move in step, since each write waits for its group), and 16 versions of two hot
// keys that the other writers rewrite at the same moment. With allow_concurrent_memtable_write
// the members of each write group insert their own batches at once (new keys and new versions
// of one key racing for the same links); without it the group's leader inserts them one at a
// time. Either way every write must be found, every version of every key kept once and in order.
void WritersAndReaders(bool concurrent) {
  TempDir dir;
  rocksdb::Options o;
  o.create_if_missing = true;
  o.write_buffer_size = 64 << 20;
  o.memtable_factory = internal::NewMemTableFactory(o.write_buffer_size);
  o.allow_concurrent_memtable_write = concurrent;
  rocksdb::DB* raw = nullptr;
  REQUIRE(rocksdb::DB::Open(o, dir.sub("db"), &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  CHECK(internal::SluiceMemTablesCreated() > 0);

  constexpr int kWriters = 8;
  constexpr int kPerWriter = 4000;
  constexpr int kPerBatch = 16;  // long batches: writers queue, so groups form
  constexpr int kBatches = kPerWriter / kPerBatch;
  constexpr int kHotKeys = 2;
  std::atomic<int> written[kWriters] = {};
  std::atomic<bool> done{false};
  std::atomic<int> reader_errors{0};
  std::atomic<uint64_t> concurrent_inserts{0};
  std::atomic<int> ready{0};
  // Writers' own keys sit next to each other's in key order: new nodes race for the same links.
  auto key = [](int w, int i) { return "k:" + std::to_string(i) + ":" + std::to_string(w); };
  auto shared = [](int j) { return "s:" + std::to_string(j); };
  auto hot = [](int j) { return "hot:" + std::to_string(j % kHotKeys); };
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      // Built first, so that a writer spends its time in Write, queueing behind the others.
      std::vector<rocksdb::WriteBatch> batches(kBatches);
      for (int j = 0; j < kBatches; ++j) {
        const int first = j * kPerBatch;
        // Each own key followed by a key every member of the group creates too and a version
        // of a hot key the others also write: the members race for the same links throughout.
        for (int i = first; i < first + kPerBatch; ++i) {
          batches[j].Put(key(w, i), std::to_string(i));
          batches[j].Put(shared(i), key(w, i));
          batches[j].Put(hot(i), key(w, i));
        }
      }
      ready.fetch_add(1);
      while (ready.load() < kWriters) std::this_thread::yield();
      rocksdb::WriteOptions wo;
      wo.sync = true;  // each group's fsync lets the other writers queue behind it
      for (int j = 0; j < kBatches; ++j) {
        if (!db->Write(wo, &batches[j]).ok()) reader_errors++;
        written[w].store((j + 1) * kPerBatch, std::memory_order_release);
      }
      concurrent_inserts += internal::ConcurrentMemTableInsertsOnThisThread();
    });
  }
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      std::mt19937 rng(r);
      while (!done.load(std::memory_order_acquire)) {
        const int w = static_cast<int>(rng() % kWriters);
        const int n = written[w].load(std::memory_order_acquire);
        if (n > 0) {
          const int i = static_cast<int>(rng() % n);
          std::string v;
          if (!db->Get(rocksdb::ReadOptions(), key(w, i), &v).ok() || v != std::to_string(i)) {
            reader_errors++;
          }
        }
        std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
        std::string last;
        int steps = 0;
        for (it->Seek(key(w, static_cast<int>(rng() % kPerWriter))); it->Valid() && steps < 200;
             it->Next(), ++steps) {
          if (!last.empty() && it->key().ToString() <= last) reader_errors++;
          last = it->key().ToString();
        }
        last.clear();
        for (it->SeekToLast(); it->Valid() && steps < 400; it->Prev(), ++steps) {
          if (!last.empty() && it->key().ToString() >= last) reader_errors++;
          last = it->key().ToString();
        }
      }
    });
  }
  for (int w = 0; w < kWriters; ++w) threads[w].join();
  done.store(true, std::memory_order_release);
  for (size_t t = kWriters; t < threads.size(); ++t) threads[t].join();

  CHECK(reader_errors.load() == 0);
  if (concurrent) {
    CHECK(concurrent_inserts.load() > 0);  // groups did insert in parallel
  } else {
    CHECK(concurrent_inserts.load() == 0);
  }
  size_t count = 0;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++count;
  CHECK(count == size_t{kWriters} * kPerWriter + kPerWriter + kHotKeys);
  for (int w = 0; w < kWriters; ++w) {
    for (int i = 0; i < kPerWriter; i += 97) {
      std::string v;
      REQUIRE(db->Get(rocksdb::ReadOptions(), key(w, i), &v).ok());
      CHECK(v == std::to_string(i));
    }
  }
  // Every version of every key, newest first within a key, each sequence number once: each hot
  // key holds every version the writers wrote to it, each shared key one per writer.
  std::vector<rocksdb::KeyVersion> versions;
  REQUIRE(
      rocksdb::GetAllKeyVersions(db.get(), rocksdb::Slice(), rocksdb::Slice(), 1u << 22, &versions)
          .ok());
  CHECK(versions.size() == size_t{kWriters} * 3 * kPerWriter);
  std::map<std::string, size_t> per_key;
  std::set<rocksdb::SequenceNumber> sequences;
  for (size_t i = 0; i < versions.size(); ++i) {
    ++per_key[versions[i].user_key];
    sequences.insert(versions[i].sequence);
    if (i > 0 && versions[i].user_key == versions[i - 1].user_key) {
      CHECK(versions[i].sequence < versions[i - 1].sequence);
    } else if (i > 0) {
      CHECK(versions[i - 1].user_key < versions[i].user_key);
    }
  }
  CHECK(sequences.size() == versions.size());
  for (int h = 0; h < kHotKeys; ++h) {
    CHECK(per_key[hot(h)] == size_t{kWriters} * kPerWriter / kHotKeys);
  }
  for (int i = 0; i < kPerWriter; ++i) CHECK(per_key[shared(i)] == size_t{kWriters});
}

TEST_CASE("memtable: writers on many threads, readers alongside; every write is found, in order") {
  SUBCASE("members of a write group insert at once") {
    // Two members seldom run at the very same instant on a machine of two cores, so a lost
    // link shows in about half the runs there: three runs catch it most of the time.
    for (int run = 0; run < 3; ++run) WritersAndReaders(true);
  }
  SUBCASE("the group's leader inserts every batch") { WritersAndReaders(false); }
}

// The prefetcher warms the newest memtable while flushes replace it and destroy old ones (small
// write buffers: a switch every few hundred writes); lookups find every write, and once the
// database is closed nothing is registered.
TEST_CASE("memtable: the key prefetcher follows the newest memtable across flushes") {
  TempDir dir;
  internal::NewestMemTable prefetcher;  // outlives the database
  rocksdb::Options o;
  o.create_if_missing = true;
  o.write_buffer_size = 64 << 10;
  o.memtable_factory = internal::NewMemTableFactory(o.write_buffer_size, &prefetcher);
  rocksdb::DB* raw = nullptr;
  REQUIRE(rocksdb::DB::Open(o, dir.sub("db"), &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  CHECK(prefetcher.active());
  constexpr int kKeys = 20000;
  // Short keys, and keys whose first 8 bytes tie (the insert-path walk then reads the keys
  // themselves); most keys the warmer asks for are not inserted yet (it walks their paths).
  auto key = [](int i) { return (i % 2 == 0 ? "k" : "same-prefix:") + std::to_string(i); };
  std::atomic<bool> done{false};
  std::thread warmer([&] {
    std::mt19937 rng(7);
    std::string keys[internal::NewestMemTable::kMaxKeys + 4];
    std::string_view views[std::size(keys)];
    while (!done.load(std::memory_order_acquire)) {
      for (size_t i = 0; i < std::size(keys); ++i) {
        keys[i] = key(static_cast<int>(rng() % kKeys));
        views[i] = keys[i];
      }
      prefetcher.Prefetch(views, std::size(views));  // more than kMaxKeys: the rest ignored
    }
  });
  for (int i = 0; i < kKeys; ++i) {
    REQUIRE(db->Put(rocksdb::WriteOptions(), key(i), std::string(40, 'v')).ok());
  }
  done.store(true, std::memory_order_release);
  warmer.join();
  for (int i = 0; i < kKeys; i += 7) {
    std::string v;
    REQUIRE(db->Get(rocksdb::ReadOptions(), key(i), &v).ok());
    CHECK(v == std::string(40, 'v'));
  }
  db.reset();
  CHECK_FALSE(prefetcher.active());
  const std::string_view k = "k1";
  prefetcher.Prefetch(&k, 1);  // nothing to warm: does nothing
}

TEST_CASE("memtable: a hot key's thousands of versions, read at snapshots and walked backwards") {
  TempDir dir;
  auto ours = OpenDb(dir.sub("ours"), true);
  auto theirs = OpenDb(dir.sub("theirs"), false);
  std::vector<const rocksdb::Snapshot*> sa, sb;
  for (int i = 0; i < 3000; ++i) {
    for (rocksdb::DB* db : {ours.get(), theirs.get()}) {
      REQUIRE(db->Put(rocksdb::WriteOptions(), "hot", std::to_string(i)).ok());
      REQUIRE(db->Put(rocksdb::WriteOptions(), "a" + std::to_string(i % 7), "x").ok());
      REQUIRE(db->Put(rocksdb::WriteOptions(), "z" + std::to_string(i % 5), "y").ok());
    }
    if (i % 500 == 0) {
      sa.push_back(ours->GetSnapshot());
      sb.push_back(theirs->GetSnapshot());
    }
  }
  for (size_t i = 0; i < sa.size(); ++i) {
    rocksdb::ReadOptions ra, rb;
    ra.snapshot = sa[i];
    rb.snapshot = sb[i];
    std::string a, b;
    REQUIRE(ours->Get(ra, "hot", &a).ok());
    REQUIRE(theirs->Get(rb, "hot", &b).ok());
    CHECK(a == b);
    CHECK(a == std::to_string(i * 500));
    CHECK(Scan(*ours, ra, false) == Scan(*theirs, rb, false));
    ours->ReleaseSnapshot(sa[i]);
    theirs->ReleaseSnapshot(sb[i]);
  }
  CHECK(Scan(*ours, rocksdb::ReadOptions(), false) == Scan(*theirs, rocksdb::ReadOptions(), false));
}

TEST_CASE("memtable: a column family ordered otherwise gets RocksDB's own list") {
  TempDir dir;
  const uint64_t lists_before = internal::SluiceMemTablesCreated();
  auto db = OpenDb(dir.sub("db"), true, rocksdb::ReverseBytewiseComparator());
  CHECK(internal::SluiceMemTablesCreated() == lists_before);  // the fallback
  for (const char* k : {"b", "a", "c", "ab"}) REQUIRE(db->Put(rocksdb::WriteOptions(), k, k).ok());
  std::vector<std::string> keys;
  for (const auto& [k, v] : Scan(*db, rocksdb::ReadOptions(), true)) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"c", "b", "ab", "a"});
  std::string v;
  REQUIRE(db->Get(rocksdb::ReadOptions(), "ab", &v).ok());
  CHECK(v == "ab");
}

TEST_CASE("memtable: a store opens a data dir written with the other memtable") {
  TempDir dir;
  for (MemTableKind kind :
       {MemTableKind::kRocksDb, MemTableKind::kSluice, MemTableKind::kRocksDb}) {
    Options o;
    o.path = dir.path();
    o.active_expiry = false;
    o.memtable = kind;
    auto r = Store::Open(o);
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    auto store = std::move(r).value();
    auto n = store->IncrBy(0, "counter", 1);
    REQUIRE(n.ok());
    auto got = store->Get(0, "counter");
    REQUIRE(got.ok());
  }
  Options o;
  o.path = dir.path();
  o.active_expiry = false;
  auto store = std::move(Store::Open(o)).value();
  auto got = store->Get(0, "counter");
  REQUIRE(got.ok());
  REQUIRE(got->has_value());
  CHECK(**got == "3");
}

// A thread that destroys more iterators than it makes (the everysec thread dropping the pool's
// idle ones) keeps a bounded list of their blocks; the rest are freed.
TEST_CASE("Memtable iterator blocks: a thread keeps at most kMaxListed of them") {
  using internal::memtable_nodes::IteratorBlocks;
  IteratorBlocks maker, destroyer;
  std::vector<void*> made;
  for (size_t i = 0; i < IteratorBlocks::kMaxListed + 36; ++i) made.push_back(maker.Take(64));
  for (void* block : made) destroyer.Give(block);
  CHECK(destroyer.listed() == IteratorBlocks::kMaxListed);
  CHECK(maker.listed() == 0);
  void* again = destroyer.Take(64);  // from its list
  CHECK(destroyer.listed() == IteratorBlocks::kMaxListed - 1);
  destroyer.Give(again);
  CHECK(destroyer.listed() == IteratorBlocks::kMaxListed);
}

}  // namespace sluice::testing
