"""Transactions (issue 6), black box: MULTI, EXEC, DISCARD, WATCH, UNWATCH.

- DifferentialTest: the same command sequences go over raw RESP sockets to sluice-server and to
  a real redis-server 7.0.15 started here, and every reply is compared byte for byte, in RESP2
  and in RESP3. Time that must pass (a watched key expiring) passes on Sluice's DEBUG test clock
  and, only on the Redis side, in real time.
- ConcurrencyTest: writers' `MULTI INCR a INCR b EXEC` against readers' `MULTI GET a GET b EXEC`
  from several processes (a == b always), and WATCH-based optimistic increments (the counter
  ends at the number of successful EXECs).
  A multi-key stress (transfers, RENAME swaps, WATCH/MSET) whose readers (MGET, MULTI reads,
  DBSIZE/KEYS/EXISTS) must never see a state between two commands of an EXEC.
- WatchLifecycleTest: watchers that disconnect, QUIT or are killed leave nothing behind.
- LimitersInMultiTest: limiter commands queued and run inside EXEC, on the test clock.
- CrashTest: SIGKILL during a pipelined stream of multi-key EXECs, in each appendfsync mode, and
  during 5000-key EXECs: after the restart every transaction is all there or not at all, and
  every acknowledged one is.
- RedisPyTest: redis-py's pipeline(transaction=True) and transaction() with WatchError retries.
"""

import multiprocessing
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

from harness import (IS_REDIS, T0_MS, BlackboxTestCase, Client, ConnectionClosed, RespError,
                     Server, ServerTestCase, encode_command, free_port)
from transaction_scenarios import SCENARIOS

WRONGTYPE = RespError("WRONGTYPE Operation against a key holding the wrong kind of value")
EXECABORT = RespError("EXECABORT Transaction discarded because of previous errors.")


# ---------------------------------------------------------------------------------------------
# Raw replies and the reference redis-server
# ---------------------------------------------------------------------------------------------

def read_raw_reply(c):
    """One whole reply from Client `c`, as the exact bytes the server sent."""
    line = c._line()
    out = line + b"\r\n"
    t, rest = line[:1], line[1:]
    if t in (b"$", b"=", b"!"):
        n = int(rest)
        if n >= 0:
            out += c._exact(n) + b"\r\n"
    elif t in (b"*", b"~", b">"):
        for _ in range(max(int(rest), 0)):
            out += read_raw_reply(c)
    elif t == b"%":
        for _ in range(2 * int(rest)):
            out += read_raw_reply(c)
    return out


def redis_server_binary():
    return os.environ.get("REDIS_SERVER") or shutil.which("redis-server") or (
        "/usr/bin/redis-server" if os.access("/usr/bin/redis-server", os.X_OK) else None)


def redis_server_version(binary):
    """'7.0.15' from `redis-server --version`."""
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30).stdout
    m = re.search(r"v=(\S+)", out)
    return m.group(1) if m else (out.strip().splitlines() or ["unknown"])[0]


class RedisReference:
    """A real redis-server on a free port, no persistence, in its own temporary directory."""

    def __init__(self, binary):
        self.binary = binary
        self.workdir = tempfile.mkdtemp(prefix="sluice-bb-redis-")
        self.port = free_port()
        self.proc = None
        self.log = None

    def start(self):
        argv = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no", "--daemonize", "no", "--dir", self.workdir]
        self.log = open(os.path.join(self.workdir, "redis.log"), "wb")
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, cwd=self.workdir)
        end = time.monotonic() + 60
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise AssertionError("redis-server exited with %s" % self.proc.returncode)
            try:
                with Client(self.port, timeout=5) as c:
                    if c.call("PING") == "PONG":
                        return self
            except (OSError, ConnectionClosed):
                time.sleep(0.05)
        raise AssertionError("redis-server did not start")

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.log is not None:
            self.log.close()
        shutil.rmtree(self.workdir, ignore_errors=True)



def start_beside_reference(**server_args):
    """Starts a Sluice server (Server(**server_args)) and the reference redis-server 7.0.x;
    returns (sluice, redis). Raises unittest.SkipTest when no 7.0 reference is installed. If
    either fails to start, both are stopped before the error propagates."""
    binary = redis_server_binary()
    if binary is None:
        raise unittest.SkipTest("redis-server (7.0.15) is not installed: no reference to "
                                "compare with (tools/setup.sh installs it)")
    version = redis_server_version(binary)
    if not version.startswith("7.0."):  # the replies Sluice promises are 7.0's
        raise unittest.SkipTest("%s is redis-server %s, not 7.0.x: not the reference"
                                % (binary, version))
    redis = RedisReference(binary)
    try:
        redis.start()
    except BaseException:
        redis.stop()
        raise
    sluice = Server(**server_args)
    try:
        sluice.start()
    except BaseException:
        sluice.stop()
        redis.stop()
        raise
    return sluice, redis

class BesideReference(BlackboxTestCase):
    """A test class with a Sluice server and the reference redis-server for all its tests
    (cls.sluice, cls.redis)."""

    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.sluice, cls.redis = start_beside_reference()

    @classmethod
    def tearDownClass(cls):
        cls.redis.stop()
        cls.sluice.stop()


