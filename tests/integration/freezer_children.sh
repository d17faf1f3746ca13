#!/bin/bash
# freezer_children.sh: `stop` parking through the cgroup freezer parks the managed process
# only, never a process it forks. A child starts in its parent's cgroup (vsched.<pid>); left
# there it would be frozen whenever the task is parked, and it cannot run while the task is
# raised either (SCHED_OTHER on the task's CPU, under a SCHED_RR task): a task that waits for
# its child by spinning would wait for good. LeakSanitizer does exactly that at every exit
# (it spins in sched_yield until the tracer process it cloned is done), which left the ranks
# of integration.agent_bsp_relay frozen in the sanitizer build.
# Outcomes checked, with stop_method "freezer" and perf_events "off" (budget ends timed by
# the dispatcher, so every park is a freeze):
#  - a managed shell that forks a child doing ~20 ms of work and spins until the child says
#    it is done finishes within 5 s (it never did: the child stayed frozen);
#  - the child is then out of the task's freezer cgroup (back in the one the task came
#    from) and not frozen, and the task's cgroup holds the task alone;
#  - `task del` removes the task's cgroup.
. "$(dirname "$0")/lib.sh"
need_root
grep -Eq ' - cgroup .*freezer| - cgroup2 ' /proc/self/mountinfo || skip "no cgroup freezer"

write_config "stop_method = \"${VS_TEST_STOP_METHOD:-freezer}\";" 'perf_events = "off";'
start_vsched
grep -q 'stop parking: freezer' "$TMP/vsched.log" || fail "vsched does not park through the freezer"

# cg_dir LINE: the directory of a /proc/PID/cgroup line, under the mount of its hierarchy (v1
# freezer or cgroup2; mountinfo: root mountpoint ... - fstype source superopts).
cg_dir() {
	local v2=0
	[[ "$1" == 0::* ]] && v2=1
	awk -v v2=$v2 -v p="${1#*:*:}" '{
		for (s = 7; s <= NF && $s != "-"; s++) ;
		if (v2 ? $(s + 1) != "cgroup2" : $(s + 1) != "cgroup" || $(s + 3) !~ /freezer/) next
		r = $4 == "/" ? "" : $4
		print $5 substr(p, length(r) + 1); exit
	}' /proc/self/mountinfo
}

# The task: waits for $TMP/go (so that it forks once managed), forks a child that works
# ~20 ms, writes its pid and child.done, then sleeps; spins (no sleep, no fork: builtins)
# until child.done exists, at most 20 s, and writes parent.done with how it ended.
spawn bash -c '
	while [ ! -e "$0/go" ]; do sleep 0.01; done
	(
		i=0
		while [ $i -lt 5000 ]; do i=$((i + 1)); done
		echo $BASHPID >"$0/child.pid"
		: >"$0/child.done"
		exec sleep 30
	) &
	while [ ! -e "$0/child.done" ] && [ $SECONDS -lt 20 ]; do :; done
	if [ -e "$0/child.done" ]; then echo ok >"$0/parent.done"; else echo timeout >"$0/parent.done"; fi
	exec sleep 30' "$TMP"
P=$SPAWNED
freezer_of "$P"
ORIG=$F
ctl task add "$P" --period 10ms --slice 5ms --cpu 0 >/dev/null || fail "add refused"
freezer_of "$P"
[[ "$F" == */vsched."$P" ]] || fail "task not in a freezer cgroup of its own: $F"
TASK_CG=$(cg_dir "$F")
pass "task $P parked through its own freezer cgroup $TASK_CG"

: >"$TMP/go"
t0=${EPOCHREALTIME/./}
wait_until 5 test -s "$TMP/parent.done" || true
dt=$(((${EPOCHREALTIME/./} - t0) / 1000))
if [ -s "$TMP/child.pid" ]; then PIDS+=("$(cat "$TMP/child.pid")"); fi
if [ "$(cat "$TMP/parent.done" 2>/dev/null)" != ok ]; then
	fail "the task still waits for its child after ${dt} ms: cgroup $TASK_CG" \
		"($(cat "$TASK_CG"/freezer.state "$TASK_CG"/cgroup.freeze 2>/dev/null | tr '\n' ' ')) holds" \
		"$(for p in $(cat "$TASK_CG/cgroup.procs"); do echo "$p:$(ps -o stat=,wchan=,comm= -p "$p")"; done | tr '\n' ' ')"
fi
pass "the task's child ran while the task was parked: the task saw it done after ${dt} ms"

C=$(cat "$TMP/child.pid")
freezer_of "$C"
[ "$F" = "$ORIG" ] || fail "child $C is in $F, not back in the task's original cgroup $ORIG"
st=$(ps -o stat= -p "$C")
[[ "$st" != D* ]] || fail "child $C frozen (state $st)"
[ "$(cat "$TASK_CG/cgroup.procs")" = "$P" ] ||
	fail "the task's cgroup holds $(cat "$TASK_CG/cgroup.procs" | tr '\n' ' '), not only the task"
pass "child $C out of the task's cgroup (in $ORIG, state $st); the cgroup holds the task alone"

ctl task del "$P" >/dev/null || fail "del refused"
[ ! -d "$TASK_CG" ] || fail "$TASK_CG still there after task del"
freezer_of "$P"
[ "$F" = "$ORIG" ] || fail "task back in $F, not $ORIG"
pass "task del: cgroup removed, task back in $ORIG"
