#!/usr/bin/env bash
# A GPU session on a lent machine (device tool): run every test with STAGGER_REQUIRE_GPU=1 (a GPU
# test that skips is a failure there), the CUDA tests under compute-sanitizer (memcheck, racecheck)
# when it is present, an Nsight Systems profile of pour steps when nsys is present, then benchmark
# the CUDA backend next to the batched CPU backend on the host's cores, and the CPU backend's thread
# scaling. Results go to $OUT.
#
# The build. Best: build here (CUDA for sm_90; nvcc compiles without a GPU) and run bench/gpu_pack.sh,
# which packs the programs, ctest's files and the shared libraries into .gpu/prebuilt.tgz: the
# device's minutes then go to the GPU, not to nvcc (the CUDA translation units take minutes each).
# Else the stage `build` builds there with -lineinfo, from the Debian -dev packages that
# bench/gpu_deps.sh puts in .deps/debs (the machine has no package registry). Name .gpu (or .deps)
# in the call's carry.
#
# Time. One device call may run 10 minutes at most and a session has 15 minutes of device time in all
# (the machine's start included; a machine stays warm only 30 s between calls), so plan one call.
# DEADLINE (seconds, default 540) bounds the whole script: each stage's time limit is cut to what is
# left, stages past it are skipped, and the logs are packed before the call's own limit kills
# anything. Stages, named on the command line (default: all, in this order of priority):
#   build tests sanitize cuda iteration bunny exact launch float profile cpu scaling
# and, named alone, cuda_tests: the [cuda] tests in both shapes without the rest of the suite (a
# short check after a change to the CUDA backend, before its benchmarks), and backend_tests: the
# validation scenes' "[CUDA backend]" copies alone through ctest (the GPU's share of the suite, which
# the GPU lock runs one at a time, without the CPU tests that would crowd the host's cores).
# ctest runs on the host's cores beside the sanitizers (neither is timed); its GPU tests run one at a
# time (tests/gpu_lock.h), so it may take most of the deadline and leave the benchmarks out: name
# fewer stages (e.g. `cuda iteration bunny launch`) for a call that is to measure. At most 8 files
# come back from $OUT: every log is packed into $OUT/logs.tgz next to session.log and results.tgz.
#
# Without a GPU (a dry run on the CPU machine: BUILD=build bench/gpu_session.sh, reusing the normal
# build) every stage starts, says why it skips, and the script ends without an error.
set -uo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
deadline="${DEADLINE:-540}"
out="${OUT:-/tmp/stagger_gpu_out}"
mkdir -p "$out"
log() { echo "== $* (at $((SECONDS - start)) s)" | tee -a "$out/session.log"; }
say() { echo "   $*" | tee -a "$out/session.log"; }
skip() { say "skipped: $*"; }
# What comes back: session.log, results.tgz and logs.tgz with everything else (the device tool
# returns at most 8 files), also when a stage fails and the script exits early.
pack() {
  tar -czf "$out/results.tgz" bench/results 2>/dev/null
  (cd "$out" && find . -maxdepth 1 -type f ! -name session.log ! -name logs.tgz ! -name results.tgz -printf '%P\n' |
    tar -czf logs.tgz -T - --remove-files 2>/dev/null) || true
}
trap pack EXIT
# limit N: N seconds, or what is left before the deadline (less a margin for packing), whichever is
# smaller; 1 when too little is left (never 0: `timeout 0` means no limit at all), which cuts a run
# at once and makes a stage skip.
limit() {
  local left=$((deadline - (SECONDS - start) - 15))
  [ "$left" -lt 10 ] && { echo 1; return; }
  echo $(( $1 < left ? $1 : left ))
}
stages="${*:-build tests sanitize cuda iteration bunny exact launch float profile cpu scaling}"
want() { [[ " $stages " == *" $1 "* ]] || return 1; [ "$(limit 100)" -gt 1 ] || { log "$1"; skip "deadline"; return 1; }; }
build="${BUILD:-build-gpu}"
gpu=0
nvidia-smi -L > /dev/null 2>&1 && gpu=1
# Where this GPU's figures go (as bench/run_cuda.sh names it): bench/results/<gpu>_cuda.
gpu_dir="bench/results/${MACHINE:-$(bench/gpu_name.sh)}_cuda"
export PATH="$PATH:/usr/local/cuda/bin"
log "device"
{ nvidia-smi; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv; nproc; lscpu | grep "Model name"; } > "$out/device.txt" 2>&1
head -20 "$out/device.txt"

