#!/usr/bin/env bash
# Runs an instrumented sluice-server (a build configured with SLUICE_PGO_GENERATE, cmake/Pgo.cmake)
# through the work it is optimised for, so that its counts land in the profile directory.
#
#   tools/pgo-train.sh SERVER [--requests N]
#
# The workload is what users send most: strings and counters, the native limiters, the hot-key
# collection commands, sorted-set reads, streams, Lua scripts (the recognised library scripts and
# plain EVAL/EVALSHA of redis.call loops), MULTI/EXEC, and BullMQ's queue scripts when the Node
# test clients are installed (tools/setup.sh installs them before it builds). Each part runs
# pipelined and one request at a time, from redis-benchmark's 50 clients. The server is stopped
# with SHUTDOWN, which is when it writes its counts. N (default 20000) scales every part; about
# a minute on 2 cores. Progress goes to stderr, one line per part. Needs redis-benchmark and
# redis-cli (redis-tools). Exits non-zero when the server fails to start or to stop cleanly, or
# refuses a part's command (ctest's pgo_train runs it against the plain build to catch that).
set -euo pipefail
cd "$(dirname "$0")/.."

server=""
requests=20000
while (($#)); do
  case "$1" in
    --requests) requests=$2; shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "pgo-train: unknown option $1 (--help)" >&2; exit 2 ;;
    *) server=$1 ;;
  esac
  shift
done
[ -x "$server" ] || { echo "pgo-train: no server binary '$server' (--help)" >&2; exit 2; }

work=$(mktemp -d -t sluice-pgo-train.XXXXXX)
pid=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$server" --port "$port" --dir "$work/data" >"$work/server.log" 2>&1 &
pid=$!
cli=(redis-cli -p "$port")
for _ in $(seq 300); do
  "${cli[@]}" PING >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/server.log" >&2; echo "pgo-train: the server exited" >&2; exit 1; }
  sleep 0.1
done

part() {  # title, then redis-benchmark arguments (after -n, -P)
  local title=$1; shift
  echo "pgo-train: $title" >&2
  # A custom command is sent once first: one the server refuses (a changed syntax) would train
  # the optimiser on the error path, so it stops the training instead.
  if [ "$1" != -t ]; then
    local reply
    reply=$("${cli[@]}" "${@//__rand_int__/0}" 2>&1)
    if [[ "$reply" =~ ^(ERR|WRONGTYPE|NOSCRIPT|NOPERM)\  ]]; then
      echo "pgo-train: '$*' was refused: $reply" >&2
      exit 1
    fi
  fi
  for p in 16 1; do
    local n=$requests
    ((p == 1)) && n=$((requests / 4))
    redis-benchmark -p "$port" -c 50 -n "$n" -P "$p" -r 100000 -q "$@" >/dev/null
  done
}

part "strings and counters" -t set,get,incr,mset
part "lists, sets, hashes, sorted sets (one key each)" -t lpush,rpush,lpop,rpop,sadd,spop,hset,zadd,zpopmin,lrange_100
part "GCRA.TAKE" GCRA.TAKE gcra:__rand_int__ 100 1s
part "CL.THROTTLE" CL.THROTTLE cell:__rand_int__ 99 100 1
part "LEAKY.TAKE" LEAKY.TAKE leaky:__rand_int__ 100 1s
part "WINDOW.TAKE" WINDOW.TAKE win:__rand_int__ 100 1s
part "SLIDING.TAKE" SLIDING.TAKE slide:__rand_int__ 100 1s
part "CONC.ACQUIRE" CONC.ACQUIRE conc:__rand_int__ 1000000 10s
part "ZADD and ZRANGE" ZADD myzset __rand_int__ m:__rand_int__
part "ZRANGE" ZRANGE myzset 0 9
part "ZRANGEBYSCORE" ZRANGEBYSCORE myzset 50000 50010
part "HGET, HINCRBY" HINCRBY h:__rand_int__ f 1
part "EXPIRE, TTL" EXPIRE key:__rand_int__ 100
part "XADD" XADD mystream MAXLEN '~' 10000 '*' f __rand_int__
echo "pgo-train: MULTI/EXEC" >&2
for ((i = 0; i < requests / 4; i++)); do
  printf 'MULTI\r\nINCR tx:%d\r\nEXPIRE tx:%d 100\r\nEXEC\r\n' $((i % 1000)) $((i % 1000))
done | "${cli[@]}" --pipe >/dev/null

# Lua: a plain script (redis.call loop) and the recognised library scripts, by EVALSHA.
loop_sha=$("${cli[@]}" SCRIPT LOAD "local n = 0
for i = 1, 5 do n = n + redis.call('INCR', KEYS[1]) end
redis.call('HSET', KEYS[2], 'f', n)
return redis.call('HGET', KEYS[2], 'f')")
part "EVALSHA, a redis.call loop" EVALSHA "$loop_sha" 2 lua:__rand_int__ luah:__rand_int__
sha_of() { "${cli[@]}" -x SCRIPT LOAD <"server/scripting/native/library_scripts/$1"; }
part "library script: rate-limiter-flexible" EVALSHA "$(sha_of rate-limiter-flexible_incr_ttl.lua)" 1 rlf:__rand_int__ 1 60
part "library script: rate-limit-redis" EVALSHA "$(sha_of rate-limit-redis_increment.lua)" 1 rlr:__rand_int__ 60000
part "library script: @fastify/rate-limit" EVALSHA "$(sha_of fastify-rate-limit_incr.lua)" 1 fst:__rand_int__ 60000 100 false false
part "library script: limits" EVALSHA "$(sha_of limits_acquire_moving_window.lua)" 1 mw:__rand_int__ 1700000000.5 10 60 1

if [ -d tests/node/node_modules/bullmq ] && command -v node >/dev/null; then
  echo "pgo-train: BullMQ (queue and worker scripts)" >&2
  node tools/pgo-train-bullmq.mjs "$port" "$pid" $((requests / 10)) >&2
fi

echo "pgo-train: stopping the server (it writes its counts on exit)" >&2
"${cli[@]}" SHUTDOWN >/dev/null 2>&1 || true
for _ in $(seq 600); do
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "$pid" 2>/dev/null; then
  echo "pgo-train: the server did not stop within 60 s" >&2
  exit 1
fi
wait "$pid" || { echo "pgo-train: the server exited with status $?" >&2; cat "$work/server.log" >&2; exit 1; }
pid=""
