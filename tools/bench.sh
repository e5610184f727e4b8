#!/usr/bin/env bash
# Side-by-side redis-benchmark of sluice-server and a local redis-server on this machine.
#
#   tools/bench.sh [--quick] [--sluice PATH] [--redis-server PATH] [--clients N]
#                  [--appendfsync always|everysec|no]
#
# Both servers run on 127.0.0.1, free ports, fresh temporary data directories, with the same
# durability (Sluice appendfsync MODE; Redis appendonly yes, appendfsync MODE, no RDB
# snapshots; MODE is everysec unless --appendfsync says). Measured, 50 clients, pipeline 1, 16:
#   PING, SET, GET, INCR                         on both servers;
#   GCRA.TAKE and CL.THROTTLE on 100k keys       on Sluice, against redis-server running the
#                                                equivalent GCRA Lua script (tools/bench/gcra.lua)
#                                                with EVALSHA.
# Prints a table of requests per second. --quick runs about ten times fewer requests.
# Not a test: numbers depend on the machine and whatever else runs on it.
set -euo pipefail
cd "$(dirname "$0")/.."

sluice_bin=./build/sluice-server
redis_bin=$(command -v redis-server || true)
benchmark=$(command -v redis-benchmark || true)
cli=$(command -v redis-cli || true)
clients=50
quick=0
fsync_mode=everysec

usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; }
while (($#)); do
  case "$1" in
    --quick) quick=1 ;;
    --sluice) sluice_bin=$2; shift ;;
    --redis-server) redis_bin=$2; shift ;;
    --clients) clients=$2; shift ;;
    --appendfsync) fsync_mode=$2; shift
      case "$fsync_mode" in always|everysec|no) ;; *) echo "bench: --appendfsync always|everysec|no" >&2; exit 2 ;; esac ;;
    -h|--help) usage; exit 0 ;;
    *) echo "bench: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
  shift
done

[ -x "$sluice_bin" ] || { echo "bench: no $sluice_bin; build it first with tools/setup.sh" >&2; exit 1; }
[ -n "$redis_bin" ] || { echo "bench: redis-server not found (apt-get install redis-server)" >&2; exit 1; }
[ -n "$benchmark" ] && [ -n "$cli" ] || { echo "bench: redis-benchmark/redis-cli not found (apt-get install redis-tools)" >&2; exit 1; }

# Requests per run: sized so each run takes a few seconds on a small machine.
if ((quick)); then n_p1=20000; n_p16=100000; n_lim_p1=20000; n_lim_p16=50000
else n_p1=200000; n_p16=1000000; n_lim_p1=100000; n_lim_p16=500000; fi

