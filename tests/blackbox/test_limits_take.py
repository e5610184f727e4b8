"""LIMITS.TAKE, REFUND n and HEADERS [POLICY name] (../shared/spec/LIMITERS.md, issue 11) against
the real server on the test clock: every reply field, RESP3 maps, every argument error, INFO
limiters, COMMAND GETKEYS, and a concurrency test where several processes call LIMITS.TAKE on
overlapping key sets: no limit ever admits more than its quota and no denied call consumes."""

import multiprocessing
import unittest

from harness import T0_MS, Client, RespError, ServerTestCase, encode_command

FIELDS = [b"allowed", b"remaining", b"retry_after_ms", b"reset_after_ms", b"limit"]
SEC_DAY = ("LIMITS.TAKE", "LIMIT", "sec", "GCRA", "2", "1s", "LIMIT", "day", "WINDOW", "3", "1d")


class LimitsTestCase(ServerTestCase):
    need_sluice = True
    test_clock = True
    maxDiff = None

    def at(self, ms):
        self.assertEqual(self.c.call("DEBUG", "CLOCK", "SET", T0_MS + ms), "OK")

    def call(self, *args):
        return self.c.call(*args)


class LimitsTakeTest(LimitsTestCase):
    def test_per_second_and_per_day(self):
        self.assertEqual(self.call(*SEC_DAY),
                         [1, 1, 0, 86400000, 2, 1, [[1, 1, 0, 500, 2], [1, 2, 0, 86400000, 3]]])
        self.assertEqual(self.call(*SEC_DAY),
                         [1, 0, 0, 86400000, 2, 1, [[1, 0, 0, 1000, 2], [1, 1, 0, 86400000, 3]]])
        # Denied by the per-second limit: the day is not consumed and says it would allow.
        self.assertEqual(self.call(*SEC_DAY),
                         [0, 0, 500, 86400000, 2, 1, [[0, 0, 500, 1000, 2], [1, 1, 0, 86400000, 3]]])
        self.assertEqual(self.call("GET", "day"), b"2")
        self.assertEqual(self.call("PTTL", "sec"), 1000)
        self.at(1000)
        self.assertEqual(self.call(*SEC_DAY),
                         [1, 0, 0, 86399000, 3, 2, [[1, 1, 0, 500, 2], [1, 0, 0, 86399000, 3]]])
        self.at(2000)
        self.assertEqual(self.call(*SEC_DAY), [0, 0, 86398000, 86398000, 3, 2,
                                               [[1, 2, 0, 0, 2], [0, 0, 86398000, 86398000, 3]]])
        self.assertEqual(self.call("EXISTS", "sec"), 0)
        self.assertEqual(self.call("GET", "day"), b"3")

    def test_every_algorithm_and_cost(self):
        cmd = ("LIMITS.TAKE", "COST", "2", "LIMIT", "g", "GCRA", "10", "1s", "BURST", "20",
               "LIMIT", "w", "WINDOW", "5", "10s", "LIMIT", "s", "SLIDING", "4", "1m",
               "LIMIT", "l", "LEAKY", "1", "1s", "BURST", "3", "NODELAY")
        self.assertEqual(self.call(*cmd), [1, 2, 0, 60000, 4, 3, [
            [1, 18, 0, 200, 20], [1, 3, 0, 10000, 5], [1, 2, 0, 60000, 4], [1, 2, 0, 2000, 4]]])
        self.assertEqual([self.call("TYPE", k) for k in "gwsl"],
                         ["string", "string", "sliding", "leaky"])
        self.assertEqual([self.call("PTTL", k) for k in "gwsl"], [200, 10000, 60000, 2000])
        # COST 3: SLIDING (2 of 4 used) and LEAKY (level 2 of 4) deny; SLIDING waits longest and
        # binds. GCRA and WINDOW would allow alone, and are not consumed.
        before = [self.call("GET", k) for k in "gw"]
        r = self.call(*cmd[:2], "3", *cmd[3:])
        self.assertEqual(r, [0, 2, 60000, 60000, 4, 3, [
            [1, 18, 0, 200, 20], [1, 3, 0, 10000, 5], [0, 2, 60000, 60000, 4],
            [0, 2, 1000, 2000, 4]]])
        self.assertEqual([self.call("GET", k) for k in "gw"], before)
        # COST 0 looks at every group and writes nothing.
        self.assertEqual(self.call("LIMITS.TAKE", "COST", "0", "LIMIT", "new", "GCRA", "1", "1s"),
                         [1, 1, 0, 0, 1, 1, [[1, 1, 0, 0, 1]]])
        self.assertEqual(self.call("EXISTS", "new"), 0)

    def test_never_allowed(self):
        self.assertEqual(self.call("LIMITS.TAKE", "COST", "3", "LIMIT", "a", "GCRA", "2", "1s",
                                   "LIMIT", "b", "SLIDING", "5", "1m"),
                         [0, 2, -1, 0, 2, 1, [[0, 2, -1, 0, 2], [1, 5, 0, 0, 5]]])

    def test_resp3_map(self):
        self.assertEqual(self.call("HELLO", "3")[b"proto"], 3)
        r = self.call("LIMITS.TAKE", "LIMIT", "a", "GCRA", "2", "1s", "LIMIT", "b", "WINDOW", "1",
                      "1m")
        self.assertEqual(list(r), FIELDS + [b"binding", b"limits"])
        self.assertEqual(r, {b"allowed": 1, b"remaining": 0, b"retry_after_ms": 0,
                             b"reset_after_ms": 60000, b"limit": 1, b"binding": 2,
                             b"limits": [dict(zip(FIELDS, [1, 1, 0, 500, 2])),
                                         dict(zip(FIELDS, [1, 0, 0, 60000, 1]))]})
        for group in r[b"limits"]:
            self.assertEqual(list(group), FIELDS)
        r = self.call("LIMITS.TAKE", "HEADERS", "LIMIT", "a", "GCRA", "2", "1s", "LIMIT", "b",
                      "WINDOW", "1", "1m")
        self.assertEqual(list(r), FIELDS + [b"binding", b"limits", b"headers"])
        self.assertEqual(r[b"headers"], [b'RateLimit-Policy: "p1";q=2;w=1, "p2";q=1;w=60',
                                         b'RateLimit: "p1";r=1;t=1, "p2";r=0;t=60',
                                         b"Retry-After: 60"])

    def test_wrong_type_writes_nothing(self):
        self.call("SET", "text", "hello")
        self.call("CONC.ACQUIRE", "conc", "1", "1m")
        self.assertEqual(self.call("LIMITS.TAKE", "LIMIT", "a", "GCRA", "1", "1s", "LIMIT", "text",
                                   "WINDOW", "1", "1s"),
                         RespError("ERR value is not an integer or out of range"))
        self.assertEqual(self.call("LIMITS.TAKE", "LIMIT", "a", "GCRA", "1", "1s", "LIMIT", "conc",
                                   "LEAKY", "1", "1s"),
                         RespError("WRONGTYPE Operation against a key holding the wrong kind of "
                                   "value"))
        self.assertEqual(self.call("EXISTS", "a"), 0)

    def test_errors(self):
        seventeen = ["LIMITS.TAKE"]
        for i in range(17):
            seventeen += ["LIMIT", "k%d" % i, "GCRA", "1", "1s"]
        cases = [
            ("LIMITS.TAKE LIMIT k GCRA 1 1s LIMIT k WINDOW 1 1s",
             "ERR group 2: duplicate key (the same key as group 1)"),
            ("LIMITS.TAKE LIMIT k FOO 1 1s",
             "ERR group 1: unknown algorithm 'FOO' (use GCRA, WINDOW, SLIDING or LEAKY)"),
            ("LIMITS.TAKE LIMIT j GCRA 1 1s LIMIT k GCRA 0 1s",
             "ERR group 2: invalid quota: must be a positive integer"),
            ("LIMITS.TAKE LIMIT k GCRA 1 1s BURST 0",
             "ERR group 1: invalid BURST: must be a positive integer"),
            ("LIMITS.TAKE LIMIT k LEAKY 1 1s DELAY 1 NODELAY",
             "ERR group 1: invalid DELAY: not allowed together with NODELAY"),
            ("LIMITS.TAKE LIMIT k WINDOW 1 10y",
             "ERR group 1: invalid window '10y': unknown unit (use ms, s, m, h or d)"),
            ("LIMITS.TAKE LIMIT k GCRA 1 1s COST 2",
             "ERR group 1: COST goes before the first LIMIT, for every group"),
            ("LIMITS.TAKE COST 1 REFUND 1 LIMIT k GCRA 1 1s",
             "ERR invalid REFUND: not allowed together with COST"),
            ("LIMITS.TAKE LIMIT k GCRA 1 1s POLICY x",
             "ERR group 1: invalid POLICY: only together with HEADERS"),
            ("LIMITS.TAKE LIMIT j GCRA 1 1s LIMIT k",
             "ERR group 2: wrong number of arguments (LIMIT key ALGO count duration [options])"),
            ("LIMITS.TAKE NOPE LIMIT k GCRA 1 1s", "ERR unknown option 'NOPE'"),
            ("LIMITS.TAKE LIMIT k GCRA 1", "ERR wrong number of arguments for 'limits.take' command"),
            (" ".join(seventeen), "ERR too many groups: at most 16 LIMIT groups"),
            ("GCRA.TAKE k 1 1s COST 1 REFUND 1", "ERR invalid REFUND: not allowed together with COST"),
            ("SLIDING.TAKE k 1 1s REFUND x", "ERR invalid REFUND: must be a non-negative integer"),
            ("WINDOW.TAKE k 1 1s POLICY x", "ERR invalid POLICY: only together with HEADERS"),
            ("LEAKY.TAKE k 1 1s HEADERS POLICY a\"b",
             "ERR invalid POLICY: 1 to 64 printable ASCII characters, no '\"' or '\\'"),
        ]
        for command, error in cases:
            self.assertEqual(self.call(*command.split(" ")), RespError(error), command)
        self.assertEqual(self.call("DBSIZE"), 0)
        info = self.call("INFO", "limiters").decode()
        self.assertIn("limits_take_calls:0\r\n", info)
        self.assertIn("gcra_take_calls:0\r\n", info)

    def test_info_and_getkeys(self):
        self.call("CONFIG", "RESETSTAT")
        for _ in range(3):
            self.call(*SEC_DAY)
        self.call("LIMITS.TAKE", "REFUND", "1", "LIMIT", "sec", "GCRA", "2", "1s")
        self.call("WINDOW.TAKE", "w", "1", "1s", "REFUND", "1")
        info = self.call("INFO", "limiters").decode()
        self.assertIn("limits_take_calls:3\r\nlimits_take_allowed:2\r\nlimits_take_denied:1\r\n"
                      "limits_take_refunds:1\r\n", info)
        self.assertIn("window_take_calls:0\r\nwindow_take_allowed:0\r\nwindow_take_denied:0\r\n"
                      "window_take_refunds:1\r\n", info)
        self.assertEqual(self.call("COMMAND", "GETKEYS", *SEC_DAY), [b"sec", b"day"])
        info = self.call("COMMAND", "INFO", "limits.take")[0]
        self.assertEqual(info[:6], [b"limits.take", -6, ["write", "denyoom", "fast", "movablekeys"],
                                    0, 0, 0])


