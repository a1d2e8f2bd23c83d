#!/usr/bin/env bash
# A GPU session on a lent machine (device tool): build with CUDA for sm_90 (with -lineinfo, so that
# the sanitizers and profiles name source lines), run every test with STAGGER_REQUIRE_GPU=1 (a GPU
# test that skips is a failure there), the CUDA tests under compute-sanitizer (memcheck, racecheck)
# when it is present, an Nsight Systems profile of pour steps when nsys is present, then benchmark
# the CUDA backend next to the batched CPU backend on the host's cores, and the CPU backend's thread
# scaling. The machine has no package registry: the Debian -dev packages travel as .deb files in
# .deps/debs (apt-get download ...; carry .deps) and are unpacked into a private prefix. Results go
# to $OUT.
#
# Before the first call, here: bench/gpu_deps.sh (fills .deps/debs). Ask for nvidia-h100-x1: on the
# gVisor H200s compute-sanitizer refuses the device. One device call may run 10 minutes at most, a
# session has 15 minutes of device time in all (the machine's start included), and a machine stays
# warm only briefly between calls, so the session runs in stages named on the command line (default:
# all, in this order):
#   build tests | sanitize profile | cuda launch | iteration | bunny dense | cpu scaling
# one call for each group between bars, in that order of priority (the time covers the first two or
# three); a later stage rebuilds only when the build directory is gone (a fresh machine). Every stage
# has a time limit, so a hang costs that stage, not the call. Name .deps in the call's carry. At most
# 8 files come back from $OUT: at the end every log is packed into $OUT/logs.tgz next to session.log.
#
# Without a GPU (a dry run on the CPU machine: BUILD=build bench/gpu_session.sh, reusing the normal
# build) every stage starts, says why it skips, and the script ends without an error.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-/tmp/stagger_gpu_out}"
mkdir -p "$out"
log() { echo "== $*" | tee -a "$out/session.log"; }
# What comes back: session.log, results.tgz and logs.tgz with everything else (the device tool
# returns at most 8 files), also when a stage fails and the script exits early.
pack() {
  (cd "$out" && find . -maxdepth 1 -type f ! -name session.log ! -name logs.tgz ! -name results.tgz -printf '%P\n' |
    tar -czf logs.tgz -T - --remove-files 2>/dev/null) || true
}
trap pack EXIT
skip() { echo "   skipped: $*" | tee -a "$out/session.log"; }
stages="${*:-build tests sanitize profile cuda launch iteration bunny dense cpu scaling}"
want() { [[ " $stages " == *" $1 "* ]]; }
build="${BUILD:-build-gpu}"
gpu=0
nvidia-smi -L > /dev/null 2>&1 && gpu=1
export PATH="$PATH:/usr/local/cuda/bin"
log "device"
{ nvidia-smi; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv; nproc; lscpu | grep "Model name"; } > "$out/device.txt" 2>&1
head -20 "$out/device.txt"

