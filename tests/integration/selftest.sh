#!/bin/bash
# selftest.sh: vsched measures the finest period it serves with < 1 % misses, at start and on
# demand, bounded in time, on a CPU without reservations, and never at a client's expense.
# Outcome checked:
#  - with selftest = "start", `vschedctl status` reports a finished test within 15 s whose
#    answer is consistent with the periods it lists: the first period with misses < 1 % of
#    its jobs (or 0 when none), every tried period finer than it failing, and the periods
#    at or above min_period;
#  - `vschedctl selftest --wait` runs it again and reports the same way;
#  - a reservation that needs the test's CPU is accepted at once and ends the test
#    ("failed", interrupted); with no CPU free of reservations the request is refused
#    with a reason and nothing changes;
#  - `vsched --probe` with bad arguments exits 2 with a usage line.
. "$(dirname "$0")/lib.sh"
need_root
write_config 'selftest = "start";'
t0=$(date +%s%N)
start_vsched

# wait_done SECONDS: JSON of the first status whose selftest is not "running"
wait_done() {
	local i j
	for i in $(seq 1 $(($1 * 10))); do
		j=$(ctl status --json) || fail "status refused: $j"
		[ "$(jq -r .selftest <<<"$j")" != running ] && { echo "$j"; return 0; }
		sleep 0.1
	done
	fail "self-test still running after $1 s"
}

# check JSON LABEL: the answer agrees with the periods tried
check() {
	local j=$1 label=$2
	[ "$(jq -r .selftest <<<"$j")" = done ] || fail "$label: self-test $(jq -r .selftest <<<"$j")"
	jq -e '(.probes | length) >= 1 and all(.probes[]; .jobs >= 10 and .period_ns >= 1000000)' \
		<<<"$j" >/dev/null || fail "$label: odd probes: $j"
	# the answer: the first probe with misses * 100 < jobs, every one before it failing
	want=$(jq '[.probes[] | select(.misses * 100 < .jobs)] | first | .period_ns // 0' <<<"$j")
	[ "$(jq .min_period_ns <<<"$j")" = "$want" ] || fail "$label: answer != probes: $j"
	jq -e '[.probes[] | select(.period_ns < .min_period_ns or .min_period_ns == 0)] |
		all(.misses * 100 >= .jobs)' <<<"$j" >/dev/null || fail "$label: finer probe passed: $j"
	pass "$label: finest period $(jq .min_period_ns <<<"$j") ns," \
		"$(jq -c '[.probes[] | [.period_ns / 1000, .jobs, .misses]]' <<<"$j") (us, jobs, misses)"
}

j=$(wait_done 15)
took=$((($(date +%s%N) - t0) / 1000000))
check "$j" "self-test at start ($took ms)"
ctl status | grep -q 'finest period with < 1% misses' || fail "status text: $(ctl status)"

out=$(ctl selftest --wait) || fail "selftest --wait: exit $?: $out"
check "$(ctl status --json)" "selftest --wait"

# A reservation needing the test's CPU ends it and is accepted at once.
out=$(ctl selftest) || fail "selftest: $out"
spawn "$VS_BIN/spin" -d 20
a=$SPAWNED
spawn "$VS_BIN/spin" -d 20
b=$SPAWNED
ctl task add "$a" --period 10ms --slice 8ms --cpu 1 >/dev/null || fail "task add on cpu 1 refused"
ctl task add "$b" --period 10ms --slice 8ms --cpu 0 >/dev/null || fail "task add on cpu 0 refused"
j=$(wait_done 5)
[ "$(jq -r .selftest <<<"$j")" = failed ] || fail "self-test not ended by the reservations: $j"
grep -q 'interrupted' "$TMP/vsched.log" || fail "no 'interrupted' in the log"
pass "reservations on the test's CPU were accepted and ended the test"

# No CPU free: refused with a reason.
refused=$(ctl selftest 2>&1) && fail "selftest with no free CPU accepted: $refused"
grep -q 'free of reservations' <<<"$refused" || fail "reason: $refused"
[ "$(ctl task list --json | jq length)" = 2 ] || fail "the refusal changed the tasks"
pass "no free CPU: $refused"

out=$("$VS_BIN/vsched" --probe 1 2 2>&1) && fail "vsched --probe with bad arguments ran"
rc=$?
[ "$rc" = 2 ] && grep -q 'PERIOD_NS' <<<"$out" || fail "vsched --probe bad arguments: exit $rc: $out"
pass "vsched --probe refuses bad arguments: $out"