@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class DifferentialTest(BesideReference):
    """Each scenario runs on both servers, on fresh connections after FLUSHALL; every reply
    (raw bytes) must be Redis's."""

    def play(self, steps, port, is_sluice, proto):
        """Runs `steps` on one server; returns [(step text, raw reply)] for compared steps."""
        with Client(port) as admin:
            self.assertEqual(admin.call("FLUSHALL"), "OK")
            if is_sluice:
                self.assertEqual(admin.call("DEBUG", "CLOCK", "SET", T0_MS), "OK")
        conns = {}

        def conn(i):
            if i not in conns:
                conns[i] = Client(port)
                if proto == 3:  # the reply names the server: not compared
                    self.assertEqual(conns[i].call("HELLO", "3")[b"proto"], 3)
            return conns[i]

        out = []
        try:
            for step in steps:
                if step.kind == "wait":
                    if is_sluice:
                        with Client(port) as admin:
                            self.assertEqual(admin.call("DEBUG", "CLOCK", "ADVANCE", step.ms), "OK")
                    else:
                        time.sleep(step.ms / 1000.0)
                    continue
                c = conn(step.conn)
                if step.kind == "setup":
                    c.send(encode_command(*step.args[1 if is_sluice else 0]))
                    reply = read_raw_reply(c)
                    self.assertFalse(reply.startswith(b"-"), reply)
                    continue
                if step.kind == "quit":
                    c.send(encode_command("QUIT"))
                    out.append(("c%d QUIT" % step.conn, c.read_until_closed()))
                    c.close()
                    del conns[step.conn]
                    continue
                c.send(encode_command(*step.args))
                raw = read_raw_reply(c)
                text = "c%d %s" % (step.conn, " ".join(str(a) for a in step.args))
                if step.expect is not None:
                    want = step.expect[proto] if isinstance(step.expect, dict) else step.expect
                    self.assertEqual(raw, want, "%s on %s (RESP%d)"
                                     % (text, "sluice" if is_sluice else "redis", proto))
                out.append((text, raw))
        finally:
            for c in conns.values():
                c.close()
        return out

    def check(self, name, proto):
        steps = SCENARIOS[name]
        want = self.play(steps, self.redis.port, False, proto)
        got = self.play(steps, self.sluice.port, True, proto)
        self.assertEqual(got, want, "scenario %s, RESP%d (left: sluice, right: redis)"
                         % (name, proto))

    def test_scenarios_resp2(self):
        for name in SCENARIOS:
            with self.subTest(scenario=name):
                self.check(name, 2)

    def test_scenarios_resp3(self):
        for name in SCENARIOS:
            with self.subTest(scenario=name):
                self.check(name, 3)

    def test_stats_counters(self):
        """INFO's total_commands_processed and total_error_replies move as Redis's do: queued
        commands count when EXEC runs them, refused ones count as errors."""
        seqs = [
            [("MULTI",), ("SET", "a", "1"), ("INCR", "a"), ("EXEC",)],
            [("MULTI",), ("NOSUCH",), ("SET", "a", "1"), ("EXEC",)],
            [("SET", "s", "x"), ("MULTI",), ("INCR", "s"), ("GET", "s"), ("EXEC",)],
            [("MULTI",), ("COPY", "a", "b", "DB", "1"), ("SELECT", "1"), ("GET", "b"), ("EXEC",)],
            [("EXEC",), ("DISCARD",), ("EXEC", "x")],
            [("WATCH", "a"), ("SET", "a", "2"), ("MULTI",), ("GET", "a"), ("EXEC",)],
            [("MULTI",), ("GET",), ("EXEC",)],
            [("MULTI",), ("MULTI",), ("WATCH", "x"), ("SHUTDOWN",), ("DISCARD",)],
        ]

        def counters(c):
            info = c.call("INFO", "stats").decode()
            fields = dict(line.split(":", 1) for line in info.split("\r\n") if ":" in line)
            return int(fields["total_commands_processed"]), int(fields["total_error_replies"])

        for seq in seqs:
            deltas = []
            for port in (self.redis.port, self.sluice.port):
                with Client(port) as c, Client(port) as admin:
                    self.assertEqual(c.call("FLUSHALL"), "OK")
                    before = counters(admin)
                    for cmd in seq:
                        c.call(*cmd)
                    after = counters(admin)
                    deltas.append((after[0] - before[0], after[1] - before[1]))
            self.assertEqual(deltas[1], deltas[0], "sluice vs redis after %s" % (seq,))

    def test_pipelined_transactions(self):
        """A whole transaction in one write, twice, with an error queued in the second."""
        cmds = [("MULTI",), ("SET", "p", "1"), ("INCR", "p"), ("EXEC",),
                ("MULTI",), ("INCR", "p"), ("NOSUCH",), ("EXEC",), ("GET", "p")]
        replies = {}
        for name, port in (("redis", self.redis.port), ("sluice", self.sluice.port)):
            with Client(port) as c:
                c.call("FLUSHALL")
                c.send(b"".join(encode_command(*a) for a in cmds))
                replies[name] = [read_raw_reply(c) for _ in cmds]
        self.assertEqual(replies["sluice"], replies["redis"])
        self.assertEqual(replies["sluice"][3], b"*2\r\n+OK\r\n:2\r\n")


