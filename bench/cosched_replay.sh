#!/usr/bin/env bash
# cosched_replay.sh: throughput of two memory-bound and two compute-bound jobs under the three
# pairings of bench/cosched_throughput.sh — fitness, plain EDF, worst — switched back and forth
# every few seconds on the SAME four processes, so that the machine's memory bandwidth, which
# drifts by up to 2x over minutes here, is the same for the three within a round (issue 5).
#
#   bench/cosched_replay.sh [BUILD_DIR]     (default: build; root, 2 CPUs, jq)
#   env: ROUNDS=10, SEG=8 (s per configuration per round; the first SETTLE=1.5 s of each are
#        not counted), OUT=FILE (default /tmp/cosched-replay.txt)
#
# vsched on CPUs 0 and 1, no controller: the schedules are the controller's plans for this
# workload (bench/cosched_throughput.sh records them: a 100 ms frame of 5 ms slots, two
# 45 ms windows per CPU) given to vsched directly with `vschedctl task set`:
#   CPU 0: mA (membench --stride max, task 0), cA (bsp --msg 0 --compute 5ms, task 1)
#   CPU 1: mB (membench, task 2), cB (bsp, task 3)
#   fitness  mA 0+45 ms, cA 45+45 | cB 0+45, mB 45+45: each membench beside a bsp
#   worst    mA 0+45, cA 45+45    | mB 0+45, cB 45+45: the two membench together
#   edf      every task (100 ms, 45 ms), deadline = period, its release phase drawn at random
#            in [0, 100) ms for each segment: contention-oblivious EDF, whose overlap of the
#            two membench is left to chance (modelled per segment with edf_overlap)
# The order of the three rotates every round. Between two configurations every task first
# becomes a plain (100 ms, 45 ms) reservation, so that no intermediate state is refused.
# Per segment: membench MB/s (bytes moved per wall second) and bsp iterations/s from the
# programs' -v lines. Reference outside vsched before and after: membench alone on CPU 0,
# two at once on CPUs 0 and 1, membench on CPU 0 beside bsp on CPU 1 (6 s each, SCHED_FIFO 1
# so that other processes' CPU time does not count as lost bandwidth; RT throttling stays).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
export VS_SRC=$src
export VS_BIN=${VS_BIN:-$src/${1:-build}/bin}
ROUNDS=${ROUNDS:-10}
SEG=${SEG:-8}
SETTLE=${SETTLE:-1.5}
OUT=${OUT:-/tmp/cosched-replay.txt}
unset VSCHED_JOB # the programs report nowhere: no agent here
source "$VS_SRC/tests/integration/lib.sh"
source "$VS_SRC/bench/cosched_rates.sh"
need_root
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
command -v jq >/dev/null || skip "needs jq"
# The four tasks hold 90 % of both CPUs; this driver and its vschedctl calls share the rest
# with everything else on the machine: ahead of other tenants' builds, it switches faster.
renice -n -10 -p $$ >/dev/null

source "$VS_SRC/tests/helpers/rt_lock.sh"
rt_lock 600 # for the whole run, references included (start_vsched keeps it)
SOLO0=$(ref_mb solo 0)
PAIR0=$(ref_pair)
BESIDE0=$(ref_beside_compute)

write_config
start_vsched
DUR=3600 # the programs outlive the rounds (each apply takes 1-9 s here); ended at the end
NAMES=(mA cA mB cB)
CPU=(0 0 1 1)
declare -a PID
for i in 1 3; do # bsp first: it calibrates its 5 ms of work alone
	spawn "$VS_BIN/bsp" --local 1 --msg 0 --compute 5ms --duration "${DUR}s" -v \
		>"$TMP/${NAMES[$i]}.out" 2>&1
	launcher=$SPAWNED
	for _ in $(seq 50); do
		PID[i]=$(pgrep -P "$launcher" | head -1 || true)
		[ -n "${PID[i]}" ] && break
		sleep 0.1
	done
	[ -n "${PID[i]}" ] || fail "bsp rank of ${NAMES[$i]} not found"
