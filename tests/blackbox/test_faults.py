"""Faults and abuse: protected mode, descriptor limits, slow readers (output buffer limits),
a full disk, a damaged write-ahead log. Each test starts its own server (harness.Server)."""

import os
import re
import resource
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import unittest

from harness import (IS_REDIS, BlackboxTestCase, ConnectionClosed, RespError, Server,
                     encode_command, sluice_only)

DENIED = (b"-DENIED Redis is running in protected mode because protected mode is enabled and no "
          b"password is set for the default user. In this mode connections are only accepted "
          b"from the loopback interface. If you want to connect from external computers to Redis "
          b"you may adopt one of the following solutions: 1) Just disable protected mode sending "
          b"the command 'CONFIG SET protected-mode no' from the loopback interface by connecting "
          b"to Redis from the same host the server is running, however MAKE SURE Redis is not "
          b"publicly accessible from internet if you do so. Use CONFIG REWRITE to make this "
          b"change permanent. 2) Alternatively you can just disable the protected mode by "
          b"editing the Redis configuration file, and setting the protected mode option to 'no', "
          b"and then restarting the server. 3) If you started the server manually just for "
          b"testing, restart it with the '--protected-mode no' option. 4) Setup a an "
          b"authentication password for the default user. NOTE: You only need to do one of the "
          b"above things in order for the server to start accepting connections from the "
          b"outside.\r\n")


def non_loopback_ipv4():
    """An IPv4 address of this machine other than 127.x (from `hostname -I`), or None."""
    try:
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True,
                             timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for word in out.split():
        if "." in word and not word.startswith("127."):
            return word
    return None


def info_field(client, section, name):
    text = client.call("INFO", section).decode()
    for line in text.split("\r\n"):
        if line.startswith(name + ":"):
            return line.split(":", 1)[1]
    raise AssertionError("INFO %s has no %s:\n%s" % (section, name, text))


class RawClient:
    """A socket to host:port with a read deadline; reads raw bytes."""

    def __init__(self, host, port, timeout=20.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)

    def close(self):
        self.sock.close()

    def call_raw(self, *args):
        self.sock.sendall(encode_command(*args))
        return self.sock.recv(65536)

    def read_until_closed(self):
        data = b""
        while True:
            try:
                chunk = self.sock.recv(65536)
            except ConnectionResetError:
                return data
            if not chunk:
                return data
            data += chunk


class ProtectedModeTest(BlackboxTestCase):
    """Runs against redis-server too (SLUICE_TARGET=redis): the replies are Redis's own."""

    def setUp(self):
        self.ip = non_loopback_ipv4()
        if self.ip is None:
            self.skipTest("this machine has no non-loopback IPv4 address (hostname -I)")

    def start(self, **options):
        opts = {"bind": "127.0.0.1 " + self.ip}
        opts.update(options)
        server = Server(options=opts)
        self.addCleanup(server.stop)
        server.start()
        return server

    def remote(self, server):
        c = RawClient(self.ip, server.port)
        self.addCleanup(c.close)
        return c

    def test_non_loopback_client_is_denied_by_default(self):
        server = self.start()
        self.assertEqual(self.remote(server).read_until_closed(), DENIED)
        with server.client() as c:  # loopback is served
            self.assertEqual(c.call("PING"), "PONG")
            self.assertEqual(c.call("CONFIG", "GET", "protected-mode"),
                             [b"protected-mode", b"yes"])
            self.assertEqual(info_field(c, "stats", "rejected_connections"), "1")

    def test_config_set_protected_mode(self):
        server = self.start()
        with server.client() as c:
            self.assertEqual(c.call("CONFIG", "SET", "protected-mode", "maybe"), RespError(
                "ERR CONFIG SET failed (possibly related to argument 'protected-mode') - "
                "argument must be 'yes' or 'no'"))
            self.assertEqual(c.call("CONFIG", "SET", "protected-mode", "no"), "OK")
            self.assertEqual(c.call("CONFIG", "GET", "protected-mode"),
                             [b"protected-mode", b"no"])
        self.assertEqual(self.remote(server).call_raw("PING"), b"+PONG\r\n")
        with server.client() as c:
            self.assertEqual(c.call("CONFIG", "SET", "protected-mode", "yes"), "OK")
        self.assertEqual(self.remote(server).read_until_closed(), DENIED)

    def test_flag_and_password_lift_protection(self):
        server = self.start(**{"protected-mode": "no"})
        self.assertEqual(self.remote(server).call_raw("PING"), b"+PONG\r\n")
        server = self.start(requirepass="secret")
        self.assertEqual(self.remote(server).call_raw("PING"),
                         b"-NOAUTH Authentication required.\r\n")

    @sluice_only
    def test_listening_on_every_address_without_password_warns(self):
        server = self.start(bind="0.0.0.0")
        self.assertIn("WARNING: listening on 0.0.0.0:%d without requirepass: protected mode is "
                      "on" % server.port, server.log())
        server = self.start(bind="0.0.0.0", requirepass="secret")
        self.assertNotIn("WARNING: listening", server.log())


