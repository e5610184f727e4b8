// Txn: the transaction context every engine operation runs on. It carries one unit of work's
// time (one `now`, fixed when the unit starts, like Redis's command time), its write batch (a
// IndexedBatch (indexed_batch.h), so the unit reads its own writes, point reads and iterators
// alike), the expired values its reads found, and optionally its key locks (a LockSet owned by
// a Store::Transaction). Commit writes the whole unit as one RocksDB write and then tells the
// store's commit observers which keys it wrote.
//
// Locks: a Txn never takes a lock itself. With no LockSet (internal callers such as the expiry
// cycle, which hold their stripes through LockPool guards) the caller guarantees it holds the
// stripe of every key it writes. A Store::Transaction passes its LockSet, and its operations
// Claim() their keys before touching them. A commit with a LockSet sets the write mark of every
// stripe it holds (lock_pool.h); one without (the expiry cycle's) sets none, which is sound only
// for removals of keys the cycle's iterator has passed (expiry_cycle.cc): keep it that way.
//
// Repeats: a read of a key the unit holds the lock of is remembered until the unit's next write
// or read of another key, so reading it again (GET then PTTL) costs nothing; and the last Put
// of the default column family waits outside the batch until something needs the batch whole,
// so rewriting that key (INCRBY then EXPIRE, LPUSH then LTRIM of a list's metadata) replaces it
// and the unit stages one record for the key (one memtable insert, one log record).
//
// Allocation: the batch, the read buffer and the key lists are reusable scratch taken from a
// per-thread free list when the Txn starts and given back when it ends, so a Txn in steady state
// allocates nothing itself. Not thread-safe (one unit, one thread at a time).
#pragma once

#include <rocksdb/iterator.h>
#include <rocksdb/slice.h>
#include <rocksdb/snapshot.h>
#include <rocksdb/write_batch.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "encoding.h"
#include "keyspace_counts.h"
#include "lock_pool.h"
#include "scratch.h"
#include "sluice/store.h"

namespace sluice::internal {

// The time of a unit, in ns since the Unix epoch (limiters need ns; expiry works in ms).
struct UnitTime {
  int64_t ns;
};

class Txn {
 public:
  Txn(Store::Impl& impl, UnitTime now);
  Txn(Store::Impl& impl, int64_t now_ms) : Txn(impl, UnitTime{now_ms * 1'000'000}) {}
  explicit Txn(Store::Impl& impl);  // at the engine clock's now
  ~Txn();
  Txn(const Txn&) = delete;
  Txn& operator=(const Txn&) = delete;

  Store::Impl& impl() const { return impl_; }
  int64_t now_ms() const { return now_ms_; }
  int64_t now_ns() const { return now_ns_; }
  // Redis's checkAlreadyExpired: an expiry at or before now deletes the key at once.
  bool AlreadyExpired(int64_t at_ms) const { return at_ms <= now_ms_; }

  // ---- Locks (see the header comment).
  void set_locks(LockSet* locks, bool lock_reads) {
    locks_ = locks;
    lock_reads_ = lock_reads;
  }
  // Makes sure the unit may touch raw_key: OK when the caller manages locks, when the key's
  // stripe is held, or when it was free and is now held; kLockConflict when another unit holds
  // it. Reads are claimed only in units that isolate their reads (EXEC, scripts).
  Status ClaimWrite(std::string_view raw_key);
  // For a claim of every stripe that the unit does not hold (they cannot be try-locked).
  Status ClaimAllFailed() {
    conflicted_ = true;
    return Status::LockConflict();
  }
  Status ClaimRead(std::string_view raw_key) {
    return lock_reads_ ? ClaimWrite(raw_key) : Status::Ok();
  }
  bool holds_all_locks() const { return locks_ != nullptr && locks_->holds_all(); }
  // A bulk load's promise (storage/api/bulk_load.cc): no key this unit writes is stored before
  // the unit, so Commit counts each written key as new without the point read of what it
  // replaces (one memtable/SST lookup per key). Breaking it makes DBSIZE wrong; the caller must
  // know the keys are new (a store it emptied, keys from an RDB file, which holds each key once).
  void set_keys_new(bool keys_new) { keys_new_ = keys_new; }
  // Whether a claim failed since the unit started or was last rolled back: the unit's work is
  // incomplete; run it again declaring more keys (or every stripe).
  bool conflicted() const { return conflicted_; }

