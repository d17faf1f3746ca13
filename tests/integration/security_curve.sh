# security_curve: the controller's authenticated control plane (docs/security.md), with the
# real vsched-controller, vsched-agent and vschedctl on loopback tcp (ports the system picks):
#  - keys made by `vschedctl keygen` (mode 0600, ZeroMQ certificate form);
#  - agents' endpoint: no key, a key not in agents/, an admin key -> refused at the
#    handshake; an agent key registers only the node it is bound to; the real agent with
#    its key registers;
#  - admin endpoint: no key, an agent key -> refused at the handshake; a read-only key lists
#    but cannot set a rate; a full key can;
#  - a key removed from the allow-list + SIGHUP: its connection's next request is refused;
#  - refusals logged once per key per minute;
#  - an ipc admin endpoint checks the peer's uid: root yes, nobody no, nobody in
#    admin_group yes;
#  - fail closed at start: a non-loopback endpoint without keys (without insecure = true),
#    bad key files and allow-lists are refused with one-line reasons, the daemon never
#    starts half-secured.
# No scheduler involved. Bounded: the whole test runs under a 100 s timeout.
if [ -z "${SEC_TEST_TIMED:-}" ]; then
	SEC_TEST_TIMED=1 exec timeout -k 5 100 bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"
for b in vsched-agent vsched-controller vschedctl fakeagent; do
	[ -x "$VS_BIN/$b" ] || skip "$b not built"
done
command -v jq >/dev/null || skip "jq not installed"

CTLD="$VS_BIN/vsched-controller"
source "$VS_SRC/tests/helpers/curve_lib.sh"
kg() { "$VS_BIN/vschedctl" keygen "$@" >/dev/null || fail "keygen $* failed"; }
curve_keys
curve_agent n1
curve_agent n2
kg "$K/stranger" --node n1
kg "$K/ro" --role read
kg "$K/full" --role full
[ "$(stat -c %a "$K/n1_secret")" = 600 ] && [ "$(stat -c %a "$K/n1")" = 600 ] ||
	fail "keygen modes: $(stat -c '%n %a' "$K"/n1*)"
grep -q '^    public-key = "' "$K/n1" && ! grep -q secret-key "$K/n1" &&
	grep -q '^    secret-key = "' "$K/n1_secret" || fail "keygen: certificate form"
"$VS_BIN/vschedctl" keygen "$K/n1" --node n1 2>"$TMP/err" && fail "keygen overwrote a key"
pass "keygen: public and secret certificates, mode 0600, never overwritten"
cp "$K/ro" "$K/full" "$K/allow/admins/"

on_fail() { tail -20 "$TMP/ctld.log"; }
curve_start_ctld 'heartbeat = "200ms";' 'node_timeout = "1s";'
grep -q 'agents: listening on .* (CURVE' "$TMP/ctld.log" || fail "agents' endpoint not CURVE"

# --- the agents' endpoint ---
agent_try() { # EXPECTED KEY NODE: fakeagent's verdict
	local want=$1 key=$2 node=$3 got
	if [ "$key" = none ]; then
		got=$("$VS_BIN/fakeagent" "$AG" "$node" hello || true)
	else
		got=$("$VS_BIN/fakeagent" -k "$K/${key}_secret" -s "$K/ctl" "$AG" "$node" hello || true)
	fi
	[[ "$got" == $want* ]] || fail "agent key $key as $node: '$got', expected $want"
	pass "agents' endpoint, key $key as node $node: $got"
}
agent_try HANDSHAKE_REFUSED none n1
agent_try HANDSHAKE_REFUSED stranger n1
agent_try HANDSHAKE_REFUSED full n1
agent_try "REFUSED -13 this key may register node n1 only" n1 n2
agent_try REGISTERED n1 n1
STRANGER=$(sed -n 's/.*public-key = "\(.*\)"/\1/p' "$K/stranger")
grep -qF "refused key $STRANGER on agents: key not in the allow-list" "$TMP/ctld.log" ||
	fail "refusal of the stranger's key not logged"
grep -q "refused a client on agents: handshake failed before authentication" "$TMP/ctld.log" ||
	fail "the client without a key: refusal not logged"
grep -q "an administrator's key on the agents' endpoint" "$TMP/ctld.log" ||
	fail "admin key on the agents' endpoint: refusal not logged"
