"""Redis 7.0's config parameters, CONFIG REWRITE and the introspection commands (LATENCY, MEMORY,
XINFO STREAM FULL, XINFO/XGROUP HELP, INFO's dirty counter) side by side with a real
redis-server 7.0.15: raw replies compared byte for byte in RESP2 and RESP3 where they are
deterministic; CONFIG REWRITE's file read back and a server started from it."""
import os
import time
import unittest

from harness import IS_REDIS, BlackboxTestCase, Client, Server, encode_command, sluice_only
from test_transactions import BesideReference, read_raw_reply

# Sluice's own options and the options other rooms own (replication, TLS) or whose values
# differ by design (Sluice's defaults, paths, the reference's startup options).
NOT_COMPARED = {
    "port", "bind", "dir", "pidfile", "logfile", "daemonize", "enable-debug-command",
    "io-threads", "unixsocket", "supervised", "always-show-logo", "set-proc-title",
    "proc-title-template",
    "save", "appendonly",  # Sluice's own values: no scheduled saves, always durable
}


def owned_elsewhere(name):
    return (name in ("replicaof", "slaveof", "masterauth", "masteruser")
            or name.startswith(("repl-", "replica-", "slave-", "min-replicas", "min-slaves",
                                "tls-")))


CONFIG_CASES = [
    ["CONFIG", "GET", "list-max-ziplist-size", "list-max-listpack-size", "stream-node-max-*"],
    ["CONFIG", "SET", "list-max-ziplist-size", "4"], ["CONFIG", "GET", "list-max-*"],
    ["CONFIG", "SET", "stream-node-max-entries", "10", "stream-node-max-bytes", "1kb"],
    ["CONFIG", "GET", "stream-node-max-entries", "stream-node-max-bytes"],
    ["CONFIG", "SET", "hash-max-ziplist-entries", "64", "zset-max-ziplist-value", "32"],
    ["CONFIG", "GET", "hash-max-listpack-entries", "zset-max-listpack-value"],
    ["CONFIG", "SET", "set-max-intset-entries", "-1"],
    ["CONFIG", "SET", "maxmemory", "1gb", "maxmemory-policy", "allkeys-LRU"],
    ["CONFIG", "GET", "maxmemory", "maxmemory-policy", "maxmemory-samples"],
    ["CONFIG", "SET", "maxmemory-policy", "nope"], ["CONFIG", "SET", "maxmemory", "lots"],
    ["CONFIG", "SET", "maxmemory-clients", "10%"], ["CONFIG", "GET", "maxmemory-clients"],
    ["CONFIG", "SET", "maxmemory-clients", "101%"], ["CONFIG", "SET", "maxmemory-clients", "x"],
    ["CONFIG", "SET", "save", "900 1 300 10"], ["CONFIG", "GET", "save"],
    ["CONFIG", "SET", "save", "900"], ["CONFIG", "SET", "save", "0 1"],
    ["CONFIG", "SET", "save", ""], ["CONFIG", "GET", "save"],
    ["CONFIG", "SET", "appendonly", "maybe"], ["CONFIG", "SET", "activerehashing", "no"],
    ["CONFIG", "GET", "activerehashing"], ["CONFIG", "SET", "hz", "x"],
    ["CONFIG", "SET", "hz", "20", "lfu-log-factor", "-1"], ["CONFIG", "GET", "hz"],
    ["CONFIG", "SET", "databases", "4"], ["CONFIG", "SET", "unixsocketperm", "700"],
    ["CONFIG", "SET", "dbfilename", "x.rdb"], ["CONFIG", "SET", "dir", "/tmp"],
    ["CONFIG", "SET", "shutdown-on-sigint", "nosave now"], ["CONFIG", "GET", "shutdown-on-sig*"],
    ["CONFIG", "SET", "shutdown-on-sigterm", "save nosave"],
    ["CONFIG", "SET", "oom-score-adj", "relative"], ["CONFIG", "GET", "oom-score-adj"],
    ["CONFIG", "SET", "oom-score-adj-values", "0 100"],
    ["CONFIG", "SET", "oom-score-adj-values", "0 100 3000"],
    ["CONFIG", "SET", "latency-tracking-info-percentiles", "50 99.90 100"],
    ["CONFIG", "GET", "latency-tracking-info-percentiles"],
    ["CONFIG", "SET", "latency-tracking-info-percentiles", "101"],
    ["CONFIG", "SET", "cluster-announce-hostname", "bad_host"],
    ["CONFIG", "SET", "loglevel", "loud"], ["CONFIG", "SET", "active-defrag-cycle-max", "100"],
    ["CONFIG", "SET", "hz", "1", "hz", "2"], ["CONFIG", "SET", "nosuch", "1", "hz", "x"],
    ["CONFIG", "SET", "hz", "5", "nosuch", "1"], ["CONFIG", "GET", "hz"],
    ["CONFIG", "GET", "key-load-delay"], ["CONFIG", "GET", "key-load-*"],
    ["CONFIG", "GET", "slave-read-only", "replica-read-only"],
    ["CONFIG", "SET", "latency-monitor-threshold", "abc"],
    ["CONFIG", "SET", "latency-monitor-threshold", "0"],
    ["CONFIG", "REWRITE"], ["CONFIG", "HELP"],
]

