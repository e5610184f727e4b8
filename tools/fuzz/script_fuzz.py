#!/usr/bin/env python3
"""Script fuzzer: random Lua programs through EVAL, to a sluice-server it starts.

    tools/fuzz/script_fuzz.py --server build/sluice-server --seconds 20 [--seed N]

Programs come from a small grammar over what a script can reach (bit, string, table, math,
struct, cmsgpack, cjson, unpack/select, loadstring, metatables, redis.call/pcall, coroutines),
with edge-case numbers (INT32 and 2^53 limits, inf, nan, negative zero) and random strings; a
share of them are then mutated byte by byte to exercise the lexer and parser. Every statement
runs under pcall, so most programs run to the end; a program may also fail, which is fine.
What is not fine: the server dying, a reply that never comes, or (in a sanitizer build,
tools/sanitize.sh asan) any sanitizer report on its stderr. Either fails the run (exit 1) and
prints the program that was running and a replay command (the seed).

Run by ctest as fuzz_scripts (20 s, the default build; under tools/sanitize.sh asan with ASan
and UBSan).
"""

import argparse
import os
import random
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "blackbox"))
from harness import Client, ConnectionClosed, Server, encode_command, sanitizer_report  # noqa: E402
from test_transactions import read_raw_reply  # noqa: E402  (replies as raw bytes)

NUMBERS = ["0", "1", "-1", "2", "7", "31", "32", "33", "255", "-2147483648", "2147483647",
           "2147483648", "4294967295", "4294967296", "-4294967296", "2^53", "-2^53", "2^63",
           "1/0", "-1/0", "0/0", "-0", "0.5", "-1.5", "1e308", "-1e308", "1e-300", "65535",
           "8", "-8", "9", "1000"]
FORMATS = ["b", "B", "h", "H", "i", "I", "l", "L", "i8", "I3", "c", "c0", "c5", "s", "f", "d",
           "x", "<", ">", "!", "!4", "=", " ", "i17", "c99999999", "T", "z", "%d", "%s", "%5.2f",
           "%q", "%x", "%c", "%-10s", "%.99f", "%i", "%%", "%", "%10"]
PATTERNS = ["a", ".", "%a+", "(%d+)", "[%w_]*", "^x", "x$", "%b()", "%f[%w]", "(()", "[", "%",
            "(.-)", "a*b?c+", "%1", "((((((((((a))))))))))", "[^%s]"]
LIB_CALLS = [
    ("bit.tohex", 2), ("bit.tobit", 1), ("bit.band", 3), ("bit.bor", 2), ("bit.bxor", 2),
    ("bit.bnot", 1), ("bit.lshift", 2), ("bit.rshift", 2), ("bit.arshift", 2), ("bit.rol", 2),
    ("bit.ror", 2), ("bit.bswap", 1), ("unpack", 3), ("select", 2), ("tostring", 1),
    ("tonumber", 2), ("type", 1), ("string.sub", 3), ("string.byte", 3), ("string.char", 3),
    ("string.format", 3), ("string.find", 4), ("string.match", 3),
    ("string.gmatch", 2), ("string.gsub", 4), ("string.len", 1), ("string.lower", 1),
    ("string.reverse", 1), ("string.dump", 1), ("table.concat", 4), ("table.insert", 3),
    ("table.remove", 2), ("table.sort", 2), ("table.getn", 1), ("table.maxn", 1),
    ("math.floor", 1), ("math.fmod", 2), ("math.frexp", 1), ("math.ldexp", 2), ("math.max", 3),
    ("math.random", 2), ("math.modf", 1), ("struct.pack", 3), ("struct.unpack", 3),
    ("struct.size", 1), ("cmsgpack.pack", 3), ("cmsgpack.unpack", 1), ("cjson.encode", 1),
    ("cjson.decode", 1), ("loadstring", 2), ("setmetatable", 2), ("getmetatable", 1),
    ("rawset", 3), ("rawget", 2), ("rawequal", 2), ("next", 2), ("ipairs", 1), ("pairs", 1),
    ("redis.sha1hex", 1), ("redis.status_reply", 1), ("redis.error_reply", 1),
    ("redis.setresp", 1), ("coroutine.wrap", 1), ("coroutine.resume", 2), ("error", 2),
    ("collectgarbage", 2), ("gcinfo", 0), ("assert", 2),
]
COMMANDS = ["get", "set", "incr", "incrbyfloat", "hset", "hgetall", "lpush", "lrange", "del",
            "zadd", "zrange", "sadd", "smembers", "expire", "pttl", "ping", "echo", "type",
            "getrange", "setrange", "append", "strlen", "mget", "exists", "gcra.take", "nosuch"]


