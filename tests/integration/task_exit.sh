#!/bin/bash
# task_exit.sh: a managed process that exits is dropped, and its capacity freed.
# Outcome checked: a managed spin that ends by itself disappears from `task list` within
# 1 s, and a reservation that did not fit on its CPU while it lived is then accepted.
. "$(dirname "$0")/lib.sh"
need_root
start_vsched

spawn "$VS_BIN/spin" -d 1.5
short=$SPAWNED
spawn "$VS_BIN/spin" -d 30
long=$SPAWNED
ctl task add "$short" --period 10ms --slice 6ms --cpu 0 >/dev/null || fail "add short refused"
if ctl task add "$long" --period 10ms --slice 5ms --cpu 0 2>"$TMP/err"; then
	fail "60% + 50% accepted on one CPU under a 90% cap"
fi
grep -q "cpu 0: load 60.0% + 50.0% exceeds cap 90.0%" "$TMP/err" ||
	fail "refusal message: $(cat "$TMP/err")"

# Wait for the short one to end (its lifetime is 1.5 s of wall time).
for i in $(seq 1 100); do
	kill -0 "$short" 2>/dev/null || break
	[ -d /proc/"$short" ] && grep -q '^State:.*Z' /proc/"$short"/status 2>/dev/null && break
	sleep 0.05
done
t0=$(date +%s%N)
gone=
for i in $(seq 1 40); do
	if ! ctl task list --json | grep -q "\"pid\": $short,"; then
		gone=$(( ($(date +%s%N) - t0) / 1000000 ))
		break
	fi
	sleep 0.025
done
[ -n "$gone" ] || fail "pid $short still listed 1 s after it exited"
echo "exited task gone from the list after ${gone} ms"
[ "$gone" -le 1000 ] || fail "took $gone ms"

ctl task add "$long" --period 10ms --slice 5ms --cpu 0 >/dev/null ||
	fail "capacity of the exited task not given back"
pass "exited task removed in ${gone} ms, its capacity reused"