workdir=$(mktemp -d -t sluice-bench.XXXXXX)
sluice_pid=""
redis_pid=""
cleanup() {
  [ -n "$sluice_pid" ] && kill "$sluice_pid" 2>/dev/null && wait "$sluice_pid" 2>/dev/null || true
  [ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null && wait "$redis_pid" 2>/dev/null || true
  rm -rf "$workdir"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_ready() {  # port pid name
  local deadline=$((SECONDS + 60))
  until [ "$("$cli" -p "$1" PING 2>/dev/null || true)" = "PONG" ]; do
    kill -0 "$2" 2>/dev/null || { echo "bench: $3 exited during start; log:" >&2; cat "$workdir/$3.log" >&2; exit 1; }
    ((SECONDS < deadline)) || { echo "bench: $3 did not start within 60 s" >&2; exit 1; }
    sleep 0.1
  done
}

sluice_port=$(free_port)
mkdir -p "$workdir/sluice-data" "$workdir/redis-data"
"$sluice_bin" --port "$sluice_port" --bind 127.0.0.1 --dir "$workdir/sluice-data" \
  --appendfsync "$fsync_mode" >"$workdir/sluice.log" 2>&1 &
sluice_pid=$!
redis_port=$(free_port)
"$redis_bin" --port "$redis_port" --bind 127.0.0.1 --dir "$workdir/redis-data" --save "" \
  --appendonly yes --appendfsync "$fsync_mode" --daemonize no >"$workdir/redis.log" 2>&1 &
redis_pid=$!
wait_ready "$sluice_port" "$sluice_pid" sluice
wait_ready "$redis_port" "$redis_pid" redis

sha=$("$cli" -p "$redis_port" SCRIPT LOAD "$(cat tools/bench/gcra.lua)")
# Self-check: both sides answer the same way on a fresh key.
echo "bench: GCRA.TAKE on sluice: $("$cli" -p "$sluice_port" GCRA.TAKE bench:check 100 1s | tr '\n' ' ')" >&2
echo "bench: gcra.lua on redis:   $("$cli" -p "$redis_port" EVALSHA "$sha" 1 bench:check 100 1000 100 1 | tr '\n' ' ')" >&2

rps() {  # port requests pipeline command...   -> requests per second
  local port=$1 n=$2 pipeline=$3; shift 3
  "$benchmark" -h 127.0.0.1 -p "$port" -c "$clients" -n "$n" -P "$pipeline" -r 100000 --csv "$@" \
    | tail -n 1 | cut -d, -f2 | tr -d '"'
}

rows=()
row() {  # label pipeline sluice_rps redis_rps
  local ratio
  ratio=$(python3 -c "print('%.2f' % ($3 / $4) if $4 > 0 else '-')")
  rows+=("$(printf '%-34s %8s %14s %14s %8s' "$1" "$2" "$3" "$4" "$ratio")")
  echo "bench: $1 P=$2: sluice $3, redis $4" >&2
}

for p in 1 16; do
  if ((p == 1)); then n=$n_p1; nl=$n_lim_p1; else n=$n_p16; nl=$n_lim_p16; fi
  row "PING" "$p" "$(rps "$sluice_port" "$n" "$p" PING)" "$(rps "$redis_port" "$n" "$p" PING)"
  row "SET key:<rand> (3-byte value)" "$p" \
    "$(rps "$sluice_port" "$n" "$p" SET key:__rand_int__ xxx)" \
    "$(rps "$redis_port" "$n" "$p" SET key:__rand_int__ xxx)"
  row "GET key:<rand>" "$p" \
    "$(rps "$sluice_port" "$n" "$p" GET key:__rand_int__)" \
    "$(rps "$redis_port" "$n" "$p" GET key:__rand_int__)"
  row "INCR counter:<rand>" "$p" \
    "$(rps "$sluice_port" "$n" "$p" INCR counter:__rand_int__)" \
    "$(rps "$redis_port" "$n" "$p" INCR counter:__rand_int__)"
  row "GCRA.TAKE vs EVALSHA gcra.lua" "$p" \
    "$(rps "$sluice_port" "$nl" "$p" GCRA.TAKE gcra:__rand_int__ 100 1s)" \
    "$(rps "$redis_port" "$nl" "$p" EVALSHA "$sha" 1 gcra:__rand_int__ 100 1000 100 1)"
  row "CL.THROTTLE vs EVALSHA gcra.lua" "$p" \
    "$(rps "$sluice_port" "$nl" "$p" CL.THROTTLE cell:__rand_int__ 99 100 1)" \
    "$(rps "$redis_port" "$nl" "$p" EVALSHA "$sha" 1 cell:__rand_int__ 100 1000 100 1)"
done

echo
echo "redis-benchmark, $clients clients, keys from 100000 (-r 100000), $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ)"
echo "sluice-server: $("$sluice_bin" --version 2>/dev/null | head -n 1 || echo "$sluice_bin"), appendfsync $fsync_mode"
echo "redis-server:  $("$redis_bin" --version | cut -d' ' -f3), appendonly yes, appendfsync $fsync_mode"
echo
printf '%-34s %8s %14s %14s %8s\n' "test (requests/second)" "pipeline" "sluice" "redis" "ratio"
printf '%s\n' "${rows[@]}"
