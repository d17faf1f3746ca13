# controller_bad_input: nothing sent to vsched-controller's endpoints can stop it.
#  - admin endpoint: bad magic, other version, unknown type, truncated and padded requests
#    are answered with a reason (a REPLY frame: zraw, which decodes only vsched replies,
#    prints "bad reply: bad magic 0x41", i.e. it got the controller's answer); empty,
#    multi-part and oversized messages are dropped;
#  - agents' endpoint: garbage, a RATE from an unregistered peer, multi-part messages;
#  - afterwards the controller still answers (node list) and its log names the refusals;
#  - bad configurations, and bad endpoints given with -A / -a, are refused with reasons.
# Needs no root: no vsched, no agent. Bounded by a 60 s timeout.
if [ -z "${CTLD_TEST_TIMED:-}" ]; then
	CTLD_TEST_TIMED=1 exec timeout -k 5 60 bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"
source "$VS_SRC/tests/helpers/ctld_lib.sh"
ctld_need vsched-controller zraw vschedctl

# The shipped configuration parses; -n prints it normalised, and the normalised form is a
# fixed point; a bad configuration is refused with the key in the reason.
"$VS_BIN/vsched-controller" -n -c "$VS_SRC/configs/controller.conf" >"$TMP/n1.conf" ||
	fail "configs/controller.conf refused"
"$VS_BIN/vsched-controller" -n -c "$TMP/n1.conf" >"$TMP/n2.conf" || fail "-n output refused"
cmp -s "$TMP/n1.conf" "$TMP/n2.conf" || fail "-n output is not normalised: $(diff "$TMP/n1.conf" "$TMP/n2.conf")"
bad_conf() { # LINE REASON_REGEX
	local out
	echo "$1" >"$TMP/bad.conf"
	out=$("$VS_BIN/vsched-controller" -n -c "$TMP/bad.conf" 2>&1) && fail "config '$1' accepted"
	grep -Eq "$2" <<<"$out" || fail "config '$1': reason '$out'"
}
bad_conf 'heartbeet = "1s";' 'heartbeet: unknown setting'
bad_conf 'ack_timeout = "2";' 'ack_timeout: .*not a duration'
bad_conf 'algorithm = "fast";' 'algorithm'
bad_conf 'epsilon = 0;' 'epsilon: must be in'
bad_conf 'agent_endpoint = "udp://x";' 'agent_endpoint: .*tcp:// or ipc://'
bad_conf 'heartbeat = "5s"; node_timeout = "2s";' 'node_timeout: must be longer than heartbeat'
bad_conf 'coschedule = true; slot = "7ms";' 'slot: 7ms must divide frame 100ms'
bad_conf 'pairing = "best";' 'pairing: must be one of'
pass "configs/controller.conf parses, -n is normalised, 8 bad configurations refused with reasons"
bad_arg() { # OPTION VALUE: refused with exit 2 and the reason, as the same value in the file
	local out rc=0
	out=$("$VS_BIN/vsched-controller" -n -c "$TMP/n1.conf" "$1" "$2" 2>&1) || rc=$?
	[ "$rc" = 2 ] || fail "$1 '$2': exit $rc, want 2 ($out)"
	grep -q -- "$1: \"$2\" must be a tcp:// or ipc:// endpoint" <<<"$out" || fail "$1 '$2': reason '$out'"
}
bad_arg -A "tcp://"
bad_arg -a "udp://127.0.0.1:1"
pass "endpoints given with -A and -a are checked as the file's are"

start_ctld
zr() { "$VS_BIN/zraw" -t 1000 "$@" 2>&1 || true; }

# Admin requests that are answered with a reason.
# (admin protocol version 2; 41 09 = a version that does not exist)
for frame in 00 5802010000 41090100 41027700 4102050003616263 41020500016100000000ff \
	410204000a6a6f62 41020600016a; do
	out=$(zr "$ADMIN_EP" "$frame")
	[ "$out" = "bad reply: bad magic 0x41 (expected 0x56)" ] ||
		ctld_fail "admin frame $frame: no reply from the controller ($out)"
done
pass "8 malformed admin requests answered (bad magic, version, type, length, name)"
# Dropped without an answer, never a crash: empty, multi-part, oversized.
zr "$ADMIN_EP" "" >/dev/null
zr "$ADMIN_EP" 4102010000 4102010000 >/dev/null
zr "$ADMIN_EP" "00*4096" >/dev/null
kill -0 "$CTLD_PID" 2>/dev/null || ctld_fail "controller died on admin garbage"
grep -q 'admin: bad request refused: bad magic' "$TMP/ctld.log" &&
	grep -q 'admin: bad request refused: admin protocol version 9 not supported' "$TMP/ctld.log" ||
	ctld_fail "refusals not logged"
pass "empty, multi-part and oversized admin messages dropped; refusals logged with reasons"

# The agents' endpoint: zraw is a REQ (an extra empty frame): refused as multi-part; a
# valid-looking RATE alone would come from an unregistered peer.
zr "$CTLD_AGENTS" 43020400 >/dev/null
zr "$CTLD_AGENTS" "ff*64" >/dev/null
zr "$CTLD_AGENTS" "43*100000" >/dev/null
kill -0 "$CTLD_PID" 2>/dev/null || ctld_fail "controller died on agent garbage"
grep -q 'agent: multi-frame message refused' "$TMP/ctld.log" || ctld_fail "agent garbage not logged"
pass "garbage on the agents' endpoint refused"

actl node list >/dev/null || ctld_fail "controller no longer answers"
out=$(actl rate x 50 2>&1) && ctld_fail "rate for an unknown job accepted"
grep -q "unknown job 'x'" <<<"$out" || ctld_fail "controller no longer judges requests: $out"
pass "controller still answers after the garbage"
ctld_check_clean
