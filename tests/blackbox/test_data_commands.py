"""Bitmaps, HyperLogLog, LCS and the collection fixes of issue 38, side by side with a real
redis-server 7.0.15 (started here, `--save '' --appendonly no`); every raw reply compared byte
for byte, in RESP2 and RESP3.

- FixedCasesTest: every command, option and error (scenarios below), and the four collection
  differences (HINCRBYFLOAT inf, "" and "(" score bounds, SPOP count, -0 scores in small and big
  sorted sets).
- RandomBitsTest: random strings, then random SETBIT/GETBIT/BITCOUNT/BITPOS/BITOP/BITFIELD
  commands; the strings (GET) compared at the end (SLUICE_DATA_SEED=n for another seed).
- HyperLogLogTest: random PFADD batches (0..20,000 elements, crossing sparse -> dense), the stored
  string (GET) after every batch, PFCOUNT of one key and of several, PFMERGE.
"""
import os
import random
import unittest

from harness import IS_REDIS, Client, encode_command
from test_transactions import BesideReference, read_raw_reply

BIG = "9" * 30

# Each scenario: commands sent in order on one connection after FLUSHALL.
SCENARIOS = {
    "setbit_getbit": [
        ["SETBIT", "b", "7", "1"], ["SETBIT", "b", "7", "1"], ["SETBIT", "b", "100", "1"],
        ["GET", "b"], ["GETBIT", "b", "7"], ["GETBIT", "b", "6"], ["GETBIT", "b", "100000"],
        ["GETBIT", "nokey", "3"], ["SETBIT", "b", "7", "0"], ["GET", "b"], ["STRLEN", "b"],
        ["SETBIT", "b", "-1", "1"], ["SETBIT", "b", "x", "1"], ["SETBIT", "b", "1", "2"],
        ["SETBIT", "b", "1", "-1"], ["SETBIT", "b", "1", "x"], ["SETBIT", "b", "4294967296", "1"],
        ["SETBIT", "b", "4294967295", "x"], ["GETBIT", "b", "4294967296"], ["GETBIT", "b", "-1"],
        ["GETBIT", "b", "1.5"], ["SETBIT", "b", "1"], ["GETBIT", "b"],
        ["LPUSH", "l", "x"], ["SETBIT", "l", "1", "1"], ["GETBIT", "l", "1"],
        ["GETBIT", "l", "x"], ["SET", "n", "12"], ["SETBIT", "n", "6", "1"], ["GET", "n"],
        ["SET", "t", "a", "EX", "100"], ["SETBIT", "t", "9", "1"], ["TTL", "t"],
    ],
    "bitcount": [
        ["SET", "s", "foobar"], ["BITCOUNT", "s"], ["BITCOUNT", "s", "0", "0"],
        ["BITCOUNT", "s", "1", "1"], ["BITCOUNT", "s", "1", "1", "BYTE"],
        ["BITCOUNT", "s", "5", "30", "BIT"], ["BITCOUNT", "s", "5", "30", "bit"],
        ["BITCOUNT", "s", "-2", "-1"], ["BITCOUNT", "s", "-1", "-2"], ["BITCOUNT", "s", "-100", "100"],
        ["BITCOUNT", "s", "0"], ["BITCOUNT", "s", "0", "1", "BIT", "x"],
        ["BITCOUNT", "s", "0", "1", "WORD"], ["BITCOUNT", "s", "a", "1"], ["BITCOUNT", "s", "1", BIG],
        ["BITCOUNT", "s", "-1", "-5", "WORD"], ["BITCOUNT", "nokey"], ["BITCOUNT", "nokey", "a", "b"],
        ["BITCOUNT", "nokey", "0"], ["LPUSH", "l", "x"], ["BITCOUNT", "l"], ["BITCOUNT", "l", "a", "b"],
        ["BITCOUNT", "l", "0"], ["SET", "e", ""], ["BITCOUNT", "e"], ["BITCOUNT", "e", "0", "-1", "BIT"],
        ["BITCOUNT", "s", "3", "2"], ["BITCOUNT", "s", "47", "47", "BIT"], ["BITCOUNT", "s", "48", "60", "BIT"],
    ],
    "bitpos": [
        ["SET", "s", "\xff\xf0\x00"], ["BITPOS", "s", "0"], ["BITPOS", "s", "1"],
        ["BITPOS", "s", "1", "2"], ["BITPOS", "s", "0", "1", "1"], ["BITPOS", "s", "1", "7", "15", "BIT"],
        ["BITPOS", "s", "0", "7", "11", "BIT"], ["BITPOS", "s", "0", "7", "12", "bit"],
        ["BITPOS", "s", "0", "-3", "-1", "BYTE"], ["BITPOS", "s", "1", "-1"],
        ["SET", "f", "\xff\xff"], ["BITPOS", "f", "0"], ["BITPOS", "f", "0", "0"], ["BITPOS", "f", "0", "0", "-1"],
        ["BITPOS", "f", "0", "0", "-1", "BIT"], ["BITPOS", "f", "1", "20"],
        ["BITPOS", "nokey", "1"], ["BITPOS", "nokey", "0"], ["BITPOS", "nokey", "0", "x"],
        ["BITPOS", "s", "2"], ["BITPOS", "s", "x"], ["BITPOS", "s", "-1"], ["BITPOS", "nokey", "2"],
        ["BITPOS", "s", "1", "x"], ["BITPOS", "s", "1", "0", "x"], ["BITPOS", "s", "1", "0", "1", "WORD"],
        ["BITPOS", "s", "1", "x", "1", "WORD"], ["BITPOS", "s", "1", "0", "x", "WORD"],
        ["BITPOS", "s", "1", "0", "1", "BIT", "x"], ["LPUSH", "l", "x"], ["BITPOS", "l", "1"],
        ["BITPOS", "l", "1", "x"], ["BITPOS", "l", "x"], ["SET", "e", ""], ["BITPOS", "e", "0"],
        ["BITPOS", "e", "1"], ["BITPOS", "s", "0", "10", "5"],
    ],
    "bitop": [
        ["SET", "a", "foobar"], ["SET", "b", "abc"], ["BITOP", "AND", "d", "a", "b"], ["GET", "d"],
        ["BITOP", "or", "d", "a", "b"], ["GET", "d"], ["BITOP", "XOR", "d", "a", "b", "nokey"],
        ["GET", "d"], ["BITOP", "NOT", "d", "a"], ["GET", "d"], ["BITOP", "NOT", "d", "a", "b"],
        ["BITOP", "NAND", "d", "a"], ["BITOP", "AND", "d", "nokey", "nokey2"], ["EXISTS", "d"],
        ["SET", "d", "x", "EX", "100"], ["BITOP", "OR", "d", "a"], ["TTL", "d"],
        ["LPUSH", "l", "x"], ["BITOP", "AND", "d", "a", "l"], ["BITOP", "AND", "l", "a"], ["TYPE", "l"],
        ["BITOP", "AND", "l", "nokey"], ["EXISTS", "l"], ["BITOP", "NOT", "d"], ["BITOP", "AND", "d"],
        ["SET", "e", ""], ["BITOP", "NOT", "d", "e"], ["EXISTS", "d"],
    ],
    "bitfield": [
        ["BITFIELD", "f", "SET", "u8", "0", "255", "GET", "i8", "0", "INCRBY", "u8", "0", "10"],
        ["BITFIELD", "f", "OVERFLOW", "SAT", "INCRBY", "u8", "0", "300", "OVERFLOW", "FAIL",
         "INCRBY", "u8", "0", "1", "overflow", "wrap", "INCRBY", "i4", "0", "7", "INCRBY", "i4", "0", "1"],
        ["BITFIELD", "f", "SET", "i64", "8", "-9223372036854775808", "INCRBY", "i64", "8", "-1",
         "OVERFLOW", "FAIL", "INCRBY", "i64", "8", "1", "GET", "u63", "8", "GET", "i64", "8"],
        ["GET", "f"], ["BITFIELD", "f", "GET", "u8", "#1", "SET", "u4", "#3", "9", "GET", "u16", "#1"],
        ["GET", "f"], ["BITFIELD", "g", "OVERFLOW", "FAIL", "SET", "u2", "100", "9"], ["GET", "g"],
        ["BITFIELD", "h", "GET", "u8", "0"], ["EXISTS", "h"], ["BITFIELD", "h"], ["BITFIELD", "h", "OVERFLOW", "SAT"],
        ["BITFIELD", "f", "GET", "u64", "0"], ["BITFIELD", "f", "GET", "i65", "0"], ["BITFIELD", "f", "GET", "i0", "0"],
        ["BITFIELD", "f", "GET", "x8", "0"], ["BITFIELD", "f", "GET", "u8", "-1"], ["BITFIELD", "f", "GET", "u8", "#-1"],
        ["BITFIELD", "f", "GET", "u8", "4294967296"], ["BITFIELD", "f", "GET", "u8", "#536870912"],
        ["BITFIELD", "f", "SET", "u8", "0", "x"], ["BITFIELD", "f", "OVERFLOW", "BAD", "GET", "u8", "0"],
        ["BITFIELD", "f", "GET", "u8"], ["BITFIELD", "f", "FOO", "u8", "0"], ["BITFIELD", "f", "INCRBY", "u8", "0"],
        ["BITFIELD", "f", "GET", "", "0"], ["BITFIELD", "f", "GET", "u8", "", "GET", "x", "0"],
        ["BITFIELD", "f", "SET", "u8", "0", "-1", "OVERFLOW", "SAT", "SET", "u8", "0", "-1",
         "SET", "i8", "0", "200", "OVERFLOW", "FAIL", "SET", "i8", "0", "-200", "INCRBY", "u8", "0", "-100"],
        ["LPUSH", "l", "x"], ["BITFIELD", "l", "GET", "u8", "0"], ["BITFIELD", "l", "SET", "u8", "0", "1"],
        ["BITFIELD_RO", "l", "GET", "u8", "0"], ["BITFIELD_RO", "f", "GET", "u8", "0", "GET", "i3", "#2"],
        ["BITFIELD_RO", "f", "SET", "u8", "0", "1"], ["BITFIELD_RO", "l", "INCRBY", "u8", "0", "1"],
        ["BITFIELD_RO", "nokey", "GET", "u8", "0"], ["BITFIELD_RO", "f", "OVERFLOW", "FAIL"],
        ["BITFIELD_RO", "f"], ["BITFIELD_RO", "f", "GET", "u8", "x"],
        ["SET", "t", "a", "EX", "100"], ["BITFIELD", "t", "SET", "u8", "16", "1"], ["TTL", "t"], ["GET", "t"],
        # A write that changes nothing leaves a WATCH intact; one that changes a byte does not.
        ["WATCH", "t"], ["BITFIELD", "t", "SET", "u8", "16", "1", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "9"],
        ["MULTI"], ["PING"], ["EXEC"], ["WATCH", "t"], ["BITFIELD", "t", "INCRBY", "u8", "16", "0", "GET", "u4", "0"],
        ["MULTI"], ["PING"], ["EXEC"], ["WATCH", "t"], ["BITFIELD", "t", "SET", "u8", "16", "2"],
        ["MULTI"], ["PING"], ["EXEC"], ["WATCH", "t"], ["BITFIELD", "t", "SET", "u8", "40", "0"],
        ["MULTI"], ["PING"], ["EXEC"],
        ["WATCH", "t"], ["SETBIT", "t", "1", "1"], ["MULTI"], ["PING"], ["EXEC"],
        ["WATCH", "t"], ["SETBIT", "t", "1", "1"], ["MULTI"], ["PING"], ["EXEC"],
        ["WATCH", "t"], ["SETBIT", "t", "1000", "0"], ["MULTI"], ["PING"], ["EXEC"],
        ["WATCH", "h"], ["PFADD", "h", "a"], ["PFADD", "h", "a"], ["MULTI"], ["PING"], ["EXEC"],
        ["WATCH", "h"], ["PFADD", "h", "a"], ["MULTI"], ["PING"], ["EXEC"],
        ["WATCH", "h"], ["PFCOUNT", "h"], ["MULTI"], ["PING"], ["EXEC"],
        ["WATCH", "h"], ["PFCOUNT", "h"], ["MULTI"], ["PING"], ["EXEC"],
        ["WATCH", "d"], ["BITOP", "OR", "d", "nokey"], ["MULTI"], ["PING"], ["EXEC"],
    ],
    "hyperloglog": [
        ["PFADD", "h", "a", "b", "c"], ["PFADD", "h", "a"], ["PFADD", "h"], ["PFADD", "new"],
        ["GET", "new"], ["PFCOUNT", "h"], ["GET", "h"], ["PFADD", "h", "d"], ["GET", "h"],
        ["PFCOUNT", "h", "new", "nokey"], ["PFCOUNT", "nokey"], ["PFCOUNT", "nokey", "nokey2"],
        ["PFMERGE", "m", "h", "nokey"], ["GET", "m"], ["PFCOUNT", "m"], ["PFMERGE", "m"], ["GET", "m"],
        ["PFMERGE", "empty"], ["GET", "empty"], ["SET", "s", "notanhll"], ["PFADD", "s", "a"],
        ["PFCOUNT", "s"], ["PFCOUNT", "h", "s"], ["PFMERGE", "s", "h"], ["PFMERGE", "m", "s"],
        ["LPUSH", "l", "x"], ["PFADD", "l", "a"], ["PFCOUNT", "l"], ["PFCOUNT", "h", "l"],
        ["PFMERGE", "l", "h"], ["PFMERGE", "m", "l"], ["SET", "fake", "HYLL\x02" + "\x00" * 11],
        ["PFADD", "fake", "a"], ["SET", "fake", "HYLL\x00" + "\x00" * 11], ["PFCOUNT", "fake"],
        ["SET", "bad", "HYLL\x01" + "\x00" * 11 + "\x00"], ["PFADD", "bad", "a"], ["PFCOUNT", "bad"],
        ["PFCOUNT", "bad", "h"], ["PFMERGE", "x", "bad"],
        ["SET", "stale", "HYLL\x01" + "\x00" * 10 + "\x80\x00"], ["PFCOUNT", "stale"],
        ["PFADD", "stale", "x"], ["PFCOUNT", "h", "stale"], ["PFMERGE", "stale", "h"],
        ["SET", "over", "HYLL\x01" + "\x00" * 10 + "\x80\x7f\xff\x83"], ["PFCOUNT", "over"],
        ["PFMERGE", "x", "over"], ["PFADD", "over", "a", "b"], ["APPEND", "h", "z"], ["PFCOUNT", "h"],
        ["SET", "t", "x"], ["DEL", "t"], ["PFADD", "t", "a"], ["EXPIRE", "t", "100"], ["PFADD", "t", "zz"],
        ["TTL", "t"], ["PFADD"], ["PFCOUNT"], ["PFMERGE"],
        ["PFADD", "p", "a", "b", "c", "d"], ["PFDEBUG", "ENCODING", "p"], ["PFDEBUG", "DECODE", "p"],
        ["PFDEBUG", "decode", "new"], ["PFDEBUG", "TODENSE", "p"], ["GET", "p"], ["PFDEBUG", "TODENSE", "p"],
        ["PFDEBUG", "ENCODING", "p"], ["PFDEBUG", "DECODE", "p"], ["PFADD", "q", "x"],
        ["PFDEBUG", "GETREG", "q"], ["GET", "q"], ["PFDEBUG", "NOPE", "q"], ["PFDEBUG", "NOPE", "nokey"],
        ["PFDEBUG", "GETREG", "nokey"], ["PFDEBUG", "GETREG", "s"], ["PFDEBUG", "ENCODING", "l"],
        ["PFDEBUG", "GETREG", "stale"], ["PFDEBUG", "DECODE", "stale"], ["PFDEBUG", "GETREG"],
        ["PFDEBUG", "GETREG", "q", "x"],
    ],
    "lcs": [
        ["MSET", "a", "ohmytext", "b", "mynewtext"], ["LCS", "a", "b"], ["LCS", "a", "b", "LEN"],
        ["LCS", "a", "b", "IDX"], ["LCS", "a", "b", "IDX", "MINMATCHLEN", "4"],
        ["LCS", "a", "b", "IDX", "WITHMATCHLEN"], ["LCS", "a", "b", "idx", "minmatchlen", "-3", "withmatchlen"],
        ["LCS", "a", "b", "LEN", "IDX"], ["LCS", "a", "b", "MINMATCHLEN"], ["LCS", "a", "b", "MINMATCHLEN", "x"],
        ["LCS", "a", "b", "FOO"], ["LCS", "a", "nokey"], ["LCS", "nokey", "nokey2", "IDX"],
        ["LCS", "a", "a", "IDX", "WITHMATCHLEN"], ["LPUSH", "l", "x"], ["LCS", "a", "l"],
        ["LCS", "l", "a", "FOO"], ["LCS", "a", "nokey", "FOO"], ["LCS", "a"],
        ["MSET", "x", "abcabcabcxyz", "y", "xyzabcabcab"], ["LCS", "x", "y", "IDX", "WITHMATCHLEN"],
        ["LCS", "x", "y"], ["LCS", "y", "x", "IDX"], ["LCS", "x", "y", "LEN", "LEN", "WITHMATCHLEN"],
    ],
    "collection_fixes": [
        ["HINCRBYFLOAT", "nokey", "f", "inf"], ["HINCRBYFLOAT", "nokey", "f", "-inf"],
        ["LPUSH", "l", "x"], ["HINCRBYFLOAT", "l", "f", "inf"], ["HINCRBYFLOAT", "l", "f", "x"],
        ["HSET", "h", "f", "x"], ["HINCRBYFLOAT", "h", "f", "+inf"], ["HINCRBYFLOAT", "h", "f", "1"],
        ["ZADD", "z", "-1", "a", "0", "b", "1", "c", "2", "d"],
        ["ZRANGEBYSCORE", "z", "", "+inf"], ["ZRANGEBYSCORE", "z", "(", "+inf"],
        ["ZRANGEBYSCORE", "z", "-inf", "("], ["ZRANGEBYSCORE", "z", "-inf", ""],
        ["ZREVRANGEBYSCORE", "z", "", "-inf"], ["ZREVRANGEBYSCORE", "z", "(", "-inf", "WITHSCORES"],
        ["ZRANGE", "z", "(", "", "BYSCORE"], ["ZRANGE", "z", "", "(", "BYSCORE", "REV"],
        ["ZCOUNT", "z", "", ""], ["ZCOUNT", "z", "(", "+inf"], ["ZRANGESTORE", "d", "z", "", "+inf", "BYSCORE"],
        ["ZRANGE", "d", "0", "-1"], ["ZCOUNT", "z", "((", "1"], ["ZCOUNT", "z", "x", "1"],
        ["SADD", "s", "a", "b", "c"], ["SPOP", "s", "x"], ["SPOP", "s", "1.5"], ["SPOP", "s", "-1"],
        ["SPOP", "nokey", "x"], ["SPOP", "l", "x"], ["SCARD", "s"],
        ["ZADD", "zs", "0", "b", "-0", "a", "0", "c"], ["ZRANGE", "zs", "0", "-1", "WITHSCORES"],
        ["ZADD", "zs", "-0", "c"], ["ZSCORE", "zs", "c"], ["ZRANGE", "zs", "0", "-1", "WITHSCORES"],
    ],
}


