"""Real Python client libraries, unchanged, against the real sluice-server.

- redis-py 4.3 (Debian python3-redis): pipeline(transaction=True) as a fixed-window limiter,
  register_script (EVALSHA, and its NOSCRIPT fallback to SCRIPT LOAD), scripts in pipelines,
  script errors, a stream consumer group (xadd, xreadgroup, xack, xpending, xclaim,
  xinfo_groups, xtrim), and Lock (SET NX PX to acquire; Lua to release, extend and reacquire).
- limits 2.8 (Debian python3-limits) with its redis storage: fixed window (a Lua INCRBY +
  EXPIRE script), elastic expiry, and moving window (Lua over LPUSH/LTRIM/LINDEX/LRANGE).

Every scenario runs on sluice-server and, side by side, on a reference redis-server 7.0.x
started beside it, and each result must equal the value written here (so both being wrong the
same way still fails). With SLUICE_TARGET=redis only the reference runs (proving the values are
Redis's). Limits use the servers' real clocks with windows of a minute or more: nothing waits.
Concurrency: a Lock shared by 4 threads and a fixed window shared by 6 (each result exact).
Restarts (SIGTERM, kill -9) run on a server of their own: the server under test only, as the
reference keeps no data. The moving window needs the list commands (issue 8); only it is
skipped, with the reason printed, while Sluice answers `COMMAND INFO lpush` with nothing.
"""

import hashlib
import os
import sys
import threading
import time
import unittest

from harness import IS_REDIS, Client, Server
from test_transactions import (RedisReference, import_redis_py, redis_server_binary,
                               redis_server_version)

redis = import_redis_py()


def import_limits():
    """limits from this Python or Debian's python3-limits (import_redis_py has put Debian's
    dist-packages on sys.path when this Python lacks redis-py); None when neither has it."""
    debian = "/usr/lib/python3/dist-packages"
    if os.path.isdir(os.path.join(debian, "limits")) and debian not in sys.path:
        sys.path.append(debian)  # last: never shadow this Python's own modules
    try:
        import limits  # noqa: F401
        import limits.storage  # noqa: F401
        import limits.strategies  # noqa: F401
        return limits
    except ImportError:
        return None


limits = import_limits()

# Name -> server (.port, .stop()), started once for the module: the server under test and, unless
# SLUICE_TARGET=redis or no 7.0.x is installed (said on stderr), the reference.
TARGETS = {}


def setUpModule():
    if redis is None:
        raise unittest.SkipTest("redis-py is not installed (Debian package python3-redis, "
                                "installed by tools/setup.sh)")
    server = Server(debug=False)
    TARGETS["redis" if IS_REDIS else "sluice"] = server
    try:
        server.start()
        if not IS_REDIS:
            binary = redis_server_binary()
            version = binary and redis_server_version(binary)
            if binary is None or not version.startswith("7.0."):
                sys.stderr.write("test_clients: no redis-server 7.0.x reference (%s): Sluice "
                                 "alone, against the expected values\n" % (version or "none"))
            else:
                TARGETS["redis"] = RedisReference(binary)
                TARGETS["redis"].start()
    except BaseException:
        tearDownModule()
        raise


def tearDownModule():
    for t in TARGETS.values():
        t.stop()
    TARGETS.clear()


class ClientsTestCase(unittest.TestCase):
    maxDiff = None

    def client(self, port, **kw):
        r = redis.Redis(host="127.0.0.1", port=port, socket_timeout=30, **kw)
        self.addCleanup(r.close)
        return r

    def on_each_server(self, scenario, expected):
        """Runs scenario(port) on every target after FLUSHALL; its result must be `expected`."""
        for name, server in TARGETS.items():
            with self.subTest(server=name):
                with Client(server.port) as c:
                    self.assertEqual(c.call("FLUSHALL"), "OK")
                self.assertEqual(scenario(server.port), expected, "%s answered this" % name)


# ---------------------------------------------------------------------------------------------
# redis-py
# ---------------------------------------------------------------------------------------------

# The fixed-window limiter scripts applications register: INCRBY, EXPIRE on the first hit.
INCR_EXPIRE = """
local n = redis.call('INCRBY', KEYS[1], ARGV[2])
if n == tonumber(ARGV[2]) then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return {n, redis.call('TTL', KEYS[1])}
"""


