#!/usr/bin/env bash
# bench/peers/run.sh: the whole comparison with the peers, one command.
#  1. The same scenes on stagger (batched CPU backend), ODE, Bullet and MuJoCo (Newton and PGS),
#     measured alike by stagger_peer_bench (bench/peers/peer_bench.cpp), into
#     bench/results/<MACHINE>_cpu/peers.csv and peers.png.
#  2. bench/peers/fclib_compare.sh: stagger's solver against Siconos numerics on FCLIB problems
#     exported from stagger's scenes (fclib_compare.csv, fclib_profile.png).
# Installs the peers' Debian packages when missing. Run nothing else meanwhile: the figures are
# wall-clock times. PLOT_ONLY=1 redraws peers.png from an existing peers.csv; PEERS_ONLY=1 skips
# part 2; SKIP=<peer>:<scene> pairs (space separated) are left out. A run still stepping after MAX_WALL
# seconds (default 900) stops and reports the steps it did ("STOPPED" in its settings column).
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/ensure_packages.sh libode-dev libbullet-dev libmujoco-dev pkg-config gnuplot-nox
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
peers=(stagger ode bullet mujoco mujoco-pgs)
for scene in "${scenes[@]}"; do
  [ -z "${PLOT_ONLY:-}" ] || break
  for peer in "${peers[@]}"; do
    case " ${SKIP:-} " in *" $peer:$(basename "$scene" .json) "*) continue ;; esac
    build/stagger_peer_bench --peer "$peer" --scene "$scene" --max-wall "${MAX_WALL:-900}" --out "$csv"
  done
done

# The Brazil-nut bed, for the granular codes: stagger and LIGGGHTS (penalty DEM) from the same initial
# state, one second (settling, then shaking at Gamma = 3) timed (LIGGGHTS in one process: two MPI
# processes were slower on this small box, 79 s against 57 s); LIGGGHTS then runs the 49 shaking
# cycles of the Gamma sweep for the intruder's rise (liggghts_brazil_nut.py says how it is set up).
if [ -z "${PLOT_ONLY:-}" ]; then
  scripts/ensure_packages.sh liggghts python3
  build/stagger_peer_bench --peer stagger --scene scenes/brazil_nut.json --steps 1000 --out "$csv"
  build/stagger run scenes/brazil_nut.json --steps 0 --out out/brazil_nut_initial --quiet >/dev/null
  bed=(--state out/brazil_nut_initial/final_state.csv --scene scenes/brazil_nut.json --work out/liggghts_brazil_nut)
  python3 bench/peers/liggghts_brazil_nut.py "${bed[@]}" --seconds 1 --out "$csv" --series out/liggghts_1s.csv
  python3 bench/peers/liggghts_brazil_nut.py "${bed[@]}" --seconds 7 --series "$out/liggghts_brazil_nut_height.csv"
fi
sweep="$out/gamma_sweep_brazil_nut.csv"  # stagger's curve at Gamma = 3 (scripts/gamma_sweep.sh)
if [ -f "$out/liggghts_brazil_nut_height.csv" ] && [ -f "$sweep" ]; then
  awk -F, '$1 == 3 { print $2 "," $3 }' "$sweep" > "$out/.stagger_gamma3.tmp"
  gnuplot <<GP
set terminal pngcairo size 800,460 font ",10" noenhanced
set output "$out/brazil_nut_stagger_liggghts.png"
set datafile separator ","
set xlabel "shaking cycles (7 Hz, Gamma = 3)"
set ylabel "intruder centre height (mm)"
set title "Brazil-nut bed, same initial state: stagger (h 1e-3) and LIGGGHTS Hertz DEM (dt 2e-5)"
set key top left
plot "$out/.stagger_gamma3.tmp" using 1:(\$2*1000) with linespoints lw 2 title "stagger (sampled every 7 cycles)", \
     "$out/liggghts_brazil_nut_height.csv" using 2:(\$3*1000) every ::1 with lines lw 2 title "LIGGGHTS 3.8 (every cycle)"
GP
  rm -f "$out/.stagger_gamma3.tmp"
fi

# One row per scene, a column per engine (NaN where a run is missing), for the clustered bars: body-seconds
# simulated per wall second, which compares engines whatever their time step (LIGGGHTS runs at 2e-5 s).
table="$out/.peers_table.tmp"
awk -F, 'NR > 1 { v[$2 "," $1] = $8; if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 } }
  END { for (i = 1; i <= n; ++i) { s = order[i]; printf "%s", s
          split("stagger ode bullet mujoco mujoco-pgs liggghts", p, " "); for (j = 1; j <= 6; ++j) printf ",%s", ((s "," p[j]) in v) ? v[s "," p[j]] : "NaN"
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
set ylabel "simulated body-seconds per wall second (log scale)"
set title "stagger and its peers on the same scenes ($machine; bench/peers/run.sh)"
set key top left
plot "$table" using 2:xtic(1) title "stagger (batched CPU)", "" using 3 title "ODE 0.16 QuickStep", \
     "" using 4 title "Bullet 3.24", "" using 5 title "MuJoCo 2.2 Newton", "" using 6 title "MuJoCo 2.2 PGS", \
     "" using 7 title "LIGGGHTS 3.8 (dt 2e-5)"
GP
rm -f "$table"
echo "peers: $csv and $out/peers.png"
[ -n "${PEERS_ONLY:-}${PLOT_ONLY:-}" ] || bench/peers/fclib_compare.sh
