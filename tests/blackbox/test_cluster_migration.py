"""Cluster replica migration and the replica validity check (server/cluster/cluster_migration.cc,
cluster_cron.cc; docs/cluster.md), on Sluice nodes built by hand (CLUSTER ADDSLOTSRANGE, MEET,
REPLICATE), as Redis 7.0's clusterHandleSlaveMigration and clusterHandleSlaveFailover do it."""

import threading
import time
import unittest

from cluster_harness import all_ok, cluster_nodes, start_nodes, stop_nodes, wait_until
from harness import IS_REDIS, Client
from test_cluster import KeyHashSlot


def node_id(node):
    with Client(node.port) as c:
        return c.call("CLUSTER", "MYID").decode()


def call(node, *args):
    with Client(node.port) as c:
        return c.call(*args)


def master_of(view, node):
    """The master id `view`'s CLUSTER NODES gives `node` ("-" for a master)."""
    nid = node_id(node)
    for line in cluster_nodes(view).strip().split("\n"):
        f = line.split(" ")
        if f[0] == nid:
            return f[3]
    return None


def build(masters, replicas_of, ranges):
    """masters[i] serves ranges[i]; replicas_of maps a replica node to its master node. Every
    node meets masters[0]; returns once every node sees all the others and the cluster is ok."""
    nodes = list(masters) + list(replicas_of)
    for m, (lo, hi) in zip(masters, ranges):
        call(m, "CLUSTER", "ADDSLOTSRANGE", lo, hi)
    for n in nodes[1:]:
        call(n, "CLUSTER", "MEET", "127.0.0.1", masters[0].port, masters[0].cport)
    wait_until(lambda: all(len(cluster_nodes(n).strip().split("\n")) == len(nodes) for n in nodes),
               what="every node to know the others")
    for r, m in replicas_of.items():
        call(r, "CLUSTER", "REPLICATE", node_id(m))
    for r, m in replicas_of.items():
        mid = node_id(m)
        wait_until(lambda: all(master_of(v, r) == mid for v in nodes), what="the replica roles")
    wait_until(lambda: all_ok(nodes), what="cluster_state:ok on every node")


@unittest.skipIf(IS_REDIS, "starts its own Sluice nodes")
class ReplicaMigrationTest(unittest.TestCase):
    """Master A with two replicas, master B with one: when B's replica dies, one of A's replicas
    becomes B's (once B has been orphaned 5 s), unless cluster-migration-barrier forbids it."""

    def test_orphaned_master_gets_a_replica_when_the_barrier_allows(self):
        a, b, r1, r2, r3 = nodes = start_nodes(["sluice"] * 5,
                                               options={"cluster-migration-barrier": "2"})
        self.addCleanup(stop_nodes, nodes)
        build([a, b], {r1: a, r2: a, r3: b}, [(0, 8191), (8192, 16383)])
        b_id = node_id(b)
        r3.kill9()
        # With a barrier of 2, A's replicas stay: A would keep one working replica (1 <= 2).
        wait_until(lambda: " fail " in " " + cluster_nodes(a).replace(",", " ") + " ",
                   what="A to flag B's replica as failed")
        time.sleep(8)  # the migration delay (5 s) and more: nothing may move
        self.assertEqual([master_of(b, r) for r in (r1, r2)], [node_id(a)] * 2)
        # The barrier is lowered at run time (CONFIG SET, as Redis allows): one replica moves.
        for n in (a, b, r1, r2):
            self.assertEqual(call(n, "CONFIG", "SET", "cluster-migration-barrier", "1"), "OK")

        def migrated():
            moved = [r for r in (r1, r2) if master_of(b, r) == b_id]
            return len(moved) == 1 and all(master_of(v, moved[0]) == b_id for v in (a, b, r1, r2))
        wait_until(migrated, timeout=60, what="one of A's replicas to become B's")
        moved = [r for r in (r1, r2) if master_of(b, r) == b_id][0]
        stayed = r2 if moved is r1 else r1
        self.assertEqual(master_of(a, stayed), node_id(a))
        self.assertIn("Migrating to orphaned master " + b_id, moved.log())
        # It replicates B now: a write on B reaches it.
        key = next("k%d" % i for i in range(100) if KeyHashSlot("k%d" % i) >= 8192)
        self.assertEqual(call(b, "SET", key, "v"), "OK")
        wait_until(lambda: call(moved, "CLUSTER", "COUNTKEYSINSLOT", KeyHashSlot(key)) == 1,
                   what="B's write to reach its new replica")

    def test_no_migration_when_replica_migration_is_off(self):
        a, b, r1, r2, r3 = nodes = start_nodes(["sluice"] * 5,
                                               options={"cluster-allow-replica-migration": "no"})
        self.addCleanup(stop_nodes, nodes)
        build([a, b], {r1: a, r2: a, r3: b}, [(0, 8191), (8192, 16383)])
        r3.kill9()
        wait_until(lambda: " fail " in " " + cluster_nodes(a).replace(",", " ") + " ",
                   what="A to flag B's replica as failed")
        time.sleep(8)
        self.assertEqual([master_of(b, r) for r in (r1, r2)], [node_id(a)] * 2)


