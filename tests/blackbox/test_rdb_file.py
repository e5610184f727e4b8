"""A Redis `dump.rdb` found in an empty data dir is loaded at start.

- LoadTest: seeded random data of every type and encoding (streams with groups too) in databases 0 and 3, with expiry
  times, saved by a reference redis-server 7.0.15 (SAVE); Sluice started on a data dir holding
  that dump.rdb serves every key with Redis's value and expiry time to the ms, logs its
  progress, and on restart (now holding keys) ignores the file. Its function library is loaded
  and FCALL runs it.
- RefusedTest: a damaged file (one flipped byte), a function library that does not compile,
  and a file that is not RDB: Sluice refuses to start with the reason in its log and writes nothing.
"""
import os
import random
import re
import struct
import time
import unittest

from harness import IS_REDIS, BlackboxTestCase, Client, Server
from test_dump import crc64, populate, read_value, stream_commands
from test_transactions import RedisReference, redis_server_binary, redis_server_version


def reference_redis():
    binary = redis_server_binary()
    if binary is None or not redis_server_version(binary).startswith("7.0."):
        raise unittest.SkipTest("no redis-server 7.0.x to write the RDB file")
    return RedisReference(binary).start()


def add_streams(c, seed):
    """Two streams in db 0: one with nodes, groups, a consumer's reads and a deleted entry, and
    an empty one holding a group."""
    for cmd in stream_commands(random.Random(seed), "stream:a", 250):
        c.call(*cmd)
    c.call("XREADGROUP", "GROUP", "g1", "c1", "COUNT", 4, "STREAMS", "stream:a", ">")
    c.call("XDEL", "stream:a", c.call("XRANGE", "stream:a", "-", "+", "COUNT", 2)[1][0])
    c.call("XGROUP", "CREATE", "stream:empty", "g", "$", "MKSTREAM")


def keyspace(c, db):
    c.call("SELECT", db)
    out = {}
    for key in c.call("KEYS", "*"):
        out[key] = (read_value(c, key), c.call("PEXPIRETIME", key))
    c.call("SELECT", 0)
    return out


@unittest.skipIf(IS_REDIS, "Sluice loading Redis's file")
class RdbFileTestCase(BlackboxTestCase):
    maxDiff = None

    def setUp(self):
        self.redis = reference_redis()
        self.addCleanup(self.redis.stop)
        self.r = Client(self.redis.port)
        self.addCleanup(self.r.close)

    def saved_file(self):
        self.assertEqual(self.r.call("SAVE"), "OK")
        with open(os.path.join(self.redis.workdir, "dump.rdb"), "rb") as f:
            return f.read()

    def sluice_with(self, rdb_bytes):
        server = Server()
        self.addCleanup(server.stop)
        with open(os.path.join(server.datadir, "dump.rdb"), "wb") as f:
            f.write(rdb_bytes)
        return server


class LoadTest(RdbFileTestCase):
    def test_every_type_loads_with_its_expiry(self):
        rng = random.Random(7)
        populate(self.r, rng, "a")
        add_streams(self.r, 8)
        self.r.call("SELECT", 3)
        populate(self.r, rng, "b")
        self.r.call("SELECT", 0)
        self.r.call("FUNCTION", "LOAD", "#!lua name=mylib\n"
                    "redis.register_function('answer', function() return 42 end)")
        server = self.sluice_with(self.saved_file()).start()
        with Client(server.port) as s:
            for db in (0, 3):
                expected = keyspace(self.r, db)
                # populate: 12 strings, 5 x 4 collections, 1; and 2 streams in db 0
                self.assertEqual(len(expected), 35 if db == 0 else 33)
                self.assertEqual(keyspace(s, db), expected)
            self.assertEqual(s.call("DBSIZE"), self.r.call("DBSIZE"))
            s.call("SET", "added-after", "1")
            self.assertEqual(s.call("FCALL", "answer", 0), 42)
            self.assertEqual(s.call("FUNCTION", "LIST")[0][1], b"mylib")
        self.assertIn("loaded %s/dump.rdb: " % server.datadir, server.log())
        server.restart()
        self.assertIn("ignored: the data dir already holds keys", server.log())
        with Client(server.port) as s:
            self.assertEqual(s.call("GET", "added-after"), b"1")
            self.assertEqual(s.call("DBSIZE"), self.r.call("DBSIZE") + 1)


