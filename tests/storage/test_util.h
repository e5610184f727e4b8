// Helpers shared by the storage tests: a private temporary directory per test and a store
// driven by a manual clock.
#pragma once

#include <doctest/doctest.h>
#include <rocksdb/db.h>
#include <stdlib.h>

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sluice/store.h"
#include "sluice/transaction.h"
#include "storage/engine/collection_layout.h"
#include "storage/engine/encoding.h"
#include "storage/engine/store_impl.h"

namespace sluice::testing {

// A fresh mkdtemp directory, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "sluice-storage-XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A plain RocksDB database (no Sluice store) with two column families, "default" and "other":
// for the tests of the engine's batch pieces (IndexedBatch, PendingPuts) against RocksDB itself.
struct TwoFamilyDb {
  std::unique_ptr<rocksdb::DB> db;
  std::vector<rocksdb::ColumnFamilyHandle*> cfs;
  explicit TwoFamilyDb(const std::string& path) {
    rocksdb::Options o;
    o.create_if_missing = true;
    o.create_missing_column_families = true;
    std::vector<rocksdb::ColumnFamilyDescriptor> descriptors = {
        {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions()},
        {"other", rocksdb::ColumnFamilyOptions()}};
    rocksdb::DB* raw = nullptr;
    REQUIRE(rocksdb::DB::Open(o, path, descriptors, &cfs, &raw).ok());
    db.reset(raw);
  }
  ~TwoFamilyDb() {
    for (auto* h : cfs) db->DestroyColumnFamilyHandle(h);
  }
  TwoFamilyDb(const TwoFamilyDb&) = delete;
  TwoFamilyDb& operator=(const TwoFamilyDb&) = delete;
};

// 2026-01-01T00:00:00Z, a round instant for manual clocks.
inline constexpr int64_t kT0Ms = 1767225600000;

inline std::shared_ptr<AdjustableClock> ManualClock(int64_t ms = kT0Ms) {
  auto c = std::make_shared<AdjustableClock>();
  c->SetManualNs(ms * 1000000);
  return c;
}

inline std::unique_ptr<Store> OpenStore(const std::string& path,
                                        std::shared_ptr<const Clock> clock = nullptr,
                                        bool active_expiry = false,
                                        Durability d = Durability::kEverySec) {
  Options o;
  o.path = path;
  o.clock = std::move(clock);
  o.active_expiry = active_expiry;
  o.durability = d;
  auto r = Store::Open(o);
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  return std::move(r).value();
}

// RocksDB opened directly on a store's data dir (or a fresh dir), with every column family the
// dir has (a store's dir has its element families too): the default one with the store's
// options and expiry filter. Closes cleanly (handles first) on destruction.
class RawStoreDb {
 public:
  RawStoreDb(const std::string& path, std::shared_ptr<const Clock> clock) {
    Options o;
    o.path = path;
    rocksdb::Options opts = internal::MakeRocksOptions(o, std::move(clock));
    std::vector<std::string> names;
    if (!rocksdb::DB::ListColumnFamilies(opts, path, &names).ok()) names.clear();
    std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
    cfs.emplace_back(rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions(opts));
    for (const auto& n : names) {
      if (n == "meta") {  // the keyspace count records need their merge operator
        rocksdb::ColumnFamilyOptions meta;
        meta.merge_operator = internal::NewCountMergeOperator();
        cfs.emplace_back(n, meta);
      } else if (n != rocksdb::kDefaultColumnFamilyName) {
        cfs.emplace_back(n, rocksdb::ColumnFamilyOptions());
      }
    }
    rocksdb::DB* db = nullptr;
    auto s = rocksdb::DB::Open(rocksdb::DBOptions(opts), path, cfs, &handles_, &db);
    REQUIRE_MESSAGE(s.ok(), s.ToString());
    db_ = db;
  }
  ~RawStoreDb() { reset(); }
  // Closes the database now.
  void reset() {
    if (db_ == nullptr) return;
    for (auto* h : handles_) db_->DestroyColumnFamilyHandle(h);
    handles_.clear();
    delete db_;
    db_ = nullptr;
  }
  RawStoreDb(const RawStoreDb&) = delete;
  RawStoreDb& operator=(const RawStoreDb&) = delete;
  rocksdb::DB* get() const { return db_; }
  rocksdb::DB* operator->() const { return db_; }
  // A column family by name (nullptr when the dir has none of that name).
  rocksdb::ColumnFamilyHandle* cf(const std::string& name) const {
    for (auto* h : handles_) {
      if (h->GetName() == name) return h;
    }
    return nullptr;
  }

