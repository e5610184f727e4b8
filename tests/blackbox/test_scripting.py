"""Scripting (issue 7), black box: EVAL, EVALSHA, EVAL_RO, SCRIPT and the Lua `redis` API.

- DifferentialTest: the same scripts go over raw RESP sockets to sluice-server and to a real
  redis-server 7.0.15 started here; every reply is compared byte for byte, in RESP2 and RESP3:
  the Lua<->RESP conversion rules, redis.call/pcall errors, error positions, the sandbox,
  shebang flags, numkeys errors, NOSCRIPT, SCRIPT LOAD/EXISTS/FLUSH, cjson/bit/struct/cmsgpack.
- AtomicityTest: scripts that touch an undeclared key, from several threads at once, against
  readers that must never see a script half done; counters end exact.
- FunctionPersistenceTest: libraries survive a restart and a kill -9; DUMP/RESTORE round trip.
- BusyTest: a script past busy-reply-threshold: other clients get -BUSY, SCRIPT KILL stops it
  (NOTBUSY before, UNKILLABLE once it wrote), CONFIG GET/SET of the threshold; clients that
  connect while it runs get -BUSY and can kill it, and so do the clients the script's own I/O
  thread served before it (one I/O thread); SIGTERM stops a busy script that has not
  written (both with the script on the I/O thread that used to accept and take signals);
  SHUTDOWN while busy is -BUSY, SHUTDOWN NOSAVE exits without a script that wrote (not applied).
"""

import signal
import sys
import threading
import time
import unittest

from harness import IS_REDIS, BlackboxTestCase, Client, RespError, Server, encode_command
from test_transactions import BesideReference, read_raw_reply

# Replies nested 8000 deep (a table that contains itself) are read recursively.
sys.setrecursionlimit(max(sys.getrecursionlimit(), 40000))

