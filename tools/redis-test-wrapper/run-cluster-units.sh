#!/bin/bash
# Runs Redis 7.0.15's own tests/cluster units one at a time, against Sluice (default) or a real
# redis-server (--reference), and prints one line per unit: name, ok/FAIL, the failed tests.
#
#   tools/redis-test-wrapper/run-cluster-units.sh [--reference] [--out DIR] [--base-port N]
#                                                 [UNIT ...]
#
# UNIT is a file name under tests/cluster/tests (00-base.tcl ...); none: all of them.
# The Redis tree is extracted (git archive, never copied into this repository) from the mirror
# /work/.mirror/redis+redis/repo (override: REDIS_REPO) into DIR (default /tmp/rt-$USER-cluster),
# with src/redis-server being this directory's wrapper (SLUICE_SERVER: build/sluice-server
# of this checkout) or /usr/bin/redis-server, and src/redis-cli Debian's redis-cli.
# The framework always starts 20 instances (tests/cluster/run.tcl has no option for fewer); the
# logs of each unit go to DIR/logs/<unit>.log. Units run one by one (the machine has 2 cores).
# --base-port (default 30000, the framework's; bus ports are 10000 above) moves the instances'
# 1024-port range by editing the extracted tests/instances.tcl, so that two runs (Sluice and the
# reference) or Redis's sentinel suite (also 30000) on the same machine do not take each
# other's ports: kill_instance waits for a killed node's port to be free, and fails when
# another run took it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
reference=0
base_port=30000
out=/tmp/rt-${USER:-sluice}-cluster
units=()
while [ $# -gt 0 ]; do
  case "$1" in
    --reference) reference=1 ;;
    --out) out=$2; shift ;;
    --base-port) base_port=$2; shift ;;
    *) units+=("$1") ;;
  esac
  shift
done
repo=${REDIS_REPO:-/work/.mirror/redis+redis/repo}
if [ ! -d "$out/tests/cluster" ]; then
  mkdir -p "$out"
  git -C "$repo" archive 7.0.15 tests runtest-cluster | tar -x -C "$out" || exit 1
fi
mkdir -p "$out/src" "$out/logs"
sed -i -E "s/^set ::redis_base_port [0-9]+/set ::redis_base_port $base_port/" \
  "$out/tests/instances.tcl"
ln -sf "$(command -v redis-cli)" "$out/src/redis-cli"
if [ $reference = 1 ]; then
  ln -sf "$(command -v redis-server)" "$out/src/redis-server"
else
  export SLUICE_SERVER=${SLUICE_SERVER:-$root/build/sluice-server}
  ln -sf "$here/redis-server" "$out/src/redis-server"
fi
if [ ${#units[@]} -eq 0 ]; then
  for f in "$out"/tests/cluster/tests/*.tcl; do units+=("$(basename "$f")"); done
fi
cd "$out" || exit 1
for u in "${units[@]}"; do
  log="$out/logs/$u.log"
  start=$(date +%s)
  timeout 1800 ./runtest-cluster --single "$u" >"$log" 2>&1
  rc=$?
  secs=$(($(date +%s) - start))
  failed=$(grep -a -E "FAILED|caught an error|Aborting" "$log" | head -3 | tr '\n' ' ')
  if [ $rc = 0 ]; then echo "$u ok ${secs}s"; else echo "$u FAIL(rc=$rc) ${secs}s $failed"; fi
done
