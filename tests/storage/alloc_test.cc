// The engine's own heap allocations on the hot path are zero: in steady state a Store call
// (GetInto, Set, IncrBy, GcraTake) allocates no more than the bare RocksDB calls it makes
// (Get into a reused PinnableSlice, Write of a reused WriteBatch, FlushWAL after each write),
// measured side by side on the same RocksDB options. What RocksDB itself allocates depends on
// how librocksdb was built (Debian's, built without NDEBUG, allocates in its kill points on every
// WAL append); tests/server/test_allocations.cc reports those numbers per command.
//
// This file replaces the global operator new for the whole test_storage binary with a version
// that counts the calls of the current thread while counting is on (malloc underneath).
#include <doctest/doctest.h>
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "sluice/limiter.h"
#include "sluice/transaction.h"
#include "storage/engine/encoding.h"
#include "storage/engine/store_impl.h"
#include "tests/common/counting_new.h"
#include "tests/storage/test_util.h"

namespace sluice::testing {
namespace {

constexpr int kKeys = 64;
constexpr int kBatch = 16;  // calls between two clock steps
constexpr int kWarmup = 2000;
constexpr int kMeasured = 10000;

std::vector<std::string> Keys(const char* kind) {
  std::vector<std::string> keys;
  for (int i = 0; i < kKeys; ++i) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%s:user:%08d", kind, i);  // ~20 bytes: past the SSO buffer
    keys.emplace_back(buf);
  }
  return keys;
}

// Runs `one(i)` for i in [0, n), calling `end_batch()` after every kBatch; returns the
// allocations of the measured run (after a warm-up run of kWarmup).
template <typename One, typename EndBatch>
long Measure(One&& one, EndBatch&& end_batch) {
  auto run = [&](int n) {
    for (int i = 0; i < n; i += kBatch) {
      for (int j = i; j < i + kBatch && j < n; ++j) one(j);
      end_batch();
    }
  };
  run(kWarmup);
  AllocationCounter counter;
  run(kMeasured);
  return counter.Stop();
}

// The bare RocksDB calls the Store makes, with reused buffers: nothing of Sluice in between.
struct RawRocks {
  TempDir dir;
  rocksdb::DB* db = nullptr;
  rocksdb::WriteBatch batch;
  rocksdb::PinnableSlice read;
  std::string key, value;

  RawRocks() {
    Options o;
    o.path = dir.path();
    REQUIRE(rocksdb::DB::Open(internal::MakeRocksOptions(o, ManualClock()), o.path, &db).ok());
  }
  ~RawRocks() { delete db; }

