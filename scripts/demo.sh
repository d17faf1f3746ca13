#!/usr/bin/env bash
# The main job: a one-machine cluster on the shipped configs — vsched, vsched-agent and
# vsched-controller — running a bsp job and an iowait job (2 ranks each) at targets of 20 %
# and 40 % of their full speed; halfway, the first is raised to 40 %. The iowait job blocks
# half of every iteration, so it needs much less CPU than its target: the floating
# algorithm gives it about half the U. The dashboard is printed every few
# seconds while the controller converges. Ends by itself and cleans up everything it
# started. Needs root (vsched uses SCHED_FIFO).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh build >/dev/null

if [ "$(id -u)" -ne 0 ]; then
	echo "demo: vsched needs root (SCHED_FIFO); run as root" >&2
	exit 1
fi

BIN=$PWD/build/bin
RUN=$(mktemp -d /tmp/vsched-demo.XXXXXX)
# The shipped configs, with the node-local sockets and the state file moved into the demo's
# own directory so the demo never touches an installed vsched.
VS_EP="ipc://$RUN/vsched.sock"
AG_EP="ipc://$RUN/agent.sock"
PHASE=${DEMO_PHASE_SECONDS:-45}
pids=()
cleanup() {
	local p
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill -TERM "${pids[i]}" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [ -n "${DEMO_KEEP:-}" ]; then echo "logs kept in $RUN"; else rm -rf "$RUN"; fi
}
trap cleanup EXIT

ctl() { "$BIN/vschedctl" -s "$VS_EP" "$@"; }
# wait_for SECONDS CMD...: retries CMD until it succeeds.
wait_for() {
	local n=$(($1 * 10))
	shift
	until "$@" >/dev/null 2>&1; do
		n=$((n - 1))
		[ $n -gt 0 ] || { echo "demo: timed out waiting for: $*" >&2; exit 1; }
		sleep 0.1
	done
}

"$BIN/vsched" -f -c configs/vsched.conf -s "$VS_EP" >"$RUN/vsched.log" 2>&1 &
pids+=($!)
"$BIN/vsched-controller" -f -c configs/controller.conf -S "$RUN/controller.state" \
	>"$RUN/controller.log" 2>&1 &
pids+=($!)
wait_for 10 ctl task list
"$BIN/vsched-agent" -f -c configs/agent.conf -a "$AG_EP" -s "$VS_EP" -N demo-node \
	>"$RUN/agent.log" 2>&1 &
pids+=($!)
wait_for 10 sh -c "'$BIN/vschedctl' node list | grep -q demo-node"

BSP_ARGS=(--local 2 --compute 20ms --msg 64KiB)
IO_ARGS=(--ranks 2 --compute 8ms --wait 8ms)
# R_max, a job's full speed: its rate in a short run with the whole machine to itself, before
# anything is under vsched (bsp: the slowest rank's iteration rate).
echo "== measuring full speed (R_max): bsp ${BSP_ARGS[*]} and iowait ${IO_ARGS[*]}, 4 s each"
RMAX_A=$("$BIN/bsp" "${BSP_ARGS[@]}" --duration 4s | sed -n 's/.* rate=\([0-9.]*\) .*/\1/p' |
	sort -g | head -1)
RMAX_B=$("$BIN/iowait" "${IO_ARGS[@]}" --duration 4s | sed -n 's/.*rate=\([0-9.]*\).*/\1/p')
echo "   R_max: jobA (bsp) $RMAX_A, jobB (iowait) $RMAX_B iterations/s"

# jobA: two bsp ranks (compute, then all-to-all over TCP), each registered with the agent
# through libapprate by `vschedctl job run`. jobB: two iowait ranks that compute 8 ms and
# then block 8 ms per iteration, like I/O: not proportional to their CPU share.
"$BIN/bsp" "${BSP_ARGS[@]}" --duration $((2 * PHASE + 30))s -- \
	"$BIN/vschedctl" job run --job jobA --rank '{rank}' --agent "$AG_EP" -- \
	>"$RUN/jobA.out" 2>&1 &
pids+=($!)
VSCHED_AGENT="$AG_EP" VSCHED_JOB=jobB "$BIN/iowait" "${IO_ARGS[@]}" --duration $((2 * PHASE + 30))s \
	>"$RUN/jobB.out" 2>&1 &
pids+=($!)
wait_for 15 "$BIN/vschedctl" job show jobA
wait_for 15 "$BIN/vschedctl" job show jobB

echo "== vschedctl job set jobA --rmax $RMAX_A; vschedctl job set jobB --rmax $RMAX_B"
"$BIN/vschedctl" job set jobA --rmax "$RMAX_A"
"$BIN/vschedctl" job set jobB --rmax "$RMAX_B"
echo "== vschedctl rate jobA 20; vschedctl rate jobB 40"
echo "   (watch U%: jobB reaches 40 % of its speed with about half of that share of a CPU,"
echo "    because it loses nothing while parked during its waits; EFF = CUR% / U%)"
"$BIN/vschedctl" rate jobA 20
"$BIN/vschedctl" rate jobB 40
show() { # SECONDS: the dashboard every 5 s
	local t
	for ((t = 5; t <= $1; t += 5)); do
		sleep 5
		echo
		echo "--- +${t}s"
		"$BIN/vschedctl" top --once
	done
}
show "$PHASE"
echo
echo "== vschedctl rate jobA 40"
"$BIN/vschedctl" rate jobA 40
show "$PHASE"
echo
echo "demo done: stopping the jobs, the agent, the controller and vsched"
