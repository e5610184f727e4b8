"""Keyspace notifications (notify-keyspace-events) on the real sluice-server, side by side with
the reference redis-server 7.0.x: the raw bytes of every event frame a PSUBSCRIBE '__key*__:*'
client receives (RESP2 and RESP3 push frames) from a script of writes across families, for each
class; CONFIG SET/GET parsing, canonical form and errors.
"""
import time
import unittest

from harness import IS_REDIS, Client, encode_command
from test_pubsub import BesideRedis, frames, send
from test_transactions import read_raw_reply

# Writes across families; each fires events Redis names (see docs/server.md).
WRITES = [
    ("SET", "s", "1"), ("SET", "s", "2", "EX", "100"), ("SETNX", "s", "x"), ("SETNX", "s2", "x"),
    ("GETSET", "s", "3"), ("MSET", "m1", "a", "m2", "b"), ("MSETNX", "m3", "a", "m4", "b"),
    ("MSETNX", "m3", "a", "m5", "b"), ("INCR", "n"), ("INCRBY", "n", "5"), ("DECR", "n"),
    ("DECRBY", "n", "2"), ("INCRBYFLOAT", "f", "1.5"), ("APPEND", "a", "xy"), ("APPEND", "a", "z"),
    ("SETRANGE", "r", "2", "ab"), ("SETRANGE", "r", "0", ""), ("SETEX", "e", "100", "v"),
    ("PSETEX", "e2", "100000", "v"), ("GETDEL", "e2"), ("GETDEL", "nosuch"),
    ("GETEX", "e", "PX", "50000"), ("EXPIRE", "s", "100"), ("PEXPIRE", "m1", "100000"),
    ("EXPIRE", "nosuch", "10"), ("PERSIST", "s"), ("PERSIST", "s"), ("EXPIRE", "m2", "-1"),
    ("DEL", "m3", "nosuch", "m4", "m3"), ("UNLINK", "a"), ("RENAME", "n", "n2"),
    ("RENAMENX", "n2", "f"), ("RENAMENX", "n2", "n3"), ("COPY", "f", "f2"),
    ("LPUSH", "l", "a", "b"), ("RPUSH", "l", "c"), ("LPUSHX", "nol", "a"), ("RPUSHX", "l", "d"),
    ("LPOP", "l"), ("RPOP", "l", "2"), ("LPOP", "l", "5"), ("RPOP", "l"),
    ("HSET", "h", "a", "1", "b", "2"), ("HMSET", "h", "c", "3"), ("HSETNX", "h", "a", "9"),
    ("HSETNX", "h", "d", "4"), ("HINCRBY", "h", "n", "3"), ("HDEL", "h", "nosuch"),
    ("HDEL", "h", "a", "b"), ("HDEL", "h", "c", "d", "n"),
    ("EXPIRE", "s2", "0"),
    ("RPUSH", "L", "a", "b", "c", "b", "d"), ("LSET", "L", "0", "A"), ("LINSERT", "L", "BEFORE", "c", "x"),
    ("LINSERT", "L", "BEFORE", "nosuch", "x"), ("LREM", "L", "0", "b"), ("LREM", "L", "0", "zz"),
    ("LTRIM", "L", "0", "2"), ("LTRIM", "nolist", "0", "1"), ("LMOVE", "L", "L2", "LEFT", "RIGHT"),
    ("RPOPLPUSH", "L", "L2"), ("LMPOP", "2", "nol", "L", "LEFT", "COUNT", "5"),
    ("BLPOP", "L2", "0"), ("BRPOP", "L2", "0"), ("LTRIM", "L", "5", "1"),
    ("RPUSH", "T", "a"), ("LTRIM", "T", "5", "1"), ("HINCRBYFLOAT", "hf", "x", "1.5"),
    ("SADD", "S", "a", "b", "c", "d", "e"), ("SADD", "S", "a"), ("SREM", "S", "a", "zz"),
    ("SREM", "S", "zz"), ("SPOP", "S"), ("SPOP", "S", "0"), ("SPOP", "S", "1"),
    ("SADD", "S2", "x"), ("SMOVE", "S", "S2", "nosuch"), ("SINTERSTORE", "S3", "S", "S2"),
    ("SUNIONSTORE", "S3", "S", "S2"), ("SDIFFSTORE", "S3", "S", "S"), ("SPOP", "S", "10"),
    ("SADD", "S4", "m"), ("SMOVE", "S4", "S5", "m"), ("SADD", "S4", "m"), ("SMOVE", "S4", "S5", "m"),
    ("SDIFFSTORE", "S6", "nosuch"),
    ("ZADD", "Z", "1", "a", "2", "b", "3", "c"), ("ZADD", "Z", "1", "a"), ("ZADD", "Z", "5", "a"),
    ("ZADD", "Z", "CH", "6", "a"), ("ZADD", "Z", "XX", "1", "zz"), ("ZADD", "Z2", "XX", "1", "a"),
    ("ZADD", "Z", "INCR", "1", "b"), ("ZADD", "Z", "NX", "INCR", "1", "b"), ("ZINCRBY", "Z3", "2", "m"),
    ("ZREM", "Z", "zz"), ("ZREM", "Z", "a"), ("ZPOPMIN", "Z"), ("ZPOPMAX", "Z", "0"),
    ("ZPOPMAX", "Z", "5"), ("ZPOPMIN", "nosuch"),
    ("ZADD", "Y", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "6", "f"),
    ("ZADD", "W", "1", "a", "9", "z"), ("ZUNIONSTORE", "U", "2", "Y", "W"),
    ("ZINTERSTORE", "U", "2", "Y", "W"), ("ZDIFFSTORE", "U", "2", "W", "W"),
    ("ZDIFFSTORE", "U2", "1", "nosuch"), ("ZRANGESTORE", "R", "Y", "0", "1"),
    ("ZRANGESTORE", "R", "Y", "5", "1"), ("ZREMRANGEBYRANK", "Y", "0", "0"),
    ("ZREMRANGEBYSCORE", "Y", "2", "3"), ("ZREMRANGEBYSCORE", "Y", "100", "200"),
    ("ZREMRANGEBYLEX", "W", "-", "+"), ("ZMPOP", "2", "nosuch", "Y", "MIN"),
    ("BZPOPMAX", "Y", "0"), ("BZMPOP", "0", "1", "Y", "MAX", "COUNT", "9"),
    ("SET", "g", "v", "EX", "100"), ("GETEX", "g", "PERSIST"), ("GETEX", "g", "PERSIST"),
    ("GETEX", "g", "EX", "50"),
    ("SET", "mv", "1"), ("MOVE", "mv", "3"), ("MOVE", "mv", "3"), ("SETBIT", "bits", "7", "1"),
    ("SETBIT", "bits", "7", "1"), ("SETBIT", "bits0", "3", "0"),
    ("SETBIT", "bits0", "30", "0"), ("SETBIT", "bits0", "30", "0"),
    ("SETBIT", "L2", "1", "1"),
]


