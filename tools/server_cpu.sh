#!/usr/bin/env bash
# Server CPU per request: sluice-server beside a local redis-server, the same requests to each.
#
#   tools/server_cpu.sh [--sluice PATH] [--redis-server PATH] [--tests set,get,incr]
#                       [--pipeline 16] [--requests 1000000] [--repeat 3] [--sluice-flags "FLAGS"]
#
# Starts both servers on free ports in fresh temporary directories with the same durability
# (Sluice appendfsync everysec, its default; Redis appendonly yes, appendfsync everysec), then
# for each redis-benchmark test (-t NAME; 50 clients, keys from 100k) runs REQUESTS requests
# against each server in turn, REPEAT times alternating, and reads each server's CPU time (user
# + system of the whole process, /proc/PID/stat) around every run. Prints per test the median
# CPU microseconds per request of each server and Redis's over Sluice's (issue 44's row: above 1,
# Sluice costs less). CPU per request does not depend on how fast the machine is this minute the
# way requests per second do, but it does include Sluice's background threads (flushes,
# compactions) and each server's kernel time. Not a test: numbers depend on the machine.
set -euo pipefail
cd "$(dirname "$0")/.."

sluice_bin=./build/sluice-server
redis_bin=$(command -v redis-server || true)
benchmark=$(command -v redis-benchmark || true)
tests=set,get,incr
pipeline=16
requests=1000000
repeat=3
sluice_flags=""

usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; }
need() { [ $# -ge 2 ] || { echo "server_cpu: $1 needs a value" >&2; exit 2; }; }
while (($#)); do
  case "$1" in
    --sluice) need "$@"; sluice_bin=$2; shift ;;
    --redis-server) need "$@"; redis_bin=$2; shift ;;
    --tests) need "$@"; tests=$2; shift ;;
    --pipeline) need "$@"; pipeline=$2; shift ;;
    --requests) need "$@"; requests=$2; shift ;;
    --repeat) need "$@"; repeat=$2; shift ;;
    --sluice-flags) need "$@"; sluice_flags=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "server_cpu: unknown option $1 (--help)" >&2; exit 2 ;;
  esac
  shift
done
[ -x "$sluice_bin" ] || { echo "server_cpu: no sluice-server at $sluice_bin (build first)" >&2; exit 2; }
[ -n "$redis_bin" ] && [ -n "$benchmark" ] || { echo "server_cpu: needs redis-server and redis-benchmark" >&2; exit 2; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/sluice-server-cpu-XXXXXX")
sluice_pid=""
redis_pid=""
cleanup() {
  [ -n "$sluice_pid" ] && kill "$sluice_pid" 2>/dev/null || true
  [ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

sluice_port=$(free_port)
redis_port=$(free_port)
mkdir -p "$dir/sluice" "$dir/redis"
# shellcheck disable=SC2086  # FLAGS is a list of words
"$sluice_bin" --port "$sluice_port" --dir "$dir/sluice" $sluice_flags >"$dir/sluice.log" 2>&1 &
sluice_pid=$!
"$redis_bin" --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly yes \
  --appendfsync everysec --dir "$dir/redis" >"$dir/redis.log" 2>&1 &
redis_pid=$!
for port in "$sluice_port" "$redis_port"; do
  for _ in $(seq 100); do
    redis-cli -p "$port" PING >/dev/null 2>&1 && break
    sleep 0.1
  done
  if ! redis-cli -p "$port" PING >/dev/null 2>&1; then
    echo "server_cpu: the server on port $port did not start; the ends of the logs:" >&2
    tail -n 5 "$dir/sluice.log" "$dir/redis.log" >&2
    exit 1
  fi
done

tick=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# One run: CPU microseconds per request of the server at PID/PORT for redis-benchmark test T.
run() {
  local pid=$1 port=$2 t=$3 c0 c1
  c0=$(cpu_ticks "$pid")
  "$benchmark" -p "$port" -c 50 -P "$pipeline" -n "$requests" -r 100000 -q -t "$t" >/dev/null
  c1=$(cpu_ticks "$pid")
  echo "scale=3; ($c1 - $c0) * 1000000 / $tick / $requests" | bc
}
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

echo "server CPU per request: $repeat runs of $requests requests per server and test," \
  "50 clients, pipeline $pipeline, $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ)"
printf '%-8s %12s %12s %16s\n' test "sluice us" "redis us" "redis/sluice"
IFS=, read -r -a names <<<"$tests"
for t in "${names[@]}"; do
  s_runs=()
  r_runs=()
  for _ in $(seq "$repeat"); do
    s_runs+=("$(run "$sluice_pid" "$sluice_port" "$t")")
    r_runs+=("$(run "$redis_pid" "$redis_port" "$t")")
  done
  s=$(printf '%s\n' "${s_runs[@]}" | median)
  r=$(printf '%s\n' "${r_runs[@]}" | median)
  printf '%-8s %12.2f %12.2f %16.2f\n' "$t" "$s" "$r" "$(echo "scale=3; $r / $s" | bc)"
done
