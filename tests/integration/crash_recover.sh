#!/usr/bin/env bash
# crash_recover.sh: vsched and its guardian killed together (one SIGKILL to the process
# tree, as CTest's timeout or a service manager's final kill sends) leave their tasks
# changed — SCHED_RR, pinned, maybe frozen in their freezer cgroup. The next vsched to start
# restores them from the copy of the task table on file (/run/vsched/tasks.<pid>,
# watchdog.c: watchdog_recover), as the guardian would have.
# Outcomes checked (stop parking through the freezer where there is one, the default):
#  - while vsched runs, its table's copy exists and the task is SCHED_RR;
#  - after vsched and its guardian are SIGKILLed, the task is still SCHED_RR (nobody restored
#    it) and the copy is left;
#  - a new vsched restores it at start: SCHED_OTHER again, its CPU list back, out of the
#    dead vsched's freezer cgroup, running; the copy and the dead vsched's sentinel are gone;
#  - a copy that is no task table (garbage, of a pid that is no vsched) is refused with a
#    log line and removed, and vsched runs on.
source "$(dirname "$0")/lib.sh"
need_root
RUNDIR=/run/vsched

# on a failure, the task must not stay frozen at SCHED_RR: thaw it and reset its policy (and
# the garbage copy below goes)
on_fail() {
	local d
	[ -z "${BAD:-}" ] || rm -f "$RUNDIR/tasks.$BAD"
	[ -n "${P:-}" ] || return 0
	for d in /sys/fs/cgroup/freezer/vsched."$P" /sys/fs/cgroup/unified/vsched."$P"; do
		[ -d "$d" ] || continue
		echo THAWED >"$d/freezer.state" 2>/dev/null || echo 0 >"$d/cgroup.freeze" 2>/dev/null || true
		echo "$P" >"$(dirname "$d")/cgroup.procs" 2>/dev/null || true
		rmdir "$d" 2>/dev/null || true
	done
	chrt -o -p 0 "$P" 2>/dev/null || true
	kill -CONT "$P" 2>/dev/null || true
}

start_vsched
OLD=$VSCHED_PID
[ -f "$RUNDIR/tasks.$OLD" ] || fail "no copy of the task table at $RUNDIR/tasks.$OLD"
spawn "$VS_BIN/spin" -d 60
P=$SPAWNED
CPUS0=$(taskset -pc "$P" | sed 's/.*: //')
ctl task add "$P" --cpu 1 --period 100ms --slice 10ms >/dev/null || fail "task not admitted"
sleep 0.5
chrt -p "$P" | grep -q SCHED_RR || fail "the task is not SCHED_RR under vsched: $(chrt -p "$P")"
pass "vsched $OLD runs with its table's copy; task $P is SCHED_RR"

# Together: the guardian stopped first (killed first, it would be replaced by vsched at
# once; vsched killed first, its guardian at SCHED_FIFO 99 would restore before this shell
# runs again), then both killed.
G=$(pgrep -P "$OLD" -x vsched-watchdog) || fail "no guardian found under vsched $OLD"
kill -STOP "$G"
kill -KILL "$OLD"
kill -KILL "$G"
for i in $(seq 1 100); do
	kill -0 "$OLD" 2>/dev/null || kill -0 "$G" 2>/dev/null || break
	sleep 0.01
done
wait "$OLD" 2>/dev/null || true
VSCHED_PID=
chrt -p "$P" | grep -q SCHED_RR ||
	fail "the task was restored although vsched and its guardian were both killed"
[ -f "$RUNDIR/tasks.$OLD" ] || fail "the copy of the dead vsched's table is gone"
pass "vsched and its guardian killed together: the task is left SCHED_RR, the copy stays"

# a copy that is no task table, of a pid that is no vsched
for BAD in $(seq 4000000 4000100); do kill -0 "$BAD" 2>/dev/null || break; done
head -c 100 /dev/urandom >"$RUNDIR/tasks.$BAD"

start_vsched
ok=
for i in $(seq 1 40); do
	if chrt -p "$P" | grep -q SCHED_OTHER; then ok=1 && break; fi
	sleep 0.05
done
[ -n "$ok" ] || fail "the task is still $(chrt -p "$P" | head -1) 2 s after the next vsched started"
[ "$(taskset -pc "$P" | sed 's/.*: //')" = "$CPUS0" ] ||
	fail "CPU list not restored: $(taskset -pc "$P") (was $CPUS0)"
freezer_of "$P"
[[ "$F" != */vsched."$P" ]] || fail "the task is still in its freezer cgroup: $F"
a=$(cpu_ns "$P")
sleep 0.3
[ "$(cpu_ns "$P")" -gt "$a" ] || fail "the recovered task does not run"
[ ! -e "$RUNDIR/tasks.$OLD" ] || fail "the dead vsched's copy is still there"
! ls -d /sys/fs/cgroup/freezer/vsched.sentinel."$OLD" 2>/dev/null ||
	fail "the dead vsched's freezer sentinel is still there"
grep -q "vsched $OLD ended together with its guardian" "$TMP/vsched.log" ||
	fail "the recovery is not logged"
pass "the next vsched restored task $P (SCHED_OTHER, CPUs $CPUS0, thawed, running) and removed the copy"

grep -q "$RUNDIR/tasks.$BAD is not a task table" "$TMP/vsched.log" ||
	fail "a garbage copy was not refused in the log"
[ ! -e "$RUNDIR/tasks.$BAD" ] || fail "the garbage copy was not removed"
ctl task list >/dev/null || fail "vsched does not answer after refusing a garbage copy"
pass "a garbage copy is refused with a log line and removed; vsched runs"
