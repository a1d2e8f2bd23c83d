#!/usr/bin/env bash
# The Tresca switch (STAGGER_TRESCA_SWITCH_WINDOW) off and at its default window of 10 on the GPU's path
# (no exact solve, no polish), one thread, on scenes of small islands that move: ten mesh cubes dropped
# into a bin (bench/scenes/mesh_cubes_bin.json, seeds 3, 4, 5) and the 10-bunny drop. Alternated per scene.
#
#   bench/tresca_switch/bins.sh [BINARY] > result.csv
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build/stagger}
out=$(mktemp -d)
made=()
trap 'rm -rf "$out" "${made[@]}"' EXIT
for seed in 3 4 5; do
  made+=("bench/scenes/mesh_cubes_bin_seed$seed.json")  # beside the original, so that its mesh path resolves
  /usr/bin/python3 - "$seed" <<'PY'
import json, sys
seed = int(sys.argv[1])
text = "\n".join(l for l in open("bench/scenes/mesh_cubes_bin.json").read().split("\n") if not l.lstrip().startswith("//"))
s = json.loads(text); s["generators"][0]["seed"] = seed
json.dump(s, open(f"bench/scenes/mesh_cubes_bin_seed{seed}.json", "w"), indent=1)
PY
done
echo "window,scene,converged,apgd_per_step,outer_mean,wall_s"
for scene in bench/scenes/mesh_cubes_bin_seed{3,4,5}.json scenes/bunny_drop.json; do
  for w in 0 10; do
    STAGGER_EXACT=0 STAGGER_POLISH=0 STAGGER_TRESCA_SWITCH_WINDOW=$w \
      "$bin" run "$scene" --out "$out/run" --threads 1 --quiet > /dev/null
    /usr/bin/python3 -c "
import json; d = json.load(open('$out/run/summary.json'))
print('$w,$(basename "$scene" .json),%.4f,%.1f,%.2f,%.2f' % (d['converged_fraction'], d['apgd_iterations_per_step'], d['outer_iterations_mean'], d['wall_seconds']))"
  done
done
