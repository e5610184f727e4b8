"""Collections (hashes and sets; lists and sorted sets plug in the same way) against a real
redis-server 7.0.15, and kill -9 durability of big collections.

- DifferentialTest: seeded random mixes of collection and key commands, sent to Sluice and to a
  redis-server started here (`--save '' --appendonly no`); each raw reply is compared as the
  generator says (see collection_gen_hash.py): byte for byte, sorted, as sorted pairs, or by
  shape for random picks. RESP2 and RESP3. Generators are the modules collection_gen_*.py in
  this directory, each with `commands(rng, keys) -> (args, mode)`: add a type by adding a file.
  SLUICE_COLLECTIONS_SEED=n runs another seed.
- KillNineTest: a 20,000-field hash, a 20,000-member set and a 20,000-member sorted set written
  in pipelined batches, then kill -9; after restart every acknowledged element is there, in each
  appendfsync mode.
- ListLayoutsTest: the list mix on servers with tiny inline-list limits and with none.
- ConcurrencyTest: 6 connections pipelining HINCRBY/SADD/HSET on the same keys: exact totals.
- FlushedListTest: a list whose elements a SAVE flushed, popped from both ends with writes in
  between, against redis-server; four connections draining it pop each element once.
- FormatTest: the data dir's SLUICE-FORMAT file; a server refuses a dir of an unknown format.
"""
import glob
import importlib
import os
import random
import unittest

from harness import IS_REDIS, Client, Server, sluice_only  # noqa: F401
from test_transactions import BesideReference, read_raw_reply, start_beside_reference

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED_KEYS = ["k1", "k2"]  # every generator uses these too: cross-type WRONGTYPE
STEPS = 400


def generators():
    mods = []
    for path in sorted(glob.glob(os.path.join(HERE, "collection_gen_*.py"))):
        mods.append(importlib.import_module(os.path.basename(path)[:-3]))
    return mods


# -- raw reply parsing, for the comparisons that are not byte for byte

def parse(raw, pos=0):
    """(value, next position) of one RESP2/RESP3 reply in `raw` bytes. Aggregates are lists
    (a map is a list of [key, value] lists), scalars their bytes line or payload."""
    eol = raw.index(b"\r\n", pos)
    t, rest = raw[pos:pos + 1], raw[pos + 1:eol]
    pos = eol + 2
    if t in (b"$", b"=", b"!"):
        n = int(rest)
        if n < 0:
            return (b"$-1", pos)
        return (t + raw[pos:pos + n], pos + n + 2)
    if t in (b"*", b"~", b">"):
        n = int(rest)
        items = []
        for _ in range(max(n, 0)):
            v, pos = parse(raw, pos)
            items.append(v)
        return ((t, items) if n >= 0 else b"*-1", pos)
    if t == b"%":
        items = []
        for _ in range(int(rest)):
            k, pos = parse(raw, pos)
            v, pos = parse(raw, pos)
            items.append((k, v))
        return ((t, items), pos)
    return (t + rest, pos)


def normalize(raw, mode):
    value, _ = parse(raw)
    if mode == "sorted":
        if isinstance(value, tuple):
            t, items = value
            # A scan reply [cursor, [elements]]: sort the elements.
            if len(items) == 2 and isinstance(items[1], tuple) and not isinstance(items[0], tuple):
                return (t, [items[0], (items[1][0], sorted(items[1][1], key=repr))])
            return (t, sorted(items, key=repr))
        return value
    if mode == "pairs":
        if isinstance(value, tuple):
            t, items = value
            if t == b"%":
                return (t, sorted(items, key=repr))
            return (t, sorted(zip(items[0::2], items[1::2]), key=repr))
        return value
    if mode == "shape":
        if isinstance(value, tuple):
            return (value[0], len(value[1]))
        if value.startswith(b"$") and value != b"$-1":
            return b"$bulk"
        return value
    raise AssertionError("unknown mode %r" % mode)


