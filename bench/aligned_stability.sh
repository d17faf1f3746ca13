#!/usr/bin/env bash
# aligned_stability.sh — rate stability of a 2-node bsp job under co-scheduling, with the
# nodes' frames aligned (controller `align = true`: one cluster epoch) vs unaligned
# (`align = false`: every node keeps its own epoch, node2's OFF ms after node1's).
#
# --runs "align off:13 align off:37" (the default) runs those in that order: `align`, or
# `off:MS` = unaligned with node2's epoch MS ms after node1's from the start (a real cluster's
# nodes start their schedulers at unrelated times; on one machine they would start within
# milliseconds of each other, so the offset is set), or `drift:PPM` = unaligned with node2's
# epoch moved forward by PPM us every second from the job's start: two nodes whose clocks
# are not synchronised and run PPM parts per million apart (one machine has one clock, so
# the drift is emulated; with `align` the agents re-assert the cluster epoch every 5 s, which
# is what keeps synchronised nodes together). The controller's granularity search is
# free (adaptive, epsilon 3 %, from initial_period 100 ms = 1 window-set per frame): every
# change of the windows' period T/k moves an unaligned offset modulo T/k, so the control loop
# is part of what is measured. --hold instead holds the granularity at 4 window-sets per
# frame (control periods in [24 ms, 25 ms]) and sets an `off:` offset to half the window
# period once the windows are known (the constant-offset experiment).
#
# Two namespace-nodes (tests/helpers/netns_lib.sh: node1 = first CPU, node2 = second), the
# controller with `coschedule = true`, frame 100 ms, slot 5 ms, the granularity held at 4
# window-sets per frame (control periods in [24 ms, 25 ms]: windows every 25 ms), so that
# the windows do not move during the measurement in either run. One bsp job, one rank per
# node (compute + all-to-all exchange every iteration: a rank waits for its peer), R_max
# measured once (3 s, ranks pinned at SCHED_FIFO 1, in run A) and given to both runs,
# target 40 %. After SETTLE s, the job's per-second rate (bsp -v, rank 0: iterations in each
# ~1 s interval) over DURATION s: mean, standard deviation, coefficient of variation, and
# iterations/s (iterations over the whole interval / its length).
# Run B's offset is also measured, not only set: after the job, a probe (tests/helpers/
# runlog) with one identical 10 ms window every 100 ms on each node's vsched (no
# controller involved) records its run intervals; the median difference of the window
# starts node2 - node1 is the frames' offset (modulo 100 ms).
#
# usage: bench/aligned_stability.sh [--duration S] [--settle S] [--target PCT] [--hold]
#                                   [--runs "align off:MS ..."] [--bin DIR] [--out FILE]
#                                   [--bsp "ARGS"]
# Root; takes /tmp/vsched-rt.lock for each run (about 70 s each). Results: a table on
# stdout, and the markdown section in --out (default /tmp/results-align.md).
set -uo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
VS_BIN=${VS_BIN:-$SRC/build/bin}
DUR=30
SETTLE=15
TARGET=40
OUT=/tmp/results-align.md
BSP_ARGS=(--compute 20ms --msg 16KiB)
RUNS="align off:13 align off:37"
HOLD=false
CMDLINE="$0 $*"
while [ $# -gt 0 ]; do
	case $1 in
	--duration) DUR=$2; shift 2 ;;
	--settle) SETTLE=$2; shift 2 ;;
	--target) TARGET=$2; shift 2 ;;
	--bin) VS_BIN=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	--bsp) read -r -a BSP_ARGS <<<"$2"; shift 2 ;;
	--runs) RUNS=$2; shift 2 ;;
	--hold) HOLD=true; shift ;;
	*) echo "usage: $0 [--duration S] [--settle S] [--target PCT] [--hold] [--runs \"align off:MS ...\"] [--bin DIR] [--out FILE] [--bsp ARGS]" >&2; exit 2 ;;
	esac
