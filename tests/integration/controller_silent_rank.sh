# controller_silent_rank: a rank that stops reporting progress is shown, not hidden. A node
# (fakeagent, acknowledging every constraint) runs job "quiet" rank 0, which reports 10
# units every 100 ms for 4 s and then falls silent while its node stays up (a hung or
# blocked process). With a target set:
#  - while it reports, `job show` gives no silence reason;
#  - once nothing came from it for 10 s (the floor; 5 of its usual gaps would be 0.5 s),
#    `job show` (text and --json) names the rank, its node and pid and how long it has
#    been silent; the controller keeps serving and exits cleanly.
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
sleep 2
r=$(reason)
case "$r" in *silent*) ctld_fail "a reporting rank shown silent: $r" ;; esac
[ "$(job_field quiet evaluations)" -ge 1 ] 2>/dev/null ||
	ctld_fail "no evaluation while the rank reported ($(actl job show quiet))"
pass "while rank 0 reports: no silence reason (reason: '${r}')"

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

kill -0 "$FA_PID" 2>/dev/null || fail "the fake node ended early: $(cat "$TMP/fa.out")"
node_up n1 || fail "the fake node's link went down: the rank was silent, not its node"
ctld_check_clean
