// The memtable representation (memtable.h has the why and the contract).
//
// Structure:
// - A Version per RocksDB entry: [older version of the same key][entry bytes]. The handle
//   RocksDB gets from Allocate is the Version.
// - A KeyNode per distinct user key: the newest Version (its chain runs newest to oldest, which
//   is RocksDB's order for one user key), the next node of its hash bucket, the key's hash, and
//   skiplist pointers. KeyNodes form a skiplist in user-key order; its level-i pointer sits i
//   slots below next_[0]. The user key is read from the newest version's entry (every version
//   holds the same bytes).
// - A chained hash table of KeyNodes, its buckets allocated in segments on first use, so an
//   empty memtable costs a few KB and a full one one pointer per bucket.
// Every node lives in the memtable's arena and is never unlinked or freed before the memtable.
//
// Concurrency: readers never lock. A writer fills a node completely, then publishes it with
// one release store or compare-and-swap (a chain link, a skiplist level, a bucket head, a
// segment); readers load with acquire. Inserts come either one at a time (Insert, InsertKey:
// RocksDB's write-group leader, recovery) or from many threads at once (InsertKeyConcurrently:
// each writer of a parallel group inserts its own batch), never both at once. Nothing is ever
// unlinked, so the compare-and-swap loops see no ABA: a failed one only means another writer
// linked a node in the same place first, and the search resumes from where it was.
#include "memtable.h"

#include <rocksdb/slice.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>

#include "memtable_iterator.h"
#include "memtable_nodes.h"

namespace sluice::internal {
namespace {

using namespace memtable_nodes;  // NOLINT: this file is the nodes' one user

constexpr size_t kSegmentBuckets = 4096;  // 32 KB of bucket heads, allocated on first use

std::atomic<uint64_t> lists_created{0};
thread_local uint64_t concurrent_inserts_on_this_thread = 0;

// The first three members of rocksdb::LookupKey (db/dbformat.h): where the memtable key starts,
// where its internal key starts, and where it ends.
struct LookupKeyLayout {
  const char* start;
  const char* kstart;
  const char* end;
};

[[noreturn]] void LayoutMismatch() {
  std::fprintf(stderr,
               "sluice: this librocksdb's LookupKey layout is not the one Sluice's memtable "
               "reads; rebuild Sluice against a supported RocksDB (6.x-9.x)\n");
  std::abort();
}

class HashedList final : public rocksdb::MemTableRep {
 public:
  HashedList(rocksdb::Allocator* allocator, size_t buckets, KeyPrefetcher* prefetcher)
      : MemTableRep(allocator),
        bucket_mask_(buckets - 1),
        segment_count_((buckets + kSegmentBuckets - 1) / kSegmentBuckets),
        prefetcher_(prefetcher) {
    char* raw = ArenaAligned(sizeof(std::atomic<std::atomic<KeyNode*>*>) * segment_count_);
    segments_ = reinterpret_cast<std::atomic<std::atomic<KeyNode*>*>*>(raw);
    for (size_t i = 0; i < segment_count_; ++i) {
      new (&segments_[i]) std::atomic<std::atomic<KeyNode*>*>(nullptr);
    }
    head_ = NewKeyNode(kMaxHeight);
    if (prefetcher_ != nullptr) prefetcher_->SetCurrent(this);
  }
  ~HashedList() override {
    if (prefetcher_ != nullptr) prefetcher_->Forget(this);
  }

  // KeyPrefetcher::Prefetch's work, in three rounds over the keys so that each round's misses
  // overlap: the buckets, then the first node of each, then its newest version. A key about to
  // be written (bit i of `written`) whose bucket does not start with it is likely new: its
  // insert's skiplist path is walked too (PrefetchInsertPaths).
  void Prefetch(const std::string_view* user_keys, size_t n, uint32_t written) const {
    uint64_t hashes[KeyPrefetcher::kMaxKeys];
    const std::atomic<KeyNode*>* buckets[KeyPrefetcher::kMaxKeys];
    for (size_t i = 0; i < n; ++i) {
      hashes[i] = XXH3_64bits(user_keys[i].data(), user_keys[i].size());
      buckets[i] = FindBucket(hashes[i]);
      if (buckets[i] != nullptr) __builtin_prefetch(buckets[i]);
    }
    const KeyNode* nodes[KeyPrefetcher::kMaxKeys];
    for (size_t i = 0; i < n; ++i) {
      nodes[i] = buckets[i] == nullptr ? nullptr : buckets[i]->load(std::memory_order_acquire);
      if (nodes[i] != nullptr) __builtin_prefetch(&nodes[i]->newest);
    }
    std::string_view new_keys[KeyPrefetcher::kMaxKeys];
    size_t new_count = 0;
    for (size_t i = 0; i < n; ++i) {
      if (nodes[i] != nullptr && nodes[i]->hash == hashes[i]) {
        __builtin_prefetch(nodes[i]->Newest());
      } else if ((written >> i) & 1u) {
        new_keys[new_count++] = user_keys[i];
      }
    }
    PrefetchInsertPaths(new_keys, new_count);
  }