class RefundTest(LimitsTestCase):
    def test_refund_every_take(self):
        self.assertEqual(self.call("GCRA.TAKE", "g", "10", "1s", "COST", "5"), [1, 5, 0, 500, 10])
        self.assertEqual(self.call("GCRA.TAKE", "g", "10", "1s", "REFUND", "2"), [1, 7, 0, 300, 10])
        self.assertEqual(self.call("GET", "g"), str((T0_MS + 300) * 1_000_000).encode())
        self.assertEqual(self.call("GCRA.TAKE", "g", "10", "1s", "REFUND", "9"), [1, 10, 0, 0, 10])
        self.assertEqual(self.call("EXISTS", "g"), 0)
        self.assertEqual(self.call("WINDOW.TAKE", "w", "5", "10s", "COST", "4"), [1, 1, 0, 10000, 5])
        self.at(2000)
        self.assertEqual(self.call("WINDOW.TAKE", "w", "5", "10s", "REFUND", "9"), [1, 5, 0, 8000, 5])
        self.assertEqual(self.call("GET", "w"), b"0")
        self.assertEqual(self.call("PTTL", "w"), 8000)
        self.assertEqual(self.call("SLIDING.TAKE", "s", "3", "10s"), [1, 2, 0, 10000, 3])
        self.at(3000)
        self.assertEqual(self.call("SLIDING.TAKE", "s", "3", "10s", "COST", "2"), [1, 0, 0, 10000, 3])
        # The newest units go first: one unit of +2 s is left, so reset is 9 s.
        self.assertEqual(self.call("SLIDING.TAKE", "s", "3", "10s", "REFUND", "2"), [1, 2, 0, 9000, 3])
        self.assertEqual(self.call("PTTL", "s"), 9000)
        self.assertEqual(self.call("LEAKY.TAKE", "l", "10", "1s", "BURST", "5", "COST", "3"),
                         [1, 3, 0, 300, 6, 200])
        self.assertEqual(self.call("LEAKY.TAKE", "l", "10", "1s", "BURST", "5", "REFUND", "1"),
                         [1, 4, 0, 200, 6, 0])
        self.assertEqual(self.call("LEAKY.TAKE", "missing", "10", "1s", "REFUND", "1"),
                         [1, 1, 0, 0, 1, 0])
        self.assertEqual(self.call("EXISTS", "missing"), 0)

    def test_refund_after_denial_lets_the_next_request_in(self):
        self.assertEqual(self.call(*SEC_DAY)[0], 1)
        self.assertEqual(self.call(*SEC_DAY)[0], 1)
        self.assertEqual(self.call(*SEC_DAY)[0], 0)
        # The second request failed upstream: give its units back to both limits.
        self.assertEqual(self.call("LIMITS.TAKE", "REFUND", "1", *SEC_DAY[1:]),
                         [1, 1, 0, 86400000, 2, 1, [[1, 1, 0, 500, 2], [1, 2, 0, 86400000, 3]]])
        self.assertEqual(self.call(*SEC_DAY)[0], 1)
        self.assertEqual(self.call("GET", "day"), b"2")


