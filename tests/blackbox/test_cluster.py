"""Cluster mode (server/cluster, docs/cluster.md): Sluice nodes speaking Redis 7.0's cluster bus,
built with the real `redis-cli --cluster`, alone and mixed with redis-server 7.0.15 nodes."""

import os
import socket
import threading
import time
import unittest

from cluster_harness import (NODE_TIMEOUT_MS, address, all_ok, cli, cluster_cli, cluster_create,
                             cluster_info, cluster_nodes, start_nodes, stop_nodes, wait_until)
from harness import IS_REDIS, Client, RespError, Server, sluice_only
from test_transactions import import_redis_py


def node_lines(node):
    return [line.split(" ") for line in cluster_nodes(node).strip().split("\n")]


def KeyHashSlot(key):
    """Redis Cluster's slot of a key without a hash tag's braces mattering here: CRC16/XMODEM
    of the tag (or the key) mod 16384."""
    s, e = key.find("{"), -1
    if s >= 0:
        e = key.find("}", s + 1)
    if s >= 0 and e > s + 1:
        key = key[s + 1:e]
    crc = 0
    for b in key.encode():
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc % 16384


def node_id(node):
    with Client(node.port) as c:
        return c.call("CLUSTER", "MYID").decode()


def check_covered(test, node):
    out = cluster_cli("check", address(node))
    test.assertIn("[OK] All 16384 slots covered.", out)
    test.assertNotIn("[ERR]", out)
    return out


@unittest.skipIf(IS_REDIS, "starts its own Sluice and redis-server nodes")
class ClusterDisabledTest(unittest.TestCase):
    def test_cluster_refused_outside_cluster_mode(self):
        s = Server().start()
        self.addCleanup(s.stop)
        with s.client() as c:
            for sub in (["INFO"], ["NODES"], ["KEYSLOT", "x"], ["MYID"], ["ADDSLOTS", "1"]):
                self.assertEqual(c.call("CLUSTER", *sub),
                                 RespError("ERR This instance has cluster support disabled"))


