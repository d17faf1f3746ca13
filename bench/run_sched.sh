#!/bin/bash
# Scheduler benchmarks, all in one run, printed side by side with their references
# (DESIGN.md §8; results and commands in bench/RESULTS.md):
#   1. delivered share of a spinner, vsched (both anchors) vs SCHED_DEADLINE   sched_share.sh
#   2. misses of a periodic job that sleeps between jobs, phases swept, vsched
#      (both anchors, both park policies) vs SCHED_DEADLINE                     sched_sleep.sh
#   3. what scheduling costs: vsched's own CPU with 8 and 32 tasks at 10 ms, and
#      the capacity left to other work beside SCHED_DEADLINE's                  sched_overhead.sh
#   4. constraint change latency                                               sched_chglat.sh
#   5. the node's self-test: the finest period served with < 1 % misses        vschedctl selftest
#   6. rt-app cross-check (an independent periodic job, rt-app's own figures)  sched_rtapp.sh
#   7. the CPU a parked process pays per park/unpark: signals vs the freezer    park_cost.sh
#
#   bench/run_sched.sh [BIN_DIR [OUT_DIR]]
#
# BIN_DIR: the build's bin/ with vsched, vschedctl, bench_* (default $VS_BIN, else build/bin).
# OUT_DIR keeps the raw figures (default a new /tmp/vsched-bench.XXXXXX). Each part runs under
# `flock /tmp/vsched-rt.lock` (the machine's RT test lock, held for one part at a time; waits
# up to 10 min for it) and under a timeout. Do not wrap this script in that flock yourself
# (deadlock). The whole run takes about 12 minutes. Needs root (SCHED_FIFO,
# SCHED_DEADLINE), rt-app, jq. PARTS selects parts (default "share sleep overhead chglat
# selftest rtapp parkcost"; PARTS=none: only the report, from the raw files already in OUT_DIR).
set -euo pipefail
VS_SRC=$(cd "$(dirname "$0")/.." && pwd)
VS_BIN=$(cd "${1:-${VS_BIN:-$VS_SRC/build/bin}}" && pwd)
OUT=${2:-$(mktemp -d /tmp/vsched-bench.XXXXXX)}
PARTS=${PARTS:-share sleep overhead chglat selftest rtapp parkcost}
mkdir -p "$OUT"
export VS_SRC VS_BIN
LOCK=/tmp/vsched-rt.lock

for b in vsched vschedctl bench_spin bench_share bench_chglat bench_periodic; do
	[ -x "$VS_BIN/$b" ] || { echo "run_sched: $VS_BIN/$b missing (build first)" >&2; exit 1; }
done

part() { # NAME TIMEOUT SCRIPT RAWFILE [ENV=VALUE...]
	local name=$1 tmo=$2 script=$3 raw=$4
	shift 4
	case " $PARTS " in *" $name "*) ;; *) return 0 ;; esac
	echo "== $name ($(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1 /proc/loadavg))"
	if ! flock -w 600 "$LOCK" env "$@" timeout "$tmo" bash "$VS_SRC/bench/$script" "$OUT/$raw" >"$OUT/$name.log" 2>&1; then
		echo "   $script failed or skipped, see $OUT/$name.log:"
		tail -5 "$OUT/$name.log" | sed 's/^/   /'
	fi
}

