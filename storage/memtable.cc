// The memtable skiplist (memtable.h has the why and the contract).
//
// Layout: a node is [next pointer of level h-1] ... [next pointer of level 1][next pointer of
// level 0][RocksDB's entry bytes]; a Node* points at the level-0 pointer, so the entry follows
// it and the handle RocksDB gets back is the node itself. Nodes live in the memtable's arena and
// are never freed or unlinked before the whole memtable goes.
#include "memtable.h"

#include <rocksdb/slice.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

namespace sluice::internal {
namespace {

constexpr int kMaxHeight = 12;  // 4^12 entries before the top level thins out
constexpr uint32_t kBranching = 4;

// Memtables made with this list (tests check that the list, not the fallback, is in use).
std::atomic<uint64_t> lists_created{0};
// Memtables that took a concurrent insert (tests check that the concurrent path ran).
std::atomic<uint64_t> lists_with_concurrent_inserts{0};

// ---- RocksDB's entry encoding (MemTable::Add): varint32 internal-key length, user key, 8-byte
// little-endian tag (sequence << 8 | type), then the value, which the list never reads.

inline const char* DecodeVarint32(const char* p, uint32_t* v) {
  uint32_t result = 0;
  for (int shift = 0; shift <= 28; shift += 7) {
    const uint32_t byte = static_cast<uint8_t>(*p++);
    result |= (byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) break;
  }
  *v = result;
  return p;
}

inline uint64_t LoadLE64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;  // x86-64 and every RocksDB target Sluice builds for are little-endian
}

inline uint64_t LoadBE64(const char* p) { return __builtin_bswap64(LoadLE64(p)); }

// An internal key taken apart: the user key and the tag.
struct Key {
  const char* user;
  uint32_t user_size;
  uint64_t tag;
};

inline Key KeyOfInternal(const char* ikey, uint32_t size) {
  return Key{ikey, size - 8, LoadLE64(ikey + size - 8)};
}

inline Key KeyOfEntry(const char* entry) {
  uint32_t size;
  const char* ikey = DecodeVarint32(entry, &size);
  return KeyOfInternal(ikey, size);
}

// RocksDB's InternalKeyComparator over BytewiseComparator: user keys ascending (unsigned bytes,
// a prefix first), then tags descending (the newest version of a key first).
inline int Compare(const Key& a, const Key& b) {
  const uint32_t n = std::min(a.user_size, b.user_size);
  int r = 0;
  if (n >= 8) {
    const uint64_t x = LoadBE64(a.user);
    const uint64_t y = LoadBE64(b.user);
    if (x != y) return x < y ? -1 : 1;
    r = std::memcmp(a.user + 8, b.user + 8, n - 8);
  } else {
    r = std::memcmp(a.user, b.user, n);
  }
  if (r != 0) return r;
  if (a.user_size != b.user_size) return a.user_size < b.user_size ? -1 : 1;
  if (a.tag != b.tag) return a.tag > b.tag ? -1 : 1;
  return 0;
}

// ---- The list.

struct Node {
  // Level i's pointer sits i slots below next_[0] (see the layout above).
  std::atomic<Node*>* Slot(int level) {
    return reinterpret_cast<std::atomic<Node*>*>(reinterpret_cast<char*>(this) -
                                                 level * sizeof(std::atomic<Node*>));
  }
  Node* Next(int level) { return Slot(level)->load(std::memory_order_acquire); }
  void SetNextRelaxed(int level, Node* n) { Slot(level)->store(n, std::memory_order_relaxed); }
  void SetNext(int level, Node* n) { Slot(level)->store(n, std::memory_order_release); }
  bool CasNext(int level, Node* expected, Node* n) {
    return Slot(level)->compare_exchange_strong(expected, n, std::memory_order_release,
                                                std::memory_order_relaxed);
  }
  const char* Entry() const { return reinterpret_cast<const char*>(this + 1); }
  char* Entry() { return reinterpret_cast<char*>(this + 1); }
  Key GetKey() const { return KeyOfEntry(Entry()); }

  std::atomic<Node*> next_[1];
};
static_assert(sizeof(Node) == sizeof(std::atomic<Node*>));

inline size_t RoundUp8(size_t n) { return (n + 7) & ~size_t{7}; }

// Heights with P(h >= k + 1) = 1/4^k, from a per-thread generator (inserts may run on any
// write thread, concurrently).
int RandomHeight() {
  thread_local std::minstd_rand rng{std::random_device{}()};
  int height = 1;
  while (height < kMaxHeight && rng() % kBranching == 0) ++height;
  return height;
}

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

class SkipList final : public rocksdb::MemTableRep {
 public:
  explicit SkipList(rocksdb::Allocator* allocator) : MemTableRep(allocator) {
    char* raw = nullptr;
    head_ = NewNode(kMaxHeight, 0, &raw);
    for (int i = 0; i < kMaxHeight; ++i) head_->SetNextRelaxed(i, nullptr);
  }

