#!/usr/bin/env bash
# Installs the Debian packages stagger needs (if missing) and builds it in build/ (Release).
# CUDA is optional: when /usr/local/cuda/bin/nvcc exists, the CUDA targets are built too.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build g++ git ccache libeigen3-dev catch2 nlohmann-json3-dev libcli11-dev libfmt-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build build
