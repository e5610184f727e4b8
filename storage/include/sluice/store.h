// sluice::Store: the embeddable engine. A durable key-value store over RocksDB with Redis's
// string and key semantics (16 logical databases, per-key absolute expiry) and native,
// atomic rate limiters. Used by sluice-server and usable with no server at all.
//
// Thread-safety: every method may be called concurrently from any number of threads. Each
// read-modify-write (INCR, SET NX, every limiter take, ...) is atomic per key: it runs under a
// striped lock chosen by an XXH3 hash of (db, key); multi-key operations lock their stripes in
// sorted order. Keys are byte strings; values are byte strings up to Options::max_value_bytes.
//
// Time: from Options::clock (the wall clock by default). Expiry is absolute, in ms since the
// Unix epoch; an expired key is invisible to every read, is removed by a background expiry
// cycle or by the next command that touches it (DBSIZE counts it until then, as Redis does),
// and keeps its TTL across restarts.
//
// Durability (Options::durability, named after Redis's appendfsync): every acknowledged write
// has reached the operating system (its write-ahead-log bytes were handed over with write(2)),
// so it survives a crash of the process. "Acknowledged" means returned, or, for a write in a
// unit with deferred durability, made durable by its caller (see DurabilityTicket).
// kAlways also fsyncs before that point (one group fsync serves every concurrent writer),
// so it survives power loss; kEverySec fsyncs once a second in the background; kNo leaves it
// to the OS. A write that fails with kIOError may have been applied without being durable.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/clock.h"
#include "sluice/limiter.h"
#include "sluice/status.h"

