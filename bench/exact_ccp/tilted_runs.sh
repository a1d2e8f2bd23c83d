#!/usr/bin/env bash
# Two builds of stagger on the catenary arch and the card house, each as written and four times with
# gravity tilted by N * 1e-7 m/s^2 (N = 1..4) so that the runs' paths part after a few steps: the
# exact solve's outcome on one path is partly luck, on five it is a rate. Runs alternate per scene.
#
#   bench/exact_ccp/tilted_runs.sh LABEL_A BINARY_A LABEL_B BINARY_B > result.csv
#
# pre_impact_above_tol: of the arch's first 44 steps (the block lands at step 45), those whose exact
# solve ended above the scene's 1e-5 (from STAGGER_TRACE). One thread.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -eq 4 ] || { echo "usage: $0 LABEL_A BINARY_A LABEL_B BINARY_B" >&2; exit 2; }
out=$(mktemp -d)
made=()
trap 'rm -rf "$out" "${made[@]}"' EXIT
for base in catenary_arch card_house; do
  for n in 1 2 3 4; do
    # Beside the original, so that the arch's mesh paths resolve.
    variant=scenes/validation/${base}_tilted$n.json
    made+=("$variant")
    /usr/bin/python3 - "$base" "$n" "$variant" <<'PY'
import json, sys
base, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
text = "\n".join(l for l in open(f"scenes/validation/{base}.json").read().split("\n") if not l.lstrip().startswith("//"))
scene = json.loads(text)
scene["gravity"] = [1e-7 * n, 0, -9.81]
scene["name"] += f"_tilted{n}"
json.dump(scene, open(out, "w"), indent=1)
PY
  done
done
echo "binary,scene,converged_pct,pre_impact_above_tol,wall_s"
for base in catenary_arch card_house; do
  for scene in $base ${base}_tilted1 ${base}_tilted2 ${base}_tilted3 ${base}_tilted4; do
    for side in "$1:$2" "$3:$4"; do
      label=${side%%:*} bin=${side#*:}
      STAGGER_TRACE=1 "$bin" run "scenes/validation/$scene.json" --out "$out/run" --threads 1 > "$out/log" 2>&1
      converged=$(grep -o 'converged [0-9.]*%' "$out/log" | grep -o '[0-9.]*')
      wall=$(grep -o 'in [0-9.]* s' "$out/log" | cut -d' ' -f2)
      above=NA
      if [ $base = catenary_arch ]; then
        above=$(awk '/exact solve/ && ++seen <= 44 {for (i = 1; i <= NF; i++) if ($i == "exact") e = $(i + 1); if (e > 1e-5) n++} END {print n + 0}' "$out/log")
      fi
      echo "$label,$scene,$converged,$above,$wall"
    done
  done
done
