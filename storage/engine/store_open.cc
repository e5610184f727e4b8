// Store: open/close, RocksDB options, durability policy (WAL sync, SyncScope, the everysec
// thread), stats, and the small accessors.
#include <rocksdb/cache.h>
#include <rocksdb/convenience.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/listener.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/table_properties_collectors.h>
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

#include "expiry.h"
#include "info_log.h"
#include "memtable.h"
#include "store_impl.h"
#include "wal_check.h"

namespace sluice {

using internal::FromRocks;

const char* TypeName(ValueKind kind) {
  switch (kind) {
    case ValueKind::kString:
      return "string";
    case ValueKind::kLeaky:
      return "leaky";
    case ValueKind::kSliding:
      return "sliding";
    case ValueKind::kConc:
      return "conc";
    case ValueKind::kHash:
      return "hash";
    case ValueKind::kList:
      return "list";
    case ValueKind::kSet:
      return "set";
    case ValueKind::kZSet:
      return "zset";
  }
  return "none";
}

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
  // Short-lived keys leave deletion markers behind (the expiry cycle's, DEL's). A file whose
  // entries are at least half deletions within any 16k-entry window is compacted soon, so
  // markers do not pile up and slow every seek (the expiry cycle's, SCAN's) under churn.
  o.table_properties_collector_factories.push_back(
      rocksdb::NewCompactOnDeletionCollectorFactory(16384, 8192, 0.5));
  return o;
}

uint64_t RandomU64() {
  thread_local std::mt19937_64 rng{(uint64_t{std::random_device{}()} << 32) ^
                                   std::random_device{}()};
  return rng();
}

}  // namespace internal

// ---- Store::Impl lifecycle

Store::Impl::Impl(Options options)
    : options_(std::move(options)),
      clock_(options_.clock ? options_.clock : std::make_shared<WallClock>()),
      durability_(options_.durability),
      max_value_bytes_(options_.max_value_bytes) {}

namespace {

// Counts the write-ahead log records RocksDB replays while opening and reports progress through
// Options::on_progress at most once a second, so a long recovery is visible. Used only by Open,
// on the opening thread.
class RecoveryProgress final : public rocksdb::WalFilter {
 public:
  explicit RecoveryProgress(std::function<void(const std::string&)> report)
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
    if (now - last_report_ >= std::chrono::seconds(1)) {
      last_report_ = now;
      report_("loading: replayed " + Summary() + " so far");
    }
    return WalProcessingOption::kContinueProcessing;
  }
  const char* Name() const override { return "SluiceRecoveryProgress"; }

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
  RecoveryProgress* progress = nullptr;
  if (options_.on_progress) {
    auto filter = std::make_unique<RecoveryProgress>(options_.on_progress);
    progress = filter.get();
    rocks.wal_filter = filter.get();
    recovery_progress_ = std::move(filter);
  }
  if (Status s = OpenRocks(rocks); !s.ok()) return s;
  RestoreExpiryState();  // before any write: it checks that nothing was written since it
  if (Status s = InitVersions(); !s.ok()) return s;
  if (Status s = LoadKeyspaceCounts(); !s.ok()) return s;
  SkipPassWithoutExpiries();
  set_expire_effort(options_.active_expire_effort);
  element_filter_->set_db(db_.get());
  group_ = std::make_unique<internal::GroupCommit>(
      db_.get(), [this] { return FlushLog(); }, [this] { NoteSynced(); });
  if (progress != nullptr) {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - started)
                  .count();
    options_.on_progress("loaded " + options_.path + " in " + std::to_string(ms) +
                         " ms, replayed " + progress->Summary());
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
  for (auto* h : cf_handles_) db_->DestroyColumnFamilyHandle(h);
  cf_handles_.clear();
  db_->Close();
  if (element_filter_) element_filter_->set_db(nullptr);
  db_.reset();
}

// ---- Durability

namespace {
int64_t WallMs() { return WallClock().NowMs(); }
}  // namespace

