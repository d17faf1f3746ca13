#!/bin/bash
# What scheduling costs: vsched's own CPU with 8 and with 32 tasks at 10 ms (DESIGN.md §8:
# <= 1 % of one CPU for 8; the issue: <= 1 % per CPU for 16 per CPU), and beside it what
# SCHED_DEADLINE leaves for other work with the same reservations, in the same run.
#
#   VS_BIN=build/bin VS_SRC=. bench/sched_overhead.sh [OUT]
#
# Per case, after 1 s of warm-up, over WINDOW s (default 10):
#   vsched N : N spinners (bench_spin), N/2 per CPU, period 10 ms, park stop, slices 1/1.5/2/
#              2.5 ms and 0.5/1/2/3 ms per CPU for N = 8 (65 % per CPU), 375 us each for
#              N = 32 (60 % per CPU); one SCHED_OTHER spinner pinned to each CPU soaks up the
#              rest. Measured: the CPU of every vsched thread and of its watchdog (% of one
#              CPU), its context switches per second, each task's share against its
#              reservation, vsched's miss count, and what the two background spinners got
#              ("left": capacity the scheduling left to other work).
#   deadline N: the same N spinners under SCHED_DEADLINE (runtime = slice, period 10 ms) and
#              the same background spinners: "left" is the kernel's reference.
# The idle daemon (no task) is measured first. Extra vsched configuration lines can be given
# in BENCH_VS_EXTRA (e.g. 'perf_events = "off";' or 'stop_method = "signal";'). With
# BENCH_PROFILE=1 each vsched case is then profiled for 5 s (perf cpu-clock: OUT.profN).
# With BENCH_SYSCALLS=1 each vsched case then counts vsched's system calls for SYSCALL_WINDOW s
# (default 10; perf stat on the syscall tracepoints of its threads, counting only, no
# sampling): calls per second by thread kind and call, dispatcher wake-ups and context
# switches per second, to OUT.sysN (a cost metric far less noisy than CPU %).
# OVH_DEADLINE=0 leaves out the SCHED_DEADLINE cases. OVH_HELPER=1: vsched's spinners have a
# second thread that only sleeps (bench_spin -x), as real programs do; a multi-threaded task's
# budget ends are timed by its dispatcher unless it has a cgroup enforcer (docs/vsched.md).
# (The SCHED_DEADLINE spinners stay single-threaded: a deadline task may not create threads.)
# The floor (reference, OVH_FLOOR=0 leaves it out): bench_wake_floor on both CPUs at once, for
# WINDOW s, with no task and with N/2 per CPU: what a dispatcher costs here that does nothing
# but wake every 10 ms and continue its stopped tasks (floorK_pct, K tasks per CPU).
# Output (OUT, default $TMP/overhead.raw): key=value lines, one group per case.
# Bounded: about 80 s, plus 3 WINDOW (at most 60 s each) for the floor (about 2 min more with
# BENCH_PROFILE, 2 SYSCALL_WINDOW + 2 s more per case with BENCH_SYSCALLS).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=sched_lib.sh
source "$here/sched_lib.sh"

OUT=${1:-$TMP/overhead.raw}
WINDOW=${WINDOW:-10}
CASES=${OVH_CASES:-"8 32"}
# how long the spinners run: the window, the warm-up and the API calls, and the syscall count
RUN_S=$((WINDOW + 20))
[ -z "${BENCH_SYSCALLS:-}" ] || RUN_S=$((RUN_S + 2 * ${SYSCALL_WINDOW:-10}))
need_root
write_config 'park = "stop";' ${BENCH_VS_EXTRA:+"$BENCH_VS_EXTRA"}
start_vsched
: >"$OUT"
WD=$(pgrep -P "$VSCHED_PID" | head -1 || true)

