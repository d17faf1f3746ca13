#!/bin/bash
# Scheduler benchmarks, all in one run, printed side by side with their references
# (DESIGN.md §8; results and commands in bench/RESULTS.md):
#   1. delivered share, vsched vs SCHED_DEADLINE      bench/sched_share.sh
#   2. deadline misses and rt-app cross-check          bench/sched_rtapp.sh
#   3. constraint change latency                       bench/sched_chglat.sh
#   4. vsched's own CPU use, 8 tasks at 10 ms          bench/sched_overhead.sh
#
#   bench/run_sched.sh [BIN_DIR [OUT_DIR]]
#
# BIN_DIR: the build's bin/ with vsched, vschedctl, bench_spin, bench_share, bench_chglat
# (default $VS_BIN, else build/bin). OUT_DIR keeps the raw figures (default a new
# /tmp/vsched-bench.XXXXXX). Each part runs under `flock /tmp/vsched-rt.lock` (the
# machine's RT test lock, held for one part at a time, at most ~2 min; waits up to 10 min
# for it) and under a timeout. Do not wrap this script in that flock yourself (deadlock);
# the whole suite takes about 5 minutes. Needs root (SCHED_FIFO, SCHED_DEADLINE), rt-app, jq.
set -euo pipefail
VS_SRC=$(cd "$(dirname "$0")/.." && pwd)
VS_BIN=$(cd "${1:-${VS_BIN:-$VS_SRC/build/bin}}" && pwd)
OUT=${2:-$(mktemp -d /tmp/vsched-bench.XXXXXX)}
mkdir -p "$OUT"
export VS_SRC VS_BIN
LOCK=/tmp/vsched-rt.lock

for b in vsched vschedctl bench_spin bench_share bench_chglat; do
	[ -x "$VS_BIN/$b" ] || { echo "run_sched: $VS_BIN/$b missing (build first)" >&2; exit 1; }
done

part() { # NAME TIMEOUT SCRIPT RAWFILE
	echo "== $1 ($(date -u +%H:%M:%S) UTC)"
	if ! flock -w 600 "$LOCK" timeout "$2" bash "$VS_SRC/bench/$3" "$OUT/$4" >"$OUT/$1.log" 2>&1; then
		echo "   $3 failed or skipped, see $OUT/$1.log:"
		tail -5 "$OUT/$1.log" | sed 's/^/   /'
	fi
}

{
	echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) commit $(git -C "$VS_SRC" describe --always --dirty 2>/dev/null || echo '?'), vsched sources $(cat "$VS_SRC"/vsched/*.c "$VS_SRC"/vsched/*.h | sha1sum | cut -c1-10)"
	echo "# kernel $(uname -r), $(nproc) CPUs, rt $(cat /proc/sys/kernel/sched_rt_runtime_us)/$(cat /proc/sys/kernel/sched_rt_period_us), loadavg $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT/machine"

part share 240 sched_share.sh share.raw
part rtapp 240 sched_rtapp.sh rtapp.raw
part chglat 150 sched_chglat.sh chglat.raw
part overhead 120 sched_overhead.sh overhead.raw
echo "# loadavg after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/machine"

# ---- side-by-side tables
med() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

echo
echo "### 1. vsched vs SCHED_DEADLINE (same runtime and period)"
echo "share = CPU delivered to a spinner (schedstat, median of 3 windows), err = share - reserved (points);"
echo "miss% = rt-app periods with negative slack (job of 0.8 x slice); self% = vsched's own miss counter"
printf '| %-6s | %-5s | %-9s | %-9s | %-9s | %-9s | %-9s | %-9s | %-7s |\n' period share "DL share" "DL err" "vs share" "vs err" "DL miss%" "vs miss%" "vs self%"
printf '|%s|\n' "--------|-------|-----------|-----------|-----------|-----------|-----------|-----------|---------"
for p in 100000 10000 1000; do
	for pct in 30 50; do
		dl=$(awk -v p=$p -v s=$pct '$2 == "deadline" && $3 == p && $4 == s && $6 != "-" { print $6 }' "$OUT/share.raw" 2>/dev/null | med)
		vs=$(awk -v p=$p -v s=$pct '$2 == "vsched" && $3 == p && $4 == s && $6 != "-" { print $6 }' "$OUT/share.raw" 2>/dev/null | med)
		dm=$(awk -v p=$p -v s=$pct '$1 == "rtapp" && $2 == "deadline" && $3 == p && $4 == s && $5 > 0 { printf "%.2f", 100 * $6 / $5 }' "$OUT/rtapp.raw" 2>/dev/null)
		vm=$(awk -v p=$p -v s=$pct '$1 == "rtapp" && $2 == "vsched" && $3 == p && $4 == s && $5 > 0 { printf "%.2f", 100 * $6 / $5 }' "$OUT/rtapp.raw" 2>/dev/null)
		sm=$(awk -v p=$p -v s=$pct '$1 == "rtapp" && $2 == "vsched" && $3 == p && $4 == s && $13 != "-" && $13 > 0 { printf "%.2f", 100 * $12 / $13 }' "$OUT/rtapp.raw" 2>/dev/null)
		awk -v p=$p -v s=$pct -v dl="$dl" -v vs="$vs" -v dm="${dm:--}" -v vm="${vm:--}" -v sm="${sm:--}" 'BEGIN {
			de = dl == "-" ? "-" : sprintf("%+.2f", dl - s); ve = vs == "-" ? "-" : sprintf("%+.2f", vs - s)
			printf "| %-6s | %-5s | %-9s | %-9s | %-9s | %-9s | %-9s | %-9s | %-7s |\n", p / 1000 "ms", s "%", dl, de, vs, ve, dm, vm, sm }'
	done
done

echo
echo "### 2. rt-app cross-check (after the first 200 ms; µs)"
grep '^#' "$OUT/rtapp.raw" 2>/dev/null || true
printf '| %-6s | %-5s | %-8s | %-7s | %-6s | %-9s | %-9s | %-9s | %-9s | %-8s |\n' period share sched periods miss% "slack med" "slack p1" "wulat med" "wulat p99" "run med"
printf '|%s|\n' "--------|-------|----------|---------|--------|-----------|-----------|-----------|-----------|---------"
awk '$1 == "rtapp" { m = ($5 > 0) ? sprintf("%.2f", 100 * $6 / $5) : "-"
	printf "| %-6s | %-5s | %-8s | %-7s | %-6s | %-9s | %-9s | %-9s | %-9s | %-8s |\n", $3 / 1000 "ms", $4 "%", $2, $5, m, $7, $8, $9, $10, $11 }' "$OUT/rtapp.raw" 2>/dev/null || true

echo
echo "### 3. Constraint change latency (µs; bench on CPU 0, task on CPU 1)"
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
echo "### 4. vsched's own CPU use (% of one CPU; goal <= 1 %, VSched ~2 %)"
cat "$OUT/overhead.raw" 2>/dev/null || true
echo
echo "raw figures and logs: $OUT"
