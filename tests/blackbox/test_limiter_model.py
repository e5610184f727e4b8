"""Randomised model tests: GCRA.TAKE, CL.THROTTLE, WINDOW.TAKE and SLIDING.TAKE against a small
Python model written straight from ../shared/spec/LIMITERS.md, on the test clock, with a fixed
seed. Every reply, and the key's PTTL after every call, must match the model exactly. The same
models, with refunds, drive LIMITS.TAKE (all or nothing over random groups) and REFUND n."""

import copy
import os
import random
from fractions import Fraction

from harness import T0_MS
from test_limiters import LimiterTestCase

NS_PER_MS = 1_000_000
NS_PER_S = 1_000_000_000
STEPS = 3000
# Another fixed seed for a longer hunt by hand: SLUICE_MODEL_SEED=7 python3 -m unittest ...
SEED_OFFSET = int(os.environ.get("SLUICE_MODEL_SEED", "0"))


def ceil_div(a, b):
    return -((-a) // b)


def ceil_ms(ns):
    return ceil_div(ns, NS_PER_MS)


def cell_seconds(ns):
    """redis-cell's rounding: whole seconds, plus one if the millisecond part is non-zero."""
    return ns // NS_PER_S + (1 if (ns % NS_PER_S) // NS_PER_MS > 0 else 0)


def pttl(expire_ms, now_ms):
    """Redis's PTTL: a key lives until the clock is past its expiry (PTTL 0 at the instant)."""
    return -2 if expire_ms is None or expire_ms < now_ms else expire_ms - now_ms


class Gcra:
    """GCRA as LIMITERS.md states it. State: the TAT in ns (None when missing)."""

    def __init__(self, emission_ns, capacity):
        self.t, self.capacity, self.tau = emission_ns, capacity, emission_ns * capacity
        self.tat = None

    def take(self, now, cost):
        tat = self.tat if self.tat is not None and self.tat > now else now
        new = tat + self.t * cost
        allowed = new - self.tau <= now
        after = new if allowed else tat
        if allowed and cost > 0:
            self.tat = new
        remaining = max(0, min(self.capacity, (now + self.tau - after) // self.t))
        if allowed:
            retry = 0
        elif cost > self.capacity:
            retry = -1
        else:
            retry = new - self.tau - now  # ns; the caller rounds
        return allowed, remaining, retry, after - now

    def refund(self, now, units):
        """REFUND: TAT = max(now, TAT - units * T); state back at now is deleted."""
        tat = self.tat if self.tat is not None and self.tat > now else now
        after = max(now, tat - self.t * units)
        if units > 0:
            self.tat = after if after > now else None
        remaining = max(0, min(self.capacity, (now + self.tau - after) // self.t))
        return True, remaining, 0, after - now

    def pttl(self, now_ms):
        return pttl(None if self.tat is None else ceil_ms(self.tat), now_ms)


class Window:
    def __init__(self, limit, window_ms):
        self.limit, self.window_ms = limit, window_ms
        self.count, self.expire_ms = 0, None
        self.key_expire_ms = None  # the stored key's expiry (it outlives a reset window by 0 ms)

    def live(self, now_ms):
        return self.expire_ms is not None and self.expire_ms > now_ms

    def take(self, now_ms, cost):
        self.alt_reply = None
        if not self.live(now_ms):
            self.count, self.expire_ms = 0, None
        allowed = self.count + cost <= self.limit
        if (not allowed or cost == 0) and self.expire_ms is None:
            # No key: the state is fresh, so reset_after_ms is 0 (the key's PTTL does not exist).
            # Sluice answers with a whole window here; WindowTest.test_denied_on_fresh_key checks
            # that on its own, so the model goes on with either answer.
            self.alt_reply = ([1, self.limit, 0, self.window_ms, self.limit] if allowed else
                              [0, self.limit, -1 if cost > self.limit else self.window_ms,
                               self.window_ms, self.limit])
        if allowed and cost > 0:
            if self.expire_ms is None:
                self.expire_ms = now_ms + self.window_ms
                self.key_expire_ms = self.expire_ms
            self.count += cost
        remaining = self.limit - self.count
        reset = self.expire_ms - now_ms if self.expire_ms is not None else 0
        if allowed:
            retry = 0
        elif cost > self.limit:
            retry = -1
        else:
            retry = reset
        return [1 if allowed else 0, remaining, retry, reset, self.limit]

    def refund(self, now_ms, units):
        """REFUND: count = max(0, count - units), the window's end kept."""
        if not self.live(now_ms):
            self.count, self.expire_ms = 0, None
            return [1, self.limit, 0, 0, self.limit]
        if units > 0:
            self.count = max(0, self.count - units)
        return [1, self.limit - self.count, 0, self.expire_ms - now_ms, self.limit]

    def pttl(self, now_ms):
        return pttl(self.key_expire_ms, now_ms)


class Sliding:
    def __init__(self, limit, window_ms):
        self.limit, self.window_ms = limit, window_ms
        self.entries = []  # (admitted at ms, units)
        self.expire_ms = None

    def take(self, now_ms, cost):
        self.entries = [(t, n) for t, n in self.entries if t + self.window_ms > now_ms]
        used = sum(n for _, n in self.entries)
        allowed = used + cost <= self.limit
        if allowed and cost > 0:
            self.entries.append((now_ms, cost))
            self.expire_ms = now_ms + self.window_ms
            used += cost
        if allowed:
            retry = 0
        elif cost > self.limit:
            retry = -1
        else:
            freed = 0
            for t, n in self.entries:
                freed += n
                if used - freed + cost <= self.limit:
                    retry = t + self.window_ms - now_ms
                    break
        reset = self.entries[-1][0] + self.window_ms - now_ms if self.entries else 0
        return [1 if allowed else 0, self.limit - used, retry, reset, self.limit]

    def refund(self, now_ms, units):
        """REFUND: the newest `units` admitted units in the window are removed."""
        self.entries = [(t, n) for t, n in self.entries if t + self.window_ms > now_ms]
        left = units
        while left > 0 and self.entries:
            t, n = self.entries.pop()
            if n > left:
                self.entries.append((t, n - left))
            left -= min(n, left)
        if units > 0:
            self.expire_ms = self.entries[-1][0] + self.window_ms if self.entries else None
        used = sum(n for _, n in self.entries)
        reset = self.entries[-1][0] + self.window_ms - now_ms if self.entries else 0
        return [1, self.limit - used, 0, reset, self.limit]

    def pttl(self, now_ms):
        return pttl(self.expire_ms, now_ms)


class Leaky:
    """nginx limit_req as LIMITERS.md states it, with exact fractions. Level in units."""

    def __init__(self, rate, period_ms, burst, delay, nodelay):
        self.rate, self.period_ms = rate, period_ms
        self.limit, self.delay, self.nodelay = burst + 1, delay, nodelay
        self.level, self.at_ms, self.expire_ms = Fraction(0), 0, None

    def drain_ms(self, level):
        return level * self.period_ms / self.rate  # Fraction of ms

    def take(self, now_ms, cost):
        level = max(Fraction(0), self.level - Fraction((now_ms - self.at_ms) * self.rate, self.period_ms))
        if self.expire_ms is None or self.expire_ms < now_ms:
            level = Fraction(0)
        new = level + cost
        allowed = new <= self.limit
        after = new if allowed else level
        if allowed and cost > 0:
            self.level, self.at_ms = new, now_ms
            self.expire_ms = now_ms + ceil_div(after.numerator * self.period_ms,
                                               after.denominator * self.rate)
        if allowed:
            retry = 0
        elif cost > self.limit:
            retry = -1
        else:
            retry = ceil_frac(self.drain_ms(new - self.limit))
        excess = after - 1
        delay_ms = 0
        if allowed and not self.nodelay and excess > self.delay:
            delay_ms = ceil_frac(self.drain_ms(excess - self.delay))
        return [1 if allowed else 0, int((self.limit - after) // 1), retry,
                ceil_frac(self.drain_ms(after)), self.limit, delay_ms]

    def refund(self, now_ms, units):
        """REFUND: level = max(0, drained level - units); an empty bucket is deleted."""
        level = max(Fraction(0), self.level - Fraction((now_ms - self.at_ms) * self.rate, self.period_ms))
        if self.expire_ms is None or self.expire_ms < now_ms:
            level = Fraction(0)
        level = max(Fraction(0), level - units)
        if units > 0:
            self.level, self.at_ms = level, now_ms
            self.expire_ms = (None if level == 0 else
                              now_ms + ceil_div(level.numerator * self.period_ms,
                                                level.denominator * self.rate))
        return [1, int((self.limit - level) // 1), 0, ceil_frac(self.drain_ms(level)), self.limit, 0]

    def pttl(self, now_ms):
        return pttl(self.expire_ms, now_ms)


class Conc:
    """Concurrency slots with leases. holders: token -> lease end (ms); live while end > now."""

    def __init__(self, limit, lease_ms):
        self.limit, self.lease_ms = limit, lease_ms
        self.holders, self.expire_ms = {}, None

    def live(self, now_ms):
        return {t: e for t, e in self.holders.items() if e > now_ms}

    def acquire(self, now_ms, token):
        self.holders = self.live(now_ms)
        if token in self.holders or len(self.holders) < self.limit:
            self.holders[token] = now_ms + self.lease_ms
            self.expire_ms = max(self.holders.values())
            allowed, retry = True, 0
        else:
            allowed, retry = False, min(self.holders.values()) - now_ms
        reset = max(self.holders.values()) - now_ms if self.holders else 0
        return [1 if allowed else 0, self.limit - len(self.holders), retry, reset, self.limit,
                token.encode() if allowed else None]

    def release(self, now_ms, token):
        self.holders = self.live(now_ms)
        released = self.holders.pop(token, None) is not None
        self.expire_ms = None  # what PTTL shows after a release is not part of the contract
        return 1 if released else 0

    def pttl(self, now_ms):
        return None if self.expire_ms is None else pttl(self.expire_ms, now_ms)


def ceil_frac(f):
    f = Fraction(f)
    return ceil_div(f.numerator, f.denominator)


class ModelTest(LimiterTestCase):
    def run_model(self, make_calls, seed):
        """make_calls(rng) -> list of (key, model, command args, reply function)."""
        rng = random.Random(seed + SEED_OFFSET)
        limiters = make_calls(rng)
        now_ms = 0
        for step in range(STEPS):
            now_ms += rng.choice([0, 0, 0, 1, 7, 50, 99, 100, 101, 250, 999, 3000])
            self.at(now_ms)
            key, model, args, expect = rng.choice(limiters)
            cost = rng.choice([0, 1, 1, 1, 1, 2, 3, 5, 12])
            want = expect(model, now_ms, cost)
            got = self.call(*args(cost))
            context = "step %d, t=%d ms, %s cost %d" % (step, now_ms, key, cost)
            if got != want and getattr(model, "alt_reply", None) == got:
                want = got
            self.assertEqual(got, want, context)
            want_pttl = model.pttl(now_ms)
            if want_pttl is not None:
                self.assertEqual(self.call("PTTL", key), want_pttl, "PTTL after " + context)

    def test_gcra_take(self):
        def make(rng):
            out = []
            for i, (quota, period_ms, burst) in enumerate([(10, 1000, None), (3, 1000, 5),
                                                          (7, 60000, 2), (1, 250, None), (6, 100, 1)]):
                key = "gcra:%d" % i
                capacity = burst or quota
                model = Gcra(period_ms * NS_PER_MS // quota, capacity)
                extra = ["BURST", str(burst)] if burst else []
                args = (lambda k, q, p, e: lambda cost: ["GCRA.TAKE", k, str(q), "%dms" % p] + e
                        + ["COST", str(cost)])(key, quota, period_ms, extra)

                def expect(m, now_ms, cost):
                    allowed, remaining, retry, reset = m.take((T0_MS + now_ms) * NS_PER_MS, cost)
                    return [1 if allowed else 0, remaining, retry if retry <= 0 else ceil_ms(retry),
                            ceil_ms(reset), m.capacity]
                out.append((key, _Shift(model), args, expect))
            return out
        self.run_model(make, seed=1)

    def test_cl_throttle(self):
        def make(rng):
            out = []
            for i, (max_burst, count, period_s) in enumerate([(4, 1, 1), (0, 1, 2), (9, 10, 1),
                                                             (2, 3, 7)]):
                key = "cell:%d" % i
                model = Gcra(period_s * NS_PER_S // count, max_burst + 1)
                args = (lambda k, b, c, p: lambda cost: ["CL.THROTTLE", k, str(b), str(c), str(p),
                                                         str(cost)])(key, max_burst, count, period_s)

                def expect(m, now_ms, cost):
                    allowed, remaining, retry, reset = m.take((T0_MS + now_ms) * NS_PER_MS, cost)
                    retry_s = -1 if allowed or retry < 0 else cell_seconds(retry)
                    return [0 if allowed else 1, m.capacity, remaining, retry_s, cell_seconds(reset)]
                out.append((key, _Shift(model), args, expect))
            return out
        self.run_model(make, seed=2)

    def test_window_take(self):
        def make(rng):
            out = []
            for i, (limit, window_ms) in enumerate([(5, 1000), (12, 3000), (1, 100)]):
                key = "window:%d" % i
                args = (lambda k, l, w: lambda cost: ["WINDOW.TAKE", k, str(l), "%dms" % w,
                                                      "COST", str(cost)])(key, limit, window_ms)
                out.append((key, Window(limit, window_ms), args,
                            lambda m, now_ms, cost: m.take(now_ms, cost)))
            return out
        self.run_model(make, seed=3)

    def test_sliding_take(self):
        def make(rng):
            out = []
            for i, (limit, window_ms) in enumerate([(5, 1000), (12, 3000), (1, 100)]):
                key = "sliding:%d" % i
                args = (lambda k, l, w: lambda cost: ["SLIDING.TAKE", k, str(l), "%dms" % w,
                                                      "COST", str(cost)])(key, limit, window_ms)
                out.append((key, Sliding(limit, window_ms), args,
                            lambda m, now_ms, cost: m.take(now_ms, cost)))
            return out
        self.run_model(make, seed=4)


    def test_leaky_take(self):
        def make(rng):
            out = []
            for i, (rate, period_ms, burst, delay, nodelay) in enumerate(
                    [(10, 1000, 5, 0, False), (10, 1000, 5, 0, True), (4, 1000, 3, 2, False),
                     (1, 100, 0, 0, False), (3, 60000, 8, 1, False)]):
                key = "leaky:%d" % i
                opts = ["BURST", str(burst)] + (["NODELAY"] if nodelay else ["DELAY", str(delay)])
                args = (lambda k, r, p, o: lambda cost: ["LEAKY.TAKE", k, str(r), "%dms" % p] + o
                        + ["COST", str(cost)])(key, rate, period_ms, opts)
                out.append((key, Leaky(rate, period_ms, burst, delay, nodelay), args,
                            lambda m, now_ms, cost: m.take(now_ms, cost)))
            return out
        self.run_model(make, seed=5)


    def test_conc_acquire_release(self):
        def make(rng):
            out = []
            for i, (limit, lease_ms) in enumerate([(2, 1000), (3, 250), (1, 5000)]):
                key = "conc:%d" % i
                model = Conc(limit, lease_ms)
                # `cost` picks the operation and the token: 0..5 acquire t<cost>, 12 releases.
                args = (lambda k, l, w: lambda cost: (
                    ["CONC.RELEASE", k, "t%d" % (cost % 3)] if cost in (2, 12) else
                    ["CONC.ACQUIRE", k, str(l), "%dms" % w, "ID", "t%d" % cost]))(key, limit, lease_ms)

                def expect(m, now_ms, cost):
                    if cost in (2, 12):
                        return m.release(now_ms, "t%d" % (cost % 3))
                    return m.acquire(now_ms, "t%d" % cost)
                out.append((key, model, args, expect))
            return out
        self.run_model(make, seed=6)


class Group:
    """One LIMITS.TAKE group over a model: its command words and five-field replies in ms."""

    def __init__(self, key, algo, model, words, full_reply=5):
        self.key, self.algo, self.model, self.words = key, algo, model, words
        self.full_reply = full_reply  # the length of the group's own command's reply

    def _ns(self, now_ms):
        return (T0_MS + now_ms) * NS_PER_MS

    def take(self, now_ms, cost):
        if self.algo == "GCRA":
            allowed, remaining, retry, reset = self.model.take(self._ns(now_ms), cost)
            return [1 if allowed else 0, remaining, retry if retry <= 0 else ceil_ms(retry),
                    ceil_ms(reset), self.model.capacity]
        return self.model.take(now_ms, cost)

    def refund(self, now_ms, units):
        if self.algo == "GCRA":
            _, remaining, _, reset = self.model.refund(self._ns(now_ms), units)
            return [1, remaining, 0, ceil_ms(reset), self.model.capacity]
        return self.model.refund(now_ms, units)

    def pttl(self, now_ms):
        return self.model.pttl(T0_MS + now_ms if self.algo == "GCRA" else now_ms)


def combine(replies):
    """LIMITS.TAKE's five fields and binding from the groups' replies (LIMITERS.md)."""
    n = len(replies)
    allowed = all(r[0] == 1 for r in replies)
    if allowed:
        bind = min(range(n), key=lambda i: (replies[i][1], i))
    else:
        denying = [i for i in range(n) if replies[i][0] == 0]
        bind = max(denying, key=lambda i: (float("inf") if replies[i][2] == -1 else replies[i][2], -i))
    return [1 if allowed else 0, min(r[1] for r in replies), 0 if allowed else replies[bind][2],
            max(r[3] for r in replies), replies[bind][4], bind + 1]


class LimitsModelTest(LimiterTestCase):
    """LIMITS.TAKE over random groups and REFUND n (on LIMITS.TAKE and on each take) against the
    models above: all or nothing, per-group replies, binding, and every key's PTTL."""

    def groups(self):
        # Whole-millisecond emission and drain intervals, so ties in retry_after are exact.
        return [
            Group("g1", "GCRA", Gcra(100 * NS_PER_MS, 10), ["GCRA", "10", "1s"]),
            Group("g2", "GCRA", Gcra(250 * NS_PER_MS, 2), ["GCRA", "4", "1s", "BURST", "2"]),
            Group("w1", "WINDOW", Window(6, 2000), ["WINDOW", "6", "2s"]),
            Group("w2", "WINDOW", Window(20, 60000), ["WINDOW", "20", "1m"]),
            Group("s1", "SLIDING", Sliding(5, 1000), ["SLIDING", "5", "1s"]),
            Group("l1", "LEAKY", Leaky(10, 1000, 4, 0, True), ["LEAKY", "10", "1s", "BURST", "4",
                                                                "NODELAY"], 6),
        ]

    def multi(self, groups, now_ms, cost, refund):
        if refund:
            replies = [g.refund(now_ms, cost)[:5] for g in groups]
            return combine(replies) + [replies]
        trial = [copy.deepcopy(g.model) for g in groups]
        saved = [g.model for g in groups]
        for g, t in zip(groups, trial):
            g.model = t
        replies = [g.take(now_ms, cost)[:5] for g in groups]
        if not all(r[0] == 1 for r in replies):
            for i, g in enumerate(groups):  # nothing is consumed; allowed groups only look
                g.model = saved[i]
                if replies[i][0] == 1:
                    g.model = copy.deepcopy(saved[i])
                    replies[i] = g.take(now_ms, 0)[:5]
                    g.model = saved[i]
        return combine(replies) + [replies]

    def test_limits_take_and_refund(self):
        rng = random.Random(11 + SEED_OFFSET)
        pool = self.groups()
        now_ms = 0
        for step in range(STEPS):
            now_ms += rng.choice([0, 0, 0, 1, 50, 99, 100, 250, 999, 3000])
            self.at(now_ms)
            groups = rng.sample(pool, rng.randint(1, 4))
            refund = rng.random() < 0.25
            n = rng.choice([0, 1, 1, 2, 3] if refund else [0, 1, 1, 1, 2, 3, 5, 11])
            context = "step %d, t=%d ms, %s %s %d" % (step, now_ms, [g.key for g in groups],
                                                      "REFUND" if refund else "COST", n)
            if len(groups) == 1 and rng.random() < 0.5:
                # The group's own command (REFUND n or COST n), full reply.
                g = groups[0]
                want = g.refund(now_ms, n) if refund else g.take(now_ms, n)
                args = [g.words[0] + ".TAKE", g.key] + g.words[1:]
                got = self.call(*args, "REFUND" if refund else "COST", n)
                self.assertEqual(got, want[:g.full_reply], context)
            else:
                want = self.multi(groups, now_ms, n, refund)
                args = ["LIMITS.TAKE", "REFUND" if refund else "COST", n]
                for g in groups:
                    args += ["LIMIT", g.key] + g.words
                self.assertEqual(self.call(*args), want, context)
            for g in groups:
                self.assertEqual(self.call("PTTL", g.key), g.pttl(now_ms), "PTTL %s after %s" %
                                 (g.key, context))


class _Shift:
    """Adapts a Gcra model (absolute ns) to run_model's PTTL check (ms from T0)."""

    def __init__(self, model):
        self.model = model
        self.capacity = model.capacity

    def take(self, now_ns, cost):
        return self.model.take(now_ns, cost)

    def pttl(self, now_ms):
        return self.model.pttl(T0_MS + now_ms)


if __name__ == "__main__":
    import unittest
    unittest.main()
