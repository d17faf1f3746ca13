# ctld_lib.sh (sourced after lib.sh by tests/integration/controller_*.sh): a small cluster
# on one machine, every daemon on ipc sockets in $TMP or a loopback port the system picks:
#   start_ctld              vsched-controller (agents on tcp://127.0.0.1:*, admin on ipc)
#   start_node NAME CPU     a "node": its own vsched managing CPU only, and its own agent
#   start_rank NODE JOB R   a process that registers as rank R of JOB through NODE's agent
#   actl ARGS...            vschedctl against the controller
#   vctl NODE ARGS...       vschedctl against NODE's vsched
#   ctld_need BIN...        skip unless every BIN is built and jq is installed
#   ctld_test_begin BIN...  root with SCHED_FIFO, ctld_need BIN..., then the RT lock
#   start_job_on_two_nodes JOB   nodes n1 (CPU 0) and n2 (CPU 1), one rank of JOB on each
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

# ctld_need BIN...: skips the test unless every BIN is built in $VS_BIN and jq is installed
# (the helpers read the daemons' --json output with it).
ctld_need() {
	local b
	for b in "$@"; do
		[ -x "$VS_BIN/$b" ] || skip "$b not built"
	done
	command -v jq >/dev/null || skip "jq not installed"
}

# ctld_test_begin BIN...: the start of a test that runs real schedulers: skips unless it
# runs as root with SCHED_FIFO (need_root) and ctld_need BIN... holds, then takes the RT lock
# (after every skip: a test that cannot run never waits for it).
ctld_test_begin() {
	need_root
	ctld_need "$@"
	rt_lock
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

# start_node NAME CPUS [MEM_MBS NET_MBS]: vsched on CPUS ("0" or "0, 1";
# ipc://$TMP/vs-NAME.sock) and an agent named NAME announcing those bandwidth capacities
# (MB/s; default 10000 and 1000, 0 = unknown). NODE_STATS_INTERVAL: the agent's
# stats_interval (default 500ms); NODE_AGENT_LINES: more lines of its agent.conf.
start_node() {
	local n=$1 cpu=$2 mem=${3:-10000} net=${4:-1000} i
	cat >"$TMP/vsched-$n.conf" <<EOF
cpus = [$cpu];
utilization_cap = 0.9;
min_period = "1ms";
min_slice = "100us";
endpoint = "ipc://$TMP/vs-$n.sock";
EOF
	rt_lock 120 # no other test's scheduler on these CPUs meanwhile
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
stats_interval = "${NODE_STATS_INTERVAL:-500ms}";
sample_interval = "200ms";
mem_capacity_mbs = $mem;
net_capacity_mbs = $net;
${NODE_AGENT_LINES:-}
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

# start_job_on_two_nodes JOB: nodes n1 (vsched on CPU 0) and n2 (CPU 1), rank 0 of JOB
# through n1's agent and rank 1 through n2's (R0, R1: their pids); fails unless the
# controller knows both ranks within 5 s.
start_job_on_two_nodes() {
	start_node n1 0
	start_node n2 1
	start_rank n1 "$1" 0
	R0=$RANK_PID
	start_rank n2 "$1" 1
	R1=$RANK_PID
	wait_until 5 job_is "$1" ranks 2 || ctld_fail "$1's 2 ranks not known: $(actl job list --json)"
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

# ---- real jobs, killed daemons (controller_agent_down.sh, controller_restart_jobs.sh) ----
#   start_bsp JOB AGENT_EP BSP_ARGS...   a real `bsp --local` job, ranks under `vschedctl job run`
#   job_rank_pids JOB                    the ranks' pids as the controller knows them, by rank
#   kill_agent NODE / restart_agent NODE kill -9 NODE's agent / start it again on its config
#   kill_ctld                            kill -9 the controller (nothing saved at exit)
#   bsp_max_gap JOB                      longest time between two progress lines of a rank
#   bsp_iterations JOB RANK              iterations of RANK so far (its last progress line)
#   measure_rmax VS_EP PCT BSP_ARGS...   full speed of a job from a run under a reservation
#   agent_check_clean NODE               stop NODE's agent, fail on exit status or sanitizer report

# forget_pid PID: PID has been reaped; drops it from PIDS so that cleanup never signals
# whatever process reuses the number.
forget_pid() {
	local p keep=()
	for p in "${PIDS[@]}"; do
		[ "$p" = "$1" ] || keep+=("$p")
	done
	PIDS=("${keep[@]}")
}

# start_bsp JOB AGENT_EP BSP_ARGS...: `bsp BSP_ARGS... -v`, each rank started by
# `vschedctl job run --job JOB --rank R --agent AGENT_EP` ("{rank}" in AGENT_EP becomes the
# rank: ipc://$TMP/agent-n{rank}.sock puts rank R on node nR). Progress lines ("bsp: rank=R
# t=... iterations=...", one a second) and the final summaries go to $TMP/JOB.out, errors
# to $TMP/JOB.err. Sets BSP_PID (the launcher; the ranks are its children).
start_bsp() {
	local job=$1 ep=$2
	shift 2
	"$VS_BIN/bsp" "$@" -v -- "$VS_BIN/vschedctl" job run --job "$job" --rank '{rank}' \
		--agent "$ep" -- >"$TMP/$job.out" 2>"$TMP/$job.err" &
	BSP_PID=$!
	PIDS+=("$BSP_PID")
}

# job_rank_pids JOB: the pids of JOB's ranks (vschedctl job show --json), in rank order.
job_rank_pids() { actl job show "$1" --json | jq -r '.rank_list | sort_by(.rank) | .[].pid'; }

# kill_agent NODE: kill -9 NODE's agent (by the pid start_node recorded) and reap it.
kill_agent() {
	local p=${NODE_AGENT_PID[$1]}
	kill -KILL "$p"
	wait "$p" 2>/dev/null || true
	forget_pid "$p"
	NODE_AGENT_PID[$1]=
}

# restart_agent NODE: a new agent for NODE on the configuration start_node wrote (same log);
# waits until the controller shows the node up.
restart_agent() {
	"$VS_BIN/vsched-agent" -f -c "$TMP/agent-$1.conf" >>"$TMP/agent-$1.log" 2>&1 &
	NODE_AGENT_PID[$1]=$!
	PIDS+=("$!")
	wait_until 5 node_up "$1" || ctld_fail "node $1 did not register again"
}

# kill_ctld: kill -9 the controller and reap it (start_ctld starts it again on the same
# endpoints and state file).
kill_ctld() {
	kill -KILL "$CTLD_PID"
	wait "$CTLD_PID" 2>/dev/null || true
	forget_pid "$CTLD_PID"
	CTLD_PID=
}

# bsp_max_gap JOB [FROM]: the longest time (s) between consecutive progress lines of any
# rank of JOB (start_bsp's -v lines, bsp's own clock), over lines with t >= FROM (default 0).
bsp_max_gap() {
	awk -v from="${2:-0}" '/^bsp: rank=[0-9]+ t=/ {
		split($2, r, "="); split($3, t, "=")
		if (t[2] + 0 < from) next
		if (r[2] in last && t[2] - last[r[2]] > g) g = t[2] - last[r[2]]
		last[r[2]] = t[2] }
		END { printf "%.1f\n", g + 0 }' "$TMP/$1.out"
}

# bsp_iterations JOB RANK: the iteration count of RANK's last progress line (0 if none).
bsp_iterations() {
	awk -v r="rank=$2" '$2 == r && $3 ~ /^t=/ { split($4, i, "="); n = i[2] } END { print n + 0 }' \
		"$TMP/$1.out"
}

# measure_rmax VS_EP PCT BSP_ARGS...: a job's full speed (units/s, slowest rank) estimated
# from a 2 s run of `bsp BSP_ARGS...` with every rank under a PCT % reservation (period
# 20 ms) of the vsched at VS_EP ("{rank}" allowed, as in start_bsp): rate * 100 / PCT.
# Unlike an unmanaged run it does not depend on what else loads the machine (the ranks run
# SCHED_FIFO within their reservation), and it measures what a reservation buys.
measure_rmax() {
	local ep=$1 pct=$2
	shift 2
	"$VS_BIN/bsp" "$@" --duration 2s -- "$VS_BIN/vschedctl" -s "$ep" run --period 20ms \
		--slice "$((pct * 200))us" -- 2>>"$TMP/rmax.err" |
		sed -n 's/.* rate=\([0-9.]*\) .*/\1/p' | sort -g | head -1 |
		awk -v u="$pct" 'NF { printf "%.3f\n", $1 * 100 / u }'
}

# agent_check_clean NODE: stops NODE's agent (SIGTERM) and fails if it did not exit 0 or
# its log holds a sanitizer report (ASan/UBSan builds).
agent_check_clean() {
	local p=${NODE_AGENT_PID[$1]} rc=0
	kill -TERM "$p" 2>/dev/null || true
	wait "$p" 2>/dev/null || rc=$?
	forget_pid "$p"
	NODE_AGENT_PID[$1]=
	[ "$rc" = 0 ] || ctld_fail "agent of $1 exited $rc at SIGTERM"
	if grep -Eq 'AddressSanitizer|LeakSanitizer|runtime error:' "$TMP/agent-$1.log"; then
		ctld_fail "sanitizer report in the log of $1's agent"
	fi
}
