"""Client-side caching (CLIENT TRACKING) on the real sluice-server, side by side with the
reference redis-server 7.0.x: the raw bytes each client receives (RESP2 with REDIRECT to a
client subscribed to __redis__:invalidate, RESP3 pushes) in every mode (default, BCAST with
prefixes, OPTIN/OPTOUT with CLIENT CACHING, NOLOOP), for writes by commands, MULTI/EXEC, EVAL,
expiry and FLUSHALL/FLUSHDB; CLIENT TRACKINGINFO/GETREDIR, the errors, INFO and CLIENT LIST.
Client ids differ between the servers: they are replaced by "<id>" before comparing.
"""
import re
import time
import unittest

from harness import IS_REDIS, Client
from test_pubsub import BesideRedis, info_field, send
from test_transactions import read_raw_reply


def until(c, marker):
    """Every whole reply `c` receives up to and including the first equal to `marker` (bytes)."""
    out = []
    while True:
        r = read_raw_reply(c)
        out.append(r)
        if r == marker:
            return out


PONG = b"+PONG\r\n"
SUB_PONG = b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"


def sync(c, subscribed=False):
    """What `c` has been sent so far, ended by the reply to a PING."""
    send(c, "PING")
    return until(c, SUB_PONG if subscribed else PONG)


def cmd(c, *args):
    """Sends one command and returns its raw reply (pushes before it included, in order)."""
    send(c, *args)
    return read_raw_reply(c)


def redirect_client(c):
    """Makes `c` a RESP2 redirect target: subscribed to __redis__:invalidate. Returns its id."""
    cid = int(c.call("CLIENT", "ID"))
    send(c, "SUBSCRIBE", "__redis__:invalidate")
    read_raw_reply(c)
    return cid


def norm(value, ids):
    """Replaces each client id in `ids` by <id> in the (nested) byte strings of `value`."""
    if isinstance(value, list):
        return [norm(v, ids) for v in value]
    if isinstance(value, bytes):
        for i in ids:
            value = re.sub(rb"(?<![0-9])%d(?![0-9])" % i, b"<id>", value)
    return value


