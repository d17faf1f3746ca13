# controller_agent_down: a node's agent is killed (kill -9) under a running, controlled job
# (controller issue: "agent killed -> node shown down, vsched keeps the last constraints").
# One node n1 (its own vsched on CPU 0, its own agent) runs a real `bsp --local 2` job whose
# ranks report through the agent; the job has a target (vschedctl rate), so the controller
# has pushed a (period, slice) that vsched enforces. Outcomes checked:
#  - before: both ranks listed by vsched with the controller's committed (period, slice);
#  - the agent is killed: within node_timeout (1 s here) + 2.5 s the controller shows n1 down
#    (node list --json, top --once), the job's ranks stay listed, shown on a down node;
#  - vsched keeps every task with exactly the constraint it had when the agent died (sampled
#    over the whole outage), the ranks keep running (same pids, progress lines keep coming)
#    and keep their share: each rank's CPU share over 2 s within [U / 4, U + 8] (U = slice /
#    period; an unmanaged rank would take ~100 % of a CPU; below U, how much a bsp rank
#    uses depends on its waits for the partner, i.e. on the machine's load);
#  - the controller keeps running and answering: job list / job show / node list / top, and
#    a new target (30 % -> 40 %) is accepted while the node is down ("applied when its
#    ranks register") without anything reaching the node: vsched still holds the old one;
#  - a new agent is started: n1 is up again, both ranks are re-announced (same pids, shown
#    up), the node gets the job's committed constraint (U = 40 % on both ranks in vsched,
#    the controller's period and slice exactly), and rate reports reach the control loop
#    again (evaluations go on).
# Bounded: the whole test runs under a 100 s timeout, at most 40 s of which waiting for the
# RT lock (the test itself takes about 25 s).
if [ -z "${CTLD_TEST_TIMED:-}" ]; then
	CTLD_TEST_TIMED=1 exec timeout -k 5 100 bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"
source "$VS_SRC/tests/helpers/ctld_lib.sh"
BSP_ARGS=(--local 2 --compute 20ms --msg 16KiB)
JOB=jobD
ctld_test_begin vsched vsched-agent vsched-controller vschedctl bsp

start_ctld
start_node n1 0
# R_max: the job's rate with both ranks at 40 % of n1's CPU, scaled to 100 % (so that a
# target means that share of the CPU and the control loop has little to correct).
RMAX=$(measure_rmax "ipc://$TMP/vs-n1.sock" 40 "${BSP_ARGS[@]}")
[ -n "$RMAX" ] || ctld_fail "could not measure the job's full speed: $(cat "$TMP/rmax.err")"
start_bsp "$JOB" "ipc://$TMP/agent-n1.sock" "${BSP_ARGS[@]}" --duration 50s --timeout 30s
wait_until 10 job_is "$JOB" ranks 2 || ctld_fail "$JOB's 2 ranks not seen by the controller"
mapfile -t RANKS < <(job_rank_pids "$JOB")
[ "${#RANKS[@]}" = 2 ] || ctld_fail "rank pids: ${RANKS[*]}"
for p in "${RANKS[@]}"; do
	[ "$(ps -o ppid= -p "$p" | tr -d ' ')" = "$BSP_PID" ] ||
		ctld_fail "rank pid $p is not a child of the bsp launcher $BSP_PID"
done
# U = target (adaptive): what vsched must hold through the outage is then known exactly
actl job set "$JOB" --rmax "$RMAX" --algorithm adaptive >/dev/null ||
	ctld_fail "job set --rmax $RMAX refused"
actl rate "$JOB" 30 >"$TMP/out" 2>&1 || ctld_fail "rate $JOB 30: $(cat "$TMP/out")"
grep -q 'applied on 1 node' "$TMP/out" || ctld_fail "rate $JOB 30: $(cat "$TMP/out")"

