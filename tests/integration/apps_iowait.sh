# apps_iowait: iowait's compute loop under a calibration given from outside.
# Outcomes checked:
#  - `iowait --calibrate` prints one positive number (CPU ns per loop step) and exits 0;
#  - APP_SPIN_NS_PER_LOOP is the work per iteration: with twice the value an iteration does
#    half the loop steps, so a 1-rank, no-wait job runs about twice as fast (1.4x–2.8x:
#    the runs are 1 s each on a machine that may be shared);
#  - a bad APP_SPIN_NS_PER_LOOP ends iowait with one line naming it, exit 2.
# No scheduler involved; bounded (about 3 s of runs).
source "$(dirname "$0")/lib.sh"
IOW=$VS_BIN/iowait
[ -x "$IOW" ] || skip "iowait not built"

cal=$("$IOW" --calibrate) || fail "iowait --calibrate: exit $?"
awk -v c="$cal" 'BEGIN { exit !(c + 0 > 0 && c ~ /^[0-9.]+$/) }' ||
	fail "iowait --calibrate printed '$cal', not a positive number"
pass "iowait --calibrate: $cal CPU ns per loop step"

# rate NS_PER_LOOP: iterations/s of one rank computing 20 ms of calibrated work per iteration
rate() {
	APP_SPIN_NS_PER_LOOP=$1 "$IOW" --ranks 1 --compute 20ms --wait 0 --duration 1s |
		sed -n 's/.*rate=\([0-9.]*\).*/\1/p'
}
r1=$(rate "$cal")
r2=$(rate "$(awk -v c="$cal" 'BEGIN { printf "%.6f", 2 * c }')")
awk -v a="$r1" -v b="$r2" 'BEGIN { exit !(a > 0 && b / a >= 1.4 && b / a <= 2.8) }' ||
	fail "APP_SPIN_NS_PER_LOOP $cal: $r1 it/s, twice that: $r2 it/s (expected about 2x)"
pass "APP_SPIN_NS_PER_LOOP sets the work: $r1 it/s at $cal, $r2 it/s at twice that"

for bad in abc 0 -1 1e9 "0.5x"; do
	set +e
	err=$(APP_SPIN_NS_PER_LOOP=$bad "$IOW" --ranks 1 --duration 100ms 2>&1 >/dev/null)
	rc=$?
	set -e
	[ $rc = 2 ] || fail "APP_SPIN_NS_PER_LOOP='$bad': exit $rc, expected 2 ($err)"
	[ "$(wc -l <<<"$err")" = 1 ] || fail "APP_SPIN_NS_PER_LOOP='$bad': more than one line: $err"
	grep -q "APP_SPIN_NS_PER_LOOP" <<<"$err" || fail "APP_SPIN_NS_PER_LOOP='$bad': '$err'"
done
pass "bad APP_SPIN_NS_PER_LOOP values refused: one line, exit 2"