# Each case: a list of commands sent in order on one connection after FLUSHALL, SCRIPT FLUSH and
# FUNCTION FLUSH.
CASES = [
    # Conversions Lua -> RESP
    [["EVAL", "return 3.99", "0"], ["EVAL", "return -3.99", "0"], ["EVAL", "return 'x'", "0"]],
    [["EVAL", "return nil", "0"], ["EVAL", "return true", "0"], ["EVAL", "return false", "0"]],
    [["EVAL", "return {1,2,3.7,'x',nil,5}", "0"], ["EVAL", "return {true,false}", "0"]],
    [["EVAL", "redis.setresp(3) return {true,false}", "0"]],
    [["EVAL", "return {1,{2,{3}},{err='x'},{ok='y'}}", "0"]],
    [["EVAL", "return {double=1.5}", "0"], ["EVAL", "return {double=0.1}", "0"]],
    [["EVAL", "return {map={a=1}}", "0"], ["EVAL", "return {set={a=true}}", "0"]],
    [["EVAL", "return {big_number='123'}", "0"],
     ["EVAL", "return {verbatim_string={format='txt',string='hi'}}", "0"]],
    [["EVAL", "return {1e30, -1e30}", "0"], ["EVAL", "return {KEYS[1],ARGV[1],#KEYS,#ARGV}", "1",
                                             "k", "a"]],
    [["EVAL", "local t = {} t[1] = t return t", "0"],
     ["EVAL", "local t = {} t.map = t return t", "0"]],  # nesting ends at the Lua stack's limit
    [["EVAL", "return {1, 2, nil}", "0"], ["EVAL", "return {a=1, 2, 3}", "0"],
     ["EVAL", "return 0/0", "0"], ["EVAL", "return 1/0", "0"], ["EVAL", "return 2^63", "0"],
     ["EVAL", "return {err=5}", "0"], ["EVAL", "return {double=1/0}", "0"],
     ["EVAL", "return {map={[1]='a', [2]='b'}}", "0"],
     ["EVAL", "return redis.call('set', 'k', 1.5)", "0"], ["GET", "k"],
     ["EVAL", "return redis.call('set', 'k', true)", "0"]],
    # Conversions RESP -> Lua
    [["EVAL", "return type(redis.call('get','missing'))", "0"],
     ["EVAL", "redis.setresp(3) return type(redis.call('get','missing'))", "0"],
     ["EVAL", "redis.setresp(3) return redis.call('get','missing')", "0"]],
    [["EVAL", "return redis.call('ping')", "0"], ["EVAL", "return redis.call('ping')['ok']", "0"]],
    [["EVAL", "redis.call('set','n',0.1) return redis.call('get','n')", "0"],
     ["EVAL", "redis.call('set','n',1e20) return redis.call('get','n')", "0"],
     ["EVAL", "return redis.call('incrbyfloat','fl','0.1')", "0"]],
    [["EVAL", "return redis.call('set',KEYS[1],ARGV[1])", "1", "k", "v"], ["GET", "k"],
     ["EVAL", "return redis.call('del', KEYS[1], 'other')", "1", "k"]],
    [["SET", "s", "abc"], ["EVAL", "return redis.pcall('incr','s')", "0"],
     ["EVAL", "return {pcall(redis.call,'incr','s')}", "0"],
     ["EVAL", "local t = redis.pcall('nosuch') return t.err", "0"]],
    # Errors
    [["EVAL", "return x", "0"], ["EVAL", "x = 1", "0"], ["EVAL", "string.x = 1", "0"],
     ["EVAL", "redis.x = 1", "0"], ["EVAL", "setmetatable(_G, nil)", "0"]],
    [["SET", "s", "abc"], ["EVAL", "return redis.call('incr','s')", "0"],
     ["EVAL", "\n\nreturn redis.call('incr','s')", "0"]],
    [["EVAL", "return redis.call('nosuch','s')", "0"], ["EVAL", "return redis.call('get')", "0"],
     ["EVAL", "return redis.call()", "0"], ["EVAL", "return redis.call('multi')", "0"],
     ["EVAL", "return redis.call({})", "0"], ["EVAL", "return redis.call('eval','return 1','0')",
                                              "0"]],
    [["EVAL", "return error('boom')", "0"], ["EVAL", "return error({err='boom'})", "0"],
     ["EVAL", "local function f() error('deep') end\nf()", "0"]],
    [["EVAL", "return redis.error_reply('My Error')", "0"],
     ["EVAL", "return redis.error_reply('oops')", "0"],
     ["EVAL", "return redis.error_reply('-oops')", "0"], ["EVAL", "return {err='x y'}", "0"],
     ["EVAL", "return redis.status_reply('fine')", "0"], ["EVAL", "return {ok='fine'}", "0"]],
    [["EVAL", "return 'a' .. ", "0"], ["EVAL", "return end", "0"]],
    [["EVAL", "return redis.sha1hex('')", "0"], ["EVAL", "return redis.sha1hex()", "0"],
     ["EVAL", "return redis.setresp(4)", "0"], ["EVAL", "return redis.setresp()", "0"],
     ["EVAL", "return redis.log(99,'hi')", "0"], ["EVAL", "return redis.log(1)", "0"],
     ["EVAL", "return redis.log(redis.LOG_WARNING,'hi')", "0"]],
    [["EVAL", "return redis.set_repl(redis.REPL_ALL)", "0"],
     ["EVAL", "return redis.replicate_commands()", "0"], ["EVAL", "return redis.breakpoint()", "0"],
     ["EVAL", "return redis.debug('x')", "0"], ["EVAL", "return redis.REDIS_VERSION", "0"]],
    # Command errors
    [["EVAL", "return 1", "-1"], ["EVAL", "return 1", "2", "a"], ["EVAL", "return 1", "x"],
     ["EVAL"], ["EVAL", "return 1"], ["EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", "0"],
     ["EVALSHA", "fff", "0"], ["EVALSHA", "fff", "5", "a"], ["EVALSHA", "fff", "x"],
     ["EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", "5", "a"],
     ["EVALSHA_RO", "fff", "-1"]],
    [["EVAL", "#!lua name=x\nreturn 1", "0"], ["EVAL", "#!lua flags=bogus\nreturn 1", "0"],
     ["EVAL", "#!lua\nreturn 1", "0"], ["EVAL", "#!lu\nreturn 1", "0"],
     ["EVAL", "#!lua foo=bar\nreturn 1", "0"],
     ["EVAL", "#!lua flags=no-writes\nreturn redis.call('set','a','b')", "0"],
     ["EVAL", "#!lua flags=no-writes,allow-oom\nreturn redis.call('get','a')", "0"]],
    [["EVAL_RO", "return redis.call('set','a','b')", "0"], ["EVAL_RO", "#!lua\nreturn 1", "0"],
     ["SET", "a", "1"], ["EVAL_RO", "return redis.call('get', KEYS[1])", "1", "a"]],
    # The script cache
    [["SCRIPT", "LOAD", "return 1"], ["EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"],
     ["EVALSHA", "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB", "0"],
     ["SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "nope"],
     ["SCRIPT", "FLUSH", "foo"], ["SCRIPT", "FLUSH", "SYNC"],
     ["EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"], ["EVAL", "return 1", "0"],
     ["EVALSHA_RO", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"]],
    [["SCRIPT", "LOAD", "return +"], ["SCRIPT", "KILL"], ["SCRIPT", "EXISTS"], ["SCRIPT"],
     ["SCRIPT", "NOPE"]],
    # The sandbox and the libraries
    [["EVAL", "return os", "0"], ["EVAL", "return print", "0"], ["EVAL", "return getfenv", "0"],
     ["EVAL", "return type(loadstring)", "0"], ["EVAL", "return _G.redis ~= nil", "0"]],
    # Every global and every library's fields, by name and type: a stray global such as
    # _G[""] = _G shows here (and in the size of _G packed 16 levels deep).
    [["EVAL", "local r = {} for k, v in pairs(_G) do "
      "local line = string.format('%q', tostring(k)) .. ':' .. type(v) "
      "if type(v) == 'table' and v ~= _G then local f = {} "
      "for k2, v2 in pairs(v) do f[#f + 1] = tostring(k2) .. ':' .. type(v2) end "
      "table.sort(f) line = line .. '{' .. table.concat(f, ',') .. '}' end "
      "r[#r + 1] = line end table.sort(r) return r", "0"],
     ["EVAL", "return #cmsgpack.pack(_G)", "0"],
     ["EVAL", "return {cmsgpack._NAME, cmsgpack._VERSION, cmsgpack._COPYRIGHT, "
      "cmsgpack._DESCRIPTION}", "0"]],
    # Redis's error handler, a global scripts can call.
    [["EVAL", "return __redis__err__handler({err='x'})", "0"],
     ["EVAL", "local t = __redis__err__handler('boom') return {t.err, t.source, t.line}", "0"],
     ["EVAL", "local t = __redis__err__handler(7) return t.err", "0"]],
    [["EVAL", "return cjson.encode({1,2,{a=1}})", "0"], ["EVAL", "return cjson.decode('[1,2,3]')",
                                                         "0"],
     ["EVAL", "return {pcall(cjson.decode, '[1,2,')}", "0"]],
    [["EVAL", "return cmsgpack.pack({1,2,3})", "0"],
     ["EVAL", "return cmsgpack.unpack(cmsgpack.pack({1,'a',{b=2}}))", "0"],
     ["EVAL", "return cmsgpack.pack({1,-1,-100,300,70000,5000000000,1.5,0.1,'hello',true,false})",
      "0"],
     ["EVAL", "return {cmsgpack.unpack(cmsgpack.pack(1,'x',{1,2}))}", "0"]],
    [["EVAL", "return {cmsgpack.unpack_one(cmsgpack.pack(7,'ab',{1,2}), 1)}", "0"],
     ["EVAL", "return {cmsgpack.unpack_one(cmsgpack.pack(7,'ab'), 0)}", "0"],
     ["EVAL", "return {cmsgpack.unpack_limit(cmsgpack.pack(7,'ab',{1,2},9), 2, 1)}", "0"],
     ["EVAL", "return {cmsgpack.unpack_limit(cmsgpack.pack(7,'ab'), 0)}", "0"],
     ["EVAL", "return {cmsgpack.unpack_limit(cmsgpack.pack(7,'ab'), 9, 3)}", "0"],
     ["EVAL", "return {cmsgpack.unpack_one('abc', 4)}", "0"],
     ["EVAL", "return {cmsgpack.unpack_limit('abc', -1)}", "0"],
     ["EVAL", "return {cmsgpack.unpack_one('\\147\\1')}", "0"],
     ["EVAL", "return cmsgpack.unpack_limit('abc')", "0"]],
    # FUNCTION's argument errors; FCALL's numkeys.
    [["FUNCTION", "RESTORE", "a", "b", "c"], ["FUNCTION", "RESTORE", "a", "b"],
     ["FUNCTION", "FLUSH", "sync", "x"], ["FUNCTION", "FLUSH", "bad"], ["FCALL", "f", "bad"],
     ["FUNCTION", "LOAD", "#!lua name=lf\nredis.register_function('f', function() return 1 end)"],
     ["FCALL", "f", "bad"], ["FCALL_RO", "f", "x"], ["FCALL", "f", "-1"], ["FCALL", "f", "2", "k"],
     ["FCALL_RO", "f", "0"], ["FUNCTION", "FLUSH"]],
    # A function name with a NUL byte is invalid (not cut short); a library's load-time code
    # runs at most 500 ms, a pcall cannot hide the timeout, and nothing of it is kept.
    [["FUNCTION", "LOAD", "#!lua name=nul\nredis.register_function('te\\0st', function() end)"],
     ["FUNCTION", "LOAD", "#!lua name=spin\nlocal a = 1 while 1 do a = a + 1 end"],
     ["FUNCTION", "LOAD", "#!lua name=spin\npcall(function() while 1 do end end)\n"
      "redis.register_function('f', function() return 1 end)"],
     ["FUNCTION", "LIST"]],
    # min-replicas-to-write with no replica: a script that may write (shebang without
    # no-writes, a function without it) is refused up front; one without a shebang at its write.
    [["SET", "x", "v"], ["CONFIG", "SET", "min-replicas-to-write", "1"],
     ["EVAL", "#!lua flags=no-writes\nreturn redis.call('get','x')", "1", "x"],
     ["EVAL", "return redis.call('get','x')", "1", "x"],
     ["EVAL", "#!lua\nreturn redis.call('get','x')", "1", "x"],
     ["EVAL", "return redis.call('set','x', 1)", "1", "x"],
     ["EVAL", "return redis.pcall('set','x', 1)", "1", "x"],
     ["FUNCTION", "LOAD", "#!lua name=mr\nredis.register_function('w', function() return 1 end)\n"
      "redis.register_function{function_name='r', callback=function() return 2 end, "
      "flags={'no-writes'}}"],
     ["FCALL", "w", "0"], ["FCALL", "r", "0"], ["CONFIG", "SET", "min-replicas-to-write", "0"],
     ["FUNCTION", "FLUSH"], ["GET", "x"]],
    # The library line split as Redis's sdssplitargs; register_function's named arguments.
    [["FUNCTION", "LOAD", "#!lua name=foo name=bar\nredis.register_function('f', function() end)"],
     ["FUNCTION", "LOAD", "#!lua name=\"q1\"\nredis.register_function('f', function() end)"],
     ["FUNCTION", "LOAD", "#!lua name=\"q2\nredis.register_function('g', function() end)"],
     ["FUNCTION", "LOAD", "#!lua name=x nme=y\nredis.register_function('g', function() end)"],
     ["FUNCTION", "LOAD", "#!lua name=n1\n"
      "redis.register_function{function_name=1, callback=function() end, description=2}"],
     ["FUNCTION", "LOAD", "#!lua name=n2\nredis.register_function{function_name={}, "
      "callback=function() end}"],
     ["FUNCTION", "LOAD", "#!lua name=n2\nredis.register_function{function_name='h', callback=1}"],
     ["FUNCTION", "LOAD", "#!lua name=n2\nredis.register_function{function_name='h', "
      "callback=function() end, description={}}"],
     ["FUNCTION", "LOAD", "#!lua name=n2\nredis.register_function{function_name='h', "
      "callback=function() end, flags=1}"],
     ["FUNCTION", "LIST", "LIBRARYNAME", "n1"], ["FUNCTION", "LIST", "LIBRARYNAME", "q1"],
     ["FUNCTION", "FLUSH"]],
    # Function names are case-insensitive (FCALL and collisions between libraries); one library
    # may register names differing only in case.
    [["FUNCTION", "FLUSH"],
     ["FUNCTION", "LOAD", "#!lua name=test\n"
      "redis.register_function('Test', function() return redis.call('nosuch') end)"],
     ["FCALL", "TEST", "0"], ["FCALL", "test", "0"], ["FCALL_RO", "tEsT", "0"],
     ["FUNCTION", "LOAD", "#!lua name=t2\nredis.register_function('TEST', function() return 1 end)"],
     ["FUNCTION", "LOAD", "#!lua name=t3\nredis.register_function('a', function() return 1 end)\n"
      "redis.register_function('A', function() return 1 end)"],
     ["FCALL", "A", "0"], ["FUNCTION", "FLUSH"]],
    # The globals and library tables are read-only themselves, as in Redis 7.0: the globals'
    # metatable is visible and read-only, the libraries have none.
    [["EVAL", "local g = getmetatable(_G) g.__index = {}", "0"],
     ["EVAL", "local g = getmetatable(_G) return {type(g.__index), type(g.__newindex)}", "0"],
     ["EVAL", "return {type(getmetatable(redis)), type(getmetatable(cjson))}", "0"],
     ["EVAL", "rawset(_G, 'a', 1)", "0"], ["EVAL", "setmetatable(_G, {})", "0"],
     ["EVAL", "rawset(redis, 'x', 1)", "0"], ["EVAL", "string.x = 1", "0"],
     ["EVAL", "local n = 0 for k in pairs(redis) do n = n + 1 end return n", "0"],
     ["EVAL", "KEYS[1] = 'x' return KEYS[1]", "1", "k"], ["EVAL", "_G.KEYS = 1", "0"]],
    # redis.acl_check_cmd for the default user and for a restricted one; the library's argument
    # errors as a pcall catches them.
    [["EVAL", "return {redis.acl_check_cmd('set', 'k', 1)}", "0"],
     ["EVAL", "return {pcall(redis.acl_check_cmd, 'nosuch')}", "0"],
     ["EVAL", "return redis.acl_check_cmd('nosuch')", "0"], ["EVAL", "return redis.acl_check_cmd()", "0"],
     ["EVAL", "return redis.acl_check_cmd({})", "0"],
     ["EVAL", "return {redis.acl_check_cmd('config')}", "0"],
     ["EVAL", "return {redis.acl_check_cmd('config', 'nosub')}", "0"],
     ["EVAL", "return {redis.acl_check_cmd('GET', 'a', 'b', 'c')}", "0"],
     ["EVAL", "local ok, e = pcall(redis.sha1hex) return e", "0"],
     ["EVAL", "local ok, e = pcall(redis.setresp, 5) return e", "0"],
     ["EVAL", "local ok, e = pcall(redis.log) return e", "0"],
     ["EVAL", "local ok, e = pcall(redis.set_repl, 99) return e", "0"]],
    [["ACL", "SETUSER", "lim", "on", "nopass", "~a*", "+get", "+eval"], ["AUTH", "lim", "x"],
     ["EVAL", "return {redis.acl_check_cmd('get', 'a1')}", "0"],
     ["EVAL", "return {redis.acl_check_cmd('get', 'b1')}", "0"],
     ["EVAL", "return {redis.acl_check_cmd('set', 'a1', 'x')}", "0"],
     ["EVAL", "return {redis.acl_check_cmd('get')}", "0"], ["AUTH", "default", "x"],
     ["ACL", "DELUSER", "lim"]],
    # Commands a script may or may not call (Redis 7.0's noscript flags): BLMPOP does not
    # block there, CLIENT HELP runs, CLUSTER RESET is refused before the cluster check.
    [["RPUSH", "bl", "a", "b"], ["EVAL", "return redis.call('blmpop', 0, 1, 'bl', 'LEFT')", "0"],
     ["EVAL", "return redis.call('blmpop', 0, 1, 'nol', 'LEFT')", "0"],
     ["EVAL", "return #redis.call('client', 'help') > 5", "0"],
     ["EVAL", "return redis.call('cluster', 'reset', 'hard')", "0"],
     ["EVAL", "return redis.call('blpop', 'bl', 0)", "0"]],
    [["EVAL", "return struct.pack('>I2',258)", "0"],
     ["EVAL", "return {struct.unpack('>I2','\\1\\2')}", "0"],
     ["EVAL", "return struct.pack('<i4 >h B d c3 s', -5, -2, 200, 1.5, 'abc', 'zz')", "0"],
     ["EVAL", "return {struct.unpack('<i4 >h B', struct.pack('<i4 >h B', -5, -2, 200))}", "0"],
     ["EVAL", "return struct.size('>I2 i8 d')", "0"]],
    [["EVAL", "return bit.band(7,3)", "0"], ["EVAL", "return bit.tohex(255)", "0"],
     ["EVAL", "return tostring(math.huge)", "0"], ["EVAL", "return string.format('%d', 5)", "0"],
     ["EVAL", "return ('abc'):upper()", "0"]],
    # Functions
    [["FUNCTION", "LOAD", "#!lua name=mylib\nredis.register_function('myfunc', function(keys, "
      "args) return {keys[1], args[1]} end)"], ["FCALL", "myfunc", "1", "k", "a"],
     ["FCALL_RO", "myfunc", "1", "k", "a"], ["FUNCTION", "LIST"], ["FUNCTION", "LIST", "WITHCODE"],
     ["FUNCTION", "LIST", "LIBRARYNAME", "x*"], ["FUNCTION", "STATS"], ["FUNCTION", "KILL"],
     ["FUNCTION", "DELETE", "mylib"], ["FUNCTION", "DELETE", "mylib"], ["FCALL", "myfunc", "0"]],
    [["FUNCTION", "LOAD", "return 1"], ["FUNCTION", "LOAD", "#!lua\nreturn 1"],
     ["FUNCTION", "LOAD", "#!lua name=bad-name\nreturn 1"],
     ["FUNCTION", "LOAD", "#!lua name=x\nreturn 1"], ["FUNCTION", "LOAD", "#!lua name=x a=b\n"],
     ["FUNCTION", "LOAD", "#!lu name=x\nreturn 1"], ["FUNCTION", "LOAD", "FOO", "x"],
     ["FUNCTION", "LOAD", "#!lua name=x\nredis.register_function('f', function() end) return +"],
     ["FUNCTION", "LOAD", "#!lua name=x\nredis.register_function('f', function() end) "
      "redis.call('ping')"],
     ["FUNCTION", "LOAD", "#!lua name=x\nredis.register_function('f', function() end) y = 5"],
     ["FUNCTION", "LOAD", "#!lua name=x\nredis.register_function('f')"],
     ["FUNCTION", "LOAD", "#!lua name=x\nredis.register_function{function_name='f', "
      "callback=function() end, flags={'bogus'}}"],
     ["FUNCTION", "LOAD", "#!lua name=x\nredis.register_function{callback=function() end}"],
     ["FUNCTION", "RESTORE", "garbage"], ["FUNCTION", "FLUSH", "bad"]],
    [["FUNCTION", "LOAD", "#!lua name=x\nredis.register_function{function_name='f', "
      "callback=function() return redis.call('set','a','b') end, flags={'no-writes'}, "
      "description='desc'}"], ["FCALL", "f", "0"], ["FUNCTION", "LIST"],
     ["FUNCTION", "LOAD", "#!lua name=x\nredis.register_function('f', function() return 2 end)"],
     ["FUNCTION", "LOAD", "REPLACE", "#!lua name=x\nredis.register_function('f', function() "
      "return x end)"], ["FCALL", "f", "0"], ["FCALL", "f", "-1"], ["FCALL", "f", "5"],
     ["FUNCTION", "LOAD", "#!lua name=y\nredis.register_function('f', function() return 3 end)"],
     ["FUNCTION", "FLUSH"], ["FUNCTION", "LIST"]],
    # Inside MULTI
    [["MULTI"], ["EVAL", "return redis.call('incr', KEYS[1])", "1", "c"], ["INCR", "c"],
     ["EXEC"]],
]


@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class DifferentialTest(BesideReference):
    cases = CASES  # subclasses compare other scenarios (test_script_security.py)

    def play(self, port, commands, proto):
        with Client(port) as c:
            if proto == 3:  # the reply names the server: not compared
                self.assertEqual(c.call("HELLO", "3")[b"proto"], 3)
            for cmd in (["FLUSHALL"], ["SCRIPT", "FLUSH"], ["FUNCTION", "FLUSH"]):
                c.send(encode_command(*cmd))
                read_raw_reply(c)
            out = []
            for cmd in commands:
                c.send(encode_command(*cmd))
                out.append((" ".join(cmd), read_raw_reply(c)))
            return out

    def test_cases_resp2_and_resp3(self):
        for proto in (2, 3):
            for commands in self.cases:
                want = self.play(self.redis.port, commands, proto)
                got = self.play(self.sluice.port, commands, proto)
                self.assertEqual(got, want, "RESP%d" % proto)


class ServerStarter:
    def start_server(self, options):
        server = Server(options=options)
        self.addCleanup(server.stop)
        return server.start()


class AtomicityTest(ServerStarter, BlackboxTestCase):
    """Writers run a script that declares one key and touches another it did not declare;
    readers read both in one script. Nobody may see one incremented without the other."""

    WRITER = ("redis.call('incr', KEYS[1]) redis.call('incr', 'undeclared') "
              "return redis.call('get', KEYS[1])")
    READER = "return {redis.call('get', 'declared'), redis.call('get', 'undeclared')}"

    def test_undeclared_keys_stay_atomic(self):
        server = self.start_server({"threads": "4"})
        writers, per_writer = 4, 150
        errors = []

        def write():
            with Client(server.port) as c:
                sha = c.call("SCRIPT", "LOAD", self.WRITER)
                for _ in range(per_writer):
                    r = c.call("EVALSHA", sha, "1", "declared")
                    if isinstance(r, RespError):
                        errors.append(r)

        def read(stop):
            with Client(server.port) as c:
                while not stop.is_set():
                    a, b = c.call("EVAL", self.READER, "0")
                    if a != b:
                        errors.append(("torn", a, b))

        stop = threading.Event()
        readers = [threading.Thread(target=read, args=(stop,)) for _ in range(2)]
        threads = [threading.Thread(target=write) for _ in range(writers)]
        for t in readers + threads:
            t.start()
        for t in threads:
            t.join()
        stop.set()
        for t in readers:
            t.join()
        self.assertEqual(errors, [])
        with Client(server.port) as c:
            total = str(writers * per_writer).encode()
            self.assertEqual(c.call("MGET", "declared", "undeclared"), [total, total])


class FunctionPersistenceTest(ServerStarter, BlackboxTestCase):
    LIB = ("#!lua name=counter\nredis.register_function('bump', function(keys, args) "
           "return redis.call('incrby', keys[1], args[1]) end)")

    def test_libraries_survive_restarts(self):
        server = self.start_server({})
        with Client(server.port) as c:
            self.assertEqual(c.call("FUNCTION", "LOAD", self.LIB), b"counter")
            self.assertEqual(c.call("FCALL", "bump", "1", "n", "5"), 5)
        server.restart()
        with Client(server.port) as c:
            self.assertEqual(c.call("FCALL", "bump", "1", "n", "2"), 7)
            dump = c.call("FUNCTION", "DUMP")
            self.assertEqual(c.call("FUNCTION", "FLUSH"), "OK")
        server.restart(hard=True)
        with Client(server.port) as c:
            self.assertEqual(c.call("FCALL", "bump", "1", "n", "1"),
                             RespError("ERR Function not found"))
            self.assertEqual(c.call("FUNCTION", "RESTORE", dump), "OK")
            # RESTORE's text has no quotes, unlike LOAD's (Redis's libraryJoin).
            self.assertEqual(c.call("FUNCTION", "RESTORE", dump),
                             RespError("ERR Library counter already exists"))
            self.assertEqual(c.call("FUNCTION", "RESTORE", dump, "REPLACE"), "OK")
        server.restart(hard=True)
        with Client(server.port) as c:
            self.assertEqual(c.call("FCALL", "bump", "1", "n", "1"), 8)


class BusyTest(ServerStarter, BlackboxTestCase):
    LOOP = "local i = 0 while true do i = i + 1 end"
    BUSY = RespError("BUSY Redis is busy running a script. You can only call SCRIPT KILL or "
                     "SHUTDOWN NOSAVE.")

    def wait_until_busy(self, port, want):
        """Until a new client gets `want` (-BUSY) for PING. Clients connected before send
        nothing meanwhile: a command read in the same round as the script's would wait for
        the script with its round (docs/scripting.md)."""
        end = time.monotonic() + 30
        while time.monotonic() < end:
            with Client(port, timeout=10) as c:
                got = c.call("PING")
            if got == want:
                return
            time.sleep(0.02)
        self.fail("never busy (last %r)" % (got,))

    def wait_for(self, client, want, *args):
        end = time.monotonic() + 30
        while time.monotonic() < end:
            got = client.call(*args)
            if got == want:
                return
            time.sleep(0.02)
        self.fail("%s never replied %r (last %r)" % (args, want, got))

    def test_kill_a_busy_script(self):
        server = self.start_server({"threads": "2", "busy-reply-threshold": "200"})
        with Client(server.port) as admin:
            self.assertEqual(admin.call("CONFIG", "GET", "lua-time-limit"),
                             [b"lua-time-limit", b"200"])
            self.assertEqual(admin.call("SCRIPT", "KILL"),
                             RespError("NOTBUSY No scripts in execution right now."))
            looper = Client(server.port)
            looper.send(encode_command("EVAL", self.LOOP, "0"))
            self.wait_for(admin, self.BUSY, "GET", "x")
            # Redis 7.0's allow_busy commands are answered meanwhile.
            for cmd in (["WATCH", "x"], ["UNWATCH"], ["MULTI"], ["DISCARD"]):
                self.assertEqual(admin.call(*cmd), "OK", cmd)
            self.assertEqual(admin.call("SCRIPT", "KILL"), "OK")
            reply = looper.read()
            self.assertIsInstance(reply, RespError)
            self.assertTrue(str(reply).startswith(
                "ERR Script killed by user with SCRIPT KILL... script: "), reply)
            looper.close()
            self.assertEqual(admin.call("SET", "x", "1"), "OK")

    def test_a_script_that_wrote_cannot_be_killed(self):
        server = self.start_server({"threads": "2", "busy-reply-threshold": "100"})
        with Client(server.port) as admin:
            looper = Client(server.port)
            looper.send(encode_command("EVAL", "redis.call('set','w','1') " + self.LOOP, "0"))
            self.wait_for(admin, self.BUSY, "PING")
            self.assertEqual(admin.call("SCRIPT", "KILL"), RespError(
                "UNKILLABLE Sorry the script already executed write commands against the "
                "dataset. You can either wait the script termination or kill the server in a "
                "hard way using the SHUTDOWN NOSAVE command."))
            looper.close()
        server.kill9()  # the script never ends

    def busy_on_thread_0(self, server):
        """A client whose script loops on I/O thread 0 (where accepting and signals used to
        run), past the threshold; and a client on thread 1 that saw it busy."""
        # Clients go to the I/O threads in turn, and the start-up check took thread 0.
        other = Client(server.port)
        self.addCleanup(other.close)
        looper = Client(server.port)
        self.addCleanup(looper.close)
        looper.send(encode_command("EVAL", self.LOOP, "0"))
        self.wait_for(other, self.BUSY, "PING")
        return looper

    def test_shutdown_while_a_script_is_busy_needs_nosave(self):
        server = self.start_server({"threads": "2", "busy-reply-threshold": "100"})
        with Client(server.port) as admin:  # on I/O thread 0's neighbour
            looper = Client(server.port)
            self.addCleanup(looper.close)
            looper.send(encode_command("EVAL", self.LOOP, "0"))
            self.wait_for(admin, self.BUSY, "PING")
            self.assertEqual(admin.call("SHUTDOWN"), self.BUSY)
            self.assertEqual(admin.call("SCRIPT", "KILL"), "OK")

    @unittest.skipIf(IS_REDIS, "checks Sluice's data dir after the restart")
    def test_shutdown_nosave_exits_without_a_busy_script_that_wrote(self):
        server = self.start_server({"threads": "2", "busy-reply-threshold": "100"})
        with Client(server.port) as admin:
            self.assertEqual(admin.call("SET", "before", "1"), "OK")
            looper = Client(server.port)
            self.addCleanup(looper.close)
            looper.send(encode_command("EVAL", "redis.call('set','w','1') " + self.LOOP, "0"))
            self.wait_for(admin, self.BUSY, "PING")
            admin.send(encode_command("SHUTDOWN", "NOSAVE"))
            self.assertEqual(server.wait_exit(), 0)
        self.assertIn("SHUTDOWN NOSAVE: exiting without the busy script", server.log())
        server.start()
        with Client(server.port) as c:
            self.assertEqual(c.call("GET", "before"), b"1")
            self.assertIsNone(c.call("GET", "w"))  # the script never committed

    def assert_killed(self, looper):
        self.assertTrue(str(looper.read()).startswith(
            "ERR Script killed by user with SCRIPT KILL... script: "))

    def test_clients_connecting_during_a_busy_script_can_kill_it(self):
        # Accepting has a thread of its own (before, a script busy on the accepting thread kept
        # every new client out), and new clients go to threads the script does not hold (before,
        # every other one waited for the script without a reply), as every client gets -BUSY
        # from Redis.
        server = self.start_server({"threads": "2", "busy-reply-threshold": "100"})
        looper = self.busy_on_thread_0(server)
        for _ in range(4):
            with Client(server.port, timeout=10) as c:
                self.assertEqual(c.call("PING"), self.BUSY)
        with Client(server.port, timeout=10) as c:
            self.assertEqual(c.call("SCRIPT", "KILL"), "OK")
        self.assert_killed(looper)

    def test_clients_of_the_busy_thread_are_answered(self):
        # One I/O thread: every client shares the script's thread. They were connected before
        # the script and got no reply at all until it ended (not even to SCRIPT KILL); now they
        # get what Redis answers (busy_serving.h).
        server = self.start_server({"threads": "1", "busy-reply-threshold": "100"})
        admin = Client(server.port, timeout=10)
        self.addCleanup(admin.close)
        resp3 = Client(server.port, timeout=10)
        self.addCleanup(resp3.close)
        quitter = Client(server.port, timeout=10)
        self.addCleanup(quitter.close)
        watcher = Client(server.port, timeout=10)
        self.addCleanup(watcher.close)
        for c in (admin, resp3, quitter, watcher):
            self.assertEqual(c.call("PING"), "PONG")
        looper = Client(server.port)
        self.addCleanup(looper.close)
        looper.send(encode_command("EVAL", self.LOOP, "0"))
        self.wait_until_busy(server.port, self.BUSY)
        self.assertEqual(admin.call("GET", "x"), self.BUSY)
        # Pipelined: each command answered, in order.
        self.assertEqual(
            admin.pipeline([["PING"], ["SET", "x", "1"], ["UNWATCH"], ["MULTI"], ["DISCARD"]]),
            [self.BUSY, self.BUSY, "OK", "OK", "OK"])
        hello = resp3.call("HELLO", "3")
        self.assertEqual(hello[b"proto"], 3)
        self.assertEqual(resp3.call("PING"), self.BUSY)
        self.assertEqual(quitter.call("QUIT"), "OK")
        self.assertEqual(quitter.read_until_closed(), b"")
        watcher.send(encode_command("WATCH", "x"))  # answered once the script's keys are free
        self.assertEqual(admin.call("SCRIPT", "KILL"), "OK")
        self.assert_killed(looper)
        self.assertEqual(watcher.read(), "OK")
        self.assertEqual(admin.call("SET", "x", "1"), "OK")
        self.assertEqual(resp3.call("GET", "x"), b"1")

    def test_a_command_run_just_before_the_script_is_answered(self):
        # A command read in the same look at the sockets as a script's runs first, in the same
        # I/O round, whose replies wait for the round's end, after the script: its reply is sent
        # once the script turns busy, as Redis sends it (before, it came only after the script).
        # DEBUG SLEEP holds the one I/O thread while both arrive.
        server = self.start_server({"threads": "1", "busy-reply-threshold": "100"})
        for appendfsync in ("everysec", "always"):
            with Client(server.port, timeout=10) as admin, \
                    Client(server.port, timeout=10) as sleeper:
                self.assertEqual(admin.call("CONFIG", "SET", "appendfsync", appendfsync), "OK")
                looper = Client(server.port)
                self.addCleanup(looper.close)
                self.assertEqual(looper.call("PING"), "PONG")
                sleeper.send(encode_command("DEBUG", "SLEEP", "0.5"))
                time.sleep(0.1)
                admin.send(encode_command("INCR", appendfsync))
                looper.send(encode_command("EVAL", self.LOOP, "0"))
                self.assertEqual(sleeper.read(), "OK")
                self.assertEqual(admin.read(), 1)
                self.assertEqual(admin.call("GET", appendfsync), self.BUSY)
                self.assertEqual(admin.call("SCRIPT", "KILL"), "OK")
                self.assert_killed(looper)
                self.assertEqual(admin.call("GET", appendfsync), b"1")

    def test_function_kill_from_a_client_of_the_busy_thread(self):
        server = self.start_server({"threads": "1", "busy-reply-threshold": "100"})
        with Client(server.port, timeout=10) as admin:
            self.assertEqual(admin.call(
                "FUNCTION", "LOAD",
                "#!lua name=spin\nredis.register_function('spin', function() " + self.LOOP +
                " end)"), b"spin")
            looper = Client(server.port)
            self.addCleanup(looper.close)
            looper.send(encode_command("FCALL", "spin", "0"))
            busy = RespError("BUSY Redis is busy running a script. You can only call "
                             "FUNCTION KILL or SHUTDOWN NOSAVE.")
            self.wait_until_busy(server.port, busy)
            self.assertEqual(admin.call("PING"), busy)
            self.assertEqual(admin.call("SCRIPT", "KILL"), busy)  # a function: FUNCTION KILL
            running = admin.call("FUNCTION", "STATS")[1]
            self.assertEqual(running[:4], [b"name", b"spin", b"command", [b"FCALL", b"spin", b"0"]])
            self.assertEqual(admin.call("FUNCTION", "KILL"), "OK")
            self.assertEqual(looper.read(), RespError(  # Redis 7.0 names SCRIPT KILL here too
                "ERR Script killed by user with SCRIPT KILL... script: spin, on "
                "@user_function:2."))
            self.assertEqual(admin.call("PING"), "PONG")

    @unittest.skipIf(IS_REDIS, "Redis waits for the script (or SCRIPT KILL) before it stops")
    def test_sigterm_stops_a_busy_script_that_has_not_written(self):
        # The signal is handled off the busy thread, and the shutdown stops the script as
        # SCRIPT KILL would. Before, the server never exited.
        server = self.start_server({"threads": "2", "busy-reply-threshold": "100"})
        looper = self.busy_on_thread_0(server)
        server.proc.send_signal(signal.SIGTERM)
        self.assert_killed(looper)
        self.assertEqual(server.wait_exit(), 0)


if __name__ == "__main__":
    unittest.main()