# ---------------------------------------------------------------------------------------------
# Concurrency
# ---------------------------------------------------------------------------------------------

WRITERS = 4
TXNS_PER_WRITER = 300
READERS = 2
OPTIMISTS = 4
SUCCESSES_PER_OPTIMIST = 100


def incr_both_worker(port):
    """TXNS_PER_WRITER `MULTI INCR a INCR b EXEC`, each sent in one write. Returns the EXEC
    replies where a != b (none expected) and the number of EXECs."""
    bad = []
    with Client(port) as c:
        for _ in range(TXNS_PER_WRITER):
            r = c.pipeline([("MULTI",), ("INCR", "a"), ("INCR", "b"), ("EXEC",)])
            if r[:3] != ["OK", "QUEUED", "QUEUED"] or not isinstance(r[3], list) \
                    or len(r[3]) != 2 or r[3][0] != r[3][1]:
                bad.append(r)
    return bad


def read_both_worker(args):
    """`MULTI GET a GET b EXEC` until `done` is set (and at least 50 times). Returns the
    replies where a != b and the number of reads."""
    port, done = args
    bad, reads = [], 0
    with Client(port) as c:
        while not done.is_set() or reads < 50:
            r = c.pipeline([("MULTI",), ("GET", "a"), ("GET", "b"), ("EXEC",)])
            reads += 1
            if r[:3] != ["OK", "QUEUED", "QUEUED"] or not isinstance(r[3], list) \
                    or len(r[3]) != 2 or r[3][0] != r[3][1]:
                bad.append(r)
    return bad, reads


def optimistic_worker(port):
    """WATCH c; GET c; MULTI; SET c v+1; EXEC until SUCCESSES_PER_OPTIMIST EXECs succeeded.
    Returns (successes, aborted EXECs, unexpected replies)."""
    ok = aborted = 0
    odd = []
    with Client(port) as c:
        while ok < SUCCESSES_PER_OPTIMIST:
            if c.call("WATCH", "c") != "OK":
                odd.append("WATCH")
            v = c.call("GET", "c")
            n = int(v) if v is not None else 0
            r = c.pipeline([("MULTI",), ("SET", "c", n + 1), ("EXEC",)])
            if r[2] is None:
                aborted += 1
            elif r == ["OK", "QUEUED", ["OK"]]:
                ok += 1
            else:
                odd.append(r)
                break
    return ok, aborted, odd


# Transfers between BANK_KEYS accounts keep their sum at BANK_TOTAL; readers check it.
BANK_KEYS = ["acct:%d" % i for i in range(10)]
BANK_START = 100
BANK_TOTAL = BANK_START * len(BANK_KEYS)
BANK_WRITERS = 3
BANK_TXNS = 500
BANK_READERS = 2


def bank_writer(args):
    """BANK_TXNS transactions over random overlapping accounts, in random key orders: transfers
    (DECRBY/INCRBY), swaps (three RENAMEs through a private key) and WATCH-checked MSETs.
    Returns unexpected replies (none expected)."""
    port, seed = args
    rng = random.Random(seed)
    odd = []
    tmp = "tmp:%d" % seed
    with Client(port) as c:
        for _ in range(BANK_TXNS):
            i, j = rng.sample(BANK_KEYS, 2)
            kind = rng.randrange(3)
            if kind == 0:
                d = rng.randrange(1, 20)
                r = c.pipeline([("MULTI",), ("DECRBY", i, d), ("INCRBY", j, d), ("EXEC",)])
                ok = isinstance(r[3], list) and len(r[3]) == 2 and \
                    all(isinstance(v, int) for v in r[3])
            elif kind == 1:
                r = c.pipeline([("MULTI",), ("RENAME", i, tmp), ("RENAME", j, i),
                                ("RENAME", tmp, j), ("EXEC",)])
                ok = r[4] == ["OK", "OK", "OK"]
            else:
                if c.call("WATCH", i, j) != "OK":
                    odd.append("WATCH")
                vi, vj = c.call("MGET", i, j)
                r = c.pipeline([("MULTI",), ("MSET", i, int(vi) - 1, j, int(vj) + 1), ("EXEC",)])
                ok = r[2] is None or r[2] == ["OK"]
            if not ok:
                odd.append(r)
    return odd