ctxsw() { # PID -> voluntary + involuntary context switches of all its threads
	cat /proc/"$1"/task/*/status 2>/dev/null | awk '/ctxt_switches/ { s += $2 } END { print s + 0 }'
}

# slices N CPU: the slices (us) of the N/2 tasks of one CPU
slices() {
	if [ "$1" -eq 8 ]; then
		if [ "$2" -eq 0 ]; then echo 1000 1500 2000 2500; else echo 500 1000 2000 3000; fi
	else
		local i
		for i in $(seq 1 $(($1 / 2))); do echo 375; done
	fi
}

# background: one SCHED_OTHER spinner per CPU
BG=()
start_background() {
	local c
	BG=()
	for c in 0 1; do
		spawn taskset -c "$c" "$VS_BIN/bench_spin" -d $RUN_S
		BG+=("$SPAWNED")
	done
}
stop_all() { local p; for p in "$@"; do kill_wait "$p"; done; }

# sum_share FILE PID...: Σ SHARE_PCT of those pids in a bench_share output
sum_share() { local f=$1; shift; awk -v l=" $* " 'index(l, " " $1 " ") { s += $4 } END { printf "%.2f", s }' "$f"; }

NOANSWER=0
sum() { # FIELD over every task in `task list --json`
	local out _
	for _ in 1 2 3; do
		if out=$(ctl task list --json 2>/dev/null); then
			jq "[.. | objects | select(has(\"$1\")) | .$1] | add // 0" <<<"$out"
			return
		fi
		NOANSWER=$((NOANSWER + 1))
	done
	echo 0
}

case_vsched() { # N
	local n=$1 c s tasks=() res=()
	for c in 0 1; do
		for s in $(slices "$n" "$c"); do
			spawn "$VS_BIN/bench_spin" -d $RUN_S ${OVH_HELPER:+-x}
			ctl task add "$SPAWNED" --period 10ms --slice "${s}us" --cpu "$c" --park stop >/dev/null ||
				fail "task add on CPU $c refused"
			tasks+=("$SPAWNED")
			res+=("$(awk -v s="$s" 'BEGIN { print s / 100 }')")
		done
	done
	start_background
	sleep 1
	local c0 m0 p0 c1 m1 p1
	c0=$(ctxsw "$VSCHED_PID")
	m0=$(sum misses)
	p0=$(sum periods)
	"$VS_BIN/bench_share" -d "$WINDOW" "$VSCHED_PID" ${WD:+"$WD"} "${tasks[@]}" "${BG[@]}" >"$TMP/ovh.share"
	c1=$(ctxsw "$VSCHED_PID")
	m1=$(sum misses)
	p1=$(sum periods)
	{
		awk -v v="$VSCHED_PID" -v w="${WD:-none}" -v n="$n" '$1 == v { print "vsched" n "_vsched_pct=" $4 } $1 == w { print "vsched" n "_watchdog_pct=" $4 }' "$TMP/ovh.share"
		echo "vsched${n}_ctxsw_per_s=$(awk -v a="$c0" -v b="$c1" -v t="$WINDOW" 'BEGIN { printf "%.0f", (b - a) / t }')"
		echo "vsched${n}_tasks_pct=$(sum_share "$TMP/ovh.share" "${tasks[@]}")"
		echo "vsched${n}_left_pct=$(sum_share "$TMP/ovh.share" "${BG[@]}")"
		echo "vsched${n}_misses=$((m1 - m0)) vsched${n}_periods=$((p1 - p0)) api_no_answer=$NOANSWER"
		local i err
		err=$(for i in "${!tasks[@]}"; do
			awk -v p="${tasks[$i]}" -v r="${res[$i]}" '$1 == p { printf "%+.2f\n", $4 - r }' "$TMP/ovh.share"
		done | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo " " hi }')
		echo "vsched${n}_task_err_min_max=${err// /,}"
	} | tee -a "$OUT"
	[ -z "${BENCH_PROFILE:-}" ] || profile "$n"
	[ -z "${BENCH_SYSCALLS:-}" ] || syscall_stat "$n"
	for c in "${tasks[@]}"; do ctl task del "$c" >/dev/null 2>&1 || true; done
	stop_all "${tasks[@]}" "${BG[@]}"
}

# profile N: where vsched's CPU goes with N tasks, after the measured window (perf's own
# cost stays out of it): 5 s of the cpu-clock software event on every vsched thread, call
# graphs, the top symbols (self) and the top system calls to OUT.profN.
profile() {
	local f="$OUT.prof$1"
	command -v perf >/dev/null || { echo "profile: no perf" >"$f"; return 0; }
	perf record -q -e cpu-clock -F 4000 -g -p "$VSCHED_PID" -o "$TMP/perf.data" -- sleep 5 \
		>/dev/null 2>&1 || true
	{
		echo "## vsched, $1 tasks at 10 ms: perf cpu-clock, self time by symbol"
		perf report -q -i "$TMP/perf.data" --no-children --sort sym --stdio 2>/dev/null |
			grep -v '^$' | grep '%' | head -25
		echo "## by call chain into the kernel (caller symbol in vsched)"
		perf report -q -i "$TMP/perf.data" --children --sort sym --stdio 2>/dev/null |
			grep -E '^ +[0-9.]+% +[0-9.]+% ' | head -30
		syscall_counts
	} >"$f"
}

# syscall_counts: system calls per second of each vsched thread over 2 s (tracepoint
# raw_syscalls:sys_enter, recorded machine-wide: `-p` records no tracepoint events on
# these VMs), by thread name and call name.
syscall_counts() {
	local h=/usr/include/x86_64-linux-gnu/asm/unistd_64.h tid filter=""
	echo "## system calls per second, by thread and call (2 s)"
	for tid in /proc/"$VSCHED_PID"/task/*; do
		echo "tid ${tid##*/} $(cat "$tid"/comm 2>/dev/null)"
		filter="$filter${filter:+ || }common_pid == ${tid##*/}"
	done >"$TMP/sc.names"
	# (the filter keeps the machine's other calls out of the buffer, which drops events)
	perf record -q -a -e raw_syscalls:sys_enter --filter "$filter" -o "$TMP/sc.data" -- sleep 2 \
		>/dev/null 2>&1 || { echo "(no syscall tracepoint)"; return 0; }
	perf script -i "$TMP/sc.data" -F tid,trace 2>/dev/null |
		awk -v h="$h" -v names="$TMP/sc.names" '
			BEGIN { while ((getline l < h) > 0) if (split(l, a, " ") == 3 && a[2] ~ /^__NR_/) nr[a[3]] = substr(a[2], 6)
				while ((getline l < names) > 0) { split(l, a, " "); comm[a[2]] = a[3] } }
			!($1 in comm) { next }
			{ for (i = 1; i <= NF; i++) if ($i == "NR") { c[comm[$1] " " (($(i + 1)) in nr ? nr[$(i + 1)] : $(i + 1))]++; break } }
			END { for (k in c) printf "%8.1f  %s\n", c[k] / 2, k }' | sort -rn | head -20
}

