# agent_link: the real vsched-agent between the real vsched, a real libapprate application
# (ctlpeer app) and a stand-in controller (ctlpeer router, which prints what it receives):
#  - the node registers (NODE_HELLO with name, CPUs, M, N, version) and heartbeats;
#  - a rank that registers is announced (JOB_PROC), put under vsched with the provisional
#    reservation, and its reports are relayed as 32-byte RATE messages;
#  - a CONSTRAINT is applied to vsched (visible in `vschedctl task list --json`) and
#    acknowledged; TASK_STATS and BW (with sources) follow;
#  - the controller goes away: the constraint stays in force; it comes back on the same
#    port: the agent registers again by itself and re-announces the rank;
#  - the rank exits: JOB_PROC left.
# Bounded: the whole test runs under an 85 s timeout (exit 124 = failed by timeout).
if [ -z "${AGENT_TEST_TIMED:-}" ]; then
	AGENT_TEST_TIMED=1 exec timeout -k 5 85 bash "$0" "$@"
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

# Registration: name, CPUs, M and N in bytes/s, protocol version; then heartbeats.
wait_for "$TMP/peer.out" "^HELLO node=testnode ncpus=$(nproc) mem=12000000000 net=125000000 version=2 " 5
pass "registration: $(grep -m1 '^HELLO' "$TMP/peer.out")"
wait_for "$TMP/peer.out" '^HEARTBEAT seq=3 ' 3
pass "heartbeats every 200ms"
grep -q 'memory bandwidth: ' "$TMP/agent.log" || fail "no memory-source line at start"
pass "memory source at start: $(grep -m1 -o 'memory bandwidth: .*' "$TMP/agent.log" | cut -c1-100)"

# A libapprate application registers and reports.
"$VS_BIN/ctlpeer" app "ipc://$TMP/agent.sock" jobA 3 30 20 1000000 >"$TMP/app.out" 2>&1 &
APP=$!
PIDS+=("$APP")
sleep 0.3
if ! kill -0 "$APP" 2>/dev/null && grep -q 'without libapprate' "$TMP/app.out"; then
	skip "ctlpeer built without libapprate"
fi
wait_for "$TMP/peer.out" "^JOB_PROC job=1 rank=3 pid=$APP event=joined name=jobA$" 5
pass "rank announced: JOB_PROC job=1 rank=3 pid=$APP"
wait_for "$TMP/peer.out" "^RATE job=1 rank=3 seq=[0-9]+ units=[1-9][0-9]* interval_ns=[0-9]+ bytes=32$" 5
pass "reports relayed: $(grep -m1 '^RATE' "$TMP/peer.out")"

# Provisional reservation until the controller decides.
for i in $(seq 1 40); do [ -n "$(field "$APP" period_ns)" ] && break; sleep 0.05; done
[ "$(field "$APP" period_ns)" = 100000000 ] && [ "$(field "$APP" slice_ns)" = 20000000 ] ||
	fail "provisional reservation not in vsched: $(ctl task list --json)"
pass "provisional reservation 20ms/100ms in vsched"

# CONSTRAINT from the controller: applied to vsched, acknowledged.
echo "constraint jobA 1 50ms 15ms" >&3
wait_for "$TMP/peer.out" '^CONSTRAINT_ACK gen=1 status=0 job=jobA ' 5
[ "$(field "$APP" period_ns)" = 50000000 ] && [ "$(field "$APP" slice_ns)" = 15000000 ] ||
	fail "constraint not in vsched: $(ctl task list --json)"
pass "constraint gen 1 (15ms/50ms) applied to vsched and acknowledged"
# Another rank of the constrained job gets the job's constraint at once, not the provisional.
"$VS_BIN/ctlpeer" push "ipc://$TMP/agent.sock" register:b4:jobA:4:self sleep:1500 &
RANK4=$!
PIDS+=("$RANK4")
wait_for "$TMP/peer.out" "^JOB_PROC job=1 rank=4 pid=$RANK4 event=joined name=jobA$" 5
for i in $(seq 1 40); do [ -n "$(field "$RANK4" period_ns)" ] && break; sleep 0.05; done
[ "$(field "$RANK4" period_ns)" = 50000000 ] && [ "$(field "$RANK4" slice_ns)" = 15000000 ] ||
	fail "new rank of jobA not under the job's constraint: $(ctl task list --json)"
pass "a new rank of a constrained job gets the job's constraint"
wait_for "$TMP/peer.out" "^TS job=1 rank=3 gen=1 pid=$APP cpu=[0-9]+ period=50000000 slice=15000000 " 5
pass "task statistics: $(grep "^TS job=1 rank=3 gen=1 pid=$APP " "$TMP/peer.out" | tail -1 | cut -c1-110)"
# Application-reported bytes (1 MB per 20 ms iteration): the memory figure carries "app".
wait_for "$TMP/peer.out" "^BWE job=1 rank=3 pid=$APP mem=[1-9][0-9]{6,} mem_src=app " 5
# The mean over the run (reports come every 100 ms, so one window holds 1 or 2 of them):
# 1 MB per iteration of 20 ms sleep + overhead, about 45-50 MB/s.
sleep 1
MEM=$(grep "^BWE .*pid=$APP .*mem_src=app" "$TMP/peer.out" | tail -n +3 |
	sed -n 's/.* mem=\([0-9]*\) .*/\1/p' | awk '{ s += $1; n++ } END { if (n) printf "%d", s / n }')