def big_zset_with_minus_zero():
    """A sorted set past 128 members (Redis's skiplist keeps -0) with -0 and 0 scores."""
    members = []
    for i in range(140):
        members += [str(i - 70), "m%03d" % i]
    cmds = [["ZADD", "bz"] + members,
            ["ZADD", "bz", "-0", "zz", "0", "aa", "-0", "m070", "0", "mm"],
            ["ZRANGEBYSCORE", "bz", "-1", "1", "WITHSCORES"], ["ZRANK", "bz", "zz"],
            ["ZREVRANK", "bz", "aa"], ["ZSCORE", "bz", "zz"], ["ZRANGE", "bz", "69", "76", "WITHSCORES"],
            ["ZREM", "bz", "zz"], ["ZADD", "bz", "0", "m070"], ["ZRANGEBYSCORE", "bz", "0", "0", "WITHSCORES"],
            ["ZADD", "bz", "-0", "m070"], ["ZRANGEBYSCORE", "bz", "(-1", "(1", "WITHSCORES"],
            ["ZRANGEBYSCORE", "bz", "-0", "0"], ["ZCOUNT", "bz", "(", "("], ["ZPOPMIN", "bz", "3"],
            ["ZRANGE", "bz", "-inf", "(1", "BYSCORE", "LIMIT", "65", "10", "WITHSCORES"]]
    return cmds