  // What a walk reads of a node it steps to: its prefix, and its pointer at the walk's level
  // (which sits below the node's fields, on another line from the third level up).
  static void PrefetchStep(KeyNode* node, int level) {
    __builtin_prefetch(&node->prefix);
    __builtin_prefetch(node->Slot(level));
  }

  // Walks the skiplist search of each key (Locate's path, which an insert's search follows) one
  // step per key per round, prefetching the node each key looks at next, so that the keys'
  // misses overlap instead of coming one after another. Reads only, like an iterator; the
  // result is warm caches.
  void PrefetchInsertPaths(const std::string_view* user_keys, size_t n) const {
    struct Walk {
      Key key;
      uint64_t prefix;
      KeyNode* x;         // the last node known to be before the key
      KeyNode* next;      // the node compared next (prefetched)
      int level;          // -1: done
      bool version_warm;  // next's prefix equals the key's: its newest version is fetched
    };
    Walk walks[KeyPrefetcher::kMaxKeys];
    const int top = max_height_.load(std::memory_order_acquire) - 1;
    for (size_t i = 0; i < n; ++i) {
      Walk& w = walks[i];
      w.key = Key{user_keys[i].data(), static_cast<uint32_t>(user_keys[i].size()), 0};
      w.prefix = PrefixOf(w.key);
      w.x = head_;
      w.level = top;
      w.next = head_->Next(top);
      w.version_warm = false;
      if (w.next != nullptr) PrefetchStep(w.next, top);
    }
    constexpr int kMaxRounds = 4 * kBranching * kMaxHeight;
    for (int round = 0, active = static_cast<int>(n); active > 0 && round < kMaxRounds; ++round) {
      active = 0;
      for (size_t i = 0; i < n; ++i) {
        Walk& w = walks[i];
        if (w.level < 0) continue;
        ++active;
        if (w.next != nullptr && w.next->prefix == w.prefix && !w.version_warm) {
          __builtin_prefetch(w.next->Newest());  // the prefixes tie: compare the keys next round
          w.version_warm = true;
          continue;
        }
        if (w.next != nullptr && w.next->CompareTo(w.key, w.prefix) < 0) {
          w.x = w.next;
        } else if (--w.level < 0) {
          continue;
        }
        w.next = w.x->Next(w.level);
        w.version_warm = false;
        if (w.next != nullptr) PrefetchStep(w.next, w.level);
      }
    }
  }

  rocksdb::KeyHandle Allocate(const size_t len, char** buf) override {
    auto* v = reinterpret_cast<Version*>(ArenaAligned(sizeof(Version) + len));
    new (&v->older) std::atomic<Version*>(nullptr);
    *buf = v->Entry();
    return v;
  }

  void Insert(rocksdb::KeyHandle handle) override { Add(static_cast<Version*>(handle)); }
  void InsertConcurrently(rocksdb::KeyHandle handle) override {
    AddConcurrently(static_cast<Version*>(handle));
  }
  bool InsertKeyConcurrently(rocksdb::KeyHandle handle) override {
    return AddConcurrently(static_cast<Version*>(handle));
  }
  bool InsertKey(rocksdb::KeyHandle handle) override { return Add(static_cast<Version*>(handle)); }
  void InsertWithHint(rocksdb::KeyHandle handle, void** /*hint*/) override {
    Add(static_cast<Version*>(handle));
  }
  bool InsertKeyWithHint(rocksdb::KeyHandle handle, void** /*hint*/) override {
    return Add(static_cast<Version*>(handle));
  }

