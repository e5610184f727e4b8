#!/usr/bin/env bash
# Scale benchmark: many live limiter keys loaded, then limiter throughput at each size.
#
#   tools/scale.sh [--steps N1,N2,...] [--calls C] [--pipeline P] [--clients C] [--idle S]
#                  [--restart] [--block-cache-size SIZE] [--sluice PATH] [--keep DIR]
#
# Loads distinct GCRA limiter keys (GCRA.TAKE scale:<12 digits> 10 1d: each key lives 2.4 h, so
# every key loaded stays live) into one fresh sluice-server, in order, up to each step of
# --steps (default 1000000,10000000,100000000). At each step it waits until RocksDB's
# background work (flushes, compactions) is done, then runs C calls (default 2,000,000) of
# GCRA.TAKE on keys drawn at random from all the keys loaded (pipeline P=16, 50 clients) and
# prints calls/s, p99, the server's RSS, the data directory's size and bytes per key, and the
# throughput as a share of the first step's. Finally the server is left idle for S=30 s and its
# CPU over the last 20 s is printed. --restart then stops the server cleanly (SHUTDOWN), starts
# it again on the same data, prints what its log says of the expiry cycle's state, runs the C
# calls again and measures idle the same way: an idle server should cost nothing after a restart
# either (the store saves its expiry state after 30 s without a write: with --idle 60 or more
# the measured window starts after that save).
# Keys are sent by a generator piped into `redis-cli --pipe` (progress lines on stderr every
# 10M keys). The server runs with its defaults (appendfsync everysec) and
# --block-cache-size SIZE when given, in a fresh temporary directory (--keep DIR: in DIR, kept
# afterwards). Not a test: 100M keys take the better part of an hour on a 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."

sluice_bin=./build/sluice-server
steps=1000000,10000000,100000000
calls=2000000
pipeline=16
clients=50
idle=30
keep=""
cache=""
restart=0

usage() { sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; }
need() { [ $# -ge 2 ] || { echo "scale: $1 needs a value" >&2; exit 2; }; }
while (($#)); do
  case "$1" in
    --steps) need "$@"; steps=$2; shift ;;
    --calls) need "$@"; calls=$2; shift ;;
    --pipeline) need "$@"; pipeline=$2; shift ;;
    --clients) need "$@"; clients=$2; shift ;;
    --idle) need "$@"; idle=$2; shift ;;
    --restart) restart=1 ;;
    --block-cache-size) need "$@"; cache=$2; shift ;;
    --sluice) need "$@"; sluice_bin=$2; shift ;;
    --keep) need "$@"; keep=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "scale: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
  shift
done
IFS=, read -r -a step_list <<<"$steps"
prev=0
for n in "${step_list[@]}" "$calls" "$pipeline" "$clients" "$idle"; do
  [[ "$n" =~ ^[0-9]+$ ]] || { echo "scale: '$n' is not a non-negative integer" >&2; exit 2; }
done
for n in "${step_list[@]}"; do
  ((n > prev)) || { echo "scale: --steps must increase" >&2; exit 2; }
  prev=$n
done
((prev < 1000000000000)) || { echo "scale: at most 10^12 keys (12 digits)" >&2; exit 2; }
benchmark=$(command -v redis-benchmark) || { echo "scale: redis-benchmark not found (apt-get install redis-tools)" >&2; exit 1; }
tool=scale
# shellcheck source=tools/bench/server.sh
. tools/bench/server.sh
extra=()
[ -n "$cache" ] && extra=(--block-cache-size "$cache")
start_server "${extra[@]}"
disk_bytes() { du -sb "$workdir/data" | cut -f1; }

# Sends GCRA.TAKE for keys [from, to) through redis-cli --pipe.
load() {
  python3 - "$1" "$2" <<'EOF' | "$cli" -p "$port" --pipe >/dev/null
import sys
first, end = int(sys.argv[1]), int(sys.argv[2])
out = sys.stdout.buffer
command = b"*4\r\n$9\r\nGCRA.TAKE\r\n$18\r\nscale:%012d\r\n$2\r\n10\r\n$2\r\n1d\r\n"
chunk = 10000
for a in range(first, end, chunk):
    out.write(b"".join(command % i for i in range(a, min(a + chunk, end))))
    if (a + chunk) % 10000000 < chunk:
        print("scale: %d keys sent" % min(a + chunk, end), file=sys.stderr, flush=True)
EOF
}

# Until RocksDB has no flush or compaction running or pending (at most 30 minutes).
settle() {
  local deadline=$((SECONDS + 1800)) busy
  while ((SECONDS < deadline)); do
    busy=$("$cli" -p "$port" INFO persistence | tr -d '\r' |
           awk -F: '/^sluice_background_(running|pending)/ {s += $2} END {print s + 0}')
    [ "$busy" = 0 ] && return 0
    sleep 2
  done
}

# Runs the C calls on keys drawn from those loaded; sets rps and p99.
run_calls() {
  run_benchmark -c "$clients" -n "$calls" -P "$pipeline" -r "$loaded" GCRA.TAKE scale:__rand_int__ 10 1d
}

# Leaves the server idle for S seconds and prints its CPU over the last 20 (or all S).
measure_idle() {
  ((idle > 0)) || return 0
  local hz t0 t1 window
  hz=$(getconf CLK_TCK)
  sleep $((idle > 20 ? idle - 20 : 0))
  t0=$(cpu_ticks)
  sleep $((idle < 20 ? idle : 20))
  t1=$(cpu_ticks)
  window=$((idle < 20 ? idle : 20))
  echo "scale: idle CPU over the last ${window}s of ${idle}s idle: $(python3 -c "print('%.1f%%' % (100.0 * ($t1 - $t0) / $hz / $window))") of one core; rss $(rss_mb) MB"
}

echo "scale: GCRA.TAKE scale:<12 digits> 10 1d, steps $steps, $calls calls per step at pipeline $pipeline from $clients clients, $(nproc) cores${cache:+, block-cache-size $cache}"
printf '%12s %10s %9s %8s %9s %8s %8s %9s\n' "keys" "calls/s" "p99_ms" "rss_mb" "disk_mb" "B/key" "of_first" "load_s"
loaded=0
first=""
for n in "${step_list[@]}"; do
  t0=$SECONDS
  load "$loaded" "$n"
  loaded=$n
  settle
  load_s=$((SECONDS - t0))
  run_calls
  [ -n "$first" ] || first=$rps
  bytes=$(disk_bytes)
  printf '%12d %10.0f %9s %8s %9.0f %8.1f %8.2f %9d\n' "$loaded" "$rps" "$p99" "$(rss_mb)" \
    "$(python3 -c "print($bytes / 1048576)")" "$(python3 -c "print($bytes / $loaded)")" \
    "$(python3 -c "print($rps / $first)")" "$load_s"
done
echo "scale: dbsize $("$cli" -p "$port" DBSIZE)"

measure_idle
if ((restart)); then
  stop_server
  start_wait=1800
  start_server "${extra[@]}"
  state=$(grep -o 'expiry: .*' "$workdir/sluice.log" | tr '\n' ' ' || true)
  echo "scale: restarted: ${state:-no saved expiry state found}"
  run_calls
  printf 'scale: after the restart %d calls at %.0f calls/s, p99 %s ms, rss %s MB\n' "$calls" "$rps" \
    "$p99" "$(rss_mb)"
  measure_idle
fi
