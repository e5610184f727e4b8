// Store::Transaction: a unit of work on a Store. Its operations run under one set of key locks,
// see one another's writes, share one `now`, and Commit() writes them as one RocksDB write: all
// or nothing, also across a crash, and no other thread ever sees a state between two of them.
// Every Store operation is this class's operation run in a unit of its own (the auto-commit
// calls in store.h), and the server runs each command, each MULTI/EXEC and each script as one.
//
//   sluice::KeyRef keys[] = {{0, "user:42:sec"}, {0, "user:42:day"}};
//   sluice::Store::Transaction txn(*store, keys);
//   auto sec = txn.GcraTake(0, "user:42:sec", per_second, 1);
//   auto day = txn.GcraTake(0, "user:42:day", per_day, 1);
//   if (!sec->allowed || !day->allowed) txn.Rollback();   // neither is consumed
//   Status s = txn.Commit();
//
// Locks: the constructor locks the stripes of the declared keys in sorted order (blocking until
// they are free; units never deadlock), then fixes the unit's time. An operation on a key that
// was not declared locks it on first use if its stripe is free and otherwise fails with
// kLockConflict, touching nothing: declare every key you write. With
// TransactionOptions::isolate_reads (the default) reads lock their keys the same way, so nothing
// a unit read can change under it; without it, reads of undeclared keys see the latest
// committed state without locking (the server's standalone read commands run so).
//
// Operations are exactly the Store operations of the same name (see store.h for each one's
// contract), except that their time is the unit's and their writes are staged until Commit().
// An operation that fails stages nothing. Thread-compatible: use a Transaction from one thread
// at a time; it holds its locks until destroyed, so keep units short.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sluice/store.h"
#include "sluice/stream.h"
#include "sluice/whole_value.h"

namespace sluice {

class Store::Transaction {
 public:
  Transaction(Store& store, std::span<const KeyRef> keys, TransactionOptions options = {});
  ~Transaction();  // drops what was staged and not committed, then releases the locks
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  // The unit's time, fixed once its locks were taken.
  int64_t NowMs() const;
  int64_t NowNs() const;
  Store& store() const { return store_; }

  // Writes everything staged since the last Commit/Rollback as one RocksDB write, following the
  // store's durability policy, then notifies commit observers. The unit stays usable (same locks,
  // same time). On error nothing staged was written.
  Status Commit();
  void Rollback();  // drops everything staged since the last Commit/Rollback
  // True when an operation failed with kLockConflict since the start or the last Rollback: roll
  // back and run the work again in a unit that declares the missing keys or all_keys.
  bool conflicted() const;
  // Makes conflicted() true, as a claim that failed would: the caller stops and runs the work
  // again (the server stops a script that turns busy inside a commit group so; see
  // server/scripting/lua_vm.cc).
  void MarkConflicted();
  // Whether this unit is a member of a CommitGroup that other members' commits are in (their
  // results then wait for the group's write, and so for this unit's end).
  bool shares_group() const;
  // How many writes (puts, deletes, touches) the unit has staged since the last
  // Commit/Rollback: compared around an operation, it tells whether the operation wrote (the
  // server's keyspace notifications for limiter takes).
  size_t staged_writes() const;
  // The keys this unit wrote, touched or deleted since it began (a group member: since it
  // joined), in order, repeats possible (views valid until the unit's next write), and in
  // *flushed_dbs bit d when it emptied database d. Replication reads their state before the
  // commit (server/replication/propagation.h).
  void WrittenKeys(std::vector<KeyRef>* out, uint32_t* flushed_dbs) const;

  // ---- Strings
  Result<std::optional<std::string>> Get(int db, std::string_view key);
  Status GetInto(int db, std::string_view key, std::string* value, bool* found);
  Result<SetReply> Set(int db, std::string_view key, std::string_view value,
                       const SetOptions& options);
  Result<std::optional<std::string>> GetDel(int db, std::string_view key);
  Result<std::optional<std::string>> GetEx(int db, std::string_view key, ExpiryChange change);
  Result<std::vector<std::optional<std::string>>> MGet(int db,
                                                       std::span<const std::string_view> keys);
  Status MSet(int db, std::span<const std::pair<std::string_view, std::string_view>> pairs);
  Result<bool> MSetNx(int db, std::span<const std::pair<std::string_view, std::string_view>> pairs);
  Result<int64_t> IncrBy(int db, std::string_view key, int64_t delta);
  Result<std::string> IncrByFloat(int db, std::string_view key, long double delta);
  Result<int64_t> Append(int db, std::string_view key, std::string_view value);
  Result<int64_t> StrLen(int db, std::string_view key);
  Result<std::string> GetRange(int db, std::string_view key, int64_t start, int64_t end);
  Result<int64_t> SetRange(int db, std::string_view key, int64_t offset, std::string_view value);

