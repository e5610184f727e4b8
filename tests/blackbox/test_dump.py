"""DUMP / RESTORE / RESTORE-ASKING side by side with a reference redis-server 7.0.15.

- ErrorsTest: every RESTORE error (options, BUSYKEY before the TTL, TTL, payload checks, bad
  format) and the expiry rules (a TTL in the past, ABSTTL, REPLACE) sent to both servers, raw
  replies compared byte for byte, and the keyspace after each step compared.
- RoundTripTest: seeded random data of every type in every encoding Redis 7.0 picks (int, raw
  and LZF strings; quicklist lists; listpack and hashtable hashes; intset and hashtable sets;
  listpack and skiplist sorted sets), with and without TTLs: Redis DUMP -> Sluice RESTORE ->
  Sluice DUMP -> Redis RESTORE, values equal on all three and expiry times equal to the ms
  (ABSTTL with PEXPIRETIME). `SLUICE_DUMP_SEED=n` adds a seed.
- StreamTest: streams (RDB_TYPE_STREAM_LISTPACKS_2): the same XADD/XGROUP/XTRIM ~ commands on
  both servers give the same DUMP bytes; a stream with reads, acks, claims, deletes and exact
  trims round trips Redis -> Sluice -> Redis with XINFO STREAM FULL equal and grows on into the
  same nodes; MIGRATE both ways; damaged stream payloads refused as Redis refuses them.
- DamagedTest: a flipped byte in every position, every truncation, a newer RDB version and
  damaged objects under a valid checksum: the exact error on both servers, nothing written.
- MigrateTest: MIGRATE both ways (Sluice -> Redis, Redis -> Sluice) with KEYS, COPY, REPLACE,
  a destination db and TTLs; its errors (NOKEY, IOERR, the target's BUSYKEY and AUTH errors,
  KEYS with a key, syntax) compared with Redis's own MIGRATE; the cached connection (one
  connection and one SELECT for repeated MIGRATEs, one retry when the target closed it, closed
  after 10 s idle), both ways.
- LimiterStateTest: a GCRA TAT written by a Lua script on Redis moves with DUMP/RESTORE and
  GCRA.TAKE continues from it; Sluice's own limiter kinds refuse DUMP with a clear error.
"""
import os
import random
import struct
import time
import unittest

from harness import IS_REDIS, BlackboxTestCase, Client, RespError, free_port
from test_transactions import start_beside_reference


def crc64(data, crc=0):
    """Redis's CRC64 (Jones, reflected), for crafting payloads; written from the definition."""
    poly = 0x95AC9329AC4BC9B5
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ poly if crc & 1 else crc >> 1
    return crc


def with_footer(obj, version=10):
    body = obj + struct.pack("<H", version)
    return body + struct.pack("<Q", crc64(body))


def read_value(c, key):
    """The key's type and value in a comparable form (sets sorted, hashes as sorted pairs)."""
    t = c.call("TYPE", key)
    if t == "string":
        return t, c.call("GET", key)
    if t == "list":
        return t, c.call("LRANGE", key, 0, -1)
    if t == "set":
        return t, sorted(c.call("SMEMBERS", key))
    if t == "hash":
        flat = c.call("HGETALL", key)
        return t, sorted(zip(flat[::2], flat[1::2]))
    if t == "zset":
        return t, c.call("ZRANGE", key, 0, -1, "WITHSCORES")
    if t == "stream":
        return t, (c.call("XRANGE", key, "-", "+"), stream_full(c, key))
    return t, None


def stream_full(c, key):
    """XINFO STREAM FULL COUNT 0 (every entry, PEL and consumer, with their absolute delivery
    and seen times) without radix-tree-nodes: the radix tree's inner nodes are Redis's own."""
    flat = c.call("XINFO", "STREAM", key, "FULL", "COUNT", 0)
    return [None if i > 0 and flat[i - 1] == b"radix-tree-nodes" else v
            for i, v in enumerate(flat)]


def lzf_decompress(data, size):
    out = bytearray()
    i = 0
    while i < len(data):
        ctrl = data[i]
        i += 1
        if ctrl < 32:
            out += data[i:i + ctrl + 1]
            i += ctrl + 1
            continue
        length = ctrl >> 5
        if length == 7:
            length += data[i]
            i += 1
        ref = len(out) - ((ctrl & 0x1f) << 8) - data[i] - 1
        i += 1
        for k in range(length + 2):
            out.append(out[ref + k])
    assert len(out) == size
    return bytes(out)


