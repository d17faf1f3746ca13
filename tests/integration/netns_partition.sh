# netns_partition: a node cut off from the controller for 10 s and back (tests/helpers/
# netns_lib.sh: two namespace-nodes, the agents linked to the controller by CURVE over a
# veth network). A job with one rank on each node (idle processes under `vschedctl job
# run` + ctlpeer push: REGISTER; R_max given) at 30 %:
#  - before: both nodes hold the same reservation, the job's committed constraint;
#  - node2's switch port goes down for 10 s: the controller shows node2 down; node2's
#    reservation stays in force meanwhile (its agent keeps constraints while the link is
#    lost); a new target (50 %) set during the partition commits on the node that is up;
#  - the port comes back: node2's agent registers again by itself, re-announces its rank,
#    and receives the committed constraint: both nodes hold the same reservation again
#    (none half-applied), the job still has its 2 ranks and its target (nothing lost);
#  - no sanitizer report and a clean exit from every daemon; namespaces removed.
# Skips (77) when namespaces cannot be made here. Bounded: 150 s.
if [ -z "${PART_TEST_TIMED:-}" ]; then
	PART_TEST_TIMED=1 exec timeout -k 5 150 bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"
source "$VS_SRC/tests/helpers/netns_test_lib.sh"

[ -x "$VS_BIN/ctlpeer" ] || skip "ctlpeer not built"
netns_test_begin vs-p

# resv I PID: "slice/period" (ns) of PID in node I's vsched, "" when it has none.
resv() { netns_vctl "$1" task list --json | jq -r ".[] | select(.pid == $2) | \"\(.slice_ns)/\(.period_ns)\""; }
# same_everywhere: both ranks hold the same reservation, a real one.
same_everywhere() {
	local a b
	a=$(resv 1 "$P1") b=$(resv 2 "$P2")
	[ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" != "0/0" ]
}
node_state() { netns_actl node list --json | jq -r ".[] | select(.name == \"$1\") | .up"; }
node2_down() { [ "$(node_state node2)" = false ]; }
node1_moved() { [ "$(resv 1 "$P1")" != "$BEFORE" ]; }

rt_lock 140
T_START=$SECONDS
netns_up 2 || fail "netns_up 2 failed"
grep -q 'agents: listening on tcp://.* (CURVE' "$NETNS_STATE/ctl/controller.log" ||
	fail "the controller's agents' endpoint is not CURVE"
npass "2 namespace-nodes up, agents over CURVE to $(netns_agents_ep)"

# each rank registers itself with its node's agent (ctlpeer push: REGISTER self) and idles
netns_run_prog jobP 1 "$VS_BIN/ctlpeer" push "ipc://$NETNS_STATE/{node}/agent.sock" \
	"register:a00{rank}:jobP:{rank}:self" sleep:120000 || fail "jobP did not start"
netns_wait_until 15 netns_job_is jobP ranks 2 || fail "jobP's 2 ranks not seen"
netns_actl job set jobP --rmax 1000 >/dev/null || fail "job set --rmax refused"
netns_actl rate jobP 30 >/dev/null || fail "rate jobP 30 refused"
read -r _ _ P1 < <(awk '$1 == 0' "$NETNS_STATE/jobs/jobP/ranks")
read -r _ _ P2 < <(awk '$1 == 1' "$NETNS_STATE/jobs/jobP/ranks")
netns_wait_until 10 same_everywhere || fail "the reservations differ: node1 $(resv 1 "$P1"), node2 $(resv 2 "$P2")"
BEFORE=$(resv 1 "$P1")
npass "before: both nodes hold $BEFORE (ns slice/period)"

# --- the partition: node2's port on the switch down for 10 s ---
SW=$(netns_ns sw)
ip -n "$SW" link set vs-p-node2 down || fail "cannot take node2's port down"
PART_AT=$SECONDS
netns_wait_until 5 node2_down || fail "node2 not shown down during the partition"
netns_actl rate jobP 50 >/dev/null 2>"$TMP/rate.err" || fail "rate jobP 50 during the partition: $(cat "$TMP/rate.err")"
netns_wait_until 5 node1_moved || fail "node1 did not get the new target"
DURING1=$(resv 1 "$P1")
[ "$(resv 2 "$P2")" = "$BEFORE" ] || fail "node2's reservation changed while cut off: $(resv 2 "$P2")"
npass "during: node2 down, its reservation $BEFORE stays in force; the new target committed on node1: $DURING1"
sleep $((10 - (SECONDS - PART_AT)))
[ "$(resv 2 "$P2")" = "$BEFORE" ] || fail "node2's reservation lost during the partition"
ip -n "$SW" link set vs-p-node2 up || fail "cannot bring node2's port up"
npass "node2 cut off for $((SECONDS - PART_AT)) s"

# --- back: node2 rejoins by itself and converges on the committed constraint ---
netns_wait_until 20 netns_node_up node2 || fail "node2 did not rejoin within 20 s"
REJOIN=$((SECONDS - PART_AT))
netns_wait_until 10 same_everywhere || fail "after the rejoin: node1 $(resv 1 "$P1"), node2 $(resv 2 "$P2")"
[ "$(resv 2 "$P2")" = "$DURING1" ] || fail "node2 holds $(resv 2 "$P2"), the committed one is $DURING1"
[ "$(netns_job_field jobP ranks)" = 2 ] && [ "$(netns_job_field jobP nodes)" = 2 ] ||
	fail "jobP lost ranks: $(netns_actl job show jobP)"
[ "$(netns_job_field jobP target_pct)" = 50 ] || fail "jobP's target: $(netns_job_field jobP target_pct)"
grep -q 'node node2 registered again' "$NETNS_STATE/ctl/controller.log" || fail "no re-registration logged"
npass "after: node2 rejoined by itself ${REJOIN} s after the cut; both nodes hold the committed $DURING1; 2 ranks, target 50 % kept"
for k in 1 2 3; do
	sleep 0.5
	same_everywhere || fail "the nodes diverged again: node1 $(resv 1 "$P1"), node2 $(resv 2 "$P2")"
done
npass "no constraint half-applied after the rejoin (3 readings)"

netns_stop 'rank:*'
netns_end_clean || fail "$NETNS_END_WHY"
npass "every daemon stopped cleanly; namespaces removed"
