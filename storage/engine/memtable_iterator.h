// The memtable's iterator (memtable.cc has the structure it walks) and the per-thread blocks that
// hold the iterators RocksDB builds in its arena. Internal to memtable.cc; a header of its own
// so that the list's file keeps to the list.
#pragma once

#include <rocksdb/memtablerep.h>
#include <rocksdb/slice.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>
#include <vector>

#include "memtable_nodes.h"
#include "memtable_order.h"

namespace sluice::internal::memtable_nodes {

// RocksDB builds most memtable iterators in an arena it owns and then only runs their
// destructor, never `delete`. The arena type is not public, so such iterators live in blocks
// from a per-thread free list instead: a block is a small header (the free list's link) and the
// iterator after it; the destructor gives its block back to the list of the thread running it
// (writing only the header, outside the object being destroyed), and only that thread reuses
// it, after the destructor has returned. A thread keeps at most kMaxListed blocks (a thread
// that only destroys iterators, as the everysec thread dropping idle pooled ones does, would
// otherwise collect every block it was given); blocks still listed when it ends are freed.
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
  static constexpr size_t kMaxListed = 64;
  size_t listed() const { return listed_; }

  void* Take(size_t size) {
    Header* h = head_;
    if (h == nullptr) {
      h = static_cast<Header*>(::operator new(kHeader + size));
    } else {
      head_ = h->next;
      --listed_;
    }
    return reinterpret_cast<char*>(h) + kHeader;
  }
  void Give(void* object) {
    auto* h = reinterpret_cast<Header*>(static_cast<char*>(object) - kHeader);
    if (listed_ == kMaxListed) {
      ::operator delete(h);
      return;
    }
    h->next = head_;
    head_ = h;
    ++listed_;
  }

 private:
  struct Header {
    Header* next;
  };
  static_assert(sizeof(Header) <= kHeader);
  Header* head_ = nullptr;
  size_t listed_ = 0;
};
inline thread_local IteratorBlocks iterator_blocks;

// The calling thread's fresh read (FreshIteratorRead, memtable.h): while `active`, an iterator
// positioned for the first time under `generation` starts a new read. Generations are unique in
// the process (each thread counts within a block of 2^32 of its own), so an iterator that moves
// between threads never mistakes another thread's read for one it has started.
struct FreshRead {
  uint64_t generation = 0;
  bool active = false;
};
inline thread_local FreshRead fresh_read;
inline std::atomic<uint64_t> fresh_read_blocks{0};

// Walks the entries in internal-key order: key nodes in the order of a snapshot of the
// memtable's key order (taken when the iterator is made: an entry RocksDB may show it was
// inserted before that), each one's versions newest to oldest. Going backwards within a key uses
// a copy of its chain (the chain only links towards older versions).
class ListIterator final : public rocksdb::MemTableRep::Iterator {
 public:
  ListIterator(KeyOrder* order, bool in_block)
      : order_(order), cursor_(order->Snapshot()), in_block_(in_block) {}
  ~ListIterator() override {
    if (in_block_) iterator_blocks.Give(this);
  }

  bool Valid() const override { return version_ != nullptr; }
  const char* key() const override { return version_->Entry(); }

  void Next() override {
    chain_valid_ = false;
    if (Version* older = version_->Older()) {
      version_ = older;
    } else {
      AtNewest(Shown(cursor_.Next()));
      if (node_ != nullptr) cursor_.PrefetchAhead();
    }
  }

  void Prev() override {
    if (!chain_valid_) LoadChain();
    if (chain_pos_ > 0) {
      version_ = chain_[--chain_pos_];
      return;
    }
    AtOldest(ShownBack(cursor_.Prev()));
  }

  // The first entry at or after the target.
  void Seek(const rocksdb::Slice& internal_key, const char* memtable_key) override {
    StartReadIfFresh();
    const Key target = Target(internal_key, memtable_key);
    NoteReadSequence(target.tag >> 8);
    chain_valid_ = false;
    KeyNode* node = Shown(cursor_.SeekAtOrAfter(SearchKeyOf(target)));
    if (node != nullptr && SameUser(node->UserKey(), target)) {
      // Every version newer than the target (RocksDB's iterators seek to a key's tag 0 to skip
      // its versions): straight to the next key, without walking the chain.
      if (target.tag >= node->oldest_tag.load(std::memory_order_acquire)) {
        for (Version* v = node->Newest(); v != nullptr; v = v->Older()) {
          if (v->GetKey().tag <= target.tag) {
            node_ = node;
            version_ = v;
            return;
          }
        }
      }
      node = Shown(cursor_.Next());  // every version is newer than the target
    }
    AtNewest(node);
  }

  // The last entry at or before the target.
  void SeekForPrev(const rocksdb::Slice& internal_key, const char* memtable_key) override {
    StartReadIfFresh();
    const Key target = Target(internal_key, memtable_key);
    positioned_ = true;  // its target carries no read sequence: a first one hides nothing
    chain_valid_ = false;
    KeyNode* node = cursor_.SeekAtOrAfter(SearchKeyOf(target));
    if (node != nullptr && SameUser(node->UserKey(), target) && !Hides(node)) {
      Version* last = nullptr;
      for (Version* v = node->Newest(); v != nullptr && v->GetKey().tag >= target.tag;
           v = v->Older()) {
        last = v;
      }
      if (last != nullptr) {
        node_ = node;
        version_ = last;
        return;
      }
    }
    AtOldest(ShownBack(cursor_.Prev()));
  }

