// Store::Impl: the engine's shared state (RocksDB handle, lock pool, durability policy,
// background threads) and the helpers every command file uses. Internal header.
//
// Files by job: store.cc (open/close, RocksDB options, durability, stats), txn.cc (locked
// read-modify-write transactions), expiry.cc (element compaction filter, active expiry cycle),
// keyspace_counts.cc (the per-db key counts behind DBSIZE),
// encoding.cc (key/value codec), lock_pool.cc, numeric.cc (Redis number rules), glob.cc,
// strings.cc, keys.cc, scan.cc (KEYS/SCAN/RANDOMKEY/DBSIZE/FLUSH), limiters.cc.
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

#include "encoding.h"
#include "expiry.h"
#include "expiry_state.h"
#include "group_commit.h"
#include "keyspace_counts.h"
#include "lock_pool.h"
#include "memtable.h"
#include "sluice/store.h"

namespace sluice {

namespace internal {

class Txn;

// The RocksDB options Store::Open uses (tuned for small values, with the expiry compaction
// filter driven by `clock`). Exposed so tests can drive RocksDB directly with the same setup.
rocksdb::Options MakeRocksOptions(const Options& options, std::shared_ptr<const Clock> clock);

Status FromRocks(const rocksdb::Status& s);  // OK stays OK; anything else is kIOError

// Server-side SCAN cursors: numeric ids mapping to (db, last key returned). Bounded: the
// oldest entries are evicted first, and an unknown id restarts the scan. Thread-safe.
class CursorTable {
 public:
  static constexpr size_t kCapacity = 1 << 16;
  struct Position {
    int db = 0;
    std::string last_key;  // user key; the next page starts strictly after it
    // Empty for SCAN; for an element scan (HSCAN, SSCAN, ...) the collection's raw key and
    // version, and last_key is an element.
    std::string owner;
  };
  uint64_t Add(Position pos);  // returns a fresh id in [1, 2^63)
  std::optional<Position> Find(uint64_t id) const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<uint64_t, Position> by_id_;
  std::deque<uint64_t> order_;  // insertion order, for eviction
  uint64_t next_salt_ = 0;
};

// Random 64-bit numbers from a thread-local PRNG seeded by std::random_device.
uint64_t RandomU64();

}  // namespace internal

class Store::Impl {
 public:
  explicit Impl(Options options);
  ~Impl();  // stops background threads, syncs the WAL, closes RocksDB
  Status Open();

  const Clock& clock() const { return *clock_; }
  const Options& options() const { return options_; }
  rocksdb::DB* db() const { return db_.get(); }
  // The column family of a collection element kind (collection.h). Valid while the store is open.
  rocksdb::ColumnFamilyHandle* element_cf(internal::ElementCf cf) const {
    return element_cfs_[static_cast<int>(cf)];
  }
  // A collection version never used before in this data dir (also across restarts and clock
  // steps: versions come from a persisted high-water mark). Thread-safe.
  uint64_t NewCollectionVersion();
  // The engine's bookkeeping column family (version mark, keyspace count records).
  rocksdb::ColumnFamilyHandle* meta_cf() const { return meta_cf_; }
  // Keys per database as committed (keyspace_counts.h); exact whenever no commit is in flight.
  internal::KeyspaceCounts& counts() { return counts_; }
  internal::LockPool& locks() { return locks_; }
  int64_t max_value_bytes() const { return max_value_bytes_.load(std::memory_order_relaxed); }
  void set_max_value_bytes(int64_t b) { max_value_bytes_.store(b, std::memory_order_relaxed); }
  Durability durability() const { return durability_.load(std::memory_order_relaxed); }
  void set_block_cache_bytes(size_t bytes);
  // active-expire-effort (ExpiryCycleParams), read by each expiry cycle. Thread-safe.
  int expire_effort() const { return expire_effort_.load(std::memory_order_relaxed); }
  void set_expire_effort(int effort) {
    expire_effort_.store(std::clamp(effort, internal::kMinExpireEffort, internal::kMaxExpireEffort),
                         std::memory_order_relaxed);
  }
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
               bool* applied = nullptr);
  Status SyncWal();   // flush + fsync now, through everything applied
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

  // Lock-free point reads. ReadEntry returns whatever is stored (expired or not);
  // ReadLive only a value live at now_ms. nullopt when missing; corrupt bytes: kCorruption.
  Result<std::optional<internal::Entry>> ReadEntry(const std::string& raw_key,
                                                   const rocksdb::Snapshot* snapshot = nullptr);
  Result<std::optional<internal::Entry>> ReadLive(const std::string& raw_key, int64_t now_ms,
                                                  const rocksdb::Snapshot* snapshot = nullptr);
  // The stored bytes of raw_key into *value (Reset first; reusing one PinnableSlice, a memtable
  // hit copies into its kept buffer and a block cache hit pins the block until the next Reset).
  // *found is false when missing. Non-OK only for a RocksDB error.
  Status ReadRaw(std::string_view raw_key, rocksdb::PinnableSlice* value, bool* found,
                 const rocksdb::Snapshot* snapshot = nullptr);

