"""Streams against a real redis-server 7.0.15, blocking reads, and kill -9 durability.

- ScenarioTest: a fixed sequence over every stream command, option and error (consumer groups,
  pending entries, claims, XINFO), sent to Sluice and to a redis-server started here; raw
  replies compared byte for byte in RESP2 and RESP3. Times that depend on the wall clock (idle
  times of XPENDING and XINFO CONSUMERS) are zeroed in both before comparing, and XINFO
  STREAM's radix-tree-nodes (Redis's tree layout) is left out.
- GroupMixTest: seeded random sequences of XADD, XTRIM, XDEL, XREADGROUP, XACK, XCLAIM,
  XAUTOCLAIM, XPENDING, XGROUP and XINFO GROUPS, compared the same way reply by reply
  (SLUICE_STREAMS_SEED=n for another seed). collection_gen_stream.py mixes the rest into
  test_collections.
- BlockingTest: XREAD BLOCK and XREADGROUP BLOCK woken by XADD, in the order clients blocked,
  "$" meaning the last ID when the client blocked; no blocking inside MULTI.
- KillNineTest: pipelined XADD and XREADGROUP + XACK, then kill -9: every acknowledged entry
  and acknowledgement is there after restart.
"""
import os
import random
import unittest

from harness import IS_REDIS, Client, Server
from test_collections import parse
from test_transactions import BesideReference, read_raw_reply

SCENARIO = """
XADD s 1-1 a 1
XADD s 2-1 b 2
XADD s 3-1 c 3
XGROUP CREATE s g 0
XGROUP CREATE s g 0
XGROUP CREATE nokey g 0
XGROUP CREATE mk g $ MKSTREAM
XGROUP CREATE s g2 $ ENTRIESREAD 3
XGROUP CREATE s g3 $ ENTRIESREAD -2
XGROUP CREATE s g4 bad
XGROUP CREATE s g4 -
XGROUP SETID s nog 0
XGROUP SETID s g3 0
XGROUP SETID s g3 0 ENTRIESREAD
XGROUP FOO s g
XGROUP CREATE s g5 0 FOO
XGROUP CREATE s
XINFO GROUPS s
XREADGROUP GROUP g alice COUNT 1 STREAMS s >
XREADGROUP GROUP g bob STREAMS s >
XREADGROUP GROUP g bob STREAMS s >
XREADGROUP GROUP g alice STREAMS s 0
XREADGROUP GROUP g alice STREAMS s 1-0
XREADGROUP GROUP g alice STREAMS s 1-1
XREADGROUP GROUP g alice STREAMS s 18446744073709551615-18446744073709551615
XREADGROUP GROUP nog alice STREAMS s >
XREADGROUP GROUP g alice STREAMS s $
XREADGROUP GROUP g alice STREAMS nokey >
XREADGROUP COUNT 1 STREAMS s >
XREADGROUP GROUP g alice STREAMS s
XINFO GROUPS s
XINFO CONSUMERS s g
XPENDING s g
XPENDING s g - + 10
XPENDING s g - + 10 bob
XPENDING s g IDLE 0 - + 10
XPENDING s g (1-1 + 1
XPENDING s nog
XPENDING s g - +
XPENDING s g - + x
XACK s g 1-1 9-9
XACK s g bad
XACK s nog bad
XPENDING s g
XDEL s 2-1
XREADGROUP GROUP g bob STREAMS s 0
XCLAIM s g carol 0 2-1 3-1
XCLAIM s g carol 0 3-1 JUSTID
XCLAIM s g carol 0 1-1 FORCE
XCLAIM s g carol 0 3-1 RETRYCOUNT 7 JUSTID
XCLAIM s g carol x 3-1
XCLAIM s g carol 0 3-1 BAD
XCLAIM s g carol 0 3-1 IDLE x
XCLAIM s g carol 3600000 3-1
XCLAIM s g carol 0 3-1 LASTID 9-9 JUSTID
XCLAIM s nog carol 0 3-1
XPENDING s g
XINFO GROUPS s
XADD s 4-1 d 4
XADD s 5-1 e 5
XREADGROUP GROUP g dave STREAMS s >
XAUTOCLAIM s g erin 0 0
XAUTOCLAIM s g erin 0 0 COUNT 1
XAUTOCLAIM s g erin 0 0 COUNT 0
XAUTOCLAIM s g erin 0 0 JUSTID
XAUTOCLAIM s g erin 0 0 FOO
XAUTOCLAIM s g erin x 0
XAUTOCLAIM s nog erin 0 0
XDEL s 4-1
XAUTOCLAIM s g frank 0 0 COUNT 1
XAUTOCLAIM s g frank 0 0
XGROUP CREATECONSUMER s g zed
XGROUP CREATECONSUMER s g zed
XGROUP DELCONSUMER s g frank
XGROUP DELCONSUMER s g nobody
XPENDING s g
XINFO GROUPS s
XINFO CONSUMERS s g
XGROUP DESTROY s g2
XGROUP DESTROY s g2
XGROUP DESTROY nokey2 g2
XINFO STREAM s
XINFO STREAM nokey2
XINFO STREAM s FOO
XINFO GROUPS nokey2
XINFO CONSUMERS s nog
XREADGROUP GROUP g x NOACK STREAMS s 0
XGROUP SETID s g 0 ENTRIESREAD 0
XREADGROUP GROUP g x NOACK STREAMS s >
XINFO GROUPS s
XTRIM s MAXLEN 0
XINFO GROUPS s
XINFO STREAM s
SET str x
XGROUP CREATE str g 0
XREADGROUP GROUP g c STREAMS str >
XACK str g 1-1
XPENDING str g
XINFO STREAM str
XADD str 1-1 a 1
TYPE s
"""


