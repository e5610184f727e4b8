"""The rest of Redis 7.0's command surface, side by side with a real redis-server 7.0.15: SORT
and SORT_RO (every option over lists, sets and sorted sets), geo (GEOADD scores equal to Redis's
over random points, GEOPOS/GEODIST/GEOHASH/GEOSEARCH/GEORADIUS* replies), TOUCH, MOVE, SWAPDB,
CLIENT REPLY and the FUNCTION engine name. Raw replies compared byte for byte in RESP2 and
RESP3."""
import os
import random
import shutil
import tempfile
import threading
import time
import unittest

from harness import IS_REDIS, BlackboxTestCase, Client, Server, encode_command, sluice_only
from test_transactions import BesideReference, read_raw_reply

# Data every SORT case starts from: a list with repeats, numbers and words, a set, a sorted set,
# weights and hash fields for BY and GET.
SORT_SETUP = [
    ["RPUSH", "l", "3", "1", "2", "10", "2", "-1.5"],
    ["RPUSH", "w", "b", "a", "c", "B", "aa", ""],
    ["SADD", "s", "5", "3", "9", "1"],
    ["ZADD", "z", "3", "c", "1", "a", "2", "b", "2", "bb"],
    ["MSET", "wt_3", "30", "wt_1", "10", "wt_2", "20", "wt_10", "5", "wt_c", "1", "wt_a", "3"],
    ["MSET", "name_1", "one", "name_2", "two", "name_3", "three"],
    ["HSET", "h_1", "f", "z"], ["HSET", "h_2", "f", "y"], ["HSET", "h_3", "f", "x"],
    ["HSET", "h_a", "f", "2"], ["HSET", "h_b", "f", "1"],
    ["SET", "str", "x"],
]

SORT_CASES = [
    ["SORT", "l"], ["SORT", "l", "DESC"], ["SORT", "w"], ["SORT", "w", "ALPHA"],
    ["SORT", "w", "ALPHA", "DESC"], ["SORT", "s"], ["SORT", "s", "DESC", "LIMIT", "1", "2"],
    ["SORT", "z"], ["SORT", "z", "ALPHA"], ["SORT", "z", "BY", "nosort"],
    ["SORT", "z", "BY", "nosort", "DESC"], ["SORT", "z", "BY", "nosort", "LIMIT", "1", "2"],
    ["SORT", "z", "BY", "nosort", "DESC", "LIMIT", "1", "2"], ["SORT", "l", "BY", "nosort"],
    ["SORT", "l", "BY", "nosort", "DESC", "LIMIT", "0", "3"], ["SORT", "l", "BY", "wt_*"],
    ["SORT", "l", "BY", "wt_*", "DESC"], ["SORT", "l", "BY", "wt_*", "ALPHA"],
    ["SORT", "l", "BY", "h_*->f", "ALPHA"], ["SORT", "z", "BY", "h_*->f"],
    ["SORT", "l", "GET", "name_*"], ["SORT", "l", "GET", "#", "GET", "name_*", "GET", "h_*->f"],
    ["SORT", "l", "GET", "nostar"], ["SORT", "l", "GET", "h_*->"],
    ["SORT", "l", "LIMIT", "2", "3"], ["SORT", "l", "LIMIT", "-5", "2"],
    ["SORT", "l", "LIMIT", "10", "2"], ["SORT", "l", "LIMIT", "1", "-1"],
    ["SORT", "l", "LIMIT", "1", "0"], ["SORT", "l", "LIMIT", "x", "1"],
    ["SORT", "l", "LIMIT", "1"], ["SORT", "l", "STORE", "dst"], ["LRANGE", "dst", "0", "-1"],
    ["SORT", "l", "GET", "name_*", "STORE", "dst"], ["LRANGE", "dst", "0", "-1"],
    ["SORT", "nokey", "STORE", "dst"], ["EXISTS", "dst"], ["SORT", "s", "BY", "x", "STORE", "d2"],
    ["LRANGE", "d2", "0", "-1"], ["SORT", "w"], ["SORT", "str"], ["SORT", "nokey"],
    ["SORT", "l", "BOGUS"], ["SORT_RO", "l", "STORE", "x"], ["SORT_RO", "l", "DESC", "LIMIT",
                                                           "0", "2"],
    ["SORT", "l", "ASC", "DESC", "ALPHA"], ["SORT", "z", "BY", "wt_*", "GET", "#"],
    ["SORT", "str", "BOGUS"], ["SORT"],
]

