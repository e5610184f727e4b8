// The `cmsgpack` library (see lua_libs.h for what it encodes and how).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <lua5.1/lua.hpp>
#include <string>
#include <utility>

#include "server/scripting/lua_libs.h"

namespace sluice::server {

namespace {

constexpr int kMaxNesting = 16;
constexpr const char* kTooManyValues =
    "too many return values at once; use unpack_one or unpack_limit instead.";

void PutBig(std::string* out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

void PutTagged(std::string* out, unsigned char tag, uint64_t v, int bytes) {
  out->push_back(static_cast<char>(tag));
  PutBig(out, v, bytes);
}

void EncodeInteger(std::string* out, int64_t v) {
  if (v >= 0) {
    const auto u = static_cast<uint64_t>(v);
    if (u < 128) return out->push_back(static_cast<char>(u));
    if (u <= 0xFF) return PutTagged(out, 0xcc, u, 1);
    if (u <= 0xFFFF) return PutTagged(out, 0xcd, u, 2);
    if (u <= 0xFFFFFFFFull) return PutTagged(out, 0xce, u, 4);
    return PutTagged(out, 0xcf, u, 8);
  }
  const auto u = static_cast<uint64_t>(v);
  if (v >= -32) return out->push_back(static_cast<char>(u & 0xFF));
  if (v >= INT8_MIN) return PutTagged(out, 0xd0, u & 0xFF, 1);
  if (v >= INT16_MIN) return PutTagged(out, 0xd1, u & 0xFFFF, 2);
  if (v >= INT32_MIN) return PutTagged(out, 0xd2, u & 0xFFFFFFFFull, 4);
  return PutTagged(out, 0xd3, u, 8);
}

void EncodeNumber(std::string* out, lua_Number n) {
  if (std::isfinite(n) && n == std::floor(n) && n >= -9223372036854775808.0 &&
      n < 9223372036854775808.0) {
    return EncodeInteger(out, static_cast<int64_t>(n));
  }
  const auto f = static_cast<float>(n);
  if (static_cast<lua_Number>(f) == n) {
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    return PutTagged(out, 0xca, bits, 4);
  }
  uint64_t bits;
  std::memcpy(&bits, &n, sizeof bits);
  PutTagged(out, 0xcb, bits, 8);
}

void EncodeString(std::string* out, const char* s, size_t len) {
  if (len < 32) {
    out->push_back(static_cast<char>(0xa0 | len));
  } else if (len <= 0xFF) {
    PutTagged(out, 0xd9, len, 1);
  } else if (len <= 0xFFFF) {
    PutTagged(out, 0xda, len, 2);
  } else {
    PutTagged(out, 0xdb, len, 4);
  }
  out->append(s, len);
}

void EncodeHeader(std::string* out, size_t n, bool map) {
  if (n < 16) return out->push_back(static_cast<char>((map ? 0x80 : 0x90) | n));
  if (n <= 0xFFFF) return PutTagged(out, map ? 0xde : 0xdc, n, 2);
  PutTagged(out, map ? 0xdf : 0xdd, n, 4);
}

// The length n when the table at `t` has exactly the keys 1..n, else -1.
int64_t ArrayLength(lua_State* L, int t) {
  int64_t count = 0;
  double max = 0;
  lua_pushnil(L);
  while (lua_next(L, t) != 0) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TNUMBER) {
      lua_pop(L, 1);
      return -1;
    }
    const lua_Number k = lua_tonumber(L, -1);
    if (k <= 0 || k != std::floor(k)) {
      lua_pop(L, 1);
      return -1;
    }
    max = k > max ? k : max;
    ++count;
  }
  return max == static_cast<double>(count) ? count : -1;
}

void Encode(lua_State* L, int index, std::string* out, int depth);

void EncodeTable(lua_State* L, int t, std::string* out, int depth) {
  const int64_t n = ArrayLength(L, t);
  if (n >= 0) {
    EncodeHeader(out, static_cast<size_t>(n), false);
    for (int64_t i = 1; i <= n; ++i) {
      lua_rawgeti(L, t, static_cast<int>(i));
      Encode(L, lua_gettop(L), out, depth + 1);
      lua_pop(L, 1);
    }
    return;
  }
  size_t pairs = 0;
  lua_pushnil(L);
  while (lua_next(L, t) != 0) {
    ++pairs;
    lua_pop(L, 1);
  }
  EncodeHeader(out, pairs, true);
  lua_pushnil(L);
  while (lua_next(L, t) != 0) {
    const int value = lua_gettop(L);
    Encode(L, value - 1, out, depth + 1);
    Encode(L, value, out, depth + 1);
    lua_pop(L, 1);
  }
}

void Encode(lua_State* L, int index, std::string* out, int depth) {
  luaL_checkstack(L, 4, "cmsgpack: nesting too deep");
  switch (lua_type(L, index)) {
    case LUA_TBOOLEAN:
      return out->push_back(static_cast<char>(lua_toboolean(L, index) ? 0xc3 : 0xc2));
    case LUA_TNUMBER:
      return EncodeNumber(out, lua_tonumber(L, index));
    case LUA_TSTRING: {
      size_t len = 0;
      const char* s = lua_tolstring(L, index, &len);
      return EncodeString(out, s, len);
    }
    case LUA_TTABLE:
      if (depth < kMaxNesting) return EncodeTable(L, index, out, depth);
      [[fallthrough]];
    default:
      return out->push_back(static_cast<char>(0xc0));
  }
}

int Pack(lua_State* L) {
  const int argc = lua_gettop(L);
  if (argc == 0) return luaL_argerror(L, 0, "MessagePack pack needs input.");
  std::string out;
  for (int i = 1; i <= argc; ++i) Encode(L, i, &out, 0);
  lua_pushlstring(L, out.data(), out.size());
  return 1;
}

// A decoder over the input; errors raise Lua errors (Redis's texts).
struct Decoder {
  lua_State* L;
  const unsigned char* p;
  size_t left;