@unittest.skipIf(IS_REDIS, "starts its own Sluice and redis-server nodes")
class SingleNodeTest(unittest.TestCase):
    """One node: the CLUSTER subcommands' replies and errors against redis-server's."""

    maxDiff = None

    @classmethod
    def setUpClass(cls):
        # Without full coverage the one node's cluster is up, so Redis takes the test's writes.
        cls.nodes = start_nodes(["sluice", "redis"],
                                options={"cluster-require-full-coverage": "no"})
        cls.sluice, cls.redis = cls.nodes

    @classmethod
    def tearDownClass(cls):
        stop_nodes(cls.nodes)

    def both(self, *args):
        replies = []
        for n in (self.sluice, self.redis):
            with Client(n.port) as c:
                replies.append(c.call(*args))
        self.assertEqual(replies[0], replies[1], args)
        return replies[0]

    def test_errors_and_simple_replies_match_redis(self):
        cases = [
            ["CLUSTER", "KEYSLOT", "foo"], ["CLUSTER", "KEYSLOT", "{user}1"],
            ["CLUSTER", "ADDSLOTS", "16384"], ["CLUSTER", "ADDSLOTS", "-1"],
            ["CLUSTER", "ADDSLOTS", "x"], ["CLUSTER", "DELSLOTS", "5"],
            ["CLUSTER", "ADDSLOTSRANGE", "5", "1"], ["CLUSTER", "ADDSLOTSRANGE", "1"],
            ["CLUSTER", "COUNTKEYSINSLOT", "99999"], ["CLUSTER", "GETKEYSINSLOT", "1", "-1"],
            ["CLUSTER", "SETSLOT", "1", "MIGRATING", "nosuchnode"],
            ["CLUSTER", "SETSLOT", "1", "IMPORTING", "nosuchnode"],
            ["CLUSTER", "SETSLOT", "1", "NODE", "nosuchnode"],
            ["CLUSTER", "SETSLOT", "1", "BOGUS"],
            ["CLUSTER", "FORGET", "nosuchnode"], ["CLUSTER", "REPLICATE", "nosuchnode"],
            ["CLUSTER", "REPLICAS", "nosuchnode"], ["CLUSTER", "COUNT-FAILURE-REPORTS", "x"],
            ["CLUSTER", "FAILOVER"], ["CLUSTER", "FAILOVER", "BOGUS"],
            ["CLUSTER", "SET-CONFIG-EPOCH", "-1"], ["CLUSTER", "MEET", "nonsense", "1"],
            ["CLUSTER", "MEET", "127.0.0.1", "x"], ["CLUSTER", "RESET", "BOGUS"],
            ["CLUSTER", "SLOTS"], ["CLUSTER", "LINKS"], ["CLUSTER", "GETKEYSINSLOT", "x", "1"],
            ["CLUSTER", "COUNTKEYSINSLOT", "x"], ["CLUSTER", "ADDSLOTSRANGE", "1", "2", "3"],
            ["REPLICAOF", "127.0.0.1", "1"],
        ]
        for args in cases:
            self.both(*args)

    def test_slots_assignment_and_keys_in_slot(self):
        for n in (self.sluice, self.redis):
            with Client(n.port) as c:
                self.assertEqual(c.call("CLUSTER", "ADDSLOTSRANGE", "0", "100", "5474", "5474"), "OK")
        wait_until(lambda: all_ok(self.nodes), what="cluster_state:ok")
        self.both("CLUSTER", "ADDSLOTS", "7")  # busy
        self.both("CLUSTER", "ADDSLOTS", "200", "200")  # specified twice
        for n in (self.sluice, self.redis):
            with Client(n.port) as c:
                for k in ("{user}a", "{user}b", "{user}c"):
                    self.assertEqual(c.call("SET", k, "v"), "OK")
        self.both("CLUSTER", "COUNTKEYSINSLOT", "5474")
        # Redis lists a slot's keys newest first, Sluice in key order: compare the sets.
        got = []
        for n in (self.sluice, self.redis):
            with Client(n.port) as c:
                got.append(sorted(c.call("CLUSTER", "GETKEYSINSLOT", "5474", "10")))
                self.assertEqual(len(c.call("CLUSTER", "GETKEYSINSLOT", "5474", "2")), 2)
        self.assertEqual(got[0], got[1])
        self.both("CLUSTER", "COUNTKEYSINSLOT", "0")
        for n in (self.sluice, self.redis):  # the slot stays mine: its keys do not matter
            with Client(n.port) as c:
                self.assertEqual(c.call("CLUSTER", "SETSLOT", "5474", "NODE", self.myid(n)), "OK")
        info = cluster_info(self.sluice)
        self.assertEqual(info["cluster_slots_assigned"], "102")
        self.assertEqual(info["cluster_state"], "ok")
        self.both("CLUSTER", "DELSLOTSRANGE", "0", "100")
        self.both("CLUSTER", "FLUSHSLOTS")  # keys: refused
        for n in (self.sluice, self.redis):
            with Client(n.port) as c:
                c.call("FLUSHALL")
        self.both("CLUSTER", "FLUSHSLOTS")
        self.assertEqual(cluster_info(self.sluice)["cluster_slots_assigned"], "0")

    def myid(self, node):
        with Client(node.port) as c:
            return c.call("CLUSTER", "MYID")

    def test_myid_persists_in_nodes_conf(self):
        n = start_nodes(["sluice"])[0]
        try:
            with Client(n.port) as c:
                before = c.call("CLUSTER", "MYID")
                self.assertEqual(c.call("CLUSTER", "ADDSLOTS", "1", "2", "3"), "OK")
                self.assertEqual(c.call("CLUSTER", "BUMPEPOCH"), "BUMPED 1")
            with open(os.path.join(n.datadir, "nodes.conf")) as f:
                conf = f.read()
            self.assertIn(before.decode() if isinstance(before, bytes) else before, conf)
            self.assertIn("vars currentEpoch 1 lastVoteEpoch 0", conf)
            n.restart()
            with Client(n.port) as c:
                self.assertEqual(c.call("CLUSTER", "MYID"), before)
                line = [l for l in node_lines(n) if "myself" in l[2]][0]
                self.assertEqual(line[8:], ["1-3"])
                self.assertEqual(line[6], "1")
        finally:
            stop_nodes([n])


