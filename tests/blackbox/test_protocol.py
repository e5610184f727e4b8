"""Raw-socket protocol tests: pipelining, split writes, inline commands, protocol errors, AUTH,
SELECT, HELLO 3 / RESP3 replies, QUIT. Replies are compared byte for byte where it matters."""

import random
import threading
import time
import unittest

from harness import (BlackboxTestCase, RespError, ServerTestCase, SharedServerTestCase,
                     Verbatim, encode_command)


class PipelineTest(ServerTestCase):
    def test_ten_thousand_pipelined_commands_in_one_write(self):
        cmds, expected = [], []
        counter = 0
        for i in range(10000):
            if i % 3 == 0:
                counter += 1
                cmds.append(("INCR", "pipe:counter"))
                expected.append(counter)
            elif i % 3 == 1:
                cmds.append(("ECHO", "msg-%d" % i))
                expected.append(b"msg-%d" % i)
            else:
                cmds.append(("SET", "pipe:k%d" % i, "v%d" % i))
                expected.append("OK")
        payload = b"".join(encode_command(*c) for c in cmds)
        # Send from another thread so that neither side can block on a full socket buffer.
        sender = threading.Thread(target=self.c.send, args=(payload,))
        sender.start()
        replies = [self.c.read() for _ in cmds]
        sender.join()
        self.assertEqual(len(replies), 10000)
        for i, (got, want) in enumerate(zip(replies, expected)):
            if got != want:
                self.fail("reply %d: %r, expected %r" % (i, got, want))
        self.assertEqual(self.c.call("GET", "pipe:k9998"), b"v9998")
        self.assertEqual(self.c.call("DBSIZE"), 3334)

    def test_command_split_into_one_byte_writes(self):
        payload = encode_command("SET", "split:key", "hello world") + encode_command("GET", "split:key")
        for i in range(len(payload)):
            self.c.send(payload[i:i + 1])
            time.sleep(0.001)  # spread the bytes over many segments; no timing is asserted
        self.assertRaw(self.c, b"+OK\r\n$11\r\nhello world\r\n")

    def test_random_cuts_give_the_replies_of_one_write(self):
        # The same pipelines sent whole and cut at random places must get the same bytes back,
        # however the reads fall: multibulk and inline commands, *0, commands of more than 64
        # arguments (which the server's look-ahead does not keep) and bulks longer than a read.
        rng = random.Random(20261127)
        end = encode_command("ECHO", "END-OF-PIPELINE")
        marker = b"$15\r\nEND-OF-PIPELINE\r\n"

        def pipeline():
            parts = []
            for n in range(rng.randint(1, 100)):
                r = rng.random()
                key = rng.choice(["cut:a", "cut:b", "cut:c"])
                if r < 0.2:
                    parts.append(encode_command("SET", key, "v%d" % rng.randint(0, 10**6)))
                elif r < 0.35:
                    parts.append(encode_command("INCR", "cut:n"))
                elif r < 0.5:
                    parts.append(encode_command("GET", key))
                elif r < 0.6:
                    count = rng.choice([1, 2, 62, 63, 64, 80])  # 64 arguments and more
                    parts.append(encode_command("RPUSH", "cut:l", *["x%d" % i for i in range(count)]))
                elif r < 0.7:
                    parts.append(b"PING\r\n")
                elif r < 0.8:
                    parts.append(b"ECHO " + b"w" * rng.randint(1, 9) + b"\r\n")
                elif r < 0.85:
                    parts.append(b"*0\r\n")
                elif r < 0.9:
                    parts.append(encode_command("LLEN", "cut:l"))
                else:
                    parts.append(encode_command("ECHO", "y" * rng.randint(0, 40000)))
            return b"".join(parts)

        def replies(data, cuts):
            with self.server.client() as c:
                self.assertEqual(c.call("FLUSHALL"), "OK")
                prev = 0
                for cut in cuts + [len(data)]:
                    c.send(data[prev:cut])
                    prev = cut
                    time.sleep(0.001)  # separate reads, likely; no timing is asserted
                c.send(end)
                while not c.pending().endswith(marker):
                    c._fill()
                return c.pending()

        for i in range(60):
            data = pipeline()
            cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, rng.randint(1, 8))))
            whole = replies(data, [])
            self.assertEqual(replies(data, cuts), whole, "pipeline %d cut at %r" % (i, cuts))

    def test_inline_split_into_one_byte_writes(self):
        for b in b"ECHO split-inline\r\n":
            self.c.send(bytes([b]))
        self.assertRaw(self.c, b"$12\r\nsplit-inline\r\n")

    def test_pipeline_with_large_replies(self):
        # 64 MiB of replies to one small write: the server must cope with a slow reader.
        value = b"0123456789abcdef" * 65536  # 1 MiB
        self.assertEqual(self.c.call("SET", "big", value), "OK")
        self.c.send(b"".join(encode_command("GET", "big") + encode_command("ECHO", str(i))
                             for i in range(64)))
        for i in range(64):
            self.assertEqual(self.c.read(), value)
            self.assertEqual(self.c.read(), str(i).encode())

    def test_large_value_across_reads(self):
        value = bytes(range(256)) * 4096  # 1 MiB, every byte value
        self.assertEqual(self.c.call("SET", "big", value), "OK")
        self.assertEqual(self.c.call("STRLEN", "big"), len(value))
        self.assertEqual(self.c.call("GET", "big"), value)


