#!/usr/bin/env bash
# bench/peers/run.sh: the same scenes on stagger (batched CPU backend), ODE and Bullet, measured alike
# by stagger_peer_bench (bench/peers/peer_bench.cpp), into bench/results/<MACHINE>_cpu/peers.csv and
# peers.png. Installs Debian's libode-dev and libbullet-dev when missing. Run nothing else meanwhile:
# the figures are wall-clock times. PLOT_ONLY=1 redraws peers.png from an existing peers.csv.
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/ensure_packages.sh libode-dev libbullet-dev pkg-config gnuplot-nox
[ -f build/build.ninja ] || scripts/setup.sh
cmake -S . -B build >/dev/null
cmake --build build --target stagger_peer_bench
machine="${MACHINE:-$(hostname)-$(nproc)core}"
out="bench/results/${machine}_cpu"
mkdir -p "$out"
csv="$out/peers.csv"
[ -n "${PLOT_ONLY:-}" ] || rm -f "$csv"
scenes=(bench/scenes/spheres_pile_1k.json bench/scenes/spheres_pile_10k.json scenes/validation/box_stack.json
        scenes/validation/card_house.json)
for scene in "${scenes[@]}"; do
  [ -z "${PLOT_ONLY:-}" ] || break
  for peer in stagger ode bullet; do
    build/stagger_peer_bench --peer "$peer" --scene "$scene" --out "$csv"
  done
done

# One row per scene, a column per engine (NaN where a run is missing), for the clustered bars.
table="$out/.peers_table.tmp"
awk -F, 'NR > 1 { v[$2 "," $1] = $7; if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 } }
  END { for (i = 1; i <= n; ++i) { s = order[i]; printf "%s", s
          split("stagger ode bullet", p, " "); for (j = 1; j <= 3; ++j) printf ",%s", ((s "," p[j]) in v) ? v[s "," p[j]] : "NaN"
          printf "\n" } }' "$csv" > "$table"
gnuplot <<GP
set terminal pngcairo size 900,480 font ",10" noenhanced
set output "$out/peers.png"
set datafile separator ","
set datafile missing "NaN"
set style data histograms
set style histogram cluster gap 1
set style fill solid 0.8 border -1
set logscale y
set yrange [0.1:*]
set ylabel "steps per second (log scale)"
set title "stagger, ODE and Bullet on the same scenes and time step ($machine; bench/peers/run.sh)"
set key top left
plot "$table" using 2:xtic(1) title "stagger (batched CPU)", "" using 3 title "ODE 0.16 QuickStep", \
     "" using 4 title "Bullet 3.24"
GP
rm -f "$table"
echo "peers: $csv and $out/peers.png"
