#!/bin/bash
# threads.sh: a multi-threaded process is scheduled as one task.
# Outcome checked: a 3-thread spin held at 30% (3ms/10ms) uses 30% ± 4 of a CPU in all, not
# per thread (that would be 90 %); a 4th spinning thread it creates after it was added is
# found, pinned to the task's CPU and given the task's policy (SCHED_RR 98 for a `stop`
# task), and the process as a whole still gets 30% ± 4. (± 4: stopped by signal, each
# running thread runs on until it takes the SIGSTOP, longer in the sanitizer build; CI saw
# 32.1 % there. bench/ measures share errors.)
. "$(dirname "$0")/lib.sh"
need_root
start_vsched

# 3 spinners + the main thread (waits), one more spinner after 1.5 s.
spawn "$VS_BIN/spin" -t 3 -T 1500 -d 30
p=$SPAWNED
sleep 0.2
ctl task add "$p" --period 10ms --slice 3ms --cpu 1 >/dev/null || fail "task add refused"
sleep 0.3
s1=$(shares 1 "$p")
echo "3 threads: $s1%"
within "$s1" 26 34 || fail "3-thread task got $s1%, want 30 ± 4 in all"

# Wait for the 5th thread (main + 3 + 1 late).
for i in $(seq 1 60); do
	[ "$(ls /proc/"$p"/task | wc -l)" -ge 5 ] && break
	sleep 0.05
done
[ "$(ls /proc/"$p"/task | wc -l)" -ge 5 ] || fail "spin did not create its late thread"
sleep 0.2 # > one thread-list refresh (20 ms) plus a dispatch
for t in /proc/"$p"/task/*; do
	tid=${t##*/}
	aff=$(taskset -cp "$tid" | sed -n 's/.*affinity list: //p')
	[ "$aff" = 1 ] || fail "thread $tid affinity '$aff', want 1"
	# the policy is given when the thread is first dispatched: within 2 s even in the
	# sanitizer build
	for _ in $(seq 1 40); do
		pol=$(chrt -p "$tid" | sed -n "s/.*scheduling policy: \([A-Z_]*\).*/\1/p")
		prio=$(chrt -p "$tid" | sed -n 's/.*scheduling priority: //p')
		[ "$pol" = SCHED_RR ] && [ "$prio" = 98 ] && break
		sleep 0.05
	done
	[ "$pol" = SCHED_RR ] && [ "$prio" = 98 ] ||
		fail "thread $tid policy $pol/$prio, want SCHED_RR 98 (stop task)"
done
n=$(ctl task list --json | grep "\"pid\": $p," | sed -n 's/.*"threads": \([0-9]*\).*/\1/p')
[ "$n" = 5 ] || fail "task list shows $n threads, want 5"
s2=$(shares 1.5 "$p")
echo "4 spinning threads: $s2%"
within "$s2" 26 34 || fail "4-thread task got $s2%, want 30 ± 4 in all"
pass "3 then 4 spinning threads held to 30% together ($s1%, $s2%), late thread pinned"
