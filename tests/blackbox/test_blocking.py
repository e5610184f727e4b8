"""Blocking commands (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP; BZPOPMIN, BZPOPMAX, BZMPOP) on
the real sluice-server,
side by side with a reference redis-server 7.0.x (start_beside_reference): every scenario runs
on both and the raw replies must be Redis's.

- DifferentialTest: wake by a push from another connection (LPUSH, RPUSH, LMOVE into the key, a
  push inside MULTI/EXEC, a push from EVAL), FIFO order of several blocked clients, timeouts
  (answered nil after at least the timeout; wall clock, generous upper bound), timeout errors,
  blocking commands inside MULTI, a client that disconnects while blocked, CLIENT UNBLOCK,
  commands pipelined behind a blocked one, RESP3 nulls, CLIENT LIST flags=b and
  INFO blocked_clients.
- ManyBlockedTest: 50 clients blocked on Sluice (2 I/O threads) while others are served; the
  idle timeout closes an idle client but none of the blocked ones.
- RacingPushersTest: 24 clients blocked on two keys, 4 connections pushing at once:
  every element goes to exactly one client, none is left behind.
- KillNineTest: kill -9 right after a woken BLMOVE was answered: after restart the move is
  there, in everysec and always.
"""
import os
import time
import unittest

from harness import IS_REDIS, BlackboxTestCase, Client, Server, encode_command
from test_transactions import BesideReference, read_raw_reply

WAIT = 10.0  # seconds: an upper bound no healthy server comes near


def info_blocked(admin):
    info = admin.call("INFO", "clients").decode()
    for line in info.split("\r\n"):
        if line.startswith("blocked_clients:"):
            return int(line.split(":")[1])
    raise AssertionError("no blocked_clients in INFO clients")


def wait_blocked(admin, n):
    """Waits until exactly `n` clients are blocked."""
    end = time.monotonic() + WAIT
    while time.monotonic() < end:
        if info_blocked(admin) == n:
            return
        time.sleep(0.01)
    raise AssertionError("blocked_clients never reached %d (is %d)" % (n, info_blocked(admin)))


