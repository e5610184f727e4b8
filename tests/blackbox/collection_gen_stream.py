"""Stream commands for the collection differential test (test_collections.py); see
collection_gen_hash.py for the generator contract. IDs are explicit or `<ms>-*` over a small
range (never `*`, which reads the clock), so both servers take the same IDs and refuse the same
ones; trims exact and approximate (Sluice keeps Redis's node boundaries), deletes, ranges with
exclusive bounds and COUNT, XREAD and XSETID. Every reply is compared byte for byte.
"""

FIELDS = ["f", "g", "name", "1", "value-that-is-longer"]
VALUES = ["v", "1", "-7", "9999999999", "x" * 70, ""]


def _id(rng):
    ms = rng.randint(0, 40)
    return rng.choice(["%d-%d" % (ms, rng.randint(0, 3)), "%d" % ms, "%d-*" % ms])


def _bound(rng):
    ms = rng.randint(0, 40)
    return rng.choice(["-", "+", "%d" % ms, "%d-%d" % (ms, rng.randint(0, 3)),
                       "(%d-%d" % (ms, rng.randint(0, 3)), "(%d" % ms])


def _fields(rng):
    out = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        out += [rng.choice(FIELDS), rng.choice(VALUES)]
    return out


def _trim(rng):
    how = rng.choice(["", "=", "~"])
    spec = ["MAXLEN"] + ([how] if how else []) + [str(rng.randint(0, 12))]
    if rng.random() < 0.4:
        spec = ["MINID"] + ([how] if how else []) + [_id(rng).replace("-*", "")]
    if how == "~" and rng.random() < 0.3:
        spec += ["LIMIT", str(rng.randint(0, 5))]
    return spec


def commands(rng, keys):
    k = rng.choice(keys + ["x1", "x2", "x1", "x1"])
    ops = [
        lambda: (["XADD", k] + _trim(rng) * (rng.random() < 0.3) + [_id(rng)] + _fields(rng),
                 "exact"),
        lambda: (["XADD", k, "NOMKSTREAM", _id(rng)] + _fields(rng), "exact"),
        lambda: (["XRANGE", k, _bound(rng), _bound(rng)] +
                 rng.choice([[], ["COUNT", str(rng.randint(-1, 4))]]), "exact"),
        lambda: (["XREVRANGE", k, _bound(rng), _bound(rng)] +
                 rng.choice([[], ["COUNT", str(rng.randint(0, 4))]]), "exact"),
        lambda: (["XLEN", k], "exact"),
        lambda: (["XDEL", k] + [_id(rng).replace("-*", "") for _ in range(rng.randint(1, 3))],
                 "exact"),
        lambda: (["XTRIM", k] + _trim(rng), "exact"),
        lambda: (["XREAD", "COUNT", str(rng.randint(1, 3)), "STREAMS", k, "x2",
                  _id(rng).replace("-*", ""), rng.choice(["0", "$", "5-1"])], "exact"),
        lambda: (["XSETID", k, "%d-%d" % (rng.randint(30, 60), rng.randint(0, 2))], "exact"),
        lambda: (["TYPE", k], "exact"),
    ]
    return rng.choice(ops)()
