// The data dir's on-disk format: the SLUICE-FORMAT file, the column families Open creates, the
// migration of a format-0 data dir (keys without a slot, before collections), and the
// persisted collection-version mark.
//
// SLUICE-FORMAT holds one line, "sluice-format <n>". Format 1 is the current layout
// (encoding.h, collection_layout.h). A data dir without the file is format 0 when it holds a
// RocksDB database (migrated on open), and new otherwise. Any other content is refused with an
// error naming the format, so an older build never misreads a newer data dir.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "collection_layout.h"
#include "expiry.h"
#include "store_impl.h"

namespace sluice {

using internal::FromRocks;

namespace {

constexpr int kCurrentFormat = 1;
constexpr const char* kFormatFile = "SLUICE-FORMAT";
// Format 0 -> 1, half way: every key moved to the staging column family.
constexpr const char* kStagedFormat0 = "0-staged";
constexpr const char* kMetaCf = "meta";
constexpr const char* kMigrateCf = "migrate0";
constexpr const char* kVersionMarkKey = "collection-version-limit";
constexpr const char* kModeKey = "data-dir-mode";  // "standalone" or "cluster"
// Versions reserved per persisted mark: one synced write per 2^32 new collections.
constexpr uint64_t kVersionReserve = uint64_t{1} << 32;
constexpr size_t kMigrateBatch = 1000;

// The format named in the file: "" when there is no file.
Status ReadFormat(const std::string& dir, std::string* format) {
  format->clear();
  std::ifstream in(dir + "/" + kFormatFile);
  if (!in) return Status::Ok();
  std::string word;
  in >> word >> *format;
  if (word != "sluice-format" || format->empty()) {
    return Status::Corruption("data directory " + dir + " has an unreadable " + kFormatFile +
                              " file");
  }
  return Status::Ok();
}

Status SyncPath(const std::string& path, int flags) {
  int fd = ::open(path.c_str(), flags);
  if (fd < 0) return Status::IOError("cannot open " + path);
  int rc = ::fsync(fd);
  ::close(fd);
  return rc == 0 ? Status::Ok() : Status::IOError("cannot fsync " + path);
}

// Replaces the file atomically and durably (write, fsync, rename, fsync the directory).
Status WriteFormat(const std::string& dir, const std::string& format) {
  const std::string path = dir + "/" + kFormatFile;
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << "sluice-format " << format << "\n";
    if (!out.flush()) return Status::IOError("cannot write " + tmp);
  }
  if (Status s = SyncPath(tmp, O_RDONLY); !s.ok()) return s;
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Status::IOError("cannot rename " + tmp + ": " + ec.message());
  return SyncPath(dir, O_RDONLY | O_DIRECTORY);
}

// Whether a data dir's column families are the current format's (format 0 had only the default
// family): such a dir that lost its SLUICE-FORMAT file (a raw copy of the files, say) is the
// current format, and migrating its keys as format 0 would garble every one of them.
bool HasCurrentFamilies(const std::vector<std::string>& existing) {
  return std::any_of(existing.begin(), existing.end(), [](const std::string& name) {
    if (name == kMetaCf) return true;
    for (int i = 0; i < internal::kNumElementCfs; ++i) {
      if (name == internal::ElementCfName(static_cast<internal::ElementCf>(i))) return true;
    }
    return false;
  });
}

}  // namespace

Status Store::Impl::WriteCurrentFormat(const std::string& dir) {
  return WriteFormat(dir, std::to_string(kCurrentFormat));
}