def normalize(raw, args):
    """Zeroes wall-clock idle times and drops radix-tree-nodes; other replies unchanged."""
    cmd = " ".join(args[:2]).upper()
    value, _ = parse(raw)
    if cmd.startswith("XPENDING") and len(args) > 3 and isinstance(value, tuple):
        return [[e[1][0], e[1][1], e[1][3]] for e in value[1]]
    if cmd == "XINFO CONSUMERS" and isinstance(value, tuple):
        # name and pending only: RESP2 gives a flat list (4 items), RESP3 a map (2 pairs).
        out = []
        for c in value[1]:
            items = list(c[1] if isinstance(c, tuple) else c)
            pairs = bool(items) and isinstance(items[0], tuple) and len(items[0]) == 2 and \
                isinstance(items[0][0], bytes)
            out.append(items[:2] if pairs else items[:4])
        return out
    if cmd == "XINFO STREAM" and isinstance(value, tuple):
        items = value[1]
        if items and isinstance(items[0], tuple):  # RESP3 map: (key, value) pairs
            return [kv for kv in items if kv[0] != b"$radix-tree-nodes"]
        return [v for i, v in enumerate(items) if i not in (4, 5)]
    return raw


def send(c, args):
    c.send(b"*%d\r\n" % len(args) + b"".join(
        b"$%d\r\n%s\r\n" % (len(a.encode()), a.encode()) for a in args))


@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class DifferentialBase(BesideReference):
    maxDiff = None

    def compare(self, lines, resp, label):
        with Client(self.sluice.port) as s, Client(self.redis.port) as r:
            for c in (s, r):
                if resp == 3:
                    c.call("HELLO", "3")
                c.call("FLUSHALL")
            for step, args in enumerate(lines):
                for c in (s, r):
                    send(c, args)
                got = normalize(read_raw_reply(s), args)
                want = normalize(read_raw_reply(r), args)
                self.assertEqual(got, want, "%s RESP%d step %d: %s" % (label, resp, step,
                                                                       " ".join(args)))


class ScenarioTest(DifferentialBase):
    def test_scenario(self):
        lines = [l.split() for l in SCENARIO.strip().splitlines()]
        for resp in (2, 3):
            with self.subTest(resp=resp):
                self.compare(lines, resp, "scenario")


