#!/usr/bin/env bash
# Plots a results directory written by bench/run_cpu.sh (needs gnuplot, Debian package gnuplot-nox):
#   bench/plot.sh bench/results/<machine>_cpu
set -euo pipefail
dir="${1:?usage: bench/plot.sh RESULTS_DIR}"
csv="$dir/spheres.csv"
# steps/s per scene and backend
awk -F, 'NR>1 {print $7, $9, $13}' "$csv" > "$dir/.steps.dat"
gnuplot <<GP
set terminal pngcairo size 900,480 font ",10" noenhanced
set output "$dir/steps_per_second.png"
set title "steps per second, h = 1e-3, default tolerances (log scale)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set ylabel "steps / s"
set xtics rotate by -20
set key top right
plot "< awk '\$2==\"cpu\"' $dir/.steps.dat" using 3:xtic(1) title "batched CPU backend", \
     "< awk '\$2==\"reference\"' $dir/.steps.dat" using 3 title "Eigen reference"
GP
# per-step wall time of the 10k pour
s="$dir/series/spheres_pile_10k_cpu.csv"; r="$dir/series/spheres_pile_10k_reference.csv"
if [ -f "$s" ] && [ -f "$r" ]; then
gnuplot <<GP
set terminal pngcairo size 900,480 font ",10" noenhanced
set output "$dir/pile_10k_per_step.png"
set datafile separator ","
set title "spheres_pile_10k: wall time per step while the pile is poured"
set xlabel "step"
set ylabel "ms per step"
set logscale y
set y2label "contacts"
set y2tics
set ytics nomirror
plot "$s" using 1:3 with lines lw 2 title "batched CPU backend", \
     "$r" using 1:3 with lines lw 2 title "Eigen reference", \
     "$s" using 1:4 axes x1y2 with lines dt 2 title "contacts (right axis)"
GP
fi
rm -f "$dir/.steps.dat"
echo "plots in $dir"