Status Store::Impl::OpenRocks(const rocksdb::Options& rocks) {
  const std::string& dir = options_.path;
  std::string format;
  if (Status s = ReadFormat(dir, &format); !s.ok()) return s;
  if (!format.empty() && format != std::to_string(kCurrentFormat) && format != kStagedFormat0) {
    return Status::Corruption("data directory " + dir + " has on-disk format " + format +
                              ", which this build of Sluice cannot read (it reads format " +
                              std::to_string(kCurrentFormat) + ")");
  }
  std::error_code ec;
  const bool existed = std::filesystem::exists(dir + "/CURRENT", ec);
  new_data_dir_ = !existed;

  std::vector<std::string> existing;
  if (existed) {
    auto s = rocksdb::DB::ListColumnFamilies(rocks, dir, &existing);
    if (!s.ok()) return FromRocks(s);
  }
  rocksdb::DBOptions db_options(rocks);
  db_options.create_missing_column_families = true;
  rocksdb::ColumnFamilyOptions keys_options(rocks);
  // The keys' memtables tell keys_memtable_ which is newest (prefetches, point reads).
  if (options_.memtable == MemTableKind::kSluice) {
    keys_options.memtable_factory =
        internal::NewMemTableFactory(rocks.write_buffer_size, &keys_memtable_);
  }
  rocksdb::ColumnFamilyOptions plain(rocks);
  plain.compaction_filter_factory = nullptr;
  plain.table_properties_collector_factories.clear();
  element_filter_ = std::make_shared<internal::ElementFilterFactory>(clock_);
  rocksdb::ColumnFamilyOptions elements(rocks);
  elements.compaction_filter_factory = element_filter_;
  // Stale elements are not deletions, so nothing else makes RocksDB compact a file that holds
  // only the elements of a deleted collection: every element file is compacted (and filtered)
  // at least once a day, so the space of a DEL'd or expired collection comes back.
  elements.periodic_compaction_seconds = 24 * 3600;

  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  cfs.emplace_back(rocksdb::kDefaultColumnFamilyName, keys_options);
  for (int i = 0; i < internal::kNumElementCfs; ++i) {
    // Each element family's memtables tell its own NewestMemTable which is newest.
    rocksdb::ColumnFamilyOptions one(elements);
    if (options_.memtable == MemTableKind::kSluice) {
      one.memtable_factory =
          internal::NewMemTableFactory(rocks.write_buffer_size, &element_memtables_[i]);
    }
    cfs.emplace_back(internal::ElementCfName(static_cast<internal::ElementCf>(i)), one);
  }
  rocksdb::ColumnFamilyOptions meta(plain);
  meta.merge_operator = internal::NewCountMergeOperator();  // keyspace count records
  cfs.emplace_back(kMetaCf, meta);
  for (const auto& name : existing) {  // e.g. a migration's staging family
    const bool known =
        std::any_of(cfs.begin(), cfs.end(), [&](const auto& d) { return d.name == name; });
    if (!known) cfs.emplace_back(name, plain);
  }
  rocksdb::DB* raw = nullptr;
  auto s = rocksdb::DB::Open(db_options, dir, cfs, &cf_handles_, &raw);
  if (!s.ok()) return FromRocks(s);
  db_.reset(raw);
  for (int i = 0; i < internal::kNumElementCfs; ++i) element_cfs_[i] = cf_handles_[1 + i];
  meta_cf_ = cf_handles_[1 + internal::kNumElementCfs];

  if (format == std::to_string(kCurrentFormat)) return Status::Ok();
  if (existed && !(format.empty() && HasCurrentFamilies(existing))) {
    if (Status m = MigrateFromFormat0(format == kStagedFormat0); !m.ok()) return m;
  }
  return WriteFormat(dir, std::to_string(kCurrentFormat));
}

// Format 0 keys are [db][user key]; format 1 puts the slot between. Two phases, each resumable
// after a crash: (1) every key moves, as is, to the staging column family (each batch puts there
// and deletes here), then the file says "0-staged"; (2) every staged key moves back re-encoded.
// Old and new keys never share the default column family, so a restart always knows which is
// which.
Status Store::Impl::MigrateFromFormat0(bool staged) {
  rocksdb::ColumnFamilyHandle* stage = nullptr;
  for (auto* h : cf_handles_) {
    if (h->GetName() == kMigrateCf) stage = h;
  }
  if (stage == nullptr) {
    auto s = db_->CreateColumnFamily(rocksdb::ColumnFamilyOptions(), kMigrateCf, &stage);
    if (!s.ok()) return FromRocks(s);
    cf_handles_.push_back(stage);
  }
  rocksdb::WriteOptions wo;
  auto move_all = [&](rocksdb::ColumnFamilyHandle* from, rocksdb::ColumnFamilyHandle* to,
                      bool reencode) -> Status {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), from));
    rocksdb::WriteBatch batch;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const std::string_view key = it->key().ToStringView();
      if (reencode) {
        const int db = key.empty() ? kNumDatabases : static_cast<unsigned char>(key[0]);
        if (db >= kNumDatabases) continue;  // not a key of format 0: left behind
        batch.Put(to, internal::EncodeKey(db, key.substr(1)), it->value());
      } else {
        batch.Put(to, it->key(), it->value());
      }
      batch.Delete(from, it->key());
      if (batch.Count() >= 2 * kMigrateBatch) {
        if (auto s = db_->Write(wo, &batch); !s.ok()) return FromRocks(s);
        batch.Clear();
      }
    }
    if (!it->status().ok()) return FromRocks(it->status());
    if (auto s = db_->Write(wo, &batch); !s.ok()) return FromRocks(s);
    return FromRocks(db_->FlushWAL(/*sync=*/true));
  };
  if (!staged) {
    if (Status s = move_all(db_->DefaultColumnFamily(), stage, false); !s.ok()) return s;
    if (Status s = WriteFormat(options_.path, kStagedFormat0); !s.ok()) return s;
  }
  return move_all(stage, db_->DefaultColumnFamily(), true);
}