  bool Contains(const char* entry) const override {
    const Key key = KeyOfEntry(entry);
    const KeyNode* node = Find(key, HashUser(key));
    if (node == nullptr) return false;
    for (const Version* v = node->Newest(); v != nullptr; v = v->Older()) {
      if (v->GetKey().tag == key.tag) return true;
    }
    return false;
  }

  void Get(const rocksdb::LookupKey& k, void* callback_args,
           bool (*callback_func)(void* arg, const char* entry)) override {
    LookupKeyLayout layout;
    std::memcpy(&layout, &k, sizeof layout);
    uint32_t size;
    const char* ikey = DecodeVarint32(layout.start, &size);
    if (ikey != layout.kstart || layout.kstart + size != layout.end || size < 8) LayoutMismatch();
    const Key key = KeyOfInternal(ikey, size);
    // The entries at or after the lookup key that share its user key are this key's versions
    // no newer than it; the entries after them belong to other user keys, which the callback
    // (RocksDB's SaveValue) would stop at without using.
    const KeyNode* node = Find(key, HashUser(key));
    if (node == nullptr) return;
    const Version* v = node->Newest();
    while (v != nullptr && v->GetKey().tag > key.tag) v = v->Older();
    for (; v != nullptr && callback_func(callback_args, v->Entry()); v = v->Older()) {
    }
  }

  // Every byte is in the arena, which the memtable accounts for itself.
  size_t ApproximateMemoryUsage() override { return 0; }

  uint64_t ApproximateNumEntries(const rocksdb::Slice& start_ikey,
                                 const rocksdb::Slice& end_ikey) override {
    const uint64_t before_end =
        EstimateKeysBelow(KeyOfInternal(end_ikey.data(), static_cast<uint32_t>(end_ikey.size())));
    const uint64_t before_start = EstimateKeysBelow(
        KeyOfInternal(start_ikey.data(), static_cast<uint32_t>(start_ikey.size())));
    return before_end > before_start ? before_end - before_start : 0;
  }

  Iterator* GetIterator(rocksdb::Arena* arena) override;

  // ---- Searches (any thread, concurrently with the writer).
  KeyNode* head() const { return head_; }

  // The key's node, or nullptr.
  KeyNode* Find(const Key& key, uint64_t hash) const {
    const std::atomic<KeyNode*>* bucket = FindBucket(hash);
    if (bucket == nullptr) return nullptr;
    for (KeyNode* n = bucket->load(std::memory_order_acquire); n != nullptr;
         n = n->hash_next.load(std::memory_order_acquire)) {
      if (n->hash == hash && SameUser(n->UserKey(), key)) return n;
    }
    return nullptr;
  }

  // Where key's user key falls among the key nodes: the last node before it (head_ when none)
  // and the first at or after it (nullptr when none).
  struct Place {
    KeyNode* before;
    KeyNode* at_or_after;
  };
  Place Locate(const Key& key) const {
    const uint64_t key_prefix = PrefixOf(key);
    KeyNode* x = head_;
    int level = max_height_.load(std::memory_order_acquire) - 1;
    KeyNode* known_bigger = nullptr;  // compared already at a higher level
    for (;;) {
      KeyNode* next = x->Next(level);
      if (next != nullptr && next != known_bigger && next->CompareTo(key, key_prefix) < 0) {
        x = next;
      } else if (level == 0) {
        return Place{x, next};
      } else {
        known_bigger = next;
        --level;
      }
    }
  }

  // The last key node, or head_ when empty.
  KeyNode* FindLast() const {
    KeyNode* x = head_;
    int level = max_height_.load(std::memory_order_acquire) - 1;
    for (;;) {
      KeyNode* next = x->Next(level);
      if (next != nullptr) {
        x = next;
      } else if (level == 0) {
        return x;
      } else {
        --level;
      }
    }
  }

 private:
  // 8-aligned arena memory. The arena's unaligned allocations stay 8-aligned while every one is
  // a multiple of 8 (only this list makes them); should another have broken that, align a
  // slightly larger one.
  char* ArenaAligned(size_t size) {
    size = RoundUp8(size);
    char* raw = nullptr;
    MemTableRep::Allocate(size, &raw);
    if ((reinterpret_cast<uintptr_t>(raw) & 7) != 0) {
      MemTableRep::Allocate(size + 8, &raw);
      raw += (8 - (reinterpret_cast<uintptr_t>(raw) & 7)) & 7;
    }
    return raw;
  }