class RedisPyTest(ClientsTestCase):
    def test_pipeline_transaction_as_a_fixed_window_limiter(self):
        def scenario(port):
            r = self.client(port)
            got = []
            for _ in range(8):
                with r.pipeline(transaction=True) as p:
                    n, fresh, ttl = p.incr("rp:win").expire("rp:win", 60, nx=True).ttl(
                        "rp:win").execute()
                got.append((n <= 5, n, fresh, 50 < ttl <= 60))
            return got

        self.on_each_server(scenario, [(True, 1, True, True)] + [
            (n <= 5, n, False, True) for n in range(2, 9)])

    def test_register_script_loads_on_noscript_and_limits_5_of_8(self):
        def scenario(port):
            r = self.client(port)
            self.assertTrue(r.script_flush())  # no script cached by an earlier test
            take = r.register_script(INCR_EXPIRE)
            got = [r.script_exists(take.sha)]
            for _ in range(8):
                n, ttl = take(keys=["rp:s"], args=[60, 1])
                got.append((n <= 5, n, 50 < ttl <= 60))
            got.append(r.script_exists(take.sha, "0" * 40))
            # SCRIPT FLUSH: the next call gets NOSCRIPT and loads the script again.
            self.assertTrue(r.script_flush())
            got.append(r.script_exists(take.sha))
            n, _ = take(keys=["rp:s"], args=[60, 1])
            got.append((n, r.script_exists(take.sha)))
            return got

        self.on_each_server(scenario, [[False]] + [(n <= 5, n, True) for n in range(1, 9)] + [
            [True, False], [False], (9, [True])])

    def test_script_sha_is_sha1_of_the_body_and_evalsha_runs_it(self):
        def scenario(port):
            r = self.client(port)
            sha = r.script_load("return {KEYS[1], ARGV[1], 3.9, true, false}")
            return [sha, r.evalsha(sha, 1, "k", "v"),
                    r.eval("return redis.sha1hex('')", 0)]

        # Lua -> RESP2: 3.9 truncates to 3, true is 1, false is a null.
        self.on_each_server(scenario, [
            _sha1("return {KEYS[1], ARGV[1], 3.9, true, false}"),
            [b"k", b"v", 3, 1, None], b"da39a3ee5e6b4b0d3255bfef95601890afd80709"])

    def test_scripts_in_a_pipeline_are_loaded_first(self):
        def scenario(port):
            r = self.client(port)
            take = r.register_script(INCR_EXPIRE)
            with r.pipeline(transaction=True) as p:
                for _ in range(3):
                    take(keys=["rp:p"], args=[60, 2], client=p)
                p.get("rp:p")
                res = p.execute()
            return [[v[0] for v in res[:3]], res[3], r.script_exists(take.sha)]

        self.on_each_server(scenario, [[2, 4, 6], b"6", [True]])

    def test_script_errors_raise_response_error_with_redis_text(self):
        def scenario(port):
            r = self.client(port)
            r.set("rp:str", "abc")
            got = []
            for script, keys in (("return redis.error_reply('my limiter failed')", []),
                                 ("return redis.call('INCR', KEYS[1])", ["rp:str"]),
                                 ("return redis.pcall('INCR', KEYS[1])", ["rp:str"]),
                                 ("return redis.call('NOSUCH')", []),
                                 ("return {err='custom'}", [])):
                try:
                    got.append(("ok", r.eval(script, len(keys), *keys)))
                except redis.exceptions.ResponseError as e:
                    got.append((type(e).__name__, str(e)))
            try:
                r.evalsha("0" * 40, 0)
            except redis.exceptions.NoScriptError as e:
                got.append(("NoScriptError", str(e)))
            return got

        self.on_each_server(scenario, SCRIPT_ERRORS)

    def test_streams_consumer_group_round_trip(self):
        def scenario(port):
            r = self.client(port, decode_responses=True)
            ids = [r.xadd("rp:s", {"job": "j%d" % i}, id="9-%d" % i) for i in range(1, 5)]
            got = {"ids": ids, "len": r.xlen("rp:s"),
                   "range": r.xrange("rp:s", "9-2", "9-3"),
                   "created": r.xgroup_create("rp:s", "g", id="0"),
                   "read": r.xreadgroup("g", "c1", {"rp:s": ">"}, count=3),
                   "ack": r.xack("rp:s", "g", "9-1", "9-2")}
            pending = r.xpending("rp:s", "g")
            got["pending"] = (pending["pending"], pending["min"], pending["max"],
                              pending["consumers"])
            got["claimed"] = r.xclaim("rp:s", "g", "c2", 0, ["9-3"], justid=True)
            got["groups"] = [(g["name"], g["consumers"], g["pending"], g["last-delivered-id"])
                             for g in r.xinfo_groups("rp:s")]
            got["trim"] = r.xtrim("rp:s", maxlen=2, approximate=False)
            got["after"] = [e[0] for e in r.xrange("rp:s")]
            return got

        self.on_each_server(scenario, {
            "ids": ["9-1", "9-2", "9-3", "9-4"], "len": 4,
            "range": [("9-2", {"job": "j2"}), ("9-3", {"job": "j3"})],
            "created": True,
            "read": [["rp:s", [("9-1", {"job": "j1"}), ("9-2", {"job": "j2"}),
                                ("9-3", {"job": "j3"})]]],
            "ack": 2,
            "pending": (1, "9-3", "9-3", [{"name": "c1", "pending": 1}]),
            "claimed": ["9-3"],
            "groups": [("g", 2, 1, "9-3")],
            "trim": 2, "after": ["9-3", "9-4"]})


