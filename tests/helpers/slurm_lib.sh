# slurm_lib.sh (sourced after tests/integration/lib.sh): a one-node Slurm on loopback, from
# Debian's packages, everything in $TMP/slurm (config, state, spool, logs, munge key and
# socket), root only:
#   slurm_start PLUGSTACK_LINE   munged, slurmctld and slurmd (node vs1, 2 CPUs,
#                                task/none, proctrack/linuxproc, no cgroups, no accounting)
#                                with the given plugstack.conf line; waits for the node
#   slurm_srun ARGS...           srun against it (SLURM_CONF set), bounded by `timeout`
#   slurm_stop                   stops all three (by pid), removes $TMP/slurm
# Skips (77) when a piece is not installed. Ports: two free ones the kernel's table shows
# unused (ss), never fixed ones. Every pid goes into PIDS (lib.sh's cleanup).
SLURM_DIR=
SLURM_PIDS=()

slurm_need() {
	local b
	for b in munged slurmctld slurmd srun sinfo; do
		command -v "$b" >/dev/null || [ -x "/usr/sbin/$b" ] ||
			skip "Slurm not installed ($b missing; scripts/install-deps.sh installs slurmctld, slurmd, slurm-client, munge)"
	done
	[ "$(id -u)" = 0 ] || skip "a private Slurm needs root"
}

# free_port: a TCP port nothing listens on now.
free_port() {
	local p used
	used=$(ss -Htan | awk '{ n = split($4, a, ":"); print a[n] }' | sort -u)
	for _ in $(seq 1 200); do
		p=$((20000 + RANDOM % 30000))
		grep -qx "$p" <<<"$used" || { echo "$p"; return 0; }
	done
	return 1
}

slurm_start() {
	local plug=$1 ctld_port slurmd_port i
	SLURM_DIR=$TMP/slurm
	# TmpFS inside it: pmix's per-step directories never outlive the test (a stale
	# /tmp/spmix_appdir_0_1.0 from an aborted run makes every later step 1.0 fail)
	mkdir -p "$SLURM_DIR/state" "$SLURM_DIR/spool" "$SLURM_DIR/tmp"
	chmod 700 "$SLURM_DIR"
	dd if=/dev/urandom of="$SLURM_DIR/munge.key" bs=1024 count=1 status=none
	chmod 400 "$SLURM_DIR/munge.key"
	/usr/sbin/munged --force -S "$SLURM_DIR/munge.sock" --key-file="$SLURM_DIR/munge.key" \
		--pid-file="$SLURM_DIR/munged.pid" --log-file="$SLURM_DIR/munged.log" \
		--seed-file="$SLURM_DIR/munged.seed" -F >/dev/null 2>&1 &
	SLURM_PIDS+=($!)
	PIDS+=($!)
	for i in $(seq 1 50); do [ -S "$SLURM_DIR/munge.sock" ] && break; sleep 0.1; done
	[ -S "$SLURM_DIR/munge.sock" ] || fail "munged did not start: $(tail -3 "$SLURM_DIR/munged.log")"
	ctld_port=$(free_port) && slurmd_port=$(free_port) || fail "no free port"
	[ "$ctld_port" != "$slurmd_port" ] || slurmd_port=$((ctld_port + 1))
	cat >"$SLURM_DIR/slurm.conf" <<EOC
ClusterName=vstest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SLURM_DIR/munge.sock
StateSaveLocation=$SLURM_DIR/state
SlurmdSpoolDir=$SLURM_DIR/spool
TmpFS=$SLURM_DIR/tmp
SlurmctldPidFile=$SLURM_DIR/slurmctld.pid
SlurmdPidFile=$SLURM_DIR/slurmd.pid
SlurmctldLogFile=$SLURM_DIR/slurmctld.log
SlurmdLogFile=$SLURM_DIR/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
PlugStackConfig=$SLURM_DIR/plugstack.conf
ReturnToService=2
SlurmdTimeout=30
NodeName=vs1 NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=test Nodes=vs1 Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOC
	echo "$plug" >"$SLURM_DIR/plugstack.conf"
	export SLURM_CONF=$SLURM_DIR/slurm.conf
	/usr/sbin/slurmctld -D -i -f "$SLURM_CONF" >>"$SLURM_DIR/slurmctld.out" 2>&1 &
	SLURM_PIDS+=($!)
	PIDS+=($!)
	/usr/sbin/slurmd -D -N vs1 -f "$SLURM_CONF" >>"$SLURM_DIR/slurmd.out" 2>&1 &
	SLURM_PIDS+=($!)
	PIDS+=($!)
	for i in $(seq 1 150); do
		sinfo -h -N -o '%T' 2>/dev/null | grep -Eq '^(idle|mixed|allocated)' && return 0
		sleep 0.2
	done
	slurm_fail "the Slurm node did not come up in 30 s"
}

slurm_fail() {
	local f
	for f in "$SLURM_DIR"/*.log "$SLURM_DIR"/*.out; do
		[ -f "$f" ] || continue
		echo "--- $(basename "$f") (tail)" >&2
		tail -8 "$f" >&2
	done
	fail "$*"
}

slurm_srun() { timeout 120 srun "$@"; }

slurm_stop() {
	local p
	for p in "${SLURM_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${SLURM_PIDS[@]}"; do
		for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	SLURM_PIDS=()
	unset SLURM_CONF
	[ -z "$SLURM_DIR" ] || [ -n "${KEEP_TMP:-}" ] || rm -rf "$SLURM_DIR"
}