@unittest.skipIf(IS_REDIS, "starts its own Sluice and redis-server nodes")
class CreateTest(unittest.TestCase):
    """redis-cli --cluster create of 3 masters + 3 replicas, then check."""

    def create_and_check(self, kinds):
        nodes = start_nodes(kinds)
        self.addCleanup(stop_nodes, nodes)
        out = cluster_create(nodes, replicas=1)
        self.assertIn("[OK] All 16384 slots covered.", out)
        wait_until(lambda: all_ok(nodes), what="cluster_state:ok on every node")
        wait_until(lambda: all(cluster_info(n)["cluster_known_nodes"] == "6" for n in nodes),
                   what="every node knowing all 6")
        check_covered(self, nodes[0])

        def roles_known():  # the replicas' new role reaches every node by gossip
            for n in nodes:
                lines = node_lines(n)
                if (sum(1 for l in lines if "master" in l[2]) != 3 or
                        sum(1 for l in lines if "slave" in l[2]) != 3):
                    return False
            return True
        wait_until(roles_known, what="every node to see 3 masters and 3 replicas")
        for n in nodes:
            self.assertEqual(cluster_info(n)["cluster_size"], "3")
            self.assertEqual(len(node_lines(n)), 6)
        return nodes

    def test_create_six_sluice_nodes(self):
        nodes = self.create_and_check(["sluice"] * 6)
        with Client(nodes[0].port) as c:
            slots = c.call("CLUSTER", "SLOTS")
            self.assertEqual(sorted((s[0], s[1]) for s in slots),
                             [(0, 5460), (5461, 10922), (10923, 16383)])
            shards = c.call("CLUSTER", "SHARDS")
            self.assertEqual(len(shards), 3)
        # PUBLISH reaches subscribers on every node over the bus.
        with Client(nodes[5].port) as sub, Client(nodes[0].port) as pub:
            self.assertEqual(sub.call("SUBSCRIBE", "news"), [b"subscribe", b"news", 1])
            self.assertEqual(pub.call("PUBLISH", "news", "hello"), 0)  # local receivers only
            self.assertEqual(sub.read(), [b"message", b"news", b"hello"])

    def test_create_mixed_with_redis_server(self):
        self.create_and_check(["redis", "sluice", "redis", "sluice", "sluice", "redis"])


def master_of_slot(nodes, slot, via):
    """(node id, port) of the master serving `slot` as `via` sees it (CLUSTER SLOTS)."""
    with Client(via.port) as c:
        for s in c.call("CLUSTER", "SLOTS"):
            if s[0] <= slot <= s[1]:
                return s[2][2], s[2][1]
    return None


