#!/usr/bin/env bash
# Controller scale through the real daemon (DESIGN.md §8: 1,000 nodes x 200 jobs, control
# cycle <= 10 ms on one core). For each MODE: a fresh vsched-controller (agents on
# tcp://127.0.0.1:*, admin on an ipc socket, state file, all in a temporary directory;
# r_max given so that no job calibrates) and bench/ctl_scale.c playing 1,000 agents and the
# administrator against it (see the top of ctl_scale.c for the model and every definition).
#
#   bench/ctl_scale.sh [BUILD_DIR [MODE...]]
#
# MODE is spread:INTERVAL (the 200 jobs' report rounds evenly spread over INTERVAL) or
# burst:INTERVAL (every job reports at the same instant: the worst case, and the only mode
# that measures the time of a full round). Default: spread:1s burst:1s, then the sweep
# spread:500ms spread:200ms spread:100ms spread:50ms (where the controller saturates).
# Environment: WARMUP (20s), MEASURE (30s), NODES (1000), JOBS (200), RANKS (20), OUT (the
# report, default /tmp/ctl-scale-DATE.md), STATE_DIR (where the controller's state file
# goes, default the temporary directory; e.g. /dev/shm to take fsync out), KEEP (a path
# prefix: keep each run's controller log there), NICE (a nice(1) adjustment for the
# controller and the simulator, e.g. -10 on a machine shared with builds; real-time
# processes of others are not affected by it).
# Not real-time: it does not take /tmp/vsched-rt.lock. Every run is bounded by timeout(1);
# only the processes started here are signalled.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
shift || true
MODES=("$@")
[ ${#MODES[@]} -gt 0 ] || MODES=(spread:1s burst:1s spread:500ms spread:200ms spread:100ms spread:50ms)
WARMUP=${WARMUP:-20s}
MEASURE=${MEASURE:-30s}
NODES=${NODES:-1000}
JOBS=${JOBS:-200}
RANKS=${RANKS:-20}
RMAX=10000
OUT=${OUT:-/tmp/ctl-scale-$(date -u +%Y%m%dT%H%M%SZ).md}
BIN=$BUILD/bin
for b in vsched-controller ctl_scale; do
	[ -x "$BIN/$b" ] || { echo "no $BIN/$b: build it first (scripts/build.sh)" >&2; exit 1; }
done
secs() { # DURATION -> whole seconds (s or ms only)
	case $1 in
	*ms) echo $((${1%ms} / 1000)) ;;
	*s) echo "${1%s}" ;;
	*) echo "bad duration $1" >&2; exit 2 ;;
	esac
}
NICECMD=()
[ -z "${NICE:-}" ] || NICECMD=(nice -n "$NICE")
LIMIT=$(($(secs "$WARMUP") + $(secs "$MEASURE") + 120))

TMP=$(mktemp -d /tmp/ctl-scale.XXXXXX)
CTLD_PID=
SIM_PID=
cleanup() {
	[ -z "$SIM_PID" ] || kill -TERM "$SIM_PID" 2>/dev/null || true
	[ -z "$CTLD_PID" ] || kill -TERM "$CTLD_PID" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$TMP"
}
trap cleanup EXIT

# 1,000 connections on each side: the controller inherits this limit
ulimit -n "$(ulimit -Hn)"

{
	echo "## ctl_scale $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, $(uname -r)"
	echo
	echo "    bench/ctl_scale.sh $BUILD ${MODES[*]}   # WARMUP=$WARMUP MEASURE=$MEASURE STATE_DIR=${STATE_DIR:-} NICE=${NICE:-}"
	echo
	echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); state file on: $(df --output=fstype "${STATE_DIR:-$TMP}" | tail -1)"
} | tee "$OUT"

rt_busy() { # other SCHED_FIFO/RR processes using > 1 % CPU (other engineers' RT benchmarks)
	ps -eo cls=,pcpu=,comm= | awk '($1 == "FF" || $1 == "RR") && $2 > 1 { n++; s = s " " $3 } END { print n + 0 s }'
}

