# agent_net_netns: per-process TCP bytes of a rank that lives in another network namespace
# than its agent (a container; a rank started elsewhere). The real vsched-agent runs in the
# root namespace with a stand-in controller (ctlpeer router, which prints every BW entry);
# no vsched is started (the agent's calls to it fail at once, sampling does not need it).
#  1. A temporary namespace vs-t$$-x with lo up; inside it a real libapprate application
#     (ctlpeer app) registers with the agent over its ipc endpoint and sends itself 200 kB
#     every 20 ms over loopback TCP inside the namespace. The agent's dump of its own
#     namespace never sees those sockets (before the fix: net_src=sockdiag, 0 B/s); now it
#     must report net_src=sockdiag with tx and rx within 10 % of the bytes the application
#     counted (rule as agent_link's loopback check: mean of the steady-state samples).
#  2. The "cannot enter" path: a second agent started without CAP_SYS_ADMIN (setpriv
#     drops it from the bounding set) cannot setns; the rank in the namespace must be
#     reported net_src=none, with exactly one log line naming the pid and the reason.
# Cleanup: the processes started here (lib.sh), then the namespace made here.
# Bounded: the whole test runs under an 80 s timeout (exit 124 = failed by timeout).
if [ -z "${AGENT_TEST_TIMED:-}" ]; then
	AGENT_TEST_TIMED=1 exec timeout -k 5 80 bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root (ip netns, setns)"
command -v ip >/dev/null || skip "the 'ip' command (iproute2) is missing"
command -v setpriv >/dev/null || skip "setpriv (util-linux) is missing"
for b in vsched-agent ctlpeer; do
	[ -x "$VS_BIN/$b" ] || skip "$b not built"
done

NS="vs-t$$-x"
NS_MADE=
ns_cleanup() {
	cleanup # lib.sh: our processes first (the namespace's only process is ours)
	if [ -n "$NS_MADE" ]; then ip netns del "$NS" 2>/dev/null || echo "ip netns del $NS failed" >&2; fi
}
trap ns_cleanup EXIT

if ! err=$(ip netns add "$NS" 2>&1); then skip "cannot create a network namespace: $err"; fi
NS_MADE=1
ip -n "$NS" link set lo up || fail "lo up in $NS"

AGENT_PEER_SHOW='^BWE'
source "$VS_SRC/tests/helpers/agent_lib.sh"
# start_ns_agent NAME [WRAPPER...]: an agent (node NAME, ipc endpoint $TMP/NAME.sock).
start_ns_agent() {
	local name=$1
	shift
	cat >"$TMP/$name.conf" <<EOF
node_name = "$name";
controller = "$PEER_EP";
app_endpoint = "ipc://$TMP/$name.sock";
vsched_endpoint = "ipc://$TMP/no-vsched.sock";
vsched_timeout = "50ms";
heartbeat = "200ms";
controller_timeout = "2s";
sample_interval = "200ms";
sample_windows = 2;
stats_interval = "60s";
provisional_period = "0s";
provisional_slice = "0s";
EOF
	"$VS_BIN/vsched-agent" -n -c "$TMP/$name.conf" >/dev/null || fail "agent config refused"
	"$@" "$VS_BIN/vsched-agent" -f -c "$TMP/$name.conf" >>"$TMP/agent.log" 2>&1 &
	AGENT_PID=$!
	PIDS+=("$AGENT_PID")
	wait_for "$TMP/peer.out" "^HELLO node=$name " 5
}
stop_agent() {
	stop_wait "$AGENT_PID" 10 || fail "agent exit status $? on SIGTERM"
}

start_peer

# --- 1. the rank's TCP bytes, seen from the agent's namespace ---------------------------------
start_ns_agent nsnode
# ip netns exec execs in place: $! is the application's pid.
ip netns exec "$NS" "$VS_BIN/ctlpeer" app "ipc://$TMP/nsnode.sock" jobNS 0 4 20 0 200000 \
	>"$TMP/app.out" 2>&1 &
APP=$!
PIDS+=("$APP")
sleep 0.3
if ! kill -0 "$APP" 2>/dev/null && grep -q 'without libapprate' "$TMP/app.out"; then
	skip "ctlpeer built without libapprate"
fi
[ "$(stat -L -c %i "/proc/$APP/ns/net" 2>/dev/null)" != "$(stat -L -c %i /proc/self/ns/net)" ] ||
	fail "the application is not in another network namespace"