class InlineTest(ServerTestCase):
    def test_inline_commands(self):
        self.c.send(b"PING\r\n")
        self.assertRaw(self.c, b"+PONG\r\n")
        self.c.send(b'SET inline:k "hello world"\r\n')
        self.assertRaw(self.c, b"+OK\r\n")
        self.c.send(b"GET inline:k\r\n")
        self.assertRaw(self.c, b"$11\r\nhello world\r\n")
        # A bare \n ends a line too; blank lines are ignored.
        self.c.send(b"\r\n\r\nECHO bare-newline\n")
        self.assertRaw(self.c, b"$12\r\nbare-newline\r\n")
        # Quoting rules: single quotes are literal, double quotes take escapes.
        self.c.send(b"ECHO 'it''s' \r\n")  # two adjacent quoted strings are not allowed
        self.assertEqual(self.c.read_until_closed(),
                         b"-ERR Protocol error: unbalanced quotes in request\r\n")

    def test_inline_escapes(self):
        self.c.send(b'ECHO "a\\x41\\n\\t\\"b"\r\n')
        self.assertEqual(self.c.read(), b'aA\n\t"b')
        self.c.send(b"ECHO 'x\\'y'\r\n")
        self.assertEqual(self.c.read(), b"x'y")
        self.c.send(b"  ECHO    spaced    \r\n")
        self.assertEqual(self.c.read(), b"spaced")
        self.c.send(b"SET inline:e ''\r\nSTRLEN inline:e\r\n")
        self.assertEqual(self.c.read(), "OK")
        self.assertEqual(self.c.read(), 0)

    def test_blank_inline_lines_are_ignored(self):
        self.c.send(b"   \r\n\t \r\nPING\r\n")
        self.assertRaw(self.c, b"+PONG\r\n")

    def test_ten_thousand_pipelined_inline_commands(self):
        self.c.send(b"INCR inline:c\r\n" * 10000)
        self.assertEqual([self.c.read() for _ in range(10000)], list(range(1, 10001)))

    def test_inline_and_multibulk_mixed_in_one_write(self):
        self.c.send(b"PING\r\n" + encode_command("ECHO", "x") + b"ECHO y\r\n")
        self.assertRaw(self.c, b"+PONG\r\n$1\r\nx\r\n$1\r\ny\r\n")


