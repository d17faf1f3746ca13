#!/usr/bin/env bash
# The longer fuzz run (bench/RESULTS.md): builds the libFuzzer harnesses (build-fuzz: clang,
# VSCHED_FUZZ=ON) and fuzzes each for SECONDS (default 120), one after the other, in one
# process, from the seeds in tests/fuzz/corpus (a fresh work corpus each run, so the figures
# do not depend on earlier runs). Prints per harness: inputs executed, coverage (cov: code
# edges, ft: features, libFuzzer's final figures), corpus size and findings (crash, leak,
# timeout, out-of-memory inputs, kept in build-fuzz/fuzz-long/HARNESS/artifacts).
# Usage: bash scripts/fuzz.sh [SECONDS] [HARNESS...]    (no RT lock needed)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-120}
shift || true
CC=clang bash scripts/build.sh build-fuzz -DVSCHED_FUZZ=ON
if [ $# -gt 0 ]; then
	harnesses=("$@")
else
	mapfile -t harnesses < <(ls build-fuzz/bin | sed -n 's/^fuzz_//p')
fi
echo "fuzz: ${#harnesses[@]} harnesses, $secs s each; load: $(uptime | sed 's/.*load average: //')"
rc=0
for h in "${harnesses[@]}"; do
	rm -rf "build-fuzz/fuzz-long/$h"
	bash tests/fuzz/run.sh "build-fuzz/bin/fuzz_$h" "tests/fuzz/corpus/$h" \
		"build-fuzz/fuzz-long/$h" "$secs" || rc=1
done
echo "fuzz: done; load: $(uptime | sed 's/.*load average: //')"
exit $rc