namespace sluice {

inline constexpr int kNumDatabases = 16;

enum class Durability { kAlways, kEverySec, kNo };

// How Open treats the write-ahead log when it is not clean. A log that ends inside a record was
// cut short while being written (a crash, a power loss): what is lost is the tail after the last
// fsync, which the durability mode already allows to lose. Damage elsewhere (a bad checksum, a
// bad record) would lose durable writes after it, so by default Open refuses it. (A log cut
// anywhere looks the same as one cut by a crash: only damage inside the file can be detected.)
enum class WalRecovery {
  kTolerateTail,  // a cut-short tail loads with a warning; damage refuses to open (default)
  kAbsolute,      // even a cut-short tail refuses to open
  kPointInTime,   // loads every record before the first damage, drops the rest (data loss)
  kSkipDamaged,   // loads every intact record, skipping damaged ones (data loss)
};

enum class MemTableKind { kSluice, kRocksDb };

// How table files' blocks are compressed. A data dir opens with any choice: each file records
// its own, and files are rewritten with the new one as compaction reaches them.
enum class Compression { kSnappy, kLz4, kZstd, kNone };

// What kind of server a data dir serves, recorded in the engine's meta at its first Open with a
// mode (Options::mode) so that a standalone data dir is never served by a cluster node, nor the
// reverse (a cluster node keeps db 0 only). kUnset: not recorded / not checked.
enum class DataDirMode : uint8_t { kUnset, kStandalone, kCluster };

struct Options {
  std::string path;  // data directory; created if missing. Required.
  Durability durability = Durability::kEverySec;
  std::shared_ptr<const Clock> clock;  // nullptr: the wall clock
  // Run the background expiry cycle (which also saves its state after 30 s without a write, for
  // the next Open after a crash).
  bool active_expiry = true;
  int active_expiry_hz = 10;  // expiry cycles per second
  // Redis's active-expire-effort, 1..10 (clamped): how hard the expiry cycle works to remove
  // expired keys no command touches. 1 (Redis's default): samples of 20 keys with a TTL, a pass
  // goes on while more than 10% of a sample was expired, 25% of each cycle's period; each step
  // up adds 5 keys per sample and 2% of the period, and takes 1 from the 10%; at 10, 65 keys,
  // 1%, 43%. Under churn that outpaces the cycle, a higher effort keeps fewer expired keys
  // stored (and on disk) for more CPU (docs/engine.md, "Expiry").
  int active_expire_effort = 1;
  int64_t max_value_bytes = 512LL << 20;  // APPEND/SETRANGE beyond this fail (Redis: 512 MB)
  // A sparse HyperLogLog that would grow past this many bytes turns dense (Redis's
  // hll-sparse-max-bytes; the stored bytes equal Redis's under the same setting).
  int64_t hll_sparse_max_bytes = 3000;
  // RocksDB's block cache: data blocks, and the index and filter partitions (pinned while their
  // table file is open, ~1.6 bytes per key; the cache exceeds this size when they need more).
  // Should hold the live keys' blocks; more only helps reads of cold keys.
  size_t block_cache_bytes = size_t{256} << 20;
  // Records of keys, collections' metadata and collections' elements that point reads found in
  // table files, kept in memory until a write to them could have begun (a hot sorted set's
  // metadata once its memtable flushed: ~1.6 us per read from the table against ~0.1 us).
  // Records with an expiry are not kept. 0: off.
  size_t record_cache_bytes = size_t{16} << 20;
  // Table files' data blocks, before compression (RocksDB's block_size, whose default this is;
  // files written from now on). A read of a key whose block is not in the cache reads, checks
  // and decompresses one block: with more live keys than the cache holds, 1 KB blocks ran
  // GCRA.TAKE 37-40% faster (10M keys, a 32 MB cache) and 10% faster at 100M keys, for up to
  // 25% more disk, a larger index, and churn of short-lived keys 3-6% slower
  // (docs/engine.md "Storage tuning for churn").
  size_t block_bytes = 4096;
  static constexpr size_t kMinBlockBytes = 256;  // Open refuses sizes outside these
  static constexpr size_t kMaxBlockBytes = size_t{1} << 20;
  // The memtable's data structure: Sluice's hash index and sorted runs (the default), or
  // RocksDB's own skiplist (InlineSkipList). The same entries in the same order, so a data dir
  // opens with either; the choice only changes CPU cost (docs/engine.md "The memtable").
  MemTableKind memtable = MemTableKind::kSluice;
  // Bytes of writes each memtable collects before it is flushed to a table file (RocksDB's
  // write_buffer_size, per column family). The memtables of all column families together are
  // bounded by twice this (RocksDB's db_write_buffer_size: past it, one is flushed early), so
  // the collection types' families do not multiply it. Measured (docs/engine.md "Storage tuning
  // for churn"): 256 MB ran churn of short-lived limiter keys 7-26% faster than 64 MB and 10M
  // live keys 16% faster, for memory: +250 MB of RSS at 10M live keys, +560 MB at 100M (a
  // steady writer holds up to two full memtables). 32 MB was 20% slower than 64 MB.
  size_t write_buffer_bytes = size_t{256} << 20;
  // Measured on 10M live limiter keys: lz4, snappy and none within noise of each other; snappy
  // (the default) took 38 bytes of disk per key, none 60. Open fails with kInvalidArgument if the
  // linked RocksDB lacks the choice.
  Compression compression = Compression::kSnappy;
  // Lists of at most this many elements and bytes (each element's length plus 1-2 bytes) keep
  // their elements inside the key's one RocksDB entry; longer ones keep one entry per element
  // (docs/engine.md "Lists"). Inline, a list command is one point read and one write, but every
  // write rewrites the whole list: the byte limit bounds that. 0 entries: always one entry per
  // element. Measured: limits' moving-window acquire script (10 entries) ran 2.3x faster inline.
  int64_t list_inline_max_entries = 128;
  size_t list_inline_max_bytes = 1024;
  // Hashes of at most this many fields and bytes (each field's and value's length plus 1-2
  // bytes each), and in Redis's small encoding (listpack), keep their fields inside the key's
  // one RocksDB entry; bigger ones keep one entry per field, and stay so (as Redis never turns
  // a hashtable back into a listpack). Inline, `HGETALL` is one point read and `HSET` one read
  // and one write, but every write rewrites the whole hash: the byte limit bounds that. 0
  // fields: always one entry per field (docs/engine.md "Hashes").
  int64_t hash_inline_max_fields = 128;
  size_t hash_inline_max_bytes = 1024;
  // Sorted sets of at most this many members and bytes (each member's two entries, member ->
  // score and [score][member], with their lengths: about 2 x (member + 11) bytes a member), and
  // in Redis's small encoding (listpack), keep their entries inside the key's one RocksDB entry;
  // bigger ones keep them in their column families, and stay so. Inline, a command on a small
  // sorted set (a sliding-window limiter's ZREMRANGEBYSCORE, ZADD, ZCARD) is one point read and
  // one write of the key. 0 members: always in the column families (docs/engine.md "Sorted sets").
  int64_t zset_inline_max_members = 128;
  size_t zset_inline_max_bytes = 2048;
  // Sets of at most this many members and bytes (each member plus 3 bytes) keep their members
  // inside the key's one RocksDB entry, whatever Redis's encoding name (intset or hashtable);
  // bigger ones keep one entry per member, and stay so. 0: always one entry per member.
  int64_t set_inline_max_members = 128;
  size_t set_inline_max_bytes = 1024;
  // Deletions (expired keys removed, DEL) that a server then stops writing after sit in the
  // memtable, and the disk does not shrink until more writes fill it. After this many seconds
  // without a write, if a memtable holds at least 1000 deletions, every column family's memtable
  // is flushed once, so compaction can reclaim the space and the write-ahead logs of the burst
  // are deleted. 0: never.
  int idle_flush_after_s = 10;
  // Five seconds after that flush's time, and then once a minute while no write comes, the
  // heap's free pages are given back to the OS (glibc's malloc_trim; elsewhere nothing): the
  // arena blocks of flushed memtables and compaction buffers otherwise stay in the process's RSS
  // (measured after 6M churn calls and 300 s idle: 337 MB against 530 MB). It acts on the whole
  // process's heap, not only the store's, and releases only pages malloc holds free. Never
  // when idle_flush_after_s is 0.
  bool release_memory_when_idle = true;
  // Progress of long work, as human-readable lines: while Open replays the write-ahead log (after
  // a crash or an unflushed close, this can take seconds), at most one line a second, then one
  // summary line when Open has finished. Called on the thread calling Open. nullptr: silent.
  std::function<void(const std::string&)> on_progress;
  // The mode the opener serves (kUnset: embedders and tools, nothing checked or written). A new
  // data dir records it; a data dir recorded in the other mode (or one from before the marker,
  // which is standalone) fails Open with kInvalidArgument naming both modes.
  DataDirMode mode = DataDirMode::kUnset;
  // Errors and warnings, one line each: write errors and the recovery from them (disk full...):
  // "writes refused: ..." when the store latches read-only, "writes accepted again: ..." when it
  // recovers; and, during Open, "WARNING: ..." for each write-ahead log that is cut short or
  // damaged but accepted by wal_recovery. Called on whichever thread noticed (RocksDB's
  // background threads included); must be thread-safe and quick. nullptr: silent.
  std::function<void(const std::string&)> on_error;
  // What Open does with a damaged write-ahead log (see WalRecovery).
  WalRecovery wal_recovery = WalRecovery::kTolerateTail;
};

// What a key holds. TypeName() gives the name TYPE replies with.
enum class ValueKind : unsigned char {
  kString = 0,
  kLeaky = 1,
  kSliding = 2,
  kConc = 3,
  kHash = 4,
  kList = 5,
  kSet = 6,
  kZSet = 7,
  kStream = 8,
};
// "string", "leaky", "sliding", "conc", "hash", "list", "set", "zset", "stream"
const char* TypeName(ValueKind kind);
// True for the collection kinds (hash, list, set, zset, stream): a metadata record at the key and
// one RocksDB entry per element (docs/engine.md).
constexpr bool IsCollection(ValueKind kind) {
  return kind >= ValueKind::kHash && kind <= ValueKind::kStream;
}

// How a write treats the key's existing TTL.
struct ExpiryChange {
  enum class Kind { kKeep, kPersist, kSetAt } kind = Kind::kKeep;
  int64_t at_ms = 0;  // kSetAt: absolute ms since the epoch (may be in the past: key is deleted)
};

enum class SetCondition { kAlways, kIfAbsent /* NX */, kIfPresent /* XX */ };

struct SetOptions {
  SetCondition condition = SetCondition::kAlways;
  // kKeep keeps the old TTL (KEEPTTL); kPersist (the default, as SET does) clears it.
  ExpiryChange expiry{ExpiryChange::Kind::kPersist, 0};
  bool return_old = false;  // SET ... GET: the old value (WrongType if it is not a string)
};

struct SetReply {
  bool written = false;
  std::optional<std::string> old_value;  // only with return_old
};

// The conditions of ExpireAt, Redis 7's EXPIRE options NX|XX|GT|LT, as bit flags combined with
// `|` (e.g. ExpireCondition::kXX | ExpireCondition::kLT). Every flag given must hold:
//   kAlways (no flag): always;   kNX: the key has no TTL;   kXX: the key has a TTL;
//   kGT: at_ms > the current expiry;   kLT: at_ms < the current expiry.
// A key without a TTL counts as an infinite TTL: kGT never holds for it, kLT always does (so
// kXX | kLT does not set a TTL on a key that has none, while kLT alone does).
// Accepted sets, as Redis accepts them: kAlways, kNX, kXX, kGT, kLT, kXX|kGT, kXX|kLT. NX with
// any other flag, GT with LT, or an unknown bit is kInvalidArgument.
enum class ExpireCondition : unsigned { kAlways = 0, kNX = 1, kXX = 2, kGT = 4, kLT = 8 };
constexpr ExpireCondition operator|(ExpireCondition a, ExpireCondition b) {
  return static_cast<ExpireCondition>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}
constexpr ExpireCondition& operator|=(ExpireCondition& a, ExpireCondition b) { return a = a | b; }
// True when every flag of `flags` is in `set`.
constexpr bool HasAll(ExpireCondition set, ExpireCondition flags) {
  return (static_cast<unsigned>(set) & static_cast<unsigned>(flags)) ==
         static_cast<unsigned>(flags);
}

struct ScanPage {
  uint64_t next_cursor = 0;  // 0 when the iteration is complete
  std::vector<std::string> keys;
};

// A page of HSCAN/SSCAN/ZSCAN: (element, value) pairs; the value is empty for sets.
struct ElementScanReply {
  uint64_t next_cursor = 0;  // 0 when the iteration is complete
  std::vector<std::pair<std::string, std::string>> items;
};

// A database's keys as Redis counts them: every stored key, including an expired one until it
// is removed (by the active expiry cycle, or by a command that touches it), and those with a TTL.
struct KeyspaceInfo {
  int64_t keys = 0;
  int64_t expires = 0;
  bool operator==(const KeyspaceInfo&) const = default;
};

// Transaction::KeyspaceCheck: a database's maintained counts against a walk of its keys.
struct KeyspaceCheckReport {
  KeyspaceInfo counted;  // the in-memory counts DBSIZE and INFO keyspace report
  KeyspaceInfo stored;   // the persisted count record
  KeyspaceInfo walked;   // what a walk of every stored key finds
  bool ok() const { return counted == walked && stored == walked; }
};

// A key a unit of work declares: a logical database (0..kNumDatabases-1) and a user key.
struct KeyRef {
  int db = 0;
  std::string_view key;
};

class CommitGroup;  // sluice/transaction.h

struct TransactionOptions {
  // Lock every stripe instead of the declared keys' (for keyspace walks and flushes in a unit).
  bool all_keys = false;
  // Reads of undeclared keys lock them too, so a unit's reads are isolated (see transaction.h).
  bool isolate_reads = true;
  // Commit only buffers the write-ahead-log record: the caller makes it durable (FlushLog,
  // WhenDurable) before acknowledging the unit's results. The server defers every unit of an
  // I/O round, so the round costs one write(2) and, under kAlways, a share of one group fsync.
  bool defer_durability = false;
  // Join this group (see CommitGroup in sluice/transaction.h): Commit() only marks the
  // unit's writes for the group's one RocksDB write. Units with all_keys never join: the group
  // is flushed before they start.
  CommitGroup* group = nullptr;
};

// Told of every committed unit of work that wrote something (WATCH uses it; replication and
// statistics can). Called on the committing thread after its write succeeded and while the unit
// still holds its locks, so a reader who takes a written key's lock afterwards has already been
// told. Must be fast, thread-safe, and must not call into the Store.
class CommitObserver {
 public:
  virtual ~CommitObserver() = default;
  // `written`: the keys the unit put, deleted or touched (repeats possible; the views are valid
  // only during the call). `flushed_dbs`: bit d set when the unit emptied database d.
  virtual void OnCommit(std::span<const KeyRef> written, uint32_t flushed_dbs) = 0;
  // `expired`: the keys whose expired values a unit removed (the active expiry cycle's units, or
  // a read that found the value expired), once that removal is written; called on the removing
  // thread (the expiry thread for the cycle), after OnCommit when the unit also wrote. The
  // server's keyspace notifications ("expired") hang here. Default: nothing.
  virtual void OnExpired(std::span<const KeyRef> expired) { static_cast<void>(expired); }
};

namespace internal {
class LockSet;
class Txn;
}  // namespace internal

// One group of Store::LimitsTake: a key and the limiter that guards it.
struct LimitGroup {
  std::string_view key;
  limiter::LimitParams params;
};

// Store::LimitsTake's reply (LIMITERS.md, LIMITS.TAKE): the combined decision, the 1-based
// binding group, and per group (in order) the decision its own take would give at that instant
// (after consuming when allowed; evaluated without consuming when denied).
struct LimitsReply {
  limiter::Decision decision;
  int binding = 0;
  std::vector<limiter::Decision> groups;
};

struct ConcAcquireReply {
  limiter::Decision decision;
  std::string token;  // the holder's token; empty when denied
};

class Store {
 public:
  // Opens (creating if needed) the store at options.path. Fails with kIOError on an unusable
  // directory or a database locked by another process.
  static Result<std::unique_ptr<Store>> Open(Options options);
  // Stops background work, saves the expiry cycle's state (so that the next Open need not walk the
  // keyspace to find expiring keys), syncs the WAL, closes the database.
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  class Transaction;  // sluice/transaction.h: a unit of work (several operations, one write)