INTROSPECTION_CASES = [
    ["LATENCY", "HELP"], ["LATENCY", "LATEST"], ["LATENCY", "HISTORY", "command"],
    ["LATENCY", "RESET"], ["LATENCY", "RESET", "command", "x"], ["LATENCY", "GRAPH", "command"],
    ["LATENCY", "DOCTOR"], ["LATENCY", "BOGUS"], ["LATENCY", "HISTORY"],
    ["MEMORY", "HELP"], ["MEMORY", "USAGE", "nokey"], ["SET", "k", "v"],
    ["MEMORY", "USAGE", "k", "SAMPLES"], ["MEMORY", "USAGE", "k", "SAMPLES", "-1"],
    ["MEMORY", "USAGE", "k", "SAMPLES", "x"], ["MEMORY", "USAGE", "k", "FOO", "1"],
    ["MEMORY", "PURGE"], ["MEMORY", "BOGUS"], ["MEMORY", "USAGE"], ["PFSELFTEST"],
    ["XINFO", "HELP"], ["XGROUP", "HELP"], ["XINFO", "HELP", "x"],
    ["XADD", "s", "1-1", "a", "1"], ["XADD", "s", "2-1", "b", "2"], ["XADD", "s", "3-1", "c", "3"],
    ["XGROUP", "CREATE", "s", "g1", "0"], ["XGROUP", "CREATE", "s", "g2", "$"],
    ["XINFO", "STREAM", "s", "FULL"], ["XINFO", "STREAM", "s", "FULL", "COUNT", "1"],
    ["XINFO", "STREAM", "s", "FULL", "COUNT", "0"], ["XINFO", "STREAM", "s", "FULL", "COUNT", "-5"],
    ["XINFO", "STREAM", "s", "FULL", "COUNT"], ["XINFO", "STREAM", "s", "FULL", "LIMIT", "1"],
    ["XINFO", "STREAM", "s", "FULL", "COUNT", "x"], ["XINFO", "STREAM", "nokey", "FULL"],
    ["XINFO", "STREAM", "s", "PARTIAL"],
    ["XDEL", "s", "2-1"], ["XINFO", "STREAM", "s", "FULL"],
    ["EVAL", "return redis.call('xread','block',0,'streams','s','$')", "0"],
    ["EVAL", "return redis.call('XREADGROUP','group','g1','c','BLOCK','10','streams','s','>')",
     "0"],
    ["EVAL", "return redis.call('xread','count','x','block',0,'streams','s','$')", "0"],
    ["MULTI"], ["XREAD", "BLOCK", "0", "STREAMS", "s", "$"], ["EXEC"],
    ["CONFIG", "SET", "stream-node-max-entries", "100"],
]


