#!/usr/bin/env bash
# Reproduces bench/results/<gpu>_cuda/: the CUDA backend on the spheres pile and the resting bed at
# 1k/10k/100k/1M spheres and on the Brazil-nut beds, each next to the batched CPU backend on the
# same machine's cores (the ratio BENCHMARKS.md asks for; the CPU is skipped at 1M). Each run covers
# a fixed window of steps from the scene's start (docs/benchmarks.md). MACHINE names the directory
# (default: the GPU's name, e.g. h100_cuda).
set -euo pipefail
cd "$(dirname "$0")/.."
gpu="$(bench/gpu_name.sh)"
machine="${MACHINE:-${gpu:-gpu}}"
out="bench/results/${machine}_cuda"
rm -rf "$out/spheres.csv" "$out/series"  # the driver appends: start this machine's results afresh
mkdir -p "$out"
build="${BUILD:-build}"
bench="$build/stagger_bench"
limit="${RUN_LIMIT:-0}"  # seconds per scene (both backends), 0: none; a run past it loses its unfinished rows
run() {  # scene-file steps backends...
  local scene=$1 steps=$2
  shift 2
  timeout "$limit" $bench --scene "$scene" --steps "$steps" --backend "$@" --out "$out/spheres.csv" --series "$out/series" ||
    echo "run_cuda: $scene stopped (exit $?)" >&2
}
# In order of what a short GPU session needs most: the targets' sizes first.
run bench/scenes/spheres_resting_100k.json 20 cuda cpu
run bench/scenes/spheres_pile_10k.json 150 cuda cpu
run scenes/brazil_nut.json 300 cuda cpu
run bench/scenes/spheres_resting_1m.json 5 cuda
run bench/scenes/spheres_resting_10k.json 100 cuda cpu
run bench/scenes/spheres_pile_1k.json 300 cuda cpu
run scenes/brazil_nut_small.json 1000 cuda cpu
run bench/scenes/spheres_pile_100k.json 20 cuda cpu
run bench/scenes/spheres_pile_1m.json 5 cuda