done
sleep 2
for i in 0 2; do
	spawn "$VS_BIN/membench" --stride max --size 64MiB --duration "${DUR}s" -v \
		>"$TMP/${NAMES[$i]}.out" 2>&1
	PID[i]=$SPAWNED
done
for i in 0 1 2 3; do
	ctl task add "${PID[i]}" --cpu "${CPU[i]}" --period 100ms --slice 45ms >/dev/null ||
		fail "task add ${NAMES[$i]} refused"
done
ctl epoch now >/dev/null || fail "epoch refused"

# apply CONFIG: sets the four tasks; SPEC[i] = "PHASE DEADLINE SLICE" (ms) of task i, as
# vsched holds it. Every task first becomes a plain (100 ms, 45 ms) reservation, then gets
# its schedule: every intermediate state is admissible.
SPEC=()
apply() {
	local i ph dl
	for i in 0 1 2 3; do
		set_task "${PID[i]}" --period 100ms --slice 45ms || fail "$1: reset of ${NAMES[$i]} refused"
	done
	case $1 in
	fitness) SPEC=("0 45" "45 45" "45 45" "0 45") ;;
	worst) SPEC=("0 45" "45 45" "0 45" "45 45") ;;
	edf) for i in 0 1 2 3; do SPEC[i]="$((RANDOM % 100)) 100"; done ;;
	esac
	for i in 0 1 2 3; do
		read -r ph dl <<<"${SPEC[i]}"
		if [ "$dl" = 100 ]; then
			set_task "${PID[i]}" --period 100ms --slice 45ms --phase "${ph}ms" ||
				fail "$1: ${NAMES[$i]} refused"
		else
			set_task "${PID[i]}" --period 100ms --window "${ph}ms+${dl}ms" ||
				fail "$1: ${NAMES[$i]} refused"
		fi
	done
	# what vsched holds, not what was asked: the overlap is modelled from this
	local held cpus=
	held=$(ctl_retry task list --json) || fail "$1: task list failed"
	for i in 0 1 2 3; do
		cpus+="$(jq -r ".[] | select(.pid == ${PID[i]}) | .cpu" <<<"$held") "
	done
	[ "${cpus% }" = "${CPU[*]}" ] || fail "$1: a task moved to another CPU: $cpus"
	for i in 0 1 2 3; do
		SPEC[i]=$(jq -r ".[] | select(.pid == ${PID[i]}) | .windows[0]
			| \"\(.phase_ns / 1e6) \(.deadline_ns / 1e6) \(.slice_ns / 1e6)\"" <<<"$held")
	done
}
# ctl_retry ARGS..: vschedctl ARGS, again (up to 5 times) when it got no answer in time: with
# 90 % of both CPUs reserved, every thread hand-off of a vschedctl exchange waits for the next
# 10 ms gap, so an exchange can take seconds (a refusal is final; set and list are idempotent)
ctl_retry() {
	local n out
	for n in 1 2 3 4 5; do
		out=$(ctl "$@" 2>&1) && { echo "$out"; return 0; }
		[[ $out == *"no answer"* ]] || break
	done
	echo "$out" >&2
	return 1
}
set_task() { ctl_retry task set "$@" >/dev/null; }
CONFIGS=(fitness edf worst)
ROWS=$TMP/rows
: >"$ROWS"
sleep 3 # membench's first pass faults its block in
for r in $(seq 1 "$ROUNDS"); do
	for k in 0 1 2; do
		c=${CONFIGS[$(((k + r - 1) % 3))]}
		ts0=$(date +%s%N)
		apply "$c"
		ts1=$(date +%s%N)
		ov=$(edf_overlap "0 ${SPEC[0]}" "0 ${SPEC[1]}" "1 ${SPEC[2]}" "1 ${SPEC[3]}")
		row="$r $c $ov $(seg_rates "$SEG" "$SETTLE" "membench:$TMP/mA.out" "bsp:$TMP/cA.out" \
			"membench:$TMP/mB.out" "bsp:$TMP/cB.out")"
		echo "$row" >>"$ROWS"
		echo "round $r $c [${SPEC[*]}] (apply $(((ts1 - ts0) / 1000000)) ms): overlap ${ov} ms, mA cA mB cB = ${row#* * * }" >&2
	done
