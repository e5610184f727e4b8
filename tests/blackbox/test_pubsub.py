"""Pub/sub on the real sluice-server, side by side with a reference redis-server 7.0.x
(start_beside_reference): every scenario runs on both and the raw bytes must be Redis's.

- DifferentialTest: SUBSCRIBE/UNSUBSCRIBE/PSUBSCRIBE/PUNSUBSCRIBE/SSUBSCRIBE/SUNSUBSCRIBE
  confirmations, message/pmessage/smessage frames, PUBLISH/SPUBLISH counts, PUBSUB's
  subcommands and errors, RESP2 subscribed mode (refused commands, PING), RESP3 push frames
  between ordinary replies, MULTI/EXEC, scripts, RESET, QUIT, CLIENT LIST/KILL TYPE pubsub and
  the sub=/psub=/ssub= fields, INFO stats, a slow subscriber cut off by the pubsub class of
  client-output-buffer-limit while the publisher goes on, redis-py's pubsub().
- ThreadsTest: subscribers spread over 4 I/O threads each get every message of two concurrent
  publishers, each publisher's in its order.
"""
import socket
import threading
import time
import unittest

from harness import IS_REDIS, BlackboxTestCase, Client, Server, encode_command
from test_transactions import BesideReference, import_redis_py, read_raw_reply

redis = import_redis_py()
WAIT = 10.0  # seconds: an upper bound no healthy server comes near


def frames(c, n):
    """The next n whole replies of Client `c`, as raw bytes."""
    return b"".join(read_raw_reply(c) for _ in range(n))


def send(c, *args):
    c.send(encode_command(*args))


def client_fields(line, names):
    fields = dict(f.split("=", 1) for f in line.strip().split(" "))
    return {n: fields[n] for n in names}


def info_field(c, section, name):
    for line in c.call("INFO", section).decode().split("\r\n"):
        if line.startswith(name + ":"):
            return line.split(":", 1)[1]
    raise AssertionError("no %s in INFO %s" % (name, section))


def wait_until(fn, what):
    end = time.monotonic() + WAIT
    while time.monotonic() < end:
        if fn():
            return
        time.sleep(0.01)
    raise AssertionError("timed out waiting for " + what)


class BesideRedis(BesideReference):
    """A Sluice server and the reference redis-server for the class; both() runs a scenario on
    each (after FLUSHALL) and asserts equal results. No tests of its own (test_monitor uses it)."""
    maxDiff = None

    def both(self, scenario):
        """Runs scenario(port) on Sluice and on Redis; its results must match."""
        results = []
        for port in (self.sluice.port, self.redis.port):
            with Client(port) as admin:
                self.assertEqual(admin.call("FLUSHALL"), "OK")
            results.append(scenario(port))
        self.assertEqual(results[0], results[1])
        return results[0]


