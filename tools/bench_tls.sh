#!/usr/bin/env bash
# GCRA.TAKE over TLS against plain TCP on sluice-server, and against a local redis-server 7.0
# over TLS running the equivalent GCRA Lua script (tools/bench/gcra.lua, EVALSHA), in one run:
# issue 43's goals (TLS >= 0.7x of plain, >= Redis over TLS). Certificates are made with
# openssl in a temporary directory; clients present a client certificate (tls-auth-clients yes).
#
#   tools/bench_tls.sh [--requests N] [--clients N] [--pipeline N] [--repeat N]
#
# Prints one line per row (the median of --repeat runs, interleaved): calls/s, and the server's
# CPU time per call (from /proc, so less sensitive than calls/s to what else runs on a shared
# machine), then the ratios. Needs redis-benchmark built with TLS (Debian's is).
set -euo pipefail
cd "$(dirname "$0")/.."

n=200000
clients=50
pipeline=16
repeat=3
while (($#)); do
  case $1 in
    --requests) n=$2; shift ;;
    --clients) clients=$2; shift ;;
    --pipeline) pipeline=$2; shift ;;
    --repeat) repeat=$2; shift ;;
    *) echo "usage: $0 [--requests N] [--clients N] [--pipeline N] [--repeat N]" >&2; exit 2 ;;
  esac
  shift
done

sluice_bin=build/sluice-server
[ -x "$sluice_bin" ] || { echo "bench_tls: no $sluice_bin; build it first with tools/setup.sh" >&2; exit 1; }
redis_bin=$(command -v redis-server) || { echo "bench_tls: redis-server not found" >&2; exit 1; }
benchmark=$(command -v redis-benchmark) || { echo "bench_tls: redis-benchmark not found" >&2; exit 1; }
cli=$(command -v redis-cli)
"$benchmark" --help 2>&1 | grep -q -- --tls || { echo "bench_tls: redis-benchmark lacks --tls" >&2; exit 1; }

work=$(mktemp -d -t sluice-bench-tls.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

ossl() { (cd "$work" && openssl "$@" >/dev/null 2>&1); }
# P-256 keys: cheap handshakes, so the runs measure the traffic, not the connection setup.
ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1)
ossl req -x509 -new -nodes "${ec[@]}" -keyout ca.key -out ca.crt -days 2 -subj "/CN=bench CA"
for name in server client; do
  ossl req -new -nodes "${ec[@]}" -keyout $name.key -out $name.csr -subj "/CN=$name"
  ossl x509 -req -in $name.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out $name.crt -days 2
done

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
tls_flags=(--tls-cert-file "$work/server.crt" --tls-key-file "$work/server.key"
           --tls-ca-cert-file "$work/ca.crt")
client_tls=(--tls --cert "$work/client.crt" --key "$work/client.key" --cacert "$work/ca.crt")

s_port=$(free_port); s_tls=$(free_port); r_port=$(free_port); r_tls=$(free_port)
"$sluice_bin" --port "$s_port" --tls-port "$s_tls" --bind 127.0.0.1 --dir "$work/sluice" \
  "${tls_flags[@]}" >"$work/sluice.log" 2>&1 &
pids+=($!)
"$redis_bin" --port "$r_port" --tls-port "$r_tls" --bind 127.0.0.1 --dir "$work" --save '' \
  --appendonly no --daemonize no "${tls_flags[@]}" >"$work/redis.log" 2>&1 &
pids+=($!)
for port in "$s_port" "$r_port"; do
  for _ in $(seq 600); do
    [ "$("$cli" -p "$port" PING 2>/dev/null || true)" = PONG ] && break
    sleep 0.1
  done