Status Store::Impl::Write(rocksdb::WriteBatch* batch, bool durable, bool defer, bool* applied) {
  if (applied != nullptr) *applied = false;
  if (batch->Count() == 0) return Status::Ok();
  {
    // Shared: writes run concurrently; a log flush waits for them (see wal_gate_).
    std::shared_lock<std::shared_mutex> gate(wal_gate_);
    if (writes_refused()) return WriteRefusal();
    // manual_wal_flush: this appends the batch to the WAL's in-memory buffer (and applies it to
    // the memtable); the buffer reaches the OS here only when it is full.
    auto s = db_->Write(rocksdb::WriteOptions(), batch);
    // An I/O error (a full disk, or the background error RocksDB latched) stops writes, latched
    // before the gate is released; any other failure is this write's own.
    if (!s.ok()) return s.IsIOError() ? NoteWriteError(FromRocks(s)) : FromRocks(s);
  }
  if (applied != nullptr) *applied = true;
  if (defer) return Status::Ok();
  // The fsync also hands the buffer to the OS. Either way the flush covers whatever the buffer
  // holds, other threads' records included, so our record is covered even if another
  // thread's flush (or a WAL switch) got there first.
  if (durable && durability() == Durability::kAlways) return AwaitDurable(DurabilityTicket());
  return FlushLog(DurabilityTicket());
}

void Store::Impl::set_block_cache_bytes(size_t bytes) {
  const auto* table =
      db_->GetOptions().table_factory->GetOptions<rocksdb::BlockBasedTableOptions>();
  if (table != nullptr && table->block_cache) table->block_cache->SetCapacity(bytes);
}

// With the gate held exclusively no write is between appending its record and publishing its
// sequence number: every record through the latest sequence is in the buffer the flush hands
// over, so flushed_through_ may say so afterwards.
Status Store::Impl::FlushLog() {
  std::unique_lock<std::shared_mutex> gate(wal_gate_);
  return FlushLogLocked();
}

Status Store::Impl::FlushLogLocked() {
  if (writes_refused()) return WriteRefusal();
  const uint64_t through = db_->GetLatestSequenceNumber();
  auto s = db_->FlushWAL(/*sync=*/false);
  if (!s.ok()) return NoteWriteError(FromRocks(s));
  // Flushes are serialized by the gate and sequence numbers only grow: a plain store.
  flushed_through_.store(through, std::memory_order_release);
  return Status::Ok();
}

// Threads that finish their writes together queue on the gate: the first one's flush covers
// the others' records, which then skip their own write(2) (and, checked before the gate, their
// wait for it).
Status Store::Impl::FlushLog(uint64_t ticket) {
  if (flushed_through_.load(std::memory_order_acquire) >= ticket) return Status::Ok();
  std::unique_lock<std::shared_mutex> gate(wal_gate_);
  if (flushed_through_.load(std::memory_order_relaxed) >= ticket) return Status::Ok();
  return FlushLogLocked();
}

Status Store::Impl::SyncWal() {
  if (writes_refused()) return WriteRefusal();
  // Everything applied by now is in the log's buffer: the fsync below covers it.
  const uint64_t through = db_->GetLatestSequenceNumber();
  Status s = group_->SyncNow();
  if (s.ok()) synced_through_.store(through, std::memory_order_release);
  return s.ok() ? s : NoteWriteError(s);
}

void Store::Impl::WhenDurable(uint64_t ticket, std::function<void(Status)> done) {
  if (durability() != Durability::kAlways) return done(FlushLog(ticket));
  if (writes_refused()) return done(WriteRefusal());
  group_->Request(ticket, [this, done = std::move(done)](Status s) {
    done(s.ok() ? std::move(s) : NoteWriteError(s));
  });
}

Status Store::Impl::AwaitDurable(uint64_t ticket) {
  if (durability() != Durability::kAlways) return FlushLog(ticket);
  if (writes_refused()) return WriteRefusal();
  Status s = group_->Await(ticket);
  return s.ok() ? s : NoteWriteError(s);
}

