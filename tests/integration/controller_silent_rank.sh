# controller_silent_rank: a rank that stops reporting progress is shown, not hidden. A node
# (fakeagent, acknowledging every constraint) runs job "quiet" rank 0, which reports 10
# units every 100 ms for 4 s and then falls silent while its node stays up (a hung or
# blocked process). With a target set:
#  - while it reports, `job show` gives no silence reason;
#  - once nothing came from it for 10 s (the floor; 5 of its usual gaps would be 0.5 s),
#    `job show` (text and --json) names the rank, its node and pid and how long it has
#    been silent; the controller keeps serving and exits cleanly;
#  - the job ran at 100 % of R_max, so the floating loop had cut its U far below the target
#    of 40 %: silent there (as a job starved by too small a U is), its U is raised to the
#    target, once, with a line in the log.
# No scheduler involved. Bounded: the whole test runs under a 60 s timeout.
if [ -z "${SILENT_TEST_TIMED:-}" ]; then
	SILENT_TEST_TIMED=1 exec timeout -k 5 60 bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"
source "$VS_SRC/tests/helpers/ctld_lib.sh"
ctld_need vsched-controller vschedctl fakeagent

start_ctld
"$VS_BIN/fakeagent" "$CTLD_AGENTS" n1 accept 40 quiet 4 >"$TMP/fa.out" 2>&1 &
FA_PID=$!
PIDS+=("$FA_PID")
wait_until 3 job_is quiet ranks 1 || ctld_fail "the fake node's rank was not seen"
actl job set quiet --rmax 100 >/dev/null || ctld_fail "job set --rmax refused"
actl rate quiet 40 >/dev/null || ctld_fail "rate refused"

reason() { actl job show quiet --json | jq -r .reason; }
evaluated() { [ "$(job_field quiet evaluations)" -ge 1 ] 2>/dev/null; }
# the first evaluation spans the length the slice's phase asks for (2.45 s at U 40, 100 ms)
wait_until 4 evaluated ||
	ctld_fail "no evaluation while the rank reported ($(actl job show quiet))"
r=$(reason)
case "$r" in *silent*) ctld_fail "a reporting rank shown silent: $r" ;; esac
u_quiet=$(job_field quiet u_pct)
awk -v u="$u_quiet" 'BEGIN { exit !(u < 30) }' ||
	ctld_fail "U $u_quiet: a job at 100 % of R_max for a 40 % target was not cut below 30 %"
pass "while rank 0 reports: no silence reason (reason: '${r}'), U cut to $u_quiet %"

for _ in $(seq 1 20); do
	reason | grep -q 'silent for' && break
	sleep 1
done
r=$(reason)
grep -Eq "^rank 0 \(node n1, pid $FA_PID\) silent for [1-9][0-9] s: no progress reported" <<<"$r" ||
	fail "silence reason does not name the rank, node, pid and time: $r"
actl job show quiet | grep -q "reason: rank 0 (node n1, pid $FA_PID) silent for" ||
	fail "job show (text) does not show the silence: $(actl job show quiet)"
pass "rank 0 silent since 4 s: $r"

for _ in $(seq 1 10); do
	awk -v u="$(job_field quiet u_pct)" 'BEGIN { exit !(u > 39.9 && u < 40.1) }' && break
	sleep 0.5
done
u=$(job_field quiet u_pct)
awk -v u="$u" 'BEGIN { exit !(u > 39.9 && u < 40.1) }' ||
	ctld_fail "silent at U $u_quiet %: U $u, not raised to the target 40 %"
grep -q "job quiet: no progress report for [0-9]* s at U [0-9.]* %: U raised to 40.0 %" \
	"$TMP/ctld.log" || ctld_fail "the silence rescue is not in the log"
[ "$(grep -c 'job quiet: no progress report' "$TMP/ctld.log")" = 1 ] ||
	ctld_fail "the silence rescue was logged more than once"
pass "silent at U $u_quiet %: U raised to its target, $u %, once"

kill -0 "$FA_PID" 2>/dev/null || fail "the fake node ended early: $(cat "$TMP/fa.out")"
node_up n1 || fail "the fake node's link went down: the rank was silent, not its node"
ctld_check_clean
