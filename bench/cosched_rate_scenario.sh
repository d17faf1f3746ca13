#!/usr/bin/env bash
# cosched_rate_scenario.sh: issue 14's scenario, targets set one by one with `vschedctl rate`
# on a co-scheduled node; prints what an administrator sees (no pass/fail).
#
#   bench/cosched_rate_scenario.sh [BUILD_DIR]      (default: build; needs root, 2 CPUs, jq)
#   env: ORDER="m1 m2 c1 c2" (the order targets are set), PCTS="45 45 45 45" (one per job in
#        ORDER), PAUSE=0 (s between two rate commands), SETTLE=25 (s before the report)
#
# The shipped configs/controller.conf with coschedule = true (granularity search on), one
# node: vsched on CPUs 0 and 1 and an agent with the shipped provisional reservation
# (20 ms / 100 ms) for new ranks. Four jobs started with `vschedctl job run`: m1, m2 =
# membench --stride max 64 MiB (memory-bound), c1, c2 = one-rank bsp --compute 5ms. Reported:
# each rate command's exit status and message, the job list, each job's slot table, what
# vsched holds, and the refusals in the agent's and controller's logs (counted). Holds
# /tmp/vsched-rt.lock for the whole run (~1-2 min).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
export VS_SRC=$src
export VS_BIN=${VS_BIN:-$src/${1:-build}/bin}
ORDER=${ORDER:-m1 m2 c1 c2}
PCTS=${PCTS:-45 45 45 45}
PAUSE=${PAUSE:-0}
SETTLE=${SETTLE:-25}
source "$VS_SRC/tests/integration/lib.sh"
source "$VS_SRC/tests/helpers/ctld_lib.sh"
source "$VS_SRC/tests/helpers/cosched_rate_lib.sh"
need_root
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
command -v jq >/dev/null || skip "needs jq"
rt_lock 600

sed 's/^coschedule = false;/coschedule = true;/' "$VS_SRC/configs/controller.conf" >"$TMP/controller.conf"
grep -q '^coschedule = true;' "$TMP/controller.conf" || fail "configs/controller.conf: no coschedule line"
start_ctld
cosched_rate_node
for j in m1 m2 c1 c2; do
	start_scenario_job "$j" 150
done
for j in m1 m2 c1 c2; do
	wait_until 20 job_is "$j" ranks 1 || ctld_fail "job $j not seen by the controller"
done
sleep 3
echo "== vsched before the targets (the agent's provisional reservations)"
vctl n1 task list
set -- $PCTS
for j in $ORDER; do
	p=${1:?PCTS has fewer values than ORDER}
	shift
	out=$(actl rate "$j" "$p" 2>&1) && rc=0 || rc=$?
	echo "== rate $j $p: exit $rc: $out"
	[ "$PAUSE" = 0 ] || sleep "$PAUSE"
done
sleep "$SETTLE"
echo "== after ${SETTLE} s"
actl job list
for j in m1 m2 c1 c2; do actl job show "$j" | sed 's/^/  /'; done
echo "== vsched"
vctl n1 task list
echo "== refusals in the agent's and controller's logs (count, pids and times removed)"
grep -hE "refused|exceeds cap|overlaps|not put under" "$TMP/agent-n1.log" "$TMP/ctld.log" |
	sed -E 's/^[0-9:.]+ //; s/pid [0-9]+/pid P/g; s/gen [0-9]+/gen G/g' | sort | uniq -c |
	sort -rn | head -20 || true