  // Observers are told of every commit (see CommitObserver). At most kMaxCommitObservers; the
  // observer must outlive the Store. Thread-safe.
  static constexpr int kMaxCommitObservers = 8;
  Status AddCommitObserver(CommitObserver* observer);

  // The data dir's recorded mode (kUnset: none recorded; a data dir from before the marker).
  Result<DataDirMode> GetDataDirMode();
  // Records `mode` durably (the offline conversion, sluice-server --convert-data-dir).
  Status SetDataDirMode(DataDirMode mode);

  const Clock& clock() const;
  int64_t NowMs() const { return clock().NowMs(); }
  Durability durability() const;
  void set_durability(Durability d);             // CONFIG SET appendfsync
  void set_max_value_bytes(int64_t bytes);       // CONFIG SET proto-max-bulk-len
  void set_hll_sparse_max_bytes(int64_t bytes);  // CONFIG SET hll-sparse-max-bytes
  void set_block_cache_bytes(size_t bytes);      // CONFIG SET block-cache-size (live resize)
  int active_expire_effort() const;
  void set_active_expire_effort(int effort);  // CONFIG SET active-expire-effort (1..10)
  // A replica keeps expired values (Redis's replicas do not expire keys): while on, the expiry
  // cycle removes nothing and a read that finds an expired value leaves it stored (it still
  // reads as missing); the primary's deletions remove it. Thread-safe; off by default.
  void set_keep_expired(bool on);
  // The same for a while, for another reason: a server's CLIENT PAUSE (Redis neither removes
  // expired keys actively nor on access while clients are paused, so a primary writes nothing a
  // failover's new primary would miss). Independent of set_keep_expired. Thread-safe.
  void set_keep_expired_paused(bool on);

