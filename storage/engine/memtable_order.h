// The order of the memtable's key nodes (memtable.cc has the structure): sorted runs of nodes,
// merged as they grow, and a short unsorted tail of the newest keys. A new key costs an append
// to the tail; every kTailEntries keys the tail is sorted into a run, and runs of similar size
// are merged, so each key is copied about log2(run size / kTailEntries) times, in arrays read
// and written in order. Keys that arrive in order (a stream's entries, a list's positions) cost
// few comparisons: the tail's ascending or descending stretches are merged rather than sorted,
// and a merge copies a long block of one run whole (memtable_order.cc). An iterator walks a
// snapshot of the runs (and a sorted copy of the tail) with an OrderCursor, which merges them.
// Internal to memtable.cc.
//
// Why not a skiplist: linking a new key into one is a walk of ~log4(keys) nodes, each a cache
// miss once the memtable outgrows the caches (the walk's first comparison at each step was 65%
// of an insert's samples); under limiter churn most writes create a key, and that walk was half
// of the CPU a write of a new key cost (docs/engine.md "The memtable" has the measurements).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "memtable_nodes.h"

namespace sluice::internal::memtable_nodes {

// A user key with its first 16 bytes as two big-endian integers, zero-padded: where the integers
// differ, the keys order as they do (a shorter key pads with zeros and is then a prefix).
struct SearchKey {
  Key key;
  uint64_t p0;
  uint64_t p1;
};

inline SearchKey SearchKeyOf(const Key& key) {
  char buf[16] = {};
  std::memcpy(buf, key.user, std::min<uint32_t>(key.user_size, 16));
  return SearchKey{key, LoadBE64(buf), LoadBE64(buf + 8)};
}

// One key node in a run: the key's two integers (most comparisons end there, inside the run's
// array), an entry holding the key's bytes (the node's first version; read only on a tie) and
// the node.
struct OrderEntry {
  uint64_t p0;
  uint64_t p1;
  const char* entry;
  KeyNode* node;
};

// <0, 0, >0: e's key against k.
inline int Compare(const OrderEntry& e, const SearchKey& k) {
  if (e.p0 != k.p0) return e.p0 < k.p0 ? -1 : 1;
  if (e.p1 != k.p1) return e.p1 < k.p1 ? -1 : 1;
  const Key mine = KeyOfEntry(e.entry);
  return CompareUser(mine.user, mine.user_size, k.key.user, k.key.user_size);
}

inline bool Less(const OrderEntry& a, const OrderEntry& b) {
  if (a.p0 != b.p0) return a.p0 < b.p0;
  if (a.p1 != b.p1) return a.p1 < b.p1;
  const Key x = KeyOfEntry(a.entry);
  const Key y = KeyOfEntry(b.entry);
  return CompareUser(x.user, x.user_size, y.user, y.user_size) < 0;
}

// A sorted array of key nodes (no key twice), immutable once shared, and its fence: the
// integers of every kFenceStride-th entry, a dense array a search reads first, so that a seek in
// a run of 2^17 entries (4 MB) touches one block of the entries instead of ~17 scattered ones.
struct Run {
  static constexpr size_t kFenceStride = 16;
  struct Prefix {
    uint64_t p0;
    uint64_t p1;
  };
  explicit Run(std::vector<OrderEntry> sorted);

  size_t size() const { return entries.size(); }
  // The number of entries before k (LowerBound), in three steps that a search of many runs
  // takes run by run, so that the runs' cache misses overlap: the span of entries the fence
  // leaves to compare (the first step prefetches its lines), then the key bytes of the span's
  // entries whose integers tie with k's (prefetched; a tie is compared in full), then the search.
  struct Span {
    size_t lo;
    size_t hi;
  };
  Span FenceSpan(const SearchKey& k) const;
  void PrefetchTies(Span span, const SearchKey& k) const;
  size_t Search(Span span, const SearchKey& k) const;
  size_t LowerBound(const SearchKey& k) const { return Search(FenceSpan(k), k); }

  std::vector<OrderEntry> entries;
  std::vector<Prefix> fence;
};

// What an iterator walks: every key node added before the snapshot was taken, each in exactly
// one run. Shares the runs, so a merge after the snapshot frees nothing the snapshot uses.
struct OrderSnapshot {
  std::vector<std::shared_ptr<const Run>> runs;
  uint64_t keys = 0;  // how many keys the order had been given when it was taken
};

// The memtable's key order. Thread-safe: Add from any number of writers at once, Snapshot from
// any reader; both take one mutex, held by Add for an append, and every kTailEntries new keys
// for the tail's sort and the small merges it leads to (up to kInlineMergeEntries entries, well
// under a millisecond). Larger merges run on the process's merge thread (RunMerger), outside the
// mutex: a write group waits for its slowest member, so a long merge on a writer would stall
// every writer. Owned by a shared_ptr (the merge thread's queue holds one too); the memtable
// calls Close before its arena, which holds the keys the runs point into, goes away.
class KeyOrder : public std::enable_shared_from_this<KeyOrder> {
 public:
  static constexpr size_t kTailEntries = 256;
  static constexpr size_t kInlineMergeEntries = size_t{1} << 16;

  KeyOrder();