GEO_SETUP = [
    ["GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"],
    ["GEOADD", "g", "12.496365", "41.902782", "Rome", "14.268124", "40.851799", "Naples",
     "2.352222", "48.856613", "Paris", "-0.127758", "51.507351", "London"],
]

GEO_CASES = [
    ["ZRANGE", "g", "0", "-1", "WITHSCORES"], ["GEOPOS", "g", "Palermo", "nope", "Rome"],
    ["GEOPOS", "nokey", "a"], ["GEODIST", "g", "Palermo", "Catania"],
    ["GEODIST", "g", "Palermo", "Catania", "km"], ["GEODIST", "g", "Palermo", "Paris", "MI"],
    ["GEODIST", "g", "Palermo", "Paris", "ft"], ["GEODIST", "g", "Palermo", "nope"],
    ["GEODIST", "nokey", "a", "b"], ["GEODIST", "g", "a", "b", "parsec"],
    ["GEODIST", "g", "a", "b", "km", "x"], ["GEOHASH", "g", "Palermo", "Catania", "nope"],
    ["GEOADD", "g", "200", "10", "x"], ["GEOADD", "g", "10", "86", "x"],
    ["GEOADD", "g", "abc", "10", "x"], ["GEOADD", "g", "1", "2"], ["GEOADD", "g", "NX", "XX", "1",
                                                                    "2", "x"],
    ["GEOADD", "g", "NX", "13.361389", "38.115556", "Palermo"],
    ["GEOADD", "g", "XX", "CH", "13.4", "38.1", "Palermo", "1", "1", "newone"],
    ["GEOADD", "g", "CH", "13.361389", "38.115556", "Palermo"], ["GEOADD", "str", "1", "1", "a"],
    ["GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "ASC"],
    ["GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "DESC", "WITHDIST",
     "WITHCOORD", "WITHHASH"],
    ["GEOSEARCH", "g", "FROMMEMBER", "Rome", "BYRADIUS", "2000", "km"],
    ["GEOSEARCH", "g", "FROMMEMBER", "Rome", "BYBOX", "800", "800", "km", "WITHDIST"],
    ["GEOSEARCH", "g", "FROMMEMBER", "Rome", "BYBOX", "3000", "3000", "km", "COUNT", "2"],
    ["GEOSEARCH", "g", "FROMMEMBER", "Rome", "BYRADIUS", "3000", "km", "COUNT", "3", "ANY"],
    ["GEOSEARCH", "g", "FROMMEMBER", "nope", "BYRADIUS", "10", "km"],
    ["GEOSEARCH", "nokey", "FROMMEMBER", "nope", "BYRADIUS", "10", "km"],
    ["GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "-1", "km"],
    ["GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "x", "km"],
    ["GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "yd"],
    ["GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYBOX", "1", "-1", "km"],
    ["GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYBOX", "x", "1", "km"],
    ["GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "COUNT", "0"],
    ["GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "ANY"],
    ["GEOSEARCH", "g", "FROMLONLAT", "15", "37", "COUNT", "1"],
    ["geosearch", "g", "BYRADIUS", "1", "km", "COUNT", "1"],
    ["GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "STORE", "x"],
    ["GEOSEARCHSTORE", "dst", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "500", "km"],
    ["ZRANGE", "dst", "0", "-1", "WITHSCORES"],
    ["GEOSEARCHSTORE", "dst", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "500", "km",
     "STOREDIST"], ["ZRANGE", "dst", "0", "-1", "WITHSCORES"],
    ["GEOSEARCHSTORE", "dst", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "500", "km",
     "WITHDIST"],
    ["GEOSEARCHSTORE", "dst", "nokey", "FROMLONLAT", "15", "37", "BYRADIUS", "5", "km"],
    ["EXISTS", "dst"],
    ["GEORADIUS", "g", "15", "37", "200", "km", "WITHDIST", "ASC"],
    ["GEORADIUS", "g", "15", "37", "2000", "km", "COUNT", "2", "DESC", "WITHCOORD"],
    ["GEORADIUS", "g", "15", "37", "2000", "km", "STORE", "d3"], ["ZRANGE", "d3", "0", "-1"],
    ["GEORADIUS", "g", "15", "37", "2000", "km", "STOREDIST", "d3", "WITHDIST"],
    ["GEORADIUS_RO", "g", "15", "37", "2000", "km", "STORE", "d3"],
    ["GEORADIUS_RO", "g", "15", "37", "300", "km"],
    ["GEORADIUSBYMEMBER", "g", "Palermo", "300", "km", "WITHDIST", "WITHHASH"],
    ["GEORADIUSBYMEMBER", "g", "nope", "300", "km"],
    ["GEORADIUSBYMEMBER_RO", "g", "Rome", "1500", "km", "COUNT", "3"],
    ["GEORADIUS", "g", "190", "37", "200", "km"], ["GEORADIUS", "str", "1", "1", "1", "km"],
    ["GEOSEARCH", "g", "FROMMEMBER", "Rome", "BYRADIUS", "0", "m", "WITHCOORD"],
    ["GEOSEARCH", "g", "FROMLONLAT", "0", "0", "BYRADIUS", "9000", "km", "WITHDIST"],
]

KEYSPACE_CASES = [
    ["SET", "a", "1"], ["EXPIRE", "a", "100"], ["RPUSH", "list", "x", "y"],
    ["TOUCH", "a", "a", "list", "nope"], ["MOVE", "a", "1"], ["EXISTS", "a"], ["SELECT", "1"],
    ["GET", "a"], ["TTL", "a"], ["SELECT", "0"], ["SET", "a", "2"], ["MOVE", "a", "1"],
    ["MOVE", "list", "1"], ["MOVE", "nope", "1"], ["MOVE", "a", "0"], ["MOVE", "a", "16"],
    ["MOVE", "a", "-1"], ["MOVE", "a", "x"], ["MOVE", "a", "99999999999"], ["SWAPDB", "0", "1"],
    ["GET", "a"], ["LRANGE", "list", "0", "-1"], ["DBSIZE"], ["SELECT", "1"], ["DBSIZE"],
    ["GET", "a"], ["SELECT", "0"], ["SWAPDB", "0", "0"], ["SWAPDB", "x", "1"],
    ["SWAPDB", "1", "x"], ["SWAPDB", "0", "16"], ["SWAPDB", "99999999999", "0"],
    ["CLIENT", "REPLY", "SKIP"], ["SET", "b", "1"], ["GET", "b"], ["CLIENT", "REPLY", "OFF"],
    ["SET", "b", "2"], ["INCR", "b"], ["CLIENT", "REPLY", "SKIP"], ["CLIENT", "REPLY", "ON"],
    ["GET", "b"], ["CLIENT", "REPLY", "SKIP"], ["CLIENT", "REPLY", "ON"], ["PING"],
    ["CLIENT", "REPLY", "maybe"], ["CLIENT", "NO-EVICT", "on"],
    ["FUNCTION", "LOAD", "#!LUA name=up\nredis.register_function('f', function() return 1 end)"],
    ["FCALL", "f", "0"], ["FUNCTION", "LOAD", "#!Lua NAME=up2\nredis.register_function('g', "
                                              "function() return 2 end)"],
    ["FUNCTION", "LOAD", "#!js name=x\nfoo"],
    ["SET", "n", "100"], ["SET", "n2", "10000"], ["OBJECT", "REFCOUNT", "n"],
    ["OBJECT", "REFCOUNT", "n2"], ["OBJECT", "REFCOUNT", "nope"],
    ["OBJECT", "IDLETIME", "nope"], ["OBJECT", "FREQ", "n"], ["OBJECT", "FREQ", "nope"],
    ["OBJECT", "REFCOUNT"], ["LASTSAVE", "x"],
    ["CONFIG", "SET", "slowlog-max-len", "-1"], ["CONFIG", "SET", "slowlog-max-len", "x"],
    ["CONFIG", "SET", "slowlog-log-slower-than", "-2"], ["CONFIG", "GET", "slowlog-max-len"],
    ["CONFIG", "GET", "slowlog-log-slower-than"], ["SLOWLOG", "GET", "-2"],
    ["SLOWLOG", "GET", "x"], ["SLOWLOG", "GET", "1", "2"], ["SLOWLOG", "RESET"],
    ["SLOWLOG", "LEN"], ["SLOWLOG", "HELP"], ["SLOWLOG", "BOGUS"],
]


def replies_without_reply_off(commands):
    """CLIENT REPLY OFF/SKIP cases read no reply for some commands; a PING at the end shows the
    stream is in step."""
    return commands + [["PING"]]


@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class SurfaceDifferentialTest(BesideReference):
    maxDiff = None

    def play(self, port, setup, commands, proto):
        """Runs setup then commands on a fresh connection, pipelined; the raw replies, read
        back after a final PING (so commands whose reply is switched off read nothing)."""
        with Client(port) as c:
            if proto == 3:
                self.assertEqual(c.call("HELLO", "3")[b"proto"], 3)
            for cmd in [["FLUSHALL"], ["FUNCTION", "FLUSH"]] + setup:
                c.send(encode_command(*cmd))
                read_raw_reply(c)
            c.send(b"".join(encode_command(*cmd) for cmd in commands + [["PING", "end"]]))
            out = []
            while True:
                raw = read_raw_reply(c)
                out.append(raw)
                if raw.endswith(b"end\r\n"):
                    return out

    def check(self, setup, commands):
        for proto in (2, 3):
            want = self.play(self.redis.port, setup, commands, proto)
            got = self.play(self.sluice.port, setup, commands, proto)
            self.assertEqual(len(got), len(want), "RESP%d" % proto)
            for cmd_index, (g, w) in enumerate(zip(got, want)):
                self.assertEqual(g, w, "RESP%d reply #%d" % (proto, cmd_index))

    def test_sort(self):
        for case in SORT_CASES:
            with self.subTest(case=case):
                self.check(SORT_SETUP, [case])

    def test_geo(self):
        for case in GEO_CASES:
            with self.subTest(case=case):
                self.check(GEO_SETUP, [case])

    def test_keyspace_client_reply_function(self):
        self.check([], KEYSPACE_CASES)

    def test_geo_scores_random(self):
        """GEOADD of random points (the whole valid range and its edges): ZRANGE WITHSCORES,
        GEOHASH, GEOPOS and a few searches equal Redis's."""
        rng = random.Random(38)
        points = [("180", "85.05112878", "edge1"), ("-180", "-85.05112878", "edge2"),
                  ("0", "0", "zero")]
        for i in range(300):
            points.append(("%.6f" % rng.uniform(-180, 180), "%.6f" % rng.uniform(-85.05, 85.05),
                           "p%d" % i))
        setup = [["GEOADD", "r"] + [x for p in points[j:j + 50] for x in p]
                 for j in range(0, len(points), 50)]
        members = [p[2] for p in points]
        cases = [["ZRANGE", "r", "0", "-1", "WITHSCORES"], ["GEOHASH", "r"] + members,
                 ["GEOPOS", "r"] + members]
        for _ in range(20):
            lon, lat = rng.uniform(-180, 180), rng.uniform(-85, 85)
            radius = str(rng.choice([10, 500, 2000, 6000]))
            cases.append(["GEOSEARCH", "r", "FROMLONLAT", "%.4f" % lon, "%.4f" % lat, "BYRADIUS",
                          radius, "km", "WITHDIST", "WITHHASH"])
            cases.append(["GEOSEARCH", "r", "FROMLONLAT", "%.4f" % lon, "%.4f" % lat, "BYBOX",
                          radius, radius, "km", "ASC", "WITHCOORD"])
        self.check(setup, cases)



def info_field(client, section, name):
    for line in client.call("INFO", section).decode().split("\r\n"):
        if line.startswith(name + ":"):
            return line[len(name) + 1:]
    raise AssertionError("no %s in INFO %s" % (name, section))


@sluice_only
class SaveTest(BlackboxTestCase):
    def start(self, **kw):
        server = Server(**kw)
        self.addCleanup(server.stop)
        return server.start()

    def test_bgsave_checkpoint_starts_a_second_server_with_equal_data(self):
        first = self.start()
        with first.client() as c:
            before = c.call("LASTSAVE")
            c.call("SET", "s", "v")
            c.call("PEXPIRE", "s", "100000000")
            c.call("HSET", "h", "f", "1", "g", "2")
            c.call("ZADD", "z", "1", "a", "2", "b")
            c.call("SELECT", "2")
            c.call("RPUSH", "l", "x", "y")
            self.assertEqual(c.call("BGSAVE"), "Background saving started")
            deadline = time.monotonic() + 60
            while info_field(c, "persistence", "rdb_bgsave_in_progress") != "0":
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.02)
            self.assertEqual(info_field(c, "persistence", "rdb_last_bgsave_status"), "ok")
            checkpoint = info_field(c, "persistence", "sluice_last_checkpoint")
            self.assertTrue(checkpoint.startswith(os.path.join(first.datadir, "checkpoints")))
            self.assertGreaterEqual(c.call("LASTSAVE"), before)
            c.call("SET", "after", "1")  # not in the copy
            self.assertEqual(c.call("SAVE"), "OK")
        self.assertIn("DB saved on disk: checkpoint " + checkpoint, first.log())
        copy = tempfile.mkdtemp(prefix="sluice-bb-copy-")
        self.addCleanup(shutil.rmtree, copy, True)
        shutil.copytree(checkpoint, os.path.join(copy, "data"))
        second = self.start(options={"dir": os.path.join(copy, "data")})
        with second.client() as c:
            self.assertEqual(c.call("GET", "s"), b"v")
            self.assertGreater(c.call("PTTL", "s"), 90000000)
            self.assertEqual(c.call("HGETALL", "h"), [b"f", b"1", b"g", b"2"])
            self.assertEqual(c.call("ZRANGE", "z", "0", "-1", "WITHSCORES"),
                             [b"a", b"1", b"b", b"2"])
            self.assertEqual(c.call("EXISTS", "after"), 0)
            self.assertEqual(c.call("DBSIZE"), 3)
            c.call("SELECT", "2")
            self.assertEqual(c.call("LRANGE", "l", "0", "-1"), [b"x", b"y"])
            self.assertEqual(c.call("DEBUG", "KEYSPACE-CHECK"), "OK")


@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class SlowlogDifferentialTest(BesideReference):
    """The slow log's entries (arguments and client names) beside redis-server 7.0.15: secrets
    redacted, each command of a transaction but not EXEC, a blocking command when served."""
    maxDiff = None

    def scenario(self, port):
        with Client(port) as c, Client(port) as waiter, Client(port) as poller:
            c.call("CLIENT", "SETNAME", "main")
            waiter.call("CLIENT", "SETNAME", "waiter")
            c.call("CONFIG", "SET", "slowlog-log-slower-than", "0")
            c.call("SLOWLOG", "RESET")
            # (AUTH with too many arguments is left out: Redis shows its secrets, Sluice not.)
            replies = [c.call("AUTH", "secret"), c.call("AUTH", "default", "secret"),
                       c.call("HELLO", "2", "AUTH", "default", "secret", "SETNAME", "main")[:2],
                       c.call("ACL", "SETUSER", "slow-user", "on", ">pw", "+get"),
                       c.call("ACL", "DELUSER", "slow-user"),
                       c.call("CONFIG", "SET", "masterauth", "", "masteruser", ""),
                       c.call("CONFIG", "SET", "requirepass", "", "maxmemory-samples", "5"),
                       c.call("MIGRATE", "127.0.0.1", "1", "nokey", "0", "100", "AUTH", "pw"),
                       c.call("MIGRATE", "127.0.0.1", "1", "nokey", "0", "100", "COPY",
                              "AUTH2", "user", "pw"),
                       c.call("MIGRATE", "127.0.0.1", "1", "", "0", "100", "AUTH", "pw",
                              "KEYS", "nokey")]
            c.pipeline([("MULTI",), ("SET", "a", "1"), ("GET", "a"), ("EXEC",)])
            waiter.send(encode_command("BLPOP", "list", "0"))
            deadline = time.monotonic() + 10
            while (b"cmd=blpop" not in poller.call("CLIENT", "LIST")
                   and time.monotonic() < deadline):
                time.sleep(0.01)
            c.call("RPUSH", "list", "x")
            replies.append(waiter.read())
            c.call("CONFIG", "SET", "slowlog-log-slower-than", "-1")
            entries = c.call("SLOWLOG", "GET", "-1")
            c.call("CONFIG", "SET", "slowlog-log-slower-than", "10000")
        # The poller's entries (as many as its polls took) are left out.
        return replies, [(e[3], e[5]) for e in reversed(entries) if e[5] != b""]

    def test_entries_beside_redis(self):
        self.assertEqual(self.scenario(self.sluice.port), self.scenario(self.redis.port))


@sluice_only
class SlowlogTest(BlackboxTestCase):
    def test_entries_as_redis_records_them(self):
        server = Server()
        self.addCleanup(server.stop)
        server.start()
        with Client(server.port) as c:
            c.call("CLIENT", "SETNAME", "me")
            self.assertEqual(c.call("CONFIG", "SET", "slowlog-log-slower-than", "0"), "OK")
            c.call("SLOWLOG", "RESET")
            c.call("SET", "k", "x" * 200)
            c.call("RPUSH", "l", *[str(i) for i in range(40)])
            c.call("AUTH", "secret")  # recorded with its password redacted
            c.call("AUTH", "user", "secret", "extra")  # Redis shows these; Sluice redacts them
            entries = c.call("SLOWLOG", "GET", "-1")
            self.assertEqual([e[3][0] for e in entries][:5],
                             [b"AUTH", b"AUTH", b"RPUSH", b"SET", b"SLOWLOG"])
            self.assertEqual(entries[0][3], [b"AUTH"] + [b"(redacted)"] * 3)
            self.assertEqual(entries[1][3], [b"AUTH", b"(redacted)"])
            rpush, set_ = entries[2], entries[3]
            self.assertEqual(rpush[3][-1], b"... (11 more arguments)")
            self.assertEqual(len(rpush[3]), 32)
            self.assertEqual(set_[3], [b"SET", b"k", b"x" * 128 + b"... (72 more bytes)"])
            self.assertEqual(set_[5], b"me")
            self.assertTrue(set_[4].startswith(b"127.0.0.1:"))
            self.assertEqual(rpush[0], set_[0] + 1)
            self.assertEqual(c.call("CONFIG", "SET", "slowlog-max-len", "2"), "OK")
            c.call("PING")
            self.assertEqual(c.call("SLOWLOG", "LEN"), 2)
            self.assertEqual(len(c.call("SLOWLOG", "GET", "1")), 1)
            c.call("CONFIG", "SET", "slowlog-log-slower-than", "-1")
            c.call("SLOWLOG", "RESET")
            c.call("PING")
            self.assertEqual(c.call("SLOWLOG", "LEN"), 0)


@sluice_only
class ClientPauseTest(BlackboxTestCase):
    def test_write_pause_holds_writes_until_unpause(self):
        server = Server()
        self.addCleanup(server.stop)
        server.start()
        with Client(server.port) as admin, Client(server.port) as writer:
            self.assertEqual(admin.call("CLIENT", "PAUSE", "100000", "WRITE"), "OK")
            self.assertEqual(writer.call("GET", "k"), None)  # reads go on
            writer.send(encode_command("SET", "k", "1") + encode_command("GET", "k"))
            time.sleep(0.2)
            self.assertEqual(admin.call("GET", "k"), None)  # the SET still waits
            self.assertEqual(admin.call("CLIENT", "UNPAUSE"), "OK")
            self.assertEqual(writer.read(), "OK")
            self.assertEqual(writer.read(), b"1")
            self.assertEqual(admin.call("CLIENT", "PAUSE", "100", "ALL"), "OK")
            start = time.monotonic()
            self.assertEqual(writer.call("PING"), "PONG")
            self.assertGreaterEqual(time.monotonic() - start, 0.05)
            self.assertEqual(admin.call("CLIENT", "PAUSE", "x"),
                             "ERR timeout is not an integer or out of range")
            self.assertEqual(admin.call("CLIENT", "PAUSE", "-1"), "ERR timeout is negative")
            self.assertEqual(admin.call("CLIENT", "PAUSE", "1", "BOTH"),
                             "ERR CLIENT PAUSE mode must be WRITE or ALL")


@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class ClientPauseDifferentialTest(BesideReference):
    """CLIENT PAUSE WRITE beside redis-server 7.0.15: which calls wait (may-replicate PUBLISH and
    PFCOUNT, an EXEC of writes; not read-only transactions or no-writes scripts), held clients
    counted as blocked, and no expired key removed until the pause ends."""
    maxDiff = None
    LIBRARY = ("#!lua name=pauselib\nredis.register_function{function_name='ro', "
               "callback=function() return 'ro' end, flags={'no-writes'}}")

    def expired(self, c):
        info = c.call("INFO", "stats").decode()
        return int(info.split("expired_keys:")[1].split("\r\n")[0])

    def blocked(self, c):
        info = c.call("INFO", "clients").decode()
        return int(info.split("blocked_clients:")[1].split("\r\n")[0])

    def scenario(self, port):
        out = []
        with Client(port) as admin, Client(port) as c1, Client(port) as pf, \
                Client(port) as pub, Client(port) as tx:
            admin.call("FLUSHALL")
            admin.call("FUNCTION", "LOAD", "REPLACE", self.LIBRARY)
            admin.call("PFADD", "h", "a")
            admin.call("SET", "e", "v", "PX", "50")
            expired = self.expired(admin)
            out.append([tx.call("MULTI"), tx.call("SET", "x", "1")])
            out.append(admin.call("CLIENT", "PAUSE", "100000", "WRITE"))
            out.append(c1.pipeline([("MULTI",), ("PING",), ("GET", "h"), ("EXEC",)]))
            out.append(c1.call("EVAL", "#!lua flags=no-writes\nreturn 1", "0"))
            out.append(c1.call("FCALL", "ro", "0"))
            out.append(c1.call("EVAL_RO", "return redis.call('publish', 'ch', 'm')", "0"))
            pf.send(encode_command("PFCOUNT", "h"))
            pub.send(encode_command("PUBLISH", "ch", "m"))
            tx.send(encode_command("EXEC"))
            deadline = time.monotonic() + 10
            while self.blocked(admin) < 3 and time.monotonic() < deadline:
                time.sleep(0.01)
            out.append(self.blocked(admin))
            out.append(sorted(l.split(" flags=")[1].split(" ")[0]
                              for l in admin.call("CLIENT", "LIST").decode().splitlines()))
            time.sleep(0.1)  # e's time is up: logically expired, not removed
            out.append([admin.call("GET", "e"), admin.call("EXISTS", "e"), admin.call("DBSIZE"),
                        self.expired(admin) - expired])
            out.append(admin.call("CLIENT", "UNPAUSE"))
            out.append([pf.read(), pub.read(), tx.read()])
            out.append([admin.call("GET", "e"), self.expired(admin) - expired,
                        self.blocked(admin)])
        return out

    def test_pause_beside_redis(self):
        self.assertEqual(self.scenario(self.sluice.port), self.scenario(self.redis.port))


if __name__ == "__main__":
    unittest.main()
