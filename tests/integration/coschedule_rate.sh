# coschedule_rate: issue 14's four-job scenario driven only by `vschedctl rate`
# (tests/helpers/cosched_rate_lib.sh): two rounds of four new jobs at 45 %, in the order
# m1 m2 c1 c2 without pauses, then c1 m1 c2 m2 with 2 s between two commands. Every rate is
# accepted, every job planned with its share and committed, the membench jobs never share a
# slot (controller's table and vsched's windows), and the node refused no window set.
source "$(dirname "$0")/lib.sh"
source "$VS_SRC/tests/helpers/ctld_lib.sh"
source "$VS_SRC/tests/helpers/cosched_lib.sh"
source "$VS_SRC/tests/helpers/cosched_rate_lib.sh"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
ctld_test_begin

cosched_rate_setup
run_round 1 45 0 m1 m2 c1 c2
run_round 2 45 2 c1 m1 c2 m2
rounds_refused_nothing
ctld_check_clean
pass "coschedule rate"
