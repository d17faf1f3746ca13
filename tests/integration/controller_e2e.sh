# controller_e2e: the whole system on this machine — controller, agent, vsched on both CPUs
# and two real bsp jobs of 2 ranks — is driven to the administrator's targets.
# Outcomes checked (DESIGN.md §5.1, paper 004 Sect. 5.4):
#  - jobs at 30 % and 40 % of their full speed reach target ± 5 points (3 reports in a row)
#    within a bounded number of controller evaluations and 40 s;
#  - every rank's reservation holds the job's U as the controller shows it, and each rank's
#    measured CPU share stays within its reservation;
#  - a target change (30 % -> 45 %; 45 + 40 stays under the 90 % cap of the CPU the two
#    jobs share) is followed the same way.
# Full speed (R_max) is given: the jobs' own rate in a short run before anything is managed.
source "$(dirname "$0")/lib.sh"
source "$VS_SRC/tests/helpers/ctld_lib.sh"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
BSP_ARGS=(--local 2 --compute 20ms --msg 16KiB)
TOL=5

ctld_test_begin
RMAX=$("$VS_BIN/bsp" "${BSP_ARGS[@]}" --duration 3s | sed -n 's/.* rate=\([0-9.]*\) .*/\1/p' |
	sort -g | head -1)
[ -n "$RMAX" ] || fail "could not measure the jobs' full speed"
echo "R_max = $RMAX iterations/s per rank"

start_ctld
write_config
start_vsched
cat >"$TMP/agent.conf" <<EOC
node_name = "n1";
controller = "$CTLD_AGENTS";
app_endpoint = "ipc://$TMP/agent.sock";
vsched_endpoint = "$ENDPOINT";
heartbeat = "200ms";
controller_timeout = "1s";
provisional_period = "100ms";
provisional_slice = "20ms";
EOC
"$VS_BIN/vsched-agent" -f -c "$TMP/agent.conf" >>"$TMP/agent-n1.log" 2>&1 &
PIDS+=("$!")
wait_until 5 node_up n1 || ctld_fail "node n1 did not register"

start_job() {
	"$VS_BIN/bsp" "${BSP_ARGS[@]}" --duration 100s -- "$VS_BIN/vschedctl" job run \
		--job "$1" --rank '{rank}' --agent "ipc://$TMP/agent.sock" -- >"$TMP/$1.out" 2>&1 &
	PIDS+=("$!")
}
start_job jobA
start_job jobB
wait_until 15 job_is jobA ranks 2 || ctld_fail "jobA's 2 ranks not seen by the controller"
wait_until 15 job_is jobB ranks 2 || ctld_fail "jobB's 2 ranks not seen by the controller"
actl job set jobA --rmax "$RMAX" >/dev/null
actl job set jobB --rmax "$RMAX" >/dev/null

# converge JOB TARGET: waits (<= 40 s) for 3 reports in a row within TOL of TARGET; prints
# the seconds and controller evaluations it took.
converge() {
	local job=$1 target=$2 t ok=0 cur ev0 ev
	ev0=$(job_field "$job" evaluations)
	for t in $(seq 1 80); do
		sleep 0.5
		cur=$(job_field "$job" current_pct)
		if within "$cur" $((target - TOL)) $((target + TOL)); then ok=$((ok + 1)); else ok=0; fi
		if [ $ok -ge 3 ]; then
			ev=$(job_field "$job" evaluations)
			echo "$job: $cur % for target $target % after $(awk -v t="$t" 'BEGIN { print t / 2 }') s, $((ev - ev0)) evaluations"
			return 0
		fi
	done
	ctld_fail "$job did not reach $target ± $TOL % in 40 s (now $cur %; $(actl job show "$job"))"
}

