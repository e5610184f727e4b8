"""The cluster behaviours Redis's own tests/cluster units check that the other cluster tests do
not (docs/cluster.md, "Redis's own cluster tests"), on a cluster of 3 masters + 3 replicas of one
binary built by `redis-cli --cluster create`:

- unit 25: a client subscribed (SSUBSCRIBE) to a shard channel whose slot leaves its node's
  shard (SETSLOT NODE, DELSLOTS) gets a `sunsubscribe` push and is unsubscribed (Redis's
  removeChannelsInSlot), on the master and on its replica;
- unit 16: EVAL / EVALSHA / FCALL on a READONLY replica are routed by the script's shebang flags
  and the function's flags (a write is -MOVED to the master), as Redis's getCommandFlags;
- unit 24: CLUSTER LINKS lists a link to and a link from each peer; an outbound link over
  cluster-link-sendbuf-limit is closed and made again;
- a client blocked (BLPOP, XREAD BLOCK) on a key whose slot moves away gets -MOVED;
- unit 27: cluster-preferred-endpoint-type (ip, hostname, unknown-endpoint) in CLUSTER SLOTS,
  SHARDS and -MOVED.

Each scenario runs on redis-server 7.0.15 nodes (ReferenceUnitsTest: the expected bytes are
Redis's) and on Sluice nodes (SluiceUnitsTest).

Run by hand: cd tests/blackbox && SLUICE_SERVER=../../build/server/sluice-server \\
    /usr/bin/python3 -m unittest -v test_cluster_units
"""

import os
import signal
import time
import unittest

from cluster_harness import cluster_create, cluster_info, start_nodes, stop_nodes, wait_until
from harness import IS_REDIS, Client, RespError
from test_cluster import KeyHashSlot
from test_transactions import redis_server_binary, redis_server_version

DEADLINE = 60.0  # seconds; the machine is busy


def frame(*elements, resp3=False):
    """A RESP2 array (RESP3 push) of bulk strings and integers, as the server sends it."""
    out = [b"%s%d\r\n" % (b">" if resp3 else b"*", len(elements))]
    for e in elements:
        if isinstance(e, int):
            out.append(b":%d\r\n" % e)
        else:
            e = e.encode() if isinstance(e, str) else e
            out.append(b"$%d\r\n%s\r\n" % (len(e), e))
    return b"".join(out)


class Topology:
    """The masters of a 3 + 3 cluster: port, id and the replica's port of each."""

    def __init__(self, nodes):
        self.by_port = {n.port: n for n in nodes}
        with Client(nodes[0].port) as c:
            text = c.call("CLUSTER", "NODES").decode()
        self.masters, replicas = [], {}
        for line in text.strip().split("\n"):
            f = line.split(" ")
            port = int(f[1].split("@")[0].split(":")[1])
            if "master" in f[2]:
                ranges = [tuple(int(x) for x in r.split("-")) if "-" in r else (int(r), int(r))
                          for r in f[8:] if not r.startswith("[")]
                self.masters.append({"id": f[0], "port": port, "ranges": ranges})
            else:
                replicas[f[3]] = port
        for m in self.masters:
            m["replica"] = replicas.get(m["id"])

    def owner(self, slot):
        for m in self.masters:
            if any(a <= slot <= b for a, b in m["ranges"]):
                return m
        raise AssertionError("slot %d not served" % slot)

    def other(self, master):
        return next(m for m in self.masters if m is not master)


