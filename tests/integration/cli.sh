# cli: vschedctl against a real vsched — task add/set/del/list round trip (text and JSON),
# `run` delivers the reserved share to its command and exits with the command's status, a
# refused `run` never starts the command, signals reach the command.
source "$(dirname "$0")/lib.sh"

need_root
command -v jq >/dev/null || skip "jq not installed"
[ -x "$VS_BIN/spin" ] || skip "spin helper not built"
start_vsched

MS=1000000

# --- add / list / set / del round trip ------------------------------------------------------
spawn "$VS_BIN/spin" -d 30
P=$SPAWNED
out=$(ctl task add "$P" --period 10ms --slice 2ms --cpu 1) || fail "task add: exit $?"
grep -q "pid $P" <<<"$out" || fail "task add printed: $out"
pass "task add: $out"

table=$(ctl task list)
head -1 <<<"$table" | grep -Eq '^ *PID +CPU +PERIOD +SLICE +U% +PARK +PERIODS +CPU\(s\) +SHARE% +MISSES +MAXLATE$' ||
	fail "task list header: $(head -1 <<<"$table")"
row=$(awk -v p="$P" '$1 == p' <<<"$table")
[ -n "$row" ] || fail "pid $P not in the table: $table"
read -r pid cpu period slice u park _ <<<"$row"
[ "$cpu $period $slice $u $park" = "1 10ms 2ms 20.0 stop" ] || fail "table row: $row"
awk 'length > 80 { exit 1 }' <<<"$table" || fail "task list wider than 80 columns: $table"
pass "task list (text): $row"

json=$(ctl task list --json)
jq -e . >/dev/null <<<"$json" || fail "task list --json is not JSON: $json"
jq -e --argjson p "$P" '.[] | select(.pid == $p) |
	.cpu == 1 and .park == "stop" and .threads == 1 and .period_ns == 10000000 and
	.slice_ns == 2000000 and .deadline_ns == 10000000 and .phase_ns == 0 and
	(.util_pct | . > 19.99 and . < 20.01)' >/dev/null <<<"$json" || fail "task list --json: $json"
for key in pid cpu park threads period_ns slice_ns deadline_ns phase_ns util_pct managed_ns \
	periods cpu_ns share_pct misses lateness_total_ns lateness_max_ns; do
	jq -e --arg k "$key" '.[0] | has($k)' >/dev/null <<<"$json" || fail "task list --json: no key $key"
done
pass "task list --json: every key, values as added"

out=$(ctl task set "$P" --period 20ms --slice 5ms --deadline 15ms --phase 1ms) || fail "task set: exit $?"
ctl task list --json | jq -e --argjson p "$P" '.[] | select(.pid == $p) |
	.cpu == 1 and .period_ns == 20000000 and .slice_ns == 5000000 and
	.deadline_ns == 15000000 and .phase_ns == 1000000' >/dev/null ||
	fail "task set not reflected: $(ctl task list --json)"
pass "task set: $out"

sleep 0.5
ctl task list --json | jq -e --argjson p "$P" '.[] | select(.pid == $p) |
	.periods > 0 and .cpu_ns > 0 and .managed_ns > 0' >/dev/null ||
	fail "counters do not move: $(ctl task list --json)"
pass "counters move"

out=$(ctl task del "$P") || fail "task del: exit $?"
[ "$(ctl task list --json | jq length)" -eq 0 ] || fail "task del: still listed"
[ "$(policy_of "$P")" = "SCHED_OTHER" ] || fail "task del: policy of $P is $(policy_of "$P")"
state=$(awk '{ print $3 }' "/proc/$P/stat")
[ "$state" != "T" ] || fail "task del: $P left stopped"
pass "task del: $out; policy restored, running"

out=$(ctl epoch now) || fail "epoch now: exit $?"
pass "epoch now: $out"

