// Store::Impl: the RocksDB options, open (checking the logs first) and close. The durability
// policy is store_durability.cc; idle tidying, the expiry thread and stats store_background.cc.
#include <rocksdb/cache.h>
#include <rocksdb/convenience.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/listener.h>
#include <rocksdb/table.h>
#include <rocksdb/wal_filter.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <random>
#include <vector>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "deletion_markers.h"
#include "expiry.h"
#include "info_log.h"
#include "memtable.h"
#include "store_impl.h"
#include "wal_check.h"

namespace sluice {

using internal::FromRocks;

namespace internal {

Status FromRocks(const rocksdb::Status& s) {
  if (s.ok()) return Status::Ok();
  return Status::IOError(s.ToString());
}

namespace {

rocksdb::CompressionType RocksCompression(Compression c) {
  switch (c) {
    case Compression::kSnappy:
      return rocksdb::kSnappyCompression;
    case Compression::kLz4:
      return rocksdb::kLZ4Compression;
    case Compression::kZstd:
      return rocksdb::kZSTD;
    case Compression::kNone:
      return rocksdb::kNoCompression;
  }
  return rocksdb::kSnappyCompression;
}

}  // namespace

// No compaction filter on the keys: an expired key stays stored (and counted, as Redis counts it)
// until a unit removes it (the active expiry cycle, or a locked read that finds it), in a write
// that also updates the keyspace counts. `clock` is kept for callers' symmetry.
rocksdb::Options MakeRocksOptions(const Options& options, std::shared_ptr<const Clock> /*clock*/) {
  rocksdb::Options o;
  o.create_if_missing = true;
  // Write() only appends to the WAL's buffer; Store::Impl::Write / SyncScope hand it to the OS
  // (FlushWAL) before a write is acknowledged: one write(2) per batch instead of per command.
  o.manual_wal_flush = true;
  o.compaction_style = rocksdb::kCompactionStyleLevel;
  o.level_compaction_dynamic_level_bytes = true;
  o.max_background_jobs = 2;
  o.keep_log_file_num = 4;
  // Per column family, and all of them together under twice that: the collection types'
  // families do not multiply the memory (Options::write_buffer_bytes has the measurements).
  o.write_buffer_size = options.write_buffer_bytes;
  o.db_write_buffer_size = 2 * options.write_buffer_bytes;
  // A write-ahead log file is deleted only once every column family has flushed what it holds,
  // and `meta` (a few count records, rewritten by every key creation) never fills its memtable:
  // without a bound the logs grew with every write (measured: 1.4 GB of logs, 53 files, during
  // a load of 20M keys; 105 bytes of disk per key at 10M, most of it logs). Past this total the
  // column families holding the oldest log are flushed; it is at least what the memtables may
  // hold, so that the bound does not flush them early.
  o.max_total_wal_size = std::max<uint64_t>(uint64_t{256} << 20, o.db_write_buffer_size);
  o.skip_stats_update_on_db_open = true;  // keeps Open fast on big databases
  // RocksDB reserves 1.1x the write buffer for each new write-ahead log (and space for table
  // files) with fallocate: 282 MB of disk for a log holding a few records, which stayed in the
  // data dir of an idle, empty server. Without it, `always` at pipeline 1 ran as fast (SET
  // 58-67k against 63-66k calls/s, GCRA.TAKE 53-55k against 53-55k) and so did the churn soak;
  // the disk then follows the data (docs/engine.md, "An idle server gives disk back").
  o.allow_fallocate = false;
  o.avoid_unnecessary_blocking_io = true;
  // RocksDB's default is DEBUG in builds without NDEBUG (Debian's librocksdb is one), which
  // writes a LOG line for every FlushWAL: one more write(2) per batch.
  o.info_log_level = rocksdb::InfoLogLevel::INFO_LEVEL;
  // WAL appends and memtable inserts of consecutive write groups overlap (measured: +15-20%
  // SET/INCR throughput at pipeline 16 with two I/O threads).
  o.enable_pipelined_write = true;
  // Score elements are erased with SingleDelete (Txn::EraseOnceRaw). A SingleDelete that meets a
  // Delete of the same key in a compaction (a data dir written by an older build, or the element
  // filter's removal of a dead collection's entry) would otherwise fail the compaction as
  // Corruption and stop every write; without enforcement RocksDB logs it and drops the
  // SingleDelete, and the Delete below still hides the key.
  o.enforce_single_del_contracts = false;
  o.compression = RocksCompression(options.compression);
  // Sluice's memtable (memtable.h): point lookups and new versions of a key are hash lookups.
  // Members of a write group insert their own batches in parallel (RocksDB's default, kept for
  // both memtables): each I/O thread inserts the keys it prefetched, on its own core, instead of
  // the group's leader inserting every batch in turn (docs/engine.md, "Writes on many cores").
  if (options.memtable == MemTableKind::kSluice) {
    o.memtable_factory = NewMemTableFactory(o.write_buffer_size);
  }
  o.allow_concurrent_memtable_write = true;
  rocksdb::BlockBasedTableOptions table;
  // Filters whole per file, the index partitioned (4 KiB pieces behind a top level); both charged
  // to the block cache and pinned there for as long as their table file is open, so each is read
  // once, when the file opens (~1.6 bytes per key of memory; the cache overflows its capacity if
  // they exceed it). Unpinned, whole-file filters of large files were bigger than one cache shard
  // and evicted as soon as loaded (throughput fell 20x as the data grew), and partitions in the
  // cache's high-priority half were evicted once they outgrew it (tools/scale.sh at 100M keys:
  // 35.7k -> 49.7k GCRA.TAKE/s pinned). A pinned whole filter is one cache line per probe where a
  // partitioned one first searches its top level: under churn (most takes look up a new key, a
  // probe per table file) that cut the server's CPU per call by a quarter (docs/engine.md).
  rocksdb::LRUCacheOptions cache;
  cache.capacity = options.block_cache_bytes;
  table.block_cache = rocksdb::NewLRUCache(cache);
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  table.cache_index_and_filter_blocks = true;
  table.cache_index_and_filter_blocks_with_high_priority = true;
  table.index_type = rocksdb::BlockBasedTableOptions::kTwoLevelIndexSearch;
  table.metadata_block_size = 4096;
  table.block_size = options.block_bytes;
  table.metadata_cache_options.top_level_index_pinning = rocksdb::PinningTier::kAll;
  table.metadata_cache_options.partition_pinning = rocksdb::PinningTier::kAll;
  table.metadata_cache_options.unpartitioned_pinning = rocksdb::PinningTier::kAll;
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  // Short-lived keys leave deletion markers behind (the expiry cycle's, DEL's; re-scored
  // members' SingleDeletes). A file whose entries are at least half deletions within any
  // 16k-entry window is compacted soon, so markers do not pile up and slow every seek (the
  // expiry cycle's, SCAN's, score ranges') under churn.
  o.table_properties_collector_factories.push_back(
      NewDeletionMarkerCollectorFactory(16384, 8192, 0.5));
  return o;
}

}  // namespace internal

// ---- Store::Impl lifecycle

Store::Impl::Impl(Options options)
    : options_(std::move(options)),
      clock_(options_.clock ? options_.clock : std::make_shared<WallClock>()),
      record_cache_(options_.record_cache_bytes, kRecordCacheSlots),
      durability_(options_.durability),
      max_value_bytes_(options_.max_value_bytes),
      hll_sparse_max_bytes_(options_.hll_sparse_max_bytes) {}

namespace {

// Watches the write-ahead log records RocksDB replays while opening: counts them and reports
// progress through Options::on_progress (when set) at most once a second, so a long recovery is
// visible. Used only by Open, on the opening thread.
class ReplayWatch final : public rocksdb::WalFilter {
 public:
  explicit ReplayWatch(std::function<void(const std::string&)> report)
      : report_(std::move(report)), last_report_(std::chrono::steady_clock::now()) {}