@unittest.skipIf(IS_REDIS, "starts its own Sluice nodes")
class ReplicaValidityTest(unittest.TestCase):
    """A replica cut off from its master for longer than node-timeout * validity-factor +
    repl-ping-replica-period (beyond the node timeout) does not start an election; with the
    factor 0 it always may."""

    def test_stale_replica_does_not_fail_over_until_factor_zero(self):
        m1, m2, m3, r = nodes = start_nodes(["sluice"] * 4)
        self.addCleanup(stop_nodes, nodes)
        build([m1, m2, m3], {r: m1}, [(0, 5460), (5461, 10922), (10923, 16383)])
        # Threshold: 2000 ms (node timeout) + 1000 ms (ping period) + 2000 ms * 1 (factor).
        self.assertEqual(call(r, "CONFIG", "SET", "repl-ping-replica-period", "1"), "OK")
        self.assertEqual(call(r, "CONFIG", "SET", "cluster-replica-validity-factor", "1"), "OK")
        wait_until(lambda: "master_link_status:up" in call(r, "INFO", "replication").decode(),
                   what="the replica's link to be up")
        m1_id = node_id(m1)
        # Cut the replication link for good: the master wants a password the replica lacks.
        self.assertEqual(call(m1, "CONFIG", "SET", "requirepass", "secret"), "OK")
        call(r, "CLIENT", "KILL", "TYPE", "master")
        wait_until(lambda: "master_link_status:down" in call(r, "INFO", "replication").decode(),
                   what="the replica's link to be down")
        time.sleep(6)  # past the 5 s threshold
        m1.kill9()
        wait_until(lambda: "Currently unable to failover" in r.log(), timeout=30,
                   what="the replica to refuse the election")
        time.sleep(4)
        self.assertEqual(master_of(m2, r), m1_id)
        self.assertIn("slave", [l for l in cluster_nodes(r).split("\n") if "myself" in l][0])
        # Factor 0: always eligible, so it takes over now.
        self.assertEqual(call(r, "CONFIG", "SET", "cluster-replica-validity-factor", "0"), "OK")

        def promoted():
            mine = [l for l in cluster_nodes(r).split("\n") if "myself" in l][0].split(" ")
            return "master" in mine[2] and "0-5460" in mine[8:]
        wait_until(promoted, timeout=60, what="the replica to take over with factor 0")


