"""What the side-by-side benchmarks share (tools/pubsub_bench.py, tools/stream_bench.py,
tools/follow_lag.py): free ports, a RESP command encoder, a sluice-server and a redis-server
started beside each other in one temporary directory, their CPU time from /proc, and the loop
that runs each row alternately on both and prints medians with the CPU per operation."""
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(port, proc):
    end = time.monotonic() + 60
    while time.monotonic() < end:
        if proc.poll() is not None:
            sys.exit("server exited with %s" % proc.returncode)
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return
        except OSError:
            time.sleep(0.05)
    sys.exit("server on port %d did not start" % port)


def command(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a.encode() if isinstance(a, str) else a
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def cpu_seconds(pid):
    """User + system CPU time of process `pid` so far, all threads (Linux /proc)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Servers:
    """sluice-server and redis-server on free ports of 127.0.0.1 in one fresh temporary
    directory. durable: Sluice appendfsync everysec and Redis appendonly yes, appendfsync
    everysec; else Sluice as it starts and Redis with no persistence."""

    def __init__(self, sluice, redis, sluice_flags="", durable=False, prefix="sluice-bench-"):
        self.dir = tempfile.mkdtemp(prefix=prefix)
        self.ports = {"sluice": free_port(), "redis": free_port()}
        sluice_argv = [sluice, "--port", str(self.ports["sluice"]), "--bind", "127.0.0.1",
                       "--dir", os.path.join(self.dir, "sluice")]
        redis_argv = [redis, "--port", str(self.ports["redis"]), "--bind", "127.0.0.1",
                      "--save", "", "--dir", self.dir]
        if durable:
            sluice_argv += ["--appendfsync", "everysec"]
            redis_argv += ["--appendonly", "yes", "--appendfsync", "everysec"]
        else:
            redis_argv += ["--appendonly", "no"]
        devnull = subprocess.DEVNULL
        self.procs = {
            "sluice": subprocess.Popen(sluice_argv + sluice_flags.split(), stdout=devnull,
                                       stderr=devnull),
            "redis": subprocess.Popen(redis_argv, stdout=devnull, stderr=devnull),
        }
        for name, proc in self.procs.items():
            wait_ready(self.ports[name], proc)

    def cpu(self, name):
        return cpu_seconds(self.procs[name].pid)

    def stop(self):
        for proc in self.procs.values():
            proc.kill()
            proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def run_rows(servers, rows, repeat, cpu_unit="us"):
    """rows: (title, measure(port) -> (rate, operations the run performed)). Each row runs
    `repeat` times alternating the servers; prints the median rates, their ratio and the median
    server CPU per operation (in `cpu_unit`: "us" or "ns")."""
    scale = 1e6 if cpu_unit == "us" else 1e9
    width = max(len(title) for title, _ in rows) + 2
    print("%-*s %12s %12s %7s   server CPU %s/op: sluice, redis"
          % (width, "", "sluice", "redis", "ratio", cpu_unit))
    for title, measure in rows:
        rates = {"sluice": [], "redis": []}
        cpu = {"sluice": [], "redis": []}
        for _ in range(repeat):
            for name in ("sluice", "redis"):
                before = servers.cpu(name)
                rate, ops = measure(servers.ports[name])
                rates[name].append(rate)
                cpu[name].append((servers.cpu(name) - before) * scale / ops)
        s, r = statistics.median(rates["sluice"]), statistics.median(rates["redis"])
        print("%-*s %12.0f %12.0f %6.2fx   %6.1f %6.1f" % (
            width, title, s, r, s / r, statistics.median(cpu["sluice"]),
            statistics.median(cpu["redis"])), flush=True)
