#!/usr/bin/env bash
# bench/peers/fclib_dense.sh: stagger's batched backend against Siconos NSGS on densely coupled FCLIB
# problems (issue 25: "three or more contacts per body", random ones and islands of piles), every
# problem solved from r = 0 to a natural-map error of 1e-4 and of 1e-8, in one run on one machine:
#   - build/stagger_batched_fclib makes each problem from its bodies, writes it as an FCLIB file and
#     solves it with the batched backend (the solver a simulation runs; one thread): the Tresca fixed
#     point (what "auto" gives islands of granular size) and Staggered Projections, at most 1000 outer
#     iterations, with the Gauss-Seidel polish of a stalled outer loop (its sweeps in the last column);
#     the error is recomputed on the file's W and q (the measure Siconos reports);
#   - Siconos numerics 4.4 NSGS (Debian's libsiconos-numerics-dev, default options) on the file, through
#     build/stagger_siconos_fclib;
# one process per solve, every one stopped after TIME_LIMIT seconds (default 30).
# Random problems (spheres of 1 cm and 10 g touching at random, one contact in ten with the ground,
# mu 0.5; three seeds per shape): 1,500 contacts among 500 bodies and 3,000 among 1,000 (three per
# body), and 1,500 among 750 and 1,500 for context (one seed). Pile islands: the 1k-sphere pour at
# steps 200 (pouring) and 600 (settled), the resting 10k bed at step 2. Writes bench/results/<MACHINE>_cpu/fclib_dense.csv. Run nothing else meanwhile (wall-clock times).
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/ensure_packages.sh libfclib-dev libsiconos-numerics-dev
[ -f build/build.ninja ] || scripts/setup.sh
cmake -S . -B build >/dev/null
cmake --build build --target stagger_siconos_fclib stagger_batched_fclib
machine="${MACHINE:-$(hostname)-$(nproc)core}"
out="bench/results/${machine}_cpu"
problems=out/fclib_dense
limit="${TIME_LIMIT:-30}"
mkdir -p "$out" "$problems"
tool=build/stagger_batched_fclib

# Each problem: the tool's arguments making it, and the file it writes.
specs=()
for shape in "1500 500" "3000 1000" "1500 750" "1500 1500"; do  # contacts bodies
  read -r contacts bodies <<< "$shape"
  for seed in 1 2 3; do
    [ "$bodies" -ge 750 ] && [ "$bodies" != 1000 ] && [ "$seed" != 1 ] && continue  # context: one seed
    f="$problems/random_${contacts}c_${bodies}b_seed${seed}.hdf5"
    specs+=("$f|random --contacts $contacts --bodies $bodies --seed $seed --out $f")
  done
done
# (2.8 and 3.1 contacts per body, walls and floor included; the resting bed: 31,416 on 10,164)
for island in "spheres_pile_1k 200" "spheres_pile_1k 600" "spheres_resting_10k 2"; do
  read -r scene step <<< "$island"
  specs+=("$problems/${scene}_step${step}_island0.hdf5|scene bench/scenes/$scene.json --step $step --min-contacts 1000 --out-dir $problems")
done

csv="$out/fclib_dense.csv"
tmp="$csv.tmp.$$"
{
echo "file,contacts,method,tolerance,converged,outer_iterations,inner_iterations,seconds,error,other_error,sweeps"
for spec in "${specs[@]}"; do
  f="${spec%%|*}"
  read -r -a make <<< "${spec#*|}"
  for method in tresca_fixed_point staggered; do
    for tolerance in 0.0001 1e-08; do
      row=$(timeout "$limit" "$tool" "${make[@]}" --solve "$method" --tolerance "$tolerance" | tail -n +2) || true
      if [ -n "$row" ]; then echo "$row"; else echo "$f,,batched_$method,$tolerance,0,,,$limit,,,"; fi
    done
  done
  build/stagger_siconos_fclib "$f" --solver nsgs --tolerance 0.0001 --tolerance 1e-08 --time-limit "$limit" | tail -n +2 | sed 's/$/,/' || true
done
} | tee "$tmp"
mv "$tmp" "$csv"
