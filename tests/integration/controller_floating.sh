# controller_floating: the default algorithm controls U, not the period only. A job whose
# speed is not proportional to its CPU share — two iowait ranks that compute 8 ms and then
# block for 8 ms every iteration, like I/O — is driven to 40 % of its full speed:
#  - the rate the application itself records (its iteration stamps, last 8 s) is within
#    +-5 points of the target within 60 s;
#  - the U its ranks hold in vsched is below the target (the job needs less CPU than a
#    proportional one), and the controller shows that U, the efficiency above 1 and the
#    state stable;
#  - the paper's invariant would have held U = 40 % and run the job too fast: with
#    --algorithm linear (paper 004 exactly: U = target, the period shortened 2 ms per
#    evaluation out of band) the same job runs above target + 5. Not adaptive: its
#    log-period search can find a period coarse enough to slow this job near the target
#    (measured 47 % once), which is that algorithm working, at twice the U floating needs.
source "$(dirname "$0")/lib.sh"
source "$VS_SRC/tests/helpers/ctld_lib.sh"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
TARGET=40
TOL=5
JOB_ARGS=(--ranks 2 --compute 8ms --wait 8ms)

ctld_test_begin
start_ctld
start_node n1 "0, 1"

# full speed: the job alone, unmanaged
RMAX=$("$VS_BIN/iowait" "${JOB_ARGS[@]}" --duration 3s | sed -n 's/.*rate=\([0-9.]*\).*/\1/p')
[ -n "$RMAX" ] || fail "could not measure the job's full speed"
echo "R_max = $RMAX iterations/s"

VSCHED_AGENT="ipc://$TMP/agent-n1.sock" VSCHED_JOB=io \
	"$VS_BIN/iowait" "${JOB_ARGS[@]}" --duration 120s --stamps "$TMP/stamps" >"$TMP/io.out" 2>&1 &
JOB_PID=$!
PIDS+=("$JOB_PID")
wait_until 15 job_is io ranks 2 || ctld_fail "the job's 2 ranks were not seen by the controller"
actl job set io --rmax "$RMAX" >/dev/null || ctld_fail "job set --rmax refused"
[ "$(job_field io algorithm)" = floating ] || fail "default algorithm is $(job_field io algorithm)"
actl rate io "$TARGET" >/dev/null || ctld_fail "rate refused"

# app_rate SECONDS: the job's rate over its last SECONDS of iteration stamps, % of R_max.
app_rate() {
	awk -v w="$1" -v rmax="$RMAX" '{ t[NR] = $2 } END {
		if (NR < 3) { print "nan"; exit }
		j = NR; while (j > 1 && t[NR] - t[j - 1] <= w * 1e9) j--
		if (NR - j < 2) { print "nan"; exit }
		printf "%.2f\n", 100 * (NR - j) / ((t[NR] - t[j]) / 1e9) / rmax }' "$TMP/stamps"
}

# converged: the application's own rate within TOL of the target twice, 4 s apart.
ok=0
for t in $(seq 1 30); do
	sleep 2
	r=$(app_rate 8)
	if within "$r" $((TARGET - TOL)) $((TARGET + TOL)); then ok=$((ok + 1)); else ok=0; fi
	[ $ok -ge 3 ] && break
done
[ $ok -ge 3 ] || ctld_fail "job at $r % of full speed after 60 s, target $TARGET % ($(actl job show io))"
pass "the application runs at $r % of its full speed (target $TARGET %) after $((t * 2)) s"

# U below the target on every rank's reservation, as the controller shows it
for pid in $(job_rank_pids io); do
	u=$(vctl n1 task list --json | jq -r ".[] | select(.pid == $pid) | .util_pct")
	within "$u" 1 $((TARGET - 5)) || fail "rank pid $pid holds U $u %, not below the target"
	echo "rank pid $pid: U $u %"
done
cu=$(job_field io u_pct)
eff=$(job_field io efficiency)
within "$cu" 1 $((TARGET - 5)) || fail "controller shows U $cu %"
within "$eff" 1.1 10 || fail "controller shows efficiency $eff (expected above 1)"
[ "$(job_field io progress_signal)" = true ] || fail "a reporting job shows no progress signal"
wait_until 40 job_is io state stable || ctld_fail "state $(job_field io state), not stable"
actl top --once | grep -E '^io ' || fail "job missing from the dashboard"
pass "U $cu % below the target $TARGET %, efficiency $eff, stable"

# The paper's algorithm on the same job: U = target, and the job runs too fast.
# The rate is measured only over iterations that started after U reached the target: a
# window that reaches back into the floating phase (U 20 %, rate 40 %) reads too low.
u_at_target() { within "$(job_field io u_pct)" $((TARGET - 1)) $((TARGET + 1)); }
actl job set io --algorithm linear >/dev/null || ctld_fail "job set --algorithm refused"
wait_until 30 u_at_target || ctld_fail "linear: U $(job_field io u_pct) %, not the target"
sleep 2
from=$(wc -l <"$TMP/stamps")
sleep 8
r=$(tail -n +"$((from + 1))" "$TMP/stamps" | awk -v rmax="$RMAX" '{ t[NR] = $2 } END {
	if (NR < 3) { print "nan"; exit }
	printf "%.2f\n", 100 * (NR - 1) / ((t[NR] - t[1]) / 1e9) / rmax }')
cu=$(job_field io u_pct)
within "$cu" $((TARGET - 1)) $((TARGET + 1)) || fail "linear: U $cu %, not the target"
within "$r" $((TARGET + TOL)) 1000 || ctld_fail "linear: rate $r % since U reached the target: expected above $((TARGET + TOL)) % ($(actl job show io))"
pass "with U = target (linear) the same job runs at $r % for a $TARGET % target"
ctld_check_clean
