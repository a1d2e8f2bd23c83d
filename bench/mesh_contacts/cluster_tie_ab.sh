#!/usr/bin/env bash
# Two builds of stagger on scenes of mesh bodies resting on flat faces (kernels/mesh_clusters.h, the
# tie band of a cluster's deepest sample), one thread, runs alternated A, B per scene: the catenary
# arch (21 mesh voussoirs) as written and with gravity tilted by N * 1e-7 m/s^2 (their paths part after
# a few steps, as bench/exact_ccp/tilted_runs.sh), the 10-bunny drop the same way (chaotic: its times
# differ severalfold between such runs), ten mesh cubes dropped into a bin from three initial states,
# and two mesh cubes stacked under gravity tilted by 3 degrees. Per run: steps converged, outer
# iterations a step, wall seconds, the deepest overlap, and the fastest and median body speed at the
# end over the bodies that move at all (|v| + |w| r, r the body's bounding radius: 3.5 cm for the cubes, 7 cm for the bunnies, 10 cm for
# the voussoirs).
#
#   bench/mesh_contacts/cluster_tie_ab.sh LABEL_A BINARY_A LABEL_B BINARY_B > result.csv
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 4 ] || { echo "usage: $0 LABEL_A BINARY_A LABEL_B BINARY_B" >&2; exit 2; }
label_a=$1 bin_a=$2 label_b=$3 bin_b=$4
out=$(mktemp -d)
made=()
trap 'rm -rf "$out" "${made[@]}"' EXIT
# Variants beside their originals, so that mesh paths resolve.
variant() {  # source.json new.json python-expression-on-scene
  made+=("$2")
  /usr/bin/python3 - "$1" "$2" "$3" <<'PY'
import json, sys
src, dst, change = sys.argv[1:]
text = "\n".join(l for l in open(src).read().split("\n") if not l.lstrip().startswith("//"))
scene = json.loads(text)
exec(change)
json.dump(scene, open(dst, "w"), indent=1)
PY
}
runs=()
for n in 0 1 2 3 4; do
  f=scenes/validation/catenary_arch_tie$n.json
  variant scenes/validation/catenary_arch.json "$f" "scene['gravity'] = [1e-7 * $n, 0, -9.81]"
  runs+=("$f:0.10")
done
for n in 0 1 2 3; do
  f=scenes/bunny_drop_tie$n.json
  variant scenes/bunny_drop.json "$f" "scene['gravity'] = [1e-7 * $n, 0, -9.81]"
  runs+=("$f:0.07")
done
for seed in 3 4 5; do
  f=bench/scenes/mesh_cubes_bin_seed$seed.json
  variant bench/scenes/mesh_cubes_bin.json "$f" "scene['generators'][0]['seed'] = $seed"
  runs+=("$f:0.035")
done
runs+=("bench/scenes/mesh_cube_stack_slope3.json:0.035")
echo "build,scene,converged,outer_mean,wall_s,max_penetration,end_speed_max,end_speed_median"
for entry in "${runs[@]}"; do
  scene=${entry%%:*} radius=${entry##*:}
  for side in a b; do
    if [ $side = a ]; then label=$label_a bin=$bin_a; else label=$label_b bin=$bin_b; fi
    rm -rf "$out/run"
    "$bin" run "$scene" --out "$out/run" --threads 1 --quiet > /dev/null
    /usr/bin/python3 - "$out/run" "$label" "$scene" "$radius" <<'PY'
import csv, json, math, statistics, sys
run, label, scene, radius = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
d = json.load(open(f"{run}/summary.json"))
speeds = []
for row in csv.DictReader(open(f"{run}/final_state.csv")):
    v = [float(row[k]) for k in ("vx", "vy", "vz")]
    w = [float(row[k]) for k in ("wx", "wy", "wz")]
    if not any(v) and not any(w): continue  # fixed bodies (a moving body is never exactly at rest)
    speeds.append(math.hypot(*v) + radius * math.hypot(*w))
print(f"{label},{scene.split('/')[-1][:-5]},{d['converged_fraction']:.4f},{d['outer_iterations_mean']:.2f},{d['wall_seconds']:.2f},"
      f"{d['max_penetration']:.3g},{max(speeds):.3g},{statistics.median(speeds):.3g}")
PY
  done
done