done
skip() { echo "SKIP: $*"; exit 77; }
die() { echo "aligned_stability: $*" >&2; exit 1; }
source "$SRC/tests/helpers/rt_lock.sh"
source "$SRC/tests/helpers/netns_lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root"
[ -x "$VS_BIN/runlog" ] || die "$VS_BIN/runlog not built"
MS=1000000
WORK=$(mktemp -d /tmp/aligned-stab.XXXXXX)
chmod 0755 "$WORK"
NETNS_PREFIX="vs-b$$-"
NETNS_STATE=
on_exit() {
	[ -n "$NETNS_STATE" ] && netns_down >/dev/null 2>&1
	echo "files: $WORK"
}
trap on_exit EXIT
trap 'exit 130' INT TERM
netns_check || exit 1

RMAX=
declare -A RES

# win I PID: "PERIOD PHASE+DEADLINE/SLICE ..." of PID on node I
win() {
	netns_vctl "$1" task list --json |
		jq -r ".[] | select(.pid == $2) | \"\(.period_ns) \" + ([.windows[] | \"\(.phase_ns)+\(.deadline_ns)/\(.slice_ns)\"] | join(\" \"))"
}

# run IDX SPEC: one run; SPEC = align | off:MS
run() {
	local i idx=$1 spec=$2 align=true offms=0 tag E P W1 W2 same=0 prev= t0 tm0 tm1 p1 p2 pushes off wend ws
	local ppm=0 drifter=
	case $spec in
	align) ;;
	off:*) align=false offms=${spec#off:} ;;
	drift:*) align=false ppm=${spec#drift:} ;;
	*) die "--runs: '$spec' is not 'align', 'off:MS' or 'drift:PPM'" ;;
	esac
	tag=r$idx
	NETNS_STATE="$WORK/$tag"
	NETNS_PREFIX="vs-b$$$tag-"
	mkdir -p "$NETNS_STATE"
	NETNS_CTL_EXTRA="coschedule = true;
frame = \"100ms\";
slot = \"5ms\";
align = $align;"
	if $HOLD; then
		NETNS_CTL_EXTRA+="
