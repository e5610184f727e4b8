"""Introspection side by side with a real redis-server 7.0.15 (issue 38, the units
unit/introspection and unit/introspection-2): COMMAND GETKEYS / GETKEYSANDFLAGS over Redis's key
specs, raw replies compared byte for byte in RESP2 and RESP3; CLIENT LIST / CLIENT INFO's buffer
fields (qbuf, argv-mem, multi-mem, obl, oll, omem, multi=, flags=x) as Redis reports them;
OBJECT ENCODING under CONFIG SET encoding thresholds; OBJECT IDLETIME (reads and writes touch a key; TTL, TYPE, EXISTS and OBJECT do not); CONFIG SET
port / bind moving the listener while connections stay, and Redis's errors (the old
listener kept) when the new one cannot be bound."""
import socket
import time
import unittest

from harness import (IS_REDIS, BlackboxTestCase, Client, RespError, Server, encode_command,
                     free_port)
from test_transactions import BesideReference, read_raw_reply, start_beside_reference

# Every shape of key spec: index/keyword begin, range/keynum find, VARIABLE_FLAGS (SET,
# BITFIELD), the INCOMPLETE/unknown specs Redis hands to its own finders (SORT, MIGRATE), NOT_KEY
# (SPUBLISH), commands without keys, NO_MANDATORY_KEYS (EVAL, FCALL) and bad numkeys.
GETKEYS_CASES = [
    ["SET", "k1", "v1"], ["SET", "k1", "v1", "GET"], ["SET", "k1", "v1", "EX", "10", "get"],
    ["MSET", "k1", "v1", "k2", "v2"], ["LMOVE", "k1", "k2", "left", "right"],
    ["SORT", "k1", "STORE", "k2"], ["SORT", "k1", "BY", "x", "GET", "y", "STORE", "k2"],
    ["SORT", "k1"], ["SORT_RO", "k1", "BY", "x"], ["BITFIELD", "k1", "GET", "u8", "0"],
    ["BITFIELD", "k1", "SET", "u8", "0", "1"], ["BITFIELD", "k1", "OVERFLOW", "SAT", "GET", "u8",
                                                 "0"],
    ["BITFIELD_RO", "k1", "GET", "u8", "0"], ["EVAL", "return 1", "0"],
    ["EVAL", "return 1", "2", "a", "b"], ["EVALSHA_RO", "abc", "1", "a"], ["FCALL", "f", "0"],
    ["FCALL_RO", "f", "1", "a"], ["PING"], ["GET"], ["GET", "a"], ["ZUNIONSTORE", "a", "0"],
    ["ZUNIONSTORE", "a", "3", "b"], ["ZUNIONSTORE", "a", "x", "b"],
    ["ZUNIONSTORE", "d", "2", "a", "b", "WEIGHTS", "1", "2"], ["ZINTER", "2", "a", "b"],
    ["MIGRATE", "h", "1", "k", "0", "1"], ["MIGRATE", "h", "1", "", "0", "1", "KEYS", "a", "b"],
    ["GEORADIUS", "k", "1", "1", "1", "m", "STORE", "s"],
    ["GEORADIUS", "k", "1", "1", "1", "m", "STOREDIST", "s"],
    ["GEOSEARCHSTORE", "d", "s", "FROMMEMBER", "m", "BYRADIUS", "1", "m"],
    ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "b", "0", "0"],
    ["XREAD", "COUNT", "1", "STREAMS", "a", "b", "0", "0"], ["XREAD", "STREAMS", "a", "b", "0"],
    ["XGROUP", "CREATE", "key", "g", "$"], ["SPUBLISH", "a", "b"], ["PUBLISH", "a", "b"],
    ["OBJECT", "ENCODING", "a"], ["MEMORY", "USAGE", "a"], ["LMPOP", "2", "a", "b", "LEFT"],
    ["BLMPOP", "0", "2", "a", "b", "LEFT"], ["BZMPOP", "0", "1", "z", "MIN"],
    ["DEL", "a", "b", "c"], ["RENAME", "a", "b"], ["COPY", "a", "b"], ["SMOVE", "a", "b", "c"],
    ["GETEX", "a"], ["GETDEL", "a"], ["BITOP", "AND", "d", "a", "b"], ["PFMERGE", "d", "a", "b"],
    ["PFCOUNT", "a", "b"], ["LCS", "a", "b"], ["SINTERCARD", "2", "a", "b"],
    ["ZRANGESTORE", "d", "s", "0", "-1"], ["RPOPLPUSH", "a", "b"], ["HSET", "h", "f", "v"],
    ["LPOS", "l", "x"], ["WATCH", "a", "b"], ["NOSUCH", "a", "b"], ["CLIENT", "LIST"],
    ["CONFIG", "GET", "x"], ["CLIENT", "NOSUCH"], ["SET", "a"], ["XADD", "s", "*", "f", "v"],
    ["EXPIRE", "a", "1"], ["SUNIONSTORE", "d", "a", "b"], ["BLMOVE", "a", "b", "LEFT", "LEFT",
                                                         "0"],
]

