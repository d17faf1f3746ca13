# netns_lib.sh — several vsched "nodes" on one machine, each in its own network namespace.
# Sourced by scripts/netns-cluster.sh (the user-facing commands) and by the tests
# (tests/integration/netns_*.sh). See docs/multinode.md.
#
# Topology (prefix P, default "vs-"; subnet S, default 10.77.0):
#
#   namespace P"sw"  (the switch)   bridge vs-br0, ports vs-p-ctl, vs-p-node1, ...
#   namespace P"ctl"                vs-eth0 S.1/24   vsched-controller (agents: tcp://S.1:7710)
#   namespace P"nodeI"              vs-eth0 S.(10+I)/24  vsched (its own CPUs), vsched-agent,
#                                                        the job ranks placed there
#
# Every veth pair is created directly in the two namespaces it joins, so the root
# namespace's interfaces, routes and firewall are never touched. Node-local endpoints are ipc
# sockets in the state directory (filesystem sockets work across network namespaces), so
# `vschedctl -s` / `-C` reach every daemon from the root namespace too.
#
# State directory $NETNS_STATE (records what was created, so `down` undoes exactly that):
#   cluster           key=value: prefix, nodes, subnet, bin, cpus of each node
#   namespaces        the namespaces created, one per line, in creation order
#   pids              "PID STARTTIME ROLE" for every process started (start time from
#                     /proc/PID/stat guards against signalling a recycled pid)
#   ctl/              controller.conf, controller.log, controller.state, admin.sock,
#                     ctl + ctl_secret (its CURVE key), curve/agents/nodeI (allow-list)
#   nodeI/            vsched.conf, vsched.log, vsched.sock, agent.conf, agent.log, agent.sock,
#                     key + key_secret (its CURVE key, bound to nodeI)
#   jobs/JOB/         ports, ranks ("RANK NODE PID"), rank-R.out
#
# Functions (return non-zero with one line on stderr on failure; no `exit`):
#   netns_check                 root, iproute2, namespaces usable, binaries present
#   netns_up N                  everything above for N nodes (undone if any step fails)
#   netns_down                  stops what was started (by pid), deletes the namespaces
#   netns_start_controller      (re)starts the controller (after editing $NETNS_CTL_EXTRA)
#   netns_stop_controller
#   netns_end_clean             a test's end: daemons exit 0, no sanitizer report, netns_down
#   netns_run_job JOB K ARGS..  bsp ranks, K per node, over the veth addresses (ARGS: bsp's)
#   netns_run_prog JOB K CMD..  any program as the job's ranks (`vschedctl job run`), K per
#                               node; {rank} and {node} in CMD replaced
#   netns_job_pids JOB          the job's rank pids, one per line ("RANK NODE PID")
#   netns_actl ARGS..           vschedctl against the controller
#   netns_vctl I ARGS..         vschedctl against node I's vsched
#   netns_exec NAME CMD..       CMD inside namespace NAME (ctl, sw, node1, ...)
#   netns_addr NAME             the IPv4 address of ctl / nodeI
#   netns_vsched_ep I / netns_agent_ep I / netns_admin_ep / netns_agents_ep
#
# Knobs (set before netns_up):
#   NETNS_STATE        state directory (required)
#   NETNS_PREFIX       namespace name prefix (default vs-)
#   NETNS_SUBNET       first three octets (default 10.77.0)
#   NETNS_CTL_PORT     the controller's agent port (default 7710)
#   NETNS_CURVE        1 (default): the agents' link is CURVE, keys made by netns_up
#                      (docs/security.md); 0: unauthenticated (insecure = true)
#   VS_BIN             the build's bin directory
#   NETNS_CPUS         CPUs to split between the nodes (default: the online CPUs)
#   NETNS_CTL_EXTRA, NETNS_AGENT_EXTRA, NETNS_VSCHED_EXTRA
#                      extra libconfig lines for the controller / every agent / every vsched;
#                      a key given here replaces the harness's value for that key.