@unittest.skipIf(IS_REDIS, "starts its own Sluice and redis-server nodes")
class FailoverTest(unittest.TestCase):
    """Replicas replicate their master; kill -9 of a master promotes its replica."""

    def test_replica_replicates_and_takes_over_after_kill9(self):
        nodes = start_nodes(["sluice"] * 6)
        self.addCleanup(stop_nodes, nodes)
        cluster_create(nodes, replicas=1)
        wait_until(lambda: all_ok(nodes), what="cluster_state:ok on every node")
        by_port = {n.port: n for n in nodes}
        _, port = master_of_slot(nodes, 0, nodes[1])
        master = by_port[port]
        with Client(master.port) as c:
            myid = c.call("CLUSTER", "MYID")
        def replicas_known():
            with Client(master.port) as c:
                return len(c.call("CLUSTER", "REPLICAS", myid)) == 1
        wait_until(replicas_known, what="the master to know its replica")
        with Client(master.port) as c:
            replicas = c.call("CLUSTER", "REPLICAS", myid)
        replica_port = int(replicas[0].decode().split(" ")[1].split(":")[1].split("@")[0])
        replica = by_port[replica_port]
        with Client(master.port) as c:
            self.assertEqual(c.call("SET", "bar", "before"), "OK")  # slot 5061: this master's
        # Replication carries it to the replica (CLUSTER COUNTKEYSINSLOT is never redirected).
        def replicated():
            with Client(replica.port) as c:
                return c.call("CLUSTER", "COUNTKEYSINSLOT", "5061") == 1
        wait_until(replicated, timeout=30, what="the replica to have the master's write")
        others = [n for n in nodes if n not in (master, replica)]
        start = time.monotonic()
        master.kill9()

        def promoted():
            lines = node_lines(replica)
            mine = [l for l in lines if "myself" in l[2]][0]
            return "master" in mine[2] and "0-5460" in mine[8:]
        wait_until(promoted, timeout=60, what="the replica to take over")
        took = time.monotonic() - start
        print("failover took %.2fs (cluster-node-timeout %dms)" % (took, NODE_TIMEOUT_MS))
        # The goal is node-timeout + 2 s; 3 s more for a loaded test machine.
        self.assertLess(took, NODE_TIMEOUT_MS / 1000 + 5)
        wait_until(lambda: all_ok(others + [replica]), timeout=30, what="cluster_state:ok again")
        with Client(replica.port) as c:
            self.assertEqual(c.call("GET", "bar"), b"before")
        # The old master comes back as a replica of the new one.
        master.start()
        def rejoined():
            mine = [l for l in node_lines(master) if "myself" in l[2]][0]
            return "slave" in mine[2]
        wait_until(rejoined, timeout=60, what="the old master to rejoin as a replica")


@unittest.skipIf(IS_REDIS, "starts its own Sluice and redis-server nodes")
class ReshardTest(unittest.TestCase):
    """redis-cli --cluster reshard moves slots (and their keys, by MIGRATE) between Sluice
    masters; --cluster fix closes a slot left open."""

    def test_reshard_with_keys_and_fix(self):
        nodes = start_nodes(["sluice"] * 3)
        self.addCleanup(stop_nodes, nodes)
        cluster_create(nodes, replicas=0)
        wait_until(lambda: all_ok(nodes), what="cluster_state:ok on every node")
        ids = {}
        for n in nodes:
            with Client(n.port) as c:
                ids[n.port] = c.call("CLUSTER", "MYID").decode()
        _, port = master_of_slot(nodes, 0, nodes[0])
        source = [n for n in nodes if n.port == port][0]
        target = [n for n in nodes if n is not source][0]
        with Client(source.port) as c:
            for i in range(3):
                self.assertEqual(c.call("SET", "{k596}%d" % i, "v%d" % i), "OK")  # slot 0
        out = cluster_cli("reshard", address(source), "--cluster-from", ids[source.port],
                          "--cluster-to", ids[target.port], "--cluster-slots", 5,
                          "--cluster-yes")
        self.assertIn("Moving slot 0 from", out)
        with Client(target.port) as c:
            self.assertEqual(c.call("CLUSTER", "COUNTKEYSINSLOT", "0"), 3)
            self.assertEqual(c.call("GET", "{k596}1"), b"v1")
        with Client(source.port) as c:
            self.assertEqual(c.call("CLUSTER", "COUNTKEYSINSLOT", "0"), 0)
        wait_until(lambda: master_of_slot(nodes, 0, nodes[2])[1] == target.port,
                   what="every node to see the new owner of slot 0")
        check_covered(self, nodes[0])
        # A slot left open (MIGRATING/IMPORTING) is closed by --cluster fix.
        with Client(source.port) as c:
            self.assertEqual(c.call("CLUSTER", "SETSLOT", "10", "MIGRATING", ids[target.port]), "OK")
        with Client(target.port) as c:
            self.assertEqual(c.call("CLUSTER", "SETSLOT", "10", "IMPORTING", ids[source.port]), "OK")
        self.assertIn("open", cluster_cli("check", address(source), check=False))
        cluster_cli("fix", address(source), "--cluster-yes")
        wait_until(lambda: "[WARNING]" not in cluster_cli("check", address(source), check=False),
                   what="the open slot to be closed")
        check_covered(self, nodes[0])