Status Store::Impl::NoteWriteError(const Status& cause) {
  if (cause.code() == Code::kCannotPersist) return cause;
  std::string reason = cause.message();
  bool first = false;
  {
    std::lock_guard<std::mutex> l(write_error_mu_);
    if (!writes_refused_.load(std::memory_order_relaxed)) {
      write_error_ = reason;
      writes_refused_.store(true, std::memory_order_release);
      first = true;
    } else {
      reason = write_error_;
    }
  }
  if (first && options_.on_error) {
    options_.on_error("writes refused: cannot write to " + options_.path + ": " + reason +
                      " (reads keep working; writes are accepted again once the disk can take "
                      "them)");
  }
  return Status::CannotPersist(reason);
}

void Store::Impl::ClearWriteError() {
  std::string was;
  {
    std::lock_guard<std::mutex> l(write_error_mu_);
    if (!writes_refused_.load(std::memory_order_relaxed)) return;
    was = std::move(write_error_);
    write_error_.clear();
    writes_refused_.store(false, std::memory_order_release);
  }
  if (options_.on_error) {
    options_.on_error("writes accepted again: " + options_.path + " recovered from: " + was);
  }
}

Status Store::Impl::WriteRefusal() const {
  std::lock_guard<std::mutex> l(write_error_mu_);
  return Status::CannotPersist(write_error_);
}

// RocksDB recovers by itself from a full disk once enough space is free (its SstFileManager
// polls); other errors need DB::Resume. Busy (a recovery in progress) and failures are retried
// on the next tick.
void Store::Impl::TryResume() {
  auto s = db_->Resume();
  if (s.ok()) ClearWriteError();
}

void Store::Impl::NoteSynced() {
  last_sync_unix_ms_.store(WallMs(), std::memory_order_relaxed);
  wal_syncs_.fetch_add(1, std::memory_order_relaxed);
}

void Store::Impl::EverySecLoop() {
  std::unique_lock<std::mutex> l(bg_mu_);
  int ticks = 0;
  uint64_t last_seq = db_->GetLatestSequenceNumber();
  int quiet_seconds = 0;
  while (!bg_cv_.wait_for(l, std::chrono::seconds(1), [this] { return stopping_; })) {
    l.unlock();
    TidyIfIdle(last_seq, quiet_seconds);
    l.lock();
    if (writes_refused()) {
      if (++ticks % 5 == 0) {
        l.unlock();
        TryResume();
        l.lock();
      }
      continue;
    }
    if (durability() != Durability::kEverySec) continue;
    if (db_->GetLatestSequenceNumber() == synced_through_.load(std::memory_order_acquire)) continue;
    l.unlock();
    SyncWal();
    l.lock();
  }
}

void Store::Impl::TidyIfIdle(uint64_t& last_seq, int& quiet_seconds) {
  // The flush runs on RocksDB's thread (a 256 MB memtable takes a few seconds); its memory is
  // free once it is done. Later trims catch what compactions the flush started have freed.
  constexpr int kReleaseAfterFlushS = 5;
  constexpr int kReleaseEveryS = 60;
  const uint64_t seq = db_->GetLatestSequenceNumber();
  if (seq != last_seq) {
    // The expiry state saved once the store went quiet is the store's own write, not activity:
    // counting it would start the idle flush's and the heap trim's count over.
    const bool only_saved_state =
        seq == last_seq + 1 && seq == expiry_state_seq_.load(std::memory_order_relaxed);
    last_seq = seq;
    if (!only_saved_state) {
      quiet_seconds = 0;
      return;
    }
  }
  const int flush_at = options_.idle_flush_after_s;
  if (flush_at <= 0) return;
  ++quiet_seconds;
  if (quiet_seconds == flush_at) FlushIfDeletionsHeld();
  const int since_release = quiet_seconds - flush_at - kReleaseAfterFlushS;
  if (options_.release_memory_when_idle && since_release >= 0 &&
      since_release % kReleaseEveryS == 0) {
    ReleaseFreeHeapMemory();
  }
}

