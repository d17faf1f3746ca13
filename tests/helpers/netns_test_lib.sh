# netns_test_lib.sh (sourced after lib.sh by tests/integration/netns_*.sh): what the
# namespace tests share on top of netns_lib.sh (which it sources, with rt_lock.sh).
#   netns_test_begin PREFIX   skips (77) unless root, iproute2, 2 CPUs, jq and working network
#                             namespaces; sets NETNS_PREFIX=PREFIX<pid>- and NETNS_STATE
#                             ($TMP/netns); on exit: the daemons' log tails (after a failure
#                             or with KEEP_TMP), netns_down, then lib.sh's cleanup
#   netns_delete_leftovers    deletes the empty namespaces of killed runs (vs-t<pid>-*)
#   npass MESSAGE             pass, with the seconds since T_START
source "$VS_SRC/tests/helpers/rt_lock.sh"
source "$VS_SRC/tests/helpers/netns_lib.sh"

netns_test_begin() {
	need_root
	command -v ip >/dev/null 2>&1 || skip "the 'ip' command (iproute2) is missing"
	[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs (one per node)"
	command -v jq >/dev/null 2>&1 || skip "needs jq"
	# Namespaces named after this test's pid, so a user's cluster (vs-*) and other runs are
	# never touched; state (logs, sockets) under $TMP.
	NETNS_PREFIX="$1$$-"
	NETNS_STATE="$TMP/netns"
	mkdir -p "$NETNS_STATE"
	netns_check 2>"$TMP/check.err" || skip "$(cat "$TMP/check.err")"
	netns_probe 2>"$TMP/check.err" || skip "network namespaces unusable here: $(cat "$TMP/check.err")"
	trap netns_test_cleanup EXIT
}

# netns_test_cleanup (the EXIT trap): on failure or with KEEP_TMP the tail of every daemon's
# log; then everything netns_up made is undone and lib.sh's cleanup runs.
netns_test_cleanup() {
	local rc=$? f
	if [ $rc -ne 0 ] || [ -n "${KEEP_TMP:-}" ]; then
		for f in "$NETNS_STATE"/ctl/controller.log "$NETNS_STATE"/node*/agent.log "$NETNS_STATE"/node*/vsched.log; do
			[ -f "$f" ] || continue
			echo "--- ${f#"$NETNS_STATE"/} (tail)" >&2
			tail -12 "$f" >&2
		done
	fi
	netns_down
	cleanup
}

# netns_delete_leftovers: namespaces vs-t<pid>-* of an earlier run that was killed (its pid
# is gone) are deleted when no process is left in them; otherwise a warning names them.
netns_delete_leftovers() {
	local ns owner
	for ns in $(ip netns list | awk '{ print $1 }' | sed -n 's/^\(vs-t[0-9]*-\).*/&/p'); do
		owner=${ns#vs-t}
		owner=${owner%%-*}
		[ "$owner" != $$ ] && ! kill -0 "$owner" 2>/dev/null || continue
		if [ -z "$(ip netns pids "$ns" 2>/dev/null)" ]; then
			ip netns del "$ns" 2>/dev/null && echo "deleted $ns, left over from a killed run"
		else
			echo "warning: $ns (left over from a killed run) still holds processes: $(ip netns pids "$ns" | tr '\n' ' ')"
		fi
	done
}

npass() { pass "$* [$((SECONDS - T_START)) s]"; }