SCENARIOS["big_zset_minus_zero"] = big_zset_with_minus_zero()


class SideBySide(BesideReference):
    def open_pair(self, resp):
        pair = (Client(self.sluice.port), Client(self.redis.port))
        for c in pair:
            if resp == 3:
                c.call("HELLO", "3")
            c.call("FLUSHALL")
        return pair

    def same(self, pair, args, what, history=()):
        """Sends args to both; fails unless the raw replies are equal. Returns the reply."""
        s, r = pair
        data = encode_command(*[a.encode("latin-1") if isinstance(a, str) else a for a in args])
        s.send(data)
        r.send(data)
        got, want = read_raw_reply(s), read_raw_reply(r)
        if got != want:
            self.fail("%s: %r\n  sluice: %r\n  redis:  %r\n  before: %s"
                      % (what, args, got[:400], want[:400], list(history)[-8:]))
        return got


@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class FixedCasesTest(SideBySide):
    def test_scenarios(self):
        for resp in (2, 3):
            for name, cmds in SCENARIOS.items():
                with self.subTest(scenario=name, resp=resp):
                    s, r = self.open_pair(resp)
                    with s, r:
                        for i, args in enumerate(cmds):
                            self.same((s, r), args, "%s RESP%d step %d" % (name, resp, i), cmds[:i])