class ProtocolErrorTest(ServerTestCase):
    """Each protocol error gets its exact reply, then the server closes the connection. Replies
    to the commands before the bad one in the same write come first."""

    def expect_close(self, payload, reply):
        with self.server.client() as c:
            c.send(payload)
            self.assertEqual(c.read_until_closed(), reply)
        # The server is still fine for others.
        self.assertEqual(self.c.call("PING"), "PONG")

    def test_bad_multibulk_length(self):
        self.expect_close(b"*abc\r\n", b"-ERR Protocol error: invalid multibulk length\r\n")

    def test_commands_before_the_error_are_answered(self):
        self.expect_close(b"PING\r\n" + encode_command("ECHO", "a") + b"*abc\r\n",
                          b"+PONG\r\n$1\r\na\r\n-ERR Protocol error: invalid multibulk length\r\n")

    def test_multibulk_length_too_big(self):
        self.expect_close(b"*2147483648\r\n", b"-ERR Protocol error: invalid multibulk length\r\n")

    def test_negative_bulk_length(self):
        self.expect_close(b"*1\r\n$-5\r\n", b"-ERR Protocol error: invalid bulk length\r\n")

    def test_bad_bulk_length(self):
        self.expect_close(b"*1\r\n$x\r\n", b"-ERR Protocol error: invalid bulk length\r\n")

    def test_bulk_longer_than_proto_max_bulk_len(self):
        self.expect_close(b"*1\r\n$536870913\r\n", b"-ERR Protocol error: invalid bulk length\r\n")

    def test_expected_dollar(self):
        self.expect_close(b"*1\r\nfoo\r\n", b"-ERR Protocol error: expected '$', got 'f'\r\n")

    def test_unbalanced_quotes(self):
        self.expect_close(b'SET k "unterminated\r\n',
                          b"-ERR Protocol error: unbalanced quotes in request\r\n")
        self.expect_close(b"SET k 'unterminated\r\n",
                          b"-ERR Protocol error: unbalanced quotes in request\r\n")

    def test_too_big_inline_request(self):
        self.expect_close(b"A" * (64 * 1024 + 10),
                          b"-ERR Protocol error: too big inline request\r\n")

    def test_too_big_mbulk_count_line(self):
        self.expect_close(b"*" + b"1" * (64 * 1024 + 10),
                          b"-ERR Protocol error: too big mbulk count string\r\n")

    def test_too_big_bulk_count_line(self):
        self.expect_close(b"*1\r\n$" + b"1" * (64 * 1024 + 10),
                          b"-ERR Protocol error: too big bulk count string\r\n")

    def test_multibulk_zero_and_negative_are_ignored(self):
        self.c.send(b"*0\r\n*-1\r\nPING\r\n")
        self.assertRaw(self.c, b"+PONG\r\n")


class CommandErrorTest(ServerTestCase):
    def test_unknown_command(self):
        self.c.send(b"FOO a b\r\n")
        self.assertRaw(self.c, b"-ERR unknown command 'FOO', with args beginning with: 'a' 'b' \r\n")
        self.assertEqual(self.c.call("nosuchcmd"),
                         RespError("ERR unknown command 'nosuchcmd', with args beginning with: "))
        # The connection stays open.
        self.assertEqual(self.c.call("PING"), "PONG")

    def test_unknown_command_args_are_truncated(self):
        # Redis quotes arguments until 128 characters are shown, each cut at 128.
        args = ["arg%02d-xxxxxxxxxxxxxxxxxxxx" % i for i in range(12)]
        self.assertEqual(self.c.call("FOO", *args), RespError(
            "ERR unknown command 'FOO', with args beginning with: 'arg00-xxxxxxxxxxxxxxxxxxxx' "
            "'arg01-xxxxxxxxxxxxxxxxxxxx' 'arg02-xxxxxxxxxxxxxxxxxxxx' 'arg03-xxxxxxxxxxxxxxxxxxxx' "
            "'arg04-xxxxxx' "))
        self.assertEqual(self.c.call("FOO", "y" * 300), RespError(
            "ERR unknown command 'FOO', with args beginning with: '%s' " % ("y" * 128)))

    def test_wrong_arity(self):
        self.assertEqual(self.c.call("GET"), RespError("ERR wrong number of arguments for 'get' command"))
        self.assertEqual(self.c.call("get", "a", "b"),
                         RespError("ERR wrong number of arguments for 'get' command"))
        self.assertEqual(self.c.call("SET", "a"), RespError("ERR wrong number of arguments for 'set' command"))