for i in 1 2 3; do "$VS_BIN/fakeagent" -k "$K/stranger_secret" -s "$K/ctl" "$AG" n1 hello >/dev/null || true; done
[ "$(grep -cF "refused key $STRANGER" "$TMP/ctld.log")" = 1 ] ||
	fail "refusals of one key logged more than once a minute"
pass "refusals logged once per key per minute"

# the real agent with its key (no vsched needed to register)
cat >"$TMP/agent.conf" <<EOF
node_name = "n1";
controller = "$AG";
app_endpoint = "ipc://$TMP/agent.sock";
vsched_endpoint = "ipc://$TMP/none.sock";
heartbeat = "200ms";
controller_timeout = "1s";
curve_key = "$K/n1_secret";
controller_key = "$K/ctl";
EOF
"$VS_BIN/vsched-agent" -f -c "$TMP/agent.conf" >"$TMP/agent.log" 2>&1 &
AGENT_PID=$!
PIDS+=("$AGENT_PID")
wait_for "$TMP/ctld.log" 'node n1 registered' 5
pass "vsched-agent with its key registered node n1"
sed -e "s|$K/n1_secret|$K/stranger_secret|" -e "s|agent.sock|agent2.sock|" "$TMP/agent.conf" \
	>"$TMP/agent2.conf"
"$VS_BIN/vsched-agent" -f -c "$TMP/agent2.conf" >"$TMP/agent2.log" 2>&1 &
PIDS+=("$!")
wait_for "$TMP/agent2.log" 'controller link: handshake refused \(ZAP status 400\)' 5
kill -TERM "$!"
pass "vsched-agent with a key not in agents/: $(grep -m1 -o 'handshake refused.*' "$TMP/agent2.log")"
# without CURVE against the CURVE controller: the controller only closes the connection, or
# the agent reads its greeting and fails; either way the agent says why it cannot register
grep -v -e '^curve_key' -e '^controller_key' "$TMP/agent.conf" |
	sed -e "s|agent.sock|agent3.sock|" >"$TMP/agent3.conf"
"$VS_BIN/vsched-agent" -f -c "$TMP/agent3.conf" >"$TMP/agent3.log" 2>&1 &
AGENT3=$!
PIDS+=("$AGENT3")
wait_for "$TMP/agent3.log" 'controller link: (handshake refused|the controller closed the connection during the handshake)' 5
stop_wait "$AGENT3" 10 || fail "agent without CURVE: exit $? at SIGTERM"
pass "vsched-agent without CURVE: $(grep -m1 -Eo 'controller link: (handshake refused|the controller closed).*' "$TMP/agent3.log")"
sed -i 's/node_name = "n1"/node_name = "n2"/' "$TMP/agent.conf"
"$VS_BIN/vsched-agent" -n -c "$TMP/agent.conf" >/dev/null 2>"$TMP/err" &&
	fail "agent accepted a key made for another node"
grep -q 'curve_key: the key is for node n1, not n2' "$TMP/err" || fail "agent: $(cat "$TMP/err")"
pass "vsched-agent refuses at start a key bound to another node: $(cat "$TMP/err")"

# --- the admin endpoint ---
actl() { # KEY ARGS...: vschedctl against the admin endpoint with KEY (none: no key)
	local key=$1
	shift
	if [ "$key" = none ]; then
		"$VS_BIN/vschedctl" -C "$AD" "$@"
	else
		"$VS_BIN/vschedctl" -C "$AD" -k "$K/${key}_secret" --controller-key "$K/ctl" "$@"
	fi
}
admin_refused() { # RE KEY ARGS...
	local re=$1 rc=0
	shift
	actl "$@" >/dev/null 2>"$TMP/err" || rc=$?
	[ "$rc" = 1 ] && grep -Eq "$re" "$TMP/err" || fail "vschedctl with key $*: exit $rc: $(cat "$TMP/err")"
	pass "admin endpoint, key $*: refused: $(cat "$TMP/err")"
}
admin_refused 'refused the connection at the handshake' none node list
admin_refused 'refused the connection at the handshake' n1 node list
grep -q "an agent's key on the admin endpoint" "$TMP/ctld.log" || fail "agent key on admin not logged"
actl ro node list --json | jq -e '.[] | select(.name == "n1")' >/dev/null ||
	fail "read-only key cannot list nodes"
