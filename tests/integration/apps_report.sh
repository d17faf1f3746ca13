# apps_report: bsp and membench report their progress through libapprate to a PULL peer
# (tests/helpers/apprate_sink stands in for vsched-agent).
# Outcomes checked:
#  - bsp with VSCHED_JOB/VSCHED_AGENT in the environment: every rank registers with the job
#    name, its rank and its own pid, its REPORT units add up to exactly the iterations it
#    ran, the last report is FINAL, and BYTES carry the network bytes it moved;
#  - bsp ranks started through `vschedctl job run --job NAME --rank {rank}` register under
#    that name and rank (the launcher PREFIX path);
#  - membench registers, its units add up to the 1 MiB chunks swept and its BYTES memory
#    bytes to the bytes it printed.
source "$(dirname "$0")/lib.sh"
BSP=$VS_BIN/bsp MB=$VS_BIN/membench SINK=$VS_BIN/apprate_sink
for b in "$BSP" "$MB" "$SINK" "$VS_BIN/vschedctl"; do [ -x "$b" ] || skip "$(basename "$b") not built"; done

AGENT="ipc://$TMP/agent.sock"
"$SINK" "$AGENT" 50 >"$TMP/sink.out" &
PIDS+=($!)
for _ in $(seq 1 100); do grep -q '^LISTEN' "$TMP/sink.out" 2>/dev/null && break; sleep 0.05; done
grep -q '^LISTEN' "$TMP/sink.out" || fail "sink did not bind $AGENT"

field() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }
# units_of HANDLE: the sum of the REPORT units the sink received for a handle.
units_of() {
	awk -v h="handle=$1" '$1 == "REPORT" && $2 == h { split($5, u, "="); s += u[2] } END { print s + 0 }' "$TMP/sink.out"
}
# wait_final HANDLE: waits (3 s at most) for the FINAL report of a handle.
wait_final() {
	local _
	for _ in $(seq 1 60); do
		grep -q "^REPORT handle=$1 .* final=1" "$TMP/sink.out" && return 0
		sleep 0.05
	done
	return 1
}

# --- bsp from the environment --------------------------------------------------------------
K=30
VSCHED_JOB=bspenv VSCHED_AGENT=$AGENT timeout 40 "$BSP" --local 2 --iterations $K --compute 5ms --msg 2KiB \
	>"$TMP/bsp.out" 2>"$TMP/bsp.err" || fail "bsp: exit $? $(cat "$TMP/bsp.err")"
for r in 0 1; do
	reg=$(grep "^REGISTER .* job=bspenv rank=$r " "$TMP/sink.out" | head -1) || fail "no REGISTER for rank $r: $(cat "$TMP/sink.out")"
	h=$(field "$reg" handle)
	wait_final "$h" || fail "rank $r: no FINAL report"
	u=$(units_of "$h")
	[ "$u" = $K ] || fail "rank $r: REPORT units add up to $u, ran $K iterations"
	net=$(awk -v h="handle=$h" '$1 == "BYTES" && $2 == h { split($6, n, "="); s += n[2] } END { print s + 0 }' "$TMP/sink.out")
	# per iteration: 2 KiB payload + 32 bytes header, sent and received, to/from 1 peer
	[ "$net" -gt 0 ] && [ "$net" -le $((K * 2 * 2080)) ] || fail "rank $r: BYTES net $net"
	pass "bsp rank $r (pid $(field "$reg" pid)) registered as bspenv/$r: $u units = $K iterations, net bytes $net"
done

# --- bsp through vschedctl job run ---------------------------------------------------------
timeout 40 "$BSP" --local 2 --iterations 10 --compute 5ms --msg 1KiB -- \
	"$VS_BIN/vschedctl" job run --job viajobrun --rank '{rank}' --agent "$AGENT" -- \
	>"$TMP/jr.out" 2>"$TMP/jr.err" || fail "bsp via job run: exit $? $(cat "$TMP/jr.err")"
for r in 0 1; do
	reg=$(grep "^REGISTER .* job=viajobrun rank=$r " "$TMP/sink.out" | head -1) ||
		fail "no REGISTER for viajobrun rank $r: $(grep REGISTER "$TMP/sink.out")"
	h=$(field "$reg" handle)
	wait_final "$h" || fail "viajobrun rank $r: no FINAL report"
	[ "$(units_of "$h")" = 10 ] || fail "viajobrun rank $r: units $(units_of "$h")"
done
pass "bsp ranks under 'vschedctl job run --rank {rank}' registered as viajobrun/0 and /1, 10 units each"

# --- membench ------------------------------------------------------------------------------
VSCHED_JOB=mb VSCHED_AGENT=$AGENT timeout 30 "$MB" --size 32MiB --passes 4 >"$TMP/mb.out" 2>&1 ||
	fail "membench: exit $? $(cat "$TMP/mb.out")"
reg=$(grep "^REGISTER .* job=mb " "$TMP/sink.out" | head -1) || fail "membench did not register"
h=$(field "$reg" handle)
wait_final "$h" || fail "membench: no FINAL report"
[ "$(units_of "$h")" = $((4 * 32)) ] || fail "membench: units $(units_of "$h"), expected $((4 * 32)) chunks"
mem=$(awk -v h="handle=$h" '$1 == "BYTES" && $2 == h { split($5, m, "="); s += m[2] } END { print s + 0 }' "$TMP/sink.out")
printed=$(sed -n 's/.* bytes=\([0-9]*\) .*/\1/p' "$TMP/mb.out")
[ "$mem" = "$printed" ] && [ "$mem" = $((4 * 32 * 1048576)) ] || fail "membench: BYTES mem $mem, printed $printed"
pass "membench registered, 128 units (1 MiB chunks), BYTES mem $mem = printed bytes"