run() { # MODE
	local mode=${1%%:*} iv=${1#*:} flags=() ep admin i rc=0 load0
	[ "$mode" = burst ] && flags=(--burst)
	rm -rf "$TMP/run" && mkdir "$TMP/run"
	STATE=$TMP/run
	if [ -n "${STATE_DIR:-}" ]; then
		STATE=$(mktemp -d "$STATE_DIR/ctl-scale-state.XXXXXX")
	fi
	cat >"$TMP/run/controller.conf" <<CONF
heartbeat = "1s";
node_timeout = "3s";
ack_timeout = "2s";
r_max = $RMAX;
CONF
	admin="ipc://$TMP/run/admin.sock"
	timeout -s TERM "$LIMIT" "${NICECMD[@]}" "$BIN/vsched-controller" -f -c "$TMP/run/controller.conf" \
		-A 'tcp://127.0.0.1:*' -a "$admin" -S "$STATE/ctl.state" 2>"$TMP/run/ctld.log" &
	CTLD_PID=$!
	ep=
	CPID= # the controller itself (CTLD_PID is timeout's): its /proc is what is measured
	for i in $(seq 1 50); do
		ep=$(sed -n 's/.*agents: listening on \(tcp:[^ ]*\).*/\1/p' "$TMP/run/ctld.log" | head -1)
		CPID=$(ps -o pid= --ppid "$CTLD_PID" | tr -d ' ' | head -1)
		[ -n "$ep" ] && [ -n "$CPID" ] && grep -q 'admin: listening' "$TMP/run/ctld.log" && break
		kill -0 "$CTLD_PID" 2>/dev/null || { cat "$TMP/run/ctld.log" >&2; return 1; }
		sleep 0.1
	done
	[ -n "$ep" ] && [ -n "$CPID" ] || { echo "controller did not start" >&2; return 1; }
	[ "$(basename "$(readlink /proc/"$CPID"/exe)")" = vsched-controller ] || { echo "pid $CPID is not the controller" >&2; return 1; }
	load0="$(cut -d' ' -f1 /proc/loadavg), RT busy: $(rt_busy)"
	timeout -s TERM "$LIMIT" "${NICECMD[@]}" "$BIN/ctl_scale" -A "$ep" -a "$admin" -p "$CPID" \
		--nodes "$NODES" --jobs "$JOBS" --ranks "$RANKS" --interval "$iv" \
		--warmup "$WARMUP" --measure "$MEASURE" --rmax "$RMAX" --label "$mode $iv" \
		"${flags[@]}" >"$TMP/run/sim.out" 2>"$TMP/run/sim.err" &
	SIM_PID=$!
	wait "$SIM_PID" || rc=$?
	SIM_PID=
	kill -TERM "$CTLD_PID" 2>/dev/null || true
	wait "$CTLD_PID" || { echo "controller exit status $?" >&2; rc=1; }
	CTLD_PID=
	[ "$STATE" = "$TMP/run" ] || rm -rf "$STATE"
	{
		cat "$TMP/run/sim.out"
		echo
		echo "simulator: $(tr '\n' ' ' <"$TMP/run/sim.err")"
		echo "controller log: $(wc -l <"$TMP/run/ctld.log") lines, $(grep -c 'down:' "$TMP/run/ctld.log" || true) node-down, $(grep -c 'refused' "$TMP/run/ctld.log" || true) lines with 'refused'; load average $load0 -> $(cut -d' ' -f1 /proc/loadavg); other real-time processes busy at the end: $(rt_busy); ctl_scale exit $rc"
	} | tee -a "$OUT"
	grep -E 'down:|refused|warn' "$TMP/run/ctld.log" | head -5 >&2 || true
	[ -z "${KEEP:-}" ] || cp "$TMP/run/ctld.log" "$KEEP.$mode-$iv.ctld.log"
}

for m in "${MODES[@]}"; do
	run "$m" || echo "run $m failed" | tee -a "$OUT"
done
echo "report: $OUT"
