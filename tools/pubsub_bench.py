#!/usr/bin/env python3
"""Pub/sub benchmark: sluice-server beside a local redis-server, in the same run.

    tools/pubsub_bench.py [--sluice PATH] [--redis-server PATH] [--subscribers 100]
                          [--messages 20000] [--size 64] [--repeat 3] [--sluice-flags "FLAGS"]

Both servers run on 127.0.0.1, free ports, fresh temporary directories (Redis without
persistence; Sluice's pub/sub touches no storage). Two measurements:

- fan-out: SUBSCRIBERS connections subscribe to one channel; one publisher (redis-benchmark,
  1 client, pipeline 16) sends MESSAGES messages of SIZE bytes; messages delivered per second
  = SUBSCRIBERS * MESSAGES / (time from the first publish until every subscriber has every
  byte). The subscribers are read by one process here (selectors, counting bytes: each message
  frame has a known size), the same for both servers.
- PUBLISH with no subscribers: redis-benchmark, 50 clients, pipeline 1 and 16, requests/s.

Beside each rate it reports the server's CPU time (user + system, all threads, from /proc) per
delivered message or per PUBLISH: on a machine whose cores the reader and redis-benchmark share,
the rate swings with what else runs, while the CPU per message says what the server itself costs.

Each row runs --repeat times alternating the servers; the median is reported. Not a test:
numbers depend on the machine and on whatever else runs on it (the reader and redis-benchmark
share its cores).
"""
import argparse
import os
import selectors
import shutil
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from side_by_side import Servers, command, run_rows  # noqa: E402


def fan_out(port, subscribers, messages, size, benchmark):
    """Messages delivered per second to `subscribers` subscribers of one channel."""
    socks = []
    confirm = b"*3\r\n$9\r\nsubscribe\r\n$5\r\nbench\r\n:1\r\n"
    for _ in range(subscribers):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(command("SUBSCRIBE", "bench"))
        got = b""
        while len(got) < len(confirm):
            got += s.recv(len(confirm) - len(got))
        assert got == confirm, got
        s.setblocking(False)
        socks.append(s)
    payload = "x" * size
    frame = len(b"*3\r\n$7\r\nmessage\r\n$5\r\nbench\r\n$%d\r\n%s\r\n" % (size, payload.encode()))
    want = frame * messages
    remaining = {s: want for s in socks}
    sel = selectors.DefaultSelector()
    for s in socks:
        sel.register(s, selectors.EVENT_READ)
    started = time.monotonic()
    pub = subprocess.Popen([benchmark, "-p", str(port), "-c", "1", "-P", "16", "-n",
                            str(messages), "-q", "PUBLISH", "bench", payload],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = started + 300
    while remaining and time.monotonic() < deadline:
        for key, _ in sel.select(timeout=1.0):
            s = key.fileobj
            try:
                n = len(s.recv(1 << 20))
            except BlockingIOError:
                continue
            if n == 0:
                sys.exit("a subscriber was disconnected (client-output-buffer-limit?)")
            remaining[s] -= n
            if remaining[s] <= 0:
                sel.unregister(s)
                del remaining[s]
    elapsed = time.monotonic() - started
    pub.wait()
    for s in socks:
        s.close()
    if remaining:
        sys.exit("timed out: %d subscribers still missing messages" % len(remaining))
    return subscribers * messages / elapsed


def publish_rate(port, pipeline, benchmark, requests):
    out = subprocess.run([benchmark, "-p", str(port), "-c", "50", "-P", str(pipeline), "-n",
                          str(requests), "-q", "PUBLISH", "nobody", "hello"],
                         capture_output=True, text=True, check=True).stdout
    # "PUBLISH nobody hello: 123456.79 requests per second, p50=0.159 msec"
    text = out.strip().splitlines()[-1].split("\r")[-1]
    return float(text.split(":")[1].split()[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sluice", default="build/sluice-server")
    ap.add_argument("--redis-server", default=shutil.which("redis-server") or "redis-server")
    ap.add_argument("--benchmark", default=shutil.which("redis-benchmark") or "redis-benchmark")
    ap.add_argument("--subscribers", type=int, default=100)
    ap.add_argument("--messages", type=int, default=20000)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--publish-requests", type=int, default=200000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sluice-flags", default="")
    args = ap.parse_args()
    servers = Servers(args.sluice, args.redis_server, args.sluice_flags,
                      prefix="sluice-pubsub-bench-")
    try:
        delivered = args.subscribers * args.messages
        rows = [("fan-out: 1 publisher -> %d subscribers, %d B, msgs delivered/s"
                 % (args.subscribers, args.size),
                 lambda port: (fan_out(port, args.subscribers, args.messages, args.size,
                                       args.benchmark), delivered))]
        for p in (1, 16):
            rows.append(("PUBLISH, no subscribers, 50 clients, pipeline %d, req/s" % p,
                         lambda port, p=p: (publish_rate(port, p, args.benchmark,
                                                         args.publish_requests),
                                            args.publish_requests)))
        run_rows(servers, rows, args.repeat, cpu_unit="ns")
    finally:
        servers.stop()


if __name__ == "__main__":
    main()