def random_bytes(rng, n):
    # Mostly a few distinct bytes, so runs of 0x00 and 0xff (BITPOS's edge cases) are common.
    alphabet = [0, 255, 1, 128, 0x0f, 0xf0, rng.randrange(256)]
    return bytes(rng.choice(alphabet) for _ in range(n))


@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class RandomBitsTest(SideBySide):
    KEYS = ["k1", "k2", "k3", "k4"]

    def random_command(self, rng):
        k = rng.choice(self.KEYS)
        idx = lambda: str(rng.choice([rng.randrange(-40, 40), rng.randrange(-400, 400)]))  # noqa: E731
        unit = lambda: [rng.choice(["BIT", "BYTE", "bit"])] if rng.random() < 0.6 else []  # noqa: E731
        pick = rng.randrange(9)
        if pick == 0:
            return ["SETBIT", k, str(rng.randrange(300)), str(rng.randrange(2))]
        if pick == 1:
            return ["GETBIT", k, str(rng.randrange(300))]
        if pick == 2:
            return ["BITCOUNT", k] + ([idx(), idx()] + unit() if rng.random() < 0.8 else [])
        if pick == 3:
            tail = [[], [idx()], [idx(), idx()], [idx(), idx()] + unit()][rng.randrange(4)]
            return ["BITPOS", k, str(rng.randrange(2))] + tail
        if pick == 4:
            op = rng.choice(["AND", "OR", "XOR", "NOT"])
            n = 1 if op == "NOT" else rng.randrange(1, 4)
            return ["BITOP", op, rng.choice(self.KEYS)] + [rng.choice(self.KEYS) for _ in range(n)]
        if pick == 5:
            return ["SET", k, random_bytes(rng, rng.randrange(0, 40))]
        args = ["BITFIELD" if pick != 6 else "BITFIELD_RO", k]
        for _ in range(rng.randrange(1, 5)):
            sign = rng.choice("iu")
            width = rng.randrange(1, 65 if sign == "i" else 64)
            off = ("#%d" % rng.randrange(8)) if rng.random() < 0.3 else str(rng.randrange(200))
            sub = "GET" if pick == 6 else rng.choice(["GET", "SET", "INCRBY", "OVERFLOW"])
            if sub == "OVERFLOW":
                args += ["OVERFLOW", rng.choice(["WRAP", "SAT", "FAIL"])]
            elif sub == "GET":
                args += ["GET", "%s%d" % (sign, width), off]
            else:
                val = rng.choice([rng.randrange(-300, 300), rng.randrange(-2 ** 63, 2 ** 63)])
                args += [sub, "%s%d" % (sign, width), off, str(val)]
        return args

    def test_random_bit_commands(self):
        env = os.environ.get("SLUICE_DATA_SEED")
        for seed in ([int(env)] if env else [1, 2, 3]):
            for resp in (2, 3):
                rng = random.Random(seed * 10 + resp)
                s, r = self.open_pair(resp)
                with s, r:
                    history = []
                    for k in self.KEYS:
                        args = ["SET", k, random_bytes(rng, rng.randrange(0, 40))]
                        self.same((s, r), args, "seed %d setup" % seed)
                    for step in range(500):
                        args = self.random_command(rng)
                        history.append(args)
                        self.same((s, r), args, "seed %d RESP%d step %d" % (seed, resp, step),
                                  history[:-1])
                    for k in self.KEYS:
                        self.same((s, r), ["GET", k], "seed %d final" % seed, history)


