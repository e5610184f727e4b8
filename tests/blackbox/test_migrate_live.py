"""Sluice as a replica of a live redis-server 7.0.15: the zero-downtime move off Redis.

- A redis-server holds keys of every Redis type and encoding (tests/blackbox/test_dump.py's
  populate: strings, lists, hashes, sets, sorted sets, with TTLs; streams with consumer
  groups, pending entries and a deleted entry) in databases 0, 1 and 3; a
  Lua-scripted writer (EVAL: SET ... PX, INCR, HSET, LPUSH, ZINCRBY, SADD, PEXPIRE, DEL, in two
  databases) runs while Sluice does `REPLICAOF` it. The full sync is done with the RDB sent
  both ways Redis sends it: `$<len>` (repl-diskless-sync no) and the EOF-marker form
  (repl-diskless-sync yes).
- The live stream as Redis 7.0 propagates it: SELECT, MULTI/EXEC around script effects,
  SET ... PXAT / PEXPIREAT rewrites, DEL of keys Redis expires, PING, and REPLCONF GETACK
  (Redis's WAIT counts Sluice's ACK).
- A short link drop (CLIENT KILL TYPE master on Sluice) resumes with +CONTINUE (Redis's
  sync_partial_ok counts it).
- A 1M-key RDB loads for longer than Redis's repl-timeout (2 s here) without Redis dropping
  Sluice: it sends the newline keepalive Redis's replicas send while loading.
- Then `REPLICAOF NO ONE` on Sluice: every key equal, value and expiry time to the ms, and
  Sluice takes writes.
"""
import random
import threading
import time
import unittest

from harness import IS_REDIS, BlackboxTestCase, Client, Server
from test_dump import populate, stream_commands
from test_replication import wait_for
from test_transactions import (RedisReference, import_redis_py, redis_server_binary,
                               redis_server_version)

redis = import_redis_py()  # redis-py (Debian's python3-redis where this Python lacks it)

DBS = (0, 1, 3)

WRITER = """
local n = tonumber(ARGV[1])
redis.call('SET', 'w:str:' .. (n % 50), n, 'PX', 600000 + n)
redis.call('INCR', 'w:counter')
redis.call('HSET', 'w:hash', 'f' .. (n % 20), n)
redis.call('LPUSH', 'w:list', n)
redis.call('LTRIM', 'w:list', 0, 99)
redis.call('ZINCRBY', 'w:zset', 1, 'm' .. (n % 30))
redis.call('SADD', 'w:set', n % 40)
redis.call('PEXPIRE', 'w:hash', 900000)
if n % 7 == 0 then redis.call('DEL', 'w:str:' .. ((n + 25) % 50)) end
redis.call('SELECT', 1)
redis.call('SET', 'w1:' .. (n % 10), n)
return n
"""


def conn(port):
    return redis.Redis(port=port, socket_timeout=30)


def snapshot(r):
    """Every key of DBS: (type, value, PEXPIRETIME)."""
    out = {}
    for db in DBS:
        c = redis.Redis(port=r.connection_pool.connection_kwargs["port"], db=db)
        for key in c.keys("*"):
            t = c.type(key).decode()
            if t == "string":
                v = c.get(key)
            elif t == "list":
                v = c.lrange(key, 0, -1)
            elif t == "set":
                v = sorted(c.smembers(key))
            elif t == "hash":
                v = sorted(c.hgetall(key).items())
            elif t == "zset":
                v = c.zrange(key, 0, -1, withscores=True)
            elif t == "stream":
                v = stream_value(c, key)
            else:
                v = None
            out[(db, key)] = (t, v, c.pexpiretime(key))
        c.close()
    return out


def stream_value(c, key):
    """Entries and XINFO STREAM FULL (every entry, PEL and consumer with their times) without
    radix-tree-nodes (Redis's inner radix tree nodes)."""
    raw = redis.Redis(port=c.connection_pool.connection_kwargs["port"],
                      db=c.connection_pool.connection_kwargs["db"])
    raw.response_callbacks = {}
    full = raw.execute_command("XINFO", "STREAM", key, "FULL", "COUNT", 0)
    full = [None if i > 0 and full[i - 1] == b"radix-tree-nodes" else v
            for i, v in enumerate(full)]
    entries = raw.execute_command("XRANGE", key, "-", "+")
    raw.close()
    return entries, full


