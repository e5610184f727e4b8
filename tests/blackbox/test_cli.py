"""redis-cli against the server: every string, key and server command of the foundation issue,
with redis-cli's exact output (`--no-raw`, so types show: (integer), (nil), (error) ...).

Each SCRIPTS entry is run through ONE redis-cli process reading commands from stdin (so SELECT
and CLIENT SETNAME carry over between lines) on a flushed server; its whole stdout must equal the
expected text. The expected texts were produced by Redis 7.0.15 itself (SLUICE_TARGET=redis).
"""

import re
import unittest

import cli_edge_scripts
import cli_scripts
from harness import IS_REDIS, RespError, ServerTestCase, sluice_only

SCRIPTS = dict(cli_scripts.SCRIPTS, **cli_edge_scripts.EDGE_SCRIPTS)


class ScriptedCliTest(ServerTestCase):
    maxDiff = None

    def run_script(self, name):
        script, expected = SCRIPTS[name]
        out = self.server.cli(stdin=script.strip("\n") + "\n")
        self.assertEqual(out.rstrip("\n"), expected.strip("\n"), "script %r" % name)


def _make_test(name):
    return lambda self: self.run_script(name)


for _name in SCRIPTS:
    setattr(ScriptedCliTest, "test_" + _name, _make_test(_name))


