"""Helpers for the black-box tests: start and stop a real server, a tiny RESP client, redis-cli.

The server under test is `sluice-server` from the SLUICE_SERVER environment variable. With
SLUICE_TARGET=redis the same tests run against a real `redis-server` instead (REDIS_SERVER or
`redis-server` on PATH); tests that need Sluice-only features (limiters, the DEBUG test clock,
Sluice's own flags) are skipped in that mode. That proves the expected Redis replies are Redis's.

Every server listens on 127.0.0.1 on a free port with its own temporary directory, and is
killed when the test that started it ends, even on failure.
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest

TARGET = os.environ.get("SLUICE_TARGET", "sluice")
IS_REDIS = TARGET == "redis"
REDIS_CLI = os.environ.get("REDIS_CLI") or shutil.which("redis-cli") or "redis-cli"

START_DEADLINE = 60.0  # seconds; generous, the machine may be busy building
STOP_DEADLINE = 60.0
# A test process killed outright (a CI timeout, ^C twice) never stops its servers: started
# through setpriv, each gets SIGKILL from the kernel when the thread that started it dies
# (setpriv execs the server: same pid, same argv after it).
DIE_WITH_TEST = ["setpriv", "--pdeathsig", "SIGKILL", "--"] if shutil.which("setpriv") else []

# A fixed instant for the test clock: 2023-11-14T22:13:20Z.
T0_MS = 1_700_000_000_000


def server_binary():
    if IS_REDIS:
        return os.environ.get("REDIS_SERVER") or shutil.which("redis-server") or "redis-server"
    path = os.environ.get("SLUICE_SERVER")
    if not path:
        raise unittest.SkipTest("SLUICE_SERVER is not set")
    if not os.access(path, os.X_OK):
        # Set but wrong (e.g. not built): a failure, never a silent skip.
        raise RuntimeError("SLUICE_SERVER=%s is not an executable" % path)
    # Servers run in their own temporary directory: a relative path is taken from here.
    return os.path.abspath(path)


def sluice_only(obj):
    """Decorator: skip a test or class when the target is redis-server."""
    return unittest.skipIf(IS_REDIS, "Sluice-only behaviour")(obj)


# A report of AddressSanitizer, LeakSanitizer, UndefinedBehaviorSanitizer or ThreadSanitizer
# in a sanitizer build of the server (tools/sanitize.sh): any of them fails the test.
SANITIZER_REPORT = re.compile(r"==\d+==ERROR: \w*Sanitizer|WARNING: ThreadSanitizer|"
                              r"SUMMARY: \w*Sanitizer|: runtime error: ")


def sanitizer_report(text):
    """The sanitizer report in a server's stderr (from its first line on), or None."""
    m = SANITIZER_REPORT.search(text or "")
    if m is None:
        return None
    start = text.rfind("\n", 0, m.start()) + 1
    return text[start:start + 8000]


def assert_no_sanitizer_report(text, what="sluice-server"):
    report = sanitizer_report(text)
    if report is not None:
        raise AssertionError("%s printed a sanitizer report:\n%s" % (what, report))


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------------------------------------
# RESP client
# ---------------------------------------------------------------------------------------------

class RespError(str):
    """An error reply; the text without the leading '-'."""


class Push(list):
    """A RESP3 push message."""


class RespSet(list):
    """A RESP3 set, kept in server order."""


class Verbatim(bytes):
    """A RESP3 verbatim string (the 'txt:' prefix removed); .fmt holds the format."""


def encode_command(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, int):
            a = str(a).encode()
        elif isinstance(a, str):
            a = a.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class ConnectionClosed(Exception):
    pass


