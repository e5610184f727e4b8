"""What Redis's own tests/sentinel runner and replica-ack-writes under load need of a node
(docs/replication.md, "Redis's own sentinel tests"):

- every replication parameter Redis 7.0.15's CONFIG GET * shows (repl-diskless-sync-delay and
  the rest, which Redis's runner writes into each node's config file) with Redis's value;
- `logfile` (relative to `dir`, as Redis): the runner reads each node's log there and counts
  anything on stderr as a failure;
- `replica-ack-writes 1` under pipelined clients: no reply waits for replica-ack-timeout while
  the replica is up (a replica's link on the primary never waits in a held round);
- FAILOVER's TIMEOUT expiring, with and without FORCE, side by side with redis-server 7.0.15
  (replies, INFO master_failover_state, roles), and its write pause kept apart from CLIENT
  PAUSE / UNPAUSE as Redis keeps them; CLIENT PAUSE merging with one still on, as Redis.

The Sentinel tests of issue 40 (three redis-sentinel processes, kill -9, redis-py Sentinel) are
in test_replication.py, SentinelTest."""

import os
import signal
import threading
import time
import unittest

from harness import IS_REDIS, Server, free_port
from test_replication import conn, in_sync, info, redis, redis_reference, stopped, wait_for

REPLICATION_NAMES = ("replicaof", "slaveof", "masterauth", "masteruser")
REPLICATION_PREFIXES = ("repl-", "replica-", "slave-", "min-replicas", "min-slaves")


def replication_params(r):
    pairs = r.config_get("*")
    return {k: v for k, v in pairs.items()
            if k in REPLICATION_NAMES or k.startswith(REPLICATION_PREFIXES)}


def reference_server():
    s = Server(options={"save": "", "appendonly": "no", "daemonize": "no"}, debug=False)
    s.binary = os.environ.get("REDIS_SERVER") or "redis-server"
    return s


@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class ReplicationParametersTest(unittest.TestCase):
    def test_every_replication_parameter_as_redis(self):
        """Redis's CONFIG GET * names of replication (those test_config_compat leaves to this
        room): each one answers on Sluice with Redis's default."""
        ref = reference_server()
        try:
            ref.start()
        except (OSError, AssertionError) as e:
            self.skipTest("redis-server does not start: %s" % e)
        self.addCleanup(ref.stop)
        s = Server()
        s.start()
        self.addCleanup(s.stop)
        want = replication_params(conn(ref))
        got = replication_params(conn(s))
        self.assertGreater(len(want), 30)
        for name, value in sorted(want.items()):
            with self.subTest(name=name):
                self.assertEqual(got.get(name), value)
        # Settable as in Redis (stored: Sluice's full sync always streams from a checkpoint).
        r = conn(s)
        r.config_set("repl-diskless-sync-delay", 0)
        r.config_set("repl-diskless-load", "swapdb")
        self.assertEqual(r.config_get("repl-diskless-*"),
                         {"repl-diskless-sync": "yes", "repl-diskless-sync-delay": "0",
                          "repl-diskless-sync-max-replicas": "0",
                          "repl-diskless-load": "swapdb"})
        with self.assertRaises(redis.ResponseError) as e:
            r.config_set("repl-diskless-load", "sometimes")
        with self.assertRaises(redis.ResponseError) as want_e:
            conn(ref).config_set("repl-diskless-load", "sometimes")
        self.assertEqual(str(e.exception), str(want_e.exception))


