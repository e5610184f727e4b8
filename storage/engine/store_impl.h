// storage/engine: the engine the data types are built on: RocksDB options and open, durability
// (the log, group commit, WAL checks), the memtable, units of work and their locks, keyspace
// counts and expiry. Never includes storage/types or storage/api.
//
// This header: Store::Impl, the engine's shared state (RocksDB handle, lock pool, durability
// policy, background threads) and the helpers every command file uses. Internal header.
//
// Files by job: store_open.cc (RocksDB options, open/close), store_durability.cc (writes, the
// log's flush and fsync, write errors, the everysec thread), store_background.cc (idle tidying,
// the expiry thread, stats, shared reads), format.cc (on-disk format, column families, collection
// versions), txn.cc and txn_commit.cc (units of work), transaction.cc (Store::Transaction's
// locks and commit, commit groups, commit observers), expiry_cycle.cc and expiry_state.cc (the
// active expiry, behind EngineHost: engine_host.h), keyspace_counts.cc (DBSIZE's counts),
// encoding.cc (key/value codec), collection_layout.cc, lock_pool.cc, cursor_table.cc.
//
// Concurrency model: every write holds the stripes of the keys it touches (LockPool) for its
// whole read -> compute -> WriteBatch; plain reads take no lock (a RocksDB read or snapshot is
// already consistent). FLUSHDB/FLUSHALL take every stripe.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/wal_filter.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cursor_table.h"
#include "element_versions.h"
#include "encoding.h"
#include "engine_host.h"
#include "expiry.h"
#include "expiry_cycle.h"
#include "group_commit.h"
#include "iterator_pool.h"
#include "keyspace_counts.h"
#include "lock_pool.h"
#include "memtable.h"
#include "record_cache.h"
#include "sluice/store.h"

namespace sluice {

namespace internal {

class Txn;

// The RocksDB options Store::Open uses (tuned for small values, with the expiry compaction
// filter driven by `clock`). Exposed so tests can drive RocksDB directly with the same setup.
rocksdb::Options MakeRocksOptions(const Options& options, std::shared_ptr<const Clock> clock);

}  // namespace internal

class Store::Impl final : public internal::EngineHost {
 public:
  explicit Impl(Options options);
  ~Impl();  // stops background threads, syncs the WAL, closes RocksDB
  Status Open();

  const Clock& clock() const override { return *clock_; }
  const Options& options() const override { return options_; }
  rocksdb::DB* db() const override { return db_.get(); }
  // The column family of a collection element kind (collection_layout.h). Valid while the store is
  // open.
  rocksdb::ColumnFamilyHandle* element_cf(internal::ElementCf cf) const {
    return element_cfs_[static_cast<int>(cf)];
  }
  // A collection version never used before in this data dir (also across restarts and clock
  // steps: versions come from a persisted high-water mark). Thread-safe.
  uint64_t NewCollectionVersion();
  // The engine's bookkeeping column family (version mark, keyspace count records).
  rocksdb::ColumnFamilyHandle* meta_cf() const override { return meta_cf_; }
  // Keys per database as committed (keyspace_counts.h); exact whenever no commit is in flight.
  internal::KeyspaceCounts& counts() { return counts_; }
  internal::LockPool& locks() override { return locks_; }
  internal::RecordCache& record_cache() { return record_cache_; }
  // The units' bounded iterators, reused (Txn::NewIterator).
  internal::IteratorPool& iterators() { return iterators_; }
  // A unit's read-ahead of a run of records (Txn::GetRawInRun): one filled, or one read served
  // from it. Thread-safe (relaxed counters, for Stats).
  void CountReadAhead(bool filled) {
    (filled ? read_ahead_fills_ : read_ahead_hits_).fetch_add(1, std::memory_order_relaxed);
  }
  // The record cache's slots (txn.cc): the lock stripes, the element versions' buckets, and the
  // collection keys' stripes again (the element reads' first gate).
  static constexpr size_t kRecordCacheSlots =
      2 * internal::LockPool::kStripes + internal::ElementVersions::kBuckets;
  internal::ElementVersions& element_versions() { return element_versions_; }
  Store::Impl& unit_engine() override { return *this; }
  int64_t max_value_bytes() const { return max_value_bytes_.load(std::memory_order_relaxed); }
  void set_max_value_bytes(int64_t b) { max_value_bytes_.store(b, std::memory_order_relaxed); }
  int64_t hll_sparse_max_bytes() const {
    return hll_sparse_max_bytes_.load(std::memory_order_relaxed);
  }
  void set_hll_sparse_max_bytes(int64_t b) {
    hll_sparse_max_bytes_.store(b, std::memory_order_relaxed);
  }
  Durability durability() const { return durability_.load(std::memory_order_relaxed); }
  void set_block_cache_bytes(size_t bytes);
  // active-expire-effort (ExpiryCycleParams), read by each expiry cycle. Thread-safe.
  int expire_effort() const { return expiry_.expire_effort(); }
  void set_expire_effort(int effort) { expiry_.set_expire_effort(effort); }
  // Store::set_keep_expired: reads leave expired values stored, the expiry cycle pauses.
  bool keep_expired() const { return expiry_.paused(); }
  void set_keep_expired(bool on) { expiry_.set_paused(on); }
  void set_keep_expired_paused(bool on) { expiry_.set_held(on); }
  void set_durability(Durability d) { durability_.store(d, std::memory_order_relaxed); }

