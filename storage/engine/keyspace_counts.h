// Maintained per-database key counts (DBSIZE, INFO keyspace's keys= and expires=): what a walk
// of the default column family would count, kept exact by every commit. Internal header.
//
// Persistence: one record per database in the `meta` column family, [keys: 8 LE][expires: 8 LE],
// changed only in the same RocksDB write as the keys it counts (a Merge of the deltas, or a Put
// of the new value when the unit emptied the database), so a crash at any moment leaves records
// that match the data. The merge operator adds operands component-wise. A data dir without the
// marker record (created before counts existed, or migrated) is counted by one walk at open.
#pragma once

#include <rocksdb/merge_operator.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "sluice/store.h"

namespace sluice::internal {

// Keys stored in a database (expired ones included until they are removed, as Redis counts
// them) and how many of those have an expiry.
struct KeyCounts {
  int64_t keys = 0;
  int64_t expires = 0;
  KeyCounts& operator+=(KeyCounts o) {
    keys += o.keys;
    expires += o.expires;
    return *this;
  }
  bool operator==(const KeyCounts&) const = default;
};

// The in-memory counts, read by DBSIZE without a lock. Thread-safe; a writer holds the stripes
// of the keys whose changes it applies (every stripe for Set).
class KeyspaceCounts {
 public:
  KeyCounts Get(int db) const {
    return {keys_[db].load(std::memory_order_relaxed),
            expires_[db].load(std::memory_order_relaxed)};
  }
  void Add(int db, KeyCounts delta) {
    keys_[db].fetch_add(delta.keys, std::memory_order_relaxed);
    expires_[db].fetch_add(delta.expires, std::memory_order_relaxed);
  }
  void Set(int db, KeyCounts value) {
    keys_[db].store(value.keys, std::memory_order_relaxed);
    expires_[db].store(value.expires, std::memory_order_relaxed);
  }

 private:
  std::atomic<int64_t> keys_[kNumDatabases] = {};
  std::atomic<int64_t> expires_[kNumDatabases] = {};
};

// The meta column family's record key of database db's counts.
std::string_view CountRecordKey(int db);
// Present once the records are complete for every database (written by the open-time walk).
inline constexpr std::string_view kCountsMarkerKey = "keyspace-counts";
// 16 bytes into buf (for a Merge operand or a Put).
void EncodeCounts(KeyCounts c, char (&buf)[16]);
std::optional<KeyCounts> DecodeCounts(std::string_view raw);
// The merge operator of the meta column family: sums count records.
std::shared_ptr<rocksdb::MergeOperator> NewCountMergeOperator();

class EngineHost;
// Loads the count records into *counts, or counts the keys once (one walk, then the records and
// their marker are written, synced) for a data dir without them. At open, before any unit writes.
Status LoadKeyspaceCounts(EngineHost& engine, KeyspaceCounts* counts);

}  // namespace sluice::internal
