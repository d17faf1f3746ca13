# netns_two_nodes: multi-node end to end on one machine. Two nodes, each a network namespace
# with its own vsched (node1: the first CPU, node2: the second) and its own agent; the
# controller in a third namespace; the nodes reach it over veth pairs joined by a bridge in a
# fourth (tests/helpers/netns_lib.sh, docs/multinode.md). Two bsp jobs, each with one rank
# on each node (the ranks talk TCP over the veth network), at targets of 30 % and 40 %:
#  - the controller sees each job as 2 ranks on 2 nodes;
#  - both jobs reach target ± 5 points (3 readings in a row) within 60 s;
#  - on both nodes, every rank's reservation holds the job's U as the controller shows it
#    (± 1; floating: not necessarily the target) on the node's own CPU, and its measured CPU
#    share stays within it (at most U + 6 points);
#  - the agents see the ranks' traffic (per-rank and per-node network figures > 0);
#  - no sanitizer report and a clean exit from every daemon; namespaces removed.
# Full speed (R_max) is given: the slowest rank's rate in a 3 s run across both nodes before
# anything is managed, each rank pinned to its node's CPU at SCHED_FIFO 1 (so the figure is
# the speed a rank has in its real-time slices, whatever else loads this shared machine).
# Skips (77) when namespaces cannot be made here.
source "$(dirname "$0")/lib.sh"
source "$VS_SRC/tests/helpers/netns_test_lib.sh"

netns_test_begin vs-t
netns_delete_leftovers
DAEMONS_OK=
nfail() { fail "$*"; }

BSP_ARGS=(--compute 20ms --msg 16KiB)
TOL=5

rt_lock 90
T_START=$SECONDS
T0=$(date +%s)
netns_up 2 || nfail "netns_up 2 failed"
npass "2 namespace-nodes up in $(($(date +%s) - T0)) s: node1 CPU $(netns_get node1_cpus), node2 CPU $(netns_get node2_cpus), controller at $(netns_agents_ep)"
[ "$(netns_get node1_cpus)" != "$(netns_get node2_cpus)" ] || nfail "the nodes share CPUs"

RMAX=$(NETNS_RT=1 netns_measure_rmax full 1 "${BSP_ARGS[@]}") || nfail "could not measure the jobs' full speed"
echo "R_max = $RMAX iterations/s (slowest rank, one rank per node at SCHED_FIFO on its node's CPU, over the veth network)"

# The jobs outlive any load-slowed run of the checks below (the test stops them itself).
netns_run_job jobA 1 "${BSP_ARGS[@]}" --duration 240s || nfail "jobA did not start"
netns_run_job jobB 1 "${BSP_ARGS[@]}" --duration 240s || nfail "jobB did not start"
for job in jobA jobB; do
	netns_wait_until 15 netns_job_is "$job" ranks 2 || nfail "$job's 2 ranks not seen by the controller"
	netns_wait_until 5 netns_job_is "$job" nodes 2 || nfail "$job not seen on 2 nodes"
	netns_actl job set "$job" --rmax "$RMAX" >/dev/null || nfail "job set $job --rmax refused"
	nodes=$(netns_actl job show "$job" --json | jq -r '[.rank_list[] | "\(.rank)@\(.node)"] | sort | join(" ")')
	[ "$nodes" = "0@node1 1@node2" ] || nfail "$job: ranks on '$nodes', expected rank 0 on node1, rank 1 on node2"
done
npass "jobs seen by the controller: 2 ranks each, rank 0 on node1, rank 1 on node2"

netns_actl rate jobA 30 >/dev/null || nfail "rate jobA 30 refused"
netns_actl rate jobB 40 >/dev/null || nfail "rate jobB 40 refused"

