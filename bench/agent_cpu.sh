#!/usr/bin/env bash
# vsched-agent CPU use while relaying application reports (DESIGN.md §4, §8).
#
#   bench/agent_cpu.sh [BUILD_DIR [NPROC [REPORTS_PER_S [SECONDS]]]]
#                      (defaults: build, 10 processes, 100 reports/s each, 10 s)
#
# The real agent, connected to a stand-in controller (ctlpeer router on loopback TCP), with
# NPROC real libapprate applications (bench/agent_load.c) each sending REPORTS_PER_S
# reports/s to the agent's PULL endpoint (ipc in a temporary directory); every report is
# relayed as a 32-byte RATE. Measured from /proc/AGENT_PID/task/*/schedstat (all threads:
# the agent's loop and ZeroMQ's I/O thread) over SECONDS:
#   1. baseline: registered with the controller, no application;
#   2. under load: the same window while the applications report.
# Also: reports relayed per second (RATE messages the controller received in the window)
# and TCP bytes agent -> controller per report (tcpi_bytes_acked of the agent's connection,
# from `ss -ti`; everything the agent sent in the window, heartbeats, BW and TASK_STATS
# included, divided by the RATEs), and the CPU of each agent thread under load.
# vsched is not started: the applications wait for the controller's constraint (no
# provisional reservation), so this is the cost of the relay, sampling and link alone.
# Takes /tmp/vsched-rt.lock (about 30 s) unless already held (AGENT_BENCH_LOCKED=1).
set -euo pipefail
if [ -z "${AGENT_BENCH_LOCKED:-}" ]; then
	AGENT_BENCH_LOCKED=1 exec flock -w 600 /tmp/vsched-rt.lock "$0" "$@"
fi

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
NPROC=${2:-10}
RATE=${3:-100}
SECS=${4:-10}
BIN=$BUILD/bin
for b in vsched-agent ctlpeer agent_load; do
	[ -x "$BIN/$b" ] || { echo "no $BIN/$b: build it first" >&2; exit 1; }
