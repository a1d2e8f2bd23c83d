#!/usr/bin/env bash
# Run here, before a GPU session's first device call: the device machine has no package registry and
# its image lacks the Debian -dev packages stagger builds with, so they travel as .deb files in
# .deps/debs (unpacked there into a private prefix by bench/gpu_session.sh; name .deps in the call's
# carry). .deps is excluded from git in this clone (.git/info/exclude), so it is carried, not committed.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .deps/debs .git/info
grep -qx '/.deps/' .git/info/exclude 2>/dev/null || echo '/.deps/' >> .git/info/exclude
# The -dev packages of CMakeLists.txt's required finds, the shared libraries they link (libfmt9,
# libstb0, libtinyobjloader2rc10) and glmark2-data's bunny for the bunny tests and benchmarks.
packages=(libeigen3-dev catch2 nlohmann-json3-dev libcli11-dev libfmt-dev libstb-dev libtinyobjloader-dev glmark2-data)
for p in libfmt-dev libstb-dev libtinyobjloader-dev; do
  while read -r dep; do packages+=("$dep"); done < <(apt-cache depends "$p" | awk '/^ +Depends: lib/ {print $2}')
done
(cd .deps/debs && apt-get download "${packages[@]}")
du -sh .deps
