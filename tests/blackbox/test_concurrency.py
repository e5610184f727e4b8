"""Exactness under concurrency: 4 processes x 2 connections each pipeline the same limiter
command at one key (2000 calls in all, pipelines of 100, long period, frozen test clock).
The number allowed must equal the limit exactly, for every limiter command. The same load on
INCR and SET NX, and a multi-key stress (RENAME/COPY/MSET/DEL both ways, mixed with limiter
calls) that must not deadlock."""

import multiprocessing
import unittest

from harness import T0_MS, Client, RespError, ServerTestCase, encode_command

PROCESSES = 4
CONNECTIONS = 2
CALLS_PER_CONNECTION = 250
PIPELINE = 100
LIMIT = 500


def worker(job):
    """Runs in a child process: CONNECTIONS connections, each pipelining CALLS_PER_CONNECTION
    commands in batches of PIPELINE, interleaved. Returns every reply, in order, per connection."""
    port, template, worker_id = job
    conns = [Client(port) for _ in range(CONNECTIONS)]
    replies = [[] for _ in conns]
    sent = 0
    while sent < CALLS_PER_CONNECTION:
        n = min(PIPELINE, CALLS_PER_CONNECTION - sent)
        for ci, conn in enumerate(conns):
            batch = []
            for i in range(sent, sent + n):
                batch.append(encode_command(*[a.format(w=worker_id, c=ci, i=i) for a in template]))
            conn.send(b"".join(batch))
        for ci, conn in enumerate(conns):
            replies[ci] += [conn.read() for _ in range(n)]
        sent += n
    for conn in conns:
        conn.close()
    return replies


class HammerMixin:
    def hammer(self, *template):
        """All replies from every process and connection, flattened."""
        jobs = [(self.server.port, template, w) for w in range(PROCESSES)]
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(PROCESSES) as pool:
            results = pool.map(worker, jobs)
        replies = [r for per_worker in results for per_conn in per_worker for r in per_conn]
        self.assertEqual(len(replies), PROCESSES * CONNECTIONS * CALLS_PER_CONNECTION)
        for r in replies:
            self.assertNotIsInstance(r, RespError, r)
        return replies


class ConcurrencyTest(HammerMixin, ServerTestCase):
    need_sluice = True
    test_clock = True
    options = {"threads": "4"}

    def check_exact(self, template, allowed_of):
        replies = self.hammer(*template)
        allowed = sum(1 for r in replies if allowed_of(r))
        self.assertEqual(allowed, LIMIT, "%s: %d allowed" % (template[0], allowed))
        return replies

    def test_gcra_take(self):
        self.check_exact(("GCRA.TAKE", "hot", str(LIMIT), "1h"), lambda r: r[0] == 1)
        tat_ms = T0_MS + LIMIT * 3600 * 1000 // LIMIT
        self.assertEqual(self.c.call("GET", "hot"), str(tat_ms * 1_000_000).encode())

    def test_cl_throttle(self):
        self.check_exact(("CL.THROTTLE", "hot", str(LIMIT - 1), "1", "3600"), lambda r: r[0] == 0)

    def test_leaky_take(self):
        self.check_exact(("LEAKY.TAKE", "hot", "1", "1h", "BURST", str(LIMIT - 1), "NODELAY"),
                         lambda r: r[0] == 1)

    def test_window_take(self):
        self.check_exact(("WINDOW.TAKE", "hot", str(LIMIT), "1h"), lambda r: r[0] == 1)
        self.assertEqual(self.c.call("GET", "hot"), str(LIMIT).encode())

    def test_sliding_take(self):
        self.check_exact(("SLIDING.TAKE", "hot", str(LIMIT), "1h"), lambda r: r[0] == 1)
        self.assertEqual(self.c.call("SLIDING.TAKE", "hot", str(LIMIT), "1h", "COST", "0"),
                         [1, 0, 0, 3600000, LIMIT])

    def test_conc_acquire_with_ids(self):
        replies = self.check_exact(("CONC.ACQUIRE", "hot", str(LIMIT), "1h", "ID", "w{w}-c{c}-{i}"),
                                   lambda r: r[0] == 1)
        tokens = [r[5] for r in replies if r[0] == 1]
        self.assertEqual(len(set(tokens)), LIMIT)

    def test_conc_acquire_generated_tokens_and_release(self):
        replies = self.check_exact(("CONC.ACQUIRE", "hot", str(LIMIT), "1h"), lambda r: r[0] == 1)
        tokens = [r[5] for r in replies if r[0] == 1]
        self.assertEqual(len(set(tokens)), LIMIT, "generated tokens must be distinct")
        self.assertTrue(all(r[5] is None for r in replies if r[0] == 0))
        # Every process releases every token: each lease is released exactly once.
        jobs_replies = self.release_all(tokens)
        self.assertEqual(sum(jobs_replies), LIMIT)
        self.assertEqual(self.c.call("CONC.ACQUIRE", "hot", str(LIMIT), "1h", "ID", "again")[:2],
                         [1, LIMIT - 1])

    def release_all(self, tokens):
        ctx = multiprocessing.get_context("fork")
        jobs = [(self.server.port, tokens) for _ in range(PROCESSES)]
        with ctx.Pool(PROCESSES) as pool:
            results = pool.map(release_worker, jobs)
        return [x for r in results for x in r]