  // ---- Group commit: deferred durability with explicit tickets.
  // A unit made with TransactionOptions::defer_durability only applies its write when it
  // commits (visible to every reader at once) and appends the write-ahead-log record to an
  // in-memory buffer; its result must not be acknowledged before the caller has made it
  // durable. Every other write does that itself before returning (under kAlways by waiting for
  // a group fsync shared with every concurrent writer).
  // A durability ticket names a point in the write history: DurabilityTicket() is the latest,
  // covering every write applied, and so visible to any reader, so far. Taken after a batch of
  // work, it covers the batch's writes and every write its reads could have seen.
  uint64_t DurabilityTicket() const;
  // Hands the log's buffered bytes to the OS (one write(2); nothing when empty): what every
  // mode needs before acknowledging, since it makes a write survive a crash of the process.
  Status FlushLog();
  // FlushLog, unless another flush already handed over everything through `ticket`: threads
  // ending their batches together then share one write(2).
  Status FlushLog(uint64_t ticket);
  // Calls done(OK) once everything through `ticket` is as durable as the mode promises: under
  // kAlways after an fsync through it (one fsync serves every waiter it covers; `done` runs on
  // the store's syncer thread, so it must be fast: post the reply to your own thread), otherwise
  // at once, inline, after FlushLog. done(error): the flush or fsync failed; the writes it
  // covers may be lost in a crash (kAlways: in a power loss) and must not be acknowledged.
  void WhenDurable(uint64_t ticket, std::function<void(Status)> done);
  // WhenDurable's blocking form.
  Status AwaitDurable(uint64_t ticket);
  Status SyncWal();  // hands buffered WAL bytes to the OS and fsyncs the write-ahead log now
  // A consistent point-in-time copy of the whole store in `dir` (which must not exist; its
  // parent must): a RocksDB checkpoint (table files hard-linked where the filesystem allows,
  // the memtables flushed first), a data dir that Store::Open (and sluice-server --dir) can
  // start from. Thread-safe; writers go on meanwhile (SAVE, BGSAVE).
  Status Checkpoint(const std::string& dir);