  KeyNode* NewKeyNode(int height) {
    const size_t below = sizeof(std::atomic<KeyNode*>) * (height - 1);
    char* raw = ArenaAligned(below + sizeof(KeyNode));
    auto* node = reinterpret_cast<KeyNode*>(raw + below);
    for (int i = 0; i < height; ++i) new (node->Slot(i)) std::atomic<KeyNode*>(nullptr);
    new (&node->newest) std::atomic<Version*>(nullptr);
    new (&node->hash_next) std::atomic<KeyNode*>(nullptr);
    new (&node->oldest_tag) std::atomic<uint64_t>(0);
    node->hash = 0;
    node->prefix = 0;
    return node;
  }

  // The head of hash's bucket, or nullptr when its segment was never used.
  const std::atomic<KeyNode*>* FindBucket(uint64_t hash) const {
    const size_t index = hash & bucket_mask_;
    const std::atomic<KeyNode*>* buckets =
        segments_[index / kSegmentBuckets].load(std::memory_order_acquire);
    return buckets == nullptr ? nullptr : &buckets[index % kSegmentBuckets];
  }

  // The head of hash's bucket, allocating its segment on first use (any writer; concurrent
  // writers that find the same segment missing make it once, under segment_mu_).
  std::atomic<KeyNode*>& MakeBucket(uint64_t hash) {
    const size_t index = hash & bucket_mask_;
    std::atomic<std::atomic<KeyNode*>*>& segment = segments_[index / kSegmentBuckets];
    std::atomic<KeyNode*>* buckets = segment.load(std::memory_order_acquire);
    if (buckets == nullptr) {
      std::lock_guard<std::mutex> l(segment_mu_);
      buckets = segment.load(std::memory_order_acquire);
      if (buckets == nullptr) {
        buckets = reinterpret_cast<std::atomic<KeyNode*>*>(
            ArenaAligned(sizeof(std::atomic<KeyNode*>) * kSegmentBuckets));
        for (size_t i = 0; i < kSegmentBuckets; ++i) {
          new (&buckets[i]) std::atomic<KeyNode*>(nullptr);
        }
        segment.store(buckets, std::memory_order_release);
      }
    }
    return buckets[index % kSegmentBuckets];
  }

  // Adds a version (inserts one at a time). Returns false, adding nothing, when the same key and
  // tag is there already.
  bool Add(Version* v) {
    const Key key = v->GetKey();
    const uint64_t hash = HashUser(key);
    KeyNode* node = Find(key, hash);
    if (node != nullptr) return LinkVersion(node, v, key.tag);
    AddKey(v, key, hash);
    return true;
  }

  // A key the table does not hold: a node linked into the skiplist, then into its bucket.
  void AddKey(Version* v, const Key& key, uint64_t hash) {
    const int height = RandomHeight();
    KeyNode* node = NewKeyNodeFor(v, key, hash, height);
    const int top = RaiseMaxHeight(height);
    FitSplice(key, node->prefix, top, height);
    for (int level = 0; level < height; ++level) {
      node->Slot(level)->store(splice_.next[level], std::memory_order_relaxed);
      splice_.prev[level]->Slot(level)->store(node, std::memory_order_release);
      splice_.prev[level] = node;  // the splice now brackets the keys just after this one
    }
    std::atomic<KeyNode*>& bucket = MakeBucket(hash);
    node->hash_next.store(bucket.load(std::memory_order_relaxed), std::memory_order_relaxed);
    bucket.store(node, std::memory_order_release);
  }

  // A new key node of `height` levels holding v, not linked anywhere yet.
  KeyNode* NewKeyNodeFor(Version* v, const Key& key, uint64_t hash, int height) {
    KeyNode* node = NewKeyNode(height);
    node->newest.store(v, std::memory_order_relaxed);
    node->hash = hash;
    node->prefix = PrefixOf(key);
    node->oldest_tag.store(key.tag, std::memory_order_relaxed);
    return node;
  }

  // Makes the skiplist at least `height` levels tall; returns its height.
  int RaiseMaxHeight(int height) {
    int top = max_height_.load(std::memory_order_relaxed);
    while (height > top && !max_height_.compare_exchange_weak(
                               top, height, std::memory_order_release, std::memory_order_relaxed)) {
    }
    return std::max(top, height);
  }

  // ---- Inserts from many threads at once (a parallel write group's members).

