#!/bin/bash
# change.sh: `task set` changes a running reservation at once, without a restart.
# Outcome checked: a spin loop held at 20% of a CPU (2ms/10ms) is measured at 20% ± 3, then
# after `task set` to 6ms/10ms at 60% ± 3, with the same vsched and the same process, and
# `task list` shows the new reservation. A set that would exceed the cap is refused and
# changes nothing.
. "$(dirname "$0")/lib.sh"
need_root
start_vsched

spawn "$VS_BIN/spin" -d 30
p=$SPAWNED
ctl task add "$p" --period 10ms --slice 2ms --cpu 1 >/dev/null || fail "task add refused"
sleep 0.3
before=$(shares 2 "$p")
echo "at 2ms/10ms: $before%"
within "$before" 17 23 || fail "share before the change $before%, want 20 ± 3"

ctl task set "$p" --period 10ms --slice 6ms >/dev/null || fail "task set refused"
sleep 0.1
after=$(shares 2 "$p")
echo "after set 6ms/10ms: $after%"
within "$after" 57 63 || fail "share after the change $after%, want 60 ± 3"
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
within "$again" 57 63 || fail "share after a refused set $again%, want 60"
[ "$(ps -o pid= -p "$VSCHED_PID" | tr -d ' ')" = "$VSCHED_PID" ] || fail "vsched restarted?"
pass "set 20% -> 60% in effect at once ($before% -> $after%), over-cap set refused"
