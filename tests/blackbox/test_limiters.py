"""Limiter commands (../shared/spec/LIMITERS.md) on the test clock: every VECTORS.md case, interop
with plain Redis commands, limiter keys as ordinary keys, WRONGTYPE, RESP3 maps, argument
errors and INFO limiters. Every test starts on a flushed server with the clock at T0_MS."""

import unittest

from harness import T0_MS, RespError, ServerTestCase

WRONGTYPE = RespError("WRONGTYPE Operation against a key holding the wrong kind of value")
FIELDS = ["allowed", "remaining", "retry_after_ms", "reset_after_ms", "limit"]


def ns(ms_from_t0):
    """A TAT in ns since the epoch, as GCRA stores it, for T0 + ms."""
    return (T0_MS + ms_from_t0) * 1_000_000


class LimiterTestCase(ServerTestCase):
    need_sluice = True
    test_clock = True
    maxDiff = None

    def at(self, ms):
        """Sets the test clock to T0 + ms."""
        self.assertEqual(self.c.call("DEBUG", "CLOCK", "SET", T0_MS + ms), "OK")

    def call(self, *args):
        return self.c.call(*args)

    def assertArgError(self, reply, *names):
        """An ERR reply that names the offending argument(s) (case-insensitive)."""
        self.assertIsInstance(reply, RespError, reply)
        self.assertTrue(reply.startswith("ERR "), reply)
        for name in names:
            self.assertIn(name.lower(), reply.lower())


class ClThrottleVectorsTest(LimiterTestCase):
    # VECTORS.md scenario A: CL.THROTTLE foo 4 1 1 <q>
    SCENARIO_A = [
        (0, 6, [1, 5, 5, -1, 0]),
        (0, 1, [0, 5, 4, -1, 1]),
        (0, 1, [0, 5, 3, -1, 2]),
        (0, 1, [0, 5, 2, -1, 3]),
        (0, 1, [0, 5, 1, -1, 4]),
        (0, 1, [0, 5, 0, -1, 5]),
        (0, 1, [1, 5, 0, 1, 5]),
        (3000, 1, [0, 5, 2, -1, 3]),
        (3100, 1, [0, 5, 1, -1, 4]),
        (4000, 1, [0, 5, 1, -1, 4]),
        (8000, 1, [0, 5, 4, -1, 1]),
        (9500, 1, [0, 5, 4, -1, 1]),
        (9500, 0, [0, 5, 4, -1, 1]),
        (9500, 2, [0, 5, 2, -1, 3]),
        (9500, 5, [1, 5, 2, 3, 3]),
    ]

    def test_scenario_a(self):
        for i, (t, q, want) in enumerate(self.SCENARIO_A):
            self.at(t)
            self.assertEqual(self.call("CL.THROTTLE", "foo", "4", "1", "1", q), want,
                             "row %d: t=%d q=%d" % (i + 1, t, q))

    def test_scenario_b(self):
        self.assertEqual(self.call("CL.THROTTLE", "user123", "15", "30", "60"), [0, 16, 15, -1, 2])

    def test_scenario_c(self):
        self.assertEqual(self.call("CL.THROTTLE", "user123", "0", "1", "2", "1"), [0, 1, 0, -1, 2])
        self.assertEqual(self.call("CL.THROTTLE", "user123", "0", "1", "2", "1"), [1, 1, 0, 2, 2])
        self.at(2000)
        self.assertEqual(self.call("CL.THROTTLE", "user123", "0", "1", "2", "1"), [0, 1, 0, -1, 2])

    def test_errors(self):
        self.assertEqual(self.call("CL.THROTTLE", "k", "1", "1"),
                         RespError("ERR wrong number of arguments for 'cl.throttle' command"))
        self.assertArgError(self.call("CL.THROTTLE", "k", "x", "1", "1"))
        self.assertArgError(self.call("CL.THROTTLE", "k", "10", "0", "1"))
        self.assertArgError(self.call("CL.THROTTLE", "k", "10", "1", "0"))
        self.assertArgError(self.call("CL.THROTTLE", "k", "-1", "1", "1"))
        self.assertArgError(self.call("CL.THROTTLE", "k", "1", "-1", "1"))
        self.assertArgError(self.call("CL.THROTTLE", "k", "1", "1", "1", "-1"))
        self.assertEqual(self.call("EXISTS", "k"), 0)

    def test_quantity_zero_is_a_peek(self):
        self.assertEqual(self.call("CL.THROTTLE", "peek", "4", "1", "1", "0"), [0, 5, 5, -1, 0])
        self.assertEqual(self.call("EXISTS", "peek"), 0)

    def test_resp3_stays_an_array(self):
        self.assertEqual(self.call("HELLO", "3")[b"proto"], 3)
        self.assertEqual(self.call("CL.THROTTLE", "foo", "4", "1", "1"), [0, 5, 4, -1, 1])