# evals_at_least N: the controller has evaluated N rounds of the job's rate reports.
evals_at_least() { [ "$(job_field "$JOB" evaluations)" -ge "$1" ]; }
# vsched_tasks NODE: "pid period slice" per task of NODE's vsched, sorted.
vsched_tasks() { vctl "$1" task list --json | jq -r 'sort_by(.pid) | .[] | "\(.pid) \(.period_ns) \(.slice_ns)"'; }
# ranks_at P S: both ranks and nothing else in n1's vsched, at period P, slice S.
ranks_at() {
	local want
	want=$(printf '%s\n' "${RANKS[@]}" | sort -n | sed "s/\$/ $1 $2/")
	[ "$(vsched_tasks n1)" = "$want" ]
}
# ranks_at_committed: ... at the job's committed constraint, no change in flight.
ranks_at_committed() {
	local j
	j=$(actl job list --json | jq -r ".[] | select(.name == \"$JOB\") | \"\(.pending) \(.period_ns) \(.slice_ns)\"")
	[ "${j%% *}" = false ] && ranks_at ${j#* }
}
wait_until 5 ranks_at_committed ||
	ctld_fail "ranks not at the committed constraint: vsched $(vsched_tasks n1 | tr '\n' ';') controller $(actl job show "$JOB")"
pass "$JOB (R_max $RMAX/s, pids ${RANKS[*]}) at 30 %: both ranks in vsched at the controller's constraint"
EV=$(job_field "$JOB" evaluations)
wait_until 10 evals_at_least $((EV + 3)) ||
	ctld_fail "the job's rate reports are not evaluated: $(actl job show "$JOB")"

# Kill the agent. The last constraints are what vsched holds once it is dead: snapshot
# them. Each must be one the controller pushed: its committed constraint from just before
# the kill, or from just after (a change in flight at the kill may or may not have reached
# a rank: the controller commits it when the node goes down, and pushes it again when the
# node is back).
read -r GEN0 P0 S0 < <(actl job list --json | jq -r ".[] | select(.name == \"$JOB\") | \"\(.gen) \(.period_ns) \(.slice_ns)\"")
kill_agent n1
T0=$(date +%s%N)
LAST=$(vsched_tasks n1)
wait_until 4 node_down n1 || ctld_fail "n1 not shown down 4 s after its agent was killed: $(actl node list --json)"
DOWN_MS=$((($(date +%s%N) - T0) / 1000000))
[ "$DOWN_MS" -le 3500 ] || ctld_fail "n1 shown down only after $DOWN_MS ms (node_timeout 1 s)"
read -r GEN1 P1 S1 < <(actl job list --json | jq -r ".[] | select(.name == \"$JOB\") | \"\(.gen) \(.period_ns) \(.slice_ns)\"")
[ "$(cut -d' ' -f1 <<<"$LAST" | tr '\n' ' ')" = "$(printf '%s\n' "${RANKS[@]}" | sort -n | tr '\n' ' ')" ] ||
	ctld_fail "vsched does not hold exactly the two ranks after the agent died: $(tr '\n' ';' <<<"$LAST")"
while read -r pid lp ls; do
	[ "$lp $ls" = "$P0 $S0" ] || [ "$lp $ls" = "$P1 $S1" ] ||
		ctld_fail "pid $pid at period $lp slice $ls in vsched; the controller pushed $P0/$S0 (gen $GEN0), then $P1/$S1 (gen $GEN1)"
done <<<"$LAST"
[ "$GEN1" = "$GEN0" ] || echo "note: a change was in flight at the kill: gen $GEN0 -> $GEN1"
actl top --once >"$TMP/top.txt" || ctld_fail "top --once failed with n1 down"
grep -Eq '^n1 .* DOWN ' "$TMP/top.txt" || ctld_fail "top does not show n1 down: $(cat "$TMP/top.txt")"
grep -Eq "^$JOB +2 " "$TMP/top.txt" || ctld_fail "top lost the job: $(cat "$TMP/top.txt")"
actl job show "$JOB" --json >"$TMP/show.json" || ctld_fail "job show failed with n1 down"
jq -e '(.rank_list | length) == 2 and all(.rank_list[]; .node == "n1" and (.up | not))' "$TMP/show.json" >/dev/null ||
	ctld_fail "ranks not shown on a down node: $(cat "$TMP/show.json")"
pass "agent killed: n1 down after $DOWN_MS ms (node list, top --once), ranks listed on the down node; vsched holds $(tr '\n' ';' <<<"$LAST")"

# The outage: vsched keeps exactly that, the ranks run and get their share: within
# [U / 4, U + 8] of their reservation's U (an unmanaged rank would take ~100 % of a CPU).
IT0=$(bsp_iterations "$JOB" 0)
mapfile -t SH < <(shares 2 "${RANKS[@]}")
for i in 0 1; do
	kill -0 "${RANKS[i]}" 2>/dev/null || ctld_fail "rank $i (pid ${RANKS[i]}) died with the agent"
	read -r _ lp ls < <(grep "^${RANKS[i]} " <<<"$LAST")
	U[i]=$(awk -v p="$lp" -v s="$ls" 'BEGIN { printf "%.1f\n", 100 * s / p }')
	lo=$(awk -v u="${U[i]}" 'BEGIN { print u / 4 }')
	hi=$(awk -v u="${U[i]}" 'BEGIN { print u + 8 }')
	within "${SH[i]}" "$lo" "$hi" ||
		ctld_fail "rank $i (pid ${RANKS[i]}): CPU share ${SH[i]} % with the agent dead, reservation U ${U[i]} % (bounds $lo..$hi)"
done
[ "$(vsched_tasks n1)" = "$LAST" ] || ctld_fail "vsched changed with the agent dead: $(vsched_tasks n1 | tr '\n' ';') (was $(tr '\n' ';' <<<"$LAST"))"
kill -0 "$CTLD_PID" 2>/dev/null || ctld_fail "controller died"
for q in "job list" "job list --json" "node list --json" "job show $JOB"; do
	# shellcheck disable=SC2086
	actl $q >/dev/null || ctld_fail "vschedctl $q failed with n1 down"
done
pass "agent dead: ranks alive at U ${U[0]} % and ${U[1]} % in vsched, CPU shares ${SH[0]} % and ${SH[1]} % over 2 s; controller answers"

# A new target while the node is down: accepted, kept for the node, nothing sent there.
actl rate "$JOB" 40 >"$TMP/out" 2>&1 || ctld_fail "rate $JOB 40 with n1 down: $(cat "$TMP/out")"
grep -q 'applied when its ranks register' "$TMP/out" || ctld_fail "rate $JOB 40 with n1 down: $(cat "$TMP/out")"
[ "$(job_field "$JOB" target_pct)" = 40 ] && [ "$(job_field "$JOB" util_pct)" = 40 ] ||
	ctld_fail "target 40 not committed: $(actl job show "$JOB")"
sleep 0.5
[ "$(vsched_tasks n1)" = "$LAST" ] || ctld_fail "vsched changed with the agent dead: $(vsched_tasks n1 | tr '\n' ';')"
[ "$(bsp_iterations "$JOB" 0)" -gt "$IT0" ] || ctld_fail "rank 0 made no progress with the agent dead"
GAP=$(bsp_max_gap "$JOB")
within "$GAP" 0 2.5 || ctld_fail "a rank went $GAP s without a progress line"
pass "rate $JOB 40 with n1 down: $(cat "$TMP/out"); vsched unchanged, ranks progressing (longest gap ${GAP} s)"

# A new agent: the node comes back and the job is controlled again.
restart_agent n1
committed() { # the controller's committed period and slice for the job, no change in flight
	local j
	j=$(actl job list --json | jq -r ".[] | select(.name == \"$JOB\") | \"\(.pending) \(.util_pct) \(.period_ns) \(.slice_ns)\"")
	read -r PEND UTIL CP CS <<<"$j"
	[ "$PEND" = false ] && [ "$UTIL" = 40 ]
}
ranks_back() {
	actl job show "$JOB" --json >"$TMP/show.json" &&
		jq -e '(.rank_list | length) == 2 and all(.rank_list[]; .node == "n1" and .up)' "$TMP/show.json" >/dev/null &&
		[ "$(job_rank_pids "$JOB" | tr '\n' ' ')" = "${RANKS[*]} " ]
}
wait_until 10 ranks_back || ctld_fail "ranks not re-announced by the new agent: $(actl job show "$JOB" --json)"
at_40() { committed && ranks_at "$CP" "$CS"; }
wait_until 10 at_40 ||
	ctld_fail "n1 did not get the committed constraint: vsched $(vsched_tasks n1 | tr '\n' ';') controller $(actl job show "$JOB")"
EV1=$(job_field "$JOB" evaluations)
wait_until 10 evals_at_least $((EV1 + 3)) ||
	ctld_fail "no rate reports reach the control loop after the agent's restart (evaluations $EV0 before the kill, $EV1 at the restart, $(job_field "$JOB" evaluations) now)"
AGENT_ERR='constraint gen .* refused|not put under vsched|could not put back'
grep -Eq "$AGENT_ERR" "$TMP/agent-n1.log" && ctld_fail "agent: $(grep -E "$AGENT_ERR" "$TMP/agent-n1.log" | head -3)"
kill -0 "$BSP_PID" 2>/dev/null || ctld_fail "the bsp job ended: $(cat "$TMP/$JOB.err")"
pass "new agent: n1 up, ranks ${RANKS[*]} re-announced, 40 % in vsched (period $CP slice $CS), control loop fed again (evaluations $EV1 -> $(job_field "$JOB" evaluations))"

agent_check_clean n1
pass "restarted agent stopped cleanly (exit 0, no sanitizer report)"
ctld_check_clean