# --- run: the command runs under its reservation ------------------------------------------
# not through ctl(): a backgrounded function would be a subshell, not vschedctl itself
"$VS_BIN/vschedctl" -s "$ENDPOINT" run --period 10ms --slice 3ms -- "$VS_BIN/spin" -d 6 &
RUN=$!
PIDS+=("$RUN")
CHILD=
for _ in $(seq 1 40); do
	CHILD=$(ctl task list --json | jq -r '.[0].pid // empty')
	[ -n "$CHILD" ] && break
	sleep 0.05
done
[ -n "$CHILD" ] || fail "run: no task appeared"
[ "$(awk '{ print $4 }' "/proc/$CHILD/stat")" = "$RUN" ] || fail "run: task $CHILD is not the child of vschedctl $RUN"
grep -q spin "/proc/$CHILD/comm" || fail "run: child $CHILD runs $(cat "/proc/$CHILD/comm"), not spin"
sleep 1
s=$(share "$CHILD" 3)
# the reserved share, not the ~100 % an unmanaged spin takes: ± 3 points for what a busy
# machine does to the measurement
share_ok "$s" 30 3 || fail "run: spin got $s % of a CPU, reserved 30 % (± 3)"
pass "run: spin gets $s % of a CPU for 3 ms / 10 ms"
set +e
wait "$RUN"
rc=$?
set -e
[ "$rc" -eq 0 ] || fail "run: exit $rc, spin exits 0"
for _ in $(seq 1 20); do
	[ "$(ctl task list --json | jq length)" -eq 0 ] && break
	sleep 0.05
done
[ "$(ctl task list --json | jq length)" -eq 0 ] || fail "run: task still listed after the command ended"
pass "run: exit 0 with the command's status, task gone"

set +e
ctl run --period 10ms --slice 1ms -- sh -c 'exit 3'
rc=$?
set -e
[ "$rc" -eq 3 ] || fail "run of 'exit 3': exit $rc"
pass "run: a command that exits 3 makes vschedctl exit 3"

set +e
err=$(ctl run --period 10ms --slice 20ms -- touch "$TMP/ran" 2>&1)
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "refused run: exit $rc ($err)"
grep -q 'slice' <<<"$err" || fail "refused run: reason '$err'"
sleep 0.2
[ ! -e "$TMP/ran" ] || fail "refused run: the command ran"
pass "refused run: exit 1, command never ran: $err"

set +e
err=$(ctl run --period 10ms --slice 1ms -- "$TMP/no-such-command" 2>&1)
rc=$?
set -e
[ "$rc" -eq 127 ] || fail "run of a missing command: exit $rc"
pass "run of a missing command: exit 127: $err"

"$VS_BIN/vschedctl" -s "$ENDPOINT" run --period 10ms --slice 2ms -- "$VS_BIN/spin" -d 20 &
RUN=$!
PIDS+=("$RUN")
sleep 0.5
CHILD=$(ctl task list --json | jq -r '.[0].pid // empty')
[ -n "$CHILD" ] || fail "run: no task appeared"
set +e
stop_wait "$RUN" 10
rc=$?
set -e
[ "$rc" -eq 143 ] || fail "run killed by SIGTERM: exit $rc, expected 143"
kill -0 "$CHILD" 2>/dev/null && fail "SIGTERM not forwarded: child $CHILD alive"
pass "run: SIGTERM forwarded, exit 143"

# --- usage errors -----------------------------------------------------------------------------
set +e
ctl task add "$$" --period 10 --slice 1ms 2>/dev/null
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "duration without unit: exit $rc"
set +e
err=$("$VS_BIN/vschedctl" -s "ipc://$TMP/nobody.sock" task list 2>&1)
rc=$?
set -e
[ "$rc" -eq 3 ] && grep -q 'no answer' <<<"$err" || fail "no daemon: exit $rc: $err"
"$VS_BIN/vschedctl" --help | grep -q '^usage: vschedctl' || fail "--help"
pass "usage error exit 2, no daemon exit 3, --help"
exit 0
