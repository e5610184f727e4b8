"""Native library scripts: golden tests of every recognised script.

For each script of server/scripting/native/library_scripts/ (the exact bodies the libraries send), one randomized
call sequence (fixed seeds; SLUICE_NATIVE_SEED=n adds another) of EVAL / EVALSHA / EVAL_RO calls
with good and bad arguments, clock steps on the DEBUG test clock, other writers on the same keys
(SET, DEL, PERSIST, GCRA.TAKE, a CONC key of another type) and RESP2/RESP3 switches runs twice on
one Sluice server: with native-scripts yes and with native-scripts no (the body run by Lua). Every
raw reply and the final keyspace (keys, types, values, list entries, PTTL) must be byte for byte
the same, INFO native_scripts must show that the first run went native and the second did not,
and INFO's total_commands_processed must have grown the same (a Lua run counts every redis.call).
"""

import hashlib
import os
import random
import re
import unittest

from harness import T0_MS, Client, ServerTestCase, encode_command

HERE = os.path.dirname(os.path.abspath(__file__))
BODIES = os.path.join(HERE, "..", "..", "server", "scripting", "native", "library_scripts")

# Values Lua and the commands read in their own ways: each must leave the native path.
BAD = ["abc", "0", "-1", "1.5", "+3", "01", "", "-0", " 5", "0x10", "9007199254740993",
       "99999999999999999999", "1e3"]


class RawClient(Client):
    """A Client that also returns each reply's exact bytes."""

    _captured = b""

    def _fill(self):
        before = len(self.buf)
        super()._fill()
        self._captured += bytes(self.buf[before:])

    def raw_call(self, *args):
        self.send(encode_command(*args))
        self._captured = b""
        start = self.pending()
        self.read()
        data = start + self._captured
        return data[:len(data) - len(self.pending())]


def pick(rng, good, bad=BAD):
    return rng.choice(bad) if rng.random() < 0.12 else str(rng.choice(good))


# A loop count: limits' acquire script runs `for i=1, amount` in Lua, and with a huge amount
# (and a timestamp Lua reads as nil, so the table never grows) that loop runs for days, on Redis
# too (a busy script): no huge bad values there (SLUICE_NATIVE_SEED=228 hung on one).
BOUNDED_BAD = [b for b in BAD if len(b.strip()) < 6]


# name -> (body file, INFO name, writes, argv generator)
SCRIPTS = {
    "rlf": ("rate-limiter-flexible_incr_ttl.lua", "rate_limiter_flexible_incr_ttl", True,
            lambda r: [pick(r, [1, 1, 2, 5, -3, 10**15]), pick(r, [1, 2, 5, 60]), "10", "5"]),
    "limits": ("limits_incr_expire.lua", "limits_incr_expire", True,
               lambda r: [pick(r, [1, 2, 5, -1]), pick(r, [1, 1, 1, 3, -2, 0])]),
    "rlr_increment": ("rate-limit-redis_increment.lua", "rate_limit_redis_increment", True,
                      lambda r: [pick(r, [1000, 1500, 5000, 1])]),
    "rlr_get": ("rate-limit-redis_get.lua", "rate_limit_redis_get", False, lambda r: []),
    "fastify_incr": ("fastify-rate-limit_incr.lua", "fastify_rate_limit_incr", True,
                     lambda r: [pick(r, [1000, 500, 3000]), pick(r, [1, 2, 3, 5]),
                                r.choice(["true", "false"]), r.choice(["true", "false"])]
                     [:r.choice([2, 3, 4, 4, 4])]),
    "fastify_read": ("fastify-rate-limit_read.lua", "fastify_rate_limit_read", False,
                     lambda r: []),
    # limits calls these with time.time() (a float) and int(timestamp - expiry).
    "limits_acquire": ("limits_acquire_moving_window.lua", "limits_acquire_moving_window", True,
                       lambda r: [pick(r, [T0_S + r.randint(0, 2000) / 8, T0_S + 0.1, T0_S]),
                                  pick(r, [1, 2, 3, 5]), pick(r, [10, 60, 2, -1]),
                                  pick(r, [1, 1, 1, 2, 4], BOUNDED_BAD)]),
    "limits_window": ("limits_moving_window.lua", "limits_moving_window", False,
                      lambda r: [pick(r, [T0_S + r.randint(-60, 250), T0_S]),
                                 pick(r, [1, 2, 3, 5])]),
    "limits_clear": ("limits_clear_keys.lua", "limits_clear_keys", True, lambda r: []),
    # redis_rate sends burst, rate, period in seconds (a Go float: "1", "60", "0.5"), cost.
    "rate_allow_n": ("redis_rate_allow_n.lua", "redis_rate_allow_n", True,
                     lambda r: [pick(r, [1, 5, 10]), pick(r, [1, 2, 10, 100]),
                                r.choice(["1", "60", "0.5", "1", "3600"]),
                                pick(r, [1, 1, 2, 0, 7])]),
    "rate_allow_at_most": ("redis_rate_allow_at_most.lua", "redis_rate_allow_at_most", True,
                           lambda r: [pick(r, [1, 5, 10]), pick(r, [1, 2, 10, 100]),
                                      r.choice(["1", "60", "0.5", "1"]),
                                      pick(r, [1, 1, 3, 0, 20])]),
    # ulule sends the count and the period in milliseconds.
    "ulule_incr": ("ulule-limiter_incr.lua", "ulule_limiter_incr", True,
                   lambda r: [pick(r, [1, 1, 1, 3]), pick(r, [1000, 60000, 1500, 0])]),
    "ulule_peek": ("ulule-limiter_peek.lua", "ulule_limiter_peek", False, lambda r: []),
}
KEYS = ["k1", "k2", "k3"]
T0_S = T0_MS // 1000
# clear_keys' KEYS[1] is a KEYS pattern.
PATTERNS = ["k*", "k1", "*", "k[12]", "nomatch*", "LIMITER*", "k?"]
# The moving-window scripts keep a list per key: these sequences also push to the keys.
LIST_SCRIPTS = {"limits_acquire", "limits_window", "limits_clear"}