# The encoding thresholds as CONFIG SET leaves them (aliases too), conversions that never go
# back, Redis 7.0's defaults (a 600-field hash is a hashtable, a 300-field one still listpack).
ENCODING_CASES = [
    ["FLUSHALL"], ["EVAL", "for i=1,300 do redis.call('hset',KEYS[1],'f'..i,i) end", "1", "h300"],
    ["OBJECT", "ENCODING", "h300"], ["HSET", "h300", "big", "x" * 65], ["OBJECT", "ENCODING", "h300"],
    ["EVAL", "for i=1,600 do redis.call('hset',KEYS[1],'f'..i,i) end", "1", "h600"],
    ["OBJECT", "ENCODING", "h600"], ["CONFIG", "SET", "zset-max-ziplist-entries", "2"],
    ["ZADD", "z", "1", "a", "2", "b"], ["OBJECT", "ENCODING", "z"], ["ZADD", "z", "3", "c"],
    ["OBJECT", "ENCODING", "z"], ["ZREM", "z", "b", "c"], ["OBJECT", "ENCODING", "z"],
    ["CONFIG", "SET", "zset-max-listpack-entries", "128", "zset-max-listpack-value", "3"],
    ["ZADD", "z2", "1", "abc"], ["OBJECT", "ENCODING", "z2"], ["ZADD", "z2", "1", "abcd"],
    ["OBJECT", "ENCODING", "z2"], ["CONFIG", "SET", "hash-max-ziplist-entries", "1",
                                   "hash-max-ziplist-value", "1kb"],
    ["HSET", "h", "a", "1"], ["OBJECT", "ENCODING", "h"], ["HSET", "h", "b", "x" * 100],
    ["OBJECT", "ENCODING", "h"], ["CONFIG", "SET", "set-max-intset-entries", "2"],
    ["SADD", "s", "1", "2"], ["OBJECT", "ENCODING", "s"], ["SADD", "s", "3"],
    ["OBJECT", "ENCODING", "s"], ["SREM", "s", "3"], ["OBJECT", "ENCODING", "s"],
    ["CONFIG", "SET", "hash-max-listpack-entries", "512", "hash-max-listpack-value", "64",
     "zset-max-listpack-entries", "128", "zset-max-listpack-value", "64",
     "set-max-intset-entries", "512"],
]