class PlainCommandConcurrencyTest(HammerMixin, ServerTestCase):
    """The same load on plain Redis commands: INCR hands out each number once; SET NX has one
    winner per key."""

    options = {"threads": "4"}

    def test_incr_is_atomic(self):
        replies = self.hammer("INCR", "ctr")
        total = PROCESSES * CONNECTIONS * CALLS_PER_CONNECTION
        self.assertEqual(sorted(replies), list(range(1, total + 1)))
        self.assertEqual(self.c.call("GET", "ctr"), str(total).encode())

    def test_set_nx_has_one_winner(self):
        replies = self.hammer("SET", "lock:{i}", "w{w}c{c}", "NX")
        self.assertEqual(replies.count("OK"), CALLS_PER_CONNECTION)
        self.assertEqual(replies.count(None), len(replies) - CALLS_PER_CONNECTION)
        self.assertEqual(self.c.call("DBSIZE"), CALLS_PER_CONNECTION)


class MultiKeyStressTest(ServerTestCase):
    """Multi-key commands lock several keys (in sorted order, says the design): RENAME, COPY,
    MSET, DEL in both directions, mixed with limiter calls on the same keys from several
    processes, must neither deadlock nor fail with anything but their documented errors."""

    need_sluice = True
    options = {"threads": "4"}

    def test_no_deadlock(self):
        ctx = multiprocessing.get_context("fork")
        jobs = [(self.server.port, w) for w in range(PROCESSES)]
        with ctx.Pool(PROCESSES) as pool:
            result = pool.map_async(stress_worker, jobs)
            errors = result.get(timeout=120)  # a deadlock shows up as a timeout here
        allowed = {"ERR no such key",
                   "WRONGTYPE Operation against a key holding the wrong kind of value"}
        unexpected = [e for per_worker in errors for e in per_worker if e not in allowed]
        self.assertEqual(unexpected, [])
        self.assertEqual(self.c.call("PING"), "PONG")


def stress_worker(job):
    port, w = job
    commands = [
        ("RENAME", "a", "b"), ("RENAME", "b", "a"), ("RENAMENX", "a", "c"),
        ("COPY", "a", "b", "REPLACE"), ("COPY", "b", "a", "REPLACE"), ("MSET", "a", "1", "b", "2"),
        ("MSET", "b", "3", "a", "4"), ("DEL", "a", "b", "c"), ("MGET", "c", "b", "a"),
        ("GCRA.TAKE", "a", "1000", "1h"), ("GCRA.TAKE", "b", "1000", "1h"),
        ("LEAKY.TAKE", "c", "1000", "1h", "BURST", "100"), ("CONC.ACQUIRE", "b", "10", "1h"),
        ("INCR", "a"), ("EXISTS", "a", "b", "c"), ("UNLINK", "c", "a"),
    ]
    errors = []
    with Client(port) as c:
        for i in range(300):
            batch = [commands[(i * 7 + j * 3 + w) % len(commands)] for j in range(8)]
            for reply in c.pipeline(batch):
                if isinstance(reply, RespError):
                    errors.append(str(reply))
    return errors


def release_worker(job):
    port, tokens = job
    with Client(port) as c:
        return c.pipeline([("CONC.RELEASE", "hot", t) for t in tokens])


if __name__ == "__main__":
    unittest.main()