dsw() { # FIELD: Σ over vsched's dispatcher threads of that /proc status line
	local d
	for d in /proc/"$VSCHED_PID"/task/*; do
		if grep -q '^vsched-cpu' "$d/comm" 2>/dev/null; then grep "^$1:" "$d/status" || true; fi
	done | awk '{ s += $2 } END { print s + 0 }'
}

# syscall_stat N: vsched's system calls over SYSCALL_WINDOW s, counted per thread by the
# kernel's tracepoints (perf stat: a counter per thread and call, no samples, no drops), to
# OUT.sysN: calls/s by call for the dispatchers together ("disp") and for the other threads
# ("other": API, ZeroMQ), and the totals. Each dispatcher loop turn makes one futex wait, so
# "disp futex" is the dispatchers' wake-ups/s. Their context switches/s (voluntary: sleeps)
# come from /proc over a window of the same length just before, without perf (counting
# tracepoints makes the counted threads switch more).
syscall_stat() {
	local f="$OUT.sys$1" t=${SYSCALL_WINDOW:-10} tid v0 n0 v1 n1
	command -v perf >/dev/null || { echo "syscall_stat: no perf" >"$f"; return 0; }
	for tid in /proc/"$VSCHED_PID"/task/*; do
		echo "${tid##*/} $(cat "$tid"/comm 2>/dev/null)"
	done >"$TMP/sys.names"
	v0=$(dsw voluntary_ctxt_switches)
	n0=$(dsw nonvoluntary_ctxt_switches)
	sleep "$t"
	v1=$(dsw voluntary_ctxt_switches)
	n1=$(dsw nonvoluntary_ctxt_switches)
	perf stat --per-thread -x, -e 'syscalls:sys_enter_*' -p "$VSCHED_PID" -o "$TMP/sys.stat" \
		-- sleep "$t" >/dev/null 2>&1 || { echo "(perf stat failed)" >"$f"; return 0; }
	# perf stat -x, --per-thread: "comm-tid,count,,event,..."
	awk -F, -v t="$t" -v names="$TMP/sys.names" '
		BEGIN { while ((getline l < names) > 0) { split(l, a, " "); comm[a[1]] = a[2] } }
		NF < 4 || $2 !~ /^[0-9]+$/ || $2 == 0 { next }
		{ tid = $1; sub(/.*-/, "", tid); k = comm[tid] ~ /^vsched-cpu/ ? "disp" : "other"
		  ev = $4; sub(/^syscalls:sys_enter_/, "", ev); c[k " " ev] += $2; tot[k] += $2 }
		END { for (x in c) printf "%9.1f  %s\n", c[x] / t, x
		      printf "%9.1f  disp TOTAL\n%9.1f  other TOTAL\n", tot["disp"] / t, tot["other"] / t }' \
		"$TMP/sys.stat" | sort -k2,2 -k1,1nr >"$f"
	{
		echo "disp_voluntary_ctxsw_per_s=$(awk -v a="$v0" -v b="$v1" -v t="$t" 'BEGIN { printf "%.1f", (b - a) / t }')"
		echo "disp_involuntary_ctxsw_per_s=$(awk -v c="$n0" -v d="$n1" -v t="$t" 'BEGIN { printf "%.1f", (d - c) / t }')"
	} >>"$f"
	sed "s/^/sys$1 /" "$f"
}

