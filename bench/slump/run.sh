#!/usr/bin/env bash
# run.sh: the granular slump (bench/slump/granular_slump.py) at the defaults and at tighter and
# Coulomb-exact settings, five initial states each, into bench/results/<MACHINE>_cpu/granular_slump.csv.
set -euo pipefail
cd "$(dirname "$0")/../.."
results="bench/results/${MACHINE:-$(hostname)}_cpu"
mkdir -p "$results"
export PYTHONPATH=$PWD/build/python
out="$results/granular_slump.csv"
header=--header
{
echo "# bench/slump/run.sh, $(date -u +%Y-%m-%d), $(nproc) cores: a column of 10 x 4 x 20 beads slumping in a 4-bead channel (bench/slump/granular_slump.py), five initial states per solver setting; wall_seconds with 2 threads (not a timing benchmark: other work may share the machine)"
for variant in "auto" "coulomb_apgd 0.002" "tresca_fixed_point 0.0001" "coulomb_apgd 0.0001"; do
  read -r method tolerance <<< "$variant"
  for seed in 1 2 3 4 5; do
    /usr/bin/python3 bench/slump/granular_slump.py --method "$method" ${tolerance:+--tolerance "$tolerance"} \
      --seed "$seed" $header
    header=
  done
done
} > "$out.tmp"
mv "$out.tmp" "$out"
echo "slump: $out"
