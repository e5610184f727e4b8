#!/usr/bin/env bash
# Builds the Lua 5.1 that Sluice links: Debian's lua5.1 source package (the version the archive
# ships, with Debian's own patches) plus the project's security patches (tools/lua/patches/,
# listed with the advisory each answers in tools/lua/patches/series), compiled as C++ (so a Lua
# error unwinds C++ frames as an exception, as Debian's liblua5.1-c++ does) into a static
# library. CMake runs it at configure time; it prints the install prefix (LUA_PREFIX=DIR) on
# stdout, its progress on stderr.
#
#   tools/build-lua.sh [--cflags "FLAGS"] [--cache DIR]
#
# FLAGS are added to the compile (the AddressSanitizer build passes -fsanitize=address, a
# profile-guided build its -fprofile-* options). The result is cached in DIR (default
# /var/cache/sluice if writable, else ~/.cache/sluice) under a name that hashes the package
# version, the patches, this script and FLAGS: a change to any of them builds anew, an unchanged
# tree reuses the build. Concurrent runs wait on a lock.
# Layout: DIR/lua-<version>-<hash>/{include/lua5.1/{lua.h,luaconf.h,lualib.h,lauxlib.h,lua.hpp,
# lua5.1-deb-multiarch.h},
# lib/liblua5.1-sluice.a}. About a minute on 2 cores.
# It needs dpkg-dev (dpkg-source), patch and deb-src entries: when `apt-get source` finds none,
# this adds a deb-src twin of /etc/apt/sources.list.d/debian.sources (sluice-deb-src.sources, as
# tools/build-rocksdb.sh does; of /etc/apt/sources.list on older machines) and updates the
# package lists.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
patches=$root/tools/lua/patches
cflags=""
cache=""
while (($#)); do
  case "$1" in
    --cflags) cflags=$2; shift ;;
    --cache) cache=$2; shift ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-lua: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
if [ -z "$cache" ]; then
  cache=/var/cache/sluice
  { mkdir -p "$cache" 2>/dev/null && [ -w "$cache" ]; } || cache=${XDG_CACHE_HOME:-$HOME/.cache}/sluice
fi
mkdir -p "$cache"

sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
# The version Debian ships: installed, else the archive's candidate.
version=$(dpkg-query -W -f='${Version}' liblua5.1-0 2>/dev/null || true)
if [ -z "$version" ]; then
  version=$(apt-cache show --no-all-versions liblua5.1-0 2>/dev/null | sed -n 's/^Version: //p')
fi
[ -n "$version" ] || { echo "build-lua: apt knows no liblua5.1-0 version" >&2; exit 1; }
key=$( (echo "$version $cflags"; cat "$0" "$patches"/series "$patches"/*.patch) | sha1sum | cut -c1-12)
prefix=$cache/lua-$version-$key
lib=$prefix/lib/liblua5.1-sluice.a

exec 9>"$cache/lua.lock"
flock 9
if [ -f "$lib" ]; then
  echo "LUA_PREFIX=$prefix"
  exit 0
fi

work=$(mktemp -d "$cache/lua-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
echo "build-lua: fetching Debian's lua5.1 $version source" >&2
if ! apt-get source --download-only -qq "lua5.1=$version" >/dev/null 2>&1; then
  echo "build-lua: enabling Debian source packages (deb-src)" >&2
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then  # deb822 (Debian 12's default)
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources |
      "${sudo_cmd[@]}" tee /etc/apt/sources.list.d/sluice-deb-src.sources >/dev/null
  else  # one-line sources.list
    sed -n 's/^deb /deb-src /p' /etc/apt/sources.list |
      "${sudo_cmd[@]}" tee /etc/apt/sources.list.d/sluice-deb-src.list >/dev/null
  fi
  "${sudo_cmd[@]}" apt-get update -qq
  apt-get source --download-only -qq "lua5.1=$version" >/dev/null 2>&1
fi
dpkg-source -x lua5.1_"${version#*:}".dsc src >/dev/null 2>&1
cd src
grep -v '^\s*#' "$patches/series" | awk 'NF {print $1}' | while read -r p; do
  echo "build-lua: applying $p" >&2
  patch -p1 -s --no-backup-if-mismatch <"$patches/$p"
done

cd src
# Debian's luaconf.h includes this header, which its rules write at configure time (and only its
# -dev package installs): written here the same way, so a machine without liblua5.1-0-dev builds.
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -dumpmachine)
printf '#ifndef _LUA_DEB_MULTIARCH_\n#define _LUA_DEB_MULTIARCH_\n#define DEB_HOST_MULTIARCH "%s"\n#endif\n' \
  "$multiarch" >lua5.1-deb-multiarch.h
sources=(lapi lcode ldebug ldo ldump lfunc lgc llex lmem lobject lopcodes lparser lstate lstring
         ltable ltm lundump lvm lzio lauxlib lbaselib ldblib liolib lmathlib loslib ltablib
         lstrlib loadlib linit)
n=${#sources[@]}
i=0
# A profile-guided build (FLAGS with -fprofile-generate=DIR or -fprofile-use=DIR, cmake/Pgo.cmake)
# names each object's counts by its path below this temporary directory, so that the build
# optimised with them finds the ones the instrumented build wrote.
profile_prefix=""
[[ "$cflags" == *-fprofile-* ]] && profile_prefix="-fprofile-prefix-path=$PWD"
for s in "${sources[@]}"; do
  i=$((i + 1))
  printf '\rbuild-lua: compiling as C++ %2d/%d %-12s' "$i" "$n" "$s.c" >&2
  # shellcheck disable=SC2086  # FLAGS is a list of words
  g++ -x c++ -O2 -g -fPIC -DLUA_USE_LINUX -w $cflags $profile_prefix -c "$s.c" -o "$s.o"
done
echo >&2
mkdir -p "$work/out/lib" "$work/out/include/lua5.1"
ar rcs "$work/out/lib/liblua5.1-sluice.a" ./*.o
cp lua.h luaconf.h lualib.h lauxlib.h lua5.1-deb-multiarch.h ../etc/lua.hpp "$work/out/include/lua5.1/"
rm -rf "$prefix"
mv "$work/out" "$prefix"
echo "build-lua: installed into $prefix" >&2
echo "LUA_PREFIX=$prefix"
