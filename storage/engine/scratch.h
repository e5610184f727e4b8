// Per-thread reusable buffers for the hot path, so that a command in steady state makes no heap
// allocation of its own: a buffer keeps its capacity from one command to the next.
//
// Borrowed<T> lends this thread's next free T for its own lifetime (a small per-thread stack
// of T, one per nesting level, so nested borrowers never share an object). Borrowers must be
// destroyed in the reverse order of their construction, which locals on the stack are; never
// move a borrower to another thread or keep it past the function that made it. Internal header.
#pragma once

#include <rocksdb/slice.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "encoding.h"

namespace sluice::internal {

// Buffers whose capacity grew past this are given back to the heap after use, so that one huge
// key or value does not stay allocated by every thread that ever handled one.
inline constexpr size_t kScratchKeepBytes = 64 << 10;

template <typename T>
class Borrowed {
 public:
  Borrowed() {
    Pool& p = pool();
    if (p.depth == p.items.size()) p.items.push_back(std::make_unique<T>());
    item_ = p.items[p.depth++].get();
  }
  ~Borrowed() { --pool().depth; }
  Borrowed(const Borrowed&) = delete;
  Borrowed& operator=(const Borrowed&) = delete;

  T& operator*() const { return *item_; }
  T* operator->() const { return item_; }
  T* get() const { return item_; }

 private:
  struct Pool {
    std::vector<std::unique_ptr<T>> items;
    size_t depth = 0;
  };
  static Pool& pool() {
    thread_local Pool p;
    return p;
  }
  T* item_;
};

// Objects of type T kept by each thread for reuse: Acquire() hands out a kept one (or a new
// one), Release() keeps it again (up to kKeep per thread, the rest are deleted). Unlike
// Borrowed, acquisitions may end in any order and on any thread, so a unit of work that lives
// across calls (a Store::Transaction) can hold one. The object keeps its state: callers reset it.
template <typename T, size_t kKeep = 4>
class FreeList {
 public:
  static T* Acquire() {
    auto& list = items();
    if (list.empty()) return new T();
    T* t = list.back().release();
    list.pop_back();
    return t;
  }
  static void Release(T* t) {
    auto& list = items();
    if (list.size() >= kKeep) {
      delete t;
      return;
    }
    list.emplace_back(t);
  }

 private:
  static std::vector<std::unique_ptr<T>>& items() {
    thread_local std::vector<std::unique_ptr<T>> list;
    return list;
  }
};

// Gives back a string's memory when it grew past kScratchKeepBytes.
inline void TrimScratch(std::string* s) {
  if (s->capacity() > kScratchKeepBytes) std::string().swap(*s);
}

// A std::string taken from this thread's free list and given back, with its capacity, when
// destroyed: for a member of an object made per command (a Collection's sub-key buffers, past
// the SSO for every key), which would otherwise allocate and free per command. Unlike
// Borrowed it moves (the string goes with it) and copies, so its owner may be returned in a
// Result. A moved-from one holds nothing: only destroy it or assign to it.
class PooledString {
 public:
  PooledString() : s_(Strings::Acquire()) { s_->clear(); }
  PooledString(const PooledString& o) : PooledString() { s_->assign(*o.s_); }
  PooledString(PooledString&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  PooledString& operator=(const PooledString& o) {
    if (s_ == nullptr) s_ = Strings::Acquire();
    if (this != &o) s_->assign(*o.s_);
    return *this;
  }
  PooledString& operator=(PooledString&& o) noexcept {
    std::swap(s_, o.s_);
    return *this;
  }
  ~PooledString() {
    if (s_ == nullptr) return;
    TrimScratch(s_);
    Strings::Release(s_);
  }

  std::string& operator*() const { return *s_; }
  std::string* operator->() const { return s_; }
  std::string* get() const { return s_; }

 private:
  using Strings = FreeList<std::string, 32>;
  std::string* s_;
};

// An encoded RocksDB key (EncodeKey) in a borrowed buffer: what EncodeKey returns, without a
// fresh string per call.
class RawKey {
 public:
  RawKey(int db, std::string_view user_key) { EncodeKeyTo(db, user_key, buf_.get()); }
  ~RawKey() { TrimScratch(buf_.get()); }

  const std::string& str() const { return *buf_; }
  operator const std::string&() const { return *buf_; }  // NOLINT: used where a key is expected
  operator std::string_view() const { return *buf_; }    // NOLINT

 private:
  Borrowed<std::string> buf_;
};

// A borrowed PinnableSlice for one point read (Store::Impl::ReadRaw). Its end releases what the
// read pinned (a block cache entry), so nothing stays pinned between commands.
class ScratchRead {
 public:
  ScratchRead() = default;
  ~ScratchRead() {
    slice_->Reset();
    TrimScratch(slice_->GetSelf());
  }
  ScratchRead(const ScratchRead&) = delete;
  ScratchRead& operator=(const ScratchRead&) = delete;

  rocksdb::PinnableSlice* get() const { return slice_.get(); }

 private:
  Borrowed<rocksdb::PinnableSlice> slice_;
};

}  // namespace sluice::internal
