#!/usr/bin/env bash
# CPU cost per command, counted in instructions by valgrind's callgrind: sluice-server (one or
# two builds) side by side with redis-server, on the same commands.
#
#   tools/cost.sh [--sluice PATH] [--baseline PATH] [--baseline-flags "FLAGS"]
#                 [--redis-server PATH] [--requests N] [--appendfsync MODE] [--pipeline P]
#                 [--script NAME=FILE:ARGS]... [--sluice-lua] [--only-scripts] [--collections]
#
# Instruction counts do not depend on what else the machine runs, so this compares builds (a
# change's before/after: --baseline OLD_BINARY, or the same binary with other options:
# --baseline ./build/sluice-server --baseline-flags "--memtable rocksdb") and servers on a busy
# or shared machine, where tools/bench.sh's requests per second are noise. What it cannot show: waiting (fsync, locks,
# the network), and how work spreads over cores. For each server it starts the process under
# callgrind with instrumentation off, warms it up, then for each command turns it on, runs N
# requests from one redis-benchmark client (pipeline P, default 16, keys from 100k) and prints
# the server's instructions per request (EVALSHA: tools/bench/gcra.lua, where the server has
# scripting) (all its threads: I/O, RocksDB, background work).
# Default N=20000, appendfsync everysec (Redis: appendonly yes, same appendfsync). Redis is the
# redis-server on PATH; --redis-server '' leaves its column out.
# --script adds a row NAME: EVALSHA of FILE's exact bytes (SCRIPT LOAD) with ARGS (numkeys, keys,
# argv; __rand_int__ as redis-benchmark expands it), e.g. a recognised library script
# (server/scripting/native/library_scripts/). --sluice-lua adds a column: the same Sluice with native-scripts no
# (every script in Lua). --only-scripts measures only the --script rows.
# --collections adds tools/bench.sh's hot-key collection rows: LPUSH, SADD, HSET, ZADD on one key
# each (ZADD random scores and members from 100k, so most calls re-score a member), then ZRANGE
# myzset 0 9 on the sorted set ZADD wrote, after ZRANGE_FILL more ZADDs (default 400000, from 50
# clients, uninstrumented; ~100k members, each scored ~4 times, as tools/bench.sh --collections
# leaves it). ZRANGE counts 5000 requests at most: the measure ends within the 10 s after the last
# write that starts Sluice's idle flush (whose compaction would be counted too). Then XADD
# mystream * f v (one stream; the memtable's new-key order: entries come in ID order).
# Not a test: a benchmark that takes a few minutes (valgrind runs the server ~50x slower).
set -euo pipefail
cd "$(dirname "$0")/.."

sluice_bin=./build/sluice-server
baseline_bin=""
baseline_flags=""
redis_bin=$(command -v redis-server || true)
requests=20000
fsync_mode=everysec
pipeline=16
scripts=()
sluice_lua=0
only_scripts=0
collections=0

usage() { sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'; }
while (($#)); do
  case "$1" in
    --sluice) sluice_bin=$2; shift ;;
    --baseline) baseline_bin=$2; shift ;;
    --baseline-flags) baseline_flags=$2; shift ;;
    --redis-server) redis_bin=$2; shift ;;
    --requests) requests=$2; shift ;;
    --appendfsync) fsync_mode=$2; shift ;;
    --pipeline) pipeline=$2; shift ;;
    --script) scripts+=("$2"); shift ;;
    --sluice-lua) sluice_lua=1 ;;
    --only-scripts) only_scripts=1 ;;
    --collections) collections=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "cost: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
  shift
done
for tool in valgrind callgrind_control redis-benchmark redis-cli; do
  command -v "$tool" >/dev/null || { echo "cost: $tool not found (apt-get install valgrind redis-tools)" >&2; exit 1; }