@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class DifferentialTest(BesideReference):
    def run_mix(self, seed, resp, gens):
        rng = random.Random(seed)
        with Client(self.sluice.port) as s, Client(self.redis.port) as r:
            for c in (s, r):
                if resp == 3:
                    c.call("HELLO", "3")
                c.call("FLUSHALL")
            history = []
            for step in range(STEPS):
                gen = rng.choice(gens)
                args, mode = gen.commands(rng, SHARED_KEYS)
                if rng.random() < 0.06:  # key commands, and the other types at the shared keys
                    args, mode = rng.choice([(["SET", "k1", "str"], "exact"),
                                             (["GET", "k2"], "exact"),
                                             (["DEL", "k1"], "exact"),
                                             (["TYPE", "k2"], "exact"),
                                             (["RENAME", "k2", "k1"], "exact"),
                                             (["COPY", "k1", "k2", "REPLACE"], "exact"),
                                             (["EXISTS", "k1", "k2", "h1", "s1"], "exact"),
                                             (["EXPIRE", "k1", "1000"], "exact"),
                                             (["PERSIST", "k1"], "exact"),
                                             (["UNLINK", "k2", "h2"], "exact"),
                                             (["RENAMENX", "h1", "s1"], "exact"),
                                             (["SCAN", "0", "TYPE", "hash", "COUNT", "1000"],
                                              "sorted"),
                                             (["KEYS", "*1"], "sorted"),
                                             (["DBSIZE"], "exact"),
                                             (["RANDOMKEY"], "shape")])
                history.append(" ".join(args))
                for c in (s, r):
                    c.send(b"*%d\r\n" % len(args) + b"".join(
                        b"$%d\r\n%s\r\n" % (len(a.encode()), a.encode()) for a in args))
                got, want = read_raw_reply(s), read_raw_reply(r)
                if mode != "exact":
                    got, want = normalize(got, mode), normalize(want, mode)
                if got != want:
                    self.fail("seed %d RESP%d step %d: %s\n  sluice: %r\n  redis:  %r\n"
                              "last commands:\n  %s" % (seed, resp, step, " ".join(args), got,
                                                         want, "\n  ".join(history[-15:])))

    def seeds(self):
        env = os.environ.get("SLUICE_COLLECTIONS_SEED")
        return [int(env)] if env else [1, 2, 3, 4]

    def test_each_type_alone(self):
        for gen in generators():
            for seed in self.seeds():
                for resp in (2, 3):
                    with self.subTest(generator=gen.__name__, seed=seed, resp=resp):
                        self.run_mix(seed, resp, [gen])

    def test_all_types_mixed(self):
        for seed in self.seeds():
            for resp in (2, 3):
                with self.subTest(seed=seed, resp=resp):
                    self.run_mix(1000 + seed, resp, generators())

    def test_spop_of_the_last_member_is_exact(self):
        with Client(self.sluice.port) as s, Client(self.redis.port) as r:
            for c in (s, r):
                c.call("DEL", "one")
            for args in (["SADD", "one", "m"], ["SPOP", "one"], ["EXISTS", "one"],
                         ["SPOP", "one"], ["SADD", "one", "5"], ["SPOP", "one", "3"]):
                for c in (s, r):
                    c.send(b"*%d\r\n" % len(args) + b"".join(
                        b"$%d\r\n%s\r\n" % (len(a), a.encode()) for a in args))
                self.assertEqual(read_raw_reply(s), read_raw_reply(r), args)


class LayoutMix:
    """One type's mix again, on servers started with `options`: the replies must not depend on
    how Sluice lays the type out (inline in its metadata, or one entry per element)."""

    run_mix = DifferentialTest.run_mix
    seeds = DifferentialTest.seeds
    generator = None  # the collection_gen_* module's name

    def check_layout(self, options):
        gen = __import__(self.generator)
        self.sluice, self.redis = start_beside_reference(options=options)
        try:
            for seed in self.seeds():
                for resp in (2, 3):
                    with self.subTest(options=options, seed=seed, resp=resp):
                        self.run_mix(seed, resp, [gen])
        finally:
            self.redis.stop()
            self.sluice.stop()


@sluice_only
@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class ListLayoutsTest(LayoutMix, unittest.TestCase):
    """Lists that change layout every few commands (at most 12 elements and 96 bytes inline: the
    mix's lists hover around that), and lists always one entry per element
    (storage/types/list_body.h)."""
    generator = "collection_gen_list"

    def test_layout_changes_every_few_commands(self):
        self.check_layout({"list-inline-max-entries": "12", "list-inline-max-bytes": "96"})

    def test_one_entry_per_element(self):
        self.check_layout({"list-inline-max-entries": "0"})