  // ---- Bitmaps on strings (bitmap_ops.cc; the bit math in types/bitmaps.h). The value stays a
  // plain string; bit 0 is the most significant bit of byte 0. kWrongType on other kinds. The
  // caller has checked offsets against the size limit.
  // SETBIT: the bit's old value; the string grows with zero bytes to reach `offset`.
  Result<int64_t> SetBit(int db, std::string_view key, uint64_t offset, bool value);
  Result<int64_t> GetBit(int db, std::string_view key, uint64_t offset);
  // A BITCOUNT/BITPOS range: byte (or, with in_bits, bit) indices, negative from the end.
  struct BitRange {
    int64_t start = 0;
    int64_t end = -1;
    bool in_bits = false;
    bool end_given = false;  // BITPOS: without an end, a 0 is found past the string's end
  };
  // nullopt range: the whole string. 0 for a missing key.
  Result<int64_t> BitCount(int db, std::string_view key, const std::optional<BitRange>& range);
  // The first bit equal to `bit` (Redis's BITPOS replies, a missing key included).
  Result<int64_t> BitPos(int db, std::string_view key, bool bit,
                         const std::optional<BitRange>& range);
  enum class BitOpKind : uint8_t { kAnd, kOr, kXor, kNot };
  // BITOP: dst becomes the result (no TTL), or is deleted when every source is empty or missing.
  // Returns the result's length. NOT takes one source (the caller checks).
  Result<int64_t> BitOp(int db, BitOpKind op, std::string_view dst,
                        std::span<const std::string_view> sources);
  struct BitFieldOp {
    enum class Kind : uint8_t { kGet, kSet, kIncrBy };
    enum class Overflow : uint8_t { kWrap, kSat, kFail };
    Kind kind = Kind::kGet;
    bool is_signed = false;
    int bits = 1;         // 1..64 signed, 1..63 unsigned
    uint64_t offset = 0;  // in bits
    int64_t value = 0;    // kSet: the value; kIncrBy: the increment
    Overflow overflow = Overflow::kWrap;
  };
  // BITFIELD: one reply per op (nullopt: a FAIL overflow, not written). With a write op the key
  // is created or grown (zero bytes) to the farthest write, as Redis does, even when every
  // write fails; with GETs only nothing is written.
  Result<std::vector<std::optional<int64_t>>> BitField(int db, std::string_view key,
                                                       std::span<const BitFieldOp> ops);

  // ---- HyperLogLog (hyperloglog_ops.cc; the format in types/hyperloglog.h): strings in
  // Redis's exact HLL representation. A string that is not one is kInvalidArgument
  // "WRONGTYPE Key is not a valid HyperLogLog string value."; a corrupt sparse one
  // "INVALIDOBJ Corrupted HLL object detected".
  // PFADD: true when a register changed or the key was created.
  Result<bool> PfAdd(int db, std::string_view key, std::span<const std::string_view> elements);
  // PFCOUNT: one key's count (cached in the string, which it may write: it claims the key for
  // writing), or the count of the union of several keys. Missing keys are empty.
  Result<int64_t> PfCount(int db, std::span<const std::string_view> keys);
  // PFMERGE: dst (itself a source) becomes the union of dst and the sources.
  Status PfMerge(int db, std::string_view dst, std::span<const std::string_view> sources);
  // PFDEBUG: kGetReg the 16384 registers (a sparse HLL is converted to dense and stored first,
  // as Redis does), kDecode the sparse opcodes as Redis prints them ("Z:16384", "v:3,1", ...;
  // kInvalidArgument "HLL encoding is not sparse" for a dense one), kEncoding, kToDense
  // (converted: whether it was sparse), kCheck only the checks every subcommand makes first.
  // kNoSuchKey when the key is missing.
  enum class PfDebugOp : uint8_t { kCheck, kGetReg, kDecode, kEncoding, kToDense };
  struct PfDebugReply {
    std::vector<int64_t> registers;  // kGetReg
    std::string text;                // kDecode; kEncoding: "dense" or "sparse"
    bool converted = false;          // kToDense
  };
  Result<PfDebugReply> PfDebug(int db, std::string_view key, PfDebugOp op);

  // ---- LCS (lcs_ops.cc; the table in types/lcs.h): the longest common subsequence of two
  // strings (a missing key is empty). kWrongType when either key holds another kind;
  // kInvalidArgument when the O(len(a) * len(b)) table would exceed max_value_bytes, as Redis
  // bounds it by proto-max-bulk-len.
  struct LcsMatch {
    int64_t a_start = 0, a_end = 0, b_start = 0, b_end = 0;
  };
  struct LcsReply {
    std::string lcs;                // the subsequence itself
    std::vector<LcsMatch> matches;  // Redis's IDX ranges, from the strings' ends backwards,
                                    // those of at least min_match_len bytes
  };
  Result<LcsReply> Lcs(int db, std::string_view a, std::string_view b, int64_t min_match_len);

