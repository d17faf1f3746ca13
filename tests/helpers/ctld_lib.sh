# ctld_lib.sh (sourced after lib.sh by tests/integration/controller_*.sh): a small cluster
# on one machine, every daemon on ipc sockets in $TMP or a loopback port the system picks:
#   start_ctld              vsched-controller (agents on tcp://127.0.0.1:*, admin on ipc)
#   start_node NAME CPU     a "node": its own vsched managing CPU only, and its own agent
#   start_rank NODE JOB R   a process that registers as rank R of JOB through NODE's agent
#   actl ARGS...            vschedctl against the controller
#   vctl NODE ARGS...       vschedctl against NODE's vsched
# Every process started is recorded in PIDS (killed by lib.sh's cleanup) and only those are
# ever signalled.
source "$VS_SRC/tests/helpers/rt_lock.sh"

CTLD_PID=
CTLD_AGENTS=
ADMIN_EP="ipc://$TMP/admin.sock"
declare -A NODE_AGENT_PID NODE_VSCHED_PID

ctld_fail() {
	local f
	for f in "$TMP"/ctld.log "$TMP"/agent-*.log "$TMP"/vsched-*.log; do
		[ -f "$f" ] || continue
		echo "--- $(basename "$f") (tail)" >&2
		tail -15 "$f" >&2
	done
	fail "$*"
}

# wait_until SECONDS CMD...: until CMD succeeds (polls every 100 ms).
wait_until() {
	local t=$1 i
	shift
	for i in $(seq 1 $((t * 10))); do
		if "$@" >/dev/null 2>&1; then return 0; fi
		sleep 0.1
	done
	return 1
}

actl() { "$VS_BIN/vschedctl" -C "$ADMIN_EP" "$@"; }
vctl() {
	local n=$1
	shift
	"$VS_BIN/vschedctl" -s "ipc://$TMP/vs-$n.sock" "$@"
}

write_ctld_config() {
	cat >"$TMP/controller.conf" <<EOF
heartbeat = "200ms";
node_timeout = "1s";
ack_timeout = "2s";
initial_period = "100ms";
EOF
	"$VS_BIN/vsched-controller" -n -c "$TMP/controller.conf" >/dev/null ||
		fail "controller config refused"
}

# start_ctld: (re)starts the controller on $TMP's state file; on a restart the agents'
# endpoint stays the same (CTLD_AGENTS from the first start).
start_ctld() {
	[ -f "$TMP/controller.conf" ] || write_ctld_config
	local ep=${CTLD_AGENTS:-tcp://127.0.0.1:*} i before
	touch "$TMP/ctld.log"
	before=$(wc -l <"$TMP/ctld.log")
	"$VS_BIN/vsched-controller" -f -v -c "$TMP/controller.conf" -A "$ep" -a "$ADMIN_EP" \
		-S "$TMP/ctl.state" "$@" >>"$TMP/ctld.log" 2>&1 &
	CTLD_PID=$!
	PIDS+=("$CTLD_PID")
	for i in $(seq 1 50); do
		if tail -n +$((before + 1)) "$TMP/ctld.log" | grep -q 'agents: listening on tcp://'; then
			break
		fi
		kill -0 "$CTLD_PID" 2>/dev/null || ctld_fail "controller exited at start"
		sleep 0.1
	done
	CTLD_AGENTS=$(tail -n +$((before + 1)) "$TMP/ctld.log" |
		sed -n 's/.*agents: listening on \(tcp:[^ ]*\).*/\1/p' | head -1)
	[ -n "$CTLD_AGENTS" ] || ctld_fail "controller did not report its agents' endpoint"
	wait_until 5 actl node list || ctld_fail "controller admin endpoint not up"
}

stop_ctld() {
	kill -TERM "$CTLD_PID" 2>/dev/null || true
	wait "$CTLD_PID" 2>/dev/null || true
}

# start_node NAME CPU: vsched on CPU (ipc://$TMP/vs-NAME.sock) and an agent named NAME.
start_node() {
	local n=$1 cpu=$2 i
	cat >"$TMP/vsched-$n.conf" <<EOF
cpus = [$cpu];
utilization_cap = 0.9;
min_period = "1ms";
min_slice = "100us";
endpoint = "ipc://$TMP/vs-$n.sock";
EOF
	"$VS_BIN/vsched" -f -c "$TMP/vsched-$n.conf" >>"$TMP/vsched-$n.log" 2>&1 &
	NODE_VSCHED_PID[$n]=$!
	PIDS+=("$!")
	wait_until 5 vctl "$n" task list || ctld_fail "vsched of node $n not up"
	cat >"$TMP/agent-$n.conf" <<EOF
node_name = "$n";
controller = "$CTLD_AGENTS";
app_endpoint = "ipc://$TMP/agent-$n.sock";
vsched_endpoint = "ipc://$TMP/vs-$n.sock";
heartbeat = "200ms";
controller_timeout = "1s";
stats_interval = "500ms";
sample_interval = "200ms";
mem_capacity_mbs = 10000;
net_capacity_mbs = 1000;
EOF
	"$VS_BIN/vsched-agent" -f -c "$TMP/agent-$n.conf" >>"$TMP/agent-$n.log" 2>&1 &
	NODE_AGENT_PID[$n]=$!
	PIDS+=("$!")
	wait_until 5 node_up "$n" || ctld_fail "node $n did not register with the controller"
}

# node_up NAME / node_down NAME: the controller's view.
node_up() { actl node list --json | jq -e ".[] | select(.name == \"$1\" and .up)" >/dev/null; }
node_down() { actl node list --json | jq -e ".[] | select(.name == \"$1\" and (.up | not))" >/dev/null; }

# start_rank NODE JOB RANK: sets RANK_PID.
start_rank() {
	local handle
	handle=$(printf '%x' $((0xa000 + $3)))
	"$VS_BIN/ctlpeer" push "ipc://$TMP/agent-$1.sock" "register:$handle:$2:$3:self" sleep:120000 \
		>>"$TMP/ranks.log" 2>&1 &
	RANK_PID=$!
	PIDS+=("$RANK_PID")
}

# job_field JOB KEY: from vschedctl job list --json.
job_field() { actl job list --json | jq -r ".[] | select(.name == \"$1\") | .$2"; }
# task_util NODE PID: slice/period of PID in NODE's vsched, as "slice/period" in ns.
task_resv() { vctl "$1" task list --json | jq -r ".[] | select(.pid == $2) | \"\(.slice_ns)/\(.period_ns)\""; }
# job_is JOB KEY VALUE: the job's field equals VALUE now (for wait_until).
job_is() { [ "$(job_field "$1" "$2")" = "$3" ]; }

# ctld_check_clean: stops the controller and fails if it did not exit 0 or its log holds a
# sanitizer report (ASan/UBSan builds).
ctld_check_clean() {
	local rc=0
	kill -TERM "$CTLD_PID" 2>/dev/null || true
	wait "$CTLD_PID" 2>/dev/null || rc=$?
	[ "$rc" = 0 ] || ctld_fail "controller exited $rc at SIGTERM"
	if grep -Eq 'AddressSanitizer|LeakSanitizer|runtime error:' "$TMP/ctld.log"; then
		ctld_fail "sanitizer report in the controller's log"
	fi
	pass "controller stopped cleanly (exit 0, no sanitizer report)"
}