  // While it lives, the Txn's reads of stored data use one RocksDB snapshot, so that several
  // reads in a unit that does not lock its reads see one state (MGET, EXISTS). A no-op in units
  // whose reads are locked (they are isolated already). Not nestable.
  // The snapshot is kept when it ends and used again by the Txn's next one (a commit group's
  // next reader) as long as no write was published since: a snapshot at the latest sequence
  // number reads what a new one would. Each costs two calls under RocksDB's mutex (8% of the
  // server's samples under ZRANGE at pipeline 16); a commit group of readers takes one per
  // published write instead of one per command. The kept one goes at Commit and with the Txn, so
  // it holds old versions from compaction for one commit group at most.
  class SnapshotReads {
   public:
    explicit SnapshotReads(Txn& txn);
    // For the data of one key (its value, or a collection's metadata and elements) whose first
    // read is ReadView of that key: the snapshot is taken at that read, and not at all when the
    // unit holds the key's stripe, as a script or a commit group does (nothing can change the
    // key or its elements meanwhile; a snapshot costs two RocksDB calls under its mutex).
    struct OneKey {};
    SnapshotReads(Txn& txn, OneKey);
    ~SnapshotReads();
    SnapshotReads(const SnapshotReads&) = delete;
    SnapshotReads& operator=(const SnapshotReads&) = delete;

   private:
    Txn& txn_;
  };

  // ---- The default column family (keys and their values with the type/expiry header).
  // The live value of raw_key, or nullopt when missing or expired. An expired value found
  // here is deleted by Commit (and counted in Stats::expired_keys) unless this txn writes
  // the key itself; a unit that does not hold the key's lock takes it first if it is free.
  Result<std::optional<Entry>> Read(const std::string& raw_key);
  // Read without copying: the view is valid until the next read of this Txn or its end.
  Result<std::optional<EntryView>> ReadView(const std::string& raw_key);
  // Removes raw_key without reading it, as if Read had found it expired: Commit deletes it and
  // counts it out (one key with an expiry). For the expiry cycle, which knows without a read
  // that raw_key is stored with an expiry at or before now_ms() (lock_pool.h, write marks).
  // The caller holds its stripe; the unit has not read, written or removed raw_key.
  void RemoveExpired(std::string_view raw_key);
  // raw_encoding: Entry's (a string edited in place).
  void Put(const std::string& raw_key, ValueKind kind, int64_t expire_at_ms,
           std::string_view payload, bool raw_encoding = false);
  void Put(const std::string& raw_key, const Entry& e) {
    Put(raw_key, e.kind, e.expire_at_ms, e.payload, e.raw_encoding);
  }
  // A value read (ReadView), rewritten as the view says (another expiry, say): the payload is
  // copied before anything reads again.
  void Put(const std::string& raw_key, const EntryView& v) {
    Put(raw_key, v.kind, v.expire_at_ms, v.payload, v.raw_encoding);
  }
  void Delete(const std::string& raw_key);
  // Records raw_key as modified without writing it (for commit observers, e.g. WATCH): for
  // operations that change a key only through entries stored elsewhere.
  void Touch(std::string_view raw_key);
  // Deletes every key of database `db` (FLUSHDB). Reads and iterators of this unit no longer
  // see the db's stored keys, only what the unit writes there afterwards.
  void DeleteDb(int db);

