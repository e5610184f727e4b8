#!/usr/bin/env bash
# Installs any missing Debian packages Sluice needs, then configures and builds it into ./build.
# Usage: tools/setup.sh [--release|--debug]   (default: RelWithDebInfo)
# Progress goes to stderr; safe to run repeatedly (an up-to-date build does nothing).
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(cmake g++ make librocksdb-dev libasio-dev doctest-dev libxxhash-dev libssl-dev
          redis-tools redis-server clang libclang-rt-14-dev python3 python3-redis
          dpkg-dev patch lua-cjson-dev
          python3-limits gdb openssl redis-sentinel)  # gdb: a hung fuzz run's stacks; openssl: TLS test certificates
build_type=RelWithDebInfo
case "${1:-}" in
  --release) build_type=Release ;;
  --debug) build_type=Debug ;;
  "") ;;
  *) echo "usage: $0 [--release|--debug]" >&2; exit 2 ;;
esac

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >&2
fi

# Node.js and npm for the Node client tests (tests/node): any recent Node will do, so Debian's
# packages are installed only when no node/npm is on PATH (a NodeSource node bundles its own npm,
# and Debian's npm package would conflict with it).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "setup: installing nodejs npm" >&2
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq nodejs npm >&2
fi
# The client libraries, exactly as package-lock.json pins them; reinstalled when the lockfile
# changes (npm records the installed tree in node_modules/.package-lock.json).
node_dir=tests/node
if [ ! -f "$node_dir/node_modules/.package-lock.json" ] ||
   [ "$node_dir/package-lock.json" -nt "$node_dir/node_modules/.package-lock.json" ]; then
  echo "setup: installing the Node test clients (npm ci in $node_dir)" >&2
  (cd "$node_dir" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi

jobs=$(nproc)
echo "setup: configuring ($build_type) and building with $jobs jobs" >&2
cmake -S . -B build -DCMAKE_BUILD_TYPE="$build_type" >/dev/null
cmake --build build -j "$jobs"