  // Add's concurrent twin. The bucket decides which writer creates a key's node: a writer links
  // its new node at the bucket's head with a compare-and-swap only if the chain it searched is
  // still the chain there, so one node per key, and only that writer links it into the skiplist
  // afterwards. Until then the node is found by hash (a concurrent writer of the same key adds
  // its version there) but not by a scan, which is fine: RocksDB publishes a group's sequence
  // numbers only after every member has inserted, and no reader sees an unpublished entry.
  bool AddConcurrently(Version* v) {
    const Key key = v->GetKey();
    const uint64_t hash = HashUser(key);
    std::atomic<KeyNode*>& bucket = MakeBucket(hash);
    KeyNode* head = bucket.load(std::memory_order_acquire);
    KeyNode* fresh = nullptr;  // made once, kept across failed attempts
    int fresh_height = 0;
    for (;;) {
      for (KeyNode* n = head; n != nullptr; n = n->hash_next.load(std::memory_order_acquire)) {
        if (n->hash == hash && SameUser(n->UserKey(), key)) {
          // `fresh`, if made, stays unused.
          if (!LinkVersion(n, v, key.tag)) return false;
          ++concurrent_inserts_on_this_thread;
          return true;
        }
      }
      if (fresh == nullptr) {
        fresh_height = RandomHeight();
        fresh = NewKeyNodeFor(v, key, hash, fresh_height);
      }
      fresh->hash_next.store(head, std::memory_order_relaxed);
      if (bucket.compare_exchange_weak(head, fresh, std::memory_order_release,
                                       std::memory_order_acquire)) {
        break;
      }
    }
    LinkConcurrently(fresh, fresh_height, key);
    ++concurrent_inserts_on_this_thread;
    return true;
  }

  // A new version of a key in the table: the newest one (RocksDB writes in sequence order), or
  // in its place among the older ones; false, adding nothing, when the tag is there already.
  // Safe beside concurrent calls: the link is a compare-and-swap that fails if another writer
  // linked a version at the same place first, and the walk then resumes from the version before
  // that place. (Uncontended, it costs the one-at-a-time writer what a plain store did.)
  static bool LinkVersion(KeyNode* node, Version* v, uint64_t tag) {
    Version* newer = node->Newest();
    while (tag > newer->GetKey().tag) {
      v->older.store(newer, std::memory_order_relaxed);
      if (node->newest.compare_exchange_weak(newer, v, std::memory_order_release,
                                             std::memory_order_acquire)) {
        return true;
      }
    }
    if (tag == newer->GetKey().tag) return false;
    for (;;) {
      Version* older = newer->Older();
      if (older != nullptr) {
        const uint64_t older_tag = older->GetKey().tag;
        if (older_tag == tag) return false;
        if (older_tag > tag) {
          newer = older;
          continue;
        }
      }
      v->older.store(older, std::memory_order_relaxed);
      if (newer->older.compare_exchange_weak(older, v, std::memory_order_release,
                                             std::memory_order_acquire)) {
        if (older == nullptr) LowerOldestTag(node, tag);
        return true;
      }
    }
  }

  static void LowerOldestTag(KeyNode* node, uint64_t tag) {
    uint64_t oldest = node->oldest_tag.load(std::memory_order_relaxed);
    while (tag < oldest && !node->oldest_tag.compare_exchange_weak(
                               oldest, tag, std::memory_order_release, std::memory_order_relaxed)) {
    }
  }

  // Links a node (already in its bucket, so no other node has its key) into the skiplist, level
  // 0 first, so that a node reachable at a level is reachable below it too. Each level's link is
  // a compare-and-swap on the node before it, expecting the very successor the search compared
  // against (a successor read again later could be a node linked since, before the key); when
  // another writer linked a node there first, the search resumes from that same node.
  void LinkConcurrently(KeyNode* node, int height, const Key& key) {
    const int top = RaiseMaxHeight(height);
    KeyNode* prev[kMaxHeight];
    KeyNode* next[kMaxHeight];
    KeyNode* before = head_;
    for (int level = top - 1; level >= 0; --level) {
      before = StepTo(before, level, key, node->prefix, &next[level]);
      prev[level] = before;
    }
    for (int level = 0; level < height; ++level) {
      for (;;) {
        node->Slot(level)->store(next[level], std::memory_order_relaxed);
        if (prev[level]->Slot(level)->compare_exchange_strong(
                next[level], node, std::memory_order_release, std::memory_order_acquire)) {
          break;
        }
        prev[level] = StepTo(prev[level], level, key, node->prefix, &next[level]);
      }
    }
  }

