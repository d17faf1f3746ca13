# controller_restart_jobs: the controller is killed (kill -9: nothing saved at exit) and
# started again on the same state file while a real job runs under its target (controller
# issue: "controller restart restores targets and jobs keep running"). Two nodes, n0 and
# n1 (each its own vsched on one CPU and its own agent), run a real `bsp --local 2` job,
# rank R through node nR's agent. Outcomes checked:
#  - before: the job at its 40 % target (3 controller reports in a row within TOL points),
#    each rank in its node's vsched at the controller's committed (period, slice);
#  - controller dead: the agents notice and keep the constraint; each node's vsched keeps
#    its rank at exactly that (period, slice) (sampled over the outage), the ranks keep
#    running (same pids, progress) and keep their share: CPU share over 2 s within
#    [U / 4, U + 8] (U = 40 %; an unmanaged rank would take ~100 % of its CPU; below U, a
#    bsp rank's use depends on its waits for the partner, i.e. on the machine's load);
#  - restarted on the same state file: target and given R_max are back at once; the agents
#    register again and re-announce the ranks (same pids, both nodes up); the job's
#    constraint is in force again on both nodes with a newer generation (vsched = the
#    controller's committed period and slice, U = 40 %);
#  - control continues: rate reports are evaluated again and the job is back within TOL of
#    its target (3 reports in a row); the ranks never stopped: no rank went more than 2.5 s
#    without a progress line over the whole run, the job never ended, nothing was refused
#    by an agent.
# Bounded: the whole test runs under a 120 s timeout, at most 40 s of which waiting for the
# RT lock (the test itself takes about 30 s).
if [ -z "${CTLD_TEST_TIMED:-}" ]; then
	CTLD_TEST_TIMED=1 exec timeout -k 5 120 bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"
source "$VS_SRC/tests/helpers/ctld_lib.sh"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
BSP_ARGS=(--local 2 --compute 20ms --msg 16KiB)
JOB=jobR
TARGET=40
TOL=10
ctld_test_begin vsched vsched-agent vsched-controller vschedctl bsp

start_ctld
start_node n0 0
start_node n1 1
# R_max: the job's rate with each rank at 80 % of its node's CPU, scaled to 100 %.
RMAX=$(measure_rmax "ipc://$TMP/vs-n{rank}.sock" 80 "${BSP_ARGS[@]}")
[ -n "$RMAX" ] || ctld_fail "could not measure the job's full speed: $(cat "$TMP/rmax.err")"

start_bsp "$JOB" "ipc://$TMP/agent-n{rank}.sock" "${BSP_ARGS[@]}" --duration 80s --timeout 30s
wait_until 10 job_is "$JOB" ranks 2 || ctld_fail "$JOB's 2 ranks not seen by the controller"
[ "$(job_field "$JOB" nodes)" = 2 ] || ctld_fail "$JOB not on 2 nodes: $(actl job show "$JOB")"
mapfile -t RANKS < <(job_rank_pids "$JOB")
for r in 0 1; do
	[ "$(ps -o ppid= -p "${RANKS[r]}" | tr -d ' ')" = "$BSP_PID" ] ||
		ctld_fail "rank $r pid ${RANKS[r]} is not a child of the bsp launcher $BSP_PID"
done
# U = target (adaptive): every constraint sent is then known exactly
actl job set "$JOB" --rmax "$RMAX" --algorithm adaptive >/dev/null ||
	ctld_fail "job set --rmax $RMAX refused"
actl rate "$JOB" "$TARGET" >"$TMP/out" 2>&1 || ctld_fail "rate $JOB $TARGET: $(cat "$TMP/out")"
grep -q 'applied on 2 node' "$TMP/out" || ctld_fail "rate $JOB $TARGET: $(cat "$TMP/out")"

# near_target SECONDS: 3 controller reports in a row within TOL of TARGET, within SECONDS.
near_target() {
	local i ok=0 ev last=-1 cur= seen=
	for i in $(seq 1 $(($1 * 5))); do
		sleep 0.2
		ev=$(job_field "$JOB" evaluations)
		[ "$ev" != "$last" ] || continue
		last=$ev
		cur=$(job_field "$JOB" current_pct)
		seen="$seen ${cur%.*}"
		if [ "$cur" != null ] && within "$cur" $((TARGET - TOL)) $((TARGET + TOL)); then
			ok=$((ok + 1))
		else
			ok=0
		fi
		if [ $ok -ge 3 ]; then
			NEAR="$cur % after $(awk -v i="$i" 'BEGIN { print i / 5 }') s (seen:$seen)"
			return 0
		fi
	done
	ctld_fail "$JOB not within $TARGET ± $TOL % for 3 reports in ${1} s (seen:$seen): $(actl job show "$JOB")"
}
# at_committed: no change in flight, U = TARGET, and each rank in its node's vsched at the
# job's committed (period, slice) and nothing else there. Sets CP, CS, CGEN.
at_committed() {
	local r
	read -r PEND UTIL CP CS CGEN < <(actl job list --json |
		jq -r ".[] | select(.name == \"$JOB\") | \"\(.pending) \(.util_pct) \(.period_ns) \(.slice_ns) \(.gen)\"")
	[ "$PEND" = false ] && [ "$UTIL" = "$TARGET" ] || return 1
	for r in 0 1; do
		[ "$(node_tasks "n$r")" = "${RANKS[r]} $CP $CS" ] || return 1
	done
}
# node_tasks NODE: "pid period slice" of every task of NODE's vsched.
node_tasks() { vctl "$1" task list --json | jq -r 'sort_by(.pid) | .[] | "\(.pid) \(.period_ns) \(.slice_ns)"'; }

