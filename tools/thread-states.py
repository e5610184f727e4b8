#!/usr/bin/env python3
"""Where a process's threads spend their time: samples /proc/PID/task/*/{stat,syscall} and prints,
per thread, the share of samples it was running or blocked in each system call.

  tools/thread-states.py PID [SECONDS] [--interval MS]

Run it while a benchmark loads the server (e.g. sluice-server under tools/bench.sh or
redis-benchmark): I/O threads blocked in futex wait for a lock (key stripes, the write-ahead
log's gate, RocksDB's write thread; `perf record -e syscalls:sys_enter_futex --call-graph dwarf`
says which), in epoll_wait for clients. Off-CPU time is what a CPU profile does not show. Needs
permission to read the process's syscall files (the same user, or root). Not a test.
"""
import argparse
import collections
import os
import sys
import time

SYSCALLS = {0: "read", 1: "write", 7: "poll", 20: "writev", 24: "sched_yield", 35: "nanosleep",
            44: "sendto", 45: "recvfrom", 46: "sendmsg", 47: "recvmsg", 74: "fsync",
            75: "fdatasync", 202: "futex", 230: "clock_nanosleep", 232: "epoll_wait",
            270: "pselect6", 271: "ppoll", 281: "epoll_pwait"}


def state_of(pid, tid):
    """'run' when on a CPU (or runnable), else the name of the system call it is blocked in."""
    stat = open(f"/proc/{pid}/task/{tid}/stat").read()
    if stat[stat.rindex(")") + 2] == "R":
        return "run"
    call = open(f"/proc/{pid}/task/{tid}/syscall").read().split()[0]
    if call == "running":
        return "run"
    return SYSCALLS.get(int(call), f"syscall {call}") if call.lstrip("-").isdigit() else call


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pid", type=int)
    parser.add_argument("seconds", type=float, nargs="?", default=2.0)
    parser.add_argument("--interval", type=float, default=2.0, help="ms between samples")
    args = parser.parse_args()
    counts = collections.defaultdict(collections.Counter)
    names = {}
    rounds = 0
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        try:
            tids = os.listdir(f"/proc/{args.pid}/task")
        except FileNotFoundError:
            sys.exit(f"thread-states: process {args.pid} is gone")
        rounds += 1
        for tid in tids:
            try:
                if tid not in names:
                    names[tid] = open(f"/proc/{args.pid}/task/{tid}/comm").read().strip()
                counts[tid][state_of(args.pid, tid)] += 1
            except (OSError, ValueError):
                pass  # the thread ended between listing and reading
        time.sleep(args.interval / 1000)
    print(f"{rounds} samples over {args.seconds:g} s; per thread, the share of its samples:")
    rows = sorted(counts.items(), key=lambda kv: -kv[1]["run"] / sum(kv[1].values()))
    for tid, c in rows:
        total = sum(c.values())
        if c["futex"] == total or c["epoll_wait"] == total:
            continue  # idle all along
        shares = ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in c.most_common(5))
        print(f"  {tid:>7} {names[tid][:15]:15} {shares}")


if __name__ == "__main__":
    main()