  // ---- Keys
  Result<int64_t> Del(int db, std::span<const std::string_view> keys);
  Result<int64_t> Exists(int db, std::span<const std::string_view> keys);
  Result<bool> ExpireAt(int db, std::string_view key, int64_t at_ms, ExpireCondition cond);
  Result<int64_t> PTtl(int db, std::string_view key);
  Result<int64_t> ExpireTimeMs(int db, std::string_view key);
  Result<bool> Persist(int db, std::string_view key);
  Result<std::optional<ValueKind>> Type(int db, std::string_view key);
  // Redis's OBJECT ENCODING name of the key's value ("int", "embstr", "raw", "listpack",
  // "hashtable", "intset", "quicklist", "skiplist"); nullopt when the key is missing.
  Result<std::optional<std::string>> ObjectEncoding(int db, std::string_view key);
  // Collections are copied element by element (O(n)), strings and limiter states in one write.
  Result<bool> Rename(int db, std::string_view src, std::string_view dst, bool only_if_absent);
  Result<bool> Copy(int src_db, std::string_view src, int dst_db, std::string_view dst,
                    bool replace);
  // Keyspace walks and flushes see the unit's own writes; inside a unit that isolates reads they
  // need every stripe (TransactionOptions::all_keys), else kLockConflict.
  Result<std::vector<std::string>> Keys(int db, std::string_view pattern);
  Result<ScanPage> Scan(int db, uint64_t cursor, std::optional<std::string_view> match,
                        int64_t count, std::optional<std::string_view> type);
  Result<std::optional<std::string>> RandomKey(int db);
  Result<int64_t> DbSize(int db);
  Result<KeyspaceInfo> Keyspace(int db);
  // Redis Cluster's slot walks (CLUSTER COUNTKEYSINSLOT / GETKEYSINSLOT, dropping a lost slot):
  // the live keys of hash slot `slot` (< 16384) in db, one contiguous range of the engine's keys
  // (the slot is a prefix of every stored key). KeysInSlot returns at most `limit` keys
  // (limit < 0: all), in key order.
  Result<int64_t> CountKeysInSlot(int db, uint16_t slot);
  Result<std::vector<std::string>> KeysInSlot(int db, uint16_t slot, int64_t limit);
  // Walks db's stored keys (O(N)) and compares them with its maintained counts; needs every
  // stripe (else kLockConflict), so no commit is in flight. Ignores the unit's own staged writes.
  Result<KeyspaceCheckReport> KeyspaceCheck(int db);
  Status FlushDb(int db);
  Status FlushAll();
  // MOVE: the key (value, elements and TTL) from src_db to dst_db; false when it is missing or
  // dst_db already holds the key. dbs.cc.
  Result<bool> Move(int src_db, int dst_db, std::string_view key);
  // SWAPDB: the two databases trade contents in one write (every key read and rewritten: O(n)
  // in both dbs' keys and elements). Needs every stripe, as FlushDb. dbs.cc.
  Status SwapDb(int a, int b);

  // ---- Whole values (whole_values.cc): what DUMP/RESTORE and MIGRATE move.
  // The key's value as plain data (a collection read whole: O(N)); nullopt when missing.
  // kInvalidArgument for Sluice's own limiter kinds (leaky, sliding, conc): they have no Redis
  // form.
  Result<std::optional<WholeValue>> ReadWhole(int db, std::string_view key);
  // Replaces whatever the key holds with `value` (a string or a non-empty collection) and its
  // expiry (`expire_at_ms` ms since the epoch, 0: none). The caller checks the key's absence
  // when it must not replace (RESTORE without REPLACE).
  Status WriteWhole(int db, std::string_view key, const WholeValue& value, int64_t expire_at_ms);
  // A key of a single-entry kind (a string or one of Sluice's limiter states: leaky, sliding,
  // conc) as stored: its kind, expiry (0: none) and payload bytes. Replication between Sluice
  // nodes moves limiter state this way (it has no Redis form). nullopt when missing;
  // kWrongType for a collection. raw_entries.cc.
  struct RawEntry {
    ValueKind kind{};
    int64_t expire_at_ms = 0;
    std::string payload;
  };
  Result<std::optional<RawEntry>> ReadEntry(int db, std::string_view key);
  // Replaces whatever the key holds with `entry` (a single-entry kind, as ReadEntry gave it).
  Status WriteEntry(int db, std::string_view key, const RawEntry& entry);