// The first cycle's pass finds the keys with an expiry stored before this open: with none
// stored (the counts are exact), it has nothing to find. On a fresh store taking traffic at
// once, that pass walked the new keys a sample a cycle while none had expired, and the expiries
// written ahead of its cursor were left to it instead of the due list (docs/engine.md, "Expiry").
void Store::Impl::SkipPassWithoutExpiries() {
  if (expiry_pass_active_) return;  // a restored pass under way goes on
  for (int db = 0; db < kNumDatabases; ++db) {
    if (counts_.Get(db).expires != 0) return;
  }
  next_expiry_due_ms_.store(internal::kNever, std::memory_order_relaxed);
}

void Store::Impl::FlushIfDeletionsHeld() {
  constexpr uint64_t kMinDeletions = 1000;  // fewer are not worth a table file
  const bool deletions_held =
      std::any_of(cf_handles_.begin(), cf_handles_.end(), [&](rocksdb::ColumnFamilyHandle* cf) {
        uint64_t deletions = 0;
        return db_->GetIntProperty(cf, "rocksdb.num-deletes-active-mem-table", &deletions) &&
               deletions >= kMinDeletions;
      });
  if (!deletions_held) return;
  rocksdb::FlushOptions options;
  options.wait = false;  // the tick goes on; RocksDB's flush thread does the work
  options.allow_write_stall = true;
  // Every family, not only those holding the deletions: a write-ahead log is deleted only once
  // every family has flushed what it holds, and `meta`'s few count records would keep the logs
  // of the whole burst on disk (up to max_total_wal_size). Empty memtables flush nothing.
  db_->Flush(options, cf_handles_);  // a failure leaves the memtables as they were
}

// glibc keeps freed pages inside its heap (only the top is returned by free): after a burst, the
// memtables' arena blocks and compaction buffers stay in the RSS. malloc_trim walks the free
// chunks and returns their whole pages; other C libraries are left alone.
void Store::Impl::ReleaseFreeHeapMemory() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
  idle_memory_releases_.fetch_add(1, std::memory_order_relaxed);
}

void Store::Impl::ExpiryLoop() {
  const int hz = std::clamp(options_.active_expiry_hz, 1, 500);  // Redis's hz range
  const auto period = std::chrono::microseconds(1000000 / hz);
  std::unique_lock<std::mutex> l(bg_mu_);
  while (!bg_cv_.wait_for(l, period, [this] { return stopping_; })) {
    l.unlock();
    // Redis: 25% of the cycle's period at the default effort, up to 43% at effort 10.
    const int percent = internal::ExpiryCycleParams::ForEffort(expire_effort()).time_percent;
    RunExpiryCycle(period.count() * percent / 100);
    SaveExpiryStateWhenQuiet();
    l.lock();
  }
}

Store::Stats Store::Impl::GetStats() const {
  Stats st;
  st.expired_keys = expired_keys_.load(std::memory_order_relaxed);
  uint64_t v = 0;
  if (db_->GetIntProperty("rocksdb.total-sst-files-size", &v)) st.disk_bytes += int64_t(v);
  rocksdb::VectorLogPtr wals;
  if (db_->GetSortedWalFiles(wals).ok()) {
    for (const auto& w : wals) st.disk_bytes += static_cast<int64_t>(w->SizeFileBytes());
  }
  if (db_->GetIntProperty("rocksdb.cur-size-all-mem-tables", &v)) st.memtable_bytes = int64_t(v);
  st.last_sync_unix_ms = last_sync_unix_ms_.load(std::memory_order_relaxed);
  st.wal_syncs = wal_syncs_.load(std::memory_order_relaxed);
  st.expiry_scans = expiry_scans_.load(std::memory_order_relaxed);
  st.expired_stale = expired_stale_.load(std::memory_order_relaxed);
  st.expiry_time_cap_reached = expiry_time_cap_reached_.load(std::memory_order_relaxed);
  st.expire_cycle_ms = expire_cycle_us_.load(std::memory_order_relaxed) / 1000;
  st.idle_memory_releases = idle_memory_releases_.load(std::memory_order_relaxed);
  for (const char* running : {"rocksdb.num-running-flushes", "rocksdb.num-running-compactions"}) {
    if (db_->GetIntProperty(running, &v)) st.background_running += int64_t(v);
  }
  for (const char* pending : {"rocksdb.mem-table-flush-pending", "rocksdb.compaction-pending"}) {
    if (db_->GetAggregatedIntProperty(pending, &v)) st.background_pending += int64_t(v);
  }
  {
    std::lock_guard<std::mutex> l(write_error_mu_);
    st.writes_refused = writes_refused_.load(std::memory_order_relaxed);
    st.write_error = write_error_;
  }
  return st;
}