# A string edited in place (APPEND to it, SETRANGE, SETBIT, BITFIELD) is "raw" whatever its
# bytes, and stays so while the value does (EXPIRE, PERSIST, RENAME, COPY, MOVE, GETEX); a new
# value (SET, GETSET, INCR, SET KEEPTTL) is encoded from its bytes again. HyperLogLogs are raw.
STRING_ENCODING_CASES = [
    ["FLUSHALL"], ["SET", "a", "12"], ["OBJECT", "ENCODING", "a"], ["APPEND", "a", "3"],
    ["OBJECT", "ENCODING", "a"], ["EXPIRE", "a", "100"], ["OBJECT", "ENCODING", "a"],
    ["PERSIST", "a"], ["OBJECT", "ENCODING", "a"], ["RENAME", "a", "a2"],
    ["OBJECT", "ENCODING", "a2"], ["COPY", "a2", "a3"], ["OBJECT", "ENCODING", "a3"],
    ["MOVE", "a3", "1"], ["SELECT", "1"], ["OBJECT", "ENCODING", "a3"], ["FLUSHDB"],
    ["SELECT", "0"], ["SET", "a2", "5"], ["OBJECT", "ENCODING", "a2"],
    ["SET", "b", "hello"], ["SETRANGE", "b", "1", "x"], ["OBJECT", "ENCODING", "b"],
    ["SETRANGE", "n", "0", "abc"], ["OBJECT", "ENCODING", "n"], ["SETRANGE", "n2", "0", ""],
    ["EXISTS", "n2"], ["SET", "c", "1234"], ["SETRANGE", "c", "0", ""],
    ["OBJECT", "ENCODING", "c"], ["APPEND", "d", "x"], ["OBJECT", "ENCODING", "d"],
    ["APPEND", "d", "y"], ["OBJECT", "ENCODING", "d"], ["SETBIT", "e", "3", "1"],
    ["OBJECT", "ENCODING", "e"], ["SET", "f", "7"], ["SETBIT", "f", "0", "1"],
    ["OBJECT", "ENCODING", "f"], ["INCR", "f"], ["OBJECT", "ENCODING", "f"],
    ["BITFIELD", "g", "SET", "u8", "0", "100"], ["OBJECT", "ENCODING", "g"], ["SET", "h", "5"],
    ["SETRANGE", "h", "0", "6"], ["GETEX", "h", "EX", "100"], ["OBJECT", "ENCODING", "h"],
    ["GETEX", "h", "PERSIST"], ["OBJECT", "ENCODING", "h"], ["PFADD", "hl", "x", "y", "z"],
    ["OBJECT", "ENCODING", "hl"], ["PFCOUNT", "hl"], ["OBJECT", "ENCODING", "hl"],
    ["PFMERGE", "hm", "hl"], ["OBJECT", "ENCODING", "hm"], ["SET", "k", "1234"],
    ["APPEND", "k", "5"], ["GETSET", "k", "9"], ["OBJECT", "ENCODING", "k"], ["SET", "m", "99"],
    ["SETRANGE", "m", "0", "1"], ["SET", "m", "99", "KEEPTTL"], ["OBJECT", "ENCODING", "m"],
    ["SET", "big", "x" * 50], ["OBJECT", "ENCODING", "big"], ["APPEND", "big", "y"],
    ["OBJECT", "ENCODING", "big"],
]


