#!/usr/bin/env python3
"""Replication lag of Sluice following a live redis-server under write load.

    tools/follow_lag.py [--sluice PATH] [--redis-server PATH] [--seconds 20] [--clients 50]
                        [--pipeline 1] [--keys 1000000] [--probe-ms 50]

Starts redis-server 7.0 (no persistence) and `sluice-server --replicaof` it, each on a free port
in a fresh temporary directory, waits for the link, then runs redis-benchmark SET on random keys
against Redis for SECONDS while a probe writes a sequence number to one key on Redis every
PROBE_MS and polls Sluice until it reads that number back: the probe's delay is how far behind
Redis the replica is at that moment, in time (the write load on Redis is reported beside it).
At the end it checks that Sluice holds as many keys as Redis. This is docs/migrating.md's
"zero-downtime move": the issue's goal is lag under 1 s at 100k writes/s. Not a test: numbers
depend on the machine and on whatever else runs on it.
"""
import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from side_by_side import command, free_port, wait_ready  # noqa: E402


class Conn:
    """One blocking RESP connection; replies parsed far enough for integers and bulk strings."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.buf = b""

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def call(self, *args):
        self.sock.sendall(command(*args))
        line = self._line()
        if line[:1] == b"$":
            n = int(line[1:])
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self.buf += self.sock.recv(1 << 16)
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data
        if line[:1] == b":":
            return int(line[1:])
        if line[:1] == b"-":
            raise RuntimeError(line.decode())
        return line[1:]


def info_field(conn, section, name):
    for line in conn.call("INFO", section).decode().splitlines():
        if line.startswith(name + ":"):
            return line.split(":", 1)[1]
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sluice", default="build/sluice-server")
    ap.add_argument("--redis-server", default=shutil.which("redis-server") or "redis-server")
    ap.add_argument("--benchmark", default=shutil.which("redis-benchmark") or "redis-benchmark")
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--pipeline", type=int, default=1)
    ap.add_argument("--keys", type=int, default=1000000)
    ap.add_argument("--probe-ms", type=float, default=50)
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="sluice-follow-lag-")
    rport, sport = free_port(), free_port()
    devnull = subprocess.DEVNULL
    procs = []
    try:
        procs.append(subprocess.Popen(
            [args.redis_server, "--port", str(rport), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", work], stdout=devnull, stderr=devnull))
        wait_ready(rport, procs[-1])
        procs.append(subprocess.Popen(
            [args.sluice, "--port", str(sport), "--bind", "127.0.0.1", "--dir",
             os.path.join(work, "sluice"), "--replicaof", "127.0.0.1 %d" % rport],
            stdout=devnull, stderr=open(os.path.join(work, "sluice.log"), "w")))
        wait_ready(sport, procs[-1])
        redis, sluice = Conn(rport), Conn(sport)
        deadline = time.monotonic() + 30
        while info_field(sluice, "replication", "master_link_status") != "up":
            if time.monotonic() > deadline:
                sys.exit("the replica link did not come up; log: %s/sluice.log" % work)
            time.sleep(0.05)

        requests = 10 ** 9  # stopped after --seconds
        bench = subprocess.Popen(
            [args.benchmark, "-p", str(rport), "-c", str(args.clients), "-P", str(args.pipeline),
             "-n", str(requests), "-r", str(args.keys), "-q", "SET", "key:__rand_int__", "v"],
            stdout=devnull, stderr=devnull)
        time.sleep(1)  # the load reaches its rate
        calls_before = int(info_field(redis, "stats", "total_commands_processed"))
        started = time.monotonic()
        delays = []
        seq = 0
        while time.monotonic() - started < args.seconds:
            seq += 1
            redis.call("SET", "lag:probe", str(seq))
            sent = time.monotonic()
            while True:
                got = sluice.call("GET", "lag:probe")
                if got is not None and int(got) >= seq:
                    break
                if time.monotonic() - sent > 30:
                    sys.exit("the replica did not catch up within 30 s")
                time.sleep(0.0005)
            delays.append(time.monotonic() - sent)
            time.sleep(max(0.0, args.probe_ms / 1000 - delays[-1]))
        elapsed = time.monotonic() - started
        calls = int(info_field(redis, "stats", "total_commands_processed")) - calls_before
        bench.kill()
        bench.wait()
        # The replica ends with Redis's key count once it has caught up.
        want = redis.call("DBSIZE")
        deadline = time.monotonic() + 60
        while sluice.call("DBSIZE") != want and time.monotonic() < deadline:
            time.sleep(0.1)
        have = sluice.call("DBSIZE")
        delays.sort()
        ms = lambda q: delays[min(len(delays) - 1, int(q * len(delays)))] * 1000
        print("writes on Redis: %.0f/s (redis-benchmark SET, %d clients, pipeline %d, %d keys)"
              % (calls / elapsed, args.clients, args.pipeline, args.keys))
        print("replica lag (%d probes over %.0f s): p50 %.1f ms, p99 %.1f ms, max %.1f ms"
              % (len(delays), elapsed, ms(0.5), ms(0.99), delays[-1] * 1000))
        print("keys: Redis %d, Sluice %d%s" % (want, have, "" if want == have else "  MISMATCH"))
        if want != have:
            sys.exit(1)
    finally:
        for p in reversed(procs):
            p.kill()
            p.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