done
[ -x "$sluice_bin" ] || { echo "cost: no $sluice_bin; build it first with tools/setup.sh" >&2; exit 1; }
# Checked before the minutes of measuring, not when its turn comes. --redis-server '' skips it.
if [ -n "$redis_bin" ] && ! "$redis_bin" --version 2>/dev/null | grep -q '^Redis server'; then
  echo "cost: '$redis_bin' is not a redis-server (--redis-server '' measures without Redis)" >&2
  exit 1
fi

workdir=$(mktemp -d -t sluice-cost.XXXXXX)
pid=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  rm -rf "$workdir"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Total instructions collected so far by the callgrind process $pid (dumps its counters).
instructions() {
  callgrind_control -d "$pid" >/dev/null
  local total=0 f
  for f in "$workdir"/callgrind.out.*; do
    [ -s "$f" ] || continue
    total=$((total + $(awk '/^totals:/ { print $2 }' "$f" | head -n 1)))
  done
  rm -f "$workdir"/callgrind.out.*
  echo "$total"
}

declare -A results
commands=("SET" "GET" "INCR" "GCRA.TAKE" "EVALSHA")
((only_scripts)) && commands=()
((collections)) && commands+=("LPUSH" "SADD" "HSET" "ZADD" "ZRANGE" "XADD")
declare -A script_file script_args
for spec in "${scripts[@]}"; do
  name=${spec%%=*}
  rest=${spec#*=}
  script_file[$name]=${rest%%:*}
  script_args[$name]=${rest#*:}
  if [ ! -f "${script_file[$name]}" ]; then
    echo "cost: no script file ${script_file[$name]}" >&2
    exit 2
  fi
  commands+=("$name")
done

measure() {  # name kind binary [extra server flags]
  local name=$1 kind=$2 bin=$3 port
  local extra=("${@:4}")
  port=$(free_port)
  mkdir -p "$workdir/data-$name"
  local args
  if [ "$kind" = redis ]; then
    args=(--port "$port" --bind 127.0.0.1 --dir "$workdir/data-$name" --save "" --appendonly yes
          --appendfsync "$fsync_mode" --daemonize no)
  else
    args=(--port "$port" --bind 127.0.0.1 --dir "$workdir/data-$name" --appendfsync "$fsync_mode"
          --threads 1 "${extra[@]}")
  fi
  valgrind --tool=callgrind --instr-atstart=no \
    --callgrind-out-file="$workdir/callgrind.out.%p" "$bin" "${args[@]}" \
    >"$workdir/$name.log" 2>&1 &
  pid=$!
  local deadline=$((SECONDS + 120))
  until [ "$(redis-cli -p "$port" PING 2>/dev/null || true)" = "PONG" ]; do
    kill -0 "$pid" 2>/dev/null || { echo "cost: $name exited; log:" >&2; cat "$workdir/$name.log" >&2; exit 1; }
    ((SECONDS < deadline)) || { echo "cost: $name did not start" >&2; exit 1; }
    sleep 0.5
  done
  # Servers without scripting skip the EVALSHA row.
  local sha
  sha=$(redis-cli -p "$port" -x SCRIPT LOAD <tools/bench/gcra.lua 2>/dev/null || true)
  case "$sha" in *ERR*|"") sha="" ;; esac
  local cmd
  for cmd in "${commands[@]}"; do
    local argv
    if [ -n "${script_file[$cmd]:-}" ]; then
      local ssha
      ssha=$(redis-cli -p "$port" -x SCRIPT LOAD <"${script_file[$cmd]}" 2>/dev/null || true)
      case "$ssha" in *ERR*|"") results["$name,$cmd"]=0; continue ;; esac
      # shellcheck disable=SC2206  # ARGS are split on spaces, as documented
      argv=(EVALSHA "$ssha" ${script_args[$cmd]})
    else
    case "$cmd" in
      SET) argv=(SET key:__rand_int__ xxx) ;;
      GET) argv=(GET key:__rand_int__) ;;
      INCR) argv=(INCR counter:__rand_int__) ;;
      GCRA.TAKE)
        if [ "$kind" = redis ]; then argv=(EVALSHA "$sha" 1 gcra:__rand_int__ 100 1000 100 1)
        else argv=(GCRA.TAKE gcra:__rand_int__ 100 1s); fi ;;
      EVALSHA)
        if [ -z "$sha" ]; then results["$name,$cmd"]=0; continue; fi
        argv=(EVALSHA "$sha" 1 gcra:__rand_int__ 100 1000 100 1) ;;
      LPUSH) argv=(LPUSH mylist xxx) ;;
      SADD) argv=(SADD myset element:__rand_int__) ;;
      HSET) argv=(HSET myhash element:__rand_int__ xxx) ;;
      ZADD) argv=(ZADD myzset __rand_int__ element:__rand_int__) ;;
      XADD) argv=(XADD mystream '*' f v) ;;
      ZRANGE)
        argv=(ZRANGE myzset 0 9)
        redis-benchmark -p "$port" -c 50 -n "${ZRANGE_FILL:-400000}" -P 16 -r 100000 \
          ZADD myzset __rand_int__ element:__rand_int__ >/dev/null ;;
    esac
    fi
    local n=$requests
    [ "$cmd" = ZRANGE ] && ((n > 5000)) && n=5000
    # Warm-up (uncounted), then the counted run.
    redis-benchmark -p "$port" -c 1 -n 2000 -P "$pipeline" -r 100000 "${argv[@]}" >/dev/null
    callgrind_control -i on "$pid" >/dev/null
    callgrind_control -z "$pid" >/dev/null
    redis-benchmark -p "$port" -c 1 -n "$n" -P "$pipeline" -r 100000 "${argv[@]}" >/dev/null
    local total
    total=$(instructions)
    callgrind_control -i off "$pid" >/dev/null
    results["$name,$cmd"]=$((total / n))
    echo "cost: $name $cmd: $((total / n)) instructions/request" >&2
  done
  kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  pid=""
}

