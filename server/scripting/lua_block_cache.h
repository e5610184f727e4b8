// LuaBlockCache: the small blocks a Lua state frees, kept by size class for its next
// allocations.
//
// A script's run allocates and frees thousands of small blocks (strings, tables, closures, the
// arguments and replies of redis.call); glibc's malloc and free were 4.3% of the server's samples
// under BullMQ's worker (their per-thread caches hold seven blocks of a size). Blocks of up to
// kMaxBlock bytes are allocated at their 16-byte size class; a freed one goes onto its class's
// list, up to kMaxCachedBytes in all (past that, back to free), and the next allocation of that
// class takes it. Nothing is carved from slabs: every block is malloc's own, so a state's cache
// never holds more than kMaxCachedBytes, and what it does not keep is freed as before.
//
// Thread-safety: none. One per Lua state, used on the state's thread only (its lua_Alloc).
#pragma once

#include <cstddef>

namespace sluice::server {

class LuaBlockCache {
 public:
  static constexpr size_t kMaxBlock = 512;
  static constexpr size_t kMaxCachedBytes = size_t{4} << 20;

  LuaBlockCache() = default;
  ~LuaBlockCache();  // frees the cached blocks
  LuaBlockCache(const LuaBlockCache&) = delete;
  LuaBlockCache& operator=(const LuaBlockCache&) = delete;

  // lua_Alloc's contract: `osize` is the block's size as Lua knows it (0 with a null `ptr`);
  // `nsize` 0 frees it and returns null; otherwise the new block (the old one, when it has
  // room), or null with `ptr` untouched when memory runs out.
  void* Realloc(void* ptr, size_t osize, size_t nsize);

  size_t cached_bytes() const { return cached_; }

 private:
  struct FreeBlock {
    FreeBlock* next;
  };
  static constexpr size_t kClassBytes = 16;
  static size_t ClassOf(size_t n) { return (n + kClassBytes - 1) / kClassBytes; }
  void* Take(size_t n);
  void Give(void* p, size_t n);

  FreeBlock* lists_[kMaxBlock / kClassBytes + 1] = {};
  size_t cached_ = 0;
};

}  // namespace sluice::server