def cpu_seconds(pid):
    """User + system CPU time of a process, in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_for(predicate, what, deadline=30.0):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


@sluice_only
class DescriptorLimitTest(BlackboxTestCase):
    def start(self, nofile=None, **options):
        opts = {"threads": "2"}
        opts.update(options)
        server = Server(options=opts)
        self.addCleanup(server.stop)
        if nofile is not None:
            real_spawn = subprocess.Popen

            def limited(*args, **kw):
                kw["preexec_fn"] = lambda: resource.setrlimit(resource.RLIMIT_NOFILE,
                                                              (nofile, nofile))
                return real_spawn(*args, **kw)

            subprocess.Popen = limited
            try:
                server.start()
            finally:
                subprocess.Popen = real_spawn
        else:
            server.start()
        return server

    def connect_all(self, server, n):
        clients = []
        for i in range(n):
            c = server.only_client() if i == 0 else server.client()
            self.addCleanup(c.close)
            clients.append(c)
        return clients

    def test_low_ulimit_lowers_maxclients_and_extra_clients_get_the_error(self):
        server = self.start(nofile=64)
        self.assertIn("WARNING: maxclients 10000 needs 10032 open files but the limit is 64 "
                      "(ulimit -Hn); maxclients lowered to 32.", server.log())
        clients = self.connect_all(server, 32)
        for c in clients:
            self.assertEqual(c.call("PING"), "PONG")
        with server.client() as extra:
            self.assertEqual(extra.read_until_closed(), b"-ERR max number of clients reached\r\n")
        c = clients[0]
        self.assertEqual(c.call("CONFIG", "GET", "maxclients"), [b"maxclients", b"32"])
        self.assertEqual(c.call("CONFIG", "SET", "maxclients", "100"), RespError(
            "ERR CONFIG SET failed (possibly related to argument 'maxclients') - The operating "
            "system is not able to handle the specified number of clients, try with 32"))
        self.assertEqual(c.call("CONFIG", "SET", "maxclients", "20"), "OK")
        self.assertEqual(c.call("CONFIG", "SET", "maxclients", "32"), "OK")
        self.assertEqual(info_field(c, "stats", "rejected_connections"), "1")

    def test_soft_limit_is_raised_up_to_the_hard_limit(self):
        real_spawn = subprocess.Popen
        server = Server(options={"maxclients": "1000"})
        self.addCleanup(server.stop)

        def limited(*args, **kw):
            kw["preexec_fn"] = lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (100, 2000))
            return real_spawn(*args, **kw)

        subprocess.Popen = limited
        try:
            server.start()
        finally:
            subprocess.Popen = real_spawn
        self.assertIn("raised the open files limit from 100 to 1032", server.log())
        self.assertEqual(resource.prlimit(server.proc.pid, resource.RLIMIT_NOFILE), (1032, 2000))
        with server.client() as c:
            self.assertEqual(c.call("CONFIG", "GET", "maxclients"), [b"maxclients", b"1000"])

    def test_too_low_a_limit_is_a_clear_start_up_error(self):
        server = Server(options={})
        self.addCleanup(server.stop)
        argv = server.argv()
        res = subprocess.run(argv, capture_output=True, text=True, timeout=60,
                             preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE,
                                                                   (20, 20)))
        self.assertEqual(res.returncode, 1, res.stderr)
        self.assertIn("the open files limit is too low to serve any client: maxclients 10000 "
                      "needs 10032 open files but the limit is 20", res.stderr)

    def test_out_of_descriptors_backs_off_then_recovers(self):
        server = self.start(maxclients="100")
        pid = server.proc.pid
        first = self.connect_all(server, 1)[0]
        self.assertEqual(first.call("PING"), "PONG")
        # Leave the server 3 free descriptors, then connect 10 clients: 3 are served, the other
        # 7 wait in the listen backlog while every accept fails with EMFILE.
        open_fds = len(os.listdir("/proc/%d/fd" % pid))
        soft, hard = resource.prlimit(pid, resource.RLIMIT_NOFILE)
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (open_fds + 3, hard))
        waiting = []
        for _ in range(10):
            s = socket.create_connection(("127.0.0.1", server.port), timeout=30)
            self.addCleanup(s.close)
            s.sendall(encode_command("PING"))
            waiting.append(s)
        wait_for(lambda: "accept failed: Too many open files" in server.log(), "accept to fail")
        cpu_before = cpu_seconds(pid)
        time.sleep(2.0)
        self.assertLess(cpu_seconds(pid) - cpu_before, 0.5, "the server spins on accept")
        self.assertEqual(server.log().count("accept failed"), 1, server.log())
        self.assertEqual(first.call("PING"), "PONG")  # connected clients are still served
        # Give the descriptors back: every waiting client is accepted and answered.
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (soft, hard))
        for s in waiting:
            s.settimeout(30)
            self.assertEqual(s.recv(100), b"+PONG\r\n")
        wait_for(lambda: "accepting connections again after" in server.log(), "recovery line")


def rss_bytes(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS for %d" % pid)


BIG = 16 * 1024 * 1024


class OutputBufferTest(BlackboxTestCase):
    """Slow readers and big requests; the CONFIG replies are Redis's own (SLUICE_TARGET=redis)."""

    def setUp(self):
        self.server = Server(options={"threads": "2"} if not IS_REDIS else {})
        self.addCleanup(self.server.stop)
        self.server.start()
        self.c = self.server.client()
        self.addCleanup(self.c.close)

    def slow_reader(self, commands):
        """A client that sends `commands` in one write and never reads."""
        s = socket.create_connection(("127.0.0.1", self.server.port), timeout=30)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
        self.addCleanup(s.close)
        s.sendall(b"".join(encode_command(*c) for c in commands))
        return s

    def test_config_get_and_set(self):
        c = self.c
        self.assertEqual(c.call("CONFIG", "GET", "client-output-buffer-limit"), [
            b"client-output-buffer-limit",
            b"normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"])
        self.assertEqual(c.call("CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 2kb 3"),
                         "OK")
        self.assertEqual(c.call("CONFIG", "SET", "client-output-buffer-limit",
                                "replica 1 2 3 PUBSUB 4 5 6"), "OK")
        self.assertEqual(c.call("CONFIG", "SET", "client-output-buffer-limit", ""), "OK")
        self.assertEqual(c.call("CONFIG", "GET", "client-output-buffer-limit"), [
            b"client-output-buffer-limit", b"normal 1048576 2048 3 slave 1 2 3 pubsub 4 5 6"])
        prefix = ("ERR CONFIG SET failed (possibly related to argument "
                  "'client-output-buffer-limit') - ")
        for value, reason in [
                ("normal", "Wrong number of arguments in buffer limit configuration."),
                ("normal 1 2 3 pubsub", "Wrong number of arguments in buffer limit configuration."),
                ("foo 1 2 3", "Invalid client class specified in buffer limit configuration."),
                ("normal 1x 2 3",
                 "Error in hard, soft or soft_seconds setting in buffer limit configuration."),
                ("normal -1 0 0",
                 "Error in hard, soft or soft_seconds setting in buffer limit configuration."),
                ("normal 1 2 -3",
                 "Error in hard, soft or soft_seconds setting in buffer limit configuration.")]:
            self.assertEqual(c.call("CONFIG", "SET", "client-output-buffer-limit", value),
                             RespError(prefix + reason), value)
        self.assertEqual(c.call("CONFIG", "GET", "client-output-buffer-limit"), [
            b"client-output-buffer-limit", b"normal 1048576 2048 3 slave 1 2 3 pubsub 4 5 6"])
        self.assertEqual(c.call("CONFIG", "GET", "client-query-buffer-limit"),
                         [b"client-query-buffer-limit", b"1073741824"])
        self.assertEqual(c.call("CONFIG", "SET", "client-query-buffer-limit", "1k"), RespError(
            "ERR CONFIG SET failed (possibly related to argument 'client-query-buffer-limit') - "
            "argument must be between 1048576 and 9223372036854775807 inclusive"))
        self.assertEqual(c.call("CONFIG", "SET", "client-query-buffer-limit", "abc"), RespError(
            "ERR CONFIG SET failed (possibly related to argument 'client-query-buffer-limit') - "
            "argument must be a memory value"))
        self.assertEqual(c.call("CONFIG", "SET", "client-query-buffer-limit", "2mb"), "OK")
        self.assertEqual(c.call("CONFIG", "GET", "client-query-buffer-limit"),
                         [b"client-query-buffer-limit", b"2097152"])

    @sluice_only
    def test_a_reader_that_never_reads_stays_bounded_and_others_are_served(self):
        self.assertEqual(self.c.call("SET", "big", b"x" * BIG), "OK")
        pid = self.server.proc.pid
        before = rss_bytes(pid)
        self.slow_reader([("GET", "big")] * 200)  # 3.2 GB of replies if all were produced
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:
            self.assertEqual(self.c.call("PING"), "PONG")
            time.sleep(0.1)
        growth = rss_bytes(pid) - before
        self.assertLess(growth, 8 * BIG, "server grew by %d bytes" % growth)
        self.assertEqual(info_field(self.c, "stats", "client_output_buffer_limit_disconnections"),
                         "0")

    def test_over_the_hard_limit_is_disconnected(self):
        self.assertEqual(self.c.call("SET", "big", b"x" * BIG), "OK")
        self.assertEqual(self.c.call("CONFIG", "SET", "client-output-buffer-limit",
                                     "normal 1mb 0 0"), "OK")
        with self.server.client() as victim:
            victim.send(encode_command("GET", "big"))
            self.assertEqual(victim.read_until_closed(), b"")
        self.assertEqual(self.c.call("PING"), "PONG")
        if not IS_REDIS:
            self.assertEqual(info_field(self.c, "stats",
                                        "client_output_buffer_limit_disconnections"), "1")
            self.assertIn("over the hard client-output-buffer-limit (normal 1048576 0 0)",
                          self.server.log())

    @sluice_only
    def test_over_the_soft_limit_for_too_long_is_disconnected(self):
        self.assertEqual(self.c.call("SET", "big", b"x" * BIG), "OK")
        self.assertEqual(self.c.call("CONFIG", "SET", "client-output-buffer-limit",
                                     "normal 0 1mb 1"), "OK")
        self.slow_reader([("GET", "big")] * 5)
        wait_for(lambda: "over the soft client-output-buffer-limit" in self.server.log(),
                 "the soft limit to close the slow reader", deadline=20)
        self.assertIn("for more than 1 s", self.server.log())
        self.assertEqual(info_field(self.c, "stats", "client_output_buffer_limit_disconnections"),
                         "1")
        # A client that reads its replies in time is not affected (a 2 MB reply is over the
        # soft limit only while the client reads it).
        self.assertEqual(self.c.call("SET", "mid", b"y" * (2 << 20)), "OK")
        self.assertEqual(self.c.pipeline([("GET", "mid")] * 2), [b"y" * (2 << 20)] * 2)
        self.assertEqual(info_field(self.c, "stats", "client_output_buffer_limit_disconnections"),
                         "1")

    def test_query_buffer_limit(self):
        self.assertEqual(self.c.call("CONFIG", "SET", "client-query-buffer-limit", "1mb"), "OK")
        with self.server.client() as victim:
            try:
                victim.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3000000\r\n" + b"x" * 2000000)
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.assertEqual(victim.read_until_closed(), b"")
        self.assertIsNone(self.c.call("GET", "k"))
        if not IS_REDIS:
            self.assertEqual(info_field(self.c, "stats",
                                        "client_query_buffer_limit_disconnections"), "1")