@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class IntrospectionDifferentialTest(BesideReference):
    maxDiff = None

    def raw(self, port, commands, proto):
        """The raw replies to `commands`, pipelined on a fresh connection."""
        with Client(port) as c:
            if proto == 3:
                self.assertEqual(c.call("HELLO", "3")[b"proto"], 3)
            c.send(b"".join(encode_command(*cmd) for cmd in commands))
            return [read_raw_reply(c) for _ in commands]

    def check(self, commands):
        for proto in (2, 3):
            want = self.raw(self.redis.port, commands, proto)
            got = self.raw(self.sluice.port, commands, proto)
            for i, (g, w) in enumerate(zip(got, want)):
                self.assertEqual(g, w, "RESP%d %r" % (proto, commands[i]))

    def test_object_encoding_thresholds(self):
        for proto in (2, 3):
            want = self.raw(self.redis.port, ENCODING_CASES, proto)
            got = self.raw(self.sluice.port, ENCODING_CASES, proto)
            for i, (g, w) in enumerate(zip(got, want)):
                self.assertEqual(g, w, "RESP%d %r" % (proto, ENCODING_CASES[i]))

    def test_object_encoding_of_strings_edited_in_place(self):
        self.check(STRING_ENCODING_CASES)

    def test_getkeys_and_flags(self):
        for case in GETKEYS_CASES:
            self.check([["COMMAND", "GETKEYS"] + case, ["COMMAND", "GETKEYSANDFLAGS"] + case])

    # COMMAND's entries as Redis 7.0.15 gives them, for every command both servers have.
    # Known differences, each with its reason (docs/server.md "COMMAND"):
    COMMAND_INFO_DIFFERENCES = {
        # Answered while a node loads, where Redis answers -LOADING: the cluster tooling reads
        # a loading node's view (docs/cluster.md).
        **{"cluster|" + n: "loading" for n in (
            "countkeysinslot", "getkeysinslot", "info", "keyslot", "links", "myid", "nodes",
            "shards", "slots")},
    }
    SLUICE_ONLY = {"cl.throttle", "client|setinfo", "conc.acquire", "conc.release", "gcra.take",
                   "leaky.take", "limits.take", "sliding.take", "sluice.setentry", "window.take"}
    REDIS_ONLY = {"bgrewriteaof", "lolwut", "script|debug"}

    def command_entries(self, port):
        """name -> (arity, flags, first, last, step, categories), subcommands included."""
        entries = {}

        def text(v):  # status replies come as str, bulk ones as bytes
            return v.decode() if isinstance(v, bytes) else v

        def walk(e):
            entries[text(e[0])] = (e[1], sorted(map(text, e[2])), e[3], e[4], e[5],
                                   sorted(map(text, e[6])))
            for sub in e[9]:
                walk(sub)

        with Client(port) as c:
            for e in c.call("COMMAND"):
                walk(e)
        return entries

    def test_command_info_matches_redis(self):
        want = self.command_entries(self.redis.port)
        got = self.command_entries(self.sluice.port)
        self.assertEqual(set(got) - set(want), self.SLUICE_ONLY)
        self.assertEqual(set(want) - set(got), self.REDIS_ONLY)
        for name in sorted(set(want) & set(got)):
            w, g = want[name], got[name]
            extra = self.COMMAND_INFO_DIFFERENCES.get(name)
            if extra == "loading":
                g = (g[0], [f for f in g[1] if f != "loading"]) + g[2:]
            self.assertEqual(g, w, name)

    def test_subcommand_names_are_not_commands(self):
        # Redis's unit/other "Subcommand syntax error crash (issue #10070)".
        self.check([["GET|"], ["GET|SET"], ["CONFIG|GET", "GET_XX"], ["CONFIG", "GET_XX"],
                    ["config|get", "maxmemory"], ["EVAL", "return redis.pcall('config|get','x')",
                                                  "0"], ["COMMAND", "INFO", "config|get"]])

    def test_module_and_object_help(self):
        self.check([["MODULE", "LIST"], ["MODULE", "HELP"], ["MODULE", "LOAD", "/nonexistent.so"],
                    ["MODULE", "LOADEX", "/x.so"], ["MODULE", "UNLOAD", "foo"], ["MODULE"],
                    ["MODULE", "NOSUCH"], ["MODULE", "LIST", "x"], ["OBJECT", "HELP"],
                    ["OBJECT", "HELP", "x"]])

    # The fields whose values Sluice gives as Redis does; rbs, rbp, qbuf-free and tot-mem
    # measure each server's own allocations (docs/server.md "CLIENT LIST buffer fields").
    EXACT_FIELDS = ["flags", "multi", "qbuf", "argv-mem", "multi-mem", "obl", "oll", "omem"]

    def fields(self, line):
        fields = dict(f.split("=", 1) for f in line.decode().strip().split(" "))
        for name in ("qbuf-free", "rbs", "rbp", "tot-mem"):
            self.assertGreaterEqual(int(fields[name]), 0)
        return {n: fields[n] for n in self.EXACT_FIELDS}

    def buffer_scenario(self, port):
        out = []
        with Client(port) as a, Client(port) as b:
            out.append(self.fields(a.call("CLIENT", "INFO")))  # qbuf=26 argv-mem=10
            # Pipelined: the SET's reply waits in the output buffer (obl=5) and the query buffer
            # still holds both commands (qbuf=53), as Redis trims it after the whole read.
            a.send(encode_command("SET", "k", "v") + encode_command("CLIENT", "INFO"))
            self.assertEqual(a.read(), "OK")
            out.append(self.fields(a.read()))
            # Asked outside the MULTI: CLIENT LIST's first line may be a client of an earlier
            # test that the server has not yet seen close.
            a_id = a.call("CLIENT", "ID")
            for cmd in (["MULTI"], ["SET", "a", "b"], ["GET", "a"]):
                a.call(*cmd)
            self.assertEqual(a.call("CLIENT", "ID"), "QUEUED")  # queued too: b sees multi=3
            out.append(self.settled(b, a_id))
            self.assertEqual(len(a.call("EXEC")), 3)
            out.append(self.settled(b, a_id))
        return out

    def settled(self, b, a_id):
        """a's fields as b sees them once a's last write completed: Sluice's connection learns
        that its reply left after the client may already have read it (obl drops to 0 then)."""
        deadline = time.monotonic() + 10
        while True:
            fields = self.fields(b.call("CLIENT", "LIST", "ID", str(a_id)))
            if fields["obl"] == "0" or time.monotonic() > deadline:
                return fields
            time.sleep(0.01)

    def test_client_list_buffer_fields(self):
        self.assertEqual(self.buffer_scenario(self.sluice.port),
                         self.buffer_scenario(self.redis.port))

    def test_unread_replies_fill_omem(self):
        """A client that does not read its large replies: the pending bytes beyond the first
        16 KB show as omem (and oll blocks), on both servers."""
        for port in (self.sluice.port, self.redis.port):
            with Client(port) as a, Client(port) as b:
                a.call("SET", "big", "x" * (1 << 20))
                a_id = a.call("CLIENT", "ID")
                a.send(encode_command("GET", "big") * 16)
                deadline = time.monotonic() + 30
                while True:
                    fields = dict(f.split("=", 1) for f in b.call(
                        "CLIENT", "LIST", "ID", str(a_id)).decode().strip().split(" "))
                    if int(fields["omem"]) > 0:
                        break
                    self.assertLess(time.monotonic(), deadline, fields)
                    time.sleep(0.01)
                self.assertEqual(fields["obl"], str(16 * 1024) if port == self.sluice.port
                                 else fields["obl"])
                self.assertGreater(int(fields["oll"]), 0)
                self.assertGreater(int(fields["tot-mem"]), int(fields["omem"]))

    def test_object_idletime(self):
        """Both servers get the same commands around one wait of 2.5 s: the idle times agree
        (a key touched after the wait: under 2 s; one only TTL/TYPE/EXISTS/OBJECT looked at:
        at least 2 s)."""
        ports = (self.sluice.port, self.redis.port)
        clients = [Client(p) for p in ports]
        for c in clients:
            self.addCleanup(c.close)
            c.call("FLUSHALL")
            for key in ("plain", "read", "script", "multi", "written", "touched", "moved"):
                c.call("SET", key, "v")
        time.sleep(2.5)
        for c in clients:
            for cmd in (["TTL", "plain"], ["PTTL", "plain"], ["TYPE", "plain"],
                        ["EXISTS", "plain"], ["OBJECT", "ENCODING", "plain"],
                        ["EXPIRETIME", "plain"], ["GET", "read"], ["TOUCH", "touched"],
                        ["EVAL", "return redis.call('strlen', KEYS[1])", "1", "script"],
                        ["MULTI"], ["GET", "multi"], ["EXEC"], ["APPEND", "written", "x"]):
                c.call(*cmd)
        results = []
        for c in clients:
            got = {}
            for key in ("plain", "read", "script", "multi", "written", "touched"):
                idle = c.call("OBJECT", "IDLETIME", key)
                got[key] = idle >= 2
            got["missing"] = c.call("OBJECT", "IDLETIME", "nope")
            c.call("MOVE", "moved", "1")
            c.call("SELECT", "1")
            got["moved"] = c.call("OBJECT", "IDLETIME", "moved") >= 2
            c.call("SELECT", "0")
            c.call("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu")
            got["lfu"] = c.call("OBJECT", "IDLETIME", "plain")
            c.call("CONFIG", "SET", "maxmemory-policy", "noeviction")
            results.append(got)
        self.assertEqual(results[0], results[1])
        self.assertEqual(results[0]["plain"], True)
        self.assertEqual(results[0]["read"], False)

    def test_expire_cycle_latency_event(self):
        """200,000 keys expiring together keep the expiry cycle busy up to its time cap (25 ms
        in both servers): over a threshold of 20 ms, LATENCY LATEST shows expire-cycle."""
        for port in (self.sluice.port, self.redis.port):
            with Client(port) as c:
                c.call("FLUSHALL")
                self.assertEqual(c.call("CONFIG", "SET", "latency-monitor-threshold", "20"), "OK")
                c.call("LATENCY", "RESET")
                c.call("EVAL", "for i=1,200000 do redis.call('set','k'..i,'v','px',200) end", "0")
                deadline = time.monotonic() + 60
                while c.call("DBSIZE") != 0:
                    self.assertLess(time.monotonic(), deadline)
                    time.sleep(0.05)
                events = [e[0] for e in c.call("LATENCY", "LATEST")]
                self.assertIn(b"expire-cycle", events, port)
                history = c.call("LATENCY", "HISTORY", "expire-cycle")
                self.assertGreaterEqual(history[-1][1], 20)
                c.call("CONFIG", "SET", "latency-monitor-threshold", "0")
                c.call("LATENCY", "RESET")


