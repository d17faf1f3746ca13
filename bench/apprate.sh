#!/usr/bin/env bash
# libapprate benchmark (DESIGN.md §8: apprate_progress() <= 10 ns median, zero syscalls per
# call; reference: Application Heartbeats' mutex + clock read per beat).
#
#   bench/apprate.sh [BUILD_DIR]        (default: build; needs target apprate_bench)
#
# 1. apprate_bench: ns per call, median / p99 / mean of batches of 1000 calls, 1 and 2
#    threads, side by side with a plain increment, an atomic increment and mutex +
#    clock_gettime, with a stand-in agent receiving the reports.
# 2. Syscalls, counted by strace -c:
#    a) the calling thread only (strace without -f), report interval 1 h: a loop of
#       progress calls for 300 ms and for 600 ms, and the same loop without calls. If the
#       hot path made syscalls, doubling the calls would add some;
#    b) the whole process (strace -f), report interval 100 ms, 300 ms with and without
#       calls: what reporting costs in syscalls, all threads included.
# Everything runs under flock /tmp/vsched-rt.lock so as not to overlap the real-time
# measurements of other benchmarks. About 10 s in all.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
BENCH=$BUILD/bin/apprate_bench
[ -x "$BENCH" ] || { echo "no $BENCH: build target apprate_bench first" >&2; exit 1; }
LOCK="flock /tmp/vsched-rt.lock"
TMP=$(mktemp -d /tmp/apprate-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

echo "== $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
	"clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
echo "== 1. cost per call"
$LOCK "$BENCH" -s 0.5 -b 1000 -i 100

command -v strace >/dev/null || { echo "strace not installed: syscall counts skipped"; exit 0; }

# total syscalls from a strace -c summary
total() { awk '$NF == "total" {print $4}' "$1"; }
# run NAME STRACE_FLAGS -- BENCH ARGS: prints the bench line, leaves the count in $TMP/NAME
run() {
	local name=$1 flags=$2
	shift 2
	# shellcheck disable=SC2086
	$LOCK strace $flags -c -o "$TMP/$name.strace" "$BENCH" "$@" >"$TMP/$name.out"
	total "$TMP/$name.strace" >"$TMP/$name"
}
calls() { awk '{print $4}' "$TMP/$1.out"; }
slow() { awk '{print $6 + $8 + $10}' "$TMP/$1.out"; } # report + register attempts

echo "== 2a. syscalls of the calling thread (strace -c, no -f), report interval 1 h, no agent"
run t0 "" --syscalls 300 --no-calls -i 3600000
run t1 "" --syscalls 300 -i 3600000
run t2 "" --syscalls 600 -i 3600000
printf '%-34s %14s %10s %12s\n' "run" "progress calls" "syscalls" "slow paths"
printf '%-34s %14s %10s %12s\n' "300 ms loop, no calls (baseline)" 0 "$(cat "$TMP/t0")" 0
printf '%-34s %14s %10s %12s\n' "300 ms loop of apprate_progress" "$(calls t1)" "$(cat "$TMP/t1")" "$(slow t1)"
printf '%-34s %14s %10s %12s\n' "600 ms loop of apprate_progress" "$(calls t2)" "$(cat "$TMP/t2")" "$(slow t2)"
d=$(($(cat "$TMP/t2") - $(cat "$TMP/t1")))
echo "syscalls added by $(($(calls t2) - $(calls t1))) more calls: $d (hot path: $( [ "$d" -le 0 ] && echo zero || echo NOT zero))"

echo "== 2b. whole process (strace -f -c), report interval 100 ms, no agent, 300 ms"
run f0 "-f" --syscalls 300 --no-calls -i 100
run f1 "-f" --syscalls 300 -i 100
echo "no calls: $(cat "$TMP/f0") syscalls; $(calls f1) calls: $(cat "$TMP/f1") syscalls," \
	"$(slow f1) report/register attempts -> $(($(cat "$TMP/f1") - $(cat "$TMP/f0"))) syscalls" \
	"for reporting (all threads, incl. ZeroMQ's), per call $(awk -v a="$(cat "$TMP/f1")" \
		-v b="$(cat "$TMP/f0")" -v n="$(calls f1)" 'BEGIN {printf "%.1e", (a - b) / n}')"
echo "== command: bench/apprate.sh $BUILD"
