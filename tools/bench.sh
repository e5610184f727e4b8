#!/usr/bin/env bash
# Side-by-side redis-benchmark of sluice-server and a local redis-server on this machine.
#
#   tools/bench.sh [--quick] [--sluice PATH] [--redis-server PATH] [--clients N[,N...]]
#                  [--appendfsync MODE[,MODE...]] [--pipelines P[,P...]] [--collections]
#                  [--scripts [NAME[,NAME...]]] [--repeat N] [--sluice-flags "FLAGS"] [--pin]
#
# For each durability MODE (default: everysec,always) both servers run on 127.0.0.1, free ports,
# fresh temporary data directories, with the same durability (Sluice appendfsync MODE; Redis
# appendonly yes, appendfsync MODE, no RDB snapshots). For each client count (default 50; a
# comma list sweeps) and pipeline (default 1,16) it measures:
#   PING, SET, GET, INCR                         on both servers;
#   GCRA.TAKE and CL.THROTTLE on 100k keys       on Sluice, against redis-server running the
#                                                equivalent GCRA Lua script (tools/bench/gcra.lua)
#                                                with EVALSHA.
# --collections adds LPUSH, LPOP, SADD, HSET, ZADD, ZRANGE (first 10 of a sorted set) and
# ZRANGEBYSCORE (11 scores from the middle) on one key per type, as redis-benchmark's own tests
# use them (one hot key: every call serializes on it), the same commands on both servers. The
# ZADDs leave ~100k members, each re-scored several times (docs/engine.md, "Hot collections").
# Then a sliding-window log on one key (tools/bench/sliding_window.lua, a 1 s window: EVALSHA of
# ZREMRANGEBYSCORE -inf, ZADD, ZCARD), the same script on both servers.
# --scripts measures the recognised library scripts instead (server/scripting/native/library_scripts/, all but
# limits' clear_keys, or the NAMEs given): SCRIPT LOAD of the exact body on both servers, then
# EVALSHA with the arguments the library sends, keys from 100k; Sluice runs them natively,
# redis-server interprets the Lua. Each writing script runs before the script that reads its
# keys, so reads find state.
# Prints one table: requests per second, the ratio Sluice/Redis, and p50/p99 latency in ms
# (redis-benchmark's). --quick runs about ten times fewer requests; `always` rows run 5x fewer.
# --repeat N (default 1) runs each row N times, alternating Sluice and Redis, and reports each
# side's median run (by requests per second): on a shared VM one run's ratio can swing 2x
# as neighbours come and go, and alternating spreads that noise over both sides.
# --sluice-flags adds FLAGS to sluice-server's command line (e.g. "--threads 1": on a machine
# whose cores the benchmark client shares, fewer I/O threads trade throughput for tail latency).
# --pin (a machine of 4+ cores): each server runs on the first half of the cores and
# redis-benchmark on the other half with one thread per core (taskset), so the client neither
# competes with the server nor limits it; runs are 8x longer, since redis-benchmark rounds its
# rate to a quarter second of run time. With --sluice-flags "--threads N" this measures how
# writes scale with Sluice's I/O threads (docs/engine.md, "Writes on many cores").
# Not a test: numbers depend on the machine and whatever else runs on it.
set -euo pipefail
cd "$(dirname "$0")/.."

sluice_bin=./build/sluice-server
redis_bin=$(command -v redis-server || true)
benchmark=$(command -v redis-benchmark || true)
cli=$(command -v redis-cli || true)
clients_list=50
quick=0
modes=everysec,always
pipelines=1,16
collections=0
scripts=""
repeat=1
sluice_flags=""
pin=0

usage() { sed -n '2,36p' "$0" | sed 's/^# \{0,1\}//'; }
while (($#)); do
  case "$1" in
    --quick) quick=1 ;;
    --collections) collections=1 ;;
    --pin) pin=1 ;;
    --scripts)
      scripts=all
      if [ $# -gt 1 ] && [ "${2#-}" = "$2" ]; then scripts=$2; shift; fi ;;
    --sluice) sluice_bin=$2; shift ;;
    --sluice-flags) sluice_flags=$2; shift ;;
    --redis-server) redis_bin=$2; shift ;;
    --clients) clients_list=$2; shift ;;
    --repeat) repeat=$2; shift
      [[ "$repeat" =~ ^[1-9][0-9]*$ ]] || { echo "bench: --repeat needs a positive count" >&2; exit 2; } ;;
    --pipelines) pipelines=$2; shift ;;
    --appendfsync) modes=$2; shift
      for m in ${modes//,/ }; do
        case "$m" in always|everysec|no) ;; *) echo "bench: --appendfsync always|everysec|no[,...]" >&2; exit 2 ;; esac
      done ;;
    -h|--help) usage; exit 0 ;;
    *) echo "bench: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
  shift