Status Store::Impl::PersistVersionLimit(uint64_t limit) {
  std::string value;
  internal::AppendFixed64(&value, limit);
  auto s = db_->Put(rocksdb::WriteOptions(), meta_cf_, kVersionMarkKey, value);
  if (!s.ok()) return FromRocks(s);
  return FromRocks(db_->FlushWAL(/*sync=*/true));
}

// Versions start above both the persisted mark and the wall clock in ns, so they never repeat,
// whatever the clock did across restarts.
Status Store::Impl::InitVersions() {
  std::string value;
  uint64_t mark = 0;
  auto s = db_->Get(rocksdb::ReadOptions(), meta_cf_, kVersionMarkKey, &value);
  if (s.ok() && value.size() == 8) {
    mark = internal::DecodeFixed64(value.data());
  } else if (!s.ok() && !s.IsNotFound()) {
    return FromRocks(s);
  }
  const uint64_t start = std::max<uint64_t>(mark, static_cast<uint64_t>(WallClock().NowNs())) + 1;
  if (Status p = PersistVersionLimit(start + kVersionReserve); !p.ok()) return p;
  next_version_.store(start, std::memory_order_relaxed);
  version_limit_.store(start + kVersionReserve, std::memory_order_release);
  return Status::Ok();
}

uint64_t Store::Impl::NewCollectionVersion() {
  const uint64_t v = next_version_.fetch_add(1, std::memory_order_relaxed);
  if (v < version_limit_.load(std::memory_order_acquire)) return v;
  std::lock_guard<std::mutex> l(version_mu_);
  uint64_t limit = version_limit_.load(std::memory_order_relaxed);
  while (v >= limit) {
    limit += kVersionReserve;
    // A failed persist is not fatal here: the next open starts above the wall clock anyway.
    PersistVersionLimit(limit);
  }
  version_limit_.store(limit, std::memory_order_release);
  return v;
}

}  // namespace sluice

namespace sluice {

namespace {

const char* ModeName(DataDirMode mode) {
  return mode == DataDirMode::kCluster ? "cluster" : "standalone";
}

}  // namespace

Result<DataDirMode> Store::Impl::ReadDataDirMode() {
  std::string value;
  auto s = db_->Get(rocksdb::ReadOptions(), meta_cf_, kModeKey, &value);
  if (s.IsNotFound()) return DataDirMode::kUnset;
  if (!s.ok()) return FromRocks(s);
  if (value == "cluster") return DataDirMode::kCluster;
  if (value == "standalone") return DataDirMode::kStandalone;
  return Status::Corruption("data directory " + options_.path + " has an unknown mode '" + value +
                            "'");
}

Status Store::Impl::WriteDataDirMode(DataDirMode mode) {
  auto s = db_->Put(rocksdb::WriteOptions(), meta_cf_, kModeKey, ModeName(mode));
  if (!s.ok()) return FromRocks(s);
  return FromRocks(db_->FlushWAL(/*sync=*/true));
}

Status Store::Impl::CheckDataDirMode() {
  if (options_.mode == DataDirMode::kUnset) return Status::Ok();
  Result<DataDirMode> recorded = ReadDataDirMode();
  if (!recorded.ok()) return recorded.status();
  DataDirMode mode = *recorded;
  if (mode == DataDirMode::kUnset) {
    // A data dir from before the marker was written by a standalone server.
    if (new_data_dir_) return WriteDataDirMode(options_.mode);
    mode = DataDirMode::kStandalone;
    if (options_.mode == mode) return WriteDataDirMode(mode);
  }
  if (mode == options_.mode) return Status::Ok();
  return Status::InvalidArgument(
      "data directory " + options_.path + " holds " + ModeName(mode) + " data and cannot be " +
      "opened in " + ModeName(options_.mode) + " mode (cluster-enabled " +
      (options_.mode == DataDirMode::kCluster ? "yes" : "no") + "); convert it offline first: " +
      "sluice-server --convert-data-dir " + ModeName(options_.mode) + " --dir " + options_.path);
}

}  // namespace sluice
