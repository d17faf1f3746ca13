# bad_input: every bad request to vsched — from vschedctl or as raw frames — is refused with
# a clear one-line reason and a non-zero exit, changes nothing (the task list is identical
# before and after), and leaves the daemon alive and serving. Also garbage that is not
# ZeroMQ at all, and a client that connects and sends nothing.
source "$(dirname "$0")/lib.sh"

need_root
command -v jq >/dev/null || skip "jq not installed"
command -v socat >/dev/null || skip "socat not installed"
[ -x "$VS_BIN/zraw" ] || skip "zraw helper not built"

SOCK=${ENDPOINT#ipc://}
start_vsched

# --- helpers -------------------------------------------------------------------------------

# The reservations only: the counters move on by themselves. A successful snapshot also
# shows that vsched is serving; the last one is kept as the "before" of the next check.
SNAP=
snapshot() {
	local s
	s=$(ctl task list --json) || fail "vsched not serving"
	jq -c '[.[] | {pid, cpu, park, period_ns, slice_ns, deadline_ns, phase_ns, windows}]' <<<"$s"
}

# unchanged DESC: vsched alive, serving, and the reservations as they were before DESC.
unchanged() {
	local now
	kill -0 "$VSCHED_PID" 2>/dev/null || fail "vsched died after: $1"
	now=$(snapshot) || fail "vsched not serving after: $1"
	[ "$SNAP" = "$now" ] || fail "$1: task list changed: $SNAP -> $now"
}

# refuse DESC EXIT REGEX CMD...: CMD must exit with EXIT (1: refused by vsched, 2: usage),
# print exactly one line on stderr matching REGEX (case-insensitive), change nothing.
refuse() {
	local desc=$1 want=$2 re=$3 err rc
	shift 3
	set +e
	err=$("$@" 2>&1 >/dev/null)
	rc=$?
	set -e
	[ "$rc" -eq "$want" ] || fail "$desc: exit $rc, expected $want (stderr: $err)"
	[ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] && [ -n "$err" ] ||
		fail "$desc: expected one line on stderr, got: $err"
	grep -Eqi -- "$re" <<<"$err" || fail "$desc: reason '$err' does not match /$re/"
	unchanged "$desc"
	pass "$desc: $err"
}

# zrefuse DESC REGEX FRAME...: raw frames must get an error reply (status < 0) whose message
# matches REGEX; nothing changes; vsched keeps serving.
zrefuse() {
	local desc=$1 re=$2 out rc
	shift 2
	set +e
	out=$("$VS_BIN/zraw" "$ENDPOINT" "$@")
	rc=$?
	set -e
	[ "$rc" -eq 0 ] || fail "$desc: no decodable reply (zraw exit $rc: $out)"
	grep -Eq '^status -[0-9]+: ' <<<"$out" || fail "$desc: not refused: $out"
	grep -Eqi -- "$re" <<<"$out" || fail "$desc: reason '$out' does not match /$re/"
	unchanged "$desc"
	pass "$desc (raw): $out"
}

# Little-endian hex of a 32- or 64-bit integer (two's complement for negatives).
le() {
	local v=$1 n=$2 i out=
	for ((i = 0; i < n; i++)); do
		out+=$(printf '%02x' $(((v >> (8 * i)) & 255)))
	done
	printf '%s' "$out"
}
hdr() { printf '5603%02x00' "$1"; } # protocol version 3
# win PERIOD SLICE DEADLINE PHASE (ns): one window
win() { printf '%s' "$(le "$1" 8)$(le "$2" 8)$(le "$3" 8)$(le "$4" 8)"; }
# add_frame PID CPU PARK PERIOD SLICE DEADLINE PHASE (ns): one window
add_frame() { printf '%s' "$(hdr 1)$(le "$1" 4)$(le "$2" 4)$(printf '%02x' "$3")010000$(win "$4" "$5" "$6" "$7")"; }
# addw_frame PID CPU PARK NWIN WINDOWS_HEX: NWIN as written, whatever WINDOWS_HEX holds
addw_frame() { printf '%s' "$(hdr 1)$(le "$1" 4)$(le "$2" 4)$(printf '%02x%02x' "$3" "$4")0000$5"; }
# set_frame PID PERIOD SLICE DEADLINE PHASE
set_frame() { printf '%s' "$(hdr 2)$(le "$1" 4)01000000$(win "$2" "$3" "$4" "$5")"; }
# setw_frame PID NWIN WINDOWS_HEX
setw_frame() { printf '%s' "$(hdr 2)$(le "$1" 4)$(printf '%02x' "$2")000000$3"; }
del_frame() { printf '%s' "$(hdr 3)$(le "$1" 4)"; }
list_frame() { hdr 4; }
epoch_frame() { printf '%s' "$(hdr 5)$(le "$1" 8)"; }
cut_last() { printf '%s' "${1:0:${#1}-2}"; } # one byte shorter

MS=1000000

# --- a managed task, so that "already managed", set/del and admission have something ------
spawn sleep 150
MANAGED=$SPAWNED
ctl task add "$MANAGED" --period 10ms --slice 6ms --cpu 0 >/dev/null || fail "cannot add a task"
spawn sleep 150
OTHER=$SPAWNED # alive, never managed
sh -c 'exit 0' &
DEAD=$!
wait "$DEAD" || true

# The frame builders must be right, or the truncation tests prove nothing.
out=$("$VS_BIN/zraw" "$ENDPOINT" "$(list_frame)") && grep -q '^status 0:' <<<"$out" ||
	fail "a valid LIST frame from the builder is refused: $out"
out=$("$VS_BIN/zraw" "$ENDPOINT" "$(set_frame "$MANAGED" $((10 * MS)) $((6 * MS)) 0 0)") &&
	grep -q '^status 0:' <<<"$out" || fail "a valid SET frame from the builder is refused: $out"
out=$("$VS_BIN/zraw" "$ENDPOINT" "$(add_frame "$MANAGED" 0 0 $((10 * MS)) $((6 * MS)) 0 0)")
grep -Eqi '^status -[0-9]+: .*already' <<<"$out" ||
	fail "an ADD frame from the builder for a managed pid: $out"

SNAP=$(snapshot)
[ "$(jq length <<<"$SNAP")" -eq 1 ] || fail "setup: expected one managed task: $SNAP"

# --- reservations vsched must refuse (exit 1, vsched's reason) ------------------------------
refuse "slice 0" 1 'slice' ctl task add "$OTHER" --period 10ms --slice 0ms
refuse "slice > deadline" 1 'slice.*deadline' ctl task add "$OTHER" --period 10ms --slice 6ms --deadline 5ms
refuse "deadline > period" 1 'deadline.*period' ctl task add "$OTHER" --period 10ms --slice 1ms --deadline 20ms
refuse "period below min_period" 1 'period' ctl task add "$OTHER" --period 500us --slice 100us
refuse "slice below min_slice" 1 'slice' ctl task add "$OTHER" --period 10ms --slice 50us
refuse "set: slice > period" 1 'slice' ctl task set "$MANAGED" --period 10ms --slice 11ms
refuse "dead pid" 1 "$DEAD" ctl task add "$DEAD" --period 10ms --slice 1ms
refuse "set of an unmanaged pid" 1 "$OTHER" ctl task set "$OTHER" --period 10ms --slice 1ms
refuse "del of an unmanaged pid" 1 "$OTHER" ctl task del "$OTHER"
refuse "pid already managed" 1 'already|managed' ctl task add "$MANAGED" --period 10ms --slice 1ms
refuse "does not fit on its CPU" 1 'cpu 0.*(load|0\.6|60)' ctl task add "$OTHER" --period 10ms --slice 5ms --cpu 0
refuse "does not fit anywhere" 1 'cpu|fit|load' ctl task add "$OTHER" --period 10ms --slice 9500us
refuse "unknown CPU" 1 'cpu.*7|7.*cpu' ctl task add "$OTHER" --period 10ms --slice 1ms --cpu 7

# --- command-line errors (exit 2, vschedctl's reason, nothing sent) -------------------------
refuse "pid 0" 2 "PID '0'" ctl task add 0 --period 10ms --slice 1ms
refuse "negative pid" 2 "PID '-5'" ctl task del -5
refuse "non-numeric pid" 2 "PID 'abc'" ctl task set abc --period 10ms --slice 1ms
refuse "duration without unit" 2 'missing unit' ctl task add "$OTHER" --period 10 --slice 1ms
refuse "duration with a bad unit" 2 "unknown unit" ctl task add "$OTHER" --period 10ms --slice 1xs
refuse "negative duration" 2 'negative' ctl task add "$OTHER" --period -10ms --slice 1ms
refuse "duration overflow" 2 'too large' ctl task add "$OTHER" --period 99999999999999d --slice 1ms
refuse "negative cpu" 2 "cpu '-1'" ctl task add "$OTHER" --period 10ms --slice 1ms --cpu -1
refuse "bad park" 2 "park" ctl task add "$OTHER" --period 10ms --slice 1ms --park maybe
refuse "unknown option" 2 "unknown option '--bogus'" ctl task add "$OTHER" --period 10ms --slice 1ms --bogus
refuse "missing value" 2 "needs a value" ctl task add "$OTHER" --period 10ms --slice
refuse "extra argument" 2 "unexpected argument" ctl task del "$OTHER" extra
refuse "missing period" 2 "period is required" ctl task add "$OTHER" --slice 1ms

# --- raw frames ---------------------------------------------------------------------------
zrefuse "pid 0" 'pid 0' "$(add_frame 0 -1 0 $((10 * MS)) $MS 0 0)"
zrefuse "negative pid" 'pid -7' "$(del_frame -7)"
zrefuse "cpu -2" 'cpu' "$(add_frame "$OTHER" -2 0 $((10 * MS)) $MS 0 0)"
zrefuse "park 3" 'park' "$(add_frame "$OTHER" -1 3 $((10 * MS)) $MS 0 0)"
zrefuse "truncated ADD" 'bytes' "$(cut_last "$(add_frame "$OTHER" -1 0 $((10 * MS)) $MS 0 0)")"
zrefuse "truncated SET" 'bytes' "$(cut_last "$(set_frame "$MANAGED" $((10 * MS)) $MS 0 0)")"
zrefuse "truncated DEL" 'bytes' "$(cut_last "$(del_frame "$MANAGED")")"
zrefuse "truncated EPOCH" 'bytes' "$(cut_last "$(epoch_frame 0)")"
zrefuse "truncated header" 'bytes' "$(cut_last "$(list_frame)")"
zrefuse "empty frame" 'bytes' ""
zrefuse "ADD one byte long" 'bytes' "$(add_frame "$OTHER" -1 0 $((10 * MS)) $MS 0 0)00"
zrefuse "LIST with a body" 'bytes' "$(list_frame)00"
zrefuse "wrong magic" 'magic' "41010400"
n=$(grep -c 'bad magic 0x41' "$TMP/vsched.log" || true)
[ "$n" -eq 1 ] || fail "the bad-magic frame was logged $n times, expected once"
pass "a bad frame is logged once"
zrefuse "wrong version" 'version' "56040400"
zrefuse "version 1 (before windows)" 'version 1 not supported' "56010400"
zrefuse "version 2 (before anchors)" 'version 2 not supported' "56020400"
zrefuse "unknown type" 'type' "56030900"
zrefuse "reply type as request" 'type' "56038000"
zrefuse "reserved byte set" 'reserved' "56030401"
zrefuse "multi-part message" 'multi-part' "$(list_frame)" "$(del_frame "$MANAGED")"
zrefuse "oversized frame" 'at most' "56030400*300"
zrefuse "INFO with a body" 'bytes' "$(hdr 6)00"
zrefuse "anchor 2" 'anchor 2' "$(hdr 2)$(le "$MANAGED" 4)01020000$(win $((10 * MS)) $MS 0 0)"

# --- windows (several reservations per task) ----------------------------------------------
W30=$(win $((100 * MS)) $((30 * MS)) $((30 * MS)) 0)
W50=$(win $((100 * MS)) $((20 * MS)) $((20 * MS)) $((50 * MS)))
zrefuse "ADD with 0 windows" 'windows' "$(addw_frame "$OTHER" -1 0 0 "")"
zrefuse "ADD with 9 windows" '9 windows' "$(addw_frame "$OTHER" -1 0 9 "$W30$W50$W30$W50$W30$W50$W30$W50$W30")"
zrefuse "SET with 9 windows" '9 windows' "$(setw_frame "$MANAGED" 9 "$W30$W50$W30$W50$W30$W50$W30$W50$W30")"
zrefuse "nwin 2, one window sent" 'bytes' "$(addw_frame "$OTHER" -1 0 2 "$W30")"
zrefuse "nwin 1, two windows sent" 'bytes' "$(addw_frame "$OTHER" -1 0 1 "$W30$W50")"
zrefuse "truncated 2-window SET" 'bytes' "$(cut_last "$(setw_frame "$MANAGED" 2 "$W30$W50")")"
zrefuse "overlapping windows" 'window 2.*overlaps' \
	"$(addw_frame "$OTHER" -1 0 2 "$W30$(win $((100 * MS)) $((20 * MS)) $((20 * MS)) $((20 * MS)))")"
zrefuse "windows of different periods" 'window 2: period' \
	"$(addw_frame "$OTHER" -1 0 2 "$W30$(win $((50 * MS)) $((10 * MS)) $((10 * MS)) $((40 * MS)))")"
zrefuse "window past the frame" 'window 2: phase \+ deadline' \
	"$(setw_frame "$MANAGED" 2 "$W30$(win $((100 * MS)) $((20 * MS)) $((30 * MS)) $((80 * MS)))")"
refuse "overlapping --window" 1 'window 2.*overlaps' ctl task add "$OTHER" --period 100ms --window 0+30ms --window 20ms+20ms
refuse "--window past the frame" 1 'phase \+ deadline' ctl task set "$MANAGED" --period 100ms --window 0+30ms --window 80ms+30ms
refuse "--window slice > length" 1 'window 1: slice' ctl task add "$OTHER" --period 100ms --window 0+10ms/20ms --window 50ms+10ms
refuse "9 --window options" 2 'more than 8' ctl task add "$OTHER" --period 100ms \
	--window 0+1ms --window 10ms+1ms --window 20ms+1ms --window 30ms+1ms --window 40ms+1ms \
	--window 50ms+1ms --window 60ms+1ms --window 70ms+1ms --window 80ms+1ms
refuse "--window with --slice" 2 'cannot be combined' ctl task add "$OTHER" --period 100ms --slice 1ms --window 0+10ms
refuse "--window without +" 2 'PHASE\+LENGTH' ctl task add "$OTHER" --period 100ms --window 10ms
# windows that fit the frame but not the CPU: cpu 0 holds MANAGED at 60 %
refuse "windows beside a 60% task" 1 'cpu 0' ctl task add "$OTHER" --period 10ms --cpu 0 --window 0+3ms --window 5ms+3ms
refuse "--anchor sometimes" 2 "anchor 'sometimes'" ctl task set "$MANAGED" --period 10ms --slice 1ms --anchor sometimes
refuse "wakeup anchor with windows" 1 'one window' ctl task set "$MANAGED" --period 100ms --window 0+10ms --window 50ms+10ms --anchor wakeup
refuse "status with an argument" 2 'status' ctl status now

# A frame beyond ZMQ_MAXMSGSIZE: libzmq drops the connection, vsched carries on.
set +e
out=$("$VS_BIN/zraw" -t 1000 "$ENDPOINT" "00*200000")
rc=$?
set -e
if [ "$rc" -eq 0 ]; then
	grep -Eq '^status -[0-9]+: ' <<<"$out" || fail "200000-byte frame accepted: $out"
elif [ "$rc" -ne 3 ]; then
	fail "200000-byte frame: zraw exit $rc: $out"
fi
unchanged "200000-byte frame"
pass "200000-byte frame: dropped ($out)"

# --- not ZeroMQ at all ----------------------------------------------------------------------
# Several rounds: libzmq's ZMTP/1.0 fallback turns random bytes into frames, and with a REP
# socket the reply to the *next* client was then lost (see vsched/api.c); each round is
# followed by a request that must be answered.
for round in 1 2 3 4 5; do
	head -c 65536 /dev/urandom | timeout 5 socat -u - "UNIX-CONNECT:$SOCK" 2>/dev/null || true
	unchanged "random bytes on the socket (round $round)"
done
printf 'GET / HTTP/1.0\r\n\r\n' | timeout 5 socat - "UNIX-CONNECT:$SOCK" >/dev/null 2>&1 || true
unchanged "HTTP on the socket"
# a greeting that claims ZMTP and then lies
printf '\xff\x00\x00\x00\x00\x00\x00\x00\x01\x7f\x03\x00NULL\xff\xff\xff\xff' |
	timeout 5 socat - "UNIX-CONNECT:$SOCK" >/dev/null 2>&1 || true
unchanged "bad ZMTP greeting"
pass "raw non-ZMTP garbage: vsched alive and serving"

# --- a client that connects and sends nothing does not block anyone -------------------------
sleep 4 | socat -u - "UNIX-CONNECT:$SOCK" 2>/dev/null &
SILENT=$!
PIDS+=("$SILENT")
sleep 0.3
t0=$(date +%s%N)
ctl task list >/dev/null || fail "task list with a silent client connected"
t1=$(date +%s%N)
[ $(((t1 - t0) / 1000000)) -lt 1000 ] || fail "task list took $(((t1 - t0) / 1000000)) ms with a silent client"
pass "silent client: others served in $(((t1 - t0) / 1000000)) ms"

# --- finally: the managed task is untouched ------------------------------------------------
ctl task list --json | jq -e --argjson p "$MANAGED" \
	'length == 1 and .[0].pid == $p and .[0].cpu == 0 and .[0].period_ns == 10000000 and .[0].slice_ns == 6000000' >/dev/null ||
	fail "the managed task changed or others appeared: $(snapshot)"
exit 0
