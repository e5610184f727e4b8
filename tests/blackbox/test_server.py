"""Server basics: defaults, --help, bad flags, port in use, unusable data dir, the config file and
flags that override it, CONFIG GET/SET, limits (maxclients, timeout, proto-max-bulk-len), and a
clean stop on SIGTERM, SIGINT and SHUTDOWN."""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import unittest

from harness import (IS_REDIS, BlackboxTestCase, ConnectionClosed, RespError, Server,
                     SharedServerTestCase,
                     assert_no_sanitizer_report, encode_command, free_port, server_binary,
                     sluice_only)

RUN_DEADLINE = 60


def run_binary(args, cwd=None):
    """Runs the binary to completion; .log is where it reports (stderr; Redis: stdout too)."""
    res = subprocess.run([server_binary()] + args, capture_output=True, text=True,
                          timeout=RUN_DEADLINE, cwd=cwd, stdin=subprocess.DEVNULL)
    res.log = res.stderr + (res.stdout if IS_REDIS else "")
    assert_no_sanitizer_report(res.stderr)
    return res


class StartupTest(BlackboxTestCase):
    def new_server(self, **kw):
        server = Server(**kw)
        self.addCleanup(server.stop)
        return server

    @sluice_only
    def test_defaults(self):
        # Only the port is given (6379 may be taken on a shared machine): the data lands in ./data
        # under the working directory, the server binds 127.0.0.1 and runs everysec.
        server = self.new_server(options={"bind": None, "dir": None, "enable-debug-command": None})
        server.start()
        self.assertTrue(os.path.isdir(os.path.join(server.workdir, "data")))
        self.assertTrue(os.listdir(os.path.join(server.workdir, "data")), "RocksDB files expected")
        with server.client() as c:
            self.assertEqual(c.call("CONFIG", "GET", "bind"), [b"bind", b"127.0.0.1"])
            self.assertEqual(c.call("CONFIG", "GET", "appendfsync"), [b"appendfsync", b"everysec"])
            self.assertEqual(c.call("CONFIG", "GET", "maxclients"), [b"maxclients", b"10000"])
            self.assertEqual(c.call("CONFIG", "GET", "timeout"), [b"timeout", b"0"])
            self.assertEqual(c.call("CONFIG", "GET", "requirepass"), [b"requirepass", b""])
            self.assertEqual(c.call("CONFIG", "GET", "proto-max-bulk-len"),
                             [b"proto-max-bulk-len", b"536870912"])
            self.assertEqual(c.call("CONFIG", "GET", "enable-debug-command"),
                             [b"enable-debug-command", b"no"])
            self.assertEqual(c.call("CONFIG", "GET", "port"), [b"port", str(server.port).encode()])
            self.assertEqual(c.call("DEBUG", "CLOCK", "REAL")[:29], "ERR DEBUG command not allowed")
        log = server.log()
        # The startup line: version, address, data dir, durability mode.
        self.assertRegex(log, r"127\.0\.0\.1:%d" % server.port)
        self.assertIn("everysec", log)
        self.assertIn("data", log)
        self.assertEqual(server.terminate(), 0)

    @sluice_only
    def test_help(self):
        res = run_binary(["--help"])
        self.assertEqual(res.returncode, 0, res.stderr)
        text = res.stdout + res.stderr
        self.assertIn("Usage", text.replace("usage", "Usage"))
        for flag in ("--port", "--bind", "--dir", "--threads", "--appendfsync", "--requirepass",
                     "--maxclients", "--timeout", "--proto-max-bulk-len", "--enable-debug-command"):
            self.assertIn(flag, text)
        self.assertIn("6379", text)

    def test_unknown_flag(self):
        res = run_binary(["--no-such-flag", "1"])
        self.assertEqual(res.returncode, 1)
        self.assertIn("no-such-flag", res.log)

    def test_bad_flag_value(self):
        res = run_binary(["--port", "notaport"])
        self.assertEqual(res.returncode, 1)
        self.assertIn("port", res.log)
        res = run_binary(["--appendfsync", "sometimes"])
        self.assertEqual(res.returncode, 1)
        self.assertIn("appendfsync", res.log)

    def test_port_in_use(self):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as blocker:
            blocker.bind(("127.0.0.1", 0))
            blocker.listen(1)
            port = blocker.getsockname()[1]
            server = self.new_server(port=port)
            proc = server.spawn()
            rc = proc.wait(timeout=RUN_DEADLINE)
            self.assertNotEqual(rc, 0)
            log = server.log()
            self.assertIn(str(port), log)
            self.assertRegex(log.lower(), r"in use")

    def test_unusable_data_dir(self):
        server = self.new_server()
        path = os.path.join(server.workdir, "a-file")
        with open(path, "w") as f:
            f.write("not a directory")
        server.options["dir"] = path
        proc = server.spawn()
        self.assertNotEqual(proc.wait(timeout=RUN_DEADLINE), 0)
        self.assertIn(path, server.log())

    def test_missing_config_file(self):
        res = run_binary(["/nonexistent/sluice.conf"])
        self.assertNotEqual(res.returncode, 0)
        self.assertIn("/nonexistent/sluice.conf", res.log)

    def test_config_file_and_flag_override(self):
        port1 = free_port()
        server = self.new_server()
        conf_dir = os.path.join(server.workdir, "confdata")
        os.makedirs(conf_dir)
        server.config_text = ("# a comment\n\nport %d\ndir %s\nrequirepass \"pass word\"\n"
                              "appendfsync always\nmaxclients 77\n" % (port1, conf_dir))
        server.options = {k: v for k, v in server.options.items() if k not in ("dir",)}
        server.port = port1
        server.start()
        with server.client() as c:
            self.assertEqual(c.call("GET", "x"), RespError("NOAUTH Authentication required."))
            self.assertEqual(c.call("AUTH", "pass word"), "OK")
            self.assertEqual(c.call("CONFIG", "GET", "port"), [b"port", str(port1).encode()])
            self.assertEqual(c.call("CONFIG", "GET", "appendfsync"), [b"appendfsync", b"always"])
            self.assertEqual(c.call("CONFIG", "GET", "maxclients"), [b"maxclients", b"77"])
            self.assertEqual(c.call("CONFIG", "GET", "requirepass"), [b"requirepass", b"pass word"])
            self.assertEqual(c.call("CONFIG", "GET", "dir"), [b"dir", os.path.realpath(conf_dir).encode()])
            self.assertEqual(c.call("SET", "persisted", "1"), "OK")
        self.assertEqual(server.terminate(), 0)
        self.assertTrue(os.listdir(conf_dir))

        # Flags override the file.
        port2 = free_port()
        server.options.update({"port": str(port2), "appendfsync": "no", "requirepass": "other"})
        server.port = port2
        server.start()
        with server.client() as c:
            self.assertEqual(c.call("AUTH", "pass word"),
                             RespError("WRONGPASS invalid username-password pair or user is disabled."))
            self.assertEqual(c.call("AUTH", "other"), "OK")
            self.assertEqual(c.call("CONFIG", "GET", "port"), [b"port", str(port2).encode()])
            self.assertEqual(c.call("CONFIG", "GET", "appendfsync"), [b"appendfsync", b"no"])
            self.assertEqual(c.call("CONFIG", "GET", "maxclients"), [b"maxclients", b"77"])
            self.assertEqual(c.call("GET", "persisted"), b"1")
        # Nothing listens on the file's port.
        with self.assertRaises(OSError):
            socket.create_connection(("127.0.0.1", port1), timeout=5).close()

    def test_bad_config_file_line(self):
        server = self.new_server()
        server.config_text = "port 1234\nno-such-directive yes\n"
        proc = server.spawn()
        self.assertEqual(proc.wait(timeout=RUN_DEADLINE), 1)
        self.assertIn("no-such-directive", server.log())

    @sluice_only
    def test_threads_flag(self):
        server = self.new_server(options={"threads": "3"})
        server.start()
        with server.client() as c:
            self.assertEqual(c.call("CONFIG", "GET", "threads"), [b"threads", b"3"])