@unittest.skipIf(IS_REDIS, "starts its own Sluice nodes")
class EmptiedMasterTest(unittest.TestCase):
    """A master whose last slot moves away (SETSLOT NODE, as redis-cli rebalance sends) becomes a
    replica of the new owner, unless cluster-allow-replica-migration is no: then it stays a
    master (with no slots) and keeps its replica (Redis's 12.1-replica-migration-3 unit)."""

    def run_case(self, allow):
        a, b, c, ra = nodes = start_nodes(["sluice"] * 4,
                                          options={"cluster-allow-replica-migration": allow})
        self.addCleanup(stop_nodes, nodes)
        build([a, b, c], {ra: a}, [(0, 0), (1, 8191), (8192, 16383)])
        a_id, b_id = node_id(a), node_id(b)
        self.assertEqual(call(b, "CLUSTER", "SETSLOT", "0", "IMPORTING", a_id), "OK")
        self.assertEqual(call(a, "CLUSTER", "SETSLOT", "0", "MIGRATING", b_id), "OK")
        for n in (b, a, c):
            # B's PONG with its new epoch may reach A first: A, emptied, is a replica already
            # and refuses, as redis-cli's reshard expects of a source that lost its last slot.
            allowed = ("OK", "ERR Please use SETSLOT only with masters.") if n is a else ("OK",)
            self.assertIn(call(n, "CLUSTER", "SETSLOT", "0", "NODE", b_id), allowed)
        return a, b, c, ra, a_id, b_id

    def test_emptied_master_follows_the_new_owner(self):
        a, b, c, ra, a_id, b_id = self.run_case("yes")
        wait_until(lambda: master_of(b, a) == b_id, what="A to become B's replica")

    def test_emptied_master_keeps_its_replica_when_migration_is_off(self):
        a, b, c, ra, a_id, b_id = self.run_case("no")
        time.sleep(3)  # gossip rounds: nothing may move
        for view in (a, b, c):
            self.assertEqual(master_of(view, a), "-")
            self.assertEqual(master_of(view, ra), a_id)
        self.assertIn("role:master", call(a, "INFO", "replication").decode())


@unittest.skipIf(IS_REDIS, "starts its own Sluice nodes")
class ManualFailoverTest(unittest.TestCase):
    """CLUSTER FAILOVER on a replica while a client writes to its master without pause: the
    master pauses its writers (Redis's manual failover), the replica reaches the offset it
    reported, wins, and every acknowledged write is on the new master (Redis's
    10-manual-failover unit)."""

    def test_manual_failover_under_write_load(self):
        m1, m2, m3, r = nodes = start_nodes(["sluice"] * 4)
        self.addCleanup(stop_nodes, nodes)
        build([m1, m2, m3], {r: m1}, [(0, 5460), (5461, 10922), (10923, 16383)])
        keys = [k for k in ("key:%d" % i for i in range(200)) if KeyHashSlot(k) <= 5460]
        acked = []
        stop = threading.Event()

        def writer():
            with Client(m1.port) as c:
                i = 0
                while not stop.is_set():
                    key = keys[i % len(keys)]
                    reply = c.call("RPUSH", key, str(i))
                    if not isinstance(reply, int):
                        return  # MOVED: the old master is a replica now
                    acked.append((key, str(i)))
                    i += 1
        t = threading.Thread(target=writer)
        t.start()
        self.addCleanup(t.join)
        self.addCleanup(stop.set)
        wait_until(lambda: len(acked) > 200, what="writes before the failover")
        self.assertEqual(call(r, "CLUSTER", "FAILOVER"), "OK")

        def promoted():
            mine = [l for l in cluster_nodes(r).split("\n") if "myself" in l][0].split(" ")
            return "master" in mine[2] and "0-5460" in mine[8:]
        wait_until(promoted, timeout=30, what="the replica to win the manual failover")
        stop.set()
        t.join()
        self.assertIn("Manual failover requested by replica", m1.log())
        expected = {}
        for key, value in acked:
            expected.setdefault(key, []).append(value.encode())
        for key, values in expected.items():
            self.assertEqual(call(r, "LRANGE", key, "0", "-1"), values)