class HeadersTest(LimitsTestCase):
    def test_single_take_headers(self):
        self.assertEqual(self.call("GCRA.TAKE", "api", "100", "1m", "HEADERS"),
                         [1, 99, 0, 600, 100, [b'RateLimit-Policy: "default";q=100;w=60',
                                               b'RateLimit: "default";r=99;t=1']])
        self.assertEqual(self.call("WINDOW.TAKE", "w", "1", "1m", "HEADERS", "POLICY", "minute"),
                         [1, 0, 0, 60000, 1, [b'RateLimit-Policy: "minute";q=1;w=60',
                                              b'RateLimit: "minute";r=0;t=60']])
        self.at(1500)
        self.assertEqual(self.call("WINDOW.TAKE", "w", "1", "1m", "HEADERS", "POLICY", "minute"),
                         [0, 0, 58500, 58500, 1, [b'RateLimit-Policy: "minute";q=1;w=60',
                                                  b'RateLimit: "minute";r=0;t=59',
                                                  b"Retry-After: 59"]])
        self.assertEqual(self.call("LEAKY.TAKE", "l", "3", "500ms", "HEADERS"),
                         [1, 0, 0, 167, 1, 0, [b'RateLimit-Policy: "default";q=3;w=1',
                                               b'RateLimit: "default";r=0;t=1']])
        self.assertEqual(self.call("SLIDING.TAKE", "s", "2", "1s", "COST", "3", "HEADERS"),
                         [0, 2, -1, 0, 2, [b'RateLimit-Policy: "default";q=2;w=1',
                                           b'RateLimit: "default";r=2;t=0']])

    def test_resp3_headers_field(self):
        self.call("HELLO", "3")
        r = self.call("LEAKY.TAKE", "l", "1", "1s", "HEADERS", "POLICY", "p")
        self.assertEqual(list(r), FIELDS + [b"delay_ms", b"headers"])
        self.assertEqual(r[b"headers"], [b'RateLimit-Policy: "p";q=1;w=1', b'RateLimit: "p";r=0;t=1'])

    def test_limits_take_headers_name_every_group(self):
        r = self.call("LIMITS.TAKE", "HEADERS", "LIMIT", "u:1:s", "GCRA", "10", "1s", "POLICY",
                      "per-second", "LIMIT", "u:1:d", "WINDOW", "1000", "1d", "POLICY", "per-day")
        self.assertEqual(r[7], [
            b'RateLimit-Policy: "per-second";q=10;w=1, "per-day";q=1000;w=86400',
            b'RateLimit: "per-second";r=9;t=1, "per-day";r=999;t=86400'])
        for header in r[7]:
            self.assertNotIn(b"u:1", header)  # keys never appear in headers