def rdb_length(b, i):
    first = b[i]
    kind = first >> 6
    if kind == 0:
        return first & 0x3f, i + 1, False
    if kind == 1:
        return ((first & 0x3f) << 8) | b[i + 1], i + 2, False
    if kind == 3:
        return first & 0x3f, i + 1, True
    width = 4 if first == 0x80 else 8
    return int.from_bytes(b[i + 1:i + 1 + width], "big"), i + 1 + width, False


def rdb_string(b, i):
    n, i, special = rdb_length(b, i)
    if not special:
        return b[i:i + n], i + n
    if n == 3:  # LZF
        clen, i, _ = rdb_length(b, i)
        size, i, _ = rdb_length(b, i)
        return lzf_decompress(b[i:i + clen], size), i + clen
    width = {0: 1, 1: 2, 2: 4}[n]
    return str(int.from_bytes(b[i:i + width], "little", signed=True)).encode(), i + width


def stream_dump_parts(payload):
    """A stream's DUMP as (type, [(node key, listpack bytes)], the rest of the object): the
    listpacks uncompressed. Redis's LZF (liblzf with INIT_HTAB 0: its hash table starts with
    whatever the stack held) may pick other matches for the same bytes, so compressed node
    strings are compared by what they hold."""
    nodes, i, _ = rdb_length(payload, 1)
    out = []
    for _ in range(nodes):
        key, i = rdb_string(payload, i)
        lp, i = rdb_string(payload, i)
        out.append((key, lp))
    return payload[0], out, payload[i:-10]


