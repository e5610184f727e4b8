"""Set commands for the collection differential test (test_collections.py); see
collection_gen_hash.py for the generator contract. Integer-only sets are Redis intsets, which
reply in numeric order (Sluice does too); sets with strings are hashtables, whose order is
Redis's own, so whole-set replies are compared sorted.
"""

MEMBERS = ["1", "2", "3", "10", "-4", "a", "b", "c", "zz", "007"]


def _member(rng):
    return rng.choice(MEMBERS)


def commands(rng, keys):
    k = rng.choice(keys + ["s1", "s2", "s1"])
    k2 = rng.choice(keys + ["s1", "s2", "s3"])
    many = [rng.choice(keys + ["s1", "s2", "s3"]) for _ in range(rng.randint(1, 3))]
    ops = [
        lambda: (["SADD", k] + [_member(rng) for _ in range(rng.randint(1, 3))], "exact"),
        lambda: (["SREM", k, _member(rng), _member(rng)], "exact"),
        lambda: (["SISMEMBER", k, _member(rng)], "exact"),
        lambda: (["SMISMEMBER", k, _member(rng), _member(rng)], "exact"),
        lambda: (["SMEMBERS", k], "sorted"),
        lambda: (["SCARD", k], "exact"),
        lambda: (["SRANDMEMBER", k] + rng.choice([[], ["2"], ["-3"], ["0"], ["x"]]), "shape"),
        lambda: (["SPOP", k, rng.choice(["1000", "0", "-1"])], "sorted"),
        lambda: (["SMOVE", k, k2, _member(rng)], "exact"),
        lambda: ([rng.choice(["SINTER", "SUNION", "SDIFF"])] + many, "sorted"),
        lambda: ([rng.choice(["SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"]), k2] + many,
                 "exact"),
        lambda: (["SINTERCARD", str(len(many))] + many + rng.choice([[], ["LIMIT", "1"]]),
                 "exact"),
        lambda: (["SSCAN", k, "0", "COUNT", "1000"], "sorted"),
        lambda: (["OBJECT", "ENCODING", k], "exact"),
    ]
    return rng.choice(ops)()
