# coschedule_restart: a controller restarted over the windows its predecessor left in vsched
# (issue 14; the co-scheduling throughput bench saw a `vschedctl rate` refused so). Node n1
# and four jobs as in coschedule_rate (tests/helpers/cosched_rate_lib.sh: two membench
# streams, two bsp compute ranks), targets 45 % set in the order m1 m2 c1 c2 and committed;
# then the controller is stopped and started again on a fresh state file, so that it knows
# the jobs' windows only from the node's task statistics, and the targets are set again in
# another order (c2 m2 c1 m1). Every rate is accepted, every job ends planned with its share
# and committed, the node refused no window set after the restart, and once the membench
# jobs are classed devil no slot runs both.
source "$(dirname "$0")/lib.sh"
source "$VS_SRC/tests/helpers/ctld_lib.sh"
source "$VS_SRC/tests/helpers/cosched_lib.sh"
source "$VS_SRC/tests/helpers/cosched_rate_lib.sh"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
ctld_test_begin

cosched_rate_setup
ALL="m1 m2 c1 c2"
LAUNCHERS=()
for j in $ALL; do
	start_scenario_job "$j" 240
	LAUNCHERS+=("$JOB_PID")
done
ranks_seen() { for j in $ALL; do job_is "$j" ranks 1 || return 1; done; }
settled() { for j in $ALL; do job_ok "$j" 45 || return 1; done; }
set_rates() {
	local j out
	for j in "$@"; do
		out=$(actl rate "$j" 45 2>&1) || cs_fail "rate $j 45 refused: $out"
		echo "rate $j 45: $out"
	done
}
wait_until 15 ranks_seen || cs_fail "the jobs' ranks not seen"
set_rates m1 m2 c1 c2
wait_until 20 settled || cs_fail "plan not committed before the restart"
pass "four jobs planned at 45 % and committed"

stop_ctld
rm -f "$TMP/ctl.state"
echo "--- restart" >>"$TMP/ctld.log"
start_ctld
wait_until 10 node_up n1 || cs_fail "node not back after the controller's restart"
wait_until 15 ranks_seen || cs_fail "the ranks not announced to the new controller"
sleep 1.5 # the node's task statistics (every 500 ms) show the new controller what vsched runs
set_rates c2 m2 c1 m1
wait_until 20 settled ||
	cs_fail "plan not committed after the restart: $(for k in $ALL; do actl job show "$k" --json | jq -c '{name, reason, pending, period_ns, slice_ns, cs: {need: .coschedule.need, got: .coschedule.got}}'; done)"
classed() { job_is m1 class devil && job_is m2 class devil; }
wait_until 20 classed || cs_fail "membench jobs not classed devil"
sleep 1.5 # a class change re-plans within ~1 s
wait_until 10 settled || cs_fail "plan not committed after the classes"
while read -r slot a b extra; do
	[ -z "$extra" ] || cs_fail "slot $slot runs 3 jobs on 2 CPUs"
	[ "${a:0:1}${b:0:1}" != mm ] || cs_fail "slot $slot pairs $a with $b"
done < <(slot_table m1)
if sed -n '/^--- restart/,$p' "$TMP/ctld.log" | grep -q "refused gen"; then
	sed -n '/^--- restart/,$p' "$TMP/ctld.log" | grep "refused gen" | sed 's/^/  /'
	cs_fail "the node refused windows after the restart"
fi
pass "after a restart on a fresh state file: every rate accepted, every job planned and committed, membench jobs never in one slot, nothing refused"
actl job show m1 | sed 's/^/  /'
for p in "${LAUNCHERS[@]}" $(for j in c1 c2; do job_rank_pids "$j"; done); do
	kill -TERM "$p" 2>/dev/null || true
done
for p in "${LAUNCHERS[@]}"; do
	wait "$p" 2>/dev/null || true
	forget_pid "$p"
done
ctld_check_clean
pass "coschedule restart"
