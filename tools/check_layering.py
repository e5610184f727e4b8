#!/usr/bin/env python3
"""Checks that the source tree keeps its layering (docs/architecture.md).

Fails (exit 1, one line per finding) when:
  - a file includes a header of a room it may not depend on (dependencies point one way:
    protocol <- server; the engine never sees the data types; storage never sees server);
  - storage/ or protocol/ includes asio, or server/ or protocol/ includes RocksDB;
  - a source file (.cc/.h) is longer than the line limit (800).

Usage: tools/check_layering.py [--root DIR] [--max-lines N]
  --root DIR     the tree to check (default: the repository this script is in)
  --self-test    run the checker on a small tree with one of each violation and expect each
                 to be reported (shows the check can fail); exit 0 when it does
"""

import argparse
import os
import re
import sys
import tempfile

MAX_LINES = 800

# Each room (a path prefix; the longest matching prefix wins) and the rooms whose headers it may
# include. A room may always include its own headers.
PUBLIC_STORAGE = ["storage/include/", "storage/limiter/include/"]
ROOMS = {
    "protocol/": [],
    "storage/limiter/": [],
    "storage/include/": ["storage/limiter/include/"],
    "storage/engine/": PUBLIC_STORAGE,
    "storage/types/": ["storage/engine/"] + PUBLIC_STORAGE,
    "storage/api/": ["storage/types/", "storage/engine/"] + PUBLIC_STORAGE,
    # Redis's data formats: pure bytes <-> values over the public headers only.
    "storage/formats/": PUBLIC_STORAGE,
    "storage/": ["storage/engine/", "storage/types/", "storage/limiter/"] + PUBLIC_STORAGE,
    "server/core/": ["protocol/"] + PUBLIC_STORAGE,
    "server/scripting/": ["server/core/", "protocol/"] + PUBLIC_STORAGE,
    "server/pubsub/": ["server/core/", "protocol/"] + PUBLIC_STORAGE,
    # Replication: the stream, the backlog, full sync (RDB), both ends of a link.
    "server/replication/": ["server/core/", "protocol/", "storage/formats/"] + PUBLIC_STORAGE,
    # Cluster mode: the cluster state, nodes.conf and the cluster bus.
    "server/cluster/": ["server/core/", "protocol/"] + PUBLIC_STORAGE,
    "server/commands/": ["server/scripting/", "server/pubsub/", "server/replication/",
                         "server/cluster/",
                         "server/core/", "protocol/", "storage/formats/"] + PUBLIC_STORAGE,
    "server/net/": ["server/core/", "protocol/"] + PUBLIC_STORAGE,
    "server/": ["server/net/", "server/commands/", "server/replication/", "server/pubsub/",
                "server/cluster/",
                "server/scripting/",
                "server/core/",
                "protocol/"] + PUBLIC_STORAGE,
}
# Where a quoted include is looked up after the including file's own folder (the include
# directories the CMake targets declare).
INCLUDE_ROOTS = ["", "storage/include/", "storage/limiter/include/", "storage/engine/",
                 "storage/types/", "storage/api/", "storage/limiter/"]
# System headers a room must not use: (room prefix, include regex, why).
FORBIDDEN_SYSTEM = [
    ("storage/", re.compile(r"^asio"), "storage never includes asio"),
    ("protocol/", re.compile(r"^(asio|rocksdb/)"), "protocol does no I/O and no storage"),
    ("server/", re.compile(r"^rocksdb/"), "server never includes RocksDB headers"),
]
SOURCE_DIRS = ["protocol", "storage", "server", "tools", "tests"]
SKIP_DIRS = {"node_modules", "build", "__pycache__", ".git"}
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def room_of(rel):
    best = None
    for prefix in ROOMS:
        if rel.startswith(prefix) and (best is None or len(prefix) > len(best)):
            best = prefix
    return best


def resolve(root, including_rel, name):
    """The repository-relative path of a quoted include, or None when it is not ours."""
    candidates = [os.path.join(os.path.dirname(including_rel), name)]
    candidates += [os.path.join(r, name) for r in INCLUDE_ROOTS]
    for c in candidates:
        c = os.path.normpath(c)
        if os.path.isfile(os.path.join(root, c)):
            return c.replace(os.sep, "/")
    return None


def source_files(root):
    for top in SOURCE_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
            for f in sorted(filenames):
                if f.endswith((".cc", ".h")):
                    yield os.path.relpath(os.path.join(dirpath, f), root).replace(os.sep, "/")


def check(root, max_lines):
    findings = []
    for rel in source_files(root):
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
            lines = fh.readlines()
        if len(lines) > max_lines:
            findings.append(f"{rel}: {len(lines)} lines (limit {max_lines}): split it by job")
        room = room_of(rel)
        if room is None:
            continue  # tests and tools may include any room
        allowed = [room] + ROOMS[room]
        for n, line in enumerate(lines, 1):
            m = INCLUDE_RE.match(line)
            if not m:
                continue
            kind, name = m.groups()
            if kind == "<":
                for prefix, pattern, why in FORBIDDEN_SYSTEM:
                    if rel.startswith(prefix) and pattern.match(name):
                        findings.append(f"{rel}:{n}: includes <{name}>: {why}")
                continue
            target = resolve(root, rel, name)
            if target is None:
                continue
            target_room = room_of(target)
            if target_room is None or any(target.startswith(a) for a in allowed):
                continue
            findings.append(f"{rel}:{n}: includes {target} ({target_room}): room {room} may "
                            f"include only {', '.join(allowed)}")
    return findings


def self_test():
    """A tree with one violation of each kind; every one must be found."""
    files = {
        "protocol/p.h": "#pragma once\n",
        "storage/engine/e.h": '#include "storage/types/t.h"\n',   # engine -> types
        "storage/types/t.h": "#pragma once\n",
        "storage/engine/uses_asio.cc": "#include <asio.hpp>\n",    # storage -> asio
        "server/core/c.h": '#include "server/commands/x.h"\n',    # core -> commands
        "server/commands/x.h": "#pragma once\n",
        "server/net/n.cc": "#include <rocksdb/db.h>\n",           # server -> RocksDB
        "server/commands/long.cc": "int x;\n" * (MAX_LINES + 1),  # too long
        "server/commands/ok.cc": '#include "server/core/c.h"\n#include "protocol/p.h"\n',
    }
    expected = ["storage/engine/e.h:1", "storage/engine/uses_asio.cc:1", "server/core/c.h:1",
                "server/net/n.cc:1", "server/commands/long.cc:"]
    with tempfile.TemporaryDirectory() as tmp:
        for rel, text in files.items():
            path = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as fh:
                fh.write(text)
        findings = check(tmp, MAX_LINES)
    missing = [e for e in expected if not any(f.startswith(e) for f in findings)]
    unexpected = [f for f in findings if not any(f.startswith(e) for e in expected)]
    if missing or unexpected:
        print("layering self-test FAILED")
        for e in missing:
            print(f"  not reported: {e}")
        for f in unexpected:
            print(f"  reported wrongly: {f}")
        return 1
    print(f"layering self-test: all {len(expected)} planted violations reported")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser.add_argument("--max-lines", type=int, default=MAX_LINES)
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    findings = check(args.root, args.max_lines)
    for f in findings:
        print(f)
    if findings:
        print(f"layering: {len(findings)} finding(s); see docs/architecture.md")
        return 1
    print("layering: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