libs=/tmp/stagger_libs
mkdir -p "$libs"
export LD_LIBRARY_PATH="$libs:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
# The pack only on a machine without the build it came from: a dry run here with BUILD=build must
# not replace the build directory by the pack's copy of it (it did once).
if [ -e .gpu/prebuilt.tgz ] && [ ! -e "$(tar -xzOf .gpu/prebuilt.tgz build_dir 2>/dev/null)/CMakeCache.txt" ]; then
  log "unpack the prebuilt programs (.gpu/prebuilt.tgz)"
  rm -rf .gpu/x && mkdir -p .gpu/x && tar -xzf .gpu/prebuilt.tgz -C .gpu/x
  build=$(cat .gpu/x/build_dir)
  src=$(cat .gpu/x/source_dir)
  say "commit $(cat .gpu/x/commit), built in $src/$build"
  rm -rf "$build" && mv ".gpu/x/$build" "$build"
  # ctest's files and the programs' compiled-in source directory name the build machine's checkout.
  if [ "$src" != "$PWD" ] && [ ! -e "$src" ]; then mkdir -p "$(dirname "$src")" && ln -s "$PWD" "$src"; fi
  ldconfig -p > /tmp/stagger_ldcache.txt  # read whole: grep -q on a pipe would SIGPIPE it under pipefail
  for f in .gpu/x/lib/*; do
    grep -qF $'\t'"$(basename "$f") (" /tmp/stagger_ldcache.txt || ln -sf "$PWD/$f" "$libs/"
  done
  say "libraries taken from the pack: $(ls "$libs" | tr '\n' ' ')"
  if [ ! -e /usr/share/glmark2/models/bunny.obj ] && [ -e .gpu/x/share/bunny.obj ]; then
    mkdir -p /usr/share/glmark2/models && cp .gpu/x/share/bunny.obj /usr/share/glmark2/models/
  fi
  stages=${stages/build/}
else
  log "unpack dependencies (.deps/debs)"
  prefix=/tmp/stagger_deps
  mkdir -p "$prefix"
  for f in .deps/debs/*.deb; do
    [ -e "$f" ] || { say "no .deps/debs/*.deb: using the system's packages"; break; }
    if command -v dpkg >/dev/null; then dpkg -x "$f" "$prefix"
    else (cd "$prefix" && ar p "$OLDPWD/$f" "$(ar t "$OLDPWD/$f" | grep data.tar)" | tar -x -J 2>/dev/null || ar p "$OLDPWD/$f" "$(ar t "$OLDPWD/$f" | grep data.tar)" | tar -x --zstd); fi
  done
  export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH"
  # The bunny scenes and tests read Debian's path of glmark2-data's bunny.
  if [ ! -e /usr/share/glmark2/models/bunny.obj ] && [ -e "$prefix/usr/share/glmark2/models/bunny.obj" ]; then
    mkdir -p /usr/share/glmark2 2>/dev/null && cp -r "$prefix/usr/share/glmark2/models" /usr/share/glmark2/ 2>/dev/null ||
      say "could not place bunny.obj under /usr/share/glmark2 (bunny tests will skip)"
  fi
  if want build || [ ! -x "$build/stagger_bench" ]; then
    log "configure and build (CUDA sm_90, -lineinfo) in $build"
    if [ "$build" = build-gpu ]; then
      cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
        -DCMAKE_CUDA_FLAGS=-lineinfo -DCMAKE_PREFIX_PATH="$prefix/usr" > "$out/configure.log" 2>&1 ||
        { tail -30 "$out/configure.log"; exit 1; }
      grep "stagger:" "$out/configure.log"
    fi
    timeout "$(limit 400)" cmake --build "$build" -j "$(nproc)" > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
    grep -i "warning" "$out/build.log" | head -20
  fi
fi

if want cuda_tests; then
  log "the CUDA tests, both shapes (STAGGER_REQUIRE_GPU=$gpu)"
  (cd "$build" && STAGGER_REQUIRE_GPU=$gpu timeout "$(limit 200)" ./tests/stagger_tests -d yes "[cuda]" > "$out/cuda_tests.log" 2>&1)
  say "[cuda] tests: exit $?"
  grep -E "^[0-9.]+ s: |passed|failed" "$out/cuda_tests.log" | tail -14 | tee -a "$out/session.log"
  (cd "$build" && STAGGER_REQUIRE_GPU=$gpu STAGGER_TEST_GPU_SHAPE=1 timeout "$(limit 200)" ./tests/stagger_tests -d yes "[cuda][equivalence]" \
    > "$out/cuda_tests_gpu_shape.log" 2>&1)
  say "[cuda][equivalence] tests in the GPU shape: exit $?"
  grep -E "^[0-9.]+ s: |passed|failed" "$out/cuda_tests_gpu_shape.log" | tail -6 | tee -a "$out/session.log"
fi
if want tests; then
  log "the CUDA tests (STAGGER_REQUIRE_GPU=$gpu)"
  (cd "$build" && STAGGER_REQUIRE_GPU=$gpu timeout "$(limit 150)" ./tests/stagger_tests -d yes "[cuda]" > "$out/cuda_tests.log" 2>&1)
  say "[cuda] tests: exit $?"
  grep -E "^[0-9.]+ s: |passed|failed" "$out/cuda_tests.log" | tail -14 | tee -a "$out/session.log"
fi
if want backend_tests; then
  log "the validation tests' [CUDA backend] copies (STAGGER_REQUIRE_GPU=$gpu)"
  (STAGGER_REQUIRE_GPU=$gpu OMP_NUM_THREADS=2 timeout "$(limit 400)" ctest --test-dir "$build" --output-on-failure \
    -j 4 --timeout 300 -R '^\[CUDA backend\]' > "$out/backend_tests.log" 2>&1)
  say "[CUDA backend] tests: exit $?"
  grep -E "tests passed|Failed|Not Run|Timeout|Total Test" "$out/backend_tests.log" | head -12 | tee -a "$out/session.log"
fi
# The whole suite on the host's cores, the GPU tests included (the validation scenes run on every
# batched backend), beside the sanitizers. The Python tests need the module built for this
# machine's Python: they run where the pack is not used.
ctest_pid=
if want tests; then
  log "ctest in the background (STAGGER_REQUIRE_GPU=$gpu)"
  exclude='^$'
  [ -e .gpu/x/build_dir ] && exclude='^python: |^example: .*\.py'
  t=$(limit 480)  # the GPU tests run one at a time (tests/gpu_lock.h): several minutes together
  (STAGGER_REQUIRE_GPU=$gpu OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive timeout "$t" ctest --test-dir "$build" --output-on-failure \
    -j "$(nproc)" --timeout 600 -E "$exclude" > "$out/ctest.log" 2>&1; echo "   ctest: exit $?" >> "$out/ctest.log") &
  ctest_pid=$!
fi

if want sanitize; then
  log "CUDA tests under compute-sanitizer"
  if [ $gpu = 0 ]; then skip "no GPU"
  elif ! command -v compute-sanitizer > /dev/null; then skip "compute-sanitizer not found"
  else
    for tool in memcheck racecheck; do
      # memcheck on every CUDA test; racecheck (shared memory) on the solver's, whose reductions use it.
      t=$(limit 100) spec="[cuda]"; [ $tool = racecheck ] && t=$(limit 50) spec="[cuda][solver]"
      [ "$t" -gt 1 ] || { skip "$tool: deadline"; continue; }
      # Without the tests' GPU lock: it would make the sanitizer wait for ctest's GPU tests.
      STAGGER_TEST_NO_GPU_LOCK=1 timeout "$t" compute-sanitizer --tool $tool --error-exitcode 3 "$build/tests/stagger_tests" "$spec" \
        > "$out/sanitize_$tool.log" 2>&1
      say "$tool: exit $? in $t s at most ($(grep -c "========= " "$out/sanitize_$tool.log") report lines)"
      grep "=========" "$out/sanitize_$tool.log" | head -8 | tee -a "$out/session.log"
    done
  fi
fi
if [ -n "$ctest_pid" ]; then
  log "waiting for ctest"
  wait "$ctest_pid"
  tail -12 "$out/ctest.log" | tee -a "$out/session.log"
fi

if [ $gpu = 0 ]; then
  for stage in cuda iteration bunny exact launch float profile cpu scaling; do
    [[ " $stages " == *" $stage "* ]] && log "$stage" && skip "no GPU (these stages measure the GPU machine)"
  done
  log "done (dry run without a GPU)"
  exit 0
fi

if want cuda; then
  log "benchmark: CUDA backend next to the batched CPU backend (bench/run_cuda.sh)"
  BUILD="$build" RUN_LIMIT=45 timeout "$(limit 230)" bench/run_cuda.sh 2>&1 | cut -d, -f7,9,13,16,20,21,24,32,33,34,35,36 | tee -a "$out/session.log"
fi

if want iteration; then
  log "one APGD iteration of the real solver: time and bandwidth, CUDA and the host's cores"
  # The host's cores are left out: their row did not finish in 30 s on the H100 machine's 16.
  for scene in bench/scenes/spheres_resting_100k.json bench/scenes/spheres_resting_1m.json; do
    for backend in cuda; do
      timeout "$(limit 40)" "$build/stagger_iteration_bench" --scene $scene --backend $backend --out "$out/iteration.csv" 2>&1 |
        tee -a "$out/session.log" | tail -3
    done
  done
fi

if want bunny; then
  log "benchmark: the 2,000-bunny drop's first steps on the CUDA backend"
  mkdir -p "$gpu_dir"
  timeout "$(limit 45)" "$build/stagger_bench" --scene scenes/bunny_drop_2000.json --steps 200 --backend cuda \
    --out "$gpu_dir/bunny.csv" 2>&1 | tail -2 | cut -d, -f7,9,10,12,13,16,20,24,32,33 | tee -a "$out/session.log"
fi

if want exact; then
  log "the exact solve on the GPU (STAGGER_EXACT_GPU=1) against without it: scenes whose small islands stall"
  # Measured on the CPU twin (bench/results/epyc-2core_cpu/exact_on_device_gpu_path.csv): the bunny drop
  # 85% -> 99.5% of steps converged, the box bin 45% -> 98%, the arch 9% -> 100%. Here: the same on the GPU.
  mkdir -p "$gpu_dir"
  if ! grep -qa STAGGER_EXACT_GPU "$build/stagger"; then
    skip "this build's stagger predates STAGGER_EXACT_GPU (rebuild the pack: bench/gpu_pack.sh)"
    runs=""
  else
    runs="scenes/bunny_drop_2000.json:200 bench/scenes/mesh_cubes_bin.json:600 bench/scenes/boxes_bin.json:600 scenes/validation/catenary_arch.json:500"
  fi
  csv="$gpu_dir/exact_on_device.csv"
  [ -e "$csv" ] || [ -z "$runs" ] || echo "commit,scene,steps,exact_gpu,converged_fraction,unconverged_steps,apgd_per_step,wall_s,max_penetration" > "$csv"
  for run in $runs; do
    set -- ${run%%:*} ${run##*:}
    for e in 0 1; do
      rm -rf /tmp/exact_run
      STAGGER_EXACT_GPU=$e timeout "$(limit 60)" "$build/stagger" run "$1" --backend cuda --steps "$2" --quiet --out /tmp/exact_run \
        > /dev/null 2>> "$out/exact.log" || { say "$1 exact_gpu=$e: stopped"; continue; }
      python3 -c "import json, sys; d = json.load(open('/tmp/exact_run/summary.json')); print('%s,%s,%d,%s,%.4f,%d,%.1f,%.2f,%.3g' % (sys.argv[1], d['scene'], d['steps'], sys.argv[2], d['converged_fraction'], d['unconverged_steps'], d['apgd_iterations_per_step'], d['wall_seconds'], d['max_penetration']))" \
        "$(cat .gpu/x/commit 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)" $e | tee -a "$csv" | tee -a "$out/session.log"
    done
  done
fi

if want launch; then
  log "the APGD loop's launches: lists of active islands (default) and CUDA graphs (STAGGER_CUDA_GRAPHS=1) against neither"
  # The same state hash is expected from every variant (same kernels, same order); steps/s says what each saves.
  for scene in "bench/scenes/spheres_pile_10k.json 200" "bench/scenes/box_stacks_900.json 300"; do
    set -- $scene
    for variant in "STAGGER_COMPACT_ACTIVE=0" "STAGGER_COMPACT_ACTIVE=1" "STAGGER_CUDA_GRAPHS=1"; do
      line=$(env $variant timeout "$(limit 40)" "$build/stagger" run "$1" --backend cuda --steps "$2" --quiet --hash --out /tmp/launch_run 2>&1 |
        awk '/^hash/ {h = $3} /steps\/s/ {match($0, /[0-9.]+ steps\/s/); r = substr($0, RSTART, RLENGTH)} END {print r, "hash", h}')
      say "$(basename "$1") $2 steps, $variant: $line"
    done
  done
fi

if want float; then
  log "float on the GPU: the resting 100k bed and the 10k pour in single precision (float.csv; double in spheres.csv)"
  # Float halves the bytes the memory-bound iteration moves; on the CPU it was slower (docs/backends.md).
  mkdir -p "$gpu_dir"
  for scene in "bench/scenes/spheres_resting_100k.json 20" "bench/scenes/spheres_pile_10k.json 150"; do
    set -- $scene
    timeout "$(limit 40)" "$build/stagger_bench" --scene "$1" --steps "$2" --backend cuda --precision float \
      --out "$gpu_dir/float.csv" 2>&1 | tail -1 | cut -d, -f7,9,13,19,24,27,31 | tee -a "$out/session.log"
  done
fi

if want profile; then
  log "Nsight Systems: five steps of the 10k pour on the CUDA backend"
  if ! command -v nsys > /dev/null; then skip "nsys not found"
  else
    timeout "$(limit 120)" nsys profile --stats=true --force-overwrite true -o "$out/pour10k" \
      "$build/stagger" run bench/scenes/spheres_pile_10k.json --backend cuda --steps 5 --quiet --out /tmp/nsys_run \
      > "$out/nsys_stats.txt" 2>&1
    grep -A25 "cuda_gpu_kern_sum" "$out/nsys_stats.txt" | head -30
  fi
fi

if want cpu; then
  log "benchmark: batched CPU backend on $(nproc) cores"
  BUILD="$build" MACHINE="${MACHINE:-h100host-$(nproc)core}" BACKENDS=cpu timeout "$(limit 300)" bench/run_cpu.sh 2>&1 | cut -d, -f7,9,13 | tee -a "$out/session.log"
fi

if want scaling; then
  # The resting 10k bed (31k contacts), and two scenes of one island of 1,000-2,500 contacts, where
  # threads beyond a few cost more in barriers than they save (threads_for, host/step/parallel.h).
  for run in "bench/scenes/spheres_resting_10k.json 100" "scenes/brazil_nut_small.json 1000" "bench/scenes/spheres_pile_1k.json 300"; do
    set -- $run
    log "thread scaling: $1, $2 steps"
    for t in 1 2 4 8 16; do
      timeout "$(limit 60)" "$build/stagger_bench" --scene "$1" --steps "$2" --threads $t \
        --out "$out/thread_scaling.csv" | cut -d, -f6,7,13,24
    done
  done
fi
log "done"