@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class DifferentialTest(BesideReference):
    def both(self, scenario):
        """Runs scenario(port) on Sluice and on Redis after FLUSHALL; its results must match."""
        results = []
        for port in (self.sluice.port, self.redis.port):
            with Client(port) as admin:
                self.assertEqual(admin.call("FLUSHALL"), "OK")
            results.append(scenario(port))
        self.assertEqual(results[0], results[1])
        return results[0]

    def blocked_then(self, port, block_cmd, action, block_resp3=False):
        """Client A sends block_cmd and blocks; `action(other)` runs on another client; returns
        A's raw reply and what action returned."""
        with Client(port) as a, Client(port) as b:
            if block_resp3:
                a.call("HELLO", "3")
            a.send(encode_command(*block_cmd))
            wait_blocked(b, 1)
            done = action(b)
            reply = read_raw_reply(a)
            wait_blocked(b, 0)
            return reply, done

    def test_wake_by_push_from_another_connection(self):
        pushes = [
            ("LPUSH", lambda b: b.call("LPUSH", "k", "v1", "v2")),
            ("RPUSH", lambda b: b.call("RPUSH", "k", "v1", "v2")),
            ("LMOVE", lambda b: [b.call("RPUSH", "src", "m"),
                                 b.call("LMOVE", "src", "k", "LEFT", "RIGHT")]),
            ("EXEC", lambda b: b.pipeline([("MULTI",), ("SET", "x", "1"), ("RPUSH", "k", "t"),
                                           ("EXEC",)])),
            ("EVAL", lambda b: b.call("EVAL", "return redis.call('rpush', KEYS[1], 'e')", "1",
                                      "k")),
        ]
        blocks = [("BLPOP", "nokey", "k", "0"), ("BRPOP", "k", "5"),
                  ("BLMOVE", "k", "dst", "RIGHT", "LEFT", "0"), ("BRPOPLPUSH", "k", "dst", "0"),
                  ("BLMPOP", "0", "2", "k", "other", "LEFT", "COUNT", "5")]
        for name, push in pushes:
            for block in blocks:
                with self.subTest(push=name, block=block[0]):
                    def scenario(port):
                        reply, _ = self.blocked_then(port, block, push)
                        with Client(port) as c:
                            return reply, c.call("LRANGE", "k", "0", "-1"), c.call(
                                "LRANGE", "dst", "0", "-1")
                    self.both(scenario)

    def test_sorted_set_blocking_pops(self):
        """BZPOPMIN, BZPOPMAX and BZMPOP: woken by ZADD (also in MULTI/EXEC), RESP2 and RESP3
        replies, timeouts, errors, WRONGTYPE, inside MULTI, a woken client whose key turned into
        another type keeps waiting."""
        wakes = [("ZADD", lambda b: b.call("ZADD", "z", "2", "b", "1", "a", "3", "c")),
                 ("EXEC", lambda b: b.pipeline([("MULTI",), ("ZADD", "z", "5", "e", "4", "d"),
                                                ("EXEC",)]))]
        blocks = [("BZPOPMIN", "nokey", "z", "0"), ("BZPOPMAX", "z", "5"),
                  ("BZMPOP", "0", "2", "other", "z", "MIN", "COUNT", "2"),
                  ("BZMPOP", "0.5", "1", "z", "MAX")]
        for name, wake in wakes:
            for block in blocks:
                for resp3 in (False, True):
                    with self.subTest(wake=name, block=block, resp3=resp3):
                        def scenario(port):
                            reply, _ = self.blocked_then(port, block, wake, block_resp3=resp3)
                            with Client(port) as c:
                                return reply, c.call("ZRANGE", "z", "0", "-1", "WITHSCORES")
                        self.both(scenario)

        def immediate(port):
            out = []
            with Client(port) as c:
                c.call("ZADD", "z", "1", "a", "2", "b")
                c.call("SET", "str", "x")
                for cmd in [("BZPOPMIN", "z", "0"), ("BZPOPMAX", "z", "nokey", "0"),
                            ("BZPOPMIN", "str", "0"), ("BZPOPMIN", "z", "abc"),
                            ("BZPOPMIN", "z", "-1"), ("BZMPOP", "abc", "1", "z", "MIN"),
                            ("BZMPOP", "0", "0", "z", "MIN"), ("BZMPOP", "0", "1", "z", "BAD"),
                            ("BZMPOP", "0", "1", "z", "MIN", "COUNT", "0"),
                            ("BZMPOP", "0", "1", "str", "MIN"),
                            ("BZPOPMIN", "nokey", "0.05"), ("BZMPOP", "0.05", "1", "nokey", "MAX"),
                            ("MULTI",), ("BZPOPMIN", "nokey", "0"),
                            ("BZMPOP", "0", "1", "nokey", "MIN"), ("EXEC",)]:
                    c.send(encode_command(*cmd))
                    out.append(read_raw_reply(c))
            return out
        self.both(immediate)

        def turned_type(port):
            def action(b):
                b.call("SET", "z", "now a string")  # wakes nobody: not a sorted set
                time.sleep(0.05)
                blocked = info_blocked(b)
                b.call("DEL", "z")
                b.call("ZADD", "z", "7", "m")
                return blocked
            return self.blocked_then(port, ("BZPOPMIN", "z", "0"), action)
        self.assertEqual(self.both(turned_type)[1], 1)

    def test_fifo_order_of_blocked_clients(self):
        def scenario(port):
            clients = [Client(port) for _ in range(4)]
            try:
                admin = clients[0]
                for i, c in enumerate(clients[1:]):
                    c.send(encode_command("BLPOP", "q", "0"))
                    wait_blocked(admin, i + 1)
                admin.call("RPUSH", "q", "a", "b")
                first = [read_raw_reply(c) for c in clients[1:3]]
                wait_blocked(admin, 1)
                admin.call("RPUSH", "q", "c")
                return first + [read_raw_reply(clients[3])]
            finally:
                for c in clients:
                    c.close()
        replies = self.both(scenario)
        self.assertEqual(replies[0], b"*2\r\n$1\r\nq\r\n$1\r\na\r\n")

    def test_timeouts_answer_nil_after_the_timeout(self):
        # Redis answers every timed-out blocking command with a null array, BLMOVE too (inside
        # MULTI, where it does not block, BLMOVE answers a null bulk).
        commands = [(("BLPOP", "a", "b", "0.2"), b"*-1\r\n"), (("BRPOP", "a", "0.1"), b"*-1\r\n"),
                    (("BLMOVE", "a", "b", "LEFT", "LEFT", "0.1"), b"*-1\r\n"),
                    (("BRPOPLPUSH", "a", "b", "0.1"), b"*-1\r\n"),
                    (("BLMPOP", "0.3", "1", "a", "RIGHT"), b"*-1\r\n")]
        for port in (self.sluice.port, self.redis.port):
            for resp in (2, 3):
                with Client(port) as c:
                    if resp == 3:
                        c.call("HELLO", "3")
                    for cmd, nil in commands:
                        with self.subTest(port=port, resp=resp, cmd=cmd[0]):
                            timeout = float(cmd[-1] if cmd[0] != "BLMPOP" else cmd[1])
                            start = time.monotonic()
                            c.send(encode_command(*cmd))
                            reply = read_raw_reply(c)
                            took = time.monotonic() - start
                            self.assertEqual(reply, nil if resp == 2 else b"_\r\n")
                            self.assertGreaterEqual(took, timeout)
                            self.assertLess(took, timeout + WAIT)

    def test_timeout_errors(self):
        def scenario(port):
            out = []
            with Client(port) as c:
                c.call("SET", "s", "x")
                # ("0.0001" and "1e-400" are 1 ms waits: they answer nil.)
                for t in ("-1", "abc", "1e300", "inf", "nan", " 1", "", "-inf",
                          "9223372036854775807", "1e5000", "0.0001", "1e-400", "-0.0001x"):
                    for cmd in (("BLPOP", "a", t), ("BRPOP", "s", t),
                                ("BLMOVE", "a", "b", "LEFT", "LEFT", t),
                                ("BLMOVE", "a", "b", "UP", "LEFT", t),
                                ("BRPOPLPUSH", "a", "b", t), ("BLMPOP", t, "1", "a", "LEFT"),
                                ("BLMPOP", t, "0", "a", "LEFT"), ("BLMPOP", t, "1", "a", "UP"),
                                ("BLMPOP", t, "1", "s", "LEFT", "COUNT", "0")):
                        c.send(encode_command(*cmd))
                        out.append((cmd, read_raw_reply(c)))
                for cmd in (("BLPOP", "s", "0"), ("BLMPOP", "0", "1", "s", "LEFT"),
                            ("BLMOVE", "s", "b", "LEFT", "LEFT", "0"), ("BLPOP", "a"),
                            ("BLMPOP", "0", "2", "a", "LEFT"), ("BLMPOP", "0", "1", "a"),
                            ("BLMPOP", "0", "1", "a", "LEFT", "COUNT", "0"),
                            ("BRPOPLPUSH", "a", "b")):
                    c.send(encode_command(*cmd))
                    out.append((cmd, read_raw_reply(c)))
            return out
        self.both(scenario)

    def test_inside_multi_they_answer_as_on_a_timeout(self):
        def scenario(port):
            out = []
            for resp in (2, 3):
                with Client(port) as c:
                    if resp == 3:
                        c.call("HELLO", "3")
                    cmds = [("MULTI",), ("BLPOP", "x", "0"), ("BLMOVE", "x", "y", "LEFT", "LEFT", "0"),
                            ("BRPOPLPUSH", "x", "y", "0"), ("BLMPOP", "0", "1", "x", "LEFT"),
                            ("BRPOP", "x", "0"), ("RPUSH", "x", "1", "2"), ("BLPOP", "x", "0"),
                            ("BRPOPLPUSH", "x", "y", "0"), ("EXEC",)]
                    c.send(b"".join(encode_command(*cmd) for cmd in cmds))
                    out.append([read_raw_reply(c) for _ in cmds])
                    out.append(c.call("EVAL", "return redis.call('blpop','x',0)", "0")[:49])
            return out
        self.both(scenario)

    def test_disconnect_while_blocked_is_forgotten(self):
        def scenario(port):
            with Client(port) as admin:
                a = Client(port)
                a.send(encode_command("BLPOP", "gone", "0"))
                wait_blocked(admin, 1)
                a.close()
                wait_blocked(admin, 0)
                return admin.call("RPUSH", "gone", "x"), admin.call("LRANGE", "gone", "0", "-1")
        self.assertEqual(self.both(scenario), (1, [b"x"]))

    def test_client_unblock(self):
        def scenario(port):
            out = []
            with Client(port) as admin, Client(port) as a:
                aid = a.call("CLIENT", "ID")
                for how in ((), ("TIMEOUT",), ("ERROR",)):
                    a.send(encode_command("BLMOVE", "u", "v", "LEFT", "LEFT", "0"))
                    wait_blocked(admin, 1)
                    out.append(admin.call("CLIENT", "UNBLOCK", str(aid), *how))
                    out.append(read_raw_reply(a))
                    out.append(admin.call("CLIENT", "UNBLOCK", str(aid), *how))
                out.append(a.call("PING"))
                out.append(admin.call("CLIENT", "UNBLOCK", str(aid), "MAYBE"))
                out.append(admin.call("CLIENT", "UNBLOCK", "x"))
                out.append(admin.call("CLIENT", "UNBLOCK", "1", "2", "3"))
            return out
        self.both(scenario)

    def test_pipelined_commands_wait_behind_a_blocked_one(self):
        def scenario(port):
            with Client(port) as a, Client(port) as b:
                a.send(encode_command("BLPOP", "p", "0") + encode_command("PING") +
                       encode_command("LLEN", "p"))
                wait_blocked(b, 1)
                # Sent while A is blocked: read and kept, run after the wake.
                a.send(encode_command("LPOP", "p") + encode_command("ECHO", "late" * 5000))
                time.sleep(0.1)
                b.call("RPUSH", "p", "1", "2", "3")
                return [read_raw_reply(a) for _ in range(5)]
        self.both(scenario)

    def test_woken_but_key_now_another_type_stays_blocked(self):
        def scenario(port):
            def action(b):
                first = b.pipeline([("MULTI",), ("LPUSH", "w", "foo"), ("DEL", "w"),
                                    ("SET", "w", "bar"), ("EXEC",)])
                time.sleep(0.1)
                still = info_blocked(b)
                return first, still, b.call("DEL", "w"), b.call("RPUSH", "w", "v")
            return self.blocked_then(port, ("BLPOP", "w", "0"), action)
        self.both(scenario)

    def test_blocked_destination_of_another_type_is_wrongtype(self):
        def scenario(port):
            with Client(port) as c:
                c.call("SET", "dst", "str")
            reply, _ = self.blocked_then(port, ("BLMOVE", "src", "dst", "LEFT", "LEFT", "0"),
                                         lambda b: b.call("RPUSH", "src", "a"))
            with Client(port) as c:
                return reply, c.call("LRANGE", "src", "0", "-1")
        self.both(scenario)

    def test_client_list_and_info_show_the_blocked_client(self):
        def scenario(port):
            with Client(port) as admin, Client(port) as a:
                a.send(encode_command("BRPOP", "cl", "0"))
                wait_blocked(admin, 1)
                aid = "id=%d " % admin.call("CLIENT", "ID")
                lines = admin.call("CLIENT", "LIST").decode().splitlines()
                mine = [ln for ln in lines if not ln.startswith(aid)][0].split(" ")
                fields = dict(f.split("=", 1) for f in mine)
                admin.call("RPUSH", "cl", "z")
                return fields["flags"], fields["cmd"], read_raw_reply(a)
        self.assertEqual(self.both(scenario), ("b", "brpop", b"*2\r\n$2\r\ncl\r\n$1\r\nz\r\n"))

    def serve_in_order(self, port, block_cmds, fill, read_first, refill):
        """Blocks one client per command of block_cmds (in order), runs fill(admin) (one
        commit that fills several keys), reads the first read_first clients' replies, then
        refill(admin) and the remaining replies."""
        clients = [Client(port) for _ in range(len(block_cmds) + 1)]
        try:
            admin = clients[0]
            for i, (c, cmd) in enumerate(zip(clients[1:], block_cmds)):
                c.send(encode_command(*cmd))
                wait_blocked(admin, i + 1)
            fill(admin)
            replies = [read_raw_reply(c) for c in clients[1:read_first + 1]]
            refill(admin)
            replies += [read_raw_reply(c) for c in clients[read_first + 1:]]
            return replies
        finally:
            for c in clients:
                c.close()

    def test_one_exec_filling_two_keys_serves_the_first_keys_waiters_first(self):
        # Redis's "BLMPOP with multiple blocked clients" (unit/type/list), which hung Redis's
        # list unit on Sluice: every client waits on both keys; Redis serves the first key's
        # waiters in order until it is empty, then the second key's, each from the key that
        # became ready.
        def scenario(port):
            keys = ("2", "blist", "blist2")
            cmds = [("BLMPOP", "0") + keys + (end, "COUNT", n)
                    for end, n in (("LEFT", "1"), ("RIGHT", "10"), ("LEFT", "10"),
                                   ("RIGHT", "1"))]
            fill = lambda a: a.pipeline([("MULTI",), ("LPUSH", "blist", "a", "b", "c", "d", "e"),
                                         ("LPUSH", "blist2", "1", "2", "3", "4", "5"),
                                         ("EXEC",)])
            return self.serve_in_order(port, cmds, fill, 3,
                                       lambda a: a.call("LPUSH", "blist2", "1", "2", "3"))
        replies = self.both(scenario)
        self.assertEqual(replies[1], b"*2\r\n$5\r\nblist\r\n*4\r\n$1\r\na\r\n$1\r\nb\r\n"
                                     b"$1\r\nc\r\n$1\r\nd\r\n")

    def test_zsets_one_exec_filling_two_keys(self):
        def scenario(port):
            keys = ("2", "z1", "z2")
            cmds = [("BZMPOP", "0") + keys + (end, "COUNT", n)
                    for end, n in (("MIN", "1"), ("MAX", "10"), ("MIN", "10"), ("MAX", "1"))]
            fill = lambda a: a.pipeline([("MULTI",), ("ZADD", "z1", "1", "a", "2", "b", "3", "c"),
                                         ("ZADD", "z2", "1", "x", "2", "y"), ("EXEC",)])
            return self.serve_in_order(port, cmds, fill, 3,
                                       lambda a: a.call("ZADD", "z2", "5", "w"))
        self.both(scenario)

    def test_linked_and_circular_moves(self):
        def linked(port):
            cmds = [("BLMOVE", "l1", "l2", "RIGHT", "LEFT", "0"),
                    ("BLMOVE", "l2", "l3", "LEFT", "RIGHT", "0")]
            replies = self.serve_in_order(port, cmds, lambda a: a.call("RPUSH", "l1", "foo"), 2,
                                          lambda a: None)
            with Client(port) as a:
                return replies, [a.call("LRANGE", k, "0", "-1") for k in ("l1", "l2", "l3")]

        def circular(port):
            cmds = [("BRPOPLPUSH", "c1", "c2", "0"), ("BRPOPLPUSH", "c2", "c1", "0")]
            replies = self.serve_in_order(port, cmds, lambda a: a.call("RPUSH", "c1", "foo"), 2,
                                          lambda a: None)
            with Client(port) as a:
                return replies, [a.call("LRANGE", k, "0", "-1") for k in ("c1", "c2")]
        self.assertEqual(self.both(linked)[1], [[], [], [b"foo"]])
        self.assertEqual(self.both(circular)[1], [[b"foo"], []])