@unittest.skipIf(IS_REDIS, "starts its own Sluice nodes")
class GrowShrinkTest(unittest.TestCase):
    """redis-cli --cluster add-node (a master, then a replica of it), rebalance onto the new
    master, and del-node, on Sluice nodes."""

    def known_nodes(self, nodes):
        return {int(cluster_info(n)["cluster_known_nodes"]) for n in nodes}

    def agreed(self, node):
        out = cluster_cli("check", address(node), check=False)
        return "[OK] All nodes agree about slots configuration." in out

    def test_add_node_rebalance_del_node(self):
        a, b, c, d = nodes = start_nodes(["sluice"] * 4)
        self.addCleanup(stop_nodes, nodes)
        # Two masters with uneven halves, so rebalance moves a few hundred slots, not thousands
        # (each SETSLOT fsyncs nodes.conf, as in Redis).
        self.assertEqual(cli(a.port, "CLUSTER", "ADDSLOTSRANGE", 0, 8299).strip(), "OK")
        self.assertEqual(cli(b.port, "CLUSTER", "ADDSLOTSRANGE", 8300, 16383).strip(), "OK")
        self.assertEqual(cli(a.port, "CLUSTER", "MEET", "127.0.0.1", b.port, b.cport).strip(),
                         "OK")
        wait_until(lambda: all_ok([a, b]), what="two masters ok")
        with Client(a.port) as x:
            self.assertEqual(x.call("SET", "{k596}x", "v"), "OK")  # slot 0, on a

        out = cluster_cli("add-node", address(c), address(a))
        self.assertIn("[OK] New node added correctly.", out)
        wait_until(lambda: self.known_nodes([a, b, c]) == {3}, what="c known to all")
        # redis-cli adds a node only to a cluster whose nodes agree: c learns the slots by gossip.
        wait_until(lambda: self.agreed(a), what="c to learn the slots")
        out = cluster_cli("add-node", address(d), address(a), "--cluster-slave",
                          "--cluster-master-id", node_id(c))
        self.assertIn("[OK] New node added correctly.", out)
        wait_until(lambda: self.known_nodes(nodes) == {4}, what="d known to all")
        wait_until(lambda: "slave" in [l for l in node_lines(a) if l[0] == node_id(d)][0][2],
                   what="d seen as c's replica")

        # A node serves (RESTORE-ASKING included) once its own view is ok, as in Redis.
        wait_until(lambda: all_ok(nodes), what="cluster_state:ok on every node")
        # A small weight for the new master: rebalance moves ~190 slots, not ~2800.
        out = cluster_cli("rebalance", address(a), "--cluster-use-empty-masters",
                          "--cluster-weight", "%s=0.02" % node_id(c))
        self.assertIn("Moving", out)
        wait_until(lambda: self.agreed(a), timeout=60, what="every node to agree on the slots")
        self.assertEqual(cluster_info(c)["cluster_state"], "ok")
        c_line = [l for l in node_lines(a) if l[0] == node_id(c)][0]
        self.assertGreater(len(c_line[8:]), 0, "the new master got slots: %s" % c_line)
        check_covered(self, a)
        # The key of slot 0 is readable wherever slot 0 went (MIGRATE moved it with the slot).
        _, port = master_of_slot(nodes, 0, a)
        with Client(port) as x:
            self.assertEqual(x.call("GET", "{k596}x"), b"v")

        out = cluster_cli("del-node", address(a), node_id(d))
        self.assertIn("Sending CLUSTER FORGET messages to the cluster", out)
        wait_until(lambda: self.known_nodes([a, b, c]) == {3}, what="d forgotten by all")
        wait_until(lambda: self.agreed(a), timeout=60, what="agreement after del-node")


