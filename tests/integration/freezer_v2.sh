#!/bin/bash
# freezer_v2.sh: `stop` parking through the cgroup v2 freezer (cgroup.freeze), the one a
# machine with cgroup v2 only (a stock Debian 12) uses, on a machine that also has the v1
# freezer (where "auto" takes v1 and the other tests never reach v2). Its line of
# /proc/PID/cgroup ("0::PATH") was not recognised: every `stop` task was refused with "no
# such process" there.
# Outcomes checked, with stop_method "freezer-v2":
#  - a `stop` task is in a v2 cgroup of its own; with perf counters, a task whose main thread
#    sleeps while 3 threads spin is held to 30 % ± 4 by its cgroup enforcer, with at most
#    1.5 dispatcher wake-ups per period on its CPU;
# and, running these tests on it (VS_TEST_STOP_METHOD, tests/integration/lib.sh):
#  - freezer_children: a task in its own v2 cgroup, a child it forks moved out, `task del`
#    removes the cgroup;
#  - park_policy and threads: shares held by freezing and thawing (1 and 5 threads);
#  - crash_restore (SIGKILL, the guardian restores; SIGTERM, vsched does): back in the
#    original v2 cgroup, vsched's removed, policies restored, running.
. "$(dirname "$0")/lib.sh"
need_root
grep -q ' - cgroup2 ' /proc/self/mountinfo || skip "no cgroup v2 hierarchy"
here=$(cd "$(dirname "$0")" && pwd)

# The daemon itself: v2 parking, a `stop` task in a v2 cgroup of its own, and its budget ends
# stopped by its cgroup enforcer (one perf counter per thread on that cgroup): a task whose
# main thread sleeps while 3 threads spin, held to 30 % (a single counter signalling the
# process gave 48 %: the main thread it woke waited behind its spinning siblings), with
# about one dispatcher wake-up per period (its budget ends timed by the dispatcher: 4-5).
write_config 'stop_method = "freezer-v2";'
start_vsched
grep -q 'stop parking: freezer-v2 at ' "$TMP/vsched.log" || fail "vsched does not park through the v2 freezer"
spawn "$VS_BIN/spin" -t 3 -T 15000 -d 20
p=$SPAWNED
sleep 0.2
t0=$(date +%s%N)
ctl task add "$p" --period 10ms --slice 3ms --cpu 1 --park stop >/dev/null ||
	fail "task add of a stop task refused on the v2 freezer"
VS_TEST_STOP_METHOD=freezer-v2 freezer_of "$p"
[[ "$F" == 0::*/vsched."$p" ]] || fail "the task is not in a v2 cgroup of its own: $F"
echo "task $p in $F"
sleep 0.3
s1=$(shares 2 "$p")
echo "main thread asleep, 3 threads spinning: $s1%"
perf=$(ctl status | grep -c 'perf counters: budgets' || true)
stop_wait "$VSCHED_PID" 5 || fail "vsched exit status $? at SIGTERM"
periods=$((($(date +%s%N) - t0) / 10000000))
kill "$p"
n=$(sed -n 's/.*cpu 1: \([0-9]*\) dispatches.*/\1/p' "$TMP/vsched.log" | tail -1)
echo "cpu 1: $n dispatcher wake-ups in about $periods periods"
share_ok "$s1" 30 4 1 || fail "3 spinning threads and a sleeping main thread got $s1%, want 30 ± 4"
if [ "$perf" = 0 ]; then
	echo "note: no perf counters here: budget ends are timed, the wake-ups not checked"
else
	[ -n "$n" ] && [ "$n" -le $((periods * 3 / 2)) ] ||
		fail "$n dispatcher wake-ups in $periods periods: budget ends not stopped by the enforcer"
fi
exec 9>&- # the real-time lock: each test below takes it itself
RT_LOCK_TAKEN=

for t in freezer_children park_policy threads crash_restore; do
	rc=0
	out=$(VS_TEST_STOP_METHOD=freezer-v2 CRASH_SIGNALS="KILL TERM" timeout 180 \
		bash "$here/$t.sh" 9>&- 2>&1) || rc=$?
	echo "$out" | sed "s/^/  $t: /" | tail -4
	[ "$rc" = 0 ] || fail "$t with stop_method freezer-v2: exit $rc"
	grep -q '^ok - ' <<<"$out" || fail "$t: no result line"
done
pass "a 4-thread task held to $s1% by its cgroup enforcer ($n wake-ups in $periods periods); freezer_children, park_policy, threads and crash_restore pass on the cgroup v2 freezer"