def keyspace_counts(c):
    """INFO keyspace's keys= and expires= per database (avg_ttl left out: an estimate)."""
    info = c.call("INFO", "keyspace").decode()
    return re.findall(r"^(db\d+):keys=(\d+),expires=(\d+)", info, re.M)


class BulkLoadCountsTest(RdbFileTestCase):
    """The load writes in units of 20000 keys counted without reading them (they are new):
    DBSIZE and INFO keyspace's keys and expires equal Redis's, also after a restart."""

    def test_counts_across_units_equal_redis(self):
        self.r.call("EVAL", "for i = 1, 25000 do redis.call('SET', 't:' .. i, i, 'PX', "
                    "3600000 + i) end", 0)
        self.r.call("EVAL", "for i = 0, 29999 do redis.call('SET', 'key:' .. i, 'value:' .. i) "
                    "end", 0)
        self.r.call("SELECT", 5)
        self.r.call("EVAL", "for i = 1, 21000 do redis.call('SET', 'u:' .. i, i, 'EX', "
                    "7200) end", 0)
        self.r.call("SELECT", 0)
        expected = keyspace_counts(self.r)
        self.assertEqual(expected, [("db0", "55000", "25000"), ("db5", "21000", "21000")])
        server = self.sluice_with(self.saved_file()).start()
        with Client(server.port) as s:
            self.assertEqual(keyspace_counts(s), expected)
            self.assertEqual(s.call("DBSIZE"), 55000)
            self.assertEqual(s.call("PEXPIRETIME", "t:17"), self.r.call("PEXPIRETIME", "t:17"))
            self.assertEqual(s.call("GET", "key:29999"), b"value:29999")
        server.restart()
        with Client(server.port) as s:
            self.assertEqual(keyspace_counts(s), expected)


class InterruptedLoadTest(RdbFileTestCase):
    """A crash while the file's keys are being written must not leave a data dir that holds
    part of them and skips the file from then on: a marker beside the file names the load
    until every key is durable, and the next start clears the keys and loads again."""

    def marker(self, server):
        return os.path.join(server.datadir, "dump.rdb.sluice-loading")

    def test_marker_left_by_a_crash_clears_and_reloads(self):
        for i in range(3):
            self.r.call("SET", "k%d" % i, "v%d" % i)
        data = self.saved_file()
        server = Server()
        self.addCleanup(server.stop)
        server.start()  # a key the interrupted load is taken to have written, the marker after
        with Client(server.port) as s:
            s.call("SET", "half-loaded", "1")
        server.terminate()
        with open(os.path.join(server.datadir, "dump.rdb"), "wb") as f:
            f.write(data)
        with open(self.marker(server), "w") as f:
            f.write("dump.rdb\n")
        server.start()
        self.assertIn("was interrupted; clearing the keys it wrote to load it again", server.log())
        with Client(server.port) as s:
            self.assertEqual(s.call("DBSIZE"), 3)
            self.assertIsNone(s.call("GET", "half-loaded"))
            self.assertEqual(s.call("GET", "k2"), b"v2")
        self.assertFalse(os.path.exists(self.marker(server)))

    def test_marker_without_the_file_stops_the_start(self):
        server = Server()
        self.addCleanup(server.stop)
        with open(self.marker(server), "w") as f:
            f.write("dump.rdb\n")
        server.spawn()
        self.assertEqual(server.wait_exit(), 1)
        self.assertIn("was interrupted (%s is there) and the file is gone" % self.marker(server),
                      server.log())

    def test_kill_during_the_load_then_restart_loads_every_key(self):
        keys = 1000000
        self.r.call("EVAL", "for i = 1, tonumber(ARGV[1]) do redis.call('SET', 'key:' .. i, i) "
                    "end", 0, keys)
        server = self.sluice_with(self.saved_file())
        server.spawn()
        end = time.monotonic() + 120
        while not os.path.exists(self.marker(server)) and time.monotonic() < end:
            self.assertIsNone(server.proc.poll(), server.log())
            time.sleep(0.01)
        time.sleep(0.3)  # into the keys (on a fast machine the load may be over: still valid)
        server.kill9()
        server.start()
        with Client(server.port) as s:
            self.assertEqual(s.call("DBSIZE"), keys)
            self.assertEqual(s.call("GET", "key:%d" % keys), str(keys).encode())
        self.assertFalse(os.path.exists(self.marker(server)))