  // Applies `batch` atomically following the durability policy (see store.h). Callers hold
  // the stripes of every key the batch touches. An empty batch is not written. durable=false
  // never fsyncs (for removing expired keys: losing such a removal changes nothing visible).
  // RocksDB runs with manual_wal_flush, so db()->Write() only appends to the WAL's buffer:
  // unless `defer` (the caller then makes it durable: FlushLog / WhenDurable), this hands it to
  // the OS and, under kAlways, waits for the group fsync through it before returning. Nothing
  // else may write to db() directly. *applied (when given) tells whether the batch reached the
  // memtable (visible to readers), which it does even when a later flush or fsync fails.
  Status Write(rocksdb::WriteBatch* batch, bool durable = true, bool defer = false,
               bool* applied = nullptr) override;
  Status SyncWal();                           // flush + fsync now, through everything applied
  Status Checkpoint(const std::string& dir);  // Store::Checkpoint (checkpoint.cc)
  // Marks `dir` (a checkpoint) as holding the current on-disk format (format.cc).
  static Status WriteCurrentFormat(const std::string& dir);
  Status FlushLog();  // hands the WAL's buffered bytes to the OS (no fsync)
  // The same, unless a flush already handed over every record through `ticket` (a sequence
  // number: DurabilityTicket() taken after the writes to cover). Thread-safe.
  Status FlushLog(uint64_t ticket);
  uint64_t DurabilityTicket() const { return db_->GetLatestSequenceNumber(); }
  void WhenDurable(uint64_t ticket, std::function<void(Status)> done);
  Status AwaitDurable(uint64_t ticket);
  void AddExpired(int64_t n) { expired_keys_.fetch_add(n, std::memory_order_relaxed); }

  // Commit observers (transaction.cc). NotifyCommit tells each of them what `txn` wrote; called
  // by Txn::Commit after a successful write, on the committing thread, with its locks held.
  Status AddCommitObserver(CommitObserver* observer);
  void NotifyCommit(const internal::Txn& txn);
  // Tells each observer the keys whose expired values `txn` removed (CommitObserver::OnExpired).
  void NotifyExpired(const internal::Txn& txn);

  // Lock-free point reads. ReadEntry returns whatever is stored (expired or not);
  // ReadLive only a value live at now_ms. nullopt when missing; corrupt bytes: kCorruption.
  Result<std::optional<internal::Entry>> ReadEntry(const std::string& raw_key,
                                                   const rocksdb::Snapshot* snapshot = nullptr);
  Result<std::optional<internal::Entry>> ReadLive(const std::string& raw_key, int64_t now_ms,
                                                  const rocksdb::Snapshot* snapshot = nullptr);
  // The stored bytes of key in family cf into *value (Reset first; reusing one PinnableSlice, a
  // memtable hit copies into its kept buffer and a block cache hit pins the block until the next
  // Reset), at the snapshot (nullptr: the latest state). *found is false when missing. The
  // family's newest memtable answers first when it can (ReadNewest, memtable.h); *deep (when
  // given): RocksDB's read answered instead. Non-OK only for a RocksDB error.
  Status ReadPoint(rocksdb::ColumnFamilyHandle* cf, std::string_view key,
                   rocksdb::PinnableSlice* value, bool* found,
                   const rocksdb::Snapshot* snapshot = nullptr, bool* deep = nullptr);
  // ReadPoint in the keys' (default) family.
  Status ReadRaw(std::string_view raw_key, rocksdb::PinnableSlice* value, bool* found,
                 const rocksdb::Snapshot* snapshot = nullptr, bool* deep = nullptr) {
    return ReadPoint(db_->DefaultColumnFamily(), raw_key, value, found, snapshot, deep);
  }