  void Need(size_t n) {
    if (left < n) luaL_error(L, "Missing bytes in input.");
  }
  uint64_t Big(size_t n) {
    Need(n);
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v = (v << 8) | p[i];
    p += n, left -= n;
    return v;
  }
  void String(size_t n) {
    Need(n);
    lua_pushlstring(L, reinterpret_cast<const char*>(p), n);
    p += n, left -= n;
  }
  // Every push is preceded by a check of the Lua stack (CVE-2018-11218), with Redis's texts.
  void Array(size_t n, int depth) {
    luaL_checkstack(L, 4, "in function mp_decode_to_lua_array");
    lua_createtable(L, n < 1024 ? static_cast<int>(n) : 0, 0);
    for (size_t i = 1; i <= n; ++i) {
      Value(depth + 1);
      lua_rawseti(L, -2, static_cast<int>(i));
    }
  }
  void Map(size_t n, int depth) {
    luaL_checkstack(L, 4, kTooManyValues);
    lua_newtable(L);
    for (size_t i = 0; i < n; ++i) {
      Value(depth + 1);
      Value(depth + 1);
      if (lua_isnil(L, -2)) {
        lua_pop(L, 2);
      } else {
        lua_rawset(L, -3);
      }
    }
  }
  void Value(int depth) {  // callers have checked the stack
    Need(1);
    const unsigned char c = *p++;
    --left;
    if (c <= 0x7f) return lua_pushnumber(L, c);
    if (c >= 0xe0) return lua_pushnumber(L, static_cast<int8_t>(c));
    if ((c & 0xe0) == 0xa0) return String(c & 0x1f);
    if ((c & 0xf0) == 0x90) return Array(c & 0x0f, depth);
    if ((c & 0xf0) == 0x80) return Map(c & 0x0f, depth);
    switch (c) {
      case 0xc0:
        return lua_pushnil(L);
      case 0xc2:
        return lua_pushboolean(L, 0);
      case 0xc3:
        return lua_pushboolean(L, 1);
      case 0xcc:
        return lua_pushnumber(L, static_cast<lua_Number>(Big(1)));
      case 0xcd:
        return lua_pushnumber(L, static_cast<lua_Number>(Big(2)));
      case 0xce:
        return lua_pushnumber(L, static_cast<lua_Number>(Big(4)));
      case 0xcf:
        return lua_pushnumber(L, static_cast<lua_Number>(Big(8)));
      case 0xd0:
        return lua_pushnumber(L, static_cast<int8_t>(Big(1)));
      case 0xd1:
        return lua_pushnumber(L, static_cast<int16_t>(Big(2)));
      case 0xd2:
        return lua_pushnumber(L, static_cast<int32_t>(Big(4)));
      case 0xd3:
        return lua_pushnumber(L, static_cast<lua_Number>(static_cast<int64_t>(Big(8))));
      case 0xca: {
        const auto bits = static_cast<uint32_t>(Big(4));
        float f;
        std::memcpy(&f, &bits, sizeof f);
        return lua_pushnumber(L, f);
      }
      case 0xcb: {
        const uint64_t bits = Big(8);
        double d;
        std::memcpy(&d, &bits, sizeof d);
        return lua_pushnumber(L, d);
      }
      case 0xc4:
      case 0xd9:
        return String(Big(1));
      case 0xc5:
      case 0xda:
        return String(Big(2));
      case 0xc6:
      case 0xdb:
        return String(Big(4));
      case 0xdc:
        return Array(Big(2), depth);
      case 0xdd:
        return Array(Big(4), depth);
      case 0xde:
        return Map(Big(2), depth);
      case 0xdf:
        return Map(Big(4), depth);
      default:
        luaL_error(L, "Bad data format in input.");
    }
  }
};

// Redis's mp_unpack_full: decodes up to `limit` values from byte `offset` of argument 1. With
// neither a limit nor an offset every value is returned; otherwise the offset of the next value
// (-1 once the input is used up) comes first. Argument 1 must be the only one on the stack.
// Redis formats the input's length where the limit belongs in the first error; so do we.
int UnpackFrom(lua_State* L, lua_Integer limit, lua_Integer offset) {
  size_t len = 0;
  const char* s = luaL_checklstring(L, 1, &len);
  if (offset < 0 || limit < 0) {
    return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.",
                      static_cast<int>(offset), static_cast<int>(len));
  }
  if (static_cast<size_t>(offset) > len) {
    return luaL_error(L, "Start offset %d greater than input length %d.", static_cast<int>(offset),
                      static_cast<int>(len));
  }
  const bool all = limit == 0 && offset == 0;
  if (all) limit = INT32_MAX;
  const auto start = static_cast<size_t>(offset);
  Decoder d{L, reinterpret_cast<const unsigned char*>(s) + start, len - start};
  int results = 0;
  while (d.left > 0 && results < limit) {
    luaL_checkstack(L, 4, kTooManyValues);
    d.Value(0);
    ++results;
  }
  if (all) return results;
  luaL_checkstack(L, 1, "in function mp_unpack_full");
  lua_pushinteger(L, d.left == 0 ? -1 : static_cast<lua_Integer>(len - d.left));
  lua_insert(L, 2);
  return results + 1;
}

