#!/usr/bin/env bash
# The node scheduler alone, on one machine: starts vsched on the shipped configs/vsched.conf, runs two
# CPU-bound processes under reservations of 25 % and 40 % of a CPU, shows `vschedctl task list`
# with the shares they are delivered, then stops everything it started and cleans up.
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
EP="ipc://$RUN/api.sock" # the shipped config, with the endpoint moved into the demo's own dir
pids=()
vsched_pid=
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	[ -n "$vsched_pid" ] && kill -TERM "$vsched_pid" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$RUN"
}
trap cleanup EXIT

"$BIN/vsched" -f -c configs/vsched.conf -s "$EP" >"$RUN/vsched.log" 2>&1 &
vsched_pid=$!
for _ in $(seq 1 100); do
	"$BIN/vschedctl" -s "$EP" task list >/dev/null 2>&1 && break
	sleep 0.05
done

echo "vsched running (pid $vsched_pid) on configs/vsched.conf; starting two busy loops:"
echo "  A: 25 % of a CPU  = slice 25ms every 100ms"
echo "  B: 40 % of a CPU  = slice 20ms every 50ms"
"$BIN/vschedctl" -s "$EP" run --period 100ms --slice 25ms -- "$BIN/spin" -d 16 &
pids+=($!)
"$BIN/vschedctl" -s "$EP" run --period 50ms --slice 20ms -- "$BIN/spin" -d 16 &
pids+=($!)

for t in 3 6 9 12; do
	sleep 3
	echo
	echo "--- after ${t}s: vschedctl task list"
	"$BIN/vschedctl" -s "$EP" task list
done
echo
echo "demo done: stopping the loops and vsched"
