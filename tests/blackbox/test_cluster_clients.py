"""Cluster clients, unchanged, against a cluster of N nodes of one binary, built by
`redis-cli --cluster create`: redis-py's RedisCluster (routing by COMMAND, following -MOVED)
running a Lua fixed-window limiter and GCRA.TAKE across many keys and slots, limits' cluster
storage (redis+cluster://), and the exact redirection replies a plain client gets.

The binary is a parameter: ReferenceClusterTest runs on redis-server 7.0.15 nodes (proving the
expected values are Redis's), SluiceClusterTest on sluice-server nodes.

Run by hand: cd tests/blackbox && SLUICE_SERVER=../../build/server/sluice-server \\
    /usr/bin/python3 -m unittest -v test_cluster_clients
"""

import unittest

from cluster_harness import cluster_create, cluster_info, start_nodes, stop_nodes, wait_until
from harness import Client
from test_clients import import_limits
from test_transactions import import_redis_py, redis_server_binary, redis_server_version

redis = import_redis_py()
limits = import_limits()

MASTERS = 3
DEADLINE = 60.0  # seconds for a node to start and for the cluster to agree; the machine is busy

# A fixed window: INCR, PEXPIRE on the first hit; 1 while within the limit, else 0.
FIXED_WINDOW = """
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if n <= tonumber(ARGV[1]) then return 1 end
return 0
"""


class LocalCluster:
    """N master nodes of one kind ("sluice" or "redis", cluster_harness) joined by
    redis-cli --cluster create. stop() stops them and removes their directories."""

    def __init__(self, kind, masters=MASTERS):
        self.nodes = start_nodes([kind] * masters, node_timeout=5000)
        self.ports = [n.port for n in self.nodes]

    def create(self):
        """redis-cli --cluster create, then waits until every node sees the cluster ok."""
        cluster_create(self.nodes, replicas=0)
        wait_until(lambda: all(self.node_ok(n) for n in self.nodes), DEADLINE,
                   "the cluster to agree")
        return self

    def node_ok(self, node):
        info = cluster_info(node)
        return (info.get("cluster_state") == "ok" and
                info.get("cluster_slots_ok") == "16384" and
                info.get("cluster_known_nodes") == str(len(self.nodes)))

    def owner_port(self, slot):
        """The port of the master serving `slot` (CLUSTER SLOTS of the first node)."""
        with Client(self.ports[0]) as c:
            for start, end, master, *_ in c.call("CLUSTER", "SLOTS"):
                if start <= slot <= end:
                    return master[1]
        raise AssertionError("slot %d is not served" % slot)

    def stop(self):
        stop_nodes(self.nodes)


class ClusterClientsBase:
    """The scenarios, on a cluster of cls.kind() nodes started once for the class."""
    sluice = False

    @classmethod
    def setUpClass(cls):
        if redis is None:
            raise unittest.SkipTest("redis-py is not installed (python3-redis)")
        cls.cluster = LocalCluster(cls.kind())
        try:
            cls.cluster.create()
        except BaseException:
            cls.cluster.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.cluster.stop()

    def cluster_client(self):
        rc = redis.cluster.RedisCluster(host="127.0.0.1", port=self.cluster.ports[0])
        self.addCleanup(rc.close)
        return rc

    def keys_per_node(self):
        counts = []
        for port in self.cluster.ports:
            with Client(port) as c:
                counts.append(c.call("DBSIZE"))
        return counts

    def test_lua_fixed_window_across_slots(self):
        rc = self.cluster_client()
        with Client(self.cluster.ports[0]) as c:
            self.assertEqual(c.call("FLUSHALL"), "OK")  # this node's keys only
        for port in self.cluster.ports[1:]:
            with Client(port) as c:
                c.call("FLUSHALL")
        script = rc.register_script(FIXED_WINDOW)
        keys = ["rl:lua:%d" % i for i in range(300)]
        got = {k: [script(keys=[k], args=[3, 60000]) for _ in range(5)] for k in keys}
        self.assertEqual(got, {k: [1, 1, 1, 0, 0] for k in keys})
        counts = self.keys_per_node()
        self.assertEqual(sum(counts), 300)
        self.assertTrue(all(n > 50 for n in counts), counts)  # every master took its share

    def test_gcra_take_across_slots(self):
        if not self.sluice:
            self.skipTest("GCRA.TAKE is Sluice's")
        rc = self.cluster_client()
        allowed = {}
        for i in range(100):
            key = "rl:gcra:%d" % i
            replies = [rc.execute_command("GCRA.TAKE", key, 5, 60000) for _ in range(8)]
            allowed[key] = [r[0] for r in replies]
        self.assertEqual(allowed, {k: [1] * 5 + [0] * 3 for k in allowed})

    def test_redirections_a_plain_client_sees(self):
        ports = self.cluster.ports
        with Client(ports[0]) as c:
            slot = c.call("CLUSTER", "KEYSLOT", "somekey")
            owner = self.cluster.owner_port(slot)
            other = next(p for p in ports if p != owner)
        with Client(other) as c:
            self.assertEqual(c.call("GET", "somekey"),
                             "MOVED %d 127.0.0.1:%d" % (slot, owner))
            self.assertEqual(c.call("SET", "somekey", "v"),
                             "MOVED %d 127.0.0.1:%d" % (slot, owner))
            self.assertEqual(c.call("PING"), "PONG")
            self.assertEqual(c.call("SELECT", "1"), "ERR SELECT is not allowed in cluster mode")
            tag_owner = self.cluster.owner_port(c.call("CLUSTER", "KEYSLOT", "t"))
        with Client(owner) as c:
            self.assertEqual(c.call("MSET", "a", "1", "b", "2"),
                             "CROSSSLOT Keys in request don't hash to the same slot")
            self.assertEqual(c.call("READONLY"), "OK")
            self.assertEqual(c.call("READWRITE"), "OK")
            self.assertEqual(c.call("ASKING"), "OK")
        with Client(tag_owner) as c:
            self.assertEqual(c.call("MSET", "{t}a", "1", "{t}b", "2"), "OK")

    def test_limits_cluster_storage(self):
        if limits is None:
            self.skipTest("limits is not installed (python3-limits)")
        uri = "redis+cluster://" + ",".join("127.0.0.1:%d" % p for p in self.cluster.ports)
        storage = limits.storage.storage_from_string(uri)
        limiter = limits.strategies.FixedWindowRateLimiter(storage)
        item = limits.parse("5/minute")
        got = {}
        for user in ("u%d" % i for i in range(30)):
            got[user] = [limiter.hit(item, "api", user) for _ in range(7)]
        self.assertEqual(got, {u: [True] * 5 + [False] * 2 for u in got})


class ReferenceClusterTest(ClusterClientsBase, unittest.TestCase):
    """The scenarios on redis-server 7.0.15 nodes: the expected values are Redis's."""

    @classmethod
    def kind(cls):
        binary = redis_server_binary()
        if binary is None or not redis_server_version(binary).startswith("7.0."):
            raise unittest.SkipTest("no redis-server 7.0.x to build a reference cluster")
        return "redis"


class SluiceClusterTest(ClusterClientsBase, unittest.TestCase):
    """The same scenarios on sluice-server nodes."""
    sluice = True

    @classmethod
    def kind(cls):
        return "sluice"


if __name__ == "__main__":
    unittest.main()
