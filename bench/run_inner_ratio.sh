#!/usr/bin/env bash
# How loosely the inner QPs may be solved: solver.inner_tolerance_ratio (the adaptive inner tolerance is
# this fraction of the outer error; SOLVER.md's 0.1, 0.3 for the Tresca fixed point, docs/method.md) swept on the
# batched CPU backend. Writes bench/results/<machine>_cpu/inner_ratio.csv (stagger_bench rows; the scene
# name ends in _<method>_r<ratio>) for the scenes of run_methods.sh, and inner_ratio_settled.csv for the
# resting 2,000-bunny pile: STEPS steps resumed from the committed checkpoint of run_bunny_whole.sh,
# with only the solver settings changed (docs/outputs.md#checkpoints).
#   MACHINE=epyc-2core [THREADS=2] [RATIOS="0.1 0.3 0.5 0.7"] [STEPS=10] bench/run_inner_ratio.sh
set -euo pipefail
cd "$(dirname "$0")/.."
machine="${MACHINE:-$(hostname)-$(nproc)core}"
threads="${THREADS:-$(nproc)}"
ratios="${RATIOS:-0.1 0.3 0.5 0.7}"           # the Tresca fixed point's
staggered_ratios="${STAGGERED_RATIOS:-0.1 0.5}"  # Staggered Projections' (slower to run)
settled_steps="${STEPS:-10}"
out="bench/results/${machine}_cpu"
mkdir -p "$out"
build="${BUILD:-build}"
[ -x "$build/stagger_bench" ] || scripts/setup.sh
command -v jq >/dev/null || scripts/ensure_packages.sh jq
commit="$(git rev-parse --short HEAD)$(git diff --quiet -- host kernels || echo -dirty)"

# A copy of scene $1 beside it with solver.method $2 and solver.inner_tolerance_ratio $3, its name
# suffixed by $4; prints the copy's path.
scene_copy() {
  local copy
  copy="$(dirname "$1")/.ratio_$2_$3.json"
  bench/scene_variant.py "$1" "$copy" "$4" method="$2" inner_tolerance_ratio="$3"
  echo "$copy"
}

# The resting pile: the committed checkpoint, whose scene text has no ratio (each copy differs from it
# in "solver" only, so the run resumes with the copy's settings).
checkpoint="$out/bunny_2000_whole.checkpoint.xz"
settled="$out/inner_ratio_settled.csv"
if [ -f "$checkpoint" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  xz -d -c "$checkpoint" > "$tmp/pile.stagger"
  first=$(( $(jq .steps "$out/bunny_2000_whole.summary.json") + 1 ))
  last=$(( first + settled_steps - 1 ))
  [ -f "$settled" ] || echo "date,commit,threads,ratio,first_step,last_step,solve_s_per_step,wall_s_per_step,contacts_mean,converged_steps,kinetic_energy_end" > "$settled"
  for ratio in $ratios; do
    copy=$(scene_copy scenes/bunny_drop_2000.json tresca_fixed_point "$ratio" "")
    "$build/stagger" run "$copy" --resume "$tmp/pile.stagger" --out "$tmp/r$ratio" --steps "$last" \
        --threads "$threads" --quiet >/dev/null 2>&1
    rm -f "$copy"
    jq -r -n --slurpfile a "$out/bunny_2000_whole.summary.json" --slurpfile b "$tmp/r$ratio/summary.json" \
          --arg date "$(date -u +%FT%TZ)" --arg commit "$commit" --argjson threads "$threads" \
          --argjson ratio "$ratio" --argjson first "$first" '
      $a[0] as $a | $b[0] as $b | ($b.steps - $a.steps) as $n |
      [$date, $commit, $threads, $ratio, $first, $b.steps,
       (($b.stage_seconds.solve - $a.stage_seconds.solve) / $n), (($b.wall_seconds - $a.wall_seconds) / $n),
       (($b.contacts_mean * $b.steps - $a.contacts_mean * $a.steps) / $n),
       ($n - ($b.unconverged_steps - $a.unconverged_steps)), $b.final_kinetic_energy] | @csv' | tr -d '"' >> "$settled"
    tail -1 "$settled"
  done
fi

run() {  # scene steps
  local method ratio copy list
  for method in tresca_fixed_point staggered; do
    [ "$method" = staggered ] && list=$staggered_ratios || list=$ratios
    for ratio in $list; do
      copy=$(scene_copy "$1" "$method" "$ratio" "_${method}_r$ratio")
      "$build/stagger_bench" --scene "$copy" --steps "$2" --backend cpu --threads "$threads" --out "$out/inner_ratio.csv"
      rm -f "$copy"
    done
  done
}
grep -v '^#' bench/method_scenes.txt | while read -r scene steps; do run "$scene" "$steps" < /dev/null; done