def group_mix(rng, steps):
    out = [["XGROUP", "CREATE", "s", "g", "0", "MKSTREAM"], ["XGROUP", "CREATE", "s", "h", "$"]]
    ms = 1
    consumers = ["c1", "c2", "c3"]
    for _ in range(steps):
        grp = rng.choice(["g", "g", "h", "nog"])
        ident = lambda: "%d-%d" % (rng.randint(1, ms + 1), rng.randint(0, 2))  # noqa: E731
        op = rng.random()
        if op < 0.3:
            ms += rng.randint(0, 2)
            out.append(["XADD", "s", "%d-*" % ms, "f", str(rng.randint(0, 99))])
        elif op < 0.45:
            out.append(["XREADGROUP", "GROUP", grp, rng.choice(consumers), "COUNT",
                        str(rng.randint(1, 4))] + (["NOACK"] if rng.random() < 0.1 else []) +
                       ["STREAMS", "s", rng.choice([">", ">", "0", ident()])])
        elif op < 0.55:
            out.append(["XACK", "s", grp] + [ident() for _ in range(rng.randint(1, 3))])
        elif op < 0.62:
            out.append(["XCLAIM", "s", grp, rng.choice(consumers), "0", ident(), ident()] +
                       rng.choice([["JUSTID"], ["JUSTID", "FORCE"], ["RETRYCOUNT", "3"], []]))
        elif op < 0.68:
            out.append(["XAUTOCLAIM", "s", grp, rng.choice(consumers), "0", ident(), "COUNT",
                        str(rng.randint(1, 3))] + rng.choice([["JUSTID"], []]))
        elif op < 0.74:
            out.append(["XPENDING", "s", grp])
        elif op < 0.78:
            out.append(["XPENDING", "s", grp, "-", "+", "5", rng.choice(consumers)])
        elif op < 0.83:
            out.append(["XDEL", "s", ident()])
        elif op < 0.86:
            out.append(["XTRIM", "s", "MAXLEN", rng.choice(["=", "~"]), str(rng.randint(0, 20))])
        elif op < 0.92:
            out.append(["XINFO", "GROUPS", "s"])
        elif op < 0.94:
            out.append(["XGROUP", "SETID", "s", grp, ident()])
        elif op < 0.96:
            out.append(["XGROUP", "DELCONSUMER", "s", grp, rng.choice(consumers)])
        elif op < 0.98:
            out.append(["XLEN", "s"])
        else:
            out.append(["XINFO", "STREAM", "s"])
    return out


class GroupMixTest(DifferentialBase):
    def seeds(self):
        env = os.environ.get("SLUICE_STREAMS_SEED")
        return [int(env)] if env else [1, 2, 3]

    def test_random_group_mixes(self):
        for seed in self.seeds():
            for resp in (2, 3):
                with self.subTest(seed=seed, resp=resp):
                    self.compare(group_mix(random.Random(seed), 400), resp, "seed %d" % seed)


