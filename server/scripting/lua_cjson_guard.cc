// cjson.encode behind a size check (see lua_libs.h): Debian's lua-cjson 2.1.0 keeps its output
// buffer's sizes in `int`, so an output past 2^30 bytes overflows them (CVE-2022-24834 in
// Redis's copy: a heap overflow). A table may hold one long string many times over, so a
// script's 256 MB of Lua memory is no bound on the output; the check below is.
#include <lua5.1/lua.hpp>

#include "server/scripting/lua_libs.h"

namespace sluice::server {

namespace {

// Well below 2^30, where the buffer's doubling would overflow an int.
constexpr double kMaxEncodedBytes = 512.0 * 1024 * 1024;
// cjson's own default depth limit; deeper values are cjson's error to raise, not ours.
constexpr int kMaxDepth = 1000;

// Adds to *total an upper bound of the encoded size of the value at `index` (each string byte
// may become a 6-byte \u escape); stops early once the bound passes the limit. Tables shared
// many times are counted each time, as cjson writes them each time.
void AddBound(lua_State* L, int index, int depth, double* total) {
  if (*total > kMaxEncodedBytes || depth > kMaxDepth) return;
  switch (lua_type(L, index)) {
    case LUA_TSTRING:
      *total += static_cast<double>(lua_objlen(L, index)) * 6 + 2;
      return;
    case LUA_TTABLE:
      break;
    default:
      *total += 32;  // numbers, booleans, null
      return;
  }
  *total += 2;
  if (!lua_checkstack(L, 3)) return;  // cjson refuses this depth too
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    const int top = lua_gettop(L);
    *total += 2;  // separators
    AddBound(L, top - 1, depth + 1, total);
    AddBound(L, top, depth + 1, total);
    lua_pop(L, 1);
    if (*total > kMaxEncodedBytes) {
      lua_pop(L, 1);
      return;
    }
  }
}

// cjson.encode(value): the original (upvalue 1) when the bound fits.
int GuardedEncode(lua_State* L) {
  luaL_argcheck(L, lua_gettop(L) == 1, 1, "expected 1 argument");  // cjson's check and text
  double total = 0;
  AddBound(L, 1, 0, &total);
  if (total > kMaxEncodedBytes) return luaL_error(L, "Cannot serialise: output too large");
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  const int rc = lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0);
  if (rc == LUA_ERRRUN && lua_isstring(L, -1)) {
    // cjson's own errors name the script's line when it calls cjson directly; called from
    // here, they would name this C function (nothing). Put the script's line back.
    luaL_where(L, 1);
    lua_insert(L, -2);
    lua_concat(L, 2);
  }
  if (rc != 0) return lua_error(L);
  return lua_gettop(L);
}

}  // namespace

void GuardCjsonEncode(lua_State* L, int cjson) {
  lua_getfield(L, cjson, "encode");
  if (!lua_isfunction(L, -1)) return lua_pop(L, 1);
  lua_pushcclosure(L, GuardedEncode, 1);
  lua_setfield(L, cjson, "encode");
}

}  // namespace sluice::server