class Grammar:
    def __init__(self, rng):
        self.rng = rng

    def string(self):
        r = self.rng.random()
        if r < 0.3:
            return repr("".join(self.rng.choice("abc%[]()\\\"'0\x00\xff=- ") for _ in
                                range(self.rng.randint(0, 12))))
        if r < 0.5:
            return "'%s'" % self.rng.choice(FORMATS + PATTERNS).replace("\\", "\\\\")
        if r < 0.6:
            return "string.rep('%s', %d)" % (self.rng.choice("ax\x01"), self.rng.randint(0, 3000))
        if r < 0.7:
            return "string.dump(function() return 1 end)"
        if r < 0.8:
            return "cjson.encode({1, 'a', {b = 2}})"
        if r < 0.9:
            return "cmsgpack.pack(%s)" % self.expr(1)
        return "'%s'" % self.rng.choice(["[==[", "--[[", "x = [=", "\\\\300", "return", "\\27Lua"])

    def table(self, depth):
        n = self.rng.randint(0, 4)
        items = [self.expr(depth + 1) for _ in range(n)]
        if self.rng.random() < 0.3:
            items.append("[%s] = %s" % (self.expr(depth + 1), self.expr(depth + 1)))
        return "{" + ", ".join(items) + "}"

    def call(self, depth):
        name, arity = self.rng.choice(LIB_CALLS)
        if name.startswith("table."):
            # Small positions only: table.insert/remove with a position near INT_MIN move
            # elements 2^31 times in C (no hook runs there): a slow script in Redis too.
            args = [self.rng.choice(["{1, 2, 3}", "{}", "v1", "{'b', 'a'}"])]
            args += [self.rng.choice(["1", "2", "-1", "0", "'x'", "nil"])
                     for _ in range(self.rng.randint(0, arity))]
            return "%s(%s)" % (name, ", ".join(args))
        args = [self.expr(depth + 1) for _ in range(self.rng.randint(0, arity + 1))]
        return "%s(%s)" % (name, ", ".join(args))

    def redis_call(self, depth):
        fn = self.rng.choice(["redis.call", "redis.pcall"])
        args = ["'%s'" % self.rng.choice(COMMANDS)]
        args += [self.expr(depth + 1) for _ in range(self.rng.randint(0, 4))]
        return "%s(%s)" % (fn, ", ".join(args))

    def expr(self, depth=0):
        r = self.rng.random()
        if depth > 3 or r < 0.25:
            return self.rng.choice(NUMBERS)
        if r < 0.4:
            return self.string()
        if r < 0.5:
            return self.rng.choice(["v1", "v2", "v3", "nil", "true", "false", "KEYS", "ARGV",
                                    "ARGV[1]", "#ARGV", "getmetatable('')", "string", "_G"])
        if r < 0.6:
            return self.table(depth)
        if r < 0.85:
            return self.call(depth)
        if r < 0.92:
            return self.redis_call(depth)
        op = self.rng.choice(["+", "-", "*", "/", "%", "^", "..", "==", "<", "and", "or"])
        return "(%s %s %s)" % (self.expr(depth + 1), op, self.expr(depth + 1))

    def statement(self):
        r = self.rng.random()
        var = self.rng.choice(["v1", "v2", "v3"])
        if r < 0.5:
            body = "%s = %s" % (var, self.expr())
        elif r < 0.6:
            body = "for i = 1, %d do %s = %s end" % (self.rng.randint(0, 50), var, self.expr())
        elif r < 0.7:
            body = "%s = {%s(%s)}" % (var, self.rng.choice(["unpack", "select"]), self.expr())
        elif r < 0.8:
            body = "%s.%s = %s" % (self.rng.choice(["getmetatable('')", "string", "_G", "v1",
                                                    "bit", "redis"]),
                                   self.rng.choice(["x", "__index", "upper", "__add"]), self.expr())
        elif r < 0.9:
            body = "local f = loadstring(%s) if f then %s = f() end" % (self.string(), var)
        else:
            body = "%s = %s" % (var, self.redis_call(0))
        return "pcall(function() %s end)" % body

    def program(self):
        lines = ["local v1, v2, v3"]
        lines += [self.statement() for _ in range(self.rng.randint(1, 8))]
        lines.append("return %s" % self.rng.choice(["v1", "v2", "v3", "{v1, v2, v3}",
                                                    "type(v1)", self.expr()]))
        text = "\n".join(lines)
        if self.rng.random() < 0.2:  # byte-level mutations for the lexer and parser
            chars = list(text)
            for _ in range(self.rng.randint(1, 6)):
                pos = self.rng.randrange(len(chars) + 1)
                choice = self.rng.random()
                if choice < 0.4 and chars:
                    del chars[min(pos, len(chars) - 1)]
                elif choice < 0.8:
                    chars.insert(pos, self.rng.choice("[]=-\"'\\(){}.,;:\n\x00\x1b"))
                else:
                    chars[pos:pos] = list(self.rng.choice(["[==[", "]]", "--[[", "function",
                                                           "end", "...", "\\300"]))
            text = "".join(chars)
        return text


