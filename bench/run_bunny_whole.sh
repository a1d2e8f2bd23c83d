#!/usr/bin/env bash
# The whole 2,000-bunny drop (scenes/bunny_drop_2000.json, 3,500 steps) on the batched CPU backend: the
# figure to set against the thesis (an average solve stage of 37.5 s per step, Kaufman Table 7.2). It takes
# hours, so it runs in stretches of STRETCH steps, each resumed from the previous one's checkpoint in
# out/bunny_whole/: run the script again after an interruption and it goes on from the last checkpoint.
# After each stretch one row goes to bench/results/<MACHINE>_cpu/bunny_2000_whole.csv, computed from the
# run's cumulative summary.json: the stretch's steps, wall and solve-stage seconds per step, contacts,
# converged steps, and at its end the deepest overlap so far and the bunnies' kinetic energy (rest).
#   MACHINE=epyc-2core [THREADS=2] [STRETCH=250] [UNTIL=3500] bench/run_bunny_whole.sh
set -euo pipefail
cd "$(dirname "$0")/.."
machine="${MACHINE:-$(hostname)-$(nproc)core}"
threads="${THREADS:-$(nproc)}"
stretch="${STRETCH:-250}"
until_step="${UNTIL:-3500}"
scene=scenes/bunny_drop_2000.json
run_dir=out/bunny_whole
out="bench/results/${machine}_cpu"
csv="$out/bunny_2000_whole.csv"
mkdir -p "$out" "$run_dir"
[ -x build/stagger ] || scripts/setup.sh
command -v jq >/dev/null || scripts/ensure_packages.sh jq

commit="$(git rev-parse --short HEAD)$(git diff --quiet -- host kernels || echo -dirty)"
[ -f "$csv" ] || echo "date,commit,threads,first_step,last_step,wall_s_per_step,solve_s_per_step,collision_s_per_step,contacts_mean,contacts_max_so_far,converged_fraction,outer_iterations_mean_so_far,max_penetration_so_far,kinetic_energy_end,solve_s_per_step_so_far" > "$csv"

# Cumulative figures of the last summary (zeros before the first stretch).
previous() {
  if [ -f "$run_dir/summary.json" ]; then
    jq -r '[.steps, .wall_seconds, .stage_seconds.solve,
            (.stage_seconds.broadphase + .stage_seconds.narrowphase + .stage_seconds.islands),
            .contacts_mean * .steps, .converged_fraction * .steps] | @tsv' "$run_dir/summary.json"
  else
    printf '0\t0\t0\t0\t0\t0\n'
  fi
}

while :; do
  read -r steps0 wall0 solve0 coll0 contacts0 conv0 < <(previous)
  [ "$steps0" -ge "$until_step" ] && break
  target=$(( steps0 + stretch < until_step ? steps0 + stretch : until_step ))
  status=0
  if [ "$steps0" -eq 0 ]; then
    build/stagger run "$scene" --out "$run_dir" --steps "$target" --threads "$threads" --checkpoint-every 50 || status=$?
  else
    build/stagger run --resume "$run_dir/checkpoint.stagger" --out "$run_dir" --steps "$target" \
      --threads "$threads" --checkpoint-every 50 || status=$?
  fi
  # An interrupted stretch (a signal writes the checkpoint and the summary) still gets its row.
  [ "$(jq .steps "$run_dir/summary.json")" -gt "$steps0" ] || exit 1
  # The run's own outer-iteration mean is over island solves since the start; this row gives the whole
  # run's mean at the stretch's end beside the stretch's own figures.
  jq -r --argjson s0 "$steps0" --argjson w0 "$wall0" --argjson v0 "$solve0" --argjson c0 "$coll0" \
        --argjson n0 "$contacts0" --argjson k0 "$conv0" --arg date "$(date -u +%FT%TZ)" \
        --arg commit "$commit" --argjson threads "$threads" '
    (.steps - $s0) as $n |
    (.stage_seconds.broadphase + .stage_seconds.narrowphase + .stage_seconds.islands) as $coll |
    [$date, $commit, $threads, $s0 + 1, .steps,
     ((.wall_seconds - $w0) / $n), ((.stage_seconds.solve - $v0) / $n), (($coll - $c0) / $n),
     ((.contacts_mean * .steps - $n0) / $n), .contacts_max,
     ((.converged_fraction * .steps - $k0) / $n), .outer_iterations_mean,
     .max_penetration, .final_kinetic_energy, (.stage_seconds.solve / .steps)] | @csv' \
     "$run_dir/summary.json" | tr -d '"' >> "$csv"
  tail -1 "$csv"
  [ "$status" -eq 0 ] || exit "$status"
done
cat "$csv"