  void SeekToFirst() override {
    StartReadIfFresh();
    positioned_ = true;  // a first one (a flush's walk) hides nothing
    chain_valid_ = false;
    AtNewest(Shown(cursor_.SeekToFirst()));
  }
  void SeekToLast() override {
    StartReadIfFresh();
    positioned_ = true;
    AtOldest(ShownBack(cursor_.SeekToLast()));
  }

 private:
  // RocksDB's value types, in a tag's low byte.
  static constexpr uint8_t kTypeValue = 0x1;
  static constexpr uint8_t kTypeSingleDeletion = 0x7;

  // The iterator hides a key whose versions here cancel out for its reader: its newest is a
  // SingleDelete the reader sees and its oldest a Put. Under SingleDelete's contract
  // (Txn::EraseOnceRaw) the key was absent before that Put, so it is absent for the reader with
  // or without this memtable's versions, and RocksDB's iterator would only step over them (its
  // merge of every level costs a scan ~100 ns a key; a re-scored sorted set leaves several such
  // keys per live score). Hidden in both directions alike: DBIter and the merging iterator
  // reseek and step back and forth over a key and expect each child to show it the same way.
  // The reader's sequence comes from the iterator's first positioning when it is a Seek (DBIter
  // seeks its children to the target at its own sequence; an older memtable under a newer range
  // tombstone is seeked to the tombstone's end at the maximum sequence, but every entry there
  // is older than the tombstone, which the reader sees). An iterator first positioned otherwise
  // (a flush's SeekToFirst; SeekForPrev and SeekToLast, whose targets carry no sequence) hides
  // nothing. Later seeks (reseeks, direction changes at other sequences) leave it as it is.
  void NoteReadSequence(uint64_t seq) {
    if (!positioned_) hide_through_ = seq;
    positioned_ = true;
  }
  bool Hides(const KeyNode* node) const {
    if (hide_through_ == 0) return false;
    const uint64_t newest = node->Newest()->GetKey().tag;
    return static_cast<uint8_t>(newest) == kTypeSingleDeletion && (newest >> 8) <= hide_through_ &&
           static_cast<uint8_t>(node->oldest_tag.load(std::memory_order_acquire)) == kTypeValue;
  }
  // node, or the first node after it (before it, for ShownBack) that is not hidden (nullptr:
  // the end).
  KeyNode* Shown(KeyNode* node) {
    while (node != nullptr && Hides(node)) {
      node = cursor_.Next();
      if (node != nullptr) cursor_.PrefetchAhead();
    }
    return node;
  }
  KeyNode* ShownBack(KeyNode* node) {
    while (node != nullptr && Hides(node)) node = cursor_.Prev();
    return node;
  }

  // A refreshed iterator reads at a newer sequence number than the one it was made for, so its
  // first positioning in a fresh read (FreshIteratorRead) starts over as a new iterator would:
  // the keys added since its order snapshot (their entries may be visible now), and the read
  // sequence its hiding goes by.
  void StartReadIfFresh() {
    if (!fresh_read.active || read_generation_ == fresh_read.generation) return;
    read_generation_ = fresh_read.generation;
    positioned_ = false;
    hide_through_ = 0;
    chain_valid_ = false;
    OrderSnapshot newer;
    if (order_->SnapshotIfNewer(cursor_.snapshot(), &newer))
      cursor_ = OrderCursor(std::move(newer));
  }

  static Key Target(const rocksdb::Slice& internal_key, const char* memtable_key) {
    if (memtable_key != nullptr) return KeyOfEntry(memtable_key);
    return KeyOfInternal(internal_key.data(), static_cast<uint32_t>(internal_key.size()));
  }

  void AtNewest(KeyNode* node) {
    node_ = node;
    version_ = node == nullptr ? nullptr : node->Newest();
  }

  // The oldest version of node (nullptr: the end).
  void AtOldest(KeyNode* node) {
    if (node == nullptr) {
      node_ = nullptr;
      version_ = nullptr;
      chain_valid_ = false;
      return;
    }
    node_ = node;
    LoadChainOf(node);
    chain_pos_ = chain_.size() - 1;
    version_ = chain_[chain_pos_];
  }

  void LoadChainOf(KeyNode* node) {
    chain_.clear();
    for (Version* v = node->Newest(); v != nullptr; v = v->Older()) chain_.push_back(v);
    chain_valid_ = true;
  }

  // node_'s chain, with chain_pos_ at version_.
  void LoadChain() {
    LoadChainOf(node_);
    chain_pos_ =
        static_cast<size_t>(std::find(chain_.begin(), chain_.end(), version_) - chain_.begin());
  }

  KeyOrder* const order_;  // the memtable's, which outlives its iterators
  OrderCursor cursor_;
  KeyNode* node_ = nullptr;
  Version* version_ = nullptr;   // nullptr: not valid
  std::vector<Version*> chain_;  // node_'s versions, newest first, when chain_valid_
  size_t chain_pos_ = 0;
  bool chain_valid_ = false;
  bool positioned_ = false;       // a Seek* ran (the first one sets hide_through_)
  uint64_t hide_through_ = 0;     // Hides' reader sequence; 0 hides nothing
  uint64_t read_generation_ = 0;  // the fresh read it last started (fresh_read.generation)
  const bool in_block_;
};

}  // namespace sluice::internal::memtable_nodes
