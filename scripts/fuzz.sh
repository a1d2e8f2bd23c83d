#!/usr/bin/env bash
# fuzz.sh [SECONDS]: fuzzes the scene loader and validator with libFuzzer (clang, AddressSanitizer,
# UndefinedBehaviorSanitizer) for SECONDS (default 600), starting from fuzz/corpus and every scene of
# the repository, with the scene format's dictionary. A finding (crash, sanitizer report, leak,
# timeout, out of memory) stops it, leaves the input as build-fuzz/finding-* and exits non-zero.
# New inputs that add coverage are merged into fuzz/corpus (commit them: ctest replays them), unless
# FUZZ_MERGE=0.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-600}"
scripts/ensure_packages.sh clang libclang-rt-14-dev cmake ninja-build nlohmann-json3-dev libfmt-dev libeigen3-dev libtinyobjloader-dev

CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTAGGER_FUZZ=ON \
  -DSTAGGER_ENABLE_CUDA=OFF -DSTAGGER_BUILD_TESTS=OFF >/dev/null
cmake --build build-fuzz --target stagger_fuzz_scene

work=build-fuzz/corpus
mkdir -p "$work" fuzz/corpus
# Mesh scenes are left out of the seeds: building a 70k-triangle mesh's distance field unoptimized and
# serially under the sanitizers takes longer than the per-input timeout (ctest's replay loads them).
find scenes bench/scenes -name '*.json' -exec grep -L '"mesh"' {} + | xargs -I{} cp {} "$work"/
cp fuzz/corpus/* "$work"/ 2>/dev/null || true

log=build-fuzz/fuzz.log
set +e
build-fuzz/stagger_fuzz_scene "$work" -dict=fuzz/scene.dict -max_total_time="$seconds" -timeout=10 \
  -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 -artifact_prefix=build-fuzz/finding- 2>&1 | tee "$log" | grep -E "^#[0-9]+ +(DONE|pulse)|ERROR|SUMMARY|stat::"
status=${PIPESTATUS[0]}
set -e
# Keep a minimal corpus: only inputs that add coverage over what is already committed (FUZZ_MERGE=0:
# leave fuzz/corpus alone, as CI does).
if [ "${FUZZ_MERGE:-1}" = 1 ]; then
  build-fuzz/stagger_fuzz_scene -merge=1 fuzz/corpus "$work" -dict=fuzz/scene.dict >/dev/null 2>&1 || true
fi
echo "fuzz: exit $status after ${seconds}s; corpus fuzz/corpus has $(ls fuzz/corpus | wc -l) inputs; log $log"
exit "$status"
