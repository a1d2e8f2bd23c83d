#!/usr/bin/env bash
# Reproduces bench/results/<machine>_cpu/methods.csv: Staggered Projections against the Tresca fixed
# point (docs/method.md) on the scenes where they differ — a granular pour, two bunny drops, the card
# house and the catenary arch — on the batched CPU backend. Each scene runs twice, its "solver.method"
# set to each method (comments stripped, written beside the scene so relative paths still resolve).
set -euo pipefail
cd "$(dirname "$0")/.."
machine="${MACHINE:-$(hostname)-$(nproc)core}"
out="bench/results/${machine}_cpu"
mkdir -p "$out"
rm -f "$out/methods.csv"
build="${BUILD:-build}"
[ -x "$build/stagger_bench" ] || scripts/setup.sh
run() {  # scene steps
  local dir copy
  dir=$(dirname "$1")
  for method in staggered tresca_fixed_point; do
    copy="$dir/.methods_$method.json"
    python3 - "$1" "$method" "$copy" <<'PY'
import json, sys
text = "\n".join(l for l in open(sys.argv[1]).read().split("\n") if not l.lstrip().startswith("//"))
scene = json.loads(text)
scene.setdefault("solver", {})["method"] = sys.argv[2]
scene["name"] = scene["name"] + "_" + sys.argv[2]
json.dump(scene, open(sys.argv[3], "w"), indent=1)
PY
    "$build/stagger_bench" --scene "$copy" --steps "$2" --backend cpu --out "$out/methods.csv"
    rm -f "$copy"
  done
}
run bench/scenes/spheres_pile_1k.json 1000
run scenes/bunny_drop_100.json 2500
run scenes/bunny_drop_2000.json 390
run scenes/validation/card_house.json 1000
run scenes/validation/catenary_arch.json 1000