  // A hint that point lookups of these keys of db follow soon (a pipelined batch's keys): warms the
  // CPU caches for their newest memtable entries, so that the lookups' cache misses overlap.
  // Changes nothing; thread-safe. Uses the first kPrefetchKeys.
  static constexpr size_t kPrefetchKeys = 16;
  void PrefetchKeys(int db, std::span<const std::string_view> keys) const;

  // ---- Strings. db is 0..kNumDatabases-1 (callers validate it).
  Result<std::optional<std::string>> Get(int db, std::string_view key);
  // Get into a caller's buffer: *found tells whether the key holds a live string, whose bytes
  // then replace *value (reusing its capacity: no allocation once it is large enough). Errors
  // as Get's (kWrongType, ...); *value is unspecified after an error or when not found.
  Status GetInto(int db, std::string_view key, std::string* value, bool* found);
  Result<SetReply> Set(int db, std::string_view key, std::string_view value,
                       const SetOptions& options);
  Result<std::optional<std::string>> GetDel(int db, std::string_view key);
  Result<std::optional<std::string>> GetEx(int db, std::string_view key, ExpiryChange change);
  // Non-string and missing keys give nullopt (MGET never fails on type).
  Result<std::vector<std::optional<std::string>>> MGet(int db,
                                                       std::span<const std::string_view> keys);
  Status MSet(int db, std::span<const std::pair<std::string_view, std::string_view>> pairs);
  // Sets all or none; true when set (no key existed).
  Result<bool> MSetNx(int db, std::span<const std::pair<std::string_view, std::string_view>> pairs);
  Result<int64_t> IncrBy(int db, std::string_view key, int64_t delta);
  // Returns the new value formatted as Redis does (up to 17 significant digits, no trailing 0s).
  Result<std::string> IncrByFloat(int db, std::string_view key, long double delta);
  Result<int64_t> Append(int db, std::string_view key, std::string_view value);  // new length
  Result<int64_t> StrLen(int db, std::string_view key);
  Result<std::string> GetRange(int db, std::string_view key, int64_t start, int64_t end);
  Result<int64_t> SetRange(int db, std::string_view key, int64_t offset, std::string_view value);

