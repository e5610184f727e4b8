"""The cluster bus over TLS (tls-cluster yes, issue 43): Sluice nodes, alone and mixed with
redis-server 7.0.15 nodes, built with `redis-cli --tls --cluster create`; the ports each client
is shown (the TLS port to TLS clients, the plain one to plain clients, as Redis 7.0); a node
whose certificate another CA signed cannot join. Certificates are made at test time with openssl
(test_tls.make_certificates)."""

import shutil
import socket
import subprocess
import tempfile
import time
import unittest

import test_tls
from cluster_harness import (NODE_TIMEOUT_MS, RedisNode, SluiceNode, all_ok, cluster_info,
                             stop_nodes, wait_until)
from harness import IS_REDIS, REDIS_CLI, Client, RespError
from test_cluster import KeyHashSlot
from test_tls import TlsClient, cert, tls_options
from test_transactions import redis_server_binary


def setUpModule():
    if IS_REDIS:
        raise unittest.SkipTest("starts its own Sluice and redis-server nodes")
    if shutil.which("openssl") is None:
        raise unittest.SkipTest("openssl is not installed")
    test_tls.CERTS = tempfile.mkdtemp(prefix="sluice-bb-cluster-tls-")
    test_tls.make_certificates()


def tearDownModule():
    if test_tls.CERTS:
        shutil.rmtree(test_tls.CERTS, ignore_errors=True)


def tls_node_options(tls_port, plain, name="server", ca="ca"):
    """tls-cluster yes with `name`'s certificate; port 0 (TLS only) unless `plain`."""
    options = tls_options(tls_port, **{"tls-cluster": "yes", "tls-replication": "yes",
                                       "tls-cert-file": cert(name + ".crt"),
                                       "tls-key-file": cert(name + ".key"),
                                       "tls-ca-cert-file": cert(ca + ".crt")})
    if not plain:
        options["port"] = "0"
    return options


def start_tls_nodes(kinds, plain):
    """Nodes with tls-cluster yes, each with a free TLS port; `plain`: a plain port beside it.
    Each node's tls_port attribute is its TLS port."""
    nodes = []
    try:
        for kind in kinds:
            tls_port = test_tls.free_port()
            options = tls_node_options(tls_port, plain)
            node = SluiceNode(options=options) if kind == "sluice" else RedisNode(options=options)
            node.tls_port = tls_port
            nodes.append(node)
            if kind == "sluice" and not plain:
                node.spawn()
                wait_until(lambda n=node: tls_ping(n), what="TLS node on %d" % tls_port)
            else:
                node.start()
    except BaseException:
        stop_nodes(nodes)
        raise
    return nodes