  WalProcessingOption LogRecordFound(unsigned long long /*log_number*/,
                                     const std::string& /*log_file_name*/,
                                     const rocksdb::WriteBatch& batch,
                                     rocksdb::WriteBatch* /*new_batch*/,
                                     bool* batch_changed) override {
    *batch_changed = false;
    ++records_;
    updates_ += batch.Count();
    auto now = std::chrono::steady_clock::now();
    if (report_ && now - last_report_ >= std::chrono::seconds(1)) {
      last_report_ = now;
      report_("loading: replayed " + Summary() + " so far");
    }
    return WalProcessingOption::kContinueProcessing;
  }
  const char* Name() const override { return "SluiceReplayWatch"; }

  std::string Summary() const {
    return std::to_string(records_) + " write-ahead log records (" + std::to_string(updates_) +
           " updates)";
  }

 private:
  std::function<void(const std::string&)> report_;
  std::chrono::steady_clock::time_point last_report_;
  int64_t records_ = 0;
  int64_t updates_ = 0;
};

// Latches the store read-only on a RocksDB background error and clears the latch when RocksDB's
// error recovery succeeds. Called by RocksDB with its mutex held: only touches the latch.
class WriteErrorListener final : public rocksdb::EventListener {
 public:
  explicit WriteErrorListener(Store::Impl* impl) : impl_(impl) {}
  void OnBackgroundError(rocksdb::BackgroundErrorReason, rocksdb::Status* error) override {
    if (error != nullptr && !error->ok()) impl_->NoteWriteError(FromRocks(*error));
  }
  void OnErrorRecoveryEnd(const rocksdb::BackgroundErrorRecoveryInfo& info) override {
    if (info.new_bg_error.ok()) impl_->ClearWriteError();
  }

