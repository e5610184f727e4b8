// The `struct` library (see lua_libs.h for the formats).
#include <cctype>
#include <cstdint>
#include <cstring>
#include <lua5.1/lua.hpp>
#include <string>

#include "server/scripting/lua_libs.h"

namespace sluice::server {

namespace {

constexpr int kMaxIntSize = 8;

struct FormatState {
  bool little = true;  // x86-64 native order
  size_t align = 1;
};

bool IsPowerOfTwo(size_t n) { return n != 0 && (n & (n - 1)) == 0; }

size_t ReadNumber(const char** fmt, size_t fallback) {
  if (!std::isdigit(static_cast<unsigned char>(**fmt))) return fallback;
  size_t n = 0;
  while (std::isdigit(static_cast<unsigned char>(**fmt)) && n < 1000000) {
    n = n * 10 + static_cast<size_t>(*(*fmt)++ - '0');
  }
  return n;
}

// The size of option `opt` (reading its digits); 0 for options without a fixed size.
size_t OptionSize(lua_State* L, char opt, const char** fmt) {
  switch (opt) {
    case 'B':
    case 'b':
    case 'x':
      return 1;
    case 'H':
    case 'h':
      return 2;
    case 'L':
    case 'l':
    case 'T':
      return 8;
    case 'f':
      return sizeof(float);
    case 'd':
      return sizeof(double);
    case 'c':
      return ReadNumber(fmt, 1);
    case 'i':
    case 'I': {
      const size_t n = ReadNumber(fmt, 4);
      if (n == 0 || n > kMaxIntSize)
        luaL_error(L, "integral size %d is larger than limit of %d", static_cast<int>(n),
                   kMaxIntSize);
      return n;
    }
    default:
      return 0;
  }
}

// Padding before an item of `size` bytes at offset `len`.
size_t Padding(size_t len, const FormatState& st, char opt, size_t size) {
  if (size == 0 || opt == 'c') return 0;
  const size_t a = size > st.align ? st.align : size;
  return (a - (len & (a - 1))) & (a - 1);
}

// Handles the endianness and alignment options; true when `opt` was one.
bool Control(lua_State* L, char opt, const char** fmt, FormatState* st) {
  switch (opt) {
    case ' ':
      return true;
    case '>':
      st->little = false;
      return true;
    case '<':
    case '=':
      st->little = true;
      return true;
    case '!': {
      const size_t a = ReadNumber(fmt, 8);
      if (!IsPowerOfTwo(a)) luaL_error(L, "alignment %d is not a power of 2", static_cast<int>(a));
      st->align = a;
      return true;
    }
    default:
      return false;
  }
}

void PutInteger(std::string* out, uint64_t v, size_t size, bool little) {
  for (size_t i = 0; i < size; ++i) {
    const size_t shift = 8 * (little ? i : size - 1 - i);
    out->push_back(static_cast<char>((v >> shift) & 0xFF));
  }
}

uint64_t GetInteger(const unsigned char* p, size_t size, bool little, bool is_signed) {
  uint64_t v = 0;
  for (size_t i = 0; i < size; ++i) v = (v << 8) | p[little ? size - 1 - i : i];
  if (is_signed && size < 8 && (v >> (8 * size - 1)) & 1) v |= ~uint64_t{0} << (8 * size);
  return v;
}

int Pack(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  FormatState st;
  std::string out;
  int arg = 2;
  while (*fmt != '\0') {
    const char opt = *fmt++;
    if (Control(L, opt, &fmt, &st)) continue;
    size_t size = OptionSize(L, opt, &fmt);
    out.append(Padding(out.size(), st, opt, size), '\0');
    switch (opt) {
      case 'b':
      case 'B':
      case 'h':
      case 'H':
      case 'l':
      case 'L':
      case 'T':
      case 'i':
      case 'I': {
        const lua_Number n = luaL_checknumber(L, arg++);
        const uint64_t v =
            n < 0 ? static_cast<uint64_t>(static_cast<int64_t>(n)) : static_cast<uint64_t>(n);
        PutInteger(&out, v, size, st.little);
        break;
      }
      case 'x':
        out.push_back('\0');
        break;
      case 'f': {
        const float f = static_cast<float>(luaL_checknumber(L, arg++));
        uint32_t bits;
        std::memcpy(&bits, &f, sizeof bits);
        PutInteger(&out, bits, 4, st.little);
        break;
      }
      case 'd': {
        const double d = luaL_checknumber(L, arg++);
        uint64_t bits;
        std::memcpy(&bits, &d, sizeof bits);
        PutInteger(&out, bits, 8, st.little);
        break;
      }
      case 'c':
      case 's': {
        size_t len = 0;
        const char* s = luaL_checklstring(L, arg++, &len);
        if (opt == 'c' && size == 0) size = len;
        if (opt == 's') size = len + 1;
        luaL_argcheck(L, len >= size || opt == 's', arg - 1, "string too short");
        out.append(s, opt == 's' ? len : size);
        if (opt == 's') out.push_back('\0');
        break;
      }
      default:
        return luaL_error(L, "invalid format option '%c'", opt);
    }
  }
  lua_pushlstring(L, out.data(), out.size());
  return 1;
}

int Unpack(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  size_t len = 0;
  const auto* data = reinterpret_cast<const unsigned char*>(luaL_checklstring(L, 2, &len));
  size_t pos = static_cast<size_t>(luaL_optinteger(L, 3, 1));
  luaL_argcheck(L, pos > 0, 3, "offset must be 1 or greater");
  --pos;
  FormatState st;
  int results = 0;
  while (*fmt != '\0') {
    const char opt = *fmt++;
    if (Control(L, opt, &fmt, &st)) continue;
    size_t size = OptionSize(L, opt, &fmt);
    pos += Padding(pos, st, opt, size);
    luaL_argcheck(L, pos <= len && size <= len - pos, 2, "data string too short");
    luaL_checkstack(L, 2, "too many results");
    switch (opt) {
      case 'b':
      case 'B':
      case 'h':
      case 'H':
      case 'l':
      case 'L':
      case 'T':
      case 'i':
      case 'I': {
        const bool is_signed = std::islower(static_cast<unsigned char>(opt)) != 0;
        const uint64_t v = GetInteger(data + pos, size, st.little, is_signed);
        lua_pushnumber(L, is_signed ? static_cast<lua_Number>(static_cast<int64_t>(v))
                                    : static_cast<lua_Number>(v));
        ++results;
        break;
      }
      case 'x':
        break;
      case 'f': {
        const auto bits = static_cast<uint32_t>(GetInteger(data + pos, 4, st.little, false));
        float f;
        std::memcpy(&f, &bits, sizeof f);
        lua_pushnumber(L, f);
        ++results;
        break;
      }
      case 'd': {
        const uint64_t bits = GetInteger(data + pos, 8, st.little, false);
        double d;
        std::memcpy(&d, &bits, sizeof d);
        lua_pushnumber(L, d);
        ++results;
        break;
      }
      case 'c': {
        if (size == 0) {
          luaL_argcheck(L, results > 0 && lua_isnumber(L, -1), 1,
                        "format 'c0' needs a previous size");
          size = static_cast<size_t>(lua_tonumber(L, -1));
          lua_pop(L, 1);
          --results;
          luaL_argcheck(L, size <= len - pos, 2, "data string too short");
        }
        lua_pushlstring(L, reinterpret_cast<const char*>(data + pos), size);
        ++results;
        break;
      }
      case 's': {
        const void* end = std::memchr(data + pos, '\0', len - pos);
        luaL_argcheck(L, end != nullptr, 2, "unfinished string in data");
        size = static_cast<size_t>(static_cast<const unsigned char*>(end) - (data + pos)) + 1;
        lua_pushlstring(L, reinterpret_cast<const char*>(data + pos), size - 1);
        ++results;
        break;
      }
      default:
        return luaL_error(L, "invalid format option '%c'", opt);
    }
    pos += size;
  }
  lua_pushinteger(L, static_cast<lua_Integer>(pos + 1));
  return results + 1;
}

int Size(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  FormatState st;
  size_t pos = 0;
  while (*fmt != '\0') {
    const char opt = *fmt++;
    if (Control(L, opt, &fmt, &st)) continue;
    const size_t size = OptionSize(L, opt, &fmt);
    if (opt == 's' || (opt == 'c' && size == 0)) {
      return luaL_argerror(L, 1, "options 'c0' - 's' have undefined sizes");
    }
    if (size == 0 && opt != 'c') return luaL_error(L, "invalid format option '%c'", opt);
    pos += Padding(pos, st, opt, size) + size;
  }
  lua_pushinteger(L, static_cast<lua_Integer>(pos));
  return 1;
}

}  // namespace

int OpenStructLibrary(lua_State* L) {
  static const luaL_Reg kFunctions[] = {
      {"pack", Pack}, {"unpack", Unpack}, {"size", Size}, {nullptr, nullptr}};
  lua_newtable(L);
  luaL_register(L, nullptr, kFunctions);
  return 1;
}

}  // namespace sluice::server
