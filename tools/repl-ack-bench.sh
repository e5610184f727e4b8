#!/bin/bash
# replica-ack-writes' cost (docs/replication.md, "Measured"): a Sluice primary and one replica,
# redis-benchmark -P 16 -c 50 GCRA.TAKE on random keys, the two modes (replica-ack-writes 0 and
# 1) alternated in one run, each run starting with the replica caught up; prints each run's
# rate, the load average, and the CPU both processes used (centiseconds).
#   tools/repl-ack-bench.sh [SLUICE_BINARY] [REQUESTS per run, 200000] [ROUNDS, 3] [BASE_PORT]
set -u
BIN=${1:-$(dirname "$(readlink -f "$0")")/../build/sluice-server}
N=${2:-200000}
R=${3:-3}
PP=${4:-27811}
RP=$((PP + 1))
D=$(mktemp -d /tmp/repl-ack-bench-XXXX)
"$BIN" --port "$PP" --dir "$D/p" >"$D/p.log" 2>&1 &
PRIMARY=$!
"$BIN" --port "$RP" --dir "$D/r" --replicaof "127.0.0.1 $PP" >"$D/r.log" 2>&1 &
REPLICA=$!
trap 'kill $PRIMARY $REPLICA 2>/dev/null; wait; rm -rf "$D"' EXIT
field() { redis-cli -p "$1" info replication 2>/dev/null | tr -d '\r' | grep "^$2:" | cut -d: -f2; }
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
for _ in $(seq 100); do
  [ "$(field "$RP" master_link_status)" = up ] && break
  sleep 0.2
done
for r in $(seq "$R"); do
  for mode in 0 1; do
    redis-cli -p "$PP" config set replica-ack-writes "$mode" >/dev/null
    for _ in $(seq 300); do  # the replica caught up
      [ "$(field "$PP" master_repl_offset)" = "$(field "$RP" slave_repl_offset)" ] && break
      sleep 0.1
    done
    p0=$(cpu $PRIMARY); r0=$(cpu $REPLICA)
    rate=$(redis-benchmark -p "$PP" -P 16 -c 50 -n "$N" -r 1000000 -q \
      GCRA.TAKE gcra:__rand_int__ 100 1s 2>&1 | tr '\r' '\n' | grep "requests per second" |
      tail -1 | sed 's/.*: //')
    echo "round $r replica-ack-writes $mode: $rate, load $(cut -d' ' -f1 /proc/loadavg)," \
      "cpu primary $(($(cpu $PRIMARY) - p0))cs replica $(($(cpu $REPLICA) - r0))cs"
  done
done