class GcraVectorsTest(LimiterTestCase):
    def test_vector_table(self):
        self.assertEqual(self.call("GCRA.TAKE", "k", "10", "1s"), [1, 9, 0, 100, 10])
        for i in range(2, 11):
            self.assertEqual(self.call("GCRA.TAKE", "k", "10", "1s"), [1, 10 - i, 0, 100 * i, 10])
        self.assertEqual(self.call("GCRA.TAKE", "k", "10", "1s"), [0, 0, 100, 1000, 10])
        self.at(250)
        self.assertEqual(self.call("GCRA.TAKE", "k", "10", "1s"), [1, 1, 0, 850, 10])
        self.assertEqual(self.call("GCRA.TAKE", "k", "10", "1s", "COST", "0"), [1, 1, 0, 850, 10])
        self.assertEqual(self.call("GCRA.TAKE", "k", "10", "1s", "COST", "11"), [0, 1, -1, 850, 10])
        self.assertEqual(self.call("PTTL", "k"), 850)
        self.assertEqual(self.call("GET", "k"), str(ns(1100)).encode())
        self.assertEqual(self.call("TYPE", "k"), "string")

    def test_denied_call_writes_nothing(self):
        for _ in range(10):
            self.call("GCRA.TAKE", "k", "10", "1s")
        before = self.call("GET", "k")
        self.assertEqual(self.call("GCRA.TAKE", "k", "10", "1s", "COST", "3"), [0, 0, 300, 1000, 10])
        self.assertEqual(self.call("GET", "k"), before)
        self.assertEqual(self.call("PTTL", "k"), 1000)

    def test_cost_zero_on_fresh_key_writes_nothing(self):
        self.assertEqual(self.call("GCRA.TAKE", "k", "10", "1s", "COST", "0"), [1, 10, 0, 0, 10])
        self.assertEqual(self.call("EXISTS", "k"), 0)

    def test_burst(self):
        self.assertEqual(self.call("GCRA.TAKE", "b", "1", "1s", "BURST", "3"), [1, 2, 0, 1000, 3])
        self.assertEqual(self.call("GCRA.TAKE", "b", "1", "1s", "BURST", "3", "COST", "2"),
                         [1, 0, 0, 3000, 3])
        self.assertEqual(self.call("GCRA.TAKE", "b", "1", "1s", "BURST", "3"), [0, 0, 1000, 3000, 3])
        self.at(1000)
        self.assertEqual(self.call("GCRA.TAKE", "b", "1", "1s", "BURST", "3"), [1, 0, 0, 3000, 3])

    def test_key_expires_when_fresh(self):
        self.assertEqual(self.call("GCRA.TAKE", "e", "10", "1s", "COST", "10"), [1, 0, 0, 1000, 10])
        self.at(999)
        self.assertEqual(self.call("EXISTS", "e"), 1)
        self.at(1001)  # as in Redis, a key is gone once the clock is past its expiry
        self.assertEqual(self.call("EXISTS", "e"), 0)
        self.assertEqual(self.call("GCRA.TAKE", "e", "10", "1s"), [1, 9, 0, 100, 10])

    def test_durations(self):
        for i, (text, ms) in enumerate([("250ms", 250), ("10", 10000), ("10s", 10000),
                                        ("1m", 60000), ("24h", 86400000), ("1d", 86400000)]):
            self.assertEqual(self.call("GCRA.TAKE", "d%d" % i, "1", text), [1, 0, 0, ms, 1], text)
            self.assertEqual(self.call("PTTL", "d%d" % i), ms)

    def test_sub_millisecond_rounding(self):
        # T = 1s / 3 = 333333333 ns; times in replies round up.
        self.assertEqual(self.call("GCRA.TAKE", "r", "3", "1s"), [1, 2, 0, 334, 3])
        self.assertEqual(self.call("GCRA.TAKE", "r", "3", "1s", "COST", "2"), [1, 0, 0, 1000, 3])
        self.assertEqual(self.call("GCRA.TAKE", "r", "3", "1s"), [0, 0, 334, 1000, 3])

    def test_errors(self):
        cases = [
            (("GCRA.TAKE", "k", "10"), None),
            (("GCRA.TAKE", "k", "0", "1s"), ["quota"]),
            (("GCRA.TAKE", "k", "-1", "1s"), ["quota"]),
            (("GCRA.TAKE", "k", "x", "1s"), ["quota"]),
            (("GCRA.TAKE", "k", "10", "0"), ["period"]),
            (("GCRA.TAKE", "k", "10", "-1s"), ["period"]),
            (("GCRA.TAKE", "k", "10", "1.5s"), ["period"]),
            (("GCRA.TAKE", "k", "10", "1x"), ["period"]),
            (("GCRA.TAKE", "k", "10", "s"), ["period"]),
            (("GCRA.TAKE", "k", "10", "3651d"), ["period"]),
            (("GCRA.TAKE", "k", "10", "99999999999999999999"), ["period"]),
            (("GCRA.TAKE", "k", "2000000", "1ms"), []),  # T < 1 ns
            (("GCRA.TAKE", "k", "10", "1s", "COST", "-1"), ["cost"]),
            (("GCRA.TAKE", "k", "10", "1s", "COST", "x"), ["cost"]),
            (("GCRA.TAKE", "k", "10", "1s", "COST"), ["cost"]),
            (("GCRA.TAKE", "k", "10", "1s", "BURST"), ["burst"]),
            (("GCRA.TAKE", "k", "10", "1s", "BURST", "0"), ["burst"]),
            (("GCRA.TAKE", "k", "10", "1s", "BURST", "2", "BURST", "2"), ["burst"]),
            (("GCRA.TAKE", "k", "10", "1s", "COST", "1", "COST", "1"), ["cost"]),
            (("GCRA.TAKE", "k", "10", "1s", "FOO", "1"), ["foo"]),
            (("GCRA.TAKE", "k", "10", "1s", "NODELAY"), ["nodelay"]),
        ]
        for args, names in cases:
            reply = self.call(*args)
            if names is None:
                self.assertEqual(reply, RespError("ERR wrong number of arguments for 'gcra.take' command"))
            else:
                self.assertArgError(reply, *names)
        self.assertEqual(self.call("EXISTS", "k"), 0)
        # Option keywords are case-insensitive.
        self.assertEqual(self.call("GCRA.TAKE", "k", "10", "1s", "burst", "5", "cost", "2"),
                         [1, 3, 0, 200, 5])


