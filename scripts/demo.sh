#!/usr/bin/env bash
# Sets everything up and runs the main job: the small Brazil-nut demo (on the CPU when there is no GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build/stagger run scenes/brazil_nut_small.json --out out/brazil_nut_small
# Pictures of the bed at the start and at the end, cut open to show the intruder.
for which in start end; do
  state=()
  [ "$which" = end ] && state=(--state out/brazil_nut_small/final_state.csv)
  build/stagger render scenes/brazil_nut_small.json "${state[@]}" --view front --cut --size 640x480 \
    --out "out/brazil_nut_small/$which.png"
done
echo "  pictures: out/brazil_nut_small/start.png, out/brazil_nut_small/end.png"
