#!/bin/bash
# change.sh: `task set` changes a running reservation at once, without a restart.
# Outcome checked: a spin loop held at 20% of a CPU (2ms/10ms) is measured at 20% ± 3, then
# after `task set` to 6ms/10ms at 60% ± 3, with the same vsched and the same process, and
# `task list` shows the new reservation. A set that would exceed the cap is refused and
# changes nothing. Set to two windows of 75 % that no longer fit beside a 20 % task on its
# CPU, it moves to the other CPU and gets 75% (70-78: two late starts per period) there.
# Lower bounds give up the hypervisor's steal in the interval measured (share_ok).
. "$(dirname "$0")/lib.sh"
need_root
start_vsched

spawn "$VS_BIN/spin" -d 30
p=$SPAWNED
ctl task add "$p" --period 10ms --slice 2ms --cpu 1 >/dev/null || fail "task add refused"
sleep 0.3
before=$(shares 2 "$p")
echo "at 2ms/10ms: $before%"
share_ok "$before" 20 3 1 || fail "share before the change $before%, want 20 ± 3"

ctl task set "$p" --period 10ms --slice 6ms >/dev/null || fail "task set refused"
sleep 0.1
after=$(shares 2 "$p")
echo "after set 6ms/10ms: $after%"
share_ok "$after" 60 3 1 || fail "share after the change $after%, want 60 ± 3"
ctl task list --json | grep "\"pid\": $p," | grep -q '"slice_ns": 6000000,' ||
	fail "task list does not show the new slice"

# Too much: 95% > cap 90%. Refused, reservation unchanged, share unchanged.
if ctl task set "$p" --period 10ms --slice 9500us 2>"$TMP/err"; then
	fail "set to 95% accepted over a 90% cap"
fi
grep -q "cpu 1: load" "$TMP/err" || fail "refusal does not name the CPU and load: $(cat "$TMP/err")"
ctl task list --json | grep "\"pid\": $p," | grep -q '"slice_ns": 6000000,' ||
	fail "a refused set changed the reservation"
again=$(shares 1 "$p")
share_ok "$again" 60 3 1 || fail "share after a refused set $again%, want 60"
[ "$(ps -o pid= -p "$VSCHED_PID" | tr -d ' ')" = "$VSCHED_PID" ] || fail "vsched restarted?"
pass "set 20% -> 60% in effect at once ($before% -> $after%), over-cap set refused"

# Moved to the other CPU (two windows, 75 %, that no longer fit beside a 20 % task on CPU 1):
# its perf enforcer may have stopped it just before; it is continued and keeps its share
# there (it stayed stopped, at 0 %, when only the enforcer's count decided).
spawn "$VS_BIN/spin" -d 30
q=$SPAWNED
ctl task add "$q" --period 10ms --slice 2ms --cpu 1 >/dev/null || fail "second task refused"
ctl task set "$p" --period 10ms --window 0+4ms --window 5ms+3500us >/dev/null ||
	fail "the 75 % set was refused (it fits on cpu 0)"
sleep 0.1
moved=$(shares 2 "$p")
[ "$(taskset -pc "$p" | sed 's/.*: //')" = 0 ] || fail "not moved to cpu 0: $(taskset -pc "$p")"
share_ok "$moved" 74 4 0 || fail "share after the move to cpu 0 $moved%, want 75 (70-78)"
pass "moved to cpu 0 with two windows of 75 %: $moved%"