{
	echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $(git -C "$VS_SRC" describe --always --dirty 2>/dev/null || echo '?'), vsched sources $(cat "$VS_SRC"/vsched/*.c "$VS_SRC"/vsched/*.h | sha1sum | cut -c1-10)"
	echo "# kernel $(uname -r), $(nproc) CPUs, rt $(cat /proc/sys/kernel/sched_rt_runtime_us)/$(cat /proc/sys/kernel/sched_rt_period_us), loadavg $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT/machine"

part share 300 sched_share.sh share.raw BENCH_SHARES="${BENCH_SHARES:-30}"
# (the sleep part's bound grows with SLEEP_REPEAT and SLEEP_SECS, see sched_sleep.sh)
part sleep $((400 * ${SLEEP_REPEAT:-1} * (${SLEEP_SECS:-2} + 1) / 3)) sched_sleep.sh sleep.raw
part overhead 300 sched_overhead.sh overhead.raw
part chglat 150 sched_chglat.sh chglat.raw
part selftest 60 sched_selftest.sh selftest.raw
part rtapp 240 sched_rtapp.sh rtapp.raw BENCH_SHARES="${BENCH_SHARES:-30}"
part parkcost 120 park_cost.sh parkcost.raw
echo "# loadavg after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/machine"

# ---- side-by-side tables (from whatever raw files OUT has: a part not run, or run before
# with PARTS=none, leaves its rows empty instead of ending the report)
set +e +o pipefail
med() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
kv() { sed -n "s/.*\\b$1=\\([^ ]*\\).*/\\1/p" "$2" 2>/dev/null | tail -1; } # KEY FILE

echo
echo "### 1. Share of a spinner, vsched (park stop) vs SCHED_DEADLINE, same runtime and period"
echo "median of 3 windows (schedstat); err = share - reserved, points; goal |err| <= 0.5 (1 ms too)"
printf '| %-6s | %-5s | %-9s | %-7s | %-11s | %-7s | %-12s | %-7s |\n' period share "DL share" "DL err" "vs epoch" "err" "vs wakeup" "err"
printf '|%s|\n' "--------|-------|-----------|---------|-------------|---------|--------------|---------"
for p in 100000 10000 1000; do
	for pct in ${BENCH_SHARES:-30}; do
		dl=$(awk -v p=$p -v s=$pct '$2 == "deadline" && $3 == p && $4 == s && $6 != "-" { print $6 }' "$OUT/share.raw" 2>/dev/null | med)
		ve=$(awk -v p=$p -v s=$pct '$2 == "vsched" && $3 == p && $4 == s && $6 != "-" { print $6 }' "$OUT/share.raw" 2>/dev/null | med)
		vw=$(awk -v p=$p -v s=$pct '$2 == "vsched-wakeup" && $3 == p && $4 == s && $6 != "-" { print $6 }' "$OUT/share.raw" 2>/dev/null | med)
		awk -v p=$p -v s=$pct -v dl="$dl" -v ve="$ve" -v vw="$vw" 'function e(x) { return x == "-" ? "-" : sprintf("%+.2f", x - s) } BEGIN {
			printf "| %-6s | %-5s | %-9s | %-7s | %-11s | %-7s | %-12s | %-7s |\n", p / 1000 "ms", s "%", dl, e(dl), ve, e(ve), vw, e(vw) }'
	done
done

echo
echo "### 2. Misses of a periodic job that sleeps between jobs (job 2/3 of a 30 % slice, absolute timer)"
echo "miss % over the release phases (percent of the period after vsched's epoch): worst / median;"
echo "goal: vsched <= kernel + 1 point at every phase"
sleep_table() { # COLUMN: of sleep_aggregate's line (7 miss_pct, 10 held_pct)
	awk -f "$VS_SRC/bench/sleep_aggregate.awk" "$OUT/sleep.raw" 2>/dev/null |
		awk -v col="$1" -f "$VS_SRC/bench/sleep_phases.awk" | sort -k1,1nr -k2,2 |
		awk 'BEGIN { printf "| %-6s | %-20s | %-7s | %-7s | %s |\n", "period", "scheduler", "worst", "median", "per phase"
	print "|--------|----------------------|---------|---------|-----------" }
	{ printf "| %-6s | %-20s | %-7s | %-7s |", $1 / 1000 "ms", $2, $3, $4; for (i = 5; i <= NF; i++) printf " %s", $i; print " |" }'
}
sleep_table 7
echo
echo "Held misses: % of jobs that woke within a tenth of the period of their release and still"
echo "missed (not late because the timer or the job before was late; the host's own stalls show"
echo "in SCHED_DEADLINE's row):"
sleep_table 10
echo
echo "### 3. What scheduling costs (% of one CPU; 10 s windows; goals: vsched <= 1 % with 8 tasks, <= 1 %/CPU with 16 per CPU)"
o=$OUT/overhead.raw
printf '| %-28s | %-10s | %-10s |\n' figure "8 tasks" "32 tasks"
printf '|%s|\n' "------------------------------|------------|------------"
printf '| %-28s | %-10s | %-10s |\n' "vsched's own CPU" "$(kv vsched8_vsched_pct "$o")" "$(kv vsched32_vsched_pct "$o")"
printf '| %-28s | %-10s | %-10s |\n' "floor: wakes + continue (ref)" "$(kv floor4_pct "$o")" "$(kv floor16_pct "$o")"
printf '| %-28s | %-10s | %-10s |\n' "floor: 10 ms wakes only (ref)" "$(kv floor0_pct "$o")" "$(kv floor0_pct "$o")"
printf '| %-28s | %-10s | %-10s |\n' "vsched context switches /s" "$(kv vsched8_ctxsw_per_s "$o")" "$(kv vsched32_ctxsw_per_s "$o")"
printf '| %-28s | %-10s | %-10s |\n' "left to other work, vsched" "$(kv vsched8_left_pct "$o")" "$(kv vsched32_left_pct "$o")"
printf '| %-28s | %-10s | %-10s |\n' "left to other work, DEADLINE" "$(kv deadline8_left_pct "$o")" "$(kv deadline32_left_pct "$o")"
printf '| %-28s | %-10s | %-10s |\n' "tasks' share err min,max" "$(kv vsched8_task_err_min_max "$o")" "$(kv vsched32_task_err_min_max "$o")"
printf '| %-28s | %-10s | %-10s |\n' "vsched misses / periods" "$(kv vsched8_misses "$o")/$(kv vsched8_periods "$o")" "$(kv vsched32_misses "$o")/$(kv vsched32_periods "$o")"
echo "idle daemon: $(kv idle_vsched_pct "$o") %; watchdog: $(kv vsched8_watchdog_pct "$o") %"
echo "floor (bench_wake_floor, both CPUs at once): a SCHED_FIFO 99 thread per CPU that only wakes every"
echo "10 ms and continues its N/2 stopped tasks (CPU-clock read + pidfd SIGCONT each), beside a spinner"