def _sha1(text):
    return hashlib.sha1(text.encode()).hexdigest()


# Redis 7.0.15's errors (as redis-py gives them) for the scripts of test_script_errors_...
SCRIPT_ERRORS = [
    ("ResponseError", "my limiter failed"),
    ("ResponseError", "value is not an integer or out of range script: %s, on @user_script:1."
     % _sha1("return redis.call('INCR', KEYS[1])")),
    ("ResponseError", "value is not an integer or out of range"),
    ("ResponseError", "Unknown Redis command called from script script: %s, on @user_script:1."
     % _sha1("return redis.call('NOSUCH')")),
    ("ResponseError", "custom"),
    ("NoScriptError", "No matching script. Please use EVAL."),
]


class LockTest(ClientsTestCase):
    def test_lock_acquire_extend_release(self):
        def scenario(port):
            r = self.client(port)
            other = self.client(port)
            a = r.lock("rp:lock", timeout=30)
            b = other.lock("rp:lock", timeout=30)
            got = [a.acquire(blocking=False), b.acquire(blocking=False), a.locked(), a.owned(),
                   b.owned()]
            token = r.get("rp:lock")
            got.append(token == a.local.token)
            got.append(20_000 < r.pttl("rp:lock") <= 30_000)
            got.append(a.extend(30))  # Lua: adds 30 s to the TTL
            got.append(50_000 < r.pttl("rp:lock") <= 60_000)
            got.append(a.reacquire())  # Lua: the TTL back to the lock's timeout
            got.append(20_000 < r.pttl("rp:lock") <= 30_000)
            got.append(a.extend(100, replace_ttl=True))
            got.append(90_000 < r.pttl("rp:lock") <= 100_000)
            for op in (b.release, lambda: b.extend(5), b.reacquire):
                try:
                    op()
                    got.append("no error")
                except redis.exceptions.LockError as e:
                    got.append((type(e).__name__, str(e)))
            a.release()  # Lua: deletes only while the token is ours
            got += [r.exists("rp:lock"), b.acquire(blocking=False)]
            other.set("rp:lock", "someone else")
            try:
                b.release()
            except redis.exceptions.LockNotOwnedError as e:
                got.append(str(e))
            got.append(r.get("rp:lock"))
            return got

        self.on_each_server(scenario, [
            True, False, True, True, False, True, True, True, True, True, True, True, True,
            ("LockError", "Cannot release an unlocked lock"),
            ("LockError", "Cannot extend an unlocked lock"),
            ("LockError", "Cannot reacquire an unlocked lock"),
            0, True, "Cannot release a lock that's no longer owned", b"someone else"])

    def test_lock_blocking_timeout_while_held(self):
        def scenario(port):
            r = self.client(port)
            a = r.lock("rp:lock2", timeout=60)
            b = r.lock("rp:lock2", timeout=60, blocking_timeout=0.2, sleep=0.05)
            return [a.acquire(), b.acquire(), a.release(), b.acquire(), b.owned()]

        self.on_each_server(scenario, [True, False, None, True, True])


