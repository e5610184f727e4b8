// The memtable representation (memtable.h has the why and the contract).
//
// Structure:
// - A Version per RocksDB entry: [older version of the same key][entry bytes]. The handle
//   RocksDB gets from Allocate is the Version.
// - A KeyNode per distinct user key: the newest Version (its chain runs newest to oldest, which
//   is RocksDB's order for one user key), the next node of its hash bucket and the key's hash.
//   The user key is read from the newest version's entry (every version holds the same bytes).
// - A chained hash table of KeyNodes, its buckets allocated in small segments on first use, so
//   a memtable of few keys costs ~512 bytes per key of buckets and a full one one pointer per
//   bucket.
// - The key nodes' order, for iterators and flushes: sorted runs and a short unsorted tail
//   (memtable_order.h), outside the arena.
// Every node and version lives in the memtable's arena and is never unlinked or freed before the
// memtable.
//
// Concurrency: readers never lock. A writer fills a node completely, then publishes it with
// one release store or compare-and-swap (a chain link, a bucket head, a segment); readers load
// with acquire. Inserts come either one at a time (Insert, InsertKey: RocksDB's write-group
// leader, recovery) or from many threads at once (InsertKeyConcurrently: each writer of a
// parallel group inserts its own batch), never both at once. Nothing is ever unlinked, so the
// compare-and-swap loops see no ABA: a failed one only means another writer linked a node in the
// same place first, and the search resumes from where it was. The key order takes its own mutex
// (KeyOrder), once per new key; iterators take a snapshot of it when they are made.
#include "memtable.h"

#include <rocksdb/slice.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "memtable_iterator.h"
#include "memtable_nodes.h"
#include "memtable_order.h"

namespace sluice::internal {
namespace {

using namespace memtable_nodes;  // NOLINT: this file is the nodes' one user

// 512 bytes of bucket heads (eight cache lines), allocated on first use. Keys land in random
// buckets, so a memtable of n keys touches about min(n, segments) segments: with 32 KB segments
// a family's memtable of a few thousand keys held 16 MB of buckets (every segment of a 256 MB
// write buffer's table), five such families 110 MB for 25k small keys. The segment pointers
// (8 bytes per 64 buckets, 256 KB for the 2M buckets of a 256 MB buffer) are read before every
// bucket; they stay in the L2 cache.
constexpr size_t kSegmentBuckets = 64;

std::atomic<uint64_t> lists_created{0};
thread_local uint64_t concurrent_inserts_on_this_thread = 0;
thread_local uint64_t newest_reads_on_this_thread = 0;

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
  HashedList(rocksdb::Allocator* allocator, size_t buckets, NewestMemTable* newest)
      : MemTableRep(allocator),
        bucket_mask_(buckets - 1),
        segment_count_((buckets + kSegmentBuckets - 1) / kSegmentBuckets),
        newest_(newest) {
    char* raw = ArenaAligned(sizeof(std::atomic<std::atomic<KeyNode*>*>) * segment_count_);
    segments_ = reinterpret_cast<std::atomic<std::atomic<KeyNode*>*>*>(raw);
    for (size_t i = 0; i < segment_count_; ++i) {
      new (&segments_[i]) std::atomic<std::atomic<KeyNode*>*>(nullptr);
    }
    if (newest_ != nullptr) newest_->SetCurrent(this);
  }
  ~HashedList() override {
    if (newest_ != nullptr) newest_->Forget(this);
    order_->Close();  // before the arena, whose keys a merge reads, goes
  }

  // NewestMemTable::Prefetch's work, in three rounds over the keys so that each round's misses
  // overlap: the buckets, then the first node of each, then its newest version.
  void Prefetch(const std::string_view* user_keys, size_t n) const {
    uint64_t hashes[NewestMemTable::kMaxKeys];
    const std::atomic<KeyNode*>* buckets[NewestMemTable::kMaxKeys];
    for (size_t i = 0; i < n; ++i) {
      hashes[i] = XXH3_64bits(user_keys[i].data(), user_keys[i].size());
      buckets[i] = FindBucket(hashes[i]);
      if (buckets[i] != nullptr) __builtin_prefetch(buckets[i]);
    }
    const KeyNode* nodes[NewestMemTable::kMaxKeys];
    for (size_t i = 0; i < n; ++i) {
      nodes[i] = buckets[i] == nullptr ? nullptr : buckets[i]->load(std::memory_order_acquire);
      if (nodes[i] != nullptr) __builtin_prefetch(&nodes[i]->newest);
    }
    for (size_t i = 0; i < n; ++i) {
      if (nodes[i] != nullptr && nodes[i]->hash == hashes[i])
        __builtin_prefetch(nodes[i]->Newest());
    }
  }