class GcraInteropTest(LimiterTestCase):
    def test_set_tat_is_honoured(self):
        self.assertEqual(self.call("SET", "g", str(ns(1000))), "OK")
        self.assertEqual(self.call("GCRA.TAKE", "g", "10", "1s"), [0, 0, 100, 1000, 10])
        self.assertEqual(self.call("SET", "h", str(ns(500))), "OK")
        self.assertEqual(self.call("GCRA.TAKE", "h", "10", "1s"), [1, 4, 0, 600, 10])
        self.assertEqual(self.call("GET", "h"), str(ns(600)).encode())
        # A TAT in the past is the same as a fresh key.
        self.assertEqual(self.call("SET", "old", str(ns(-5000))), "OK")
        self.assertEqual(self.call("GCRA.TAKE", "old", "10", "1s"), [1, 9, 0, 100, 10])

    def test_gcra_and_cl_throttle_share_a_key(self):
        # CL.THROTTLE shared 9 10 1 is GCRA.TAKE shared 10 1s: T = 100 ms, tau = 1 s.
        for i in range(5):
            self.assertEqual(self.call("CL.THROTTLE", "shared", "9", "10", "1"), [0, 10, 9 - i, -1, 1])
        self.assertEqual(self.call("GCRA.TAKE", "shared", "10", "1s"), [1, 4, 0, 600, 10])
        self.assertEqual(self.call("CL.THROTTLE", "shared", "9", "10", "1"), [0, 10, 3, -1, 1])
        self.assertEqual(self.call("GCRA.TAKE", "shared", "10", "1s", "COST", "3"), [1, 0, 0, 1000, 10])
        self.assertEqual(self.call("CL.THROTTLE", "shared", "9", "10", "1"), [1, 10, 0, 1, 1])
        self.assertEqual(self.call("GET", "shared"), str(ns(1000)).encode())


class LeakyVectorsTest(LimiterTestCase):
    def test_nodelay(self):
        cmd = ("LEAKY.TAKE", "k", "10", "1s", "BURST", "5", "NODELAY")
        for i in range(1, 7):
            self.assertEqual(self.call(*cmd), [1, 6 - i, 0, 100 * i, 6, 0], "call %d" % i)
        for i in range(7, 11):
            self.assertEqual(self.call(*cmd), [0, 0, 100, 600, 6, 0], "call %d" % i)
        self.at(100)
        self.assertEqual(self.call(*cmd), [1, 0, 0, 600, 6, 0])
        self.at(150)
        self.assertEqual(self.call(*cmd), [0, 0, 50, 550, 6, 0])
        self.at(200)
        self.assertEqual(self.call(*cmd), [1, 0, 0, 600, 6, 0])
        self.assertEqual(self.call("TYPE", "k"), "leaky")
        self.assertEqual(self.call("PTTL", "k"), 600)

    def test_default_delay(self):
        cmd = ("LEAKY.TAKE", "k", "10", "1s", "BURST", "5")
        delays = [self.call(*cmd)[5] for _ in range(6)]
        self.assertEqual(delays, [0, 100, 200, 300, 400, 500])
        denied = self.call(*cmd)
        self.assertEqual(denied[:5], [0, 0, 100, 600, 6])

    def test_delay_option(self):
        cmd = ("LEAKY.TAKE", "k", "10", "1s", "BURST", "5", "DELAY", "2")
        delays = [self.call(*cmd)[5] for _ in range(6)]
        self.assertEqual(delays, [0, 0, 0, 100, 200, 300])

    def test_burst_zero_default(self):
        self.assertEqual(self.call("LEAKY.TAKE", "z", "1", "1s"), [1, 0, 0, 1000, 1, 0])
        self.assertEqual(self.call("LEAKY.TAKE", "z", "1", "1s"), [0, 0, 1000, 1000, 1, 0])
        self.at(1001)
        self.assertEqual(self.call("EXISTS", "z"), 0)
        self.assertEqual(self.call("LEAKY.TAKE", "z", "1", "1s"), [1, 0, 0, 1000, 1, 0])

    def test_cost(self):
        self.assertEqual(self.call("LEAKY.TAKE", "c", "10", "1s", "BURST", "3", "NODELAY", "COST", "3"),
                         [1, 1, 0, 300, 4, 0])
        self.assertEqual(self.call("LEAKY.TAKE", "c", "10", "1s", "BURST", "3", "NODELAY", "COST", "0"),
                         [1, 1, 0, 300, 4, 0])
        self.assertEqual(self.call("LEAKY.TAKE", "c", "10", "1s", "BURST", "3", "NODELAY", "COST", "5")[:3],
                         [0, 1, -1])

    def test_errors(self):
        for args, names in [
            (("LEAKY.TAKE", "k", "0", "1s"), ["rate"]),
            (("LEAKY.TAKE", "k", "10", "0s"), ["period"]),
            (("LEAKY.TAKE", "k", "10", "1s", "BURST", "-1"), ["burst"]),
            (("LEAKY.TAKE", "k", "10", "1s", "DELAY", "1", "NODELAY"), []),
            (("LEAKY.TAKE", "k", "10", "1s", "DELAY"), ["delay"]),
            (("LEAKY.TAKE", "k", "10", "1s", "NODELAY", "NODELAY"), ["nodelay"]),
            (("LEAKY.TAKE", "k", "10", "1s", "COST", "-2"), ["cost"]),
            (("LEAKY.TAKE", "k", "10", "1w"), ["period"]),
        ]:
            self.assertArgError(self.call(*args), *names)
        self.assertEqual(self.call("LEAKY.TAKE", "k", "10"),
                         RespError("ERR wrong number of arguments for 'leaky.take' command"))
        self.assertEqual(self.call("EXISTS", "k"), 0)