near_target 30
wait_until 5 at_committed ||
	ctld_fail "ranks not at the committed constraint: n0 $(node_tasks n0) n1 $(node_tasks n1); $(actl job show "$JOB")"
pass "$JOB (R_max $RMAX/s, ranks ${RANKS[*]} on n0 and n1) at its $TARGET % target: $NEAR; vsched at period $CP slice $CS"

# Kill the controller. What the nodes hold now is the last constraint it pushed: normally
# its committed one; a change in flight at the kill may have reached a node or not, but
# every constraint the controller sends has U = target.
GEN0=$CGEN
kill_ctld
LAST=()
for r in 0 1; do
	LAST[r]=$(node_tasks "n$r")
	read -r pid lp ls <<<"${LAST[r]}"
	[ "$pid" = "${RANKS[r]}" ] && [ "$(wc -l <<<"${LAST[r]}")" = 1 ] ||
		ctld_fail "n$r's vsched does not hold exactly rank $r (pid ${RANKS[r]}) after the kill: ${LAST[r]}"
	awk -v p="$lp" -v s="$ls" -v t="$TARGET" 'BEGIN { d = s - p * t / 100; exit !(d <= 1 && d >= -1) }' ||
		ctld_fail "n$r: rank $r at period $lp slice $ls, not U = $TARGET % (committed $CP/$CS)"
	[ "$lp $ls" = "$CP $CS" ] || echo "note: a change was in flight at the kill: n$r at $lp/$ls, committed $CP/$CS"
done
link_lost() { grep -q 'controller link lost.*stay in force' "$TMP/agent-n0.log" &&
	grep -q 'controller link lost.*stay in force' "$TMP/agent-n1.log"; }
wait_until 5 link_lost || ctld_fail "the agents did not notice the controller's death"
LO=$(awk -v u="$TARGET" 'BEGIN { print u / 4 }')
HI=$((TARGET + 8))
IT0=$(bsp_iterations "$JOB" 0)
mapfile -t SH < <(shares 2 "${RANKS[@]}")
for r in 0 1; do
	kill -0 "${RANKS[r]}" 2>/dev/null || ctld_fail "rank $r (pid ${RANKS[r]}) died with the controller"
	within "${SH[r]}" "$LO" "$HI" ||
		ctld_fail "rank $r (pid ${RANKS[r]}): CPU share ${SH[r]} % with the controller dead, reservation U $TARGET % (bounds $LO..$HI)"
	[ "$(node_tasks "n$r")" = "${LAST[r]}" ] ||
		ctld_fail "n$r's vsched changed with the controller dead: $(node_tasks "n$r") (was ${LAST[r]})"
done
[ "$(bsp_iterations "$JOB" 0)" -gt "$IT0" ] || ctld_fail "rank 0 made no progress with the controller dead"
pass "controller killed: agents keep the constraint, vsched unchanged (n0: ${LAST[0]#* }, n1: ${LAST[1]#* }), CPU shares ${SH[0]} % and ${SH[1]} % over 2 s (U $TARGET %)"

# Restart on the same state file.
start_ctld
actl job list --json >"$TMP/jobs.json"
jq -e ".[] | select(.name == \"$JOB\") | .target_pct == $TARGET and .r_max_source == \"given\" and ((.r_max - $RMAX) | fabs) < 0.01" \
	"$TMP/jobs.json" >/dev/null || ctld_fail "target or R_max not restored: $(cat "$TMP/jobs.json")"
pass "restart: target $TARGET % and R_max $RMAX (given) restored from the state file"
both_back() {
	node_up n0 && node_up n1 && job_is "$JOB" ranks 2 &&
		[ "$(job_rank_pids "$JOB" | tr '\n' ' ')" = "${RANKS[*]} " ]
}
wait_until 10 both_back || ctld_fail "ranks not re-announced after the restart: $(actl job show "$JOB" --json)"
wait_until 10 at_committed ||
	ctld_fail "constraint not in force after the restart: n0 $(node_tasks n0) n1 $(node_tasks n1); $(actl job show "$JOB")"
[ "$CGEN" -gt "$GEN0" ] || ctld_fail "generation went backwards: $GEN0 -> $CGEN"
pass "agents re-registered, ranks ${RANKS[*]} re-announced, constraint in force on both nodes (period $CP slice $CS, generation $GEN0 -> $CGEN)"

# Control continues.
near_target 30
for r in 0 1; do
	[ "$(ps -o ppid= -p "${RANKS[r]}" | tr -d ' ')" = "$BSP_PID" ] || ctld_fail "rank $r (pid ${RANKS[r]}) is gone"
done
kill -0 "$BSP_PID" 2>/dev/null || ctld_fail "the job ended: $(cat "$TMP/$JOB.err")"
GAP=$(bsp_max_gap "$JOB")
within "$GAP" 0 2.5 || ctld_fail "a rank went $GAP s without a progress line"
AGENT_ERR='constraint gen .* refused|not put under vsched|could not put back'
grep -Eq "$AGENT_ERR" "$TMP"/agent-n[01].log && ctld_fail "agent: $(grep -hE "$AGENT_ERR" "$TMP"/agent-n[01].log | head -3)"
pass "control continues after the restart: $JOB $NEAR, $(job_field "$JOB" evaluations) evaluations; ranks never stopped (longest gap between progress lines $GAP s)"

agent_check_clean n0
agent_check_clean n1
pass "agents stopped cleanly (exit 0, no sanitizer report)"
ctld_check_clean
