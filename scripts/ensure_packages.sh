#!/usr/bin/env bash
# ensure_packages.sh PACKAGE...: installs with apt-get (through sudo when not root) the Debian
# packages among those named that are not installed yet.
set -euo pipefail
# One query for all of them (a query per package cost the demo's every rerun half a second).
declare -A installed=()
while read -r p; do installed[$p]=1; done < <(dpkg-query -W -f='${Package} ${Status}\n' "$@" 2>/dev/null |
                                              awk '/install ok installed/{print $1}')
missing=()
for p in "$@"; do
  [ -n "${installed[$p]:-}" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