int Unpack(lua_State* L) { return UnpackFrom(L, 0, 0); }

int UnpackOne(lua_State* L) {
  const lua_Integer offset = luaL_optinteger(L, 2, 0);
  lua_settop(L, 1);
  return UnpackFrom(L, 1, offset);
}

int UnpackLimit(lua_State* L) {
  const lua_Integer limit = luaL_checkinteger(L, 2);
  const lua_Integer offset = luaL_optinteger(L, 3, 0);
  lua_settop(L, 1);
  return UnpackFrom(L, limit, offset);
}

}  // namespace

int OpenCmsgpackLibrary(lua_State* L) {
  static const luaL_Reg kFunctions[] = {{"pack", Pack},
                                        {"unpack", Unpack},
                                        {"unpack_one", UnpackOne},
                                        {"unpack_limit", UnpackLimit},
                                        {nullptr, nullptr}};
  lua_newtable(L);
  luaL_register(L, nullptr, kFunctions);
  // The module's fields as Redis 7.0's lua-cmsgpack has them (scripts can list them).
  for (const auto& [field, text] :
       {std::pair{"_NAME", "cmsgpack"}, std::pair{"_VERSION", "lua-cmsgpack 0.4.0"},
        std::pair{"_COPYRIGHT", "Copyright (C) 2012, Salvatore Sanfilippo"},
        std::pair{"_DESCRIPTION", "MessagePack C implementation for Lua"}}) {
    lua_pushstring(L, text);
    lua_setfield(L, -2, field);
  }
  return 1;
}

}  // namespace sluice::server
