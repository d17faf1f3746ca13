#!/bin/bash
# The CPU time a parked process itself pays per park/unpark cycle, by `stop_method`: SIGSTOP
# and SIGCONT (every thread, asleep or not, is woken to take part in the group stop) against
# the cgroup freezer (a thread asleep in a freezable sleep is not woken). That CPU is
# charged to the process's reservation, so at short periods it is budget the job loses.
#
#   VS_BIN=build/bin bash bench/park_cost.sh [OUT]      (root; ~10 s; also run_sched.sh part 7)
#
# Processes: `sleep 100` (one thread), bench_periodic with a 1 s period (a main thread in
# clock_nanosleep and, with -x, a helper in pause()). Each is parked and unparked
# PARK_CYCLES times (default 1000; 300 us parked, 700 us running); the per-thread CPU time comes from
# /proc/PID/task/TID/schedstat. Nothing real-time runs; the freezer cgroups
# (<freezer root>/parkcost.$$ and an empty, frozen sentinel parkcost.sent.$$, as vsched
# keeps on cgroup v1) are removed on exit. The table goes to stdout and to OUT.
set -euo pipefail
VS_BIN=${VS_BIN:?set VS_BIN to the build bin directory}
CYCLES=${PARK_CYCLES:-1000}
OUT=${1:-/dev/null}
[ "$(id -u)" = 0 ] || { echo "park_cost: needs root (freezer cgroups)"; exit 77; }

FZ=
if [ -w /sys/fs/cgroup/freezer/cgroup.procs ]; then
	FZ=/sys/fs/cgroup/freezer
	FREEZE=FROZEN THAW=THAWED STATE=freezer.state
elif [ -e /sys/fs/cgroup/cgroup.controllers ]; then
	FZ=/sys/fs/cgroup
	FREEZE=1 THAW=0 STATE=cgroup.freeze
fi
CG='' SENT='' PID=''
cleanup() {
	if [ -n "$CG" ] && [ -d "$CG" ]; then
		echo "$THAW" >"$CG/$STATE" 2>/dev/null || true
		while read -r p; do echo "$p" >"$FZ/cgroup.procs" 2>/dev/null || true; done <"$CG/cgroup.procs"
		rmdir "$CG" 2>/dev/null || true
	fi
	if [ -n "$SENT" ] && [ -d "$SENT" ]; then
		echo "$THAW" >"$SENT/$STATE" 2>/dev/null || true
		rmdir "$SENT" 2>/dev/null || true
	fi
	if [ -n "$PID" ]; then
		kill -CONT "$PID" 2>/dev/null || true
		kill "$PID" 2>/dev/null || true
		wait "$PID" 2>/dev/null || true
	fi
}
trap cleanup EXIT

thread_cpu() { # PID: "tid ns" per thread
	local t
	for t in /proc/"$1"/task/*; do echo "${t##*/} $(cut -d' ' -f1 "$t/schedstat")"; done
}

measure() { # METHOD NAME CMD...: prints the per-thread µs per cycle
	local method=$1 name=$2 before after i
	shift 2
	"$@" >/dev/null &
	PID=$!
	sleep 0.5
	if [ "$method" = freezer ]; then
		CG=$FZ/parkcost.$$
		mkdir "$CG"
		echo "$PID" >"$CG/cgroup.procs"
	fi
	before=$(thread_cpu "$PID")
	for ((i = 0; i < CYCLES; i++)); do
		if [ "$method" = freezer ]; then echo "$FREEZE" >"$CG/$STATE"; else kill -STOP "$PID"; fi
		sleep 0.0003
		if [ "$method" = freezer ]; then echo "$THAW" >"$CG/$STATE"; else kill -CONT "$PID"; fi
		sleep 0.0007
	done
	after=$(thread_cpu "$PID")
	printf '%-8s %-34s' "$method" "$name"
	join <(sort <<<"$before") <(sort <<<"$after") |
		awk -v n="$CYCLES" '{ printf " %.1f", ($3 - $2) / n / 1000 } END { print "" }'
	cleanup
	CG='' PID=''
}

if [ -n "$FZ" ] && [ "$STATE" = freezer.state ]; then
	SENT=$FZ/parkcost.sent.$$
	mkdir "$SENT"
	echo FROZEN >"$SENT/$STATE"
fi
exec > >(tee "$OUT") # (not a pipe: measure must run in this shell for the EXIT trap)
echo "# CPU µs a process pays per park/unpark cycle, per thread (main first by tid), $CYCLES cycles"
for method in signal ${FZ:+freezer}; do
	measure "$method" "sleep (1 thread)" sleep 100
	measure "$method" "bench_periodic (1 thread)" "$VS_BIN/bench_periodic" -p 1000000 -j 100 -d 60
	measure "$method" "bench_periodic -x (2 threads)" "$VS_BIN/bench_periodic" -p 1000000 -j 100 -d 60 -x
done
[ -n "$FZ" ] || echo "# no cgroup freezer here: signal only"
