#!/bin/bash
# rt-app cross-check and deadline-miss rate: the same periodic rt-app job under
# SCHED_DEADLINE and under a vsched reservation with the same runtime and period.
#
#   VS_BIN=build/bin VS_SRC=. bench/sched_rtapp.sh [OUT]
#
# 1. Calibration (bench/rtapp/calibrate.json.in): a fixed loop cost (PLOAD ns) and the
#    10th-percentile ratio of measured to configured `run` at SCHED_FIFO on BENCH_TASK_CPU, so that a
#    job of R µs really needs R µs of CPU on both sides (same loop count on both sides).
# 2. For every period (100 ms, 10 ms, 1 ms) and share (30 %, 50 %), slice S = share × P and
#    a job of RUNFRAC × S (default 0.8) CPU every P (rt-app `run` + `timer`, relative mode):
#      deadline: rt-app sets SCHED_DEADLINE (dl-runtime S, dl-period = dl-deadline P) itself;
#      vsched:   `vschedctl run --period P --slice S --cpu $BENCH_TASK_CPU -- rt-app` with
#                the thread at SCHED_OTHER (vsched raises/parks it).
#    The two sides alternate order per configuration. Durations: 10 s at 100 ms, 5 s else.
# 3. From rt-app's per-period log, after the first 200 ms (start-up): periods, misses
#    (slack < 0: the job ended after the end of its period), slack median and 1st
#    percentile, wake-up latency median and p99, run median. For vsched, its own miss
#    counter (task list --json, read just before the job ends) beside rt-app's.
#
# Raw lines to OUT (default $TMP/rtapp.raw):
#   rtapp SCHED PERIOD_US PCT PERIODS MISSES SLACK_MED SLACK_P1 WULAT_MED WULAT_P99 RUN_MED VS_MISSES VS_PERIODS
# RTAPP_STOP_METHOD sets vsched's stop_method (signal, freezer; default: vsched's own).
# Bounded: about 100 s.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=sched_lib.sh
source "$here/sched_lib.sh"

OUT=${1:-$TMP/rtapp.raw}
RUNFRAC=${RUNFRAC:-0.8}
need_root
command -v rt-app >/dev/null || skip "rt-app not installed (Debian package rt-app)"
case " $BENCH_SIDES " in *" vsched "*) write_config 'park = "stop";' ${RTAPP_STOP_METHOD:+"stop_method = \"$RTAPP_STOP_METHOD\";"}; start_vsched ;; esac
: >"$OUT"
T=$here/rtapp

# fill TEMPLATE OUTFILE KEY=VALUE...
fill() {
	local tpl=$1 out=$2 kv args=()
	shift 2
	for kv in "$@"; do args+=(-e "s|@${kv%%=*}@|${kv#*=}|g"); done
	sed "${args[@]}" "$tpl" >"$out"
}

# --- 1. calibration. rt-app's own calibration ("CPU1") is an integer ns per loop and can
# take very long on a loaded machine, so the loop cost is fixed (PLOAD, default 10 ns, about
# right here) and the real cost measured instead: K = p10(measured / configured run) of
# 1000 µs jobs at SCHED_FIFO 50. Every later run is configured as R / K.
PLOAD=${PLOAD:-10}
fill "$T/calibrate.json.in" "$TMP/cal.json" CPU="$BENCH_TASK_CPU" LOGDIR="$TMP" NAME=cal CALIB_NS="$PLOAD"
timeout 20 rt-app "$TMP/cal.json" >"$TMP/cal.out" 2>&1 || fail "rt-app calibration failed: $(tail -3 "$TMP/cal.out")"
# The 10th percentile, not the median: the VM's speed drops by up to 2x for seconds when the
# host is busy, and the job is meant to be 0.8 x slice at the machine's normal speed (a slow
# spell then shows as misses on both sides). RTAPP_K overrides it (e.g. 1.0 to repeat a run).
K=${RTAPP_K:-$(awk '!/^#/ && $9 > 0 { print $3 / $9 }' "$TMP/cal-calib-0.log" | pctl 10)}
if [ "$K" = - ]; then fail "cannot read rt-app calibration"; fi
echo "# rt-app calibration: loop cost set to $PLOAD ns, measured/configured run (p10) $K" | tee -a "$OUT"