@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class TrackingTest(BesideRedis):
    def test_resp2_redirect(self):
        def scenario(port):
            out = []
            with Client(port) as r, Client(port) as rd, Client(port) as w:
                rid = redirect_client(rd)
                out.append(cmd(r, "CLIENT", "TRACKING", "on", "REDIRECT", str(rid)))
                out.append(cmd(r, "CLIENT", "GETREDIR"))
                for c in (("SET", "a", "1"), ("SET", "b", "1"), ("GET", "a"), ("INCR", "b"),
                          ("INCR", "a"), ("MGET", "a", "b", "c"), ("SET", "c", "x"),
                          ("DEL", "a", "b")):
                    out.append(cmd(r, *c))
                out.append(sync(rd, subscribed=True))
                # Another client's write, a transaction, a script.
                out.append(cmd(r, "GET", "k1"))
                out.append(cmd(w, "SET", "k1", "v"))
                out.append(sync(rd, subscribed=True))
                out.append(cmd(r, "GET", "k2"))
                for c in (("MULTI",), ("INCR", "k2"), ("GET", "k3"), ("EXEC",)):
                    out.append(cmd(w, *c))
                out.append(sync(rd, subscribed=True))
                out.append(cmd(r, "EVAL", "return redis.call('get', KEYS[1])", "1", "k4"))
                out.append(cmd(w, "EVAL", "return redis.call('set', KEYS[1], 'x')", "1", "k4"))
                out.append(sync(rd, subscribed=True))
                # FLUSHALL: a null to every tracking client.
                out.append(cmd(r, "GET", "k5"))
                out.append(cmd(w, "FLUSHALL"))
                out.append(sync(rd, subscribed=True))
                out.append(cmd(r, "CLIENT", "TRACKINGINFO"))
                out.append(cmd(r, "CLIENT", "TRACKING", "off"))
                out.append(cmd(r, "CLIENT", "TRACKINGINFO"))
                out.append(cmd(r, "CLIENT", "GETREDIR"))
                out.append(sync(r))
                return norm(out, [rid])

        self.both(scenario)

    def test_resp3_default_mode(self):
        def scenario(port):
            out = []
            with Client(port) as r, Client(port) as w:
                send(r, "HELLO", "3")
                read_raw_reply(r)
                out.append(cmd(r, "CLIENT", "TRACKING", "on"))
                # The writer itself: its invalidation follows the reply to its write.
                out.append(cmd(r, "HSET", "h", "f", "1"))
                out.append(cmd(r, "HGET", "h", "f"))
                out.append(cmd(r, "HDEL", "h", "f"))
                out.append(sync(r))
                out.append(cmd(r, "MSET", "a", "1", "b", "2"))
                out.append(cmd(r, "GET", "a"))
                for c in (("MULTI",), ("INCR", "a"), ("GET", "b"), ("EXEC",)):
                    out.append(cmd(r, *c))
                out.append(sync(r))
                # Another client's writes; keys never read are not reported.
                out.append(cmd(r, "MGET", "x", "y"))
                out.append(cmd(w, "SET", "x", "1"))
                out.append(cmd(w, "SET", "z", "1"))
                out.append(cmd(w, "DEL", "y"))
                out.append(cmd(w, "SET", "y", "1"))
                out.append(sync(r))
                # Scripts: only a script that runs a read-only command tracks its keys.
                out.append(cmd(r, "EVAL", "redis.call('set', KEYS[1], 1) return 1", "1", "s1"))
                out.append(cmd(w, "SET", "s1", "2"))
                out.append(cmd(r, "EVAL", "return redis.call('get', KEYS[1])", "1", "s2"))
                out.append(cmd(w, "SET", "s2", "2"))
                out.append(sync(r))
                # Expiry by access.
                out.append(cmd(r, "SET", "e", "1", "PX", "50"))
                out.append(cmd(r, "GET", "e"))
                time.sleep(0.3)
                out.append(cmd(w, "GET", "e"))
                time.sleep(0.05)
                out.append(sync(r))
                out.append(cmd(r, "GET", "f"))
                out.append(cmd(w, "FLUSHDB"))
                time.sleep(0.05)
                out.append(sync(r))
                out.append(cmd(r, "FLUSHALL"))
                out.append(sync(r))
                out.append(cmd(r, "CLIENT", "TRACKINGINFO"))
                return out

        self.both(scenario)

    def test_bcast_and_noloop(self):
        def scenario(port):
            out = []
            with Client(port) as r, Client(port) as n, Client(port) as w:
                send(r, "HELLO", "3")
                read_raw_reply(r)
                send(n, "HELLO", "3")
                read_raw_reply(n)
                out.append(cmd(r, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a:",
                               "PREFIX", "b:"))
                out.append(cmd(n, "CLIENT", "TRACKING", "on", "BCAST", "NOLOOP"))
                out.append(cmd(w, "SET", "a:1", "x"))
                out.append(cmd(w, "SET", "c:1", "x"))
                for c in (("MULTI",), ("SET", "b:2", "x"), ("SET", "a:3", "x"), ("SET", "b:1", "y"),
                          ("EXEC",)):
                    out.append(cmd(w, *c))
                time.sleep(0.05)
                out.append(cmd(n, "SET", "a:9", "x"))
                time.sleep(0.05)
                out.append(cmd(n, "MSET", "q", "1", "a:8", "2"))
                time.sleep(0.05)
                out.append(sync(r))
                out.append(sync(n))
                out.append(cmd(r, "CLIENT", "TRACKINGINFO"))
                out.append(cmd(r, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a:x"))
                out.append(cmd(r, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "c", "PREFIX",
                               "cd"))
                out.append(cmd(r, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "d:"))
                out.append(cmd(r, "CLIENT", "TRACKINGINFO"))
                out.append(cmd(r, "CLIENT", "TRACKING", "on"))
                out.append(cmd(r, "CLIENT", "TRACKING", "off"))
                # NOLOOP in default mode: its own writes are not reported back.
                out.append(cmd(r, "CLIENT", "TRACKING", "on", "NOLOOP"))
                out.append(cmd(r, "GET", "k"))
                out.append(cmd(r, "SET", "k", "1"))
                out.append(cmd(r, "GET", "k"))
                out.append(cmd(w, "SET", "k", "2"))
                time.sleep(0.05)
                out.append(sync(r))
                # ... nor its scripts' writes (a push would come before the GET's reply).
                out.append(cmd(r, "GET", "k"))
                out.append(cmd(r, "EVAL", "return redis.call('set', KEYS[1], '3')", "1", "k"))
                out.append(cmd(r, "GET", "k"))
                return out

        self.both(scenario)

    def test_optin_optout(self):
        def scenario(port):
            out = []
            with Client(port) as r, Client(port) as w:
                send(r, "HELLO", "3")
                read_raw_reply(r)
                out.append(cmd(r, "CLIENT", "CACHING", "yes"))
                out.append(cmd(r, "CLIENT", "TRACKING", "on", "OPTIN"))
                out.append(cmd(r, "CLIENT", "CACHING", "no"))
                out.append(cmd(r, "GET", "a"))
                out.append(cmd(r, "CLIENT", "CACHING", "yes"))
                out.append(cmd(r, "CLIENT", "TRACKINGINFO"))
                out.append(cmd(r, "GET", "b"))
                out.append(cmd(r, "CLIENT", "TRACKINGINFO"))
                out.append(cmd(w, "MSET", "a", "1", "b", "1"))
                time.sleep(0.05)
                out.append(sync(r))
                out.append(cmd(r, "CLIENT", "TRACKING", "on", "OPTOUT"))
                out.append(cmd(r, "CLIENT", "TRACKING", "off"))
                out.append(cmd(r, "CLIENT", "TRACKING", "on", "OPTOUT"))
                out.append(cmd(r, "CLIENT", "CACHING", "yes"))
                out.append(cmd(r, "CLIENT", "CACHING", "no"))
                out.append(cmd(r, "GET", "a"))
                out.append(cmd(r, "GET", "b"))
                out.append(cmd(w, "MSET", "a", "2", "b", "2"))
                time.sleep(0.05)
                out.append(sync(r))
                out.append(cmd(r, "CLIENT", "CACHING", "maybe"))
                out.append(cmd(r, "CLIENT", "TRACKING", "off"))
                out.append(cmd(r, "CLIENT", "CACHING", "yes"))
                for bad in (("maybe",), ("on", "OPTIN", "OPTOUT"), ("on", "BCAST", "OPTIN"),
                            ("on", "PREFIX", "x"), ("on", "REDIRECT", "abc"),
                            ("on", "REDIRECT", "999999"), ("on", "NOSUCH"), ("on", "PREFIX")):
                    out.append(cmd(r, "CLIENT", "TRACKING", *bad))
                out.append(cmd(r, "CLIENT", "TRACKINGINFO"))
                return out

        self.both(scenario)

    def test_redirect_broken_and_resp3_redirect(self):
        def scenario(port):
            out = []
            ids = []
            with Client(port) as r, Client(port) as w:
                send(r, "HELLO", "3")
                read_raw_reply(r)
                with Client(port) as rd:
                    send(rd, "HELLO", "3")
                    read_raw_reply(rd)
                    rid = int(cmd(rd, "CLIENT", "ID")[1:-2])
                    ids.append(rid)
                    out.append(cmd(r, "CLIENT", "TRACKING", "on", "REDIRECT", str(rid)))
                    out.append(cmd(r, "GET", "a"))
                    out.append(cmd(w, "SET", "a", "1"))
                    time.sleep(0.05)
                    out.append(sync(rd))
                    out.append(cmd(r, "GET", "a"))
                # The redirect client is gone: the next invalidation is a broken redirect.
                time.sleep(0.1)
                out.append(cmd(w, "SET", "a", "2"))
                time.sleep(0.05)
                out.append(sync(r))
                out.append(cmd(r, "CLIENT", "TRACKINGINFO"))
                return norm(out, ids)

        self.both(scenario)

    def test_info_and_client_list(self):
        def scenario(port):
            out = []
            with Client(port) as r, Client(port) as b, Client(port) as admin:
                rid = int(admin.call("CLIENT", "ID"))
                r.call("CLIENT", "TRACKING", "on", "REDIRECT", str(rid))
                b.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "p1", "PREFIX", "p2")
                r.call("MGET", "k1", "k2", "k3")
                b.call("GET", "k1")
                out.append([info_field(admin, "clients", "tracking_clients")])
                out.append([info_field(admin, "stats", f) for f in (
                    "tracking_total_keys", "tracking_total_items", "tracking_total_prefixes")])
                for c in (r, b):
                    line = c.call("CLIENT", "INFO").decode()
                    fields = dict(f.split("=", 1) for f in line.strip().split(" "))
                    out.append([fields["flags"], fields["redir"].replace(str(rid), "<id>")])
                out.append(admin.call("CONFIG", "GET", "tracking-table-max-keys"))
            return out

        self.both(scenario)


if __name__ == "__main__":
    unittest.main()
