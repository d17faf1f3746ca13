# cosched_rate_lib.sh (sourced after lib.sh, ctld_lib.sh and cosched_lib.sh by
# tests/integration/coschedule_rate*.sh; bench/cosched_rate_scenario.sh uses the node and
# the jobs): issue 14's four-job scenario driven only by `vschedctl rate` (docs/coschedule.md,
# "Pushing").
#   cosched_rate_node [LINE...]   node n1: vsched on both CPUs (90 % cap), an agent with the
#                                 shipped provisional reservation 20 ms / 100 ms for new
#                                 ranks (and the agent.conf LINEs); EP = its app endpoint
#   start_scenario_job JOB SECS   JOB m*: membench --stride max 64 MiB (memory-bound), c*: a
#                                 one-rank bsp --compute 5ms; through EP, for SECS s
#   cosched_rate_setup            controller in co-scheduling mode (frame 100 ms of 5 ms
#                                 slots, U = target, no default target), node n1: vsched on
#                                 both CPUs (90 % cap), an agent with the shipped provisional
#                                 reservation 20 ms / 100 ms for new ranks
#   run_round N PCT PAUSE ORDER.. four new jobs m1rN m2rN (membench streams: memory-bound)
#                                 c1rN c2rN (bsp compute ranks), targets PCT set in ORDER
#                                 (m1 m2 c1 c2) with PAUSE s between commands.
# ROUND_HOOK=CMD: run as `CMD N` once the round's jobs are seen, before the first `rate`.
# ROUND_MOVE=CMD: run as `CMD N` once the round passed its checks; then checked again.
# ROUND_PERIOD_MS=P: every job's windows must also have period P ms (a sub-frame: 100 / P
# window-sets per frame), in the controller's plan and in vsched (the hooks may set it).
# run_round checks: every `rate` is accepted; every job is planned with ceil(PCT * slots)
# slots and its windows committed; once the membench jobs are classed devil, no slot of the
# controller's table runs both, nor do two membench tasks of vsched on different CPUs have
# overlapping windows; each task holds PCT ms of every 100 ms. Then the jobs are ended.
# CS_KEEP_LOGS=DIR: the daemons' logs are copied there on failure.
cs_fail() {
	echo "--- ctld.log (plans, refusals)" >&2
	grep -E "plan|class|refused|slots it needs|holds|no room" "$TMP/ctld.log" | tail -40 >&2 || true
	echo "--- agent-n1.log (refusals, yields)" >&2
	grep -E "refused|yields|not put" "$TMP/agent-n1.log" | tail -20 >&2 || true
	[ -z "${CS_KEEP_LOGS:-}" ] || cp "$TMP"/*.log "$CS_KEEP_LOGS"/ 2>/dev/null || true
	ctld_fail "$@"
}

# cosched_rate_setup: controller (U = target, no default target), vsched and agent of node n1.
cosched_rate_setup() {
	rt_lock
	COSCHED_DEFAULT_TARGET=0 cosched_config fitness
	# a loaded machine delays heartbeats and reports: the node stays up and the classes hold
	sed -i 's/^node_timeout = .*/node_timeout = "5s";/; s/^bw_window = .*/bw_window = "3s";/' \
		"$TMP/controller.conf"
	start_ctld
	cosched_rate_node 'heartbeat = "200ms";' 'controller_timeout = "1s";' \
		'stats_interval = "500ms";' 'sample_interval = "200ms";' \
		'mem_capacity_mbs = 0;' 'net_capacity_mbs = 0;'
}

# cosched_rate_node [LINE...]: vsched and agent of node n1 (CTLD_AGENTS: the controller,
# started); waits until the node is registered; sets EP.
cosched_rate_node() {
	local line
	cat >"$TMP/vsched-n1.conf" <<-EOC
	cpus = [0, 1];
	utilization_cap = 0.9;
	min_period = "1ms";
	min_slice = "100us";
	endpoint = "ipc://$TMP/vs-n1.sock";
	EOC
	"$VS_BIN/vsched" -f -c "$TMP/vsched-n1.conf" >>"$TMP/vsched-n1.log" 2>&1 &
	PIDS+=("$!")
	wait_until 5 vctl n1 task list || ctld_fail "vsched not up"
	{
		cat <<-EOC
		node_name = "n1";
		controller = "$CTLD_AGENTS";
		app_endpoint = "ipc://$TMP/agent-n1.sock";
		vsched_endpoint = "ipc://$TMP/vs-n1.sock";
		provisional_period = "100ms";
		provisional_slice = "20ms";
		EOC
		for line in "$@"; do echo "$line"; done
	} >"$TMP/agent-n1.conf"
	"$VS_BIN/vsched-agent" -f -c "$TMP/agent-n1.conf" >>"$TMP/agent-n1.log" 2>&1 &
	PIDS+=("$!")
	wait_until 10 node_up n1 || ctld_fail "node did not register"
	EP="ipc://$TMP/agent-n1.sock"
}

