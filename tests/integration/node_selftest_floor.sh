# node_selftest_floor: a node's vsched measures at start the finest period it serves with
# < 1 % misses (its self-test, on by default), and the agent gives it to the controller
# (NODE_INFO), so that the controller never asks that node for a finer period:
#  - the controller takes vsched's answer (vschedctl status --json) as the node's period
#    floor (logged, node list --json floor_ns); a second self-test (vschedctl selftest)
#    replaces it;
#  - a job whose rank joins that node afterwards shows that floor (job show --json);
#  - an agent that starts again sends it again; the node keeps its floor: a job that joins
#    after has it too;
#  - node list --json shows the node's per-CPU admission cap as its vsched states it.
# Bounded: the whole test runs under a 100 s timeout.
if [ -z "${CTLD_TEST_TIMED:-}" ]; then
	CTLD_TEST_TIMED=1 exec timeout -k 5 100 bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"
source "$VS_SRC/tests/helpers/ctld_lib.sh"
ctld_test_begin vsched vsched-agent vsched-controller ctlpeer

start_ctld
start_node n1 0 # its vsched runs the self-test at start (start_node's config keeps the default)

# vsched's own answer, once its self-test has ended (a few seconds on an idle CPU)
selftest_over() {
	ST=$(vctl n1 status --json) || return 1
	[ "$(jq -r .selftest <<<"$ST")" != running ]
}
wait_until 20 selftest_over || ctld_fail "n1's self-test still running after 20 s: $ST"
[ "$(jq -r .selftest <<<"$ST")" = done ] || ctld_fail "n1's self-test did not finish: $ST"
P=$(jq -r .min_period_ns <<<"$ST")

# the node's admission cap as its vsched states it, in node list (the co-scheduling planner
# keeps every CPU under it)
CAP=$(jq -r .cap_pct <<<"$ST")
node_cap() { actl node list --json | jq -r '.[] | select(.name == "n1") | .cpu_cap_pct'; }
cap_is() { awk -v a="$(node_cap)" -v b="$CAP" 'BEGIN { exit !(a != "null" && a - b < 0.01 && b - a < 0.01) }'; }
wait_until 5 cap_is || ctld_fail "node list: n1's cap $(node_cap) %, its vsched's $CAP %"
pass "node list shows n1's per-CPU admission cap, $CAP % as its vsched states it"
sent() { grep -c 'node info sent' "$TMP/agent-n1.log" || true; }
if [ "$P" = 0 ]; then
	# no period up to 100 ms served with < 1 % misses: nothing to take, nothing taken
	wait_until 5 grep -q 'node info sent: vsched self-test found none' "$TMP/agent-n1.log" ||
		ctld_fail "agent did not report the self-test's outcome"
	grep -q "node n1: vsched's self-test" "$TMP/ctld.log" && ctld_fail "a floor taken from no figure"
	pass "n1's self-test found no period under 1 % misses (a busy machine): no floor taken"
	exit 0
fi
PMS=$(awk -v p="$P" 'BEGIN { printf "%g", p / 1e6 }')
wait_until 5 grep -q "node n1: vsched's self-test serves periods down to" "$TMP/ctld.log" ||
	ctld_fail "the controller did not take n1's self-test ($P ns)"
pass "n1's vsched serves periods down to $PMS ms; the controller took it: $(grep -o "node n1: vsched's self-test.*" "$TMP/ctld.log" | head -1)"

node_floor() { actl node list --json | jq -r '.[] | select(.name == "n1") | .floor_ns'; }
[ "$(node_floor)" = "$P" ] || ctld_fail "node list: n1's floor $(node_floor) ns, its self-test $P ns"

# A new self-test replaces the last figure (lower or higher; a busy start-up measures coarser).
out=$(vctl n1 selftest --wait) || ctld_fail "selftest --wait on n1: $out"
ST=$(vctl n1 status --json)
[ "$(jq -r .selftest <<<"$ST")" = done ] || ctld_fail "n1's second self-test did not finish: $ST"
P2=$(jq -r .min_period_ns <<<"$ST")
floor_is() { [ "$(node_floor)" = "$1" ]; }
if [ "$P2" != 0 ]; then
	wait_until 5 floor_is "$P2" || ctld_fail "n1's floor $(node_floor) ns after a self-test that found $P2 ns"
	P=$P2
fi
PMS=$(awk -v p="$P" 'BEGIN { printf "%g", p / 1e6 }')
pass "a second self-test ($P2 ns) replaced the first: node list shows n1's floor $PMS ms"

start_rank n1 jobA 0
wait_until 5 job_is jobA ranks 1 || ctld_fail "jobA's rank not known: $(actl job list --json)"
actl job set jobA --rmax 1000 >/dev/null || ctld_fail "job set --rmax refused"
actl rate jobA 30 >/dev/null || ctld_fail "rate jobA 30 refused: $(actl rate jobA 30 2>&1)"
floor=$(actl job show jobA --json | jq -r .floor_ns)
[ "$floor" = "$P" ] || ctld_fail "jobA's floor $floor ns, n1's self-test says $P ns"
actl job show jobA | grep -q 'period floor of its nodes' || ctld_fail "job show: $(actl job show jobA)"
pass "jobA on n1: period floor $PMS ms (job show)"

n=$(sent)
kill_agent n1
restart_agent n1
sent_more() { [ "$(sent)" -gt "$n" ]; } # counted again at every poll
wait_until 5 sent_more || ctld_fail "the restarted agent did not send the node info again"
# the old agent's ranks went with it (they registered with it); a new job's rank gets the floor
start_rank n1 jobB 0
wait_until 5 job_is jobB ranks 1 || ctld_fail "jobB's rank not known: $(actl job list --json)"
floor=$(actl job show jobB --json | jq -r .floor_ns)
[ "$floor" = "$P" ] || ctld_fail "jobB's floor $floor ns after the agent's restart, n1's is $P ns"
pass "a restarted agent sends it again; n1's floor stays $PMS ms (jobB, joined after)"
ctld_check_clean