  // ---- Any column family, raw bytes, through the unit's batch (reads see its writes).
  // owner_raw_key: the collection key an element record of cf belongs to; only with it is the
  // record read through the record cache (element_versions.h).
  Status GetRaw(rocksdb::ColumnFamilyHandle* cf, std::string_view key, std::string* value,
                bool* found, std::string_view owner_raw_key = {});
  // A run of element keys that a unit reads one after another, each once (a list's pops from
  // one end): the keys prefix + suffix, for suffixes in [lower_suffix, upper_suffix), read
  // upward, or downward when `descending`.
  struct KeyRun {
    std::string_view prefix;
    std::string_view lower_suffix;
    std::string_view upper_suffix;
    bool descending = false;
  };
  // GetRaw of a key of `run`. When the stored record comes from a table file and the unit
  // holds owner_raw_key's lock, the run's next stored records are read with it, by one
  // iterator, and the unit's next reads of the run are served from them until it commits
  // (read_ahead.h). The unit's own writes still come first.
  Status GetRawInRun(rocksdb::ColumnFamilyHandle* cf, std::string_view key, const KeyRun& run,
                     std::string* value, bool* found, std::string_view owner_raw_key);
  void PutRaw(rocksdb::ColumnFamilyHandle* cf, std::string_view key, std::string_view value);
  // PutRaw of a record the unit (or its commit group's next members) is likely to write again
  // (a stream's node, a consumer group): held pending (pending_puts.h), so only its last
  // version reaches the batch.
  void PutRawRewritable(rocksdb::ColumnFamilyHandle* cf, std::string_view key,
                        std::string_view value);
  void DeleteRaw(rocksdb::ColumnFamilyHandle* cf, std::string_view key);
  // DeleteRaw as RocksDB's SingleDelete, for a key whose writers keep its contract: the key is
  // written (PutRaw) only when it is absent, and so at most once between two deletions (a sorted
  // set's score element: a new score is a new key). A flush or compaction then drops the key's
  // Put and deletion together instead of keeping a deletion marker, and the memtable's iterator
  // steps over such a pair without showing it (memtable_iterator.h), so scans do not pay for
  // them. Breaking the contract can show an erased value again.
  void EraseOnceRaw(rocksdb::ColumnFamilyHandle* cf, std::string_view key);
  // An iterator over [lower, upper) of cf: the unit's writes merged over the database.
  // `lower`/`upper` are copied. Valid until this Txn ends; do not write through the Txn while
  // iterating (the merged view would not follow).
  std::unique_ptr<rocksdb::Iterator> NewIterator(rocksdb::ColumnFamilyHandle* cf,
                                                 std::string_view lower, std::string_view upper);

  // How many expired values Read found (Commit removes them).
  int64_t expired_found() const;
  // Raw keys this unit wrote, touched or deleted so far, and databases it emptied.
  size_t written_count() const;
  std::string_view written_key(size_t i) const;
  // The first written_key of the current group member (0 outside a group).
  size_t written_since_mark() const;
  // The keys whose expired values Commit removes (expired_found() of them).
  std::string_view expired_key(size_t i) const;
  uint32_t flushed_dbs() const;  // bit d: database d was emptied
  // Writes the batch as one RocksDB write; durable=false skips kAlways's fsync (see
  // Store::Impl::Write). Once the write is applied: sets the write marks of the unit's stripes
  // and tells the expiry cycle the earliest expiry written (ExpiryCycle::NoteExpiry). Then
  // notifies the commit observers (if anything was written) and resets the unit to empty, so it
  // can go on (a new batch, same time and locks).
  Status Commit(bool durable = true, bool defer_durability = false);
  // Drops everything staged so far (same time and locks).
  void Rollback();

  // ---- Marks: the units of a Store::CommitGroup share one Txn. Each member starts at a mark
  // (Retime + SetMark); Rollback/RollbackToMark drop only what was staged since it, and
  // AdvanceMark keeps the member's writes for the group's one Commit.
  // Gives the next member its own time (a unit's time never goes back).
  void Retime(UnitTime now);
  void SetMark();
  void AdvanceMark();
  void RollbackToMark();
  bool StagedSinceMark() const;
  // Bytes staged in the batch (bounds a group's write).
  size_t staged_bytes() const;

  // Database db's key counts as this unit would leave them: the committed counts plus what the
  // unit has staged (for DBSIZE inside MULTI). Reads the stored state of written keys the unit
  // did not read under their lock; non-OK only for a read error.
  Result<KeyCounts> CountsWithStaged(int db);

  // What committing the staged writes changes in the keyspace counts: per database, a delta, or
  // (absolute) the new value of a database the unit emptied.
  struct CountChanges {
    KeyCounts delta[kNumDatabases];
    uint32_t changed = 0;   // bit d: delta[d] is non-zero or absolute
    uint32_t absolute = 0;  // bit d: db d was emptied; delta[d] is its new value
  };

  struct Scratch;  // txn_scratch.h