class Client:
    """A blocking RESP2/RESP3 client on one socket.

    Replies map to Python values: simple string -> str, bulk string -> bytes, integer -> int,
    error -> RespError (returned, not raised), null -> None, array -> list, map -> dict (in
    server order), set -> RespSet, double -> float, boolean -> bool, big number -> int.
    """

    def __init__(self, port, timeout=30.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._reset_buffer()

    def _reset_buffer(self):
        # Received bytes; those before `pos` are consumed. A bytearray with a read offset keeps
        # reading a reply linear in its size (a 50 MB reply in 64 KiB reads was quadratic).
        self.buf = bytearray()
        self.pos = 0

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- raw I/O
    def send(self, data):
        self.sock.sendall(data)

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionClosed()
        self.buf += chunk

    def _take(self, n, skip):
        """The next n unconsumed bytes, then skips `skip` more (a CRLF)."""
        data = bytes(self.buf[self.pos:self.pos + n])
        self.pos += n + skip
        if self.pos >= len(self.buf):
            self.buf.clear()
            self.pos = 0
        elif self.pos > 1 << 20 and 2 * self.pos > len(self.buf):
            del self.buf[:self.pos]
            self.pos = 0
        return data

    def _line(self):
        start = self.pos
        while True:
            i = self.buf.find(b"\r\n", start)
            if i >= 0:
                return self._take(i - self.pos, 2)
            start = max(self.pos, len(self.buf) - 1)
            self._fill()

    def _exact(self, n):
        while len(self.buf) - self.pos < n + 2:
            self._fill()
        return self._take(n, 2)

    def pending(self):
        """The received bytes not yet consumed."""
        return bytes(self.buf[self.pos:])

    def read_until_closed(self, deadline=20.0):
        """Everything the server sends until it closes the connection (raw bytes)."""
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            try:
                self._fill()
            except (ConnectionClosed, ConnectionResetError):
                return self._take(len(self.buf) - self.pos, 0)
        raise AssertionError("server did not close the connection; got %r" % self.pending())

    def expect_raw(self, expected):
        """Reads len(expected) raw bytes and returns them, for assertEqual(..., expected)."""
        return self.read_raw(len(expected))

    def read_raw(self, n):
        """Exactly n bytes of raw reply."""
        while len(self.buf) - self.pos < n:
            self._fill()
        return self._take(n, 0)

    # -- replies
    def read(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t == b"+":
            return rest.decode()
        if t == b"-":
            return RespError(rest.decode())
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if t == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        if t == b"_":
            return None
        if t == b"%":
            out = {}
            for _ in range(int(rest)):
                k = self.read()
                out[k] = self.read()
            return out
        if t == b"~":
            return RespSet(self.read() for _ in range(int(rest)))
        if t == b">":
            return Push(self.read() for _ in range(int(rest)))
        if t == b",":
            return float(rest.decode())
        if t == b"#":
            return rest == b"t"
        if t == b"(":
            return int(rest)
        if t == b"=":
            data = self._exact(int(rest))
            v = Verbatim(data[4:])
            v.fmt = data[:3].decode()
            return v
        if t == b"!":
            return RespError(self._exact(int(rest)).decode())
        raise AssertionError("unexpected reply type byte in %r" % line)

    def call(self, *args):
        self.send(encode_command(*args))
        return self.read()

    def pipeline(self, commands):
        """Sends every command in one write, returns the replies in order."""
        self.send(b"".join(encode_command(*c) for c in commands))
        return [self.read() for _ in commands]


# ---------------------------------------------------------------------------------------------
# Server process
# ---------------------------------------------------------------------------------------------

class Server:
    """One server process on a free port with its own data directory.

    options: name -> value, passed as `--name value` flags (Sluice and Redis share these names).
    config_text: written to a config file passed as the first positional argument.
    """

    def __init__(self, options=None, config_text=None, debug=True, workdir=None, port=None,
                 env=None):
        self.binary = server_binary()
        self.env = env  # extra environment variables for the process (e.g. LD_PRELOAD)
        self.own_workdir = workdir is None
        self.workdir = workdir or tempfile.mkdtemp(prefix="sluice-bb-")
        self.datadir = os.path.join(self.workdir, "data")
        os.makedirs(self.datadir, exist_ok=True)
        self.port = port or free_port()
        self.options = {"bind": "127.0.0.1", "dir": self.datadir}
        if debug:
            self.options["enable-debug-command"] = "yes"
        if IS_REDIS:
            self.options.update({"save": "", "appendonly": "yes", "daemonize": "no"})
        self.options.update(options or {})
        if IS_REDIS and "threads" in self.options:  # Redis's name for it
            self.options["io-threads"] = self.options.pop("threads")
        self.config_text = config_text
        self.proc = None
        self.log_path = None
        self.stdout_path = None
        self.log_paths = []  # stderr of every run, checked for sanitizer reports by stop()
        self.runs = 0

    # -- lifecycle
    def argv(self):
        args = [self.binary]
        if self.config_text is not None:
            conf = os.path.join(self.workdir, "sluice.conf")
            with open(conf, "w") as f:
                f.write(self.config_text)
            args.append(conf)
        opts = dict(self.options)
        if "port" not in opts and not (self.config_text and "port" in self.config_text):
            opts["port"] = str(self.port)
        for k, v in opts.items():
            if v is None:
                continue
            args += ["--" + k, str(v)]
        return args

    def spawn(self, extra_args=()):
        """Starts the process without waiting for it to listen."""
        self.runs += 1
        self.log_path = os.path.join(self.workdir, "stderr.%d.log" % self.runs)
        self.stdout_path = os.path.join(self.workdir, "stdout.%d.log" % self.runs)
        self.log_paths.append(self.log_path)
        with open(self.log_path, "wb") as err, open(self.stdout_path, "wb") as out:
            env = dict(os.environ, **self.env) if self.env else None
            self.proc = subprocess.Popen(DIE_WITH_TEST + self.argv() + list(extra_args),
                                         stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                         cwd=self.workdir, env=env)
        return self.proc

    def start(self):
        self.spawn()
        self.wait_ready()
        return self

    def wait_ready(self):
        end = time.monotonic() + START_DEADLINE
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise AssertionError("server exited with %s during start:\n%s"
                                     % (self.proc.returncode, self.log()))
            try:
                with Client(self.port, timeout=5) as c:
                    c.call("PING")  # any reply (even NOAUTH) means it serves
                    return
            except (OSError, ConnectionClosed):
                time.sleep(0.05)
        raise AssertionError("server did not start within %ss:\n%s" % (START_DEADLINE, self.log()))

    def wait_exit(self, deadline=STOP_DEADLINE):
        try:
            return self.proc.wait(timeout=deadline)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("server did not exit within %ss" % deadline)

    def terminate(self):
        """SIGTERM and wait; returns the exit code."""
        self.proc.send_signal(signal.SIGTERM)
        return self.wait_exit()

    def kill9(self):
        self.proc.kill()
        self.proc.wait()

    def restart(self, hard=False):
        if hard:
            self.kill9()
        else:
            rc = self.terminate()
            assert rc == 0, "exit code %s on SIGTERM:\n%s" % (rc, self.stderr())
        return self.start()

    def stop(self):
        """Stops the server and removes its directory; used in cleanups. Raises (after cleaning
        up) only if a run of the server printed a sanitizer report."""
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGTERM)
                self.proc.wait(timeout=STOP_DEADLINE)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        reports = []
        for path in self.log_paths:
            try:
                with open(path, "rb") as f:
                    report = sanitizer_report(f.read().decode(errors="replace"))
            except OSError:
                continue
            if report is not None:
                reports.append("%s:\n%s" % (os.path.basename(path), report))
        self.log_paths = []
        if self.own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)
        if reports:
            raise AssertionError("sluice-server printed a sanitizer report:\n" + "\n".join(reports))

    def log(self):
        """What the server printed: stderr for Sluice; Redis logs to stdout, so both for it."""
        return self.stderr() if not IS_REDIS else self.stderr() + self.stdout()

    def stdout(self):
        if self.stdout_path and os.path.exists(self.stdout_path):
            with open(self.stdout_path, "rb") as f:
                return f.read().decode(errors="replace")
        return ""

    def stderr(self):
        text = ""
        for p in (self.log_path,):
            if p and os.path.exists(p):
                with open(p, "rb") as f:
                    text += f.read().decode(errors="replace")
        return text

    # -- clients
    def client(self):
        return Client(self.port)

    def only_client(self):
        """A client, once the server counts no other: earlier ones (the start-up check's) close
        on an I/O thread while accepting runs on another, so tests that fill maxclients wait."""
        c = Client(self.port)
        end = time.monotonic() + START_DEADLINE
        while b"connected_clients:1\r\n" not in c.call("INFO", "clients"):
            if time.monotonic() > end:
                c.close()
                raise AssertionError("the server still counts other clients")
            time.sleep(0.05)
        return c

    def cli(self, *args, stdin=None, flags=("--no-raw",), check=True):
        """Runs redis-cli against this server; returns its stdout as text."""
        argv = [REDIS_CLI, "-h", "127.0.0.1", "-p", str(self.port)] + list(flags) + [str(a) for a in args]
        res = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=60)
        if check and res.returncode != 0:
            raise AssertionError("redis-cli %s failed (%d): %s %s"
                                 % (args, res.returncode, res.stdout, res.stderr))
        return res.stdout


