// BulkLoad: writes many keys that are known to be new into a store, fast: a Redis dump.rdb
// loaded at start into a fresh data dir, a replica's full sync into its emptied store.
//
// What makes it fast, and what it asks of the caller in return:
// - Keys are new: no key added is stored before it is added, each key is added once, and no
//   one else creates the keys meanwhile (at start nothing else runs; a replica with
//   replica-read-only, the default, refuses client writes). So a unit's commit counts each
//   written key as new without reading what it replaces (the one point lookup an ordinary
//   write makes per key), and a string is written blind. Breaking this
//   leaves DBSIZE / INFO keyspace wrong (never the values). An RDB file holds each key once per
//   database (redis-server refuses a file that does not).
// - Big units: many keys per Store::Transaction (one RocksDB write each), every stripe held by
//   the unit, so no lock per key; other writers wait at most one unit. Durability is deferred
//   to Finish(), which fsyncs the log once; until then a crash may lose the units written so
//   far (the callers mark a load in progress and start it over: rdb_load.cc, full_sync.cc).
//
// Key counts and expiries stay exact: each unit updates the keyspace counts (keys, keys with
// an expiry) in its own write, and hands its expiring keys to the expiry cycle as any unit.
// Not thread-safe: one loader, one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "sluice/status.h"
#include "sluice/store.h"
#include "sluice/transaction.h"
#include "sluice/whole_value.h"

namespace sluice {

struct BulkLoadOptions {
  // A unit commits once it holds this many keys (default 20000) ...
  size_t keys_per_unit = 20000;
  // ... or this many staged bytes (default 32 MiB), whichever comes first.
  size_t bytes_per_unit = size_t{32} << 20;
};

class BulkLoad {
 public:
  explicit BulkLoad(Store& store, BulkLoadOptions options = {});
  ~BulkLoad();  // drops what was added since the last unit committed unless Finish() ran
  BulkLoad(const BulkLoad&) = delete;
  BulkLoad& operator=(const BulkLoad&) = delete;

  // Adds key (new, see above) with `value` and its expiry (ms since the epoch; 0: none). The
  // caller skips keys already expired, as a Redis master loading a file does.
  Status Add(int db, std::string_view key, const WholeValue& value, int64_t expire_at_ms);
  // Adds a single-entry key as its stored bytes (Store::Transaction::ReadEntry's form).
  Status AddEntry(int db, std::string_view key, const Store::Transaction::RawEntry& entry);
  // Commits the last unit and fsyncs the log: every key added is durable when it returns OK.
  Status Finish();

  int64_t added() const { return added_; }  // keys added so far

 private:
  Store::Transaction& Unit();
  Status Added();  // counts a key; commits the unit when it is full

  Store& store_;
  BulkLoadOptions options_;
  std::optional<Store::Transaction> unit_;
  size_t in_unit_ = 0;
  int64_t added_ = 0;
};

}  // namespace sluice
