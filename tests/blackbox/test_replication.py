"""Replication on Redis's protocol (docs/replication.md): a Sluice primary with Sluice replicas
(full sync of every type, streams with their groups and limiter state, the stream, partial
resync after SIGSTOP), a real
redis-server 7.0.15 replicating from Sluice, the user surface (ROLE, INFO, READONLY, WAIT,
NOREPLICAS, CLIENT KILL TYPE), and real redis-sentinel processes failing over between Sluice
nodes (kill -9 of the primary, SENTINEL FAILOVER, redis-py's Sentinel writing through)."""

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import unittest

from harness import IS_REDIS, REDIS_CLI, Server, free_port, DIE_WITH_TEST
from test_transactions import import_redis_py

redis = import_redis_py()  # redis-py (Debian's python3-redis where this Python lacks it)
import redis.sentinel  # noqa: E402

REDIS_SERVER = shutil.which("redis-server")
REDIS_SENTINEL = shutil.which("redis-sentinel")


def conn(server_or_port):
    port = server_or_port if isinstance(server_or_port, int) else server_or_port.port
    return redis.Redis(host="127.0.0.1", port=port, socket_timeout=20)


def info(r, section="replication"):
    return r.info(section)


def cli(port, *args):
    return subprocess.run([REDIS_CLI, "-p", str(port)] + [str(a) for a in args],
                          capture_output=True, text=True).stdout


def stopped(pid):
    """Every thread of pid is stopped (SIGSTOP reaches a busy thread a little later)."""
    for task in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/stat" % (pid, task)) as f:
            if f.read().rsplit(")", 1)[1].split()[0] != "T":
                return False
    return True


def wait_for(pred, timeout=60.0, what="condition"):
    end = time.monotonic() + timeout
    last = None
    while time.monotonic() < end:
        try:
            last = pred()
            if last:
                return last
        except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError) as e:
            last = e
        time.sleep(0.05)
    raise AssertionError("timed out waiting for %s (last: %r)" % (what, last))


def in_sync(primary, *replicas):
    """The replicas' applied offsets equal the primary's stream offset."""
    p = info(conn(primary))["master_repl_offset"]
    for r in replicas:
        i = info(conn(r))
        if i.get("master_link_status") != "up" or i.get("slave_repl_offset") != p:
            return False
    return True


def snapshot(r, with_limiters=True):
    """Every key of db 0..1: (type, DUMP or None, PEXPIRETIME)."""
    out = {}
    for db in (0, 1):
        c = redis.Redis(host="127.0.0.1", port=r.connection_pool.connection_kwargs["port"], db=db)
        for key in c.scan_iter(count=1000):
            t = c.type(key)
            if t == b"none":
                continue  # expired between SCAN and now
            try:
                d = c.dump(key)
            except redis.ResponseError:
                d = None  # a limiter state (no Redis form): compared by type and TTL
            out[(db, key)] = (t, d, c.pexpiretime(key))
    return out


def fill(r, n):
    """n keys of every Redis type and every limiter kind, some with TTLs, in db 0 and 1."""
    p = r.pipeline(transaction=False)
    for i in range(n):
        p.set("s:%d" % i, "v%d" % i)
        p.hset("h:%d" % i, mapping={"a": i, "b": "x" * (i % 7)})
        p.rpush("l:%d" % i, *range(i % 5 + 1))
        p.sadd("set:%d" % i, *["m%d" % j for j in range(i % 4 + 1)])
        p.zadd("z:%d" % i, {"a": i, "b": i * 0.5})
        if i % 3 == 0:
            p.pexpire("s:%d" % i, 600000)
        p.execute_command("GCRA.TAKE", "gcra:%d" % i, 10, "1h")
        if i % 10 == 0:
            p.execute_command("LEAKY.TAKE", "leaky:%d" % i, 10, "1h")
            p.execute_command("SLIDING.TAKE", "sliding:%d" % i, 10, "60s")
            p.execute_command("WINDOW.TAKE", "window:%d" % i, 10, "60s")
            p.execute_command("CONC.ACQUIRE", "conc:%d" % i, 5, "60s")
        if len(p) > 2000:
            p.execute()
    p.execute()
    one = redis.Redis(host="127.0.0.1", port=r.connection_pool.connection_kwargs["port"], db=1)
    one.set("db1:key", "x")
    one.hset("db1:hash", "f", "v")
    add_streams(r, "x")
    add_streams(one, "db1:x")


def add_streams(r, prefix):
    """Streams of several nodes with a group, pending entries, an idle consumer and a deleted
    entry, and an empty stream holding a group: a full sync carries them whole."""
    for i in range(3):
        key = "%s:%d" % (prefix, i)
        for j in range(150):
            r.xadd(key, {"a": j, "b": "v" * (j % 50)} if j % 7 else {"other": j})
        r.xgroup_create(key, "g", id="0")
        r.xreadgroup("g", "c1", {key: ">"}, count=5)
        r.xreadgroup("g", "c2", {key: ">"}, count=3)
        r.xgroup_createconsumer(key, "g", "idle")
        r.xdel(key, r.xrange(key, count=2)[1][0])
    r.xgroup_create(prefix + ":empty", "g", id="$", mkstream=True)


def writes(r):
    """The rewritten commands: each must reach the replicas as its effect."""
    r.set("w:ex", "v", ex=100)
    r.set("w:px", "v", px=100000)
    r.setex("w:setex", 100, "v")
    r.expire("s:1", 500)
    r.incrbyfloat("w:float", 1.5)
    r.sadd("w:spop", "a", "b", "c", "d")
    r.spop("w:spop")
    r.rpush("w:list", "a", "b")
    r.blpop("w:list", 1)
    r.hincrbyfloat("w:hf", "f", 2.25)
    r.incr("w:counter")
    r.delete("s:2", "h:2")
    r.getex("s:4", ex=1000)
    for i in range(20):
        r.execute_command("GCRA.TAKE", "gcra:%d" % i, 10, "1h")
        r.execute_command("CL.THROTTLE", "cl:%d" % i, 5, 10, 3600)
    r.execute_command("LEAKY.TAKE", "leaky:0", 10, "1h")
    r.execute_command("SLIDING.TAKE", "sliding:0", 10, "60s")
    r.execute_command("LIMITS.TAKE", "LIMIT", "lt:a", "GCRA", 10, "1h", "LIMIT", "lt:b", "WINDOW",
                      10, "60s")
    with r.pipeline(transaction=True) as p:
        p.set("w:multi1", "1")
        p.incr("w:multi2")
        p.lpush("w:multi3", "x")
        p.execute()
    r.eval("redis.call('set', KEYS[1], ARGV[1]); redis.call('incrby', KEYS[2], 5)", 2,
           "w:lua1", "w:lua2", "hello")
    r.eval("return redis.call('spop', KEYS[1])", 1, "set:5")
    one = redis.Redis(host="127.0.0.1", port=r.connection_pool.connection_kwargs["port"], db=1)
    one.set("db1:later", "y")
    one.delete("db1:key")