# start_scenario_job JOB SECS: JOB's one rank (membench for m*, bsp for c*) under
# `vschedctl job run` through EP; sets JOB_PID (the launcher, in PIDS).
start_scenario_job() {
	case $1 in
	m*)
		"$VS_BIN/vschedctl" job run --job "$1" --agent "$EP" -- \
			"$VS_BIN/membench" --stride max --size 64MiB --duration "${2}s" >"$TMP/$1.out" 2>&1 &
		JOB_PID=$!
		PIDS+=("$JOB_PID")
		;;
	c*)
		start_bsp "$1" "$EP" --local 1 --msg 0 --compute 5ms --duration "${2}s"
		JOB_PID=$BSP_PID
		;;
	*) fail "start_scenario_job: $1 is neither m* nor c*" ;;
	esac
}

# job_ok JOB PCT: planned with ceil(PCT * slots) slots of its (sub-)frame, got them, committed
# (and on the ROUND_PERIOD_MS sub-frame when that is set).
job_ok() {
	actl job show "$1" --json | jq -e --argjson p "$2" --argjson w "$((${ROUND_PERIOD_MS:-0} * 1000000))" \
		'(.period_ns / .coschedule.slot_ns) as $s
		| .coschedule.planned and .coschedule.need == (($p * $s / 100) | ceil)
		and .coschedule.got == .coschedule.need
		and (.pending | not) and .period_ns > 0
		and .slice_ns == .coschedule.got * .coschedule.slot_ns
		and ($w == 0 or .period_ns == $w)' >/dev/null
}
# vsched_holds_all: $TMP/held.json = node n1's task list, holding every pid of $TMP/pidmap.
vsched_holds_all() {
	local p
	vctl n1 task list --json >"$TMP/held.json" 2>/dev/null || return 1
	while read -r p _; do
		jq -e ".[] | select(.pid == $p)" "$TMP/held.json" >/dev/null || return 1
	done <"$TMP/pidmap"
}

# round_check N PCT: round N's four jobs are planned with ceil(PCT * slots) slots and
# committed (on the ROUND_PERIOD_MS sub-frame when set), no slot of the controller's table
# pairs the membench jobs, vsched holds every task, runs no two membench tasks at once and
# gives each PCT ms of every 100 ms.
round_check() {
	local r=$1 pct=$2 all="m1r$1 m2r$1 c1r$1 c2r$1" j k p s a b slot extra
	settled() { for k in $all; do job_ok "$k" "$pct" || return 1; done; }
	wait_until 20 settled ||
		cs_fail "round $r: plan not committed: $(for k in $all; do actl job show "$k" --json | jq -c '{name, reason, pending, period_ns, slice_ns, cs: {planned: .coschedule.planned, need: .coschedule.need, got: .coschedule.got}}'; done)"
	sleep 1.5 # task statistics show the committed windows; a class change re-plans within ~1 s
	wait_until 10 settled || cs_fail "round $r: plan not committed after the classes"
	while read -r slot a b extra; do
		[ -z "$extra" ] || cs_fail "round $r: slot $slot runs 3 jobs on 2 CPUs"
		[ "${a:0:1}${b:0:1}" != mm ] || cs_fail "round $r: slot $slot pairs $a with $b"
	done < <(slot_table "m1r$r")
	: >"$TMP/pidmap"
	for j in $all; do
		for p in $(job_rank_pids "$j"); do echo "$p $j" >>"$TMP/pidmap"; done
	done
	# with 90 % of both CPUs reserved a vschedctl exchange may go unanswered: retried
	wait_until 15 vsched_holds_all ||
		cs_fail "round $r: vsched does not hold every task: $(vctl n1 task list 2>&1)"
	k=0
	while read -r a b; do
		[ "${a:0:1}${b:0:1}" != mm ] || cs_fail "round $r: vsched runs $a and $b at the same time: $(vctl n1 task list)"
		k=$((k + 1))
	done < <(vsched_corunners n1 "$TMP/pidmap")
	[ "$k" -ge 2 ] || cs_fail "round $r: vsched: only $k overlapping pairs of tasks: $(vctl n1 task list)"
	while read -r p j; do
		s=$(jq -r ".[] | select(.pid == $p) | ([.windows[].slice_ns] | add) * (100000000 / .period_ns)" "$TMP/held.json")
		[ "$s" = $((pct * 1000000)) ] || cs_fail "round $r: vsched: $j (pid $p) holds $s ns per 100 ms, not $pct ms"
		[ -z "${ROUND_PERIOD_MS:-}" ] ||
			jq -e ".[] | select(.pid == $p) | .period_ns == $((ROUND_PERIOD_MS * 1000000))" "$TMP/held.json" >/dev/null ||
			cs_fail "round $r: vsched: $j (pid $p) does not run on the ${ROUND_PERIOD_MS} ms sub-frame: $(vctl n1 task list)"
	done <"$TMP/pidmap"
}

