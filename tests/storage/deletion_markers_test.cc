// The collector that marks table files of mostly deletion markers for compaction
// (storage/engine/deletion_markers.h): SingleDeletes count as deletions, which RocksDB's own
// collector (7.8) does not count.
#include "storage/engine/deletion_markers.h"

#include <doctest/doctest.h>
#include <rocksdb/utilities/table_properties_collectors.h>

#include <memory>
#include <string>

namespace sluice::testing {
namespace {

// Whether a file of `n` entries, every `every`-th a marker of `type` and the rest Puts, is
// marked for compaction by a collector from `factory` (window 16384, trigger 8192, ratio 0.5).
bool Marked(rocksdb::TablePropertiesCollectorFactory& factory, int n, int every,
            rocksdb::EntryType type) {
  std::unique_ptr<rocksdb::TablePropertiesCollector> c(
      factory.CreateTablePropertiesCollector(rocksdb::TablePropertiesCollectorFactory::Context{}));
  for (int i = 0; i < n; ++i) {
    const std::string key = "k" + std::to_string(i);
    const bool marker = i % every == 0;
    REQUIRE(c->AddUserKey(key, marker ? "" : "v", marker ? type : rocksdb::kEntryPut, i, 0).ok());
  }
  rocksdb::UserCollectedProperties props;
  REQUIRE(c->Finish(&props).ok());
  return c->NeedCompact();
}

}  // namespace

TEST_CASE("deletion markers: SingleDeletes mark a file for compaction as Deletes do") {
  auto ours = internal::NewDeletionMarkerCollectorFactory(16384, 8192, 0.5);
  auto stock = rocksdb::NewCompactOnDeletionCollectorFactory(16384, 8192, 0.5);
  CHECK(std::string(ours->Name()) == "SluiceDeletionMarkers");
  // Every entry a marker: ours marks the file for either kind; RocksDB's misses SingleDeletes.
  CHECK(Marked(*ours, 20000, 1, rocksdb::kEntrySingleDelete));
  CHECK(Marked(*ours, 20000, 1, rocksdb::kEntryDelete));
  CHECK_FALSE(Marked(*stock, 20000, 1, rocksdb::kEntrySingleDelete));
  CHECK(Marked(*stock, 20000, 1, rocksdb::kEntryDelete));
  // The trigger and ratio are RocksDB's: one marker in two marks a file, one in three does not.
  CHECK(Marked(*ours, 20000, 2, rocksdb::kEntrySingleDelete));
  CHECK_FALSE(Marked(*ours, 20000, 3, rocksdb::kEntrySingleDelete));
  CHECK_FALSE(Marked(*ours, 20000, 20001, rocksdb::kEntrySingleDelete));  // one marker
}

}  // namespace sluice::testing
