#!/usr/bin/env bash
# A vsched cluster of N nodes on one machine, each node a network namespace (docs/multinode.md).
#
#   netns-cluster.sh up N [--controller-conf FILE] [--agent-conf FILE] [--vsched-conf FILE]
#   netns-cluster.sh run JOB [--ranks-per-node K] [--target PCT] [--rmax R|measure] [--wait]
#                         -- BSP_ARGS...
#   netns-cluster.sh status        the controller's dashboard (vschedctl top --once)
#   netns-cluster.sh env           shell lines to talk to the daemons with vschedctl
#   netns-cluster.sh down          stops everything it started, deletes the namespaces
#
# Namespaces vs-sw (a bridge, the "switch"), vs-ctl (controller, 10.77.0.1) and vs-node1..N
# (10.77.0.11, .12, ...: a vsched on the node's own CPUs and a vsched-agent), joined by veth
# pairs; the root namespace's interfaces, routes and firewall are not touched.
# Environment: VS_NETNS_STATE (state directory, default /run/vsched-netns), VS_BIN (binaries,
# default build/bin of this tree), VS_NETNS_PREFIX (namespace names, default vs-),
# VS_NETNS_SUBNET (default 10.77.0), VS_NETNS_CPUS (CPUs to split, default the online ones),
# VS_NETNS_KEEP=1 (down keeps the state directory with the logs).
# Needs root.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
export VS_BIN=${VS_BIN:-$SRC/build/bin}
NETNS_STATE=${VS_NETNS_STATE:-/run/vsched-netns}
NETNS_PREFIX=${VS_NETNS_PREFIX:-vs-}
NETNS_SUBNET=${VS_NETNS_SUBNET:-10.77.0}
NETNS_CPUS=${VS_NETNS_CPUS:-}
# shellcheck source=../tests/helpers/netns_lib.sh
source "$SRC/tests/helpers/netns_lib.sh"

me=$(basename "$0")
usage() {
	sed -n '3,9p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}
die() {
	echo "$me: $*" >&2
	exit 1
}

# A cluster recorded in the state directory uses the settings it was created with.
if [ -f "$NETNS_STATE/cluster" ]; then
	NETNS_PREFIX=$(netns_get prefix)
	NETNS_SUBNET=$(netns_get subnet)
	NETNS_CTL_PORT=$(netns_get ctl_port)
	VS_BIN=$(netns_get bin)
fi

is_up() { [ "$(netns_get up)" = 1 ]; }

cmd_up() {
	local n=${1:-} f
	[ -n "$n" ] || usage
	shift
	while [ $# -gt 0 ]; do
		case $1 in
		--controller-conf | --agent-conf | --vsched-conf)
			[ $# -ge 2 ] && [ -r "$2" ] || die "$1: needs a readable file"
			case $1 in
			--controller-conf) NETNS_CTL_EXTRA=$(cat "$2") ;;
			--agent-conf) NETNS_AGENT_EXTRA=$(cat "$2") ;;
			--vsched-conf) NETNS_VSCHED_EXTRA=$(cat "$2") ;;
			esac
			shift 2
			;;
		*) usage ;;
		esac
	done
	netns_check || exit 1
	if is_up; then
		[ "$(netns_nodes)" = "$n" ] ||
			die "a cluster of $(netns_nodes) nodes is up ($NETNS_STATE); '$me down' first"
		netns_healthy || die "the cluster in $NETNS_STATE is damaged: '$me down', then up again"
		echo "already up: $n node(s) ($NETNS_STATE)"
		return 0
	fi
	# Left over from an interrupted up or a lost state: undo what is recorded first.
	netns_down >/dev/null 2>&1 || true
	netns_probe || exit 1
	mkdir -p "$NETNS_STATE"
	netns_up "$n" || die "up failed; nothing of it is left"
	echo "up: $n node(s), controller in $(netns_ns ctl) at $(netns_agents_ep)"
	for ((f = 1; f <= n; f++)); do
		echo "  node$f: namespace $(netns_ns "node$f"), $(netns_addr "node$f"), CPUs $(netns_get "node${f}_cpus")"
	done
	echo "state and logs: $NETNS_STATE;  '$me status' for the dashboard, '$me down' to stop"
}

# netns_healthy: every recorded daemon still runs and every namespace exists.
netns_healthy() {
	local pid st role ns
	while read -r pid st role; do
		[[ $role == rank:* ]] && continue
		netns_alive "$pid" "$st" || { echo "$me: $role (pid $pid) is gone" >&2; return 1; }
	done <"$NETNS_STATE/pids"
	while read -r ns; do
		[ -e "/run/netns/$ns" ] || { echo "$me: namespace $ns is gone" >&2; return 1; }
	done <"$NETNS_STATE/namespaces"
}

