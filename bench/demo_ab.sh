#!/usr/bin/env bash
# The whole demo (scripts/demo.sh's run) of two builds, each with its own commit's scene file, runs
# alternated (A, B, A, B, ...) so that a VM whose speed drifts treats both alike: issue 25's "demo 3x
# faster than 49e4d8c" is measured with it. One CSV row per run: wall and solve seconds, APGD
# iterations per step, the deepest overlap, and where the intruder ended (height above the floor and
# the share of beads below it, as `stagger run` prints them).
#
#   bench/demo_ab.sh LABEL_A BINARY_A SCENE_A LABEL_B BINARY_B SCENE_B [ROUNDS] > result.csv
#
# Build an old commit beside the working tree as bench/ab.sh says; its scene is then
# /tmp/base/scenes/brazil_nut_small.json. THREADS (default 2), STEPS (default: the scene's).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 6 ] || { echo "usage: $0 LABEL_A BINARY_A SCENE_A LABEL_B BINARY_B SCENE_B [ROUNDS]" >&2; exit 2; }
rounds=${7:-2}
threads=${THREADS:-2}
steps=()
[ -n "${STEPS:-}" ] && steps=(--steps "$STEPS")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "label,run,threads,wall_seconds,solve_seconds,apgd_iterations_per_step,max_penetration,intruder_end_m,intruder_above_percent"
for run in $(seq 1 "$rounds"); do
  for side in a b; do
    if [ $side = a ]; then label=$1 bin=$2 scene=$3; else label=$4 bin=$5 scene=$6; fi
    rm -rf "$out/run"
    "$bin" run "$scene" "${steps[@]}" --threads "$threads" --out "$out/run" > "$out/stdout" 2> /dev/null
    /usr/bin/python3 - "$out/run/summary.json" "$out/stdout" "$label" "$run" "$threads" <<'EOF'
import json, re, sys
path, stdout, label, run, threads = sys.argv[1:]
s = json.load(open(path))
m = re.search(r"intruder: height \S+ m -> (\S+) m .*higher than (\S+)% of", open(stdout).read())
print(f'{label},{run},{threads},{s["wall_seconds"]:.2f},{s["stage_seconds"]["solve"]:.2f},'
      f'{s.get("apgd_iterations_per_step", "")},{s["max_penetration"]:.3g},{m.group(1)},{m.group(2)}')
EOF
  done
done