  rocksdb::KeyHandle Allocate(const size_t len, char** buf) override {
    const int height = RandomHeight();
    Node* node = NewNode(height, len, buf);
    // The height rides in the level-0 pointer until Insert links the node.
    node->SetNextRelaxed(0, reinterpret_cast<Node*>(static_cast<uintptr_t>(height)));
    return node;
  }

  void Insert(rocksdb::KeyHandle handle) override { Add<false>(handle); }
  bool InsertKey(rocksdb::KeyHandle handle) override { return Add<false>(handle); }
  void InsertWithHint(rocksdb::KeyHandle handle, void** /*hint*/) override { Add<false>(handle); }
  bool InsertKeyWithHint(rocksdb::KeyHandle handle, void** /*hint*/) override {
    return Add<false>(handle);
  }
  void InsertConcurrently(rocksdb::KeyHandle handle) override { Add<true>(handle); }
  bool InsertKeyConcurrently(rocksdb::KeyHandle handle) override { return Add<true>(handle); }
  void InsertWithHintConcurrently(rocksdb::KeyHandle handle, void** /*hint*/) override {
    Add<true>(handle);
  }
  bool InsertKeyWithHintConcurrently(rocksdb::KeyHandle handle, void** /*hint*/) override {
    return Add<true>(handle);
  }

  bool Contains(const char* entry) const override {
    const Key key = KeyOfEntry(entry);
    Node* n = FindGreaterOrEqual(key);
    return n != nullptr && Compare(n->GetKey(), key) == 0;
  }

  void Get(const rocksdb::LookupKey& k, void* callback_args,
           bool (*callback_func)(void* arg, const char* entry)) override {
    LookupKeyLayout layout;
    std::memcpy(&layout, &k, sizeof layout);
    uint32_t size;
    const char* ikey = DecodeVarint32(layout.start, &size);
    if (ikey != layout.kstart || layout.kstart + size != layout.end || size < 8) LayoutMismatch();
    for (Node* n = FindGreaterOrEqual(KeyOfInternal(ikey, size));
         n != nullptr && callback_func(callback_args, n->Entry()); n = n->Next(0)) {
    }
  }

  // Every byte is in the arena, which the memtable accounts for itself.
  size_t ApproximateMemoryUsage() override { return 0; }

  uint64_t ApproximateNumEntries(const rocksdb::Slice& start_ikey,
                                 const rocksdb::Slice& end_ikey) override {
    const uint64_t before_end =
        EstimateCountBelow(KeyOfInternal(end_ikey.data(), static_cast<uint32_t>(end_ikey.size())));
    const uint64_t before_start = EstimateCountBelow(
        KeyOfInternal(start_ikey.data(), static_cast<uint32_t>(start_ikey.size())));
    return before_end > before_start ? before_end - before_start : 0;
  }

  Iterator* GetIterator(rocksdb::Arena* arena) override;

  // ---- Searches (any thread, concurrently with inserts).
  Node* head() const { return head_; }

  // The first node at or after key, or nullptr.
  Node* FindGreaterOrEqual(const Key& key) const {
    Node* x = head_;
    int level = max_height_.load(std::memory_order_relaxed) - 1;
    Node* known_bigger = nullptr;  // compared already at a higher level
    for (;;) {
      Node* next = x->Next(level);
      const int cmp = (next == nullptr || next == known_bigger) ? 1 : Compare(next->GetKey(), key);
      if (cmp == 0 || (cmp > 0 && level == 0)) return next;
      if (cmp < 0) {
        x = next;
      } else {
        known_bigger = next;
        --level;
      }
    }
  }

  // The last node before key, or head_.
  Node* FindLessThan(const Key& key) const {
    Node* x = head_;
    int level = max_height_.load(std::memory_order_relaxed) - 1;
    Node* known_bigger = nullptr;
    for (;;) {
      Node* next = x->Next(level);
      if (next != nullptr && next != known_bigger && Compare(next->GetKey(), key) < 0) {
        x = next;
      } else {
        if (level == 0) return x;
        known_bigger = next;
        --level;
      }
    }
  }

