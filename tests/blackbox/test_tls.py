"""TLS (issue 43): tls-port beside the plain port, client certificates, reloads, stalls.

Certificates are made at test time with `openssl` in the module's temporary directory: a CA, a
server certificate (two, for the reload), a client certificate, an expired one and one from
another CA. Clients: redis-cli --tls (Debian's is built with TLS), redis-py with ssl, and a raw
RESP client over Python's ssl. A real redis-server 7.0.15 started with the same TLS files is the
reference for CONFIG GET tls-* and CONFIG SET's errors.
"""
import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import threading
import time
import unittest

from harness import (IS_REDIS, REDIS_CLI, BlackboxTestCase, Client, ConnectionClosed, Server,
                     free_port)
from test_transactions import import_redis_py, redis_server_binary, redis_server_version

redis = import_redis_py()

CERTS = None  # the temporary directory of the certificates (setUpModule)
LOG_PREFIX = "Error accepting a TLS client connection from 127.0.0.1:"


def run_openssl(*args):
    subprocess.run(["openssl"] + list(args), check=True, capture_output=True, cwd=CERTS,
                   timeout=120)


def make_certificates():
    """ca, server, server2, client (signed by ca); expired (ca, validity in 2020); other-ca and
    stranger (signed by other-ca)."""
    for ca in ("ca", "other-ca"):
        run_openssl("req", "-x509", "-new", "-nodes", "-newkey", "rsa:2048", "-keyout",
                    ca + ".key", "-out", ca + ".crt", "-days", "3", "-subj", "/CN=Sluice test " + ca)
    with open(os.path.join(CERTS, "san.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    for name, ca, cn in (("server", "ca", "server-one"), ("server2", "ca", "server-two"),
                         ("client", "ca", "client"), ("stranger", "other-ca", "stranger")):
        run_openssl("req", "-new", "-nodes", "-newkey", "rsa:2048", "-keyout", name + ".key",
                    "-out", name + ".csr", "-subj", "/CN=" + cn)
        run_openssl("x509", "-req", "-in", name + ".csr", "-CA", ca + ".crt", "-CAkey",
                    ca + ".key", "-CAcreateserial", "-out", name + ".crt", "-days", "3",
                    "-extfile", "san.ext")
    # An expired certificate: `openssl ca` takes explicit dates.
    os.makedirs(os.path.join(CERTS, "issued"), exist_ok=True)
    open(os.path.join(CERTS, "index.txt"), "w").close()
    with open(os.path.join(CERTS, "serial"), "w") as f:
        f.write("1000\n")
    with open(os.path.join(CERTS, "ca.cnf"), "w") as f:
        f.write("[ca]\ndefault_ca=test\n[test]\ndatabase=index.txt\nnew_certs_dir=issued\n"
                "serial=serial\ndefault_md=sha256\npolicy=any\n[any]\ncommonName=supplied\n")
    run_openssl("req", "-new", "-nodes", "-newkey", "rsa:2048", "-keyout", "expired.key", "-out",
                "expired.csr", "-subj", "/CN=expired")
    run_openssl("ca", "-batch", "-config", "ca.cnf", "-cert", "ca.crt", "-keyfile", "ca.key",
                "-startdate", "20200101000000Z", "-enddate", "20200102000000Z", "-in",
                "expired.csr", "-out", "expired.crt")


def setUpModule():
    global CERTS
    if IS_REDIS:
        return
    if shutil.which("openssl") is None:
        raise unittest.SkipTest("openssl is not installed")
    CERTS = tempfile.mkdtemp(prefix="sluice-bb-tls-")
    make_certificates()


def tearDownModule():
    if CERTS:
        shutil.rmtree(CERTS, ignore_errors=True)


def cert(name):
    return os.path.join(CERTS, name)


def tls_options(tls_port, **extra):
    options = {"tls-port": str(tls_port), "tls-cert-file": cert("server.crt"),
               "tls-key-file": cert("server.key"), "tls-ca-cert-file": cert("ca.crt")}
    options.update(extra)
    return options


def client_context(name="client", ca="ca"):
    ctx = ssl.create_default_context(cafile=cert(ca + ".crt"))
    ctx.check_hostname = False
    if name is not None:
        ctx.load_cert_chain(cert(name + ".crt"), cert(name + ".key"))
    return ctx


class TlsClient(Client):
    """harness.Client over TLS."""

    def __init__(self, port, name="client", timeout=30.0):  # pylint: disable=super-init-not-called
        raw = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            self.sock = client_context(name).wrap_socket(raw, server_hostname="localhost")
            # TLS 1.3: the server checks the client certificate after the client's handshake
            # ends; a refusal shows on the first read.
        except BaseException:
            raw.close()
            raise
        self._reset_buffer()

    def peer_cn(self):
        subject = dict(x[0] for x in self.sock.getpeercert()["subject"])
        return subject["commonName"]


def refused(port, name):
    """True when a TLS client presenting `name` (None: no certificate) is refused."""
    try:
        with TlsClient(port, name, timeout=10) as c:
            return c.call("PING") != "PONG"
    except (ssl.SSLError, ConnectionClosed, ConnectionResetError, BrokenPipeError):
        return True


def wait_for_log(server, text, deadline=15.0):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if text in server.stderr():
            return
        time.sleep(0.05)
    raise AssertionError("%r not logged:\n%s" % (text, server.stderr()))


class TlsServerCase(BlackboxTestCase):
    extra = {}

    @classmethod
    def setUpClass(cls):
        if IS_REDIS:
            raise unittest.SkipTest("Sluice's own server")
        cls.tls_port = free_port()
        cls.server = Server(options=tls_options(cls.tls_port, **cls.extra))
        try:
            cls.server.start()
        except BaseException:
            cls.server.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def tls_cli(self, *args, name="client", check=True):
        argv = [REDIS_CLI, "-h", "127.0.0.1", "-p", str(self.tls_port), "--tls", "--cacert",
                cert("ca.crt")]
        if name is not None:
            argv += ["--cert", cert(name + ".crt"), "--key", cert(name + ".key")]
        res = subprocess.run(argv + [str(a) for a in args], capture_output=True, text=True,
                             timeout=60)
        if check and res.returncode != 0:
            raise AssertionError("redis-cli %s: %s %s" % (args, res.stdout, res.stderr))
        return res.stdout + res.stderr


class ClientCertificatesTest(TlsServerCase):
    """tls-auth-clients yes (the default), then optional and no."""

    def test_plain_and_tls_side_by_side(self):
        self.assertEqual(self.tls_cli("SET", "k", "over tls").strip(), "OK")
        self.assertEqual(self.server.cli("GET", "k").strip(), '"over tls"')
        self.assertEqual(self.server.cli("SET", "k2", "plain").strip(), "OK")
        self.assertEqual(self.tls_cli("GET", "k2").strip(), "plain")
        with TlsClient(self.tls_port) as c:
            self.assertEqual(c.peer_cn(), "server-one")
            self.assertEqual(c.call("GCRA.TAKE", "rl:x", 10, 1000)[0], 1)
            info = c.call("INFO", "server").decode()
            self.assertIn("tcp_port:%d\r\n" % self.server.port, info)

    def test_no_certificate_refused_with_log_line(self):
        self.assertTrue(refused(self.tls_port, None))
        wait_for_log(self.server, LOG_PREFIX)
        wait_for_log(self.server, "peer did not return a certificate")
        self.assertNotIn("PONG", self.tls_cli("PING", name=None, check=False))
        self.assertIn("PONG", self.tls_cli("PING"))

    def test_expired_and_wrong_ca_refused_with_log_line(self):
        self.assertTrue(refused(self.tls_port, "expired"))
        wait_for_log(self.server, "certificate has expired")
        self.assertTrue(refused(self.tls_port, "stranger"))
        wait_for_log(self.server, "unable to get local issuer certificate")
        for line in self.server.stderr().splitlines():
            if "certificate has expired" in line:
                self.assertIn(LOG_PREFIX, line)  # one line: the peer and the reason

    def test_optional_and_no(self):
        c = self.server.client()
        self.addCleanup(c.close)
        try:
            self.assertEqual(c.call("CONFIG", "SET", "tls-auth-clients", "optional"), "OK")
            self.assertEqual(c.call("CONFIG", "GET", "tls-auth-clients"),
                             [b"tls-auth-clients", b"optional"])
            self.assertFalse(refused(self.tls_port, None))
            self.assertFalse(refused(self.tls_port, "client"))
            self.assertTrue(refused(self.tls_port, "stranger"))
            self.assertEqual(c.call("CONFIG", "SET", "tls-auth-clients", "no"), "OK")
            self.assertFalse(refused(self.tls_port, None))
            self.assertFalse(refused(self.tls_port, "stranger"))  # never asked for
        finally:
            c.call("CONFIG", "SET", "tls-auth-clients", "yes")
        self.assertTrue(refused(self.tls_port, None))


class TrafficTest(TlsServerCase):
    """Large values, long pipelines and redis-py over TLS; stalled handshakes beside clients."""

    def test_pipeline_of_10000_commands(self):
        with TlsClient(self.tls_port) as c:
            replies = c.pipeline([("INCR", "counter")] * 10000)
            self.assertEqual(replies, list(range(1, 10001)))
            replies = c.pipeline([("GCRA.TAKE", "rl:%d" % (i % 50), 1000, 60000)
                                  for i in range(10000)])
            self.assertEqual(sum(r[0] for r in replies), 10000)

    def test_16mb_value(self):
        value = os.urandom(8 << 20).hex().encode()  # 16 MB
        with TlsClient(self.tls_port) as c:
            self.assertEqual(c.call("SET", "big", value), "OK")
            self.assertEqual(c.call("STRLEN", "big"), len(value))
            self.assertEqual(c.call("GET", "big"), value)

    def test_redis_py(self):
        if redis is None:
            self.skipTest("redis-py is not installed")
        r = redis.Redis(host="127.0.0.1", port=self.tls_port, ssl=True,
                        ssl_certfile=cert("client.crt"), ssl_keyfile=cert("client.key"),
                        ssl_ca_certs=cert("ca.crt"), ssl_check_hostname=False)
        try:
            self.assertTrue(r.set("py", "v"))
            self.assertEqual(r.get("py"), b"v")
            pipe = r.pipeline(transaction=True)
            for i in range(100):
                pipe.incr("py-counter")
            self.assertEqual(pipe.execute()[-1], 100)
            self.assertEqual(r.execute_command("GCRA.TAKE", "rl:py", 5, 1000)[0], 1)
        finally:
            r.close()

    def test_garbage_and_half_open_handshakes_do_not_stall_others(self):
        half_open = [socket.create_connection(("127.0.0.1", self.tls_port)) for _ in range(4)]
        garbage = socket.create_connection(("127.0.0.1", self.tls_port))
        self.addCleanup(garbage.close)
        for s in half_open:
            self.addCleanup(s.close)
        garbage.sendall(b"*1\r\n$4\r\nPING\r\n" + os.urandom(4096))
        # A TLS client and a plain client are served at once, and the garbage closed.
        start = time.monotonic()
        with TlsClient(self.tls_port) as c:
            for _ in range(20):
                self.assertEqual(c.call("PING"), "PONG")
        with self.server.client() as p:
            self.assertEqual(p.call("PING"), "PONG")
        self.assertLess(time.monotonic() - start, 5.0)
        garbage.settimeout(10)
        try:
            while garbage.recv(4096):
                pass
        except ConnectionResetError:
            pass
        wait_for_log(self.server, "wrong version number")
        # The half-open ones are closed after the handshake timeout (10 s).
        half_open[0].settimeout(20)
        t0 = time.monotonic()
        try:
            self.assertEqual(half_open[0].recv(10), b"")
        except ConnectionResetError:
            pass
        self.assertLess(time.monotonic() - t0, 15)
        wait_for_log(self.server, "handshake timed out after 10 s")

    def test_blocking_and_pubsub_over_tls(self):
        # A parked TLS client keeps a read in flight while its reply (or a message) is written.
        with TlsClient(self.tls_port) as blocked, TlsClient(self.tls_port) as sub, \
                self.server.client() as plain:
            blocked.send(b"*3\r\n$5\r\nBLPOP\r\n$5\r\nqueue\r\n$1\r\n0\r\n")
            self.assertEqual(sub.call("SUBSCRIBE", "news"), [b"subscribe", b"news", 1])
            time.sleep(0.2)
            self.assertEqual(plain.call("RPUSH", "queue", "job"), 1)
            self.assertEqual(blocked.read(), [b"queue", b"job"])
            self.assertEqual(blocked.call("PING"), "PONG")
            for i in range(100):
                self.assertEqual(plain.call("PUBLISH", "news", "m%d" % i), 1)
            for i in range(100):
                self.assertEqual(sub.read(), [b"message", b"news", b"m%d" % i])

    def test_client_list_and_kill(self):
        with TlsClient(self.tls_port) as c:
            c.call("CLIENT", "SETNAME", "tls-one")
            with self.server.client() as p:
                self.assertIn(b"name=tls-one", p.call("CLIENT", "LIST"))
                self.assertEqual(p.call("CLIENT", "KILL", "SKIPME", "yes", "USER", "default"), 1)
            with self.assertRaises((ConnectionClosed, ConnectionResetError, ssl.SSLError)):
                c.call("PING")


class CloseNotifyTest(TlsServerCase):
    """Sluice sends close_notify before it closes a TLS connection (QUIT, CLIENT KILL, the idle
    timeout): a client that takes a ragged EOF as an error (suppress_ragged_eofs=False) reads a
    clean end (b''), no SSLEOFError."""

    def connect(self):
        raw = socket.create_connection(("127.0.0.1", self.tls_port), timeout=30)
        s = client_context().wrap_socket(raw, server_hostname="localhost",
                                         suppress_ragged_eofs=False)
        self.addCleanup(s.close)
        return s

    def read_to_clean_end(self, s, expected):
        data = b""
        while True:
            chunk = s.recv(4096)  # ssl.SSLEOFError when the TCP stream ends without close_notify
            if chunk == b"":
                break
            data += chunk
        self.assertEqual(data, expected)

    def test_quit(self):
        s = self.connect()
        s.sendall(b"PING\r\nQUIT\r\n")
        self.read_to_clean_end(s, b"+PONG\r\n+OK\r\n")

    def test_client_kill(self):
        s = self.connect()
        s.sendall(b"CLIENT ID\r\n")
        reply = b""
        while not reply.endswith(b"\r\n"):
            reply += s.recv(100)
        with self.server.client() as p:
            self.assertEqual(p.call("CLIENT", "KILL", "ID", int(reply[1:-2])), 1)
        self.read_to_clean_end(s, b"")

    def test_idle_timeout(self):
        with self.server.client() as p:
            self.assertEqual(p.call("CONFIG", "SET", "timeout", "1"), "OK")
        self.addCleanup(lambda: self.server.cli("CONFIG", "SET", "timeout", "0"))
        s = self.connect()
        s.sendall(b"PING\r\n")
        self.read_to_clean_end(s, b"+PONG\r\n")


class ReloadTest(TlsServerCase):
    def test_config_set_reloads_and_keeps_connections(self):
        admin = TlsClient(self.tls_port)
        self.addCleanup(admin.close)
        self.assertEqual(admin.peer_cn(), "server-one")
        self.assertEqual(admin.call("SET", "before", "1"), "OK")
        self.assertEqual(admin.call("CONFIG", "SET", "tls-cert-file", cert("server2.crt"),
                                    "tls-key-file", cert("server2.key")), "OK")
        wait_for_log(self.server, "TLS: certificates and settings reloaded")
        with TlsClient(self.tls_port) as fresh:
            self.assertEqual(fresh.peer_cn(), "server-two")
            self.assertEqual(fresh.call("GET", "before"), b"1")
        # The connection made before the reload goes on, on its old context.
        self.assertEqual(admin.call("PING"), "PONG")
        self.assertEqual(admin.peer_cn(), "server-one")
        # Same paths again: the files are read again (rotation in place).
        self.assertEqual(admin.call("CONFIG", "SET", "tls-cert-file", cert("server2.crt")), "OK")
        # A bad file: Redis's error, the old context kept.
        self.assertEqual(
            admin.call("CONFIG", "SET", "tls-cert-file", "/nonexistent/cert.pem"),
            "ERR CONFIG SET failed (possibly related to argument 'tls-cert-file') - Unable to "
            "update TLS configuration. Check server logs.")
        wait_for_log(self.server, "Failed to load certificate: /nonexistent/cert.pem")
        self.assertEqual(admin.call("CONFIG", "GET", "tls-cert-file"),
                         [b"tls-cert-file", cert("server2.crt").encode()])
        # A mismatched key: refused too.
        self.assertTrue(admin.call("CONFIG", "SET", "tls-key-file", cert("server.key"))
                        .startswith("ERR CONFIG SET failed (possibly related to argument "
                                    "'tls-key-file')"))
        with TlsClient(self.tls_port) as fresh:
            self.assertEqual(fresh.peer_cn(), "server-two")
        self.assertEqual(admin.call("PING"), "PONG")


class MoveTlsPortTest(TlsServerCase):
    def test_config_set_tls_port(self):
        before = TlsClient(self.tls_port)
        self.addCleanup(before.close)
        new_port = free_port()
        self.assertEqual(before.call("CONFIG", "SET", "tls-port", new_port), "OK")
        with TlsClient(new_port) as c:
            self.assertEqual(c.call("PING"), "PONG")
        with self.assertRaises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", self.tls_port), timeout=5).close()
        self.assertEqual(before.call("PING"), "PONG")  # open connections stay
        # A port in use: Redis's error, the listener stays where it was.
        with socket.socket() as busy:
            busy.bind(("127.0.0.1", 0))
            busy.listen(1)
            self.assertEqual(
                before.call("CONFIG", "SET", "tls-port", busy.getsockname()[1]),
                "ERR CONFIG SET failed (possibly related to argument 'tls-port') - Unable to "
                "listen on this port. Check server logs.")
        self.assertEqual(before.call("CONFIG", "GET", "tls-port"),
                         [b"tls-port", str(new_port).encode()])
        with TlsClient(new_port) as c:
            self.assertEqual(c.call("PING"), "PONG")
        # 0: no TLS listener; then back.
        with self.server.client() as plain:
            self.assertEqual(plain.call("CONFIG", "SET", "tls-port", 0), "OK")
            with self.assertRaises(ConnectionRefusedError):
                socket.create_connection(("127.0.0.1", new_port), timeout=5).close()
            self.assertEqual(plain.call("CONFIG", "SET", "tls-port", self.tls_port), "OK")
        with TlsClient(self.tls_port) as c:
            self.assertEqual(c.call("PING"), "PONG")
        self.assertEqual(before.call("PING"), "PONG")


class StartupTest(BlackboxTestCase):
    @classmethod
    def setUpClass(cls):
        if IS_REDIS:
            raise unittest.SkipTest("Sluice's own server")

    def test_tls_only_with_port_0(self):
        tls_port = free_port()
        server = Server(options=dict(tls_options(tls_port), port="0"))
        self.addCleanup(server.stop)
        server.spawn()
        end = time.monotonic() + 60
        while True:
            try:
                with TlsClient(tls_port) as c:
                    self.assertEqual(c.call("PING"), "PONG")
                    info = c.call("INFO", "server").decode()
                    self.assertIn("tcp_port:%d\r\n" % tls_port, info)
                break
            except (OSError, ConnectionClosed):
                if time.monotonic() > end or server.proc.poll() is not None:
                    raise
                time.sleep(0.05)
        self.assertIn("(TLS)", server.stderr())

    def test_maxclients_on_the_tls_port_drops_the_connection(self):
        tls_port = free_port()
        server = Server(options=tls_options(tls_port))
        self.addCleanup(server.stop)
        server.start()
        with server.only_client() as c:
            self.assertEqual(c.call("CONFIG", "SET", "maxclients", 1), "OK")
            # As Redis: no handshake was made, so no error is written; the connection drops.
            self.assertTrue(refused(tls_port, "client"))
            self.assertIn(b"rejected_connections:1\r\n", c.call("INFO", "stats"))

    def test_bad_certificate_exits_1(self):
        for options, reason in (
                ({"tls-cert-file": cert("missing.crt")}, "Failed to load certificate"),
                ({"tls-key-file": cert("server2.key")}, "key values mismatch"),
                ({"tls-ca-cert-file": ""}, "Either tls-ca-cert-file or tls-ca-cert-dir"),
                ({"tls-protocols": "TLSv1.4"}, "Invalid tls-protocols specified")):
            server = Server(options=tls_options(free_port(), **options))
            self.addCleanup(server.stop)
            server.spawn()
            self.assertEqual(server.wait_exit(), 1)
            self.assertIn(reason, server.stderr())
            self.assertIn("Failed to configure TLS. Check logs for more info.", server.stderr())


class RedisReferenceTls:
    """redis-server 7.0.15 with the same TLS files, on a plain and a TLS port."""

    def __init__(self, binary):
        self.binary = binary
        self.workdir = tempfile.mkdtemp(prefix="sluice-bb-redis-tls-")
        self.port = free_port()
        self.tls_port = free_port()
        self.proc = None

    def start(self):
        argv = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no", "--daemonize", "no", "--dir", self.workdir]
        for k, v in tls_options(self.tls_port).items():
            argv += ["--" + k, v]
        with open(os.path.join(self.workdir, "redis.log"), "wb") as log:
            self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, cwd=self.workdir)
        end = time.monotonic() + 60
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise AssertionError("redis-server exited with %s" % self.proc.returncode)
            try:
                with Client(self.port, timeout=5) as c:
                    if c.call("PING") == "PONG":
                        return self
            except (OSError, ConnectionClosed):
                time.sleep(0.05)
        raise AssertionError("redis-server did not start")

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.workdir, ignore_errors=True)