class BlackboxTestCase(unittest.TestCase):
    def assertRaw(self, client, expected):
        """The next raw bytes from `client` are exactly `expected`."""
        self.assertEqual(client.read_raw(len(expected)), expected)


class SharedServerTestCase(BlackboxTestCase):
    """One shared server per test class (started in setUpClass, stopped in tearDownClass).

    Subclasses set `options` and `need_sluice` (skip in redis mode).
    """

    options = {}
    need_sluice = False

    @classmethod
    def setUpClass(cls):
        if cls.need_sluice and IS_REDIS:
            raise unittest.SkipTest("Sluice-only behaviour")
        cls.server = Server(options=dict(cls.options))
        try:
            cls.server.start()
        except BaseException:
            cls.server.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()


class ServerTestCase(SharedServerTestCase):
    """A shared server, flushed before every test, with a client in `self.c`.

    Subclasses may also set `test_clock`.
    """

    test_clock = False  # set the DEBUG test clock to T0_MS before every test (Sluice only)

    def setUp(self):
        self.c = self.server.client()
        self.addCleanup(self.c.close)
        self.assertEqual(self.c.call("FLUSHALL"), "OK")
        if not IS_REDIS and self.server.options.get("enable-debug-command") == "yes":
            if self.test_clock:
                self.assertEqual(self.c.call("DEBUG", "CLOCK", "SET", T0_MS), "OK")
            else:  # whatever an earlier test of the class left behind
                self.assertEqual(self.c.call("DEBUG", "CLOCK", "REAL"), "OK")

    def cli(self, *args, **kw):
        return self.server.cli(*args, **kw)
