#!/usr/bin/env bash
# Box faces resting flat: two builds alternated per scene (one thread): twenty boxes dropped into a bin
# (bench/scenes/boxes_bin.json, seeds 3, 4, 5; 3 s) and a hundred poured into a larger one
# (bench/scenes/boxes_pour.json, 2 s). Made for the tie bands of kernels/box_box.h (docs/method.md,
# Known behaviour: "A small pile settling").
#
#   bench/box_contacts/resting_ties_ab.sh LABEL_A BINARY_A LABEL_B BINARY_B > result.csv
# end_speed_max: the fastest dynamic body at the end (|v| + |w| times 5 cm).
set -euo pipefail
cd "$(dirname "$0")/../.."
labels=("$1" "$3") bins=("$2" "$4")
out=$(mktemp -d)
made=()
trap 'rm -rf "$out" "${made[@]}"' EXIT
for seed in 4 5; do
  made+=("bench/scenes/boxes_bin_seed$seed.json")
  /usr/bin/python3 - "$seed" <<'PY'
import json, sys
seed = int(sys.argv[1])
s = json.load(open("bench/scenes/boxes_bin.json")); s["generators"][0]["seed"] = seed; s["name"] += f"_seed{seed}"
json.dump(s, open(f"bench/scenes/boxes_bin_seed{seed}.json", "w"), indent=1)
PY
done
echo "build,scene,wall_s,converged,apgd_per_step,outer_mean,max_penetration_m,end_speed_max"
for scene in bench/scenes/boxes_bin.json bench/scenes/boxes_bin_seed4.json bench/scenes/boxes_bin_seed5.json bench/scenes/boxes_pour.json; do
  for k in 0 1; do
    "${bins[$k]}" run "$scene" --out "$out/run" --threads 1 --quiet > /dev/null
    /usr/bin/python3 - "$out" "${labels[$k]}" "$scene" <<'PY'
import csv, json, math, sys
out, label, scene = sys.argv[1:]
d = json.load(open(f"{out}/run/summary.json"))
speed = 0.0
for r in csv.DictReader(open(f"{out}/run/final_state.csv")):
    v = math.hypot(*(float(r[c]) for c in ("vx", "vy", "vz"))) + 0.05 * math.hypot(*(float(r[c]) for c in ("wx", "wy", "wz")))
    speed = max(speed, v)
print("%s,%s,%.2f,%.4f,%.1f,%.2f,%.3g,%.3g" % (label, d["scene"], d["wall_seconds"], d["converged_fraction"],
      d["apgd_iterations_per_step"], d["outer_iterations_mean"], d["max_penetration"], speed))
PY
  done
done
