#!/usr/bin/env bash
# Install test: installs a built Sluice into a fresh prefix, then configures, builds and runs a
# small consumer project (consumer/) that finds it with find_package(Sluice) and uses
# sluice::Store::GcraTake. Proves the installed headers, library and CMake package work.
# Usage: tests/install/run_install_test.sh <build-dir>      (the build must be complete)
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 <build-dir>" >&2
  exit 2
fi
build_dir=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-install-XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "install-test: installing $build_dir into $work/prefix" >&2
cmake --install "$build_dir" --prefix "$work/prefix" >"$work/install.log" ||
  { cat "$work/install.log" >&2; exit 1; }
test -f "$work/prefix/include/sluice/store.h"
test -f "$work/prefix/include/sluice/limiter.h"

echo "install-test: building the consumer against it" >&2
cmake -S "$here/consumer" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_BUILD_TYPE=Release >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log" >&2; exit 1; }
cmake --build "$work/build" >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }

echo "install-test: running the consumer" >&2
"$work/build/consumer" "$work/data"
