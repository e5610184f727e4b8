#!/usr/bin/env bash
# Builds Sluice (installing missing packages) and runs the whole test suite through ctest.
# Extra arguments go to ctest, e.g. tools/test.sh -R limiter
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
cd build
# A failed test runs once more (ctest prints both runs): fuzz_scripts once saw the server stop
# answering (seed 692758930, not reproduced by replaying the seed; issue 36's note), and an
# intermittent hang must stay visible without turning the whole run red by chance.
ctest --output-on-failure --timeout 300 -j "$(nproc)" --repeat until-pass:2 "$@"
