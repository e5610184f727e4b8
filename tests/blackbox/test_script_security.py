"""Scripts must not crash the server, escape the sandbox or reach other scripts (issue 36).

- AdvisoryTest: one scenario per Lua advisory Sluice's Lua carries a fix for (docs/scripting.md,
  "Lua fixes"), sent to sluice-server and to a real redis-server 7.0.15 side by side; every raw
  reply compared byte for byte in RESP2 and RESP3, then both must still answer PING. On a build
  with Debian's unpatched Lua (and lua-bitop) the tohex and unpack cases kill the server and the
  bytecode and metatable cases answer differently.
- SandboxTest: what one script changes must not be seen by the next one (string metatable,
  library tables reached through pairs, the globals), on Sluice and Redis alike.
- CrashReportTest: DEBUG SEGFAULT and DEBUG PANIC crash the server on purpose; its log holds the
  signal, a stack trace and the command and client that were running, and the process dies of
  that signal. Without enable-debug-command, DEBUG refuses as Redis does.
"""

import signal
import unittest

from harness import IS_REDIS, BlackboxTestCase, Client, Server, encode_command, sluice_only
import test_scripting  # not its classes by name: unittest would run them here too

DUMP = "string.dump(function() return 1 end)"

# Each scenario: commands sent in order on one connection after FLUSHALL and SCRIPT FLUSH.
ADVISORY_CASES = [
    # CVE-2024-31449: bit.tohex with a digit count of INT32_MIN (and the rest of `bit`).
    [["EVAL", "return bit.tohex(65535, -2147483648)", "0"],
     ["EVAL", "return bit.tohex(65535, 2147483647)", "0"],
     ["EVAL", "return {bit.tohex(-1), bit.tohex(255, 2), bit.tohex(255, -3), bit.tohex(1, 0)}",
      "0"],
     ["EVAL", "return {bit.tobit(2^32 + 5), bit.bnot(0), bit.band(0xff, 0x0f, 0x3c), "
              "bit.bor(1, 2, 4), bit.bxor(5, 3)}", "0"],
     ["EVAL", "return {bit.lshift(1, 33), bit.rshift(-1, 28), bit.arshift(-256, 4), "
              "bit.rol(0x80000001, 1), bit.ror(1, 1), bit.bswap(0x12345678)}", "0"],
     ["EVAL", "return {bit.tobit(1.5), bit.tobit(2.5), bit.tobit(-1.5), bit.tobit('7')}", "0"],
     ["EVAL", "return bit.band('x')", "0"], ["EVAL", "return bit.tohex()", "0"]],
    # CVE-2025-46817: unpack's element count overflows.
    [["EVAL", "return {unpack({}, 0, 2147483647)}", "0"],
     ["EVAL", "return {unpack({}, -2147483648, 2147483647)}", "0"],
     ["EVAL", "return {unpack({}, -2, 2147483647)}", "0"],
     ["EVAL", "return {unpack({1, 2, 3}, 2147483646, 2147483647)}", "0"],
     ["EVAL", "return {unpack({1, 2, 3})}", "0"], ["EVAL", "return {unpack({1, 2, 3}, 2)}", "0"]],
    # CVE-2015-4335: precompiled bytecode is never loaded.
    [["EVAL", "return type(loadstring(%s))" % DUMP, "0"],
     ["EVAL", "local f, e = loadstring(%s) return e" % DUMP, "0"],
     ["EVAL", "local s = %s local done = false "
              "local f, e = load(function() if done then return nil end done = true return s end) "
              "return {type(f), e}" % DUMP, "0"],
     ["EVAL", "return loadstring('return 1 + 1')()", "0"]],
    # CVE-2025-46818: the metatables of basic types and the globals are read-only.
    [["EVAL", "getmetatable('').__index = 1", "0"],
     ["EVAL", "local mt = getmetatable('') mt.__add = function() return 1 end", "0"],
     ["EVAL", "rawset(getmetatable(''), 'x', 1)", "0"],
     ["EVAL", "setmetatable(getmetatable(''), {})", "0"],
     ["EVAL", "setmetatable(_G, {})", "0"], ["EVAL", "rawset(_G, 'x', 1)", "0"],
     ["EVAL", "return ('abc'):upper()", "0"],
     ["EVAL", "return tostring(getmetatable(1)) .. tostring(getmetatable(true))", "0"],
     ["EVAL", "local t = setmetatable({}, {__index = function() return 7 end}) return t.x", "0"]],
    # CVE-2025-49844: collections while the parser runs (the chunk name stays anchored).
    [["EVAL", "collectgarbage('setpause', 0) collectgarbage('setstepmul', 100000) "
              "local n = 0 for i = 1, 300 do "
              "local f = loadstring('local a = {' .. string.rep('\"s' .. i .. '\",', 50) .. '} "
              "return #a', string.rep('chunk', 20) .. i) n = n + f() end "
              "collectgarbage('restart') return n", "0"]],
    # CVE-2025-46819: the lexer's error texts around long-string delimiters and strings.
    [["EVAL", "local f, e = loadstring('x = [=a') return e", "0"],
     ["EVAL", "local f, e = loadstring('x = [==[ abc') return e", "0"],
     ["EVAL", "local f, e = loadstring('--[==[ abc') return e", "0"],
     ["EVAL", "local f, e = loadstring('x = \"abc') return e", "0"],
     ["EVAL", "local f, e = loadstring('x = \"a\\\\300\"') return e", "0"],
     ["EVAL", "local f, e = loadstring('x = 3e') return e", "0"],
     ["EVAL", "local f, e = loadstring('x = [[ a [[ b ]]') return e", "0"],
     ["EVAL", "return [[ a [[ b ]]", "0"], ["EVAL", "return [==[ a ]] ]=] b ]==]", "0"],
     ["EVAL", "return x = [=", "0"], ["EVAL", "return [==", "0"]],
    # CVE-2022-24834's class: cjson.encode behind Sluice's size check, same replies otherwise.
    [["EVAL", "return cjson.encode({1, 'a', {b = 2}, 'x\\1'})", "0"],
     ["EVAL", "return cjson.encode()", "0"], ["EVAL", "return cjson.encode(1, 2)", "0"],
     ["EVAL", "return cjson.encode(function() end)", "0"],
     ["EVAL", "local t = {} t[1] = t return cjson.encode(t)", "0"],
     ["EVAL", "local t = {} t[1] = t t[2] = t return cjson.encode(t)", "0"],
     ["EVAL", "return cjson.encode(string.rep('\\0', 1000)):len()", "0"]],
    # CVE-2018-11218: cmsgpack checks the Lua stack before each push.
    [["EVAL", "return cmsgpack.unpack(string.rep(string.char(145), 100000))", "0"],
     ["EVAL", "return cmsgpack.unpack(string.rep(string.char(129), 100000))", "0"],
     ["EVAL", "return #{cmsgpack.unpack(string.rep(string.char(1), 100000))}", "0"]],
    # CVE-2024-46981: SCRIPT FLUSH while scripts hold tables and closures; states rebuilt.
    [["EVAL", "local t = {} for i = 1, 1000 do t[i] = {i, function() return i end} end "
              "return #t", "0"],
     ["SCRIPT", "FLUSH"], ["EVAL", "collectgarbage('collect') return 1", "0"],
     ["SCRIPT", "FLUSH", "ASYNC"], ["EVAL", "return ('x'):rep(3)", "0"],
     ["SCRIPT", "FLUSH", "SYNC"], ["EVAL", "return bit.tohex(1)", "0"]],
]

