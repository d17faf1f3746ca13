# agent_bsp_relay: a real bsp run through the real vsched-agent, with the real vsched and a
# stand-in controller (ctlpeer router). `bsp --local 2` starts each rank through
# `vschedctl job run --job bspjob --rank {rank} --agent ipc://.../agent.sock`, so each
# rank's libapprate reports to the agent's PULL endpoint. Outcomes checked:
#  - the controller receives JOB_PROC joined for both ranks (job bspjob, pids of the ranks);
#  - both ranks are put under vsched by the agent (provisional reservation, visible in
#    `vschedctl task list --json` while they run);
#  - a CONSTRAINT for bspjob from the controller is applied to both ranks (period/slice in
#    the task list) and acknowledged with status 0;
#  - the RATE units of each rank add up exactly to the iterations bsp printed for it. Rule:
#    exact. libapprate carries the units of a report it could not send into the next one,
#    apprate_close() sends the rest as a FINAL report, and the agent relays frames that are
#    still queued when the pid disappears (a process is forgotten only after its handles
#    have been silent for 4 report intervals), so nothing may be missing here;
#  - after the ranks exit: JOB_PROC left for both, and no application frame was refused.
# Bounded: the whole test runs under a 55 s timeout (exit 124 = failed by timeout).
if [ -z "${AGENT_TEST_TIMED:-}" ]; then
	AGENT_TEST_TIMED=1 exec timeout -k 5 55 bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"

need_root
for b in vsched-agent ctlpeer bsp vschedctl; do
	[ -x "$VS_BIN/$b" ] || skip "$b not built"
done
command -v jq >/dev/null || skip "jq not installed"

source "$VS_SRC/tests/helpers/agent_lib.sh"
on_fail_more() {
	echo "--- bsp"
	cat "$TMP/bsp.out" "$TMP/bsp.err" 2>/dev/null || true
}
# wait_field PID KEY VALUE [SECONDS]: until the task list shows it.
wait_field() {
	local i
	for i in $(seq 1 $((${4:-5} * 20))); do
		[ "$(field "$1" "$2")" = "$3" ] && return 0
		sleep 0.05
	done
	return 1
}

start_vsched
start_peer
write_agent_config node_name='"bspnode"' controller_timeout='"2s"' provisional_slice='"40ms"' \
	sample_windows= mem_capacity_mbs= net_capacity_mbs=
start_agent
wait_for "$TMP/peer.out" '^HELLO node=bspnode ' 5
wait_for "$TMP/agent.log" 'controller link: registered' 5
pass "agent registered with the stand-in controller"

# bsp: 2 ranks, each a rank of job bspjob through vschedctl job run (execs in place: the
# pid that registers is the rank's). 5 ms of compute per iteration, 12 s: the checks below
# must see both ranks still running after the constraint (each query is a vschedctl + jq
# run, ~0.5 s apiece on a loaded machine under ASan; 6 s was once too short).
"$VS_BIN/bsp" --local 2 --duration 12s --compute 5ms --msg 1KiB --timeout 20s -- \
	"$VS_BIN/vschedctl" job run --job bspjob --rank '{rank}' --agent "ipc://$TMP/agent.sock" -- \
	>"$TMP/bsp.out" 2>"$TMP/bsp.err" &
BSP_PID=$!
PIDS+=("$BSP_PID")

wait_for "$TMP/peer.out" '^JOB_PROC job=[0-9]+ rank=0 pid=[0-9]+ event=joined name=bspjob$' 10
wait_for "$TMP/peer.out" '^JOB_PROC job=[0-9]+ rank=1 pid=[0-9]+ event=joined name=bspjob$' 5
JOB=$(sed -n 's/^JOB_PROC job=\([0-9]*\) rank=0 .*event=joined name=bspjob$/\1/p' "$TMP/peer.out" | head -1)
R0=$(sed -n 's/^JOB_PROC job=[0-9]* rank=0 pid=\([0-9]*\) event=joined name=bspjob$/\1/p' "$TMP/peer.out" | head -1)
R1=$(sed -n 's/^JOB_PROC job=[0-9]* rank=1 pid=\([0-9]*\) event=joined name=bspjob$/\1/p' "$TMP/peer.out" | head -1)
[ "$(ps -o ppid= -p "$R0" | tr -d ' ')" = "$BSP_PID" ] && [ "$(ps -o ppid= -p "$R1" | tr -d ' ')" = "$BSP_PID" ] ||
	fail "announced pids $R0 $R1 are not children of the bsp launcher $BSP_PID"
