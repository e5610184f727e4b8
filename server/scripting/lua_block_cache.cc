#include "server/scripting/lua_block_cache.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace sluice::server {

LuaBlockCache::~LuaBlockCache() {
  for (FreeBlock*& head : lists_) {
    while (head != nullptr) {
      FreeBlock* next = head->next;
      std::free(head);
      head = next;
    }
  }
}

void* LuaBlockCache::Realloc(void* ptr, size_t osize, size_t nsize) {
  if (nsize == 0) {
    if (ptr != nullptr) Give(ptr, osize);
    return nullptr;
  }
  if (ptr == nullptr) return Take(nsize);
  const bool small_before = osize <= kMaxBlock;
  const bool small_after = nsize <= kMaxBlock;
  // A small block was allocated at its class's size: it holds any size of the class.
  if (small_before && small_after && ClassOf(osize) == ClassOf(nsize)) return ptr;
  if (!small_before && !small_after) return std::realloc(ptr, nsize);
  void* moved = Take(nsize);
  if (moved == nullptr) return nullptr;
  std::memcpy(moved, ptr, std::min(osize, nsize));
  Give(ptr, osize);
  return moved;
}

void* LuaBlockCache::Take(size_t n) {
  if (n > kMaxBlock) return std::malloc(n);
  const size_t c = ClassOf(n);
  if (FreeBlock* block = lists_[c]) {
    lists_[c] = block->next;
    cached_ -= c * kClassBytes;
    return block;
  }
  return std::malloc(c * kClassBytes);
}

void LuaBlockCache::Give(void* p, size_t n) {
  const size_t c = ClassOf(n);
  if (n > kMaxBlock || cached_ + c * kClassBytes > kMaxCachedBytes) return std::free(p);
  auto* block = static_cast<FreeBlock*>(p);
  block->next = lists_[c];
  lists_[c] = block;
  cached_ += c * kClassBytes;
}

}  // namespace sluice::server
