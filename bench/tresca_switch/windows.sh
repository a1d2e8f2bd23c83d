#!/usr/bin/env bash
# The Tresca switch of stalled structures (SolveControls::tresca_switch_window,
# STAGGER_TRESCA_SWITCH_WINDOW; docs/method.md, "A stalled structure goes on by the Tresca fixed point")
# at windows 0 (off), 5 and 10, one thread, on the structures where the staggered loop can stall: the
# box stack on slopes of 1-4 degrees (2 s), the card house, the catenary arch, the hexagonal pyramid,
# the brick wall, two mesh cubes stacked on a 3 degree slope and ten mesh cubes in a bin. Each on the
# GPU's path (no exact solve, no polish: STAGGER_EXACT=0 STAGGER_POLISH=0, as the CUDA executor runs)
# and on the CPU's (both on). Configurations alternate per scene.
#
#   bench/tresca_switch/windows.sh [BINARY] > result.csv
# drift_mm: the largest displacement of a dynamic body from its position after the first step.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build/stagger}
out=$(mktemp -d)
made=()
trap 'rm -rf "$out" "${made[@]}"' EXIT
for deg in 1 2 3 4; do
  made+=("scenes/validation/box_stack_slope$deg.json")  # beside the original, so that paths resolve
  /usr/bin/python3 - "$deg" <<'PY'
import json, math, sys
d = int(sys.argv[1]); t = d * math.pi / 180
text = "\n".join(l for l in open("scenes/validation/box_stack.json").read().split("\n") if not l.lstrip().startswith("//"))
s = json.loads(text); s["gravity"] = [9.81 * math.sin(t), 0, -9.81 * math.cos(t)]; s["duration"] = 2.0
s["name"] += f"_slope{d}"
json.dump(s, open(f"scenes/validation/box_stack_slope{d}.json", "w"), indent=1)
PY
done
scenes="scenes/validation/box_stack_slope1.json scenes/validation/box_stack_slope2.json
scenes/validation/box_stack_slope3.json scenes/validation/box_stack_slope4.json
scenes/validation/card_house.json scenes/validation/catenary_arch.json scenes/validation/hexagonal_pyramid.json
scenes/validation/brick_wall.json bench/scenes/mesh_cube_stack_slope3.json bench/scenes/mesh_cubes_bin.json"
echo "path,window,scene,converged,apgd_per_step,outer_mean,wall_s,final_kinetic_energy,drift_mm"
for scene in $scenes; do
  "$bin" run "$scene" --steps 1 --out "$out/first" --threads 1 --quiet > /dev/null
  for config in gpu:0 gpu:5 gpu:10 cpu:0 cpu:5 cpu:10; do
    path=${config%%:*} w=${config##*:}
    exact=1; [ "$path" = gpu ] && exact=0
    STAGGER_EXACT=$exact STAGGER_POLISH=$exact STAGGER_TRESCA_SWITCH_WINDOW=$w \
      "$bin" run "$scene" --out "$out/run" --threads 1 --quiet > /dev/null
    /usr/bin/python3 - "$out" "$path" "$w" "$scene" <<'PY'
import csv, json, math, sys
out, path, w, scene = sys.argv[1:]
d = json.load(open(f"{out}/run/summary.json"))
first = {r["id"]: r for r in csv.DictReader(open(f"{out}/first/final_state.csv"))}
drift = 0.0
for r in csv.DictReader(open(f"{out}/run/final_state.csv")):
    f = first[r["id"]]
    drift = max(drift, math.dist([float(r[c]) for c in "xyz"], [float(f[c]) for c in "xyz"]))
print("%s,%s,%s,%.4f,%.1f,%.2f,%.3f,%.3g,%.4g" % (path, w, scene.split("/")[-1][:-5], d["converged_fraction"],
      d["apgd_iterations_per_step"], d["outer_iterations_mean"], d["wall_seconds"], d["final_kinetic_energy"], 1e3 * drift))
PY
  done
done