def bank_reader(args):
    """Until `done`: plain MGET, MULTI/MGET/EXEC and MULTI/GET.../EXEC of every account, and
    DBSIZE/KEYS/EXISTS; returns the reads that saw a state between two commands of an EXEC."""
    port, done = args
    bad, reads = [], 0
    with Client(port) as c:
        while not done.is_set() or reads < 30:
            reads += 1
            mode = reads % 4
            if mode == 3:
                # Key-less reads: a swap's private key is never visible, nor a missing account.
                r = c.pipeline([("DBSIZE",), ("KEYS", "tmp:*"), ("EXISTS",) + tuple(BANK_KEYS)])
                if r != [len(BANK_KEYS), [], len(BANK_KEYS)]:
                    bad.append(r)
                continue
            if mode == 0:
                values = c.call("MGET", *BANK_KEYS)
            elif mode == 1:
                values = c.pipeline([("MULTI",), ("MGET",) + tuple(BANK_KEYS), ("EXEC",)])[2][0]
            else:
                cmds = [("MULTI",)] + [("GET", k) for k in BANK_KEYS] + [("EXEC",)]
                values = c.pipeline(cmds)[-1]
            if None in values or sum(int(v) for v in values) != BANK_TOTAL:
                bad.append(values)
    return bad, reads


class ConcurrencyTest(ServerTestCase):
    def pool(self, n):
        ctx = multiprocessing.get_context("fork")
        pool = ctx.Pool(n)
        self.addCleanup(pool.terminate)
        return ctx, pool

    def test_readers_never_see_half_a_transaction(self):
        ctx, pool = self.pool(WRITERS + READERS)
        manager = ctx.Manager()
        self.addCleanup(manager.shutdown)
        done = manager.Event()
        readers = pool.map_async(read_both_worker, [(self.server.port, done)] * READERS)
        writers = pool.map_async(incr_both_worker, [self.server.port] * WRITERS)
        writer_bad = writers.get(timeout=120)
        done.set()
        reader_results = readers.get(timeout=120)
        self.assertEqual(writer_bad, [[]] * WRITERS)
        self.assertEqual([bad for bad, _ in reader_results], [[]] * READERS)
        self.assertTrue(all(reads > 0 for _, reads in reader_results))
        total = WRITERS * TXNS_PER_WRITER
        self.assertEqual(self.c.call("MGET", "a", "b"), [b"%d" % total, b"%d" % total])

    def test_watch_optimistic_increments(self):
        _, pool = self.pool(OPTIMISTS)
        results = pool.map(optimistic_worker, [self.server.port] * OPTIMISTS)
        self.assertEqual([odd for _, _, odd in results], [[]] * OPTIMISTS)
        successes = sum(ok for ok, _, _ in results)
        aborted = sum(a for _, a, _ in results)
        self.assertEqual(successes, OPTIMISTS * SUCCESSES_PER_OPTIMIST)
        self.assertEqual(self.c.call("GET", "c"), b"%d" % successes)
        sys.stderr.write("\n[optimistic increments: %d successful EXECs, %d aborted (retried)] "
                         % (successes, aborted))

    def test_multi_key_transactions_are_isolated_and_do_not_deadlock(self):
        self.assertEqual(self.c.call("MSET", *[x for k in BANK_KEYS for x in (k, BANK_START)]), "OK")
        ctx, pool = self.pool(BANK_WRITERS + BANK_READERS)
        manager = ctx.Manager()
        self.addCleanup(manager.shutdown)
        done = manager.Event()
        readers = pool.map_async(bank_reader, [(self.server.port, done)] * BANK_READERS)
        writers = pool.map_async(bank_writer, [(self.server.port, s) for s in range(BANK_WRITERS)])
        self.assertEqual(writers.get(timeout=120), [[]] * BANK_WRITERS)
        done.set()
        self.assertEqual([bad for bad, _ in readers.get(timeout=120)], [[]] * BANK_READERS)
        values = self.c.call("MGET", *BANK_KEYS)
        self.assertEqual(sum(int(v) for v in values), BANK_TOTAL)
        self.assertEqual(self.c.call("DBSIZE"), len(BANK_KEYS))


class QueuedArgumentsTest(ServerTestCase):
    """Queued commands keep their own copies of their arguments: the read buffer they arrived
    in is reused and moved while more of the transaction arrives."""

    def check(self, chunk_sizes):
        rng = random.Random(7)
        values = [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 6000)))
                  for _ in range(150)]
        cmds = [("MULTI",)] + [("SET", "q:%d" % i, v) for i, v in enumerate(values)] + \
            [("APPEND", "q:0", values[1]), ("EXEC",)]
        data = b"".join(encode_command(*a) for a in cmds)
        pos = 0
        while pos < len(data):  # writes cut anywhere, in arguments too
            n = rng.choice(chunk_sizes)
            self.c.send(data[pos:pos + n])
            pos += n
        replies = [self.c.read() for _ in cmds]
        self.assertEqual(replies[:-1], ["OK"] + ["QUEUED"] * (len(values) + 1))
        self.assertEqual(replies[-1], ["OK"] * len(values) + [len(values[0]) + len(values[1])])
        got = self.c.call("MGET", *["q:%d" % i for i in range(len(values))])
        self.assertEqual(got, [values[0] + values[1]] + values[1:])

    def test_one_write(self):
        self.check([1 << 30])

    def test_cut_writes(self):
        self.check([1, 7, 100, 1500, 9000, 70000])