done

[ -x "$sluice_bin" ] || { echo "bench: no $sluice_bin; build it first with tools/setup.sh" >&2; exit 1; }
[ -n "$redis_bin" ] || { echo "bench: redis-server not found (apt-get install redis-server)" >&2; exit 1; }
[ -n "$benchmark" ] && [ -n "$cli" ] || { echo "bench: redis-benchmark/redis-cli not found (apt-get install redis-tools)" >&2; exit 1; }

server_pin=()
client_pin=()
client_threads=()
if ((pin)); then
  cores=$(nproc)
  ((cores >= 4)) || { echo "bench: --pin needs 4 or more cores (this machine has $cores)" >&2; exit 2; }
  command -v taskset >/dev/null || { echo "bench: --pin needs taskset (util-linux)" >&2; exit 1; }
  half=$((cores / 2))
  server_pin=(taskset -c "0-$((half - 1))")
  client_pin=(taskset -c "$half-$((cores - 1))")
  client_threads=(--threads "$half")
fi

# Requests per run: sized so each run takes a few seconds on a small machine.
if ((quick)); then n_p1=20000; n_p16=100000; n_lim_p1=20000; n_lim_p16=50000
else n_p1=200000; n_p16=1000000; n_lim_p1=100000; n_lim_p16=500000; fi