  // ---- Hashes (Redis 7.0 semantics; every call is kWrongType on a key of another kind). Fields
  // come back in insertion order, as Redis's small (listpack) hashes keep them. hashes.cc.
  // HSET/HMSET: the number of fields that were new.
  Result<int64_t> HSet(int db, std::string_view key,
                       std::span<const std::pair<std::string_view, std::string_view>> pairs);
  Result<bool> HSetNx(int db, std::string_view key, std::string_view field, std::string_view value);
  Result<std::optional<std::string>> HGet(int db, std::string_view key, std::string_view field);
  Result<std::vector<std::optional<std::string>>> HMGet(int db, std::string_view key,
                                                        std::span<const std::string_view> fields);
  Result<std::vector<std::pair<std::string, std::string>>> HGetAll(int db, std::string_view key);
  Result<int64_t> HDel(int db, std::string_view key, std::span<const std::string_view> fields);
  Result<int64_t> HLen(int db, std::string_view key);
  Result<bool> HExists(int db, std::string_view key, std::string_view field);
  Result<int64_t> HStrLen(int db, std::string_view key, std::string_view field);
  // kInvalidArgument "hash value is not an integer" / kOverflow.
  Result<int64_t> HIncrBy(int db, std::string_view key, std::string_view field, int64_t delta);
  // kInvalidArgument "hash value is not a float" / "increment would produce NaN or Infinity".
  Result<std::string> HIncrByFloat(int db, std::string_view key, std::string_view field,
                                   long double delta);
  // HRANDFIELD's picks: count >= 0 distinct fields (all of them when count >= HLEN), count < 0
  // exactly -count fields, repeats allowed (kInvalidArgument below -2^26). Empty for a missing
  // key. O(HLEN), or O(log HLEN) for one pick from a big hash.
  Result<std::vector<std::pair<std::string, std::string>>> HRandField(int db, std::string_view key,
                                                                      int64_t count);
  // A small hash (listpack) comes back whole with cursor 0, as in Redis; a big one in pages.
  Result<ElementScanReply> HScan(int db, std::string_view key, uint64_t cursor,
                                 std::optional<std::string_view> match, int64_t count);

  // ---- Sets (Redis 7.0 semantics; kWrongType on a key of another kind). sets.cc.
  // Members come back in element (byte) order, or in numeric order while the set is an intset
  // (as Redis orders an intset).
  Result<int64_t> SAdd(int db, std::string_view key, std::span<const std::string_view> members);
  Result<int64_t> SRem(int db, std::string_view key, std::span<const std::string_view> members);
  Result<bool> SIsMember(int db, std::string_view key, std::string_view member);
  Result<std::vector<bool>> SMIsMember(int db, std::string_view key,
                                       std::span<const std::string_view> members);
  Result<std::vector<std::string>> SMembers(int db, std::string_view key);
  Result<int64_t> SCard(int db, std::string_view key);
  // Removes and returns up to `count` random distinct members (the key goes with the last one).
  Result<std::vector<std::string>> SPop(int db, std::string_view key, int64_t count);
  // SRANDMEMBER's picks: count >= 0 distinct members (all when count >= SCARD), count < 0
  // exactly -count members, repeats allowed (kInvalidArgument below -2^26).
  Result<std::vector<std::string>> SRandMember(int db, std::string_view key, int64_t count);
  // kWrongType when either key holds another kind. False when member is not in src.
  Result<bool> SMove(int db, std::string_view src, std::string_view dst, std::string_view member);
  enum class SetOp { kInter, kUnion, kDiff };
  // SINTER/SUNION/SDIFF over keys; every key's type is checked first (kWrongType), a missing key
  // is an empty set.
  Result<std::vector<std::string>> SetAlgebra(int db, SetOp op,
                                              std::span<const std::string_view> keys);
  // The STORE forms: dst (whatever it held) becomes the result, or is deleted when it is empty.
  // Returns the result's size.
  Result<int64_t> SetAlgebraStore(int db, SetOp op, std::string_view dst,
                                  std::span<const std::string_view> keys);
  // SINTERCARD: the intersection's size, counting stops at limit (0: no limit).
  Result<int64_t> SInterCard(int db, std::span<const std::string_view> keys, int64_t limit);
  // A small set (intset) comes back whole with cursor 0, as in Redis; a big one in pages.
  Result<ElementScanReply> SScan(int db, std::string_view key, uint64_t cursor,
                                 std::optional<std::string_view> match, int64_t count);