  // ---- Keys
  Result<int64_t> Del(int db, std::span<const std::string_view> keys);     // keys removed
  Result<int64_t> Exists(int db, std::span<const std::string_view> keys);  // repeats count
  // Sets an absolute expiry; a time at or before now deletes the key (and returns true). False
  // when the key is missing or the conditions (see ExpireCondition) do not hold. The check and
  // the write are one atomic step under the key's lock. kInvalidArgument for a set of
  // conditions Redis rejects (NX with another flag, GT with LT), whatever the key holds.
  Result<bool> ExpireAt(int db, std::string_view key, int64_t at_ms, ExpireCondition cond);
  Result<int64_t> PTtl(int db, std::string_view key);          // -2 missing, -1 no TTL, else ms
  Result<int64_t> ExpireTimeMs(int db, std::string_view key);  // -2 missing, -1 no TTL, else ms
  Result<bool> Persist(int db, std::string_view key);
  Result<std::optional<ValueKind>> Type(int db, std::string_view key);
  // OBJECT ENCODING's name for the key's value; nullopt when missing.
  Result<std::optional<std::string>> ObjectEncoding(int db, std::string_view key);
  // Moves the value and its TTL (a collection's elements are copied: O(n)). kNoSuchKey when src is
  // missing. With only_if_absent, false when dst exists. Renaming a key onto itself succeeds (true)
  // and changes nothing.
  Result<bool> Rename(int db, std::string_view src, std::string_view dst, bool only_if_absent);
  // COPY; kInvalidArgument "source and destination objects are the same" for the same key.
  Result<bool> Copy(int src_db, std::string_view src, int dst_db, std::string_view dst,
                    bool replace);
  // Redis glob patterns (*, ?, [a-z], [^x], \x).
  Result<std::vector<std::string>> Keys(int db, std::string_view pattern);
  // Redis SCAN: cursor 0 starts; returns next_cursor 0 when done. `type` filters by TypeName.
  Result<ScanPage> Scan(int db, uint64_t cursor, std::optional<std::string_view> match,
                        int64_t count, std::optional<std::string_view> type);
  Result<std::optional<std::string>> RandomKey(int db);
  Result<int64_t> DbSize(int db);
  Result<KeyspaceInfo> Keyspace(int db);
  // Redis Cluster slot walks (Transaction::CountKeysInSlot / KeysInSlot); DeleteKeysInSlot
  // removes every key of the slot (values, elements, TTLs) and returns how many it removed.
  Result<int64_t> CountKeysInSlot(int db, uint16_t slot);
  Result<std::vector<std::string>> KeysInSlot(int db, uint16_t slot, int64_t limit);
  // Redis Cluster's hash slot of a key (CLUSTER KEYSLOT): CRC16 of the key or its {hash tag},
  // mod 16384; the engine's own (the slot a key is stored under). Pure; thread-safe.
  static uint16_t KeySlot(std::string_view key);
  Result<int64_t> DeleteKeysInSlot(int db, uint16_t slot);
  Status FlushDb(int db);
  Status FlushAll();

