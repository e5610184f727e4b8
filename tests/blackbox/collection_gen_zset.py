"""Sorted set commands for the collection differential test (test_collections.py).

A generator module: `commands(rng, keys)` returns one random command as (args, mode); see
collection_gen_hash.py for the modes. Sorted sets have one order (score, then member bytes), so
every reply is compared byte for byte. Scores include ties, negatives, fractions, infinities and
bad floats; `zbig` gets a long member (Redis converts it to a skiplist). Lex ranges walk the set
in score order (meaningful for equal scores; `zlex` has only score 0), and they never touch
`zbig`, whose skiplist Redis searches differently when scores differ. `zs` is a plain set, an
input of ZUNION/ZINTER/ZDIFF. ZRANDMEMBER is compared by shape, ZSCAN of `zbig` sorted.
"""

MEMBERS = ["a", "b", "c", "m1", "m2", "x", "", "zz"]
SCORES = ["0", "1", "-1", "2.5", "1e3", "-0.125", "inf", "-inf", "+inf", "3", "x", "nan", "-0"]
BOUNDS = ["-inf", "+inf", "0", "(0", "1", "(1", "2.5", "(2.5", "-1", "1e3", "x", "(x"]
RANKS = ["0", "1", "-1", "2", "-2", "5", "-10", "x"]
FLAGS = ["NX", "XX", "GT", "LT", "CH", "INCR"]
LEX = ["-", "+", "[a", "(a", "[b", "(m1", "[m2", "[x", "(zz", "[", "(", "a", "++", "[c"]
COUNTS = ["0", "1", "2", "-1", "5", "x"]
WEIGHTS = ["1", "2", "-1", "0", "inf", "0.5", "x"]


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


def _range_bounds(rng, by):
    if by == "BYSCORE":
        return [rng.choice(BOUNDS), rng.choice(BOUNDS)]
    if by == "BYLEX":
        return [rng.choice(LEX), rng.choice(LEX)]
    return [rng.choice(RANKS), rng.choice(RANKS)]


def _zrange(rng, k, store=False):
    by = rng.choice(["", "", "BYSCORE", "BYLEX"])
    rev = rng.random() < 0.4
    head = ["ZRANGESTORE", rng.choice(["zd", k]), k] if store else ["ZRANGE", k]
    args = head + _range_bounds(rng, by) + ([by] if by else []) + (["REV"] if rev else [])
    if rng.random() < 0.3:
        args += ["LIMIT", rng.choice(["0", "1", "-1"]), rng.choice(["1", "2", "-1", "0"])]
    if rng.random() < (0.05 if store else 0.4):
        args.append("WITHSCORES")
    return args


def _bylex(rng, k, cmd):
    args = [cmd, k, rng.choice(LEX), rng.choice(LEX)]
    if rng.random() < 0.3:
        args += ["LIMIT", rng.choice(["0", "1", "-1"]), rng.choice(["1", "3", "-1"])]
    if rng.random() < 0.05:
        args.append("WITHSCORES")
    return args


def _numkeys(rng, keys):
    n = rng.choice([1, 2, 2, 3])
    picked = [rng.choice(keys) for _ in range(n)]
    shown = rng.choice([str(n)] * 8 + ["0", str(n + 5), "x"])
    return shown, picked


def _algebra(rng, k, keys):
    cmd = rng.choice(["ZUNION", "ZINTER", "ZDIFF", "ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE",
                      "ZINTERCARD"])
    n, picked = _numkeys(rng, keys)
    args = [cmd] + ([rng.choice(["zd", k])] if cmd.endswith("STORE") else []) + [n] + picked
    if cmd == "ZINTERCARD":
        if rng.random() < 0.4:
            args += ["LIMIT", rng.choice(["0", "1", "2", "-1", "x"])]
        return args
    if rng.random() < 0.4:
        args += ["WEIGHTS"] + [rng.choice(WEIGHTS) for _ in picked]
    if rng.random() < 0.3:
        args += ["AGGREGATE", rng.choice(["SUM", "MIN", "MAX", "avg"])]
    if rng.random() < 0.5 and not cmd.endswith("STORE") or rng.random() < 0.03:
        args.append("WITHSCORES")
    return args


def _zmpop(rng, keys):
    n, picked = _numkeys(rng, keys)
    args = ["ZMPOP", n] + picked + [rng.choice(["MIN", "MAX", "MIN", "MAX", "mid"])]
    if rng.random() < 0.5:
        args += ["COUNT", rng.choice(COUNTS)]
    return args


def _zrandmember(rng, k):
    args = ["ZRANDMEMBER", rng.choice([k, "zbig"])]
    if rng.random() < 0.7:
        args.append(rng.choice(COUNTS + ["-3"]))
        if rng.random() < 0.5:
            args.append(rng.choice(["WITHSCORES", "WITHSCORES", "x"]))
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
    k = rng.choice(keys + ["z1", "z2", "z1", "zlex"])
    inputs = keys + ["z1", "z2", "zs", "zlex", "nokey"]
    if rng.random() < 0.03:
        return ["ZADD", "zbig", _score(rng), "L" * rng.choice([10, 65, 70])], "exact"
    if rng.random() < 0.04:
        return ["SADD", "zs", _member(rng), _member(rng)], "exact"
    if rng.random() < 0.06:
        return ["ZADD", "zlex", "0", _member(rng)], "exact"
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
        lambda: (["ZLEXCOUNT", k, rng.choice(LEX), rng.choice(LEX)], "exact"),
        lambda: (_bylex(rng, k, "ZRANGEBYLEX"), "exact"),
        lambda: (_bylex(rng, k, "ZREVRANGEBYLEX"), "exact"),
        lambda: (["ZREMRANGEBYLEX", k, rng.choice(LEX), rng.choice(LEX)], "exact"),
        lambda: ([rng.choice(["ZRANK", "ZREVRANK"]), k, _member(rng)], "exact"),
        lambda: (["ZMSCORE", k] + [_member(rng) for _ in range(rng.randint(1, 3))], "exact"),
        lambda: ([rng.choice(["ZPOPMIN", "ZPOPMAX"]), k]
                 + rng.choice([[], [], [rng.choice(COUNTS)], ["1", "2"]]), "exact"),
        lambda: (_zmpop(rng, inputs), "exact"),
        lambda: (_zrandmember(rng, k), "shape"),
        lambda: (["ZSCAN", k, "0"] + rng.choice([[], ["MATCH", "m*"], ["COUNT", "0"]]),
                 "exact"),
        lambda: (["ZSCAN", "zbig", "0", "COUNT", "1000"], "sorted"),
        lambda: (_zrange(rng, k, store=True), "exact"),
        lambda: (_algebra(rng, k, inputs), "exact"),
        lambda: (_algebra(rng, k, inputs), "exact"),
    ]
    return rng.choice(ops)()