@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class BlockingTest(BesideReference):
    def both(self, fn):
        for srv in (self.sluice, self.redis):
            with Client(srv.port) as c:
                c.call("FLUSHALL")
        return [fn(srv.port) for srv in (self.sluice, self.redis)]

    def wait_blocked(self, port, n):
        with Client(port) as c:
            for _ in range(2000):
                info = c.call("INFO", "clients").decode()
                if "blocked_clients:%d" % n in info:
                    return
            self.fail("clients did not block")

    def test_xread_block_dollar_woken_by_xadd(self):
        def run(port):
            with Client(port) as w, Client(port) as b1, Client(port) as b2:
                w.call("XADD", "s", "1-1", "old", "1")
                send(b1, ["XREAD", "BLOCK", "0", "STREAMS", "s", "$"])
                send(b2, ["XREAD", "COUNT", "5", "BLOCK", "0", "STREAMS", "other", "s", "$", "$"])
                self.wait_blocked(port, 2)
                w.call("XADD", "s", "2-1", "new", "2")
                return read_raw_reply(b1), read_raw_reply(b2)
        sluice, redis = self.both(run)
        self.assertEqual(sluice, redis)
        self.assertIn(b"2-1", sluice[0])

    def test_xreadgroup_block_serves_in_order(self):
        def run(port):
            with Client(port) as w, Client(port) as b1, Client(port) as b2:
                w.call("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
                send(b1, ["XREADGROUP", "GROUP", "g", "first", "COUNT", "1", "BLOCK", "0",
                          "STREAMS", "s", ">"])
                self.wait_blocked(port, 1)
                send(b2, ["XREADGROUP", "GROUP", "g", "second", "COUNT", "1", "BLOCK", "0",
                          "STREAMS", "s", ">"])
                self.wait_blocked(port, 2)
                w.call("XADD", "s", "1-1", "job", "a")
                one = read_raw_reply(b1)
                w.call("XADD", "s", "2-1", "job", "b")
                two = read_raw_reply(b2)
                return one, two, w.call("XPENDING", "s", "g")
        sluice, redis = self.both(run)
        self.assertEqual(sluice, redis)
        self.assertIn(b"1-1", sluice[0])

    def test_block_timeout_and_multi(self):
        def run(port):
            with Client(port) as c:
                out = [c.call("XREAD", "BLOCK", "50", "STREAMS", "s", "0")]
                c.call("MULTI")
                c.call("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
                out.append(c.call("EXEC"))
                return out
        sluice, redis = self.both(run)
        self.assertEqual(sluice, redis)

    def test_xreadgroup_woken_by_group_destroyed_or_stream_deleted(self):
        def run(port):
            out = []
            # A flush, or a SWAPDB that brings in a database without the stream, wakes the
            # group reader too (Redis's scanDatabaseForDeletedStreams).
            for ending in (["XGROUP", "DESTROY", "s", "g"], ["DEL", "s"],
                           ["SET", "s", "now a string"], ["FLUSHALL"], ["FLUSHDB"],
                           ["SWAPDB", "0", "9"]):
                with Client(port) as w, Client(port) as b:
                    w.call("FLUSHALL")
                    w.call("DEL", "s")
                    w.call("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
                    send(b, ["XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"])
                    self.wait_blocked(port, 1)
                    out.append(w.call(*ending))
                    out.append(read_raw_reply(b))
            return out
        sluice, redis = self.both(run)
        self.assertEqual(sluice, redis)
        self.assertEqual(sluice[1], b"-NOGROUP the consumer group this client was blocked on no "
                                    b"longer exists\r\n")
        self.assertEqual(sluice[3], b"-UNBLOCKED the stream key no longer exists\r\n")
        self.assertEqual(sluice[7], b"-UNBLOCKED the stream key no longer exists\r\n")


class KillNineTest(unittest.TestCase):
    N = 6000
    BATCH = 500

    def test_acknowledged_adds_and_acks_survive(self):
        srv = Server({"appendfsync": "everysec"})
        try:
            srv.start()
            with Client(srv.port) as c:
                c.call("XGROUP", "CREATE", "s", "g", "0", "MKSTREAM")
                cmds = [("XADD", "s", "%d-1" % (i + 1), "n", str(i)) for i in range(self.N)]
                for at in range(0, len(cmds), self.BATCH):
                    c.pipeline(cmds[at:at + self.BATCH])
                read = c.call("XREADGROUP", "GROUP", "g", "w", "COUNT", str(self.N // 2),
                              "STREAMS", "s", ">")
                ids = [e[0] for e in read[0][1]]
                acks = [("XACK", "s", "g", i.decode()) for i in ids[: self.N // 4]]
                self.assertEqual(c.pipeline(acks), [1] * len(acks))
            srv.kill9()
            srv.start()
            with Client(srv.port) as c:
                self.assertEqual(c.call("XLEN", "s"), self.N)
                self.assertEqual(c.call("XPENDING", "s", "g")[0], self.N // 2 - self.N // 4)
                self.assertEqual(c.call("XREVRANGE", "s", "+", "-", "COUNT", "1")[0][0],
                                 b"%d-1" % self.N)
        finally:
            srv.stop()


if __name__ == "__main__":
    unittest.main()