log "unpack dependencies"
prefix=/tmp/stagger_deps
mkdir -p "$prefix"
for f in .deps/debs/*.deb; do
  [ -e "$f" ] || { echo "   no .deps/debs/*.deb: using the system's packages"; break; }
  if command -v dpkg >/dev/null; then dpkg -x "$f" "$prefix"
  else (cd "$prefix" && ar p "$OLDPWD/$f" "$(ar t "$OLDPWD/$f" | grep data.tar)" | tar -x -J 2>/dev/null || ar p "$OLDPWD/$f" "$(ar t "$OLDPWD/$f" | grep data.tar)" | tar -x --zstd); fi
done
export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
# The bunny scenes and tests read Debian's path of glmark2-data's bunny.
if [ ! -e /usr/share/glmark2/models/bunny.obj ] && [ -e "$prefix/usr/share/glmark2/models/bunny.obj" ]; then
  mkdir -p /usr/share/glmark2 2>/dev/null && cp -r "$prefix/usr/share/glmark2/models" /usr/share/glmark2/ 2>/dev/null ||
    echo "gpu_session: could not place bunny.obj under /usr/share/glmark2 (bunny tests will skip)"
fi

if want build || [ ! -x "$build/stagger_bench" ]; then
log "configure and build (CUDA sm_90, -lineinfo) in $build"
if [ "$build" = build-gpu ]; then
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCMAKE_CUDA_FLAGS=-lineinfo -DCMAKE_PREFIX_PATH="$prefix/usr" > "$out/configure.log" 2>&1 ||
    { tail -30 "$out/configure.log"; exit 1; }
  grep "stagger:" "$out/configure.log"
fi
cmake --build "$build" -j "$(nproc)" > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
grep -i "warning" "$out/build.log" | head -20
fi

if want tests; then
log "tests (STAGGER_REQUIRE_GPU=$gpu)"
(cd "$build" && STAGGER_REQUIRE_GPU=$gpu timeout 240 ./tests/stagger_tests --success "[cuda]" > "$out/cuda_tests.log" 2>&1
  echo "   [cuda] tests: exit $?" | tee -a "$out/session.log"; tail -4 "$out/cuda_tests.log")
STAGGER_REQUIRE_GPU=$gpu OMP_WAIT_POLICY=passive timeout 200 ctest --test-dir "$build" --output-on-failure -j 8 \
  --timeout 120 > "$out/ctest.log" 2>&1
echo "   ctest: exit $?" | tee -a "$out/session.log"
tail -4 "$out/ctest.log"
fi

if want sanitize; then
log "CUDA tests under compute-sanitizer"
if [ $gpu = 0 ]; then skip "no GPU"
elif ! command -v compute-sanitizer > /dev/null; then skip "compute-sanitizer not found"
else
  for tool in memcheck racecheck; do
    limit=220; [ $tool = racecheck ] && limit=100
    timeout $limit compute-sanitizer --tool $tool --error-exitcode 3 "$build/tests/stagger_tests" "[cuda]" \
      > "$out/sanitize_$tool.log" 2>&1
    echo "   $tool: exit $? ($(grep -c "========= " "$out/sanitize_$tool.log") report lines)" | tee -a "$out/session.log"
  done
fi
fi

if want profile; then
log "Nsight Systems: five steps of the 10k pour on the CUDA backend"
if [ $gpu = 0 ]; then skip "no GPU"
elif ! command -v nsys > /dev/null; then skip "nsys not found"
else
  timeout 150 nsys profile --stats=true --force-overwrite true -o "$out/pour10k" \
    "$build/stagger" run bench/scenes/spheres_pile_10k.json --backend cuda --steps 5 --quiet --out /tmp/nsys_run \
    > "$out/nsys_stats.txt" 2>&1
  grep -A25 "cuda_gpu_kern_sum" "$out/nsys_stats.txt" | head -30
fi
fi

if [ $gpu = 0 ]; then
  for stage in cuda launch iteration bunny dense cpu scaling; do
    want $stage && log "$stage" && skip "no GPU (these stages measure the GPU machine)"
  done
  log "done (dry run without a GPU)"
  exit 0
fi
if want cuda; then
log "benchmark: CUDA backend next to the batched CPU backend (bench/run_cuda.sh)"
BUILD="$build" timeout 420 bench/run_cuda.sh 2>&1 | cut -d, -f7,9,13,20,24,32,33 | tee -a "$out/session.log"
fi

if want launch; then
log "the APGD loop's launches: lists of active islands (default) and CUDA graphs (STAGGER_CUDA_GRAPHS=1) against neither"
# The same state hash is expected from every variant (same kernels, same order); steps/s says what each saves.
for scene in "bench/scenes/spheres_pile_10k.json 200" "bench/scenes/spheres_pile_100k.json 30" "bench/scenes/box_stacks_900.json 300"; do
  set -- $scene
  for variant in "STAGGER_COMPACT_ACTIVE=0" "STAGGER_COMPACT_ACTIVE=1" "STAGGER_CUDA_GRAPHS=1"; do
    line=$(env $variant timeout 200 "$build/stagger" run "$1" --backend cuda --steps "$2" --quiet --hash --out /tmp/launch_run 2>&1 |
      awk '/^hash/ {h = $3} /steps\/s/ {match($0, /[0-9.]+ steps\/s/); r = substr($0, RSTART, RLENGTH)} END {print r, "hash", h}')
    echo "   $(basename "$1") $2 steps, $variant: $line" | tee -a "$out/session.log"
  done
done
fi

if want bunny; then
log "benchmark: bunny drops on the CUDA backend (bench/run_bunny.sh)"
BUILD="$build" MACHINE="${GPU_NAME:-h100}" BACKEND=cuda STEPS_2000=1000 timeout 400 bench/run_bunny.sh 2>&1 | tail -3 | tee -a "$out/session.log"
fi

if want dense; then
log "dense small-island path: threshold sweep on the CUDA backend (bench/run_dense.sh)"
BUILD="$build" MACHINE="${GPU_NAME:-h100}" BACKEND=cuda timeout 300 bench/run_dense.sh 2>&1 | cut -d, -f7,9,13,24 | tee -a "$out/session.log"
fi

if want iteration; then
log "one APGD iteration of the real solver: time and bandwidth, CUDA and the host's cores"
for scene in bench/scenes/spheres_resting_10k.json bench/scenes/spheres_resting_100k.json; do
  for backend in cuda cpu; do
    timeout 120 "$build/stagger_iteration_bench" --scene $scene --backend $backend --out "$out/iteration.csv" 2>&1 |
      tee -a "$out/session.log" | tail -3
  done
done
fi

if want cpu; then
log "benchmark: batched CPU backend on $(nproc) cores"
BUILD="$build" MACHINE="${MACHINE:-h100host-$(nproc)core}" BACKENDS=cpu timeout 330 bench/run_cpu.sh 2>&1 | cut -d, -f7,9,13 | tee -a "$out/session.log"
fi

if want scaling; then
log "thread scaling: spheres_resting_10k, 100 steps"
for t in 1 2 4 8 16; do
  "$build/stagger_bench" --scene bench/scenes/spheres_resting_10k.json --steps 100 --threads $t \
    --out "$out/thread_scaling.csv" | cut -d, -f6,7,13,24
done
fi

tar -czf "$out/results.tgz" bench/results
log "done"
