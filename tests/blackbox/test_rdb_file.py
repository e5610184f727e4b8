"""A Redis `dump.rdb` found in an empty data dir is loaded at start.

- LoadTest: seeded random data of every type and encoding in databases 0 and 3, with expiry
  times, saved by a reference redis-server 7.0.15 (SAVE); Sluice started on a data dir holding
  that dump.rdb serves every key with Redis's value and expiry time to the ms, logs its
  progress, and on restart (now holding keys) ignores the file. Its function library is loaded
  and FCALL runs it.
- RefusedTest: a damaged file (one flipped byte), a function library that does not compile,
  and a file that is not RDB: Sluice refuses to start with the reason in its log and writes nothing.
"""
import os
import random
import struct
import unittest

from harness import IS_REDIS, BlackboxTestCase, Client, Server
from test_dump import crc64, populate, read_value
from test_transactions import RedisReference, redis_server_binary, redis_server_version


def reference_redis():
    binary = redis_server_binary()
    if binary is None or not redis_server_version(binary).startswith("7.0."):
        raise unittest.SkipTest("no redis-server 7.0.x to write the RDB file")
    return RedisReference(binary).start()


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
        self.r.call("SELECT", 3)
        populate(self.r, rng, "b")
        self.r.call("SELECT", 0)
        self.r.call("FUNCTION", "LOAD", "#!lua name=mylib\n"
                    "redis.register_function('answer', function() return 42 end)")
        server = self.sluice_with(self.saved_file()).start()
        with Client(server.port) as s:
            for db in (0, 3):
                expected = keyspace(self.r, db)
                self.assertEqual(len(expected), 33)  # populate: 12 strings, 5 x 4 collections, 1
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