  uint64_t single_deletes() const { return single_deletes_.load(std::memory_order_relaxed); }
  uint64_t serial_inserts() const { return serial_inserts_.load(std::memory_order_relaxed); }

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

  // NewestMemTable::ReadNewest's lookup in this list (its contract).
  NewestMemTable::Read ReadNewest(std::string_view user, uint64_t visible,
                                  std::string* value) const {
    // RocksDB's value types (a tag's low byte) a point read can answer from a memtable alone.
    constexpr uint8_t kTypeDeletion = 0x0, kTypeValue = 0x1, kTypeSingleDeletion = 0x7,
                      kTypeDeletionWithTimestamp = 0x14;
    const Key key{user.data(), static_cast<uint32_t>(user.size()), 0};
    const KeyNode* node = Find(key, HashUser(key));
    if (node == nullptr) return NewestMemTable::Read::kUnknown;
    for (const Version* v = node->Newest(); v != nullptr; v = v->Older()) {
      uint32_t size;
      const char* ikey = DecodeVarint32(v->Entry(), &size);
      const uint64_t tag = LoadLE64(ikey + size - 8);
      if ((tag >> 8) > visible) continue;  // versions run newest first
      switch (static_cast<uint8_t>(tag)) {
        case kTypeValue: {
          uint32_t value_size;
          const char* at = DecodeVarint32(ikey + size, &value_size);
          value->assign(at, value_size);
          return NewestMemTable::Read::kFound;
        }
        case kTypeDeletion:
        case kTypeSingleDeletion:
        case kTypeDeletionWithTimestamp:
          return NewestMemTable::Read::kDeleted;
        default:
          return NewestMemTable::Read::kUnknown;
      }
    }
    return NewestMemTable::Read::kUnknown;  // every version here is newer than the reader
  }

  // The arena's bytes the memtable counts itself; the key order's are outside it.
  size_t ApproximateMemoryUsage() override { return order_->MemoryBytes(); }

  uint64_t ApproximateNumEntries(const rocksdb::Slice& start_ikey,
                                 const rocksdb::Slice& end_ikey) override {
    OrderCursor cursor(order_->Snapshot());
    const auto before = [&cursor](const rocksdb::Slice& ikey) {
      return cursor.CountBefore(
          SearchKeyOf(KeyOfInternal(ikey.data(), static_cast<uint32_t>(ikey.size()))));
    };
    const uint64_t before_end = before(end_ikey);
    const uint64_t before_start = before(start_ikey);
    return before_end > before_start ? before_end - before_start : 0;
  }

  Iterator* GetIterator(rocksdb::Arena* arena) override;

  // ---- Searches (any thread, concurrently with the writers).

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

  // A new key node holding v, not linked anywhere yet.
  KeyNode* NewKeyNodeFor(Version* v, uint64_t tag, uint64_t hash) {
    auto* node = reinterpret_cast<KeyNode*>(ArenaAligned(sizeof(KeyNode)));
    new (&node->newest) std::atomic<Version*>(v);
    new (&node->hash_next) std::atomic<KeyNode*>(nullptr);
    new (&node->oldest_tag) std::atomic<uint64_t>(tag);
    node->hash = hash;
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
    CountSingleDelete(key.tag);
    const uint64_t hash = HashUser(key);
    KeyNode* node = Find(key, hash);
    if (node != nullptr) {
      if (!LinkVersion(node, v, key.tag)) return false;
    } else {
      AddKey(v, key, hash);
    }
    // One writer at a time inserts here: a load and a store, no locked instruction.
    serial_inserts_.store(serial_inserts_.load(std::memory_order_relaxed) + 1,
                          std::memory_order_relaxed);
    return true;
  }

  // RocksDB's count of a memtable's deletions leaves SingleDeletes out (NewestMemTable::
  // SingleDeletesInCurrent counts them). Relaxed: a statistic, read once a second.
  void CountSingleDelete(uint64_t tag) {
    constexpr uint8_t kTypeSingleDeletion = 0x7;
    if (static_cast<uint8_t>(tag) == kTypeSingleDeletion) {
      single_deletes_.fetch_add(1, std::memory_order_relaxed);
    }
  }