class WatchLifecycleTest(ServerTestCase):
    """Watching clients that go away (close, QUIT, CLIENT KILL) leave nothing behind that a
    later write of their keys could touch."""

    def connected_clients(self):
        info = self.c.call("INFO", "clients").decode()
        return int(info.split("connected_clients:")[1].split("\r\n")[0])

    def wait_clients(self, n):
        end = time.monotonic() + 30
        while self.connected_clients() != n:
            self.assertLess(time.monotonic(), end, "clients did not go away")
            time.sleep(0.01)

    def test_watchers_that_disconnect(self):
        for _ in range(3):
            clients = [self.server.client() for _ in range(40)]
            for i, c in enumerate(clients):
                self.assertEqual(c.call("WATCH", "k", "k%d" % i), "OK")
                if i % 2:
                    self.assertEqual(c.pipeline([("MULTI",), ("SET", "k", "x")]), ["OK", "QUEUED"])
            for c in clients:
                c.close()
            # Writes racing with the disconnects, then after them.
            for i in range(40):
                self.assertEqual(self.c.call("SET", "k%d" % i, i), "OK")
            self.wait_clients(1)
            self.assertEqual(self.c.call("SET", "k", "y"), "OK")
            self.assertEqual(self.c.call("FLUSHALL"), "OK")
        self.assertEqual(self.c.call("EXISTS", "k"), 0)
        self.assertEqual(self.c.call("PING"), "PONG")

    def test_killed_and_quitting_watchers(self):
        a = self.server.client()
        self.addCleanup(a.close)
        a_id = a.call("CLIENT", "ID")
        self.assertEqual(a.pipeline([("WATCH", "k"), ("MULTI",), ("SET", "k", "a")]),
                         ["OK", "OK", "QUEUED"])
        self.assertEqual(self.c.call("CLIENT", "KILL", "ID", a_id), 1)
        self.assertEqual(a.read_until_closed(), b"")
        b = self.server.client()
        self.addCleanup(b.close)
        self.assertEqual(b.call("WATCH", "k"), "OK")
        b.send(encode_command("QUIT"))
        self.assertEqual(b.read_until_closed(), b"+OK\r\n")
        self.wait_clients(1)
        self.assertEqual(self.c.call("SET", "k", "c"), "OK")
        self.assertEqual(self.c.call("GET", "k"), b"c")


# ---------------------------------------------------------------------------------------------
# Limiters inside MULTI (Sluice only), on the test clock
# ---------------------------------------------------------------------------------------------

def ns(ms_from_t0):
    return (T0_MS + ms_from_t0) * 1_000_000


