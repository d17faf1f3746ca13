# shellcheck shell=bash
# Shared helpers for the scheduler benchmarks (sourced, not run). Builds on the integration
# harness tests/integration/lib.sh: temp dir $TMP, start_vsched, ctl, spawn, cleanup of the
# pids it started. Needs VS_BIN (build's bin/, with vsched, vschedctl, bench_*) and VS_SRC.
# Every script is bounded in time; the driver bench/run_sched.sh holds /tmp/vsched-rt.lock
# around each of them.

# shellcheck source=../tests/integration/lib.sh
source "$VS_SRC/tests/integration/lib.sh"

# The periods (µs) and shares (%) of DESIGN.md §8 / the issue.
BENCH_PERIODS_US=${BENCH_PERIODS_US:-"100000 10000 1000"}
BENCH_SHARES=${BENCH_SHARES:-"30 50"}
# Which schedulers to measure ("deadline vsched"; "deadline" alone works without the daemon).
BENCH_SIDES=${BENCH_SIDES:-"deadline vsched"}
# The CPU the measured task is put on under vsched; the bench itself stays off it.
BENCH_TASK_CPU=${BENCH_TASK_CPU:-1}

# slice_us PERIOD_US PCT
slice_us() { echo $(($1 * $2 / 100)); }

# dl_run RUNTIME_US PERIOD_US CMD...: CMD under SCHED_DEADLINE (runtime, deadline = period),
# in the background; pid in SPAWNED (chrt execs CMD, so it is CMD's pid). Not under taskset:
# a deadline task must be allowed on every CPU of its root domain.
dl_run() {
	local r=$1 p=$2
	shift 2
	chrt -d --sched-runtime $((r * 1000)) --sched-deadline $((p * 1000)) \
		--sched-period $((p * 1000)) 0 "$@" &
	SPAWNED=$!
	PIDS+=("$SPAWNED")
}

# task_stat PID FIELD...: the named fields of PID's entry in `vschedctl task list --json`,
# space separated ("-" when the task is not listed). Accepts an array or any wrapping object.
task_stat() {
	local pid=$1
	shift
	local f q=""
	for f in "$@"; do q="$q\(.$f // \"-\") "; done
	ctl task list --json 2>/dev/null |
		jq -r --argjson p "$pid" "[.. | objects | select(.pid? == \$p)] | first | if . == null then \"-\" else \"$q\" end" 2>/dev/null ||
		echo "-"
}

# median (stdin: one number a line) -> the median; "-" when empty.
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# pctl P (stdin: numbers) -> the P-th percentile (nearest rank), "-" when empty.
pctl() { sort -g | awk -v p="$1" '{ a[NR] = $1 } END { if (NR == 0) { print "-"; exit } i = int((NR - 1) * p / 100 + 0.5) + 1; print a[i] }'; }

# kill_wait PID: ends a process this script started (CONT first: it may be parked).
kill_wait() {
	kill -CONT "$1" 2>/dev/null || true
	kill -TERM "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

# machine_note: one line on the machine's state (for the results: these VMs are noisy).
machine_note() {
	echo "kernel $(uname -r), $(nproc) CPUs, loadavg $(cut -d' ' -f1-3 /proc/loadavg), rt $(cat /proc/sys/kernel/sched_rt_runtime_us)/$(cat /proc/sys/kernel/sched_rt_period_us)"
}
