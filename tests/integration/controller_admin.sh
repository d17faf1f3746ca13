# controller_admin: the real vsched-controller with two "nodes" (each its own vsched on one
# CPU and its own vsched-agent) and a job with one rank on each:
#  - nodes register and the job's ranks are known (job list / node list / top --once); ranks
#    that never report progress show as "no progress signal yet" (nosig, progress_signal);
#  - bad admin requests are refused with a one-line reason, a non-zero exit, and nothing
#    changes: unknown job, 0, 101, -5, "abc";
#  - a valid target reaches every node's vsched (U = target at the initial period);
#  - a target one node cannot admit (its CPU is loaded by another reservation): with the
#    floating algorithm the target is kept and U bisected to the most that node admits (the
#    reason shown); with linear (U = target) it is refused with that node's reason and the
#    node that had accepted it is rolled back: never half-applied, the previous target
#    stays, the job shows `rejected`.
# Bounded: the whole test runs under a 100 s timeout.
if [ -z "${CTLD_TEST_TIMED:-}" ]; then
	CTLD_TEST_TIMED=1 exec timeout -k 5 100 bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"
source "$VS_SRC/tests/helpers/ctld_lib.sh"
ctld_test_begin vsched vsched-agent vsched-controller ctlpeer

start_ctld
start_job_on_two_nodes jobA
[ "$(job_field jobA nodes)" = 2 ] || ctld_fail "jobA not on 2 nodes"
[ "$(job_field jobA state)" = calibrating ] ||
	ctld_fail "new jobA not measuring R_max: $(job_field jobA state)"
# These ranks do not report progress: give R_max, so that targets apply at once.
actl job set jobA --rmax 1000 >/dev/null || ctld_fail "job set --rmax refused"
[ "$(job_field jobA state)" = idle ] && [ "$(job_field jobA r_max_source)" = given ] ||
	ctld_fail "jobA with R_max and no target: $(actl job list --json)"
pass "two nodes registered, jobA's ranks known on both; R_max given"
[ "$(job_field jobA progress_signal)" = false ] ||
	ctld_fail "jobA's ranks never reported, progress_signal $(job_field jobA progress_signal)"
actl job show jobA | grep -q "no progress signal yet (2 ranks registered" ||
	ctld_fail "job show jobA: $(actl job show jobA)"
actl top --once >"$TMP/top.txt" || ctld_fail "top --once failed"
grep -Eq '^jobA +2 +- ' "$TMP/top.txt" && grep -Eq '^n1 +[0-9]+ .* up ' "$TMP/top.txt" &&
	grep -Eq '^n2 +[0-9]+ .* up ' "$TMP/top.txt" || ctld_fail "dashboard: $(cat "$TMP/top.txt")"
grep -Eq '^jobA +2 .* nosig ' "$TMP/top.txt" || ctld_fail "dashboard: jobA not nosig: $(cat "$TMP/top.txt")"
awk 'length > 79 { exit 1 }' "$TMP/top.txt" || ctld_fail "dashboard wider than 79 columns"
pass "top --once: one frame, jobs and nodes, within 80 columns"

# Bad requests: one line on stderr, non-zero exit, nothing changed.
refused() { # EXPECTED_EXIT REGEX ARGS...
	local want=$1 re=$2 rc=0
	shift 2
	actl "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
	[ "$rc" = "$want" ] || ctld_fail "vschedctl $*: exit $rc, expected $want ($(cat "$TMP/err"))"
	[ "$(wc -l <"$TMP/err")" = 1 ] && grep -Eq "$re" "$TMP/err" ||
		ctld_fail "vschedctl $*: reason '$(cat "$TMP/err")' does not match /$re/"
	[ "$(job_field jobA target_pct)" = "${EXPECT_TARGET:-null}" ] ||
		ctld_fail "vschedctl $*: target changed to $(job_field jobA target_pct)"
	pass "vschedctl $* -> exit $rc: $(cat "$TMP/err")"
}
refused 1 "unknown job 'nosuch'" rate nosuch 40
refused 1 'target 0%: must be in \(0, 100\]' rate jobA 0
refused 1 'target 101%: must be in \(0, 100\]' rate jobA 101
refused 1 'target -5%: must be in \(0, 100\]' rate jobA -5
refused 2 "PERCENT 'abc': not a number" rate jobA abc
refused 1 "unknown job 'nosuch'" job show nosuch
[ -z "$(task_resv n1 "$R0")" ] && [ -z "$(task_resv n2 "$R1")" ] ||
	ctld_fail "a refused request put ranks under vsched"

