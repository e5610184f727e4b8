"""Cluster mode's client side, black-box: the data dir's mode marker (a standalone data dir
refused by a cluster node and the reverse, the offline conversion and its refusal of keys in a
db other than 0), and the audit of what cluster clients read to route (COMMAND INFO's key
positions, COMMAND GETKEYS / GETKEYSANDFLAGS) side by side with redis-server 7.0.15.

The routing rules themselves (-MOVED, -ASK, ...) are tested in-process against a fake slot map
(tests/server/test_cluster_redirect.cc) and with real cluster clients in
test_cluster_clients.py once a Sluice node can join a cluster.
"""

import os
import subprocess
import unittest

from harness import IS_REDIS, BlackboxTestCase, Client, RespError, Server, server_binary
from cluster_harness import wait_until
from test_transactions import BesideReference


def convert(datadir, mode):
    """Runs the offline conversion; returns (exit code, stdout, stderr)."""
    proc = subprocess.run([server_binary(), "--convert-data-dir", mode, "--dir", datadir],
                          capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


@unittest.skipIf(IS_REDIS, "Sluice's data dir")
class DataDirModeTest(BlackboxTestCase):
    def start_in(self, server, cluster):
        server.options["cluster-enabled"] = "yes" if cluster else "no"
        return server.start()

    def refused(self, server, cluster):
        """Starts `server` in the mode and expects exit code 1; returns its stderr."""
        server.options["cluster-enabled"] = "yes" if cluster else "no"
        server.spawn()
        self.assertEqual(server.wait_exit(), 1, server.log())
        return server.stderr()

    def new_server(self):
        server = Server()
        self.addCleanup(server.stop)
        return server

    def test_standalone_data_dir_refused_in_cluster_mode_then_converted(self):
        s = self.new_server()
        self.start_in(s, cluster=False)
        with Client(s.port) as c:
            self.assertEqual(c.call("SET", "k", "v"), "OK")
        self.assertEqual(s.terminate(), 0)
        err = self.refused(s, cluster=True)
        self.assertIn("data directory %s holds standalone data and cannot be opened in cluster "
                      "mode (cluster-enabled yes); convert it offline first: sluice-server "
                      "--convert-data-dir cluster --dir %s" % (s.datadir, s.datadir), err)
        rc, out, err = convert(s.datadir, "cluster")
        self.assertEqual(rc, 0, err)
        self.assertEqual(out, "converting data directory %s: standalone -> cluster (1 keys in "
                         "db 0)\nconverted: %s is now a cluster data dir\n"
                         % (s.datadir, s.datadir))
        self.start_in(s, cluster=True)
        with Client(s.port) as c:
            # A lone node serves its keys once it owns every slot and its state is ok.
            self.assertEqual(c.call("GET", "k"), "CLUSTERDOWN Hash slot not served")
            self.assertEqual(c.call("CLUSTER", "ADDSLOTSRANGE", "0", "16383"), "OK")
            wait_until(lambda: b"cluster_state:ok" in c.call("CLUSTER", "INFO"), 30,
                       "cluster_state:ok")
            self.assertEqual(c.call("GET", "k"), b"v")
        self.assertEqual(s.terminate(), 0)
        err = self.refused(s, cluster=False)
        self.assertIn("holds cluster data and cannot be opened in standalone mode "
                      "(cluster-enabled no)", err)
        rc, out, _ = convert(s.datadir, "cluster")
        self.assertEqual((rc, out), (0, "data directory %s is already a cluster data dir\n"
                                     % s.datadir))
        rc, _, err = convert(s.datadir, "standalone")
        self.assertEqual(rc, 0, err)
        self.start_in(s, cluster=False)

    def test_new_cluster_data_dir_refused_standalone(self):
        s = self.new_server()
        self.start_in(s, cluster=True)
        self.assertEqual(s.terminate(), 0)
        self.assertIn("holds cluster data", self.refused(s, cluster=False))

    def test_conversion_refuses_keys_outside_db_0(self):
        s = self.new_server()
        self.start_in(s, cluster=False)
        with Client(s.port) as c:
            self.assertEqual(c.call("SELECT", "3"), "OK")
            self.assertEqual(c.call("MSET", "a", "1", "b", "2"), "OK")
        self.assertEqual(s.terminate(), 0)
        rc, _, err = convert(s.datadir, "cluster")
        self.assertEqual(rc, 1)
        self.assertIn("refusing to convert %s to cluster: db 3 holds 2 keys, and a cluster node "
                      "serves db 0 only (move or delete them first)" % s.datadir, err)
        self.start_in(s, cluster=False)  # still standalone

    def test_conversion_usage(self):
        server_binary()  # skips when SLUICE_SERVER is not set
        rc, _, err = convert("", "cluster")
        self.assertEqual(rc, 1)
        self.assertIn("usage: sluice-server --convert-data-dir cluster|standalone --dir D", err)


# Representative argument lists: what a cluster client asks COMMAND GETKEYS about.
GETKEYS_CASES = [
    ["GET", "k"], ["SET", "k", "v", "EX", "10"], ["MSET", "a", "1", "b", "2"],
    ["MGET", "a", "b", "c"], ["DEL", "a", "b"], ["RENAME", "a", "b"], ["COPY", "a", "b"],
    ["LMOVE", "a", "b", "LEFT", "RIGHT"], ["BLMOVE", "a", "b", "LEFT", "RIGHT", "0"],
    ["BLPOP", "a", "b", "0"], ["BZPOPMIN", "a", "b", "0"], ["LMPOP", "2", "a", "b", "LEFT"],
    ["BLMPOP", "0", "2", "a", "b", "LEFT"], ["ZMPOP", "2", "a", "b", "MIN"],
    ["ZUNIONSTORE", "d", "2", "a", "b", "WEIGHTS", "1", "2"], ["ZUNION", "2", "a", "b"],
    ["ZINTERCARD", "2", "a", "b"], ["SINTERCARD", "2", "a", "b", "LIMIT", "1"],
    ["ZRANGESTORE", "d", "s", "0", "-1"], ["ZDIFFSTORE", "d", "2", "a", "b"],
    ["SINTERSTORE", "d", "a", "b"], ["SMOVE", "a", "b", "m"], ["BITOP", "AND", "d", "a", "b"],
    ["PFMERGE", "d", "a", "b"], ["PFCOUNT", "a", "b"], ["EVAL", "return 1", "2", "a", "b", "x"],
    ["EVALSHA", "a" * 40, "1", "a"], ["EVAL_RO", "return 1", "1", "a"],
    ["FCALL", "f", "2", "a", "b"], ["FCALL_RO", "f", "1", "a"],
    ["XREAD", "COUNT", "1", "STREAMS", "a", "b", "0", "0"],
    ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "a", "0"], ["XADD", "s", "*", "f", "v"],
    ["GEORADIUS", "g", "0", "0", "1", "km", "STORE", "d"],
    ["GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"],
    ["SORT", "k", "STORE", "d"], ["SORT_RO", "k"], ["OBJECT", "ENCODING", "k"],
    ["MEMORY", "USAGE", "k"], ["XINFO", "STREAM", "s"], ["XGROUP", "CREATE", "s", "g", "$"],
    ["MIGRATE", "h", "1", "k", "0", "10"], ["MIGRATE", "h", "1", "", "0", "10", "KEYS", "a", "b"],
    ["WATCH", "a", "b"], ["EXISTS", "a", "b"], ["TOUCH", "a"], ["UNLINK", "a", "b"],
    ["SPUBLISH", "ch", "m"], ["SSUBSCRIBE", "a", "b"], ["BITFIELD_RO", "k", "GET", "u8", "0"],
    ["LCS", "a", "b"], ["GETEX", "k"], ["GETDEL", "k"], ["RESTORE", "k", "0", "x"],
    ["EXPIRE", "k", "10"], ["HSET", "h", "f", "v"], ["SDIFF", "a", "b"], ["ZADD", "z", "1", "m"],
]