: "${NETNS_PREFIX:=vs-}"
: "${NETNS_SUBNET:=10.77.0}"
: "${NETNS_CTL_PORT:=7710}"
: "${NETNS_CURVE:=1}"
: "${NETNS_CTL_EXTRA:=}"
: "${NETNS_AGENT_EXTRA:=}"
: "${NETNS_VSCHED_EXTRA:=}"
NETNS_DEV=vs-eth0 # the interface inside each namespace
NETNS_BRIDGE=vs-br0

netns_err() { echo "netns: $*" >&2; }

netns_ns() { echo "${NETNS_PREFIX}$1"; }
netns_exec() {
	local n=$1
	shift
	ip netns exec "$(netns_ns "$n")" "$@"
}
netns_addr() {
	case $1 in
	ctl) echo "$NETNS_SUBNET.1" ;;
	node[0-9]*) echo "$NETNS_SUBNET.$((10 + ${1#node}))" ;;
	*) netns_err "no address for '$1'"; return 1 ;;
	esac
}
netns_admin_ep() { echo "ipc://$NETNS_STATE/ctl/admin.sock"; }
netns_agents_ep() { echo "tcp://$(netns_addr ctl):$NETNS_CTL_PORT"; }
netns_vsched_ep() { echo "ipc://$NETNS_STATE/node$1/vsched.sock"; }
netns_agent_ep() { echo "ipc://$NETNS_STATE/node$1/agent.sock"; }
netns_actl() { "$VS_BIN/vschedctl" -C "$(netns_admin_ep)" "$@"; }
netns_vctl() {
	local i=$1
	shift
	"$VS_BIN/vschedctl" -s "$(netns_vsched_ep "$i")" "$@"
}
# netns_get KEY: a value from $NETNS_STATE/cluster.
netns_get() { sed -n "s/^$1=//p" "$NETNS_STATE/cluster" 2>/dev/null | tail -1; }
netns_nodes() { netns_get nodes; }

# ---- checks -------------------------------------------------------------------------------

# netns_check: can this machine run the cluster? One line on stderr saying why not.
netns_check() {
	local b
	if [ "$(id -u)" != 0 ]; then
		netns_err "needs root (network namespaces, and vsched runs SCHED_FIFO)"
		return 1
	fi
	if ! command -v ip >/dev/null 2>&1; then
		netns_err "the 'ip' command (iproute2) is missing: apt-get install iproute2"
		return 1
	fi
	if ! ip netns list >/dev/null 2>&1; then
		netns_err "'ip netns' does not work here (iproute2 without netns support?)"
		return 1
	fi
	for b in vsched vsched-agent vsched-controller vschedctl bsp; do
		if [ ! -x "${VS_BIN:-}/$b" ]; then
			netns_err "${VS_BIN:-VS_BIN}/$b not found: build first (bash scripts/build.sh build)"
			return 1
		fi
	done
	if ! command -v jq >/dev/null 2>&1; then
		netns_err "jq is missing: apt-get install jq (or bash scripts/install-deps.sh)"
		return 1
	fi
	return 0
}

# netns_probe: can namespaces and veth pairs be created here? (creates and deletes one pair)
netns_probe() {
	local a="${NETNS_PREFIX}probe$$a" b="${NETNS_PREFIX}probe$$b" ok=0 err
	if ! err=$(ip netns add "$a" 2>&1); then
		netns_err "cannot create a network namespace: $err"
		return 1
	fi
	if ! err=$(ip netns add "$b" 2>&1); then
		ip netns del "$a" 2>/dev/null
		netns_err "cannot create a network namespace: $err"
		return 1
	fi
	if ! err=$(ip link add vs-pa netns "$a" type veth peer name vs-pb netns "$b" 2>&1); then
		netns_err "cannot create a veth pair: $err"
		ok=1
	elif ! err=$(ip -n "$a" link add vs-pbr type bridge 2>&1); then
		netns_err "cannot create a bridge: $err"
		ok=1
	fi
	ip netns del "$a" 2>/dev/null
	ip netns del "$b" 2>/dev/null
	return $ok
}

# ---- bookkeeping --------------------------------------------------------------------------

# netns_starttime PID: field 22 of /proc/PID/stat (after the command name, which may hold
# blanks and parentheses).
netns_starttime() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	s=${s##*) }
	set -- $s
	echo "${20}"
}

