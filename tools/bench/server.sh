# Shared by the long-running benchmarks (tools/soak.sh, tools/scale.sh): one sluice-server in a
# work directory, started and stopped, and readings of its process. Source it after setting
#   tool        the calling tool's name, for messages
#   sluice_bin  the server binary
#   keep        a directory to use and keep, or empty for a fresh temporary one
# It sets workdir, port, pid and cli, and removes what it made when the caller exits.

cli=$(command -v redis-cli) || { echo "$tool: redis-cli not found (apt-get install redis-tools)" >&2; exit 1; }
[ -x "$sluice_bin" ] || { echo "$tool: no $sluice_bin; build it first with tools/setup.sh" >&2; exit 1; }
if [ -n "$keep" ]; then workdir=$keep; mkdir -p "$workdir"; else workdir=$(mktemp -d -t "sluice-$tool.XXXXXX"); fi
pid=""
# An EXIT trap's last status becomes the tool's: cleanup must end in success (with --keep, a bare
# `[ -z "$keep" ] && ...` made every run exit 1).
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  if [ -z "$keep" ]; then rm -rf "$workdir"; fi
}
trap cleanup EXIT

# start_server [flags...]: starts sluice-server on a free port with the data dir in workdir and
# waits (at most start_wait seconds, default 60) until it answers PING.
start_server() {
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$sluice_bin" --port "$port" --bind 127.0.0.1 --dir "$workdir/data" "$@" >"$workdir/sluice.log" 2>&1 &
  pid=$!
  local wait_s=${start_wait:-60}
  local deadline=$((SECONDS + wait_s))
  until [ "$("$cli" -p "$port" PING 2>/dev/null || true)" = "PONG" ]; do
    kill -0 "$pid" 2>/dev/null || { echo "$tool: sluice-server exited; log:" >&2; cat "$workdir/sluice.log" >&2; exit 1; }
    ((SECONDS < deadline)) || { echo "$tool: sluice-server did not start within $wait_s s" >&2; exit 1; }
    sleep 0.1
  done
}

# stop_server: SHUTDOWN (a clean stop: the store syncs and saves its state) and waits for exit.
stop_server() {
  "$cli" -p "$port" SHUTDOWN >/dev/null 2>&1 || true
  wait "$pid" 2>/dev/null || true
  pid=""
}

# benchmark_failed: for a redis-benchmark run that failed. A server that died meanwhile leaves
# redis-benchmark saying only "Server closed the connection": this says so, with the end of the
# server's log, and exits.
benchmark_failed() {
  if kill -0 "$pid" 2>/dev/null; then
    echo "$tool: redis-benchmark failed (the server is still running)" >&2
  else
    echo "$tool: sluice-server exited during the run; the end of its log ($workdir/sluice.log):" >&2
    tail -n 20 "$workdir/sluice.log" >&2
  fi
  exit 1
}

# run_benchmark ARGS...: redis-benchmark against the server with --csv and ARGS (options, then
# the command); sets rps (calls/s) and p99 (ms) from its last line. A failed run ends the tool
# (benchmark_failed). The caller sets `benchmark` (redis-benchmark's path).
run_benchmark() {
  local line
  line=$("$benchmark" -h 127.0.0.1 -p "$port" --csv "$@" | tail -n 1) || benchmark_failed
  rps=$(echo "$line" | cut -d, -f2 | tr -d '"')
  p99=$(echo "$line" | cut -d, -f7 | tr -d '"')
}

rss_mb() { awk '/^VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$pid/status"; }
disk_mb() { du -sm "$workdir/data" | cut -f1; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