@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class DifferentialTest(BesideRedis):
    def test_subscribe_publish_resp2(self):
        def scenario(port):
            out = []
            with Client(port) as a, Client(port) as b:
                send(a, "SUBSCRIBE", "a", "b", "a")
                out.append(frames(a, 3))
                out.append(b.call("PUBLISH", "a", "hello"))
                out.append(frames(a, 1))
                out.append(b.call("PUBLISH", "nobody", "x"))
                send(a, "PSUBSCRIBE", "h*", "h?llo", "h*")
                out.append(frames(a, 3))
                out.append(b.call("PUBLISH", "hello", "bin\x00\r\nary"))
                out.append(sorted([frames(a, 1), frames(a, 1)]))  # two patterns: any order
                out.append(b.call("PUBLISH", "b", ""))
                out.append(frames(a, 1))
                send(a, "UNSUBSCRIBE", "a", "nosuch")
                out.append(frames(a, 2))
                send(a, "PUNSUBSCRIBE")  # every pattern, in the order subscribed
                out.append(frames(a, 2))
                send(a, "PUNSUBSCRIBE")  # none left: one frame with a null name
                out.append(frames(a, 1))
                send(a, "UNSUBSCRIBE")
                out.append(frames(a, 1))
                send(a, "UNSUBSCRIBE")
                out.append(frames(a, 1))
                out.append(a.call("GET", "k"))  # out of subscribed mode
                out.append(b.call("PUBLISH", "a", "x"))
            return out
        self.both(scenario)

    def test_unsubscribe_all_channels(self):
        def scenario(port):
            with Client(port) as a:
                send(a, "SUBSCRIBE", "c1", "c2", "c3")
                first = frames(a, 3)
                a.send(encode_command("UNSUBSCRIBE"))
                replies = [a.read() for _ in range(3)]
                # Redis's order is its dict's (random): names as a set, counts in order.
                return (first, sorted(r[1] for r in replies), [r[0] for r in replies],
                        [r[2] for r in replies], a.call("PING"))
        self.both(scenario)

    def test_confirmations_and_messages_despite_client_reply(self):
        # Redis 7.0 sends (un)subscribe confirmations and messages as pushes, whatever CLIENT
        # REPLY says; an error of such a command stays silenced.
        def scenario(port):
            out = []
            for proto in (2, 3):
                with Client(port) as a, Client(port) as b:
                    if proto == 3:
                        send(a, "HELLO", "3")
                        frames(a, 1)  # the server's own fields differ
                    send(a, "CLIENT", "REPLY", "OFF")
                    send(a, "SET", "k", "v")
                    send(a, "SUBSCRIBE")  # an arity error: silenced
                    send(a, "SUBSCRIBE", "news")
                    out.append(frames(a, 1))
                    out.append(b.call("PUBLISH", "news", "hi"))
                    out.append(frames(a, 1))
                    send(a, "PSUBSCRIBE", "n*")
                    out.append(frames(a, 1))
                    send(a, "UNSUBSCRIBE", "news")
                    out.append(frames(a, 1))
                    send(a, "PUNSUBSCRIBE")
                    out.append(frames(a, 1))
                    send(a, "CLIENT", "REPLY", "ON")
                    out.append(frames(a, 1))
                    send(a, "CLIENT", "REPLY", "SKIP")
                    send(a, "SUBSCRIBE", "x")
                    out.append(frames(a, 1))
                    out.append(a.call("GET", "k") if proto == 3 else None)
            return out
        self.both(scenario)

    def test_subscribed_mode_resp2(self):
        def scenario(port):
            out = []
            with Client(port) as a:
                send(a, "SSUBSCRIBE", "s")
                out.append(frames(a, 1))
                for cmd in [("GET", "k"), ("SET", "k", "v"), ("PING",), ("PING", "hi"),
                            ("PING", "a", "b"), ("CLIENT", "LIST"), ("CONFIG", "GET", "x"),
                            ("MULTI",), ("PUBLISH", "s", "x"), ("HELLO", "2"), ("NOSUCH",),
                            ("SUBSCRIBE",), ("PUBSUB", "NUMPAT"), ("EVAL", "return 1", "0")]:
                    send(a, *cmd)
                    out.append(frames(a, 1))
                send(a, "SUNSUBSCRIBE")
                out.append(frames(a, 1))
                out.append(a.call("PING"))
                send(a, "SUBSCRIBE", "x")
                out.append(frames(a, 1))
                send(a, "QUIT")
                out.append(a.read_until_closed())
            return out
        self.both(scenario)

    def test_resp3_push_frames_between_replies(self):
        def scenario(port):
            out = []
            with Client(port) as a, Client(port) as b:
                a.call("HELLO", "3")
                send(a, "SUBSCRIBE", "ch")
                out.append(frames(a, 1))
                send(a, "PSUBSCRIBE", "c*")
                out.append(frames(a, 1))
                out.append(a.call("SET", "k", "v"))  # any command in RESP3
                out.append(b.call("PUBLISH", "ch", "m1"))
                send(a, "GET", "k")
                got = [frames(a, 1) for _ in range(3)]
                out.append(got[2])  # the reply comes after both messages
                out.append(sorted(got[:2]))
                send(a, "PING")
                out.append(frames(a, 1))
                send(a, "UNSUBSCRIBE", "ch")
                out.append(frames(a, 1))
                send(a, "PUNSUBSCRIBE", "nosuch")
                out.append(frames(a, 1))
                send(a, "SSUBSCRIBE", "s1")
                out.append(frames(a, 1))
                out.append(b.call("SPUBLISH", "s1", "hi"))
                out.append(b.call("SPUBLISH", "c1", "shard channels do not match patterns"))
                out.append(frames(a, 1))
                send(a, "HELLO", "2")
                out.append(frames(a, 1)[:40])  # HELLO's map: compare the start only
                out.append(b.call("PUBLISH", "cx", "now in RESP2"))
                out.append(frames(a, 1))
                send(a, "RESET")
                out.append(frames(a, 1))
                out.append(b.call("PUBLISH", "cx", "gone"))
                out.append(b.call("SPUBLISH", "s1", "gone"))
            return out
        self.both(scenario)

    def test_pubsub_introspection(self):
        def scenario(port):
            out = []
            with Client(port) as a, Client(port) as b, Client(port) as c:
                send(a, "SUBSCRIBE", "news.1", "news.2", "other")
                frames(a, 3)
                send(b, "SUBSCRIBE", "news.1")
                frames(b, 1)
                send(b, "PSUBSCRIBE", "news.*", "x")
                frames(b, 2)
                send(a, "PSUBSCRIBE", "news.*")
                frames(a, 1)
                send(a, "SSUBSCRIBE", "sh1", "sh2")
                frames(a, 2)
                out.append(sorted(c.call("PUBSUB", "CHANNELS")))
                out.append(sorted(c.call("PUBSUB", "CHANNELS", "news.*")))
                out.append(c.call("PUBSUB", "CHANNELS", "nomatch*"))
                out.append(c.call("PUBSUB", "NUMSUB", "news.1", "other", "none", "news.1"))
                out.append(c.call("PUBSUB", "NUMSUB"))
                out.append(c.call("PUBSUB", "NUMPAT"))
                out.append(sorted(c.call("PUBSUB", "SHARDCHANNELS")))
                out.append(c.call("PUBSUB", "SHARDCHANNELS", "*2"))
                out.append(c.call("PUBSUB", "SHARDNUMSUB", "sh1", "news.1"))
                out.append(c.call("PUBLISH", "news.1", "m"))  # 2 direct + 2 pattern
                out.append(c.call("SPUBLISH", "news.1", "m"))
                for cmd in [("PUBSUB", "CHANNELS", "a", "b"), ("PUBSUB", "SHARDCHANNELS", "a", "b"),
                            ("PUBSUB", "NUMPAT", "x"), ("PUBSUB", "FOO"), ("PUBSUB",),
                            ("PUBSUB", "HELP"), ("PUBSUB", "HELP", "x"), ("PUBLISH", "a"),
                            ("SPUBLISH", "a", "b", "c"), ("SUBSCRIBE",), ("PSUBSCRIBE",),
                            ("SSUBSCRIBE",), ("pubsub", "channels", "a", "b")]:
                    send(c, *cmd)
                    out.append(frames(c, 1))
                c.call("HELLO", "3")
                send(c, "PUBSUB", "NUMSUB", "news.1")
                out.append(frames(c, 1))
                send(c, "PUBSUB", "CHANNELS", "other")
                out.append(frames(c, 1))
                lines = c.call("CLIENT", "LIST").decode().splitlines()
                names = ("flags", "sub", "psub", "ssub")
                out.append(sorted(str(client_fields(l, names)) for l in lines))
                pubsub_lines = c.call("CLIENT", "LIST", "TYPE", "pubsub").decode().splitlines()
                out.append(len(pubsub_lines))
                normal = c.call("CLIENT", "LIST", "TYPE", "normal").decode().splitlines()
                out.append([client_fields(l, names) for l in normal])
                send(c, "CLIENT", "INFO")
                info = frames(c, 1).decode()
                out.append(client_fields(info.split("txt:", 1)[1], names))
                out.append([info_field(c, "stats", n) for n in
                            ("pubsub_channels", "pubsub_patterns", "pubsubshard_channels")])
                out.append(c.call("CLIENT", "KILL", "TYPE", "pubsub"))
                wait_until(lambda: c.call("PUBSUB", "NUMPAT") == 0, "the subscribers' close")
                out.append(c.call("PUBSUB", "CHANNELS"))
                out.append([info_field(c, "stats", n) for n in
                            ("pubsub_channels", "pubsub_patterns", "pubsubshard_channels")])
            return out
        self.both(scenario)

    def test_multi_and_scripts(self):
        def scenario(port):
            out = []
            with Client(port) as a, Client(port) as b:
                send(a, "MULTI")
                send(a, "SUBSCRIBE", "m1")
                send(a, "SSUBSCRIBE", "s1")
                send(a, "PUBLISH", "other", "x")
                send(a, "EXEC")
                out.append(frames(a, 5))
                out.append(b.call("PUBSUB", "NUMSUB", "m1"))
                out.append(b.call("PUBSUB", "SHARDNUMSUB", "s1"))
                send(a, "UNSUBSCRIBE")
                out.append(frames(a, 1))
                # RESP3: a client publishing to its own channel gets the message first.
                a.call("HELLO", "3")
                send(a, "SUBSCRIBE", "own")
                out.append(frames(a, 1))
                send(a, "PUBLISH", "own", "to myself")
                out.append(frames(a, 2))
                send(a, "UNSUBSCRIBE")
                out.append(frames(a, 1))
                for body in ["return redis.call('publish', 'm1', 'from a script')",
                             "return redis.call('spublish', 's1', 'x')",
                             "return redis.call('subscribe', 'x')",
                             "return redis.pcall('psubscribe', 'x')",
                             "return redis.call('pubsub', 'numsub', 'm1')"]:
                    send(b, "EVAL", body, "0")
                    out.append(frames(b, 1))
                out.append(b.call("COMMAND", "INFO", "publish", "subscribe", "pubsub|numsub"))
            return out
        self.both(scenario)

    def test_slow_subscriber_cut_off(self):
        """A subscriber that never reads passes the pubsub hard limit and is closed; the
        publisher and a subscriber that reads go on."""
        def scenario(port):
            with Client(port) as admin:
                self.assertEqual(admin.call("CONFIG", "SET", "client-output-buffer-limit",
                                            "pubsub 1mb 256kb 60"), "OK")
                config = admin.call("CONFIG", "GET", "client-output-buffer-limit")
            slow = socket.create_connection(("127.0.0.1", port))
            slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            slow.sendall(encode_command("SUBSCRIBE", "firehose"))
            with Client(port) as pub, Client(port) as fast:
                send(fast, "SUBSCRIBE", "firehose")
                frames(fast, 1)
                wait_until(lambda: pub.call("PUBSUB", "NUMSUB", "firehose")[1] == 2,
                           "both subscribed")
                payload = "x" * 65536
                frame = len(encode_command("message", "firehose", payload))
                counts = []
                started = time.monotonic()
                # 20 MB: past 1 MB queued for the one that does not read even when the kernel's
                # socket buffers (up to 4 MB each way) hold what they can. The reading
                # subscriber takes each message before the next is published, so it stays far
                # below the limit however busy the machine is.
                for _ in range(320):
                    counts.append(pub.call("PUBLISH", "firehose", payload))
                    fast.read_raw(frame)
                elapsed = time.monotonic() - started
                wait_until(lambda: pub.call("PUBSUB", "NUMSUB", "firehose")[1] == 1,
                           "the slow subscriber's close (port %d, %d of %d messages went to "
                           "both)" % (port, counts.count(2), len(counts)))
                pub.call("CONFIG", "SET", "client-output-buffer-limit", "pubsub 32mb 8mb 60")
            slow.close()
            self.assertLess(elapsed, WAIT)
            return config, counts[0], counts[-1], counts.count(2) >= 1
        self.both(scenario)

    @unittest.skipIf(redis is None, "redis-py is not installed")
    def test_redis_py_pubsub(self):
        def scenario(port):
            r = redis.Redis(port=port)
            p = r.pubsub()
            p.subscribe("orders", "alerts")
            p.psubscribe("user:*")
            got = []
            deadline = time.monotonic() + WAIT
            while len(got) < 3 and time.monotonic() < deadline:
                m = p.get_message(timeout=1.0)
                if m:
                    got.append(m)
            sent = [r.publish("orders", "o1"), r.publish("user:7", "u7"),
                    r.publish("alerts", b"\x00\xff")]
            while len(got) < 6 and time.monotonic() < deadline:
                m = p.get_message(timeout=1.0)
                if m:
                    got.append(m)
            numsub = r.pubsub_numsub("orders", "none")
            p.unsubscribe("orders")
            p.punsubscribe()
            while len(got) < 8 and time.monotonic() < deadline:
                m = p.get_message(timeout=1.0)
                if m:
                    got.append(m)
            p.close()
            r.close()
            return sent, got, numsub
        self.both(scenario)


@unittest.skipIf(IS_REDIS, "Sluice's I/O threads")
class ThreadsTest(BlackboxTestCase):
    def test_every_subscriber_gets_every_message_in_order(self):
        server = Server(options={"threads": "4"})
        server.start()
        try:
            subs = [Client(server.port) for _ in range(12)]
            for s in subs:
                send(s, "SUBSCRIBE", "t")
                frames(s, 1)
            n = 500

            def publish(name):
                with Client(server.port) as p:
                    for i in range(0, n, 50):
                        replies = p.pipeline([("PUBLISH", "t", "%s%d" % (name, j))
                                              for j in range(i, i + 50)])
                        self.assertEqual(replies, [12] * 50)

            threads = [threading.Thread(target=publish, args=(name,)) for name in ("a", "b")]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            for s in subs:
                got = [s.read()[2].decode() for _ in range(2 * n)]
                for name in ("a", "b"):
                    self.assertEqual([m for m in got if m[0] == name],
                                     ["%s%d" % (name, j) for j in range(n)])
                s.close()
        finally:
            server.stop()


if __name__ == "__main__":
    unittest.main()
