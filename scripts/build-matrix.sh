#!/usr/bin/env bash
# Builds every build type with gcc and clang, warnings as errors (scripts/build.sh), in
# build-matrix/COMPILER-TYPE: the check that a fresh clone builds in all of them. Not part
# of scripts/test.sh (eight full builds); CI builds the gcc Release (the package) and a
# clang build.
#
#   bash scripts/build-matrix.sh [COMPILER...]     (default: gcc clang)
set -euo pipefail
cd "$(dirname "$0")/.."
compilers=("$@")
[ ${#compilers[@]} -gt 0 ] || compilers=(gcc clang)
failed=()
mkdir -p build-matrix
for cc in "${compilers[@]}"; do
	for type in Debug Release RelWithDebInfo MinSizeRel; do
		dir=build-matrix/$cc-$type
		if bash scripts/build.sh "$dir" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE="$type" \
			>"$dir.log" 2>&1; then
			echo "ok   $cc $type"
		else
			echo "FAIL $cc $type: $(grep -m3 -E 'error|warning' "$dir.log" || tail -3 "$dir.log")"
			failed+=("$cc-$type")
		fi
	done
done
[ ${#failed[@]} = 0 ] || { echo "failed: ${failed[*]}"; exit 1; }
echo "every build type builds warning-free with ${compilers[*]}"