# Both jobs until each has had 3 readings in a row within TOL of its target (<= 60 s).
declare -A TARGET=([jobA]=30 [jobB]=40) OK=() DONE=()
T0=$(date +%s%N)
while [ $(($(date +%s%N) - T0)) -lt 60000000000 ]; do
	sleep 0.5
	for job in jobA jobB; do
		[ -z "${DONE[$job]:-}" ] || continue
		cur=$(netns_job_field "$job" current_pct)
		tg=${TARGET[$job]}
		if within "$cur" $((tg - TOL)) $((tg + TOL)); then OK[$job]=$((${OK[$job]:-0} + 1)); else OK[$job]=0; fi
		if [ "${OK[$job]}" -ge 3 ]; then
			DONE[$job]=1
			echo "$job: $cur % for target $tg % after $(awk -v a="$T0" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }') s, $(netns_job_field "$job" evaluations) evaluations, period $(($(netns_job_field "$job" period_ns) / 1000000)) ms"
		fi
	done
	[ ${#DONE[@]} -lt 2 ] || break
done
for job in jobA jobB; do
	[ -n "${DONE[$job]:-}" ] ||
		nfail "$job did not reach ${TARGET[$job]} ± $TOL % in 60 s (now $(netns_job_field "$job" current_pct) %; $(netns_actl job show "$job"))"
done
npass "both jobs at their targets across two namespace-nodes"

# Every rank: reserved the job's U (the controller's, the same on both nodes) on its node's
# CPU; its measured CPU share is held by the reservation (at most U + 6 points; a rank that
# waits for its partner uses less). The controller keeps moving U (floating algorithm), so
# a rank may briefly hold the previous step's U while a new constraint is in flight: the
# comparison is repeated for up to 5 s until the controller's U is the same before and after
# the rank's is read.
# rank_rec NODE_INDEX PID: the rank's vsched record (one JSON line), empty if none.
rank_rec() { netns_vctl "$1" task list --json | jq -c ".[] | select(.pid == $2)"; }
for job in jobA jobB; do
	while read -r rank node pid; do
		i=${node#node}
		for _ in $(seq 10); do
			tg=$(netns_job_field "$job" u_pct)
			rec=$(rank_rec "$i" "$pid")
			[ -n "$rec" ] || nfail "$job rank $rank (pid $pid) not under $node's vsched"
			util=$(jq -r .util_pct <<<"$rec")
			[ "$(netns_job_field "$job" u_pct)" = "$tg" ] &&
				within "$util" "$(awk -v u="$tg" 'BEGIN { print u - 1 }')" "$(awk -v u="$tg" 'BEGIN { print u + 1 }')" && break
			sleep 0.5
		done
		cpu=$(jq -r .cpu <<<"$rec")
		[ "$cpu" = "$(netns_get "${node}_cpus")" ] || nfail "$job rank $rank on CPU $cpu, $node manages $(netns_get "${node}_cpus")"
		within "$util" "$(awk -v u="$tg" 'BEGIN { print u - 1 }')" "$(awk -v u="$tg" 'BEGIN { print u + 1 }')" ||
			nfail "$job rank $rank: U $util %, the controller's U $tg % (for 5 s)"
		sh=$(share "$pid" 2)
		within "$sh" "$(awk -v u="$tg" 'BEGIN { print u / 4 }')" "$(awk -v u="$tg" 'BEGIN { print u + 6 }')" ||
			nfail "$job rank $rank: CPU share $sh %, reservation U $tg %"
		echo "$job rank $rank ($node, CPU $cpu, pid $pid): U $util %, CPU share $sh %"
	done < <(netns_job_pids "$job")
done
npass "every rank reserved at its job's U on its own node, CPU shares held by it"

# Network figures: per rank (sock_diag in the node's namespace, or the bytes bsp reports)
# and per node (/proc/net/dev of the namespace: its veth).
for job in jobA jobB; do
	netns_actl job show "$job" --json | jq -e '[.rank_list[] | select(.net_bps > 0)] | length == 2' >/dev/null ||
		nfail "$job: no network traffic seen for some rank: $(netns_actl job show "$job" --json | jq -c '[.rank_list[] | {rank, node, net_bps}]')"
done
netns_actl node list --json | jq -e '[.[] | select(.net_used_bps > 0)] | length == 2' >/dev/null ||
	nfail "a node shows no network traffic: $(netns_actl node list --json | jq -c '[.[] | {name, net_used_bps, net_source}]')"
npass "ranks' and nodes' network traffic seen: $(netns_actl node list --json | jq -r '[.[] | "\(.name) \(.net_used_bps / 1000 | floor) kB/s"] | join(", ")')"

# Stop the jobs, then the daemons: each must exit 0 with no sanitizer report in its log.
netns_stop 'rank:*'
netns_end_clean || nfail "$NETNS_END_WHY"
npass "every daemon stopped cleanly (exit 0, no sanitizer report in daemons or ranks); namespaces and veth pairs removed"
