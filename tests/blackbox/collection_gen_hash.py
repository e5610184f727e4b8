"""Hash commands for the collection differential test (test_collections.py).

A generator module: `commands(rng, keys)` returns one random command as (args, mode), where mode
says how test_collections.py compares Sluice's raw reply with redis-server's:
  "exact"  byte for byte;   "sorted"  the aggregate's elements sorted (order is Redis's choice);
  "pairs"  a flat field/value array or map compared as sorted pairs;   "shape"  only the reply's
  type and length (random picks).
Small hashes keep Redis's listpack order (insertion order), which Sluice keeps too, so their
reads are exact; `hbig` gets long values (Redis converts it to a hashtable: unordered).
"""

FIELDS = ["f%d" % i for i in range(12)] + ["n1", "n2", "x"]
VALUES = ["v", "1", "-7", "3.5", "", "abc", "10", "9223372036854775807", "1e3", " 2"]


def _field(rng):
    return rng.choice(FIELDS)


def _value(rng):
    return rng.choice(VALUES)


def commands(rng, keys):
    """One random hash command over `keys` (shared with the other generators)."""
    k = rng.choice(keys + ["h1", "h2", "h1"])
    r = rng.random()
    if r < 0.04:
        return ["HSET", "hbig", _field(rng), "L" * rng.choice([10, 65, 70])], "exact"
    if r < 0.07:
        cmd = rng.choice(["HGETALL", "HKEYS", "HVALS"])
        return [cmd, "hbig"], "pairs" if cmd == "HGETALL" else "sorted"
    ops = [
        lambda: (["HSET", k] + sum(([_field(rng), _value(rng)]
                                    for _ in range(rng.randint(1, 3))), []), "exact"),
        lambda: (["HMSET", k, _field(rng), _value(rng)], "exact"),
        lambda: (["HSETNX", k, _field(rng), _value(rng)], "exact"),
        lambda: (["HGET", k, _field(rng)], "exact"),
        lambda: (["HMGET", k, _field(rng), _field(rng)], "exact"),
        lambda: (["HGETALL", k], "exact"),
        lambda: (["HKEYS", k], "exact"),
        lambda: (["HVALS", k], "exact"),
        lambda: (["HDEL", k, _field(rng), _field(rng)], "exact"),
        lambda: (["HLEN", k], "exact"),
        lambda: (["HEXISTS", k, _field(rng)], "exact"),
        lambda: (["HSTRLEN", k, _field(rng)], "exact"),
        lambda: (["HINCRBY", k, rng.choice(["n1", "n2", "f1"]),
                  rng.choice(["1", "-5", "100", "x", "9223372036854775807"])], "exact"),
        lambda: (["HINCRBYFLOAT", k, rng.choice(["n1", "n2", "f2"]),
                  rng.choice(["1.5", "-0.25", "1e3", "abc", "3"])], "exact"),
        lambda: (["HRANDFIELD", k] + rng.choice([[], ["2"], ["-3"], ["5", "WITHVALUES"],
                                                 ["0"], ["x"]]), "shape"),
        lambda: (["HSCAN", k, "0"] + rng.choice([[], ["MATCH", "f*"], ["COUNT", "2"]]),
                 "exact"),
        lambda: (["OBJECT", "ENCODING", k], "exact"),
        lambda: (["HSET", k, _field(rng)], "exact"),  # arity error
    ]
    return rng.choice(ops)()
