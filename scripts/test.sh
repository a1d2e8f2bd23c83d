#!/usr/bin/env bash
# Builds (if needed) and runs the test suite, then says what it proved: how many tests passed, failed
# and were skipped, why each skipped one did not run, and which tests left a part out (a backend this
# machine cannot run). STAGGER_REQUIRE_GPU=1 turns every GPU skip into a failure; it is set when the
# machine has an NVIDIA device (/dev/nvidia0), so that a broken driver or a CPU-only build there fails
# instead of skipping (STAGGER_REQUIRE_GPU=0 allows the skips). No test run at all is a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f build/build.ninja ] || scripts/setup.sh
cmake --build build
# ctest runs two tests at once, each with an OpenMP team as large as the machine: spinning waits
# would then steal the other test's cores (a 2 s test took 15 s beside another), so threads sleep.
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
if [ -z "${STAGGER_REQUIRE_GPU:-}" ] && [ -e /dev/nvidia0 ]; then export STAGGER_REQUIRE_GPU=1; fi
code=0
ctest --test-dir build --output-on-failure --no-tests=error -j2 "$@" || code=$?
log=build/Testing/Temporary/LastTest.log
if [ -f "$log" ]; then
  # LastTest.log holds each test's output after a "N/M Test: name" line.
  # ctest logs "Test Passed." for a plain pass and "Test Pass Reason:" for one judged by a regular
  # expression, a skip included (its output says STAGGER_SKIPPED and why). ctest calls a test skipped
  # whatever its exit code once the marker is printed, so a skipped test whose output also reports a
  # failed assertion (Catch2's "FAILED:", pytest's "failed") counts as failed. Every test is counted
  # once, and one that is none of the three is listed, so that the counts add up to the total.
  awk '
    function settle() {
      if (name == "") return
      if (why != "" && failing) failed_skip[++fs] = name
      if (status == "failed" || (why != "" && failing)) ++failed
      else if (why != "") { ++s; if (!(why in skipped_by)) reasons[++nr] = why; skipped_by[why] = skipped_by[why] "\n    " name; ++skip_count[why] }
      else if (status == "passed") ++passed
      else unaccounted[++u] = name
    }
    /^[0-9]+\/[0-9]+ Test: / {
      settle(); sub(/^[0-9]+\/[0-9]+ Test: /, ""); name = $0; ++total; status = ""; why = ""; failing = 0; next
    }
    /^Test Passed\.|^Test Pass Reason:/ { if (status == "") status = "passed" }
    /^Test Failed\.|^Test Fail Reason:/ { status = "failed" }
    /: FAILED:$|^test cases: .*failed|[0-9]+ failed/ { failing = 1 }
    /STAGGER_SKIPPED: / { if (why == "") { sub(/.*STAGGER_SKIPPED: /, ""); why = $0 } }
    /STAGGER_PART_NOT_RUN: / {
      sub(/.*STAGGER_PART_NOT_RUN: /, "")
      if (!((name, $0) in seen)) { seen[name, $0] = 1; if (!($0 in part)) order[++r] = $0; part[$0] = part[$0] "\n    " name }
    }
    END {
      settle()
      printf "\ntests: %d passed, %d failed, %d skipped (of %d)\n", passed, failed, s, total
      if (total == 0) { print "  no test ran: that is a failure"; exit 1 }
      for (i = 1; i <= u; ++i) printf "  neither passed, failed nor skipped (see ctest above)  %s\n", unaccounted[i]
      for (i = 1; i <= fs; ++i) printf "  failed   %s (ctest calls it skipped, but its output reports a failure)\n", failed_skip[i]
      for (i = 1; i <= nr; ++i) printf "  skipped, %d test%s: %s%s\n", skip_count[reasons[i]], skip_count[reasons[i]] == 1 ? "" : "s", reasons[i], skipped_by[reasons[i]]
      for (i = 1; i <= r; ++i) printf "passed, but without a part not run here (%s), in:%s\n", order[i], part[order[i]]
      if (failed > 0) exit 1
    }' "$log" || code=1
else
  code=1
fi
exit $code