class LimitersInMultiTest(ServerTestCase):
    need_sluice = True
    test_clock = True
    maxDiff = None

    def gcra_stats(self):
        with self.server.client() as admin:  # self.c may be inside MULTI
            info = admin.call("INFO", "limiters").decode()
        fields = dict(line.split(":", 1) for line in info.split("\r\n") if ":" in line)
        return [int(fields["gcra_take_" + f]) for f in ("calls", "allowed", "denied")]

    def test_gcra_takes_in_one_exec(self):
        c = self.c
        before = self.gcra_stats()
        self.assertEqual(c.call("MULTI"), "OK")
        for _ in range(3):
            self.assertEqual(c.call("GCRA.TAKE", "k", "2", "1s"), "QUEUED")
        self.assertEqual(self.gcra_stats(), before)  # queued, not run
        self.assertEqual(c.call("EXEC"), [[1, 1, 0, 500, 2], [1, 0, 0, 1000, 2],
                                          [0, 0, 500, 1000, 2]])
        # INFO limiters counts each queued take once, when EXEC runs it.
        self.assertEqual([a - b for a, b in zip(self.gcra_stats(), before)], [3, 2, 1])
        # The state after EXEC is the state after two allowed takes at T0.
        self.assertEqual(c.call("GET", "k"), str(ns(1000)).encode())
        self.assertEqual(c.call("PTTL", "k"), 1000)
        self.assertEqual(c.call("GCRA.TAKE", "k", "2", "1s"), [0, 0, 500, 1000, 2])
        self.assertEqual(c.call("DEBUG", "CLOCK", "ADVANCE", "500"), "OK")
        self.assertEqual(c.call("GCRA.TAKE", "k", "2", "1s"), [1, 0, 0, 1000, 2])

    def test_limiters_mixed_with_plain_commands(self):
        c = self.c
        replies = c.pipeline([("MULTI",), ("SET", "plain", "1"), ("LEAKY.TAKE", "l", "1", "1s"),
                              ("LEAKY.TAKE", "l", "1", "1s"), ("INCR", "plain"),
                              ("WINDOW.TAKE", "w", "1", "10s"), ("WINDOW.TAKE", "w", "1", "10s"),
                              ("CONC.ACQUIRE", "cc", "1", "10s", "ID", "me"),
                              ("CONC.RELEASE", "cc", "me"), ("TYPE", "l"), ("EXEC",)])
        self.assertEqual(replies[:10], ["OK"] + ["QUEUED"] * 9)
        self.assertEqual(replies[10], [
            "OK", [1, 0, 0, 1000, 1, 0], [0, 0, 1000, 1000, 1, 0], 2,
            [1, 0, 0, 10000, 1], [0, 0, 10000, 10000, 1], [1, 0, 0, 10000, 1, b"me"], 1, "leaky"])

    def test_wrongtype_inside_exec_does_not_roll_back(self):
        c = self.c
        self.assertEqual(c.call("LEAKY.TAKE", "lk", "1", "1s"), [1, 0, 0, 1000, 1, 0])
        self.assertEqual(c.call("SET", "s", "x"), "OK")
        replies = c.pipeline([("MULTI",), ("SET", "a", "1"), ("GET", "lk"), ("APPEND", "lk", "x"),
                              ("GCRA.TAKE", "lk", "1", "1s"), ("LEAKY.TAKE", "s", "1", "1s"),
                              ("INCR", "a"), ("EXEC",)])
        self.assertEqual(replies[7], ["OK", WRONGTYPE, WRONGTYPE, WRONGTYPE, WRONGTYPE, 2])
        self.assertEqual(c.call("MGET", "a", "s"), [b"2", b"x"])
        self.assertEqual(c.call("TYPE", "lk"), "leaky")

    def test_limiter_argument_error_while_queuing_is_a_runtime_error(self):
        # Arity is checked while queuing (EXECABORT); argument values only when EXEC runs it.
        c = self.c
        self.assertEqual(c.pipeline([("MULTI",), ("GCRA.TAKE", "k", "2"), ("SET", "a", "1"),
                                     ("EXEC",)]),
                         ["OK", RespError("ERR wrong number of arguments for 'gcra.take' command"),
                          "QUEUED", EXECABORT])
        replies = c.pipeline([("MULTI",), ("GCRA.TAKE", "k", "0", "1s"), ("SET", "a", "1"),
                              ("EXEC",)])
        self.assertEqual(replies[:3], ["OK", "QUEUED", "QUEUED"])
        self.assertIsInstance(replies[3][0], RespError)
        self.assertTrue(replies[3][0].startswith("ERR "), replies[3][0])
        self.assertEqual(replies[3][1], "OK")
        self.assertEqual(c.call("EXISTS", "k"), 0)

    def test_watch_and_limiters(self):
        c = self.c
        with self.server.client() as other:
            # An allowed take writes the key: a modification.
            self.assertEqual(c.call("WATCH", "k"), "OK")
            self.assertEqual(other.call("GCRA.TAKE", "k", "1", "1s"), [1, 0, 0, 1000, 1])
            self.assertEqual(c.pipeline([("MULTI",), ("GCRA.TAKE", "k", "1", "1s"), ("EXEC",)]),
                             ["OK", "QUEUED", None])
            # A denied take writes nothing: not a modification.
            self.assertEqual(c.call("WATCH", "k"), "OK")
            self.assertEqual(other.call("GCRA.TAKE", "k", "1", "1s"), [0, 0, 1000, 1000, 1])
            self.assertEqual(c.pipeline([("MULTI",), ("SET", "z", "1"), ("EXEC",)]),
                             ["OK", "QUEUED", ["OK"]])
            # A limiter key that expires on the test clock between WATCH and EXEC.
            self.assertEqual(c.call("WATCH", "k"), "OK")
            self.assertEqual(c.call("DEBUG", "CLOCK", "ADVANCE", "1001"), "OK")
            self.assertEqual(c.pipeline([("MULTI",), ("GCRA.TAKE", "k", "1", "1s"), ("EXEC",)]),
                             ["OK", "QUEUED", None])
            self.assertEqual(c.call("EXISTS", "k"), 0)

    def test_resp3_exec_of_limiters(self):
        # Each EXEC element is the command's own RESP3 reply (a map), as outside MULTI.
        c = self.c
        self.assertEqual(c.call("HELLO", "3")[b"proto"], 3)
        c.send(encode_command("GCRA.TAKE", "solo", "10", "1s"))
        solo = read_raw_reply(c)
        c.send(b"".join(encode_command(*a) for a in
                        [("MULTI",), ("GCRA.TAKE", "k", "10", "1s"), ("GET", "nothing"),
                         ("EXEC",)]))
        self.assertEqual([read_raw_reply(c) for _ in range(4)],
                         [b"+OK\r\n", b"+QUEUED\r\n", b"+QUEUED\r\n",
                          b"*2\r\n" + solo + b"_\r\n"])
        self.assertTrue(solo.startswith(b"%5\r\n"), solo)


# ---------------------------------------------------------------------------------------------
# Crash: SIGKILL during a stream of transactions
# ---------------------------------------------------------------------------------------------

# The whole reply to one `MULTI; SET; SET; INCR total; EXEC` of the crash test.
TXN_REPLY = re.compile(rb"\+OK\r\n\+QUEUED\r\n\+QUEUED\r\n\+QUEUED\r\n\*3\r\n\+OK\r\n\+OK\r\n:\d+\r\n")


