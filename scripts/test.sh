#!/usr/bin/env bash
# Builds (if needed) and runs the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f build/build.ninja ] || scripts/setup.sh
cmake --build build
ctest --test-dir build --output-on-failure -j2 "$@"
