#!/usr/bin/env bash
# Configures and builds one build tree, warnings as errors (VSCHED_WERROR: development and
# CI; a plain cmake build only reports them). Usage: scripts/build.sh DIR [cmake options...]
# (later options win: -DCMAKE_BUILD_TYPE=Release, -DCMAKE_C_COMPILER=clang, ...).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVSCHED_WERROR=ON "$@" >/dev/null
cmake --build "$dir" -j"$(nproc)"