@unittest.skipIf(IS_REDIS, "starts its own Sluice and redis-server nodes")
class MixedReshardTest(unittest.TestCase):
    """A cluster of one redis-server 7.0.15 master and one Sluice master: redis-cli --cluster
    reshard moves slot 0 with keys of every type from Redis to Sluice (Redis's MIGRATE sends
    Redis DUMP payloads by RESTORE-ASKING) and back (Sluice's MIGRATE to Redis)."""

    def fill(self, c):
        self.assertEqual(c.call("SET", "{k596}s", "text"), "OK")
        self.assertEqual(c.call("PEXPIRE", "{k596}s", "600000"), 1)
        self.assertEqual(c.call("RPUSH", "{k596}l", "a", "b", "c"), 3)
        self.assertEqual(c.call("HSET", "{k596}h", "f", "1", "g", "2"), 2)
        self.assertEqual(c.call("SADD", "{k596}set", "x", "y"), 2)
        self.assertEqual(c.call("ZADD", "{k596}z", "1.5", "m", "2", "n"), 2)
        self.assertEqual(c.call("XADD", "{k596}x", "1-1", "k", "v"), b"1-1")

    def check(self, c):
        self.assertEqual(c.call("GET", "{k596}s"), b"text")
        self.assertGreater(c.call("PTTL", "{k596}s"), 500000)
        self.assertEqual(c.call("LRANGE", "{k596}l", "0", "-1"), [b"a", b"b", b"c"])
        self.assertEqual(c.call("HGETALL", "{k596}h"), [b"f", b"1", b"g", b"2"])
        self.assertEqual(sorted(c.call("SMEMBERS", "{k596}set")), [b"x", b"y"])
        self.assertEqual(c.call("ZRANGE", "{k596}z", "0", "-1", "WITHSCORES"),
                         [b"m", b"1.5", b"n", b"2"])
        self.assertEqual(c.call("XRANGE", "{k596}x", "-", "+"), [[b"1-1", [b"k", b"v"]]])
        self.assertEqual(c.call("CLUSTER", "COUNTKEYSINSLOT", "0"), 6)

    def reshard(self, source, target, ids):
        out = cluster_cli("reshard", address(source), "--cluster-from", ids[source.port],
                          "--cluster-to", ids[target.port], "--cluster-slots", 1,
                          "--cluster-yes")
        self.assertIn("Moving slot 0 from", out)

    def test_reshard_both_ways(self):
        redis_node, sluice_node = nodes = start_nodes(["redis", "sluice"])
        self.addCleanup(stop_nodes, nodes)
        self.assertEqual(cli(redis_node.port, "CLUSTER", "ADDSLOTSRANGE", 0, 8191).strip(), "OK")
        self.assertEqual(cli(sluice_node.port, "CLUSTER", "ADDSLOTSRANGE", 8192, 16383).strip(),
                         "OK")
        self.assertEqual(cli(redis_node.port, "CLUSTER", "MEET", "127.0.0.1", sluice_node.port,
                             sluice_node.cport).strip(), "OK")
        wait_until(lambda: all_ok(nodes), what="cluster_state:ok on both")
        ids = {n.port: node_id(n) for n in nodes}
        with Client(redis_node.port) as c:
            self.fill(c)
        self.reshard(redis_node, sluice_node, ids)
        with Client(sluice_node.port) as c:
            self.check(c)
        with Client(redis_node.port) as c:
            self.assertEqual(c.call("CLUSTER", "COUNTKEYSINSLOT", "0"), 0)
            self.assertEqual(c.call("GET", "{k596}s"),
                             "MOVED 0 127.0.0.1:%d" % sluice_node.port)
        wait_until(lambda: all(master_of_slot(nodes, 0, n)[1] == sluice_node.port
                               for n in nodes), what="both to see Sluice own slot 0")
        self.reshard(sluice_node, redis_node, ids)
        # redis-cli sends SETSLOT NODE to each node in turn: the views converge a moment later.
        # (Until the bus woke on queued messages, Sluice's PONG announcing the epoch it took for
        # slot 0 could reach redis-server after this second reshard began; redis-server then
        # took slot 0 back without a newer epoch and lost it to Sluice's UPDATE for good.)
        wait_until(lambda: all(master_of_slot(nodes, 0, n)[1] == redis_node.port
                               for n in nodes), what="both to see Redis own slot 0 again")
        with Client(redis_node.port) as c:
            self.check(c)
        check_covered(self, sluice_node)


