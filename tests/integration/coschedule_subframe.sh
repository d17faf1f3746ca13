#!/usr/bin/env bash
# coschedule_subframe: issue 14's four-job scenario driven only by `vschedctl rate`, with the
# plan on sub-frames and the granularity moving while every target is set. Targets 40 %
# (exact on 100, 50 and 25 ms of 5 ms slots). Round 1 (m1 m2 c1 c2, no pauses): c1 asks for
# 4 window-sets per frame (`job set --initial-period 25ms`) before any target, then for 2
# (50ms) with all four targets set. Round 2 (c2 m1 c1 m2, 1 s pauses): m2 asks for 25 ms, then
# for the whole frame again. After each step every job is planned with its share on that
# sub-frame and committed, vsched runs every task with that period and 40 ms of every 100 ms,
# the membench jobs never share a slot, and the node refused no window set.
source "$(dirname "$0")/lib.sh"
source "$VS_SRC/tests/helpers/ctld_lib.sh"
source "$VS_SRC/tests/helpers/cosched_lib.sh"
source "$VS_SRC/tests/helpers/cosched_rate_lib.sh"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
ctld_test_begin

# granularity JOB MS N: job JOB of round N starts its granularity search at MS ms; the plan's
# sub-frame (ROUND_PERIOD_MS) becomes MS
# (retried for 5 s: a plan change of the controller's own may be in progress)
granularity() {
	wait_until 5 actl job set "${1}r$3" --initial-period "${2}ms" ||
		cs_fail "round $3: job set ${1}r$3 --initial-period ${2}ms refused: $(actl job set "${1}r$3" --initial-period "${2}ms" 2>&1)"
	ROUND_PERIOD_MS=$2
}

cosched_rate_setup
ROUND_HOOK="granularity c1 25"
ROUND_MOVE="granularity c1 50"
run_round 1 40 0 m1 m2 c1 c2
ROUND_HOOK="granularity m2 25"
ROUND_MOVE="granularity m2 100"
run_round 2 40 1 c2 m1 c1 m2
rounds_refused_nothing
ctld_check_clean
pass "coschedule subframe"