class WindowTest(LimiterTestCase):
    def test_fixed_window(self):
        self.assertEqual(self.call("WINDOW.TAKE", "w", "3", "10s"), [1, 2, 0, 10000, 3])
        self.at(1000)
        self.assertEqual(self.call("WINDOW.TAKE", "w", "3", "10s"), [1, 1, 0, 9000, 3])
        self.assertEqual(self.call("WINDOW.TAKE", "w", "3", "10s"), [1, 0, 0, 9000, 3])
        self.assertEqual(self.call("WINDOW.TAKE", "w", "3", "10s"), [0, 0, 9000, 9000, 3])
        self.assertEqual(self.call("GET", "w"), b"3")
        self.assertEqual(self.call("PTTL", "w"), 9000)
        self.assertEqual(self.call("TYPE", "w"), "string")
        self.at(10001)
        self.assertEqual(self.call("EXISTS", "w"), 0)
        self.assertEqual(self.call("WINDOW.TAKE", "w", "3", "10s", "COST", "2"), [1, 1, 0, 10000, 3])
        self.assertEqual(self.call("WINDOW.TAKE", "w", "3", "10s", "COST", "2"), [0, 1, 10000, 10000, 3])
        self.assertEqual(self.call("WINDOW.TAKE", "w", "3", "10s", "COST", "4"), [0, 1, -1, 10000, 3])
        self.assertEqual(self.call("WINDOW.TAKE", "w", "3", "10s", "COST", "0"), [1, 1, 0, 10000, 3])
        self.assertEqual(self.call("GET", "w"), b"2")

    def test_denied_on_fresh_key(self):
        # Nothing is stored, so the state is fresh: reset_after_ms is 0 like the other limiters
        # (GCRA.TAKE and SLIDING.TAKE answer 0 here too) and no key appears.
        self.assertEqual(self.call("WINDOW.TAKE", "f", "3", "10s", "COST", "4"), [0, 3, -1, 0, 3])
        self.assertEqual(self.call("SLIDING.TAKE", "s", "3", "10s", "COST", "4"), [0, 3, -1, 0, 3])
        self.assertEqual(self.call("GCRA.TAKE", "g", "3", "10s", "COST", "4"), [0, 3, -1, 0, 3])
        self.assertEqual(self.call("WINDOW.TAKE", "f", "3", "10s", "COST", "0"), [1, 3, 0, 0, 3])
        self.assertEqual(self.call("SLIDING.TAKE", "s", "3", "10s", "COST", "0"), [1, 3, 0, 0, 3])
        self.assertEqual(self.call("GCRA.TAKE", "g", "3", "10s", "COST", "0"), [1, 3, 0, 0, 3])
        self.assertEqual(self.call("EXISTS", "f", "s", "g"), 0)

    def test_incr_expire_counter(self):
        self.assertEqual(self.call("INCR", "c"), 1)
        self.assertEqual(self.call("INCR", "c"), 2)
        self.assertEqual(self.call("EXPIRE", "c", "60"), 1)
        self.at(5000)
        self.assertEqual(self.call("WINDOW.TAKE", "c", "5", "60s"), [1, 2, 0, 55000, 5])
        self.assertEqual(self.call("INCR", "c"), 4)
        self.assertEqual(self.call("WINDOW.TAKE", "c", "5", "60s"), [1, 0, 0, 55000, 5])
        self.assertEqual(self.call("WINDOW.TAKE", "c", "5", "60s"), [0, 0, 55000, 55000, 5])
        self.assertEqual(self.call("TTL", "c"), 55)

    def test_counter_without_ttl_gets_one(self):
        self.assertEqual(self.call("SET", "c2", "4"), "OK")
        self.assertEqual(self.call("WINDOW.TAKE", "c2", "5", "10s"), [1, 0, 0, 10000, 5])
        self.assertEqual(self.call("PTTL", "c2"), 10000)
        self.assertEqual(self.call("GET", "c2"), b"5")

    def test_errors(self):
        self.assertArgError(self.call("WINDOW.TAKE", "k", "0", "10s"), "limit")
        self.assertArgError(self.call("WINDOW.TAKE", "k", "5", "10q"), "window")
        self.assertArgError(self.call("WINDOW.TAKE", "k", "5", "10s", "BURST", "1"), "burst")
        self.assertEqual(self.call("WINDOW.TAKE", "k", "5"),
                         RespError("ERR wrong number of arguments for 'window.take' command"))
        self.assertEqual(self.call("SET", "notnum", "abc"), "OK")
        self.assertIsInstance(self.call("WINDOW.TAKE", "notnum", "5", "10s"), RespError)
        self.assertEqual(self.call("GET", "notnum"), b"abc")
        self.assertEqual(self.call("EXISTS", "k"), 0)


class SlidingTest(LimiterTestCase):
    def test_sliding_log(self):
        self.assertEqual(self.call("SLIDING.TAKE", "s", "3", "10s"), [1, 2, 0, 10000, 3])
        self.at(1000)
        self.assertEqual(self.call("SLIDING.TAKE", "s", "3", "10s"), [1, 1, 0, 10000, 3])
        self.at(2000)
        self.assertEqual(self.call("SLIDING.TAKE", "s", "3", "10s"), [1, 0, 0, 10000, 3])
        self.at(3000)
        self.assertEqual(self.call("SLIDING.TAKE", "s", "3", "10s"), [0, 0, 7000, 9000, 3])
        self.assertEqual(self.call("PTTL", "s"), 9000)
        self.assertEqual(self.call("TYPE", "s"), "sliding")
        self.at(9999)
        self.assertEqual(self.call("SLIDING.TAKE", "s", "3", "10s"), [0, 0, 1, 2001, 3])
        self.at(10000)
        self.assertEqual(self.call("SLIDING.TAKE", "s", "3", "10s"), [1, 0, 0, 10000, 3])
        # No window of 10 s ever holds more than 3: the next slot opens when 1000 ages out.
        self.assertEqual(self.call("SLIDING.TAKE", "s", "3", "10s"), [0, 0, 1000, 10000, 3])

    def test_cost(self):
        self.assertEqual(self.call("SLIDING.TAKE", "s", "5", "1m", "COST", "3"), [1, 2, 0, 60000, 5])
        self.assertEqual(self.call("SLIDING.TAKE", "s", "5", "1m", "COST", "3"), [0, 2, 60000, 60000, 5])
        self.assertEqual(self.call("SLIDING.TAKE", "s", "5", "1m", "COST", "6"), [0, 2, -1, 60000, 5])
        self.assertEqual(self.call("SLIDING.TAKE", "s", "5", "1m", "COST", "0"), [1, 2, 0, 60000, 5])
        self.assertEqual(self.call("SLIDING.TAKE", "s", "5", "1m", "COST", "2"), [1, 0, 0, 60000, 5])

    def test_key_expires_when_fresh(self):
        self.assertEqual(self.call("SLIDING.TAKE", "s", "2", "1s"), [1, 1, 0, 1000, 2])
        self.at(1001)
        self.assertEqual(self.call("EXISTS", "s"), 0)

    def test_errors(self):
        self.assertArgError(self.call("SLIDING.TAKE", "k", "10001", "10s"), "limit")
        self.assertEqual(self.call("SLIDING.TAKE", "k", "10000", "10s"), [1, 9999, 0, 10000, 10000])
        self.assertArgError(self.call("SLIDING.TAKE", "k2", "0", "10s"), "limit")
        self.assertArgError(self.call("SLIDING.TAKE", "k2", "5", "0ms"), "window")
        self.assertArgError(self.call("SLIDING.TAKE", "k2", "5", "1s", "COST"), "cost")
        self.assertEqual(self.call("EXISTS", "k2"), 0)


