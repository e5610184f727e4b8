"""ACLs (Redis 7.0): users, rules, AUTH/HELLO AUTH, the gate's NOPERM, ACL LOG, aclfile.

ACL subcommands and their errors are sent to Sluice and to a real redis-server 7.0.15 started
beside it, raw replies compared byte for byte in RESP2 and RESP3. Sluice-only: a least-privilege
limiter user (GCRA.TAKE on rl:* and nothing else, also from EVAL and MULTI), ACL LOG entries,
ACL SAVE/LOAD round trips, `user` lines in the config file, DELUSER closing connections.
"""
import os
import unittest

from harness import IS_REDIS, BlackboxTestCase, Client, ConnectionClosed, RespError, Server
from test_transactions import import_redis_py, read_raw_reply, start_beside_reference

redis = import_redis_py()

# Each step: (connection, command...). Connection "admin" is the default user; "u" starts as
# the default user and authenticates as others during the steps. Replies must be identical.
STEPS = [
    ("admin", "ACL", "SETUSER", "z", "on", ">p", "~a*", "%R~b*", "&ch", "+get", "(+set ~s*)"),
    ("admin", "ACL", "LIST"),
    ("admin", "ACL", "GETUSER", "z"),
    ("admin", "ACL", "GETUSER", "nosuch"),
    ("admin", "ACL", "SETUSER", "q", "+@all", "-get"),
    ("admin", "ACL", "GETUSER", "q"),
    # (One single-command rule per user: Redis lists them in its hash table's random order.)
    ("admin", "ACL", "SETUSER", "r", "-@all", "+select|0", "+select|1", "resetchannels"),
    ("admin", "ACL", "GETUSER", "r"),
    ("admin", "ACL", "SETUSER", "r2", "+config|get"),
    ("admin", "ACL", "GETUSER", "r2"),
    ("admin", "ACL", "DELUSER", "r2"),
    ("admin", "ACL", "SETUSER", "r", "~x", "~*"),
    ("admin", "ACL", "SETUSER", "r", "~*", "~x"),
    ("admin", "ACL", "SETUSER", "r", "&*", "&x"),
    ("admin", "ACL", "SETUSER", "r", "#abc"),
    ("admin", "ACL", "SETUSER", "r", "#" + "A" * 64),
    ("admin", "ACL", "SETUSER", "r", "(~x", "+get"),
    ("admin", "ACL", "SETUSER", "r", "+nosuch"),
    ("admin", "ACL", "SETUSER", "r", "+@nosuch"),
    ("admin", "ACL", "SETUSER", "r", "+config|get|x"),
    ("admin", "ACL", "SETUSER", "r", "+config|nosuch"),
    ("admin", "ACL", "SETUSER", "r", "+config|"),
    ("admin", "ACL", "SETUSER", "r", "%X~a"),
    ("admin", "ACL", "SETUSER", "r", "~a b"),
    ("admin", "ACL", "SETUSER", "r", "<nope"),
    ("admin", "ACL", "SETUSER", "r", "bogus"),
    ("admin", "ACL", "SETUSER", "a b"),
    ("admin", "ACL", "SETUSER", "r", ">pw", "<pw", "nopass", "resetpass", "on", "off"),
    ("admin", "ACL", "GETUSER", "r"),
    ("admin", "ACL", "SETUSER", "r", "reset"),
    ("admin", "ACL", "LIST"),
    ("admin", "ACL", "DELUSER", "default"),
    ("admin", "ACL", "DELUSER", "r", "nosuch"),
    ("admin", "ACL", "USERS"),
    ("admin", "ACL", "WHOAMI"),
    ("admin", "ACL", "DRYRUN", "z", "get", "a1"),
    ("admin", "ACL", "DRYRUN", "z", "get", "b1"),
    ("admin", "ACL", "DRYRUN", "z", "set", "b1", "x"),
    ("admin", "ACL", "DRYRUN", "z", "set", "s1", "x"),
    ("admin", "ACL", "DRYRUN", "z", "del", "x"),
    ("admin", "ACL", "DRYRUN", "nobody", "get", "x"),
    ("admin", "ACL", "DRYRUN", "z", "nosuch", "x"),
    ("admin", "ACL", "DRYRUN", "z", "get"),
    ("admin", "ACL", "CAT", "nosuch"),
    ("admin", "ACL", "CAT", "a", "b"),
    ("admin", "ACL", "GENPASS", "0"),
    ("admin", "ACL", "GENPASS", "4097"),
    ("admin", "ACL", "GENPASS", "x"),
    ("admin", "ACL", "LOG", "x"),
    ("admin", "ACL", "LOG", "1", "2"),
    ("admin", "ACL", "SAVE"),
    ("admin", "ACL", "LOAD"),
    ("admin", "ACL", "NOSUCH"),
    ("admin", "ACL"),
    ("admin", "ACL", "HELP"),
    ("admin", "ACL", "GETUSER"),
    ("admin", "ACL", "SETUSER", "lim", "on", ">pw", "~rl:*", "-@all", "+get", "+eval",
     "+multi", "+exec", "+set"),
    ("u", "AUTH", "lim", "pw"),
    ("u", "GET", "rl:1"),
    ("u", "GET", "other"),
    ("u", "DEL", "rl:1"),
    ("u", "EVAL", "return redis.call('get','other')", "0"),
    ("u", "EVAL", "return redis.call('get',KEYS[1])", "1", "other"),
    ("u", "EVAL", "return redis.call('del',KEYS[1])", "1", "rl:1"),
    ("u", "EVAL", "return redis.pcall('del',KEYS[1])", "1", "rl:1"),
    ("u", "MULTI"),
    ("u", "SET", "rl:1", "a"),
    ("u", "GET", "other"),
    ("u", "EXEC"),
    ("u", "MULTI"),
    ("u", "SET", "rl:1", "a"),
    ("u", "GET", "rl:1"),
    ("admin", "ACL", "SETUSER", "lim", "-get"),
    ("u", "EXEC"),
    ("u", "ACL", "WHOAMI"),
    ("u", "AUTH", "lim", "bad"),
    ("u", "AUTH", "nosuch", "pw"),
    ("u", "AUTH", "a", "b", "c"),
    ("u", "AUTH", "x"),
    ("u", "HELLO", "2", "AUTH", "lim", "bad"),
    ("admin", "ACL", "SETUSER", "lim", "off"),
    ("u", "AUTH", "lim", "pw"),
    ("admin", "ACL", "SETUSER", "sel", "on", "nopass", "~a*", "+get", "(%W~w* +set)",
     "(~z* +@all)"),
    ("u", "AUTH", "sel", "anything"),
    ("u", "SET", "w1", "v"),
    ("u", "SET", "w1", "v", "GET"),
    ("u", "GET", "w1"),
    ("u", "SET", "a1", "v"),
    ("u", "LPUSH", "z1", "v"),
    ("u", "GET", "a1"),
    ("admin", "ACL", "SETUSER", "sel", "clearselectors"),
    ("admin", "ACL", "GETUSER", "sel"),
    ("u", "RESET"),
    ("u", "ACL", "WHOAMI"),
    ("admin", "CONFIG", "SET", "requirepass", "secret"),
    ("admin", "ACL", "GETUSER", "default"),
    ("u", "PING"),
    ("u", "AUTH", "secret"),
    ("u", "AUTH", "default", "secret"),
    ("u", "ACL", "WHOAMI"),
    ("admin", "CONFIG", "SET", "requirepass", ""),
    # Redis lists single commands in its hash table's order: compare users with at most one.
    ("admin", "ACL", "DELUSER", "lim"),
    ("admin", "ACL", "LIST"),
    ("admin", "ACL", "SETUSER", "k", "on", "nopass", "+@all", "~*"),
    ("u", "AUTH", "k", "x"),
    ("admin", "CLIENT", "KILL", "USER", "nosuch"),
    ("admin", "CLIENT", "KILL", "USER", "k"),
]


