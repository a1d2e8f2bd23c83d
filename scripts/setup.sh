#!/usr/bin/env bash
# Installs the Debian packages stagger needs (if missing) and builds it in build/ (Release).
# CUDA is optional: when /usr/local/cuda/bin/nvcc exists, the CUDA targets are built too.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/ensure_packages.sh cmake ninja-build g++ git ccache libeigen3-dev catch2 nlohmann-json3-dev libcli11-dev \
  libfmt-dev libstb-dev libtinyobjloader-dev glmark2-data libfclib-dev \
  pybind11-dev python3-dev python3-numpy python3-pytest

# Configured once: `cmake --build` reconfigures by itself when a CMakeLists.txt changes, and a second
# configure run costs every rerun of the demo about two seconds. Options given here, or a build/ of
# another build type, configure again.
if [ $# -gt 0 ] || [ ! -f build/build.ninja ] || ! grep -qx 'CMAKE_BUILD_TYPE:STRING=Release' build/CMakeCache.txt; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
fi
cmake --build build
