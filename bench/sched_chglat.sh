#!/bin/bash
# Constraint change latency, request -> in effect (DESIGN.md §8: <= 100 µs median; VSched
# ~1 ms), with the kernel floor of a signal-parking scheduler measured in the same run.
#
#   VS_BIN=build/bin VS_SRC=. bench/sched_chglat.sh [OUT]
#
# Runs bench_chglat (method in bench/bench_chglat.c) against a fresh vsched twice:
#   idle:   nothing else under vsched;
#   loaded: the bench's own CPU (0) 80 % reserved by a spinner raised to SCHED_FIFO 98
#           (10 ms / 8 ms), so vsched's API path has to preempt a task it manages;
#   busy:   both CPUs kept busy by SCHED_IDLE spinners outside vsched, so no vCPU is ever
#           halted: on this VM waking an idle (halted) vCPU costs ~50 µs per hop.
# The task whose reservation changes is on CPU $BENCH_TASK_CPU (1), the bench on CPU 0.
# N samples per figure (default 300). Output (OUT, default $TMP/chglat.raw): bench_chglat's
# lines prefixed with the variant:  VARIANT NAME n=.. median_us=.. p90_us=.. p99_us=.. ...
# Bounded: about 30 s.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=sched_lib.sh
source "$here/sched_lib.sh"

OUT=${1:-$TMP/chglat.raw}
N=${N:-300}
BENCH_CPU=0
need_root
[ -x "$VS_BIN/bench_chglat" ] || skip "bench_chglat not built"
write_config 'park = "stop";'
start_vsched
: >"$OUT"

run_variant() { # NAME
	"$VS_BIN/bench_chglat" -s "$ENDPOINT" -n "$N" -t "$BENCH_TASK_CPU" -b "$BENCH_CPU" \
		-r "$TMP/chglat-$1.samples" -T 60 | sed "s/^/$1 /" | tee -a "$OUT"
}

run_variant idle

spawn "$VS_BIN/bench_spin" -d 60
load=$SPAWNED
ctl task add "$load" --period 10ms --slice 8ms --cpu "$BENCH_CPU" --park stop >/dev/null ||
	fail "cannot reserve the load on CPU $BENCH_CPU"
sleep 0.3
run_variant loaded
ctl task del "$load" >/dev/null 2>&1 || true
kill_wait "$load"

# busy: no vCPU ever idle (a SCHED_IDLE spinner pinned on each CPU, outside vsched), so no
# wake-up has to bring a halted vCPU back: what the same path costs without that VM exit.
busy=()
for c in 0 1; do
	spawn taskset -c "$c" chrt -i 0 "$VS_BIN/bench_spin" -d 60
	busy+=("$SPAWNED")
done
sleep 0.2
run_variant busy
for b in "${busy[@]}"; do kill_wait "$b"; done