# netns_record PID ROLE
netns_record() {
	local st
	st=$(netns_starttime "$1") || st=0
	echo "$1 $st $2" >>"$NETNS_STATE/pids"
}

# netns_alive PID STARTTIME: the recorded process still runs (same start time, no zombie).
netns_alive() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	s=${s##*) }
	set -- "$2" $s
	[ "$2" != Z ] && [ "${21}" = "$1" ]
}

# netns_signal SIG ROLE_PATTERN: SIG to every recorded live process whose role matches.
netns_signal() {
	local sig=$1 pat=$2 pid st role
	[ -f "$NETNS_STATE/pids" ] || return 0
	while read -r pid st role; do
		# shellcheck disable=SC2053
		[[ $role == $pat ]] || continue
		# (|| true: under set -e, a process that exits between the check and the signal
		# would end the caller)
		if netns_alive "$pid" "$st"; then kill "-$sig" "$pid" 2>/dev/null || true; fi
	done <"$NETNS_STATE/pids"
	return 0
}

# netns_wait_gone SECONDS ROLE_PATTERN: until no recorded process of that role is alive.
netns_wait_gone() {
	local t=$(($1 * 10)) pat=$2 pid st role any
	[ -f "$NETNS_STATE/pids" ] || return 0
	while [ $t -gt 0 ]; do
		any=
		while read -r pid st role; do
			[[ $role == $pat ]] || continue
			netns_alive "$pid" "$st" && any=1 && break
		done <"$NETNS_STATE/pids"
		[ -z "$any" ] && return 0
		sleep 0.1
		t=$((t - 1))
	done
	return 1
}

# netns_stop ROLE_PATTERN: SIGTERM (and SIGCONT, for parked ranks), SIGKILL after 5 s.
netns_stop() {
	netns_signal TERM "$1"
	netns_signal CONT "$1"
	netns_wait_gone 5 "$1" && return 0
	netns_err "processes ($1) still alive 5 s after SIGTERM: SIGKILL"
	netns_signal KILL "$1"
	netns_wait_gone 2 "$1"
}

