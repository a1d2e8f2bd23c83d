#!/usr/bin/env bash
# A GPU session on a lent machine (device tool): build with CUDA for sm_90, run every test (the GPU
# ones included), benchmark the CUDA backend next to the batched CPU backend on the host's cores,
# and measure the CPU backend's thread scaling. The machine has no package registry: the Debian -dev
# packages travel as .deb files in .deps/debs (apt-get download ...; carry .deps) and are unpacked
# into a private prefix. Results go to $OUT.
#
# One device call may run 10 minutes at most, and a machine stays warm only briefly between calls,
# so the session runs in stages named on the command line (default: all, in this order):
#   build tests | cuda | bunny | dense iteration | cpu scaling
# one call each, in that order of priority (30 minutes of device time do not cover them all: the
# stages' own timeouts add up to about 30 minutes); a later stage rebuilds only when build-gpu is
# gone (a fresh machine). Name .deps in the call's carry.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-/tmp/stagger_gpu_out}"
mkdir -p "$out"
log() { echo "== $*" | tee -a "$out/session.log"; }
stages="${*:-build tests cuda bunny dense iteration cpu scaling}"
want() { [[ " $stages " == *" $1 "* ]]; }

log "device"
{ nvidia-smi; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv; nproc; lscpu | grep "Model name"; } > "$out/device.txt" 2>&1
head -20 "$out/device.txt"

log "unpack dependencies"
prefix=/tmp/stagger_deps
mkdir -p "$prefix"
for f in .deps/debs/*.deb; do
  if command -v dpkg >/dev/null; then dpkg -x "$f" "$prefix"
  else (cd "$prefix" && ar p "$OLDPWD/$f" "$(ar t "$OLDPWD/$f" | grep data.tar)" | tar -x -J 2>/dev/null || ar p "$OLDPWD/$f" "$(ar t "$OLDPWD/$f" | grep data.tar)" | tar -x --zstd); fi
done
export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
# The bunny scenes and tests read Debian's path of glmark2-data's bunny.
if [ ! -e /usr/share/glmark2/models/bunny.obj ] && [ -e "$prefix/usr/share/glmark2/models/bunny.obj" ]; then
  mkdir -p /usr/share/glmark2 2>/dev/null && cp -r "$prefix/usr/share/glmark2/models" /usr/share/glmark2/ 2>/dev/null ||
    echo "gpu_session: could not place bunny.obj under /usr/share/glmark2 (bunny tests will skip)"
fi

if want build || [ ! -x build-gpu/stagger_bench ]; then
log "configure and build (CUDA sm_90)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_PREFIX_PATH="$prefix/usr" > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
grep "stagger:" "$out/configure.log"
cmake --build build-gpu -j "$(nproc)" > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
fi

if want tests; then
log "tests"
(cd build-gpu && ./tests/stagger_tests --success "[cuda]" > "$out/cuda_tests.log" 2>&1; tail -4 "$out/cuda_tests.log")
ctest --test-dir build-gpu --output-on-failure -j 8 > "$out/ctest.log" 2>&1
tail -4 "$out/ctest.log"
fi

if want cuda; then
log "benchmark: CUDA backend next to the batched CPU backend (bench/run_cuda.sh)"
BUILD=build-gpu timeout 420 bench/run_cuda.sh 2>&1 | cut -d, -f7,9,13,20,24,32,33 | tee -a "$out/session.log"
fi

if want bunny; then
log "benchmark: bunny drops on the CUDA backend (bench/run_bunny.sh)"
BUILD=build-gpu MACHINE="${GPU_NAME:-h100}" BACKEND=cuda STEPS_2000=1000 timeout 400 bench/run_bunny.sh 2>&1 | tail -3 | tee -a "$out/session.log"
fi

if want dense; then
log "dense small-island path: threshold sweep on the CUDA backend (bench/run_dense.sh)"
BUILD=build-gpu MACHINE="${GPU_NAME:-h100}" BACKEND=cuda timeout 300 bench/run_dense.sh 2>&1 | cut -d, -f7,9,13,24 | tee -a "$out/session.log"
fi

if want iteration; then
log "one inner iteration on the GPU: time and bandwidth"
build-gpu/stagger_cuda_iteration bench/scenes/spheres_resting_100k.json --steps 2 2>&1 | tee -a "$out/session.log" | tail -5
fi

if want cpu; then
log "benchmark: batched CPU backend on $(nproc) cores"
BUILD=build-gpu MACHINE="${MACHINE:-h100host-$(nproc)core}" BACKENDS=cpu timeout 330 bench/run_cpu.sh 2>&1 | cut -d, -f7,9,13 | tee -a "$out/session.log"
fi

if want scaling; then
log "thread scaling: spheres_resting_10k, 100 steps"
for t in 1 2 4 8 16; do
  build-gpu/stagger_bench --scene bench/scenes/spheres_resting_10k.json --steps 100 --threads $t \
    --out "$out/thread_scaling.csv" | cut -d, -f6,7,13,24
done
fi

tar -czf "$out/results.tgz" bench/results
log "done"
