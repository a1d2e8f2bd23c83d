#!/usr/bin/env bash
# bench/peers/run.sh: the same scenes on stagger (batched CPU backend), ODE and Bullet, measured alike
# by stagger_peer_bench (bench/peers/peer_bench.cpp), into bench/results/<MACHINE>_cpu/peers.csv and
# peers.png. Installs Debian's libode-dev and libbullet-dev when missing. Run nothing else meanwhile:
# the figures are wall-clock times.
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
rm -f "$csv"
scenes=(bench/scenes/spheres_pile_1k.json bench/scenes/spheres_pile_10k.json scenes/validation/box_stack.json
        scenes/validation/card_house.json)
for scene in "${scenes[@]}"; do
  for peer in stagger ode bullet; do
    build/stagger_peer_bench --peer "$peer" --scene "$scene" --out "$csv"
  done
done

gnuplot <<GP
set terminal pngcairo size 900,480 font ",10" noenhanced
set output "$out/peers.png"
set datafile separator ","
set style data histograms
set style histogram cluster gap 1
set style fill solid 0.8 border -1
set logscale y
set ylabel "steps per second (log scale)"
set title "stagger, ODE and Bullet on the same scenes and time step ($machine; bench/peers/run.sh)"
set key top right
plot "< awk -F, 'NR>1 && \$1==\"stagger\"' $csv" using 7:xtic(2) title "stagger (batched CPU)", \
     "< awk -F, 'NR>1 && \$1==\"ode\"' $csv" using 7 title "ODE 0.16 QuickStep", \
     "< awk -F, 'NR>1 && \$1==\"bullet\"' $csv" using 7 title "Bullet 3.24"
GP
echo "peers: $csv and $out/peers.png"
