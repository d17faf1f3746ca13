#!/usr/bin/env bash
# cosched_rate_throughput.sh: throughput of two memory-bound and two compute-bound jobs whose
# targets are set only with `vschedctl rate`, co-scheduled (`coschedule = true`, fitness plan)
# vs plain EDF (`coschedule = false`: every job its own reservation), switched back and forth
# on the SAME four processes so that the machine's drift cancels within a round (issue 14).
#
#   bench/cosched_rate_throughput.sh [BUILD_DIR]   (default: build; root, 2 CPUs, jq)
#   env: ROUNDS=5, SEG=10 (s measured per mode per round; the first SKIP=1.5 s not counted),
#        PCT=45 (every job's target), ORDER="m1 m2 c1 c2" (the order of the rate commands,
#        no pauses), MAX_S=540 (no new round starts after this many s of rounds),
#        OUT=FILE (default /tmp/cosched-rate-throughput.txt)
#
# Node n1 as in tests/helpers/cosched_rate_lib.sh: vsched on CPUs 0 and 1 (90 % cap), an agent
# with the shipped provisional reservation (20 ms / 100 ms), a controller with frame 100 ms of
# 5 ms slots, U = target (adaptive, R_max far above the rates, a band that keeps the loop
# still: the modes are compared at equal shares) and initial period 100 ms (= the frame).
# Jobs, started once with `vschedctl job run`: m1, m2 = membench --stride max 64 MiB, c1, c2 =
# one-rank bsp --msg 0 --compute 5ms. The controller has no runtime switch for its mode, so
# each segment restarts it on a fresh state file with `coschedule` set for the mode (the agent
# registers again and re-announces the jobs; the processes keep what vsched holds), sets the
# four targets with `vschedctl rate` in ORDER, waits until the mode's outcome is in force
# (fitness: every job planned with its slots and committed, membench jobs classed devil and
# in no common slot, nor overlapping in vsched; edf: every job (100 ms, 45 ms) committed), and
# measures SEG s: membench MB/s and bsp iterations/s from their `-v` lines. The mode order
# alternates every round. A job's rate = its throughput over its speed alone outside vsched
# (SCHED_FIFO 1, measured before the rounds), in % — what the target asks for is PCT % of
# that. EDF's membench overlap is modelled from the windows vsched holds (edf_overlap, ties
# to membench: the agent added the membench processes first).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
export VS_SRC=$src
export VS_BIN=${VS_BIN:-$src/${1:-build}/bin}
ROUNDS=${ROUNDS:-5}
SEG=${SEG:-10}
SKIP=${SKIP:-1.5}
PCT=${PCT:-45}
ORDER=${ORDER:-m1 m2 c1 c2}
MAX_S=${MAX_S:-540}
OUT=${OUT:-/tmp/cosched-rate-throughput.txt}
source "$VS_SRC/tests/integration/lib.sh"
source "$VS_SRC/tests/helpers/ctld_lib.sh"
source "$VS_SRC/tests/helpers/cosched_lib.sh"
source "$VS_SRC/tests/helpers/cosched_rate_lib.sh"
source "$VS_SRC/bench/cosched_rates.sh"
need_root
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
command -v jq >/dev/null || skip "needs jq"
rt_lock 1800 # for the whole run, references included
# the four jobs hold 90 % of both CPUs; this driver and its vschedctl calls share the rest
renice -n -10 -p $$ >/dev/null
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
T0=$(date -u '+%H:%M')
SOLO=$(ref_mb solo 0)
PAIR=$(ref_pair)
BESIDE=$(ref_beside_compute)
BSP1=$(ref_bsp 1)
echo "reference: membench alone $SOLO MB/s, two at once $PAIR, beside bsp $BESIDE; bsp alone $BSP1 it/s" >&2

cosched_rate_setup
JOBS=(m1 c1 m2 c2)
for j in m1 m2; do
	"$VS_BIN/vschedctl" job run --job "$j" --agent "$EP" -- \
		"$VS_BIN/membench" --stride max --size 64MiB --duration 3600s -v >"$TMP/$j.out" 2>&1 &
	PIDS+=("$!")
done
for j in c1 c2; do
	start_bsp "$j" "$EP" --local 1 --msg 0 --compute 5ms --duration 3600s
done
for j in "${JOBS[@]}"; do
	wait_until 20 job_is "$j" ranks 1 || cs_fail "job $j not seen by the controller"
done
: >"$TMP/pidmap"
for j in "${JOBS[@]}"; do echo "$(job_rank_pids "$j") $j" >>"$TMP/pidmap"; done