def stream_commands(rng, key, entries):
    """XADDs with explicit IDs (so two servers build the same stream): field sets equal to the
    first entry's (master fields) or not, integer-like fields and values, long values that
    close a node by its bytes, LZF-compressible ones; consumer groups at the start, the end and
    in the middle (with ENTRIESREAD), and an approximate trim (whole nodes only)."""
    cmds = []
    ms, seq = 1700000000000 + rng.randrange(10**6), 0
    ids = []
    for _ in range(entries):
        if rng.random() < 0.3:
            seq += 1
        else:
            ms, seq = ms + rng.randrange(1, 10**6), rng.randrange(3)
        shape = rng.randrange(4)
        if shape < 2:
            fields = ["a", random_string(rng), "b", random_string(rng)]
        elif shape == 2:
            fields = ["x", random_string(rng)]
        else:
            fields = [str(rng.randrange(-5000, 5000)), random_string(rng), "a", "1"]
        ids.append("%d-%d" % (ms, seq))
        cmds.append(("XADD", key, ids[-1], *fields))
    cmds += [("XGROUP", "CREATE", key, "g1", "0"), ("XGROUP", "CREATE", key, "g2", "$"),
             ("XGROUP", "CREATE", key, "77", ids[entries // 3], "ENTRIESREAD", entries // 3),
             ("XTRIM", key, "MAXLEN", "~", entries - 120)]
    return cmds


def random_bytes(rng, n):
    return bytes(rng.randrange(256) for _ in range(n))


def random_string(rng):
    kind = rng.randrange(6)
    if kind == 0:
        return str(rng.randrange(-2**31, 2**31)).encode()  # int-encoded
    if kind == 1:
        return str(rng.randrange(-2**63, 2**63)).encode()  # too long for int encoding
    if kind == 2:
        return (b"abc" * rng.randrange(8, 200))[: rng.randrange(21, 600)]  # LZF
    if kind == 3:
        return random_bytes(rng, rng.randrange(0, 40))
    if kind == 4:
        return b"x" * rng.randrange(64, 5000)  # past listpack's value limit
    return ("%d" % rng.randrange(0, 100)).encode()


def populate(c, rng, prefix):
    """Writes one key of each type in small and large sizes on `c`; returns the key names."""
    keys = []
    for i in range(12):
        k = "%s:str:%d" % (prefix, i)
        c.call("SET", k, random_string(rng))
        keys.append(k)
    for size in (1, 5, 130, 700):
        k = "%s:list:%d" % (prefix, size)
        c.call("RPUSH", k, *[random_string(rng) for _ in range(size)])
        keys.append(k)
        k = "%s:hash:%d" % (prefix, size)
        flat = []
        for j in range(size):
            flat += [b"f%d" % j, random_string(rng)]
        c.call("HSET", k, *flat)
        keys.append(k)
        k = "%s:intset:%d" % (prefix, size)
        c.call("SADD", k, *[str(rng.randrange(-2**40, 2**40)) for _ in range(size)])
        keys.append(k)
        k = "%s:set:%d" % (prefix, size)
        c.call("SADD", k, *[b"m%d" % j for j in range(size)] + [random_string(rng)])
        keys.append(k)
        k = "%s:zset:%d" % (prefix, size)
        flat = []
        for j in range(size):
            score = rng.choice([rng.randrange(-1000, 1000), rng.uniform(-1e9, 1e9), 0.5,
                                float("inf"), float("-inf")])
            flat += [repr(score) if isinstance(score, float) else str(score), b"z%d" % j]
        c.call("ZADD", k, *flat)
        keys.append(k)
    for k in keys:
        if rng.random() < 0.4:
            c.call("PEXPIRE", k, rng.randrange(60_000, 10_000_000))
    big = "%s:zset:long-member" % prefix
    c.call("ZADD", big, 1, b"m" * 100)  # a member past listpack's limit: skiplist
    keys.append(big)
    return keys


@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class DumpBesideRedis(BlackboxTestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.sluice, cls.redis = start_beside_reference()
        cls.s = Client(cls.sluice.port)
        cls.r = Client(cls.redis.port)

    @classmethod
    def tearDownClass(cls):
        cls.s.close()
        cls.r.close()
        cls.redis.stop()
        cls.sluice.stop()

    def setUp(self):
        self.s.call("FLUSHALL")
        self.r.call("FLUSHALL")

    def both(self, *args):
        """Sends args to both servers; the replies must be equal. Returns Redis's."""
        got_r = self.r.call(*args)
        got_s = self.s.call(*args)
        self.assertEqual(got_s, got_r, "reply to %r" % (args[:3],))
        return got_r

    def assert_same_key(self, key):
        self.assertEqual(read_value(self.s, key), read_value(self.r, key), key)
        self.assertEqual(self.s.call("PEXPIRETIME", key), self.r.call("PEXPIRETIME", key), key)


class ErrorsTest(DumpBesideRedis):
    def test_errors_and_options(self):
        self.both("SET", "src", "hello")
        payload = self.r.call("DUMP", "src")
        self.assertEqual(self.s.call("DUMP", "src"), payload)  # the same bytes for a raw string
        self.assertEqual(self.both("DUMP", "nosuchkey"), None)
        steps = [
            ("RESTORE", "k", "0", payload),
            ("RESTORE", "k", "0", payload),  # BUSYKEY
            ("RESTORE", "k", "abc", payload),  # BUSYKEY comes before the TTL
            ("RESTORE", "k2", "abc", payload),
            ("RESTORE", "k2", "-1", payload),
            ("RESTORE", "k2", "0", "short"),
            ("RESTORE", "k2", "0", payload, "bogus"),
            ("RESTORE", "k2", "0", payload, "IDLETIME", "-1"),
            ("RESTORE", "k2", "0", payload, "IDLETIME", "x"),
            ("RESTORE", "k2", "0", payload, "FREQ", "256"),
            ("RESTORE", "k2", "0", payload, "FREQ", "-1"),
            ("RESTORE", "k2", "0", payload, "FREQ", "5", "IDLETIME", "5"),
            ("RESTORE", "k2", "0", payload, "IDLETIME", "5", "FREQ", "5"),
            ("RESTORE", "k2", "0", payload, "IDLETIME"),
            ("RESTORE", "k2", "0", payload, "FREQ", "5"),
            ("RESTORE", "k", "0", payload, "REPLACE", "IDLETIME", "100"),
            ("RESTORE", "k3", "1", payload, "ABSTTL"),  # long past: nothing written
            ("RESTORE", "k", "1", payload, "ABSTTL", "REPLACE"),  # past: k deleted
            ("RESTORE", "k4", "100000", payload),
            ("RESTORE", "k5", "99999999999999", payload, "ABSTTL"),
            ("RESTORE-ASKING", "k6", "0", payload),
            ("RESTORE-ASKING", "k6", "0", payload),
            ("RESTORE", "k7", "0", with_footer(b"\x01\x00")),  # an empty list
            ("RESTORE", "k7", "0", with_footer(b"\x06\x00")),  # a module value
            ("RESTORE", "k7", "0", with_footer(b"\x02\x02\x01a\x01a")),  # a repeated member
            ("RESTORE", "k7", "0", with_footer(b"\x00\x05hello", version=11)),
            ("RESTORE", "k7", "0", with_footer(b"\x00\x05hello", version=9)),  # older: fine
        ]
        for step in steps:
            self.both(*step)
            for key in ("k", "k2", "k3", "k4", "k5", "k6", "k7"):
                self.assertEqual(self.s.call("EXISTS", key), self.r.call("EXISTS", key), key)
        self.assertEqual(self.s.call("PEXPIRETIME", "k5"), 99999999999999)
        self.assertTrue(0 < self.s.call("PTTL", "k4") <= 100000)
        self.both("SET", "wrongtype-target", "x")
        self.both("RESTORE", "wrongtype-target", "0",
                  self.r.call("DUMP", "k6"), "REPLACE")


class RoundTripTest(DumpBesideRedis):
    def round_trip(self, seed):
        rng = random.Random(seed)
        keys = populate(self.r, rng, "s%d" % seed)
        encodings = {self.r.call("OBJECT", "ENCODING", k).decode() for k in keys}
        self.assertTrue({"int", "embstr", "raw", "quicklist", "listpack", "hashtable", "intset",
                         "skiplist"} <= encodings, encodings)
        for key in keys:
            payload = self.r.call("DUMP", key)
            at = self.r.call("PEXPIRETIME", key)
            ttl = str(max(at, 0))
            self.assertEqual(self.s.call("RESTORE", key, ttl, payload, "ABSTTL"), "OK", key)
            self.assert_same_key(key)
            back = self.s.call("DUMP", key)
            self.assertEqual(self.r.call("RESTORE", key, ttl, back, "ABSTTL", "REPLACE"), "OK")
            self.assert_same_key(key)
            # Sluice restores its own payload too (a second key, REPLACE over another type).
            self.s.call("SET", key + ":copy", "x")
            self.assertEqual(self.s.call("RESTORE", key + ":copy", "0", back, "REPLACE"), "OK")
            self.assertEqual(read_value(self.s, key + ":copy"), read_value(self.r, key))
        self.assertEqual(self.s.call("DBSIZE"), 2 * self.r.call("DBSIZE"))

    def test_round_trips(self):
        seeds = [1, 2]
        if os.environ.get("SLUICE_DUMP_SEED"):
            seeds.append(int(os.environ["SLUICE_DUMP_SEED"]))
        for seed in seeds:
            with self.subTest(seed=seed):
                self.setUp()
                self.round_trip(seed)


class StreamTest(DumpBesideRedis):
    """Streams as RDB_TYPE_STREAM_LISTPACKS_2: the same commands on both servers give the same
    DUMP bytes (node listpacks compared uncompressed: see stream_dump_parts); a stream Redis grew with reads, acks, claims, deletes and exact trims (whose
    tombstones Sluice does not keep) round trips Redis -> Sluice -> Redis with XINFO STREAM FULL
    equal, and keeps growing into the nodes Redis would make; damaged payloads are refused
    as Redis refuses them, writing nothing."""

    def test_same_commands_same_bytes(self):
        for seed in (3, 4):
            rng = random.Random(seed)
            for key, entries in (("big", 400), ("small", 130)):
                for cmd in stream_commands(rng, key, entries):
                    self.both(*cmd)
                self.assertGreater(self.r.call("XINFO", "STREAM", key)[3], 2)  # nodes
                self.assertEqual(stream_dump_parts(self.s.call("DUMP", key)),
                                 stream_dump_parts(self.r.call("DUMP", key)), key)
            self.both("XGROUP", "CREATE", "empty", "g", "$", "MKSTREAM")
            self.assertEqual(self.s.call("DUMP", "empty"), self.r.call("DUMP", "empty"))
            self.setUp()

    def grow_on_redis(self, key):
        """Reads, acks, claims, deletes and an exact trim: what only Redis's clock decides."""
        r = self.r
        for cmd in stream_commands(random.Random(5), key, 300):
            r.call(*cmd)
        r.call("XREADGROUP", "GROUP", "g1", "c1", "COUNT", 5, "STREAMS", key, ">")
        r.call("XREADGROUP", "GROUP", "g1", "c2", "COUNT", 7, "STREAMS", key, ">")
        r.call("XREADGROUP", "GROUP", "77", "c1", "COUNT", 3, "STREAMS", key, ">")
        ids = [e[0] for e in r.call("XRANGE", key, "-", "+")]
        r.call("XACK", key, "g1", ids[0])
        r.call("XCLAIM", key, "g1", "c3", 0, ids[2], "RETRYCOUNT", 5)
        r.call("XDEL", key, ids[3], ids[40], ids[41], ids[-1])
        r.call("XGROUP", "CREATECONSUMER", key, "g1", "idle")
        r.call("XTRIM", key, "MAXLEN", len(ids) - 8)
        r.call("PEXPIRE", key, 10**7)

    def test_round_trip_with_groups_and_tombstones(self):
        self.grow_on_redis("s")
        payload = self.r.call("DUMP", "s")
        at = self.r.call("PEXPIRETIME", "s")
        self.assertEqual(self.s.call("RESTORE", "s", at, payload, "ABSTTL"), "OK")
        self.assert_same_key("s")
        self.assertEqual(self.s.call("XINFO", "GROUPS", "s"), self.r.call("XINFO", "GROUPS", "s"))
        for group in (b"g1", b"77"):
            self.assertEqual(self.s.call("XPENDING", "s", group),
                             self.r.call("XPENDING", "s", group))
        back = self.s.call("DUMP", "s")
        # REPLACE over the stream itself, and Sluice's payload on Sluice.
        self.assertEqual(self.s.call("RESTORE", "s", at, back, "ABSTTL", "REPLACE"), "OK")
        self.assert_same_key("s")
        self.assertEqual(self.r.call("RESTORE", "copy", at, back, "ABSTTL"), "OK")
        self.assertEqual(read_value(self.r, "copy"), read_value(self.r, "s"))
        self.assertEqual(self.r.call("PEXPIRETIME", "copy"), at)
        # Both keep growing into the same nodes (Sluice kept Redis's node sizes and counts).
        for i in range(250):
            self.both("XADD", "s", "*" if i % 2 else "9999999999999-%d" % i, "a", "v%d" % i)
        self.assertEqual(self.s.call("XINFO", "STREAM", "s")[:4],
                         self.r.call("XINFO", "STREAM", "s")[:4])  # length, nodes
        # The stream restored on Sluice works as a stream: groups read on.
        self.both("XREADGROUP", "GROUP", "g2", "c9", "COUNT", 3, "STREAMS", "s", ">")

    def test_migrate_streams_both_ways(self):
        self.grow_on_redis("s")
        expected = read_value(self.r, "s")
        self.assertEqual(self.r.call("MIGRATE", "127.0.0.1", self.sluice.port, "s", 0, 5000),
                         "OK")
        self.assertEqual(read_value(self.s, "s"), expected)
        self.assertEqual(self.s.call("MIGRATE", "127.0.0.1", self.redis.port, "s", 0, 5000),
                         "OK")
        self.assertEqual(read_value(self.r, "s"), expected)
        self.assertEqual(self.s.call("EXISTS", "s"), 0)

    def test_damaged_streams_refused_as_redis_does(self):
        self.grow_on_redis("s")
        good = self.r.call("DUMP", "s")
        obj = good[:-10]
        bad_payloads = [with_footer(obj[:n]) for n in range(1, len(obj), 97)]
        bad_payloads += [good[:-1] + bytes([good[-1] ^ 1]), with_footer(b"\x13\x01\x00")]
        refused = 0
        for bad in bad_payloads:
            # As Redis, the object is read from the whole payload: a cut inside the last
            # metadata lengths may read them from the footer, and both servers accept it.
            got_r = self.r.call("RESTORE", "dst", "0", bad)
            self.assertEqual(self.s.call("RESTORE", "dst", "0", bad), got_r)
            self.assertEqual(self.s.call("EXISTS", "dst"), self.r.call("EXISTS", "dst"))
            refused += isinstance(got_r, RespError)
            self.both("DEL", "dst")
        self.assertGreater(refused, len(bad_payloads) - 3)


class DamagedTest(DumpBesideRedis):
    def test_damaged_payloads_are_refused_and_write_nothing(self):
        self.both("RPUSH", "src", *["element-%d" % i for i in range(10)])
        self.both("HSET", "h", "a", "1", "b", "2")
        for src in ("src", "h"):
            good = self.r.call("DUMP", src)
            bad_payloads = []
            for i in range(len(good)):
                flipped = bytearray(good)
                flipped[i] ^= 0x01
                bad_payloads.append(bytes(flipped))
            bad_payloads += [good[:n] for n in range(len(good))]
            bad_payloads.append(with_footer(good[:-10], version=11))
            bad_payloads.append(with_footer(good[:-14]))  # object cut short, CRC fine
            for bad in bad_payloads:
                got_r = self.r.call("RESTORE", "dst", "0", bad)
                got_s = self.s.call("RESTORE", "dst", "0", bad)
                self.assertIsInstance(got_r, RespError)
                self.assertEqual(got_s, got_r, bad)
                self.assertEqual(self.s.call("EXISTS", "dst"), 0)
            self.assertIn("RESTORE refused a payload", self.sluice.log())


class MigrateTest(DumpBesideRedis):
    def write_sample(self, c):
        c.call("SET", "s", "value")
        c.call("SET", "n", "12345")
        c.call("RPUSH", "l", *["e%d" % i for i in range(200)])
        c.call("HSET", "h", "a", "1", "b", "2")
        c.call("SADD", "set", "1", "2", "x")
        c.call("ZADD", "z", "1.5", "m", "-3", "n")
        c.call("PEXPIRE", "h", 500000)
        return ["s", "n", "l", "h", "set", "z"]

    def migrate_between(self, src, dst, dst_port):
        keys = self.write_sample(src)
        values = {k: read_value(src, k) for k in keys}
        self.assertEqual(src.call("MIGRATE", "127.0.0.1", dst_port, "", 2, 5000, "KEYS", *keys),
                         "OK")
        self.assertEqual(src.call("EXISTS", *keys), 0)
        dst.call("SELECT", 2)
        for k in keys:
            self.assertEqual(read_value(dst, k), values[k], k)
        self.assertTrue(0 < dst.call("PTTL", "h") <= 500000)
        self.assertEqual(dst.call("PTTL", "s"), -1)
        dst.call("SELECT", 0)
        # COPY keeps the source; REPLACE overwrites the target's key.
        src.call("SET", "s", "again")
        self.assertEqual(src.call("MIGRATE", "127.0.0.1", dst_port, "s", 2, 5000, "COPY",
                                  "REPLACE"), "OK")
        self.assertEqual(src.call("GET", "s"), b"again")
        dst.call("SELECT", 2)
        self.assertEqual(dst.call("GET", "s"), b"again")
        dst.call("SELECT", 0)
        # Both MIGRATEs went over one connection, which the source keeps for the next (10 s).
        self.assertIn(b"\r\nmigrate_cached_sockets:1\r\n", src.call("INFO", "stats"))

    def test_sluice_to_redis(self):
        self.migrate_between(self.s, self.r, self.redis.port)

    def test_redis_to_sluice(self):
        self.migrate_between(self.r, self.s, self.sluice.port)

    def test_errors_as_redis_gives_them(self):
        closed = free_port()
        for c in (self.s, self.r):
            c.call("SET", "k", "v")
        # The other server of each pair is the target; both already hold k.
        cases = [
            ("MIGRATE", "127.0.0.1", "{other}", "missing", 0, 1000),
            ("MIGRATE", "127.0.0.1", "{other}", "missing", 0, 1000, "KEYS", "a"),
            ("MIGRATE", "127.0.0.1", "{other}", "", 0, 1000, "KEYS", "missing"),
            ("MIGRATE", "127.0.0.1", "{other}", "k", 0, 1000, "BOGUS"),
            ("MIGRATE", "127.0.0.1", "{other}", "k", "x", 1000),
            ("MIGRATE", "127.0.0.1", "{other}", "k", 0, "x"),
            ("MIGRATE", "127.0.0.1", "{other}", "k", 0, 1000, "AUTH"),
            ("MIGRATE", "127.0.0.1", str(closed), "k", 0, 1000),
            ("MIGRATE", "127.0.0.1", "{other}", "k", 0, 1000),  # BUSYKEY on the target
            ("MIGRATE", "127.0.0.1", "{other}", "k", 0, 1000, "AUTH", "pw"),
            ("MIGRATE", "127.0.0.1", "{other}", "k", 0, 1000, "AUTH2", "u", "pw", "COPY"),
        ]
        for case in cases:
            got = []
            for c, other in ((self.s, self.redis.port), (self.r, self.sluice.port)):
                args = [str(other) if a == "{other}" else a for a in case]
                got.append(c.call(*args))
            self.assertEqual(got[0], got[1], case)
        self.assertEqual(self.s.call("GET", "k"), b"v")  # nothing taken by a failed MIGRATE

    def target_counters(self, target):
        info = target.call("INFO", "all").decode()
        fields = dict(line.split(":", 1) for line in info.splitlines() if ":" in line)
        select = fields.get("cmdstat_select", "calls=0").split(",")[0].split("=")[1]
        return int(fields["total_connections_received"]), int(select)

    def migrate_client_ids(self, target):
        lines = target.call("CLIENT", "LIST").decode().splitlines()
        return [line.split()[0].split("=")[1] for line in lines if "cmd=restore" in line]

    def cached_connection(self, src, dst, dst_port):
        """Three MIGRATEs to one target share one connection and one SELECT; a connection the
        target closed is replaced by one retry; an idle one is closed within ~10 s."""
        conns0, selects0 = self.target_counters(dst)
        for i in range(3):
            src.call("SET", "m%d" % i, "v")
            self.assertEqual(src.call("MIGRATE", "127.0.0.1", dst_port, "m%d" % i, 3, 5000), "OK")
        self.assertEqual(self.target_counters(dst), (conns0 + 1, selects0 + 1))
        ids = self.migrate_client_ids(dst)
        self.assertEqual(len(ids), 1)
        self.assertEqual(dst.call("CLIENT", "KILL", "ID", ids[0]), 1)
        src.call("SET", "m9", "v")
        self.assertEqual(src.call("MIGRATE", "127.0.0.1", dst_port, "m9", 3, 5000), "OK")
        self.assertEqual(self.target_counters(dst), (conns0 + 2, selects0 + 2))
        deadline = time.monotonic() + 30
        while self.migrate_client_ids(dst) and time.monotonic() < deadline:
            time.sleep(0.5)
        self.assertEqual(self.migrate_client_ids(dst), [])

    def test_cached_connection_sluice_to_redis(self):
        self.cached_connection(self.s, self.r, self.redis.port)

    def test_cached_connection_redis_to_sluice(self):
        self.cached_connection(self.r, self.s, self.sluice.port)


@unittest.skipIf(IS_REDIS, "Sluice's limiters")
class LimiterStateTest(DumpBesideRedis):
    # A GCRA take of `cost` units on Redis, keeping the TAT as redis-cell does: nanoseconds
    # since the Unix epoch as a decimal string, expiring when the limiter is full again.
    GCRA_LUA = """
local t = redis.call('TIME')
local now = t[1] * 1000000000 + t[2] * 1000
local interval = tonumber(ARGV[1])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
tat = tat + interval * tonumber(ARGV[2])
redis.call('SET', KEYS[1], string.format('%d', tat), 'PX', math.ceil((tat - now) / 1000000))
return string.format('%d', tat)
"""

    def test_gcra_state_moves_with_its_meaning(self):
        # 10 per 100 s: one unit every 10 s, so the moments between the two servers do not count.
        self.r.call("EVAL", self.GCRA_LUA, 1, "api:alice", 10 * 10**9, 4)
        payload = self.r.call("DUMP", "api:alice")
        pttl = self.r.call("PTTL", "api:alice")
        self.assertEqual(self.s.call("RESTORE", "api:alice", pttl, payload), "OK")
        self.assertEqual(self.s.call("GET", "api:alice"), self.r.call("GET", "api:alice"))
        fresh = self.s.call("GCRA.TAKE", "api:bob", 10, "100s")
        moved = self.s.call("GCRA.TAKE", "api:alice", 10, "100s")
        self.assertEqual(fresh[:2], [1, 9])
        self.assertEqual(moved[:2], [1, 5])  # 4 taken on Redis, 1 here

    def test_native_limiter_kinds_refuse_dump(self):
        self.s.call("LEAKY.TAKE", "l", 10, "1s")
        self.assertEqual(self.s.call("DUMP", "l"),
                         "ERR cannot DUMP Sluice's native 'leaky' limiter state: it has no "
                         "Redis form")


if __name__ == "__main__":
    unittest.main()