# netns_wait_until SECONDS CMD..: until CMD succeeds (every 100 ms).
netns_wait_until() {
	local t=$(($1 * 10))
	shift
	while [ $t -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
		t=$((t - 1))
	done
	return 1
}

# netns_conf OUT DEFAULTS EXTRA: libconfig file OUT from the DEFAULTS lines, each replaced by
# the EXTRA line setting the same key, plus the EXTRA lines with new keys.
netns_conf() {
	local out=$1 defaults=$2 extra=$3
	NETNS_CONF_EXTRA=$extra awk '
		function key(l) { sub(/^[ \t]+/, "", l); sub(/[ \t]*[=:].*$/, "", l); return l }
		BEGIN { n = split(ENVIRON["NETNS_CONF_EXTRA"], e, "\n"); for (i = 1; i <= n; i++) if (e[i] ~ /[=:]/) over[key(e[i])] = 1 }
		/[=:]/ && (key($0) in over) { next }
		{ print }
		END { for (i = 1; i <= n; i++) print e[i] }' <<<"$defaults" >"$out"
}

# netns_cpu_list: the CPUs to split ("0 1 2 ..."), from NETNS_CPUS or the online set.
netns_cpu_list() {
	local spec=${NETNS_CPUS:-$(cat /sys/devices/system/cpu/online)} part a b out=()
	spec=${spec//[[:space:]]/}
	IFS=, read -r -a parts <<<"$spec"
	for part in "${parts[@]}"; do
		if [[ $part == *-* ]]; then
			a=${part%-*} b=${part#*-}
			while [ "$a" -le "$b" ]; do out+=("$a"); a=$((a + 1)); done
		elif [ -n "$part" ]; then
			out+=("$part")
		fi
	done
	echo "${out[*]}"
}

# ---- up / down ----------------------------------------------------------------------------

# netns_add_ns NAME: creates namespace P"NAME" (recorded), loopback up.
netns_add_ns() {
	local ns err
	ns=$(netns_ns "$1")
	if ip netns list | awk '{ print $1 }' | grep -qx -- "$ns"; then
		netns_err "namespace $ns exists already (another cluster, or left over: ip netns del $ns)"
		return 1
	fi
	err=$(ip netns add "$ns" 2>&1) || { netns_err "ip netns add $ns: $err"; return 1; }
	echo "$ns" >>"$NETNS_STATE/namespaces"
	ip -n "$ns" link set lo up
}

# netns_link NAME: veth pair switch:vs-p-NAME <-> NAME:vs-eth0, address, up.
netns_link() {
	local n=$1 sw ns addr err
	sw=$(netns_ns sw)
	ns=$(netns_ns "$n")
	addr=$(netns_addr "$n") || return 1
	err=$(ip link add "vs-p-$n" netns "$sw" type veth peer name "$NETNS_DEV" netns "$ns" 2>&1) ||
		{ netns_err "veth for $n: $err"; return 1; }
	ip -n "$sw" link set "vs-p-$n" master "$NETNS_BRIDGE" &&
		ip -n "$sw" link set "vs-p-$n" up &&
		ip -n "$ns" addr add "$addr/24" dev "$NETNS_DEV" &&
		ip -n "$ns" link set "$NETNS_DEV" up
}

# netns_spawn ROLE NAME LOG CMD..: CMD in namespace NAME, detached (own session, stdin
# /dev/null, output to LOG), recorded under ROLE. Sets NETNS_PID. `ip netns exec` and
# setsid (the child is no process-group leader) exec in place: the pid is CMD's.
netns_spawn() {
	local role=$1 n=$2 log=$3
	shift 3
	ip netns exec "$(netns_ns "$n")" setsid "$@" </dev/null >>"$log" 2>&1 &
	NETNS_PID=$!
	netns_record "$NETNS_PID" "$role"
}

# netns_keys N: CURVE keys for the controller and nodes 1..N, node keys in its allow-list.
netns_keys() {
	local n=$1 i c="$NETNS_STATE/ctl"
	rm -rf "$c/curve" "$c/ctl" "$c/ctl_secret"
	mkdir -p "$c/curve/agents" "$c/curve/admins" || return 1
	"$VS_BIN/vschedctl" keygen "$c/ctl" >/dev/null || { netns_err "keygen failed"; return 1; }
	for ((i = 1; i <= n; i++)); do
		mkdir -p "$NETNS_STATE/node$i"
		rm -f "$NETNS_STATE/node$i/key" "$NETNS_STATE/node$i/key_secret"
		"$VS_BIN/vschedctl" keygen "$NETNS_STATE/node$i/key" --node "node$i" >/dev/null &&
			cp "$NETNS_STATE/node$i/key" "$c/curve/agents/node$i" || return 1
	done
}

# The security lines of the controller's / node I's agent's configuration.
netns_ctl_security() {
	if [ "$NETNS_CURVE" = 1 ]; then
		printf 'curve_key = "%s";\nallow_dir = "%s";\n' "$NETNS_STATE/ctl/ctl_secret" \
			"$NETNS_STATE/ctl/curve"
	else
		echo 'insecure = true;'
	fi
}
netns_agent_security() {
	if [ "$NETNS_CURVE" = 1 ]; then
		printf 'curve_key = "%s";\ncontroller_key = "%s";\n' "$NETNS_STATE/node$1/key_secret" \
			"$NETNS_STATE/ctl/ctl"
	else
		echo 'insecure = true;'
	fi
}

netns_ctl_conf() {
	netns_conf "$NETNS_STATE/ctl/controller.conf" "$(
		cat <<EOF
heartbeat = "250ms";
node_timeout = "1s";
ack_timeout = "2s";
initial_period = "100ms";
$(netns_ctl_security)
EOF
	)" "$NETNS_CTL_EXTRA"
}

# netns_start_controller: the controller in namespace ctl, agents on the veth address,
# admin on an ipc socket in the state directory. Waits until it answers.
netns_start_controller() {
	local log="$NETNS_STATE/ctl/controller.log" out
	netns_ctl_conf
	if ! out=$("$VS_BIN/vsched-controller" -n -c "$NETNS_STATE/ctl/controller.conf" 2>&1); then
		netns_err "controller configuration refused: $out"
		return 1
	fi
	netns_spawn controller ctl "$log" "$VS_BIN/vsched-controller" -f -v \
		-c "$NETNS_STATE/ctl/controller.conf" -A "$(netns_agents_ep)" -a "$(netns_admin_ep)" \
		-S "$NETNS_STATE/ctl/controller.state"
	if ! netns_wait_until 5 netns_actl node list; then
		netns_err "the controller does not answer (log: $log): $(tail -3 "$log")"
		return 1
	fi
}

netns_stop_controller() { netns_stop controller; }

# netns_start_node I CPUS: vsched on CPUS (comma-separated) and the agent, in namespace nodeI.
netns_start_node() {
	local i=$1 cpus=$2 d="$NETNS_STATE/node$1" out ncpus
	mkdir -p "$d"
	ncpus=$(tr ',' '\n' <<<"$cpus" | grep -c .)
	netns_conf "$d/vsched.conf" "$(
		cat <<EOF
cpus = [ $cpus ];
utilization_cap = 0.9;
min_period = "1ms";
min_slice = "100us";
endpoint = "$(netns_vsched_ep "$i")";
EOF
	)" "$NETNS_VSCHED_EXTRA"
	if ! out=$("$VS_BIN/vsched" -n -c "$d/vsched.conf" 2>&1); then
		netns_err "node$i: vsched configuration refused: $out"
		return 1
	fi
	netns_spawn "vsched:node$i" "node$i" "$d/vsched.log" "$VS_BIN/vsched" -f -c "$d/vsched.conf"
	if ! netns_wait_until 5 netns_vctl "$i" task list; then
		netns_err "node$i: vsched does not answer (log: $d/vsched.log): $(tail -3 "$d/vsched.log")"
		return 1
	fi
	netns_conf "$d/agent.conf" "$(
		cat <<EOF
node_name = "node$i";
controller = "$(netns_agents_ep)";
app_endpoint = "$(netns_agent_ep "$i")";
vsched_endpoint = "$(netns_vsched_ep "$i")";
ncpus = $ncpus;
heartbeat = "250ms";
controller_timeout = "1s";
stats_interval = "1s";
provisional_period = "100ms";
provisional_slice = "20ms";
$(netns_agent_security "$i")
EOF
	)" "$NETNS_AGENT_EXTRA"
	if ! out=$("$VS_BIN/vsched-agent" -n -c "$d/agent.conf" 2>&1); then
		netns_err "node$i: agent configuration refused: $out"
		return 1
	fi
	netns_spawn "agent:node$i" "node$i" "$d/agent.log" "$VS_BIN/vsched-agent" -f -c "$d/agent.conf"
}