@sluice_only
@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class HashLayoutsTest(LayoutMix, unittest.TestCase):
    """Hashes that move out of the inline layout after a few fields (at most 4 fields and 64
    bytes inline), and hashes always one entry per field (storage/types/hash_body.h)."""
    generator = "collection_gen_hash"

    def test_layout_changes_every_few_commands(self):
        self.check_layout({"hash-inline-max-fields": "4", "hash-inline-max-bytes": "64"})

    def test_one_entry_per_field(self):
        self.check_layout({"hash-inline-max-fields": "0"})


@sluice_only
@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class ZSetLayoutsTest(LayoutMix, unittest.TestCase):
    """Sorted sets that move out of the inline layout after a few members (at most 4 members and
    128 bytes inline), and sorted sets never inline (storage/types/inline_elements.h)."""
    generator = "collection_gen_zset"

    def test_layout_changes_every_few_commands(self):
        self.check_layout({"zset-inline-max-members": "4", "zset-inline-max-bytes": "128"})

    def test_never_inline(self):
        self.check_layout({"zset-inline-max-members": "0"})


@sluice_only
@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class SetLayoutsTest(LayoutMix, unittest.TestCase):
    """Sets that move out of the inline layout after a few members (at most 4 members and 32
    bytes inline), and sets never inline (storage/types/inline_elements.h)."""
    generator = "collection_gen_set"

    def test_layout_changes_every_few_commands(self):
        self.check_layout({"set-inline-max-members": "4", "set-inline-max-bytes": "32"})

    def test_never_inline(self):
        self.check_layout({"set-inline-max-members": "0"})