class OneShotCliTest(ServerTestCase):
    """redis-cli with the command as arguments, as people type it."""

    def test_raw_output_by_default_when_piped(self):
        self.assertEqual(self.cli("SET", "k", "hello world", flags=()), "OK\n")
        self.assertEqual(self.cli("GET", "k", flags=()), "hello world\n")
        self.assertEqual(self.cli("INCR", "n", flags=()), "1\n")
        self.assertEqual(self.cli("GET", "missing", flags=()), "\n")

    def test_no_raw_output(self):
        self.assertEqual(self.cli("SET", "k", "v"), "OK\n")
        self.assertEqual(self.cli("GET", "k"), '"v"\n')
        self.assertEqual(self.cli("MGET", "k", "nope"), '1) "v"\n2) (nil)\n')
        self.assertEqual(self.cli("GET", "k", "x"),
                         "(error) ERR wrong number of arguments for 'get' command\n")

    def test_resp3_output(self):
        self.assertEqual(self.cli("SET", "x", "1.5", flags=("-3", "--no-raw")), "OK\n")
        self.assertEqual(self.cli("INCRBYFLOAT", "x", "1", flags=("-3", "--no-raw")), '"2.5"\n')
        self.assertEqual(self.cli("GET", "nope", flags=("-3", "--no-raw")), "(nil)\n")
        self.assertEqual(self.cli("CONFIG", "GET", "maxclients", flags=("-3", "--no-raw")),
                         '1# "maxclients" => "10000"\n')
        out = self.cli("HELLO", "3", flags=("-3", "--no-raw"))
        self.assertRegex(out, r'^1# "server" => "redis"\n'
                              r'2# "version" => "7\.0\.\d+"\n'
                              r'3# "proto" => \(integer\) 3\n'
                              r'4# "id" => \(integer\) \d+\n'
                              r'5# "mode" => "standalone"\n'
                              r'6# "role" => "master"\n'
                              r'7# "modules" => \(empty array\)\n$')

    def test_quit(self):
        self.assertEqual(self.cli("QUIT"), "OK\n")

    def test_time(self):
        out = self.cli("TIME")
        m = re.fullmatch(r'1\) "(\d+)"\n2\) "(\d+)"\n', out)
        self.assertIsNotNone(m, out)
        import time
        self.assertLess(abs(int(m.group(1)) - time.time()), 120)
        self.assertLess(int(m.group(2)), 1000000)

    def test_client_id_list_kill(self):
        self.assertRegex(self.cli("CLIENT", "ID"), r"^\(integer\) \d+\n$")
        with self.server.client() as victim:
            self.assertEqual(victim.call("CLIENT", "SETNAME", "victim"), "OK")
            self.assertEqual(victim.call("SELECT", "2"), "OK")
            vid = victim.call("CLIENT", "ID")
            listing = self.cli("CLIENT", "LIST", flags=())
            line = [l for l in listing.splitlines() if " name=victim " in l]
            self.assertEqual(len(line), 1, listing)
            fields = dict(f.split("=", 1) for f in line[0].split(" "))
            self.assertEqual(fields["id"], str(vid))
            self.assertRegex(fields["addr"], r"^127\.0\.0\.1:\d+$")
            self.assertEqual(fields["laddr"], "127.0.0.1:%d" % self.server.port)
            self.assertEqual(fields["db"], "2")
            self.assertEqual(fields["cmd"], "client|id")
            self.assertEqual(fields["resp"], "2")
            own = [l for l in listing.splitlines() if "cmd=client|list" in l]
            self.assertEqual(len(own), 1, listing)
            self.assertEqual(self.cli("CLIENT", "KILL", fields["addr"]), "OK\n")
            self.assertEqual(victim.read_until_closed(), b"")
        with self.server.client() as victim:
            vid = victim.call("CLIENT", "ID")
            self.assertEqual(self.cli("CLIENT", "KILL", "ID", vid), "(integer) 1\n")
            self.assertEqual(victim.read_until_closed(), b"")
        self.assertEqual(self.cli("CLIENT", "KILL", "ID", vid), "(integer) 0\n")

    def test_info(self):
        self.assertEqual(self.c.call("SET", "a", "1"), "OK")
        self.assertEqual(self.c.call("SET", "b", "1", "EX", "1000"), "OK")
        # Through the socket: redis-cli drops the \r of INFO's lines.
        out = self.c.call("INFO").decode()
        for section in ("Server", "Clients", "Memory", "Persistence", "Stats", "Keyspace"):
            self.assertIn("# %s\r\n" % section, out)
        self.assertRegex(out, r"\r\nredis_version:7\.0\.\d+\r\n")
        self.assertRegex(out, r"\r\ntcp_port:%d\r\n" % self.server.port)
        self.assertRegex(out, r"\r\nconnected_clients:\d+\r\n")
        self.assertRegex(out, r"\r\nloading:0\r\n")
        self.assertRegex(out, r"\r\ntotal_commands_processed:\d+\r\n")
        self.assertRegex(out, r"\r\ndb0:keys=2,expires=1,avg_ttl=\d+\r\n")
        if not IS_REDIS:
            self.assertRegex(out, r"\r\nsluice_version:\d+\.\d+\.\d+")
        keyspace = self.c.call("INFO", "keyspace").decode()
        self.assertRegex(keyspace, r"^# Keyspace\r\ndb0:keys=2,expires=1,avg_ttl=\d+\r\n$")
        self.assertRegex(self.cli("INFO", "keyspace", flags=()),
                         r"^# Keyspace\ndb0:keys=2,expires=1,avg_ttl=\d+\n$")
        self.assertNotIn("# Server", keyspace)

    def test_command(self):
        self.assertRegex(self.cli("COMMAND", "COUNT"), r"^\(integer\) \d+\n$")
        count = int(self.cli("COMMAND", "COUNT", flags=()))
        self.assertGreaterEqual(count, 60)
        info = self.c.call("COMMAND", "INFO", "get", "set", "nosuch")
        self.assertEqual(info[0][:6], [b"get", 2, ["readonly", "fast"], 1, 1, 1])
        self.assertEqual(info[1][:6], [b"set", -3, ["write", "denyoom"], 1, 1, 1])
        self.assertIsNone(info[2])
        self.assertEqual(self.cli("COMMAND", "INFO", "nosuch"), "1) (nil)\n")
        docs = self.c.call("COMMAND", "DOCS", "get")
        self.assertEqual(docs[0], b"get")
        doc = dict(zip(docs[1][0::2], docs[1][1::2]))
        self.assertEqual(doc[b"summary"], b"Get the value of a key")
        self.assertEqual(doc[b"group"], b"string")
        everything = self.c.call("COMMAND")
        self.assertEqual(len(everything), count)
        names = {entry[0] for entry in everything}
        for name in (b"get", b"set", b"incrbyfloat", b"pexpiretime", b"scan", b"client", b"hello"):
            self.assertIn(name, names)

    def test_scan_with_redis_cli(self):
        for i in range(250):
            self.assertEqual(self.c.call("SET", "user:%d" % i, "x"), "OK")
        self.assertEqual(self.c.call("SET", "other", "x"), "OK")
        out = self.cli("--scan", "--pattern", "user:*", flags=())
        self.assertEqual(sorted(out.split()), sorted("user:%d" % i for i in range(250)))
        out = self.cli("--scan", flags=())
        self.assertEqual(len(out.split()), 251)

    def test_debug_refused_when_not_enabled(self):
        from harness import Server
        server = Server(debug=False)
        self.addCleanup(server.stop)
        server.start()
        self.assertEqual(server.cli("DEBUG", "CLOCK", "REAL"),
                         '(error) ERR DEBUG command not allowed. If the enable-debug-command option '
                         'is set to "local", you can run it from a local connection, otherwise you '
                         'need to set this option in the configuration file, and then restart the '
                         'server.\n')

    @sluice_only
    def test_client_setinfo(self):
        self.assertEqual(self.cli(stdin="CLIENT SETINFO LIB-NAME mylib\nCLIENT SETINFO LIB-VER 1.2\n"
                                        "CLIENT SETINFO FOO x\nCLIENT LIST\n", flags=()).splitlines()[:3],
                         ["OK", "OK", "ERR Unrecognized option 'FOO'"])
        out = self.cli(stdin="CLIENT SETINFO LIB-NAME mylib\nCLIENT LIST\n", flags=())
        self.assertIn(" lib-name=mylib ", out)

    @sluice_only
    def test_debug_clock_drives_expiry(self):
        from harness import T0_MS
        script = ("DEBUG CLOCK SET %d\nSET k v PX 1500\nPTTL k\nDEBUG CLOCK ADVANCE 1000\nPTTL k\n"
                  "TTL k\nDEBUG CLOCK ADVANCE 501\nGET k\nEXISTS k\nSET e v EXAT %d\nTTL e\n"
                  "DEBUG CLOCK REAL\nEXISTS e\n" % (T0_MS, T0_MS // 1000 + 60))
        self.assertEqual(self.cli(stdin=script),
                         "OK\nOK\n(integer) 1500\nOK\n(integer) 500\n(integer) 1\nOK\n(nil)\n"
                         "(integer) 0\nOK\n(integer) 58\nOK\n(integer) 0\n")


class AuthCliTest(unittest.TestCase):
    def test_auth_through_redis_cli(self):
        from harness import Server
        server = Server(options={"requirepass": "s3cret"})
        self.addCleanup(server.stop)
        server.start()
        self.assertEqual(server.cli("SET", "k", "v"), "(error) NOAUTH Authentication required.\n")
        self.assertEqual(server.cli(stdin="AUTH wrong\nAUTH s3cret\nSET k v\nGET k\n"),
                         "(error) WRONGPASS invalid username-password pair or user is disabled.\n"
                         'OK\nOK\n"v"\n')
        self.assertEqual(server.cli(stdin="AUTH default s3cret\nCONFIG GET requirepass\n"),
                         'OK\n1) "requirepass"\n2) "s3cret"\n')


@sluice_only
class LimiterCliTest(ServerTestCase):
    test_clock = True

    def test_gcra_take_output(self):
        self.assertEqual(self.cli("GCRA.TAKE", "user:42", "10", "1s"),
                         "1) (integer) 1\n2) (integer) 9\n3) (integer) 0\n4) (integer) 100\n5) (integer) 10\n")
        self.assertEqual(self.cli("GCRA.TAKE", "user:42", "10", "1s", flags=()), "1\n8\n0\n200\n10\n")

    def test_resp3_map_output(self):
        # A fresh redis-cli process runs on the real clock: COST 0 on a fresh key does not depend on it.
        self.assertEqual(self.cli("GCRA.TAKE", "fresh", "10", "1s", "COST", "0", flags=("-3", "--no-raw")),
                         '1# "allowed" => (integer) 1\n2# "remaining" => (integer) 10\n'
                         '3# "retry_after_ms" => (integer) 0\n4# "reset_after_ms" => (integer) 0\n'
                         '5# "limit" => (integer) 10\n')
        self.assertEqual(self.cli("CONC.ACQUIRE", "c", "1", "1h", "ID", "me", flags=("-3", "--no-raw")),
                         '1# "allowed" => (integer) 1\n2# "remaining" => (integer) 0\n'
                         '3# "retry_after_ms" => (integer) 0\n4# "reset_after_ms" => (integer) 3600000\n'
                         '5# "limit" => (integer) 1\n6# "token" => "me"\n')

    def test_cl_throttle_output(self):
        self.assertEqual(self.cli("CL.THROTTLE", "user123", "15", "30", "60"),
                         "1) (integer) 0\n2) (integer) 16\n3) (integer) 15\n4) (integer) -1\n5) (integer) 2\n")


class BinarySafeNumbersTest(ServerTestCase):
    """Numbers are parsed from the whole stored value, embedded NUL bytes included (Redis's
    length-aware string2ll/string2ld), not as C strings. Found by comparing Sluice with Redis."""

    def test_stored_values_with_nul_bytes(self):
        for value in (b"\x00abc", b"1\x002", b"\x00", b"0\x00\x00+1", b"\x00\x00\x00inf"):
            self.assertEqual(self.c.call("SET", "n", value), "OK")
            self.assertEqual(self.c.call("INCRBYFLOAT", "n", "0.1"),
                             RespError("ERR value is not a valid float"), value)
            self.assertEqual(self.c.call("INCRBYFLOAT", "n", "inf"),
                             RespError("ERR value is not a valid float"), value)
            self.assertEqual(self.c.call("INCR", "n"),
                             RespError("ERR value is not an integer or out of range"), value)
            self.assertEqual(self.c.call("GET", "n"), value)

    def test_arguments_with_nul_bytes(self):
        self.assertEqual(self.c.call("INCRBYFLOAT", "n", b"1\x00x"), RespError("ERR value is not a valid float"))
        self.assertEqual(self.c.call("INCRBY", "n", b"1\x00"), RespError("ERR value is not an integer or out of range"))
        self.assertEqual(self.c.call("SET", "n", "1", "EX", b"10\x00"),
                         RespError("ERR value is not an integer or out of range"))
        self.assertEqual(self.c.call("EXISTS", "n"), 0)
        self.assertEqual(self.c.call("SET", b"k\x00ey", b"v\x00al"), "OK")
        self.assertEqual(self.c.call("GET", b"k\x00ey"), b"v\x00al")
        self.assertEqual(self.c.call("GET", b"k"), None)
        self.assertEqual(self.c.call("APPEND", b"k\x00ey", b"\x00"), 5)