# within SECONDS CMD...: until CMD succeeds, at most SECONDS of wall time (wait_until counts
# polls, and each poll of several vschedctl calls can take seconds under full reservations).
within() {
	local end=$((SECONDS + $1))
	shift
	until "$@" >/dev/null 2>&1; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.2
	done
}
# use_mode MODE: the controller restarted on a fresh state file in MODE (fitness|edf); it
# knows the node and the four jobs again (no targets).
use_mode() {
	local on=false j
	[ "$1" = fitness ] && on=true
	stop_ctld
	forget_pid "$CTLD_PID"
	sed -i "s/^coschedule = .*;/coschedule = $on;/" "$TMP/controller.conf"
	rm -f "$TMP/ctl.state"
	start_ctld
	within 15 node_up n1 || cs_fail "$1: node n1 did not register again"
	for j in "${JOBS[@]}"; do
		within 20 job_is "$j" ranks 1 || cs_fail "$1: job $j not announced again"
	done
}
# set_targets: PCT for every job in ORDER; RATE_OK = accepted commands, RATE_MS = their time.
set_targets() {
	local j out t0
	RATE_OK=0
	t0=$(date +%s%N)
	for j in $ORDER; do
		if out=$(actl rate "$j" "$PCT" 2>&1); then
			RATE_OK=$((RATE_OK + 1))
		else
			echo "  rate $j $PCT refused: $out" >&2
		fi
	done
	RATE_MS=$((($(date +%s%N) - t0) / 1000000))
}
plain_ok() {
	actl job show "$1" --json | jq -e --argjson p "$PCT" '.period_ns == 100000000
		and .slice_ns == $p * 1000000 and (.pending | not)' >/dev/null
}
# in_force MODE: the mode's outcome is committed and vsched holds PCT ms of 100 ms per task
# ($TMP/held.json); in fitness mode the membench jobs share no slot and no vsched window.
in_force() {
	local j p s a b
	for j in "${JOBS[@]}"; do
		if [ "$1" = fitness ]; then job_ok "$j" "$PCT"; else plain_ok "$j"; fi || return 1
	done
	if [ "$1" = fitness ]; then
		job_is m1 class devil && job_is m2 class devil || return 1
		while read -r _ a b; do [ "${a:0:1}${b:0:1}" != mm ] || return 1; done < <(slot_table m1)
	fi
	vsched_holds_all || return 1
	while read -r p j; do
		s=$(jq -r ".[] | select(.pid == $p) | ([.windows[].slice_ns] | add) * (100000000 / .period_ns)" "$TMP/held.json")
		[ "$s" = $((PCT * 1000000)) ] || return 1
	done <"$TMP/pidmap"
	[ "$1" = edf ] || ! vsched_corunners n1 "$TMP/pidmap" | grep -q '^m. m.$'
}
# held_overlap: ms per 100 ms that m1 and m2 run at once, modelled with edf_overlap from the
# windows vsched holds ($TMP/held.json; ties between equal deadlines go to the membench
# task). 0 when both are on one CPU; "n/a" when a task holds more than one window.
held_overlap() {
	local p j spec
	declare -A on=()
	while read -r p j; do
		spec=$(jq -r ".[] | select(.pid == $p) | if (.windows | length) == 1 then \"\(.cpu) \"
			+ (.windows[0] | \"\(.phase_ns / 1e6) \(.deadline_ns / 1e6) \(.slice_ns / 1e6)\")
			else \"x\" end" "$TMP/held.json")
		[ "$spec" != x ] || { echo n/a; return; }
		on[${spec%% *}${j:0:1}]=$spec
	done <"$TMP/pidmap"
	if [ -z "${on[0m]:-}" ] || [ -z "${on[1m]:-}" ]; then echo 0; else
		edf_overlap "${on[0m]}" "${on[0c]}" "${on[1m]}" "${on[1c]}"
	fi
}
# held_windows: "JOB CPU PHASE+DEADLINE/SLICE..." (ms) of every task, for the log.
held_windows() {
	local p j
	while read -r p j; do
		echo "$j $(jq -r ".[] | select(.pid == $p) | \"cpu\(.cpu) \" + ([.windows[]
			| \"\(.phase_ns / 1e6)+\(.deadline_ns / 1e6)/\(.slice_ns / 1e6)\"] | join(\",\"))" "$TMP/held.json")"
	done <"$TMP/pidmap" | paste -sd';'
}

