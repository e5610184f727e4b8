"""Sorted set commands for the collection differential test (test_collections.py).

A generator module: `commands(rng, keys)` returns one random command as (args, mode); see
collection_gen_hash.py for the modes. Sorted sets have one order (score, then member bytes), so
every reply is compared byte for byte. Scores include ties, negatives, fractions, infinities and
bad floats; `zbig` gets a long member (Redis converts it to a skiplist).
"""

MEMBERS = ["a", "b", "c", "m1", "m2", "x", "", "zz"]
SCORES = ["0", "1", "-1", "2.5", "1e3", "-0.125", "inf", "-inf", "+inf", "3", "x", "nan"]
BOUNDS = ["-inf", "+inf", "0", "(0", "1", "(1", "2.5", "(2.5", "-1", "1e3", "x", "(x"]
RANKS = ["0", "1", "-1", "2", "-2", "5", "-10", "x"]
FLAGS = ["NX", "XX", "GT", "LT", "CH", "INCR"]


def _score(rng):
    return rng.choice(SCORES)


def _member(rng):
    return rng.choice(MEMBERS)


def _zadd(rng, k):
    flags = rng.sample(FLAGS, rng.choice([0, 0, 1, 1, 2]))
    pairs = []
    for _ in range(1 if "INCR" in flags and rng.random() < 0.9 else rng.randint(1, 3)):
        pairs += [_score(rng), _member(rng)]
    return ["ZADD", k] + flags + pairs


def _zrange(rng, k):
    by = rng.choice(["", "", "BYSCORE"])
    rev = rng.random() < 0.4
    lo, hi = (rng.choice(BOUNDS), rng.choice(BOUNDS)) if by else (rng.choice(RANKS),
                                                                  rng.choice(RANKS))
    args = ["ZRANGE", k, lo, hi] + ([by] if by else []) + (["REV"] if rev else [])
    if rng.random() < 0.3:
        args += ["LIMIT", rng.choice(["0", "1", "-1"]), rng.choice(["1", "2", "-1", "0"])]
    if rng.random() < 0.5:
        args.append("WITHSCORES")
    return args


def _byscore(rng, k, cmd):
    args = [cmd, k, rng.choice(BOUNDS), rng.choice(BOUNDS)]
    if rng.random() < 0.5:
        args.append("WITHSCORES")
    if rng.random() < 0.3:
        args += ["LIMIT", rng.choice(["0", "1", "-1"]), rng.choice(["1", "3", "-1"])]
    return args


def commands(rng, keys):
    """One random sorted set command over `keys` (shared with the other generators)."""
    k = rng.choice(keys + ["z1", "z2", "z1"])
    if rng.random() < 0.03:
        return ["ZADD", "zbig", _score(rng), "L" * rng.choice([10, 65, 70])], "exact"
    ops = [
        lambda: (_zadd(rng, k), "exact"),
        lambda: (_zadd(rng, k), "exact"),
        lambda: (["ZINCRBY", k, _score(rng), _member(rng)], "exact"),
        lambda: (["ZREM", k, _member(rng), _member(rng)], "exact"),
        lambda: (["ZCARD", k], "exact"),
        lambda: (["ZSCORE", k, _member(rng)], "exact"),
        lambda: (["ZCOUNT", k, rng.choice(BOUNDS), rng.choice(BOUNDS)], "exact"),
        lambda: (_zrange(rng, k), "exact"),
        lambda: (["ZREVRANGE", k, rng.choice(RANKS), rng.choice(RANKS)]
                 + rng.choice([[], ["WITHSCORES"]]), "exact"),
        lambda: (_byscore(rng, k, "ZRANGEBYSCORE"), "exact"),
        lambda: (_byscore(rng, k, "ZREVRANGEBYSCORE"), "exact"),
        lambda: (["ZREMRANGEBYRANK", k, rng.choice(RANKS), rng.choice(RANKS)], "exact"),
        lambda: (["ZREMRANGEBYSCORE", k, rng.choice(BOUNDS), rng.choice(BOUNDS)], "exact"),
        lambda: (["OBJECT", "ENCODING", rng.choice([k, "zbig"])], "exact"),
        lambda: (["ZADD", k, "1"], "exact"),  # arity error
    ]
    return rng.choice(ops)()