LIBRARY = "\n".join([
    "#!lua name=lib",
    "redis.register_function('meta', function() getmetatable('').__index = 1 end)",
    "redis.register_function('strings', function() local _, t = pairs(string) t.upper = nil end)",
    "redis.register_function('upper', function() return ('abc'):upper() end)",
    "redis.register_function('tohex', function() return bit.tohex(65535, -2147483648) end)",
    "redis.register_function('bytecode', function() "
    "return type(loadstring(string.dump(function() end))) end)",
])

# What one script tries to change for the next: each pair is (the attempt, the check after).
SANDBOX_CASES = [
    [["EVAL", "pcall(function() getmetatable('').__index = {upper = function() return 'p' end} "
              "end) return 1", "0"], ["EVAL", "return ('abc'):upper()", "0"]],
    [["EVAL", "local _, t = pairs(string) t.upper = function() return 'p' end", "0"],
     ["EVAL", "return string.upper('abc')", "0"]],
    [["EVAL", "local _, t = pairs(string) rawset(t, 'upper', nil)", "0"],
     ["EVAL", "return string.upper('abc')", "0"]],
    [["EVAL", "getmetatable('').__index.upper = nil", "0"],
     ["EVAL", "return ('abc'):upper()", "0"]],
    [["EVAL", "local _, g = pairs(_G) g.leak = 1", "0"], ["EVAL", "return leak", "0"]],
    [["EVAL", "local _, g = pairs(_G) rawset(g, 'leak', 1)", "0"], ["EVAL", "return leak", "0"]],
    [["EVAL", "local _, t = pairs(redis) t.call = nil", "0"],
     ["EVAL", "return redis.call('ping')", "0"]],
    [["EVAL", "local _, t = pairs(math) t.floor = nil", "0"], ["EVAL", "return math.floor(2.5)",
                                                                "0"]],
    [["EVAL", "KEYS[1] = 'changed' return KEYS[1]", "1", "k"], ["EVAL", "return KEYS[1]", "1",
                                                                 "k"]],
    # The same from functions, at load time and when called.
    [["FUNCTION", "LOAD", LIBRARY], ["FCALL", "meta", "0"], ["FCALL", "strings", "0"],
     ["FCALL", "upper", "0"], ["FCALL", "tohex", "0"], ["FCALL", "bytecode", "0"],
     ["FUNCTION", "LOAD", "#!lua name=bad\ngetmetatable('').__index = 1"],
     ["EVAL", "return ('abc'):upper()", "0"]],
]