@unittest.skipIf(IS_REDIS, "Sluice's own log file handling")
class RunnerConfigTest(unittest.TestCase):
    def test_config_file_as_redis_sentinel_runner_writes_it(self):
        """The lines Redis's runner (tests/instances.tcl) writes for a node: the node starts,
        its log goes to `logfile` under `dir`, and nothing reaches stderr."""
        port = free_port()
        s = Server(options={"dir": None}, port=port, config_text=(
            "port %d\nbind 127.0.0.1\nrepl-diskless-sync-delay 0\ndir ./node_0\n"
            "logfile log.txt\nenable-protected-configs yes\nenable-debug-command yes\n" % port))
        os.makedirs(os.path.join(s.workdir, "node_0"), exist_ok=True)
        s.start()
        self.addCleanup(s.stop)
        conn(s).set("k", "v")
        log = os.path.join(s.workdir, "node_0", "log.txt")

        def logged():
            with open(log) as f:
                return "ready" in f.read()

        wait_for(lambda: os.path.exists(log) and logged(), what="log file")
        self.assertEqual(s.terminate(), 0)
        with open(log) as f:
            text = f.read()
        self.assertIn("Sluice is now ready to exit", text)
        self.assertEqual(s.stderr(), "")


@unittest.skipIf(IS_REDIS, "replica-ack-writes is Sluice's")
class AckWritesUnderLoadTest(unittest.TestCase):
    def test_pipelined_clients_never_wait_for_the_timeout(self):
        """Eight clients pipelining GCRA.TAKE with replica-ack-writes 1 and a 6 s
        replica-ack-timeout: every pipeline is answered well before the timeout (a replica's
        link waiting in a held round used to hold it until the timeout), and every take is
        on the replica when its reply arrives."""
        primary = Server(options={"replica-ack-writes": "1", "replica-ack-timeout": "6000"})
        primary.start()
        self.addCleanup(primary.stop)
        replica = Server()
        replica.start()
        self.addCleanup(replica.stop)
        conn(replica).execute_command("REPLICAOF", "127.0.0.1", primary.port)
        wait_for(lambda: in_sync(primary, replica), what="sync")
        slowest = []
        counts = []
        errors = []

        def worker(i):
            try:
                c = conn(primary)
                worst, n, end = 0.0, 0, time.monotonic() + 3.0
                while time.monotonic() < end:
                    pipe = c.pipeline(transaction=False)
                    for j in range(16):
                        pipe.execute_command("GCRA.TAKE", "load:%d:%d" % (i, (n + j) % 200),
                                             1000000, "1h")
                    t = time.monotonic()
                    pipe.execute()
                    worst = max(worst, time.monotonic() - t)
                    n += 16
                slowest.append(worst)
                counts.append(n)
            except Exception as e:  # reported by the main thread
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        self.assertEqual(errors, [])
        print("replica-ack-writes 1, 8 clients, pipeline 16: %d takes in 3 s, slowest "
              "pipeline %.0f ms" % (sum(counts), max(slowest) * 1000))
        self.assertEqual(len(slowest), 8)
        self.assertLess(max(slowest), 3.0)
        # Acknowledged means applied on the replica: its copy of each key is the primary's.
        p, r = conn(primary), conn(replica)
        for i in range(8):
            for k in range(0, 200, 37):
                key = "load:%d:%d" % (i, k)
                self.assertEqual(r.dump(key), p.dump(key), key)


def failover_state(port):
    return info(conn(port))["master_failover_state"]


def write_in_thread(port, key):
    """SET key 1 from a new connection in a thread; returns the list it appends the reply (or
    the error's text) to."""
    done = []

    def write():
        try:
            done.append(conn(port).set(key, "1"))
        except redis.ResponseError as e:  # -READONLY once the failover is done
            done.append(str(e))

    threading.Thread(target=write, daemon=True).start()
    return done