def run_steps(port, resp3):
    """The raw reply to each step, on fresh connections."""
    conns = {name: Client(port) for name in ("admin", "u")}
    try:
        if resp3:
            for c in conns.values():
                c.call("HELLO", "3")
        out = []
        for name, *cmd in STEPS:
            c = conns[name]
            c.send(b"".join([b"*%d\r\n" % len(cmd)] +
                            [b"$%d\r\n%s\r\n" % (len(a.encode()), a.encode()) for a in cmd]))
            out.append((name, cmd, read_raw_reply(c)))
        return out
    finally:
        for c in conns.values():
            c.close()


@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class AclDifferentialTest(BlackboxTestCase):
    def test_steps_match_redis_byte_for_byte(self):
        for resp3 in (False, True):
            sluice, redis = start_beside_reference()
            try:
                ours = run_steps(sluice.port, resp3)
                theirs = run_steps(redis.port, resp3)
            finally:
                sluice.stop()
                redis.stop()
            for (name, cmd, a), (_, _, b) in zip(ours, theirs):
                with self.subTest(resp3=resp3, conn=name, cmd=cmd):
                    self.assertEqual(a, b)


LIMITER_RULES = ["on", ">limpass", "resetkeys", "~rl:*", "-@all", "+gcra.take"]


@unittest.skipIf(IS_REDIS, "Sluice's limiter commands")
class LimiterUserTest(BlackboxTestCase):
    """A least-privilege user: GCRA.TAKE on rl:* and nothing else, however it is sent."""

    def setUp(self):
        self.server = Server({"requirepass": "adminpass"}).start()
        self.admin = Client(self.server.port)
        self.assertEqual(self.admin.call("AUTH", "adminpass"), "OK")
        self.assertEqual(self.admin.call("ACL", "SETUSER", "limiter", *LIMITER_RULES), "OK")
        self.lim = Client(self.server.port)
        self.assertEqual(self.lim.call("AUTH", "limiter", "limpass"), "OK")

    def tearDown(self):
        self.admin.close()
        self.lim.close()
        self.server.stop()

    def test_takes_on_its_keys_only(self):
        self.assertEqual(self.lim.call("GCRA.TAKE", "rl:a", "10", "1s")[0], 1)
        self.assertEqual(
            self.lim.call("GCRA.TAKE", "other", "10", "1s"),
            RespError("NOPERM this user has no permissions to access one of the keys used as "
                      "arguments"))
        for cmd in (("GET", "rl:a"), ("SET", "rl:a", "x"), ("LEAKY.TAKE", "rl:a", "1", "1s"),
                    ("FLUSHALL",), ("CONFIG", "GET", "port"), ("KEYS", "*")):
            name = cmd[0].lower() if cmd[0] != "CONFIG" else "config|get"
            self.assertEqual(self.lim.call(*cmd), RespError(
                "NOPERM this user has no permissions to run the '%s' command" % name))
        self.assertEqual(self.admin.call("GET", "rl:a") is not None, True)

    def test_eval_and_multi_are_refused(self):
        self.assertEqual(
            self.lim.call("EVAL", "return redis.call('gcra.take', KEYS[1], 10, '1s')", "1",
                          "rl:a"),
            RespError("NOPERM this user has no permissions to run the 'eval' command"))
        self.assertEqual(self.lim.call("MULTI"), RespError(
            "NOPERM this user has no permissions to run the 'multi' command"))
        # Allowed to script and to use MULTI, the keys and commands inside are still checked.
        self.admin.call("ACL", "SETUSER", "limiter", "+eval", "+multi", "+exec")
        self.assertEqual(
            self.lim.call("EVAL", "return redis.call('gcra.take', KEYS[1], 10, '1s')[1]", "1",
                          "rl:a"), 1)
        err = self.lim.call("EVAL", "return redis.call('gcra.take', 'other', 10, '1s')", "0")
        self.assertTrue(err.startswith("ERR The user executing the script can't access at least "
                                       "one of the keys mentioned in the command arguments"), err)
        err = self.lim.call("EVAL", "return redis.call('get', KEYS[1])", "1", "rl:a")
        self.assertTrue(err.startswith("ERR The user executing the script can't run this command "
                                       "or subcommand"), err)
        self.assertEqual(self.lim.call("MULTI"), "OK")
        self.assertEqual(self.lim.call("GCRA.TAKE", "rl:a", "10", "1s"), "QUEUED")
        self.assertEqual(self.lim.call("GET", "rl:a"), RespError(
            "NOPERM this user has no permissions to run the 'get' command"))
        self.assertEqual(self.lim.call("EXEC"), RespError(
            "EXECABORT Transaction discarded because of previous errors."))

    def test_acl_log_records_each_denial(self):
        self.lim.call("GET", "rl:a")
        self.lim.call("GCRA.TAKE", "other", "10", "1s")
        self.lim.call("GCRA.TAKE", "other", "10", "1s")
        bad = Client(self.server.port)
        bad.call("AUTH", "limiter", "wrong")
        bad.close()
        entries = self.admin.call("ACL", "LOG")
        def text(v):
            return v.decode() if isinstance(v, bytes) else v
        fields = [{text(k): text(v) for k, v in zip(e[::2], e[1::2])} for e in entries]
        got = [(f["count"], f["reason"], f["context"], f["object"], f["username"])
               for f in fields]
        self.assertEqual(got, [(1, "auth", "toplevel", "AUTH", "limiter"),
                               (2, "key", "toplevel", "other", "limiter"),
                               (1, "command", "toplevel", "get", "limiter")])
        self.assertIn(" user=limiter ", fields[1]["client-info"])
        self.assertEqual(self.admin.call("ACL", "LOG", "RESET"), "OK")
        self.assertEqual(self.admin.call("ACL", "LOG"), [])

    @unittest.skipIf(redis is None, "redis-py is not installed (tools/setup.sh installs it)")
    def test_redis_py_with_username_and_password(self):
        r = redis.Redis(port=self.server.port, username="limiter", password="limpass")
        try:
            self.assertEqual(r.execute_command("GCRA.TAKE", "rl:py", "10", "1s")[0], 1)
            with self.assertRaises(redis.exceptions.NoPermissionError):
                r.get("rl:py")
        finally:
            r.close()
        bad = redis.Redis(port=self.server.port, username="limiter", password="nope")
        with self.assertRaisesRegex(redis.exceptions.ResponseError, "^WRONGPASS invalid"):
            bad.ping()
        bad.close()

    def test_deleting_or_changing_the_user(self):
        self.assertEqual(self.admin.call("ACL", "SETUSER", "limiter", "-gcra.take"), "OK")
        self.assertEqual(self.lim.call("GCRA.TAKE", "rl:a", "10", "1s"), RespError(
            "NOPERM this user has no permissions to run the 'gcra.take' command"))
        self.assertEqual(self.admin.call("ACL", "DELUSER", "limiter"), 1)
        with self.assertRaises((ConnectionClosed, OSError)):
            self.lim.call("PING")
            self.lim.call("PING")