@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class ConfigDifferentialTest(BesideReference):
    maxDiff = None

    def play(self, port, commands, proto):
        with Client(port) as c:
            if proto == 3:
                self.assertEqual(c.call("HELLO", "3")[b"proto"], 3)
            c.send(b"".join(encode_command(*cmd) for cmd in commands + [["PING", "end"]]))
            out = []
            while True:
                raw = read_raw_reply(c)
                out.append(raw)
                if raw.endswith(b"end\r\n"):
                    return out

    def reset(self, port):
        """Both servers back to Redis's defaults for what the cases change."""
        with Client(port) as c:
            c.call("FLUSHALL")
            c.call("CONFIG", "SET", "list-max-listpack-size", "-2", "stream-node-max-entries",
                   "100", "stream-node-max-bytes", "4096", "hash-max-listpack-entries", "512",
                   "zset-max-listpack-value", "64", "maxmemory", "0", "maxmemory-policy",
                   "noeviction", "maxmemory-clients", "0", "save", "", "hz", "10",
                   "shutdown-on-sigint", "default", "oom-score-adj", "no",
                   "latency-tracking-info-percentiles", "50 99 99.9", "activerehashing", "yes",
                   "latency-monitor-threshold", "0")
            c.call("LATENCY", "RESET")

    @staticmethod
    def comparable(cmd, raw):
        """CONFIG GET's pairs come in Redis's hash-table order: compared as a sorted list."""
        if [w.upper() for w in cmd[:2]] != ["CONFIG", "GET"] or raw[:1] not in (b"*", b"%"):
            return raw
        parts = raw.split(b"\r\n")
        values = parts[1:-1]
        pairs = sorted(zip(values[0::4], values[1::4], values[2::4], values[3::4]))
        return parts[0] + b"".join(b"".join(p) for p in pairs)

    def check(self, commands):
        for proto in (2, 3):
            self.reset(self.redis.port)
            self.reset(self.sluice.port)
            want = self.play(self.redis.port, commands, proto)
            got = self.play(self.sluice.port, commands, proto)
            self.assertEqual(len(got), len(want), "RESP%d" % proto)
            for i, (g, w) in enumerate(zip(got, want)):
                cmd = commands[i] if i < len(commands) else ["PING"]
                self.assertEqual(self.comparable(cmd, g), self.comparable(cmd, w),
                                 "RESP%d reply #%d: %r" % (proto, i, cmd))

    def test_config_get_set_errors(self):
        self.check(CONFIG_CASES)

    def test_introspection(self):
        self.check(INTROSPECTION_CASES)

    def test_every_redis_parameter_is_known_with_its_default(self):
        """Every name Redis's CONFIG GET * shows (less the other rooms' options) answers on
        Sluice, with Redis's value."""
        with Client(self.redis.port) as r, Client(self.sluice.port) as s:
            want = r.call("CONFIG", "GET", "*")
            pairs = dict(zip(want[0::2], want[1::2]))
            got = s.call("CONFIG", "GET", "*")
            sluice_pairs = dict(zip(got[0::2], got[1::2]))
            checked = 0
            for name, value in sorted(pairs.items()):
                key = name.decode()
                if owned_elsewhere(key):
                    continue
                with self.subTest(name=key):
                    self.assertIn(name, sluice_pairs)
                    if key not in NOT_COMPARED:
                        self.assertEqual(sluice_pairs[name], value)
                        checked += 1
            self.assertGreater(checked, 120)

    def test_dirty_counter(self):
        """rdb_changes_since_last_save moves as Redis's (unit/bitops's dirty test)."""
        steps = [[["SETBIT", "foo", "0", "0"], ["BITFIELD", "foo2", "SET", "i5", "0", "0"]],
                 [["SETBIT", "foo", "0", "0"], ["BITFIELD", "foo2", "SET", "i5", "0", "0"]],
                 [["SETBIT", "foo", "0", "1"], ["SETBIT", "foo", "0", "1"],
                  ["SETBIT", "foo", "0", "0"], ["SETBIT", "foo", "0", "0"]],
                 [["SET", "a", "1"], ["INCR", "a"], ["DEL", "a", "nokey"], ["GET", "a"]],
                 [["SETBIT", "foo", "90", "0"]]]

        def deltas(port):
            out = []
            with Client(port) as c:
                c.call("FLUSHALL")

                def dirty():
                    for line in c.call("INFO", "persistence").decode().split("\r\n"):
                        if line.startswith("rdb_changes_since_last_save:"):
                            return int(line.split(":")[1])
                    raise AssertionError("no rdb_changes_since_last_save")
                before = dirty()
                for step in steps:
                    for cmd in step:
                        c.call(*cmd)
                    now = dirty()
                    out.append(now - before)
                    before = now
            return out
        self.assertEqual(deltas(self.sluice.port), deltas(self.redis.port))


class SwapDbWakeTest(BlackboxTestCase):
    def test_swapdb_wakes_clients_blocked_on_keys_of_both_dbs(self):
        """A BLPOP in db 0 and an XREAD in db 1 are served by SWAPDB bringing their keys in, as
        Redis 7.0 does; a client whose key is in neither stays blocked."""
        server = Server()
        self.addCleanup(server.stop)
        server.start()
        with Client(server.port) as a, Client(server.port) as b, Client(server.port) as c, \
                Client(server.port) as admin:
            a.send(encode_command("BLPOP", "k", "5"))
            b.call("SELECT", "1")
            b.send(encode_command("XREAD", "BLOCK", "5000", "STREAMS", "s", "0"))
            c.send(encode_command("BLPOP", "other", "1"))
            deadline = time.monotonic() + 10
            while b"blocked_clients:3" not in admin.call("INFO", "clients"):
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.01)
            admin.call("SELECT", "1")
            admin.call("RPUSH", "k", "a")
            admin.call("SELECT", "0")
            admin.call("XADD", "s", "1-1", "f", "v")
            self.assertEqual(admin.call("SWAPDB", "0", "1"), "OK")
            self.assertEqual(a.read(), [b"k", b"a"])
            self.assertEqual(b.read(), [[b"s", [[b"1-1", [b"f", b"v"]]]]])
            self.assertEqual(c.read(), None)


