#!/usr/bin/env bash
# The early hand-off of stalled small islands to the exact solve (SolveControls::exact_stall_window,
# STAGGER_EXACT_WINDOW) at windows 0 (off: after the whole outer budget), 5 and 10, one thread, on the
# catenary arch and the card house as written and with gravity tilted by N * 1e-7 m/s^2 (N = 1..4, as
# tilted_runs.sh: their paths part after a few steps), and on the box stack with gravity tilted by 1-4
# degrees (2 s). Runs alternate windows per scene.
#
#   bench/exact_ccp/hand_off_windows.sh [BINARY] > result.csv
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build/stagger}
out=$(mktemp -d)
made=()
trap 'rm -rf "$out" "${made[@]}"' EXIT
for base in catenary_arch card_house; do
  for n in 1 2 3 4; do
    made+=("scenes/validation/${base}_tilted$n.json")  # beside the original, so that mesh paths resolve
    /usr/bin/python3 - "$base" "$n" <<'PY'
import json, sys
base, n = sys.argv[1], int(sys.argv[2])
text = "\n".join(l for l in open(f"scenes/validation/{base}.json").read().split("\n") if not l.lstrip().startswith("//"))
scene = json.loads(text); scene["gravity"] = [1e-7 * n, 0, -9.81]; scene["name"] += f"_tilted{n}"
json.dump(scene, open(f"scenes/validation/{base}_tilted{n}.json", "w"), indent=1)
PY
  done
done
for deg in 1 2 3 4; do
  made+=("scenes/validation/box_stack_slope$deg.json")
  /usr/bin/python3 - "$deg" <<'PY'
import json, math, sys
d = int(sys.argv[1]); t = d * math.pi / 180
text = "\n".join(l for l in open("scenes/validation/box_stack.json").read().split("\n") if not l.lstrip().startswith("//"))
s = json.loads(text); s["gravity"] = [9.81 * math.sin(t), 0, -9.81 * math.cos(t)]; s["duration"] = 2.0
json.dump(s, open(f"scenes/validation/box_stack_slope{d}.json", "w"), indent=1)
PY
done
echo "window,scene,converged,apgd_per_step,outer_mean,wall_s"
for scene in catenary_arch catenary_arch_tilted{1,2,3,4} card_house card_house_tilted{1,2,3,4} box_stack_slope{1,2,3,4}; do
  for w in 0 5 10; do
    STAGGER_EXACT_WINDOW=$w "$bin" run "scenes/validation/$scene.json" --out "$out/run" --threads 1 --quiet > /dev/null
    /usr/bin/python3 -c "
import json; d = json.load(open('$out/run/summary.json'))
print('$w,$scene,%.4f,%.1f,%.2f,%.3f' % (d['converged_fraction'], d['apgd_iterations_per_step'], d['outer_iterations_mean'], d['wall_seconds']))"
  done
done