case_deadline() { # N
	local n=$1 c s tasks=()
	for c in 0 1; do
		for s in $(slices "$n" "$c"); do
			dl_run "$s" 10000 "$VS_BIN/bench_spin" -d $RUN_S
			tasks+=("$SPAWNED")
		done
	done
	start_background
	sleep 1
	"$VS_BIN/bench_share" -d "$WINDOW" "${tasks[@]}" "${BG[@]}" >"$TMP/ovh.share"
	{
		echo "deadline${n}_tasks_pct=$(sum_share "$TMP/ovh.share" "${tasks[@]}")"
		echo "deadline${n}_left_pct=$(sum_share "$TMP/ovh.share" "${BG[@]}")"
	} | tee -a "$OUT"
	stop_all "${tasks[@]}" "${BG[@]}"
}

# case_floor K: the floor of this design here (bench_wake_floor): on each CPU at once, a
# SCHED_FIFO 99 thread that wakes every 10 ms and continues K stopped tasks (a CPU-clock read
# and a pidfd SIGCONT each), beside a SCHED_OTHER spinner. floorK_pct: both threads' CPU, %
# of one CPU (K = 0: the wake-ups alone).
case_floor() {
	local k=$1 c pids=()
	for c in 0 1; do
		"$VS_BIN/bench_wake_floor" -c "$c" -p 10000 -k "$k" -d "$((WINDOW < 60 ? WINDOW : 60))" >"$TMP/floor.$c" &
		pids+=($!)
	done
	wait "${pids[@]}"
	cat "$TMP/floor.0" "$TMP/floor.1" >&2
	echo "floor${k}_pct=$(cat "$TMP/floor.0" "$TMP/floor.1" |
		awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^pct=/) s += substr($i, 5) } END { printf "%.3f", s }')" |
		tee -a "$OUT"
}

idle=$("$VS_BIN/bench_share" -d 5 "$VSCHED_PID" | awk 'NR == 1 { print $4 }')
echo "idle_vsched_pct=$idle" | tee -a "$OUT"
for n in $CASES; do
	case_vsched "$n"
	[ "${OVH_DEADLINE:-1}" = 0 ] || case_deadline "$n"
done
if [ "${OVH_FLOOR:-1}" != 0 ]; then
	case_floor 0
	for n in $CASES; do case_floor $((n / 2)); done
fi
echo "# $(machine_note)" >>"$OUT"