initial_period = \"25ms\";
min_period = \"24ms\";"
	fi
	RT_LOCK_TAKEN=
	rt_lock 600
	[ -n "${RT_LOCK_TAKEN:-}" ] || rt_lock_held_by_ancestor || die "rt_lock did not take $RT_LOCK_FILE"
	echo "run $tag ($spec): lock taken $(date -u +%T)"
	netns_up 2 || die "netns_up failed"
	if [ -z "$RMAX" ]; then
		RMAX=$(NETNS_RT=1 netns_measure_rmax full 1 "${BSP_ARGS[@]}") || die "R_max measurement failed"
		echo "R_max = $RMAX iterations/s"
	fi
	E=$((($(date +%s) - 1) * 1000000000))
	if ! $align; then
		# every node its own epoch (the controller sends none with align = false); with
		# --hold node2 moves by half the window period once the windows are known
		$HOLD && offms=0
		netns_vctl 1 epoch "$E" >/dev/null && netns_vctl 2 epoch $((E + offms * MS)) >/dev/null ||
			die "epoch refused"
	fi
	t0=$(date +%s%N)
	if [ "$ppm" != 0 ]; then
		# node2's clock runs ppm faster: its epoch E + ppm * elapsed, re-set every second
		(
			while sleep 1; do
				netns_vctl 2 epoch $((E + ($(date +%s%N) - t0) / 1000000 * ppm)) >/dev/null || exit 1
			done
		) &
		drifter=$!
	fi
	netns_run_job bsp 1 "${BSP_ARGS[@]}" -v --timeout 60s --duration $((SETTLE + DUR + 8))s || die "bsp did not start"
	netns_wait_until 15 netns_job_is bsp ranks 2 || die "bsp's ranks not seen"
	netns_actl job set bsp --rmax "$RMAX" >/dev/null || die "job set --rmax refused"
	netns_actl rate bsp "$TARGET" >/dev/null || die "rate refused"
	read -r _ _ p1 < <(sed -n 1p "$NETNS_STATE/jobs/bsp/ranks")
	read -r _ _ p2 < <(sed -n 2p "$NETNS_STATE/jobs/bsp/ranks")
	# until both nodes hold the same windows, unchanged for 3 s (at most SETTLE s)
	while [ $(($(date +%s%N) - t0)) -lt $((SETTLE * 1000 * MS)) ]; do
		sleep 0.25
		W1=$(win 1 "$p1")
		W2=$(win 2 "$p2")
		if [ -n "$W1" ] && [ "$W1" = "$W2" ] && [ "$W1" = "$prev" ] && [[ $W1 == *+* ]]; then
			same=$((same + 1))
		else
			same=0
		fi
		prev=$W1
		[ $same -lt 12 ] || break
	done
	if ! $align && $HOLD; then
		read -r P _ <<<"$W1"
		[ -n "$P" ] || die "no windows for bsp on node1"
		netns_vctl 2 epoch $((E + P / 2)) >/dev/null || die "node2 epoch refused"
		echo "node2's epoch set $((P / 2000)) us after node1's (half the window period $((P / 1000)) us)"
	fi
	# the rest of the settling time
	while [ $(($(date +%s%N) - t0)) -lt $((SETTLE * 1000 * MS)) ]; do sleep 0.2; done
	W1=$(win 1 "$p1")
	pushes=$(grep -c 'window(s) gen .* -> node' "$NETNS_STATE/ctl/controller.log")
	tm0=$(date +%s%N)
	# the window period on node1 once a second: how often the granularity moved
	: >"$NETNS_STATE/periods"
	while [ $(($(date +%s%N) - tm0)) -lt $((DUR * 1000 * MS)) ]; do
		win 1 "$p1" | cut -d' ' -f1 >>"$NETNS_STATE/periods"
		sleep 1
	done
	tm1=$(date +%s%N)
	if [ -n "$drifter" ]; then
		kill "$drifter" 2>/dev/null
		wait "$drifter" 2>/dev/null
	fi
	pushes=$(($(grep -c 'window(s) gen .* -> node' "$NETNS_STATE/ctl/controller.log") - pushes))
	ws=$(awk 'NF { if ($1 != last) { n++; out = out (n > 1 ? "," : "") $1 / 1000000 } last = $1 }
		END { printf "%d changes: %s ms", n - 1, out }' "$NETNS_STATE/periods")
	wend="$(win 1 "$p1") ; $(win 2 "$p2")"
	netns_job_wait bsp || echo "warning: a bsp rank failed: $(cat "$NETNS_STATE"/jobs/bsp/rank-*.out | grep -v '^bsp: rank=' | head -3)"
	# per-second samples of rank 0 whose interval lies in [tm0, tm1]; band = share of the
	# samples with 100 * rate / R_max within the target +- 3 points (the controller's epsilon)
	awk -v a="$(((tm0 - t0) / MS))" -v b="$(((tm1 - t0) / MS))" -v rmax="$RMAX" -v tgt="$TARGET" '
		/^bsp: rank=0 t=/ { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			t = v["t"] * 1000; if (t - 1000 * 1.0 >= a - 200 && t <= b + 200) {
				n++; s += v["rate"]; ss += v["rate"] * v["rate"]
				u = 100 * v["rate"] / rmax; if (u >= tgt - 3 && u <= tgt + 3) band++
				if (n == 1) { i0 = pi; t0 = pt } ; i1 = v["iterations"]; t1 = t }
			pi = v["iterations"]; pt = t }
		END { m = s / n; sd = sqrt((ss - n * m * m) / (n - 1));
			printf "%d %.3f %.3f %.2f %.3f %.0f\n", n, m, sd, 100 * sd / m, (i1 - i0) / ((t1 - t0) / 1000), 100 * band / n }' \
		"$NETNS_STATE/jobs/bsp/rank-0.out" >"$WORK/$tag.stats"
	# the frames' offset, measured: one identical window on each node's vsched
	for i in 1 2; do
		netns_spawn "rank:probe" "node$i" "$NETNS_STATE/probe$i.out" "$VS_BIN/runlog" -d 4 -o "$NETNS_STATE/probe$i.ivl"
		eval "pp$i=$NETNS_PID"
	done
	netns_vctl 1 task add "$pp1" --cpu "$(netns_get node1_cpus)" --period 100ms --window 0+10ms >/dev/null &&
		netns_vctl 2 task add "$pp2" --cpu "$(netns_get node2_cpus)" --period 100ms --window 0+10ms >/dev/null ||
		echo "warning: probe windows refused"
	wait "$pp1" "$pp2"
	off=$("$VS_BIN/runlog" -c "$NETNS_STATE/probe1.ivl" "$NETNS_STATE/probe2.ivl" -G 20000 -s 1000)
	netns_down >/dev/null 2>&1
	NETNS_STATE=
	# release the lock between the runs (rt_lock takes it again only without RT_LOCK_TAKEN)
	flock -u 9
	RT_LOCK_TAKEN=
	read -r n m sd cv its band <"$WORK/$tag.stats"
	RES[$tag]="$n|$m|$sd|$cv|$its|$band|$spec|$W1|$pushes|$off|$wend|$ws"
	echo "run $tag ($spec): samples=$n mean=$m sd=$sd cv=$cv% it/s=$its in-band=$band%; windows after settling: $W1; at end: $wend; window pushes during the measurement: $pushes; window period: $ws; probe: $off"
}

