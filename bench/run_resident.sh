#!/usr/bin/env bash
# The resident step (host/step/resident_step.h) against the host step on the CPU: the CUDA backend's step
# run by its CPU twin (`--backend cpu-resident`) next to the batched CPU backend (`--backend cpu`),
# on the 1k spheres pile, the resting 10k bed and the 900 box stacks. On one machine the two give
# the same states; this shows what the twin's way of running the stages costs on a CPU (the twin's
# collision stages are the GPU's count/scan/write passes). Results in
# bench/results/<MACHINE>_cpu/resident.csv.
set -euo pipefail
cd "$(dirname "$0")/.."
machine="${MACHINE:-$(hostname)-$(nproc)core}"
out="bench/results/${machine}_cpu"
rm -f "$out/resident.csv"
mkdir -p "$out"
build="${BUILD:-build}"
[ -x "$build/stagger_bench" ] || scripts/setup.sh
run() {
  "$build/stagger_bench" --scene "$1" --steps "$2" --backend cpu --backend cpu-resident \
    ${THREADS:+--threads "$THREADS"} --out "$out/resident.csv"
}
run bench/scenes/spheres_pile_1k.json 300
run bench/scenes/spheres_resting_10k.json 100
run bench/scenes/box_stacks_900.json 200
