#!/usr/bin/env bash
# Builds the RequestParser fuzz target with libFuzzer + ASan + UBSan into <build-dir> and runs it
# for <seconds> on a temporary copy of tools/fuzz/corpus (the repository stays clean).
# Usage: tools/fuzz/run_parser_fuzz.sh <build-dir> <seconds>
# Needs clang++ and libFuzzer's runtime (tools/setup.sh installs clang and libclang-rt-14-dev);
# exits non-zero if either is missing, or if the fuzzer finds a crash (the input is saved in
# <build-dir> as crash-*).
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 <build-dir> <seconds>" >&2
  exit 2
fi
build_dir=$1
seconds=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
cxx=${CXX_FUZZ:-clang++}

if ! command -v "$cxx" >/dev/null; then
  echo "run_parser_fuzz: $cxx not found (run tools/setup.sh)" >&2
  exit 1
fi

mkdir -p "$build_dir"
build_dir=$(cd "$build_dir" && pwd)
binary="$build_dir/parser_fuzz"
sources=("$root"/protocol/*.cc "$root/tools/fuzz/parser_fuzz.cc")

# Rebuild only when a source or header is newer than the binary.
needs_build=0
[ -x "$binary" ] || needs_build=1
for f in "${sources[@]}" "$root"/protocol/*.h; do
  [ "$f" -nt "$binary" ] && needs_build=1
done
if ((needs_build)); then
  echo "run_parser_fuzz: building $binary" >&2
  "$cxx" -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
    -I"$root" "${sources[@]}" -o "$binary"
fi

corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
cp "$root"/tools/fuzz/corpus/* "$corpus"/

"$binary" -max_total_time="$seconds" -max_len=4096 -timeout=10 -print_final_stats=1 \
  -artifact_prefix="$build_dir/" "$corpus"
