#!/usr/bin/env bash
# cosched_throughput.sh: throughput of memory-bound and compute-bound jobs with fitness
# co-scheduling, plain EDF (contention-oblivious) and the worst pairing, one run after the
# other in one invocation (issue 5, docs/coschedule.md).
#
#   bench/cosched_throughput.sh [BUILD_DIR]      (default: build; needs root, 2 CPUs, jq)
#   env: SETTLE=10 (s after the windows are committed), MEASURE=20 (s), OUT=FILE (the table),
#        ORDER="fitness edf worst" (run order; the machine's bandwidth drifts, vary it)
#
# Per configuration: one node (vsched on CPUs 0 and 1 + agent), a controller, four jobs at
# 45 %: mA, mB = membench at one cache line stride (--stride max, 64 MiB, memory-bound),
# cA, cB = one-rank bsp, 5 ms of computation per iteration, no messages (compute-bound).
#   fitness  coschedule = true; pairing = "fitness"
#   edf      coschedule = false: every job one (100 ms, 45 ms) reservation at phase 0 of
#            vsched's own epoch, so all four are released together and EDF's tie rule (the
#            lower task index first) decides which run together: one draw of "oblivious",
#            fixed by the order the jobs registered (bench/cosched_replay.sh draws many)
#   worst    coschedule = true; pairing = "worst"
# After SETTLE s, each job's throughput over MEASURE s from its own per-second output
# (membench -v: bytes moved per interval -> MB/s; bsp -v: iterations -> iterations/s),
# and which jobs' vsched windows overlap on different CPUs (ms per 100 ms frame).
# Before the three: membench alone on CPU 0 and two membench at once on CPUs 0 and 1
# (no vsched, 6 s each) = how much the two CPUs' shared memory bandwidth costs here.
# Holds /tmp/vsched-rt.lock for the whole run (~3 min).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
export VS_SRC=$src
export VS_BIN=${VS_BIN:-$src/${1:-build}/bin}
SETTLE=${SETTLE:-10}
MEASURE=${MEASURE:-20}
OUT=${OUT:-/tmp/cothru-table.txt}
ORDER=${ORDER:-fitness edf worst} # the order the configurations run in
source "$VS_SRC/tests/integration/lib.sh"
source "$VS_SRC/tests/helpers/ctld_lib.sh"
source "$VS_SRC/tests/helpers/cosched_lib.sh"
source "$VS_SRC/bench/cosched_rates.sh"
need_root
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
command -v jq >/dev/null || skip "needs jq"
BASE=$TMP
DUR=$((SETTLE + MEASURE + 40)) # jobs outlive the measurement; stopped after it

rt_lock 300

# stop_all: ends every process this configuration started (by pid), forgets them.
stop_all() {
	local p
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	PIDS=()
}


# committed: the job has its constraint in force (45 ms of 100 ms; with co-scheduling the
# planned windows, cosched_lib's job_settled).
edf_settled() {
	local j
	for j in "$@"; do
		actl job show "$j" --json | jq -e '(.pending | not) and .period_ns == 100000000
			and .slice_ns == 45000000' >/dev/null || return 1
	done
}

