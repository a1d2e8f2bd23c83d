#!/usr/bin/env bash
# Reproduces bench/results/<machine>_cpu/methods.csv: Staggered Projections against the Tresca fixed
# point (docs/method.md) on the scenes where they differ — a granular pour, two bunny drops, the card
# house and the catenary arch — on the batched CPU backend. Each scene runs twice, its "solver.method"
# set to each method and no inner-tolerance ratio, so each method runs at its own default
# (bench/scene_variant.py writes the copies beside the scenes, so relative paths still resolve).
set -euo pipefail
cd "$(dirname "$0")/.."
machine="${MACHINE:-$(hostname)-$(nproc)core}"
out="bench/results/${machine}_cpu"
mkdir -p "$out"
rm -f "$out/methods.csv"
build="${BUILD:-build}"
[ -x "$build/stagger_bench" ] || scripts/setup.sh
run() {  # scene steps
  local copy
  for method in staggered tresca_fixed_point; do
    copy="$(dirname "$1")/.methods_$method.json"
    bench/scene_variant.py "$1" "$copy" "_$method" method="$method" inner_tolerance_ratio=
    "$build/stagger_bench" --scene "$copy" --steps "$2" --backend cpu --out "$out/methods.csv"
    rm -f "$copy"
  done
}
grep -v '^#' bench/method_scenes.txt | while read -r scene steps; do run "$scene" "$steps" < /dev/null; done
