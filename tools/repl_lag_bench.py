#!/usr/bin/env python3
"""Replica lag of a Sluice replica under GCRA.TAKE load on a Sluice primary (issue 40's goal:
p99 under 10 ms at 100k GCRA.TAKE/s).

    tools/repl_lag_bench.py [--sluice PATH] [--seconds 10] [--clients 8] [--pipeline 16]
                            [--keys 1000000] [--sample-ms 10]

Starts a primary and a replica (`--replicaof`), each in a fresh data dir, waits for the link,
then runs `redis-benchmark -P PIPELINE -c CLIENTS -r KEYS GCRA.TAKE gcra:__rand_int__ 100 1s`
against the primary for about SECONDS while sampling the primary's INFO `sluice_repl_lag_ms`
(the age of the oldest write an online replica has not acknowledged) every SAMPLE_MS. Reports
the take rate and the lag's p50 / p99 / max. Not a test: numbers depend on the machine and on
what else runs on it (the load average is printed).
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from full_sync_bench import ask, start, stop  # noqa: E402
from side_by_side import cpu_seconds  # noqa: E402


def main():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sluice", default=os.path.join(here, "build", "sluice-server"))
    p.add_argument("--seconds", type=float, default=10)
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--pipeline", type=int, default=16)
    p.add_argument("--keys", type=int, default=1_000_000)
    p.add_argument("--sample-ms", type=int, default=10)
    p.add_argument("--requests", type=int, default=0,
                   help="takes to send (default: 100k per second of --seconds)")
    args = p.parse_args()
    work = tempfile.mkdtemp(prefix="sluice-lag-bench-")
    procs = []
    try:
        primary, pport, _ = start(args.sluice, work, "primary", [])
        procs.append((primary, pport))
        replica, rport, _ = start(args.sluice, work, "replica",
                                  ["--replicaof", "127.0.0.1", str(pport)])
        procs.append((replica, rport))
        t = time.monotonic()
        while b"master_link_status:up" not in ask(rport, "INFO", "replication"):
            if time.monotonic() - t > 60:
                sys.exit("no link after 60 s")
            time.sleep(0.05)
        n = args.requests or int(100_000 * args.seconds)
        cpu0 = cpu_seconds(replica.pid)
        bench = subprocess.Popen(
            ["redis-benchmark", "-p", str(pport), "-P", str(args.pipeline), "-c",
             str(args.clients), "-n", str(n), "-r", str(args.keys), "-q", "GCRA.TAKE",
             "gcra:__rand_int__", "100", "1s"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        lags = []
        while bench.poll() is None:
            info = ask(pport, "INFO", "replication")
            m = re.search(rb"sluice_repl_lag_ms:(\d+)", info)
            if m:
                lags.append(int(m.group(1)))
            time.sleep(args.sample_ms / 1000)
        out = bench.stdout.read().decode(errors="replace")
        # The replica applies every take once it arrives: its CPU per take, once caught up.
        t = time.monotonic()
        while re.search(rb"sluice_repl_lag_ms:0\r", ask(pport, "INFO", "replication")) is None:
            if time.monotonic() - t > 120:
                break
            time.sleep(0.05)
        cpu_us = (cpu_seconds(replica.pid) - cpu0) * 1e6 / n
        rate = re.findall(r"([\d.]+) requests per second", out)
        lags.sort()
        if not lags:
            sys.exit("no sluice_repl_lag_ms samples")
        print("GCRA.TAKE %s/s (P%d, %d clients); replica lag over %d samples: p50 %d ms, "
              "p99 %d ms, max %d ms; replica CPU %.2f us/take; load avg %.1f"
              % (rate[-1] if rate else "?", args.pipeline, args.clients, len(lags),
                 lags[len(lags) // 2], lags[min(len(lags) - 1, int(len(lags) * 0.99))],
                 lags[-1], cpu_us, os.getloadavg()[0]), flush=True)
    finally:
        for proc, port in reversed(procs):
            stop(proc, port)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