  // One cycle of the active expiry (expiry.cc); returns the keys it removed. Does nothing (not
  // even a seek) while no stored key can be due, so an idle server costs nothing.
  int64_t RunExpiryCycle(int64_t budget_us);
  // The end of a cycle that began at start with a budget to deadline: INFO's fields of the
  // cycle (Stats::expired_stale, expiry_time_cap_reached, expire_cycle_ms). Called by the expiry
  // thread (or a test driving cycles) only.
  void RecordExpiryCycle(std::chrono::steady_clock::time_point start,
                         std::chrono::steady_clock::time_point deadline, int64_t sampled,
                         int64_t expired, bool idle);
  // Removes, in one unit holding their stripes, the first c.n candidates (then sets c.n to 0):
  // keys read (at their seen_seq or later) as stored with the given expiry, expired at the time
  // they were checked, and not removed by the expiry cycle since. Returns how many it removed
  // (keyspace counts and Stats::expired_keys follow). A candidate that stays (rewritten since,
  // the clock went back, a read error) lowers *next_due_ms to when it should be looked at
  // again. The expiry thread's (expiry.cc; also called by tests); one caller at a time.
  int64_t RemoveExpired(internal::ExpiryCandidates& c, int64_t* next_due_ms);
  // Hands the expiry cycle keys[i] expiring at at_ms[i], i < n, written by one commit that set
  // the write mark `seq` on their stripes (ExpiryIntake): each is removed when due without a
  // walk. What the intake refuses (full) falls back to NoteExpiry. Thread-safe; called once
  // the write is visible, with its stripes still held (Txn::Commit).
  void HandExpiries(const std::string* const* keys, const int64_t* at_ms, size_t n, uint64_t seq) {
    size_t taken = expiry_intake_.Add(keys, at_ms, n, seq);
    for (; taken < n; ++taken) NoteExpiry(at_ms[taken]);
  }
  const internal::ExpiryDueList& expiry_due() const { return expiry_due_; }  // tests
  // Saves the expiry cycle's state for the next open (expiry_state.cc). The expiry thread's, or
  // the destructor's once that thread has stopped (closing: the final log sync covers it); also
  // called by tests, one caller at a time.
  void SaveExpiryState(bool closing);
  // The expiry thread saves the state once the store has been quiet for after_ms, at most once
  // every every_ms (defaults 30 s and 10 min; tests shorten them). Thread-safe.
  void SetQuietSaveTimes(int64_t after_ms, int64_t every_ms) {
    quiet_save_after_ms_.store(after_ms, std::memory_order_relaxed);
    quiet_save_every_ms_.store(every_ms, std::memory_order_relaxed);
  }
  const internal::KeyPrefetcher& key_prefetcher() const { return key_prefetcher_; }
  // Tells the expiry cycle that a key expiring at at_ms (ms since the epoch) is stored: it
  // wakes up by then. Lock-free; called once a write with an expiry is visible (Txn::Commit).
  // The exchange is sequentially consistent: it pairs with the reset at a pass's start.
  void NoteExpiry(int64_t at_ms) {
    int64_t due = next_expiry_due_ms_.load(std::memory_order_relaxed);
    while (at_ms < due && !next_expiry_due_ms_.compare_exchange_weak(due, at_ms)) {
    }
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
  bool writes_refused() const { return writes_refused_.load(std::memory_order_acquire); }
  Status WriteRefusal() const;  // the kCannotPersist status while latched

 private:
  void EverySecLoop();
  // The everysec thread's tick: counts quiet seconds (no new sequence number); once
  // Options::idle_flush_after_s is reached, flushes the memtables if one holds deletions, and a
  // few seconds later (then once a minute while still quiet) gives the heap's free pages back.
  void TidyIfIdle(uint64_t& last_seq, int& quiet_seconds);
  void FlushIfDeletionsHeld();
  void ReleaseFreeHeapMemory();
  void ExpiryLoop();
  Status FlushLogLocked();          // FlushLog with wal_gate_ held exclusively
  void TakeIntake(int64_t* later);  // the expiry thread's: ExpiryIntake -> expiry_due_
  // The expiry cycle's state across a restart (expiry_state.cc): saved by the expiry thread once
  // the store is quiet, restored by Open before any write.
  void SaveExpiryStateWhenQuiet();
  void RestoreExpiryState();
  void CollectDueKeys(std::vector<internal::ExpiryState::Key>* out);
  bool PassSees(const std::string& raw_key, uint64_t seq) const;
  void StopThreads();
  void NoteSynced();
  void TryResume();  // everysec thread, while latched
  // Sets *flush_at_open when the open should flush what it replays: a log holds a finding the
  // mode accepts (a torn tail, say), or more logs than an open keeps (kMaxLogsKeptAtOpen).
  Status CheckLogs(bool* flush_at_open);

  Options options_;
  std::shared_ptr<const Clock> clock_;
  // Reports WAL replay progress during Open (Options::on_progress). RocksDB keeps a pointer to
  // it, so it is declared before db_ and outlives the database.
  std::unique_ptr<rocksdb::WalFilter> recovery_progress_;
  // The keys' column family's memtables tell it which one is newest: it outlives db_.
  internal::KeyPrefetcher key_prefetcher_;
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
  // Loads the keyspace count records, or counts the keys once (keyspace_counts.cc).
  Status LoadKeyspaceCounts();
  void SkipPassWithoutExpiries();  // at open, after LoadKeyspaceCounts
  internal::KeyspaceCounts counts_;
  Status PersistVersionLimit(uint64_t limit);
  // Opens RocksDB with every column family, checking (and migrating) the data dir's on-disk
  // format first (format.cc).
  Status OpenRocks(const rocksdb::Options& rocks);
  Status MigrateFromFormat0(bool staged);
  std::unique_ptr<internal::GroupCommit> group_;  // after db_: stopped and destroyed first
  internal::LockPool locks_;
  internal::CursorTable cursors_;
  std::atomic<Durability> durability_;
  std::atomic<int64_t> max_value_bytes_;
  std::atomic<int64_t> expired_keys_{0};
  std::atomic<int64_t> last_sync_unix_ms_{0};
  std::atomic<int64_t> wal_syncs_{0};
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

  // The active expiry's state. A pass walks the keyspace over as many cycles as it takes; it
  // starts only when an expiry it may find is due: next_expiry_due_ms_ is the minimum of the
  // expiries a pass saw and did not keep in expiry_due_ (which removes those when due), and of
  // every expiry written since the last pass began (NoteExpiry). 0 at open: the first pass runs
  // at once, unless the last close saved the state (RestoreExpiryState) or no stored key has an
  // expiry (SkipPassWithoutExpiries). The rest is the expiry thread's own.
  std::atomic<int64_t> next_expiry_due_ms_{0};
  std::atomic<int64_t> expiry_scans_{0};
  std::atomic<int> expire_effort_{1};                // set_expire_effort
  std::atomic<int64_t> expire_cycle_us_{0};          // time spent in cycles
  std::atomic<int64_t> expiry_time_cap_reached_{0};  // cycles that used their whole budget
  std::atomic<double> expired_stale_{0.0};           // written by the expiry thread only
  std::atomic<int64_t> idle_memory_releases_{0};
  std::string expiry_cursor_;  // encoded key where the pass resumes
  std::string expiry_done_;    // the last key the pass handled (handled once)
  bool expiry_pass_active_ = false;
  bool opened_ = false;  // Open succeeded: the expiry state is worth saving at close
  // The sequence number the last saved expiry state named (written by the expiry thread; the
  // everysec thread reads it: that write does not end a quiet spell), and the expiry thread's
  // view of the latest sequence number: since when it has not moved (SaveExpiryStateWhenQuiet).
  std::atomic<uint64_t> expiry_state_seq_{0};
  uint64_t quiet_seq_ = 0;
  std::chrono::steady_clock::time_point quiet_since_;
  std::optional<std::chrono::steady_clock::time_point> last_quiet_save_;
  std::atomic<int64_t> quiet_save_after_ms_{30'000};
  std::atomic<int64_t> quiet_save_every_ms_{600'000};
  internal::ExpiryCandidates expiry_batch_;  // found by the cycle, not yet removed
  internal::ExpiryDueList expiry_due_;       // written or seen by a pass, not yet due
  // The current or last pass's walk, cycle by cycle: the first key each cycle read, and the
  // sequence its iterator read at (or after). Cleared when a pass starts.
  struct PassSegment {
    std::string start;
    uint64_t seen_seq;
  };
  std::vector<PassSegment> pass_segments_;
  std::vector<internal::ExpiryIntake::Entry> intake_drained_;  // TakeIntake's scratch
  std::vector<size_t> reread_removed_;                         // RemoveExpired's scratch
  std::vector<size_t> removal_order_;                          // RemoveExpired's scratch
  internal::ExpiryIntake expiry_intake_;  // thread-safe: written expiries, not yet taken

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