class QuitTest(ServerTestCase):
    def test_quit_replies_ok_and_closes(self):
        self.c.send(encode_command("QUIT"))
        self.assertEqual(self.c.read_until_closed(), b"+OK\r\n")

    def test_commands_after_quit_in_same_write_are_not_run(self):
        with self.server.client() as c:
            c.send(encode_command("QUIT") + encode_command("SET", "afterquit", "1"))
            self.assertEqual(c.read_until_closed(), b"+OK\r\n")
        self.assertEqual(self.c.call("EXISTS", "afterquit"), 0)


class SelectTest(ServerTestCase):
    def test_databases_are_isolated(self):
        self.assertEqual(self.c.call("SET", "k", "db0"), "OK")
        self.assertEqual(self.c.call("SELECT", "1"), "OK")
        self.assertEqual(self.c.call("GET", "k"), None)
        self.assertEqual(self.c.call("SET", "k", "db1"), "OK")
        self.assertEqual(self.c.call("SET", "only1", "x"), "OK")
        self.assertEqual(self.c.call("DBSIZE"), 2)
        self.assertEqual(self.c.call("KEYS", "*only*"), [b"only1"])
        self.assertEqual(self.c.call("SELECT", "15"), "OK")
        self.assertEqual(self.c.call("DBSIZE"), 0)
        self.assertEqual(self.c.call("SELECT", "0"), "OK")
        self.assertEqual(self.c.call("GET", "k"), b"db0")
        self.assertEqual(self.c.call("EXISTS", "only1"), 0)
        # Another connection starts in db 0.
        with self.server.client() as other:
            self.assertEqual(other.call("GET", "k"), b"db0")
        # FLUSHDB clears only the selected db; FLUSHALL clears all.
        self.assertEqual(self.c.call("SELECT", "1"), "OK")
        self.assertEqual(self.c.call("FLUSHDB"), "OK")
        self.assertEqual(self.c.call("DBSIZE"), 0)
        self.assertEqual(self.c.call("SELECT", "0"), "OK")
        self.assertEqual(self.c.call("DBSIZE"), 1)

    def test_select_errors(self):
        self.assertEqual(self.c.call("SELECT", "16"), RespError("ERR DB index is out of range"))
        self.assertEqual(self.c.call("SELECT", "-1"), RespError("ERR DB index is out of range"))
        self.assertEqual(self.c.call("SELECT", "abc"),
                         RespError("ERR value is not an integer or out of range"))
        self.assertEqual(self.c.call("SELECT", "1", "2"),
                         RespError("ERR wrong number of arguments for 'select' command"))

    def test_move_between_dbs_with_rename_is_per_db(self):
        self.assertEqual(self.c.call("SELECT", "3"), "OK")
        self.assertEqual(self.c.call("SET", "a", "1"), "OK")
        self.assertEqual(self.c.call("RENAME", "a", "b"), "OK")
        self.assertEqual(self.c.call("SELECT", "0"), "OK")
        self.assertEqual(self.c.call("EXISTS", "a", "b"), 0)


