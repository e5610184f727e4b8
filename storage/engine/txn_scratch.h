// Txn::Scratch (txn.h): a unit's reusable state, shared by txn.cc (the unit's reads and writes)
// and txn_commit.cc (its key counts, commit and marks). Internal to the Txn.
#pragma once

#include <rocksdb/slice.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "indexed_batch.h"
#include "keyspace_counts.h"
#include "pending_puts.h"
#include "read_ahead.h"
#include "scratch.h"
#include "txn.h"

namespace sluice::internal {

namespace txn_detail {
// Key lists longer than this (a many-key command) are given back after the Txn, and so is each
// key string longer than kKeepKeyBytes (so a kept list holds at most 1 MB of them). A commit
// group's unit lives for one I/O round and notes every key its members read and wrote (a round of
// scripts on a queue: thousands), so its lists are kept up to a round's size: given back at 64,
// each round allocated every key's string again (malloc and free were 3% of the server's samples
// under a BullMQ worker).
inline constexpr size_t kKeepKeySlots = 4096;
inline constexpr size_t kKeepKeyBytes = 256;

inline uint64_t HashKey(std::string_view k) { return XXH3_64bits(k.data(), k.size()); }

// A list of keys kept in reused strings: clearing it keeps every string's capacity.
struct KeyList {
  std::vector<std::string> slots;
  // hashes[i]: HashKey(slots[i]). SortPositions orders by it first: sorting a commit group's
  // keys by their bytes was 4% of an INCR's instructions (a string compare per step).
  std::vector<uint64_t> hashes;
  size_t n = 0;
  void Add(std::string_view k) {
    if (n == slots.size()) {
      slots.emplace_back();
      hashes.emplace_back();
    }
    hashes[n] = HashKey(k);
    slots[n++].assign(k);
  }
  bool Same(size_t a, size_t b) const { return hashes[a] == hashes[b] && slots[a] == slots[b]; }
  bool Contains(std::string_view k, size_t from = 0) const {
    const auto end = slots.begin() + static_cast<std::ptrdiff_t>(n);
    return std::find(slots.begin() + static_cast<std::ptrdiff_t>(from), end, k) != end;
  }
  // Only the slots used since the last Trim can have grown: a small unit after a big round
  // touches its own few, not the whole kept list.
  void Trim() {
    if (slots.size() > kKeepKeySlots) {  // a many-key command (MSET): not kept
      std::vector<std::string>().swap(slots);
      std::vector<uint64_t>().swap(hashes);
    } else {
      for (size_t i = 0; i < n; ++i) {
        if (slots[i].capacity() > kKeepKeyBytes) std::string().swap(slots[i]);
      }
    }
    n = 0;
  }
};

inline constexpr uint32_t kDefaultCf = 0;  // RocksDB's default column family: the keys

inline int DbOf(std::string_view raw_key) {
  return raw_key.empty() ? -1 : static_cast<unsigned char>(raw_key[0]);
}

// What a slot of the written list did to its key in the default column family.
enum WriteOp : uint8_t { kTouched = 0, kPutPersistent = 1, kPutExpiring = 2, kDeleted = 3 };

inline KeyCounts CountsAfter(uint8_t op) {
  return KeyCounts{op == kPutPersistent || op == kPutExpiring ? 1 : 0, op == kPutExpiring ? 1 : 0};
}

// A key's stored state as a locked read found it, and how many slots the written list had then
// (a note is the stored state only for a key first written at a later slot).
struct ReadNote {
  KeyCounts counts;
  int64_t expire_at_ms = kNoExpiry;  // the stored value's (expired or not)
  size_t written_n = 0;
};

}  // namespace txn_detail

struct Txn::Scratch {
  IndexedBatch batch;
  rocksdb::PinnableSlice read;
  // The last ReadView's key and outcome while `read` still holds its value (read_valid): a read
  // of the same key before any write gets it again without searching the batch or the store.
  std::string read_key;
  bool read_valid = false;
  bool read_found = false;
  // Puts not yet in the batch (pending_puts.h): every Put of the default column family, and the
  // rewritable element records (a stream's node, a group, a consumer). The unit's next write of
  // the same record replaces it, so a unit that rewrites a key (INCRBY then EXPIRE) stages one
  // record (one memtable insert, one log record), and reads of it need no batch search. They
  // also stay pending across a commit group member's mark (Txn::SetMark) when small, so the
  // members that rewrite one hot key's metadata (a pipelined LPUSH, HSET, ZADD or XADD on one
  // key) stage one record for the group, not one per member.
  PendingPuts pending;
  txn_detail::KeyList expired;      // expired values Read found, each once
  txn_detail::KeyList written;      // keys this txn wrote or touched, in order (repeats allowed)
  std::vector<uint8_t> ops;         // ops[i]: what written.slots[i] did (WriteOp)
  std::vector<int64_t> put_expiry;  // put_expiry[i]: the expiry a kPutExpiring op wrote
  txn_detail::KeyList reads;        // keys read from the store under their lock...
  std::vector<txn_detail::ReadNote> read_notes;  // ...and what was stored (parallel to reads)
  // ComputeCountChanges's scratch: written (every op) and reads, sorted by (key, position).
  std::vector<uint32_t> order;
  std::vector<uint32_t> read_order;
  // The keys whose expiry the commit hands to the expiry cycle (ComputeCountChanges), and
  // those expiries.
  std::vector<const std::string*> hand_keys;
  std::vector<int64_t> hand_at_ms;
  // The element-version buckets of the element records written (repeats allowed; a member
  // rolled back to its mark keeps its buckets: an extra bump only retires cached records).
  std::vector<uint32_t> element_buckets;
  std::string cache_key;  // an element record's key in the record cache (Txn::GetRaw)
  // Stored records of a run read ahead (Txn::GetRawInRun), valid until the unit commits or
  // rolls back (Reset), and the bounds of the run being read (FillReadAhead's).
  ReadAhead ahead;
  std::string ahead_lower;
  std::string ahead_upper;
  uint32_t ahead_table_reads = 0;  // GetRawInRun's reads from a table file in this unit
  uint32_t flushed = 0;            // bit d: DeleteDb(d) ran in this unit
  size_t written_at_flush[kNumDatabases] = {};  // written.n when db d was last emptied