 private:
  Store::Impl* impl_;
};

}  // namespace

// A range deletion (FLUSHDB, FLUSHALL) replayed from the log went to RocksDB's table beside the
// memtable's list, which never sees it: the newest memtable's point reads must then be left to
// RocksDB (memtable.h, ReadNewest). RocksDB counts such an entry in the memtable, the list does
// not. (Asking each replayed batch, WriteBatch::HasDeleteRange, cost a pass over every record:
// 9% of a replay's instructions.)
void Store::Impl::DistrustReplayedRangeDeletes() {
  auto check = [this](rocksdb::ColumnFamilyHandle* cf, internal::NewestMemTable& newest) {
    uint64_t entries = 0;
    if (!db_->GetIntProperty(cf, rocksdb::DB::Properties::kNumEntriesActiveMemTable, &entries)) {
      newest.DistrustCurrent();
      return;
    }
    newest.DistrustUnlessOnlyListed(entries);
  };
  check(db_->DefaultColumnFamily(), keys_memtable_);
  for (int i = 0; i < internal::kNumElementCfs; ++i) check(element_cfs_[i], element_memtables_[i]);
}

namespace {

rocksdb::WALRecoveryMode RocksRecoveryMode(WalRecovery mode) {
  switch (mode) {
    case WalRecovery::kTolerateTail:
      return rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;
    case WalRecovery::kAbsolute:
      return rocksdb::WALRecoveryMode::kAbsoluteConsistency;
    case WalRecovery::kPointInTime:
      return rocksdb::WALRecoveryMode::kPointInTimeRecovery;
    case WalRecovery::kSkipDamaged:
      return rocksdb::WALRecoveryMode::kSkipAnyCorruptedRecords;
  }
  return rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;
}

}  // namespace

// Checks the write-ahead logs before RocksDB replays them (wal_check.h): refuses what the
// recovery mode does not accept, with the file and offset, before any file is touched; warns
// about what it accepts.
Status Store::Impl::CheckLogs(bool* flush_at_open) {
  // Every open starts a log of its own, and the kept ones go only when their memtables flush:
  // without a bound, a store restarted often with few writes between (a few records each, the
  // memtables never filling) would gather one file per start and replay them all at each.
  constexpr size_t kMaxLogsKeptAtOpen = 8;
  *flush_at_open = internal::WalFiles(options_.path).size() > kMaxLogsKeptAtOpen;
  for (const internal::WalFinding& f : internal::CheckWalFiles(options_.path)) {
    *flush_at_open = true;
    const std::string where = "write-ahead log " + f.file + " at byte " + std::to_string(f.offset) +
                              " of " + std::to_string(f.size) + " (" + f.what + ")";
    const WalRecovery mode = options_.wal_recovery;
    const bool refuse = f.torn_tail
                            ? mode == WalRecovery::kAbsolute
                            : mode == WalRecovery::kTolerateTail || mode == WalRecovery::kAbsolute;
    if (refuse) {
      return Status::Corruption(
          "damaged " + where +
          ": refusing to start, every file is left in place. Restore the "
          "data directory from a backup, or accept losing data with --wal-recovery-mode "
          "point-in-time (load the records before the damage) or skip-damaged (load every "
          "intact record)");
    }
    if (options_.on_error) {
      options_.on_error(f.torn_tail
                            ? "WARNING: " + where + ": the log was cut short, as by a crash " +
                                  "during a write; loading the records before it"
                            : "WARNING: damaged " + where +
                                  ": loading what the wal-recovery-mode allows, the rest is lost");
    }
  }
  return Status::Ok();
}

namespace {

bool CompressionSupported(rocksdb::CompressionType type) {
  if (type == rocksdb::kNoCompression) return true;
  for (rocksdb::CompressionType t : rocksdb::GetSupportedCompressions()) {
    if (t == type) return true;
  }
  return false;
}

}  // namespace

Status Store::Impl::Open() {
  if (options_.path.empty()) return Status::IOError("no data directory given");
  if (options_.block_bytes < Options::kMinBlockBytes ||
      options_.block_bytes > Options::kMaxBlockBytes) {
    return Status::InvalidArgument("block size must be between 256 bytes and 1 MB");
  }
  std::error_code ec;
  std::filesystem::create_directories(options_.path, ec);  // RocksDB reports what still fails
  bool flush_at_open = false;
  if (Status checked = CheckLogs(&flush_at_open); !checked.ok()) return checked;
  const auto started = std::chrono::steady_clock::now();
  rocksdb::Options rocks = internal::MakeRocksOptions(options_, clock_);
  // The replayed logs become the memtables again, as they were before the stop, instead of
  // being flushed into small table files during the open: the keys a server held in memory
  // are read from memory after a restart too (1M limiter keys, 2-core VM: 476-517k
  // GCRA.TAKE/s after a restart, 230-320k when the open flushed them; docs/engine.md), and the
  // open skips writing a table of up to a memtable's size. The logs are kept until their
  // memtables flush, as while running. CheckLogs asks for the flush instead when a log is
  // damaged (so that later opens do not replay and warn about the same damage again) or when
  // too many logs have gathered.
  rocks.avoid_flush_during_recovery = !flush_at_open;
  if (!CompressionSupported(rocks.compression)) {
    return Status::InvalidArgument("this RocksDB build lacks the chosen compression");
  }
  rocks.info_log = internal::OpenInfoLog(options_.path);
  rocks.wal_recovery_mode = RocksRecoveryMode(options_.wal_recovery);
  error_listener_ = std::make_shared<WriteErrorListener>(this);
  rocks.listeners.push_back(error_listener_);
  auto watch = std::make_unique<ReplayWatch>(options_.on_progress);
  ReplayWatch* replay = watch.get();
  rocks.wal_filter = replay;
  replay_watch_ = std::move(watch);
  if (Status s = OpenRocks(rocks); !s.ok()) return s;
  DistrustReplayedRangeDeletes();
  expiry_.RestoreState();  // before any write: it checks that nothing was written since it
  if (Status s = InitVersions(); !s.ok()) return s;
  if (Status s = CheckDataDirMode(); !s.ok()) return s;
  if (Status s = internal::LoadKeyspaceCounts(*this, &counts_); !s.ok()) return s;
  expiry_.SkipPassWithoutExpiries(counts_);
  set_expire_effort(options_.active_expire_effort);
  element_filter_->set_db(db_.get());
  group_ = std::make_unique<internal::GroupCommit>(
      db_.get(), [this] { return FlushLog(); }, [this] { NoteSynced(); });
  if (options_.on_progress) {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - started)
                  .count();
    options_.on_progress("loaded " + options_.path + " in " + std::to_string(ms) +
                         " ms, replayed " + replay->Summary());
  }
  everysec_thread_ = std::thread([this] { EverySecLoop(); });
  if (options_.active_expiry && options_.active_expiry_hz > 0) {
    expiry_thread_ = std::thread([this] { ExpiryLoop(); });
  }
  opened_ = true;
  return Status::Ok();
}

void Store::Impl::StopThreads() {
  {
    std::lock_guard<std::mutex> l(bg_mu_);
    stopping_ = true;
  }
  bg_cv_.notify_all();
  if (everysec_thread_.joinable()) everysec_thread_.join();
  if (expiry_thread_.joinable()) expiry_thread_.join();
  if (group_) group_->Stop();  // serves every waiter with a last fsync
}

Store::Impl::~Impl() {
  StopThreads();
  if (!db_) return;
  if (!writes_refused()) {
    if (opened_) SaveExpiryState(/*closing=*/true);
    db_->FlushWAL(/*sync=*/true);
  }
  iterators_.Clear();  // their superversions go before the database closes
  for (auto* h : cf_handles_) db_->DestroyColumnFamilyHandle(h);
  cf_handles_.clear();
  db_->Close();
  if (element_filter_) element_filter_->set_db(nullptr);
  db_.reset();
}

}  // namespace sluice