 private:
  rocksdb::DB* db_ = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
};

// A store with a manual clock and no background expiry, and options `tweak` sets (the layout
// tests' inline limits).
inline std::unique_ptr<Store> OpenStoreWith(const std::string& path,
                                            const std::function<void(Options&)>& tweak) {
  Options o;
  o.path = path;
  o.clock = ManualClock();
  o.active_expiry = false;
  tweak(o);
  auto r = Store::Open(o);
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  return std::move(r).value();
}

// How a collection is stored, read from a closed store's bytes: its metadata, and how many
// entries its version has in each of the element column families named.
struct StoredCollection {
  bool exists = false;
  uint8_t flags = 0;
  int64_t count = 0;
  std::map<std::string, int64_t> entries;  // column family name -> entries
  bool has(uint8_t flag) const { return (flags & flag) != 0; }
};

inline StoredCollection ReadStoredCollection(const std::string& path, std::string_view key,
                                             const std::vector<std::string>& cfs, int db = 0) {
  RawStoreDb raw(path, ManualClock());
  StoredCollection out;
  std::string value;
  if (!raw->Get(rocksdb::ReadOptions(), internal::EncodeKey(db, key), &value).ok()) return out;
  auto entry = internal::DecodeValue(value);
  REQUIRE(entry.has_value());
  auto meta = internal::DecodeMeta(entry->payload);
  REQUIRE(meta.has_value());
  out.exists = true;
  out.flags = meta->flags;
  out.count = meta->count;
  std::string prefix;
  internal::EncodeSubKeyPrefix(db, key, meta->version, &prefix);
  for (const std::string& cf : cfs) {
    int64_t& n = out.entries[cf];
    std::unique_ptr<rocksdb::Iterator> it(raw->NewIterator(rocksdb::ReadOptions(), raw.cf(cf)));
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) ++n;
  }
  return out;
}

// A store in a temp dir with a manual clock at kT0Ms; no background expiry unless asked.
struct Fixture {
  TempDir dir;
  std::shared_ptr<AdjustableClock> clock = ManualClock();
  std::unique_ptr<Store> store = OpenStore(dir.path(), clock);

  void AdvanceMs(int64_t ms) { clock->AdvanceNs(ms * 1000000); }
  void Reopen() {
    store.reset();
    store = OpenStore(dir.path(), clock);
  }
  // Writes an encoded value straight into RocksDB (with the store closed meanwhile): how tests
  // make keys of kinds the string API cannot create.
  void PutRaw(int db, std::string_view key, ValueKind kind, std::string_view payload,
              int64_t expire_at_ms = internal::kNoExpiry) {
    store.reset();
    {
      // The key and its keyspace count change in one write, as the engine's commits do.
      RawStoreDb raw(dir.path(), clock);
      const std::string raw_key = internal::EncodeKey(db, key);
      std::string old;
      internal::KeyCounts delta{1, expire_at_ms != internal::kNoExpiry ? 1 : 0};
      if (raw->Get(rocksdb::ReadOptions(), raw_key, &old).ok()) {
        auto e = internal::DecodeExpiry(old);
        delta += internal::KeyCounts{-1, e && *e != internal::kNoExpiry ? -1 : 0};
      }
      char buf[16];
      internal::EncodeCounts(delta, buf);
      rocksdb::WriteBatch batch;
      batch.Put(raw_key, internal::EncodeValue(kind, expire_at_ms, payload));
      batch.Merge(raw.cf("meta"), internal::CountRecordKey(db), rocksdb::Slice(buf, sizeof(buf)));
      REQUIRE(raw->Write(rocksdb::WriteOptions(), &batch).ok());
    }
    store = OpenStore(dir.path(), clock);
  }
};

// Every database's counts (in memory and persisted) equal a walk of its keys.
inline void RequireConsistent(Store& store) {
  Store::Transaction txn(store, {}, TransactionOptions{.all_keys = true});
  for (int db = 0; db < kNumDatabases; ++db) {
    auto r = txn.KeyspaceCheck(db);
    REQUIRE(r.ok());
    INFO("db ", db, " counted ", r->counted.keys, "/", r->counted.expires, " stored ",
         r->stored.keys, "/", r->stored.expires, " walked ", r->walked.keys, "/",
         r->walked.expires);
    REQUIRE(r->ok());
  }
}

// Runs expiry cycles by hand until one finds nothing to do (no pass, nothing due), at most
// max_cycles; returns the keys removed.
inline int64_t RunCycles(Store& store, int max_cycles = 1000, int64_t budget_us = 1'000'000) {
  int64_t removed = 0;
  for (int i = 0; i < max_cycles; ++i) {
    const int64_t scans = store.GetStats().expiry_scans;
    const int64_t n = store.impl().RunExpiryCycle(budget_us);
    removed += n;
    if (n == 0 && store.GetStats().expiry_scans == scans) break;
  }
  return removed;
}

inline SetOptions SetPlain() { return SetOptions{}; }
inline SetOptions SetWith(SetCondition c) {
  SetOptions o;
  o.condition = c;
  return o;
}
inline SetOptions SetAt(int64_t at_ms) {
  SetOptions o;
  o.expiry = {ExpiryChange::Kind::kSetAt, at_ms};
  return o;
}

// ZADD key score member in a unit of its own, under the key's lock, as the server runs it.
inline void ZAdd(Store& s, std::string_view key, double score, std::string_view member) {
  const KeyRef keys[] = {{0, key}};
  Store::Transaction t(s, keys);
  const std::pair<double, std::string_view> one[] = {{score, member}};
  REQUIRE(t.ZAdd(0, key, {}, one).ok());
  REQUIRE(t.Commit().ok());
}

}  // namespace sluice::testing