within "$MEM" 35000000 60000000 || fail "app memory bandwidth $MEM B/s, expected 35-60 MB/s"
pass "per-process figures with sources: $(grep "^BWE .*pid=$APP" "$TMP/peer.out" | tail -1)"
grep -Eq '^BW window_ns=400000000 .* node_src=procnetdev ' "$TMP/peer.out" ||
	fail "no node totals from /proc/net/dev"
pass "node totals from /proc/net/dev"

# Per-process TCP bandwidth through sock_diag, end to end: a second rank sends itself 200 kB
# every 20 ms over loopback TCP (about 9 MB/s); the agent's figures (sent = acked, received)
# against the bytes the application counted.
"$VS_BIN/ctlpeer" app "ipc://$TMP/agent.sock" jobN 0 3 20 0 200000 >"$TMP/appn.out" 2>&1 &
APPN=$!
PIDS+=("$APPN")
# Meanwhile: a task vsched lost (deleted behind the agent's back) is put back.
wait_for "$TMP/peer.out" "^JOB_PROC job=2 rank=0 pid=$APPN event=joined name=jobN$" 5
ctl task del "$APP" >/dev/null || fail "vschedctl task del failed"
for i in $(seq 1 40); do [ -n "$(field "$APP" period_ns)" ] && break; sleep 0.05; done
[ "$(field "$APP" period_ns)" = 50000000 ] || fail "deleted task not put back"
pass "task deleted behind the agent's back: put back under its constraint"
wait "$APPN" || fail "TCP rank failed: $(cat "$TMP/appn.out")"
read -r TCPB TCPT < <(sed -n 's/.* tcp_bytes=\([0-9]*\) elapsed_ns=\([0-9]*\).*/\1 \2/p' "$TMP/appn.out")
KNOWN=$(awk -v b="$TCPB" -v t="$TCPT" 'BEGIN { printf "%d", b * 1e9 / t }')
# Mean of the per-sample figures once two windows are full (skip the first 3 lines).
read -r TX RX N < <(grep "^BWE job=2 rank=0 pid=$APPN .*net_src=sockdiag" "$TMP/peer.out" |
	tail -n +4 | sed -n 's/.* tx=\([0-9]*\) rx=\([0-9]*\) .*/\1 \2/p' |
	awk '{ t += $1; r += $2; n++ } END { if (n) printf "%d %d %d\n", t / n, r / n, n; else print "0 0 0" }')
[ "$N" -ge 5 ] || fail "only $N sockdiag samples for the TCP rank"
within "$TX" "$(awk -v k="$KNOWN" 'BEGIN { print k * 0.9 }')" "$(awk -v k="$KNOWN" 'BEGIN { print k * 1.1 }')" &&
	within "$RX" "$(awk -v k="$KNOWN" 'BEGIN { print k * 0.9 }')" "$(awk -v k="$KNOWN" 'BEGIN { print k * 1.1 }')" ||
	fail "TCP rank: agent says tx $TX rx $RX B/s, application sent $KNOWN B/s"
pass "sockdiag end to end: application $KNOWN B/s, agent tx $TX rx $RX B/s (mean of $N samples)"

# The controller goes away: the constraint stays in force.
stop_peer
wait_for "$TMP/agent.log" 'controller link lost' 5
sleep 1
[ "$(field "$APP" period_ns)" = 50000000 ] && [ "$(field "$APP" slice_ns)" = 15000000 ] ||
	fail "constraint not kept while the controller was away"
agent_alive "controller gone"
pass "controller gone: link loss noticed, constraint kept in force"

# It comes back on the same port: the agent registers again and re-announces the rank.
start_peer "$PEER_EP"
wait_for "$TMP/peer.out" '^HELLO node=testnode ' 10
wait_for "$TMP/peer.out" "^JOB_PROC job=1 rank=3 pid=$APP event=joined name=jobA$" 5
wait_for "$TMP/peer.out" '^RATE job=1 rank=3 ' 5
grep -q '^UNREGISTERED' "$TMP/peer.out" && fail "agent sent data before registering"
pass "controller back: re-registered, rank re-announced, reports flow again"

# A second constraint on the new link, then the rank exits.
echo "constraint jobA 2 40ms 10ms" >&3
wait_for "$TMP/peer.out" '^CONSTRAINT_ACK gen=2 status=0 job=jobA ' 5
[ "$(field "$APP" slice_ns)" = 10000000 ] || fail "constraint gen 2 not applied"
kill -TERM "$APP"
wait_for "$TMP/peer.out" "^JOB_PROC job=1 rank=3 pid=$APP event=left name=jobA$" 5
pass "rank exit announced"

agent_alive "end"
stop_wait "$AGENT_PID" 10 || fail "agent exit status $? on SIGTERM"
grep -q 'stats: ' "$TMP/agent.log" || fail "no stats line at exit"
grep -q 'app_refused=0 ' "$TMP/agent.log" || fail "a libapprate frame was refused"
pass "agent stopped cleanly: $(grep -o 'stats: .*' "$TMP/agent.log" | tail -1 | cut -c1-120)"