  bool Get(const std::string& user_key) {
    internal::EncodeKeyTo(0, user_key, &key);
    read.Reset();
    return db->Get(rocksdb::ReadOptions(), db->DefaultColumnFamily(), key, &read).ok();
  }
  void Put(const std::string& user_key, std::string_view payload, int64_t expire_at_ms) {
    internal::EncodeKeyTo(0, user_key, &key);
    char header[internal::kMaxValueHeader];
    size_t n = internal::EncodeValueHeader(ValueKind::kString, expire_at_ms, header);
    value.assign(header, n);
    value.append(payload);
    batch.Clear();
    batch.Put(key, value);
    REQUIRE(db->Write(rocksdb::WriteOptions(), &batch).ok());
    REQUIRE(db->FlushWAL(false).ok());  // an autocommit write hands its record to the OS
  }
};

TEST_CASE("Store calls allocate no more than the RocksDB calls they make") {
  const std::string value(100, 'v');
  const std::string tat = "1767225600000000000";  // a GCRA state: 19 digits
  const auto str = Keys("str"), ctr = Keys("ctr"), gcra = Keys("gcra");
  auto key = [](const std::vector<std::string>& keys, int i) -> const std::string& {
    return keys[static_cast<size_t>(i) % keys.size()];
  };
  // The Store runs with its defaults for the server (kEverySec); each autocommit write flushes
  // its log record (the server's deferred units flush once per batch instead).
  Fixture f;
  Store& st = *f.store;
  auto end_scope = [&] { f.AdvanceMs(1); };
  RawRocks raw;
  auto raw_flush = [] {};

  // SET k v: one write.
  const long set_store =
      Measure([&](int i) { REQUIRE(st.Set(0, key(str, i), value, SetOptions()).ok()); }, end_scope);
  const long set_raw = Measure([&](int i) { raw.Put(key(str, i), value, -1); }, raw_flush);
  // GET k: one read of a memtable-resident value into a reused buffer.
  std::string got;
  const long get_store = Measure(
      [&](int i) {
        bool found = false;
        REQUIRE(st.GetInto(0, key(str, i), &got, &found).ok());
        REQUIRE(found);
      },
      end_scope);
  const long get_raw = Measure([&](int i) { REQUIRE(raw.Get(key(str, i))); }, raw_flush);
  // INCR k: a read and a write.
  const long incr_store =
      Measure([&](int i) { REQUIRE(st.IncrBy(0, key(ctr, i), 1).ok()); }, end_scope);
  const long incr_raw = Measure(
      [&](int i) {
        raw.Get(key(ctr, i));
        raw.Put(key(ctr, i), "12345", -1);
      },
      raw_flush);
  // GCRA.TAKE: a read and a write of a 19-digit state with an expiry.
  limiter::GcraParams params;
  REQUIRE(limiter::MakeGcraParams(1000000, limiter::kNsPerSecond, 0, &params).empty());
  const long gcra_store =
      Measure([&](int i) { REQUIRE(st.GcraTake(0, key(gcra, i), params, 1).ok()); }, end_scope);
  const long gcra_raw = Measure(
      [&](int i) {
        raw.Get(key(gcra, i));
        raw.Put(key(gcra, i), tat, kT0Ms + 1000);
      },
      raw_flush);
  MESSAGE("allocations in " << kMeasured << " calls, Store vs bare RocksDB: SET " << set_store
                            << " vs " << set_raw << ", GET " << get_store << " vs " << get_raw
                            << ", INCR " << incr_store << " vs " << incr_raw << ", GCRA "
                            << gcra_store << " vs " << gcra_raw);
  // RocksDB's own count varies a little between two runs (a WAL record crossing a 32 KiB log
  // block is appended in two pieces; an arena block now and then): far less than one per call.
  constexpr long kTolerance = kMeasured / 100;
  CHECK(set_store <= set_raw + kTolerance);
  CHECK(get_store <= get_raw + kTolerance);
  CHECK(incr_store <= incr_raw + kTolerance);
  // The Store takes through limiter::GcraTakeInto with a per-thread Outcome, so the 19-digit
  // state string reuses its buffer: no allocation beyond RocksDB's own.
  CHECK(gcra_store <= gcra_raw + kTolerance);
}

TEST_CASE("a commit group's rounds reuse their key lists, up to a round of thousands of keys") {
  // A round of many members (a pipeline of scripts on a queue notes thousands of keys) keeps
  // its key lists' strings for the next round: its members allocate nothing once warm. (The
  // group's write is not counted: Debian's RocksDB allocates per WAL record piece.)
  Fixture f;
  Store& st = *f.store;
  const auto keys = Keys("grp");
  long allocations = 0;
  auto round = [&](int members, bool count) {
    CommitGroup group(st, /*defer_durability=*/false);
    AllocationCounter counter;
    for (int i = 0; i < members; ++i) {
      const std::string& k = keys[static_cast<size_t>(i % 32)];  // under kMaxStripes
      const KeyRef ref[] = {{0, k}};
      TransactionOptions o;
      o.group = &group;
      Store::Transaction u(st, ref, o);
      REQUIRE(u.IncrBy(0, k, 1).ok());
      REQUIRE(u.Commit().ok());
    }
    if (count) allocations += counter.Stop();
    REQUIRE(group.Flush().ok());
  };
  for (int i = 0; i < 3; ++i) round(1000, false);
  for (int i = 0; i < 20; ++i) round(1000, true);
  MESSAGE("allocations by 20 rounds of 1000 members: " << allocations);
  // Given back after each round, the lists' 1000 key strings were allocated again every round.
  CHECK(allocations < 20 * 10);
}

}  // namespace
}  // namespace sluice::testing