@unittest.skipIf(IS_REDIS, "Sluice's I/O threads")
class ManyBlockedTest(BlackboxTestCase):
    def test_fifty_blocked_clients_do_not_stop_the_others(self):
        # timeout 1: idle clients are closed after a second, blocked ones are waiting, not idle.
        srv = Server({"threads": "2", "timeout": "1"})
        srv.start()
        try:
            blocked = [Client(srv.port) for _ in range(50)]
            idle = Client(srv.port)
            with Client(srv.port) as admin:
                for i, c in enumerate(blocked):
                    c.send(encode_command("BLPOP", "many:%d" % i, "0"))
                wait_blocked(admin, 50)
                others = [Client(srv.port) for _ in range(4)]
                for n, c in enumerate(others):
                    for j in range(50):
                        self.assertEqual(c.call("SET", "s%d" % n, str(j)), "OK")
                        self.assertEqual(c.call("GET", "s%d" % n), str(j).encode())
                    c.close()
                self.assertEqual(info_blocked(admin), 50)
                time.sleep(2.2)
            self.assertEqual(idle.read_until_closed(), b"")  # the idle sweep ran (admin too)
            with Client(srv.port) as admin:
                self.assertEqual(info_blocked(admin), 50)
                for i in range(50):
                    admin.call("RPUSH", "many:%d" % i, "v%d" % i)
                for i, c in enumerate(blocked):
                    self.assertEqual(c.read(), [b"many:%d" % i, b"v%d" % i])
                    c.close()
                wait_blocked(admin, 0)
        finally:
            srv.stop()


