#!/bin/bash
# vsched's own CPU use with 8 tasks at 10 ms periods (DESIGN.md §8: <= 1 % of one CPU;
# VSched ~2 %), beside the same daemon idle in the same run.
#
#   VS_BIN=build/bin VS_SRC=. bench/sched_overhead.sh [OUT]
#
# 1. idle: vsched with no task, CPU over 5 s.
# 2. loaded: 8 spinners (bench_spin), 4 per CPU, period 10 ms, slices 1/1.5/2/2.5 ms on CPU 0
#    and 0.5/1/2/3 ms on CPU 1 (65 % per CPU), park stop; after 1 s of warm-up, the CPU of
#    every vsched thread (/proc/PID/task/*/schedstat, bench_share) and of its watchdog
#    process over WINDOW s (default 10), as % of one CPU; the daemon's context switches
#    per second; each task's delivered share and vsched's miss count.
# Output (OUT, default $TMP/overhead.raw): key=value lines. Bounded: about 20 s.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=sched_lib.sh
source "$here/sched_lib.sh"

OUT=${1:-$TMP/overhead.raw}
WINDOW=${WINDOW:-10}
need_root
write_config 'park = "stop";'
start_vsched
: >"$OUT"
WD=$(pgrep -P "$VSCHED_PID" | head -1 || true)

ctxsw() { # PID -> voluntary + involuntary context switches of all its threads
	cat /proc/"$1"/task/*/status 2>/dev/null | awk '/ctxt_switches/ { s += $2 } END { print s + 0 }'
}

# 1. idle daemon
idle=$("$VS_BIN/bench_share" -d 5 "$VSCHED_PID" | awk 'NR == 1 { print $4 }')
echo "idle_vsched_pct=$idle" | tee -a "$OUT"

# 2. eight tasks at 10 ms
slices0="1000 1500 2000 2500"
slices1="500 1000 2000 3000"
tasks=()
declare -A resv
add() { # CPU SLICE_US
	spawn "$VS_BIN/bench_spin" -d $((WINDOW + 10))
	ctl task add "$SPAWNED" --period 10ms --slice "${2}us" --cpu "$1" --park stop >/dev/null ||
		fail "task add on CPU $1 refused"
	tasks+=("$SPAWNED")
	resv[$SPAWNED]=$(awk -v s="$2" 'BEGIN { print s / 100 }')
}
for s in $slices0; do add 0 "$s"; done
for s in $slices1; do add 1 "$s"; done
sleep 1

# sum FIELD: the field summed over every task in `task list --json`; retried, and every
# request vsched does not answer (vschedctl: 3 s) is counted: that is a finding too.
NOANSWER=0
sum() {
	local out _
	for _ in 1 2 3; do
		if out=$(ctl task list --json 2>/dev/null); then
			jq "[.. | objects | select(has(\"$1\")) | .$1] | add" <<<"$out"
			return
		fi
		NOANSWER=$((NOANSWER + 1))
	done
	echo 0
}

c0=$(ctxsw "$VSCHED_PID")
m0=$(sum misses)
p0=$(sum periods)
"$VS_BIN/bench_share" -d "$WINDOW" "$VSCHED_PID" ${WD:+"$WD"} "${tasks[@]}" >"$TMP/ovh.share"
c1=$(ctxsw "$VSCHED_PID")
m1=$(sum misses)
p1=$(sum periods)

awk -v v="$VSCHED_PID" -v w="${WD:-none}" '$1 == v { print "vsched_pct=" $4 } $1 == w { print "watchdog_pct=" $4 }' "$TMP/ovh.share" | tee -a "$OUT"
echo "vsched_ctxsw_per_s=$(awk -v a="$c0" -v b="$c1" -v t="$WINDOW" 'BEGIN { printf "%.0f", (b - a) / t }')" | tee -a "$OUT"
echo "misses=$((m1 - m0)) periods=$((p1 - p0)) api_no_answer=$NOANSWER" | tee -a "$OUT"
for t in "${tasks[@]}"; do
	awk -v p="$t" -v r="${resv[$t]}" '$1 == p { printf "task_share pid=%s reserved=%.0f delivered=%.2f err=%+.2f\n", p, r, $4, $4 - r }' "$TMP/ovh.share"
done | tee -a "$OUT"
for t in "${tasks[@]}"; do
	ctl task del "$t" >/dev/null 2>&1 || true
	kill_wait "$t"
done