@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class HyperLogLogTest(SideBySide):
    def test_random_adds_store_redis_bytes(self):
        env = os.environ.get("SLUICE_DATA_SEED")
        for seed in ([int(env)] if env else [1, 2, 3, 4]):
            rng = random.Random(seed)
            resp = 2 + seed % 2
            s, r = self.open_pair(resp)
            with s, r:
                keys = ["h1", "h2", "h3"]
                for key in keys:
                    target = rng.choice([0, rng.randrange(1, 300), rng.randrange(300, 3000),
                                         rng.randrange(3000, 20001)])
                    if key == "h3":  # every seed crosses sparse -> dense at least once
                        target = rng.randrange(15000, 20001)
                    added = 0
                    while added < target:
                        batch = min(target - added, rng.randrange(1, 400))
                        elements = [random_bytes(rng, rng.randrange(0, 12)) if rng.random() < 0.3
                                    else ("e%d" % rng.randrange(30000)) for _ in range(batch)]
                        self.same((s, r), ["PFADD", key] + elements, "seed %d PFADD" % seed)
                        added += batch
                        self.same((s, r), ["GET", key], "seed %d GET %s after %d" % (seed, key, added))
                        if rng.random() < 0.2:
                            self.same((s, r), ["PFCOUNT", key], "seed %d PFCOUNT" % seed)
                            self.same((s, r), ["GET", key], "seed %d GET after PFCOUNT" % seed)
                    self.same((s, r), ["PFCOUNT", key], "seed %d PFCOUNT %s" % (seed, key))
                self.same((s, r), ["PFCOUNT"] + keys, "seed %d PFCOUNT all" % seed)
                self.same((s, r), ["PFMERGE", "m", "h1", "h2"], "seed %d PFMERGE" % seed)
                self.same((s, r), ["GET", "m"], "seed %d merged" % seed)
                self.same((s, r), ["PFMERGE", "h3", "m", "nokey"], "seed %d PFMERGE into" % seed)
                self.same((s, r), ["GET", "h3"], "seed %d merged into" % seed)
                self.same((s, r), ["PFCOUNT", "h3"], "seed %d merged count" % seed)


if __name__ == "__main__":
    unittest.main()