REPLY_TIMEOUT_S = 30  # the slowest fuzzed programs take ~2 s: a reply 30 s late is a hang
GDB_TIMEOUT_S = 40


def args_for(rng):
    pool = ["", "0", "-1", "2147483648", "1e400", "nan", "\x00\xff", "x" * rng.randint(0, 100)]
    return [rng.choice(pool) for _ in range(rng.randint(0, 3))]


def thread_stacks(pid):
    """Every thread's stack of the server (a hang's evidence): gdb when installed (tools/setup.sh
    installs it), else each thread's state and kernel wait channel from /proc."""
    if shutil.which("gdb"):
        try:
            out = subprocess.run(["gdb", "-p", str(pid), "-batch", "-nx", "-ex",
                                  "thread apply all bt"], capture_output=True, text=True,
                                 timeout=GDB_TIMEOUT_S)
            return out.stdout[-20000:]
        except (OSError, subprocess.TimeoutExpired) as e:
            return "gdb failed: %s" % e
    lines = []
    for tid in sorted(os.listdir("/proc/%d/task" % pid)):
        base = "/proc/%d/task/%s/" % (pid, tid)
        try:
            comm = open(base + "comm").read().strip()
            state = open(base + "stat").read().split(")")[-1].split()[0]
            wchan = open(base + "wchan").read().strip()
        except OSError:
            continue
        lines.append("thread %s %s state %s wchan %s" % (tid, comm, state, wchan))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", required=True)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--seed", type=int, default=None)
    opts = parser.parse_args()
    seed = opts.seed if opts.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    grammar = Grammar(rng)
    os.environ["SLUICE_SERVER"] = opts.server
    # Printed first, so a run killed from outside (ctest's TIMEOUT) still names its replay.
    print("script_fuzz: seed %d" % seed, flush=True)
    server = Server(options={"busy-reply-threshold": "60000"})
    server.start()
    counts = {"scripts": 0, "errors": 0, "flushes": 0}
    slowest = (0.0, "")  # seconds, program: printed, so a creeping grammar or server shows
    program = ""
    failure = None
    deadline = time.monotonic() + opts.seconds
    try:
        # REPLY_TIMEOUT_S + the stack capture's GDB_TIMEOUT_S + --seconds stay under ctest's
        # 120 s, so a hang is reported with its evidence instead of killed without it.
        with Client(server.port, timeout=REPLY_TIMEOUT_S) as c:
            while time.monotonic() < deadline:
                program = grammar.program()
                argv = args_for(rng)
                started = time.monotonic()
                c.send(encode_command("EVAL", program, "2", "k1", "k2", *argv))
                reply = read_raw_reply(c)
                slowest = max(slowest, (time.monotonic() - started, program))
                counts["scripts"] += 1
                counts["errors"] += reply.startswith(b"-")
                if rng.random() < 0.01:
                    c.call("SCRIPT", "FLUSH")
                    counts["flushes"] += 1
            if c.call("PING") != "PONG":
                failure = "PING after the run did not answer PONG"
    except (OSError, ConnectionClosed) as e:
        failure = "the server stopped answering (%s)" % e
        if server.proc.poll() is None:
            failure += "\nthe server's threads:\n" + thread_stacks(server.proc.pid)
            server.proc.kill()  # a hung server would hold stop() for its whole deadline
            server.proc.wait()
    if server.proc.poll() is not None and failure is None:
        failure = "the server exited with %s" % server.proc.returncode
    report = sanitizer_report(server.stderr())
    if report:
        failure = "sanitizer report:\n" + report
    log = server.stderr()
    try:
        server.stop()
    except AssertionError as e:  # a sanitizer report, already reported above
        failure = failure or str(e)
    print("script_fuzz: seed %d, %d scripts (%d answered with an error), %d SCRIPT FLUSH, %.0f s;"
          " the slowest took %.2f s:\n%s"
          % (seed, counts["scripts"], counts["errors"], counts["flushes"], opts.seconds,
             slowest[0], slowest[1]))
    if failure:
        print("script_fuzz: FAILED: %s\nlast program:\n%s\nserver log tail:\n%s\nreplay: %s "
              "--server %s --seed %d" % (failure, program, log[-4000:], sys.argv[0], opts.server,
                                         seed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