def port_is_free(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def tls_ping(node):
    try:
        with TlsClient(node.tls_port, timeout=5) as c:
            return c.call("PING") == "PONG"
    except Exception:  # not listening yet
        return False


def tls_call(node, *args):
    with TlsClient(node.tls_port) as c:
        return c.call(*args)


def text(reply):
    return reply.decode() if isinstance(reply, bytes) else str(reply)


def tls_cli_argv(*args):
    return [REDIS_CLI, "--tls", "--cacert", cert("ca.crt"), "--cert", cert("client.crt"),
            "--key", cert("client.key")] + [str(a) for a in args]


def tls_cli(*args, timeout=180):
    res = subprocess.run(tls_cli_argv(*args), capture_output=True, text=True, timeout=timeout,
                         stdin=subprocess.DEVNULL)
    out = res.stdout + res.stderr
    if res.returncode != 0:
        raise AssertionError("redis-cli --tls %s failed (%d):\n%s" % (args, res.returncode, out))
    return out


def tls_info(node):
    info = text(tls_call(node, "CLUSTER", "INFO"))
    return dict(line.split(":", 1) for line in info.split("\r\n") if ":" in line)


def tls_all_ok(nodes):
    try:
        return all(tls_info(n).get("cluster_state") == "ok" for n in nodes)
    except Exception:  # a node still starting
        return False


def create(nodes):
    out = tls_cli("--cluster", "create", *["127.0.0.1:%d" % n.tls_port for n in nodes],
                  "--cluster-replicas", 0, "--cluster-yes")
    wait_until(lambda: tls_all_ok(nodes), what="cluster_state:ok on every node over TLS")
    return out


def owner_of(nodes, slot):
    for n in nodes:
        for line in text(tls_call(n, "CLUSTER", "NODES")).strip().split("\n"):
            fields = line.split(" ")
            if "myself" not in fields[2]:
                continue
            for r in fields[8:]:
                lo, _, hi = r.partition("-")
                if lo.isdigit() and int(lo) <= slot <= int(hi or lo):
                    return n
    raise AssertionError("no owner of slot %d" % slot)


class TlsClusterCase(unittest.TestCase):
    """A cluster of `kinds` masters with tls-cluster yes, created over TLS once per class."""

    kinds = ()
    plain = False  # a plain port beside each tls-port

    @classmethod
    def setUpClass(cls):
        cls.nodes = start_tls_nodes(list(cls.kinds), plain=cls.plain)
        try:
            cls.create_output = create(cls.nodes)
        except BaseException:
            stop_nodes(cls.nodes)
            raise

    @classmethod
    def tearDownClass(cls):
        stop_nodes(cls.nodes)


class TlsOnlyClusterTest(TlsClusterCase):
    """Three Sluice masters on port 0 with a tls-port each: the bus and every client over TLS."""

    kinds = ("sluice",) * 3

    def test_created_over_tls(self):
        self.assertIn("[OK] All 16384 slots covered.", self.create_output)
        for n in self.nodes:
            info = tls_info(n)
            self.assertEqual(info["cluster_known_nodes"], "3")
            self.assertEqual(info["cluster_size"], "3")
            # Every node announces its TLS port ("the" port with tls-cluster) and bus port.
            nodes_text = text(tls_call(n, "CLUSTER", "NODES"))
            for m in self.nodes:
                self.assertIn(" 127.0.0.1:%d@%d " % (m.tls_port, m.cport), nodes_text)

    def test_moved_carries_the_tls_port_and_cli_follows(self):
        key = "user:1"
        slot = KeyHashSlot(key)
        owner = owner_of(self.nodes, slot)
        other = next(n for n in self.nodes if n is not owner)
        self.assertEqual(tls_call(other, "SET", key, "v"),
                         RespError("MOVED %d 127.0.0.1:%d" % (slot, owner.tls_port)))
        # Written through one node, read through another, redis-cli -c --tls following -MOVED.
        self.assertEqual(tls_cli("-c", "-p", other.tls_port, "SET", key, "over tls").strip(), "OK")
        third = next(n for n in self.nodes if n is not owner and n is not other)
        self.assertEqual(tls_cli("-c", "-p", third.tls_port, "GET", key).strip(), "over tls")
        self.assertEqual(tls_call(owner, "GET", key), b"over tls")

    def test_cluster_slots_and_shards_show_tls_ports(self):
        slots = tls_call(self.nodes[0], "CLUSTER", "SLOTS")
        ports = sorted(entry[2][1] for entry in slots)
        self.assertEqual(ports, sorted(n.tls_port for n in self.nodes))
        shards = tls_call(self.nodes[0], "CLUSTER", "SHARDS")
        for shard in shards:
            member = dict(zip(shard[3][0][0::2], shard[3][0][1::2]))
            self.assertNotIn(b"port", member)  # no plain port (port 0)
            self.assertIn(member[b"tls-port"], [n.tls_port for n in self.nodes])

    def test_default_bus_port_is_tls_port_plus_10000(self):
        """Without cluster-port the bus listens on tls-port + 10000 (port + 10000 without
        tls-cluster), as Redis; CLUSTER NODES shows it."""
        while True:
            tls_port = test_tls.free_port()
            if tls_port + 10000 < 65536 and port_is_free(tls_port + 10000):
                break
        options = tls_node_options(tls_port, plain=True)
        node = SluiceNode(options=options)
        node.options.pop("cluster-port")
        node.tls_port = tls_port
        self.addCleanup(node.stop)
        node.start()
        myself = [line for line in text(tls_call(node, "CLUSTER", "NODES")).split("\n")
                  if "myself" in line][0]
        self.assertIn(":%d@%d " % (tls_port, tls_port + 10000), myself)
        with Client(node.port) as c:  # a plain client is shown the plain port
            self.assertIn(":%d@%d " % (node.port, tls_port + 10000),
                          text(c.call("CLUSTER", "NODES")))
        socket.create_connection(("127.0.0.1", tls_port + 10000), timeout=10).close()

    def test_config_set_reloads_the_bus_certificate(self):
        """CONFIG SET tls-cert-file/tls-key-file: new bus links get the new certificate, and
        the cluster stays up."""
        n = self.nodes[2]

        def bus_certificate_cn():
            raw = socket.create_connection(("127.0.0.1", n.cport), timeout=10)
            with test_tls.client_context().wrap_socket(raw, server_hostname="localhost") as s:
                return dict(x[0] for x in s.getpeercert()["subject"])["commonName"]

        self.assertEqual(bus_certificate_cn(), "server-one")
        self.addCleanup(tls_call, n, "CONFIG", "SET", "tls-cert-file", cert("server.crt"),
                        "tls-key-file", cert("server.key"))
        self.assertEqual(tls_call(n, "CONFIG", "SET", "tls-cert-file", cert("server2.crt"),
                                  "tls-key-file", cert("server2.key")), "OK")
        wait_until(lambda: bus_certificate_cn() == "server-two", what="the bus's new certificate")
        self.assertIn("Cluster bus: TLS certificates and settings reloaded for new links",
                      n.stderr())
        self.assertTrue(tls_all_ok(self.nodes))

    def test_replica_replicates_over_tls(self):
        """A fourth TLS-only node added as a replica (redis-cli --tls --cluster add-node
        --cluster-slave) replicates its master over TLS (tls-replication yes), from the port the
        master announces; forgotten again afterwards."""
        replica = start_tls_nodes(["sluice"], plain=False)[0]
        master = self.nodes[0]
        master_id = text(tls_call(master, "CLUSTER", "MYID"))
        replica_id = text(tls_call(replica, "CLUSTER", "MYID"))

        def forget():
            replica.stop()
            for n in self.nodes:
                tls_call(n, "CLUSTER", "FORGET", replica_id)
        self.addCleanup(forget)
        tls_cli("--cluster", "add-node", "127.0.0.1:%d" % replica.tls_port,
                "127.0.0.1:%d" % master.tls_port, "--cluster-slave", "--cluster-master-id",
                master_id)

        def link_up():
            return "master_link_status:up" in text(tls_call(replica, "INFO", "replication"))
        wait_until(link_up, what="the replica's TLS link to its master")
        self.assertIn("master_port:%d\r\n" % master.tls_port,
                      text(tls_call(replica, "INFO", "replication")))
        key = next(k for k in ("r%d" % i for i in range(1000))
                   if owner_of(self.nodes, KeyHashSlot(k)) is master)
        self.assertEqual(tls_call(master, "SET", key, "replicated"), "OK")

        def replicated():
            with TlsClient(replica.tls_port) as c:
                self.assertEqual(c.call("READONLY"), "OK")
                return c.call("GET", key) == b"replicated"
        wait_until(replicated, what="the key on the replica")

    def test_silent_peer_is_dropped_and_the_bus_goes_on(self):
        """A peer that opens a bus connection and never handshakes holds nothing but its own
        link, which is dropped (one log line) after the bounded handshake time."""
        a = self.nodes[0]
        silent = socket.create_connection(("127.0.0.1", a.cport), timeout=30)
        self.addCleanup(silent.close)
        self.assertEqual(silent.recv(10), b"")  # closed by the node, nothing sent
        self.assertIn("Cluster bus: TLS handshake with an incoming link from 127.0.0.1 failed: "
                      "the TLS handshake did not finish in time", a.stderr())
        self.assertTrue(tls_all_ok(self.nodes))

    def test_wrong_ca_node_cannot_join(self):
        """A node whose certificate the other CA signed: its links are refused (logged on both
        sides), and it never becomes a member."""
        tls_port = test_tls.free_port()
        options = tls_node_options(tls_port, plain=True, name="stranger")
        stranger = SluiceNode(options=options)
        stranger.tls_port = tls_port
        self.addCleanup(stranger.stop)
        stranger.start()
        a = self.nodes[0]
        with Client(stranger.port) as c:
            self.assertEqual(c.call("CLUSTER", "MEET", "127.0.0.1", a.tls_port, a.cport), "OK")
        # The member refuses the stranger's certificate on its accepted link...
        def refusals():
            return [line for line in a.stderr().splitlines()
                    if "Cluster bus: TLS handshake with an incoming link from 127.0.0.1 failed: "
                    in line and "certificate verify failed" in line]
        wait_until(refusals, what="the member's log line")
        # ... and the stranger's MEET handshake fails, then is forgotten after the node timeout.
        wait_until(lambda: "Cluster bus: TLS handshake with node" in stranger.stderr(),
                   what="the stranger's log line")
        time.sleep(3 * NODE_TIMEOUT_MS / 1000.0)
        for n in self.nodes:
            self.assertEqual(tls_info(n)["cluster_known_nodes"], "3")
        self.assertTrue(tls_all_ok(self.nodes))
        with Client(stranger.port) as c:
            info = text(c.call("CLUSTER", "INFO"))
        self.assertIn("cluster_known_nodes:1\r\n", info)
        # One line per peer and reason within 10 s, not one per 100 ms retry.
        self.assertLess(len(refusals()), 3)


@unittest.skipIf(redis_server_binary() is None, "redis-server is not installed")
class MixedPlainAndTlsClusterTest(TlsClusterCase):
    """Two Sluice masters and one redis-server 7.0.15 master, each with a plain port and a
    tls-port side by side, tls-cluster yes: the bus is TLS between every pair, TLS clients are
    shown TLS ports and plain clients plain ports, by Sluice exactly as by Redis."""

    kinds = ("sluice", "sluice", "redis")
    plain = True

    def test_state_ok_everywhere(self):
        self.assertIn("[OK] All 16384 slots covered.", self.create_output)
        wait_until(lambda: all_ok(self.nodes), what="cluster_state:ok over the plain ports")
        for n in self.nodes:
            self.assertEqual(cluster_info(n)["cluster_known_nodes"], "3")

    def nodes_ports(self, reply):
        """{node id: "ip:port@cport"} of a CLUSTER NODES text."""
        return {l.split(" ")[0]: l.split(" ")[1] for l in text(reply).strip().split("\n")}

    def test_each_client_is_shown_its_kind_of_port_as_by_redis(self):
        sluice, redis_node = self.nodes[0], self.nodes[2]
        for via_tls in (False, True):
            def call(n, *args):
                if via_tls:
                    return tls_call(n, *args)
                with Client(n.port) as c:
                    return c.call(*args)
            expected = {n: "127.0.0.1:%d@%d" % (n.tls_port if via_tls else n.port, n.cport)
                        for n in self.nodes}
            theirs = self.nodes_ports(call(redis_node, "CLUSTER", "NODES"))
            ours = self.nodes_ports(call(sluice, "CLUSTER", "NODES"))
            self.assertEqual(ours, theirs)
            self.assertEqual(sorted(ours.values()), sorted(expected.values()))
            self.assertEqual(call(sluice, "CLUSTER", "SLOTS"),
                             call(redis_node, "CLUSTER", "SLOTS"))
            # -MOVED from either kind of node names the port of the client's kind.
            key = "k:%d" % int(via_tls)
            slot = KeyHashSlot(key)
            owner = owner_of(self.nodes, slot)
            port = owner.tls_port if via_tls else owner.port
            for n in (sluice, redis_node):
                if n is owner:
                    continue
                self.assertEqual(call(n, "GET", key),
                                 RespError("MOVED %d 127.0.0.1:%d" % (slot, port)))

    def test_shards_as_redis(self):
        def members(n):
            out = {}
            for shard in tls_call(n, "CLUSTER", "SHARDS"):
                for m in shard[3]:
                    d = dict(zip(m[0::2], m[1::2]))
                    d.pop(b"replication-offset", None)
                    out[d[b"id"]] = d
            return out
        self.assertEqual(members(self.nodes[0]), members(self.nodes[2]))
        for n in self.nodes:
            self.assertIn(b"tls-port", members(self.nodes[0])[text(
                tls_call(n, "CLUSTER", "MYID")).encode()])

    def test_key_written_through_redis_read_through_sluice(self):
        key = "mixed"
        tls_cli("-c", "-p", self.nodes[2].tls_port, "SET", key, "both")
        for n in self.nodes:
            self.assertEqual(tls_cli("-c", "-p", n.tls_port, "GET", key).strip(), "both")


if __name__ == "__main__":
    unittest.main()
