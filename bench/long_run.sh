#!/usr/bin/env bash
# Long-run stability (too slow for CI): the 10-box stack and a resting bed of 512 spheres, each
# watched for 10 minutes of simulated time (h = 1e-3). Writes bench/results/<MACHINE>_cpu/long_run.csv
# (one row per scene) and long_run_<scene>.csv (one row per simulated second).
#   MACHINE=xeon-2core bench/long_run.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-600}"
machine="${MACHINE:-$(hostname)}"
out="bench/results/${machine}_cpu"
mkdir -p "$out"
[ -x build/stagger_long_run ] || scripts/setup.sh
cmake --build build --target stagger_long_run >/dev/null
rows="$out/long_run.csv.tmp"
first=1
for scene in scenes/validation/box_stack.json bench/scenes/long_run/resting_bed.json; do
  name=$(basename "$scene" .json)
  header=""
  [ $first -eq 1 ] && header="--header"
  build/stagger_long_run "$scene" --seconds "$seconds" --series "$out/long_run_${name}.csv" $header >> "$rows" || true
  first=0
done
echo "commit,$(git rev-parse --short HEAD)$(git diff --quiet -- host kernels bench || echo -dirty),threads,${OMP_NUM_THREADS:-all}" >> "$rows"
mv "$rows" "$out/long_run.csv"
cat "$out/long_run.csv"