pass "read-only key lists nodes"
admin_refused 'rate jobA: permission denied: a read-only admin key' ro rate jobA 50
admin_refused 'job set jobA: permission denied: a read-only admin key' ro job set jobA --epsilon 3
admin_refused "rate jobA: unknown job 'jobA'" full rate jobA 50
pass "full key passes the permission check (the job is unknown)"

# revocation: the read-only key removed, SIGHUP: refused at its next handshake
rm "$K/allow/admins/ro"
kill -HUP "$CTLD_PID"
wait_for "$TMP/ctld.log" 'allow-lists reloaded: 3 key' 5
admin_refused 'refused the connection at the handshake' ro node list
pass "a key removed from admins/ + SIGHUP is refused"
echo garbage >"$K/allow/admins/bad"
kill -HUP "$CTLD_PID"
wait_for "$TMP/ctld.log" 'allow-lists not reloaded' 5
actl full node list >/dev/null || fail "a bad reload dropped the allow-lists in force"
pass "a bad allow-list on SIGHUP is refused, the previous one stays: $(grep -m1 -o 'allow-lists not reloaded.*' "$TMP/ctld.log")"
rm "$K/allow/admins/bad"
stop_wait "$CTLD_PID" 15 || fail "controller exited $? at SIGTERM"
grep -Eq 'AddressSanitizer|LeakSanitizer|runtime error:' "$TMP/ctld.log" "$TMP/agent.log" &&
	fail "sanitizer report"

# --- ipc admin: peer credentials (abstract socket: no file mode in the way) ---
IPC="ipc://@vsched-sec-$$"
cat >"$TMP/ipc.conf" <<EOF
admin_group = "adm";
EOF
"$CTLD" -f -c "$TMP/ipc.conf" -A 'tcp://127.0.0.1:*' -a "$IPC" -S "$TMP/st2" >"$TMP/ctld.log" 2>&1 &
CTLD_PID=$!
PIDS+=("$CTLD_PID")
wait_for "$TMP/ctld.log" 'admin: listening on ipc.*peer credentials checked' 5
"$VS_BIN/vschedctl" -C "$IPC" node list >/dev/null || fail "root refused on the ipc admin endpoint"
pass "ipc admin: root allowed"
if command -v setpriv >/dev/null; then
	ADMGID=$(getent group adm | cut -d: -f3)
	rc=0
	setpriv --reuid=65534 --regid=65534 --clear-groups "$VS_BIN/vschedctl" -C "$IPC" node list \
		>/dev/null 2>"$TMP/err" || rc=$?
	[ "$rc" = 1 ] && grep -q 'refused the connection at the handshake' "$TMP/err" ||
		fail "uid 65534 on the ipc admin endpoint: exit $rc: $(cat "$TMP/err")"
	grep -q 'refused NULL peer .*:65534:65534:' "$TMP/ctld.log" || fail "uid refusal not logged"
	pass "ipc admin: uid 65534 outside admin_group refused: $(cat "$TMP/err")"
	setpriv --reuid=65534 --regid="$ADMGID" --clear-groups "$VS_BIN/vschedctl" -C "$IPC" \
		node list >/dev/null 2>"$TMP/err" || fail "member of admin_group refused: $(cat "$TMP/err")"
	pass "ipc admin: uid 65534 in admin_group adm (gid $ADMGID) allowed"
else
	echo "# setpriv missing: the uid refusal is not exercised"
fi
stop_wait "$CTLD_PID" 15 || fail "controller exited $? at SIGTERM"

# --- fail closed at start: one-line reasons ---
start_refused() { # RE CONFIG_LINES... (the controller must refuse -n and a start)
	local re=$1 rc=0
	shift
	printf '%s\n' "$@" >"$TMP/bad.conf"
	"$CTLD" -n -c "$TMP/bad.conf" -S "$TMP/st3" >/dev/null 2>"$TMP/err" || rc=$?
	[ "$rc" != 0 ] && [ "$(wc -l <"$TMP/err")" = 1 ] && grep -Eq "$re" "$TMP/err" ||
		fail "config $*: exit $rc: '$(cat "$TMP/err")', expected /$re/"
	pass "refused: $(cat "$TMP/err")"
}
start_refused 'agent_endpoint: tcp://0.0.0.0:7710 is not loopback and no curve_key is set' \
	'agent_endpoint = "tcp://0.0.0.0:7710";'