  // Adds a node that no earlier call added (the bucket's compare-and-swap decides the one
  // writer that creates a key's node); `entry` holds its key and lives as long as the memtable.
  void Add(KeyNode* node, const Key& key, const char* entry);
  OrderSnapshot Snapshot();
  // A snapshot into *out only when keys were added since `seen` was taken (its `keys`); false
  // leaves *out as it was. For an iterator that starts a new read (memtable_iterator.h).
  bool SnapshotIfNewer(const OrderSnapshot& seen, OrderSnapshot* out);
  // Bytes held by the runs and the tail (the memtable's arena does not hold them).
  size_t MemoryBytes() const { return bytes_.load(std::memory_order_relaxed); }
  // Stops a merge in progress (within a few thousand entries) and starts no other; returns once
  // no merge reads the memtable's keys.
  void Close();
  // The merge thread's work: merges neighbouring large runs while one pair is due.
  void MergeLarge();
  // How many large merges ran to completion, here and in the whole process (tests).
  uint64_t large_merges() const { return large_merges_.load(std::memory_order_relaxed); }
  static uint64_t LargeMergesInProcess();

 private:
  void SortTail();  // under mu_
  // Under mu_: tail_ becomes the merge of its ascending stretches, which begin at `starts`
  // (starts[0] == 0).
  void MergeStretches(std::span<const size_t> starts);
  void SnapshotLocked(OrderSnapshot* out);  // under mu_
  void SealTail();  // under mu_: the tail becomes a run, merged with its neighbours as due
  // Under mu_: the first of two neighbouring runs due a merge of more than kInlineMergeEntries
  // (the older at most twice the newer), or runs_.size().
  size_t DueLargeMerge() const;
  bool InLargeMerge(const Run* run) const;  // under mu_
  void CountBytes();                        // under mu_ (or in the constructor)

  std::mutex mu_;
  std::vector<OrderEntry> tail_;          // guarded by mu_; tail_[0, tail_sorted_) is sorted
  size_t tail_sorted_ = 0;                // guarded by mu_
  uint64_t keys_added_ = 0;               // guarded by mu_
  std::shared_ptr<const Run> tail_copy_;  // guarded by mu_: tail_ as last shared, while unchanged
  // Guarded by mu_; oldest first, each more than twice the size of the next where merges are up
  // to date, so about log2(keys / kTailEntries) runs.
  std::vector<std::shared_ptr<const Run>> runs_;
  std::atomic<size_t> bytes_{0};
  // The merge thread's state, guarded by mu_: queued for it; the two runs it is merging (which
  // the writers' merges leave alone, so they are still neighbours when it is done); closed.
  bool queued_ = false;
  const Run* merging_[2] = {nullptr, nullptr};
  bool closed_ = false;
  std::condition_variable merge_done_;
  std::atomic<bool> cancel_{false};  // set by Close: a merge in progress stops
  std::atomic<uint64_t> large_merges_{0};
};

// A position among the key nodes of a snapshot that moves either way in key order. One thread.
// State: pos_[i] is the number of entries of run i before the current node, so the current node
// is runs_[at_][pos_[at_]]; the next node is the least of the runs' entries at pos_, the one
// before it the greatest of those at pos_ - 1. Going forward, the runs are kept ordered by their
// entry at pos_ (ahead_), so a step compares the moved run's next entry with ~log2(runs) others
// (binary insertion) instead of every run's: the entries of one collection share their first 16
// bytes (the integers), so each comparison reads both keys' bytes, and a memtable has ~12 runs.
class OrderCursor {
 public:
  explicit OrderCursor(OrderSnapshot snapshot);
  const OrderSnapshot& snapshot() const { return snapshot_; }

  KeyNode* SeekToFirst();
  KeyNode* SeekToLast();
  KeyNode* SeekAtOrAfter(const SearchKey& k);  // the first node at or after k
  KeyNode* SeekBefore(const SearchKey& k);     // the last node before k
  // From a valid position: the next node, the one before (nullptr: none, and the cursor is then
  // invalid until a seek).
  KeyNode* Next();
  KeyNode* Prev();
  // Fetches into the caches the key bytes of the current run's next entry (the next step
  // compares them), the newest version of its node two entries ahead and the node four ahead
  // (fetched by an earlier call, two moves of this run ago): each run's next node and version are
  // warm by the time a scan reaches them, even when one run supplies several nodes in a row (one
  // step ahead was too close: the fetch had not arrived).
  void PrefetchAhead() const;
  // How many nodes are before k.
  uint64_t CountBefore(const SearchKey& k) const;

 private:
  static constexpr size_t kRunsSearchedTogether = 32;

  // A run's entry at pos_, its key bytes decoded once.
  struct Head {
    uint64_t p0;
    uint64_t p1;
    const char* user;
    uint32_t user_size;
    uint32_t run;
  };
  static bool HeadLess(const Head& a, const Head& b);
  Head HeadOf(uint32_t run) const;

  KeyNode* Least();     // at_ := the run whose entry at pos_ is least (orders ahead_)
  KeyNode* Greatest();  // at_ := the run whose entry at pos_ - 1 is greatest, stepped back
  void LowerBounds(const SearchKey& k);

  OrderSnapshot snapshot_;
  std::vector<const Run*> runs_;  // the snapshot's non-empty runs
  std::vector<size_t> pos_;
  size_t at_ = 0;
  // When ahead_valid_: every run with an entry at pos_, greatest entry first (at_'s is last).
  std::vector<Head> ahead_;
  bool ahead_valid_ = false;
};

}  // namespace sluice::internal::memtable_nodes
