#!/usr/bin/env bash
# Builds Sluice (installing missing packages) and runs the whole test suite through ctest.
# Extra arguments go to ctest, e.g. tools/test.sh -R limiter
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
cd build
ctest --output-on-failure --timeout 300 -j "$(nproc)" "$@"
