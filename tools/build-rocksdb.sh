#!/usr/bin/env bash
# Builds a release librocksdb from Debian's own source package (the same version as the installed
# librocksdb-dev), once, into a cache outside the source tree, and prints how to build Sluice
# against it.
#
#   tools/build-rocksdb.sh [--prefix DIR] [--jobs N]
#
# Why: Debian's librocksdb is built without NDEBUG (its assertions run on every memtable search
# and insert) and with portable CRC32; a Release build (-O3 -DNDEBUG, SSE4.2) saves 6-9% of
# Sluice's instructions per request now that Sluice has its own memtable (docs/engine.md, "The
# RocksDB build"). It is optional: the default build, the tests and CI use Debian's package.
# DIR defaults to /var/cache/sluice/rocksdb-<version>-release; an existing build there is reused.
# The build takes 13 minutes to most of an hour on 2 cores (about 320 files; ccache helps).
# It needs deb-src entries for Debian's archive: when `apt-get source` finds none, this adds a
# deb-src twin of /etc/apt/sources.list.d/debian.sources (sluice-deb-src.sources) and updates.
# Then: cmake -S . -B build -DRocksDB_DIR=<printed dir> && cmake --build build
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(dpkg-query -W -f='${Version}' librocksdb-dev 2>/dev/null || true)
[ -n "$version" ] || { echo "build-rocksdb: librocksdb-dev is not installed (run tools/setup.sh)" >&2; exit 1; }
upstream=${version%%-*}
prefix=/var/cache/sluice/rocksdb-$upstream-release
jobs=$(nproc)
usage() { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; }
while (($#)); do
  case "$1" in
    --prefix) prefix=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "build-rocksdb: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
  shift
done

config_dir() { find "$prefix" -name RocksDBConfig.cmake -printf '%h\n' 2>/dev/null | head -n 1; }
if [ -n "$(config_dir)" ]; then
  echo "build-rocksdb: reusing $prefix" >&2
  echo "RocksDB_DIR=$(config_dir)"
  exit 0
fi

sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
work=$prefix.build
mkdir -p "$work"
cd "$work"
if ! ls rocksdb_"$upstream"*.dsc >/dev/null 2>&1; then
  if ! apt-get source --download-only -qq "rocksdb=$version" >/dev/null 2>&1; then
    echo "build-rocksdb: enabling Debian source packages (deb-src)" >&2
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources |
      "${sudo_cmd[@]}" tee /etc/apt/sources.list.d/sluice-deb-src.sources >/dev/null
    "${sudo_cmd[@]}" apt-get update -qq
    apt-get source --download-only -qq "rocksdb=$version" >&2
  fi
fi
[ -d src ] || dpkg-source -x rocksdb_"$version".dsc src >/dev/null
mkdir -p build
cd build
echo "build-rocksdb: configuring RocksDB $upstream (Release, portable with SSE4.2)" >&2
cmake ../src -DCMAKE_BUILD_TYPE=Release -DPORTABLE=ON -DFORCE_SSE42=ON \
  -DWITH_BZ2=ON -DWITH_LZ4=ON -DWITH_ZLIB=ON -DWITH_ZSTD=ON -DWITH_SNAPPY=ON \
  -DROCKSDB_BUILD_SHARED=OFF -DWITH_BENCHMARK_TOOLS=OFF -DWITH_CORE_TOOLS=OFF -DWITH_TOOLS=OFF \
  -DWITH_TESTS=OFF -DWITH_GFLAGS=OFF -DFAIL_ON_WARNINGS=OFF -DUSE_RTTI=ON >/dev/null
echo "build-rocksdb: building librocksdb.a with $jobs jobs (progress in percent)" >&2
make -j "$jobs" rocksdb | grep --line-buffered -o '^\[ *[0-9]*%\]' | uniq | tr '\n' ' ' >&2
echo >&2
cmake --install . --prefix "$prefix" >/dev/null
echo "build-rocksdb: installed into $prefix" >&2
echo "RocksDB_DIR=$(config_dir)"