class CrashTest(BlackboxTestCase):
    """Two writers stream `MULTI; SET x:w:i i; SET y:w:i i; INCR total; EXEC` (a sender thread
    pipelines batches, a receiver thread counts the replies); the server is SIGKILLed while
    they run. After the restart each transaction is all or nothing, total counts the
    transactions present, and every acknowledged EXEC is present."""

    WRITERS = 2
    BATCH = 100  # transactions per write
    TXNS = 100_000  # per writer: more than can run before the kill
    KILL_AFTER = 3000  # acknowledged transactions (all writers) before the kill

    def check_mode(self, mode):
        server = Server(options={"appendfsync": mode})
        self.addCleanup(server.stop)
        server.start()
        acked = [0] * self.WRITERS  # per writer: transactions 0..acked-1 acknowledged
        sent = [0] * self.WRITERS  # per writer: transactions 0..sent-1 written to the socket
        errors = []

        def sender(w, sock):
            try:
                for i in range(0, self.TXNS, self.BATCH):
                    cmds = []
                    for j in range(i, i + self.BATCH):
                        cmds += [encode_command("MULTI"), encode_command("SET", "x:%d:%d" % (w, j), j),
                                 encode_command("SET", "y:%d:%d" % (w, j), j),
                                 encode_command("INCR", "total"), encode_command("EXEC")]
                    sock.sendall(b"".join(cmds))
                    sent[w] = i + self.BATCH
            except OSError:
                return

        def receiver(w, sock):
            buf = b""
            try:
                while True:
                    chunk = sock.recv(1 << 16)
                    if not chunk:
                        return
                    buf += chunk
                    pos = 0
                    while True:
                        m = TXN_REPLY.match(buf, pos)
                        if m is None:
                            break
                        pos = m.end()
                        acked[w] += 1
                    buf = buf[pos:]
                    if b"-" in buf or len(buf) > 256:  # an error, or not a transaction's reply
                        errors.append(buf[:256])
                        return
            except OSError:
                return

        clients = [Client(server.port) for _ in range(self.WRITERS)]
        threads = []
        for w, c in enumerate(clients):
            self.addCleanup(c.close)
            threads += [threading.Thread(target=sender, args=(w, c.sock)),
                        threading.Thread(target=receiver, args=(w, c.sock))]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 60
        while sum(acked) < self.KILL_AFTER and time.monotonic() < deadline and not errors:
            time.sleep(0.002)
        time.sleep(random.uniform(0, 0.005))  # anywhere in a batch
        server.kill9()
        for t in threads:
            t.join(timeout=60)
        self.assertEqual(errors, [])
        self.assertGreater(sum(acked), 0)
        server.start()
        with server.client() as c:
            present_total = 0
            for w in range(self.WRITERS):
                n = sent[w]
                xs, ys = [], []
                for lo in range(0, n, 1000):
                    keys = range(lo, min(n, lo + 1000))
                    xs += c.call("MGET", *["x:%d:%d" % (w, j) for j in keys])
                    ys += c.call("MGET", *["y:%d:%d" % (w, j) for j in keys])
                present = [j for j in range(n) if xs[j] is not None]
                for j in range(n):
                    want = b"%d" % j if xs[j] is not None else None
                    self.assertEqual((xs[j], ys[j]), (want, want),
                                     "%s: half a transaction for writer %d, i=%d" % (mode, w, j))
                # One connection's transactions commit in order: what is there is a prefix.
                self.assertEqual(present, list(range(len(present))), "%s: writer %d" % (mode, w))
                self.assertGreaterEqual(len(present), acked[w],
                                        "%s: writer %d lost acknowledged EXECs" % (mode, w))
                self.assertLess(len(present), self.TXNS, "the kill came after the stream ended")
                present_total += len(present)
                sys.stderr.write("[%s, writer %d: %d sent, %d acknowledged, %d present] "
                                 % (mode, w, sent[w], acked[w], len(present)))
            total = c.call("GET", "total")
            self.assertEqual(int(total or 0), present_total, mode)
            self.assertEqual(c.call("DBSIZE"), 2 * present_total + (1 if present_total else 0))

    def test_kill9_during_big_transactions(self):
        """EXECs of BIG SETs each (one large write batch), sent back to back by a sender thread;
        the kill comes while the server runs one: every transaction is wholly there or absent."""
        big, txns = 5000, 200
        server = Server(options={"appendfsync": "everysec"})
        self.addCleanup(server.stop)
        server.start()
        c = Client(server.port)
        self.addCleanup(c.close)
        acked = [0]

        def sender():
            try:
                for t in range(txns):
                    c.sock.sendall(b"".join(
                        [encode_command("MULTI")] +
                        [encode_command("SET", "big:%d:%d" % (t, i), t) for i in range(big)] +
                        [encode_command("EXEC")]))
            except OSError:
                return

        def receiver():
            try:
                while True:
                    for _ in range(big + 1):
                        c.read()  # +OK, +QUEUED...
                    r = c.read()
                    if not isinstance(r, list) or len(r) != big:
                        return
                    acked[0] += 1
            except (ConnectionClosed, OSError):
                return

        threads = [threading.Thread(target=sender), threading.Thread(target=receiver)]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 60
        while acked[0] < 3 and time.monotonic() < deadline:
            time.sleep(0.002)
        time.sleep(random.uniform(0, 0.02))
        server.kill9()
        for t in threads:
            t.join(timeout=60)
        self.assertGreaterEqual(acked[0], 3)
        server.start()
        with server.client() as c2:
            counts = {}
            for key in c2.call("KEYS", "big:*"):
                t = int(key.split(b":")[1])
                counts[t] = counts.get(t, 0) + 1
            present = sorted(counts)
            self.assertEqual(present, list(range(len(present))))
            self.assertEqual({t: n for t, n in counts.items() if n != big}, {},
                             "transactions partly on disk")
            self.assertGreaterEqual(len(present), acked[0])
            self.assertLess(len(present), txns)
            sys.stderr.write("[big transactions: %d acknowledged, %d present] "
                             % (acked[0], len(present)))

    def test_kill9_always(self):
        self.check_mode("always")

    def test_kill9_everysec(self):
        self.check_mode("everysec")

    def test_kill9_no(self):
        self.check_mode("no")