  // ---- Streams (Redis 7.0 semantics; kWrongType on a key of another kind). stream*.cc.
  // Entries in ID order; trims and deletes cost what they remove (docs/engine.md "Streams").
  // XADD: the entry appended (then the trim applied), or the outcome that refused it.
  Result<StreamAddReply> XAdd(int db, std::string_view key, const StreamAddOptions& options,
                              std::span<const std::string_view> fields);
  // Entries with start <= id <= end, ascending (descending when rev), at most count (0: all).
  Result<std::vector<StreamEntry>> XRange(int db, std::string_view key, StreamId start,
                                          StreamId end, bool rev, int64_t count);
  Result<int64_t> XLen(int db, std::string_view key);
  Result<int64_t> XDel(int db, std::string_view key, std::span<const StreamId> ids);
  // What the trim removed and left (all zero for a missing key).
  Result<StreamTrimOutcome> XTrim(int db, std::string_view key, const StreamTrim& trim);
  // kNoKey, kSetIdSmallerThanTop, kSetIdEntriesAdded, or kNone (done).
  Result<StreamError> XSetId(int db, std::string_view key, const StreamSetIdOptions& options);
  // The stream's metadata; nullopt when the key is missing.
  Result<std::optional<StreamInfo>> XInfoStream(int db, std::string_view key);

  // Consumer groups (stream_groups.cc, stream_claims.cc). A group command first probes the key
  // and group (XGroupProbe: kWrongType on another kind); the others expect them to exist.
  Result<StreamGroupProbe> XGroupProbe(int db, std::string_view key, std::string_view group);
  // id nullopt: "$" (the stream's last ID). kNoKey without mkstream, kGroupExists.
  Result<StreamError> XGroupCreate(int db, std::string_view key, std::string_view group,
                                   std::optional<StreamId> id, bool mkstream, int64_t entries_read);
  Status XGroupSetId(int db, std::string_view key, std::string_view group,
                     std::optional<StreamId> id, int64_t entries_read);
  Result<int64_t> XGroupDestroy(int db, std::string_view key, std::string_view group);
  Result<int64_t> XGroupCreateConsumer(int db, std::string_view key, std::string_view group,
                                       std::string_view consumer);
  // The number of entries the consumer had pending.
  Result<int64_t> XGroupDelConsumer(int db, std::string_view key, std::string_view group,
                                    std::string_view consumer);
  // XREADGROUP on one stream: new entries (history_from nullopt: ">") or the consumer's pending
  // history from an ID; nullopt when ">" finds nothing new (the stream is not in the reply).
  // `change`, when given, receives what the read changed in the group (also for XCLAIM and
  // XAUTOCLAIM below).
  Result<std::optional<std::vector<StreamEntry>>> XReadGroup(int db, std::string_view key,
                                                             std::string_view group,
                                                             std::string_view consumer,
                                                             std::optional<StreamId> history_from,
                                                             int64_t count, bool noack,
                                                             StreamGroupChange* change = nullptr);
  Result<int64_t> XAck(int db, std::string_view key, std::string_view group,
                       std::span<const StreamId> ids);
  Result<StreamPendingSummary> XPendingSummary(int db, std::string_view key,
                                               std::string_view group);
  Result<std::vector<StreamPendingEntry>> XPendingRange(int db, std::string_view key,
                                                        std::string_view group, int64_t min_idle_ms,
                                                        StreamId start, StreamId end, int64_t count,
                                                        std::optional<std::string_view> consumer);
  Result<StreamClaimReply> XClaim(int db, std::string_view key, std::string_view group,
                                  std::string_view consumer, std::span<const StreamId> ids,
                                  const StreamClaimOptions& options,
                                  StreamGroupChange* change = nullptr);
  Result<StreamClaimReply> XAutoClaim(int db, std::string_view key, std::string_view group,
                                      std::string_view consumer, int64_t min_idle_ms,
                                      StreamId start, int64_t count, bool justid,
                                      StreamGroupChange* change = nullptr);
  Result<std::vector<StreamGroupInfo>> XInfoGroups(int db, std::string_view key);
  Result<std::vector<StreamConsumerInfo>> XInfoConsumers(int db, std::string_view key,
                                                         std::string_view group);