# A valid target: every node runs U = 30 % at the initial period (100 ms in this config).
actl rate jobA 30 >"$TMP/out" 2>&1 || ctld_fail "rate jobA 30 refused: $(cat "$TMP/out")"
grep -q 'applied on 2 node' "$TMP/out" || ctld_fail "rate jobA 30: $(cat "$TMP/out")"
[ "$(task_resv n1 "$R0")" = 30000000/100000000 ] && [ "$(task_resv n2 "$R1")" = 30000000/100000000 ] ||
	ctld_fail "30 % not on both nodes: n1 $(task_resv n1 "$R0") n2 $(task_resv n2 "$R1")"
[ "$(job_field jobA target_pct)" = 30 ] || ctld_fail "target not 30"
pass "rate jobA 30: $(cat "$TMP/out")"

# Node n2's CPU gets another 50 % reservation: 45 % for jobA no longer fits there (cap 0.9),
# n1 accepts it first and must be rolled back.
spawn sleep 60
LOAD=$SPAWNED
vctl n2 task add "$LOAD" --period 100ms --slice 50ms >/dev/null || ctld_fail "load on n2 refused"
# The default (floating) algorithm keeps a target whose U the nodes cannot give: the target
# is set, U is bisected to the most n2 admits (40 %, within a point), the reason is shown.
actl rate jobA 45 >"$TMP/out" 2>&1 || ctld_fail "floating: rate jobA 45: $(cat "$TMP/out")"
grep -Eq 'target 45% set; U .* refused: node n2: .*holds U 30.0%' "$TMP/out" ||
	ctld_fail "floating: rate jobA 45: $(cat "$TMP/out")"
[ "$(job_field jobA target_pct)" = 45 ] || ctld_fail "floating: target $(job_field jobA target_pct), expected 45"
u_both() { # LO HI: both ranks' slice (ns at the 100 ms period) in [LO, HI]
	local a b
	a=$(task_resv n1 "$R0") b=$(task_resv n2 "$R1")
	[ "${a#*/}" = 100000000 ] && [ "$a" = "$b" ] && [ "${a%/*}" -ge "$1" ] && [ "${a%/*}" -le "$2" ]
}
wait_until 5 u_both 39000000 40000000 ||
	ctld_fail "floating: U not bisected to 39-40 %: n1 $(task_resv n1 "$R0") n2 $(task_resv n2 "$R1")"
actl job show jobA | grep -Eq 'reason: .*node n2' || ctld_fail "floating: job show without the reason: $(actl job show jobA)"
pass "floating: target 45 % kept, U $(task_resv n1 "$R0" | awk -F/ '{ printf "%.1f", 100 * $1 / $2 }') % on both nodes (n2 admits 40 %), reason shown"

# linear (the paper's U = target): the same target is refused whole and rolled back.
actl rate jobA 30 >/dev/null 2>&1 || ctld_fail "rate jobA 30 (back) refused: $(actl rate jobA 30 2>&1)"
actl job set jobA --algorithm linear >/dev/null || ctld_fail "job set --algorithm linear refused"
wait_until 5 u_both 30000000 30000000 || ctld_fail "linear at 30 %: n1 $(task_resv n1 "$R0") n2 $(task_resv n2 "$R1")"
EXPECT_TARGET=30 refused 1 "target 45% refused: node n2: " rate jobA 45
sleep 0.3 # the roll-back's acknowledgement
[ "$(task_resv n1 "$R0")" = 30000000/100000000 ] && [ "$(task_resv n2 "$R1")" = 30000000/100000000 ] ||
	ctld_fail "half-applied: n1 $(task_resv n1 "$R0") n2 $(task_resv n2 "$R1")"