@unittest.skipIf(IS_REDIS, "starts its own Sluice and redis-server nodes")
class MixedFailoverTest(unittest.TestCase):
    """Masters redis-server, Sluice, redis-server; a Sluice replica of a redis-server master and
    a redis-server replica of the Sluice master. kill -9 of each master: its replica of the other
    kind wins the election (votes from masters of both kinds) and serves the data."""

    def test_replicas_of_the_other_kind_take_over(self):
        ra, sb, rc, sd, re = nodes = start_nodes(["redis", "sluice", "redis", "sluice", "redis"])
        self.addCleanup(stop_nodes, nodes)
        for node, (lo, hi) in ((ra, (0, 5460)), (sb, (5461, 10922)), (rc, (10923, 16383))):
            self.assertEqual(cli(node.port, "CLUSTER", "ADDSLOTSRANGE", lo, hi).strip(), "OK")
        for node in nodes[1:]:
            self.assertEqual(cli(ra.port, "CLUSTER", "MEET", "127.0.0.1", node.port,
                                 node.cport).strip(), "OK")
        wait_until(lambda: {int(cluster_info(n)["cluster_known_nodes"]) for n in nodes} == {5},
                   what="every node to know the others")
        self.assertEqual(cli(sd.port, "CLUSTER", "REPLICATE", node_id(ra)).strip(), "OK")
        self.assertEqual(cli(re.port, "CLUSTER", "REPLICATE", node_id(sb)).strip(), "OK")
        wait_until(lambda: all_ok(nodes), what="cluster_state:ok on every node")
        with Client(ra.port) as c:
            self.assertEqual(c.call("SET", "{k596}a", "on-redis"), "OK")  # slot 0
        with Client(sb.port) as c:
            self.assertEqual(c.call("SET", "c", "on-sluice"), "OK")  # slot 7365
        for replica, slot in ((sd, 0), (re, 7365)):
            wait_until(lambda: cli(replica.port, "CLUSTER", "COUNTKEYSINSLOT", slot).strip()
                       == "1", what="the write to reach the replica on %d" % replica.port)

        for master, replica, key, value, survivors in (
                (ra, sd, "{k596}a", b"on-redis", [sb, rc, sd, re]),
                (sb, re, "c", b"on-sluice", [rc, sd, re])):
            master.kill9()
            def promoted():
                mine = [l for l in node_lines(replica) if "myself" in l[2]][0]
                return "master" in mine[2] and len(mine) > 8
            wait_until(promoted, timeout=60, what="%s replica to take over" % replica.kind)
            wait_until(lambda: all_ok(survivors), timeout=60, what="cluster_state:ok again")
            with Client(replica.port) as c:
                self.assertEqual(c.call("GET", key), value)


@unittest.skipIf(IS_REDIS, "starts its own Sluice nodes")
class ReshardUnderLoadTest(unittest.TestCase):
    """GCRA.TAKE from redis-py RedisCluster clients (following -MOVED and -ASK) while
    redis-cli --cluster reshard moves the slots of half their keys: every acknowledged take is in
    the final state and no key records a take that was not acknowledged."""

    def test_gcra_takes_survive_a_reshard(self):
        redis = import_redis_py()
        if redis is None:
            self.skipTest("redis-py is not installed (python3-redis)")
        nodes = start_nodes(["sluice"] * 3)
        self.addCleanup(stop_nodes, nodes)
        cluster_create(nodes, replicas=0)
        wait_until(lambda: all_ok(nodes), what="cluster_state:ok on every node")
        source = [n for n in nodes if master_of_slot(nodes, 0, nodes[0])[1] == n.port][0]
        target = [n for n in nodes if n is not source][0]
        # redis-cli moves the source's lowest slots first: 200 keys in slots 0-299 move.
        moving = [k for k in ("rl:{u%d}" % i for i in range(20000))
                  if KeyHashSlot(k) < 300][:200]
        staying = ["rl:{s%d}" % i for i in range(100)]
        quota, period = 1000000, "87000h"  # ~10 years: nothing refills during the test
        acked = {k: 0 for k in moving + staying}
        errors = []
        stop = threading.Event()

        def worker(keys):
            client = redis.RedisCluster(host="127.0.0.1", port=source.port)
            while not stop.is_set():
                for k in keys:
                    try:
                        if client.execute_command("GCRA.TAKE", k, quota, period)[0] == 1:
                            acked[k] += 1
                    except redis.RedisError as e:
                        errors.append(repr(e))
            client.close()

        keys = moving + staying
        threads = [threading.Thread(target=worker, args=(keys[i::4],)) for i in range(4)]
        for t in threads:
            t.start()
        wait_until(lambda: sum(acked.values()) >= 2000, what="load before the reshard")
        before = sum(acked.values())
        started = time.monotonic()
        cluster_cli("reshard", address(source), "--cluster-from", node_id(source),
                    "--cluster-to", node_id(target), "--cluster-slots", 300, "--cluster-yes")
        took = time.monotonic() - started
        done = sum(acked.values())
        wait_until(lambda: sum(acked.values()) >= done + 2000, what="load after the reshard")
        stop.set()
        for t in threads:
            t.join(60)
        self.assertEqual(errors, [])
        client = redis.RedisCluster(host="127.0.0.1", port=target.port)
        recorded = {k: quota - client.execute_command("GCRA.TAKE", k, quota, period)[1] - 1
                    for k in keys}
        client.close()
        self.assertEqual(recorded, acked)
        print("%d GCRA.TAKEs acknowledged, %d of them during the %.1f s reshard of 300 slots"
              % (sum(acked.values()), done - before, took))
        with Client(target.port) as c:
            self.assertGreater(sum(c.call("CLUSTER", "COUNTKEYSINSLOT", s) for s in range(300)),
                               0)