class ConfigCommandTest(SharedServerTestCase):
    options = {"appendfsync": "no"}

    def test_config_get_patterns_and_several(self):
        with self.server.client() as c:
            self.assertEqual(c.call("CONFIG", "GET", "appendfsync"), [b"appendfsync", b"no"])
            # Redis echoes the name as asked.
            self.assertEqual(c.call("CONFIG", "GET", "APPENDFSYNC"), [b"APPENDFSYNC", b"no"])
            reply = c.call("CONFIG", "GET", "maxclients", "timeout")
            self.assertEqual(dict(zip(reply[0::2], reply[1::2])),
                             {b"maxclients": b"10000", b"timeout": b"0"})
            reply = c.call("CONFIG", "GET", "max*")
            pairs = dict(zip(reply[0::2], reply[1::2]))
            self.assertEqual(pairs[b"maxclients"], b"10000")
            self.assertEqual(c.call("CONFIG", "GET", "no-such-option"), [])
            # Clients ask about these; Sluice answers like a durable Redis.
            self.assertEqual(c.call("CONFIG", "GET", "databases"), [b"databases", b"16"])

    def test_config_set(self):
        with self.server.client() as c:
            self.assertEqual(c.call("CONFIG", "SET", "appendfsync", "everysec"), "OK")
            self.assertEqual(c.call("CONFIG", "GET", "appendfsync"), [b"appendfsync", b"everysec"])
            if not IS_REDIS:  # the store itself switched mode
                self.assertIn("\r\nappendfsync:everysec\r\n", c.call("INFO", "persistence").decode())
            self.assertEqual(c.call("CONFIG", "SET", "appendfsync", "sometimes"), RespError(
                "ERR CONFIG SET failed (possibly related to argument 'appendfsync') - argument(s) "
                "must be one of the following: everysec, always, no"))
            self.assertEqual(c.call("CONFIG", "SET", "appendfsync", "no"), "OK")
            self.assertEqual(c.call("CONFIG", "SET", "maxclients", "abc"), RespError(
                "ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument "
                "couldn't be parsed into an integer"))
            self.assertEqual(c.call("CONFIG", "SET", "timeout", "0", "maxclients", "10000"), "OK")
            self.assertEqual(c.call("CONFIG", "SET", "timeout"),
                             RespError("ERR wrong number of arguments for 'config|set' command"))
            self.assertEqual(c.call("CONFIG", "SET", "nosuch", "1"), RespError(
                "ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'"))

    def test_config_set_is_all_or_nothing(self):
        with self.server.client() as c:
            self.assertEqual(c.call("CONFIG", "SET", "timeout", "55", "maxclients", "abc"), RespError(
                "ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument "
                "couldn't be parsed into an integer"))
            self.assertEqual(c.call("CONFIG", "GET", "timeout"), [b"timeout", b"0"])
            self.assertEqual(c.call("CONFIG", "SET", "timeout", "1", "timeout", "2"), RespError(
                "ERR CONFIG SET failed (possibly related to argument 'timeout') - duplicate parameter"))
            self.assertEqual(c.call("CONFIG", "GET", "timeout"), [b"timeout", b"0"])

    def test_config_set_requirepass_live(self):
        with self.server.client() as admin:
            self.assertEqual(admin.call("CONFIG", "SET", "requirepass", "live-pass"), "OK")
            try:
                # The connection that set it stays authenticated; new ones must AUTH.
                self.assertEqual(admin.call("PING"), "PONG")
                with self.server.client() as c:
                    self.assertEqual(c.call("PING"), RespError("NOAUTH Authentication required."))
                    self.assertEqual(c.call("AUTH", "live-pass"), "OK")
                    self.assertEqual(c.call("PING"), "PONG")
            finally:
                self.assertEqual(admin.call("CONFIG", "SET", "requirepass", ""), "OK")
            with self.server.client() as c:
                self.assertEqual(c.call("PING"), "PONG")

    def test_config_resetstat(self):
        with self.server.client() as c:
            for _ in range(5):
                c.call("PING")
            self.assertEqual(c.call("CONFIG", "RESETSTAT"), "OK")
            stats = c.call("INFO", "stats").decode()
            m = re.search(r"\r\ntotal_commands_processed:(\d+)\r\n", stats)
            self.assertIsNotNone(m, stats)
            self.assertLessEqual(int(m.group(1)), 2)