class ConcTest(LimiterTestCase):
    def test_acquire_renew_release(self):
        self.assertEqual(self.call("CONC.ACQUIRE", "c", "2", "30s", "ID", "a"), [1, 1, 0, 30000, 2, b"a"])
        self.at(1000)
        self.assertEqual(self.call("CONC.ACQUIRE", "c", "2", "30s", "ID", "b"), [1, 0, 0, 30000, 2, b"b"])
        self.assertEqual(self.call("CONC.ACQUIRE", "c", "2", "30s", "ID", "x"), [0, 0, 29000, 30000, 2, None])
        self.assertEqual(self.call("TYPE", "c"), "conc")
        self.assertEqual(self.call("PTTL", "c"), 30000)
        # Renewing a held token takes no other slot.
        self.assertEqual(self.call("CONC.ACQUIRE", "c", "2", "30s", "ID", "a"), [1, 0, 0, 30000, 2, b"a"])
        self.assertEqual(self.call("CONC.RELEASE", "c", "a"), 1)
        self.assertEqual(self.call("CONC.RELEASE", "c", "a"), 0)
        self.assertEqual(self.call("CONC.RELEASE", "c", "nobody"), 0)
        self.assertEqual(self.call("CONC.RELEASE", "missing", "a"), 0)
        self.assertEqual(self.call("CONC.ACQUIRE", "c", "2", "30s", "ID", "x"), [1, 0, 0, 30000, 2, b"x"])
        # Leases end by themselves: b and x end at 31000.
        self.at(30999)
        self.assertEqual(self.call("CONC.ACQUIRE", "c", "2", "30s", "ID", "y"), [0, 0, 1, 1, 2, None])
        self.at(31001)
        self.assertEqual(self.call("EXISTS", "c"), 0)
        self.assertEqual(self.call("CONC.RELEASE", "c", "b"), 0)
        self.assertEqual(self.call("CONC.ACQUIRE", "c", "2", "30s", "ID", "y"), [1, 1, 0, 30000, 2, b"y"])

    def test_generated_tokens(self):
        first = self.call("CONC.ACQUIRE", "g", "2", "10s")
        second = self.call("CONC.ACQUIRE", "g", "2", "10s")
        self.assertEqual(first[:5], [1, 1, 0, 10000, 2])
        self.assertEqual(second[:5], [1, 0, 0, 10000, 2])
        self.assertIsInstance(first[5], bytes)
        self.assertTrue(first[5])
        self.assertNotEqual(first[5], second[5])
        self.assertEqual(self.call("CONC.ACQUIRE", "g", "2", "10s"), [0, 0, 10000, 10000, 2, None])
        self.assertEqual(self.call("CONC.RELEASE", "g", first[5]), 1)
        self.assertEqual(self.call("CONC.ACQUIRE", "g", "2", "10s")[:5], [1, 0, 0, 10000, 2])

    def test_errors(self):
        self.assertArgError(self.call("CONC.ACQUIRE", "k", "0", "10s"), "limit")
        self.assertArgError(self.call("CONC.ACQUIRE", "k", "1", "0s"), "lease")
        self.assertArgError(self.call("CONC.ACQUIRE", "k", "1", "10s", "ID"), "id")
        self.assertArgError(self.call("CONC.ACQUIRE", "k", "1", "10s", "COST", "1"), "cost")
        self.assertEqual(self.call("CONC.RELEASE", "k"),
                         RespError("ERR wrong number of arguments for 'conc.release' command"))
        self.assertEqual(self.call("CONC.ACQUIRE", "k", "1"),
                         RespError("ERR wrong number of arguments for 'conc.acquire' command"))
        self.assertEqual(self.call("EXISTS", "k"), 0)


