# curve_lib.sh (sourced after lib.sh by tests/integration/security_*.sh): a controller with
# CURVE on loopback and keys made in $TMP (docs/security.md).
#   K                         the key directory: K/NAME + K/NAME_secret, K/allow/{agents,admins}
#   curve_keys                the controller's pair (K/ctl) and empty allow-lists
#   curve_agent NAME          an agent key bound to node NAME, listed in allow/agents/
#   curve_start_ctld LINES... the controller on $TMP/ctld.conf (curve_key, allow_dir and
#                             LINES), agents on tcp://127.0.0.1:*, admin ADMIN_EP (default
#                             tcp://127.0.0.1:*); sets CTLD_PID, AG and AD (the endpoints)
#   fa NAME ARGS...           fakeagent as node NAME with its key, against AG
#   fa_bg NAME ARGS...        the same in the background: FA_PID is fakeagent's own pid (in
#                             PIDS), so that SIGTERM reaches it
K="$TMP/keys"

curve_keys() {
	mkdir -p "$K/allow/agents" "$K/allow/admins"
	"$VS_BIN/vschedctl" keygen "$K/ctl" >/dev/null || fail "keygen of the controller's key failed"
}

curve_agent() {
	"$VS_BIN/vschedctl" keygen "$K/$1" --node "$1" >/dev/null || fail "keygen $1 failed"
	cp "$K/$1" "$K/allow/agents/"
}

curve_start_ctld() {
	{
		echo "curve_key = \"$K/ctl_secret\";"
		echo "allow_dir = \"$K/allow\";"
		printf '%s\n' "$@"
	} >"$TMP/ctld.conf"
	"$VS_BIN/vsched-controller" -f -c "$TMP/ctld.conf" -A 'tcp://127.0.0.1:*' \
		-a "${ADMIN_EP:-tcp://127.0.0.1:*}" -S "$TMP/st" >"$TMP/ctld.log" 2>&1 &
	CTLD_PID=$!
	PIDS+=("$CTLD_PID")
	wait_for "$TMP/ctld.log" 'admin: listening on' 5
	AG=$(sed -n 's/.*agents: listening on \(tcp:[^ ]*\).*/\1/p' "$TMP/ctld.log")
	AD=$(sed -n 's/.*admin: listening on \([a-z]*:[^ ]*\).*/\1/p' "$TMP/ctld.log")
	[ -n "$AG" ] && [ -n "$AD" ] || fail "controller endpoints not found in its log"
}

fa() {
	local n=$1
	shift
	"$VS_BIN/fakeagent" -k "$K/${n}_secret" -s "$K/ctl" "$AG" "$n" "$@"
}

fa_bg() {
	local n=$1
	shift
	"$VS_BIN/fakeagent" -k "$K/${n}_secret" -s "$K/ctl" "$AG" "$n" "$@" &
	FA_PID=$!
	PIDS+=("$FA_PID")
}