MISCONF = ("MISCONF Errors writing to the write-ahead log (%s): Sluice cannot persist writes, so "
           "commands that may modify the data set are refused until it can write again. Reads "
           "keep working. See the server log.")


def free_bytes(path):
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def fill(path, leave):
    """Writes a file at `path` that leaves about `leave` bytes free on its filesystem."""
    with open(path, "wb") as f:
        chunk = b"\0" * (1 << 20)
        while free_bytes(os.path.dirname(path)) > leave + len(chunk):
            f.write(chunk)
            f.flush()
        try:
            while free_bytes(os.path.dirname(path)) > leave:
                f.write(b"\0" * 4096)
                f.flush()
        except OSError:
            pass


@sluice_only
class DiskFullTest(BlackboxTestCase):
    """The data directory on a small tmpfs (needs root; skipped where it cannot mount)."""

    appendfsync = "everysec"

    def setUp(self):
        self.mnt = tempfile.mkdtemp(prefix="sluice-full-")
        self.addCleanup(os.rmdir, self.mnt)
        # With 64 MB memtables (pinned in start(); the default is bigger): RocksDB's recovery
        # waits until a memtable's worth is free again.
        res = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=200m", "tmpfs", self.mnt],
                             capture_output=True, text=True)
        if res.returncode != 0:
            self.skipTest("cannot mount a tmpfs (needs root): " + res.stderr.strip())
        self.addCleanup(subprocess.run, ["umount", "-l", self.mnt])
        self.datadir = os.path.join(self.mnt, "data")
        self.filler = os.path.join(self.mnt, "filler")

    def start(self, **options):
        workdir = tempfile.mkdtemp(prefix="sluice-bb-")
        self.addCleanup(shutil.rmtree, workdir, True)
        opts = {"dir": self.datadir, "threads": "2", "appendfsync": self.appendfsync,
                "write-buffer-size": "64mb"}
        opts.update(options)
        server = Server(options=opts, workdir=workdir)
        self.addCleanup(server.stop)
        return server

    def test_writes_refused_reads_served_recovers_and_loses_nothing(self):
        server = self.start().start()
        c = server.client()
        self.addCleanup(c.close)
        fill(self.filler, leave=1 << 20)
        acked = []
        error = None
        for i in range(20000):  # ~240 MB at most: more than the tmpfs holds
            key, value = "k%d" % i, ("v%d-" % i).encode() * 2000
            reply = c.call("SET", key, value)
            if reply != "OK":
                error = reply
                break
            acked.append((key, value))
        self.assertIsNotNone(error, "the disk never filled")
        self.assertGreater(len(acked), 0)
        reason = info_field(c, "persistence", "sluice_last_write_error")
        self.assertIn("No space left on device", reason)
        self.assertEqual(error, RespError(MISCONF % reason))
        self.assertEqual(info_field(c, "persistence", "aof_last_write_status"), "err")
        # Writes keep failing with the same error, on any connection; reads are served.
        with server.client() as other:
            self.assertEqual(other.call("SET", "x", "1"), RespError(MISCONF % reason))
            self.assertEqual(other.call("INCR", "n"), RespError(MISCONF % reason))
            self.assertEqual(other.call("GET", acked[0][0]), acked[0][1])
            self.assertEqual(other.call("PING"), "PONG")
        self.assertEqual(c.call("GET", acked[-1][0]), acked[-1][1])
        self.assertIn("writes refused: cannot write to %s" % self.datadir, server.log())
        # Space comes back: the server accepts writes again by itself.
        os.unlink(self.filler)
        deadline = time.monotonic() + 60
        while c.call("SET", "after", "1") != "OK":
            self.assertLess(time.monotonic(), deadline, "writes never resumed:\n" + server.log())
            time.sleep(0.2)
        self.assertEqual(info_field(c, "persistence", "aof_last_write_status"), "ok")
        self.assertEqual(info_field(c, "persistence", "sluice_last_write_error"), "")
        self.assertIn("writes accepted again", server.log())
        # Nothing acknowledged was lost, across a restart too.
        server.restart()
        with server.client() as c2:
            for key, value in acked:
                self.assertEqual(c2.call("GET", key), value, key)
            self.assertEqual(c2.call("GET", "after"), b"1")

    def test_concurrent_writers_then_kill9_lose_no_acknowledged_write(self):
        server = self.start().start()
        fill(self.filler, leave=2 << 20)
        acked = [[] for _ in range(4)]
        errors = [[] for _ in range(4)]

        def writer(n):
            with server.client() as c:
                for batch in range(2000):  # until the disk is full (~360 MB at most)
                    keys = ["w%d-%d-%d" % (n, batch, i) for i in range(20)]
                    replies = c.pipeline([("SET", k, k.encode() * 500) for k in keys])
                    for k, r in zip(keys, replies):
                        (acked[n] if r == "OK" else errors[n]).append((k, r))
                    if any(r != "OK" for r in replies):
                        return

        threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for n in range(4):
            self.assertTrue(errors[n], "writer %d never saw the disk full\n%s" % (n, server.log()[-4000:]))
            for k, r in errors[n]:
                self.assertTrue(isinstance(r, RespError) and r.startswith("MISCONF "), r)
        server.kill9()
        os.unlink(self.filler)
        server.start()
        with server.client() as c:
            for n in range(4):
                for k, _ in acked[n]:
                    self.assertEqual(c.call("GET", k), k.encode() * 500, k)
            self.assertEqual(c.call("SET", "after", "1"), "OK")

    def test_start_on_a_full_disk_is_a_clear_error(self):
        server = self.start().start()
        with server.client() as c:
            self.assertEqual(c.call("SET", "k", "v"), "OK")
        self.assertEqual(server.terminate(), 0)
        fill(self.filler, leave=0)
        server.spawn()
        rc = server.wait_exit()
        self.assertEqual(rc, 1, server.log())
        self.assertIn("cannot open data directory '%s'" % self.datadir, server.log())
        self.assertIn("No space left on device", server.log())
        self.assertIn("(the disk is full: free some space and start again)", server.log())
        os.unlink(self.filler)
        server.start()
        with server.client() as c:
            self.assertEqual(c.call("GET", "k"), b"v")