# quiet_share JOB PID: sh = PID's CPU share over 2 s in which the controller changed nothing
# for JOB (its "changes" count the same before and after), and util = PID's U in vsched then.
# A share measured while U moved compares the old U with the new one's CPU: in 12 runs the
# job changed U up to 5 times in such 2 s (it keeps searching after converging). Gives up
# after 8 tries and keeps the last, with the largest U that vsched showed around it.
quiet_share() {
	local job=$1 pid=$2 try c0 c1 u0 u1
	for try in 1 2 3 4 5 6 7 8; do
		c0=$(job_field "$job" changes)
		u0=$(ctl task list --json | jq -r ".[] | select(.pid == $pid) | .util_pct")
		sh=$(share "$pid" 2)
		c1=$(job_field "$job" changes)
		u1=$(ctl task list --json | jq -r ".[] | select(.pid == $pid) | .util_pct")
		util=$(awk -v a="$u0" -v b="$u1" 'BEGIN { print (a > b ? a : b) }')
		[ "$c0" != "$c1" ] || [ "$u0" != "$u1" ] || return 0
	done
	echo "$job rank pid $pid: no 2 s without a change of U in 8 tries"
}

# rank_shares JOB: both ranks hold the same U in vsched (never half-applied), the U the
# controller shows at the same moment (floating: not necessarily the target; +-3 points),
# and each rank's measured CPU share stays within its reservation: at most U + 6 (an
# unmanaged rank takes a whole CPU). How much less than U a rank uses depends on how long it
# waits for its partner's messages, i.e. on the machine's load (the kernel's network
# processing is not real-time): only "it runs" (at least U / 4) is asserted below U; that the
# job progresses at its target is what converge checked.
rank_shares() {
	local job=$1 pid util sh n=0 u u2 snap try pids
	pids=$(job_rank_pids "$job" | paste -sd, -)
	# vsched's task list read between two reads of the controller's U that agree: the loop
	# keeps moving U while the job converges, and a check spread over seconds (each share is
	# measured for 2 s) would compare one rank's old U with another's new one
	for try in 1 2 3 4 5 6 7 8 9 10; do
		u=$(job_field "$job" u_pct)
		snap=$(ctl task list --json 2>/dev/null) || snap=
		u2=$(job_field "$job" u_pct)
		[ -z "$snap" ] || [ "$u" != "$u2" ] || break
		sleep 0.3
	done
	[ "$(jq -r "[.[] | select(.pid == ($pids)) | .util_pct] | unique | length" <<<"$snap")" = 1 ] ||
		fail "$job: its ranks hold different U: $(jq -c "[.[] | select(.pid == ($pids)) | {pid, util_pct}]" <<<"$snap")"
	for pid in $(job_rank_pids "$job"); do
		util=$(jq -r ".[] | select(.pid == $pid) | .util_pct" <<<"$snap")
		within "$util" "$(awk -v u="$u" 'BEGIN { print u - 3 }')" "$(awk -v u="$u" 'BEGIN { print u + 3 }')" ||
			fail "$job rank $pid: U $util % in vsched, the controller's U $u %"
		quiet_share "$job" "$pid"
		within "$sh" "$(awk -v u="$util" 'BEGIN { print u / 4 }')" "$(awk -v u="$util" 'BEGIN { print u + 6 }')" ||
			fail "$job rank $pid: CPU share $sh %, reservation U $util %"
		echo "$job rank pid $pid: U $util %, CPU share $sh %"
		n=$((n + 1))
	done
	[ $n -ge 2 ] || fail "$job: expected 2 ranks, found $n"
}

actl rate jobA 30 >/dev/null || ctld_fail "rate jobA 30 refused"
actl rate jobB 40 >/dev/null || ctld_fail "rate jobB 40 refused"
converge jobA 30
converge jobB 40
rank_shares jobA
rank_shares jobB
pass "two bsp jobs at their targets"

actl rate jobA 45 >/dev/null || ctld_fail "rate jobA 45 refused"
converge jobA 45
rank_shares jobA
pass "target change 30 % -> 45 % followed"
