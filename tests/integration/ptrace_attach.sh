#!/usr/bin/env bash
# ptrace_attach.sh: a SIGSTOP that another process sends to a managed task is not discarded
# by vsched. Up to session 27 every enforced `stop` task (single-threaded, budget ends
# stopped by its perf counter) got a SIGCONT at every new job, whether its enforcer had
# fired or not; a SIGCONT discards a pending SIGSTOP. A tracer's PTRACE_ATTACH that landed
# while the task was frozen then waited for good (the tracee ran on: LeakSanitizer's leak
# check at exit spins until its tracer has stopped it, so a sanitizer-built task never
# ended: integration.epoch hung), and an administrator's `kill -STOP` was undone within a
# period. Now a SIGCONT goes only to a task whose enforcer fired (dispatch.c,
# enforcer_stopped). On the old code the `kill -STOP` part fails at once; its attach part
# passed (the thawed task took the attach's SIGSTOP before the SIGCONT came), while
# integration.epoch in the sanitizer build hung 2 of 2 times.
# Outcomes checked, with the freezer and perf counters (the defaults) and a task that never
# uses its whole budget (it runs 2 ms, sleeps 3 ms, in a 10 ms window every 100 ms: every job
# ends by a freeze, its enforcer never fires, so most attaches land on a frozen task):
#  - 40 attaches at random moments each see the tracee stop within 2 s (20 periods);
#  - a task stopped with `kill -STOP` stays stopped for 2 s (its CPU clock stands still),
#    then runs again on `kill -CONT` and gets its share;
#  - a task that uses its whole budget (slice 5 ms of 20 ms: every job ends at its
#    enforcer's stop) still gets its share: the enforcer's stops are answered.
source "$(dirname "$0")/lib.sh"
need_root
grep -Eq ' - cgroup .*freezer| - cgroup2 ' /proc/self/mountinfo || skip "no cgroup freezer"
[ -x "$VS_BIN/ptattach" ] || skip "ptattach helper not built"

start_vsched
ctl status | grep -q 'stop parking: freezer' || fail "vsched does not park through the freezer"
ctl status | grep -q 'perf counters: budgets' ||
	skip "no perf counters here: no enforcer, so no enforcer SIGCONT to check"

# share PID SECONDS: CPU share of PID over SECONDS, in percent (integer)
share() {
	local a b
	a=$(cpu_ns "$1")
	sleep "$2"
	b=$(cpu_ns "$1")
	echo $(((b - a) / ($2 * 10000000)))
}

spawn "$VS_BIN/spin" -d 60 -s 2:3
A=$SPAWNED
ctl task add "$A" --cpu 1 --period 100ms --slice 10ms --deadline 10ms >/dev/null ||
	fail "task A not admitted"
# its share: ~2 ms of each 5 ms inside a 10 ms window per 100 ms, about 4 %
share_ok() { [ "$1" -ge 2 ] && [ "$1" -le 7 ]; }
sleep 0.5
r=$("$VS_BIN/ptattach" -p "$A" -n 40 -g 60 -t 2000) ||
	fail "a debugger's attach was discarded: $r"
pass "40 attaches to a managed task, each stopped it ($r)"
kill -0 "$A" || fail "the task died"
s=$(share "$A" 2)
share_ok "$s" || fail "task A got $s % after the attaches, not ~4 %"
pass "task A runs on at its share after the attaches: $s %"

# An administrator's stop holds.
# (A stopped task that vsched has frozen shows state D, not T: what shows that it stays
# stopped is that its CPU clock stands still.)
kill -STOP "$A"
sleep 0.1
a=$(cpu_ns "$A")
for i in $(seq 1 20); do
	sleep 0.1
	b=$(cpu_ns "$A")
	[ "$b" -eq "$a" ] ||
		fail "the stopped task ran again within $((i * 100)) ms ($(((b - a) / 1000)) us of CPU)"
done
pass "a task stopped with kill -STOP stays stopped for 2 s (20 periods)"
kill -CONT "$A"
sleep 0.3
s=$(share "$A" 2)
share_ok "$s" || fail "task A got $s % after kill -CONT, not ~4 %"
pass "after kill -CONT it runs at its share again: $s %"

# A task whose every job ends at its enforcer's stop is continued at every job.
spawn "$VS_BIN/spin" -d 60
B=$SPAWNED
ctl task add "$B" --cpu 0 --period 20ms --slice 5ms >/dev/null || fail "task B not admitted"
sleep 0.5
s=$(share "$B" 3)
[ "$s" -ge 20 ] && [ "$s" -le 28 ] || fail "an enforced task got $s %, not ~25 %"
pass "a task stopped by its enforcer at every budget end keeps its 25 %: $s %"
kill -0 "$VSCHED_PID" || fail "vsched died"
