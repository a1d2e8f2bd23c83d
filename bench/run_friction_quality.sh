#!/usr/bin/env bash
# Friction quality against cost, per method and tolerance (docs/method.md, "Coulomb APGD"): on the demo
# bed (a window of steps 2,600-3,000, once it shakes) and the 1k pour (steps 300-600, while it
# collapses), bench/friction_quality.py's friction error on contacts sliding faster than 10 cm/s, the
# share of those pointing the wrong way and the cone excess; and from a `stagger run` of the scene's
# first RUN_STEPS steps, APGD iterations per step, wall seconds, the deepest overlap and the final
# kinetic energy. One CSV row per scene and variant on stdout.
#
#   bench/run_friction_quality.sh > bench/results/<machine>/friction_quality.csv
#   bench/run_friction_quality.sh compliant > bench/results/<machine>/friction_quality_compliant.csv
#   bench/run_friction_quality.sh tolerances > bench/results/<machine>/friction_quality_tolerances.csv
#   bench/run_friction_quality.sh demo "method=staggered tolerance=1e-4" ...   (the demo bed, these variants)
#
# The second: the demo bed with compliant beads (scenes/brazil_nut_small_compliant.json, h = 25 us),
# steps 40,001-41,000 (1 s in), cost over its first 40,000 steps.
#
# A variant is "auto" (the defaults, whatever the scene states), solver settings for
# bench/scene_variant.py on top of the defaults, or env:NAME=VALUE (the defaults with that environment
# variable set).
set -euo pipefail
cd "$(dirname "$0")/.."
python=/usr/bin/python3
export PYTHONPATH=build/python
threads=${THREADS:-2}
out=$(mktemp -d)
trap 'rm -rf "$out" scenes/friction_quality_variant.json bench/scenes/friction_quality_variant.json' EXIT
echo "scene,variant,window_first,window_steps,sliding_contacts,friction_error,misdirected_share,cone_excess_share,run_steps,apgd_iterations_per_step,wall_seconds,max_penetration_m,final_kinetic_energy_J,converged_fraction"
measure() {  # scene window_first window_steps run_steps variant
  # Every variant starts from the defaults: the scene's own method and tolerance are removed first
  # (the demo's scene states Coulomb APGD).
  local scene=$1 first=$2 steps=$3 run_steps=$4 variant=$5 env_setting=() settings=()
  if [[ $variant == env:* ]]; then
    env_setting=("${variant#env:}")
  elif [ "$variant" != auto ]; then
    read -r -a settings <<< "$variant"
  fi
  local file
  file=$(dirname "$scene")/friction_quality_variant.json
  $python bench/scene_variant.py "$scene" "$file" "" method= tolerance= "${settings[@]}"
  local quality
  quality=$(env "${env_setting[@]}" $python bench/friction_quality.py "$file" "$steps" "$first" 0.1 0.5)
  rm -rf "$out/run"
  env "${env_setting[@]}" build/stagger run "$file" --steps "$run_steps" --threads "$threads" --quiet --out "$out/run" > /dev/null
  local cost
  cost=$($python -c "
import json; d = json.load(open('$out/run/summary.json'))
print(f\"{d['apgd_iterations_per_step']:.2f},{d['wall_seconds']:.2f},{d['max_penetration']:.3g},{d['final_kinetic_energy']:.3g},{d['converged_fraction']:.4f}\")")
  echo "$(basename "$scene" .json),\"$variant\",$first,$steps,$quality,$run_steps,$cost"
}
if [ "${1:-}" = compliant ]; then
  for variant in auto "method=coulomb_apgd tolerance=0.002"; do
    measure scenes/brazil_nut_small_compliant.json 40000 1000 40000 "$variant"
  done
  exit 0
fi
demo=scenes/brazil_nut_small.json
# Or the demo bed with the variants given after "demo".
if [ "${1:-}" = demo ]; then
  shift
  for variant in "$@"; do measure $demo 2600 400 3000 "$variant"; done
  exit 0
fi
# The third: the demo bed at looser Coulomb APGD tolerances, and with the settings its scene had at
# 49e4d8c (Staggered Projections to 1e-3, at most 30 outer iterations), issue 25's baseline.
if [ "${1:-}" = tolerances ]; then
  for variant in "method=coulomb_apgd tolerance=0.002" "method=coulomb_apgd tolerance=0.005" \
    "method=coulomb_apgd tolerance=0.01" "method=staggered tolerance=0.001 max_outer_iterations=30"; do
    measure $demo 2600 400 3000 "$variant"
  done
  exit 0
fi
for variant in auto "tolerance=0.001" env:STAGGER_TRESCA_CONE_CHECK=1 "method=coulomb_apgd tolerance=0.003" \
  "method=coulomb_apgd tolerance=0.002" "method=coulomb_apgd tolerance=0.0015" "method=coulomb_apgd tolerance=0.001"; do
  measure $demo 2600 400 3000 "$variant"
done
pour=bench/scenes/spheres_pile_1k.json
for variant in auto "method=coulomb_apgd tolerance=0.003" "method=coulomb_apgd tolerance=0.002"; do
  measure $pour 300 300 1500 "$variant"
done
