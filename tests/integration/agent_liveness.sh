# agent_liveness: vsched-agent's link to the controller, beyond a clean reconnect.
#  - a controller that refuses NODE_HELLO: the agent keeps asking, once per heartbeat, and
#    sends no data (RATE, BW, ...) while unregistered;
#  - a controller that stays connected but stops answering (no heartbeat echo): after
#    controller_timeout the agent presumes the link lost and registers again;
#  - a controller that restarts and does not know the node (answers data with HELLO_ACK
#    -ENOENT): the agent registers again at once;
#  - vsched is not running: a CONSTRAINT is refused with the reason;
#  - the agent itself restarts: a new NODE_HELLO with a new instance number.
# Needs no vsched (the agent carries on without it), so it runs without root.
# Bounded: the whole test runs under an 85 s timeout (exit 124 = failed by timeout).
if [ -z "${AGENT_TEST_TIMED:-}" ]; then
	AGENT_TEST_TIMED=1 exec timeout -k 5 85 bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"

[ -x "$VS_BIN/vsched-agent" ] || skip "vsched-agent not built"
[ -x "$VS_BIN/ctlpeer" ] || skip "ctlpeer helper not built"

source "$VS_SRC/tests/helpers/agent_lib.sh"

# 1. Registration refused: retried every heartbeat (200 ms), no data meanwhile.
start_peer 'tcp://127.0.0.1:*' --refuse-hello
write_agent_config node_name='"live"' vsched_endpoint="\"ipc://$TMP/no-vsched.sock\"" \
	sample_interval='"100ms"' stats_interval='"300ms"' sample_windows= mem_capacity_mbs= \
	net_capacity_mbs= provisional_period= provisional_slice=
start_agent
sleep 1.5
N=$(count "$TMP/peer.out" '^HELLO node=live ')
[ "$N" -ge 5 ] && [ "$N" -le 10 ] || fail "$N NODE_HELLOs in 1.5 s, expected about 7"
[ "$(count "$TMP/peer.out" '^(BW|RATE|HEARTBEAT|TASK_STATS|JOB_PROC|UNREGISTERED)')" = 0 ] ||
	fail "data sent while unregistered"
grep -q 'registration refused: refused by test' "$TMP/agent.log" || fail "refusal not logged"
pass "registration refused: $N hellos in 1.5 s, nothing else sent"
stop_peer

# 2. A controller that stops answering heartbeats: registered again after controller_timeout.
start_peer "$PEER_EP" --no-echo
wait_for "$TMP/peer.out" '^HELLO node=live ' 5
wait_for "$TMP/peer.out" '^HEARTBEAT seq=' 2
T0=$(date +%s%N)
wait_for "$TMP/agent.log" 'link lost \(no answer within controller_timeout\)' 3
T1=$(date +%s%N)
wait_count "$TMP/peer.out" '^HELLO node=live ' 2 2
agent_alive "silent controller"
pass "silent controller: link presumed lost after $(((T1 - T0) / 1000000)) ms, registered again"
stop_peer

# 3. The controller forgets the node (as after a restart behind a proxy, with the TCP
#    connection intact): it answers the next heartbeat with HELLO_ACK -ENOENT, and the agent
#    registers again at once, without a loop.
start_peer "$PEER_EP"
wait_for "$TMP/peer.out" '^HELLO node=live ' 5
wait_for "$TMP/peer.out" '^HEARTBEAT seq=' 3
H=$(count "$TMP/peer.out" '^HELLO node=live ')
echo forget >&3
wait_for "$TMP/peer.out" '^FORGOT' 2
wait_for "$TMP/peer.out" '^UNREGISTERED' 2
wait_count "$TMP/peer.out" '^HELLO node=live ' $((H + 1)) 2
N=$(count "$TMP/peer.out" '^HEARTBEAT')
wait_count "$TMP/peer.out" '^HEARTBEAT' $((N + 3)) 2
U=$(count "$TMP/peer.out" '^UNREGISTERED')
[ "$U" -le 3 ] || fail "re-registration loop: $U unregistered messages"
grep -q 'registration refused: unknown node' "$TMP/agent.log" || fail "-ENOENT not logged"
pass "controller forgot the node: registered again after $U unregistered message(s)"

# 4. vsched is not running: a rank registers (it waits, unmanaged) and a CONSTRAINT for its
#    job is refused with the reason, not half-applied; the agent carries on.
"$VS_BIN/ctlpeer" push "ipc://$TMP/agent.sock" register:c1:jobL:0:self sleep:3000 &
LR=$!
PIDS+=("$LR")
wait_for "$TMP/peer.out" "^JOB_PROC job=1 rank=0 pid=$LR event=joined name=jobL$" 5
echo "constraint jobL 1 100ms 10ms" >&3
wait_for "$TMP/peer.out" '^CONSTRAINT_ACK gen=1 status=-107 job=jobL reason=".*vsched: not running"' 5
agent_alive "no vsched"
pass "no vsched: constraint refused with the reason ($(grep -m1 '^CONSTRAINT_ACK gen=1' "$TMP/peer.out" | cut -d'"' -f2))"

# 5. The agent restarts: a new instance number.
I1=$(sed -n 's/^HELLO .* instance=\([0-9a-f]*\)$/\1/p' "$TMP/peer.out" | tail -1)
H=$(count "$TMP/peer.out" '^HELLO node=live ')
stop_wait "$AGENT_PID" 10 || fail "agent exit status $?"
start_agent
wait_count "$TMP/peer.out" '^HELLO node=live ' $((H + 1)) 5
I2=$(sed -n 's/^HELLO .* instance=\([0-9a-f]*\)$/\1/p' "$TMP/peer.out" | tail -1)
[ -n "$I1" ] && [ "$I1" != "$I2" ] || fail "instance did not change: $I1 -> $I2"
agent_alive "restart"
pass "agent restart announced with a new instance ($I1 -> $I2)"