start_refused 'admin_endpoint: tcp://\*:7711 is not loopback' 'admin_endpoint = "tcp://*:7711";'
printf 'agent_endpoint = "tcp://0.0.0.0:7710";\ninsecure = true;\n' >"$TMP/ok.conf"
"$CTLD" -n -c "$TMP/ok.conf" >/dev/null || fail "insecure = true not accepted"
pass "insecure = true allows a non-loopback endpoint without keys"
rc=0
"$CTLD" -f -c /dev/null -A 'tcp://0.0.0.0:*' -S "$TMP/st3" >/dev/null 2>"$TMP/err" || rc=$?
[ "$rc" = 1 ] && grep -q 'not loopback' "$TMP/err" || fail "-A 0.0.0.0 without keys: exit $rc"
pass "the command line's -A is held to the same rule"
chmod 0644 "$K/ctl_secret"
start_refused 'curve_key: .*ctl_secret: mode 0644: a secret key file must be private' \
	"curve_key = \"$K/ctl_secret\";" "allow_dir = \"$K/allow\";"
chmod 0600 "$K/ctl_secret"
start_refused 'curve_key: .*no secret-key \(is this the public certificate' \
	"curve_key = \"$K/ctl\";" "allow_dir = \"$K/allow\";"
start_refused 'curve_key: .*: No such file' "curve_key = \"$K/nosuch\";"
start_refused 'allow_dir: .*/agents: No such file' \
	"curve_key = \"$K/ctl_secret\";" "allow_dir = \"$TMP\";"
cp "$K/n1_secret" "$K/allow/agents/oops"
start_refused 'allow_dir: .*oops: holds a secret key' \
	"curve_key = \"$K/ctl_secret\";" "allow_dir = \"$K/allow\";"
rm "$K/allow/agents/oops"
printf 'curve\n    public-key = "short"\n' >"$K/allow/agents/n3"
start_refused 'allow_dir: .*n3: public-key: not a 40-character Z85 key' \
	"curve_key = \"$K/ctl_secret\";" "allow_dir = \"$K/allow\";"
printf 'metadata\n    role = "root"\ncurve\n    public-key = "x"\n' >"$K/allow/agents/n3"
start_refused 'allow_dir: .*n3:2: role: must be "read" or "full"' \
	"curve_key = \"$K/ctl_secret\";" "allow_dir = \"$K/allow\";"
cp "$K/n1" "$K/allow/admins/n1-again"
rm "$K/allow/agents/n3"
start_refused 'the same key is listed as' \
	"curve_key = \"$K/ctl_secret\";" "allow_dir = \"$K/allow\";"
rm "$K/allow/admins/n1-again"
head -c 3000 /dev/urandom >"$K/allow/agents/noise"
start_refused 'allow_dir: .*noise: ' "curve_key = \"$K/ctl_secret\";" "allow_dir = \"$K/allow\";"
rm "$K/allow/agents/noise"
start_refused 'admin_group: no group "no-such-group-x"' 'admin_group = "no-such-group-x";'
rc=0
printf 'node_name = "n1";\ncontroller = "tcp://10.1.2.3:7710";\n' >"$TMP/a.conf"
"$VS_BIN/vsched-agent" -n -c "$TMP/a.conf" >/dev/null 2>"$TMP/err" || rc=$?
[ "$rc" != 0 ] && grep -q 'controller: tcp://10.1.2.3:7710 is not loopback and no curve_key' "$TMP/err" ||
	fail "agent without keys to a remote controller: exit $rc: $(cat "$TMP/err")"
pass "agent refused: $(cat "$TMP/err")"
printf 'node_name = "n1";\ncurve_key = "%s";\n' "$K/n1_secret" >"$TMP/a.conf"
rc=0
"$VS_BIN/vsched-agent" -n -c "$TMP/a.conf" >/dev/null 2>"$TMP/err" || rc=$?
[ "$rc" != 0 ] && grep -q 'curve_key: needs controller_key too' "$TMP/err" ||
	fail "agent curve_key alone: exit $rc: $(cat "$TMP/err")"
pass "agent refused: $(cat "$TMP/err")"
rc=0
"$VS_BIN/vschedctl" -C "tcp://127.0.0.1:1" -k "$K/n1" --controller-key "$K/ctl" node list \
	2>"$TMP/err" || rc=$?
[ "$rc" = 2 ] && grep -q 'no secret-key' "$TMP/err" || fail "vschedctl public key as -k: exit $rc"
pass "vschedctl refused: $(cat "$TMP/err")"