done
sha=$("$cli" -p "$r_port" SCRIPT LOAD "$(cat tools/bench/gcra.lua)")

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }  # the process's CPU time, clock ticks
hz=$(getconf CLK_TCK)
bench() {  # pid port [tls] command...   -> "calls/s server-CPU-us-per-call"
  local pid=$1 port=$2; shift 2
  local extra=() before after rps
  if [ "$1" = tls ]; then extra=("${client_tls[@]}"); shift; fi
  before=$(ticks "$pid")
  rps=$("$benchmark" -h 127.0.0.1 -p "$port" "${extra[@]}" -c "$clients" -n "$n" -P "$pipeline" \
    -r 100000 --csv "$@" | tail -n 1 | tr -d '"' | cut -d, -f2)
  after=$(ticks "$pid")
  echo "$rps $(python3 -c "print('%.2f' % (($after - $before) * 1e6 / $hz / $n))")"
}
median() { printf '%s\n' "$@" | sort -n | sed -n "$((($# + 1) / 2))p"; }

s_pid=${pids[0]}
r_pid=${pids[1]}
declare -A rps cpu
labels=("sluice plain GCRA.TAKE" "sluice TLS GCRA.TAKE" "redis TLS EVALSHA gcra.lua"
        "redis plain EVALSHA gcra.lua" "sluice plain SET" "sluice TLS SET" "redis TLS SET")
record() {  # index pid port [tls] command...
  local i=$1 out; shift
  out=$(bench "$@")
  rps[$i]+=" ${out% *}"
  cpu[$i]+=" ${out#* }"
}
for ((i = 0; i < repeat; i++)); do
  record 0 "$s_pid" "$s_port" GCRA.TAKE rl:__rand_int__ 100 1s
  record 1 "$s_pid" "$s_tls" tls GCRA.TAKE rl:__rand_int__ 100 1s
  record 2 "$r_pid" "$r_tls" tls EVALSHA "$sha" 1 rl:__rand_int__ 100 1000 100 1
  record 3 "$r_pid" "$r_port" EVALSHA "$sha" 1 rl:__rand_int__ 100 1000 100 1
  record 4 "$s_pid" "$s_port" SET key:__rand_int__ xxx
  record 5 "$s_pid" "$s_tls" tls SET key:__rand_int__ xxx
  record 6 "$r_pid" "$r_tls" tls SET key:__rand_int__ xxx
done
declare -a med_rps med_cpu
printf '%-30s %12s %16s\n' "" "calls/s" "server CPU/call"
for i in "${!labels[@]}"; do
  # shellcheck disable=SC2086  # the runs are split on spaces
  med_rps[i]=$(median ${rps[$i]})
  # shellcheck disable=SC2086
  med_cpu[i]=$(median ${cpu[$i]})
  printf '%-30s %12s %13s us   (runs:%s |%s)\n' "${labels[$i]}" "${med_rps[$i]}" "${med_cpu[$i]}" \
    "${rps[$i]}" "${cpu[$i]}"
done
python3 - "${med_rps[@]}" "${med_cpu[@]}" <<'EOF'
import sys
v = list(map(float, sys.argv[1:]))
r, c = v[:7], v[7:]
ratio = lambda a, b: a / b if b else float("nan")
print("GCRA.TAKE TLS / plain on sluice: %.2f calls/s, %.2f by server CPU per call (goal >= 0.7)"
      % (ratio(r[1], r[0]), ratio(c[0], c[1])))
print("sluice TLS GCRA.TAKE / redis TLS gcra.lua: %.2f calls/s, %.2f by CPU per call (goal >= 1)"
      % (ratio(r[1], r[2]), ratio(c[2], c[1])))
print("SET TLS / plain on sluice: %.2f calls/s, %.2f by CPU; sluice / redis SET over TLS: %.2f "
      "calls/s, %.2f by CPU" % (ratio(r[5], r[4]), ratio(c[4], c[5]), ratio(r[5], r[6]),
                                ratio(c[6], c[5])))
EOF
echo "clients $clients, pipeline $pipeline, $n requests per run, load average: $(cut -d' ' -f1-3 /proc/loadavg)"