# rounds_refused_nothing: no window set of the controller was refused by the node.
rounds_refused_nothing() {
	if grep -q "refused gen" "$TMP/ctld.log"; then
		grep "refused gen" "$TMP/ctld.log" | sed 's/^/  /'
		cs_fail "the node refused windows during the rounds"
	fi
	pass "no window set refused by the node in the rounds"
}

# run_round N PCT PAUSE ORDER...: four new jobs m1rN m2rN c1rN c2rN, targets in ORDER.
run_round() {
	local r=$1 pct=$2 pause=$3 j out rc k mp=() bp=()
	shift 3
	local all="m1r$r m2r$r c1r$r c2r$r"
	for j in "m1r$r" "m2r$r"; do
		start_scenario_job "$j" 120
		mp+=("$JOB_PID")
	done
	for j in "c1r$r" "c2r$r"; do
		start_scenario_job "$j" 120
		bp+=("$JOB_PID")
	done
	for j in $all; do
		wait_until 15 job_is "$j" ranks 1 || cs_fail "job $j: its rank not seen"
	done
	[ -z "${ROUND_HOOK:-}" ] || $ROUND_HOOK "$r"
	for j in "$@"; do
		out=$(actl rate "${j}r$r" "$pct" 2>&1) && rc=0 || rc=$?
		echo "round $r: rate ${j}r$r $pct: exit $rc: $out"
		[ "$rc" = 0 ] || cs_fail "round $r: rate ${j}r$r $pct refused: $out"
		[ "$pause" = 0 ] || sleep "$pause"
	done
	classed() { job_is "m1r$r" class devil && job_is "m2r$r" class devil; }
	wait_until 20 classed || cs_fail "round $r: membench jobs not classed devil"
	round_check "$r" "$pct"
	pass "round $r ($pct %, pause $pause s, order $*): every job planned with its share and committed, membench jobs never in one slot${ROUND_PERIOD_MS:+, ${ROUND_PERIOD_MS} ms sub-frames}"
	if [ -n "${ROUND_MOVE:-}" ]; then
		$ROUND_MOVE "$r"
		round_check "$r" "$pct"
		pass "round $r: after \`$ROUND_MOVE\` with every target set: the same, ${ROUND_PERIOD_MS:-100} ms sub-frames"
	fi
	actl job show "m1r$r" | sed 's/^/  /'
	for k in "${mp[@]}" "${bp[@]}"; do kill -TERM "$k" 2>/dev/null || true; done
	for k in $(for j in "c1r$r" "c2r$r"; do job_rank_pids "$j"; done); do kill -TERM "$k" 2>/dev/null || true; done
	for k in "${mp[@]}" "${bp[@]}"; do wait "$k" 2>/dev/null || true; forget_pid "$k"; done
	gone() { for k in $all; do job_is "$k" ranks 0 || return 1; done; }
	wait_until 10 gone || cs_fail "round $r: ranks still registered after the jobs ended"
}