TAGS=()
nrun=0
for spec in $RUNS; do
	nrun=$((nrun + 1))
	run "$nrun" "$spec"
	TAGS+=("r$nrun")
done

f() { cut -d'|' -f"$2" <<<"${RES[$1]}"; }
offset_line() { sed -n 's/.*med_us=\(-\?[0-9]*\).*/\1/p' <<<"$1"; }
row() { # row LABEL FIELD [SUFFIX]
	local t line="| $1 |"
	for t in "${TAGS[@]}"; do line+=" $(f "$t" "$2")${3:-} |"; done
	echo "$line"
}
TABLE=$(
	line="| |"
	sep="|---|"
	for t in "${TAGS[@]}"; do
		line+=" $t: $(f "$t" 7) |"
		sep+="---|"
	done
	echo "$line"
	echo "$sep"
	line="| node2 - node1 frame offset (measured, median, mod 100 ms) |"
	for t in "${TAGS[@]}"; do line+=" $(offset_line "$(f "$t" 10)") us |"; done
	echo "$line"
	row "windows after settling (period phase+deadline/slice ns)" 8
	row "window period during the measurement (1/s samples)" 12
	row "window pushes during the measurement" 9
	row "per-second samples" 1
	row "mean rate (it/s)" 2
	row "standard deviation (it/s)" 3
	row "coefficient of variation" 4 " %"
	row "samples within target +- 3 points" 6 " %"
	row "iterations/s over the interval" 5
)
echo
echo "$TABLE"
{
	echo "## Rate stability of a 2-node bsp job: aligned vs unaligned co-scheduling frames"
	echo
	echo "Date: $(date -u +'%F %T UTC'). Command: \`$CMDLINE\` (VS_BIN=$VS_BIN)."
	if $HOLD; then
		g="granularity held at 4 window-sets per frame (initial_period 25 ms, min_period 24 ms)"
	else
		g="granularity search free (adaptive, epsilon 3 %, from 1 window-set per frame)"
	fi
	echo "bsp ${BSP_ARGS[*]}, one rank per node, R_max $RMAX it/s, target $TARGET %; controller coschedule, frame 100 ms, slot 5 ms, $g; settle ${SETTLE} s, then ${DUR} s measured (bsp -v per-second rates of rank 0)."
	echo
	echo "$TABLE"
	echo
	echo "Machine: $(nproc) vCPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)), $(uname -r); two network-namespace nodes on ONE machine (node1 = CPU 0, node2 = CPU 1): one clock, so the aligned case is aligned exactly and the unaligned offset is exactly what was set; other tenants' work shares the machine."
} >"$OUT"
echo "written: $OUT"
