# coschedule_rate_subframe: issue 14's four-job scenario driven only by `vschedctl rate`
# (tests/helpers/cosched_rate_lib.sh) at 40 % in the order m1 c1 m2 c2, then every job's
# granularity moved to 2 window-sets per frame (`job set --initial-period 50ms`): the plan
# goes to sub-frames of 50 ms (4 of 10 slots = 40 %: no rounding up). Every rate is accepted,
# every job planned with its share on the sub-frame and committed, the membench jobs never
# share a slot, and the node refused no window set.
source "$(dirname "$0")/lib.sh"
source "$VS_SRC/tests/helpers/ctld_lib.sh"
source "$VS_SRC/tests/helpers/cosched_lib.sh"
source "$VS_SRC/tests/helpers/cosched_rate_lib.sh"
need_root
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
command -v jq >/dev/null || skip "needs jq"

cosched_rate_setup
ROUND_PERIOD=50ms run_round 1 40 0 m1 c1 m2 c2
if grep -q "refused gen" "$TMP/ctld.log"; then
	grep "refused gen" "$TMP/ctld.log" | sed 's/^/  /'
	cs_fail "the node refused windows while the plan moved to sub-frames"
fi
pass "no window set refused by the node"
ctld_check_clean
pass "coschedule rate on sub-frames"