class DiskFullAlwaysTest(DiskFullTest):
    """The same under appendfsync always: the group fsync fails instead of the flush."""

    appendfsync = "always"



@sluice_only
class DamagedWalTest(BlackboxTestCase):
    """kill -9 after 200 acknowledged writes leaves them in the write-ahead log only; then the log
    is damaged in three ways. The writes are sent one at a time, so each is a WAL record of its
    own (a pipelined batch would share one record: its commit group)."""

    KEYS = 200

    def setUp(self):
        self.server = Server(options={"threads": "2"})
        self.addCleanup(self.server.stop)
        self.server.start()
        with self.server.client() as c:
            replies = [c.call("SET", "k%03d" % i, "v%03d" % i * 50) for i in range(self.KEYS)]
            self.assertEqual(replies, ["OK"] * self.KEYS)
        self.server.kill9()
        logs = sorted(f for f in os.listdir(self.server.datadir) if f.endswith(".log"))
        sizes = {f: os.path.getsize(os.path.join(self.server.datadir, f)) for f in logs}
        self.wal = os.path.join(self.server.datadir, max(sizes, key=sizes.get))
        with open(self.wal, "rb") as f:
            self.data = f.read()
        self.assertGreater(len(self.data), 20000)

    def write_wal(self, data):
        with open(self.wal, "wb") as f:
            f.write(data)

    def keys_present(self):
        with self.server.client() as c:
            values = c.pipeline([("GET", "k%03d" % i) for i in range(self.KEYS)])
        present = [i for i, v in enumerate(values) if v is not None]
        for i in present:
            self.assertEqual(values[i], b"v%03d" % i * 50)
        return present

    def files(self):
        d = self.server.datadir
        out = {}
        for name in os.listdir(d):
            if name.startswith("LOG"):
                continue  # RocksDB's info log
            with open(os.path.join(d, name), "rb") as f:
                out[name] = f.read()
        return out

    def start_fails(self, **options):
        self.server.options.update(options)
        self.server.spawn()
        self.assertEqual(self.server.wait_exit(), 1, self.server.log())
        return self.server.log()

    def test_flipped_byte_refuses_to_start_and_leaves_files(self):
        pos = len(self.data) // 2
        damaged = bytearray(self.data)
        damaged[pos] ^= 0xff
        self.write_wal(bytes(damaged))
        before = self.files()
        log = self.start_fails()
        m = re.search(r"damaged write-ahead log (\S+) at byte (\d+) of (\d+) \(checksum mismatch\): "
                      r"refusing to start, every file is left in place", log)
        self.assertIsNotNone(m, log)
        self.assertEqual(m.group(1), self.wal)
        self.assertLessEqual(int(m.group(2)), pos)
        self.assertGreater(int(m.group(2)), pos - 2000)
        self.assertEqual(int(m.group(3)), len(self.data))
        self.assertIn("--wal-recovery-mode point-in-time", log)
        self.assertEqual(self.files(), before)
        # The operator accepts the loss: the records before the damage load.
        self.server.options["wal-recovery-mode"] = "point-in-time"
        self.server.start()
        self.assertIn("WARNING: damaged write-ahead log %s" % self.wal, self.server.log())
        present = self.keys_present()
        self.assertEqual(present, list(range(len(present))))
        self.assertGreater(len(present), self.KEYS // 4)
        self.assertLess(len(present), self.KEYS)

    def test_skip_damaged_loads_every_intact_record(self):
        pos = len(self.data) // 2
        damaged = bytearray(self.data)
        damaged[pos] ^= 0xff
        self.write_wal(bytes(damaged))
        self.server.options["wal-recovery-mode"] = "skip-damaged"
        self.server.start()
        present = self.keys_present()
        self.assertGreater(len(present), self.KEYS // 4)
        self.assertLess(len(present), self.KEYS)
        self.assertIn(self.KEYS - 1, present)

    def test_log_cut_in_half_loads_with_a_warning(self):
        self.write_wal(self.data[:len(self.data) // 2])
        self.server.start()
        self.assertRegex(self.server.log(), r"WARNING: write-ahead log %s at byte \d+ of %d "
                         r"\(incomplete record[^)]*\): the log was cut short"
                         % (re.escape(self.wal), len(self.data) // 2))
        present = self.keys_present()
        self.assertEqual(present, list(range(len(present))))
        self.assertGreater(len(present), self.KEYS // 4)

    def test_last_record_cut_loads_all_but_it(self):
        self.write_wal(self.data[:-10])
        self.server.start()
        self.assertIn("the log was cut short", self.server.log())
        self.assertEqual(self.keys_present(), list(range(self.KEYS - 1)))

    def test_absolute_refuses_even_a_cut_tail(self):
        self.write_wal(self.data[:-10])
        log = self.start_fails(**{"wal-recovery-mode": "absolute"})
        self.assertIn("damaged write-ahead log %s at byte" % self.wal, log)
        self.assertIn("(incomplete record at the end)", log)
        with open(self.wal, "rb") as f:
            self.assertEqual(f.read(), self.data[:-10])


if __name__ == "__main__":
    unittest.main()
