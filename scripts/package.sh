#!/usr/bin/env bash
# Builds the Debian package vsched_VERSION_ARCH.deb (CPack DEB over the install rules; why:
# docs/install.md) in a Release build for the /usr prefix, and prints its path.
#
#   bash scripts/package.sh [BUILD_DIR]      (default build-deb)
#
# Install: dpkg -i BUILD_DIR/vsched_*.deb (apt-get install -f for missing dependencies).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-deb}
bash scripts/install-deps.sh
bash scripts/build.sh "$dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr >/dev/null
rm -f "$dir"/vsched_*.deb
(cd "$dir" && cpack -G DEB >cpack.log 2>&1) || { tail -20 "$dir/cpack.log" >&2; exit 1; }
deb=$(ls "$PWD/$dir"/vsched_*.deb)
echo "$deb"