@sluice_only
class ConfigRewriteTest(BlackboxTestCase):
    def test_rewrite_keeps_the_file_and_a_server_starts_from_it(self):
        text = ("# my settings\n"
                "maxmemory 10mb\n"
                "\n"
                "slave-read-only yes\n"
                "hash-max-ziplist-entries 64\n"
                "save 900 1\n"
                "save 300 10\n"
                "timeout 5\n")
        server = Server(config_text=text)
        self.addCleanup(server.stop)
        server.start()
        with Client(server.port) as c:
            self.assertEqual(c.call("CONFIG", "SET", "maxmemory", "2gb", "timeout", "0",
                                    "list-max-ziplist-size", "8", "save", "60 5"), "OK")
            self.assertEqual(c.call("CONFIG", "REWRITE"), "OK")
        conf = os.path.join(server.workdir, "sluice.conf")
        with open(conf) as f:
            written = f.read()
        lines = written.split("\n")
        self.assertEqual(lines[:8], ["# my settings", "maxmemory 2gb", "", "replica-read-only yes",
                                     "hash-max-listpack-entries 64", "save 60 5", "", "timeout 0"])
        self.assertIn("# Generated by CONFIG REWRITE", lines)
        self.assertIn("list-max-listpack-size 8", lines)
        port_line = "port %d" % server.port
        self.assertIn(port_line, lines)
        server.stop()
        # The rewritten file starts a server with the same settings.
        again = Server(config_text=written)  # its own data dir (the flag overrides the file's)
        self.addCleanup(again.stop)
        again.port = server.port
        again.start()
        with Client(again.port) as c:
            self.assertEqual(c.call("CONFIG", "GET", "maxmemory", "list-max-listpack-size",
                                    "save", "hash-max-listpack-entries"),
                             [b"maxmemory", b"2147483648", b"list-max-listpack-size", b"8",
                              b"save", b"60 5", b"hash-max-listpack-entries", b"64"])

    def test_rewrite_writes_acl_users_without_an_aclfile(self):
        server = Server(config_text="# users\nuser old on nopass ~* +@all\n")
        self.addCleanup(server.stop)
        server.start()
        with Client(server.port) as c:
            self.assertEqual(c.call("ACL", "DELUSER", "old"), 1)
            self.assertEqual(c.call("ACL", "SETUSER", "bob", "on", ">pw", "~k*", "+get"), "OK")
            self.assertEqual(c.call("CONFIG", "REWRITE"), "OK")
            users = [u.decode() for u in c.call("ACL", "LIST")]
        with open(os.path.join(server.workdir, "sluice.conf")) as f:
            written = f.read()
        lines = written.split("\n")
        self.assertEqual([ln for ln in lines if ln.startswith("user ")], users)
        self.assertEqual(lines[1], users[0])  # in place of the old user line
        server.stop()
        again = Server(config_text=written)  # the rewritten file starts a server with the users
        self.addCleanup(again.stop)
        again.port = server.port
        again.start()
        with Client(again.port) as c:
            # Loading a user starts from `reset`, which adds sanitize-payload (as in Redis).
            loaded = [u.decode().replace(" sanitize-payload", "") for u in c.call("ACL", "LIST")]
            self.assertEqual(loaded, users)

    def test_no_config_file(self):
        server = Server()
        self.addCleanup(server.stop)
        server.start()
        with Client(server.port) as c:
            self.assertEqual(c.call("CONFIG", "REWRITE"),
                             "ERR The server is running without a config file")

    def test_latency_records_slow_commands(self):
        server = Server()
        self.addCleanup(server.stop)
        server.start()
        with Client(server.port) as c:
            self.assertEqual(c.call("CONFIG", "SET", "latency-monitor-threshold", "1"), "OK")
            c.call("EVAL", "local i = 0 while i < 20000000 do i = i + 1 end return i", "0")
            latest = c.call("LATENCY", "LATEST")
            self.assertEqual([e[0] for e in latest], [b"command"])
            self.assertGreaterEqual(latest[0][2], 1)
            history = c.call("LATENCY", "HISTORY", "command")
            self.assertEqual(len(history), 1)
            self.assertTrue(c.call("LATENCY", "GRAPH", "command").startswith(b"command - high"))
            self.assertIn(b"1. command: 1 latency spikes", c.call("LATENCY", "DOCTOR"))
            self.assertEqual(c.call("LATENCY", "RESET"), 1)
            self.assertEqual(c.call("LATENCY", "LATEST"), [])
            c.call("RPUSH", "l", *[str(i) for i in range(100)])
            usage = c.call("MEMORY", "USAGE", "l")
            self.assertGreater(usage, 300)
            self.assertLess(usage, 5000)
            stats = c.call("MEMORY", "STATS")
            self.assertIn(b"keys.count", stats)