# The families added later (HyperLogLog, bitmaps, SORT STORE, geo, streams, SWAPDB), and reads of
# missing and present keys for keymiss (class m).
MORE_WRITES = [
    ("PFADD", "hll", "a", "b"), ("PFADD", "hll", "a"), ("PFADD", "hll2"),
    ("PFMERGE", "hll3", "hll", "hll2"), ("PFMERGE", "hll3", "hll"), ("PFCOUNT", "hll", "hll2"),
    ("PFCOUNT", "hll"), ("SET", "b1", "abc"), ("BITOP", "AND", "b2", "b1", "b1"),
    ("BITOP", "OR", "b2", "nosuch"), ("BITOP", "OR", "b3", "nosuch"),
    ("BITFIELD", "bf", "SET", "u8", "0", "1"), ("BITFIELD", "bf", "GET", "u8", "0"),
    ("BITFIELD", "bf2", "GET", "u8", "0"),
    ("BITFIELD", "bf", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "300"),
    ("RPUSH", "sl", "3", "1", "2"), ("SORT", "sl", "STORE", "sd"), ("SORT", "sl", "STORE", "sd"),
    ("SORT", "nosuch", "STORE", "sd"), ("SORT", "nosuch", "STORE", "sd2"),
    ("GEOADD", "geo", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"),
    ("GEOADD", "geo", "13.361389", "38.115556", "Palermo"),
    ("GEOADD", "geo", "CH", "13.0", "38.0", "Palermo"),
    ("GEOSEARCHSTORE", "gd", "geo", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "ASC"),
    ("GEOSEARCHSTORE", "gd", "geo", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"),
    ("GEORADIUS", "geo", "15", "37", "200", "km", "STORE", "gr"),
    ("GEORADIUSBYMEMBER", "geo", "Palermo", "10", "km", "STOREDIST", "gr"),
    ("XADD", "st", "1-1", "f", "v"), ("XADD", "st", "MAXLEN", "1", "2-1", "f", "v"),
    ("XADD", "st", "3-1", "f", "v"), ("XDEL", "st", "3-1", "9-9"), ("XDEL", "st", "9-9"),
    ("XTRIM", "st", "MAXLEN", "0"), ("XTRIM", "st", "MAXLEN", "0"), ("XSETID", "st", "10-1"),
    ("XGROUP", "CREATE", "st", "g1", "$"), ("XGROUP", "CREATE", "st2", "g1", "$", "MKSTREAM"),
    ("XGROUP", "CREATE", "st", "g1", "$"), ("XGROUP", "SETID", "st", "g1", "0"),
    ("XGROUP", "CREATECONSUMER", "st", "g1", "c1"), ("XGROUP", "CREATECONSUMER", "st", "g1", "c1"),
    ("XGROUP", "DELCONSUMER", "st", "g1", "c1"), ("XGROUP", "DELCONSUMER", "st", "g1", "c1"),
    ("XGROUP", "DESTROY", "st", "g1"), ("XGROUP", "DESTROY", "st", "g1"),
    ("XGROUP", "CREATE", "st3", "g", "0", "MKSTREAM"), ("XADD", "st3", "1-1", "f", "v"),
    ("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "st3", ">"),
    ("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "st3", "0"),
    ("XCLAIM", "st3", "g", "mike", "0", "1-1", "FORCE"),
    ("XAUTOCLAIM", "st3", "g", "alice", "0", "0"), ("XAUTOCLAIM", "st3", "g", "bob", "0", "0"),
    ("SWAPDB", "0", "1"), ("SWAPDB", "0", "1"),
    ("GET", "nosuch"), ("GET", "b1"), ("MGET", "b1", "nosuch", "nosuch2"),
    ("EXISTS", "nosuch", "nosuch"), ("HGET", "nosuch", "f"), ("TYPE", "nosuch"), ("TTL", "nosuch"),
    ("STRLEN", "nosuch"), ("LRANGE", "nosuch", "0", "-1"), ("ZSCORE", "nosuch", "m"),
    ("SISMEMBER", "nosuch", "m"), ("XRANGE", "nosuch", "-", "+"), ("PFCOUNT", "nosuch"),
    ("GETBIT", "nosuch", "1"), ("OBJECT", "ENCODING", "nosuch"),
]


def record(port, classes, resp=2, writes=None):
    """Sets `classes`, runs `writes` (WRITES) on one client while another PSUBSCRIBEs '__key*__:*'; returns
    the raw frames the subscriber got, up to a closing PUBLISH on 'done'."""
    out = []
    with Client(port) as admin, Client(port) as sub, Client(port) as w:
        out.append(admin.call("CONFIG", "SET", "notify-keyspace-events", classes))
        if resp == 3:
            send(sub, "HELLO", "3")
            read_raw_reply(sub)
        send(sub, "PSUBSCRIBE", "__key*__:*")
        send(sub, "SUBSCRIBE", "done")
        out.append(frames(sub, 2))
        for cmd in WRITES if writes is None else writes:
            send(w, *cmd)
            read_raw_reply(w)
        out.append(w.call("PUBLISH", "done", "x"))
        while True:
            frame = read_raw_reply(sub)
            if b"$4\r\ndone\r\n" in frame and b"pmessage" not in frame:
                break
            out.append(frame)
        out.append(admin.call("CONFIG", "SET", "notify-keyspace-events", ""))
    return out


@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class NotifyTest(BesideRedis):
    def test_config_parsing(self):
        def scenario(port):
            out = []
            with Client(port) as c:
                for classes in ["KEA", "KEAnm", "g$lshzxetdKE", "g$n", "Kx", "E", "AAK", "",
                                "KEQ", "kea", "K E"]:
                    send(c, "CONFIG", "SET", "notify-keyspace-events", classes)
                    out.append(read_raw_reply(c))
                    send(c, "CONFIG", "GET", "notify-keyspace-events")
                    out.append(read_raw_reply(c))
                c.call("CONFIG", "SET", "notify-keyspace-events", "")
            return out
        self.both(scenario)

    def test_every_class(self):
        for classes in ["KEA", "Kg", "E$", "Kl", "Eh", "KEn", "KEgn", "K", "Ex"]:
            with self.subTest(classes=classes):
                self.both(lambda port: record(port, classes))

    def test_more_families_and_keymiss(self):
        for classes in ["KEA", "KEAnm", "Em", "Kt", "E$n"]:
            with self.subTest(classes=classes):
                self.both(lambda port: record(port, classes, writes=MORE_WRITES))

    def test_resp3_push_frames(self):
        self.both(lambda port: record(port, "KEA", resp=3))

    def test_multi_exec_and_script(self):
        def scenario(port):
            out = []
            with Client(port) as admin, Client(port) as sub, Client(port) as w:
                admin.call("CONFIG", "SET", "notify-keyspace-events", "KEA")
                send(sub, "PSUBSCRIBE", "__keyevent@*")
                out.append(frames(sub, 1))
                for cmd in [("MULTI",), ("SET", "a", "1"), ("INCR", "a"), ("LPUSH", "l", "x"),
                            ("EXEC",),
                            ("EVAL", "redis.call('set', KEYS[1], 'v'); "
                             "redis.call('del', KEYS[1]); return 1", "1", "k"),
                            ("MULTI",), ("SET", "b", "1"), ("INCR", "b"), ("EXEC",)]:
                    send(w, *cmd)
                    out.append(read_raw_reply(w))
                out.append(frames(sub, 6))
                admin.call("CONFIG", "SET", "notify-keyspace-events", "")
            return out
        self.both(scenario)

    def test_expired_by_access_and_by_cycle(self):
        """'a' expires as GET reads it, 'b' by the active cycle: each fires "expired" (class x),
        and the read sees nil. Sluice moves its DEBUG CLOCK; Redis waits out a short PX with its
        active expiry held off until 'a' was read, then waits (bounded) for the cycle. (Sluice's
        access path alone: tests/server/test_notify.cc.)"""
        def scenario(port):
            out = []
            on_sluice = port == self.sluice.port
            with Client(port) as admin, Client(port) as sub, Client(port) as w:
                admin.call("CONFIG", "SET", "notify-keyspace-events", "KEx")
                send(sub, "PSUBSCRIBE", "__key*__:*")
                out.append(frames(sub, 1))
                if on_sluice:
                    admin.call("DEBUG", "CLOCK", "SET", "1700000000000")
                else:
                    admin.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
                out.append(w.call("SET", "a", "1", "PX", "100"))
                out.append(w.call("SET", "b", "1", "PX", "100"))
                if on_sluice:
                    w.send(encode_command("DEBUG", "CLOCK", "ADVANCE", "200") +
                           encode_command("GET", "a"))
                    out.append(w.read())
                else:
                    time.sleep(0.2)
                    w.send(encode_command("GET", "a"))
                out.append(w.read())
                first = frames(sub, 2)  # keyspace, keyevent
                if not on_sluice:
                    admin.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")
                # Sluice's cycle may remove 'b' (or 'a') between the clock step and the read:
                # the two keys' events, as a set.
                out.append(sorted([first, frames(sub, 2)]))  # the read times out at 30 s
                out.append(w.call("EXISTS", "a", "b"))
                if on_sluice:
                    admin.call("DEBUG", "CLOCK", "REAL")
                admin.call("CONFIG", "SET", "notify-keyspace-events", "")
            return out[:3] + out[4:] if on_sluice else out
        self.both(scenario)

    def test_limiter_writes(self):
        """Sluice only (Redis has no limiters): a take that writes state fires what
        `SET key state PXAT t` would ("new", "set", "expire"), a denied take that writes nothing
        fires nothing, LIMITS.TAKE reports each group's key (docs/server.md)."""
        with Client(self.sluice.port) as admin, Client(self.sluice.port) as sub, \
                Client(self.sluice.port) as w:
            admin.call("CONFIG", "SET", "notify-keyspace-events", "KEA$n")
            send(sub, "PSUBSCRIBE", "__keyevent@*")
            frames(sub, 1)
            w.call("GCRA.TAKE", "g", "1", "10s")   # allowed: writes the TAT
            w.call("GCRA.TAKE", "g", "1", "10s")   # denied: writes nothing
            w.call("LIMITS.TAKE", "LIMIT", "a", "GCRA", "5", "1s", "LIMIT", "b", "WINDOW", "10",
                   "1m")
            w.call("PUBLISH", "__keyevent@0__:end", "x")
            got = []
            while True:
                frame = read_raw_reply(sub)
                if b"__keyevent@0__:end" in frame:
                    break
                got.append(frame.split(b"\r\n")[-4:-1])
            admin.call("CONFIG", "SET", "notify-keyspace-events", "")
        events = [(f[0].split(b":")[1], f[2]) for f in got]
        self.assertEqual(events, [(b"new", b"g"), (b"set", b"g"), (b"expire", b"g"),
                                  (b"new", b"a"), (b"set", b"a"), (b"expire", b"a"),
                                  (b"new", b"b"), (b"set", b"b"), (b"expire", b"b")])


if __name__ == "__main__":
    unittest.main()