  // ---- Lists (Redis 7.0 semantics; kWrongType on a key of another kind). lists.cc.
  // Elements sit at consecutive positions, so pushes and pops at either end are O(1) element
  // writes; an index is O(1) (LINDEX, LSET), a range O(its length); LREM and LINSERT rewrite
  // the elements after the first change (O(N)).
  enum class ListEnd { kLeft, kRight };
  // LPUSH/RPUSH (LPUSHX/RPUSHX with only_if_exists: nothing happens to a missing key): each
  // element pushed in turn at `end`. Returns the length after (0 for a skipped missing key).
  Result<int64_t> ListPush(int db, std::string_view key, ListEnd end,
                           std::span<const std::string_view> elements, bool only_if_exists);
  // LPOP/RPOP: up to `count` (>= 0) elements from `end`, in pop order; the key goes with its
  // last element. nullopt when the key is missing.
  Result<std::optional<std::vector<std::string>>> ListPop(int db, std::string_view key, ListEnd end,
                                                          int64_t count);
  Result<int64_t> LLen(int db, std::string_view key);
  // A negative index counts from the tail (-1: the last). nullopt when out of range or missing.
  Result<std::optional<std::string>> LIndex(int db, std::string_view key, int64_t index);
  // kNoSuchKey for a missing key; kInvalidArgument "index out of range".
  Status LSet(int db, std::string_view key, int64_t index, std::string_view element);
  // Inclusive range, negative indices from the tail, clamped as Redis does.
  Result<std::vector<std::string>> LRange(int db, std::string_view key, int64_t start,
                                          int64_t stop);
  // Keeps only [start, stop] (LRANGE's indices); the key goes when nothing is left.
  Status LTrim(int db, std::string_view key, int64_t start, int64_t stop);
  // Removes up to |count| elements equal to `element` (count > 0 from the head, < 0 from the
  // tail, 0 all of them). Returns how many were removed.
  Result<int64_t> LRem(int db, std::string_view key, int64_t count, std::string_view element);
  // Inserts before (after == false) or after the first `pivot`: the new length, -1 when the
  // pivot is not there, 0 when the key is missing.
  Result<int64_t> LInsert(int db, std::string_view key, bool after, std::string_view pivot,
                          std::string_view element);
  // LPOS: indices (from the head) of the matches of `element`, starting at the rank-th match
  // (rank != 0; negative: searching from the tail, INT64_MIN acts as -1), at most `count` of
  // them (0: all), looking at no more than `maxlen` elements (0: all). Empty when missing.
  Result<std::vector<int64_t>> LPos(int db, std::string_view key, std::string_view element,
                                    int64_t rank, int64_t count, int64_t maxlen);
  // LMOVE/RPOPLPUSH: pops from src's `from` end and pushes at dst's `to` end (src == dst
  // rotates). nullopt when src is missing (dst is then not examined); kWrongType when src, or
  // dst once src has an element, holds another kind.
  Result<std::optional<std::string>> LMove(int db, std::string_view src, std::string_view dst,
                                           ListEnd from, ListEnd to);
  // LMPOP: up to `count` (> 0) elements from `end` of the first non-empty list among keys
  // (checked in order; kWrongType stops at the first key of another kind). nullopt when every
  // key is missing.
  Result<std::optional<std::pair<std::string, std::vector<std::string>>>> LMPop(
      int db, std::span<const std::string_view> keys, ListEnd end, int64_t count);

  // ---- Sorted sets (Redis 7.0 semantics; kWrongType on a key of another kind). zsets.cc.
  // Members are ordered by score, then by member bytes, as Redis orders them.
  struct ZAddFlags {
    bool nx = false, xx = false, gt = false, lt = false, ch = false, incr = false;
  };
  struct ZAddReply {
    int64_t count = 0;            // added (with ch: added or changed)
    std::optional<double> score;  // incr: the new score; nullopt when the flags skipped it
  };
  // The caller has checked the flag combinations and that incr has one pair. kInvalidArgument
  // "resulting score is not a number (NaN)" when an increment gives NaN (nothing written).
  Result<ZAddReply> ZAdd(int db, std::string_view key, const ZAddFlags& flags,
                         std::span<const std::pair<double, std::string_view>> pairs);
  Result<int64_t> ZRem(int db, std::string_view key, std::span<const std::string_view> members);
  Result<int64_t> ZCard(int db, std::string_view key);
  Result<std::optional<double>> ZScore(int db, std::string_view key, std::string_view member);
  struct ScoreBound {
    double value = 0;
    bool exclusive = false;
  };
  using ScoredMembers = std::vector<std::pair<std::string, double>>;
  Result<int64_t> ZCount(int db, std::string_view key, ScoreBound min, ScoreBound max);
  // Ranks as LRANGE's indices; rev: rank 0 is the highest score.
  Result<ScoredMembers> ZRangeByRank(int db, std::string_view key, int64_t start, int64_t stop,
                                     bool rev);
  // Members with min <= score <= max, ascending (rev: descending), skipping `offset` (< 0:
  // nothing at all), at most `count` (< 0: all).
  Result<ScoredMembers> ZRangeByScore(int db, std::string_view key, ScoreBound min, ScoreBound max,
                                      bool rev, int64_t offset, int64_t count);
  Result<int64_t> ZRemRangeByRank(int db, std::string_view key, int64_t start, int64_t stop);
  Result<int64_t> ZRemRangeByScore(int db, std::string_view key, ScoreBound min, ScoreBound max);
  // A lex range bound: "-" (kMin), "+" (kMax), "[member" or "(member" (exclusive).
  struct LexBound {
    enum class Kind : uint8_t { kMin, kMax, kMember };
    Kind kind = Kind::kMin;
    std::string member;
    bool exclusive = false;
  };
  // Lex ranges are Redis's walk over the set in its order (zset_ranges.cc): from the first member
  // >= min (rev: the last <= max) while members stay <= max (rev: >= min); meaningful when every
  // score is equal, as Redis documents, and then O(log N + M). offset < 0 gives nothing, count < 0
  // everything.
  Result<int64_t> ZLexCount(int db, std::string_view key, const LexBound& min, const LexBound& max);
  Result<ScoredMembers> ZRangeByLex(int db, std::string_view key, const LexBound& min,
                                    const LexBound& max, bool rev, int64_t offset, int64_t count);
  Result<int64_t> ZRemRangeByLex(int db, std::string_view key, const LexBound& min,
                                 const LexBound& max);
  // ZRANK/ZREVRANK: the member's rank, nullopt when it (or the key) is missing. O(rank).
  Result<std::optional<int64_t>> ZRank(int db, std::string_view key, std::string_view member,
                                       bool rev);
  Result<std::vector<std::optional<double>>> ZMScore(int db, std::string_view key,
                                                     std::span<const std::string_view> members);
  // Any of ZRANGE's three ranges (ZRANGESTORE's source).
  struct ZRangeQuery {
    enum class By : uint8_t { kRank, kScore, kLex };
    By by = By::kRank;
    bool rev = false;
    int64_t start = 0, stop = -1;     // kRank
    ScoreBound score_min, score_max;  // kScore
    LexBound lex_min, lex_max;        // kLex
    int64_t offset = 0, count = -1;   // kScore, kLex
  };
  Result<ScoredMembers> ZRange(int db, std::string_view key, const ZRangeQuery& q);
  // ZRANGESTORE: dst (whatever it held) becomes the range of src, or is deleted when it is empty.
  // kWrongType when src is not a sorted set. Returns the result's size.
  Result<int64_t> ZRangeStore(int db, std::string_view dst, std::string_view src,
                              const ZRangeQuery& q);