class LimitsTest(BlackboxTestCase):
    def new_server(self, options):
        server = Server(options=options)
        self.addCleanup(server.stop)
        return server.start()

    def test_maxclients(self):
        server = self.new_server({"maxclients": "3"})
        clients = [server.only_client()] + [server.client() for _ in range(2)]
        for c in clients:
            self.addCleanup(c.close)
            self.assertEqual(c.call("PING"), "PONG")
        with server.client() as extra:
            self.assertEqual(extra.read_until_closed(), b"-ERR max number of clients reached\r\n")
        clients[0].close()
        # The slot frees up once the server has seen the close; poll with a generous deadline.
        end = time.monotonic() + 30
        while True:
            with server.client() as again:
                try:
                    if again.call("PING") == "PONG":
                        break
                except Exception:
                    pass
            self.assertLess(time.monotonic(), end, "a freed client slot was never reused")
            time.sleep(0.1)

    def test_idle_timeout(self):
        server = self.new_server({"timeout": "1"})
        with server.client() as idle:
            self.assertEqual(idle.call("PING"), "PONG")
            self.assertEqual(idle.read_until_closed(deadline=30), b"")

    def test_proto_max_bulk_len(self):
        server = self.new_server({"proto-max-bulk-len": "1048576"})
        with server.client() as c:
            self.assertEqual(c.call("SET", "k", "x" * 1048576), "OK")
            self.assertEqual(c.call("APPEND", "k", "y"), RespError(
                "ERR string exceeds maximum allowed size (proto-max-bulk-len)"))
            self.assertEqual(c.call("SETRANGE", "k", "1048576", "y"), RespError(
                "ERR string exceeds maximum allowed size (proto-max-bulk-len)"))
            c.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048577\r\n")
            self.assertEqual(c.read_until_closed(), b"-ERR Protocol error: invalid bulk length\r\n")