@unittest.skipIf(IS_REDIS, "starts its own Sluice nodes")
class ShardPubSubTest(unittest.TestCase):
    """SPUBLISH on a master reaches SSUBSCRIBE clients of its replica over the bus (Redis's
    PUBLISHSHARD message), and PUBLISH reaches subscribers of every node (its reply counts the
    receivers of the node it ran on, as Redis's)."""

    def subscriber(self, node, command, channel):
        sock = socket.create_connection(("127.0.0.1", node.port), timeout=10)
        self.addCleanup(sock.close)
        sock.sendall(("%s %s\r\n" % (command, channel)).encode())
        expected = b"*3\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n:1\r\n" % (
            len(command), command.lower().encode(), len(channel), channel.encode())
        self.assertEqual(read_exactly(sock, len(expected)), expected)
        return sock

    def test_spublish_reaches_the_replica_and_publish_every_node(self):
        master, replica = nodes = start_nodes(["sluice"] * 2)
        self.addCleanup(stop_nodes, nodes)
        self.assertEqual(cli(master.port, "CLUSTER", "ADDSLOTSRANGE", 0, 16383).strip(), "OK")
        self.assertEqual(cli(master.port, "CLUSTER", "MEET", "127.0.0.1", replica.port,
                             replica.cport).strip(), "OK")
        master_id = node_id(master)
        wait_until(lambda: master_id in cluster_nodes(replica) and
                   "handshake" not in cluster_nodes(replica), what="the replica to know the master")
        self.assertEqual(cli(replica.port, "CLUSTER", "REPLICATE", master_id).strip(), "OK")
        wait_until(lambda: "slave" in cluster_nodes(master), what="the master to see its replica")
        wait_until(lambda: all_ok(nodes), what="cluster_state:ok on both")
        on_replica = self.subscriber(replica, "SSUBSCRIBE", "ch")
        on_master = self.subscriber(master, "SSUBSCRIBE", "ch")
        with Client(master.port) as c:
            self.assertEqual(c.call("SPUBLISH", "ch", "hello"), 1)
        message = b"*3\r\n$8\r\nsmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n"
        self.assertEqual(read_exactly(on_master, len(message)), message)
        self.assertEqual(read_exactly(on_replica, len(message)), message)
        plain = self.subscriber(replica, "SUBSCRIBE", "pc")
        with Client(master.port) as c:
            self.assertEqual(c.call("PUBLISH", "pc", "x"), 0)  # no receiver on the master
        message = b"*3\r\n$7\r\nmessage\r\n$2\r\npc\r\n$1\r\nx\r\n"
        self.assertEqual(read_exactly(plain, len(message)), message)


def read_exactly(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            break
        data += chunk
    return data