  // ---- Limiters (the commands GCRA.TAKE ... CONC.RELEASE; user guide: docs/limiters.md).
  // Params come from limiter::Make*Params (which validate and name the bad argument); `cost`
  // must be >= 0. Each call is one atomic read-decide-write under the key's lock; a denied call
  // writes nothing (one exception: WindowTake gives a counter without a TTL its window end);
  // cost 0 only looks and never writes. The Decision's times are nanoseconds
  // (limiter::CeilMs gives the server's rounded-up milliseconds; -1 means "never").
  // State is an ordinary key that expires by itself once the limiter is fresh again (its PTTL
  // is reset_after): GCRA and WINDOW keep decimal text in a ValueKind::kString (the TAT in ns
  // since the epoch / the window's count, as redis-cell and INCR + EXPIRE do, so Get/Set/IncrBy
  // interoperate); LEAKY, SLIDING and CONC keep binary state under kLeaky/kSliding/kConc.
  // Errors: kWrongType when the key holds another kind; kNotInteger when a GCRA/WINDOW string
  // is not a decimal integer; kCorruption for undecodable binary state; kIOError from RocksDB.
  Result<limiter::Decision> GcraTake(int db, std::string_view key, const limiter::GcraParams& p,
                                     int64_t cost);
  Result<limiter::Decision> LeakyTake(int db, std::string_view key, const limiter::LeakyParams& p,
                                      int64_t cost);
  Result<limiter::Decision> WindowTake(int db, std::string_view key, const limiter::WindowParams& p,
                                       int64_t cost);
  Result<limiter::Decision> SlidingTake(int db, std::string_view key,
                                        const limiter::SlidingParams& p, int64_t cost);
  // Takes (or, when `token` already holds a live lease, renews) one of p.limit slots for
  // p.lease_ns. token empty: the store generates a random one (32 hex digits). The reply's
  // token is the holder's token when allowed, empty when denied.
  Result<ConcAcquireReply> ConcAcquire(int db, std::string_view key, const limiter::ConcParams& p,
                                       std::string_view token);
  // True iff `token` held a live lease (now released); false for a missing key or token.
  Result<bool> ConcRelease(int db, std::string_view key, std::string_view token);
  // REFUND: gives back `units` (>= 0) taken earlier from the GCRA, WINDOW, SLIDING or LEAKY
  // limiter at `key` (limiter::RefundLimit: never fresher than fresh; a missing key writes
  // nothing; state back to fresh is deleted). The decision is allowed and describes the state
  // after. Errors as the takes'.
  Result<limiter::Decision> LimitRefund(int db, std::string_view key, const limiter::LimitParams& p,
                                        int64_t units);
  // LIMITS.TAKE: takes `cost` (>= 0) from every group if every group allows, else from none (a
  // denied call writes nothing at all, not even WINDOW's TTL repair). All keys are locked and
  // decided under one `now`. kInvalidArgument for 0 or more than limiter::kMaxLimitGroups
  // groups or a key given twice; kWrongType / kNotInteger / kCorruption when any group's key
  // holds something else (nothing is written).
  Result<LimitsReply> LimitsTake(int db, std::span<const LimitGroup> groups, int64_t cost);
  // LIMITS.TAKE ... REFUND: LimitRefund on every group, atomically; allowed is 1.
  Result<LimitsReply> LimitsRefund(int db, std::span<const LimitGroup> groups, int64_t units);