def run_threads(n, work):
    """Runs work(i) on n threads at once; returns their results in order (raises the first
    exception a thread raised)."""
    results = [None] * n
    errors = []
    start = threading.Barrier(n)

    def run(i):
        try:
            start.wait()
            results[i] = work(i)
        except BaseException as e:  # noqa: B902 - reported to the test below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    if errors:
        raise errors[0]
    return results


class LockConcurrencyTest(ClientsTestCase):
    def test_lock_excludes_4_threads_doing_read_modify_write(self):
        def scenario(port):
            def work(_):
                r = redis.Redis(host="127.0.0.1", port=port, socket_timeout=30)
                try:
                    for _ in range(15):
                        with r.lock("rp:mutex", timeout=30, sleep=0.002, blocking_timeout=60):
                            v = int(r.get("rp:counter") or 0)
                            r.set("rp:counter", v + 1)  # lost updates unless the lock excludes
                finally:
                    r.close()

            run_threads(4, work)
            r = self.client(port)
            return [r.get("rp:counter"), r.exists("rp:mutex")]

        self.on_each_server(scenario, [b"60", 0])


# ---------------------------------------------------------------------------------------------
# limits
# ---------------------------------------------------------------------------------------------

LIMITS_MISSING = "limits is not installed (Debian package python3-limits, tools/setup.sh)"


class LimitsBase(ClientsTestCase):
    """limits' redis storage on a server, and a limiter run over it."""

    def storage(self, port):
        s = limits.storage.storage_from_string("redis://127.0.0.1:%d" % port)
        self.addCleanup(s.storage.close)
        # Strategies hold their storage by weak reference: the test keeps it alive.
        self.storages = getattr(self, "storages", []) + [s]
        self.assertTrue(s.check())
        return s

    def run_limiter(self, port, strategy, item, n=8):
        """n hits, then test(), the stats (seconds to reset from now, remaining)."""
        limiter = strategy(self.storage(port))
        got = [limiter.hit(item, "api", "user1") for _ in range(n)]
        got.append(limiter.test(item, "api", "user1"))
        reset, remaining = limiter.get_window_stats(item, "api", "user1")
        got.append((50 < reset - time.time() <= 61, remaining))
        return limiter, got


@unittest.skipIf(limits is None, LIMITS_MISSING)
class LimitsTest(LimitsBase):
    def test_fixed_window_5_of_8_per_minute(self):
        def scenario(port):
            item = limits.parse("5/minute")
            limiter, got = self.run_limiter(port, limits.strategies.FixedWindowRateLimiter, item)
            r = self.client(port)
            key = item.key_for("api", "user1")
            got += [r.get(key), 50 < r.ttl(key) <= 60]
            # Another identifier has its own window; cost takes several at once.
            got += [limiter.hit(item, "api", "user2", cost=4),
                    limiter.hit(item, "api", "user2", cost=2),
                    limiter.get_window_stats(item, "api", "user2")[1]]
            limiter.clear(item, "api", "user1")
            got += [r.exists(key), limiter.hit(item, "api", "user1")]
            return got

        self.on_each_server(scenario, [True] * 5 + [False] * 3 + [False, (True, 0)] + [
            b"8", True, True, False, 0, 0, True])

    def test_fixed_window_elastic_expiry(self):
        def scenario(port):
            item = limits.parse("3 per 2 minutes")
            _, got = self.run_limiter(port, limits.strategies.FixedWindowElasticExpiryRateLimiter,
                                      item, n=5)
            r = self.client(port)
            got.append(110 < r.ttl(item.key_for("api", "user1")) <= 120)
            return got

        self.on_each_server(scenario, [True, True, True, False, False, False, (False, 0), True])

    def test_fixed_window_6_threads_share_30_per_minute(self):
        def scenario(port):
            item = limits.parse("30/minute")

            def work(_):
                storage = self.storage(port)  # its own connection pool; kept alive here
                limiter = limits.strategies.FixedWindowRateLimiter(storage)
                return sum(limiter.hit(item, "shared") for _ in range(20))

            allowed = run_threads(6, work)
            return [sum(allowed), self.client(port).get(item.key_for("shared"))]

        self.on_each_server(scenario, [30, b"120"])

    def test_storage_reset_deletes_the_limiter_keys(self):
        def scenario(port):
            s = self.storage(port)
            limiter = limits.strategies.FixedWindowRateLimiter(s)
            for who in ("a", "b", "c"):
                limiter.hit(limits.parse("1/hour"), who)
            r = self.client(port)
            r.set("unrelated", "1")
            return [sorted(r.keys("LIMITER*")), s.reset(), r.keys("*")]

        self.on_each_server(scenario, [
            [b"LIMITER/a/1/1/hour", b"LIMITER/b/1/1/hour", b"LIMITER/c/1/1/hour"], 3,
            [b"unrelated"]])