# Redis 7.0.15's config.c aliases (old name -> name).
ALIASES = {
    "slave-lazy-flush": "replica-lazy-flush", "slave-serve-stale-data": "replica-serve-stale-data",
    "slave-read-only": "replica-read-only", "slave-ignore-maxmemory": "replica-ignore-maxmemory",
    "slave-announce-ip": "replica-announce-ip", "slave-announce-port": "replica-announce-port",
    "slave-priority": "replica-priority", "repl-ping-slave-period": "repl-ping-replica-period",
    "min-slaves-to-write": "min-replicas-to-write", "min-slaves-max-lag": "min-replicas-max-lag",
    "slaveof": "replicaof", "lua-time-limit": "busy-reply-threshold",
    "cluster-slave-no-failover": "cluster-replica-no-failover",
    "cluster-slave-validity-factor": "cluster-replica-validity-factor",
    "list-max-ziplist-size": "list-max-listpack-size",
    "hash-max-ziplist-entries": "hash-max-listpack-entries",
    "hash-max-ziplist-value": "hash-max-listpack-value",
    "zset-max-ziplist-entries": "zset-max-listpack-entries",
    "zset-max-ziplist-value": "zset-max-listpack-value",
}


@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class AliasAndStreamNodeTest(BesideReference):
    """Redis's old parameter names, and stream-node-max-* acting on XADD's nodes, side by side
    with redis-server."""
    maxDiff = None

    def both(self, scenario):
        results = [scenario(port) for port in (self.sluice.port, self.redis.port)]
        self.assertEqual(results[0], results[1])
        return results[0]

    def test_every_alias_reads_and_writes_its_option(self):
        def scenario(port):
            with Client(port) as c:
                got = {a: c.call("CONFIG", "GET", a) for a in ALIASES}
                pattern = c.call("CONFIG", "GET", "*slave*")
                pairs = sorted(zip(pattern[::2], pattern[1::2]))
                steps = [c.call("CONFIG", "SET", "min-slaves-max-lag", "20", "slave-priority",
                                "7", "slave-lazy-flush", "yes"),
                         c.call("CONFIG", "GET", "min-replicas-max-lag"),
                         c.call("CONFIG", "GET", "replica-priority"),
                         c.call("CONFIG", "GET", "replica-lazy-flush"),
                         c.call("CONFIG", "SET", "slave-priority", "x"),
                         c.call("CONFIG", "SET", "min-slaves-max-lag", "10", "slave-priority",
                                "100", "slave-lazy-flush", "no")]
                return got, pairs, steps
        got, pairs, _ = self.both(scenario)
        self.assertEqual(got["slave-priority"], [b"slave-priority", b"100"])
        self.assertIn((b"min-slaves-max-lag", b"10"), pairs)

    def test_stream_node_limits_decide_what_approximate_trims_remove(self):
        def scenario(port):
            out = []
            with Client(port) as c:
                c.call("FLUSHALL")
                for entries, size in (("3", "4096"), ("0", "60"), ("100", "4096")):
                    c.call("DEL", "s")
                    out.append(c.call("CONFIG", "SET", "stream-node-max-entries", entries,
                                      "stream-node-max-bytes", size))
                    for i in range(1, 21):
                        c.call("XADD", "s", "%d-1" % i, "field", "value%d" % i)
                    out.append(c.call("XTRIM", "s", "MAXLEN", "~", "7"))
                    out.append(c.call("XLEN", "s"))
                    out.append(c.call("XRANGE", "s", "-", "+", "COUNT", "1"))
            return out
        out = self.both(scenario)
        self.assertNotEqual(out[2], out[8])  # 3-entry nodes trim, 100-entry ones do not



if __name__ == "__main__":
    unittest.main()