# The recognised scripts (name, body, EVALSHA arguments after the SHA1; __rand_int__ as
# redis-benchmark expands it), in run order: a writing script before the one reading its keys.
# Arguments as the libraries send them: rate-limiter-flexible 1 point per 60 s, limits 1 per 60 s
# (fixed window) and 10 per 60 s (moving window, at a fixed timestamp), rate-limit-redis and
# @fastify/rate-limit a 60 s window of 100, redis_rate 10 per second with a burst of 10, ulule 1
# per 60 s.
script_rows=(
  "rlf_incr_ttl|rate-limiter-flexible_incr_ttl.lua|1 rlf:__rand_int__ 1 60"
  "limits_incr_expire|limits_incr_expire.lua|1 lim:__rand_int__ 60 1"
  "rlr_increment|rate-limit-redis_increment.lua|1 rlr:__rand_int__ 60000"
  "rlr_get|rate-limit-redis_get.lua|1 rlr:__rand_int__"
  "fastify_incr|fastify-rate-limit_incr.lua|1 fst:__rand_int__ 60000 100 false false"
  "fastify_read|fastify-rate-limit_read.lua|1 fst:__rand_int__"
  "limits_acquire_mw|limits_acquire_moving_window.lua|1 mw:__rand_int__ 1700000000.5 10 60 1"
  "limits_moving_window|limits_moving_window.lua|1 mw:__rand_int__ 1699999990 10"
  "redis_rate_allow_n|redis_rate_allow_n.lua|1 rr:__rand_int__ 10 10 1 1"
  "redis_rate_allow_at_most|redis_rate_allow_at_most.lua|1 rr:__rand_int__ 10 10 1 1"
  "ulule_incr|ulule-limiter_incr.lua|1 ul:__rand_int__ 1 60000"
  "ulule_peek|ulule-limiter_peek.lua|1 ul:__rand_int__"
)
if [ -n "$scripts" ] && [ "$scripts" != all ]; then
  for name in ${scripts//,/ }; do
    known=0
    for r in "${script_rows[@]}"; do [ "${r%%|*}" = "$name" ] && known=1; done
    ((known)) || { echo "bench: unknown script $name (one of: $(printf '%s ' "${script_rows[@]%%|*}"))" >&2; exit 2; }
  done
fi
script_selected() {  # name
  [ "$scripts" = all ] || [[ ",$scripts," == *",$1,"* ]]
}

workdir=$(mktemp -d -t sluice-bench.XXXXXX)
sluice_pid=""
redis_pid=""
stop_servers() {
  [ -n "$sluice_pid" ] && kill "$sluice_pid" 2>/dev/null && wait "$sluice_pid" 2>/dev/null || true
  [ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null && wait "$redis_pid" 2>/dev/null || true
  sluice_pid=""
  redis_pid=""
}
cleanup() {
  stop_servers
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

start_servers() {  # mode
  stop_servers
  rm -rf "$workdir/sluice-data" "$workdir/redis-data"
  mkdir -p "$workdir/sluice-data" "$workdir/redis-data"
  sluice_port=$(free_port)
  "${server_pin[@]}" "$sluice_bin" --port "$sluice_port" --bind 127.0.0.1 --dir "$workdir/sluice-data" \
    --appendfsync "$1" $sluice_flags >"$workdir/sluice.log" 2>&1 &
  sluice_pid=$!
  redis_port=$(free_port)
  "${server_pin[@]}" "$redis_bin" --port "$redis_port" --bind 127.0.0.1 --dir "$workdir/redis-data" --save "" \
    --appendonly yes --appendfsync "$1" --daemonize no >"$workdir/redis.log" 2>&1 &
  redis_pid=$!
  wait_ready "$sluice_port" "$sluice_pid" sluice
  wait_ready "$redis_port" "$redis_pid" redis
  if [ -n "$scripts" ]; then
    load_scripts
    return
  fi
  sha=$("$cli" -p "$redis_port" SCRIPT LOAD "$(cat tools/bench/gcra.lua)")
  window_sha=$("$cli" -p "$redis_port" SCRIPT LOAD "$(cat tools/bench/sliding_window.lua)")
  [ "$("$cli" -p "$sluice_port" SCRIPT LOAD "$(cat tools/bench/sliding_window.lua)")" = "$window_sha" ] ||
    { echo "bench: sliding_window.lua: SCRIPT LOAD differs between the servers" >&2; exit 1; }
  # Self-check: both sides answer the same way on a fresh key.
  echo "bench: GCRA.TAKE on sluice: $("$cli" -p "$sluice_port" GCRA.TAKE bench:check 100 1s | tr '\n' ' ')" >&2
  echo "bench: gcra.lua on redis:   $("$cli" -p "$redis_port" EVALSHA "$sha" 1 bench:check 100 1000 100 1 | tr '\n' ' ')" >&2
}

declare -A script_sha
load_scripts() {  # SCRIPT LOAD every body on both servers; self-check one call of each
  local r name file args s_sha r_sha check
  for r in "${script_rows[@]}"; do
    IFS='|' read -r name file args <<<"$r"
    script_selected "$name" || continue
    s_sha=$("$cli" -p "$sluice_port" -x SCRIPT LOAD <"server/scripting/native/library_scripts/$file")
    r_sha=$("$cli" -p "$redis_port" -x SCRIPT LOAD <"server/scripting/native/library_scripts/$file")
    [ "$s_sha" = "$r_sha" ] || { echo "bench: $name: SCRIPT LOAD gave $s_sha on sluice, $r_sha on redis" >&2; exit 1; }
    script_sha[$name]=$s_sha
    # Self-check on a fresh key: the same reply from both (redis_rate's depends on the clock).
    check=${args//__rand_int__/check}
    # shellcheck disable=SC2086  # the arguments are split on spaces
    echo "bench: $name: sluice $("$cli" -p "$sluice_port" EVALSHA "$s_sha" $check | tr '\n' ' ')| redis $("$cli" -p "$redis_port" EVALSHA "$r_sha" $check | tr '\n' ' ')" >&2
  done
}

bench() {  # port requests pipeline command...   -> "rps p50_ms p99_ms"
  local port=$1 n=$2 pipeline=$3; shift 3
  "${client_pin[@]}" "$benchmark" "${client_threads[@]}" -h 127.0.0.1 -p "$port" -c "$clients" \
    -n "$n" -P "$pipeline" -r 100000 --csv "$@" \
    | tail -n 1 | tr -d '"' | awk -F, '{ printf "%d %s %s", $2, $5, $7 }'
}

median_run() {  # "rps p50 p99"...   -> the run with the median rps (the lower middle of an even count)
  printf '%s\n' "$@" | sort -n -k1,1 | sed -n "$(((${#} + 1) / 2))p"
}

rows=()
row() {  # label command-for-sluice... -- command-for-redis...   (uses mode, clients, p, n)
  local label=$1; shift
  local sluice_cmd=() redis_cmd=()
  while [ "$1" != "--" ]; do sluice_cmd+=("$1"); shift; done
  shift
  redis_cmd=("$@")
  local s r ratio i s_runs=() r_runs=()
  for ((i = 0; i < repeat; i++)); do
    s_runs+=("$(bench "$sluice_port" "$n" "$p" "${sluice_cmd[@]}")")
    r_runs+=("$(bench "$redis_port" "$n" "$p" "${redis_cmd[@]}")")
  done
  read -r s_rps s_p50 s_p99 <<<"$(median_run "${s_runs[@]}")"
  read -r r_rps r_p50 r_p99 <<<"$(median_run "${r_runs[@]}")"
  ratio=$(python3 -c "print('%.2f' % ($s_rps / $r_rps) if $r_rps > 0 else '-')")
  rows+=("$(printf '%-8s %7s %-32s %4s %10s %10s %6s %13s %13s' "$mode" "$clients" "$label" "$p" \
    "$s_rps" "$r_rps" "$ratio" "$s_p50/$s_p99" "$r_p50/$r_p99")")
  echo "bench: $mode c=$clients $label P=$p: sluice $s_rps, redis $r_rps" >&2
}

for mode in ${modes//,/ }; do
  start_servers "$mode"
  for clients in ${clients_list//,/ }; do
    for p in ${pipelines//,/ }; do
      if ((quick)); then n=$((p == 1 ? 20000 : 100000)); else n=$((p == 1 ? 200000 : 1000000)); fi
      [ "$mode" = always ] && n=$((n / 5))
      ((pin)) && n=$((n * 8))
      if [ -n "$scripts" ]; then
        n=$((n / 2))
        for r in "${script_rows[@]}"; do
          IFS='|' read -r name file args <<<"$r"
          script_selected "$name" || continue
          # shellcheck disable=SC2086  # the arguments are split on spaces
          row "EVALSHA $name" EVALSHA "${script_sha[$name]}" $args \
            -- EVALSHA "${script_sha[$name]}" $args
        done
        continue
      fi
      row "PING" PING -- PING
      row "SET key:<rand> (3-byte value)" SET key:__rand_int__ xxx -- SET key:__rand_int__ xxx
      row "GET key:<rand>" GET key:__rand_int__ -- GET key:__rand_int__
      row "INCR counter:<rand>" INCR counter:__rand_int__ -- INCR counter:__rand_int__
      n=$((n / 2))
      row "GCRA.TAKE vs EVALSHA gcra.lua" GCRA.TAKE gcra:__rand_int__ 100 1s \
        -- EVALSHA "$sha" 1 gcra:__rand_int__ 100 1000 100 1
      row "CL.THROTTLE vs EVALSHA gcra.lua" CL.THROTTLE cell:__rand_int__ 99 100 1 \
        -- EVALSHA "$sha" 1 cell:__rand_int__ 100 1000 100 1
      if ((collections)); then
        row "LPUSH mylist" LPUSH mylist xxx -- LPUSH mylist xxx
        row "LPOP mylist" LPOP mylist -- LPOP mylist
        row "SADD myset element:<rand>" SADD myset element:__rand_int__ \
          -- SADD myset element:__rand_int__
        row "HSET myhash element:<rand>" HSET myhash element:__rand_int__ xxx \
          -- HSET myhash element:__rand_int__ xxx
        row "ZADD myzset <rand> element:<rand>" ZADD myzset __rand_int__ element:__rand_int__ \
          -- ZADD myzset __rand_int__ element:__rand_int__
        row "ZRANGE myzset 0 9" ZRANGE myzset 0 9 -- ZRANGE myzset 0 9
        row "ZRANGEBYSCORE myzset 50000 50010" ZRANGEBYSCORE myzset 50000 50010 \
          -- ZRANGEBYSCORE myzset 50000 50010
        row "EVALSHA sliding_window.lua, one key" EVALSHA "$window_sha" 1 window 1000000 \
          __rand_int__ -- EVALSHA "$window_sha" 1 window 1000000 __rand_int__
      fi
    done
  done
done
stop_servers

echo
echo "redis-benchmark, keys from 100000 (-r 100000), $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ)"
echo "sluice-server: $("$sluice_bin" --version 2>/dev/null | head -n 1 || echo "$sluice_bin")${sluice_flags:+ $sluice_flags}"
echo "redis-server:  $("$redis_bin" --version | cut -d' ' -f3), appendonly yes, same appendfsync"
((pin)) && echo "servers on cores ${server_pin[2]}, redis-benchmark on cores ${client_pin[2]} with ${client_threads[1]} threads"
((repeat > 1)) && echo "each row: the median of $repeat runs per server, alternating"
[ -n "$scripts" ] && echo "EVALSHA of the recognised library scripts: native on Sluice, Lua on redis-server"
echo
printf '%-8s %7s %-32s %4s %10s %10s %6s %13s %13s\n' "fsync" "clients" "test" "P" \
  "sluice/s" "redis/s" "ratio" "sluice p50/99" "redis p50/99"
printf '%s\n' "${rows[@]}"
