# agent_windows: the real vsched-agent applies a co-scheduling CONSTRAINT with several
# windows to the real vsched (every window visible in `vschedctl task list --json`), relays
# the controller's EPOCH to vsched, and gives both back to a restarted vsched by itself.
# Bounded: the whole test runs under an 80 s timeout (exit 124 = failed by timeout).
if [ -z "${AGENT_TEST_TIMED:-}" ]; then
	AGENT_TEST_TIMED=1 exec timeout -k 5 80 bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"

need_root
[ -x "$VS_BIN/vsched-agent" ] || skip "vsched-agent not built"
[ -x "$VS_BIN/ctlpeer" ] || skip "ctlpeer helper not built"
command -v jq >/dev/null || skip "jq not installed"

source "$VS_SRC/tests/helpers/agent_lib.sh"

# --- test ------------------------------------------------------------------------------------
start_vsched
start_peer
write_agent_config
start_agent
wait_for "$TMP/peer.out" "^HELLO node=testnode " 5

"$VS_BIN/ctlpeer" push "ipc://$TMP/agent.sock" register:c1:jobW:0:self sleep:60000 &
R0=$!
PIDS+=("$R0")
wait_for "$TMP/peer.out" "^JOB_PROC job=[0-9]+ rank=0 pid=$R0 event=joined name=jobW$" 5

# EPOCH: remembered and given to vsched.
EPOCH=$(( ($(date +%s) - 2) * 1000000000 + 7000000 ))
echo "epoch $EPOCH" >&3
wait_for "$TMP/agent.log" "epoch $EPOCH ns given to vsched" 5
wait_for "$TMP/vsched.log" "epoch set" 5
pass "EPOCH relayed to vsched"

# A CONSTRAINT with two windows of a 100 ms frame: applied with both windows, acknowledged.
echo "wconstraint jobW 1 100ms 0ns+30ms 50ms+20ms/10ms" >&3
wait_for "$TMP/peer.out" '^CONSTRAINT_ACK gen=1 status=0 job=jobW ' 5
w=$(ctl task list --json | jq -c ".[] | select(.pid == $R0) | [.windows[] | [.phase_ns, .deadline_ns, .slice_ns]]")
[ "$w" = "[[0,30000000,30000000],[50000000,20000000,10000000]]" ] ||
	fail "windows not in vsched: $w"
pass "two-window constraint applied: $w"
# A refused one (94 % of the frame fits on no CPU under the 90 % cap): vsched's reason.
echo "wconstraint jobW 2 100ms 0ns+45ms 50ms+49ms" >&3
wait_for "$TMP/peer.out" '^CONSTRAINT_ACK gen=2 status=-28 job=jobW .*cap' 5
w2=$(ctl task list --json | jq -c ".[] | select(.pid == $R0) | [.windows[] | [.phase_ns, .deadline_ns, .slice_ns]]")
[ "$w2" = "$w" ] || fail "refused constraint changed the task: $w -> $w2"
pass "windows that fit no CPU refused with the reason, nothing changed: $(grep "^CONSTRAINT_ACK gen=2" "$TMP/peer.out" | cut -c1-160)"
# Three windows, next generation: SET with all three.
echo "wconstraint jobW 3 100ms 0ns+20ms 40ms+20ms 80ms+10ms" >&3
wait_for "$TMP/peer.out" '^CONSTRAINT_ACK gen=3 status=0 job=jobW ' 5
n=$(ctl task list --json | jq ".[] | select(.pid == $R0) | .windows | length")
[ "$n" = 3 ] || fail "gen 3: $n windows in vsched"
pass "gen 3 with three windows applied"

# vsched restarts: the agent gives the epoch back and puts the task back with its windows.
stop_wait "$VSCHED_PID" 10 || true
: >"$TMP/vsched.log.1"
mv "$TMP/vsched.log" "$TMP/vsched.log.1"
start_vsched
wait_for "$TMP/vsched.log" "epoch set" 10
for i in $(seq 1 100); do
	n=$(ctl task list --json | jq ".[] | select(.pid == $R0) | .windows | length")
	[ "$n" = 3 ] && break
	sleep 0.1
done
[ "$n" = 3 ] || fail "task not put back with its 3 windows after the vsched restart"
pass "vsched restarted: epoch and the three windows given back by the agent"
kill -USR1 "$AGENT_PID" 2>/dev/null || true
agent_alive "end"
