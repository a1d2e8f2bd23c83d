#!/usr/bin/env bash
# Reproduces bench/results/<machine>_cpu/: the spheres pile (poured, the dynamic case) and the resting
# bed (the warm-started steady state) at 1k/10k/100k spheres, on the batched CPU backend and on the
# Eigen reference, with the scenes' default solver settings. Each run covers a fixed window of steps
# from the scene's start (see docs/benchmarks.md). MACHINE names the result directory.
set -euo pipefail
cd "$(dirname "$0")/.."
machine="${MACHINE:-$(hostname)-$(nproc)core}"
out="bench/results/${machine}_cpu"
rm -rf "$out/spheres.csv" "$out/series"  # the driver appends: start this machine's results afresh
mkdir -p "$out"
build="${BUILD:-build}"  # the build directory to take stagger_bench from
[ -x "$build/stagger_bench" ] || scripts/setup.sh
bench="$build/stagger_bench"
backends="${BACKENDS:-cpu reference}"  # BACKENDS=cpu skips the (slow, single-threaded) reference
run() {  # scene steps [cpu-only]
  local b=$backends
  [ "${3:-}" = cpu-only ] && b=cpu
  # shellcheck disable=SC2086
  $bench --scene "bench/scenes/$1.json" --steps "$2" --backend $b --out "$out/spheres.csv" --series "$out/series"
}
run spheres_pile_1k 300
run spheres_resting_10k 100
run spheres_pile_10k 150
run spheres_resting_100k 20
run spheres_pile_100k 20 cpu-only
