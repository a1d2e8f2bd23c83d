#!/usr/bin/env bash
# Builds (if needed) and runs the test suite, then says what it proved: how many tests passed, failed
# and were skipped, why each skipped one did not run, and which tests left a part out (a backend this
# machine cannot run). STAGGER_REQUIRE_GPU=1 turns every GPU skip into a failure (for GPU machines).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f build/build.ninja ] || scripts/setup.sh
cmake --build build
# ctest runs two tests at once, each with an OpenMP team as large as the machine: spinning waits
# would then steal the other test's cores (a 2 s test took 15 s beside another), so threads sleep.
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
code=0
ctest --test-dir build --output-on-failure -j2 "$@" || code=$?
log=build/Testing/Temporary/LastTest.log
if [ -f "$log" ]; then
  # LastTest.log holds each test's output after a "N/M Test: name" line.
  awk '
    /^[0-9]+\/[0-9]+ Test: / { sub(/^[0-9]+\/[0-9]+ Test: /, ""); name = $0; ++total; next }
    /^Test Passed\./ { ++passed }
    /^Test Failed\./ { ++failed }
    /STAGGER_SKIPPED: / { sub(/.*STAGGER_SKIPPED: /, ""); skipped[++s] = name ": " $0 }
    /STAGGER_PART_NOT_RUN: / {
      sub(/.*STAGGER_PART_NOT_RUN: /, "")
      if (!((name, $0) in seen)) { seen[name, $0] = 1; if (!($0 in part)) order[++r] = $0; part[$0] = part[$0] "\n    " name }
    }
    END {
      printf "\ntests: %d passed, %d failed, %d skipped (of %d)\n", passed, failed, s, total
      for (i = 1; i <= s; ++i) printf "  skipped  %s\n", skipped[i]
      for (i = 1; i <= r; ++i) printf "passed, but without a part not run here (%s), in:%s\n", order[i], part[order[i]]
    }' "$log"
fi
exit $code
