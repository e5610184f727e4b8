// Memtable costs: a RocksDB database (no WAL) with Sluice's memtable, 1M random keys loaded, then
//   random|clustered: 1M deletions timed, either random keys or batches of 128 ascending keys
//                     close together (as the expiry cycle removes them): ns per insert;
//   append|prepend:   1M new keys timed, one collection's element keys as a stream or RPUSH
//                     writes them (a shared 24-byte prefix, then an ascending counter; prepend:
//                     descending, as LPUSH), in batches of 128: ns per insert;
//   scan:             one iterator over every key, then the memtable's flush to a table file,
//                     each timed (the memtable walked in order): ns per key.
//
//   build/tools/sluice-memtable-bench random|clustered|append|prepend|scan [DIR]
// Not a test: the number depends on the machine. docs/engine.md "The
// memtable" has the measurements.
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <string>

#include "storage/engine/memtable.h"

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "random" && mode != "clustered" && mode != "append" && mode != "prepend" &&
      mode != "scan") {
    std::fprintf(stderr, "usage: %s random|clustered|append|prepend|scan [DIR]\n", argv[0]);
    return 2;
  }
  const std::string path = argc > 2 ? argv[2] : "/tmp/sluice-memtable-bench";
  rocksdb::Options o;
  o.create_if_missing = true;
  o.write_buffer_size = size_t{512} << 20;  // everything stays in one memtable
  o.memtable_factory = sluice::internal::NewMemTableFactory(o.write_buffer_size);
  rocksdb::DestroyDB(path, o);
  rocksdb::DB* raw = nullptr;
  if (rocksdb::Status s = rocksdb::DB::Open(o, path, &raw); !s.ok()) {
    std::fprintf(stderr, "open %s: %s\n", path.c_str(), s.ToString().c_str());
    return 1;
  }
  std::unique_ptr<rocksdb::DB> db(raw);
  rocksdb::WriteOptions wo;
  wo.disableWAL = true;
  std::mt19937_64 rng(1);
  constexpr uint64_t kSpace = 1000000000000ULL;
  char key[32];
  auto format = [&](uint64_t k) {
    std::snprintf(key, sizeof key, "key%012llu", static_cast<unsigned long long>(k % kSpace));
    return rocksdb::Slice(key);
  };
  char element[40];
  auto element_key = [&](uint64_t k) {  // one collection's element k
    std::snprintf(element, sizeof element, "\x01\x2a\x2a:stream:events:v1:e%012llu",
                  static_cast<unsigned long long>(k));
    return rocksdb::Slice(element);
  };
  constexpr int kKeys = 1000000;
  for (int i = 0; i < kKeys; ++i) db->Put(wo, format(rng()), "v");
  const auto since = [](std::chrono::steady_clock::time_point start) {
    return double(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count());
  };
  if (mode == "scan") {
    auto start = std::chrono::steady_clock::now();
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
    size_t keys = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) keys += it->key().size() > 0;
    const double scan_ns = since(start) / double(keys);
    it.reset();
    start = std::chrono::steady_clock::now();
    db->Flush(rocksdb::FlushOptions());
    std::printf("scan: %.0f ns per key (%zu keys); flush: %.0f ns per key\n", scan_ns, keys,
                since(start) / double(keys));
    db.reset();
    rocksdb::DestroyDB(path, o);
    return 0;
  }
  constexpr int kBatch = 128;
  const auto start = std::chrono::steady_clock::now();
  for (int b = 0; b < kKeys / kBatch; ++b) {
    const uint64_t base = rng();
    rocksdb::WriteBatch batch;
    for (int i = 0; i < kBatch; ++i) {
      const uint64_t n = uint64_t(b) * kBatch + uint64_t(i);
      if (mode == "append") {
        batch.Put(element_key(n), "v");
      } else if (mode == "prepend") {
        batch.Put(element_key(kKeys - n), "v");
      } else {
        batch.Delete(format(mode == "clustered" ? base + uint64_t(i) * 1000 : rng()));
      }
    }
    db->Write(wo, &batch);
  }
  std::printf("%s: %.0f ns per insert\n", mode.c_str(), since(start) / (kKeys / kBatch * kBatch));
  db.reset();
  rocksdb::DestroyDB(path, o);
  return 0;
}