def body_of(name):
    with open(os.path.join(BODIES, SCRIPTS[name][0]), "rb") as f:
        return f.read()


def make_steps(name, seed, count=250):
    """The call sequence: a list of commands (lists of str/bytes)."""
    rng = random.Random("%s-%d" % (name, seed))
    body = body_of(name)
    sha = hashlib.sha1(body).hexdigest()
    writes, argv = SCRIPTS[name][2], SCRIPTS[name][3]
    steps = []
    for _ in range(count):
        x = rng.random()
        key = rng.choice(KEYS)
        if name in LIST_SCRIPTS and (rng.random() < 0.08 or 0.78 <= x < 0.86):
            # Instead of most SETs (a string key stays one): entries, rarely one Lua can't read.
            entry = "x" if rng.random() < 0.05 else T0_S + rng.randint(-100, 300)
            steps.append([rng.choice(["LPUSH", "LPUSH", "RPUSH"]), key, str(entry)])
            continue
        if x < 0.65:
            mode = rng.choice(["EVAL", "EVALSHA", "EVALSHA", "EVAL_RO" if not writes else "EVAL"])
            if rng.random() < 0.03:
                mode = "EVAL_RO"
            script = body if mode.startswith("EVAL") and "SHA" not in mode else sha
            numkeys = "1" if rng.random() < 0.97 else "0"
            if name == "limits_clear":
                key = rng.choice(PATTERNS)
            keys = [key] if numkeys == "1" else []
            steps.append([mode, script, numkeys] + keys + argv(rng))
        elif x < 0.78:
            steps.append(["DEBUG", "CLOCK", "ADVANCE", str(rng.choice([0, 1, 250, 999, 1000, 1700,
                                                                         5000, 61000]))])
        elif x < 0.83:
            steps.append(["SET", key, pick(rng, [1, 7, 100, 2**60])])
        elif x < 0.86:
            steps.append(["SET", key, str(rng.randint(0, 9)), "PX", str(rng.randint(1, 4000))])
        elif x < 0.89:
            steps.append(["DEL", key])
        elif x < 0.91:
            steps.append(["PERSIST", key])
        elif x < 0.92:
            steps.append(["GCRA.TAKE", key, "5", "1s"])  # a string key holding a decimal TAT
        elif x < 0.93:
            steps.append(["CONC.ACQUIRE", key, "3", "60s", "ID", "t1"])  # a key of another type
        elif x < 0.95:
            steps.append(["SCRIPT", "LOAD", body])
        elif x < 0.97:
            steps.append(["HELLO", rng.choice(["2", "3"])])
        else:
            steps.append(["PTTL", key])
    return steps


FIXED_SEEDS = [1, 2]


