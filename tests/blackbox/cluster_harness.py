"""Cluster helpers for the black-box tests: start N cluster nodes (Sluice, or the reference
redis-server 7.0.15 for mixed clusters), each on a free client port and a free bus port
(cluster-port) in its own directory, and build clusters with `redis-cli --cluster`.

    nodes = start_nodes(["sluice"] * 6)        # or ["redis", "sluice", ...]
    try:
        out = cluster_create(nodes, replicas=1)  # redis-cli --cluster create ... --cluster-yes
        wait_until(lambda: all_ok(nodes))
    finally:
        stop_nodes(nodes)
"""

import os
import shutil
import signal
import subprocess
import tempfile
import time

from harness import DIE_WITH_TEST, REDIS_CLI, Client, Server, free_port

NODE_TIMEOUT_MS = 2000  # small, so failover tests run quickly


def free_port_pair():
    """A client port and a different bus port, both free now."""
    a = free_port()
    b = free_port()
    while b == a:
        b = free_port()
    return a, b


class RedisNode:
    """A redis-server 7.0.15 cluster node (the reference), started like a Sluice Server."""

    kind = "redis"

    def __init__(self, node_timeout=NODE_TIMEOUT_MS, options=None):
        self.options = options or {}
        self.binary = os.environ.get("REDIS_SERVER") or shutil.which("redis-server")
        self.workdir = tempfile.mkdtemp(prefix="sluice-cluster-redis-")
        self.port, self.cport = free_port_pair()
        self.node_timeout = node_timeout
        self.proc = None

    def argv(self):
        return [self.binary, "--port", str(self.port), "--bind", "127.0.0.1",
                "--dir", self.workdir, "--save", "", "--appendonly", "no",
                "--cluster-enabled", "yes", "--cluster-port", str(self.cport),
                "--cluster-node-timeout", str(self.node_timeout),
                "--cluster-config-file", "nodes.conf", "--daemonize", "no"] + [
                    a for k, v in self.options.items() for a in ("--" + k, str(v))]

    def start(self):
        log = open(os.path.join(self.workdir, "redis.log"), "wb")
        self.proc = subprocess.Popen(DIE_WITH_TEST + self.argv(), stdout=log, stderr=log,
                                     stdin=subprocess.DEVNULL, cwd=self.workdir)
        log.close()
        wait_until(lambda: ping(self.port), what="redis-server on %d" % self.port)
        return self

    def kill9(self):
        self.proc.kill()
        self.proc.wait()

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def log(self):
        try:
            with open(os.path.join(self.workdir, "redis.log"), "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""


class SluiceNode(Server):
    """A Sluice cluster node: harness.Server with cluster-enabled yes and its own bus port."""

    kind = "sluice"

    def __init__(self, node_timeout=NODE_TIMEOUT_MS, options=None):
        port, cport = free_port_pair()
        opts = {"cluster-enabled": "yes", "cluster-port": str(cport),
                "cluster-node-timeout": str(node_timeout)}
        opts.update(options or {})
        super().__init__(options=opts, port=port)
        self.cport = cport


def ping(port):
    try:
        with Client(port, timeout=2) as c:
            c.call("PING")
            return True
    except (OSError, Exception):
        return False


def wait_until(predicate, timeout=60.0, what="condition"):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError("timed out after %.0fs waiting for %s" % (timeout, what))


def start_nodes(kinds, node_timeout=NODE_TIMEOUT_MS, options=None):
    """Starts one node per entry of kinds ("sluice" or "redis"), each with the extra config
    options (name -> value); on failure stops those started."""
    nodes = []
    try:
        for kind in kinds:
            node = (SluiceNode(node_timeout, options) if kind == "sluice"
                    else RedisNode(node_timeout, options))
            nodes.append(node)
            node.start()
    except BaseException:
        stop_nodes(nodes)
        raise
    return nodes


def stop_nodes(nodes):
    for n in nodes:
        try:
            n.stop()
        except Exception:  # keep stopping the others
            pass


def cli(port, *args, check=True, timeout=120):
    argv = [REDIS_CLI, "-h", "127.0.0.1", "-p", str(port)] + [str(a) for a in args]
    res = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                         stdin=subprocess.DEVNULL)
    if check and res.returncode != 0:
        raise AssertionError("redis-cli %s failed (%d):\n%s\n%s"
                             % (" ".join(argv[5:]), res.returncode, res.stdout, res.stderr))
    return res.stdout + res.stderr


def cluster_cli(*args, check=True, timeout=180):
    """redis-cli --cluster <args> (addresses as host:port strings)."""
    argv = [REDIS_CLI, "--cluster"] + [str(a) for a in args]
    res = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                         stdin=subprocess.DEVNULL)
    out = res.stdout + res.stderr
    if check and res.returncode != 0:
        raise AssertionError("redis-cli --cluster %s failed (%d):\n%s"
                             % (" ".join(argv[2:]), res.returncode, out))
    return out


def address(node):
    return "127.0.0.1:%d" % node.port


def cluster_create(nodes, replicas=0):
    """redis-cli --cluster create of nodes (masters first, as redis-cli assigns them)."""
    return cluster_cli("create", *[address(n) for n in nodes], "--cluster-replicas", replicas,
                       "--cluster-yes")


def cluster_info(node):
    with Client(node.port) as c:
        text = c.call("CLUSTER", "INFO")
    text = text.decode() if isinstance(text, bytes) else str(text)
    return dict(line.split(":", 1) for line in text.split("\r\n") if ":" in line)


def cluster_nodes(node):
    with Client(node.port) as c:
        text = c.call("CLUSTER", "NODES")
    return text.decode() if isinstance(text, bytes) else str(text)


def all_ok(nodes):
    try:
        return all(cluster_info(n).get("cluster_state") == "ok" for n in nodes)
    except (OSError, Exception):
        return False
