#!/usr/bin/env python3
"""Disk and memory used by big collections, Sluice next to redis-server on this machine.

  tools/footprint.py [--sluice PATH] [--redis-server PATH] [--elements N]

Starts both servers on free ports with fresh temporary data directories and the same
durability (Sluice appendfsync everysec; Redis appendonly yes, appendfsync everysec, no RDB),
then on each loads N (default 1,000,000) hash fields into one hash (HSET h field:<i> value:<i>)
and N members into one sorted set (ZADD z <i> member:<i>), 1,000 per command, pipelined. It prints,
per server and collection: the process's resident memory (VmRSS) growth and the data
directory's size growth, right after the load and again after a restart (Sluice replays and
flushes its log; Redis rewrites nothing: its AOF is what it keeps), and bytes per element.
Not a test: a measurement that takes about a minute.
"""
import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "blackbox"))
from harness import Client  # noqa: E402  (the test suite's RESP client)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def rss_bytes(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def dir_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                pass
    return total


class Served:
    def __init__(self, name, argv_fn):
        self.name = name
        self.argv_fn = argv_fn
        self.dir = tempfile.mkdtemp(prefix="sluice-footprint-%s." % name)
        self.port = free_port()
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(self.argv_fn(self.port, self.dir), stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        end = time.monotonic() + 60
        while time.monotonic() < end:
            try:
                with Client(self.port) as c:
                    if c.call("PING") == "PONG":
                        return
            except OSError:
                pass
            time.sleep(0.1)
        raise SystemExit("footprint: %s did not start" % self.name)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            try:
                with Client(self.port) as c:
                    c.send(b"*1\r\n$8\r\nSHUTDOWN\r\n")
            except OSError:
                pass
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def cleanup(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def load(port, command, n):
    batch, per_pipeline = 1000, 50
    with Client(port, timeout=300) as c:
        commands = []
        for start in range(0, n, batch):
            args = [command[0], command[1]]
            for i in range(start, min(n, start + batch)):
                args += command[2](i)
            commands.append(tuple(args))
            if len(commands) == per_pipeline:
                c.pipeline(commands)
                commands = []
        if commands:
            c.pipeline(commands)


def measure(server, label, command, n):
    server.start()
    time.sleep(1)
    rss0, disk0 = rss_bytes(server.proc.pid), dir_bytes(server.dir)
    t0 = time.monotonic()
    load(server.port, command, n)
    seconds = time.monotonic() - t0
    time.sleep(2)
    rss1, disk1 = rss_bytes(server.proc.pid), dir_bytes(server.dir)
    server.stop()
    server.start()
    time.sleep(2)
    with Client(server.port) as c:
        size = c.call("HLEN" if command[0] == "HSET" else "ZCARD", command[1])
    rss2, disk2 = rss_bytes(server.proc.pid), dir_bytes(server.dir)
    server.stop()
    return [server.name, label, size, "%.1f" % seconds, (rss1 - rss0) >> 20, (disk1 - disk0) >> 20,
            rss2 >> 20, (disk2 - disk0) >> 20, "%.0f" % ((disk2 - disk0) / n)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sluice", default=os.path.join(HERE, "..", "build", "sluice-server"))
    ap.add_argument("--redis-server", default=shutil.which("redis-server"))
    ap.add_argument("--elements", type=int, default=1_000_000)
    args = ap.parse_args()
    n = args.elements
    hset = ("HSET", "h", lambda i: ["field:%d" % i, "value:%d" % i])
    zadd = ("ZADD", "z", lambda i: [str(i), "member:%d" % i])
    rows = []
    for label, command in (("hash fields", hset), ("zset members", zadd)):
        sluice = Served("sluice", lambda port, d: [args.sluice, "--port", str(port), "--dir", d,
                                                   "--appendfsync", "everysec"])
        redis = Served("redis", lambda port, d: [
            args.redis_server, "--port", str(port), "--dir", d, "--appendonly", "yes",
            "--appendfsync", "everysec", "--save", ""])
        for server in (sluice, redis):
            try:
                rows.append(measure(server, label, command, n))
            finally:
                server.cleanup()
    print("\n%d elements per collection, 1,000 per command; MiB" % n)
    header = ["server", "collection", "size", "load s", "RSS +", "disk +", "RSS after restart",
              "disk after restart", "disk B/elem"]
    print(" | ".join(header))
    for r in rows:
        print(" | ".join(str(x) for x in r))


if __name__ == "__main__":
    main()
