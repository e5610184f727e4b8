#!/usr/bin/env bash
# Churn soak benchmark: many short-lived limiter keys, for a long time, on one sluice-server.
#
#   tools/soak.sh [--minutes M | --calls N] [--keys K] [--quota Q] [--period P] [--interval I]
#                 [--pipeline P] [--clients C] [--idle S] [--sluice PATH] [--keep DIR]
#                 [--config NAME=VALUE ...]
#
# Defaults: 10 minutes of GCRA.TAKE soak:<rand> Q=100 per P=1h at pipeline 16 from 50 clients,
# keys drawn from K=10,000,000 (each key lives period/quota = 36 s after each take: at 100k
# calls/s some 3M keys are live at once), reported every I=200,000 calls; --calls N: N calls.
# Each interval prints: calls so far, calls/s, p99 latency (ms), the server's RSS, the data
# directory's disk use, the share of the first interval's rate, the keys stored (DBSIZE: live
# ones and expired ones not yet removed) and the expiry cycle's CPU ms in the interval. After
# the churn, the server is left idle for S=30 s: every 10 s, DBSIZE and its CPU use, then when
# DBSIZE reached 0 and the CPU over the last 20 s (an idle server should cost nothing, whatever
# came before).
# The server runs with its defaults (appendfsync everysec; DEBUG allowed, for DEBUG KEYSPACE-CHECK
# when keys remain at the end), each --config NAME=VALUE given as --NAME VALUE (e.g.
# --config active-expire-effort=10), in a fresh temporary directory
# (--keep DIR: in DIR, kept afterwards); should it die during a run, the soak stops with the end
# of its log. Not a test: numbers depend on the machine.
set -euo pipefail
cd "$(dirname "$0")/.."

sluice_bin=./build/sluice-server
minutes=10
calls=0
keys=10000000
quota=100
period=1h
interval=200000
pipeline=16
clients=50
idle=30
keep=""
server_flags=()

usage() { sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; }
need() { [ $# -ge 2 ] || { echo "soak: $1 needs a value" >&2; exit 2; }; }
while (($#)); do
  case "$1" in
    --minutes) need "$@"; minutes=$2; calls=0; shift ;;
    --calls) need "$@"; calls=$2; shift ;;
    --keys) need "$@"; keys=$2; shift ;;
    --quota) need "$@"; quota=$2; shift ;;
    --period) need "$@"; period=$2; shift ;;
    --interval) need "$@"; interval=$2; shift ;;
    --pipeline) need "$@"; pipeline=$2; shift ;;
    --clients) need "$@"; clients=$2; shift ;;
    --idle) need "$@"; idle=$2; shift ;;
    --sluice) need "$@"; sluice_bin=$2; shift ;;
    --keep) need "$@"; keep=$2; shift ;;
    --config)
      need "$@"
      [[ "$2" == ?*=* ]] || { echo "soak: --config needs NAME=VALUE" >&2; exit 2; }
      server_flags+=("--${2%%=*}" "${2#*=}"); shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "soak: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
  shift
done
for n in "$minutes" "$calls" "$keys" "$quota" "$interval" "$pipeline" "$clients" "$idle"; do
  [[ "$n" =~ ^[0-9]+$ ]] || { echo "soak: '$n' is not a non-negative integer" >&2; exit 2; }
done
((interval > 0 && keys > 0 && clients > 0 && pipeline > 0)) || { echo "soak: interval, keys, clients and pipeline must be positive" >&2; exit 2; }
benchmark=$(command -v redis-benchmark) || { echo "soak: redis-benchmark not found (apt-get install redis-tools)" >&2; exit 1; }
tool=soak
# shellcheck source=tools/bench/server.sh
. tools/bench/server.sh
start_server --enable-debug-command yes "${server_flags[@]}"