def refused(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        return False
    except ConnectionRefusedError:
        return True


@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class ListenerDifferentialTest(BlackboxTestCase):
    """Each server moves its own listener: a pair of its own, so the other tests keep theirs."""
    maxDiff = None

    def setUp(self):
        self.sluice, self.redis = start_beside_reference()
        self.addCleanup(self.sluice.stop)
        self.addCleanup(self.redis.stop)

    def scenario(self, server):
        out = []
        port = server.port
        with Client(port) as held:
            # A port in use: Redis's error, the old listener kept, nothing of the CONFIG SET.
            with socket.socket() as busy:
                busy.bind(("127.0.0.1", 0))
                busy.listen()
                out.append(held.call("CONFIG", "SET", "maxmemory", "10000001", "port",
                                     str(busy.getsockname()[1]), "client-query-buffer-limit",
                                     "10m"))
            out.append(held.call("CONFIG", "GET", "maxmemory"))
            with Client(port) as c:
                out.append(c.call("PING"))
            out.append(held.call("CONFIG", "SET", "port", str(port)))  # unchanged: nothing to do
            moved = free_port()
            out.append(held.call("CONFIG", "SET", "port", str(moved)))
            out.append(held.call("CONFIG", "GET", "port") == [b"port", str(moved).encode()])
            out.append(held.call("PING"))  # the connection stays
            out.append(refused(port))
            with Client(moved) as c:
                out.append(c.call("INFO", "server").split(b"tcp_port:")[1].split(b"\r\n")[0]
                           == str(moved).encode())
                out.append(c.call("CONFIG", "SET", "bind", "127.0.0.1 -::1"))
                out.append(c.call("CONFIG", "GET", "bind"))
                out.append(c.call("CONFIG", "SET", "bind", "192.0.2.1"))
                out.append(c.call("CONFIG", "GET", "bind"))
                out.append(c.call("PING"))
                out.append(c.call("CONFIG", "SET", "port", "99999"))
                out.append(c.call("CONFIG", "SET", "port", str(port)))
            with Client(port) as c:
                out.append(c.call("PING"))
            out.append(refused(moved))
            out.append(held.call("PING"))
        return out

    def test_config_set_port_and_bind(self):
        self.assertEqual(self.scenario(self.sluice), self.scenario(self.redis))


if __name__ == "__main__":
    unittest.main()


class ModuleCommandTest(BlackboxTestCase):
    """enable-module-command lets MODULE LOAD be tried (loopback clients only with "local"); it
    then fails as a module Redis cannot load fails (Sluice loads none), and the log says why."""

    def test_load_allowed_then_failing(self):
        for mode in ("yes", "local"):
            server = Server(options={"enable-module-command": mode})
            self.addCleanup(server.stop)
            server.start()
            with Client(server.port) as c:
                self.assertEqual(c.call("MODULE", "LOAD", "/tmp/x.so"), RespError(
                    "ERR Error loading the extension. Please check the server logs."))
                self.assertEqual(c.call("MODULE", "UNLOAD", "x"), RespError(
                    "ERR Error unloading module: no such module with that name"))
                self.assertEqual(c.call("MODULE", "LIST"), [])
            self.assertIn("Sluice does not load Redis modules", server.log())
