#!/usr/bin/env bash
# Installs any missing Debian packages Sluice needs, then configures and builds it into ./build.
# Usage: tools/setup.sh [--release|--debug] [--pgo|--retrain|--no-pgo]   (default: RelWithDebInfo)
# --pgo makes the build profile-guided (GCC): once, it builds an instrumented server into
# build/pgo/train, runs tools/pgo-train.sh through it (about a minute) and keeps the profile in
# build/pgo/profile; from then on every setup compiles with that profile until --no-pgo drops it
# (docs/engine.md, "The profile-guided build"). A profile from an older source still serves
# (functions changed since lose theirs); --retrain trains again. --debug builds ignore it.
# Progress goes to stderr; safe to run repeatedly (an up-to-date build does nothing).
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(cmake g++ make librocksdb-dev libasio-dev doctest-dev libxxhash-dev libssl-dev
          redis-tools redis-server clang libclang-rt-14-dev python3 python3-redis
          dpkg-dev patch lua-cjson-dev
          python3-limits gdb openssl redis-sentinel)  # gdb: a hung fuzz run's stacks; openssl: TLS test certificates
build_type=RelWithDebInfo
pgo=auto  # use build/pgo/profile when there is one
retrain=0
for arg in "$@"; do
  case "$arg" in
    --release) build_type=Release ;;
    --debug) build_type=Debug ;;
    --pgo) pgo=1 ;;
    --retrain) pgo=1; retrain=1 ;;
    --no-pgo) pgo=0 ;;
    *) echo "usage: $0 [--release|--debug] [--pgo|--retrain|--no-pgo]" >&2; exit 2 ;;
  esac
done

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
pgo_flags=(-DSLUICE_PGO_USE= -DSLUICE_PGO_STAMP=)
profile=$PWD/build/pgo/profile
trained_for=$(cat "$profile/build_type" 2>/dev/null || true)
if [ "$pgo" = 0 ]; then
  rm -rf build/pgo
elif [ "$build_type" = Debug ]; then
  [ "$pgo" = 1 ] && echo "setup: a Debug build is not profile-guided" >&2
elif [ "$pgo" = 1 ] && ! "${CXX:-c++}" -v 2>&1 | grep -q '^gcc version'; then
  echo "setup: the C++ compiler is not GCC; building without a profile" >&2
elif [ "$pgo" = 1 ] && { ((retrain)) || [ ! -f "$profile/stamp" ] || [ "$trained_for" != "$build_type" ]; }; then
  # The libraries the main build was pointed at (a release RocksDB, tools/build-rocksdb.sh).
  extra=()
  rocksdb_dir=$(sed -n 's/^RocksDB_DIR:PATH=//p' build/CMakeCache.txt 2>/dev/null || true)
  [ -n "$rocksdb_dir" ] && extra+=(-DRocksDB_DIR="$rocksdb_dir")
  echo "setup: building an instrumented server into build/pgo/train to train the optimiser" \
       "(about half the time of the main build)" >&2
  rm -rf "$profile"
  cmake -S . -B build/pgo/train -DCMAKE_BUILD_TYPE="$build_type" -DBUILD_TESTING=OFF \
        -DSLUICE_PGO_GENERATE="$profile" "${extra[@]}" >/dev/null
  cmake --build build/pgo/train --target sluice-server -j "$jobs"
  echo "setup: training (tools/pgo-train.sh, about a minute)" >&2
  if tools/pgo-train.sh build/pgo/train/sluice-server; then
    # The stamp names the profile in the compile flags: a new one recompiles everything.
    echo "$build_type" >"$profile/build_type"
    echo "$(date -u +%Y%m%dT%H%M%S)-$(git rev-parse --short HEAD 2>/dev/null || echo nogit)" \
      >"$profile/stamp"
    trained_for=$build_type
  else
    echo "setup: WARNING: training failed (above); building without a profile" >&2
  fi
fi
if [ "$pgo" != 0 ] && [ -f "$profile/stamp" ]; then
  if [ "$trained_for" = "$build_type" ]; then
    pgo_flags=(-DSLUICE_PGO_USE="$profile" -DSLUICE_PGO_STAMP="$(cat "$profile/stamp")")
    echo "setup: profile-guided, with the profile trained $(cat "$profile/stamp")" \
         "(--retrain trains again, --no-pgo drops it)" >&2
  elif [ "$build_type" != Debug ]; then
    # A profile serves the build type it was trained with (-O2 and -O3 shape functions apart).
    echo "setup: the profile was trained for a $trained_for build; building without it" \
         "(--pgo trains one for $build_type)" >&2
  fi
fi
echo "setup: configuring ($build_type) and building with $jobs jobs" >&2
cmake -S . -B build -DCMAKE_BUILD_TYPE="$build_type" "${pgo_flags[@]}" >/dev/null
cmake --build build -j "$jobs"
