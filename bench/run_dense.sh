#!/usr/bin/env bash
# The dense small-island path's threshold (host/solve/dense_islands.h): the same runs with islands of at
# most N contacts taken dense, N = 0 (none), 1, 2, 4, 8, 16. Scenes with many small islands: 900
# separate stacks of three boxes (12 contacts each) and the first steps of the 1k spheres pile.
# BACKEND=cuda measures the CUDA backend (cuBLAS products); results in
# bench/results/<MACHINE>_<backend>/dense.csv (the backend column says the threshold, e.g. cpu_dense4).
set -euo pipefail
cd "$(dirname "$0")/.."
backend="${BACKEND:-cpu}"
machine="${MACHINE:-$(hostname)-$(nproc)core}"
out="bench/results/${machine}_${backend}"
rm -f "$out/dense.csv"
mkdir -p "$out"
build="${BUILD:-build}"
[ -x "$build/stagger_bench" ] || scripts/setup.sh
for n in 0 1 2 4 8 16; do
  "$build/stagger_bench" --scene bench/scenes/box_stacks_900.json --steps 200 --backend "$backend" \
    --dense-max-contacts "$n" ${THREADS:+--threads "$THREADS"} --out "$out/dense.csv"
  "$build/stagger_bench" --scene bench/scenes/spheres_pile_1k.json --steps 300 --backend "$backend" \
    --dense-max-contacts "$n" ${THREADS:+--threads "$THREADS"} --out "$out/dense.csv"
done
