#!/usr/bin/env bash
# Sanitizer sweep (a developer tool, not part of .ci/run): configures and builds Sluice with a
# sanitizer in its own build directory, then runs the tests under it through ctest.
#
#   tools/sanitize.sh asan [ctest args...]   AddressSanitizer + LeakSanitizer + UBSan, Debug,
#                                            in build-asan: every test except fuzz_parser (it
#                                            builds itself with clang, ASan and UBSan anyway)
#   tools/sanitize.sh tsan [ctest args...]   ThreadSanitizer, Debug, in build-tsan: test_server,
#                                            test_storage and the black-box groups that run
#                                            many threads (concurrency, durability, server,
#                                            protocol)
#
# Extra arguments go to ctest (e.g. `-R blackbox_concurrency`) and replace the default test
# selection. SANITIZE_JOBS (default 2) sets the build and ctest parallelism.
# Any sanitizer report fails the test it came from: the unit tests abort (or, under TSan, exit
# with code 66), and the black-box harness fails a test whose server printed a report on stderr
# (tests/blackbox/harness.py). Reports from inside librocksdb (not built with TSan) are
# suppressed by tools/sanitizers/tsan.supp.
set -euo pipefail

mode=${1:-}
case "$mode" in
  asan | tsan) shift ;;
  *)
    echo "usage: $0 asan|tsan [ctest args...]" >&2
    exit 2
    ;;
esac
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=${SANITIZE_JOBS:-2}
supp="$root/tools/sanitizers"

if [ "$mode" = asan ]; then
  build="$root/build-asan"
  cxxflags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
  ldflags="-fsanitize=address,undefined"
  extra_cmake=()
  default_tests=(-E '^fuzz_parser$')
else
  build="$root/build-tsan"
  cxxflags="-fsanitize=thread -fno-omit-frame-pointer"
  ldflags="-fsanitize=thread"
  extra_cmake=(-DCMAKE_PROJECT_INCLUDE="$supp/rocksdb-shared.cmake")
  default_tests=(-R '^(test_server|test_storage|blackbox_(concurrency|durability|server|protocol))$')
fi

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS="$cxxflags" \
  -DCMAKE_EXE_LINKER_FLAGS="$ldflags" -DCMAKE_SHARED_LINKER_FLAGS="$ldflags" \
  ${extra_cmake[@]+"${extra_cmake[@]}"}
cmake --build "$build" -j "$jobs"

# Sanitizer runtime options; the test processes (and the servers the black-box tests start)
# inherit them.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1:print_summary=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:print_summary=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
# detect_deadlocks=0: TSan's lock-order checker holds at most 64 locks per thread and aborts
# (CHECK failed: sanitizer_deadlock_detector.h) when FLUSHALL takes every lock stripe.
export TSAN_OPTIONS="suppressions=$supp/tsan.supp:detect_deadlocks=0:halt_on_error=0:print_suppressions=0${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
# The install test builds a consumer program against the sanitized library: same flags.
export CXXFLAGS="$cxxflags" LDFLAGS="$ldflags"

if [ $# -eq 0 ]; then set -- "${default_tests[@]}"; fi
cd "$build"
ctest --output-on-failure --timeout 900 -j "$jobs" "$@"