# ---------------------------------------------------------------------------------------------
# redis-py
# ---------------------------------------------------------------------------------------------

def import_redis_py():
    """redis-py, from this Python or else from Debian's python3-redis (dist-packages of
    /usr/bin/python3, which is not the Python on PATH here); None when neither has it."""
    try:
        import redis  # noqa: F401
        return redis
    except ImportError:
        pass
    debian = "/usr/lib/python3/dist-packages"
    if os.path.isdir(os.path.join(debian, "redis")):
        if debian not in sys.path:
            sys.path.append(debian)  # last: never shadow this Python's own modules
        try:
            import redis  # noqa: F811
            return redis
        except ImportError:
            return None
    return None


class RedisPyTest(ServerTestCase):
    @classmethod
    def setUpClass(cls):
        cls.redis = import_redis_py()
        if cls.redis is None:
            raise unittest.SkipTest("redis-py is not installed (Debian package python3-redis, "
                                    "installed by tools/setup.sh)")
        super().setUpClass()

    def client(self):
        r = self.redis.Redis(host="127.0.0.1", port=self.server.port, socket_timeout=30)
        self.addCleanup(r.close)
        return r

    def test_pipeline_transaction_with_an_error_in_the_middle(self):
        r = self.client()
        self.assertTrue(r.set("s", "abc"))
        p = r.pipeline(transaction=True)
        p.set("a", 1).incr("s").set("b", 2).get("a")
        with self.assertRaises(self.redis.exceptions.ResponseError) as cm:
            p.execute()
        self.assertEqual(str(cm.exception), "Command # 2 (INCRBY s 1) of pipeline caused error: "
                                            "value is not an integer or out of range")
        self.assertEqual(r.mget("a", "b", "s"), [b"1", b"2", b"abc"])
        # raise_on_error=False: the error in its place, the others applied.
        p = r.pipeline(transaction=True)
        p.incr("a").incr("s").get("a")
        res = p.execute(raise_on_error=False)
        self.assertEqual(res[0], 2)
        self.assertIsInstance(res[1], self.redis.exceptions.ResponseError)
        self.assertEqual(res[2], b"2")

    def test_pipeline_transaction_results(self):
        r = self.client()
        with r.pipeline(transaction=True) as p:
            p.set("k", "v").get("k").incr("n").incrby("n", 10).exists("k", "n", "none").delete("k")
            self.assertEqual(p.execute(), [True, b"v", 1, 11, 2, 1])
        self.assertEqual(r.mget("k", "n"), [None, b"11"])

    def test_pipeline_transaction_execabort(self):
        r = self.client()
        p = r.pipeline(transaction=True)
        p.set("a", 1).execute_command("NOSUCHCOMMAND", "x").set("b", 2)
        with self.assertRaises(self.redis.exceptions.ResponseError) as cm:
            p.execute()
        self.assertIn("unknown command", str(cm.exception))
        self.assertEqual(r.exists("a", "b"), 0)

    def test_transaction_helper_retries_on_watch_error(self):
        r = self.client()
        other = self.client()
        r.set("c", 10)
        calls = []

        def incr(pipe):
            v = int(pipe.get("c"))
            calls.append(v)
            if len(calls) == 1:
                other.set("c", 100)  # another client writes: this EXEC must fail
            pipe.multi()
            pipe.set("c", v + 1)

        self.assertEqual(r.transaction(incr, "c"), [True])
        self.assertEqual(calls, [10, 100])
        self.assertEqual(r.get("c"), b"101")

    def test_watch_error_raised_by_execute(self):
        r = self.client()
        other = self.client()
        with r.pipeline() as p:
            p.watch("w")
            self.assertIsNone(p.get("w"))
            other.set("w", "x")
            p.multi()
            p.set("w", "mine")
            with self.assertRaises(self.redis.exceptions.WatchError):
                p.execute()
        self.assertEqual(r.get("w"), b"x")
        with r.pipeline() as p:  # untouched: runs
            p.watch("w")
            p.multi()
            p.set("w", "mine")
            self.assertEqual(p.execute(), [True])
        self.assertEqual(r.get("w"), b"mine")


if __name__ == "__main__":
    unittest.main()