class HarnessTest(BlackboxTestCase):
    @unittest.skipUnless(shutil.which("setpriv"), "setpriv (util-linux) is not installed")
    def test_a_killed_test_process_takes_its_server_along(self):
        # A test process killed with SIGKILL cannot stop its servers; they must not outlive it
        # (they would keep ports, disk and CPU on a CI machine).
        here = os.path.dirname(os.path.abspath(__file__))
        child = subprocess.Popen(
            [sys.executable, "-c",
             "import sys, time; sys.path.insert(0, %r); import harness; "
             "s = harness.Server().start(); print(s.proc.pid, flush=True); time.sleep(120)" % here],
            stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
        self.addCleanup(child.wait)
        self.addCleanup(child.kill)
        pid = int(child.stdout.readline())
        os.kill(pid, 0)  # serving
        workdir = os.readlink("/proc/%d/cwd" % pid)
        self.addCleanup(shutil.rmtree, workdir, True)
        child.kill()
        child.wait()
        deadline = time.monotonic() + RUN_DEADLINE
        while time.monotonic() < deadline:
            try:
                with open("/proc/%d/stat" % pid) as f:
                    if f.read().split(")")[-1].split()[0] == "Z":  # dead, not yet reaped
                        break
            except FileNotFoundError:
                break
            time.sleep(0.02)
        else:
            os.kill(pid, signal.SIGKILL)
            self.fail("the server outlived its test process")


class ShutdownTest(BlackboxTestCase):
    def started(self):
        server = Server()
        self.addCleanup(server.stop)
        return server.start()

    def assert_clean_stop(self, server, rc):
        self.assertEqual(rc, 0, server.log())
        self.assertRegex(server.log().lower(), r"shut ?down|exiting|bye")

    def test_sigterm(self):
        server = self.started()
        with server.client() as c:
            self.assertEqual(c.call("SET", "k", "v"), "OK")
        self.assert_clean_stop(server, server.terminate())
        server.start()
        with server.client() as c:
            self.assertEqual(c.call("GET", "k"), b"v")

    def test_sigint(self):
        server = self.started()
        server.proc.send_signal(signal.SIGINT)
        self.assert_clean_stop(server, server.wait_exit())

    def test_shutdown_command(self):
        server = self.started()
        with server.client() as c:
            self.assertEqual(c.call("SET", "k", "v"), "OK")
            c.send(encode_command("SHUTDOWN"))
            self.assertEqual(c.read_until_closed(), b"")
        self.assert_clean_stop(server, server.wait_exit())
        server.start()
        self.assertEqual(server.cli("GET", "k"), '"v"\n')
        self.assertEqual(server.cli("SHUTDOWN"), "")
        self.assert_clean_stop(server, server.wait_exit())

    def test_sigterm_during_a_pipeline(self):
        # In-flight work finishes: every reply that was sent is for a write that is on disk.
        server = self.started()
        with server.client() as c:
            n = 50000
            c.send(encode_command("INCR", "counter") * n)
            first = c.read()
            self.assertEqual(first, 1)
            server.proc.send_signal(signal.SIGTERM)
            got = 1
            try:
                while got < n:
                    self.assertEqual(c.read(), got + 1)
                    got += 1
            except (ConnectionClosed, ConnectionResetError):
                pass
        self.assert_clean_stop(server, server.wait_exit())
        server.start()
        with server.client() as c:
            self.assertGreaterEqual(int(c.call("GET", "counter")), got)

    def test_shutdown_with_clients_connected(self):
        server = self.started()
        idle = server.client()
        self.addCleanup(idle.close)
        self.assertEqual(idle.call("PING"), "PONG")
        with server.client() as c:
            c.send(encode_command("SHUTDOWN"))
            self.assertEqual(c.read_until_closed(), b"")
        self.assert_clean_stop(server, server.wait_exit())
        self.assertEqual(idle.read_until_closed(), b"")


if __name__ == "__main__":
    unittest.main()
