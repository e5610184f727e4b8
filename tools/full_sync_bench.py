#!/usr/bin/env python3
"""How long a Sluice replica's full sync takes (issue 40's goal: 10M limiter keys in < 60 s).

    tools/full_sync_bench.py [--sluice PATH] [--keys 10000000] [--gcra 0] [--runs 1]

Starts a Sluice primary in a fresh data dir and fills it: KEYS string keys with `DEBUG
POPULATE` (a GCRA key is a string holding its TAT, so this is the limiter keyspace's shape,
without TTLs), plus GCRA keys made by real `GCRA.TAKE`s (pipelined; they carry TTLs). Then,
RUNS times, starts a replica with `--replicaof` the primary and waits for `master_link_status:up`,
and reports the wall time from the replica's start to the link up, with the primary's encode
time (its log: `full sync: N keys, B bytes of RDB in T ms`) and the replica's load time
(`MASTER <-> REPLICA sync: loaded N keys ... in T ms`), and checks DBSIZE on both. Not a test:
numbers depend on the machine and on what else runs on it (the load average is printed).
"""
import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from side_by_side import command, free_port  # noqa: E402


def ask(port, *args):
    with socket.create_connection(("127.0.0.1", port), timeout=900) as s:
        s.sendall(command(*args))
        data = b""
        while True:
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            data += chunk
            if data.startswith(b"$") and b"\r\n" in data:
                n = int(data[1:data.index(b"\r\n")])
                if n < 0 or len(data) >= data.index(b"\r\n") + 4 + n:
                    break
            elif data.endswith(b"\r\n"):
                break
        return data


def start(sluice, work, name, extra):
    data = os.path.join(work, name)
    os.makedirs(data)
    port = free_port()
    log = open(os.path.join(data, "server.log"), "wb")
    proc = subprocess.Popen([sluice, "--port", str(port), "--dir", data] + extra, stdout=log,
                            stderr=subprocess.STDOUT)
    end = time.monotonic() + 120
    while True:
        if proc.poll() is not None:
            sys.exit("%s exited with %s" % (name, proc.returncode))
        try:
            if ask(port, "PING").startswith(b"+PONG"):
                return proc, port, os.path.join(data, "server.log")
        except OSError:
            if time.monotonic() > end:
                sys.exit("%s did not start" % name)
            time.sleep(0.05)


def stop(proc, port):
    try:
        ask(port, "SHUTDOWN", "NOSAVE")
    except OSError:
        pass
    try:
        proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def fill_gcra(port, n):
    batch = 10000
    with socket.create_connection(("127.0.0.1", port)) as s:
        for first in range(0, n, batch):
            s.sendall(b"".join(command("GCRA.TAKE", "gcra:%d" % i, "1", "86400s")
                               for i in range(first, min(n, first + batch))))
            want = min(n, first + batch) - first
            got = b""
            while got.count(b"\r\n") < want * 3 + 2 and not got.endswith(b"\r\n"):
                got += s.recv(1 << 20)
            # Replies are arrays; read until the last one is complete.
            while True:
                try:
                    s.settimeout(0.2)
                    more = s.recv(1 << 20)
                    if not more:
                        break
                    got += more
                except socket.timeout:
                    break
            s.settimeout(None)


def read_log(path):
    with open(path, errors="replace") as f:
        return f.read()


def main():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sluice", default=os.path.join(here, "build", "sluice-server"))
    p.add_argument("--keys", type=int, default=10_000_000)
    p.add_argument("--gcra", type=int, default=0)
    p.add_argument("--runs", type=int, default=1)
    args = p.parse_args()
    work = tempfile.mkdtemp(prefix="sluice-sync-bench-")
    primary = replica = None
    try:
        primary, pport, plog = start(args.sluice, work, "primary",
                                     ["--enable-debug-command", "yes"])
        t = time.monotonic()
        if args.keys:
            ask(pport, "DEBUG", "POPULATE", str(args.keys))
        if args.gcra:
            fill_gcra(pport, args.gcra)
        total = int(ask(pport, "DBSIZE")[1:].strip())
        print("primary: %d keys (filled in %.1f s)" % (total, time.monotonic() - t), flush=True)
        for run in range(args.runs):
            t = time.monotonic()
            replica, rport, rlog = start(args.sluice, work, "replica%d" % run,
                                         ["--replicaof", "127.0.0.1", str(pport)])
            while b"master_link_status:up" not in ask(rport, "INFO", "replication"):
                if time.monotonic() - t > 900:
                    sys.exit("no link after 900 s")
                time.sleep(0.05)
            wall = time.monotonic() - t
            size = int(ask(rport, "DBSIZE")[1:].strip())
            enc = re.findall(r"full sync: (\d+) keys, (\d+) bytes of RDB in (\d+) ms", read_log(plog))
            load = re.findall(r"sync: loaded (\d+) keys \((\d+) bytes\) in (\d+) ms", read_log(rlog))
            print("full sync of %d keys: %.1f s to link up (%.0f keys/s); encode %s ms (%s MB), "
                  "load %s ms; replica DBSIZE %d %s; load avg %.1f"
                  % (total, wall, total / wall, enc[-1][2] if enc else "?",
                     int(enc[-1][1]) // 1000000 if enc else "?", load[-1][2] if load else "?",
                     size, "ok" if size == total else "MISMATCH", os.getloadavg()[0]),
                  flush=True)
            stop(replica, rport)
            replica = None
            shutil.rmtree(os.path.join(work, "replica%d" % run), ignore_errors=True)
    finally:
        if replica:
            stop(replica, rport)
        if primary:
            stop(primary, pport)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