class KillNineTest(unittest.TestCase):
    N = 20000
    BATCH = 500

    def check_mode(self, mode):
        srv = Server({"appendfsync": mode})
        try:
            srv.start()
            with Client(srv.port) as c:
                cmds = []
                for i in range(self.N):
                    cmds.append(("HSET", "bighash", "field:%d" % i, "value:%d" % i))
                    cmds.append(("SADD", "bigset", "member:%d" % i))
                    cmds.append(("ZADD", "bigzset", str(i), "member:%d" % i))
                for at in range(0, len(cmds), self.BATCH):
                    replies = c.pipeline(cmds[at:at + self.BATCH])
                    self.assertEqual(replies, [1] * len(replies))
            srv.kill9()
            srv.start()
            with Client(srv.port) as c:
                self.assertEqual(c.call("HLEN", "bighash"), self.N)
                self.assertEqual(c.call("SCARD", "bigset"), self.N)
                self.assertEqual(c.call("ZCARD", "bigzset"), self.N)
                self.assertEqual(c.call("ZRANGE", "bigzset", "-1", "-1", "WITHSCORES"),
                                 [b"member:%d" % (self.N - 1), b"%d" % (self.N - 1)])
                self.assertEqual(c.call("OBJECT", "ENCODING", "bigzset"), b"skiplist")
                for i in (0, 1, self.N // 2, self.N - 1):
                    self.assertEqual(c.call("HGET", "bighash", "field:%d" % i), b"value:%d" % i)
                    self.assertEqual(c.call("SISMEMBER", "bigset", "member:%d" % i), 1)
                    self.assertEqual(c.call("ZSCORE", "bigzset", "member:%d" % i), b"%d" % i)
                self.assertEqual(len(c.call("HKEYS", "bighash")), self.N)
                self.assertEqual(c.call("OBJECT", "ENCODING", "bighash"), b"hashtable")
                self.assertEqual(c.call("DEL", "bighash", "bigset", "bigzset"), 3)
                self.assertEqual(c.call("HLEN", "bighash"), 0)
        finally:
            srv.stop()

    def test_always(self):
        self.check_mode("always")

    def test_everysec(self):
        self.check_mode("everysec")

    def test_no(self):
        self.check_mode("no")


@sluice_only
class ConcurrencyTest(unittest.TestCase):
    """Connections racing on one hash and one set (each command is atomic per key)."""

    def test_concurrent_increments_and_adds_are_exact(self):
        import threading
        srv = Server({"threads": "4"})
        errors = []

        def worker(w):
            try:
                with Client(srv.port) as c:
                    for batch in range(10):
                        cmds = []
                        for i in range(50):
                            cmds.append(("HINCRBY", "counters", "f%d" % (i % 5), "1"))
                            cmds.append(("SADD", "members", "w%d:%d:%d" % (w, batch, i)))
                            cmds.append(("HSET", "owners", "w%d" % w, str(batch)))
                        c.pipeline(cmds)
            except Exception as e:  # reported below
                errors.append(e)

        try:
            srv.start()
            threads = [threading.Thread(target=worker, args=(w,)) for w in range(6)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            self.assertEqual(errors, [])
            with Client(srv.port) as c:
                values = c.call("HVALS", "counters")
                self.assertEqual(sorted(int(v) for v in values), [600] * 5)
                self.assertEqual(c.call("HLEN", "counters"), 5)
                self.assertEqual(c.call("SCARD", "members"), 6 * 10 * 50)
                self.assertEqual(c.call("HLEN", "owners"), 6)
        finally:
            srv.stop()


@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class FlushedListTest(BesideReference):
    """A queue whose elements a SAVE moved into table files, drained by pipelined pops (which
    Sluice reads ahead, a run per unit: docs/engine.md, "Read-ahead of list pops")."""

    N = 3000

    def fill(self, c, n):
        self.assertEqual(c.call("FLUSHALL"), "OK")
        for at in range(0, n, 500):
            c.call("RPUSH", "q", *["e%d" % i for i in range(at, min(n, at + 500))])
        self.assertEqual(c.call("SAVE"), "OK")

    def test_pipelined_pops_and_writes_match_redis(self):
        rng = random.Random(7)
        cmds = []
        for n in range(600):
            cmds.append(rng.choice([
                ("LPOP", "q"), ("RPOP", "q"), ("LPOP", "q", "3"), ("RPOP", "q", "2"),
                ("LMOVE", "q", "q", "LEFT", "RIGHT"), ("RPOPLPUSH", "q", "q"),
                ("LSET", "q", str(rng.randrange(-20, 20)), "set%d" % n),
                ("LINDEX", "q", str(rng.randrange(-20, 20))), ("LPUSH", "q", "new%d" % n),
                ("LPOS", "q", "set%d" % (n - 1)), ("LLEN", "q")]))
        replies = []
        for port in (self.sluice.port, self.redis.port):
            with Client(port) as c:
                self.fill(c, self.N)
                got = []
                for at in range(0, len(cmds), 100):  # each batch one pipeline: one unit per command
                    got += c.pipeline(cmds[at:at + 100])
                got.append(c.call("LRANGE", "q", "0", "-1"))
                replies.append(got)
        self.assertEqual(replies[0], replies[1])
        with Client(self.sluice.port) as c:
            info = c.call("INFO", "memory").decode()
        hits = int(info.split("sluice_read_ahead_hits:")[1].split()[0])
        self.assertGreater(hits, 0)

    def test_concurrent_drain_pops_each_element_once(self):
        import threading
        popped, errors = [], []

        def drain(end):
            try:
                with Client(self.sluice.port) as c:
                    while True:
                        got = [r for r in c.pipeline([(end, "q")] * 50) if r is not None]
                        if not got:
                            return
                        popped.extend(got)
            except Exception as e:  # reported below
                errors.append(e)

        with Client(self.sluice.port) as c:
            self.fill(c, 20000)
        threads = [threading.Thread(target=drain, args=(end,))
                   for end in ("LPOP", "RPOP", "LPOP", "RPOP")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(sorted(popped), sorted(b"e%d" % i for i in range(20000)))


@sluice_only
class FormatTest(unittest.TestCase):
    def test_data_dir_records_its_format_and_unknown_formats_are_refused(self):
        srv = Server()
        try:
            srv.start()
            with Client(srv.port) as c:
                self.assertEqual(c.call("HSET", "h", "f", "v"), 1)
            self.assertEqual(srv.terminate(), 0)
            path = os.path.join(srv.datadir, "SLUICE-FORMAT")
            with open(path) as f:
                self.assertEqual(f.read(), "sluice-format 1\n")
            with open(path, "w") as f:
                f.write("sluice-format 2\n")
            srv.spawn()
            self.assertNotEqual(srv.wait_exit(), 0)
            self.assertIn("on-disk format 2, which this build of Sluice cannot read", srv.log())
            with open(path, "w") as f:
                f.write("sluice-format 1\n")
            srv.start()
            with Client(srv.port) as c:
                self.assertEqual(c.call("HGET", "h", "f"), b"v")
        finally:
            srv.stop()


if __name__ == "__main__":
    unittest.main()
