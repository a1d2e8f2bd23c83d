#!/usr/bin/env bash
# bench/peers/fclib_random.sh: stagger's methods against Siconos numerics on random granular-like FCLIB
# problems (build/stagger_random_fclib: spheres of 1 cm touching at random, one contact in ten with
# the ground, mu 0.5) at one, two and three contacts per body, each solved from r = 0 to a natural-map
# error of 1e-4 and of 1e-8, one process per solve, every solve stopped after TIME_LIMIT seconds
# (default 30). The denser couplings are where the staggered outer loop is slowest (issue 25).
#   - stagger `solve-fclib`: staggered projections, the Tresca fixed point and successive relaxation
#     (the reference implementation on the explicit sparse W, one thread, at most 1000 outer iterations);
#   - Siconos 4.4 NSGS and FC3D_PFP (their default settings) through build/stagger_siconos_fclib.
# Writes bench/results/<MACHINE>_cpu/fclib_random.csv. Run nothing else meanwhile (wall-clock times).
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/ensure_packages.sh libfclib-dev libsiconos-numerics-dev
[ -f build/build.ninja ] || scripts/setup.sh
cmake -S . -B build >/dev/null
cmake --build build --target stagger stagger_siconos_fclib stagger_random_fclib
machine="${MACHINE:-$(hostname)-$(nproc)core}"
out="bench/results/${machine}_cpu"
problems=out/fclib_random
limit="${TIME_LIMIT:-30}"
mkdir -p "$out" "$problems"
files=()
for shape in "1500 1500" "1500 750" "1500 500" "3000 1000"; do  # contacts bodies
  read -r contacts bodies <<< "$shape"
  f="$problems/random_${contacts}c_${bodies}b.hdf5"
  [ -f "$f" ] || build/stagger_random_fclib --contacts "$contacts" --bodies "$bodies" --seed 1 --out "$f"
  files+=("$f")
done
csv="$out/fclib_random.csv"
tmp="$csv.tmp.$$"
{
echo "file,contacts,method,tolerance,converged,outer_iterations,inner_iterations,seconds,error,other_error"
for f in "${files[@]}"; do
  for method in staggered tresca_fixed_point successive_relaxation; do
    for tolerance in 0.0001 1e-08; do
      row=$(timeout "$limit" build/stagger solve-fclib "$f" --method "$method" --tolerance "$tolerance" | tail -n +2) || true
      if [ -n "$row" ]; then echo "$row"; else echo "$f,,$method,$tolerance,0,,,$limit,,"; fi
    done
  done
  build/stagger_siconos_fclib "$f" --solver nsgs --solver pfp --tolerance 0.0001 --tolerance 1e-08 \
    --time-limit "$limit" | tail -n +2 || true
done
} | tee "$tmp"
mv "$tmp" "$csv"
