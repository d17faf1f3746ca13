#!/bin/bash
# Deadline misses of a periodic job that sleeps between jobs: vsched with both anchors and
# both park policies against SCHED_DEADLINE, release phases swept over the period.
#
#   VS_BIN=build/bin VS_SRC=. bench/sched_sleep.sh [OUT]
#
# The job (bench_periodic): JOB = 2/3 of the slice of its own CPU time every period P,
# released on an absolute timer (an overrun is not forgiven: a late job makes the next one
# late too) at phase PH × P after vsched's epoch, with a second thread that only sleeps (as
# most real programs have; SLEEP_THREADS=1: without it, so that a `stop` job is enforced by
# its perf counter instead of timed by the dispatcher); its deadline is its release + P. Reservation: slice = 30 % of P
# (the issue's 300 us / 1 ms with a 200 us job, scaled).
#   deadline  : bench_periodic -D SLICE runs its job thread under SCHED_DEADLINE itself
#   vsched    : `vschedctl run --period P --slice S --cpu $BENCH_TASK_CPU --park PARK
#               --anchor ANCHOR -- bench_periodic ...`, for PARK in stop idle and ANCHOR in
#               epoch wakeup; vsched's epoch is set to a whole second, the job's anchor too,
#               so PH is its phase against vsched's windows.
# Periods BENCH_PERIODS_US (100 ms 10 ms 1 ms), phases SLEEP_PHASES (percent of the period;
# default 2 25 50 75 98: just after and just before a window starts, and between), run
# lengths 2 s at 1 ms and 10 ms, 4 s at 100 ms (SLEEP_SECS: that for every period; the first
# 200 ms not counted).
#
# Raw lines to OUT (default $TMP/sleep.raw):
#   sleep SIDE PERIOD_US PHASE_PCT jobs=.. misses=.. miss_pct=.. resp_med_us=.. ...
# SIDE: deadline, vsched-stop-epoch, vsched-stop-wakeup, vsched-idle-epoch,
# vsched-idle-wakeup. SLEEP_STOP_METHOD sets vsched's stop_method (signal, freezer; default:
# the config's). SLEEP_TRACE_DIR: each run's jobs also to DIR/SIDE.PERIOD.PHASE.trace
# (bench_periodic -o: release offset, wake-up and response in us). SLEEP_REPEAT=N: the whole
# sweep N times over (every case's runs interleaved with the others'; raw lines per run, the
# summary sums them: a VM's disturbances come in bursts, so one short run per case is noisy). Bounded: about 3 minutes with the defaults.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=sched_lib.sh
source "$here/sched_lib.sh"

OUT=${1:-$TMP/sleep.raw}
PHASES=${SLEEP_PHASES:-"2 25 50 75 98"}
SIDES=${SLEEP_SIDES:-"deadline vsched-stop-epoch vsched-stop-wakeup vsched-idle-epoch vsched-idle-wakeup"}
need_root
[ -x "$VS_BIN/bench_periodic" ] || skip "bench_periodic not built"
"$VS_BIN/bench_periodic" -p 10000 -j 100 -d 1 -D 1000 -w 0 >/dev/null 2>&1 ||
	skip "SCHED_DEADLINE not permitted here"
write_config 'park = "stop";' ${SLEEP_STOP_METHOD:+"stop_method = \"$SLEEP_STOP_METHOD\";"}
start_vsched
: >"$OUT"
EPOCH=$((($(date +%s) + 1) * 1000000000))
ctl epoch "$EPOCH" >/dev/null
sleep 1.1

secs() { # run length for period $1 us (SLEEP_SECS: for every period)
	if [ -n "${SLEEP_SECS:-}" ]; then echo "$SLEEP_SECS"; elif [ "$1" -ge 100000 ]; then echo 4; else echo 2; fi
}

run_one() { # SIDE P_US PHASE_PCT
	local side=$1 p=$2 ph=$3 s j d out park anchor
	s=$(slice_us "$p" 30)
	j=$((s * 2 / 3))
	d=$(secs "$p")
	local args=(-p "$p" -j "$j" -d "$d" -a "$EPOCH" -P $((p * ph / 100)))
	[ "${SLEEP_THREADS:-2}" = 1 ] || args+=(-x)
	[ -z "${SLEEP_TRACE_DIR:-}" ] || args+=(-o "$SLEEP_TRACE_DIR/$side.$p.$ph.trace")
	if [ "$side" = deadline ]; then
		out=$(timeout $((d + 20)) "$VS_BIN/bench_periodic" "${args[@]}" -D "$s" 2>&1 | tail -1) || true
	else
		park=${side#vsched-}
		anchor=${park#*-}
		park=${park%-*}
		out=$(timeout $((d + 20)) "$VS_BIN/vschedctl" -s "$ENDPOINT" run --period "${p}us" \
			--slice "${s}us" --cpu "$BENCH_TASK_CPU" --park "$park" --anchor "$anchor" -- \
			"$VS_BIN/bench_periodic" "${args[@]}" 2>&1 | tail -1) || true
	fi
	case $out in jobs=*) ;; *) out="jobs=- misses=- miss_pct=- failed: $out" ;; esac
	echo "sleep $side $p $ph $out" >>"$OUT"
}

for rep in $(seq 1 "${SLEEP_REPEAT:-1}"); do
	for p in $BENCH_PERIODS_US; do
		for ph in $PHASES; do
			for side in $SIDES; do
				run_one "$side" "$p" "$ph"
			done
		done
	done
done
echo "# $(machine_note)" >>"$OUT"

# Summary: worst and median miss % over the phases, per side and period (repeats summed);
# then the same for held misses (jobs that woke on time and still missed, bench_periodic).
summary() { # COLUMN LABEL: column of sleep_aggregate's line (7 miss_pct, 10 held_pct)
	printf '%-20s %-7s %-9s %-9s %s\n' SIDE PERIOD "$2 MAX" "$2 MED" "per phase"
	awk -f "$here/sleep_aggregate.awk" "$OUT" | awk -v col="$1" -f "$here/sleep_phases.awk" |
		awk '{ printf "%-20s %-7s %-9s %-9s", $2, $1 / 1000 "ms", $3, $4
	for (i = 5; i <= NF; i++) { sub(":", "%:", $i); printf " %s", $i }
	print "" }' | sort
}
summary 7 MISS%
summary 10 HELD%
