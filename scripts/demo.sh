#!/usr/bin/env bash
# Sets everything up and runs the main job: the small Brazil-nut demo (on the CPU when there is no GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build/stagger run scenes/brazil_nut_small.json --out out/brazil_nut_small