  // From `before` (a node before key), the last node before key at `level`; *after is the node
  // after it that the walk compared with key (at or after key, or nullptr).
  static KeyNode* StepTo(KeyNode* before, int level, const Key& key, uint64_t key_prefix,
                         KeyNode** after) {
    for (;;) {
      KeyNode* next = before->Next(level);
      if (next == nullptr || next->CompareTo(key, key_prefix) >= 0) {
        *after = next;
        return before;
      }
      before = next;
    }
  }

  // Makes splice_ bracket key at every level below top: prev[i] before key, next[i] the first
  // node at or after it (nullptr: none). The splice of the last insert is reused from the lowest
  // level that still brackets the new key, so keys inserted in ascending order and close
  // together (the expiry cycle's deletions, a batch's sorted keys) search a few nodes instead of
  // walking down from the top; a random key climbs the splice and searches from near the top.
  void FitSplice(const Key& key, uint64_t key_prefix, int top, int height) {
    int fixed = top;  // the levels from here up bracket key
    if (splice_.height == top) {
      for (fixed = 0; fixed < top; ++fixed) {
        KeyNode* prev = splice_.prev[fixed];
        KeyNode* next = splice_.next[fixed];
        if (prev->Next(fixed) != next) continue;  // not tight: a parallel group linked a node
        if (prev != head_ && prev->CompareTo(key, key_prefix) >= 0) continue;
        if (next != nullptr && next->CompareTo(key, key_prefix) < 0) continue;
        break;
      }
      // The levels above still bracket key (they did the last key's path), but AddKey links the
      // new node with plain stores at those below `height`, so they must still be tight too.
      for (int level = fixed; level < std::min(height, top); ++level) {
        if (splice_.prev[level]->Next(level) != splice_.next[level]) {
          fixed = top;
          break;
        }
      }
    }
    KeyNode* before = fixed == top ? head_ : splice_.prev[fixed];
    KeyNode* bound = fixed == top ? nullptr : splice_.next[fixed];
    for (int level = fixed - 1; level >= 0; --level) {
      for (;;) {
        KeyNode* next = before->Next(level);
        if (next == bound || next == nullptr || next->CompareTo(key, key_prefix) >= 0) {
          splice_.prev[level] = before;
          splice_.next[level] = next;
          bound = next;
          break;
        }
        before = next;
      }
    }
    splice_.height = top;
  }

  // About how many key nodes are before key: the search path's steps, each worth
  // kBranching^level nodes.
  uint64_t EstimateKeysBelow(const Key& key) const {
    const uint64_t key_prefix = PrefixOf(key);
    uint64_t count = 0;
    KeyNode* x = head_;
    int level = max_height_.load(std::memory_order_acquire) - 1;
    for (;;) {
      KeyNode* next = x->Next(level);
      const bool before = next != nullptr && next->CompareTo(key, key_prefix) < 0;
      if (before) {
        x = next;
        uint64_t weight = 1;
        for (int i = 0; i < level; ++i) weight *= kBranching;
        count += weight;
      } else if (level == 0) {
        return count;
      } else {
        --level;
      }
    }
  }