class Resp3Test(ServerTestCase):
    def test_hello_3_map(self):
        reply = self.c.call("HELLO", "3")
        self.assertIsInstance(reply, dict)
        self.assertEqual(list(reply.keys()),
                         [b"server", b"version", b"proto", b"id", b"mode", b"role", b"modules"])
        self.assertEqual(reply[b"server"], b"redis")
        self.assertRegex(reply[b"version"].decode(), r"^7\.0\.\d+$")
        self.assertEqual(reply[b"proto"], 3)
        self.assertEqual(reply[b"id"], self.c.call("CLIENT", "ID"))
        self.assertEqual(reply[b"mode"], b"standalone")
        self.assertEqual(reply[b"role"], b"master")
        self.assertEqual(reply[b"modules"], [])

    def test_hello_without_version_keeps_protocol(self):
        reply = self.c.call("HELLO")
        self.assertIsInstance(reply, list)  # RESP2: the map is a flat array
        self.assertEqual(len(reply), 14)
        self.assertEqual(reply[4:6], [b"proto", 2])

    def test_resp3_replies(self):
        self.c.call("HELLO", "3")
        self.c.send(encode_command("GET", "missing"))
        self.assertRaw(self.c, b"_\r\n")
        self.c.send(encode_command("CONFIG", "GET", "maxclients"))
        self.assertRaw(self.c, b"%1\r\n$10\r\nmaxclients\r\n$5\r\n10000\r\n")
        self.c.send(encode_command("MGET", "missing", "missing2"))
        self.assertRaw(self.c, b"*2\r\n_\r\n_\r\n")
        self.assertEqual(self.c.call("SET", "f", "1.5"), "OK")
        self.assertEqual(self.c.call("INCRBYFLOAT", "f", "1"), b"2.5")
        self.assertEqual(self.c.call("SET", "k", "v", "NX", "GET"), None)
        self.c.send(encode_command("SET", "k", "v", "NX"))
        self.assertRaw(self.c, b"_\r\n")
        self.assertEqual(self.c.call("EXISTS", "k"), 1)

    def test_resp3_verbatim_and_maps(self):
        self.c.call("HELLO", "3")
        info = self.c.call("INFO", "keyspace")
        self.assertIsInstance(info, Verbatim)
        self.assertEqual(info.fmt, "txt")
        self.assertTrue(info.startswith(b"# Keyspace\r\n"), info)
        listing = self.c.call("CLIENT", "LIST")
        self.assertIsInstance(listing, Verbatim)
        self.assertIn(b" cmd=client|list ", listing)
        self.assertEqual(self.c.call("CONFIG", "GET", "maxclients", "timeout"),
                         {b"maxclients": b"10000", b"timeout": b"0"})
        docs = self.c.call("COMMAND", "DOCS", "get")
        self.assertIsInstance(docs, dict)
        self.assertEqual(docs[b"get"][b"summary"], b"Get the value of a key")
        self.assertEqual(self.c.call("CLIENT", "GETNAME"), None)
        self.assertEqual(self.c.call("TIME")[1].isdigit(), True)

    def test_back_to_resp2(self):
        self.c.call("HELLO", "3")
        reply = self.c.call("HELLO", "2")
        self.assertIsInstance(reply, list)
        self.assertEqual(reply[0:1], [b"server"])
        self.assertEqual(reply[4:6], [b"proto", 2])
        self.c.send(encode_command("GET", "missing"))
        self.assertRaw(self.c, b"$-1\r\n")

    def test_hello_errors(self):
        self.assertEqual(self.c.call("HELLO", "4"), RespError("NOPROTO unsupported protocol version"))
        self.assertEqual(self.c.call("HELLO", "1"), RespError("NOPROTO unsupported protocol version"))
        self.assertEqual(self.c.call("HELLO", "x"),
                         RespError("ERR Protocol version is not an integer or out of range"))
        self.assertEqual(self.c.call("HELLO", "3", "FOO"), RespError("ERR Syntax error in HELLO option 'FOO'"))

    def test_hello_setname(self):
        reply = self.c.call("HELLO", "3", "SETNAME", "bb-client")
        self.assertEqual(reply[b"proto"], 3)
        self.assertEqual(self.c.call("CLIENT", "GETNAME"), b"bb-client")