class ClusterUnitsBase:
    kind = None
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.nodes = start_nodes([cls.kind] * 6, node_timeout=5000)
        try:
            cluster_create(cls.nodes, replicas=1)
            wait_until(lambda: all(cls.settled(n) for n in cls.nodes), DEADLINE,
                       "the cluster to agree")
            cls.topo = Topology(cls.nodes)
            wait_until(lambda: all(m["replica"] for m in Topology(cls.nodes).masters), DEADLINE,
                       "both replicas to be known")
            cls.topo = Topology(cls.nodes)
        except BaseException:
            stop_nodes(cls.nodes)
            raise

    @staticmethod
    def settled(node):
        try:
            info = cluster_info(node)
        except Exception:
            return False
        return info.get("cluster_state") == "ok" and info.get("cluster_known_nodes") == "6"

    @classmethod
    def tearDownClass(cls):
        stop_nodes(cls.nodes)

    def client(self, port, timeout=30.0):
        c = Client(port, timeout=timeout)
        self.addCleanup(c.close)
        return c

    def subscriber(self, port, *channels, resp3=False):
        c = self.client(port)
        if resp3:
            self.assertIsInstance(c.call("HELLO", "3"), dict)
        for i, ch in enumerate(channels):
            c.send(b"*2\r\n$10\r\nSSUBSCRIBE\r\n$%d\r\n%s\r\n" % (len(ch), ch.encode()))
            expected = frame("ssubscribe", ch, i + 1, resp3=resp3)
            self.assertEqual(c.read_raw(len(expected)), expected)
        return c

    def channel_on(self, master, avoid=()):
        """A channel name whose slot `master` serves (not one of the slots in avoid)."""
        for i in range(100000):
            ch = "%s-ch%d" % (self.kind, i)
            slot = KeyHashSlot(ch)
            if slot not in avoid and self.topo.owner(slot) is master and \
                    not getattr(self.__class__, "_used", set()).intersection({slot}):
                self.__class__._used = getattr(self.__class__, "_used", set()) | {slot}
                return ch, slot
        raise AssertionError("no channel found")

    def move_slot(self, slot, src, dst):
        """SETSLOT MIGRATING/IMPORTING then NODE on the source (the sunsubscribe point), then
        NODE on the target."""
        with Client(src["port"]) as s, Client(dst["port"]) as d:
            self.assertEqual(s.call("CLUSTER", "SETSLOT", slot, "MIGRATING", dst["id"]), "OK")
            self.assertEqual(d.call("CLUSTER", "SETSLOT", slot, "IMPORTING", src["id"]), "OK")
            self.assertEqual(s.call("CLUSTER", "SETSLOT", slot, "NODE", dst["id"]), "OK")
            self.assertEqual(d.call("CLUSTER", "SETSLOT", slot, "NODE", dst["id"]), "OK")

    # ---- unit 25: sunsubscribe when a slot moves away
    def test_setslot_node_away_unsubscribes_on_the_master(self):
        src = self.topo.masters[0]
        dst = self.topo.other(src)
        moved, slot = self.channel_on(src)
        kept, _ = self.channel_on(src)
        sub = self.subscriber(src["port"], moved, kept)
        with Client(src["port"]) as c:
            self.assertEqual(c.call("SPUBLISH", moved, "hello"), 1)
        expected = frame("smessage", moved, "hello")
        self.assertEqual(sub.read_raw(len(expected)), expected)
        self.move_slot(slot, src, dst)
        expected = frame("sunsubscribe", moved, 1)
        self.assertEqual(sub.read_raw(len(expected)), expected)
        # Still subscribed to the other channel, and nothing else was sent.
        with Client(src["port"]) as c:
            self.assertEqual(c.call("SPUBLISH", kept, "still"), 1)
            self.assertEqual(c.call("PUBSUB", "SHARDNUMSUB", moved), [moved.encode(), 0])
        expected = frame("smessage", kept, "still")
        self.assertEqual(sub.read_raw(len(expected)), expected)

    def test_slot_moving_away_from_the_master_unsubscribes_on_its_replica(self):
        src = self.topo.masters[1]
        dst = self.topo.other(src)
        ch, slot = self.channel_on(src)
        sub = self.subscriber(src["replica"], ch)
        with Client(src["port"]) as c:
            c.call("SPUBLISH", ch, "hello")
        expected = frame("smessage", ch, "hello")
        self.assertEqual(sub.read_raw(len(expected)), expected)
        self.move_slot(slot, src, dst)
        expected = frame("sunsubscribe", ch, 0)
        self.assertEqual(sub.read_raw(len(expected)), expected)  # after the replica hears
        # Out of pub/sub mode: an ordinary command is answered (RESP2).
        self.assertEqual(sub.call("ECHO", "x"), b"x")

    def test_delslots_unsubscribes_resp3(self):
        master = self.topo.masters[0]
        ch, slot = self.channel_on(master)
        sub = self.subscriber(master["port"], ch, resp3=True)
        with Client(master["port"]) as c:
            self.assertEqual(c.call("CLUSTER", "DELSLOTS", slot), "OK")
            try:
                expected = frame("sunsubscribe", ch, 0, resp3=True)
                self.assertEqual(sub.read_raw(len(expected)), expected)
            finally:
                self.assertEqual(c.call("CLUSTER", "ADDSLOTS", slot), "OK")

    # ---- unit 16: scripts on a READONLY replica
    def replica_reading(self):
        """(master, replica client after READONLY) for key "a" = "1" replicated."""
        slot = KeyHashSlot("a")
        master = self.topo.owner(slot)
        with Client(master["port"]) as c:
            self.assertEqual(c.call("SET", "a", "1"), "OK")
        r = self.client(master["replica"])
        self.assertEqual(r.call("READONLY"), "OK")
        wait_until(lambda: r.call("GET", "a") == b"1", DEADLINE, "the replica to have a")
        return master, r, RespError("MOVED %d 127.0.0.1:%d" % (slot, master["port"]))

    def test_scripts_on_a_readonly_replica_route_by_their_flags(self):
        master, r, moved = self.replica_reading()
        write = "#!lua\nreturn redis.call('del','a')"
        self.assertEqual(r.call("EVAL", write, 1, "a"), moved)
        self.assertEqual(r.call("EVAL_RO", write, 1, "a"), moved)
        self.assertEqual(r.call("EVAL", "#!lua flags=no-writes\nreturn redis.call('get','a')",
                                1, "a"), b"1")
        # Without a shebang EVAL is not a write for routing (Redis's compat mode).
        self.assertEqual(r.call("EVAL", "return redis.call('get','a')", 1, "a"), b"1")
        sha = r.call("SCRIPT", "LOAD", write)
        self.assertEqual(r.call("EVALSHA", sha, 1, "a"), moved)
        self.assertEqual(r.call("EVALSHA", sha.upper(), 1, "a"), moved)
        self.assertEqual(r.call("MULTI"), "OK")
        self.assertEqual(r.call("EVAL", write, 1, "a"), moved)
        self.assertEqual(r.call("EXEC"), RespError(
            "EXECABORT Transaction discarded because of previous errors."))
        with Client(master["port"]) as c:
            self.assertEqual(c.call("GET", "a"), b"1")

    def test_functions_on_a_readonly_replica_route_by_their_flags(self):
        master, r, moved = self.replica_reading()
        lib = ("#!lua name=unit16\n"
               "redis.register_function('w', function(keys) return redis.call('del', keys[1]) end)\n"
               "redis.register_function{function_name='r', flags={'no-writes'},\n"
               "  callback=function(keys) return redis.call('get', keys[1]) end}\n")
        with Client(master["port"]) as c:
            self.assertEqual(c.call("FUNCTION", "LOAD", "REPLACE", lib), b"unit16")
        wait_until(lambda: r.call("FUNCTION", "LIST", "LIBRARYNAME", "unit16") != [], DEADLINE,
                   "the library on the replica")
        self.assertEqual(r.call("FCALL", "w", 1, "a"), moved)
        self.assertEqual(r.call("FCALL_RO", "w", 1, "a"), moved)
        self.assertEqual(r.call("FCALL", "r", 1, "a"), b"1")
        self.assertEqual(r.call("FCALL_RO", "r", 1, "a"), b"1")

    # ---- a blocked client whose slot moves away (Redis's clusterRedirectBlockedClientIfNeeded)
    def test_blocked_clients_get_moved_when_their_slot_moves(self):
        src = self.topo.masters[2]
        dst = self.topo.other(src)
        key, slot = self.channel_on(src)
        stream, sslot = self.channel_on(src)
        blpop = self.client(src["port"])
        blpop.send(b"*3\r\n$5\r\nBLPOP\r\n$%d\r\n%s\r\n$1\r\n0\r\n" % (len(key), key.encode()))
        xread = self.client(src["port"])
        xread.send(b"*6\r\n$5\r\nXREAD\r\n$5\r\nBLOCK\r\n$1\r\n0\r\n$7\r\nSTREAMS\r\n"
                   b"$%d\r\n%s\r\n$1\r\n$\r\n" % (len(stream), stream.encode()))
        with Client(src["port"]) as c:
            wait_until(lambda: b"blocked_clients:2" in c.call("INFO", "clients"), DEADLINE,
                       "both clients to block")
        self.move_slot(slot, src, dst)
        self.assertEqual(blpop.read(), RespError("MOVED %d 127.0.0.1:%d" % (slot, dst["port"])))
        self.move_slot(sslot, src, dst)
        self.assertEqual(xread.read(), RespError("MOVED %d 127.0.0.1:%d" % (sslot, dst["port"])))

    # ---- unit 27: cluster-preferred-endpoint-type
    def test_preferred_endpoint_type(self):
        me, them, nameless = self.topo.masters
        key_them = next("k%d" % i for i in range(100000)
                        if self.topo.owner(KeyHashSlot("k%d" % i)) is them)
        key_nameless = next("k%d" % i for i in range(100000)
                            if self.topo.owner(KeyHashSlot("k%d" % i)) is nameless)
        a = self.client(me["port"])
        self.assertIsInstance(a.call("HELLO", "3"), dict)  # the node maps as maps
        try:
            for m, name in ((me, "me.com"), (them, "them.com")):
                with Client(m["port"]) as c:
                    self.assertEqual(c.call("CONFIG", "SET", "cluster-announce-hostname", name),
                                     "OK")

            def masters_by_id():
                out = {}
                for r in a.call("CLUSTER", "SLOTS"):
                    out[r[2][2].decode()] = r[2]
                return out
            wait_until(lambda: masters_by_id()[them["id"]][3] == {b"hostname": b"them.com"} and
                       masters_by_id()[me["id"]][3] == {b"hostname": b"me.com"}, DEADLINE,
                       "the hostnames to propagate")
            ip = b"127.0.0.1"
            m = masters_by_id()
            self.assertEqual(m[nameless["id"]][0::3], [ip, {}])
            self.assertEqual(a.call("SET", key_them, "x"), RespError(
                "MOVED %d 127.0.0.1:%d" % (KeyHashSlot(key_them), them["port"])))

            self.assertEqual(a.call("CONFIG", "SET", "cluster-preferred-endpoint-type",
                                    "hostname"), "OK")
            m = masters_by_id()
            self.assertEqual(m[them["id"]][0::3], [b"them.com", {b"ip": ip}])
            self.assertEqual(m[me["id"]][0::3], [b"me.com", {b"ip": ip}])
            self.assertEqual(m[nameless["id"]][0::3], [b"?", {b"ip": ip}])
            self.assertEqual(a.call("SET", key_them, "x"), RespError(
                "MOVED %d them.com:%d" % (KeyHashSlot(key_them), them["port"])))
            self.assertEqual(a.call("SET", key_nameless, "x"), RespError(
                "MOVED %d ?:%d" % (KeyHashSlot(key_nameless), nameless["port"])))
            endpoints = {}
            for shard in a.call("CLUSTER", "SHARDS"):
                for node in shard[b"nodes"]:
                    endpoints[node[b"id"].decode()] = node[b"endpoint"]
            self.assertEqual(endpoints[them["id"]], b"them.com")
            self.assertEqual(endpoints[nameless["id"]], b"?")

            self.assertEqual(a.call("CONFIG", "SET", "cluster-preferred-endpoint-type",
                                    "unknown-endpoint"), "OK")
            m = masters_by_id()
            self.assertEqual(m[them["id"]][0::3], [None, {b"ip": ip, b"hostname": b"them.com"}])
            self.assertEqual(m[nameless["id"]][0::3], [None, {b"ip": ip}])
            self.assertEqual(a.call("SET", key_them, "x"), RespError(
                "MOVED %d :%d" % (KeyHashSlot(key_them), them["port"])))
        finally:
            a.call("CONFIG", "SET", "cluster-preferred-endpoint-type", "ip")
            for m in (me, them):
                with Client(m["port"]) as c:
                    c.call("CONFIG", "SET", "cluster-announce-hostname", "")

    # ---- unit 24: links both ways
    def test_links_to_and_from_each_peer(self):
        for node in self.nodes:
            with Client(node.port) as c:
                me = c.call("CLUSTER", "MYID").decode()
                peers = [line.split(" ")[0] for line in
                         c.call("CLUSTER", "NODES").decode().strip().split("\n")]
                peers.remove(me)

                def links():
                    out = {}
                    for link in c.call("CLUSTER", "LINKS"):
                        fields = dict(zip(link[::2], link[1::2]))
                        key = (fields[b"node"].decode(), fields[b"direction"].decode())
                        out[key] = out.get(key, 0) + 1
                        self.assertEqual(link[::2], [b"direction", b"node", b"create-time",
                                                     b"events", b"send-buffer-allocated",
                                                     b"send-buffer-used"])
                    return out
                expected = {(p, d): 1 for p in peers for d in ("to", "from")}
                wait_until(lambda: links() == expected, DEADLINE,
                           "a link to and from each peer")


    def test_link_over_its_send_buffer_limit_is_made_again(self):
        a = self.topo.masters[0]
        peer_port = self.topo.masters[1]["replica"]  # a replica: stopping it fails nothing over
        peer = self.topo.by_port[peer_port]
        c = self.client(a["port"])
        with Client(peer_port) as p:
            peer_id = p.call("CLUSTER", "MYID").decode()

        def link(direction):
            for fields in c.call("CLUSTER", "LINKS"):
                f = dict(zip(fields[::2], fields[1::2]))
                if f[b"node"].decode() == peer_id and f[b"direction"].decode() == direction:
                    return f
            return None

        def exceeded():
            info = c.call("CLUSTER", "INFO").decode()
            return int(info.split("total_cluster_links_buffer_limit_exceeded:")[1].split("\r")[0])

        wait_until(lambda: link("to") and link("from"), DEADLINE, "both links to the peer")
        to_before, from_before = link("to"), link("from")
        self.assertEqual(exceeded(), 0)
        self.assertEqual(c.call("CONFIG", "SET", "cluster-node-timeout", 3600000), "OK")
        self.assertEqual(c.call("CONFIG", "SET", "cluster-link-sendbuf-limit", 256 * 1024), "OK")
        os.kill(peer.proc.pid, signal.SIGSTOP)
        try:
            payload = "x" * (128 * 1024)
            end = time.monotonic() + DEADLINE
            while exceeded() < 1 and time.monotonic() < end:
                c.call("PUBLISH", "channel", payload)
                time.sleep(0.2)
            self.assertGreaterEqual(exceeded(), 1)
        finally:
            os.kill(peer.proc.pid, signal.SIGCONT)
            c.call("CONFIG", "SET", "cluster-link-sendbuf-limit", 0)
            c.call("CONFIG", "SET", "cluster-node-timeout", 5000)
        wait_until(lambda: link("to") is not None, DEADLINE, "a new link to the peer")
        self.assertGreater(link("to")[b"create-time"], to_before[b"create-time"])
        self.assertEqual(link("from")[b"create-time"], from_before[b"create-time"])


@unittest.skipIf(IS_REDIS, "starts its own redis-server nodes")
class ReferenceUnitsTest(ClusterUnitsBase, unittest.TestCase):
    kind = "redis"

    @classmethod
    def setUpClass(cls):
        binary = redis_server_binary()
        if binary is None or not redis_server_version(binary).startswith("7.0"):
            raise unittest.SkipTest("needs redis-server 7.0.x on PATH")
        super().setUpClass()


@unittest.skipIf(IS_REDIS, "starts its own Sluice nodes")
class SluiceUnitsTest(ClusterUnitsBase, unittest.TestCase):
    kind = "sluice"


if __name__ == "__main__":
    unittest.main()
