#!/usr/bin/env bash
# Runs one libFuzzer harness for a bounded time and prints one line of figures:
#   HARNESS: N inputs in S s, cov C, ft F, corpus K, findings X
# Usage: run.sh HARNESS_BINARY SEED_DIR WORK_DIR SECONDS
# The seeds are read, never written: new inputs go to WORK_DIR/corpus (kept between runs,
# so later runs start deeper), findings (crash-*, leak-*, timeout-*, oom-*) to
# WORK_DIR/artifacts, libFuzzer's output to WORK_DIR/log. Exits 1 on any finding.
set -euo pipefail
bin=$1 seeds=$2 work=$3 secs=$4
name=$(basename "$bin")
name=${name#fuzz_}
dict=""
[[ $name =~ ^(config_.*|state)$ ]] && dict=$(dirname "$0")/dict/libconfig.dict
# libconfig's own leak on a parse error is suppressed (lsan.supp says why). Each such leak
# makes libFuzzer scan the heap, so a small ASan quarantine keeps the scans (and the RSS)
# small: with the default 256 MB the config harnesses slow down 4x within 30 s.
export LSAN_OPTIONS="suppressions=$(dirname "$0")/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export ASAN_OPTIONS="quarantine_size_mb=8${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
mkdir -p "$work/corpus" "$work/artifacts"
rm -f "$work/artifacts"/*
args=(-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=8192
      -print_final_stats=1 -artifact_prefix="$work/artifacts/")
[ -n "$dict" ] && args+=(-dict="$dict")
rc=0
"$bin" "${args[@]}" "$work/corpus" "$seeds" >"$work/log" 2>&1 || rc=$?

# Figures from libFuzzer's last status line ("#N ... cov: C ft: F corp: K/...") and final
# stats ("stat::number_of_executed_units: N").
last=$(grep -E '^#[0-9]+' "$work/log" | tail -n 1 || true)
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -n 1)
cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
findings=$(find "$work/artifacts" -type f | wc -l)
echo "$name: ${runs:-?} inputs in $secs s, cov ${cov:-?}, ft ${ft:-?}, corpus ${corp:-?}, findings $findings"
if [ "$rc" -ne 0 ] || [ "$findings" -ne 0 ]; then
	echo "$name: libFuzzer exit $rc; findings in $work/artifacts; the end of $work/log:"
	tail -n 60 "$work/log"
	exit 1
fi