# rmax_key K BSP_ARGS..: what decides a job's full speed: ranks per node and bsp's
# arguments without --duration/--iterations.
rmax_key() {
	local out=("k=$1")
	shift
	while [ $# -gt 0 ]; do
		case $1 in
		--duration | --iterations) shift 2 || shift ;;
		*) out+=("$1"); shift ;;
		esac
	done
	echo "${out[*]}"
}

# running_ranks: pids of recorded ranks still running.
running_ranks() {
	local pid st role
	while read -r pid st role; do
		[[ $role == rank:* ]] && netns_alive "$pid" "$st" && echo "$pid"
	done <"$NETNS_STATE/pids"
	return 0
}

cmd_run() {
	local job=${1:-} k=1 target= rmax= wait= n key
	[ -n "$job" ] && [ "$job" != -- ] || usage
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		case $1 in
		--ranks-per-node) k=${2:?}; shift 2 ;;
		--target) target=${2:?}; shift 2 ;;
		--rmax) rmax=${2:?}; shift 2 ;;
		--wait) wait=1; shift ;;
		*) usage ;;
		esac
	done
	[ "${1:-}" = -- ] || usage
	shift
	netns_check || exit 1
	is_up || die "no cluster is up ($NETNS_STATE): '$me up 2' first"
	n=$(netns_nodes)
	if [ "$rmax" = measure ]; then
		# The same ranks per node and bsp arguments (but for their length) measured before:
		# take that figure. Measured now beside running jobs it would come out too low.
		key=$(rmax_key "$k" "$@")
		rmax=$(awk -F'\t' -v k="$key" '$2 == k { r = $1 } END { print r }' "$NETNS_STATE/rmax" 2>/dev/null)
		if [ -n "$rmax" ]; then
			echo "R_max = $rmax iterations/s (measured before for the same ranks and arguments)"
		else
			if [ -n "$(running_ranks)" ]; then
				echo "$me: warning: ranks of other jobs are running: the measured R_max will be too low (give --rmax R instead)" >&2
			fi
			echo "measuring $job's full speed: $((n * k)) ranks, not under vsched, pinned to their node's CPUs at SCHED_FIFO 1, 3 s ..."
			rmax=$(NETNS_RT=1 netns_measure_rmax "$job" "$k" "$@") || exit 1
			printf '%s\t%s\n' "$rmax" "$key" >>"$NETNS_STATE/rmax"
			echo "R_max = $rmax iterations/s (the slowest rank)"
		fi
	fi
	netns_run_job "$job" "$k" "$@" || exit 1
	echo "$job: $((n * k)) rank(s) started, $k per node (output: $NETNS_STATE/jobs/$job/)"
	if ! netns_wait_until 15 netns_job_is "$job" ranks $((n * k)); then
		die "$job: the controller does not see its $((n * k)) ranks after 15 s (ranks' output: $NETNS_STATE/jobs/$job/rank-*.out)"
	fi
	if [ -n "$rmax" ]; then netns_actl job set "$job" --rmax "$rmax"; fi
	if [ -n "$target" ]; then netns_actl rate "$job" "$target"; fi
	if [ -n "$wait" ]; then
		netns_job_wait "$job" || echo "$me: $job: a rank failed (see $NETNS_STATE/jobs/$job/)" >&2
		cat "$NETNS_STATE/jobs/$job"/rank-*.out
	fi
}

cmd_status() {
	local i
	is_up || die "no cluster is up ($NETNS_STATE)"
	netns_actl top --once
	for ((i = 1; i <= $(netns_nodes); i++)); do
		echo
		echo "node$i ($(netns_ns "node$i"), CPUs $(netns_get "node${i}_cpus")): vschedctl -s $(netns_vsched_ep "$i") task list"
		netns_vctl "$i" task list || true
	done
}

cmd_env() {
	is_up || die "no cluster is up ($NETNS_STATE)"
	echo "export VSCHED_CONTROLLER=$(netns_admin_ep)"
	local i
	for ((i = 1; i <= $(netns_nodes); i++)); do
		echo "export VSCHED_NODE${i}=$(netns_vsched_ep "$i")   # vschedctl -s \$VSCHED_NODE${i} task list"
	done
}

cmd_down() {
	[ "$(id -u)" = 0 ] || die "needs root"
	if [ ! -f "$NETNS_STATE/cluster" ]; then
		echo "nothing to do: no cluster recorded in $NETNS_STATE"
		return 0
	fi
	netns_down || die "down: some things could not be removed (see above)"
	if [ -n "${VS_NETNS_KEEP:-}" ]; then
		echo "down: every process stopped, namespaces deleted; logs kept in $NETNS_STATE"
	else
		rm -rf "$NETNS_STATE"
		echo "down: every process stopped, namespaces deleted, $NETNS_STATE removed"
	fi
}

case ${1:-} in
up) shift; cmd_up "$@" ;;
run) shift; cmd_run "$@" ;;
status) cmd_status ;;
env) cmd_env ;;
down) cmd_down ;;
*) usage ;;
esac
