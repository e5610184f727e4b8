"""MONITOR on the real sluice-server, side by side with a reference redis-server 7.0.x
(start_beside_reference): the lines a monitor receives must be Redis's, byte for byte once the
timestamp is replaced (each line's address is checked against the sending client's own).

Covered: plain commands with arguments that need quoting and escaping, SELECT (the line shows
the database after the command), MULTI/EXEC (the queued commands as EXEC runs them, then EXEC),
an EXEC aborted at the gate, EVAL (before the script's commands, which show as "lua"), admin
commands not shown, AUTH, HELLO AUTH and MIGRATE AUTH/AUTH2 redacted, errors shown, a second MONITOR (no reply),
MONITOR inside MULTI, CLIENT LIST flags=O, RESET ending it.
"""
import re
import unittest

from harness import IS_REDIS, Client
from test_pubsub import BesideRedis, frames, send
from test_transactions import read_raw_reply

STAMP = re.compile(rb"^\+(\d+)\.(\d{6}) \[(\d+) ([^\]]*)\] ")


@unittest.skipIf(IS_REDIS, "compares Sluice with Redis")
class DifferentialTest(BesideRedis):
    def lines_until(self, m, last, addr):
        """The monitor's lines up to and including the one ending in `last`, with the
        timestamp replaced and the sender's address checked and replaced."""
        out = []
        while True:
            line = read_raw_reply(m)
            match = STAMP.match(line)
            self.assertIsNotNone(match, line)
            origin = match.group(4)
            self.assertIn(origin, (addr, b"lua"), line)
            out.append(b"+T [%s %s] " % (match.group(3), b"ADDR" if origin == addr else origin)
                       + line[match.end():])
            if line.endswith(last + b"\r\n"):
                return out

    def test_monitor_lines(self):
        def scenario(port):
            out = []
            with Client(port) as m, Client(port) as c:
                host, cport = c.sock.getsockname()
                addr = ("%s:%d" % (host, cport)).encode()
                out.append(m.call("MONITOR"))
                c.call("SET", "k", 'a b"\\\n\r\t\x07\x08\x01\xff end')
                c.call("GET", "k")
                c.call("SELECT", "1")
                c.call("INCR", "n")
                c.call("SELECT", "0")
                c.pipeline([("MULTI",), ("SET", "x", "1"), ("INCR", "x"), ("EXEC",)])
                c.pipeline([("MULTI",), ("SET", "x", "1"), ("EXEC", "extra")])
                c.call("EVAL", "redis.call('set', KEYS[1], ARGV[1]) return redis.call('get', "
                       "KEYS[1])", "1", "y", "2")
                c.call("CONFIG", "GET", "maxmemory")  # admin: not shown
                c.call("CLIENT", "LIST")               # admin: not shown
                c.call("AUTH", "secret")
                c.call("AUTH", "default", "secret")
                send(c, "HELLO", "2", "AUTH", "default", "secret")
                frames(c, 1)
                c.call("GET")  # an arity error: rejected at the gate, not shown
                c.call("INCR", "k")  # an error from the command: shown
                c.call("MIGRATE", "127.0.0.1", "1", "nokey", "0", "100", "AUTH", "pw")
                c.call("MIGRATE", "127.0.0.1", "1", "", "0", "100", "AUTH2", "u", "pw", "KEYS",
                       "nokey")
                c.call("ECHO", "end")
                out.append(self.lines_until(m, b'"end"', addr))
                # A second MONITOR gets no reply; the monitor runs commands and sees its own.
                send(m, "MONITOR")
                out.append(m.call("PING"))
                out.append(self.lines_until(m, b'"PING"', ("%s:%d" % m.sock.getsockname())
                                            .encode()))
                flags = [l.split(" flags=")[1].split(" ")[0]
                         for l in c.call("CLIENT", "LIST").decode().splitlines()]
                out.append(sorted(flags))
                out.append(m.call("RESET"))
                c.call("SET", "after", "reset")
                out.append(m.call("PING"))
                send(c, "MULTI")
                send(c, "MONITOR")
                send(c, "EXEC")
                out.append(frames(c, 3))
            return out
        self.both(scenario)


if __name__ == "__main__":
    unittest.main()