# netns_node_up NAME: the controller lists NAME as up.
netns_node_up() {
	netns_actl node list --json | jq -e ".[] | select(.name == \"$1\" and .up)" >/dev/null
}

# netns_up N: the whole cluster. On any failure everything created so far is undone.
netns_up() {
	local n=$1 i cpus ncpu per lo hi j list
	: "${NETNS_STATE:?NETNS_STATE must name the state directory}"
	if ! [[ $n =~ ^[1-9][0-9]*$ ]] || [ "$n" -gt 200 ]; then
		netns_err "number of nodes must be 1..200, not '$n'"
		return 1
	fi
	read -r -a cpus <<<"$(netns_cpu_list)"
	ncpu=${#cpus[@]}
	if [ "$n" -gt "$ncpu" ]; then
		netns_err "$n nodes need at least $n CPUs (each node's vsched manages its own CPUs); this machine offers $ncpu (${cpus[*]})"
		return 1
	fi
	if [ -s "$NETNS_STATE/namespaces" ] || [ -s "$NETNS_STATE/pids" ]; then
		netns_err "$NETNS_STATE holds a cluster already (down first)"
		return 1
	fi
	rm -rf "$NETNS_STATE/jobs" "$NETNS_STATE/rmax" # of an earlier cluster in this directory
	mkdir -p "$NETNS_STATE/ctl" "$NETNS_STATE/jobs" || return 1
	chmod 0755 "$NETNS_STATE"
	: >"$NETNS_STATE/namespaces"
	: >"$NETNS_STATE/pids"
	{
		echo "prefix=$NETNS_PREFIX"
		echo "subnet=$NETNS_SUBNET"
		echo "ctl_port=$NETNS_CTL_PORT"
		echo "bin=$VS_BIN"
		echo "nodes=$n"
		echo "created=$(date -u +%FT%TZ)"
	} >"$NETNS_STATE/cluster"
	# Disjoint CPU sets: node I gets the I-th of N contiguous shares of the CPU list.
	for ((i = 1; i <= n; i++)); do
		lo=$(((i - 1) * ncpu / n))
		hi=$((i * ncpu / n))
		list=
		for ((j = lo; j < hi; j++)); do list+="${list:+,}${cpus[j]}"; done
		echo "node${i}_cpus=$list" >>"$NETNS_STATE/cluster"
	done
	if ! netns_up_steps "$n"; then
		netns_down >/dev/null 2>&1
		return 1
	fi
	echo "up=1" >>"$NETNS_STATE/cluster"
}

netns_up_steps() {
	local n=$1 i sw
	netns_add_ns sw || return 1
	sw=$(netns_ns sw)
	ip -n "$sw" link add "$NETNS_BRIDGE" type bridge forward_delay 0 stp_state 0 &&
		ip -n "$sw" link set "$NETNS_BRIDGE" up || { netns_err "bridge in $sw failed"; return 1; }
	netns_add_ns ctl && netns_link ctl || return 1
	if [ "$NETNS_CURVE" = 1 ]; then netns_keys "$n" || return 1; fi
	for ((i = 1; i <= n; i++)); do
		netns_add_ns "node$i" && netns_link "node$i" || return 1
	done
	netns_start_controller || return 1
	for ((i = 1; i <= n; i++)); do
		netns_start_node "$i" "$(netns_get "node${i}_cpus")" || return 1
	done
	for ((i = 1; i <= n; i++)); do
		if ! netns_wait_until 10 netns_node_up "node$i"; then
			netns_err "node$i did not register with the controller at $(netns_agents_ep) (log: $NETNS_STATE/node$i/agent.log): $(tail -3 "$NETNS_STATE/node$i/agent.log")"
			return 1
		fi
	done
}

# netns_down: stops every recorded process (ranks first, then agents, vscheds, controller),
# deletes every recorded namespace (which takes their veth ends with them). Idempotent.
# netns_end_clean: the end of a test: SIGTERM to every node's agent and vsched and to the
# controller (each must exit 0), no sanitizer report in a daemon's log or a rank's output,
# netns_down, no namespace of this run left. Returns 1 with the reason in NETNS_END_WHY.
# Runs in the test's own shell (the daemons are its children: `wait` needs that).
netns_end_clean() {
	local role pid rc left
	NETNS_END_WHY=
	for role in agent:node1 agent:node2 vsched:node1 vsched:node2 controller; do
		read -r pid _ < <(awk -v r="$role" '$3 == r' "$NETNS_STATE/pids")
		kill -TERM "$pid"
		rc=0
		wait "$pid" || rc=$?
		[ "$rc" = 0 ] || { NETNS_END_WHY="$role exited $rc at SIGTERM"; return 1; }
	done
	if grep -El 'AddressSanitizer|LeakSanitizer|runtime error:' "$NETNS_STATE"/ctl/*.log \
		"$NETNS_STATE"/node*/*.log "$NETNS_STATE"/jobs/*/rank-*.out; then
		NETNS_END_WHY="sanitizer report in a daemon's log or a rank's output"
		return 1
	fi
	netns_down || { NETNS_END_WHY="netns_down failed"; return 1; }
	left=$(ip netns list | awk '{ print $1 }' | grep -c "^$NETNS_PREFIX" || true)
	[ "$left" = 0 ] || { NETNS_END_WHY="$left namespace(s) left after netns_down"; return 1; }
}

netns_down() {
	local ns rc=0 left
	[ -n "${NETNS_STATE:-}" ] && [ -d "$NETNS_STATE" ] || return 0
	netns_stop 'rank:*' || rc=1
	netns_stop 'agent:*' || rc=1
	netns_stop 'vsched:*' || rc=1
	netns_stop controller || rc=1
	if [ -f "$NETNS_STATE/namespaces" ]; then
		for ns in $(tac "$NETNS_STATE/namespaces"); do
			ip netns list | awk '{ print $1 }' | grep -qx -- "$ns" || continue
			left=$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')
			[ -z "$left" ] || netns_err "namespace $ns still holds processes not started by this harness: $left(deleting the name; the namespace lives on until they exit)"
			ip netns del "$ns" 2>/dev/null || { netns_err "ip netns del $ns failed"; rc=1; }
		done
	fi
	rm -f "$NETNS_STATE/namespaces" "$NETNS_STATE/pids"
	sed -i '/^up=/d' "$NETNS_STATE/cluster" 2>/dev/null || true
	return $rc
}

# ---- jobs ---------------------------------------------------------------------------------

# netns_run_job JOB K BSP_ARGS..: K ranks of bsp on every node (ranks numbered node by node:
# node1 has 0..K-1), each started as `vschedctl job run` through its node's agent, talking
# to the others over the veth addresses. Records them; returns at once. NETNS_PLAIN=1: bsp
# alone (not reported to the agent, not under vsched), e.g. to measure its full speed;
# with NETNS_RT=1 too, each rank pinned to its node's CPUs at SCHED_FIFO 1 (hold the RT lock).
netns_run_job() {
	local job=$1 k=$2 n i r p idx base d peers=() ranks
	shift 2
	n=$(netns_nodes)
	[ -n "$n" ] || { netns_err "no cluster in $NETNS_STATE (up first)"; return 1; }
	if ! [[ $k =~ ^[1-9][0-9]*$ ]] || [ "$k" -gt 50 ]; then
		netns_err "ranks per node must be 1..50, not '$k'"
		return 1
	fi
	if ! [[ $job =~ ^[[:graph:]]{1,63}$ ]] || [[ $job == */* ]]; then
		netns_err "job name must be 1..63 printable characters without blanks or '/'"
		return 1
	fi
	d="$NETNS_STATE/jobs/$job"
	if [ -d "$d" ]; then
		netns_err "job $job was started already (its files: $d)"
		return 1
	fi
	# Ports: job number J (order of start) listens on 20000 + 64 J + local index, on each
	# node's own address (each namespace has its own port space).
	idx=$(find "$NETNS_STATE/jobs" -mindepth 1 -maxdepth 1 -type d | wc -l)
	base=$((20000 + 64 * idx))
	mkdir -p "$d"
	for ((i = 1; i <= n; i++)); do
		for ((p = 0; p < k; p++)); do peers+=("$(netns_addr "node$i"):$((base + p))"); done
	done
	ranks=$(IFS=,; echo "${peers[*]}")
	echo "$ranks" >"$d/peers"
	for ((i = 1; i <= n; i++)); do
		for ((p = 0; p < k; p++)); do
			r=$(((i - 1) * k + p))
			if [ -n "${NETNS_PLAIN:-}" ] && [ -n "${NETNS_RT:-}" ]; then
				netns_spawn "rank:$job" "node$i" "$d/rank-$r.out" \
					taskset -c "$(netns_get "node${i}_cpus")" chrt -f 1 \
					"$VS_BIN/bsp" --rank "$r" --peers "$ranks" "$@"
			elif [ -n "${NETNS_PLAIN:-}" ]; then
				netns_spawn "rank:$job" "node$i" "$d/rank-$r.out" \
					"$VS_BIN/bsp" --rank "$r" --peers "$ranks" "$@"
			else
				netns_spawn "rank:$job" "node$i" "$d/rank-$r.out" \
					"$VS_BIN/vschedctl" job run --job "$job" --rank "$r" \
					--agent "$(netns_agent_ep "$i")" -- \
					"$VS_BIN/bsp" --rank "$r" --peers "$ranks" "$@"
			fi
			echo "$r node$i $NETNS_PID" >>"$d/ranks"
		done
	done
}