@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class AdvisoryTest(test_scripting.DifferentialTest):
    cases = ADVISORY_CASES

    def test_server_alive_after_each_case(self):
        for commands in self.cases:
            self.play(self.sluice.port, commands, 2)
            with Client(self.sluice.port) as c:
                self.assertEqual(c.call("PING"), "PONG", commands)


@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class SandboxTest(test_scripting.DifferentialTest):
    cases = SANDBOX_CASES


@sluice_only
class CjsonSizeTest(BlackboxTestCase):
    def test_encoding_that_could_pass_512_mb_is_refused(self):
        server = Server()
        self.addCleanup(server.stop)
        server.start()
        script = ("local s = string.rep('x', 40 * 1024 * 1024) local t = {} "
                  "for i = 1, 20 do t[i] = s end return cjson.encode(t)")
        with Client(server.port) as c:
            reply = c.call("EVAL", script, "0")
            self.assertTrue(reply.startswith(
                "ERR user_script:1: Cannot serialise: output too large script: "),
                            reply)
            self.assertEqual(c.call("EVAL", "return #cjson.encode({string.rep('x', 1000)})",
                                    "0"), 1004)
            # Shared tables count each time they would be written, and the walk stops early.
            reply = c.call("EVAL", "local t = {} for i = 1, 40 do t = {t, t} end "
                           "return cjson.encode(t)", "0")
            self.assertTrue(reply.startswith(
                "ERR user_script:1: Cannot serialise: output too large script: "), reply)


@sluice_only
class SharedTableReplyTest(BlackboxTestCase):
    def test_a_reply_naming_a_table_2_to_the_64_times_ends(self):
        # redis-server 7.0.15 never answers this (nor anything else after it); Sluice caps the
        # elements one reply conversion writes (tests/server/test_scripting_sandbox.cc checks
        # the reply's shape), so the next script is answered, even on the same I/O thread.
        server = Server({"threads": "1"})
        self.addCleanup(server.stop)
        server.start()
        with Client(server.port) as greedy, Client(server.port) as other:
            greedy.send(encode_command(
                "EVAL", "local t = {} for i = 1, 64 do t = {t, t} end return t", "0"))
            self.assertEqual(other.call("EVAL", "return 'next'", "0"), b"next")
            self.assertEqual(other.call("PING"), "PONG")


@sluice_only
class CrashReportTest(BlackboxTestCase):
    def crash(self, sub, sig):
        server = Server()
        self.addCleanup(server.stop)
        server.start()
        with Client(server.port) as c:
            c.call("CLIENT", "SETNAME", "crasher")
            c.send(b"*2\r\n$5\r\nDEBUG\r\n$%d\r\n%s\r\n" % (len(sub), sub.encode()))
            self.assertEqual(server.wait_exit(), -sig)
        log = server.log()
        self.assertIn("=== SLUICE BUG REPORT START", log)
        self.assertIn("crashed by signal: %d (%s)" % (sig, signal.Signals(sig).name), log)
        self.assertIn("------ STACK TRACE ------", log)
        self.assertRegex(log, r"sluice-server\(")  # a frame of the server's own binary
        self.assertIn("------ CURRENT CLIENT INFO ------", log)
        self.assertRegex(log, r"id=\d+ addr=127\.0\.0\.1:\d+ db=0 cmd=DEBUG")
        self.assertIn("argc: '2'\nargv[0]: '\"DEBUG\"'\nargv[1]: '\"%s\"'" % sub, log)
        self.assertIn("=== SLUICE BUG REPORT END", log)
        return log

    def test_debug_segfault_writes_the_report(self):
        self.crash("SEGFAULT", signal.SIGSEGV)

    def test_debug_panic_writes_the_report(self):
        log = self.crash("PANIC", signal.SIGABRT)
        self.assertIn("Guru Meditation: DEBUG PANIC called", log)

    def test_debug_crash_needs_enable_debug_command(self):
        server = Server(debug=False)
        self.addCleanup(server.stop)
        server.start()
        with Client(server.port) as c:
            reply = c.call("DEBUG", "SEGFAULT")
            self.assertTrue(reply.startswith("ERR DEBUG command not allowed"), reply)
            self.assertEqual(c.call("PING"), "PONG")


if __name__ == "__main__":
    unittest.main()