done
for i in 0 1 2 3; do ctl task del "${PID[i]}" >/dev/null 2>&1 || true; done
for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
PIDS=()
SOLO1=$(ref_mb solo 0)
PAIR1=$(ref_pair)
BESIDE1=$(ref_beside_compute)

# rows: ROUND CONFIG OVERLAP_MS mA cA mB cB
{
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), host $(hostname), $(nproc) CPUs, $(uname -r), load before: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "command: bench/cosched_replay.sh ${1:-build} (ROUNDS=$ROUNDS SEG=$SEG SETTLE=$SETTLE)"
	echo "reference (no vsched, 6 s): membench alone on cpu0 $SOLO0 MB/s before, $SOLO1 after; two at once $PAIR0 before, $PAIR1 after; beside bsp (compute) on cpu1 $BESIDE0 before, $BESIDE1 after"
	echo
	echo "| round | config | membench overlap (ms/100 ms, modelled) | mA MB/s | mB MB/s | membench sum | cA it/s | cB it/s |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|"
	awk '{ printf "| %s | %s | %s | %.0f | %.0f | %.0f | %.2f | %.2f |\n", $1, $2, $3, $4, $6, $4 + $6, $5, $7 }' "$ROWS"
	echo
	awk '
		{ s[$1, $2] = $4 + $6; b[$1, $2] = $5 + $7; ov[$2] += $3; n[$2]++; sum[$2] += $4 + $6; bs[$2] += $5 + $7
		  if ($1 > R) R = $1 }
		function med(a, m,   i, j, t) { for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
			if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2 }
		# paired LABEL X "A/B" [MINCOST]: X[r, A] / X[r, B] over the rounds r (where the
		# worst pairing cost the membench sum at least MINCOST against fitness)
		function paired(lab, x, pair, mincost,   ab, m, up, lo, hi, r, v, q) {
			split(pair, ab, "/"); m = 0; up = 0; lo = 1e9; hi = 0
			for (r = 1; r <= R; r++) if (x[r, ab[2]] > 0 && 1 - s[r, "worst"] / s[r, "fitness"] >= mincost) {
				v = x[r, ab[1]] / x[r, ab[2]]; q[++m] = v; up += v > 1
				if (v < lo) lo = v; if (v > hi) hi = v }
			if (m) printf "| %s %s | %.3f | %.3f | %.3f | %d of %d |\n", lab, pair, med(q, m), lo, hi, up, m
		}
		END {
			printf "| config | rounds | mean overlap (ms) | mean membench sum (MB/s) | mean bsp sum (it/s) |\n|---|---:|---:|---:|---:|\n"
			split("fitness edf worst", C, " ")
			for (c = 1; c <= 3; c++) printf "| %s | %d | %.1f | %.0f | %.2f |\n", C[c], n[C[c]], ov[C[c]] / n[C[c]], sum[C[c]] / n[C[c]], bs[C[c]] / n[C[c]]
			printf "\nPaired by round (same minute of the machine):\n\n| ratio | median | min | max | rounds > 1 |\n|---|---:|---:|---:|---:|\n"
			paired("membench sum", s, "fitness/edf", -1e9)
			paired("membench sum", s, "worst/edf", -1e9)
			paired("membench sum", s, "fitness/worst", -1e9)
			paired("bsp sum", b, "fitness/edf", -1e9)
			paired("bsp sum", b, "worst/edf", -1e9)
			printf "\nRounds in which two membench contended (the worst pairing cost >= 10 %% of the membench sum against fitness in that round):\n\n| ratio | median | min | max | rounds > 1 |\n|---|---:|---:|---:|---:|\n"
			paired("membench sum", s, "fitness/edf", 0.10)
			paired("membench sum", s, "worst/edf", 0.10)
		}' "$ROWS"
} | tee "$OUT"