@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class FailoverTimeoutBesideRedisTest(unittest.TestCase):
    """The same steps on a Sluice primary + replica and on a redis-server 7.0.15 pair, the replica
    stopped (SIGSTOP) so it never catches up: what each step answers must be equal."""

    def scenario(self, primary_port, replica_port, replica_pid):
        p, rc = conn(primary_port), conn(replica_port)
        rc.execute_command("REPLICAOF", "127.0.0.1", primary_port)
        wait_for(lambda: in_sync(primary_port, replica_port), what="sync")
        seen = []
        os.kill(replica_pid, signal.SIGSTOP)
        try:
            wait_for(lambda: stopped(replica_pid), what="replica stopped")
            p.set("unacked", "1")
            # TIMEOUT without FORCE: the wait ends, the primary stays one. CLIENT UNPAUSE and
            # a CLIENT PAUSE that ends do not lift the failover's write pause meanwhile.
            seen.append(p.execute_command("FAILOVER", "TIMEOUT", 2500))
            seen.append(failover_state(primary_port))
            seen.append(p.execute_command("CLIENT", "PAUSE", 50, "WRITE"))
            time.sleep(0.1)
            seen.append(p.execute_command("CLIENT", "UNPAUSE"))
            done = write_in_thread(primary_port, "during")
            time.sleep(0.6)
            seen.append(("write while failing over", list(done)))
            seen.append(p.get("unacked"))  # reads go on
            wait_for(lambda: failover_state(primary_port) == "no-failover", what="timeout")
            wait_for(lambda: done == [True], what="the held write")
            seen.append(("after the timeout", info(p)["role"], list(done)))
            # TIMEOUT with FORCE: the primary fails over anyway when the time is up.
            seen.append(p.execute_command("FAILOVER", "TO", "127.0.0.1", replica_port,
                                          "TIMEOUT", 500, "FORCE"))
            seen.append(failover_state(primary_port))
            wait_for(lambda: failover_state(primary_port) != "waiting-for-sync",
                     what="the forced failover")
            seen.append(failover_state(primary_port))
            # Redis refuses it (-READONLY) at once or after the swap, as the timing falls.
            forced_write = write_in_thread(primary_port, "during-force")
        finally:
            os.kill(replica_pid, signal.SIGCONT)
        wait_for(lambda: (info(rc)["role"] == "master" and
                          info(p).get("master_link_status") == "up" and
                          failover_state(primary_port) == "no-failover"), what="swapped")
        seen.append(("swapped", info(p)["role"], info(rc)["role"]))
        wait_for(lambda: forced_write, what="the write during the forced failover")
        seen.append(("write during the forced failover", forced_write))
        return seen

    def test_timeouts_and_pauses_as_redis(self):
        s_primary, s_replica = Server(), Server()
        for s in (s_primary, s_replica):
            s.start()
            self.addCleanup(s.stop)
        r_primary, r_replica = redis_reference(), redis_reference()
        self.addCleanup(r_primary.stop)
        self.addCleanup(r_replica.stop)
        got = self.scenario(s_primary.port, s_replica.port, s_replica.proc.pid)
        want = self.scenario(r_primary.port, r_replica.port, r_replica.proc.pid)
        self.assertEqual(got, want)
        self.assertIn(("write while failing over", []), got)
        self.assertIn("failover-in-progress", got)
        self.assertIn("aborted: Replica never caught up before timeout", s_primary.log())


@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class ClientPauseMergeBesideRedisTest(unittest.TestCase):
    """CLIENT PAUSE kept per purpose (server/core/pause_purposes.h) also merges as Redis 7.0's
    pauseClients: a shorter (or 0) CLIENT PAUSE never shortens one still on."""

    def steps(self, port):
        a = conn(port)
        seen = [a.execute_command("CLIENT", "PAUSE", 100000, "WRITE"),
                a.execute_command("CLIENT", "PAUSE", 10, "WRITE"),
                a.execute_command("CLIENT", "PAUSE", 0, "WRITE")]
        time.sleep(0.3)
        done = write_in_thread(port, "k")
        time.sleep(0.5)
        seen += [("held", list(done)), a.get("k"), a.execute_command("CLIENT", "UNPAUSE")]
        wait_for(lambda: done, what="the write after CLIENT UNPAUSE")
        seen.append(("after unpause", list(done)))
        return seen

    def test_a_shorter_pause_does_not_shorten_a_longer_one(self):
        s = Server()
        s.start()
        self.addCleanup(s.stop)
        ref = redis_reference()
        self.addCleanup(ref.stop)
        got, want = self.steps(s.port), self.steps(ref.port)
        self.assertEqual(got, want)
        self.assertIn(("held", []), got)


if __name__ == "__main__":
    unittest.main()
