"""INFO commandstats, errorstats and cpu beside a real redis-server 7.0.15.

The same command sequence (plain calls, arity and unknown-command errors, a WRONGTYPE failure,
subcommands, MULTI/EXEC with a queued error, EVAL with redis.call and redis.pcall errors, an
ACL refusal, CONFIG RESETSTAT) goes to both servers; each counter of every `cmdstat_` line
(calls, rejected_calls, failed_calls: usec is wall time, only checked for shape) and every
`errorstat_` line must be equal. The cpu section must have Redis's fields.
"""

import re
import unittest

from harness import Client
from test_pubsub import BesideRedis

SEQUENCE = [
    ["SET", "k", "v"], ["GET", "k"], ["GET"], ["LPUSH", "k", "x"], ["NOSUCHCOMMAND", "a"],
    ["CONFIG", "GET", "port"], ["CONFIG", "NOSUCH"], ["CLIENT", "ID"],
    ["MULTI"], ["SET", "a", "1"], ["INCR", "k"], ["EXEC"],
    ["MULTI"], ["SET", "a"], ["EXEC"],
    ["EVAL", "redis.call('set', KEYS[1], 'x') return redis.pcall('incr', KEYS[1])", "1", "b"],
    ["EVAL", "return redis.call('nosuch')", "0"],
    ["ACL", "SETUSER", "limited", "on", "nopass", "+get", "~*"],
    ["AUTH", "limited", "x"], ["SET", "k", "v"], ["GET", "k"], ["AUTH", "default", "x"],
]

STAT_LINE = re.compile(r"^cmdstat_([^:]+):calls=(\d+),usec=(\d+),usec_per_call=(\d+\.\d\d),"
                       r"rejected_calls=(\d+),failed_calls=(\d+)$")


def counters(c, section):
    text = c.call("INFO", section).decode()
    out = {}
    for line in text.splitlines():
        if line.startswith("cmdstat_"):
            m = STAT_LINE.match(line)
            assert m, line
            out[m.group(1)] = (int(m.group(2)), int(m.group(5)), int(m.group(6)))
        elif line.startswith("errorstat_"):
            name, value = line.split(":", 1)
            out[name] = value
    return out


class InfoStatsTest(BesideRedis):
    def run_sequence(self, port):
        with Client(port) as c:
            self.assertEqual(c.call("CONFIG", "RESETSTAT"), "OK")
            for cmd in SEQUENCE:
                c.call(*cmd)
            return counters(c, "commandstats"), counters(c, "errorstats")

    def test_commandstats_and_errorstats_as_redis(self):
        want = self.run_sequence(self.redis.port)
        got = self.run_sequence(self.sluice.port)
        self.assertEqual(got[0], want[0])
        self.assertEqual(got[1], want[1])

    def test_default_sections_and_cpu(self):
        for server in (self.redis, self.sluice):
            with Client(server.port) as c:
                default = c.call("INFO").decode()
                self.assertNotIn("# Commandstats", default)
                self.assertIn("# Errorstats", default)
                self.assertIn("# Commandstats", c.call("INFO", "everything").decode())
                cpu = c.call("INFO", "cpu").decode().split("\r\n")
                fields = [line.split(":")[0] for line in cpu[1:] if line]
                self.assertEqual(fields, [
                    "used_cpu_sys", "used_cpu_user", "used_cpu_sys_children",
                    "used_cpu_user_children", "used_cpu_sys_main_thread",
                    "used_cpu_user_main_thread"], server)
                for line in cpu[1:]:
                    if line:
                        self.assertRegex(line, r"^[a-z_]+:\d+\.\d{6}$")


# LATENCY HISTOGRAM's bucket keys as Redis's HdrHistogram (2 significant digits) reports them:
# the highest value equivalent to 1024 ns * 2^k, in microseconds (1, 2, 4, 8, 16, 33, 66, ...).
HISTOGRAM_KEYS = [(1024 * 2 ** k + 2 ** (k + 3) - 1) // 1000 for k in range(21)]
PERCENTILES_LINE = re.compile(r"^latency_percentiles_usec_([^:]+):(p[0-9.]+=\d+\.\d{3},?)+$")


def histograms(c, *names):
    """LATENCY HISTOGRAM names...: {command: (calls, [(usec, cumulative count), ...])}."""
    reply = c.call("LATENCY", "HISTOGRAM", *names)
    out = {}
    for name, body in zip(reply[::2], reply[1::2]):
        fields = dict(zip(body[::2], body[1::2]))
        buckets = fields[b"histogram_usec"]
        out[name.decode()] = (fields[b"calls"], list(zip(buckets[::2], buckets[1::2])))
    return out


def latency_lines(c):
    text = c.call("INFO", "latencystats").decode()
    lines = [line for line in text.split("\r\n") if line]
    assert lines[0] == "# Latencystats", lines
    return lines[1:]


class LatencyHistogramTest(BesideRedis):
    """LATENCY HISTOGRAM, INFO latencystats, latency-tracking(-info-percentiles) and CONFIG
    RESETSTAT as Redis 7.0: the same calls, commands and bucket keys (durations differ)."""

    def scenario(self, port):
        with Client(port) as c:
            self.assertEqual(c.call("CONFIG", "SET", "latency-tracking", "yes"), "OK")
            self.assertEqual(c.call("CONFIG", "RESETSTAT"), "OK")
            for _ in range(5):
                c.call("SET", "k", "v")
            for _ in range(3):
                c.call("GET", "k")
            c.call("CONFIG", "GET", "port")
            named = histograms(c, "set", "GET", "config", "nosuchcommand", "client|id")
            everything = histograms(c)
            for calls, buckets in list(named.values()) + list(everything.values()):
                self.assertEqual(buckets[-1][1], calls, buckets)
                self.assertEqual([n for _, n in buckets], sorted(n for _, n in buckets))
                for usec, _ in buckets:
                    self.assertIn(usec, HISTOGRAM_KEYS)
            lines = latency_lines(c)
            for line in lines:
                self.assertRegex(line, PERCENTILES_LINE)
            self.assertEqual(c.call("CONFIG", "SET", "latency-tracking-info-percentiles",
                                    "0 50 99.9 100"), "OK")
            custom = [line.split(":")[1].split(",") for line in latency_lines(c)]
            prefixes = {tuple(p.split("=")[0] for p in f) for f in custom}
            self.assertEqual(c.call("CONFIG", "SET", "latency-tracking-info-percentiles",
                                    "50 99 99.9"), "OK")
            # Off: nothing recorded, INFO's section empty.
            self.assertEqual(c.call("CONFIG", "SET", "latency-tracking", "no"), "OK")
            self.assertEqual(c.call("CONFIG", "RESETSTAT"), "OK")
            c.call("SET", "k", "v")
            off = (histograms(c, "set"), latency_lines(c))
            self.assertEqual(c.call("CONFIG", "SET", "latency-tracking", "yes"), "OK")
            return ({k: v[0] for k, v in named.items()}, sorted(everything),
                    sorted(line.split(":")[0] for line in lines), prefixes, off)

    def test_latency_histogram_as_redis(self):
        got = self.scenario(self.sluice.port)
        want = self.scenario(self.redis.port)
        self.assertEqual(got, want)
        self.assertEqual(got[0], {"set": 5, "get": 3, "config|get": 1,
                                  "config|resetstat": 1})
        self.assertEqual(got[3], {("p0", "p50", "p99.9", "p100")})


if __name__ == "__main__":
    unittest.main()
