#!/bin/bash
# Delivered CPU share: vsched against SCHED_DEADLINE, same runtime and period, same run.
#
#   VS_BIN=build/bin VS_SRC=. bench/sched_share.sh [OUT]
#
# For every period (100 ms, 10 ms, 1 ms) and share (30 %, 50 %): a single-threaded spinner
# (bench_spin) under `chrt -d` with runtime = share × period, and the same spinner under a
# vsched reservation (--cpu $BENCH_TASK_CPU, park stop). The CPU it receives is read from
# /proc/PID/task/*/schedstat over an exactly timed window of a whole number of periods
# (bench_share), after 0.5 s of warm-up. The two schedulers alternate (DL first on odd
# repetitions, vsched first on even ones), REPS times (default 3); figures are medians.
# The vsched side runs once per anchor in SHARE_ANCHORS (default "epoch wakeup"): SCHED
# "vsched" (epoch) and "vsched-wakeup" in the raw lines.
# vsched's own miss counter (task list --json) over the same window is reported too.
#
# Raw lines go to OUT (default $TMP/share.raw):
#   share SCHED PERIOD_US PCT REP DELIVERED_PCT MISSES PERIODS
# and a summary table to stdout, one row per (period, share):
#   PERIOD SHARE DL_MED DL_ERR VS_MED VS_ERR VS_WORST VS_MISS%
# Bounded: about 2 minutes with the defaults.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=sched_lib.sh
source "$here/sched_lib.sh"

REPS=${REPS:-3}
OUT=${1:-$TMP/share.raw}
need_root
if [ ! -x "$VS_BIN/bench_spin" ] || [ ! -x "$VS_BIN/bench_share" ]; then skip "bench_spin/bench_share not built"; fi
chrt -d --sched-runtime 1000000 --sched-deadline 10000000 --sched-period 10000000 0 true ||
	skip "SCHED_DEADLINE not permitted here"

write_config 'park = "stop";'
case " $BENCH_SIDES " in *" vsched "*) start_vsched ;; esac
: >"$OUT"

# window P_US: measurement window in seconds, a whole number of periods.
window() { if [ "$1" -ge 100000 ]; then echo 4; else echo 2; fi; }

measure_dl() { # P_US PCT REP
	local p=$1 pct=$2 w
	w=$(window "$p")
	dl_run "$(slice_us "$p" "$pct")" "$p" "$VS_BIN/bench_spin" -d "$(echo "$w + 1.5" | bc)"
	local pid=$SPAWNED
	sleep 0.5
	local got
	got=$("$VS_BIN/bench_share" -d "$w" "$pid" | awk 'NR == 1 { print $4 }')
	kill_wait "$pid"
	echo "share deadline $p $pct $3 $got - -" >>"$OUT"
}

measure_vs() { # P_US PCT REP ANCHOR
	local p=$1 pct=$2 w s anchor=${4:-epoch} label=vsched
	[ "$anchor" = epoch ] || label=vsched-$anchor
	w=$(window "$p")
	s=$(slice_us "$p" "$pct")
	spawn "$VS_BIN/bench_spin" -d "$(echo "$w + 1.5" | bc)"
	local pid=$SPAWNED
	if ! ctl task add "$pid" --period "${p}us" --slice "${s}us" --cpu "$BENCH_TASK_CPU" --park stop \
		--anchor "$anchor" >/dev/null; then
		kill_wait "$pid"
		echo "share $label $p $pct $3 - - -" >>"$OUT"
		return
	fi
	sleep 0.5
	local a b got
	a=$(task_stat "$pid" misses periods)
	got=$("$VS_BIN/bench_share" -d "$w" "$pid" | awk 'NR == 1 { print $4 }')
	b=$(task_stat "$pid" misses periods)
	ctl task del "$pid" >/dev/null 2>&1 || true
	kill_wait "$pid"
	local dm=- dp=-
	if [ "$a" != - ] && [ "$b" != - ]; then
		read -r m0 p0 <<<"$a"
		read -r m1 p1 <<<"$b"
		dm=$((m1 - m0))
		dp=$((p1 - p0))
	fi
	echo "share $label $p $pct $3 $got $dm $dp" >>"$OUT"
}

for rep in $(seq 1 "$REPS"); do
	for p in $BENCH_PERIODS_US; do
		for pct in $BENCH_SHARES; do
			order="deadline vsched"
			[ $((rep % 2)) = 1 ] || order="vsched deadline"
			for side in $order; do
				case " $BENCH_SIDES " in *" $side "*) ;; *) continue ;; esac
				if [ "$side" = deadline ]; then
					measure_dl "$p" "$pct" "$rep"
				else
					for a in ${SHARE_ANCHORS:-epoch wakeup}; do measure_vs "$p" "$pct" "$rep" "$a"; done
				fi
			done
		done
	done
done

# Summary: medians of the delivered share, error = median - reserved (points), the worst
# single-run |error|, and vsched's miss rate from its own accounting.
summarise_share() {
	local p pct
	printf '%-8s %-6s %8s %7s %8s %7s %8s %9s %8s\n' PERIOD SHARE DL_MED DL_ERR VS_MED VS_ERR VS_WORST VS_MISS% VSW_ERR
	for p in $BENCH_PERIODS_US; do
		for pct in $BENCH_SHARES; do
			local dl vs worst_vs miss vw
			dl=$(awk -v p="$p" -v s="$pct" '$2 == "deadline" && $3 == p && $4 == s && $6 != "-" { print $6 }' "$OUT" | median)
			vs=$(awk -v p="$p" -v s="$pct" '$2 == "vsched" && $3 == p && $4 == s && $6 != "-" { print $6 }' "$OUT" | median)
			worst_vs=$(awk -v p="$p" -v s="$pct" '$2 == "vsched" && $3 == p && $4 == s && $6 != "-" { e = $6 - s; if (e < 0) e = -e; if (e > w) w = e; n++ } END { if (n) printf "%.2f", w; else print "-" }' "$OUT")
			miss=$(awk -v p="$p" -v s="$pct" '$2 == "vsched" && $3 == p && $4 == s && $8 != "-" { m += $7; n += $8 } END { if (n) printf "%.2f", 100 * m / n; else print "-" }' "$OUT")
			vw=$(awk -v p="$p" -v s="$pct" '$2 == "vsched-wakeup" && $3 == p && $4 == s && $6 != "-" { print $6 }' "$OUT" | median)
			awk -v p="$p" -v s="$pct" -v dl="$dl" -v vs="$vs" -v w="$worst_vs" -v m="$miss" -v vw="$vw" 'BEGIN {
				de = (dl == "-") ? "-" : sprintf("%+.2f", dl - s)
				ve = (vs == "-") ? "-" : sprintf("%+.2f", vs - s)
				we = (vw == "-") ? "-" : sprintf("%+.2f", vw - s)
				printf "%-8s %-6s %8s %7s %8s %7s %8s %9s %8s\n", p / 1000 "ms", s "%", dl, de, vs, ve, w, m, we }'
		done
	done
}
summarise_share