  // A key the table does not hold: a node linked into its bucket, then put in order.
  void AddKey(Version* v, const Key& key, uint64_t hash) {
    KeyNode* node = NewKeyNodeFor(v, key.tag, hash);
    std::atomic<KeyNode*>& bucket = MakeBucket(hash);
    node->hash_next.store(bucket.load(std::memory_order_relaxed), std::memory_order_relaxed);
    bucket.store(node, std::memory_order_release);
    order_->Add(node, key, v->Entry());
  }

  // ---- Inserts from many threads at once (a parallel write group's members).

  // Add's concurrent twin. The bucket decides which writer creates a key's node: a writer links
  // its new node at the bucket's head with a compare-and-swap only if the chain it searched is
  // still the chain there, so one node per key, and only that writer puts it in order
  // afterwards. Until then the node is found by hash (a concurrent writer of the same key adds
  // its version there) but not by a scan, which is fine: RocksDB publishes a group's sequence
  // numbers only after every member has inserted, and no reader sees an unpublished entry.
  bool AddConcurrently(Version* v) {
    const Key key = v->GetKey();
    CountSingleDelete(key.tag);
    const uint64_t hash = HashUser(key);
    std::atomic<KeyNode*>& bucket = MakeBucket(hash);
    KeyNode* head = bucket.load(std::memory_order_acquire);
    KeyNode* fresh = nullptr;  // made once, kept across failed attempts
    for (;;) {
      for (KeyNode* n = head; n != nullptr; n = n->hash_next.load(std::memory_order_acquire)) {
        if (n->hash == hash && SameUser(n->UserKey(), key)) {
          // `fresh`, if made, stays unused.
          if (!LinkVersion(n, v, key.tag)) return false;
          ++concurrent_inserts_on_this_thread;
          return true;
        }
      }
      if (fresh == nullptr) fresh = NewKeyNodeFor(v, key.tag, hash);
      fresh->hash_next.store(head, std::memory_order_relaxed);
      if (bucket.compare_exchange_weak(head, fresh, std::memory_order_release,
                                       std::memory_order_acquire)) {
        break;
      }
    }
    order_->Add(fresh, key, v->Entry());
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

  const size_t bucket_mask_;
  const size_t segment_count_;
  NewestMemTable* const newest_;  // told when this list is made and destroyed; may be null
  std::atomic<uint64_t> single_deletes_{0};        // SingleDeletes inserted (CountSingleDelete)
  std::atomic<uint64_t> serial_inserts_{0};        // versions Add inserted (not AddConcurrently)
  std::atomic<std::atomic<KeyNode*>*>* segments_;  // segment_count_ entries, in the arena
  std::mutex segment_mu_;                          // making a segment of buckets (MakeBucket)
  const std::shared_ptr<KeyOrder> order_ = std::make_shared<KeyOrder>();
};

rocksdb::MemTableRep::Iterator* HashedList::GetIterator(rocksdb::Arena* arena) {
  using Iter = ListIterator;
  if (arena == nullptr) return new Iter(order_.get(), false);
  return new (iterator_blocks.Take(sizeof(Iter))) Iter(order_.get(), true);
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
  Factory(size_t buckets, NewestMemTable* newest) : buckets_(buckets), newest_(newest) {}

  rocksdb::MemTableRep* CreateMemTableRep(const rocksdb::MemTableRep::KeyComparator& cmp,
                                          rocksdb::Allocator* allocator,
                                          const rocksdb::SliceTransform* transform,
                                          rocksdb::Logger* logger) override {
    if (!OrdersAsBytewise(cmp)) {
      return rocksdb::SkipListFactory().CreateMemTableRep(cmp, allocator, transform, logger);
    }
    lists_created.fetch_add(1, std::memory_order_relaxed);
    return new HashedList(allocator, buckets_, newest_);
  }
  const char* Name() const override { return "SluiceHashedList"; }
  bool IsInsertConcurrentlySupported() const override { return true; }
  bool CanHandleDuplicatedKey() const override { return true; }

 private:
  const size_t buckets_;
  NewestMemTable* const newest_;
};

}  // namespace

void NewestMemTable::Prefetch(const std::string_view* user_keys, size_t n) const {
  std::shared_lock<std::shared_mutex> l(mu_.ForThisThread());
  if (current_ == nullptr) return;
  static_cast<const HashedList*>(current_)->Prefetch(user_keys, std::min(n, kMaxKeys));
}

uint64_t NewestMemTable::SingleDeletesInCurrent() const {
  std::shared_lock<std::shared_mutex> l(mu_.ForThisThread());
  return current_ == nullptr ? 0 : static_cast<const HashedList*>(current_)->single_deletes();
}

void NewestMemTable::DistrustUnlessOnlyListed(uint64_t rocksdb_entries) {
  uint64_t listed;
  {
    std::shared_lock<std::shared_mutex> l(mu_.ForThisThread());
    listed = current_ == nullptr ? 0 : static_cast<const HashedList*>(current_)->serial_inserts();
  }
  if (listed != rocksdb_entries) DistrustCurrent();
}

bool NewestMemTable::active() const {
  std::shared_lock<std::shared_mutex> l(mu_.ForThisThread());
  return current_ != nullptr;
}

std::shared_mutex& ShardedSharedMutex::ForThisThread() const {
  static std::atomic<size_t> threads{0};
  thread_local const size_t shard = threads.fetch_add(1, std::memory_order_relaxed) % kShards;
  return shards_[shard].mu;
}

void ShardedSharedMutex::lock() {
  for (Shard& s : shards_) s.mu.lock();
}

void ShardedSharedMutex::unlock() {
  for (Shard& s : shards_) s.mu.unlock();
}

NewestMemTable::Read NewestMemTable::ReadNewest(std::string_view user_key, uint64_t visible,
                                                std::string* value) const {
  std::shared_lock<std::shared_mutex> l(mu_.ForThisThread());
  if (current_ == nullptr) return Read::kUnknown;
  // After the caller read `visible`: a range deletion published at or below it was announced
  // before it was written (BeginRangeDelete), so it is still in flight here, or EndRangeDelete
  // raised the generation (before lowering the count, which is read first).
  if (range_deletes_in_flight_.load() != 0 || range_delete_generation_.load() >= generation_) {
    return Read::kUnknown;
  }
  const Read read = static_cast<const HashedList*>(current_)->ReadNewest(user_key, visible, value);
  if (read != Read::kUnknown) ++newest_reads_on_this_thread;
  return read;
}

void NewestMemTable::BeginRangeDelete() { range_deletes_in_flight_.fetch_add(1); }

void NewestMemTable::EndRangeDelete() {
  DistrustCurrent();  // the memtable it landed in is this one or an older one
  range_deletes_in_flight_.fetch_sub(1);
}

void NewestMemTable::DistrustCurrent() {
  uint64_t generation;
  {
    std::shared_lock<std::shared_mutex> l(mu_.ForThisThread());
    generation = generation_;
  }
  uint64_t distrusted = range_delete_generation_.load();
  while (distrusted < generation &&
         !range_delete_generation_.compare_exchange_weak(distrusted, generation)) {
  }
}

void NewestMemTable::SetCurrent(const rocksdb::MemTableRep* list) {
  std::unique_lock<ShardedSharedMutex> l(mu_);
  current_ = list;
  ++generation_;
}

void NewestMemTable::Forget(const rocksdb::MemTableRep* list) {
  std::unique_lock<ShardedSharedMutex> l(mu_);
  if (current_ == list) current_ = nullptr;
}

std::shared_ptr<rocksdb::MemTableRepFactory> NewMemTableFactory(size_t write_buffer_size,
                                                                NewestMemTable* newest) {
  // About one bucket per 128 bytes of memtable, a power of two: a full table of small entries
  // has chains of a few keys; the buckets cost ~6% of the memtable, allocated as keys arrive.
  size_t buckets = kSegmentBuckets;
  while (buckets < write_buffer_size / 128 && buckets < (size_t{1} << 24)) buckets <<= 1;
  return std::make_shared<Factory>(buckets, newest);
}

uint64_t SluiceMemTablesCreated() { return lists_created.load(std::memory_order_relaxed); }

FreshIteratorRead::FreshIteratorRead() {
  using memtable_nodes::fresh_read;
  constexpr uint64_t kBlock = uint64_t{1} << 32;
  if (fresh_read.generation % kBlock == kBlock - 1 || fresh_read.generation == 0) {
    fresh_read.generation = (memtable_nodes::fresh_read_blocks.fetch_add(1) + 1) * kBlock;
  }
  ++fresh_read.generation;
  fresh_read.active = true;
}

FreshIteratorRead::~FreshIteratorRead() { memtable_nodes::fresh_read.active = false; }

uint64_t NewestMemTableReadsOnThisThread() { return newest_reads_on_this_thread; }

uint64_t ConcurrentMemTableInsertsOnThisThread() { return concurrent_inserts_on_this_thread; }

}  // namespace sluice::internal