@unittest.skipIf(IS_REDIS, "Sluice following redis-server")
class ReplicaOfRedisTest(BlackboxTestCase):
    maxDiff = None

    def setUp(self):
        binary = redis_server_binary()
        if binary is None or not redis_server_version(binary).startswith("7.0."):
            raise unittest.SkipTest("no redis-server 7.0.x to follow")
        self.redis = RedisReference(binary).start()
        self.addCleanup(self.redis.stop)
        self.r = conn(self.redis.port)
        self.addCleanup(self.r.close)
        self.sluice = Server().start()
        self.addCleanup(self.sluice.stop)
        self.s = conn(self.sluice.port)
        self.addCleanup(self.s.close)

    def fill(self):
        rng = random.Random(41)
        with Client(self.redis.port) as c:
            for db in DBS:
                c.call("SELECT", db)
                populate(c, rng, "p%d" % db)
            c.call("SELECT", 0)
            for cmd in stream_commands(rng, "stream", 300):  # streams with groups, read from
                c.call(*cmd)
            c.call("XREADGROUP", "GROUP", "g1", "c1", "COUNT", 5, "STREAMS", "stream", ">")
            c.call("XDEL", "stream", c.call("XRANGE", "stream", "-", "+", "COUNT", 1)[0][0])
            c.call("XGROUP", "CREATE", "stream:empty", "g", "$", "MKSTREAM")
        self.r.set("int", 12345)
        self.r.set("gone-soon", "x", px=150)  # expires on Redis, then Redis sends DEL

    def in_sync(self):
        p = self.r.info("replication")["master_repl_offset"]
        i = self.s.info("replication")
        return i.get("master_link_status") == "up" and i.get("slave_repl_offset") == p

    def run_move(self, diskless):
        self.r.config_set("repl-diskless-sync", "yes" if diskless else "no")
        self.r.config_set("repl-diskless-sync-delay", "0")
        self.fill()
        writer = self.r.register_script(WRITER)
        stop = threading.Event()
        count = [0]

        def write():
            w = conn(self.redis.port)
            while not stop.is_set():
                writer(args=[count[0]], client=w)
                count[0] += 1
            w.close()

        t = threading.Thread(target=write)
        t.start()
        try:
            self.assertTrue(self.s.execute_command("REPLICAOF", "127.0.0.1", self.redis.port))
            wait_for(lambda: self.s.info("replication")["master_link_status"] == "up",
                     what="the link up")
            time.sleep(0.5)
        finally:
            stop.set()
            t.join()
        self.assertGreater(count[0], 0)
        wait_for(self.in_sync, what="Sluice at Redis's offset")
        self.assertEqual(snapshot(self.s), snapshot(self.r))
        self.assertIsNone(self.s.get("gone-soon"))
        # Keys Redis expires reach Sluice as DEL: the counts (which on a replica include keys
        # whose time passed but whose DEL has not come) become equal.
        for i in range(20):
            self.r.set("short:%d" % i, i, px=100)
        wait_for(lambda: self.r.info("stats")[
            "expired_keys"] >= 20, what="Redis expiring the short keys")
        wait_for(self.in_sync, what="Sluice at Redis's offset after the expiries")
        for db in DBS:
            self.assertEqual(redis.Redis(port=self.sluice.port, db=db).dbsize(),
                             redis.Redis(port=self.redis.port, db=db).dbsize())
        # GETACK: Redis's WAIT hears Sluice's ACK.
        self.r.set("acked", "1")
        self.assertEqual(self.r.execute_command("WAIT", 1, 5000), 1)
        # A short link drop: +CONTINUE, only the missing bytes.
        before = self.r.info("stats")["sync_partial_ok"]
        self.s.execute_command("CLIENT", "KILL", "TYPE", "master")
        self.r.set("during-drop", "1", px=500000)
        for n in range(100):
            writer(args=[100000 + n])
        wait_for(lambda: self.r.info("stats")["sync_partial_ok"] > before,
                 what="a partial resync")
        wait_for(self.in_sync, what="Sluice at Redis's offset after the drop")
        self.assertEqual(self.r.info("stats")["sync_full"], 1)
        self.assertEqual(snapshot(self.s), snapshot(self.r))
        # Cut-over.
        expected = snapshot(self.r)
        self.assertTrue(self.s.execute_command("REPLICAOF", "NO", "ONE"))
        self.assertEqual(self.s.info("replication")["role"], "master")
        self.assertEqual(snapshot(self.s), expected)
        self.assertTrue(self.s.set("after", "1"))
        self.assertEqual(self.s.incr("w:counter"), int(self.r.get("w:counter")) + 1)

    def test_long_load_keeps_the_link(self):
        """While Sluice loads a big RDB it sends Redis a newline every second (as Redis's
        replicas do), so a primary with a short repl-timeout does not drop it mid-load."""
        self.r.config_set("repl-diskless-sync", "no")
        self.r.config_set("repl-timeout", "2")
        self.r.eval("for i = 1, tonumber(ARGV[1]) do redis.call('SET', 'key:' .. i, i) end", 0,
                    1000000)
        self.assertTrue(self.s.execute_command("REPLICAOF", "127.0.0.1", self.redis.port))
        wait_for(self.in_sync, timeout=120, what="Sluice at Redis's offset")
        time.sleep(3)  # a drop would show now
        self.assertTrue(self.in_sync())
        with open(self.redis.log.name) as f:
            self.assertNotIn("timedout replica", f.read())
        stats = self.r.info("stats")
        self.assertEqual((stats["sync_full"], stats["sync_partial_ok"]), (1, 0))
        self.assertEqual(self.s.dbsize(), 1000000)

    def test_disk_sync(self):
        self.run_move(diskless=False)

    def test_diskless_sync(self):
        self.run_move(diskless=True)


if __name__ == "__main__":
    unittest.main()
