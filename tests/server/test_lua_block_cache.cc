// LuaBlockCache (server/scripting/lua_block_cache.h): the Lua states' allocator keeps freed
// small blocks by size class and hands them out again, moves contents across classes, leaves
// big blocks to realloc, and never holds more than its cap.
#include <doctest/doctest.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "server/scripting/lua_block_cache.h"

namespace sluice::server {
namespace {

void Fill(void* p, size_t n, char c) { std::memset(p, c, n); }
bool Holds(const void* p, size_t n, char c) {
  return std::string(static_cast<const char*>(p), n) == std::string(n, c);
}

TEST_CASE("LuaBlockCache: a freed small block serves the next allocation of its class") {
  LuaBlockCache cache;
  void* a = cache.Realloc(nullptr, 0, 40);
  REQUIRE(a != nullptr);
  CHECK(cache.Realloc(a, 40, 0) == nullptr);
  CHECK(cache.cached_bytes() == 48);          // 40 bytes' class: 48
  CHECK(cache.Realloc(nullptr, 0, 33) == a);  // the same class (33-48 bytes)
  CHECK(cache.cached_bytes() == 0);
  void* b = cache.Realloc(nullptr, 0, 49);  // the next class: a block of its own
  CHECK(b != a);
  cache.Realloc(a, 33, 0);
  cache.Realloc(b, 49, 0);
  CHECK(cache.cached_bytes() == 48 + 64);
}

TEST_CASE("LuaBlockCache: growing and shrinking keeps the contents") {
  LuaBlockCache cache;
  void* p = cache.Realloc(nullptr, 0, 20);
  Fill(p, 20, 'a');
  CHECK(cache.Realloc(p, 20, 30) == p);  // 17-32 bytes: one class, no move
  Fill(p, 30, 'b');
  void* q = cache.Realloc(p, 30, 300);  // another class: moved
  REQUIRE(q != nullptr);
  CHECK(Holds(q, 30, 'b'));
  Fill(q, 300, 'c');
  void* big = cache.Realloc(q, 300, 5000);  // past kMaxBlock: malloc's
  REQUIRE(big != nullptr);
  CHECK(Holds(big, 300, 'c'));
  Fill(big, 5000, 'd');
  void* bigger = cache.Realloc(big, 5000, 9000);  // big to big: realloc
  REQUIRE(bigger != nullptr);
  CHECK(Holds(bigger, 5000, 'd'));
  void* small = cache.Realloc(bigger, 9000, 10);  // back to a small class
  REQUIRE(small != nullptr);
  CHECK(Holds(small, 10, 'd'));
  cache.Realloc(small, 10, 0);
  CHECK(cache.cached_bytes() == 16 + 32 + 304);  // the 16-, 32- and 304-byte classes' blocks
}

TEST_CASE("LuaBlockCache: big blocks are not cached; the cache stops at its cap") {
  LuaBlockCache cache;
  void* big = cache.Realloc(nullptr, 0, LuaBlockCache::kMaxBlock + 1);
  cache.Realloc(big, LuaBlockCache::kMaxBlock + 1, 0);
  CHECK(cache.cached_bytes() == 0);
  std::vector<void*> blocks;
  const size_t n = LuaBlockCache::kMaxCachedBytes / LuaBlockCache::kMaxBlock + 10;
  for (size_t i = 0; i < n; ++i) blocks.push_back(cache.Realloc(nullptr, 0, 512));
  CHECK(std::set<void*>(blocks.begin(), blocks.end()).size() == n);  // all distinct
  for (void* p : blocks) cache.Realloc(p, 512, 0);
  CHECK(cache.cached_bytes() == LuaBlockCache::kMaxCachedBytes);
}

}  // namespace
}  // namespace sluice::server