class RefusedTest(RdbFileTestCase):
    def refused(self, rdb_bytes, reason):
        server = self.sluice_with(rdb_bytes)
        server.spawn()
        self.assertEqual(server.wait_exit(), 1)
        self.assertIn("cannot load the Redis snapshot", server.log())
        self.assertIn(reason, server.log())
        os.remove(os.path.join(server.datadir, "dump.rdb"))
        server.start()  # nothing of the file was written
        with Client(server.port) as s:
            self.assertEqual(s.call("DBSIZE"), 0)

    def test_damaged_file(self):
        self.r.call("SET", "k", "v" * 100)
        self.r.call("RPUSH", "l", *range(50))
        data = bytearray(self.saved_file())
        data[len(data) // 2] ^= 0x10
        self.refused(bytes(data), "checksum mismatch")

    def test_function_library_that_does_not_compile(self):
        # A FUNCTION2 record written by hand: Redis would refuse it as well.
        body = b"\xf5" + bytes([len(b"not lua")]) + b"not lua" + b"\xff"
        data = b"REDIS0010" + body + struct.pack("<Q", crc64(b"REDIS0010" + body))
        self.refused(data, "function library in the file refused: ERR Missing library metadata")

    def test_not_an_rdb_file(self):
        self.refused(b"hello, this is not an RDB file", "no REDIS header")


if __name__ == "__main__":
    unittest.main()


@unittest.skipIf(IS_REDIS, "Sluice's SAVE loaded by redis-server")
class SaveForRedisTest(BlackboxTestCase):
    """SAVE / BGSAVE also write <dir>/<dbfilename> as Redis 7.0's RDB: redis-server 7.0.15
    started on that file holds every key (values, expiry times to the ms) and the function
    library; Sluice's own restart after FLUSHALL does not load its own backup back."""
    maxDiff = None

    def test_redis_loads_sluice_save(self):
        binary = redis_server_binary()
        if binary is None or not redis_server_version(binary).startswith("7.0."):
            raise unittest.SkipTest("no redis-server 7.0.x to load the file")
        server = Server()
        self.addCleanup(server.stop)
        server.start()
        rng = random.Random(11)
        with Client(server.port) as s:
            populate(s, rng, "a")
            add_streams(s, 9)
            s.call("SELECT", 3)
            populate(s, rng, "b")
            s.call("SELECT", 0)
            s.call("FUNCTION", "LOAD", "#!lua name=mylib\n"
                   "redis.register_function('answer', function() return 42 end)")
            s.call("GCRA.TAKE", "gcra:1", 10, "1h")  # a string state: Redis holds it as one
            self.assertEqual(s.call("SAVE"), "OK")
            expected = {db: keyspace(s, db) for db in (0, 3)}
            self.assertEqual(len(expected[0]), 36)
            redis_ref = RedisReference(binary)
            with open(os.path.join(server.datadir, "dump.rdb"), "rb") as f:
                saved = f.read()
            with open(os.path.join(redis_ref.workdir, "dump.rdb"), "wb") as f:
                f.write(saved)
            redis_ref.start()
            self.addCleanup(redis_ref.stop)
            with Client(redis_ref.port) as r:
                for db in (0, 3):
                    self.assertEqual(keyspace(r, db), expected[db])
                self.assertEqual(r.call("FCALL", "answer", 0), 42)
            # BGSAVE writes it too.
            s.call("SET", "later", "1")
            self.assertEqual(s.call("BGSAVE"), "Background saving started")
            for _ in range(600):
                with open(os.path.join(server.datadir, "dump.rdb"), "rb") as f:
                    if f.read() != saved:
                        break
                time.sleep(0.05)
            else:
                self.fail("BGSAVE did not rewrite dump.rdb")
            self.assertIn("dump.rdb (70 keys,", server.log())
            s.call("FLUSHALL")
            s.call("FUNCTION", "FLUSH")
        server.restart()
        with Client(server.port) as s:
            self.assertEqual(s.call("DBSIZE"), 0)
        self.assertIn("ignored: this data dir's own SAVE wrote it", server.log())
