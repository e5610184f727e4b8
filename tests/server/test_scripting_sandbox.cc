// Issue 36: the Lua advisories Sluice's patched Lua answers, and the sandbox between scripts,
// through the real dispatcher. Expected replies are redis-server 7.0.15's
// (tests/blackbox/test_script_security.py compares the two servers side by side).
#include <doctest/doctest.h>

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

}  // namespace sluice::server::testing
