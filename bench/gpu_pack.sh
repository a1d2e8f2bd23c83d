#!/usr/bin/env bash
# Run here, before a GPU session's device call, to spend the device's minutes on the GPU instead of on
# nvcc: packs this machine's CUDA build (BUILD, default build; the CUDA targets are built for sm_90
# unless CMAKE_CUDA_ARCHITECTURES says otherwise) into .gpu/prebuilt.tgz: the programs the session
# runs, ctest's files (they name this checkout's absolute paths: bench/gpu_session.sh links that
# path to the device's copy), the shared libraries the programs load that a bare CUDA image may lack
# (copied beside them and put on the library path there only where the device has none of its own),
# and the bunny mesh the bunny scenes read from Debian's glmark2-data. Name .gpu in the call's carry.
# .gpu is excluded from git in this clone (.git/info/exclude).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${BUILD:-build}"
arch=$(grep -oE 'code=\[?compute_[0-9]+' "$build/compile_commands.json" | head -1 | grep -oE '[0-9]+$' || true)
[ "$arch" = 90 ] || { echo "gpu_pack: $build has no CUDA targets built for sm_90 (found: ${arch:-none})" >&2; exit 2; }
ninja -C "$build" > /dev/null
programs=("$build/stagger" "$build/stagger_bench" "$build/stagger_iteration_bench" "$build/stagger_example_cpp"
  "$build/tests/stagger_tests" "$build/tests/stagger_scene_replay")
mkdir -p .gpu .git/info
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
stage=$(mktemp -d)
mkdir -p "$stage/lib" "$stage/share"
# Every library ldd resolves except the C library's own and the compiler's runtime, which the
# device's newer system provides (an older copy first on the path would shadow them).
for p in "${programs[@]}"; do ldd "$p"; done | awk '/=> \// {print $1, $3}' | sort -u |
  grep -vE '^(libc|libm|libdl|libpthread|librt|libgcc_s|libstdc\+\+|libresolv)\.so' |
  while read -r soname path; do cp -L "$path" "$stage/lib/$soname"; done
cp /usr/share/glmark2/models/bunny.obj "$stage/share/" 2>/dev/null || echo "gpu_pack: no bunny.obj (apt-get install glmark2-data); bunny stages will skip"
echo "$PWD" > "$stage/source_dir"
echo "$build" > "$stage/build_dir"
git rev-parse --short HEAD > "$stage/commit"
git diff --quiet HEAD -- . ':!bench/results' || echo "gpu_pack: note: the working tree differs from HEAD" >&2
tar -czf .gpu/prebuilt.tgz "${programs[@]}" "$build"/CTestTestfile.cmake "$build"/tests/CTestTestfile.cmake \
  "$build"/tests/*.cmake -C "$stage" lib share source_dir build_dir commit
rm -rf "$stage"
du -sh .gpu/prebuilt.tgz
