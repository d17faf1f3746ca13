#!/usr/bin/env bash
# Installs what is needed, builds twice (optimised, and with AddressSanitizer/UBSan) and runs
# the whole test suite under CTest in both builds; also builds the Debian package (Release)
# and a clang build, warnings as errors. Integration tests that need root or SCHED_FIFO are
# skipped with a reason when they cannot run. Then builds the fuzz harnesses (clang,
# libFuzzer) and fuzzes each for a few seconds (scripts/fuzz.sh fuzzes longer).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh build
bash scripts/build.sh build-asan -DVSCHED_SANITIZE=ON
CC=clang bash scripts/build.sh build-fuzz -DVSCHED_FUZZ=ON
# Built, not tested, warnings as errors: the Release build (gcc -O3) as the Debian package
# (tests/integration/deb_package.sh installs it), and a clang build (Debug: clang's warnings
# do not depend on the optimisation level, and -O0 builds fastest).
bash scripts/package.sh build-deb >/dev/null
bash scripts/build.sh build-clang -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug >/dev/null

# run_tests BUILD_DIR: its whole suite. A test that fails is run once more and fails the
# suite only if it fails again: many integration tests time real-time scheduling on a
# shared 2-CPU machine, and a rare outlier there is not a defect of the behaviour they
# check. Every test that needed its second run is named at the end (its first failure's
# output is in the log above): such tests are flaky and get fixed (issue 13).
RETRIED=()
run_tests() {
	local log rc=0 t
	log=$(mktemp)
	ctest --test-dir "$1" --output-on-failure --timeout 300 --repeat until-pass:2 | tee "$log" ||
		rc=1
	for t in $(sed -n 's/.*Test \{1,\}#[0-9]\{1,\}: \([^ ]*\) .*\*\*\*.*/\1/p' "$log" | sort -u); do
		grep -Eq "^[[:space:]]+[0-9]+ - $t " "$log" || RETRIED+=("$1: $t")
	done
	rm -f "$log"
	return $rc
}

# Both builds run even if the first fails, so one run shows every failure.
rc=0
echo "=== tests: optimised build"
run_tests build || rc=1
echo "=== tests: AddressSanitizer + UBSan build"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	run_tests build-asan || rc=1
echo "=== tests: fuzz harnesses (libFuzzer + ASan + UBSan, a few seconds each)"
ctest --test-dir build-fuzz --output-on-failure -L fuzz || rc=1
if [ "${#RETRIED[@]}" -gt 0 ]; then
	echo "=== flaky: failed once, passed when run again"
	printf '  %s\n' "${RETRIED[@]}"
fi
exit $rc
