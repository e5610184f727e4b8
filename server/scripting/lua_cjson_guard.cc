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

// The walk's state: an upper bound of the encoded size so far, and whether the walk stopped
// (the bound passed the limit, or a value nests deeper than cjson encodes: cjson's own error
// then, raised on the first deep branch before it writes much).
struct Bound {
  double bytes = 0;
  bool too_deep = false;
  bool done() const { return too_deep || bytes > kMaxEncodedBytes; }
};

// Adds to the bound the value at `index` (each string byte may become a 6-byte \u escape).
// Tables shared many times count each time, as cjson writes them each time; the walk stops as
// soon as it is done(), so it costs at most what writing 512 MB would.
void AddBound(lua_State* L, int index, int depth, Bound* bound) {
  if (bound->done()) return;
  if (depth > kMaxDepth) {
    bound->too_deep = true;
    return;
  }
  switch (lua_type(L, index)) {
    case LUA_TSTRING:
      bound->bytes += static_cast<double>(lua_objlen(L, index)) * 6 + 2;
      return;
    case LUA_TTABLE:
      break;
    default:
      bound->bytes += 32;  // numbers, booleans, null
      return;
  }
  bound->bytes += 2;
  if (!lua_checkstack(L, 3)) {  // cjson refuses this depth too
    bound->too_deep = true;
    return;
  }
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    const int top = lua_gettop(L);
    bound->bytes += 2;  // separators
    AddBound(L, top - 1, depth + 1, bound);
    AddBound(L, top, depth + 1, bound);
    lua_pop(L, 1);
    if (bound->done()) {
      lua_pop(L, 1);
      return;
    }
  }
}

// cjson.encode(value): the original (upvalue 1) when the bound fits.
int GuardedEncode(lua_State* L) {
  luaL_argcheck(L, lua_gettop(L) == 1, 1, "expected 1 argument");  // cjson's check and text
  Bound bound;
  AddBound(L, 1, 0, &bound);
  if (bound.bytes > kMaxEncodedBytes) return luaL_error(L, "Cannot serialise: output too large");
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