  // ---- Introspection (INFO persistence / memory).
  struct Stats {
    int64_t expired_keys = 0;  // removed by the expiry cycle or on access
    int64_t disk_bytes = 0;    // live SST + WAL size
    int64_t memtable_bytes = 0;
    int64_t last_sync_unix_ms = 0;
    int64_t wal_syncs = 0;  // fsyncs of the write-ahead log since Open
    // Active expiry cycles that walked keys since Open (a cycle with nothing due walks none).
    int64_t expiry_scans = 0;
    // Redis's INFO fields of the active expiry cycle: the share of keys with a TTL its samples
    // found expired (a moving average, 0..1; only a walking cycle samples), the cycles that
    // used their whole time budget, and the time spent in cycles (ms).
    double expired_stale = 0;
    int64_t expiry_time_cap_reached = 0;
    int64_t expire_cycle_ms = 0;
    // Times a quiet store gave the heap's free pages back (Options::release_memory_when_idle).
    int64_t idle_memory_releases = 0;
    // RocksDB's background work: flushes and compactions running now, and those waiting (a
    // memtable waiting for its flush, a column family that needs a compaction).
    int64_t background_running = 0;
    int64_t background_pending = 0;
    // Writes are refused (Code::kCannotPersist) since a write to disk failed; write_error says
    // why. Cleared when the store recovers.
    bool writes_refused = false;
    std::string write_error;
    // The record cache (Options::record_cache_bytes): reads it answered, reads of a key it may
    // have held (its slot's filter said so) that it could not answer, and what it holds.
    int64_t record_cache_hits = 0;
    int64_t record_cache_misses = 0;
    int64_t record_cache_bytes = 0;
    // The units' range reads' RocksDB iterators: leases a refreshed one served, and those that
    // made a new one (a unit reading at an older snapshot makes its own, counted in neither).
    int64_t iterators_reused = 0;
    int64_t iterators_made = 0;
    // Runs of records read ahead by one iterator (a list's pops after its elements were
    // flushed), and the reads they served instead of a point read each.
    int64_t read_ahead_fills = 0;
    int64_t read_ahead_hits = 0;
  };
  Stats GetStats() const;

  class Impl;
  Impl& impl() { return *impl_; }  // the engine's own files (storage/) only

 private:
  explicit Store(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice

#include "sluice/transaction.h"  // IWYU pragma: export