  // The active expiry (expiry_cycle.h), which these forward to; see there.
  internal::ExpiryCycle& expiry() { return expiry_; }
  int64_t RunExpiryCycle(int64_t budget_us) { return expiry_.Run(budget_us); }
  void RecordExpiryCycle(std::chrono::steady_clock::time_point start,
                         std::chrono::steady_clock::time_point deadline, int64_t sampled,
                         int64_t expired, bool idle) {
    expiry_.RecordCycle(start, deadline, sampled, expired, idle);
  }
  int64_t RemoveExpired(internal::ExpiryCandidates& c, int64_t* next_due_ms) {
    return expiry_.RemoveExpired(c, next_due_ms);
  }
  void HandExpiries(const std::string* const* keys, const int64_t* at_ms, size_t n, uint64_t seq) {
    expiry_.HandExpiries(keys, at_ms, n, seq);
  }
  const internal::ExpiryDueList& expiry_due() const { return expiry_.expiry_due(); }  // tests
  void SaveExpiryState(bool closing) { expiry_.SaveState(closing); }
  void SetQuietSaveTimes(int64_t after_ms, int64_t every_ms) {
    expiry_.SetQuietSaveTimes(after_ms, every_ms);
  }
  void NoteExpiry(int64_t at_ms) { expiry_.NoteExpiry(at_ms); }
  const internal::NewestMemTable& keys_memtable() const { return keys_memtable_; }
  // Warms the element memtables for the batch's element writes (write_prefetch.h).
  void PrefetchElementWrites(const rocksdb::WriteBatch& batch) const;
  // The same for an element column family's memtables (PrefetchElements, sluice/prefetch.h).
  const internal::NewestMemTable& element_memtable(internal::ElementCf cf) const {
    return element_memtables_[static_cast<int>(cf)];
  }

  Store::Stats GetStats() const;

  internal::CursorTable& cursors() { return cursors_; }

  // Write errors (disk full, I/O errors). The first failure latches the store read-only: Write
  // and FlushLog then fail with kCannotPersist without touching the write-ahead log, and reads
  // keep working. RocksDB's error recovery (a flush to a new log once space returns, tried by
  // RocksDB itself and by the everysec thread) clears the latch. Thread-safe.
  // Latches (logging once) and returns the kCannotPersist status for `cause`.
  Status NoteWriteError(const Status& cause);
  void ClearWriteError();
  // The block cache's unreferenced entries dropped when it holds more than four times the live
  // table files' bytes: blocks of files deleted since (a mass expiry, compactions) that would
  // otherwise sit in the RSS until evicted. Returns the bytes dropped. Called on idle
  // (TidyIfIdle's release), where a cold cache costs nothing until the next reads.
  size_t DropDeadCacheBlocks();
  bool writes_refused() const override { return writes_refused_.load(std::memory_order_acquire); }
  Status WriteRefusal() const;  // the kCannotPersist status while latched

 private:
  // The newest memtable of cf when it is the keys' or an element family (nullptr otherwise).
  const internal::NewestMemTable* NewestMemTableOf(const rocksdb::ColumnFamilyHandle* cf) const;
  // A point read of key in the family `newest` follows that its newest memtable answers alone
  // (memtable.h, ReadNewest), at the snapshot (nullptr: the latest state), into *value (a
  // PinSelf, as RocksDB gives a memtable's value) and *found; false when RocksDB must answer.
  bool ReadFromNewestMemTable(const internal::NewestMemTable& newest, std::string_view key,
                              const rocksdb::Snapshot* snapshot, rocksdb::PinnableSlice* value,
                              bool* found) const;
  void EverySecLoop();
  // The everysec thread's tick: counts quiet seconds (no new sequence number); once
  // Options::idle_flush_after_s is reached, flushes the memtables if one holds deletions, and a
  // few seconds later (then once a minute while still quiet) gives the heap's free pages back.
  void TidyIfIdle(uint64_t& last_seq, int& quiet_seconds);
  void FlushIfDeletionsHeld();
  void ReleaseFreeHeapMemory();
  void ExpiryLoop();
  Status FlushLogLocked();  // FlushLog with wal_gate_ held exclusively
  template <typename F>
  void ForEachNewestMemTable(F f) {
    f(keys_memtable_);
    for (internal::NewestMemTable& m : element_memtables_) f(m);
  }
  void StopThreads();
  void NoteSynced();
  void TryResume();  // everysec thread, while latched
  // Sets *flush_at_open when the open should flush what it replays: a log holds a finding the
  // mode accepts (a torn tail, say), or more logs than an open keeps (kMaxLogsKeptAtOpen).
  Status CheckLogs(bool* flush_at_open);
  // After the open's replay: distrusts each newest memtable a range deletion may have gone to.
  void DistrustReplayedRangeDeletes();

