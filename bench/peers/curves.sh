#!/usr/bin/env bash
# bench/peers/curves.sh: speed against accuracy, each engine over its own accuracy knob, in one run on
# one machine (BENCHMARKS.md; docs/benchmarks.md, "Speed at matched quality"). Every run is measured
# alike by stagger_peer_bench (LIGGGHTS by liggghts_brazil_nut.py with the same columns): wall seconds
# per simulated second, the deepest overlap seen (every 10 ms of simulated time) relative to the
# smallest body, bodies lost through a wall, kinetic energy at the end. Writes
# bench/results/<MACHINE>_cpu/curves.csv and curves.png (one panel per scene, one curve per engine,
# log-log), the plot by bench/peers/plot_curves.py.
#
# Scenes: the jittered 1k pour (1,500 steps: collapse and settling), the 10k pour (1,000 steps) and the
# 4,116-bead Brazil-nut bed over its first 2 s (settling, then shaking at Gamma = 3).
# Knobs: stagger's outer tolerance, with its default method (auto: the Tresca fixed point on granular
# islands) and with Staggered Projections; ODE QuickStep's iterations (10, 20, 50, 100); Bullet's
# (10, 50); LIGGGHTS's Young's modulus, each with the time step it needs (bed only).
#
# Run nothing else meanwhile: the figures are wall-clock times (about 1.5 h on a 2-core VM).
# KNOBS=fastest runs only stagger at its defaults and each peer at its fastest setting that the
# comparison keeps (ODE and Bullet at 10 iterations, LIGGGHTS at E = 1e7): the acceptance check of
# issue 25 in about 10 minutes. SCENES="pour1k pour10k bed" picks scenes; PLOT_ONLY=1 redraws the plot; a run still stepping after
# MAX_WALL seconds (default 900) stops and reports the steps it did ("STOPPED" in its settings).
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/ensure_packages.sh libode-dev libbullet-dev pkg-config gnuplot-nox liggghts python3
[ -f build/build.ninja ] || scripts/setup.sh
cmake -S . -B build >/dev/null
cmake --build build --target stagger stagger_peer_bench
machine="${MACHINE:-$(hostname)-$(nproc)core}"
out="bench/results/${machine}_cpu"
mkdir -p "$out"
csv="$out/curves.csv"

run() {  # run SCENE STEPS CURVE PEER [peer_bench options...]
  local scene=$1 steps=$2 curve=$3 peer=$4
  shift 4
  build/stagger_peer_bench --peer "$peer" --scene "$scene" --steps "$steps" --max-wall "${MAX_WALL:-900}" \
    --curve "$curve" --out "$csv" "$@" | cut -c1-160
}

pour() {  # pour SCENE STEPS: every engine over its knob
  local scene=$1 steps=$2
  run "$scene" "$steps" "stagger (defaults)" stagger
  if [ "${KNOBS:-}" = fastest ]; then
    run "$scene" "$steps" "ODE QuickStep" ode --iterations 10
    run "$scene" "$steps" "Bullet" bullet --iterations 10
    return
  fi
  for tol in 1e-2 1e-3 1e-4; do run "$scene" "$steps" "stagger auto" stagger --solver tolerance=$tol; done
  for tol in 1e-2 1e-3 1e-4; do
    run "$scene" "$steps" "stagger staggered" stagger --solver tolerance=$tol method=staggered
  done
  for it in 10 20 50 100; do run "$scene" "$steps" "ODE QuickStep" ode --iterations $it; done
  for it in 10 50; do run "$scene" "$steps" "Bullet" bullet --iterations $it; done
}

bed() {  # the Brazil-nut bed's first 2 s: stagger's knob and LIGGGHTS's stiffness, from the same state
  local scene=scenes/brazil_nut.json
  run $scene 2000 "stagger (defaults)" stagger
  if [ "${KNOBS:-}" != fastest ]; then
    for tol in 1e-2 1e-3; do run $scene 2000 "stagger auto" stagger --solver tolerance=$tol; done
    run $scene 2000 "stagger staggered" stagger --solver tolerance=1e-3 method=staggered
  fi
  build/stagger run $scene --steps 0 --out out/brazil_nut_initial --quiet >/dev/null
  local state=(--state out/brazil_nut_initial/final_state.csv --scene $scene --seconds 2 --curve "LIGGGHTS Hertz")
  # About a tenth of the Rayleigh time of a 5 mm bead at each modulus, as DEM users choose it.
  python3 bench/peers/liggghts_brazil_nut.py "${state[@]}" --youngs 1e7 --dt 2e-5 --work out/liggghts_e7 \
    --series out/liggghts_e7_height.csv --out "$csv"
  [ "${KNOBS:-}" = fastest ] && return
  python3 bench/peers/liggghts_brazil_nut.py "${state[@]}" --youngs 1e8 --dt 8e-6 --work out/liggghts_e8 \
    --series out/liggghts_e8_height.csv --out "$csv"
}

if [ -z "${PLOT_ONLY:-}" ]; then
  for s in ${SCENES:-pour1k pour10k bed}; do
    case $s in
      pour1k) pour bench/scenes/spheres_pile_1k.json 1500 ;;
      pour10k) pour bench/scenes/spheres_pile_10k.json 1000 ;;
      bed) bed ;;
      *) echo "curves.sh: unknown scene '$s' (pour1k, pour10k, bed)"; exit 2 ;;
    esac
  done
fi
python3 bench/peers/plot_curves.py "$csv" "$out/curves.png" "$machine"
echo "curves: $csv and $out/curves.png"