  // Pops (zset_pops.cc). ZPOPMIN/ZPOPMAX: up to count (>= 0) members from the low (kMin) or high
  // end, in pop order; the key goes with its last member. Empty for a missing key.
  enum class ZEnd : uint8_t { kMin, kMax };
  Result<ScoredMembers> ZPop(int db, std::string_view key, ZEnd end, int64_t count);
  // ZMPOP (and a blocking BZPOPMIN/BZPOPMAX/BZMPOP's retry): up to count (> 0) members from the
  // first non-empty sorted set among keys, checked in order (kWrongType stops at the first key of
  // another kind); nullopt when every key is empty, the caller may then wait and call again.
  Result<std::optional<std::pair<std::string, ScoredMembers>>> ZMPop(
      int db, std::span<const std::string_view> keys, ZEnd end, int64_t count);
  // ZRANDMEMBER's picks: count >= 0 distinct members (all when count >= ZCARD), count < 0
  // exactly -count, repeats allowed (kInvalidArgument below -2^26 picks). Empty when missing.
  Result<ScoredMembers> ZRandMember(int db, std::string_view key, int64_t count);
  // ZSCAN: a small set (listpack) whole, in score order, with cursor 0; a big one in pages.
  struct ZScanReply {
    uint64_t next_cursor = 0;
    ScoredMembers items;
  };
  Result<ZScanReply> ZScan(int db, std::string_view key, uint64_t cursor,
                           std::optional<std::string_view> match, int64_t count);

  // ZUNION/ZINTER/ZDIFF (zset_algebra.cc) over sorted sets and plain sets (members scored 1);
  // every key's type is checked first (kWrongType), a missing key is empty. weights: one per
  // key, or empty for all 1 (ZDIFF ignores them); a weighted or summed NaN (0 * inf, inf + -inf)
  // is 0, as in Redis. The result comes in Redis's order (score, then member bytes).
  enum class ZAggregate : uint8_t { kSum, kMin, kMax };
  struct ZAlgebraArgs {
    SetOp op = SetOp::kUnion;
    std::span<const std::string_view> keys;
    std::span<const double> weights;
    ZAggregate aggregate = ZAggregate::kSum;
  };
  Result<ScoredMembers> ZSetAlgebra(int db, const ZAlgebraArgs& args);
  // The STORE forms: dst (whatever it held) becomes the result, or is deleted when it is empty.
  Result<int64_t> ZSetAlgebraStore(int db, std::string_view dst, const ZAlgebraArgs& args);
  // ZINTERCARD: the intersection's size, counting stops at limit (0: no limit).
  Result<int64_t> ZInterCard(int db, std::span<const std::string_view> keys, int64_t limit);

