"""Maintained keyspace counts: DBSIZE and INFO keyspace against a real redis-server 7.0.15 after
seeded random mixes of writes (every kind of key, renames, copies, pops that empty collections,
expiries set, removed and in the past, FLUSHDB), and exact after `kill -9` during writes from
several clients (DEBUG KEYSPACE-CHECK compares the counts with a walk of every key)."""
import os
import random
import re
import threading
import time
import unittest

from harness import BlackboxTestCase, Client, ConnectionClosed, IS_REDIS, Server
from test_transactions import start_beside_reference

SEED = int(os.environ.get("SLUICE_KEYSPACE_SEED", "13"))
KEYS = ["k%d" % i for i in range(24)]


def random_command(rng):
    """One write (or a read that may reclaim an expired key) over a small shared keyspace."""
    k, k2 = rng.choice(KEYS), rng.choice(KEYS)
    v = str(rng.randint(0, 99))
    pick = rng.randint(0, 25)
    if pick == 0:
        return ["SET", k, v]
    if pick == 1:
        return ["SET", k, v, "EX", "1000"]
    if pick == 2:
        # (Not SET ... PXAT in the past: Redis 7.0 stores that key and its DBSIZE then depends
        # on when its expiry cycle runs; Sluice deletes it at once.)
        return ["SET", k, v, "PX", "5000000"]
    if pick == 3:
        return ["DEL", k, k2]
    if pick == 4:
        return ["INCR", k]
    if pick == 5:
        return ["EXPIRE", k, "1000"]
    if pick == 6:
        return ["PEXPIREAT", k, "1"]
    if pick == 7:
        return ["PERSIST", k]
    if pick == 8:
        return ["RENAME", k, k2]
    if pick == 9:
        return ["COPY", k, k2, "REPLACE"]
    if pick == 10:
        return ["COPY", k, k2, "DB", str(rng.randint(1, 2))]
    if pick == 11:
        return ["HSET", k, "f" + v, v]
    if pick == 12:
        return ["HDEL", k, "f" + v, "f1", "f2"]
    if pick == 13:
        return ["SADD", k, v, "x"]
    if pick == 14:
        return ["SPOP", k, "100"]  # empties it: which members go is random
    if pick == 15:
        return ["RPUSH", k, v]
    if pick == 16:
        return ["LPOP", k, "2"]
    if pick == 17:
        return ["ZADD", k, v, "m" + v]
    if pick == 18:
        return ["ZREM", k, "m" + v, "m1", "m2"]
    if pick == 19:
        return ["GETDEL", k]
    if pick == 20:
        return ["SETNX", k, v]
    if pick == 21:
        return ["MSET", k, v, k2, v]
    if pick == 22:
        return ["GETEX", k, "PERSIST"]
    if pick == 23:
        return ["LMOVE", k, k2, "LEFT", "RIGHT"]
    if pick == 24:
        return ["SMOVE", k, k2, v]
    return ["FLUSHDB"] if rng.random() < 0.2 else ["APPEND", k, v]


def keyspace_lines(info):
    """INFO keyspace's db lines without avg_ttl (Sluice reports 0; Redis an estimate)."""
    text = info.decode() if isinstance(info, bytes) else info
    return [re.sub(r",avg_ttl=\d+", "", line) for line in text.split("\r\n")
            if line.startswith("db")]