class HugeValuesTest(LimiterTestCase):
    """Values near int64 limits never overflow into a wrong decision."""
    M = str(2 ** 63 - 1)

    def test_huge_costs_and_limits(self):
        M = self.M
        self.assertEqual(self.call("GCRA.TAKE", "g", "1", "1s", "COST", M), [0, 1, -1, 0, 1])
        self.assertEqual(self.call("GCRA.TAKE", "g2", "1000", "3650d", "BURST", "1000", "COST", "1000"),
                         [1, 0, 0, 315360000000, 1000])
        self.assertEqual(self.call("CL.THROTTLE", "c", "5", "1", "1", M), [1, 6, 6, -1, 0])
        self.assertEqual(self.call("LEAKY.TAKE", "l", "1", "1s", "COST", M), [0, 1, -1, 0, 1, 0])
        self.assertEqual(self.call("SLIDING.TAKE", "s", "10", "1h", "COST", M), [0, 10, -1, 0, 10])
        self.assertEqual(self.call("WINDOW.TAKE", "w", M, "1h", "COST", M), [1, 0, 0, 3600000, 2 ** 63 - 1])
        self.assertEqual(self.call("WINDOW.TAKE", "w", M, "1h"), [0, 0, 3600000, 3600000, 2 ** 63 - 1])
        self.assertEqual(self.call("GET", "w"), M.encode())
        self.assertEqual(self.call("EXISTS", "g", "c", "l", "s"), 0)

    def test_too_large_parameters_are_errors(self):
        M = self.M
        self.assertArgError(self.call("GCRA.TAKE", "k", M, "3650d"))  # T < 1 ns
        self.assertArgError(self.call("GCRA.TAKE", "k", "1", "1d", "BURST", M), "burst")
        self.assertArgError(self.call("CL.THROTTLE", "k", M, "1", "1"), "max_burst")
        self.assertArgError(self.call("CL.THROTTLE", "k", "5", M, "1"))
        self.assertArgError(self.call("LEAKY.TAKE", "k", "1", "1s", "BURST", M), "burst")
        self.assertArgError(self.call("GCRA.TAKE", "k", "10", "87601h"), "period")  # above 10 years
        self.assertEqual(self.call("GCRA.TAKE", "k", "10", "87600h")[:3], [1, 9, 0])
        self.assertEqual(self.call("DEL", "k"), 1)
        self.assertEqual(self.call("EXISTS", "k"), 0)

    def test_leaky_rate_above_one_per_ns(self):
        # "rate above 1 per ns" is an argument error (issue 3), as GCRA.TAKE and CL.THROTTLE have it.
        self.assertArgError(self.call("LEAKY.TAKE", "k", "2000000", "1ms"), "rate")  # 2 per ns
        self.assertEqual(self.call("EXISTS", "k"), 0)