  // The last node, or head_ when empty.
  Node* FindLast() const {
    Node* x = head_;
    int level = max_height_.load(std::memory_order_relaxed) - 1;
    for (;;) {
      Node* next = x->Next(level);
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
  Node* NewNode(int height, size_t entry_len, char** entry) {
    const size_t prefix = sizeof(std::atomic<Node*>) * (height - 1);
    const size_t size = RoundUp8(prefix + sizeof(Node) + entry_len);
    char* raw = nullptr;
    MemTableRep::Allocate(size, &raw);
    // The arena's unaligned allocations stay 8-aligned while every one is a multiple of 8 (only
    // this list makes them); should another have broken that, align a slightly larger one.
    if ((reinterpret_cast<uintptr_t>(raw) & 7) != 0) {
      MemTableRep::Allocate(size + 8, &raw);
      raw += (8 - (reinterpret_cast<uintptr_t>(raw) & 7)) & 7;
    }
    Node* node = reinterpret_cast<Node*>(raw + prefix);
    for (int i = 0; i < height; ++i) new (node->Slot(i)) std::atomic<Node*>(nullptr);
    *entry = node->Entry();
    return node;
  }

  // Finds, at `level`, the nodes around key starting from `before` (which is before key):
  // *prev < key <= *next. Returns the comparison of key with *next (1 when next is nullptr).
  int FindSplice(const Key& key, Node* before, int level, Node** prev, Node** next) const {
    for (;;) {
      Node* n = before->Next(level);
      const int cmp = n == nullptr ? 1 : Compare(n->GetKey(), key);
      if (cmp >= 0) {
        *prev = before;
        *next = n;
        return cmp;
      }
      before = n;
    }
  }

  // Links node into the list. Concurrent: other Add<true> calls may run at the same time (each
  // level is linked by compare-and-swap, bottom up, so a node is in the list once level 0 is
  // linked). Returns false (linking nothing) when an equal key is already there.
  template <bool kConcurrent>
  bool Add(rocksdb::KeyHandle handle) {
    Node* node = static_cast<Node*>(handle);
    const int height =
        static_cast<int>(reinterpret_cast<uintptr_t>(node->Next(0)));  // set by Allocate
    const Key key = node->GetKey();
    int top = max_height_.load(std::memory_order_relaxed);
    while (height > top) {
      if (max_height_.compare_exchange_weak(top, height, std::memory_order_relaxed)) {
        top = height;
        break;
      }
    }
    Node* prev[kMaxHeight];
    Node* next[kMaxHeight];
    Node* x = head_;
    for (int level = top - 1; level >= 0; --level) {
      if (FindSplice(key, x, level, &prev[level], &next[level]) == 0) return false;
      x = prev[level];
    }
    if constexpr (kConcurrent) {
      if (!saw_concurrent_insert_.load(std::memory_order_relaxed) &&
          !saw_concurrent_insert_.exchange(true, std::memory_order_relaxed)) {
        lists_with_concurrent_inserts.fetch_add(1, std::memory_order_relaxed);
      }
    }
    for (int level = 0; level < height; ++level) {
      if constexpr (!kConcurrent) {
        node->SetNextRelaxed(level, next[level]);
        prev[level]->SetNext(level, node);
      } else {
        for (;;) {
          node->SetNextRelaxed(level, next[level]);
          if (prev[level]->CasNext(level, next[level], node)) break;
          // Another insert linked a node here first: find the place again from prev.
          if (FindSplice(key, prev[level], level, &prev[level], &next[level]) == 0) {
            if (level == 0) return false;  // not linked anywhere yet
          }
        }
      }
    }
    return true;
  }

  // About how many entries are before key: the search path's steps, each worth kBranching^level.
  uint64_t EstimateCountBelow(const Key& key) const {
    uint64_t count = 0;
    Node* x = head_;
    int level = max_height_.load(std::memory_order_relaxed) - 1;
    for (;;) {
      Node* next = x->Next(level);
      if (next != nullptr && Compare(next->GetKey(), key) < 0) {
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

  Node* head_;
  std::atomic<int> max_height_{1};
  std::atomic<bool> saw_concurrent_insert_{false};
};

// ---- Iterators.
//
// RocksDB builds most memtable iterators in an arena it owns and then only runs their
// destructor, never `delete`. The arena type is not public, so such iterators live in blocks
// from a per-thread free list instead: a block is a small header (the free list's link) and the
// iterator after it; the destructor gives its block back to the list of the thread running it
// (writing only the header, outside the object being destroyed), and only that thread reuses
// it, after the destructor has returned. Blocks still listed when a thread ends are freed.
class IteratorBlocks {
 public:
  static constexpr size_t kHeader = 16;  // keeps the iterator 16-aligned

  ~IteratorBlocks() {
    while (head_ != nullptr) {
      Header* h = head_;
      head_ = h->next;
      ::operator delete(h);
    }
  }
  // Memory for an object of `size` bytes (kHeader bytes into a block).
  void* Take(size_t size) {
    Header* h = head_;
    if (h == nullptr) {
      h = static_cast<Header*>(::operator new(kHeader + size));
    } else {
      head_ = h->next;
    }
    return reinterpret_cast<char*>(h) + kHeader;
  }
  void Give(void* object) {
    auto* h = reinterpret_cast<Header*>(static_cast<char*>(object) - kHeader);
    h->next = head_;
    head_ = h;
  }

 private:
  struct Header {
    Header* next;
  };
  static_assert(sizeof(Header) <= kHeader);
  Header* head_ = nullptr;
};
thread_local IteratorBlocks iterator_blocks;

class ListIterator final : public rocksdb::MemTableRep::Iterator {
 public:
  ListIterator(const SkipList* list, bool in_block) : list_(list), in_block_(in_block) {}
  ~ListIterator() override {
    if (in_block_) iterator_blocks.Give(this);
  }

  bool Valid() const override { return node_ != nullptr; }
  const char* key() const override { return node_->Entry(); }
  void Next() override { node_ = node_->Next(0); }
  void Prev() override { SetOrEnd(list_->FindLessThan(node_->GetKey())); }
  void Seek(const rocksdb::Slice& internal_key, const char* memtable_key) override {
    node_ = list_->FindGreaterOrEqual(Target(internal_key, memtable_key));
  }
  void SeekForPrev(const rocksdb::Slice& internal_key, const char* memtable_key) override {
    const Key target = Target(internal_key, memtable_key);
    Node* n = list_->FindGreaterOrEqual(target);
    if (n != nullptr && Compare(n->GetKey(), target) == 0) {
      node_ = n;
    } else {
      SetOrEnd(list_->FindLessThan(target));
    }
  }
  void SeekToFirst() override { node_ = list_->head()->Next(0); }
  void SeekToLast() override { SetOrEnd(list_->FindLast()); }

 private:
  static Key Target(const rocksdb::Slice& internal_key, const char* memtable_key) {
    if (memtable_key != nullptr) return KeyOfEntry(memtable_key);
    return KeyOfInternal(internal_key.data(), static_cast<uint32_t>(internal_key.size()));
  }
  void SetOrEnd(Node* n) { node_ = n == list_->head() ? nullptr : n; }

  const SkipList* list_;
  Node* node_ = nullptr;
  const bool in_block_;
};

rocksdb::MemTableRep::Iterator* SkipList::GetIterator(rocksdb::Arena* arena) {
  if (arena == nullptr) return new ListIterator(this, false);
  return new (iterator_blocks.Take(sizeof(ListIterator))) ListIterator(this, true);
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
    if (Compare(KeyOfEntry(p.a.data()), KeyOfEntry(p.b.data())) >= 0) return false;
  }
  return true;
}

class Factory final : public rocksdb::MemTableRepFactory {
 public:
  rocksdb::MemTableRep* CreateMemTableRep(const rocksdb::MemTableRep::KeyComparator& cmp,
                                          rocksdb::Allocator* allocator,
                                          const rocksdb::SliceTransform* transform,
                                          rocksdb::Logger* logger) override {
    if (!OrdersAsBytewise(cmp)) {
      return rocksdb::SkipListFactory().CreateMemTableRep(cmp, allocator, transform, logger);
    }
    lists_created.fetch_add(1, std::memory_order_relaxed);
    return new SkipList(allocator);
  }
  const char* Name() const override { return "SluiceSkipList"; }
  bool IsInsertConcurrentlySupported() const override { return true; }
  bool CanHandleDuplicatedKey() const override { return true; }
};

}  // namespace

std::shared_ptr<rocksdb::MemTableRepFactory> NewMemTableFactory() {
  return std::make_shared<Factory>();
}

uint64_t SluiceMemTablesCreated() { return lists_created.load(std::memory_order_relaxed); }

uint64_t MemTablesWithConcurrentInserts() {
  return lists_with_concurrent_inserts.load(std::memory_order_relaxed);
}

}  // namespace sluice::internal