  Options options_;
  std::shared_ptr<const Clock> clock_;
  // Watches the WAL replay during Open (progress for Options::on_progress, range deletions for
  // the newest memtables). RocksDB keeps a pointer to it, so it is declared before db_ and
  // outlives the database.
  std::unique_ptr<rocksdb::WalFilter> replay_watch_;
  // The keys' column family's memtables tell it which one is newest: it outlives db_.
  internal::NewestMemTable keys_memtable_;
  internal::NewestMemTable element_memtables_[internal::kNumElementCfs];
  std::unique_ptr<rocksdb::DB> db_;
  // Every column family handle Open made (default first); destroyed before db_ closes.
  std::vector<rocksdb::ColumnFamilyHandle*> cf_handles_;
  rocksdb::ColumnFamilyHandle* element_cfs_[internal::kNumElementCfs] = {};
  rocksdb::ColumnFamilyHandle* meta_cf_ = nullptr;  // engine bookkeeping (version mark)
  std::shared_ptr<internal::ElementFilterFactory> element_filter_;
  // Collection versions: next_version_ is handed out; version_limit_ is the persisted mark
  // below which versions may be used (raised, and persisted first, under version_mu_).
  std::atomic<uint64_t> next_version_{0};
  std::atomic<uint64_t> version_limit_{0};
  std::mutex version_mu_;
  Status InitVersions();
  internal::KeyspaceCounts counts_;
  Status PersistVersionLimit(uint64_t limit);

 public:
  // The data dir's mode marker in the meta column family (format.cc).
  Result<DataDirMode> ReadDataDirMode();
  Status WriteDataDirMode(DataDirMode mode);

 private:
  // Checks (and on a new data dir records) options_.mode against the marker.
  Status CheckDataDirMode();
  bool new_data_dir_ = false;  // OpenRocks found no database: this Open creates it
  // Opens RocksDB with every column family, checking (and migrating) the data dir's on-disk
  // format first (format.cc).
  Status OpenRocks(const rocksdb::Options& rocks);
  Status MigrateFromFormat0(bool staged);
  std::unique_ptr<internal::GroupCommit> group_;  // after db_: stopped and destroyed first
  internal::LockPool locks_;
  internal::RecordCache record_cache_;  // kRecordCacheSlots
  internal::IteratorPool iterators_;    // cleared before the column families' handles go
  internal::ElementVersions element_versions_;
  internal::CursorTable cursors_;
  std::atomic<Durability> durability_;
  std::atomic<int64_t> max_value_bytes_;
  std::atomic<int64_t> hll_sparse_max_bytes_;
  std::atomic<int64_t> expired_keys_{0};
  std::atomic<int64_t> last_sync_unix_ms_{0};
  std::atomic<int64_t> wal_syncs_{0};
  std::atomic<int64_t> read_ahead_fills_{0};
  std::atomic<int64_t> read_ahead_hits_{0};
  // The latest sequence number an fsync covered (kEverySec's trigger: the syncer compares it
  // with the latest; writes touch no shared flag, which every core would fight over).
  std::atomic<uint64_t> synced_through_{0};
  std::atomic<bool> writes_refused_{false};
  // Debian's librocksdb asserts (aborts) when a log writer that saw an error is flushed again.
  // So a write failure is latched (writes_refused_) before anyone flushes the log after it:
  // writes hold this shared, the log's flush to the OS holds it exclusively and checks the
  // latch. (A release librocksdb only reports the error; the gate costs little either way.)
  std::shared_mutex wal_gate_;
  // Every record through this sequence number has been handed to the OS (FlushLogLocked).
  std::atomic<uint64_t> flushed_through_{0};
  mutable std::mutex write_error_mu_;
  std::string write_error_;  // guarded by write_error_mu_; why writes are refused
  std::shared_ptr<rocksdb::EventListener> error_listener_;

  std::atomic<int64_t> idle_memory_releases_{0};
  bool opened_ = false;  // Open succeeded: the expiry state is worth saving at close
  internal::ExpiryCycle expiry_{*this};  // the active expiry's state; its thread is expiry_thread_

  // Registered commit observers: slots filled once, in order, under observer_mu_; read without
  // a lock (observer_count_ is published after its slot).
  std::mutex observer_mu_;
  std::atomic<CommitObserver*> observers_[Store::kMaxCommitObservers] = {};
  std::atomic<int> observer_count_{0};

  std::mutex bg_mu_;
  std::condition_variable bg_cv_;
  bool stopping_ = false;  // guarded by bg_mu_
  std::thread everysec_thread_;
  std::thread expiry_thread_;
};

}  // namespace sluice
