# controller_restart: persistence and liveness with the real controller, vsched and agents.
#  - a target is set, the controller is stopped and started again on the same state file:
#    the target and the per-job settings are back at once (before any agent re-registers),
#    the agents register again by themselves and re-announce their ranks, and the job's
#    constraint is the same on the nodes (a newer generation: agents refuse older ones);
#  - a corrupt state file stops the controller with the reason, and leaves it untouched;
#  - an agent that is killed stops heartbeating: its node is shown down (node list --json,
#    top --once) within node_timeout (1 s here) plus a tick.
# Bounded: the whole test runs under a 100 s timeout.
if [ -z "${CTLD_TEST_TIMED:-}" ]; then
	CTLD_TEST_TIMED=1 exec timeout -k 5 100 bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"
source "$VS_SRC/tests/helpers/ctld_lib.sh"
ctld_test_begin vsched vsched-agent vsched-controller ctlpeer

start_ctld
start_job_on_two_nodes jobB
actl job set jobB --rmax 500 --algorithm linear --epsilon 2.5 >/dev/null || ctld_fail "job set refused"
actl rate jobB 40 >/dev/null || ctld_fail "rate jobB 40 refused"
[ "$(task_resv n1 "$R0")" = 40000000/100000000 ] && [ "$(task_resv n2 "$R1")" = 40000000/100000000 ] ||
	ctld_fail "40 % not applied"
GEN1=$(job_field jobB gen)
pass "jobB at 40 % on both nodes (generation $GEN1)"

# Restart on the same state file.
stop_ctld
grep -q 'name = "jobB"; target = 40.0;' "$TMP/ctl.state" || ctld_fail "state file: $(cat "$TMP/ctl.state")"
ls "$TMP" | grep -q 'ctl.state.tmp' && ctld_fail "temporary state file left behind"
start_ctld
[ "$(job_field jobB target_pct)" = 40 ] && [ "$(job_field jobB algorithm)" = linear ] &&
	[ "$(job_field jobB epsilon_pct)" = 2.5 ] && [ "$(job_field jobB r_max)" = 500 ] ||
	ctld_fail "settings not restored: $(actl job list --json)"
pass "restart: target 40 %, algorithm linear, epsilon 2.5, R_max 500 restored from the state file"
wait_until 10 job_is jobB ranks 2 || ctld_fail "ranks not re-announced after the restart"
wait_until 5 job_is jobB util_pct 40 || ctld_fail "constraint not re-established: $(actl job list --json)"
GEN2=$(job_field jobB gen)
[ "$GEN2" -gt "$GEN1" ] || ctld_fail "generation went backwards: $GEN1 -> $GEN2"
sleep 0.5
[ "$(task_resv n1 "$R0")" = 40000000/100000000 ] && [ "$(task_resv n2 "$R1")" = 40000000/100000000 ] ||
	ctld_fail "nodes not at 40 % after the restart: n1 $(task_resv n1 "$R0") n2 $(task_resv n2 "$R1")"
grep -q 'refused' "$TMP"/agent-n1.log && ctld_fail "agent refused something after the restart"
pass "agents re-registered, ranks re-announced, constraint in force (generation $GEN1 -> $GEN2)"
actl rate jobB 20 >/dev/null || ctld_fail "rate jobB 20 after the restart refused"
[ "$(task_resv n1 "$R0")" = 20000000/100000000 ] || ctld_fail "20 % not applied after the restart"
pass "a new target after the restart is applied"

# A corrupt state file is refused with the reason and left as it was.
stop_ctld
cp "$TMP/ctl.state" "$TMP/good.state"
printf 'version = 1;\nlast_gen = "12";\njobs = ( { name = "x"; target = 400.0; } );\n' >"$TMP/ctl.state"
cp "$TMP/ctl.state" "$TMP/bad.state"
rc=0
timeout 5 "$VS_BIN/vsched-controller" -f -c "$TMP/controller.conf" -A "$CTLD_AGENTS" \
	-a "$ADMIN_EP" -S "$TMP/ctl.state" >"$TMP/corrupt.log" 2>&1 || rc=$?
[ "$rc" = 1 ] || ctld_fail "controller with a corrupt state file: exit $rc"
grep -q 'state file refused: .*ctl.state: job 1: x: target' "$TMP/corrupt.log" ||
	ctld_fail "no reason for the corrupt state file: $(cat "$TMP/corrupt.log")"
cmp -s "$TMP/ctl.state" "$TMP/bad.state" || ctld_fail "corrupt state file modified"
pass "corrupt state file refused: $(grep -o 'state file refused: .*' "$TMP/corrupt.log" | cut -c1-100)"
cp "$TMP/good.state" "$TMP/ctl.state"
start_ctld
wait_until 10 node_up n2 || ctld_fail "n2 not back"

# Liveness: kill n2's agent; the node is shown down.
kill -KILL "${NODE_AGENT_PID[n2]}"
T0=$(date +%s%N)
wait_until 5 node_down n2 || ctld_fail "n2 not shown down: $(actl node list --json)"
T1=$(date +%s%N)
node_up n1 || ctld_fail "n1 shown down too"
actl top --once | grep -Eq '^n2 .* DOWN ' || ctld_fail "top does not show n2 down"
pass "agent of n2 killed: n2 down after $(((T1 - T0) / 1000000)) ms (node_timeout 1 s), n1 still up"
ctld_check_clean