// ---- Reads shared by every command

Status Store::Impl::ReadRaw(std::string_view raw_key, rocksdb::PinnableSlice* value, bool* found,
                            const rocksdb::Snapshot* snapshot) {
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot;
  value->Reset();
  auto s = db_->Get(ro, db_->DefaultColumnFamily(), rocksdb::Slice(raw_key.data(), raw_key.size()),
                    value);
  *found = s.ok();
  if (s.ok() || s.IsNotFound()) return Status::Ok();
  return FromRocks(s);
}

Result<std::optional<internal::Entry>> Store::Impl::ReadEntry(const std::string& raw_key,
                                                              const rocksdb::Snapshot* snapshot) {
  rocksdb::PinnableSlice raw;
  bool found = false;
  Status s = ReadRaw(raw_key, &raw, &found, snapshot);
  if (!s.ok()) return s;
  if (!found) return std::optional<internal::Entry>();
  auto view = internal::DecodeValue(raw.ToStringView());
  if (!view) return Status::Corruption("invalid value encoding");
  return std::optional<internal::Entry>(
      internal::Entry{view->kind, view->expire_at_ms, std::string(view->payload)});
}

Result<std::optional<internal::Entry>> Store::Impl::ReadLive(const std::string& raw_key,
                                                             int64_t now_ms,
                                                             const rocksdb::Snapshot* snapshot) {
  auto e = ReadEntry(raw_key, snapshot);
  if (e.ok() && e->has_value() && internal::IsExpired((*e)->expire_at_ms, now_ms)) {
    return std::optional<internal::Entry>();
  }
  return e;
}

// ---- Store: thin forwarding

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::~Store() = default;

Result<std::unique_ptr<Store>> Store::Open(Options options) {
  auto impl = std::make_unique<Impl>(std::move(options));
  Status s = impl->Open();
  if (!s.ok()) return s;
  return std::unique_ptr<Store>(new Store(std::move(impl)));
}

const Clock& Store::clock() const { return impl_->clock(); }
Durability Store::durability() const { return impl_->durability(); }
void Store::set_durability(Durability d) { impl_->set_durability(d); }
void Store::set_max_value_bytes(int64_t bytes) { impl_->set_max_value_bytes(bytes); }
void Store::set_block_cache_bytes(size_t bytes) { impl_->set_block_cache_bytes(bytes); }
int Store::active_expire_effort() const { return impl_->expire_effort(); }
void Store::set_active_expire_effort(int effort) { impl_->set_expire_effort(effort); }
Status Store::SyncWal() { return impl_->SyncWal(); }
Store::Stats Store::GetStats() const { return impl_->GetStats(); }

uint64_t Store::DurabilityTicket() const { return impl_->DurabilityTicket(); }
void Store::PrefetchKeys(int db, std::span<const std::string_view> keys) const {
  constexpr size_t kMax = internal::KeyPrefetcher::kMaxKeys;
  static_assert(kMax == kPrefetchKeys);
  thread_local std::string raw[kMax];  // reused: no allocation once warm
  std::string_view views[kMax];
  const size_t n = std::min(keys.size(), kMax);
  internal::EncodeKeysAhead(db, keys.first(n), raw);
  for (size_t i = 0; i < n; ++i) views[i] = raw[i];
  impl_->key_prefetcher().Prefetch(views, n);
}
Status Store::FlushLog() { return impl_->FlushLog(); }
Status Store::FlushLog(uint64_t ticket) { return impl_->FlushLog(ticket); }
void Store::WhenDurable(uint64_t ticket, std::function<void(Status)> done) {
  impl_->WhenDurable(ticket, std::move(done));
}
Status Store::AwaitDurable(uint64_t ticket) { return impl_->AwaitDurable(ticket); }

}  // namespace sluice
