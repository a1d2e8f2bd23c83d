#!/usr/bin/env bash
# Reproduces bench/results/<machine>_cpu/bunny.csv: the bunny drops (scenes/bunny_drop*.json) on the
# batched CPU backend. Each run covers a window of steps from the scene's start: the whole 3.5 s of the
# 10-bunny drop (falls, impacts, a resting pile), and the first steps of the larger drops (free fall,
# then the bottom layer's impacts). MACHINE names the result directory; STEPS_2000 lengthens the last;
# BACKEND=cuda runs the CUDA backend (results in bench/results/<MACHINE>_cuda/).
set -euo pipefail
cd "$(dirname "$0")/.."
machine="${MACHINE:-$(hostname)-$(nproc)core}"
backend="${BACKEND:-cpu}"
out="bench/results/${machine}_${backend}"
rm -rf "$out/bunny.csv" "$out/bunny_series"
mkdir -p "$out"
build="${BUILD:-build}"
[ -x "$build/stagger_bench" ] || scripts/setup.sh
run() { "$build/stagger_bench" --scene "scenes/$1.json" --steps "$2" --backend "$backend" --out "$out/bunny.csv" --series "$out/bunny_series"; }
run bunny_drop 3500
run bunny_drop_100 500
run bunny_drop_2000 "${STEPS_2000:-250}"
