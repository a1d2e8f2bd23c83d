#!/usr/bin/env bash
# gamma_sweep.sh [SCENE] [GAMMA...]: runs a shaken-bed scene (default scenes/brazil_nut_small.json) at
# each dimensionless acceleration Gamma = A (2 pi f)^2 / g (default 0.8 1.5 2 3 5), keeping the
# frequency f of the scene's sinusoidal motion and setting its amplitude A, and records the tracked
# intruder's height against shaking cycles. Writes, in bench/results/<MACHINE>_cpu/:
#   gamma_sweep_<scene>.csv  gamma,cycle,height_m (one row per tracked sample)
#   gamma_sweep_<scene>.png  the curves (gnuplot)
# The scene's sinusoid amplitudes must be written as `"amplitude": <number>` (as in scenes/).
# STEPS=N runs N steps per Gamma instead of the scene's duration (the 4,116-bead bed is slow on a CPU);
# THREADS=N sets the OpenMP threads of each run. A Gamma whose run in out/gamma_sweep/<scene>/ has
# finished (summary.json) is reused, so several sweeps over parts of the list can run side by side
# and a last one over the whole list draws them together; RERUN=1 (or deleting that directory)
# starts over.
set -euo pipefail
cd "$(dirname "$0")/.."
scene="${1:-scenes/brazil_nut_small.json}"
shift || true
gammas=("$@")
[ ${#gammas[@]} -eq 0 ] && gammas=(0.8 1.5 2 3 5)
scripts/ensure_packages.sh jq gnuplot-nox
[ -x build/stagger ] || scripts/setup.sh
name=$(basename "$scene" .json)
machine="${MACHINE:-$(hostname)}"
results="bench/results/${machine}_cpu"
work="out/gamma_sweep/$name"
mkdir -p "$results" "$work"
frequency=$(grep -o '"frequency": *[0-9.eE+-]*' "$scene" | head -1 | sed 's/.*: *//')
[ -n "$frequency" ] || { echo "gamma_sweep: no sinusoid frequency in $scene" >&2; exit 2; }

csv="$results/gamma_sweep_${name}.csv"
echo "gamma,cycle,height_m" > "$csv.tmp.$$"
for gamma in "${gammas[@]}"; do
  amplitude=$(awk -v G="$gamma" -v f="$frequency" 'BEGIN { printf "%.6g", G * 9.81 / (2 * 3.141592653589793 * f)^2 }')
  run="$work/gamma_$gamma"
  mkdir -p "$run"
  sed -E "s/\"amplitude\": *[0-9.eE+-]+/\"amplitude\": $amplitude/" "$scene" > "$run/scene.json"
  if [ -f "$run/summary.json" ] && [ -z "${RERUN:-}" ]; then
    echo "gamma_sweep: Gamma = $gamma: reusing $run"
  else
    echo "gamma_sweep: Gamma = $gamma (A = $amplitude m at f = $frequency Hz)"
    build/stagger run "$run/scene.json" --quiet --out "$run" ${STEPS:+--steps "$STEPS"} ${THREADS:+--threads "$THREADS"} |
      tail -n +2 | head -1
  fi
  jq -r --arg g "$gamma" --argjson f "$frequency" \
    '.tracks | to_entries[0].value[] | "\($g),\(.[0] * $f),\(.[3])"' "$run/summary.json" >> "$csv.tmp.$$"
done
mv "$csv.tmp.$$" "$csv"

gnuplot <<GP
set terminal pngcairo size 900,520 font ",10" noenhanced
set output "$results/gamma_sweep_${name}.png"
set datafile separator ","
set title "$name: intruder height against shaking cycles (f = $frequency Hz)"
set xlabel "shaking cycles"
set ylabel "intruder centre height (m), sampled with the floor at its mean position"
set key top left
plot for [g in "${gammas[*]}"] "< awk -F, -v g=" . g . " 'NR>1 && \$1==g' $csv" using 2:3 with lines lw 2 title "Gamma = " . g
GP
echo "gamma_sweep: $csv and $results/gamma_sweep_${name}.png"