@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class KeySpecAuditTest(BesideReference):
    """What cluster clients read to route, for every command both servers know."""
    maxDiff = None

    def both(self, *args):
        out = []
        for port in (self.sluice.port, self.redis.port):
            with Client(port) as c:
                out.append(c.call(*args))
        return out

    def info_by_name(self, port):
        with Client(port) as c:
            entries = c.call("COMMAND", "INFO")
        table = {}

        def add(entry):
            name = entry[0].decode().lower()
            flags = sorted(f for f in entry[2] if f == "movablekeys")
            table[name] = (entry[1], flags, entry[3], entry[4], entry[5])
            for sub in entry[9]:
                add(sub)
        for e in entries:
            add(e)
        return table

    def test_key_positions_of_every_common_command(self):
        sluice = self.info_by_name(self.sluice.port)
        redis = self.info_by_name(self.redis.port)
        diffs = {}
        for name in sorted(set(sluice) & set(redis)):
            if sluice[name] != redis[name]:
                diffs[name] = {"sluice": sluice[name], "redis": redis[name]}
        self.assertEqual(diffs, {})

    def test_getkeys_on_representative_arguments(self):
        diffs = []
        for case in GETKEYS_CASES:
            sluice, redis = self.both("COMMAND", "GETKEYS", *case)
            if sluice != redis:
                diffs.append((case, sluice, redis))
        self.assertEqual(diffs, [])

    def test_getkeysandflags_keys_and_shape(self):
        diffs = []
        for case in GETKEYS_CASES:
            sluice, redis = self.both("COMMAND", "GETKEYSANDFLAGS", *case)
            keys = [[pair[0] for pair in r] if isinstance(r, list) else r
                    for r in (sluice, redis)]
            if keys[0] != keys[1]:
                diffs.append((case, sluice, redis))
        self.assertEqual(diffs, [])
        self.assertEqual(*self.both("COMMAND", "GETKEYSANDFLAGS", "GET", "k"))
        # The flags themselves are Redis's only where Sluice has the command's key specs (GET's
        # ACL key permissions give the same); LMOVE's "RW access delete" / "RW insert" are
        # shown as "RW access update" / "RW update" (docs/server.md, "Cluster mode: routing").
        self.assertEqual(*self.both("COMMAND", "GETKEYSANDFLAGS", "PING"))
        self.assertEqual(*self.both("COMMAND", "GETKEYSANDFLAGS", "NOSUCH", "x"))

    def test_cluster_commands_outside_cluster_mode(self):
        for cmd in ("ASKING", "READONLY", "READWRITE"):
            sluice, redis = self.both(cmd)
            self.assertIsInstance(redis, RespError)
            self.assertEqual(sluice, redis)
        self.assertEqual(*self.both("COMMAND", "INFO", "asking", "readonly", "readwrite"))


if __name__ == "__main__":
    unittest.main()