  const size_t bucket_mask_;
  const size_t segment_count_;
  KeyPrefetcher* const prefetcher_;  // told when this list is made and destroyed; may be null
  std::atomic<std::atomic<KeyNode*>*>* segments_;  // segment_count_ entries, in the arena
  KeyNode* head_;
  std::atomic<int> max_height_{1};
  std::mutex segment_mu_;  // making a segment of buckets (MakeBucket)
  // The one-at-a-time writer's search path of its last new key: at each level, the last node
  // before it and the first after it. Tight (prev[i]->Next(i) == next[i]) after AddKey; inserts
  // of a parallel group since may have loosened it, which FitSplice checks before reusing it.
  struct Splice {
    KeyNode* prev[kMaxHeight];
    KeyNode* next[kMaxHeight];
    int height = 0;  // levels valid; 0: none yet
  };
  Splice splice_;
};

rocksdb::MemTableRep::Iterator* HashedList::GetIterator(rocksdb::Arena* arena) {
  using Iter = ListIterator<HashedList>;
  if (arena == nullptr) return new Iter(this, false);
  return new (iterator_blocks.Take(sizeof(Iter))) Iter(this, true);
}

// ---- The factory.

// A memtable entry of an internal key (no value), for probing a comparator.
std::string ProbeEntry(std::string_view user, uint64_t seq) {
  std::string e;
  e.push_back(static_cast<char>(user.size() + 8));  // short keys: a one-byte varint
  e.append(user);
  const uint64_t tag = (seq << 8) | 1;  // kTypeValue
  char buf[8];
  std::memcpy(buf, &tag, sizeof tag);
  e.append(buf, sizeof buf);
  e.push_back(0);  // empty value
  return e;
}

// Whether cmp orders entries as this list does: bytewise user keys (unsigned, a prefix first),
// newer versions first.
bool OrdersAsBytewise(const rocksdb::MemTableRep::KeyComparator& cmp) {
  struct Pair {
    std::string a, b;
  };
  const Pair ordered[] = {
      {ProbeEntry("a", 5), ProbeEntry("b", 5)},
      {ProbeEntry("a", 1), ProbeEntry("ab", 9)},
      {ProbeEntry("\x01", 1), ProbeEntry("\xff", 1)},
      {ProbeEntry("key", 7), ProbeEntry("key", 6)},
      {ProbeEntry("slot:12345678", 3), ProbeEntry("slot:12345679", 3)},
  };
  for (const Pair& p : ordered) {
    if (cmp(p.a.data(), p.b.data()) >= 0 || cmp(p.b.data(), p.a.data()) <= 0) return false;
  }
  return true;
}

class Factory final : public rocksdb::MemTableRepFactory {
 public:
  Factory(size_t buckets, KeyPrefetcher* prefetcher) : buckets_(buckets), prefetcher_(prefetcher) {}

  rocksdb::MemTableRep* CreateMemTableRep(const rocksdb::MemTableRep::KeyComparator& cmp,
                                          rocksdb::Allocator* allocator,
                                          const rocksdb::SliceTransform* transform,
                                          rocksdb::Logger* logger) override {
    if (!OrdersAsBytewise(cmp)) {
      return rocksdb::SkipListFactory().CreateMemTableRep(cmp, allocator, transform, logger);
    }
    lists_created.fetch_add(1, std::memory_order_relaxed);
    return new HashedList(allocator, buckets_, prefetcher_);
  }
  const char* Name() const override { return "SluiceHashedList"; }
  bool IsInsertConcurrentlySupported() const override { return true; }
  bool CanHandleDuplicatedKey() const override { return true; }

 private:
  const size_t buckets_;
  KeyPrefetcher* const prefetcher_;
};

}  // namespace

void KeyPrefetcher::Prefetch(const std::string_view* user_keys, size_t n, uint32_t written) const {
  std::shared_lock<std::shared_mutex> l(mu_);
  if (current_ == nullptr) return;
  static_cast<const HashedList*>(current_)->Prefetch(user_keys, std::min(n, kMaxKeys), written);
}

bool KeyPrefetcher::active() const {
  std::shared_lock<std::shared_mutex> l(mu_);
  return current_ != nullptr;
}

void KeyPrefetcher::SetCurrent(const rocksdb::MemTableRep* list) {
  std::unique_lock<std::shared_mutex> l(mu_);
  current_ = list;
}

void KeyPrefetcher::Forget(const rocksdb::MemTableRep* list) {
  std::unique_lock<std::shared_mutex> l(mu_);
  if (current_ == list) current_ = nullptr;
}

std::shared_ptr<rocksdb::MemTableRepFactory> NewMemTableFactory(size_t write_buffer_size,
                                                                KeyPrefetcher* prefetcher) {
  // About one bucket per 128 bytes of memtable, a power of two: a full table of small entries
  // has chains of a few keys; the buckets cost ~6% of the memtable, allocated as keys arrive.
  size_t buckets = kSegmentBuckets;
  while (buckets < write_buffer_size / 128 && buckets < (size_t{1} << 24)) buckets <<= 1;
  return std::make_shared<Factory>(buckets, prefetcher);
}

uint64_t SluiceMemTablesCreated() { return lists_created.load(std::memory_order_relaxed); }

uint64_t ConcurrentMemTableInsertsOnThisThread() { return concurrent_inserts_on_this_thread; }

}  // namespace sluice::internal
