#include "server/scripting/lua_convert.h"

#include <cstdint>
#include <cstdlib>
#include <lua5.1/lua.hpp>
#include <string>

#include "server/core/errors.h"

namespace sluice::server {

namespace {

// A cursor over one well-formed reply written by our ReplyWriter.
struct Cursor {
  std::string_view s;
  size_t pos = 0;

  std::string_view Line() {
    const size_t end = s.find("\r\n", pos);
    std::string_view line = s.substr(pos, end - pos);
    pos = end + 2;
    return line;
  }
  std::string_view Bytes(size_t n) {
    std::string_view b = s.substr(pos, n);
    pos += n + 2;
    return b;
  }
};

int64_t ToInt(std::string_view s) { return std::strtoll(std::string(s).c_str(), nullptr, 10); }

void PushString(lua_State* L, std::string_view s) { lua_pushlstring(L, s.data(), s.size()); }

// {field = <value on top of the stack>}
void WrapInTable(lua_State* L, const char* field) {
  lua_newtable(L);
  lua_insert(L, -2);
  lua_setfield(L, -2, field);
}

void Push(lua_State* L, Cursor& c);

void PushAggregate(lua_State* L, Cursor& c, char type, int64_t n) {
  lua_checkstack(L, 4);
  if (type == '*') {
    lua_createtable(L, static_cast<int>(n), 0);
    for (int64_t i = 1; i <= n; ++i) {
      Push(L, c);
      lua_rawseti(L, -2, static_cast<int>(i));
    }
    return;
  }
  lua_newtable(L);
  for (int64_t i = 0; i < n; ++i) {
    Push(L, c);  // the key, or the set's member
    if (type == '%') {
      Push(L, c);
    } else {
      lua_pushboolean(L, 1);
    }
    if (lua_isnil(L, -2)) {
      lua_pop(L, 2);
    } else {
      lua_rawset(L, -3);
    }
  }
  WrapInTable(L, type == '%' ? "map" : "set");
}

void Push(lua_State* L, Cursor& c) {
  const char type = c.s[c.pos++];
  std::string_view line = c.Line();
  switch (type) {
    case '+':
      PushString(L, line);
      return WrapInTable(L, "ok");
    case '-':
      PushString(L, line);
      return WrapInTable(L, "err");
    case ':':
      return lua_pushnumber(L, static_cast<lua_Number>(ToInt(line)));
    case '$': {
      const int64_t n = ToInt(line);
      if (n < 0) return lua_pushboolean(L, 0);
      return PushString(L, c.Bytes(static_cast<size_t>(n)));
    }
    case '*':
    case '%':
    case '~': {
      const int64_t n = ToInt(line);
      if (n < 0) return lua_pushboolean(L, 0);
      return PushAggregate(L, c, type, n);
    }
    case '_':
      return lua_pushnil(L);
    case '#':
      return lua_pushboolean(L, line == "t");
    case ',':
      lua_pushnumber(L, std::strtod(std::string(line).c_str(), nullptr));
      return WrapInTable(L, "double");
    case '(':
      PushString(L, line);
      return WrapInTable(L, "big_number");
    case '=': {
      std::string_view body = c.Bytes(static_cast<size_t>(ToInt(line)));
      lua_newtable(L);
      PushString(L, body.substr(0, 3));
      lua_setfield(L, -2, "format");
      PushString(L, body.size() > 4 ? body.substr(4) : std::string_view{});
      lua_setfield(L, -2, "string");
      return WrapInTable(L, "verbatim_string");
    }
    case '|': {  // attributes: skipped, the reply follows them
      const int64_t n = ToInt(line);
      for (int64_t i = 0; i < 2 * n; ++i) {
        Push(L, c);
        lua_pop(L, 1);
      }
      return Push(L, c);
    }
    default:
      return lua_pushnil(L);
  }
}

// The string field `name` of the table at `index`, or nullptr; the stack is unchanged.
bool StringField(lua_State* L, int index, const char* name, std::string* out) {
  lua_pushstring(L, name);
  lua_rawget(L, index);
  const bool found = lua_type(L, -1) == LUA_TSTRING;
  if (found) {
    size_t len = 0;
    const char* s = lua_tolstring(L, -1, &len);
    out->assign(s, len);
  }
  lua_pop(L, 1);
  return found;
}

// One conversion of a script's return value. A table may hold itself, or one table many
// times: `local t = {} t[1] = t t[2] = t` names 2^depth elements down to the stack limit, and
// walking them all would hold the I/O thread and grow the reply without end (redis-server
// hangs whole on it). `nodes_left` caps the elements written: a reply built of distinct
// tables holds at most one element per 16 bytes of the Lua heap (a table slot), so the cap
// (twice that, and a million more) never cuts one; past it each element is Redis's
// stack-limit error in its place, which keeps the reply well formed and ends the walk.
struct Conversion {
  int resp;  // the RESP version the script speaks (redis.setresp): how booleans are written
  int64_t nodes_left;
};

void Write(lua_State* L, int index, protocol::ReplyWriter& out, Conversion& c);

// Pushes t[name] and returns its type.
int Field(lua_State* L, int index, const char* name) {
  lua_pushstring(L, name);
  lua_rawget(L, index);
  return lua_type(L, -1);
}

void WriteMap(lua_State* L, int map, protocol::ReplyWriter& out, Conversion& c, bool is_set) {
  size_t n = 0;
  lua_pushnil(L);
  while (lua_next(L, map) != 0) {
    ++n;
    lua_pop(L, 1);
  }
  if (is_set) {
    out.Set(n);
  } else {
    out.Map(n);
  }
  lua_pushnil(L);
  while (lua_next(L, map) != 0) {
    const int value = lua_gettop(L);
    Write(L, value - 1, out, c);
    if (!is_set) Write(L, value, out, c);
    lua_pop(L, 1);
  }
}

void WriteTable(lua_State* L, int t, protocol::ReplyWriter& out, Conversion& c) {
  std::string text;
  if (StringField(L, t, "err", &text)) return out.Error(text);
  if (StringField(L, t, "ok", &text)) return out.Simple(text);
  if (Field(L, t, "double") == LUA_TNUMBER) {
    const double d = lua_tonumber(L, -1);
    lua_pop(L, 1);
    return out.Double(d);
  }
  lua_pop(L, 1);
  if (StringField(L, t, "big_number", &text)) {
    if (out.resp() == 2) return out.Bulk(text);
    return out.Raw("(" + text + "\r\n");
  }
  for (const char* kind : {"map", "set"}) {
    if (Field(L, t, kind) == LUA_TTABLE) {
      WriteMap(L, lua_gettop(L), out, c, kind[0] == 's');
      lua_pop(L, 1);
      return;
    }
    lua_pop(L, 1);
  }
  if (Field(L, t, "verbatim_string") == LUA_TTABLE) {
    const int v = lua_gettop(L);
    std::string format, body;
    if (StringField(L, v, "format", &format) && StringField(L, v, "string", &body)) {
      lua_pop(L, 1);
      return out.Verbatim(format, body);
    }
  }
  lua_pop(L, 1);
  size_t n = 0;
  while (true) {
    lua_rawgeti(L, t, static_cast<int>(n + 1));
    const bool nil = lua_isnil(L, -1);
    lua_pop(L, 1);
    if (nil) break;
    ++n;
  }
  out.Array(n);
  for (size_t i = 1; i <= n; ++i) {
    lua_rawgeti(L, t, static_cast<int>(i));
    Write(L, lua_gettop(L), out, c);
    lua_pop(L, 1);
  }
}

// C's (long long) cast as x86-64 does it: out-of-range values and NaN become INT64_MIN.
int64_t Truncate(double d) {
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return INT64_MIN;
  return static_cast<int64_t>(d);
}

void Write(lua_State* L, int index, protocol::ReplyWriter& out, Conversion& c) {
  // Nesting ends where the Lua stack does (a table that contains itself) or the element cap
  // does (a table held many times), with Redis's error.
  if (--c.nodes_left < 0 || !lua_checkstack(L, 4)) {
    return server::ReplyError(out, ScriptStackLimit());
  }
  switch (lua_type(L, index)) {
    case LUA_TSTRING: {
      size_t len = 0;
      const char* s = lua_tolstring(L, index, &len);
      return out.Bulk(std::string_view(s, len));
    }
    case LUA_TBOOLEAN:
      if (c.resp == 3) return out.Boolean(lua_toboolean(L, index) != 0);
      return lua_toboolean(L, index) ? out.Integer(1) : out.NullBulk();
    case LUA_TNUMBER:
      return out.Integer(Truncate(lua_tonumber(L, index)));
    case LUA_TTABLE:
      return WriteTable(L, index, out, c);
    default:
      return out.NullBulk();
  }
}

}  // namespace

void PushReply(lua_State* L, std::string_view reply) {
  if (reply.empty()) return lua_pushnil(L);
  Cursor c{reply};
  Push(L, c);
}

void WriteLuaValue(lua_State* L, int index, int script_resp, protocol::ReplyWriter& out) {
  if (index < 0) index = lua_gettop(L) + index + 1;
  const int64_t heap_bytes = int64_t{lua_gc(L, LUA_GCCOUNT, 0)} * 1024 + lua_gc(L, LUA_GCCOUNTB, 0);
  Conversion c{script_resp, (int64_t{1} << 20) + heap_bytes / 8};
  Write(L, index, out, c);
}

void PushErrorTable(lua_State* L, std::string_view text) {
  lua_newtable(L);
  lua_pushlstring(L, text.data(), text.size());
  lua_setfield(L, -2, "err");
}

}  // namespace sluice::server