  // ---- Limiters
  Result<limiter::Decision> GcraTake(int db, std::string_view key, const limiter::GcraParams& p,
                                     int64_t cost);
  Result<limiter::Decision> LeakyTake(int db, std::string_view key, const limiter::LeakyParams& p,
                                      int64_t cost);
  Result<limiter::Decision> WindowTake(int db, std::string_view key, const limiter::WindowParams& p,
                                       int64_t cost);
  Result<limiter::Decision> SlidingTake(int db, std::string_view key,
                                        const limiter::SlidingParams& p, int64_t cost);
  Result<ConcAcquireReply> ConcAcquire(int db, std::string_view key, const limiter::ConcParams& p,
                                       std::string_view token);
  Result<bool> ConcRelease(int db, std::string_view key, std::string_view token);
  Result<limiter::Decision> LimitRefund(int db, std::string_view key, const limiter::LimitParams& p,
                                        int64_t units);
  Result<LimitsReply> LimitsTake(int db, std::span<const LimitGroup> groups, int64_t cost);
  Result<LimitsReply> LimitsRefund(int db, std::span<const LimitGroup> groups, int64_t units);

  // The engine's context for this unit (internal::Txn), for the engine's own files.
  internal::Txn& txn() { return *txn_; }

 private:
  Status ClaimWrite(int db, std::string_view key);
  Status ClaimRead(int db, std::string_view key);
  // Keyspace walks (write=false) in an isolating unit, and flushes (write=true) in any unit,
  // need every stripe.
  Status ClaimAll(bool write);
  internal::Txn* NewTxn();

  void JoinGroup(std::span<const KeyRef> keys);

  Store& store_;
  TransactionOptions options_;
  CommitGroup* group_ = nullptr;  // set when the unit is a member of options.group
  // Own units: from a per-thread free list, held until destruction. Members: the group's.
  internal::LockSet* locks_;
  internal::Txn* txn_;  // own units: constructed in txn_storage_; members: the group's
  alignas(16) unsigned char txn_storage_[64];
};

// CommitGroup: lets consecutive units on one thread share one RocksDB write. A member unit
// (TransactionOptions::group, without all_keys) runs as any unit, with its own time, its keys
// locked and, with isolate_reads, the undeclared keys it reads claimed into the group's locks
// (a script: it stops with kLockConflict where another thread holds one), but its
// Commit() only keeps its writes in the group's batch, and its locks stay held by the group
// until Flush() writes every member's writes as one RocksDB write and releases them. Later
// members read earlier members' writes. The server runs an I/O round's plain data commands (every
// connection a thread served between two looks at its sockets) as one group: one write and one
// commit notification instead of one per command.
//
// Deadlock freedom: a member takes the stripes the group does not hold yet by try-lock only;
// when one is busy the groups alive on its thread are flushed first (their locks released) and
// the member then waits for its stripes like any unit, holding nothing else. A unit that is not
// a member, created on a thread where a group is alive, flushes it before it waits for its own
// locks (the group may hold one of them, and only this thread could release it). So no thread
// waits for a lock while one of its groups holds locks.
//
// Until Flush() returns, no member's result may be acknowledged (nothing is written yet); a
// failed Flush() wrote nothing of any member since the last flush. The group flushes by itself
// when it holds kMaxStripes stripes (the more it holds, the likelier another thread's member
// waits for one), has kMaxUnits members, or kMaxBytes staged. Counting stripes rather than
// members lets a run of commands on one hot key (a pipelined XADD or LPUSH from many clients)
// stay one write: one record of the key's metadata, and one hand-over of its stripe to the
// other I/O threads, per 1024 members instead of per 64. Thread-compatible: one thread, and
// members are created one at a time (never two alive at once).
class CommitGroup {
 public:
  static constexpr size_t kMaxUnits = 1024;
  static constexpr size_t kMaxStripes = 64;
  static constexpr size_t kMaxBytes = 1 << 20;

  // `defer_durability`: the group's writes only buffer their WAL record (see
  // TransactionOptions::defer_durability).
  CommitGroup(Store& store, bool defer_durability);
  ~CommitGroup();  // flushes; call Flush() first to see its status
  CommitGroup(const CommitGroup&) = delete;
  CommitGroup& operator=(const CommitGroup&) = delete;

  // Writes the members' writes as one RocksDB write (notifying commit observers once), then
  // releases the group's locks. The first failure sticks: later members' commits and flushes
  // report it (the caller should stop adding members).
  Status Flush();
  // The sticky failure of a flush, or OK.
  const Status& status() const { return status_; }
  bool empty() const { return members_ == 0; }

 private:
  friend class Store::Transaction;
  internal::LockSet& locks() { return *locks_; }
  internal::Txn& txn() { return *txn_; }
  // After a member's Commit(): flushes when a bound is reached.
  Status MemberCommitted();

  Store& store_;
  bool defer_durability_;
  size_t members_ = 0;
  Status status_;
  internal::LockSet* locks_;
  internal::Txn* txn_;
  alignas(16) unsigned char txn_storage_[64];
};

}  // namespace sluice