class LimiterKeysTest(LimiterTestCase):
    def make_all(self):
        self.assertEqual(self.call("GCRA.TAKE", "lim:gcra", "10", "1m")[0], 1)
        self.assertEqual(self.call("CL.THROTTLE", "lim:cell", "9", "10", "60")[0], 0)
        self.assertEqual(self.call("LEAKY.TAKE", "lim:leaky", "10", "1m")[0], 1)
        self.assertEqual(self.call("WINDOW.TAKE", "lim:window", "10", "1m")[0], 1)
        self.assertEqual(self.call("SLIDING.TAKE", "lim:sliding", "10", "1m")[0], 1)
        self.assertEqual(self.call("CONC.ACQUIRE", "lim:conc", "10", "1m", "ID", "t")[0], 1)

    def test_type_ttl_exists_del(self):
        self.make_all()
        types = {k: self.call("TYPE", k) for k in
                 ("lim:gcra", "lim:cell", "lim:leaky", "lim:window", "lim:sliding", "lim:conc")}
        self.assertEqual(types, {"lim:gcra": "string", "lim:cell": "string", "lim:leaky": "leaky",
                                 "lim:window": "string", "lim:sliding": "sliding", "lim:conc": "conc"})
        self.assertEqual(self.call("PTTL", "lim:gcra"), 6000)
        self.assertEqual(self.call("PTTL", "lim:cell"), 6000)
        self.assertEqual(self.call("PTTL", "lim:leaky"), 6000)
        self.assertEqual(self.call("PTTL", "lim:window"), 60000)
        self.assertEqual(self.call("PTTL", "lim:sliding"), 60000)
        self.assertEqual(self.call("PTTL", "lim:conc"), 60000)
        self.assertEqual(self.call("TTL", "lim:leaky"), 6)
        self.assertEqual(self.call("EXISTS", "lim:gcra", "lim:leaky", "lim:sliding", "lim:conc"), 4)
        self.assertEqual(self.call("DBSIZE"), 6)
        self.assertEqual(self.call("DEL", "lim:leaky", "lim:gcra"), 2)
        self.assertEqual(self.call("UNLINK", "lim:sliding"), 1)
        self.assertEqual(self.call("EXISTS", "lim:gcra", "lim:leaky", "lim:sliding"), 0)
        self.assertEqual(self.call("LEAKY.TAKE", "lim:leaky", "10", "1m"), [1, 0, 0, 6000, 1, 0])

    def test_scan_and_keys(self):
        self.make_all()
        self.assertEqual(self.call("SET", "plain", "x"), "OK")
        keys, cursor = [], b"0"
        while True:
            cursor, batch = self.call("SCAN", cursor, "MATCH", "lim:*", "COUNT", "2")
            keys += batch
            if cursor == b"0":
                break
        self.assertEqual(sorted(keys), [b"lim:cell", b"lim:conc", b"lim:gcra", b"lim:leaky",
                                        b"lim:sliding", b"lim:window"])
        self.assertEqual(self.call("SCAN", "0", "TYPE", "leaky", "COUNT", "1000"), [b"0", [b"lim:leaky"]])
        self.assertEqual(self.call("SCAN", "0", "TYPE", "conc", "COUNT", "1000"), [b"0", [b"lim:conc"]])
        self.assertEqual(sorted(self.call("KEYS", "lim:*")), sorted(keys))

    def test_rename_keeps_state(self):
        cmd = ("LEAKY.TAKE", "{old}", "1", "1m", "BURST", "1")
        self.assertEqual(self.call(*cmd)[0], 1)
        self.assertEqual(self.call("RENAME", "{old}", "{new}"), "OK")
        self.assertEqual(self.call("TYPE", "{new}"), "leaky")
        self.assertEqual(self.call("PTTL", "{new}"), 60000)
        self.assertEqual(self.call("LEAKY.TAKE", "{new}", "1", "1m", "BURST", "1"), [1, 0, 0, 120000, 2, 60000])
        self.assertEqual(self.call("LEAKY.TAKE", "{new}", "1", "1m", "BURST", "1")[0], 0)
        self.assertEqual(self.call("LEAKY.TAKE", "{old}", "1", "1m", "BURST", "1")[0], 1)

    def test_copy_and_databases(self):
        self.make_all()
        self.assertEqual(self.call("COPY", "lim:conc", "copy:conc"), 1)
        self.assertEqual(self.call("TYPE", "copy:conc"), "conc")
        self.assertEqual(self.call("PTTL", "copy:conc"), 60000)
        self.assertEqual(self.call("CONC.RELEASE", "copy:conc", "t"), 1)
        self.assertEqual(self.call("CONC.RELEASE", "lim:conc", "t"), 1)
        # Each database has its own limiters.
        self.assertEqual(self.call("COPY", "lim:gcra", "lim:gcra", "DB", "1"), 1)
        self.assertEqual(self.call("SELECT", "1"), "OK")
        self.assertEqual(self.call("GCRA.TAKE", "lim:gcra", "10", "1m"), [1, 8, 0, 12000, 10])
        self.assertEqual(self.call("GCRA.TAKE", "lim:leaky", "10", "1m"), [1, 9, 0, 6000, 10])
        self.assertEqual(self.call("FLUSHDB"), "OK")
        self.assertEqual(self.call("SELECT", "0"), "OK")
        self.assertEqual(self.call("GCRA.TAKE", "lim:gcra", "10", "1m"), [1, 8, 0, 12000, 10])
        self.assertEqual(self.call("FLUSHDB"), "OK")
        self.assertEqual(self.call("GCRA.TAKE", "lim:gcra", "10", "1m"), [1, 9, 0, 6000, 10])

    def test_expire_and_persist_apply(self):
        self.assertEqual(self.call("SLIDING.TAKE", "s", "10", "1m"), [1, 9, 0, 60000, 10])
        self.assertEqual(self.call("PEXPIRE", "s", "500"), 1)
        self.at(501)
        self.assertEqual(self.call("EXISTS", "s"), 0)
        self.assertEqual(self.call("SLIDING.TAKE", "s", "10", "1m"), [1, 9, 0, 60000, 10])

    def test_wrongtype(self):
        self.make_all()
        self.assertEqual(self.call("SET", "str", "hello"), "OK")
        for cmd in [("GET", "lim:leaky"), ("INCR", "lim:sliding"), ("APPEND", "lim:conc", "x"),
                    ("STRLEN", "lim:leaky"), ("GETRANGE", "lim:conc", "0", "1"),
                    ("GCRA.TAKE", "lim:leaky", "10", "1m"), ("CL.THROTTLE", "lim:conc", "1", "1", "1"),
                    ("WINDOW.TAKE", "lim:sliding", "10", "1m"), ("LEAKY.TAKE", "lim:sliding", "1", "1m"),
                    ("LEAKY.TAKE", "str", "1", "1m"), ("SLIDING.TAKE", "lim:leaky", "1", "1m"),
                    ("SLIDING.TAKE", "lim:window", "1", "1m"), ("CONC.ACQUIRE", "lim:gcra", "1", "1m"),
                    ("CONC.RELEASE", "lim:leaky", "t"), ("CONC.ACQUIRE", "str", "1", "1m")]:
            self.assertEqual(self.call(*cmd), WRONGTYPE, cmd)
        for cmd in [("SET", "lim:leaky", "x", "GET"), ("GETSET", "lim:leaky", "x"),
                    ("GETDEL", "lim:leaky"), ("GETEX", "lim:leaky", "PERSIST"),
                    ("SETRANGE", "lim:leaky", "0", "x"), ("INCRBYFLOAT", "lim:leaky", "1"),
                    ("DECRBY", "lim:conc", "1")]:
            self.assertEqual(self.call(*cmd), WRONGTYPE, cmd)
        self.assertEqual(self.call("TYPE", "lim:leaky"), "leaky")
        self.assertEqual(self.call("PTTL", "lim:leaky"), 6000)
        self.assertEqual(self.call("SETNX", "lim:leaky", "x"), 0)
        self.assertEqual(self.call("MSETNX", "new", "1", "lim:conc", "x"), 0)
        self.assertEqual(self.call("EXISTS", "new"), 0)
        # MGET never fails on type: nil for non-strings.
        self.assertEqual(self.call("MGET", "str", "lim:leaky"), [b"hello", None])
        # SET overwrites any type.
        self.assertEqual(self.call("SET", "lim:leaky", "v"), "OK")
        self.assertEqual(self.call("TYPE", "lim:leaky"), "string")


class Resp3LimiterTest(LimiterTestCase):
    def map(self, reply):
        """A RESP3 map reply with its keys as text, in server order."""
        self.assertIsInstance(reply, dict, reply)
        return [(k.decode() if isinstance(k, bytes) else k, v) for k, v in reply.items()]

    def test_maps_after_hello_3(self):
        self.assertEqual(self.call("HELLO", "3")[b"proto"], 3)
        self.assertEqual(self.map(self.call("GCRA.TAKE", "g", "10", "1s")),
                         list(zip(FIELDS, [1, 9, 0, 100, 10])))
        self.assertEqual(self.map(self.call("LEAKY.TAKE", "l", "10", "1s", "BURST", "5")),
                         list(zip(FIELDS + ["delay_ms"], [1, 5, 0, 100, 6, 0])))
        self.assertEqual(self.map(self.call("WINDOW.TAKE", "w", "3", "10s")),
                         list(zip(FIELDS, [1, 2, 0, 10000, 3])))
        self.assertEqual(self.map(self.call("SLIDING.TAKE", "s", "3", "10s")),
                         list(zip(FIELDS, [1, 2, 0, 10000, 3])))
        self.assertEqual(self.map(self.call("CONC.ACQUIRE", "c", "1", "10s", "ID", "me")),
                         list(zip(FIELDS + ["token"], [1, 0, 0, 10000, 1, b"me"])))
        self.assertEqual(self.map(self.call("CONC.ACQUIRE", "c", "1", "10s", "ID", "you")),
                         list(zip(FIELDS + ["token"], [0, 0, 10000, 10000, 1, None])))
        self.assertEqual(self.call("CONC.RELEASE", "c", "me"), 1)
        self.assertEqual(self.call("CL.THROTTLE", "cl", "4", "1", "1"), [0, 5, 4, -1, 1])
        self.assertEqual(self.call("HELLO", "2")[4:6], [b"proto", 2])
        self.assertEqual(self.call("GCRA.TAKE", "g", "10", "1s"), [1, 8, 0, 200, 10])

    def test_resp3_wire_format(self):
        self.call("HELLO", "3")
        self.c.send(b"*4\r\n$9\r\nGCRA.TAKE\r\n$1\r\nw\r\n$2\r\n10\r\n$2\r\n1s\r\n")
        self.assertRaw(self.c, b"%5\r\n")
        fields = [self.c.read() for _ in range(10)]
        self.assertEqual(fields[1::2], [1, 9, 0, 100, 10])


