# cosched_lib.sh (sourced after lib.sh and ctld_lib.sh by tests/integration/coschedule_*.sh):
# the controller's co-scheduling mode (docs/coschedule.md) on one machine.
#   cosched_config PAIRING [EXTRA...]   $TMP/controller.conf with coschedule on, frame 100 ms of
#                                       5 ms slots, every job at 45 % (COSCHED_DEFAULT_TARGET) with a given R_max far
#                                       above its rate and epsilon 50 (the control loop stays
#                                       in band: the granularity does not move during a test)
#   cosched_start_node NAME CPUS        vsched on CPUS ("0, 1") and an agent that reports no
#                                       memory capacity (the controller then aims every slot
#                                       at the node's mean demand)
#   cosched_settled JOB...              every JOB is planned and its windows are committed
#   slot_table JOB                      "SLOT JOB JOB..." lines of the controller's slot table
#   vsched_corunners NODE PIDMAP        "JOB JOB" for every two tasks of NODE's vsched on
#                                       different CPUs whose windows overlap (PIDMAP: file of
#                                       "PID JOB" lines)
cosched_config() {
	local pairing=$1 line
	shift
	{
		cat <<EOC
heartbeat = "200ms";
node_timeout = "1s";
ack_timeout = "2s";
initial_period = "100ms";
default_target = ${COSCHED_DEFAULT_TARGET:-45.0};
# fixed shares: U = target (adaptive) with an R_max no job reaches and a band wide enough
# that nothing moves — these tests are about the plan, not the control loop
algorithm = "adaptive";
r_max = 1e12;
epsilon = 50.0;
coschedule = true;
frame = "100ms";
slot = "5ms";
bw_window = "1s";
pairing = "$pairing";
EOC
		for line in "$@"; do echo "$line"; done
	} >"$TMP/controller.conf"
	"$VS_BIN/vsched-controller" -n -c "$TMP/controller.conf" >/dev/null ||
		fail "controller config refused"
}

# cosched_start_node NAME CPUS: a node whose agent announces no bandwidth capacities (the
# controller then plans against the node's mean demand).
cosched_start_node() { start_node "$1" "$2" 0 0; }

# job_settled JOB: planned, share complete, windows committed (not pending, slice = got slots).
job_settled() {
	actl job show "$1" --json | jq -e '.coschedule.planned and .coschedule.got == .coschedule.need
		and (.pending | not) and .period_ns > 0
		and .slice_ns == .coschedule.got * .coschedule.slot_ns' >/dev/null
}
cosched_settled() {
	local j
	for j in "$@"; do job_settled "$j" || return 1; done
}

slot_table() {
	actl job show "$1" --json | jq -r '.coschedule.slot_table[] | "\(.slot) \(.jobs | join(" "))"'
}

vsched_corunners() {
	vctl "$1" task list --json | jq -r --rawfile map "$2" '
		($map | split("\n") | map(select(length > 0) | split(" ") | {(.[0]): .[1]}) | add) as $job
		| [.[] | select($job[(.pid | tostring)] != null)
		   | {job: $job[(.pid | tostring)], cpu, w: .windows}] as $t
		| range(0; $t | length) as $a | range($a + 1; $t | length) as $b
		| select($t[$a].cpu != $t[$b].cpu)
		| select(any($t[$a].w[] as $x | $t[$b].w[] as $y
		             | ($x.period_ns == $y.period_ns)
		               and $x.phase_ns < $y.phase_ns + $y.deadline_ns
		               and $y.phase_ns < $x.phase_ns + $x.deadline_ns))
		| "\($t[$a].job) \($t[$b].job)"'
}