done
# the integration tests' harness: TMP, PIDS and their clean-up, wait_for, cpu_ns; the
# agent tests' stand-in controller and agent
VS_BIN=$BIN VS_SRC=$ROOT
source "$ROOT/tests/integration/lib.sh"
source "$ROOT/tests/helpers/agent_lib.sh"
# acked PORT: tcpi_bytes_acked of the established connection to 127.0.0.1:PORT.
acked() {
	local v
	v=$(ss -tinH state established "( dport = :$1 )" | grep -o 'bytes_acked:[0-9]*' | head -1 | cut -d: -f2)
	echo "${v:-0}"
}
# threads PID: "comm=ns ..." per thread (CPU so far).
threads() {
	local f t
	for f in /proc/"$1"/task/*; do
		read -r t _ <"$f/schedstat" 2>/dev/null || continue
		printf '%s=%s ' "$(tr ' ' _ <"$f/comm")" "$t"
	done
}
rates() { grep -c '^RATE ' "$TMP/peer.out" || true; }

start_peer
PORT=${PEER_EP##*:}
write_agent_config node_name='"benchnode"' vsched_endpoint="\"ipc://$TMP/no-vsched.sock\"" \
	max_procs=$((NPROC + 16)) heartbeat= controller_timeout= sample_interval= sample_windows= \
	stats_interval= mem_capacity_mbs= net_capacity_mbs= provisional_period= provisional_slice=
start_agent
AGENT=$AGENT_PID
wait_for "$TMP/agent.log" 'controller link: registered'
cfg=$("$BIN/vsched-agent" -n -c "$TMP/agent.conf" | grep -E '^(sample_interval|heartbeat|stats_interval) ' | tr -d '\n')

echo "== $(date -u +%FT%TZ) $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "== agent $AGENT, defaults: $cfg"
sleep 1
c0=$(cpu_ns "$AGENT") t0=$(date +%s%N) b0=$(acked "$PORT")
sleep "$SECS"
c1=$(cpu_ns "$AGENT") t1=$(date +%s%N) b1=$(acked "$PORT")
base=$(awk -v c=$((c1 - c0)) -v w=$((t1 - t0)) 'BEGIN { printf "%.2f", 100 * c / w }')
base_ms=$(((c1 - c0) / 1000000))
base_bps=$(awk -v b=$((b1 - b0)) -v w=$((t1 - t0)) 'BEGIN { printf "%.0f", b * 1e9 / w }')

"$BIN/agent_load" "ipc://$TMP/agent.sock" "$NPROC" "$RATE" "$((SECS + 4))" >"$TMP/load.out" 2>&1 &
LOAD=$!
PIDS+=("$LOAD")
sleep 2 # registration, first reports
c0=$(cpu_ns "$AGENT") t0=$(date +%s%N) b0=$(acked "$PORT") r0=$(rates) th0=$(threads "$AGENT")
sleep "$SECS"
c1=$(cpu_ns "$AGENT") t1=$(date +%s%N) b1=$(acked "$PORT") r1=$(rates) th1=$(threads "$AGENT")
wait "$LOAD" || { echo "agent_load failed: $(cat "$TMP/load.out")" >&2; exit 1; }
load=$(awk -v c=$((c1 - c0)) -v w=$((t1 - t0)) 'BEGIN { printf "%.2f", 100 * c / w }')
load_ms=$(((c1 - c0) / 1000000))
nr=$((r1 - r0))
rps=$(awk -v n=$nr -v w=$((t1 - t0)) 'BEGIN { printf "%.0f", n * 1e9 / w }')
bpr=$(awk -v b=$((b1 - b0)) -v n=$nr 'BEGIN { printf "%.1f", n ? b / n : 0 }')
us=$(awk -v c=$((c1 - c0)) -v cb="$base_ms" -v w=$((t1 - t0)) -v n=$nr \
	'BEGIN { printf "%.1f", n ? (c / 1000 - cb * 1000 * w / 1e9 / '"$SECS"') / n : 0 }')
sent=$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^reports_sent=/) { split($i, a, "="); s += a[2] } } END { print s + 0 }' "$TMP/load.out")
dropped=$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^reports_dropped=/) { split($i, a, "="); s += a[2] } } END { print s + 0 }' "$TMP/load.out")
kill -USR1 "$AGENT"
sleep 0.2

printf '%-34s %12s %12s\n' "" "no load" "load"
printf '%-34s %12s %12s\n' "applications x reports/s" "0" "$NPROC x $RATE"
printf '%-34s %12s %12s\n' "reports relayed/s (RATE received)" "0" "$rps"
printf '%-34s %12s %12s\n' "agent CPU ms in ${SECS} s" "$base_ms" "$load_ms"
printf '%-34s %11s%% %11s%%\n' "agent CPU (% of one CPU)" "$base" "$load"
printf '%-34s %12s %12s\n' "TCP bytes/s agent -> controller" "$base_bps" "$(awk -v b=$((b1 - b0)) -v w=$((t1 - t0)) 'BEGIN { printf "%.0f", b * 1e9 / w }')"
echo "per report: $us us of agent CPU above the baseline; $bpr TCP bytes forwarded (RATE payload 32 B)"
echo "agent threads under load, ms: $(awk -v a="$th0" -v b="$th1" 'BEGIN {
	n = split(a, x, " "); for (i = 1; i <= n; i++) { split(x[i], kv, "="); s[kv[1]] = kv[2] }
	n = split(b, y, " "); for (i = 1; i <= n; i++) { split(y[i], kv, "="); printf "%s %d  ", kv[1], (kv[2] - s[kv[1]]) / 1e6 } }')"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "applications: $sent reports sent, $dropped dropped (libapprate counters, whole run)"
grep -o 'stats: .*' "$TMP/agent.log" | tail -1 | cut -c1-160