wait_for "$TMP/peer.out" "^JOB_PROC job=[0-9]+ rank=0 pid=$APP event=joined name=jobNS$" 5
wait "$APP" || fail "namespace rank failed: $(cat "$TMP/app.out")"
read -r TCPB TCPT < <(sed -n 's/.* tcp_bytes=\([0-9]*\) elapsed_ns=\([0-9]*\).*/\1 \2/p' "$TMP/app.out")
[ -n "${TCPB:-}" ] && [ "$TCPB" -gt 0 ] || fail "no tcp_bytes from the application: $(cat "$TMP/app.out")"
KNOWN=$(awk -v b="$TCPB" -v t="$TCPT" 'BEGIN { printf "%d", b * 1e9 / t }')
# Mean of the per-sample figures once two windows are full (skip the first 3 lines), and
# the bytes they stand for over the application's sending time.
read -r TX RX N < <(grep "^BWE job=[0-9]* rank=0 pid=$APP .*net_src=sockdiag" "$TMP/peer.out" |
	tail -n +4 | sed -n 's/.* tx=\([0-9]*\) rx=\([0-9]*\) .*/\1 \2/p' |
	awk '{ t += $1; r += $2; n++ } END { if (n) printf "%d %d %d\n", t / n, r / n, n; else print "0 0 0" }')
grep -q "^BWE job=[0-9]* rank=0 pid=$APP .*net_src=none" "$TMP/peer.out" &&
	fail "the namespace rank was reported net_src=none although the agent can enter"
[ "$N" -ge 8 ] || fail "only $N sockdiag samples for the namespace rank"
LO=$(awk -v k="$KNOWN" 'BEGIN { print k * 0.9 }')
HI=$(awk -v k="$KNOWN" 'BEGIN { print k * 1.1 }')
within "$TX" "$LO" "$HI" && within "$RX" "$LO" "$HI" ||
	fail "namespace rank: agent says tx $TX rx $RX B/s, application sent $KNOWN B/s ($TCPB bytes); 0 would mean its sockets were not seen"
BYTES=$(awk -v r="$TX" -v t="$TCPT" 'BEGIN { printf "%d", r * t / 1e9 }')
pass "rank in $NS: application sent $TCPB bytes ($KNOWN B/s); agent tx $TX rx $RX B/s (mean of $N samples, ~$BYTES bytes), within 10 %"
grep -q 'no per-process network figures' "$TMP/agent.log" &&
	fail "an unavailable-namespace line although the agent could enter"
stop_agent
pass "agent stopped cleanly: $(grep -o 'net_unavailable=[0-9]*' "$TMP/agent.log" | tail -1)"

# --- 2. cannot enter: no CAP_SYS_ADMIN --------------------------------------------------------
setpriv --bounding-set -sys_admin true 2>/dev/null || skip "setpriv cannot drop CAP_SYS_ADMIN here"
: >"$TMP/agent.log"
start_ns_agent nsnode2 setpriv --bounding-set -sys_admin
CAPEFF=$(sed -n 's/^CapEff:[[:space:]]*//p' "/proc/$AGENT_PID/status")
[ -n "$CAPEFF" ] && [ $((0x$CAPEFF & (1 << 21))) = 0 ] || fail "agent still has CAP_SYS_ADMIN (CapEff $CAPEFF)"
ip netns exec "$NS" "$VS_BIN/ctlpeer" app "ipc://$TMP/nsnode2.sock" jobNS2 0 2 20 0 200000 \
	>"$TMP/app2.out" 2>&1 &
APP2=$!
PIDS+=("$APP2")
wait_for "$TMP/peer.out" "^JOB_PROC job=[0-9]+ rank=0 pid=$APP2 event=joined name=jobNS2$" 5
wait "$APP2" || fail "second namespace rank failed: $(cat "$TMP/app2.out")"
NNONE=$(grep -c "^BWE job=[0-9]* rank=0 pid=$APP2 .*net_src=none$" "$TMP/peer.out" || true)
NSOCK=$(grep -c "^BWE job=[0-9]* rank=0 pid=$APP2 .*net_src=sockdiag$" "$TMP/peer.out" || true)
[ "$NNONE" -ge 3 ] && [ "$NSOCK" = 0 ] ||
	fail "rank out of reach: $NNONE samples net_src=none, $NSOCK sockdiag (want >= 3 and 0)"
NLINES=$(grep -c "pid $APP2: no per-process network figures (setns(/proc/$APP2/ns/net): Operation not permitted)" "$TMP/agent.log" || true)
[ "$NLINES" = 1 ] || fail "$NLINES log lines for the unreachable rank (want exactly 1)"
stop_agent
grep -Eq 'net_unavailable=1( |$)' "$TMP/agent.log" || fail "net_unavailable not counted once"
pass "agent without CAP_SYS_ADMIN: rank reported net_src=none in $NNONE samples, one log line: $(grep -o "pid $APP2: no per-process.*" "$TMP/agent.log" | cut -c1-110)"