# ---- Concurrency: processes on overlapping key sets.
PROCESSES = 4
CALLS = 150
SHARED_QUOTA = 200
OWN_QUOTA = 60


def limits_worker(job):
    """Runs in a child process: CALLS pipelined LIMITS.TAKE on ("shared", "pair<w%2>", own key),
    in batches of 25. Returns the replies."""
    port, w = job
    conn = Client(port)
    replies = []
    for start in range(0, CALLS, 25):
        batch = []
        for i in range(start, start + 25):
            cost = 1 + (i % 3)
            batch.append(encode_command(
                "LIMITS.TAKE", "COST", cost,
                "LIMIT", "shared", "WINDOW", SHARED_QUOTA, "1h",
                "LIMIT", "pair%d" % (w % 2), "GCRA", SHARED_QUOTA // 2, "1h",
                "LIMIT", "own%d" % w, "SLIDING", OWN_QUOTA, "1h"))
        conn.send(b"".join(batch))
        replies += [(1 + (i % 3), conn.read()) for i in range(start, start + 25)]
    conn.close()
    return replies


class LimitsConcurrencyTest(LimitsTestCase):
    options = {"threads": "4"}

    def test_overlapping_key_sets_never_exceed_a_quota(self):
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(PROCESSES) as pool:
            results = pool.map(limits_worker, [(self.server.port, w) for w in range(PROCESSES)])
        units = {"shared": 0, "pair0": 0, "pair1": 0}
        own = {}
        for w, replies in enumerate(results):
            own[w] = 0
            for cost, r in replies:
                self.assertNotIsInstance(r, RespError, r)
                if r[0] == 1:
                    units["shared"] += cost
                    units["pair%d" % (w % 2)] += cost
                    own[w] += cost
        self.assertLessEqual(units["shared"], SHARED_QUOTA)
        self.assertLessEqual(units["pair0"], SHARED_QUOTA // 2)
        self.assertLessEqual(units["pair1"], SHARED_QUOTA // 2)
        # Denied calls consumed nothing: each stored state is exactly what the allowed calls took.
        self.assertEqual(int(self.call("GET", "shared") or 0), units["shared"])
        for w in range(PROCESSES):
            self.assertLessEqual(own[w], OWN_QUOTA)
            self.assertEqual(self.call("SLIDING.TAKE", "own%d" % w, OWN_QUOTA, "1h", "COST", "0")[1],
                             OWN_QUOTA - own[w])
        for p in ("pair0", "pair1"):
            self.assertEqual(self.call("GCRA.TAKE", p, SHARED_QUOTA // 2, "1h", "COST", "0")[1],
                             SHARED_QUOTA // 2 - units[p])
        # The quotas were reached: the test exercised denials.
        self.assertGreater(sum(1 for rs in results for _, r in rs if r[0] == 0), 0)


if __name__ == "__main__":
    unittest.main()