  // The state at the mark (Txn::SetMark), restored by RollbackToMark.
  struct Mark {
    size_t expired_n = 0;
    size_t written_n = 0;
    size_t reads_n = 0;
    uint32_t flushed = 0;
    uint32_t batch_count = 0;
    size_t written_at_flush[kNumDatabases] = {};
    // The pending Puts at the mark (copies: a later member may replace one, then roll back).
    PendingPuts::Saved pending;
  } mark;

  void Reset() {
    if (batch.Count() > 0) batch.Clear();  // a read-only unit, the common case, staged nothing
    read.Reset();
    read_valid = false;
    pending.Clear();
    expired.n = 0;
    written.n = 0;
    reads.n = 0;
    hand_keys.clear();
    hand_at_ms.clear();
    element_buckets.clear();
    ahead.Clear();
    ahead_table_reads = 0;
    flushed = 0;
  }
  void Trim() {
    read.Reset();
    read_valid = false;
    TrimScratch(read.GetSelf());
    TrimScratch(&read_key);
    pending.Trim();
    ahead.Trim();
    for (PendingPuts::Slot& slot : mark.pending.slots) {
      TrimScratch(&slot.key);
      TrimScratch(&slot.value);
    }
    batch.Trim(kScratchKeepBytes);
    expired.Trim();
    written.Trim();
    reads.Trim();
    if (ops.size() > txn_detail::kKeepKeySlots) std::vector<uint8_t>().swap(ops);
    if (put_expiry.size() > txn_detail::kKeepKeySlots) std::vector<int64_t>().swap(put_expiry);
    if (hand_keys.capacity() > txn_detail::kKeepKeySlots)
      std::vector<const std::string*>().swap(hand_keys);
    if (hand_at_ms.capacity() > txn_detail::kKeepKeySlots) std::vector<int64_t>().swap(hand_at_ms);
    if (read_notes.size() > txn_detail::kKeepKeySlots)
      std::vector<txn_detail::ReadNote>().swap(read_notes);
    if (order.size() > txn_detail::kKeepKeySlots) std::vector<uint32_t>().swap(order);
    if (element_buckets.capacity() > txn_detail::kKeepKeySlots)
      std::vector<uint32_t>().swap(element_buckets);
    TrimScratch(&cache_key);
    if (read_order.size() > txn_detail::kKeepKeySlots) std::vector<uint32_t>().swap(read_order);
  }
};

}  // namespace sluice::internal
