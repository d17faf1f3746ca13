# agent_lib.sh (sourced after lib.sh by the agent tests): the real vsched-agent against a
# stand-in controller, `ctlpeer router`, which prints what it receives ($TMP/peer.out, one
# line per message) and takes commands on fd 3 ($TMP/peer.in).
#
#   start_peer [ENDPOINT [ctlpeer options]]   the stand-in (default a free loopback port);
#                                             sets PEER_EP
#   stop_peer                                 its output is kept as $TMP/peer.N.out
#   write_agent_config [KEY=VALUE...]         $TMP/agent.conf (see below)
#   start_agent [vsched-agent options]        logs to $TMP/agent.log; sets AGENT_PID
#   agent_alive WHAT                          fails unless the agent still runs
#   field PID KEY                             a task's field from vschedctl task list --json
#   count FILE REGEX, wait_count FILE REGEX N SECONDS
# On a failure (lib.sh's fail), the agent's log and the peer's messages but the periodic
# ones (AGENT_PEER_SHOW: the lines of peer.out to show, an extended regex) are shown, then
# whatever the test's on_fail_more shows.
AGENT_PID=
PEER_PID=
PEER_EP=
AGENT_PEER_SHOW=${AGENT_PEER_SHOW:-'^[^HBT]|^HELLO'}

on_fail() {
	echo "--- agent log (tail)"
	tail -30 "$TMP/agent.log" 2>/dev/null || true
	echo "--- controller peer (tail)"
	grep -E -- "$AGENT_PEER_SHOW" "$TMP/peer.out" 2>/dev/null | tail -20 || true
	if declare -F on_fail_more >/dev/null; then on_fail_more; fi
}

start_peer() {
	local ep=${1:-tcp://127.0.0.1:*}
	shift || true
	rm -f "$TMP/peer.in"
	mkfifo "$TMP/peer.in"
	"$VS_BIN/ctlpeer" router "$ep" "$@" <"$TMP/peer.in" >"$TMP/peer.out" 2>&1 &
	PEER_PID=$!
	PIDS+=("$PEER_PID")
	exec 3>"$TMP/peer.in"
	wait_for "$TMP/peer.out" '^LISTEN tcp://' 5
	PEER_EP=$(sed -n 's/^LISTEN //p' "$TMP/peer.out")
}

stop_peer() {
	exec 3>&-
	kill -TERM "$PEER_PID" 2>/dev/null || true
	wait "$PEER_PID" 2>/dev/null || true
	mv "$TMP/peer.out" "$TMP/peer.$(date +%s%N).out"
}

# write_agent_config [KEY=VALUE...]: node "testnode", the peer as controller, the
# applications' socket in $TMP, vsched at $ENDPOINT, fast timers (heartbeat 200 ms,
# sampling 200 ms), M = 12000 MB/s, N = 125 MB/s, a provisional reservation of 20 ms per
# 100 ms. Each KEY=VALUE (a libconfig value: 'heartbeat="1s"') replaces a key or adds one;
# KEY= removes it. The agent must accept the result.
write_agent_config() {
	local -A kv=([node_name]='"testnode"' [controller]="\"$PEER_EP\""
		[app_endpoint]="\"ipc://$TMP/agent.sock\"" [vsched_endpoint]="\"$ENDPOINT\""
		[heartbeat]='"200ms"' [controller_timeout]='"1s"' [sample_interval]='"200ms"'
		[sample_windows]=2 [stats_interval]='"500ms"' [mem_capacity_mbs]=12000
		[net_capacity_mbs]=125 [provisional_period]='"100ms"' [provisional_slice]='"20ms"')
	local order=(node_name controller app_endpoint vsched_endpoint heartbeat controller_timeout
		sample_interval sample_windows stats_interval mem_capacity_mbs net_capacity_mbs
		provisional_period provisional_slice) a k
	for a in "$@"; do
		k=${a%%=*}
		[ -n "${kv[$k]+set}" ] || order+=("$k")
		kv[$k]=${a#*=}
	done
	for k in "${order[@]}"; do
		[ -z "${kv[$k]}" ] || echo "$k = ${kv[$k]};"
	done >"$TMP/agent.conf"
	"$VS_BIN/vsched-agent" -n -c "$TMP/agent.conf" >/dev/null || fail "agent config refused"
}

start_agent() {
	"$VS_BIN/vsched-agent" -f "$@" -c "$TMP/agent.conf" >>"$TMP/agent.log" 2>&1 &
	AGENT_PID=$!
	PIDS+=("$AGENT_PID")
}

agent_alive() { kill -0 "$AGENT_PID" 2>/dev/null || fail "agent died: $1"; }

field() { ctl task list --json | jq -r ".[] | select(.pid == $1) | .$2"; }

count() { grep -Ec -- "$2" "$1" || true; }

# wait_count FILE REGEX N SECONDS: until at least N lines match.
wait_count() {
	local i
	for i in $(seq 1 $(($4 * 20))); do
		[ "$(count "$1" "$2")" -ge "$3" ] && return 0
		sleep 0.05
	done
	fail "fewer than $3 lines /$2/ in $(basename "$1") within $4 s"
}
