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


if __name__ == "__main__":
    unittest.main()