echo "soak: GCRA.TAKE soak:<rand> $quota $period, keys from $keys, pipeline $pipeline, $clients clients, $(nproc) cores"
if ((calls > 0)); then echo "soak: until $calls calls"; else echo "soak: for $minutes minutes"; fi
printf '%12s %10s %9s %8s %8s %8s %10s %9s\n' "calls" "calls/s" "p99_ms" "rss_mb" "disk_mb" "of_first" "dbsize" "cycle_ms"
# The expiry cycle's CPU so far (INFO's expire_cycle_cpu_milliseconds).
expire_cycle_ms() {
  "$cli" -p "$port" INFO stats | tr -d '\r' | sed -n 's/^expire_cycle_cpu_milliseconds://p'
}
last_cycle_ms=0
done_calls=0
first=""
worst=""
start=$SECONDS
while :; do
  if ((calls > 0)); then ((done_calls < calls)) || break; else ((SECONDS - start < minutes * 60)) || break; fi
  run_benchmark -c "$clients" -n "$interval" -P "$pipeline" -r "$keys" \
    GCRA.TAKE soak:__rand_int__ "$quota" "$period"
  done_calls=$((done_calls + interval))
  [ -n "$first" ] || first=$rps
  share=$(python3 -c "print('%.2f' % ($rps / $first))")
  if [ -z "$worst" ] || python3 -c "import sys; sys.exit(0 if $share < $worst else 1)"; then worst=$share; fi
  cycle_ms=$(expire_cycle_ms)
  printf '%12d %10.0f %9s %8s %8s %8s %10s %9s\n' "$done_calls" "$rps" "$p99" "$(rss_mb)" "$(disk_mb)" \
    "$share" "$("$cli" -p "$port" DBSIZE)" "$((cycle_ms - last_cycle_ms))"
  last_cycle_ms=$cycle_ms
done
echo "soak: $done_calls calls; worst interval $worst of the first; dbsize $("$cli" -p "$port" DBSIZE)"

# The idle period, in steps of up to 10 s: DBSIZE and the server's CPU over each step (the
# expiry cycle removing what expired, then nothing), when DBSIZE reached 0, and the CPU over the
# last 20 s.
if ((idle > 0)); then
  hz=$(getconf CLK_TCK)
  pct() { python3 -c "print('%.1f%%' % (100.0 * $1 / $hz / $2))"; }
  printf '%8s %10s %8s\n' "idle_s" "dbsize" "cpu"
  t=0
  emptied=""
  times=(0)
  ticks=("$(cpu_ticks)")
  while ((t < idle)); do
    step=$((idle - t < 10 ? idle - t : 10))
    sleep "$step"
    t=$((t + step))
    times+=("$t")
    ticks+=("$(cpu_ticks)")
    size=$("$cli" -p "$port" DBSIZE)
    n=${#ticks[@]}
    printf '%8d %10s %8s\n' "$t" "$size" "$(pct $((ticks[n - 1] - ticks[n - 2])) "$step")"
    if [ -z "$emptied" ] && [ "$size" = 0 ]; then emptied=$t; fi
  done
  # The CPU over the last (up to) 20 s: from the last step boundary at or before idle - 20.
  i=0
  for ((j = 0; j < ${#times[@]}; j++)); do ((times[j] <= idle - 20)) && i=$j; done
  window=$((idle - times[i]))
  echo "soak: dbsize 0 after ${emptied:-more than $idle} s idle"
  # DBSIZE counts expired keys until they are removed: the live ones are what SCAN returns.
  if ((size > 0 && size <= 100000)); then
    echo "soak: dbsize $size at the end, $("$cli" -p "$port" --scan | wc -l) of them live (not yet expired)"
  fi
  # The maintained counts against a walk of what is stored (expired keys not yet removed
  # included): a difference is a bug, not slow expiry.
  if ((size > 0)); then echo "soak: keyspace check: $("$cli" -p "$port" DEBUG KEYSPACE-CHECK)"; fi
  echo "soak: idle CPU over the last ${window}s of ${idle}s idle: $(pct $((ticks[${#ticks[@]} - 1] - ticks[i])) "$window") of one core; rss $(rss_mb) MB, disk $(disk_mb) MB"
fi
