#!/usr/bin/env python3
"""How fast sluice-server loads a Redis dump.rdb at start (issue 41's goal: >= 500k keys/s).

    tools/rdb_load_bench.py [--sluice PATH] [--redis-server PATH] [--keys 10000000]
                            [--rdb FILE] [--runs 1] [--keep-rdb DIR]

Without --rdb, writes the file first: a redis-server 7.0 in a temporary directory runs
`DEBUG POPULATE KEYS` and `SAVE` (string keys `key:N`, values `value:N`; 10M keys make a
268 MB file). Then, RUNS times: copies the file into a fresh data dir, starts sluice-server on
it, waits until it answers, reads the load's time from its log line (`loaded ...: N keys ... in
T ms`), checks DBSIZE equals the key count, reports keys/s and the server's CPU seconds, and
stops it. Not a test: numbers depend on the machine and on whatever else runs on it (the load
average is printed beside them).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from full_sync_bench import ask, stop  # noqa: E402
from side_by_side import cpu_seconds, free_port  # noqa: E402


def wait_answering(port, proc, timeout_s):
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if proc.poll() is not None:
            sys.exit("sluice-server exited with %s" % proc.returncode)
        try:
            if ask(port, "PING").startswith(b"+PONG"):
                return
        except OSError:
            time.sleep(0.05)
    sys.exit("sluice-server did not answer within %d s" % timeout_s)


def make_rdb(redis_server, keys, out_dir):
    port = free_port()
    proc = subprocess.Popen([redis_server, "--port", str(port), "--dir", out_dir, "--save", "",
                             "--appendonly", "no", "--enable-debug-command", "yes"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        end = time.monotonic() + 30
        while True:
            try:
                ask(port, "PING")
                break
            except OSError:
                if time.monotonic() > end:
                    sys.exit("redis-server did not start")
                time.sleep(0.05)
        print("writing %d keys with redis-server DEBUG POPULATE" % keys, flush=True)
        ask(port, "DEBUG", "POPULATE", str(keys))
        ask(port, "SAVE")
        ask(port, "SHUTDOWN", "NOSAVE")
    except ConnectionError:
        pass
    finally:
        proc.wait(timeout=60)
    return os.path.join(out_dir, "dump.rdb")


def one_run(sluice, rdb, keys, work):
    data = tempfile.mkdtemp(prefix="data-", dir=work)
    shutil.copy(rdb, os.path.join(data, "dump.rdb"))
    port = free_port()
    log_path = os.path.join(data, "server.log")
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sluice, "--port", str(port), "--dir", data], stdout=log,
                                stderr=subprocess.STDOUT)
    try:
        wait_answering(port, proc, 1200)
        cpu = cpu_seconds(proc.pid)
        size = int(ask(port, "DBSIZE")[1:].strip())
    finally:
        stop(proc, port)
    with open(log_path, errors="replace") as f:
        text = f.read()
    m = re.search(r"loaded .*?: .*?(\d+) keys .*? in (\d+) ms", text)
    if not m:
        sys.exit("no load line in the log:\n" + text[-2000:])
    loaded, ms = int(m.group(1)), int(m.group(2))
    shutil.rmtree(data, ignore_errors=True)
    ok = "ok" if size == keys and loaded == keys else "MISMATCH (expected %d)" % keys
    print("loaded %d keys in %.2f s: %.0f keys/s; server CPU %.1f s; DBSIZE %d %s; load avg %s"
          % (loaded, ms / 1000, loaded / (ms / 1000 or 1), cpu, size, ok,
             os.getloadavg()[0]), flush=True)
    return size == keys and loaded == keys


def main():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sluice", default=os.path.join(here, "build", "sluice-server"))
    p.add_argument("--redis-server", default=shutil.which("redis-server") or "redis-server")
    p.add_argument("--keys", type=int, default=10_000_000)
    p.add_argument("--rdb", help="an existing dump.rdb of exactly --keys keys")
    p.add_argument("--keep-rdb", help="write the generated dump.rdb into this directory")
    p.add_argument("--runs", type=int, default=1)
    args = p.parse_args()
    work = tempfile.mkdtemp(prefix="sluice-rdb-bench-")
    try:
        rdb = args.rdb
        if rdb is None:
            out = args.keep_rdb or work
            os.makedirs(out, exist_ok=True)
            rdb = make_rdb(args.redis_server, args.keys, out)
        ok = all([one_run(args.sluice, rdb, args.keys, work) for _ in range(args.runs)])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