[ "$(job_field jobA state)" = rejected ] || ctld_fail "state $(job_field jobA state), expected rejected"
actl job show jobA | grep -q 'reason: .*node n2' || ctld_fail "job show without the reason: $(actl job show jobA)"
grep -q 'previous constraint restored on 1 node' "$TMP/ctld.log" || ctld_fail "no roll-back logged"
pass "linear: 45 % refused by n2, rolled back on n1: both nodes still at 30 %, job rejected with the reason"

# Still usable: 35 % fits everywhere (50 + 35 <= 90) and clears the rejection.
actl rate jobA 35 >/dev/null 2>&1 || ctld_fail "rate jobA 35 refused: $(actl rate jobA 35 2>&1)"
[ "$(task_resv n1 "$R0")" = 35000000/100000000 ] && [ "$(task_resv n2 "$R1")" = 35000000/100000000 ] ||
	ctld_fail "35 % not on both nodes"
[ "$(job_field jobA state)" != rejected ] || ctld_fail "still rejected after an accepted change"
pass "rate jobA 35 after the refusal: applied on both nodes, state $(job_field jobA state)"

# Per-job settings through JOB_SET: algorithm and epsilon, refused when out of range.
actl job set jobA --algorithm linear --epsilon 2 >/dev/null || ctld_fail "job set refused"
[ "$(job_field jobA algorithm)" = linear ] && [ "$(job_field jobA epsilon_pct)" = 2 ] ||
	ctld_fail "job set not applied: $(actl job list --json)"
EXPECT_TARGET=35 refused 1 'epsilon 0: must be in \(0, 50\]' job set jobA --epsilon 0
pass "job set: algorithm linear, epsilon 2; epsilon 0 refused"
# The control loop end to end: a rank whose progress reports (through the real agent) say
# it runs at 10 % of R_max while its target is 30 % makes the linear algorithm shorten the
# period by delta_period (2 ms) per report, and every new period reaches vsched.
"$VS_BIN/ctlpeer" push "ipc://$TMP/agent-n1.sock" register:c0:jobC:0:self sleep:2500 \
	report:c0:0:1:100:1000000000 sleep:400 report:c0:0:2:100:1000000000 sleep:60000 \
	>>"$TMP/ranks.log" 2>&1 &
RC=$!
PIDS+=("$RC")
wait_until 5 job_is jobC ranks 1 || ctld_fail "jobC not announced"
actl job set jobC --rmax 1000 --algorithm linear >/dev/null || ctld_fail "job set jobC refused"
actl rate jobC 30 >/dev/null || ctld_fail "rate jobC 30 refused"
[ "$(task_resv n1 "$RC")" = 30000000/100000000 ] || ctld_fail "jobC: $(task_resv n1 "$RC")"
wait_until 5 job_is jobC period_ns 96000000 ||
	ctld_fail "jobC period after 2 reports at 10 %: $(job_field jobC period_ns)"
sleep 0.2
[ "$(task_resv n1 "$RC")" = 28800000/96000000 ] ||
	ctld_fail "jobC in vsched: $(task_resv n1 "$RC"), expected 28.8ms/96ms"
[ "$(job_field jobC current_pct)" = 10 ] && [ "$(job_field jobC err_pct)" = -20 ] ||
	ctld_fail "jobC rate: $(actl job show jobC --json)"
pass "control loop: reports at 10 % for a 30 % target -> period 100 -> 98 -> 96 ms in vsched, U kept at 30 %"
# A new target before the next report: ERR is the last rate against the target now (it
# showed the last evaluation's error against the old one: +0.9 for a job at 20.9 % of 40 %).
actl rate jobC 40 >/dev/null || ctld_fail "rate jobC 40 refused"
[ "$(job_field jobC current_pct)" = 10 ] && [ "$(job_field jobC err_pct)" = -30 ] ||
	ctld_fail "jobC after rate 40: $(actl job show jobC --json)"
pass "a new target: ERR at once against it (10 % of 40 %: -30)"

ctld_check_clean
