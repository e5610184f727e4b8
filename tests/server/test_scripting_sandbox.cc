// Issue 36: the Lua advisories Sluice's patched Lua answers, and the sandbox between scripts,
// through the real dispatcher. Expected replies are redis-server 7.0.15's
// (tests/blackbox/test_script_security.py compares the two servers side by side).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "server/scripting/lua_sha1.h"
#include "tests/server/harness.h"

namespace sluice::server::testing {

namespace {

std::string Eval(Harness& h, const std::string& script) { return h.Run({"EVAL", script, "0"}); }

// Redis's reply for an error raised at `where` ("user_script:1: " or "" for C functions).
std::string ScriptErr(const std::string& script, const std::string& where,
                      const std::string& message) {
  return "-ERR " + where + message + " script: " + Sha1Hex(script) + ", on @user_script:1.\r\n";
}

const std::string kReadonly = "Attempt to modify a readonly table";

// Counts of one RESP2 reply's elements, walked from `pos`; false when the reply is malformed.
struct Shape {
  size_t elements = 0;
  size_t errors = 0;
  size_t max_depth = 0;
};

bool Walk(const std::string& r, size_t& pos, Shape& shape, size_t depth) {
  const size_t end = r.find("\r\n", pos);
  if (end == std::string::npos || end == pos) return false;
  const char type = r[pos];
  const std::string line = r.substr(pos + 1, end - pos - 1);
  pos = end + 2;
  ++shape.elements;
  shape.max_depth = std::max(shape.max_depth, depth);
  if (type == '-' || type == '+') {
    shape.errors += type == '-';
    return true;
  }
  const long long n = std::stoll(line);
  if (type == '$' && n >= 0) pos += static_cast<size_t>(n) + 2;
  if (type != '*') return pos <= r.size();
  for (long long i = 0; i < n; ++i) {
    if (!Walk(r, pos, shape, depth + 1)) return false;
  }
  return true;
}

Shape ShapeOf(const std::string& reply) {
  Shape shape;
  size_t pos = 0;
  REQUIRE(Walk(reply, pos, shape, 0));
  REQUIRE(pos == reply.size());
  return shape;
}

}  // namespace

TEST_CASE("bit.tohex with a count of INT32_MIN answers 8 upper-case digits (CVE-2024-31449)") {
  Harness h;
  CHECK(Eval(h, "return bit.tohex(65535, -2147483648)") == Bulk("0000FFFF"));
  CHECK(Eval(h, "return bit.tohex(65535, 2147483647)") == Bulk("0000ffff"));
  CHECK(Eval(h, "return bit.tohex(255, -3)") == Bulk("0FF"));
  CHECK(Eval(h, "return bit.tohex(1, 0)") == Bulk(""));
  CHECK(Eval(h, "return bit.tobit(2^32 + 5)") == Int(5));
  CHECK(Eval(h, "return bit.arshift(-256, 4)") == Int(-16));
  CHECK(Eval(h, "return bit.rol(0x80000001, 1)") == Int(3));
  CHECK(Eval(h, "return bit.bswap(0x12345678)") == Int(0x78563412));
  const std::string bad = "return bit.band('x')";
  CHECK(Eval(h, bad) == ScriptErr(bad, "user_script:1: ",
                                  "bad argument #1 to 'band' (number expected, got string)"));
}

TEST_CASE("unpack refuses counts that overflow (CVE-2025-46817)") {
  Harness h;
  for (const std::string script :
       {"return {unpack({}, 0, 2147483647)}", "return {unpack({}, -2147483648, 2147483647)}"}) {
    CHECK(Eval(h, script) == ScriptErr(script, "user_script:1: ", "too many results to unpack"));
  }
  CHECK(Eval(h, "return {unpack({1, 2, 3}, 2)}") == Arr({Int(2), Int(3)}));
  CHECK(Eval(h, "return select('#', unpack({}, 2147483646, 2147483647))") == Int(2));
}

TEST_CASE("precompiled bytecode is never loaded (CVE-2015-4335)") {
  Harness h;
  CHECK(Eval(h, "return type(loadstring(string.dump(function() return 1 end)))") == Bulk("nil"));
  CHECK(Eval(h, "return loadstring('return 6 * 7')()") == Int(42));
}

TEST_CASE("the string metatable and the globals are read-only (CVE-2025-46818)") {
  Harness h;
  for (const std::string script :
       {"getmetatable('').__index = 1", "local mt = getmetatable('') mt.__add = 1",
        "getmetatable('').__index.upper = nil", "local _, t = pairs(string) t.upper = nil",
        "local _, g = pairs(_G) g.leak = 1"}) {
    CHECK(Eval(h, script) == ScriptErr(script, "user_script:1: ", kReadonly));
  }
  for (const std::string script : {"rawset(getmetatable(''), 'x', 1)", "setmetatable(_G, {})",
                                   "local _, g = pairs(_G) rawset(g, 'leak', 1)"}) {
    CHECK(Eval(h, script) == ScriptErr(script, "", kReadonly));
  }
  // Nothing of the attempts above reached a later script.
  CHECK(Eval(h, "return ('abc'):upper()") == Bulk("ABC"));
  CHECK(Eval(h, "return string.upper('abc')") == Bulk("ABC"));
  const std::string leak = "return leak";
  CHECK(Eval(h, leak) ==
        ScriptErr(leak, "user_script:1: ",
                  "Script attempted to access nonexistent global variable 'leak'"));
  // Tables a script makes stay its own to change.
  CHECK(Eval(h, "local t = setmetatable({}, {__index = function() return 7 end}) return t.x") ==
        Int(7));
  CHECK(Eval(h, "KEYS[1] = 'x' return KEYS[1]") == Bulk("x"));
}

TEST_CASE("SCRIPT FLUSH rebuilds the states: the protections hold in the new one") {
  Harness h;
  CHECK(Eval(h, "local t = {} for i = 1, 1000 do t[i] = function() return i end end return #t") ==
        Int(1000));
  for (int round = 0; round < 3; ++round) {
    CHECK(h.Run({"SCRIPT", "FLUSH"}) == Ok());
    const std::string script = "getmetatable('').__index = 1";
    CHECK(Eval(h, script) == ScriptErr(script, "user_script:1: ", kReadonly));
    CHECK(Eval(h, "return bit.tohex(65535, -2147483648)") == Bulk("0000FFFF"));
  }
}

// redis-server 7.0.15 hangs whole on these: the reply names 2^depth elements. Sluice caps the
// elements one conversion writes and puts Redis's stack-limit error in place of the rest.
TEST_CASE("a reply that holds one table many times ends, well formed, in bounded work") {
  Harness h;
  for (const std::string script : {"local t = {} t[1] = t t[2] = t return t",
                                   "local t = {} for i = 1, 64 do t = {t, t} end return t",
                                   "local t = {} t.map = {a = t, b = t} return t"}) {
    CAPTURE(script);
    const Shape shape = ShapeOf(Eval(h, script));
    CHECK(shape.errors > 0);
    CHECK(shape.elements > (size_t{1} << 20));
    CHECK(shape.elements < (size_t{8} << 20));
  }
  // A table holding itself once nests down to the stack's limit, as on Redis.
  const Shape chain = ShapeOf(Eval(h, "local t = {} t[1] = t return t"));
  CHECK(chain.errors == 1);
  CHECK(chain.elements == chain.max_depth + 1);
  CHECK(chain.max_depth > 1000);
  CHECK(Eval(h, "return 1") == Int(1));
}

TEST_CASE("replies of distinct values are never cut, past a million elements") {
  Harness h;
  const Shape flat = ShapeOf(Eval(h, "local r = {} for i = 1, 1500000 do r[i] = i end return r"));
  CHECK(flat.elements == 1500001);
  CHECK(flat.errors == 0);
  // One shared table below the million: also whole.
  const Shape shared = ShapeOf(
      Eval(h, "local row = {1, 2} local r = {} for i = 1, 300000 do r[i] = row end return r"));
  CHECK(shared.elements == 900001);
  CHECK(shared.errors == 0);
}

}  // namespace sluice::server::testing