echo
echo "### 4. Constraint change latency (µs; bench on CPU 0, task on CPU 1)"
printf '| %-7s | %-38s | %-4s | %-7s | %-7s | %-7s | %-7s |\n' variant figure n median p90 p99 max
printf '|%s|\n' "---------|----------------------------------------|------|---------|---------|---------|---------"
awk '{ v = $1; f = $2; if (f !~ /^((floor|vsched)_(resume|stop|effect|reply|revoke|list_rtt)|zmq_echo_rtt.*)$/) next
	d["floor_resume"] = "floor: SIGCONT -> running (ref.)"; d["floor_stop"] = "floor: SIGSTOP -> stopped (ref.)"
	d["vsched_effect"] = "vsched: request -> in effect"; d["vsched_reply"] = "vsched: request -> reply"
	d["vsched_revoke"] = "vsched: revoke -> parked"; d["vsched_list_rtt"] = "vsched: LIST round trip (API only)"
	d["zmq_echo_rtt"] = "bare ZeroMQ echo RTT, any CPU (ref.)"; d["zmq_echo_rtt_samecpu"] = "bare ZeroMQ echo RTT, same CPU (ref.)"
	d["zmq_echo_rtt_othercpu"] = "bare ZeroMQ echo RTT, other CPU (ref.)"
	for (i = 3; i <= NF; i++) { split($i, kv, "="); x[kv[1]] = kv[2] }
	printf "| %-7s | %-38s | %-4s | %-7s | %-7s | %-7s | %-7s |\n", v, d[f], x["n"], x["median_us"], x["p90_us"], x["p99_us"], x["max_us"] }' "$OUT/chglat.raw" 2>/dev/null || true
echo "reference: VSched ~1000 µs; goal <= 100 µs median"

echo
echo "### 5. Self-test: the finest period this node serves with < 1 % misses"
cat "$OUT/selftest.raw" 2>/dev/null || true

echo
echo "### 6. rt-app cross-check (job 0.8 × slice, relative timer; after the first 200 ms; µs)"
grep '^#' "$OUT/rtapp.raw" 2>/dev/null || true
printf '| %-6s | %-5s | %-8s | %-7s | %-6s | %-9s | %-9s | %-9s | %-8s | %-9s |\n' period share sched periods miss% "slack med" "slack p1" "wulat med" "run med" "self miss%"
printf '|%s|\n' "--------|-------|----------|---------|--------|-----------|-----------|-----------|----------|-----------"
awk '$1 == "rtapp" { m = ($5 > 0) ? sprintf("%.2f", 100 * $6 / $5) : "-"; sm = ($13 != "-" && $13 > 0) ? sprintf("%.2f", 100 * $12 / $13) : "-"
	printf "| %-6s | %-5s | %-8s | %-7s | %-6s | %-9s | %-9s | %-9s | %-8s | %-9s |\n", $3 / 1000 "ms", $4 "%", $2, $5, m, $7, $8, $9, $11, sm }' "$OUT/rtapp.raw" 2>/dev/null || true
echo
echo "### 7. CPU a parked process pays per park/unpark cycle (µs per thread; charged to its budget)"
cat "$OUT/parkcost.raw" 2>/dev/null || true
echo
echo "raw figures and logs: $OUT"