class ExpiryOnTestClockTest(LimiterTestCase):
    """The test clock drives key expiry: expired keys vanish from every read at once, and the
    active expiry cycle removes them (DBSIZE falls) without any read of those keys."""

    def test_expired_keys_are_invisible(self):
        self.assertEqual(self.call("SET", "short", "v", "PX", "100"), "OK")
        self.assertEqual(self.call("SET", "long", "v", "PX", "100000"), "OK")
        self.assertEqual(self.call("SET", "forever", "v"), "OK")
        self.at(101)
        self.assertEqual(self.call("GET", "short"), None)
        self.assertEqual(self.call("TTL", "short"), -2)
        self.assertEqual(self.call("EXISTS", "short", "long", "forever"), 2)
        self.assertEqual(sorted(self.call("KEYS", "*")), [b"forever", b"long"])
        self.assertEqual(sorted(self.call("SCAN", "0", "COUNT", "1000")[1]), [b"forever", b"long"])
        self.assertEqual(self.call("PTTL", "long"), 99899)
        self.at(100001)
        self.assertEqual(self.call("RANDOMKEY"), b"forever")
        self.assertEqual(self.call("MGET", "short", "long", "forever"), [None, None, b"v"])

    def test_active_expiry_lowers_dbsize(self):
        cmds = [("SET", "k%d" % i, "v", "PX", "1000") for i in range(200)]
        self.assertEqual(set(self.c.pipeline(cmds)), {"OK"})
        self.assertEqual(self.call("SET", "keep", "v"), "OK")
        self.assertEqual(self.call("DBSIZE"), 201)
        self.at(2000)
        import time
        deadline = time.monotonic() + 30
        while self.call("DBSIZE") != 1:
            self.assertLess(time.monotonic(), deadline, "expired keys were never removed")
            time.sleep(0.1)
        info = self.call("INFO", "keyspace").decode()
        self.assertIn("db0:keys=1,expires=0,", info)


class LimiterCommandTableTest(LimiterTestCase):
    def test_command_info(self):
        info = self.call("COMMAND", "INFO", "gcra.take", "cl.throttle", "conc.release")
        self.assertEqual(info[0][:6], [b"gcra.take", -4, ["write", "denyoom", "fast"], 1, 1, 1])
        self.assertEqual(info[1][:6], [b"cl.throttle", -5, ["write", "denyoom", "fast"], 1, 1, 1])
        self.assertEqual(info[2][:2], [b"conc.release", 3])
        self.assertEqual(info[2][3:6], [1, 1, 1])


class InfoLimitersTest(LimiterTestCase):
    def counters(self):
        text = self.call("INFO", "limiters").decode()
        self.assertTrue(text.startswith("# Limiters\r\n"), text)
        return dict(line.split(":", 1) for line in text.split("\r\n")[1:] if ":" in line)

    def test_counts(self):
        self.assertEqual(self.call("CONFIG", "RESETSTAT"), "OK")
        zero = self.counters()
        for name in ("gcra_take", "cl_throttle", "leaky_take", "window_take", "sliding_take",
                     "conc_acquire", "conc_release"):
            for what in ("calls", "allowed", "denied"):
                self.assertEqual(zero.get("%s_%s" % (name, what)), "0", (name, what, zero))
        for _ in range(3):
            self.call("GCRA.TAKE", "g", "2", "1m")
        for _ in range(4):
            self.call("CL.THROTTLE", "c", "0", "1", "60")
        self.call("LEAKY.TAKE", "l", "1", "1m")
        self.call("WINDOW.TAKE", "w", "1", "1m")
        self.call("WINDOW.TAKE", "w", "1", "1m")
        self.call("SLIDING.TAKE", "s", "1", "1m")
        self.call("CONC.ACQUIRE", "k", "1", "1m", "ID", "a")
        self.call("CONC.RELEASE", "k", "a")
        self.call("CONC.RELEASE", "k", "a")
        self.call("GCRA.TAKE", "g", "0", "1m")  # an argument error is not a call
        got = self.counters()
        want = {"gcra_take": (3, 2, 1), "cl_throttle": (4, 1, 3), "leaky_take": (1, 1, 0),
                "window_take": (2, 1, 1), "sliding_take": (1, 1, 0), "conc_acquire": (1, 1, 0),
                "conc_release": (2, 1, 1)}
        for name, (calls, allowed, denied) in want.items():
            self.assertEqual((got["%s_calls" % name], got["%s_allowed" % name], got["%s_denied" % name]),
                             (str(calls), str(allowed), str(denied)), name)
        self.assertIn("# Limiters\r\n", self.call("INFO", "all").decode())


if __name__ == "__main__":
    unittest.main()