@unittest.skipIf(IS_REDIS, "Sluice's I/O threads")
class RacingPushersTest(BlackboxTestCase):
    def test_every_blocked_client_is_served_by_concurrent_pushers(self):
        import threading
        srv = Server({"threads": "4"})
        srv.start()
        try:
            blocked = [Client(srv.port) for _ in range(24)]
            with Client(srv.port) as admin:
                for i, c in enumerate(blocked):
                    # Every client can take every element; the key order differs, so wakes
                    # pass between the two queues.
                    keys = ("race2", "race") if i % 2 else ("race", "race2")
                    c.send(encode_command("BLPOP", *keys, "0"))
                wait_blocked(admin, 24)

                def pusher(n):
                    with Client(srv.port) as p:
                        for j in range(6):
                            p.call("RPUSH", "race" if (n + j) % 3 else "race2", "%d-%d" % (n, j))
                threads = [threading.Thread(target=pusher, args=(n,)) for n in range(4)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
                got = sorted(c.read()[1] for c in blocked)
                self.assertEqual(got, sorted(b"%d-%d" % (n, j) for n in range(4) for j in range(6)))
                wait_blocked(admin, 0)
                self.assertEqual(admin.call("EXISTS", "race", "race2"), 0)
            for c in blocked:
                c.close()
        finally:
            srv.stop()


@unittest.skipIf(IS_REDIS, "kill -9 of Sluice")
class KillNineTest(BlackboxTestCase):
    def check_mode(self, mode):
        srv = Server({"appendfsync": mode})
        srv.start()
        try:
            with Client(srv.port) as a, Client(srv.port) as b:
                for i in range(5):
                    a.send(encode_command("BLMOVE", "src", "dst", "LEFT", "RIGHT", "0"))
                    wait_blocked(b, 1)
                    b.call("RPUSH", "src", "e%d" % i)
                    self.assertEqual(a.read(), b"e%d" % i)
            srv.kill9()
            srv.start()
            with Client(srv.port) as c:
                self.assertEqual(c.call("LRANGE", "dst", "0", "-1"),
                                 [b"e%d" % i for i in range(5)])
                self.assertEqual(c.call("EXISTS", "src"), 0)
        finally:
            srv.stop()

    def test_everysec(self):
        self.check_mode("everysec")

    def test_always(self):
        self.check_mode("always")


if __name__ == "__main__":
    unittest.main()