 private:
  bool DbFlushed(std::string_view raw_key) const;
  // Whether this unit may delete raw_key's expired value: only under the key's lock.
  bool MayRemoveExpired(std::string_view raw_key) const {
    return locks_ == nullptr || locks_->Holds(raw_key);
  }
  void NoteWritten(std::string_view raw_key, uint8_t op, int64_t expire_at_ms = kNoExpiry);
  void HandExpiry(const std::string& raw_key, int64_t at_ms);  // see ComputeCountChanges
  // For a read without the key's lock that found it expired: try-locks the key's stripe (never
  // blocking) and re-reads; true when the unit now holds it and it is still expired, so Commit
  // removes it (Redis's lazy expiry, also for read-only commands).
  bool TakeExpired(const std::string& raw_key);
  // What is stored for raw_key in the default family, into *read: from the store's record cache
  // when the key's stripe's write version says nothing was written since the cache took the
  // record (record_cache.h), else from RocksDB, caching a record found in a table file.
  Status ReadStored(const std::string& raw_key, rocksdb::PinnableSlice* read, bool* found);
  // Remembers the stored state of a key read under its lock (v == nullptr: missing), so Commit
  // knows what a write replaces without reading it again. Only for reads under the key's lock:
  // an unlocked one may change before a write.
  void NoteRead(std::string_view raw_key, const EntryView* v);
  // The counts a stored key contributes (before this unit's writes): from a read noted before
  // the key's first write (slot `first`), else read now. `hash`: the key's KeyList hash.
  Status StoredCounts(const std::string& raw_key, uint64_t hash, size_t first, KeyCounts* out,
                      int64_t* expire_at_ms);
  // Whether the unit wrote or touched raw_key; valid right after ComputeCountChanges.
  bool Wrote(std::string_view raw_key) const;
  Status ComputeCountChanges(CountChanges* c);
  void StageCountChanges(const CountChanges& c);
  void ApplyCountChanges(const CountChanges& c);
  void DropMark();
  Result<std::optional<EntryView>> DecodeRead(const std::string& raw_key, bool note, bool locked);
  // GetRaw's parts: the unit's own staged record of key (true: *found and *value say what it
  // is), and the stored one (*from_table: read from a table file, not a memtable or a cache).
  bool GetStaged(rocksdb::ColumnFamilyHandle* cf, std::string_view key, std::string* value,
                 bool* found);
  Status GetStored(rocksdb::ColumnFamilyHandle* cf, std::string_view key, std::string* value,
                   bool* found, std::string_view owner_raw_key, bool* from_table);
  // Reads the run's stored records from key on into the unit's read-ahead (GetRawInRun).
  void FillReadAhead(rocksdb::ColumnFamilyHandle* cf, std::string_view key, const KeyRun& run);
  void FlushPending();  // puts the pending Put (see Scratch) into the batch
  void TakeSnapshot();  // the kept one if no write was published since it was taken
  void ReleaseKeptSnapshot();
  // A deferred snapshot's first read (of raw_key; nullptr: anything else): takes it unless the
  // unit holds raw_key's stripe.
  void ResolveSnapshot(const std::string* raw_key);
  bool IsDefaultCf(const rocksdb::ColumnFamilyHandle* cf) const;
  // Before a write of key in cf: a default-family write ends the remembered read; an element
  // write notes its bucket, whose write version Commit bumps (element_versions.h).
  void NoteElementWrite(rocksdb::ColumnFamilyHandle* cf, std::string_view key);

  Store::Impl& impl_;
  int64_t now_ns_;
  int64_t now_ms_;
  LockSet* locks_ = nullptr;
  bool lock_reads_ = false;
  bool marked_ = false;  // a savepoint is set on the batch (group member)
  bool conflicted_ = false;
  bool keys_new_ = false;           // set_keys_new
  bool snapshot_deferred_ = false;  // SnapshotReads::OneKey, before its first read
  // (The bools are together: a Txn lives in Store::Transaction's 64 bytes.)
  const rocksdb::Snapshot* snapshot_ = nullptr;       // SnapshotReads
  const rocksdb::Snapshot* kept_snapshot_ = nullptr;  // the last SnapshotReads' (see there)
  Scratch* s_;
};

}  // namespace sluice::internal