class NativeScriptsGoldenTest(ServerTestCase):
    need_sluice = True
    options = {"enable-debug-command": "yes"}
    maxDiff = None

    def counts(self, c, info_name):
        info = c.call("INFO", "native_scripts").decode()
        for line in info.split("\r\n"):
            if line.startswith("native_script_%s:" % info_name):
                fields = dict(f.split("=") for f in line.split(":", 1)[1].split(","))
                return int(fields["native"]), int(fields["interpreted"])
        self.fail("no INFO line for %s in %r" % (info_name, info))

    def run_sequence(self, steps, native):
        """Replies and final keyspace of one run from an empty keyspace at T0."""
        c = RawClient(self.server.port)
        self.addCleanup(c.close)
        for cmd in (["FLUSHALL"], ["SCRIPT", "FLUSH"], ["DEBUG", "CLOCK", "SET", str(T0_MS)],
                    ["CONFIG", "SET", "native-scripts", "yes" if native else "no"]):
            self.assertEqual(c.call(*cmd), "OK")
        before = self.commands_processed(c)
        replies = [c.raw_call(*step) for step in steps]
        # A Lua run counts each redis.call: a native one counts the same calls.
        processed = self.commands_processed(c) - before
        # HELLO's reply names the connection's id, which differs between the runs.
        replies = [re.sub(rb"\$2\r\nid\r\n:\d+\r\n", b"<id>", r) if s[0] == "HELLO" else r
                   for s, r in zip(steps, replies)]
        c.call("HELLO", "2")
        keyspace = []
        for key in sorted(c.call("KEYS", "*")):
            keyspace.append((key, c.raw_call("TYPE", key), c.raw_call("PTTL", key),
                             c.raw_call("GET", key), c.raw_call("LRANGE", key, "0", "-1")))
        return replies, keyspace, processed

    def commands_processed(self, c):
        info = c.call("INFO", "stats")
        info = info.decode() if isinstance(info, bytes) else str(info)
        return int(info.split("total_commands_processed:")[1].split("\r\n")[0])

    def check_script(self, name, seed):
        info_name = SCRIPTS[name][1]
        steps = make_steps(name, seed)
        calls = sum(1 for s in steps if s[0].startswith("EVAL"))
        n0, i0 = self.counts(self.c, info_name)
        native_replies, native_keys, native_processed = self.run_sequence(steps, native=True)
        n1, i1 = self.counts(self.c, info_name)
        lua_replies, lua_keys, lua_processed = self.run_sequence(steps, native=False)
        n2, i2 = self.counts(self.c, info_name)
        for i, (step, a, b) in enumerate(zip(steps, native_replies, lua_replies)):
            self.assertEqual(a, b, "step %d: %r" % (i, [str(x)[:20] for x in step]))
        self.assertEqual(native_keys, lua_keys)
        self.assertEqual(native_processed, lua_processed)
        # Native run: most calls native, the rest (bad arguments, EVAL_RO...) interpreted, and
        # none uncounted (NOSCRIPT and numkeys errors come before the registry). "Most" holds for
        # the fixed seeds; another seed (a hunt for reply differences) may put an entry Lua reads
        # differently ("x") early in a list that many calls then read, and each of those runs
        # in Lua (SLUICE_NATIVE_SEED 204: 55 of 150 calls native): some must still be native.
        self.assertGreater(n1 - n0, calls // 2 if seed in FIXED_SEEDS else 0)
        self.assertLessEqual((n1 - n0) + (i1 - i0), calls)
        # Interpreted run: nothing native.
        self.assertEqual(n2 - n1, 0)
        self.assertEqual(i2 - i1, (n1 - n0) + (i1 - i0))

    def seeds(self):
        extra = os.environ.get("SLUICE_NATIVE_SEED")
        return FIXED_SEEDS + ([int(extra)] if extra else [])

    def test_bodies_are_the_registered_ones(self):
        info = self.c.call("INFO", "native_scripts").decode()
        for name, (_, info_name, _, _) in SCRIPTS.items():
            sha = hashlib.sha1(body_of(name)).hexdigest()
            self.assertIn("native_script_%s:sha=%s," % (info_name, sha), info)
        self.assertIn("native_scripts:yes", info)

    def test_rate_limiter_flexible_incr_ttl(self):
        for seed in self.seeds():
            self.check_script("rlf", seed)

    def test_limits_incr_expire(self):
        for seed in self.seeds():
            self.check_script("limits", seed)

    def test_rate_limit_redis_increment(self):
        for seed in self.seeds():
            self.check_script("rlr_increment", seed)

    def test_rate_limit_redis_get(self):
        for seed in self.seeds():
            self.check_script("rlr_get", seed)

    def test_fastify_rate_limit_incr(self):
        for seed in self.seeds():
            self.check_script("fastify_incr", seed)

    def test_fastify_rate_limit_read(self):
        for seed in self.seeds():
            self.check_script("fastify_read", seed)

    def test_limits_acquire_moving_window(self):
        for seed in self.seeds():
            self.check_script("limits_acquire", seed)

    def test_limits_moving_window(self):
        for seed in self.seeds():
            self.check_script("limits_window", seed)

    def test_limits_clear_keys(self):
        for seed in self.seeds():
            self.check_script("limits_clear", seed)

    def test_redis_rate_allow_n(self):
        for seed in self.seeds():
            self.check_script("rate_allow_n", seed)

    def test_redis_rate_allow_at_most(self):
        for seed in self.seeds():
            self.check_script("rate_allow_at_most", seed)

    def test_ulule_limiter_incr(self):
        for seed in self.seeds():
            self.check_script("ulule_incr", seed)

    def test_ulule_limiter_peek(self):
        for seed in self.seeds():
            self.check_script("ulule_peek", seed)


if __name__ == "__main__":
    unittest.main()