ROWS=$TMP/rows
: >"$ROWS"
sleep 3 # membench's first pass faults its block in
START=$SECONDS
MODES=(fitness edf)
for r in $(seq 1 "$ROUNDS"); do
	[ $((SECONDS - START)) -lt "$MAX_S" ] || { echo "round $r not started: MAX_S=$MAX_S s reached" >&2; break; }
	for k in 0 1; do
		m=${MODES[$(((k + r - 1) % 2))]}
		t0=$SECONDS
		use_mode "$m"
		set_targets
		ok=yes
		within 30 in_force "$m" || ok=no
		ov=$(held_overlap)
		echo "round $r $m: vsched holds $(held_windows)" >&2
		row="$r $m $RATE_OK $RATE_MS $((SECONDS - t0)) $ok $ov $(seg_rates "$SEG" "$SKIP" \
			"membench:$TMP/m1.out" "bsp:$TMP/c1.out" "membench:$TMP/m2.out" "bsp:$TMP/c2.out")"
		echo "$row" >>"$ROWS"
		echo "round $r $m: rates accepted $RATE_OK/4 in $RATE_MS ms, in force: $ok, m1/m2 overlap ${ov} ms; m1 c1 m2 c2 = ${row#* * * * * * * }" >&2
	done
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
T1=$(date -u '+%H:%M')

# rows: ROUND MODE RATES_OK RATES_MS SWITCH_S IN_FORCE OVERLAP m1 c1 m2 c2
{
	echo "date: $(date -u '+%Y-%m-%d') $T0-$T1 UTC, host $(hostname), $(nproc) CPUs, $(uname -r); load average before: $LOAD0, after: $LOAD1"
	echo "command: bench/cosched_rate_throughput.sh ${1:-build} (ROUNDS=$ROUNDS SEG=$SEG SKIP=$SKIP PCT=$PCT ORDER=\"$ORDER\")"
	echo "reference (outside vsched, SCHED_FIFO 1, before the rounds): membench alone $SOLO MB/s, two at once $PAIR, beside bsp (compute) $BESIDE; bsp alone $BSP1 it/s"
	echo
	echo "| round | mode | rates accepted | rate cmds (ms) | switch (s) | in force | m1/m2 overlap (ms/100 ms) | m1 MB/s | m2 MB/s | membench sum | c1 it/s | c2 it/s |"
	echo "|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|"
	awk '{ printf "| %s | %s | %s/4 | %s | %s | %s | %s | %.0f | %.0f | %.0f | %.2f | %.2f |\n", $1, $2, $3, $4, $5, $6, $7, $8, $10, $8 + $10, $9, $11 }' "$ROWS"
	echo
	awk -v solo="$SOLO" -v bsp="$BSP1" -v pct="$PCT" '
		{ for (i = 8; i <= 11; i++) { x[$1, $2, i] = $i; sum[$2, i] += $i }
		  s[$1, $2] = $8 + $10; n[$2]++; if ($1 > R) R = $1 }
		function ref(i) { return i % 2 ? bsp : solo }
		END {
			split("m1 c1 m2 c2", J, " ")
			printf "Mean per job (rate = throughput / alone, %%; every target %s %%):\n\n", pct
			printf "| job | unit | fitness | EDF | fitness / EDF | rate fitness (%%) | rate EDF (%%) |\n|---|---|---:|---:|---:|---:|---:|\n"
			for (i = 8; i <= 11; i++) {
				f = sum["fitness", i] / n["fitness"]; e = sum["edf", i] / n["edf"]
				printf "| %s | %s | %.1f | %.1f | %.3f | %.1f | %.1f |\n", J[i - 7], i % 2 ? "it/s" : "MB/s",
					f, e, f / e, 100 * f / ref(i), 100 * e / ref(i)
			}
			printf "\nPaired by round (fitness / EDF within one round):\n\n| ratio | median | min | max | rounds > 1 |\n|---|---:|---:|---:|---:|\n"
			m = 0; up = 0; lo = 1e9; hi = 0
			for (r = 1; r <= R; r++) if (s[r, "edf"] > 0 && s[r, "fitness"] > 0) {
				v = s[r, "fitness"] / s[r, "edf"]; q[++m] = v; up += v > 1
				if (v < lo) lo = v; if (v > hi) hi = v }
			for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++) if (q[b] < q[a]) { t = q[a]; q[a] = q[b]; q[b] = t }
			if (m) printf "| membench sum | %.3f | %.3f | %.3f | %d of %d |\n", m % 2 ? q[(m + 1) / 2] : (q[m / 2] + q[m / 2 + 1]) / 2, lo, hi, up, m
		}' "$ROWS"
} | tee "$OUT"
echo "== the last segment's controller view and vsched's tasks" >&2
actl job list >&2 || true
vctl n1 task list >&2 || true