# netns_run_prog JOB K CMD..: like netns_run_job, but any program: K ranks of CMD on every
# node, each started as `vschedctl job run --job JOB --rank R` through its node's agent (so
# it reports through libapprate from VSCHED_JOB/VSCHED_RANK/VSCHED_AGENT). In CMD, {rank}
# and {node} (node1, ...) are replaced; output to jobs/JOB/rank-R.out. Returns at once.
netns_run_prog() {
	local job=$1 k=$2 n i r p d a args
	shift 2
	n=$(netns_nodes)
	[ -n "$n" ] || { netns_err "no cluster in $NETNS_STATE (up first)"; return 1; }
	if ! [[ $k =~ ^[1-9][0-9]*$ ]] || [ "$k" -gt 50 ]; then
		netns_err "ranks per node must be 1..50, not '$k'"
		return 1
	fi
	if ! [[ $job =~ ^[[:graph:]]{1,63}$ ]] || [[ $job == */* ]]; then
		netns_err "job name must be 1..63 printable characters without blanks or '/'"
		return 1
	fi
	[ $# -gt 0 ] || { netns_err "no program to run"; return 1; }
	d="$NETNS_STATE/jobs/$job"
	if [ -d "$d" ]; then
		netns_err "job $job was started already (its files: $d)"
		return 1
	fi
	mkdir -p "$d"
	for ((i = 1; i <= n; i++)); do
		for ((p = 0; p < k; p++)); do
			r=$(((i - 1) * k + p))
			args=()
			for a in "$@"; do
				a=${a//\{rank\}/$r}
				args+=("${a//\{node\}/node$i}")
			done
			netns_spawn "rank:$job" "node$i" "$d/rank-$r.out" \
				"$VS_BIN/vschedctl" job run --job "$job" --rank "$r" \
				--agent "$(netns_agent_ep "$i")" -- "${args[@]}"
			echo "$r node$i $NETNS_PID" >>"$d/ranks"
		done
	done
}

# netns_job_pids JOB: "RANK NODE PID" per rank.
netns_job_pids() { cat "$NETNS_STATE/jobs/$1/ranks"; }

# netns_job_rate JOB: the slowest rank's rate= from the ranks' summary lines.
netns_job_rate() {
	cat "$NETNS_STATE/jobs/$1"/rank-*.out 2>/dev/null | sed -n 's/^bsp: .* rate=\([0-9.]*\) .*/\1/p' |
		sort -g | head -1
}

# netns_measure_rmax JOB K BSP_ARGS..: runs the job's ranks plain for 3 s (unmanaged: the
# full speed) and prints the slowest rank's rate; the run's files stay in jobs/JOB.rmax.
# NETNS_RT=1: the ranks run pinned to their node's CPUs at SCHED_FIFO 1, so that other
# (SCHED_OTHER) load on the machine does not lower the figure: under vsched the ranks run
# at real-time priority in their slices, so that is the speed their targets are shares of.
netns_measure_rmax() {
	local job=$1 k=$2 rate
	shift 2
	NETNS_PLAIN=1 netns_run_job "$job.rmax" "$k" "$@" --duration 3s || return 1
	if ! netns_job_wait "$job.rmax"; then
		netns_err "the full-speed run of $job failed: $(cat "$NETNS_STATE/jobs/$job.rmax"/rank-*.out | grep -v '^bsp: rank=' | head -3)"
		return 1
	fi
	rate=$(netns_job_rate "$job.rmax")
	[ -n "$rate" ] || { netns_err "no rate= in $NETNS_STATE/jobs/$job.rmax/rank-*.out"; return 1; }
	echo "$rate"
}

# netns_job_wait JOB: waits for every rank of JOB; 0 when all exited 0. Only in the shell
# that started them (they are its children).
netns_job_wait() {
	local job=$1 r node pid rc=0
	while read -r r node pid; do
		wait "$pid" 2>/dev/null || rc=1
	done <"$NETNS_STATE/jobs/$job/ranks"
	return $rc
}

# netns_job_is JOB KEY VALUE: the controller's job record has KEY = VALUE.
netns_job_field() { netns_actl job list --json | jq -r ".[] | select(.name == \"$1\") | .$2"; }
netns_job_is() { [ "$(netns_job_field "$1" "$2")" = "$3" ]; }
