# agent_stats_soon: a rank's CPU and reservation reach the controller right after it
# registers, not at the agent's next scheduled statistics round. A co-scheduling plan made
# before the controller knows on which CPU vsched pinned a process can give it windows that
# overlap another job's on that CPU (CI saw `vschedctl rate` refused so). Node n1 (vsched on
# CPUs 0 and 1) has an agent with stats_interval = 30s and the shipped provisional
# reservation (20 ms / 100 ms, which places new ranks under vsched); two ranks register one after the
# other: within 5 s the controller shows each with its provisional reservation (period and
# slice from the node's task statistics), then the daemons stop cleanly.
source "$(dirname "$0")/lib.sh"
source "$VS_SRC/tests/helpers/ctld_lib.sh"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
ctld_test_begin vsched vsched-agent vsched-controller vschedctl ctlpeer

start_ctld
NODE_STATS_INTERVAL=30s NODE_AGENT_LINES='provisional_period = "100ms"; provisional_slice = "20ms";' \
	start_node n1 "0, 1"
stats_seen() { # JOB RANK: the controller shows the rank's reservation from task statistics
	actl job show "$1" --json |
		jq -e --argjson r "$2" '.rank_list[] | select(.rank == $r) | .period_ns > 0 and .slice_ns > 0' >/dev/null
}
for r in 0 1; do
	t0=$(date +%s%N)
	start_rank n1 soon "$r"
	wait_until 5 job_is soon ranks $((r + 1)) || ctld_fail "rank $r not registered"
	wait_until 5 stats_seen soon "$r" ||
		ctld_fail "rank $r: no task statistics 5 s after registering (stats_interval 30 s): $(actl job show soon --json | jq -c .rank_list)"
	echo "rank $r: statistics at the controller $((($(date +%s%N) - t0) / 1000000)) ms after it started"
done
pass "each new rank's statistics reached the controller before the 30 s stats round"
agent_check_clean n1
ctld_check_clean
pass "agent stats soon"