# overlaps NODE PIDMAP: "JOB JOB MS" for tasks on different CPUs, ms of windows overlapping
# per frame (all windows of one period).
overlaps() {
	vctl "$1" task list --json | jq -r --rawfile map "$2" '
		($map | split("\n") | map(select(length > 0) | split(" ") | {(.[0]): .[1]}) | add) as $job
		| [.[] | select($job[(.pid | tostring)] != null)
		   | {job: $job[(.pid | tostring)], cpu, w: .windows}] | sort_by(.job) as $t
		| range(0; $t | length) as $a | range($a + 1; $t | length) as $b
		| select($t[$a].cpu != $t[$b].cpu)
		| ([$t[$a].w[] as $x | $t[$b].w[] as $y | select($x.period_ns == $y.period_ns)
		    | ([$x.phase_ns + $x.deadline_ns, $y.phase_ns + $y.deadline_ns] | min)
		      - ([$x.phase_ns, $y.phase_ns] | max) | select(. > 0)] | add // 0) as $ov
		| "\($t[$a].job)+\($t[$b].job)=\($ov / 1e6)ms"'
}

declare -A R # R[config.job] = throughput
declare -A OV CPUS

run_config() {
	local name=$1 pairing=$2 j p
	TMP=$BASE/$name
	mkdir -p "$TMP"
	ADMIN_EP="ipc://$TMP/admin.sock"
	CTLD_AGENTS=
	cosched_config "$pairing"
	if [ "$name" = edf ]; then
		sed -i 's/^coschedule = true;/coschedule = false;/' "$TMP/controller.conf"
		"$VS_BIN/vsched-controller" -n -c "$TMP/controller.conf" >/dev/null ||
			fail "controller config refused"
	fi
	start_ctld
	cosched_start_node n1 "0, 1"
	local ep="ipc://$TMP/agent-n1.sock"
	# bsp first: `--spin work` calibrates its 5 ms of arithmetic at start against the CPU
	# clock; beside a starting membench it calibrates slow and then runs more it/s later
	for j in cA cB; do
		start_bsp "$j" "$ep" --local 1 --msg 0 --compute 5ms --duration "${DUR}s"
	done
	sleep 3
	for j in mA mB; do
		"$VS_BIN/vschedctl" job run --job "$j" --agent "$ep" -- "$VS_BIN/membench" \
			--stride max --size 64MiB --duration "${DUR}s" -v >"$TMP/$j.out" 2>&1 &
		PIDS+=("$!")
	done
	for j in mA mB cA cB; do
		wait_until 15 job_is "$j" ranks 1 || ctld_fail "$name: job $j: rank not seen"
	done
	if [ "$name" = edf ]; then
		wait_until 30 edf_settled mA mB cA cB || ctld_fail "$name: constraints not in force"
	else
		wait_until 30 cosched_settled mA mB cA cB || ctld_fail "$name: plan not committed"
	fi
	sleep "$SETTLE"
	declare -A L0
	for j in mA mB; do L0[$j]=$(nlines "$TMP/$j.out" membench); done
	for j in cA cB; do L0[$j]=$(nlines "$TMP/$j.out" bsp); done
	sleep "$MEASURE"
	for j in mA mB; do R[$name.$j]=$(mb_rate "$TMP/$j.out" "${L0[$j]}" "$(nlines "$TMP/$j.out" membench)"); done
	for j in cA cB; do R[$name.$j]=$(it_rate "$TMP/$j.out" "${L0[$j]}" "$(nlines "$TMP/$j.out" bsp)"); done
	: >"$TMP/pidmap"
	for j in mA mB cA cB; do
		for p in $(job_rank_pids "$j"); do echo "$p $j" >>"$TMP/pidmap"; done
	done
	OV[$name]=$(overlaps n1 "$TMP/pidmap" | tr '\n' ' ')
	CPUS[$name]=$(vctl n1 task list --json | jq -r --rawfile map "$TMP/pidmap" '
		($map | split("\n") | map(select(length > 0) | split(" ") | {(.[0]): .[1]}) | add) as $job
		| [.[] | select($job[(.pid | tostring)] != null)
		   | "\($job[(.pid | tostring)])@cpu\(.cpu):\([.windows[] | "\(.phase_ns / 1e6)+\(.deadline_ns / 1e6)"] | join(","))"]
		| sort | join(" ")')
	{
		echo "--- $name: vsched task list"
		vctl n1 task list
		echo "--- $name: job show mA"
		actl job show mA
	} >>"$BASE/detail.txt" 2>&1
	stop_all
	echo "$name done: ${R[$name.mA]} ${R[$name.mB]} MB/s, ${R[$name.cA]} ${R[$name.cB]} it/s" >&2
}

# reference: membench alone vs two at once, outside vsched (no reservation, full CPUs)
ref_mb() {
	local out=$BASE/ref-$1-$2.out
	taskset -c "$2" "$VS_BIN/membench" --stride max --size 64MiB --duration 6s >"$out" 2>&1
	sed -n 's/.* mb_s=\([0-9.]*\).*/\1/p' "$out"
}
SOLO=$(ref_mb solo 0)
ref_mb pair 0 >"$BASE/pair0" &
P0=$!
PAIR1=$(ref_mb pair 1)
wait "$P0"
PAIR0=$(cat "$BASE/pair0")

for c in $ORDER; do
	case $c in
	fitness | edf) run_config "$c" fitness ;;
	worst) run_config worst worst ;;
	*) fail "ORDER: unknown configuration $c" ;;
	esac
done
TMP=$BASE
SOLO2=$(ref_mb solo 0) # the machine's memory bandwidth may drift during the run

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "-" }'; }
sum() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a + b }'; }
{
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), host $(hostname), $(nproc) CPUs, $(uname -r)"
	echo "command: bench/cosched_throughput.sh ${1:-build} (SETTLE=$SETTLE MEASURE=$MEASURE)"
	echo "order: $ORDER"
	echo "reference (no vsched, 6 s): membench-max alone on cpu0 $SOLO MB/s (after the runs: $SOLO2); two at once cpu0 $PAIR0 + cpu1 $PAIR1 MB/s"
	echo
	printf '| %-22s | %14s | %14s | %14s | %9s | %9s |\n' job "fitness" "plain EDF" "worst" "fit/EDF" "worst/EDF"
	printf '|%s|%s|%s|%s|%s|%s|\n' "------------------------" "----------------" "----------------" "----------------" "-----------" "-----------"
	for j in mA mB cA cB; do
		u="MB/s"
		case $j in c*) u="it/s" ;; esac
		printf '| %-22s | %14s | %14s | %14s | %9s | %9s |\n' "$j ($u)" "${R[fitness.$j]}" \
			"${R[edf.$j]}" "${R[worst.$j]}" "$(ratio "${R[fitness.$j]}" "${R[edf.$j]}")" \
			"$(ratio "${R[worst.$j]}" "${R[edf.$j]}")"
	done
	for c in m c; do
		if [ $c = m ]; then lab="membench sum (MB/s)"; else lab="bsp sum (it/s)"; fi
		f=$(sum "${R[fitness.${c}A]}" "${R[fitness.${c}B]}")
		e=$(sum "${R[edf.${c}A]}" "${R[edf.${c}B]}")
		w=$(sum "${R[worst.${c}A]}" "${R[worst.${c}B]}")
		printf '| %-22s | %14s | %14s | %14s | %9s | %9s |\n' "$lab" "$f" "$e" "$w" \
			"$(ratio "$f" "$e")" "$(ratio "$w" "$e")"
	done
	echo
	for n in fitness edf worst; do
		echo "$n: placement ${CPUS[$n]}"
		echo "$n: windows overlapping on different CPUs (per 100 ms): ${OV[$n]}"
	done
} | tee "$OUT"
cp "$BASE/detail.txt" "${OUT%.txt}-detail.txt" 2>/dev/null || true