# summarise LOG -> "PERIODS MISSES SLACK_MED SLACK_P1 WULAT_MED WULAT_P99 RUN_MED"
summarise_log() {
	local log=$1 f
	f=$(mktemp "$TMP/sum.XXXXXX")
	awk '!/^#/ && $7 >= 200000' "$log" >"$f"
	local n m
	n=$(wc -l <"$f")
	m=$(awk '$8 < 0' "$f" | wc -l)
	echo "$n $m $(awk '{ print $8 }' "$f" | median) $(awk '{ print $8 }' "$f" | pctl 1)" \
		"$(awk '{ print $11 }' "$f" | median) $(awk '{ print $11 }' "$f" | pctl 99)" \
		"$(awk '{ print $3 }' "$f" | median)"
	rm -f "$f"
}

run_side() { # SIDE P_US PCT
	local side=$1 p=$2 pct=$3 s r d name
	s=$(slice_us "$p" "$pct")
	r=$(awk -v s="$s" -v f="$RUNFRAC" -v k="$K" 'BEGIN { printf "%d", s * f / k + 0.5 }')
	d=5
	[ "$p" -lt 100000 ] || d=10
	name=$side-$p-$pct
	fill "$T/periodic-$side.json.in" "$TMP/$name.json" SLICE_US="$s" PERIOD_US="$p" RUN_US="$r" \
		DURATION="$d" CALIB_NS="$PLOAD" LOGDIR="$TMP" NAME="$name"
	local vs="- -"
	if [ "$side" = deadline ]; then
		timeout $((d + 20)) rt-app "$TMP/$name.json" >"$TMP/$name.out" 2>&1 || true
	else
		# vsched's own accounting, read shortly before rt-app ends
		(sleep "$(echo "$d - 0.7" | bc)"
		 ctl task list --json >"$TMP/$name.list" 2>/dev/null || true) &
		local snap=$!
		timeout $((d + 20)) "$VS_BIN/vschedctl" -s "$ENDPOINT" run --period "${p}us" --slice "${s}us" \
			--cpu "$BENCH_TASK_CPU" -- rt-app "$TMP/$name.json" >"$TMP/$name.out" 2>&1 || true
		wait "$snap" || true
		vs=$(jq -r '[.. | objects | select(has("pid"))] | first | if . == null then "- -" else "\(.misses) \(.periods)" end' \
			"$TMP/$name.list" 2>/dev/null || echo "- -")
	fi
	local log=$TMP/$name-periodic-0.log
	if [ -s "$log" ]; then
		echo "rtapp $side $p $pct $(summarise_log "$log") $vs" >>"$OUT"
	else
		echo "rtapp $side $p $pct - - - - - - - $vs" >>"$OUT"
		echo "# $name: no rt-app log: $(tail -2 "$TMP/$name.out" | tr '\n' ' ')" >>"$OUT"
	fi
}

i=0
for p in $BENCH_PERIODS_US; do
	for pct in $BENCH_SHARES; do
		order="deadline vsched"
		[ $((i % 2)) = 0 ] || order="vsched deadline"
		i=$((i + 1))
		for side in $order; do
			case " $BENCH_SIDES " in *" $side "*) run_side "$side" "$p" "$pct" ;; esac
		done
	done
done

printf '%-8s %-6s %-9s %8s %7s %8s %10s %10s %10s %10s %9s %10s\n' PERIOD SHARE SCHED PERIODS MISS% SLACK_MED SLACK_P1 WULAT_MED WULAT_P99 RUN_MED SELF_MISS% SELF_PERIODS
awk '$1 == "rtapp" {
	miss = ($5 > 0 && $6 != "-") ? sprintf("%.2f", 100 * $6 / $5) : "-"
	self = ($13 != "-" && $13 > 0) ? sprintf("%.2f", 100 * $12 / $13) : "-"
	printf "%-8s %-6s %-9s %8s %7s %8s %10s %10s %10s %10s %9s %10s\n", $3 / 1000 "ms", $4 "%", $2, $5, miss, $7, $8, $9, $10, $11, self, $13
}' "$OUT"
