#!/usr/bin/env python3
"""Stream benchmark: sluice-server beside a local redis-server, in the same run.

    tools/stream_bench.py [--sluice PATH] [--redis-server PATH] [--entries 200000]
                          [--repeat 3] [--sluice-flags "FLAGS"]

Both servers run on 127.0.0.1, free ports, fresh temporary directories, with the same
durability (Sluice appendfsync everysec; Redis appendonly yes, appendfsync everysec). Rows:

- XADD s * f v on one stream: redis-benchmark, 50 clients, pipeline 1 and 16, requests/s.
- XREADGROUP GROUP g c COUNT 1 STREAMS s > then XACK s g <id>: one consumer (a Python client
  here), pipeline 1 (one round trip per command) and 16 (16 reads in one write, then their 16
  acks), pairs per second, over a stream of ENTRIES entries.

Beside each rate, the server's CPU time (user + system, /proc) per request or per pair: on a
machine whose cores the clients share, rates swing with whatever else runs, CPU per request
says what the server costs. Each row runs --repeat times alternating the servers; the medians
are printed. Not a test: numbers depend on the machine (issue 39's goals: >= 0.8x Redis).
"""
import argparse
import os
import shutil
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from side_by_side import Servers, command, run_rows  # noqa: E402


class Reader:
    """Reads whole RESP replies off a socket (enough of RESP2 for these commands)."""

    def __init__(self, sock):
        self.sock, self.buf, self.pos = sock, b"", 0

    def _need(self, n):
        while len(self.buf) - self.pos < n:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("closed")
            self.buf = self.buf[self.pos:] + chunk
            self.pos = 0

    def _line(self):
        while True:
            end = self.buf.find(b"\r\n", self.pos)
            if end >= 0:
                line, self.pos = self.buf[self.pos:end], end + 2
                return line
            self._need(len(self.buf) - self.pos + 1)

    def reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind in (b"+", b":"):
            return rest
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            self._need(n + 2)
            data = self.buf[self.pos:self.pos + n]
            self.pos += n + 2
            return data
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.reply() for _ in range(n)]
        raise RuntimeError("unexpected reply %r" % line)


def xadd_rate(port, pipeline, benchmark, requests, key):
    out = subprocess.run([benchmark, "-p", str(port), "-c", "50", "-P", str(pipeline), "-n",
                          str(requests), "-q", "XADD", key, "*", "f", "v"],
                         capture_output=True, text=True, check=True).stdout
    # "XADD bench:1 * f v: 84033.61 requests per second, p50=..." (the key holds a colon)
    text = out.strip().splitlines()[-1].split("\r")[-1]
    return float(text.split(" requests per second")[0].rsplit(" ", 1)[1]), requests


def read_ack_rate(port, pipeline, entries, key):
    """Pairs of XREADGROUP COUNT 1 + XACK per second over a fresh stream of `entries`."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        r = Reader(s)
        batch = 1000
        for i in range(0, entries, batch):  # fill, pipelined
            s.sendall(b"".join(command("XADD", key, "*", "f", "v%d" % j)
                               for j in range(i, min(entries, i + batch))))
            for _ in range(min(entries, i + batch) - i):
                r.reply()
        s.sendall(command("XGROUP", "CREATE", key, "g", "0"))
        r.reply()
        read = command("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", key, ">")
        started = time.monotonic()
        done = 0
        while done < entries:
            n = min(pipeline, entries - done)
            s.sendall(read * n)
            ids = [r.reply()[0][1][0][0] for _ in range(n)]
            s.sendall(b"".join(command("XACK", key, "g", i) for i in ids))
            for _ in range(n):
                r.reply()
            done += n
        return entries / (time.monotonic() - started), entries


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sluice", default="build/sluice-server")
    ap.add_argument("--redis-server", default=shutil.which("redis-server") or "redis-server")
    ap.add_argument("--benchmark", default=shutil.which("redis-benchmark") or "redis-benchmark")
    ap.add_argument("--entries", type=int, default=200000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sluice-flags", default="")
    args = ap.parse_args()
    servers = Servers(args.sluice, args.redis_server, args.sluice_flags, durable=True,
                      prefix="sluice-stream-bench-")
    run = [0]

    def fresh_key():
        run[0] += 1
        return "bench:%d" % run[0]

    try:
        rows = []
        for p in (1, 16):
            rows.append(("XADD one stream, 50 clients, pipeline %d, req/s" % p,
                         lambda port, p=p: xadd_rate(port, p, args.benchmark,
                                                     100000 if p == 1 else 400000, fresh_key())))
        for p in (1, 16):
            rows.append(("XREADGROUP COUNT 1 + XACK, 1 client, pipeline %d, pairs/s" % p,
                         lambda port, p=p: read_ack_rate(port, p, args.entries, fresh_key())))
        run_rows(servers, rows, args.repeat, cpu_unit="us")
    finally:
        servers.stop()


if __name__ == "__main__":
    main()
