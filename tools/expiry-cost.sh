#!/usr/bin/env bash
# CPU cost of removing expired keys, counted in instructions by valgrind's callgrind.
#
#   tools/expiry-cost.sh [--sluice PATH] [--keys N] [--persistent M] [--keep-profile FILE]
#
# Loads N keys with a TTL (default 20,000; SET exp:<i> x PX 1h) and M keys without one
# (default 0) into a fresh data dir, restarts sluice-server under callgrind (RocksDB flushes the
# replayed log to a table file at open, so the keys are in an SST as after a long run), moves the
# server clock past every expiry (DEBUG CLOCK ADVANCE, then 1 s per second) and counts
# instructions from then until DBSIZE is M: in the active expiry cycle (ExpiryCycle::Run, inclusive) and in the
# whole process (RocksDB's flushes and compactions of the deletion markers included), per
# removed key. --keep-profile copies the callgrind profile for callgrind_annotate.
# Not a test: takes a minute or two (valgrind runs the server ~50x slower).
set -euo pipefail
cd "$(dirname "$0")/.."

sluice_bin=./build/sluice-server
keys=20000
persistent=0
keep_profile=""

usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; }
need() { [ $# -ge 2 ] || { echo "expiry-cost: $1 needs a value" >&2; exit 2; }; }
while (($#)); do
  case "$1" in
    --sluice) need "$@"; sluice_bin=$2; shift ;;
    --keys) need "$@"; keys=$2; shift ;;
    --persistent) need "$@"; persistent=$2; shift ;;
    --keep-profile) need "$@"; keep_profile=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "expiry-cost: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
  shift
done
for n in "$keys" "$persistent"; do
  [[ "$n" =~ ^[0-9]+$ ]] || { echo "expiry-cost: '$n' is not a non-negative integer" >&2; exit 2; }
done
((keys > 0)) || { echo "expiry-cost: --keys must be positive" >&2; exit 2; }
for tool in valgrind callgrind_control callgrind_annotate redis-cli python3; do
  command -v "$tool" >/dev/null || { echo "expiry-cost: $tool not found" >&2; exit 1; }
done
[ -x "$sluice_bin" ] || { echo "expiry-cost: no $sluice_bin; build it first" >&2; exit 1; }

workdir=$(mktemp -d -t sluice-expiry-cost.XXXXXX)
pid=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  rm -rf "$workdir"
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cli() { redis-cli -p "$port" "$@"; }
wait_ready() {
  local deadline=$((SECONDS + 180))
  until [ "$(cli PING 2>/dev/null || true)" = "PONG" ]; do
    kill -0 "$pid" 2>/dev/null || { echo "expiry-cost: server exited; log:" >&2; cat "$workdir/server.log" >&2; exit 1; }
    ((SECONDS < deadline)) || { echo "expiry-cost: server did not start" >&2; exit 1; }
    sleep 0.2
  done
}
stop() {
  cli SHUTDOWN >/dev/null 2>&1 || true
  wait "$pid" 2>/dev/null || true
  pid=""
}
args=(--port "$port" --bind 127.0.0.1 --dir "$workdir/data" --enable-debug-command yes)

"$sluice_bin" "${args[@]}" >"$workdir/server.log" 2>&1 &
pid=$!
wait_ready
python3 - "$keys" "$persistent" <<'EOF' | cli --pipe >/dev/null
import sys
n, m = int(sys.argv[1]), int(sys.argv[2])
out = sys.stdout
def cmd(*parts):
    out.write("*%d\r\n" % len(parts))
    for p in parts:
        out.write("$%d\r\n%s\r\n" % (len(p), p))
for i in range(n):
    cmd("SET", "exp:%d" % i, "x", "PX", "3600000")
for i in range(m):
    cmd("SET", "keep:%d" % i, "x")
EOF
[ "$(cli DBSIZE)" = "$((keys + persistent))" ] || { echo "expiry-cost: load failed: dbsize $(cli DBSIZE)" >&2; exit 1; }
stop

valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$workdir/callgrind.out" \
  "$sluice_bin" "${args[@]}" >"$workdir/server.log" 2>&1 &
pid=$!
wait_ready
callgrind_control -i on "$pid" >/dev/null 2>&1
callgrind_control -z "$pid" >/dev/null 2>&1
cli DEBUG CLOCK ADVANCE 3700000 >/dev/null
start=$SECONDS
until [ "$(cli DBSIZE)" = "$persistent" ]; do
  ((SECONDS - start < 1800)) || { echo "expiry-cost: keys not removed after 30 min: dbsize $(cli DBSIZE)" >&2; exit 1; }
  sleep 1
  cli DEBUG CLOCK ADVANCE 1000 >/dev/null  # the manual clock stands still otherwise
done
elapsed=$((SECONDS - start))
rm -f "$workdir"/callgrind.out*
callgrind_control -d "$pid" >/dev/null 2>&1
profile=$(ls "$workdir"/callgrind.out* | head -n 1)
mv "$profile" "$workdir/profile"
profile=$workdir/profile
stop
total=$(awk '/^totals:/ { print $2 }' "$profile" | head -n 1)
cycle=$(callgrind_annotate --inclusive=yes "$profile" 2>/dev/null |
          awk '/RunExpiryCycle/ && !done { gsub(",", "", $1); print $1; done = 1 }')
if [ -n "$keep_profile" ]; then cp "$profile" "$keep_profile"; fi
echo "expiry-cost: $keys expired keys (+$persistent persistent) removed in ${elapsed}s under callgrind"
echo "expiry-cost: instructions per removed key: expiry cycle $((${cycle:-0} / keys)), whole process $((total / keys))"