def keyspace_counts(c):
    """INFO keyspace's keys and expires per database (avg_ttl left out: an estimate)."""
    return {db: (v["keys"], v["expires"]) for db, v in c.info("keyspace").items()}


@unittest.skipIf(IS_REDIS, "Sluice's replication")
class ReplicationTest(unittest.TestCase):
    def assertSnapshotEqual(self, got, want):
        missing = sorted(set(want) - set(got))[:5]
        extra = sorted(set(got) - set(want))[:5]
        differ = sorted(k for k in want if k in got and got[k] != want[k])[:5]
        if missing or extra or differ:
            self.fail("replica differs: missing %r, extra %r, differ %r" % (
                missing, extra, [(k, got[k], want[k]) for k in differ]))

    def start(self, options=None, config_text=None):
        s = Server(options=options, config_text=config_text)
        s.start()
        self.addCleanup(s.stop)
        return s

    def test_full_sync_stream_and_surface(self):
        primary = self.start()
        p = conn(primary)
        fill(p, 2000)
        r1 = self.start()
        r2 = self.start()
        t0 = time.monotonic()
        for r in (r1, r2):
            self.assertEqual(conn(r).execute_command("REPLICAOF", "127.0.0.1", primary.port),
                             b"OK")
        wait_for(lambda: in_sync(primary, r1, r2), what="full sync")
        print("full sync of %d keys to 2 replicas: %.2fs" % (conn(primary).dbsize(),
                                                             time.monotonic() - t0))
        writes(p)
        wait_for(lambda: in_sync(primary, r1, r2), what="stream")
        want = snapshot(p)
        self.assertGreater(len(want), 10000)
        self.assertSnapshotEqual(snapshot(conn(r1)), want)
        self.assertSnapshotEqual(snapshot(conn(r2)), want)
        # The full sync's bulk load counts keys without reading them: INFO keyspace is exact.
        counts = keyspace_counts(p)
        self.assertEqual(keyspace_counts(conn(r1)), counts)
        self.assertEqual(keyspace_counts(conn(r2)), counts)

        # The surface.
        rc = conn(r1)
        with self.assertRaises(redis.ResponseError) as e:
            rc.set("x", "y")
        self.assertEqual(str(e.exception), "You can't write against a read only replica.")
        raw = subprocess.run([REDIS_CLI, "-p", str(r1.port), "SET", "x", "y"],
                             capture_output=True, text=True).stdout.strip()
        self.assertEqual(raw, "READONLY You can't write against a read only replica.")
        # A script's write, and a script that may write (a shebang without no-writes).
        for args in (["EVAL", "return redis.call('set', 'x', 1)", "1", "x"],
                     ["EVAL", "#!lua\nreturn redis.call('get', 'x')", "1", "x"]):
            with self.assertRaises(redis.ResponseError) as e:
                rc.execute_command(*args)
            self.assertTrue(str(e.exception).startswith(
                "You can't write against a read only replica."), e.exception)
        self.assertEqual(rc.execute_command("EVAL", "return redis.call('get', 'x')", "1", "x"),
                         None)
        # Function libraries too (FUNCTION LOAD/DELETE/FLUSH/RESTORE are writes in Redis 7.0).
        for args in (["FUNCTION", "LOAD", "#!lua name=x\nredis.register_function('f', "
                      "function() return 1 end)"], ["FUNCTION", "FLUSH"]):
            with self.assertRaises(redis.ResponseError) as e:
                rc.execute_command(*args)
            self.assertEqual(str(e.exception), "You can't write against a read only replica.")
        role = rc.execute_command("ROLE")
        self.assertEqual(role[0], b"slave")
        self.assertEqual(role[1:4], [b"127.0.0.1", primary.port, b"connected"])
        prole = p.execute_command("ROLE")
        self.assertEqual(prole[0], b"master")
        self.assertEqual(len(prole[2]), 2)
        text = cli(r1.port, "INFO", "replication")
        names = [l.split(":")[0] for l in text.splitlines()[1:] if ":" in l]
        self.assertEqual(names[:11], [
            "role", "master_host", "master_port", "master_link_status",
            "master_last_io_seconds_ago", "master_sync_in_progress", "slave_read_repl_offset",
            "slave_repl_offset", "slave_priority", "slave_read_only", "replica_announced"])
        self.assertEqual(names[11:21], [
            "connected_slaves", "master_failover_state", "master_replid", "master_replid2",
            "master_repl_offset", "second_repl_offset", "repl_backlog_active",
            "repl_backlog_size", "repl_backlog_first_byte_offset", "repl_backlog_histlen"])
        ptext = cli(primary.port, "INFO", "replication")
        for r in (r1, r2):
            self.assertRegex(ptext, r"slave[01]:ip=127\.0\.0\.1,port=%d,state=online,offset=\d+,"
                             r"lag=\d+\n" % r.port)
        self.assertRegex(cli(primary.port, "INFO", "server"), r"run_id:[0-9a-f]{40}\r?\n")
        # CLIENT KILL TYPE normal never cuts a link; the links show as S and M.
        self.assertIn("flags=S", cli(primary.port, "CLIENT", "LIST", "TYPE", "replica"))
        self.assertIn("flags=M", cli(r1.port, "CLIENT", "LIST", "TYPE", "master"))
        p.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
        rc.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
        conn(primary).set("after-kill", "1")
        wait_for(lambda: in_sync(primary, r1, r2), what="stream after CLIENT KILL TYPE normal")
        self.assertEqual(conn(r1).get("after-kill"), b"1")
        self.assertEqual(info(conn(primary), "stats")["sync_full"], 2)
        # WAIT and NOREPLICAS.
        p = conn(primary)
        p.set("wait", "1")
        self.assertEqual(p.execute_command("WAIT", 2, 5000), 2)
        t = time.monotonic()
        self.assertEqual(p.execute_command("WAIT", 3, 300), 2)
        self.assertGreaterEqual(time.monotonic() - t, 0.25)
        with self.assertRaises(redis.ResponseError) as e:
            rc.execute_command("WAIT", 1, 0)
        self.assertTrue(str(e.exception).startswith("WAIT cannot be used with replica instances"))
        p.config_set("min-replicas-to-write", 3)
        with self.assertRaises(redis.ResponseError) as e:
            p.set("x", "y")
        self.assertEqual(str(e.exception), "NOREPLICAS Not enough good replicas to write.")
        self.assertEqual(p.get("wait"), b"1")  # reads still work
        p.config_set("min-replicas-to-write", 2)
        self.assertTrue(p.set("x", "y"))
        p.config_set("min-replicas-to-write", 0)
        # Expiry on the primary reaches the replicas as DEL; replicas never expire by themselves.
        p.set("short", "v", px=300)
        wait_for(lambda: in_sync(primary, r1, r2))
        time.sleep(0.5)
        self.assertIsNone(rc.get("short"))  # logically expired: reads as missing
        wait_for(lambda: p.get("short") is None)
        wait_for(lambda: in_sync(primary, r1, r2))
        self.assertIsNone(conn(r1).execute_command("DUMP", "short"))

    def test_partial_resync_after_sigstop(self):
        primary = self.start({"repl-timeout": "2"})
        p = conn(primary)
        fill(p, 100)
        replica = self.start({"repl-timeout": "2"})
        conn(replica).execute_command("REPLICAOF", "127.0.0.1", primary.port)
        wait_for(lambda: in_sync(primary, replica), what="full sync")
        full = info(p, "stats")["sync_full"]
        replica.proc.send_signal(signal.SIGSTOP)
        try:
            for i in range(200):
                p.set("during:%d" % i, i)
                p.execute_command("GCRA.TAKE", "gcra:1", 10, "1h")
            wait_for(lambda: info(p)["connected_slaves"] == 0, timeout=15,
                     what="primary drops the stopped replica")
        finally:
            replica.proc.send_signal(signal.SIGCONT)
        # The replica may apply the bytes it had before it sees the drop: in sync is not enough.
        wait_for(lambda: info(p, "stats")["sync_partial_ok"] >= 1 and in_sync(primary, replica),
                 what="partial resync")
        stats = info(p, "stats")
        self.assertEqual(stats["sync_full"], full)
        self.assertGreaterEqual(stats["sync_partial_ok"], 1)
        self.assertSnapshotEqual(snapshot(conn(replica)), snapshot(p))

    def test_replica_ack_writes(self):
        primary = self.start({"replica-ack-timeout": "2000"})
        replica = self.start()
        conn(replica).execute_command("REPLICAOF", "127.0.0.1", primary.port)
        wait_for(lambda: in_sync(primary, replica), what="sync")
        p, r = conn(primary), conn(replica)

        def rate():
            pipe = p.pipeline(transaction=False)
            n, end = 0, time.monotonic() + 1.0
            while time.monotonic() < end:
                for i in range(16):
                    pipe.execute_command("GCRA.TAKE", "bench:%d" % (i % 4), 1000000, "1h")
                pipe.execute()
                n += 16
            return n

        plain = rate()
        p.config_set("replica-ack-writes", 1)
        held = rate()
        print("GCRA.TAKE pipeline 16, one client: %d/s async, %d/s with replica-ack-writes 1"
              % (plain, held))
        # Every acknowledged take is already on the replica when its reply arrives.
        for i in range(50):
            p.execute_command("GCRA.TAKE", "acked:%d" % i, 10, "1h")
            self.assertEqual(r.dump("acked:%d" % i), p.dump("acked:%d" % i))
        # A replica that does not answer holds replies for replica-ack-timeout, no longer.
        replica.proc.send_signal(signal.SIGSTOP)
        try:
            wait_for(lambda: stopped(replica.proc.pid), what="replica stopped")
            t = time.monotonic()
            p.set("slow", "1")
            took = time.monotonic() - t
        finally:
            replica.proc.send_signal(signal.SIGCONT)
        self.assertGreaterEqual(took, 1.5)
        self.assertLess(took, 10)

    @unittest.skipIf(REDIS_SERVER is None, "redis-server is not installed")
    def test_redis_server_replicates_from_sluice(self):
        primary = self.start()
        p = conn(primary)
        p.set("a", "1")
        p.hset("h", mapping={"x": "1", "y": "2"})
        p.rpush("l", *range(300))
        p.sadd("s", *range(100))
        p.zadd("z", {"m%d" % i: i for i in range(200)})
        p.set("t", "v", px=500000)
        add_streams(p, "pre")  # in the full sync's RDB
        workdir = tempfile.mkdtemp(prefix="sluice-bb-redis-")
        self.addCleanup(shutil.rmtree, workdir, True)
        port = free_port()
        proc = subprocess.Popen(DIE_WITH_TEST + [
            REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
            "--appendonly", "no", "--dir", workdir, "--replicaof", "127.0.0.1",
            str(primary.port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(proc.wait)
        self.addCleanup(proc.kill)
        rr = conn(port)
        wait_for(lambda: rr.ping(), what="redis-server")
        wait_for(lambda: info(rr)["master_link_status"] == "up", what="redis link")
        writes_redis = [("set", "b", "2"), ("incrbyfloat", "f", "1.5"), ("expire", "a", "900"),
                        ("lpop", "l"), ("spop", "s"), ("zincrby", "z", "5", "m1")]
        for cmd in writes_redis:
            p.execute_command(*cmd)
        p.set("ex", "v", ex=1000)
        p.execute_command("GCRA.TAKE", "g", 10, "1h")  # a string state: plain bytes on Redis
        # Streams as Redis 7.0 takes them: XADD's ID, ~ trims as exact ones, groups as XCLAIM.
        for i in range(20):
            p.xadd("x", {"i": i})
        p.execute_command("XADD", "x", "MAXLEN", "~", "5", "LIMIT", "10", "*", "a", "b")
        p.xgroup_create("x", "g", id="0")
        p.xreadgroup("g", "c1", {"x": ">"}, count=3)
        p.xreadgroup("g", "c2", {"x": ">"}, count=2, noack=True)
        p.xautoclaim("x", "g", "c3", 0, "0-0", count=1)
        wait_for(lambda: info(rr)["slave_repl_offset"] == info(p)["master_repl_offset"],
                 what="redis replica offset")
        want = snapshot(p)
        got = snapshot(rr)
        self.assertEqual(got.keys(), want.keys())
        for k in want:
            self.assertEqual(got[k][0], want[k][0], k)
            self.assertEqual(got[k][2], want[k][2], k)
        self.assertEqual(rr.lrange("l", 0, -1), p.lrange("l", 0, -1))
        self.assertEqual(rr.smembers("s"), p.smembers("s"))
        self.assertEqual(rr.zrange("z", 0, -1, withscores=True),
                         p.zrange("z", 0, -1, withscores=True))
        self.assertEqual(rr.hgetall("h"), p.hgetall("h"))
        self.assertEqual(rr.get("f"), b"1.5")
        self.assertEqual(rr.get("g"), p.get("g"))
        self.assertEqual(rr.xrange("x"), p.xrange("x"))
        raw_p, raw_r = stream_state(p, "x"), stream_state(rr, "x")
        self.assertEqual(raw_r[0], raw_p[0])
        self.assertEqual(raw_r[2], raw_p[2])  # XPENDING, both forms
        self.assertEqual(rr.xinfo_groups("x"), p.xinfo_groups("x"))
        for key in ("pre:0", "pre:1", "pre:2", "pre:empty"):
            got, want = stream_state(rr, key), stream_state(p, key)
            self.assertEqual(got[0], want[0], key)
            self.assertEqual(got[2], want[2], key)
            nodes = want[1].index(b"radix-tree-nodes") + 1  # Redis's inner radix tree nodes
            self.assertEqual(got[1][:nodes] + got[1][nodes + 1:],
                             want[1][:nodes] + want[1][nodes + 1:], key)


def zero_times(v):
    """XINFO STREAM FULL with the consumers' seen/active times zeroed (those differ by design)."""
    if isinstance(v, list):
        out = []
        for i, x in enumerate(v):
            if i > 0 and v[i - 1] in (b"seen-time", b"active-time"):
                out.append(0)
            else:
                out.append(zero_times(x))
        return out
    return v


def stream_state(r, key):
    """What a replica must match: the entries, XINFO STREAM FULL, every group's XPENDING."""
    r = redis.Redis(host="127.0.0.1", port=r.connection_pool.connection_kwargs["port"])
    r.response_callbacks = {}  # raw replies
    full = zero_times(r.execute_command("XINFO", "STREAM", key, "FULL"))
    pending = {}
    for g in r.execute_command("XINFO", "GROUPS", key):
        name = dict(zip(g[::2], g[1::2]))[b"name"]
        rows = r.execute_command("XPENDING", key, name, "-", "+", 100)
        pending[name] = (r.execute_command("XPENDING", key, name),
                         [(row[0], row[1], row[3]) for row in rows])  # idle ms left out
    return r.execute_command("XRANGE", key, "-", "+"), full, pending


FUNCTION_LIB = """#!lua name=%s
redis.register_function('%s', function(keys, args)
  return redis.call('XADD', keys[1], '*', 'f', args[1])
end)"""


@unittest.skipIf(IS_REDIS, "Sluice's replication")
class StreamReplicationTest(unittest.TestCase):
    """Streams replicate exactly (XADD's chosen ID, ~ trims as what they removed, consumer
    groups as XCLAIM/SETID), also inside MULTI/EXEC and scripts; function libraries too."""

    def test_streams_and_functions(self):
        primary = Server(options={"stream-node-max-entries": "4"})
        primary.start()
        self.addCleanup(primary.stop)
        p = conn(primary)
        p.execute_command("FUNCTION", "LOAD", FUNCTION_LIB % ("before", "xadd_before"))
        # The same node size on both (stream-node-max-entries acts, as in Redis): XINFO STREAM
        # FULL's radix-tree-keys/nodes are compared too.
        replica = Server(options={"stream-node-max-entries": "4"})
        replica.start()
        self.addCleanup(replica.stop)
        rc = conn(replica)
        rc.execute_command("REPLICAOF", "127.0.0.1", primary.port)
        wait_for(lambda: in_sync(primary, replica), what="full sync")
        p.execute_command("FUNCTION", "LOAD", FUNCTION_LIB % ("after", "xadd_after"))

        # XADD * / <ms>-*, and approximate trims with and without LIMIT.
        for i in range(30):
            p.xadd("s", {"i": i})
        p.xadd("s", {"x": "1"}, id="9000000000000-*")
        p.xadd("s", {"x": "2"}, id="9000000000000-*")
        p.execute_command("XADD", "s", "MAXLEN", "~", "10", "*", "t", "1")
        p.execute_command("XADD", "s2", "*", "a", "b")
        for i in range(40):
            p.xadd("s2", {"i": i})
        mid = p.xrange("s2", count=20)[-1][0]
        p.execute_command("XADD", "s2", "MINID", "~", mid, "LIMIT", "8", "*", "t", "2")
        p.execute_command("XTRIM", "s2", "MAXLEN", "~", "12")
        p.execute_command("XTRIM", "s2", "MINID", "~", mid, "LIMIT", "4")
        # A trim that removes nothing writes nothing, and sends nothing (as Redis).
        offset = p.info("replication")["master_repl_offset"]
        self.assertEqual(p.execute_command("XTRIM", "s2", "MAXLEN", "~", "1000"), 0)
        self.assertEqual(p.info("replication")["master_repl_offset"], offset)

        # Consumer groups.
        p.xgroup_create("s", "g", id="0")
        p.xgroup_create("s", "g2", id="$")
        p.xreadgroup("g", "c1", {"s": ">"}, count=3)
        p.xreadgroup("g", "c2", {"s": ">"}, count=2, noack=True)
        p.xreadgroup("g", "c1", {"s": ">"}, count=2)
        ids = [e[0] for e in p.xrange("s")]
        p.xack("s", "g", ids[0])
        p.xreadgroup("g", "c1", {"s": "0"}, count=10)  # history: delivery counts grow
        p.xclaim("s", "g", "c3", 0, [ids[1]])
        p.xautoclaim("s", "g", "c4", 0, "0-0", count=1)
        p.xdel("s", ids[3])  # pending: XAUTOCLAIM drops it from the PEL (XACK on the replica)
        p.xautoclaim("s", "g", "c5", 0, "0-0", count=10)
        late = p.xreadgroup("g", "c6", {"s": ">"}, count=1)[0][1][0][0]
        p.xdel("s", late)  # pending: XCLAIM drops it from the PEL too (XACK on the replica)
        self.assertEqual(p.xclaim("s", "g", "c7", 0, [late]), [])
        p.xgroup_setid("s", "g2", ids[2])
        p.xreadgroup("g2", "c9", {"s": ">"}, count=1)
        p.xgroup_create("s", "gone", id="0")
        p.xgroup_destroy("s", "gone")
        p.xgroup_createconsumer("s", "g", "idle")

        # A blocked XREADGROUP served by a later XADD.
        p.xgroup_create("b", "bg", id="$", mkstream=True)
        blocked = threading.Thread(target=lambda: conn(primary).xreadgroup(
            "bg", "bc", {"b": ">"}, block=10000))
        blocked.start()
        wait_for(lambda: p.info("clients")["blocked_clients"] == 1, what="blocked XREADGROUP")
        p.xadd("b", {"wake": "1"})
        blocked.join()
        self.assertEqual(p.xpending("b", "bg")["pending"], 1)

        # Inside MULTI/EXEC and scripts.
        t = p.pipeline(transaction=True)
        t.set("plain", "v", ex=100)
        t.xadd("m", {"a": "1"})
        t.xadd("m", {"a": "2"}, maxlen=1, approximate=True)
        t.xgroup_create("m", "mg", id="0")
        t.xreadgroup("mg", "mc", {"m": ">"})
        t.incrbyfloat("plain2", 1.5)
        t.eval("return redis.call('XADD', KEYS[1], 'MAXLEN', '~', '1', '*', 'n', '1')", 1, "m")
        t.execute_command("SELECT", 1)
        t.xadd("m1", {"db": "1"})
        t.execute_command("SELECT", 0)
        t.execute()
        p.eval("redis.call('XADD', KEYS[1], '*', 'a', '1');"
               "redis.call('XADD', KEYS[1], 'MAXLEN', '~', '1', '*', 'b', '2');"
               "redis.call('SET', KEYS[2], 'x', 'PX', 100000);"
               "return redis.call('XADD', KEYS[1], '*', 'c', '3')", 2, "e", "ekey")
        p.execute_command("FCALL", "xadd_before", 1, "f1", "v1")
        p.execute_command("FCALL", "xadd_after", 1, "f2", "v2")

        wait_for(lambda: in_sync(primary, replica), what="stream")
        # The approximate trims left more than an exact one would (the replica must match that):
        # an exact trim to 10 and the two XDELs would leave 8.
        self.assertGreater(p.xlen("s"), 10)
        self.assertEqual(len(p.execute_command("FUNCTION", "LIST")), 2)
        for key in ("s", "s2", "b", "m", "e", "f1", "f2"):
            self.assertEqual(stream_state(rc, key), stream_state(p, key), key)
        in_db1 = redis.Redis(host="127.0.0.1", port=primary.port, db=1).xrange("m1")
        self.assertEqual(len(in_db1), 1)
        self.assertEqual(redis.Redis(host="127.0.0.1", port=replica.port, db=1).xrange("m1"),
                         in_db1)
        self.assertEqual(rc.get("plain"), b"v")
        self.assertEqual(rc.pexpiretime("plain"), p.pexpiretime("plain"))
        self.assertEqual(rc.get("plain2"), b"1.5")
        self.assertEqual(rc.get("ekey"), b"x")
        self.assertEqual(rc.execute_command("FUNCTION", "LIST"),
                         p.execute_command("FUNCTION", "LIST"))
        # FUNCTION DELETE / FLUSH / RESTORE reach the replica too.
        dump = p.execute_command("FUNCTION", "DUMP")
        p.execute_command("FUNCTION", "DELETE", "after")
        wait_for(lambda: in_sync(primary, replica), what="FUNCTION DELETE")
        self.assertEqual(rc.execute_command("FUNCTION", "LIST"),
                         p.execute_command("FUNCTION", "LIST"))
        p.execute_command("FUNCTION", "FLUSH")
        wait_for(lambda: in_sync(primary, replica), what="FUNCTION FLUSH")
        self.assertEqual(rc.execute_command("FUNCTION", "LIST"), [])
        p.execute_command("FUNCTION", "RESTORE", dump)
        wait_for(lambda: in_sync(primary, replica), what="FUNCTION RESTORE")
        self.assertEqual(len(rc.execute_command("FUNCTION", "LIST")), 2)
        self.assertEqual(rc.execute_command("FUNCTION", "LIST"),
                         p.execute_command("FUNCTION", "LIST"))


def raw_error(r, *args):
    """The error text of a command (None when it succeeded)."""
    try:
        r.execute_command(*args)
    except redis.ResponseError as e:
        return str(e)
    return None


def redis_reference():
    from test_transactions import RedisReference, redis_server_binary, redis_server_version
    binary = redis_server_binary()
    if binary is None or not redis_server_version(binary).startswith("7.0."):
        raise unittest.SkipTest("no redis-server 7.0.x")
    return RedisReference(binary).start()


@unittest.skipIf(IS_REDIS, "Sluice's replication")
class FailoverTest(unittest.TestCase):
    """FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms] as Redis 7.0: its errors side by side
    with redis-server; a Sluice primary handing over to a Sluice replica (writes paused, the
    target promoted by PSYNC ... FAILOVER, partial resync both ways, no key lost) and back;
    ABORT and TIMEOUT while the replica does not answer (SIGSTOP); a redis-server replica of
    Sluice taking over, and Sluice taking over from a redis-server primary."""

    def start(self):
        s = Server()
        s.start()
        self.addCleanup(s.stop)
        return s

    def reference(self):
        ref = redis_reference()
        self.addCleanup(ref.stop)
        return ref

    def pair(self, primary_port, replica):
        replica.execute_command("REPLICAOF", "127.0.0.1", primary_port)
        wait_for(lambda: info(replica)["master_link_status"] == "up", what="link up")

    def swapped(self, new_primary, new_replica):
        return (info(new_primary)["role"] == "master" and
                info(new_replica).get("master_link_status") == "up" and
                info(new_primary)["master_failover_state"] == "no-failover" and
                info(new_replica)["master_failover_state"] == "no-failover")

    def test_errors_as_redis(self):
        s, r = conn(self.start()), conn(self.reference().port)
        cases = [("FAILOVER",), ("FAILOVER", "ABORT"), ("FAILOVER", "TIMEOUT", "0"),
                 ("FAILOVER", "TIMEOUT", "x"), ("FAILOVER", "TIMEOUT", "-5"),
                 ("FAILOVER", "FORCE"), ("FAILOVER", "BOGUS"), ("FAILOVER", "ABORT", "TIMEOUT", 5),
                 ("FAILOVER", "TO", "127.0.0.1"), ("FAILOVER", "TO", "h", "x"),
                 ("FAILOVER", "TIMEOUT", 5, "TIMEOUT", 6), ("FAILOVER", "FORCE", "FORCE"),
                 ("FAILOVER", "TO", "127.0.0.1", 1, "FORCE"),
                 ("PSYNC", "0" * 40, 1, "FAILOVER")]
        for case in cases:
            self.assertEqual(raw_error(s, *case), raw_error(r, *case), case)
        self.assertEqual(s.info("replication")["master_failover_state"], "no-failover")

    def test_sluice_to_sluice_and_back(self):
        primary, replica = self.start(), self.start()
        p, rc = conn(primary), conn(replica)
        for i in range(500):
            p.set("k%d" % i, i)
        self.pair(primary.port, rc)
        wait_for(lambda: in_sync(primary, replica), what="sync")
        # Errors that need a replica.
        self.assertEqual(raw_error(p, "FAILOVER", "TO", "127.0.0.1", 1),
                         "FAILOVER target HOST and PORT is not a replica.")
        self.assertEqual(raw_error(p, "FAILOVER", "TO", "127.0.0.1", replica.port, "FORCE"),
                         "FAILOVER with force option requires both a timeout and target HOST "
                         "and IP.")
        self.assertEqual(raw_error(rc, "FAILOVER"),
                         "FAILOVER is not valid when server is a replica.")
        self.assertEqual(raw_error(rc, "PSYNC", "0" * 40, 5, "FAILOVER"),
                         "PSYNC FAILOVER replid must match my replid.")
        full_before = info(p, "stats")["sync_full"]
        self.assertTrue(p.execute_command("FAILOVER", "TIMEOUT", 20000))
        wait_for(lambda: self.swapped(rc, p), what="the replica promoted")
        self.assertEqual(p.execute_command("ROLE")[0], b"slave")
        self.assertEqual(raw_error(p, "SET", "x", "1"),
                         "You can't write against a read only replica.")
        rc.set("after", "1")
        wait_for(lambda: p.get("after") == b"1", what="the new primary's write")
        self.assertEqual(p.dbsize(), 501)
        self.assertEqual(info(rc, "stats")["sync_full"], 0)  # +CONTINUE, no full sync
        self.assertEqual(info(p, "stats")["sync_full"], full_before)
        # And back, to a named target.
        self.assertTrue(rc.execute_command("FAILOVER", "TO", "127.0.0.1", primary.port,
                                           "TIMEOUT", 20000))
        wait_for(lambda: self.swapped(p, rc), what="the old primary promoted back")
        p.set("again", "1")
        wait_for(lambda: rc.get("again") == b"1", what="the write after failing back")

    def test_abort_and_timeout(self):
        primary, replica = self.start(), self.start()
        p, rc = conn(primary), conn(replica)
        self.pair(primary.port, rc)
        wait_for(lambda: in_sync(primary, replica), what="sync")
        replica.proc.send_signal(signal.SIGSTOP)
        try:
            wait_for(lambda: stopped(replica.proc.pid), what="replica stopped")
            p.set("unacked", "1")  # the replica cannot acknowledge it
            self.assertTrue(p.execute_command("FAILOVER"))
            self.assertEqual(raw_error(p, "FAILOVER"), "FAILOVER already in progress.")
            self.assertEqual(raw_error(p, "REPLICAOF", "127.0.0.1", 1),
                             "REPLICAOF not allowed while failing over.")
            self.assertEqual(info(p)["master_failover_state"], "waiting-for-sync")
            done = []
            writer = threading.Thread(target=lambda: done.append(conn(primary).set("w", "1")))
            writer.start()
            time.sleep(0.3)
            self.assertEqual(done, [])  # writes are paused
            self.assertEqual(p.get("unacked"), b"1")  # reads are not
            self.assertTrue(p.execute_command("FAILOVER", "ABORT"))
            writer.join(10)
            self.assertEqual(done, [True])
            self.assertEqual(info(p)["master_failover_state"], "no-failover")
            t = time.monotonic()
            self.assertTrue(p.execute_command("FAILOVER", "TIMEOUT", 500))
            wait_for(lambda: info(p)["master_failover_state"] == "no-failover",
                     what="the timeout")
            self.assertGreaterEqual(time.monotonic() - t, 0.45)
            self.assertEqual(info(p)["role"], "master")
            self.assertTrue(p.set("after-timeout", "1"))
        finally:
            replica.proc.send_signal(signal.SIGCONT)
        self.assertIn("aborted: Replica never caught up before timeout", primary.log())
        self.assertIn("aborted: Failover manually aborted", primary.log())

    def test_redis_server_replica_takes_over(self):
        primary = self.start()
        p = conn(primary)
        p.set("from-sluice", "1")
        ref = self.reference()
        rr = conn(ref.port)
        self.pair(primary.port, rr)
        wait_for(lambda: info(rr)["slave_repl_offset"] == info(p)["master_repl_offset"],
                 what="redis replica in sync")
        self.assertTrue(p.execute_command("FAILOVER", "TO", "127.0.0.1", ref.port,
                                          "TIMEOUT", 20000))
        wait_for(lambda: self.swapped(rr, p), what="redis-server promoted")
        rr.set("from-redis", "1")
        wait_for(lambda: p.get("from-redis") == b"1", what="redis's write on Sluice")
        self.assertEqual(info(rr, "stats")["sync_full"], 0)

    def test_sluice_takes_over_from_redis_server(self):
        ref = self.reference()
        rr = conn(ref.port)
        rr.set("from-redis", "1")
        replica = self.start()
        rc = conn(replica)
        self.pair(ref.port, rc)
        wait_for(lambda: info(rc)["slave_repl_offset"] == info(rr)["master_repl_offset"],
                 what="Sluice in sync")
        self.assertTrue(rr.execute_command("FAILOVER", "TIMEOUT", 20000))
        wait_for(lambda: self.swapped(rc, rr), what="Sluice promoted")
        self.assertEqual(rc.get("from-redis"), b"1")
        rc.set("from-sluice", "1")
        wait_for(lambda: rr.get("from-sluice") == b"1", what="Sluice's write on redis")


@unittest.skipIf(IS_REDIS or shutil.which("openssl") is None, "Sluice's replication over TLS")
class TlsReplicationTest(unittest.TestCase):
    """tls-replication yes: the replica's link connects with TLS, presenting its certificate
    (tls-client-cert-file, else tls-cert-file) to a primary that requires one, and verifying
    the primary's against tls-ca-cert-file: Sluice to Sluice, a redis-server 7.0.15 replica of
    Sluice and Sluice replicating a redis-server, all over their tls-ports."""

    @classmethod
    def setUpClass(cls):
        import test_tls
        cls.tls = test_tls
        test_tls.CERTS = tempfile.mkdtemp(prefix="sluice-bb-repl-tls-")
        test_tls.make_certificates()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tls.CERTS, ignore_errors=True)

    def start(self, **extra):
        tls_port = free_port()
        s = Server(options=self.tls.tls_options(tls_port, **extra))
        s.start()
        s.tls_port = tls_port
        self.addCleanup(s.stop)
        return s

    def test_sluice_primary_and_replicas_over_tls(self):
        primary = self.start()
        p = conn(primary)
        for i in range(200):
            p.set("k%d" % i, i)
        add_streams(p, "x")
        replicas = [self.start(**{"tls-replication": "yes"}),
                    self.start(**{"tls-replication": "yes",
                                  "tls-client-cert-file": self.tls.cert("client.crt"),
                                  "tls-client-key-file": self.tls.cert("client.key")})]
        for r in replicas:
            conn(r).execute_command("REPLICAOF", "127.0.0.1", primary.tls_port)
        wait_for(lambda: in_sync(primary, *replicas), what="sync over TLS")
        p.set("after", "1")
        wait_for(lambda: in_sync(primary, *replicas), what="the stream over TLS")
        for r in replicas:
            self.assertEqual(snapshot(conn(r)), snapshot(p))
        # Without TLS toward the TLS port there is no link (the primary drops the handshake).
        plain = self.start()
        conn(plain).execute_command("REPLICAOF", "127.0.0.1", primary.tls_port)
        time.sleep(1.5)
        self.assertEqual(info(conn(plain))["master_link_status"], "down")
        self.assertEqual(len(p.execute_command("ROLE")[2]), 2)

    def redis_tls(self):
        """redis-server 7.0.15 (Debian's is built with TLS) on a plain and a TLS port."""
        from test_transactions import redis_server_binary, redis_server_version
        binary = redis_server_binary()
        if binary is None or not redis_server_version(binary).startswith("7.0."):
            self.skipTest("no redis-server 7.0.x")
        ref = self.tls.RedisReferenceTls(binary)
        self.addCleanup(ref.stop)
        return ref.start()

    def test_redis_server_replica_over_tls(self):
        primary = self.start()
        p = conn(primary)
        p.set("a", "1")
        add_streams(p, "x")
        ref = self.redis_tls()
        rr = conn(ref.port)
        rr.config_set("tls-replication", "yes")
        rr.execute_command("REPLICAOF", "127.0.0.1", primary.tls_port)
        wait_for(lambda: info(rr)["master_link_status"] == "up", what="redis over TLS")
        p.set("b", "2")
        wait_for(lambda: rr.get("b") == b"2", what="the stream on redis")
        self.assertEqual(rr.xrange("x:0"), p.xrange("x:0"))

    def test_sluice_replica_of_redis_server_over_tls(self):
        ref = self.redis_tls()
        rr = conn(ref.port)
        rr.set("from-redis", "1")
        replica = self.start(**{"tls-replication": "yes"})
        rc = conn(replica)
        rc.execute_command("REPLICAOF", "127.0.0.1", ref.tls_port)
        wait_for(lambda: info(rc)["master_link_status"] == "up", what="Sluice over TLS")
        self.assertEqual(rc.get("from-redis"), b"1")
        rr.set("later", "2")
        wait_for(lambda: rc.get("later") == b"2", what="redis's stream on Sluice")


@unittest.skipIf(IS_REDIS or REDIS_SENTINEL is None, "Sluice with redis-sentinel")
class SentinelTest(unittest.TestCase):
    def start_sentinels(self, master_port, n=3):
        ports = []
        for _ in range(n):
            port = free_port()
            workdir = tempfile.mkdtemp(prefix="sluice-bb-sentinel-")
            self.addCleanup(shutil.rmtree, workdir, True)
            conf = os.path.join(workdir, "sentinel.conf")
            with open(conf, "w") as f:
                f.write("port %d\nbind 127.0.0.1\ndir %s\n" % (port, workdir))
                f.write("sentinel monitor mymaster 127.0.0.1 %d 2\n" % master_port)
                f.write("sentinel down-after-milliseconds mymaster 1000\n")
                f.write("sentinel failover-timeout mymaster 10000\n")
                f.write("sentinel parallel-syncs mymaster 2\n")
            log = open(os.path.join(workdir, "log"), "wb")
            self.addCleanup(log.close)
            self.sentinel_logs = getattr(self, "sentinel_logs", []) + [log.name]
            proc = subprocess.Popen(DIE_WITH_TEST + [REDIS_SENTINEL, conf], stdout=log,
                                    stderr=subprocess.STDOUT)
            self.addCleanup(proc.wait)
            self.addCleanup(proc.kill)
            ports.append(port)
        for port in ports:
            wait_for(lambda: conn(port).ping(), what="sentinel")
        return ports

    def diagnosis(self, *servers):
        """The sentinels' logs and each server's ROLE and log tail, for a wait that timed out
        (the workdirs are removed at cleanup, after the failure is reported)."""
        parts = []
        for path in getattr(self, "sentinel_logs", []):
            with open(path, "rb") as f:
                parts.append("== %s\n%s" % (path, f.read()[-4000:].decode(errors="replace")))
        for s in servers:
            try:
                role = conn(s).execute_command("ROLE")
            except redis.RedisError as e:
                role = e
            parts.append("== port %d: ROLE %r\n%s" % (s.port, role, s.log()[-4000:]))
        return "\n".join(parts)

    def node(self, port=None, replicaof=None):
        text = "" if replicaof is None else "replicaof 127.0.0.1 %d\n" % replicaof
        s = Server(config_text=text, port=port)
        s.start()
        self.addCleanup(s.stop)
        return s

    def master_of(self, sentinel_port):
        addr = conn(sentinel_port).execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME",
                                                   "mymaster")
        return int(addr[1])

    def test_failover_on_kill9_and_manual(self):
        primary = self.node()
        r1 = self.node(replicaof=primary.port)
        r2 = self.node(replicaof=primary.port)
        wait_for(lambda: in_sync(primary, r1, r2), what="replicas")
        sentinels = self.start_sentinels(primary.port)
        # Sentinels discover the replicas and each other.
        wait_for(lambda: all(len(conn(s).execute_command("SENTINEL", "REPLICAS", "mymaster")) == 2
                             and int(conn(s).info("sentinel")["master0"]["sentinels"]) == 3
                             for s in sentinels), what="sentinel discovery")
        client = redis.sentinel.Sentinel([("127.0.0.1", s) for s in sentinels],
                                         socket_timeout=2)
        m = client.master_for("mymaster", socket_timeout=2)
        for i in range(100):
            m.set("pre:%d" % i, i)
            m.execute_command("GCRA.TAKE", "g", 1000, "1h")
        self.assertEqual(conn(primary).execute_command("WAIT", 2, 5000), 2)
        old_port = primary.port
        t = time.monotonic()
        primary.kill9()
        new_port = wait_for(lambda: self.master_of(sentinels[0]) != old_port
                            and self.master_of(sentinels[0]), timeout=60,
                            what="failover")
        failover_s = time.monotonic() - t
        print("failover after kill -9 (down-after 1000 ms): %.2fs" % failover_s)
        new = r1 if new_port == r1.port else r2
        other = r2 if new is r1 else r1
        wait_for(lambda: conn(new).execute_command("ROLE")[0] == b"master", what="promoted")
        wait_for(lambda: conn(other).execute_command("ROLE")[1:4] ==
                 [b"127.0.0.1", new.port, b"connected"], timeout=30, what="re-pointed")
        # The acknowledged writes survived; redis-py's Sentinel writes through the switch.
        m = client.master_for("mymaster", socket_timeout=2)
        wait_for(lambda: m.set("post", "1"), timeout=30, what="write through Sentinel")
        for i in range(100):
            self.assertEqual(conn(new).get("pre:%d" % i), str(i).encode())
        # The old primary comes back and is turned into a replica of the master Sentinel names.
        # That is usually `new`, but on a loaded machine the promoted node has missed Sentinel's
        # 1 s down-after once and been failed over again, to `other` (seen in a fresh clone's
        # run: +sdown of the new master 1.8 s after its promotion, then a second failover).
        primary.start()

        def rejoined():
            role = conn(primary).execute_command("ROLE")
            return (role[0] == b"slave" and role[2] == self.master_of(sentinels[0]) and
                    role[3] == b"connected")
        try:
            wait_for(rejoined, timeout=60, what="old primary rejoins as a replica")
        except AssertionError as e:  # keep what shows why
            raise AssertionError("%s\n%s" % (e, self.diagnosis(primary, new, other))) from None
        if self.master_of(sentinels[0]) == other.port:
            new, other = other, new
        wait_for(lambda: conn(primary).get("post") == b"1", what="old primary has new data")
        # A manual failover.
        wait_for(lambda: in_sync(new, other, primary), what="all in sync")
        conn(sentinels[0]).execute_command("SENTINEL", "FAILOVER", "mymaster")
        wait_for(lambda: self.master_of(sentinels[0]) != new.port, timeout=60,
                 what="SENTINEL FAILOVER")
        m = client.master_for("mymaster", socket_timeout=2)
        wait_for(lambda: m.set("after-manual", "1"), timeout=30, what="write after manual")
        wait_for(lambda: conn(new).get("after-manual") == b"1", timeout=30,
                 what="old master follows the new one")

    def gcra_loss(self, ack_writes):
        """GCRA.TAKE load from 4 clients on a primary with 2 replicas under 3 sentinels; kill -9
        of the primary; returns (takes acknowledged, takes the new primary lost of them)."""
        opts = {"replica-ack-writes": str(ack_writes), "replica-ack-timeout": "5000"}

        def node(replicaof=None):
            text = "" if replicaof is None else "replicaof 127.0.0.1 %d\n" % replicaof
            s = Server(options=opts, config_text=text)
            s.start()
            self.addCleanup(s.stop)
            return s

        primary = node()
        r1, r2 = node(primary.port), node(primary.port)
        wait_for(lambda: in_sync(primary, r1, r2), what="replicas")
        sentinels = self.start_sentinels(primary.port)
        wait_for(lambda: all(len(conn(s).execute_command("SENTINEL", "REPLICAS", "mymaster")) == 2
                             for s in sentinels), what="sentinel discovery")
        quota, period = 1000000, "87000h"  # ~10 years: under 0.01 of a take refilled a second
        acked = [0] * 4
        stop = threading.Event()

        def worker(i):
            c = conn(primary)
            while not stop.is_set():
                try:
                    if c.execute_command("GCRA.TAKE", "gcra:%d" % i, quota, period)[0] == 1:
                        acked[i] += 1
                except redis.RedisError:  # the primary is gone
                    return

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        # Kill under load: once the clients have 40 takes acknowledged (not after a fixed time:
        # with replica-ack-writes each take waits for a replica's ACK, slow on a busy machine).
        wait_for(lambda: sum(acked) >= 40, timeout=120, what="40 acknowledged takes")
        primary.kill9()
        stop.set()
        for t in threads:
            t.join(30)
        new_port = wait_for(lambda: self.master_of(sentinels[0]) != primary.port
                            and self.master_of(sentinels[0]), timeout=60, what="failover")
        new = conn(new_port)
        wait_for(lambda: new.execute_command("ROLE")[0] == b"master", what="promoted")
        lost = 0
        for i in range(4):
            remaining = new.execute_command("GCRA.TAKE", "gcra:%d" % i, quota, period)[1]
            recorded = quota - remaining - 1
            lost += max(0, acked[i] - recorded)
        return sum(acked), lost

    def test_gcra_takes_across_a_failover(self):
        total, lost = self.gcra_loss(1)
        print("replica-ack-writes 1: %d GCRA.TAKEs acknowledged, %d lost by the failover"
              % (total, lost))
        self.assertGreaterEqual(total, 40)
        self.assertEqual(lost, 0)
        total0, lost0 = self.gcra_loss(0)
        print("replica-ack-writes 0: %d GCRA.TAKEs acknowledged, %d lost by the failover"
              % (total0, lost0))


if __name__ == "__main__":
    unittest.main()


@unittest.skipIf(IS_REDIS, "Sluice's replication")
class LoadingTest(unittest.TestCase):
    """A replica loading its primary's full sync answers as a loading Redis replica: -LOADING
    for commands without the `loading` flag, -READONLY first for writes, the loading ones
    served, INFO persistence `loading:1` with Redis's loading_* fields; `key-load-delay` makes
    the load last. Side by side with two redis-server 7.0.15 processes doing the same."""

    KEYS = 20000
    DELAY_US = 300  # 20k keys: about 6 s of load

    CASES = [("GET", "key:1"), ("PING",), ("SET", "x", "1"), ("DBSIZE",), ("EVAL", "return 1", 0),
             ("MULTI",), ("CONFIG", "GET", "key-load-delay"), ("CLIENT", "GETNAME"),
             ("TYPE", "key:1")]

    def fill(self, r):
        p = r.pipeline(transaction=False)
        for i in range(self.KEYS):
            p.set("key:%d" % i, "value:%d" % i)
        p.execute()

    def loading_replies(self, primary_port, replica):
        replica.config_set("key-load-delay", self.DELAY_US)
        replica.execute_command("REPLICAOF", "127.0.0.1", primary_port)
        wait_for(lambda: replica.info("persistence")["loading"] == 1, what="the load to start")
        replies = {}
        for case in self.CASES:
            try:
                replies[case] = ("ok", replica.execute_command(*case))
            except redis.exceptions.BusyLoadingError as e:  # redis-py strips the code
                replies[case] = ("err", "LOADING " + str(e))
            except redis.ResponseError as e:
                replies[case] = ("err", str(e))
        persistence = replica.info("persistence")
        wait_for(lambda: replica.info("persistence")["loading"] == 0, timeout=120,
                 what="the load to end")
        wait_for(lambda: info(replica)["master_link_status"] == "up", what="link up")
        return replies, persistence

    def test_loading_replica_beside_redis(self):
        primary, replica = Server(), Server()
        for s in (primary, replica):
            s.start()
            self.addCleanup(s.stop)
        p, r = conn(primary), conn(replica)
        self.fill(p)
        got, persistence = self.loading_replies(primary.port, r)
        self.assertEqual(r.dbsize(), self.KEYS)
        self.assertEqual(r.get("key:7"), b"value:7")
        self.assertEqual(r.info("persistence")["loading"], 0)
        self.assertNotIn("loading_total_bytes", r.info("persistence"))
        # The fields while loading, in Redis's order, with what they can say.
        keys = [k for k in persistence if k.startswith("loading_")]
        self.assertEqual(keys, ["loading_start_time", "loading_total_bytes", "loading_rdb_used_mem",
                                "loading_loaded_bytes", "loading_loaded_perc",
                                "loading_eta_seconds"])
        self.assertGreater(persistence["loading_total_bytes"], self.KEYS * 10)
        self.assertLessEqual(persistence["loading_loaded_bytes"],
                             persistence["loading_total_bytes"])
        self.assertTrue(0 <= float(persistence["loading_loaded_perc"]) <= 100)

        rp, rr = redis_reference(), redis_reference()
        self.addCleanup(rp.stop)
        self.addCleanup(rr.stop)
        ref_p, ref_r = conn(rp.port), conn(rr.port)
        ref_p.config_set("repl-diskless-sync-delay", 0)
        # Redis serves clients during a load only every this many bytes read (Sluice always).
        ref_r.config_set("loading-process-events-interval-bytes", 1024)
        self.fill(ref_p)
        want, _ = self.loading_replies(rp.port, ref_r)
        self.assertEqual(ref_r.dbsize(), self.KEYS)
        self.assertEqual(got, want)
        self.assertEqual(got[("GET", "key:1")],
                         ("err", "LOADING Redis is loading the dataset in memory"))
