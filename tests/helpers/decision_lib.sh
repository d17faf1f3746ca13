# decision_lib.sh (sourced by tests/integration/security_abuse.sh and bench/flood.sh): how
# long an administrator's control decision takes to cross the controller. `vschedctl rate
# JOB PCT` is a transaction: admin request -> controller -> CONSTRAINT to the job's node ->
# CONSTRAINT_ACK -> the reply (controller/change.c, txn.c); its wall time is the latency.
# Every call is timed from before vschedctl starts to its exit: its start-up is part of
# every figure. Both functions print "n=DONE failed=F p50_us=A p99_us=B max_us=C" over the
# calls that succeeded (the format of fakeagent ping).
#   decision_times VSCHEDCTL ADMIN_EP JOB N
#       N (even) calls `rate JOB 30`, `rate JOB 40`, ... one after the other. A call
#       succeeds when it exits 0 and says "applied on 1 node(s)" (the constraint went to the
#       node and was acknowledged). The job must take targets at once (R_max given) and have
#       its ranks on one node.
#   request_times VSCHEDCTL ADMIN_EP JOB N
#       N calls `job show JOB`: a request the controller answers itself, the reference for
#       vschedctl's start-up and the admin path without a node.

# decision_stats FAILED US...: the summary line over the times US (microseconds).
decision_stats() {
	local failed=$1 n
	shift
	n=$#
	if [ "$n" = 0 ]; then
		echo "n=0 failed=$failed p50_us=0 p99_us=0 max_us=0"
		return
	fi
	local -a us
	mapfile -t us < <(printf '%s\n' "$@" | sort -n)
	echo "n=$n failed=$failed p50_us=${us[n / 2]} p99_us=${us[n * 99 / 100]} max_us=${us[n - 1]}"
}

decision_times() {
	local ctl=$1 ep=$2 job=$3 n=$4 i t0 t1 out failed=0
	local -a us=()

	for ((i = 0; i < n; i++)); do
		t0=${EPOCHREALTIME//[!0-9]/}
		if out=$("$ctl" -C "$ep" rate "$job" $((i % 2 ? 40 : 30)) 2>&1) &&
			[[ "$out" == *"applied on 1 node(s)"* ]]; then
			t1=${EPOCHREALTIME//[!0-9]/}
			us+=($((t1 - t0)))
		else
			failed=$((failed + 1))
			echo "decision_times: rate $job: $out" >&2
		fi
	done
	decision_stats "$failed" "${us[@]}"
}

request_times() {
	local ctl=$1 ep=$2 job=$3 n=$4 i t0 t1 failed=0
	local -a us=()

	for ((i = 0; i < n; i++)); do
		t0=${EPOCHREALTIME//[!0-9]/}
		if "$ctl" -C "$ep" job show "$job" >/dev/null; then
			t1=${EPOCHREALTIME//[!0-9]/}
			us+=($((t1 - t0)))
		else
			failed=$((failed + 1))
		fi
	done
	decision_stats "$failed" "${us[@]}"
}
