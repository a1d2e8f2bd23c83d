#!/usr/bin/env bash
# The whole 2,000-bunny drop (scenes/bunny_drop_2000.json, 3,500 steps) on the batched CPU backend: the
# figure to set against the thesis (an average solve stage of 37.5 s per step, Kaufman Table 7.2). It takes
# hours, so it runs in stretches of STRETCH steps, each resumed from the previous one's checkpoint in
# out/bunny_whole/: run the script again after an interruption and it goes on from the last checkpoint.
# After each stretch one row goes to bench/results/<MACHINE>_cpu/bunny_2000_whole.csv, computed from the
# run's cumulative summary.json: the stretch's steps, wall and solve-stage seconds per step, contacts,
# converged steps, and at its end the deepest overlap so far and the bunnies' kinetic energy (rest).
# The run outlives a session's machine: SAVE=1 copies its checkpoint (xz) and summary beside the CSV
# (bunny_2000_whole.checkpoint.xz, bunny_2000_whole.summary.json) to be committed, and a fresh checkout
# goes on from them.
# RUN names another run of the same scene (its own out/ directory and files; default bunny_2000_whole):
# e.g. a fresh run after the scene's solver settings changed, the finished one kept for comparison.
#   MACHINE=epyc-2core [THREADS=2] [STRETCH=250] [UNTIL=3500] [SAVE=1] [RUN=name] bench/run_bunny_whole.sh
set -euo pipefail
cd "$(dirname "$0")/.."
machine="${MACHINE:-$(hostname)-$(nproc)core}"
threads="${THREADS:-$(nproc)}"
stretch="${STRETCH:-250}"
until_step="${UNTIL:-3500}"
scene=scenes/bunny_drop_2000.json
name="${RUN:-bunny_2000_whole}"
run_dir="out/${RUN:-bunny_whole}"
out="bench/results/${machine}_cpu"
csv="$out/$name.csv"
mkdir -p "$out" "$run_dir"
[ -x build/stagger ] || scripts/setup.sh
command -v jq >/dev/null || scripts/ensure_packages.sh jq

saved_checkpoint="$out/$name.checkpoint.xz"
saved_summary="$out/$name.summary.json"
save() {
  [ "${SAVE:-0}" = 1 ] || return 0
  xz -9 -T1 -c "$run_dir/checkpoint.stagger" > "$saved_checkpoint.tmp" && mv "$saved_checkpoint.tmp" "$saved_checkpoint"
  cp "$run_dir/summary.json" "$saved_summary"
}
if [ ! -f "$run_dir/checkpoint.stagger" ] && [ -f "$saved_checkpoint" ]; then
  echo "going on from the committed checkpoint (step $(jq .steps "$saved_summary"))"
  xz -d -c "$saved_checkpoint" > "$run_dir/checkpoint.stagger"
  cp "$saved_summary" "$run_dir/summary.json"
fi

commit="$(git rev-parse --short HEAD)$(git diff --quiet -- host kernels || echo -dirty)"
[ -f "$csv" ] || echo "date,commit,threads,first_step,last_step,wall_s_per_step,solve_s_per_step,collision_s_per_step,contacts_mean,contacts_max_so_far,converged_fraction,outer_iterations_mean_so_far,max_penetration_so_far,kinetic_energy_end,solve_s_per_step_so_far" > "$csv"

# One CSV row for the steps between two of the run's cumulative summaries ($1: before, $2: after).
# The run's own outer-iteration mean is over all island solves since the start: the row gives the
# whole run's mean at the stretch's end beside the stretch's own figures.
row() {
  jq -r -n --slurpfile a "$1" --slurpfile b "$2" --arg date "$(date -u +%FT%TZ)" --arg commit "$commit" \
        --argjson threads "$threads" '
    def collision: .stage_seconds.broadphase + .stage_seconds.narrowphase + .stage_seconds.islands;
    $a[0] as $a | $b[0] as $b | ($b.steps - $a.steps) as $n |
    [$date, $commit, $threads, $a.steps + 1, $b.steps,
     (($b.wall_seconds - $a.wall_seconds) / $n), (($b.stage_seconds.solve - $a.stage_seconds.solve) / $n),
     ((($b | collision) - ($a | collision)) / $n),
     (($b.contacts_mean * $b.steps - $a.contacts_mean * $a.steps) / $n), $b.contacts_max,
     (($b.converged_fraction * $b.steps - $a.converged_fraction * $a.steps) / $n), $b.outer_iterations_mean,
     $b.max_penetration, $b.final_kinetic_energy, ($b.stage_seconds.solve / $b.steps)] | @csv' | tr -d '"' >> "$csv"
  tail -1 "$csv"
}

# summary.before.json: the summary at the start of the stretch whose row is not written yet (a
# killed script writes it on its next start).
before="$run_dir/summary.before.json"
if [ ! -f "$before" ]; then
  if [ -f "$run_dir/summary.json" ]; then cp "$run_dir/summary.json" "$before"
  else echo '{"steps": 0, "wall_seconds": 0, "contacts_mean": 0, "converged_fraction": 0,
              "stage_seconds": {"broadphase": 0, "narrowphase": 0, "islands": 0, "solve": 0}}' > "$before"
  fi
fi
failed=0
while :; do
  if [ -f "$run_dir/summary.json" ] && [ "$(jq .steps "$run_dir/summary.json")" -gt "$(jq .steps "$before")" ]; then
    row "$before" "$run_dir/summary.json"
    cp "$run_dir/summary.json" "$before"
    save
  fi
  [ "$failed" = 0 ] || exit 1
  steps0=$(jq .steps "$before")
  [ "$steps0" -ge "$until_step" ] && break
  target=$(( steps0 + stretch < until_step ? steps0 + stretch : until_step ))
  if [ "$steps0" -eq 0 ]; then
    build/stagger run "$scene" --out "$run_dir" --steps "$target" --threads "$threads" --checkpoint-every 50 || failed=1
  else
    # An interrupted stretch (a signal writes the checkpoint and the summary) still gets its row. The
    # scene file is given, so a stretch runs with the scene's current solver settings.
    build/stagger run "$scene" --resume "$run_dir/checkpoint.stagger" --out "$run_dir" --steps "$target" \
      --threads "$threads" --checkpoint-every 50 || failed=1
  fi
done
cat "$csv"