@unittest.skipIf(IS_REDIS, "Sluice's limiter commands")
class AclFileTest(BlackboxTestCase):
    def test_save_restart_load_round_trip(self):
        server = Server()
        path = os.path.join(server.workdir, "users.acl")
        with open(path, "w") as f:
            f.write("user default on nopass ~* &* +@all\n")
        server.options["aclfile"] = path
        server.start()
        try:
            with Client(server.port) as c:
                self.assertEqual(c.call("ACL", "SETUSER", "limiter", *LIMITER_RULES), "OK")
                self.assertEqual(c.call("ACL", "SETUSER", "ro", "on", "nopass", "%R~cache:*",
                                        "+@read", "(~x +set)"), "OK")
                before = c.call("ACL", "LIST")
                self.assertEqual(c.call("ACL", "SAVE"), "OK")
            with open(path) as f:
                self.assertEqual(f.read().encode().splitlines(), before)
            server.restart()
            with Client(server.port) as c:
                self.assertEqual(c.call("ACL", "LIST"), before)
                self.assertEqual(c.call("ACL", "DELUSER", "ro"), 1)
                self.assertEqual(c.call("ACL", "LOAD"), "OK")
                self.assertEqual(c.call("ACL", "LIST"), before)
                with open(path, "a") as f:
                    f.write("user broken on +nosuch\n")
                err = c.call("ACL", "LOAD")
                self.assertTrue(err.startswith("ERR ") and "+nosuch" in err, err)
                self.assertEqual(c.call("ACL", "LIST"), before)  # nothing changed
        finally:
            server.stop()

    def test_user_lines_in_the_config_file(self):
        config = ("user limiter on >limpass ~rl:* -@all +gcra.take\n"
                  "user default on >adminpass ~* &* +@all\n")
        server = Server(config_text=config).start()
        try:
            with Client(server.port) as c:
                self.assertEqual(c.call("PING"), RespError("NOAUTH Authentication required."))
                self.assertEqual(c.call("AUTH", "limiter", "limpass"), "OK")
                self.assertEqual(c.call("GCRA.TAKE", "rl:x", "5", "1s")[0], 1)
                self.assertEqual(c.call("PING"), RespError(
                    "NOPERM this user has no permissions to run the 'ping' command"))
        finally:
            server.stop()

    def test_bad_user_line_stops_startup(self):
        server = Server(config_text="user limiter on +nosuch\n")
        proc = server.spawn()
        self.assertEqual(server.wait_exit(), 1)
        self.assertIn("Error in ACL SETUSER modifier '+nosuch'", server.stderr())
        server.stop()