pass "JOB_PROC joined for both ranks: job=$JOB pids $R0 (rank 0), $R1 (rank 1)"

# Both ranks under vsched, put there by the agent (provisional reservation 40ms/100ms).
for p in "$R0" "$R1"; do
	wait_field "$p" period_ns 100000000 5 && [ "$(field "$p" slice_ns)" = 40000000 ] ||
		fail "rank pid $p not under vsched with the provisional reservation: $(ctl task list --json)"
done
pass "both ranks under vsched with the provisional reservation (40ms/100ms)"

# The controller constrains the job: both ranks, acknowledged.
echo "constraint bspjob 1 50ms 30ms" >&3
wait_for "$TMP/peer.out" '^CONSTRAINT_ACK gen=1 status=0 job=bspjob ' 5
for p in "$R0" "$R1"; do
	[ "$(field "$p" period_ns)" = 50000000 ] && [ "$(field "$p" slice_ns)" = 30000000 ] ||
		fail "constraint not in vsched for pid $p: $(ctl task list --json)"
done
kill -0 "$R0" 2>/dev/null && kill -0 "$R1" 2>/dev/null || fail "a rank ended before the constraint was checked"
pass "CONSTRAINT gen 1 (30ms/50ms) applied to both ranks while running, acknowledged"
wait_for "$TMP/peer.out" "^TS job=$JOB rank=[01] gen=1 pid=($R0|$R1) .* period=50000000 slice=30000000 " 5

# The run ends; the ranks' last reports and their departure reach the controller.
wait "$BSP_PID" || fail "bsp exit status $?"
wait_for "$TMP/peer.out" "^JOB_PROC job=$JOB rank=0 pid=$R0 event=left name=bspjob$" 5
wait_for "$TMP/peer.out" "^JOB_PROC job=$JOB rank=1 pid=$R1 event=left name=bspjob$" 5
pass "JOB_PROC left for both ranks after bsp ended"

for r in 0 1; do
	its=$(sed -n "s/^bsp: rank=$r .* iterations=\([0-9]*\) .*/\1/p" "$TMP/bsp.out")
	[ -n "$its" ] && [ "$its" -gt 0 ] || fail "no iteration count from rank $r"
	read -r units n < <(grep -E "^RATE job=$JOB rank=$r " "$TMP/peer.out" |
		sed -n 's/.* units=\([0-9]*\) .*/\1/p' | awk '{ s += $1; n++ } END { printf "%d %d\n", s, n }')
	grep -vq ' bytes=32$' <<<"$(grep -E "^RATE job=$JOB rank=$r " "$TMP/peer.out")" &&
		fail "a RATE message of rank $r is not 32 bytes"
	[ "$units" = "$its" ] ||
		fail "rank $r: RATE units add up to $units in $n messages, bsp printed iterations=$its"
	pass "rank $r: $n RATE messages (32 bytes each), units add up to iterations=$its exactly"
done

kill -0 "$AGENT_PID" 2>/dev/null || fail "agent died"
stop_wait "$AGENT_PID" 10 || fail "agent exit status $? on SIGTERM"
grep -q 'app_refused=0 ' "$TMP/agent.log" || fail "an application frame was refused"
pass "agent stopped cleanly, no application frame refused: $(grep -o 'stats: .*' "$TMP/agent.log" | tail -1 | cut -c1-100)"
