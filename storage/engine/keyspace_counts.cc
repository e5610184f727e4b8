// The keyspace count records (keyspace_counts.h): codec, merge operator, and loading them at
// open (or counting the keys once, for a data dir that has no records yet).
#include "keyspace_counts.h"

#include <chrono>
#include <cstring>

#include "encoding.h"
#include "engine_host.h"

namespace sluice {
namespace internal {
namespace {

constexpr const char* kCountKeys[kNumDatabases] = {
    "count:00", "count:01", "count:02", "count:03", "count:04", "count:05", "count:06", "count:07",
    "count:08", "count:09", "count:10", "count:11", "count:12", "count:13", "count:14", "count:15"};

int64_t Le64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return static_cast<int64_t>(v);
}

void PutLe64(int64_t v, char* p) {
  const auto u = static_cast<uint64_t>(v);
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>(u >> (8 * i));
}

// Sums records; a malformed operand fails the merge (RocksDB reports corruption) rather than
// producing a wrong count.
class CountMerge final : public rocksdb::AssociativeMergeOperator {
 public:
  bool Merge(const rocksdb::Slice& /*key*/, const rocksdb::Slice* existing,
             const rocksdb::Slice& value, std::string* new_value,
             rocksdb::Logger* /*logger*/) const override {
    auto add = DecodeCounts(value.ToStringView());
    if (!add) return false;
    KeyCounts sum = *add;
    if (existing != nullptr) {
      auto base = DecodeCounts(existing->ToStringView());
      if (!base) return false;
      sum += *base;
    }
    char buf[16];
    EncodeCounts(sum, buf);
    new_value->assign(buf, sizeof(buf));
    return true;
  }
  const char* Name() const override { return "sluice.CountMerge"; }
};

}  // namespace

std::string_view CountRecordKey(int db) { return kCountKeys[db]; }

void EncodeCounts(KeyCounts c, char (&buf)[16]) {
  PutLe64(c.keys, buf);
  PutLe64(c.expires, buf + 8);
}

std::optional<KeyCounts> DecodeCounts(std::string_view raw) {
  if (raw.size() != 16) return std::nullopt;
  return KeyCounts{Le64(raw.data()), Le64(raw.data() + 8)};
}

std::shared_ptr<rocksdb::MergeOperator> NewCountMergeOperator() {
  return std::make_shared<CountMerge>();
}

// Runs in Open before any unit can write. Without the marker, one walk of the default column
// family counts every stored key (expired ones included: they are still stored) and the records
// and the marker are written together, synced; a crash during the walk just walks again.
Status LoadKeyspaceCounts(EngineHost& engine, KeyspaceCounts* counts_out) {
  rocksdb::DB* const rdb = engine.db();
  rocksdb::ColumnFamilyHandle* const meta_cf = engine.meta_cf();
  const Options& options = engine.options();
  std::string value;
  auto s = rdb->Get(rocksdb::ReadOptions(), meta_cf, kCountsMarkerKey, &value);
  if (s.ok()) {
    for (int db = 0; db < kNumDatabases; ++db) {
      s = rdb->Get(rocksdb::ReadOptions(), meta_cf, CountRecordKey(db), &value);
      if (s.IsNotFound()) {
        counts_out->Set(db, KeyCounts{});
        continue;
      }
      if (!s.ok()) return FromRocks(s);
      auto c = DecodeCounts(value);
      if (!c) return Status::Corruption("invalid keyspace count record");
      counts_out->Set(db, *c);
    }
    return Status::Ok();
  }
  if (!s.IsNotFound()) return FromRocks(s);

  const auto started = std::chrono::steady_clock::now();
  auto last_report = started;
  KeyCounts counts[kNumDatabases];
  int64_t walked = 0;
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(rdb->NewIterator(ro));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const auto key = it->key().ToStringView();
    const int db = static_cast<unsigned char>(key[0]);
    if (db >= kNumDatabases) continue;
    auto expiry = DecodeExpiry(it->value().ToStringView());
    counts[db] += KeyCounts{1, expiry && *expiry != kNoExpiry ? 1 : 0};
    if ((++walked & 0xffff) == 0 && options.on_progress) {
      const auto now = std::chrono::steady_clock::now();
      if (now - last_report >= std::chrono::seconds(1)) {
        last_report = now;
        options.on_progress("counting keys (once, for DBSIZE): " + std::to_string(walked) +
                            " so far");
      }
    }
  }
  if (!it->status().ok()) return FromRocks(it->status());
  rocksdb::WriteBatch batch;
  for (int db = 0; db < kNumDatabases; ++db) {
    char buf[16];
    EncodeCounts(counts[db], buf);
    batch.Put(meta_cf, CountRecordKey(db), rocksdb::Slice(buf, sizeof(buf)));
    counts_out->Set(db, counts[db]);
  }
  batch.Put(meta_cf, kCountsMarkerKey, "1");
  s = rdb->Write(rocksdb::WriteOptions(), &batch);
  if (s.ok()) s = rdb->FlushWAL(/*sync=*/true);
  if (!s.ok()) return FromRocks(s);
  if (options.on_progress && walked > 0) {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - started)
                        .count();
    options.on_progress("counted " + std::to_string(walked) + " keys in " + std::to_string(ms) +
                        " ms (once: the counts are kept from now on)");
  }
  return Status::Ok();
}

}  // namespace internal
}  // namespace sluice