class BesideRedisTest(TlsServerCase):
    """CONFIG GET tls-* and CONFIG SET's errors, over TLS, as a real redis-server answers."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        binary = redis_server_binary()
        if binary is None or not redis_server_version(binary).startswith("7.0."):
            cls.server.stop()
            raise unittest.SkipTest("no redis-server 7.0.x reference")
        cls.redis = RedisReferenceTls(binary)
        try:
            cls.redis.start()
        except BaseException:
            cls.redis.stop()
            cls.server.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.redis.stop()
        super().tearDownClass()

    def both(self, *args):
        with TlsClient(self.tls_port) as s, TlsClient(self.redis.tls_port) as r:
            return s.call(*args), r.call(*args)

    def test_config_get(self):
        def as_dict(reply):
            d = dict(zip(reply[::2], reply[1::2]))
            d.pop(b"tls-port")  # the ports differ
            return d
        mine, theirs = self.both("CONFIG", "GET", "tls-*")
        self.assertEqual(as_dict(mine), as_dict(theirs))
        for name in ("tls-auth-clients", "tls-session-cache-size", "tls-protocols"):
            self.assertEqual(*self.both("CONFIG", "GET", name))

    def test_config_set_tls_port_in_use(self):
        with socket.socket() as busy:
            busy.bind(("127.0.0.1", 0))
            busy.listen(1)
            port = busy.getsockname()[1]
            mine, theirs = self.both("CONFIG", "SET", "tls-port", port)
        self.assertEqual(mine, theirs)
        self.assertIn("Unable to listen on this port", mine)

    def test_config_set_errors(self):
        for args in (("tls-auth-clients", "maybe"), ("tls-protocols", "TLSv1.4"),
                     ("tls-session-cache-size", "-1"), ("tls-session-cache-timeout", "x"),
                     ("tls-replication", "maybe"), ("tls-prefer-server-ciphers", "2"),
                     ("tls-session-caching", "maybe"), ("tls-ciphers", "BOGUS"),
                     ("tls-ciphersuites", "BOGUS"), ("tls-cert-file", "/nonexistent"),
                     ("tls-key-file", "/nonexistent"), ("tls-ca-cert-file", "/nonexistent"),
                     ("tls-session-cache-size", "100"), ("tls-session-cache-timeout", "60"),
                     ("tls-cluster", "yes"), ("tls-cluster", "no"),
                     ("tls-prefer-server-ciphers", "yes"), ("tls-protocols", "TLSv1.2"),
                     ("tls-protocols", "TLSv1.2 TLSv1.3"), ("tls-auth-clients", "YES")):
            mine, theirs = self.both("CONFIG", "SET", *args)
            self.assertEqual(mine, theirs, args)
        self.assertEqual(*self.both("CONFIG", "GET", "tls-protocols"))


if __name__ == "__main__":
    unittest.main()