@unittest.skipIf(IS_REDIS, "starts its own Sluice nodes")
class ReplicaRestartTest(unittest.TestCase):
    """A replica restarted from its nodes.conf replicates its master again (Redis's clusterCron
    turns replication on for a replica whose master's address is known)."""

    def test_restarted_replica_replicates_again(self):
        m, r = nodes = start_nodes(["sluice"] * 2)
        self.addCleanup(stop_nodes, nodes)
        build([m], {r: m}, [(0, 16383)])
        r.restart()
        wait_until(lambda: "role:slave" in call(r, "INFO", "replication").decode(), timeout=30,
                   what="the restarted replica to be a replica again")
        self.assertEqual(call(m, "SET", "k", "after"), "OK")
        wait_until(lambda: call(r, "CLUSTER", "COUNTKEYSINSLOT", KeyHashSlot("k")) == 1,
                   timeout=30, what="the master's write to reach the restarted replica")

    def test_nofailover_flag_follows_config_set(self):
        m, r = nodes = start_nodes(["sluice"] * 2)
        self.addCleanup(stop_nodes, nodes)
        build([m], {r: m}, [(0, 16383)])
        rid = node_id(r)

        def flags_seen_by_master():
            return [l.split(" ")[2] for l in cluster_nodes(m).split("\n") if l.startswith(rid)][0]
        self.assertEqual(flags_seen_by_master(), "slave")
        self.assertEqual(call(r, "CONFIG", "SET", "cluster-replica-no-failover", "yes"), "OK")
        wait_until(lambda: flags_seen_by_master() == "slave,nofailover",
                   what="the master to see the nofailover flag")
        self.assertEqual(call(r, "CONFIG", "SET", "cluster-replica-no-failover", "no"), "OK")
        wait_until(lambda: flags_seen_by_master() == "slave", what="the flag to go")


@unittest.skipIf(IS_REDIS, "starts its own Sluice and redis-server nodes")
class ClusterTestHooksTest(unittest.TestCase):
    """What Redis's tests/cluster framework needs from a node, beside redis-server 7.0.15: FCALL
    of a no-cluster function refused, DEBUG DROP-CLUSTER-PACKET-FILTER, CONFIG SET of the
    cluster-* parameters and of repl-diskless-* (stored)."""

    def test_same_replies_as_redis_server(self):
        nodes = start_nodes(["sluice", "redis"],
                            options={"enable-debug-command": "yes"})
        self.addCleanup(stop_nodes, nodes)
        lib = ("#!lua name=t\nredis.register_function{function_name='f1', callback="
               "function() return 'hello' end, flags={'no-cluster'}}")
        script = "#!lua flags=no-cluster\nreturn 1"
        commands = [
            ("FUNCTION", "LOAD", lib), ("FCALL", "f1", "0"), ("EVAL", script, "0"),
            ("DEBUG", "DROP-CLUSTER-PACKET-FILTER", "1"),
            ("DEBUG", "DROP-CLUSTER-PACKET-FILTER", "x"),
            ("DEBUG", "DROP-CLUSTER-PACKET-FILTER", "-1"),
            ("CONFIG", "SET", "repl-diskless-sync-delay", "0"),
            ("CONFIG", "SET", "repl-diskless-load", "disabled"),
            ("CONFIG", "GET", "repl-diskless-load"),
            ("CONFIG", "SET", "cluster-node-timeout", "3000"),
            ("CONFIG", "SET", "cluster-slave-validity-factor", "10"),
            ("CONFIG", "GET", "cluster-replica-validity-factor"),
        ]
        replies = [[call(n, *c) for c in commands] for n in nodes]
        self.assertEqual(str(replies[0]), str(replies[1]))
        self.assertIn("no-cluster", str(replies[0][1]))


if __name__ == "__main__":
    unittest.main()
