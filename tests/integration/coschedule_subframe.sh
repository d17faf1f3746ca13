#!/usr/bin/env bash
# coschedule_subframe: issue 14's four-job scenario driven only by `vschedctl rate`, with the
# plan on sub-frames. One job's granularity (`vschedctl job set --initial-period`) asks for
# 4 window-sets per frame in round 1 (m1 m2 c1 c2, no pauses) and for 2 in round 2 (c2 m1 c1
# m2, 1 s pauses), before any target is set: every rate (40 %, exact on those sub-frames) is
# accepted, every job is planned with its share on that sub-frame (25 ms, then 50 ms) and
# committed, vsched runs every task with that period and 40 ms of every 100 ms, the membench
# jobs never share a slot, and the node refused no window set.
source "$(dirname "$0")/lib.sh"
source "$VS_SRC/tests/helpers/ctld_lib.sh"
source "$VS_SRC/tests/helpers/cosched_lib.sh"
source "$VS_SRC/tests/helpers/cosched_rate_lib.sh"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
ctld_test_begin

# granularity JOB_PREFIX MS N: job JOB_PREFIX rN starts its granularity search at MS ms
granularity() {
	actl job set "${1}r$3" --initial-period "${2}ms" >/dev/null ||
		cs_fail "round $3: job set ${1}r$3 --initial-period ${2}ms refused"
}

cosched_rate_setup
ROUND_HOOK="granularity c1 25" ROUND_PERIOD_MS=25 run_round 1 40 0 m1 m2 c1 c2
ROUND_HOOK="granularity m2 50" ROUND_PERIOD_MS=50 run_round 2 40 1 c2 m1 c1 m2
if grep -q "refused gen" "$TMP/ctld.log"; then
	grep "refused gen" "$TMP/ctld.log" | sed 's/^/  /'
	cs_fail "the node refused windows during the rounds"
fi
pass "no window set refused by the node in two rounds"
ctld_check_clean
pass "coschedule subframe"
