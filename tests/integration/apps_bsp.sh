# apps_bsp: the synthetic BSP program (apps/bsp) with 3 local ranks.
# Outcomes checked:
#  - --iterations K: every rank completes exactly K iterations and sends/receives exactly
#    K·(N-1) messages of --msg bytes (all-to-all), exit 0;
#  - --ratio 1:1 --iter-time 40ms: each iteration uses the asked 20 ms of compute CPU time
#    (±50 %: the work is calibrated over 5 ms at start, and on a VM host shared with other
#    tenants a busy sibling hyperthread changes the loop's speed by that much; CI saw
#    13.8 ms) and communication of the asked order (8–60 ms for 20: the message size is
#    calibrated on a machine shared with other tenants, CI saw 28.6 and 42.3 ms) — judged
#    only when the ranks got their CPU (compute wall time ≤ 2x its CPU time: 3 ranks share
#    2 CPUs; the run is at nice -20 where allowed, as the machine is shared with other
#    tenants);
#  - --duration: all ranks stop after the same iteration, near the asked time;
#  - --port BASE: consecutive fixed ports work as well as inherited sockets;
#  - bad arguments: one line on stderr, exit 2.
source "$(dirname "$0")/lib.sh"
source "$VS_SRC/tests/helpers/rt_lock.sh"
BSP=$VS_BIN/bsp
[ -x "$BSP" ] || skip "bsp not built"

# field LINE KEY: the value of KEY=VALUE in a summary line.
field() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }

# --- counts -------------------------------------------------------------------------------
K=25 MSG=4096
timeout 50 "$BSP" --local 3 --iterations $K --compute 5ms --msg $MSG >"$TMP/count.out" 2>"$TMP/count.err" ||
	fail "bsp --local 3 --iterations $K: exit $? ($(cat "$TMP/count.err"))"
[ "$(grep -c '^bsp: rank=' "$TMP/count.out")" = 3 ] || fail "expected 3 summary lines: $(cat "$TMP/count.out")"
for r in 0 1 2; do
	line=$(grep "^bsp: rank=$r " "$TMP/count.out") || fail "no summary from rank $r"
	[ "$(field "$line" iterations)" = $K ] || fail "rank $r: iterations: $line"
	for k in msgs_sent msgs_recv; do
		[ "$(field "$line" $k)" = $((K * 2)) ] || fail "rank $r: $k != $((K * 2)): $line"
	done
	for k in bytes_sent bytes_recv; do
		[ "$(field "$line" $k)" = $((K * 2 * MSG)) ] || fail "rank $r: $k != $((K * 2 * MSG)): $line"
	done
done
pass "3 ranks x $K iterations: $((K * 2)) messages of $MSG bytes sent and received by each"

# --- compute/communicate split -------------------------------------------------------------
rt_lock
# at nice -20 where allowed: the split of the program, not of a CPU shared with other
# tenants' (non-real-time) builds
NICE=()
if nice -n -20 true 2>/dev/null; then NICE=(nice -n -20); fi
timeout 50 "${NICE[@]}" "$BSP" --local 3 --iterations 40 --ratio 1:1 --iter-time 40ms >"$TMP/ratio.out" 2>"$TMP/ratio.err" ||
	fail "bsp --ratio 1:1: exit $? ($(cat "$TMP/ratio.err"))"
grep -q 'compute 20.00 ms, msg' "$TMP/ratio.err" || fail "no calibration line: $(cat "$TMP/ratio.err")"
line=$(grep '^bsp: rank=0 ' "$TMP/ratio.out") || fail "no summary: $(cat "$TMP/ratio.out")"
cpu=$(field "$line" compute_cpu_ms) wall=$(field "$line" compute_ms)
comm=$(field "$line" comm_ms) pct=$(field "$line" comm_pct)
within "$cpu" 10 30 || fail "compute CPU time per iteration $cpu ms, asked 20 ms: $line"
pass "--ratio 1:1 --iter-time 40ms: compute $cpu ms of CPU per iteration (asked 20)"
if awk -v w="$wall" -v c="$cpu" 'BEGIN { exit !(w > 2.0 * c) }'; then
	echo "note: compute took $wall ms of wall time for $cpu ms of CPU: the machine is busy," \
		"communication not judged ($comm ms per iteration, $pct %)"
else
	within "$comm" 8 60 || fail "communication $comm ms per iteration, asked 20 ms: $line"
	pass "communication $comm ms per iteration (asked 20; $pct % of the iteration's wall time)"
fi

# --- duration ------------------------------------------------------------------------------
timeout 30 "$BSP" --local 3 --duration 1s --compute 10ms --msg 1KiB --port 0 >/dev/null 2>&1 &&
	fail "--port 0 accepted"
base=$((20000 + RANDOM % 30000))
if timeout 30 "$BSP" --local 3 --duration 1s --compute 10ms --msg 1KiB --port $base >"$TMP/dur.out" 2>"$TMP/dur.err"; then
	its=$(sed -n 's/.* iterations=\([0-9]*\) .*/\1/p' "$TMP/dur.out" | sort -u)
	[ "$(wc -l <<<"$its")" = 1 ] || fail "ranks stopped after different iterations: $(cat "$TMP/dur.out")"
	secs=$(field "$(head -1 "$TMP/dur.out")" seconds)
	within "$secs" 0.9 2.0 || fail "--duration 1s ran $secs s"
	pass "--duration 1s --port $base: all ranks stopped after iteration $its (${secs} s)"
elif grep -q 'Address already in use' "$TMP/dur.err"; then
	echo "note: ports $base.. taken, --port not checked"
else
	fail "--duration 1s --port $base: $(cat "$TMP/dur.err")"
fi

# --- usage errors --------------------------------------------------------------------------
while IFS='|' read -r args want; do
	set +e
	# shellcheck disable=SC2086
	err=$("$BSP" $args 2>&1 >/dev/null)
	rc=$?
	set -e
	[ $rc = 2 ] || fail "bsp $args: exit $rc, expected 2 ($err)"
	[ "$(wc -l <<<"$err")" = 1 ] || fail "bsp $args: more than one line: $err"
	grep -q -- "$want" <<<"$err" || fail "bsp $args: '$err' does not mention '$want'"
done <<'EOF'
|--local N
--local 0|--local
--local 2 --compute 10|missing unit
--local 2 --msg 1T|not a size
--local 2 --msg 257MiB|between
--local 2 --ratio 1|C:M
--local 2 --ratio 1:1 --msg 10|replaces
--local 2 --iter-time 10ms|--ratio
--local 2 --spin fast|work
--rank 3 --peers 127.0.0.1:1,127.0.0.1:2|--rank 3
--rank 0 --peers 127.0.0.1|HOST:PORT
--rank 0 --peers 127.0.0.1:70000|between
--local 2 --rank 1|--local
--local 2 --job xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx|--job
--local 2 extra|unexpected
--bogus|unknown option
EOF
pass "bad arguments: one line each, exit 2"
