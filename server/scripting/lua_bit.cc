// The `bit` library (see lua_libs.h): 32-bit operations on Lua numbers, with the API and the
// results of LuaBitOp 1.0, as Redis embeds it, and Redis's fix for bit.tohex (CVE-2024-31449:
// a digit count of INT32_MIN overflowed on negation and wrote outside the digit buffer).
#include <cstdint>
#include <cstring>
#include <lua5.1/lua.hpp>

#include "server/scripting/lua_libs.h"

namespace sluice::server {

namespace {

// A number's low 32 bits as LuaBitOp takes them: the double plus 2^52 + 2^51, whose low word
// then holds the number rounded to an integer, modulo 2^32 (for |n| below 2^51). A value that
// is not a number (nor a numeric string) is a type error unless it happens to convert to 0.
uint32_t Arg(lua_State* L, int index) {
  const double shifted = lua_tonumber(L, index) + 6755399441055744.0;
  uint64_t bits = 0;
  std::memcpy(&bits, &shifted, sizeof bits);
  const auto b = static_cast<uint32_t>(bits);
  if (b == 0 && !lua_isnumber(L, index)) luaL_typerror(L, index, "number");
  return b;
}

int Push(lua_State* L, uint32_t b) {
  lua_pushnumber(L, static_cast<lua_Number>(static_cast<int32_t>(b)));
  return 1;
}

int ToBit(lua_State* L) { return Push(L, Arg(L, 1)); }
int BitNot(lua_State* L) { return Push(L, ~Arg(L, 1)); }
int ByteSwap(lua_State* L) {
  const uint32_t b = Arg(L, 1);
  return Push(L, (b >> 24) | ((b >> 8) & 0xff00) | ((b & 0xff00) << 8) | (b << 24));
}

// band, bor, bxor: every argument folded with `op`.
template <typename Op>
int Fold(lua_State* L, Op op) {
  uint32_t b = Arg(L, 1);
  for (int i = lua_gettop(L); i > 1; --i) b = op(b, Arg(L, i));
  return Push(L, b);
}
int BitAnd(lua_State* L) {
  return Fold(L, [](uint32_t a, uint32_t b) { return a & b; });
}
int BitOr(lua_State* L) {
  return Fold(L, [](uint32_t a, uint32_t b) { return a | b; });
}
int BitXor(lua_State* L) {
  return Fold(L, [](uint32_t a, uint32_t b) { return a ^ b; });
}

// Shifts and rotations take the count modulo 32.
int ShiftLeft(lua_State* L) { return Push(L, Arg(L, 1) << (Arg(L, 2) & 31)); }
int ShiftRight(lua_State* L) { return Push(L, Arg(L, 1) >> (Arg(L, 2) & 31)); }
int ShiftRightArith(lua_State* L) {
  const auto b = static_cast<int32_t>(Arg(L, 1));
  return Push(L, static_cast<uint32_t>(b >> (Arg(L, 2) & 31)));
}
uint32_t RotateLeft(uint32_t b, uint32_t n) {
  n &= 31;
  return n == 0 ? b : (b << n) | (b >> (32 - n));
}
int RotLeft(lua_State* L) { return Push(L, RotateLeft(Arg(L, 1), Arg(L, 2))); }
int RotRight(lua_State* L) { return Push(L, RotateLeft(Arg(L, 1), 32 - (Arg(L, 2) & 31))); }

// bit.tohex(x [, n]): the last |n| hex digits of x (default 8, at most 8), upper case when n
// is negative. INT32_MIN counts as -INT32_MAX, so it means 8 upper-case digits.
int ToHex(lua_State* L) {
  uint32_t b = Arg(L, 1);
  int64_t n = lua_isnone(L, 2) ? 8 : static_cast<int32_t>(Arg(L, 2));
  const char* digits = "0123456789abcdef";
  if (n < 0) {
    n = -n;
    digits = "0123456789ABCDEF";
  }
  if (n > 8) n = 8;
  char text[8];
  for (int64_t i = n - 1; i >= 0; --i) {
    text[i] = digits[b & 15];
    b >>= 4;
  }
  lua_pushlstring(L, text, static_cast<size_t>(n));
  return 1;
}

constexpr luaL_Reg kFunctions[] = {
    {"tobit", ToBit},  {"bnot", BitNot},      {"band", BitAnd},       {"bor", BitOr},
    {"bxor", BitXor},  {"lshift", ShiftLeft}, {"rshift", ShiftRight}, {"arshift", ShiftRightArith},
    {"rol", RotLeft},  {"ror", RotRight},     {"bswap", ByteSwap},    {"tohex", ToHex},
    {nullptr, nullptr}};

}  // namespace

int OpenBitLibrary(lua_State* L) {
  lua_newtable(L);
  luaL_register(L, nullptr, kFunctions);
  return 1;
}

}  // namespace sluice::server
