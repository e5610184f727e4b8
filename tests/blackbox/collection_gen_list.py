"""List commands for the collection differential test (test_collections.py).

A generator module: `commands(rng, keys)` returns one random command as (args, mode); see
collection_gen_hash.py for the modes. Lists are ordered, so every reply is compared byte for byte.
Keys `l1`/`l2` are lists most of the time; the shared keys mix in the other types, so WRONGTYPE
paths come up too. Indices and counts include negative, out of range and non-integer values.
"""

ELEMENTS = ["a", "b", "c", "x", "", "1", "-2", "longer element"]
INDICES = ["0", "1", "-1", "2", "-3", "5", "-9", "100", "x", "9223372036854775807",
           "-9223372036854775808"]
ENDS = ["LEFT", "RIGHT", "left", "Right", "UP"]


def _el(rng):
    return rng.choice(ELEMENTS)


def _idx(rng):
    return rng.choice(INDICES)


def _els(rng, lo=1, hi=4):
    return [_el(rng) for _ in range(rng.randint(lo, hi))]


def _lpos(rng, k):
    args = ["LPOS", k, _el(rng)]
    for _ in range(rng.randint(0, 2)):
        opt = rng.choice(["RANK", "COUNT", "MAXLEN"])
        args += [opt, rng.choice(["1", "2", "-1", "-2", "0", "3", "x", "-5"])]
    if rng.random() < 0.05:
        args.append("RANK")  # syntax error
    return args


def _lmpop(rng, k, other):
    keys = rng.sample([k, other, "nolist"], rng.randint(1, 3))
    args = ["LMPOP", str(len(keys))] + keys + [rng.choice(ENDS)]
    r = rng.random()
    if r < 0.4:
        args += ["COUNT", rng.choice(["1", "2", "5", "0", "x"])]
    elif r < 0.45:
        args[1] = rng.choice(["0", "x", "9"])
    return args


def commands(rng, keys):
    """One random list command over `keys` (shared with the other generators)."""
    k = rng.choice(keys + ["l1", "l2", "l1", "l2"])
    other = rng.choice(["l1", "l2", k])
    ops = [
        lambda: (["LPUSH", k] + _els(rng), "exact"),
        lambda: (["RPUSH", k] + _els(rng), "exact"),
        lambda: (["LPUSHX", k] + _els(rng, 1, 2), "exact"),
        lambda: (["RPUSHX", k] + _els(rng, 1, 2), "exact"),
        lambda: (["LPOP", k] + rng.choice([[], [], ["2"], ["0"], ["-1"], ["x"]]), "exact"),
        lambda: (["RPOP", k] + rng.choice([[], [], ["3"], ["0"]]), "exact"),
        lambda: (["LLEN", k], "exact"),
        lambda: (["LINDEX", k, _idx(rng)], "exact"),
        lambda: (["LSET", k, _idx(rng), _el(rng)], "exact"),
        lambda: (["LRANGE", k, _idx(rng), _idx(rng)], "exact"),
        lambda: (["LRANGE", k, "0", "-1"], "exact"),
        lambda: (["LTRIM", k, rng.choice(["0", "1", "-3"]), rng.choice(["-1", "-2", "3", "x"])],
                 "exact"),
        lambda: (["LREM", k, rng.choice(["0", "1", "-1", "2", "-2", "x"]), _el(rng)], "exact"),
        lambda: (["LINSERT", k, rng.choice(["BEFORE", "after", "middle"]), _el(rng), _el(rng)],
                 "exact"),
        lambda: (_lpos(rng, k), "exact"),
        lambda: (["LMOVE", k, other, rng.choice(ENDS[:4]), rng.choice(ENDS)], "exact"),
        lambda: (["RPOPLPUSH", k, other], "exact"),
        lambda: (_lmpop(rng, k, other), "exact"),
        lambda: (["OBJECT", "ENCODING", k], "exact"),
        lambda: (["LPUSH", k], "exact"),  # arity error
    ]
    return rng.choice(ops)()
