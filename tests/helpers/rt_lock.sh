# rt_lock.sh (sourced by tests that measure CPU shares, rates or bandwidth): take the
# machine-wide lock /tmp/vsched-rt.lock that keeps such measurements from overlapping.
#
#   rt_lock [SECONDS]   waits at most SECONDS (default 40) for the lock, then skips (77).
#
# If an ancestor of this shell already holds the lock (the test runs under
# `flock /tmp/vsched-rt.lock ctest ...`), taking it again would wait for ourselves: then
# nothing is done; nor when this shell took it already. The lock is held on fd 9 until the
# script and the daemons it started (they inherit fd 9) exit. lib.sh's start_vsched takes
# it, so that no two tests' schedulers ever manage the same CPUs at once.
RT_LOCK_FILE=/tmp/vsched-rt.lock

# rt_lock_held_by_ancestor: true when a process above us holds a lock on RT_LOCK_FILE.
rt_lock_held_by_ancestor() {
	local ino holders p
	[ -e "$RT_LOCK_FILE" ] || return 1
	ino=$(command stat -c %i "$RT_LOCK_FILE") # the command, not a function a test named stat
	# /proc/locks: "N: FLOCK ADVISORY WRITE PID MAJ:MIN:INODE START END"; waiters have "->"
	holders=$(awk -v ino="$ino" '$2 != "->" { split($6, a, ":"); if (a[3] == ino) print $5 }' /proc/locks)
	[ -n "$holders" ] || return 1
	p=$$
	while [ -n "$p" ] && [ "$p" -gt 1 ]; do
		if grep -qx "$p" <<<"$holders"; then return 0; fi
		p=$(awk '/^PPid:/ { print $2 }' "/proc/$p/status" 2>/dev/null)
	done
	return 1
}

rt_lock() {
	local wait=${1:-40}
	if [ -n "${RT_LOCK_TAKEN:-}" ] || rt_lock_held_by_ancestor; then return 0; fi
	exec 9>>"$RT_LOCK_FILE"
	flock -w "$wait" 9 || skip "$RT_LOCK_FILE busy for ${wait} s (other real-time measurements running)"
	RT_LOCK_TAKEN=1
}