@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class DifferentialCountsTest(BlackboxTestCase):
    """The same seeded mix on both servers: DBSIZE of each db and INFO keyspace equal Redis's
    after every step batch; Sluice's counts equal a walk at the end."""

    def test_random_mix(self):
        sluice, redis = start_beside_reference()
        self.addCleanup(sluice.stop)
        self.addCleanup(redis.stop)
        rng = random.Random(SEED)
        with Client(sluice.port) as s, Client(redis.port) as r:
            for step in range(1500):
                if step % 100 == 0:
                    db = str(rng.randint(0, 2))
                    self.assertEqual(s.call("SELECT", db), r.call("SELECT", db))
                cmd = random_command(rng)
                got, want = s.call(*cmd), r.call(*cmd)
                if cmd[0] == "SPOP" and isinstance(got, list) and isinstance(want, list):
                    got, want = sorted(got), sorted(want)  # Redis's order is random
                self.assertEqual(got, want, "step %d: %r" % (step, cmd))
                if step % 25 == 24:
                    for db in range(3):
                        s.call("SELECT", str(db))
                        r.call("SELECT", str(db))
                        self.assertEqual(s.call("DBSIZE"), r.call("DBSIZE"),
                                         "step %d db %d" % (step, db))
                    self.assertEqual(keyspace_lines(s.call("INFO", "keyspace")),
                                     keyspace_lines(r.call("INFO", "keyspace")), "step %d" % step)
                    s.call("SELECT", "0")
                    r.call("SELECT", "0")
            self.assertEqual(s.call("DEBUG", "KEYSPACE-CHECK"), "OK")
            self.assertEqual(s.call("FLUSHALL"), r.call("FLUSHALL"))
            self.assertEqual(keyspace_lines(s.call("INFO", "keyspace")), [])
            self.assertEqual(s.call("DBSIZE"), 0)


@unittest.skipIf(IS_REDIS, "DEBUG KEYSPACE-CHECK is Sluice's")
class Kill9CountsTest(BlackboxTestCase):
    """Writers on several connections; kill -9 while they write; after the restart the counts
    equal a walk of every key (and DBSIZE the number of keys KEYS * lists: none expires)."""

    WRITERS = 4

    def test_kill9_during_writes(self):
        server = Server(options={"appendfsync": "everysec"})
        self.addCleanup(server.stop)
        server.start()
        acked = [0] * self.WRITERS

        def writer(w):
            rng = random.Random(SEED * 100 + w)
            try:
                with Client(server.port) as c:
                    while True:
                        batch = [random_command(rng) for _ in range(16)]
                        batch = [cmd for cmd in batch if cmd[0] != "FLUSHDB"]
                        batch.append(["GCRA.TAKE", "g%d" % rng.randint(0, 30), "5", "1h"])
                        c.pipeline(batch)
                        acked[w] += len(batch)
            except (ConnectionClosed, OSError):
                return

        threads = [threading.Thread(target=writer, args=(w,)) for w in range(self.WRITERS)]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 60
        while sum(acked) < 4000 and time.monotonic() < deadline:
            time.sleep(0.01)
        server.kill9()
        for t in threads:
            t.join(timeout=60)
        self.assertGreater(sum(acked), 0)
        server.start()
        with server.client() as c:
            self.assertEqual(c.call("DEBUG", "KEYSPACE-CHECK"), "OK")
            for db in range(3):
                c.call("SELECT", str(db))
                self.assertEqual(c.call("DBSIZE"), len(c.call("KEYS", "*")), "db %d" % db)
            c.call("SELECT", "0")
            self.assertGreater(c.call("DBSIZE"), 0)


@unittest.skipIf(IS_REDIS, "DEBUG KEYSPACE-CHECK is Sluice's")
class KeyspaceCheckCommandTest(BlackboxTestCase):
    def test_reply_and_arity(self):
        server = Server()
        self.addCleanup(server.stop)
        server.start()
        with server.client() as c:
            self.assertEqual(c.call("DEBUG", "KEYSPACE-CHECK"), "OK")
            c.call("SET", "a", "1")
            c.call("SET", "b", "1", "PX", "100000")
            self.assertEqual(c.call("DEBUG", "keyspace-check"), "OK")
            self.assertEqual(c.call("DEBUG", "KEYSPACE-CHECK", "x"), "ERR syntax error")
            self.assertEqual(c.call("MULTI"), "OK")
            c.call("SET", "c", "1")
            c.call("DEL", "a")
            c.call("DBSIZE")
            self.assertEqual(c.call("EXEC"), ["OK", 1, 2])
            self.assertEqual(c.call("DBSIZE"), 2)
            # An expired key counts until it is removed (here by the active expiry cycle).
            c.call("DEBUG", "CLOCK", "ADVANCE", "200000")
            deadline = time.monotonic() + 20
            while c.call("DBSIZE") != 1 and time.monotonic() < deadline:
                time.sleep(0.05)
            self.assertEqual(c.call("DBSIZE"), 1)
            self.assertEqual(c.call("DEBUG", "KEYSPACE-CHECK"), "OK")

if __name__ == "__main__":
    unittest.main()
