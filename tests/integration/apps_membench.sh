# apps_membench: the memory streamer (apps/membench).
# Outcomes checked:
#  - --passes K: exactly K passes; bytes moved = K x block for strides up to a cache line
#    (membench-min, membench-max), one line per access beyond it; accesses = block/stride;
#  - --duration 1s over the default 256 MiB block: stops after ~1 s and reports a plausible
#    bandwidth (0.5..200 GB/s), consistent with its bytes and seconds, for both strides;
#  - bad arguments: one line, exit 2.
source "$(dirname "$0")/lib.sh"
source "$VS_SRC/tests/helpers/rt_lock.sh"
MB=$VS_BIN/membench
[ -x "$MB" ] || skip "membench not built"
field() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }
MiB=1048576

# --- exact counts --------------------------------------------------------------------------
while read -r stride bytes accesses; do
	out=$("$MB" --size 16MiB --passes 3 --stride "$stride" 2>/dev/null) || fail "membench --stride $stride: exit $?"
	[ "$(field "$out" passes)" = 3.00 ] || fail "--stride $stride passes: $out"
	[ "$(field "$out" bytes)" = "$bytes" ] || fail "--stride $stride: bytes $(field "$out" bytes), expected $bytes"
	[ "$(field "$out" accesses)" = "$accesses" ] || fail "--stride $stride: accesses $(field "$out" accesses), expected $accesses"
done <<EOF2
min $((3 * 16 * MiB)) $((3 * 16 * MiB / 8))
max $((3 * 16 * MiB)) $((3 * 16 * MiB / 64))
4 $((3 * 16 * MiB)) $((3 * 16 * MiB / 32))
16 $((3 * 16 * MiB / 2)) $((3 * 16 * MiB / 128))
EOF2
pass "--passes 3 over 16 MiB: bytes and accesses exact for strides 1, 8 (line), 4, 16"

# --- bandwidth -----------------------------------------------------------------------------
rt_lock
for s in max min; do
	out=$(timeout 30 "$MB" --duration 1s --stride $s 2>/dev/null) || fail "membench --stride $s: exit $?"
	secs=$(field "$out" seconds) mbs=$(field "$out" mb_s) bytes=$(field "$out" bytes)
	within "$secs" 0.99 1.5 || fail "--duration 1s ran $secs s: $out"
	within "$mbs" 500 200000 || fail "implausible bandwidth $mbs MB/s: $out"
	awk -v b="$bytes" -v s="$secs" -v m="$mbs" 'BEGIN { exit !(b / s / 1e6 > m * 0.99 && b / s / 1e6 < m * 1.01) }' ||
		fail "mb_s $mbs is not bytes/seconds: $out"
	[ $((bytes % MiB)) = 0 ] || fail "bytes $bytes not whole 1 MiB chunks"
	pass "--stride $s, 256 MiB, 1 s: $mbs MB/s ($bytes bytes in $secs s)"
done

# --- usage errors --------------------------------------------------------------------------
while IFS='|' read -r args want; do
	set +e
	# shellcheck disable=SC2086
	err=$("$MB" $args 2>&1 >/dev/null)
	rc=$?
	set -e
	[ $rc = 2 ] && [ "$(wc -l <<<"$err")" = 1 ] && grep -q -- "$want" <<<"$err" ||
		fail "membench $args: exit $rc, '$err' (expected exit 2 mentioning '$want')"
done <<'EOF2'
--size 1000|--size
--size 1536KiB|multiple of 1MiB
--stride 0|--stride
--stride huge|--stride
--duration 5|missing unit
--passes 0|--passes
--frob|unknown option
extra|unexpected
EOF2
pass "bad arguments: one line each, exit 2"
