#!/usr/bin/env bash
# Two builds of stagger on the same scenes, runs alternated (A, B, A, B, ...) so that a VM whose speed
# drifts over minutes treats both alike: one CSV row per run with wall and stage seconds, the outer and
# APGD iterations (per island solve, and all islands' per step), the deepest overlap and the last
# step's state hash (equal hashes: the same states, so only the speed changed).
#
#   bench/ab.sh LABEL_A BINARY_A LABEL_B BINARY_B [ROUNDS] > result.csv
#
# Build a commit beside the working tree with
#   git worktree add /tmp/base <commit> && cmake -S /tmp/base -B /tmp/base/build -G Ninja \
#     -DCMAKE_BUILD_TYPE=Release -DSTAGGER_BUILD_TESTS=OFF -DSTAGGER_ENABLE_CUDA=OFF -DSTAGGER_PYTHON=OFF \
#     && cmake --build /tmp/base/build --target stagger
# SCENES="scene.json:steps ..." replaces the default set; THREADS (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 4 ] || { echo "usage: $0 LABEL_A BINARY_A LABEL_B BINARY_B [ROUNDS]" >&2; exit 2; }
label_a=$1 bin_a=$2 label_b=$3 bin_b=$4 rounds=${5:-2}
threads=${THREADS:-2}
scenes=${SCENES:-"scenes/brazil_nut_small.json:4000 bench/scenes/spheres_pile_1k.json:600
  bench/scenes/spheres_pile_10k.json:200 bench/scenes/spheres_resting_10k.json:100 bench/scenes/box_stacks_900.json:300"}
python=/usr/bin/python3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "commit,run,scene,steps,threads,wall_seconds,steps_per_second,solve_seconds,broadphase_seconds,outer_iterations_mean,inner_iterations_mean,apgd_iterations_per_step,converged_fraction,max_penetration,state_hash_last"
for run in $(seq 1 "$rounds"); do
  for entry in $scenes; do
    scene=${entry%%:*} steps=${entry##*:}
    for side in a b; do
      if [ $side = a ]; then label=$label_a bin=$bin_a; else label=$label_b bin=$bin_b; fi
      rm -rf "$out/run"
      hash=$("$bin" run "$scene" --steps "$steps" --threads "$threads" --quiet --hash --out "$out/run" | awk '/^hash/{h=$3} END{print h}')
      "$python" - "$out/run/summary.json" "$label" "$run" "$steps" "$threads" "$hash" <<'EOF'
import json, sys
path, label, run, steps, threads, digest = sys.argv[1:]
s = json.load(open(path))
st = s["stage_seconds"]
print(f'{label},{run},{s["scene"]},{steps},{threads},{s["wall_seconds"]:.3f},{s["steps_per_second"]:.2f},'
      f'{st["solve"]:.3f},{st["broadphase"]:.3f},{s["outer_iterations_mean"]:.3f},{s["inner_iterations_mean"]:.2f},{s.get("apgd_iterations_per_step", float("nan")):.2f},'
      f'{s["converged_fraction"]:.4f},{s["max_penetration"]:.3g},{digest}')
EOF
    done
  done
done