@unittest.skipIf(limits is None, LIMITS_MISSING)
class LimitsRestartTest(LimitsBase):
    """A server of its own (the server under test; with SLUICE_TARGET=redis a redis-server with
    appendonly), restarted: the limiter state is durable, the script cache is not (as in Redis),
    and the libraries load their scripts again on NOSCRIPT."""

    def check_restart(self, hard):
        server = Server(debug=False)
        self.addCleanup(server.stop)
        server.start()
        item = limits.parse("5/minute")
        limiter = limits.strategies.FixedWindowRateLimiter(self.storage(server.port))
        got = [limiter.hit(item, "u") for _ in range(3)]
        take = self.client(server.port).register_script(INCR_EXPIRE)
        got.append(take(keys=["s"], args=[60, 1])[0])
        server.restart(hard=hard)
        # New connections, as an application gets when it reconnects.
        r = self.client(server.port)
        limiter = limits.strategies.FixedWindowRateLimiter(self.storage(server.port))
        got += [r.script_exists(take.sha), [limiter.hit(item, "u") for _ in range(3)],
                50 < r.ttl(item.key_for("u")) <= 60]
        take = r.register_script(INCR_EXPIRE)
        got += [take(keys=["s"], args=[60, 1])[0], r.script_exists(take.sha)]
        self.assertEqual(got, [True, True, True, 1, [False], [True, True, False], True, 2, [True]])

    def test_sigterm_restart(self):
        self.check_restart(hard=False)

    def test_kill9_restart(self):
        self.check_restart(hard=True)


def lists_missing():
    """Why the moving window cannot run on Sluice yet, or None."""
    server = TARGETS.get("sluice")
    if server is None:
        return None
    with Client(server.port) as c:
        if c.call("COMMAND", "INFO", "lpush") == [None]:
            return ("Sluice has no list commands yet (COMMAND INFO lpush answers nothing; "
                    "issue 8): limits' moving window cannot run")
    return None


@unittest.skipIf(limits is None, LIMITS_MISSING)
class LimitsMovingWindowTest(LimitsBase):
    def setUp(self):
        why = lists_missing()
        if why:
            sys.stderr.write("\nSKIPPED: %s\n" % why)
            self.skipTest(why)

    def test_moving_window_5_of_8_per_minute(self):
        def scenario(port):
            item = limits.parse("5/minute")
            limiter, got = self.run_limiter(port, limits.strategies.MovingWindowRateLimiter, item)
            r = self.client(port)
            key = item.key_for("api", "user1")
            got += [r.type(key), r.llen(key), 50 < r.ttl(key) <= 60]
            got += [limiter.hit(item, "api", "user2", cost=3),
                    limiter.hit(item, "api", "user2", cost=3),
                    limiter.hit(item, "api", "user2", cost=2),
                    limiter.get_window_stats(item, "api", "user2")[1]]
            return got

        self.on_each_server(scenario, [True] * 5 + [False] * 3 + [False, (True, 0)] + [
            b"list", 5, True, True, False, True, 0])


if __name__ == "__main__":
    unittest.main()