measure sluice sluice "$sluice_bin"
((sluice_lua)) && measure sluice-lua sluice "$sluice_bin" --native-scripts no
# shellcheck disable=SC2086  # FLAGS are split on spaces, as documented
[ -n "$baseline_bin" ] && measure baseline sluice "$baseline_bin" $baseline_flags
[ -n "$redis_bin" ] && measure redis redis "$redis_bin"

echo
echo "instructions per request (callgrind), 1 client, pipeline $pipeline, $requests requests," \
  "appendfsync $fsync_mode; GCRA.TAKE on redis = EVALSHA tools/bench/gcra.lua"
header=$(printf '%-10s %12s' command sluice)
((sluice_lua)) && header+=$(printf ' %12s %9s' sluice-lua "vs lua")
[ -n "$baseline_bin" ] && header+=$(printf ' %12s %9s' baseline "vs base")
[ -n "$redis_bin" ] && header+=$(printf ' %12s %9s' redis "vs redis")
echo "$header"
for cmd in "${commands[@]}"; do
  s=${results["sluice,$cmd"]}
  line=$(printf '%-10s %12s' "$cmd" "$s")
  if ((sluice_lua)); then
    l=${results["sluice-lua,$cmd"]}
    line+=$(printf ' %12s %9s' "$l" "$(python3 -c "print('%.2fx' % ($s / $l) if $l else '-')")")
  fi
  if [ -n "$baseline_bin" ]; then
    b=${results["baseline,$cmd"]}
    line+=$(printf ' %12s %9s' "$b" "$(python3 -c "print('%.2fx' % ($s / $b) if $b else '-')")")
  fi
  if [ -n "$redis_bin" ]; then
    r=${results["redis,$cmd"]}
    line+=$(printf ' %12s %9s' "$r" "$(python3 -c "print('%.2fx' % ($s / $r) if $r else '-')")")
  fi
  echo "$line"
done