class AuthTest(SharedServerTestCase):
    options = {"requirepass": "s3cret"}

    def test_auth_flow(self):
        with self.server.client() as c:
            self.assertEqual(c.call("GET", "k"), RespError("NOAUTH Authentication required."))
            self.assertEqual(c.call("SET", "k", "v"), RespError("NOAUTH Authentication required."))
            self.assertEqual(c.call("AUTH", "wrong"),
                             RespError("WRONGPASS invalid username-password pair or user is disabled."))
            self.assertEqual(c.call("AUTH", "default", "wrong"),
                             RespError("WRONGPASS invalid username-password pair or user is disabled."))
            self.assertEqual(c.call("GET", "k"), RespError("NOAUTH Authentication required."))
            self.assertEqual(c.call("AUTH", "s3cret"), "OK")
            self.assertEqual(c.call("SET", "k", "v"), "OK")
            self.assertEqual(c.call("GET", "k"), b"v")
        with self.server.client() as c:
            self.assertEqual(c.call("AUTH", "default", "s3cret"), "OK")
            self.assertEqual(c.call("GET", "k"), b"v")
            self.assertEqual(c.call("AUTH", "a", "b", "c"), RespError("ERR syntax error"))

    def test_unauthenticated_unknown_command(self):
        # Redis 7.0 checks the command name before authentication.
        with self.server.client() as c:
            self.assertEqual(c.call("NOSUCHCOMMAND"), RespError(
                "ERR unknown command 'NOSUCHCOMMAND', with args beginning with: "))
            self.assertEqual(c.call("PING"), RespError("NOAUTH Authentication required."))

    def test_hello_with_auth(self):
        with self.server.client() as c:
            self.assertEqual(c.call("HELLO", "3"), RespError(
                "NOAUTH HELLO must be called with the client already authenticated, otherwise the "
                "HELLO AUTH <user> <pass> option can be used to authenticate the client and "
                "select the RESP protocol version at the same time"))
            self.assertEqual(c.call("HELLO", "3", "AUTH", "default", "nope"),
                             RespError("WRONGPASS invalid username-password pair or user is disabled."))
            reply = c.call("HELLO", "3", "AUTH", "default", "s3cret")
            self.assertEqual(reply[b"proto"], 3)
            c.send(encode_command("GET", "nothing-here"))
            self.assertRaw(c, b"_\r\n")

    def test_quit_allowed_before_auth(self):
        with self.server.client() as c:
            c.send(encode_command("QUIT"))
            self.assertEqual(c.read_until_closed(), b"+OK\r\n")

    def test_unauthenticated_limits(self):
        # Redis caps what an unauthenticated client may send when a password is set.
        with self.server.client() as c:
            c.send(b"*11\r\n")
            self.assertEqual(c.read_until_closed(),
                             b"-ERR Protocol error: unauthenticated multibulk length\r\n")
        with self.server.client() as c:
            c.send(b"*1\r\n$16385\r\n")
            self.assertEqual(c.read_until_closed(),
                             b"-ERR Protocol error: unauthenticated bulk length\r\n")


class AuthWithoutPasswordTest(ServerTestCase):
    def test_auth_without_password_configured(self):
        self.assertEqual(self.c.call("AUTH", "x"), RespError(
            "ERR AUTH <password> called without any password configured for the default user. "
            "Are you sure your configuration is correct?"))
        # The default user has no password: any password is accepted with a user name.
        self.assertEqual(self.c.call("AUTH", "default", "x"), "OK")
        self.assertEqual(self.c.call("AUTH", "nobody", "x"),
                         RespError("WRONGPASS invalid username-password pair or user is disabled."))


if __name__ == "__main__":
    unittest.main()
