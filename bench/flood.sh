#!/usr/bin/env bash
# What a flooding node does to another node (issue 11, docs/security.md "Abuse limits").
# A fresh vsched-controller with CURVE on tcp://127.0.0.1:* (keys made here) and two
# authenticated fakeagents (tests/helpers/fakeagent.c): "victim" sends a heartbeat every
# 10 ms and measures each echo's round trip (the controller reads, handles and answers it
# on the same path as a report: agents_recv -> outbox -> flush); "flooder" registers, joins
# a job and sends RATE frames as fast as its socket takes them. For each MODE the victim
# runs alone for SECONDS, then again under the flood; the table gives the flooder's frames
# sent, the drops the controller counted, and the victim's round trips side by side.
# The second table: another node's control decisions. Node "worker" (fakeagent accept: it
# acknowledges every constraint at once) runs job "work" (R_max given); DECISIONS calls of
# `vschedctl rate work 30|40` (each a transaction: admin -> controller -> CONSTRAINT to
# worker -> CONSTRAINT_ACK -> reply, tests/helpers/decision_lib.sh) are timed alone and
# under the flood, after the victim's pings; beside them as many `vschedctl job show work`
# (answered by the controller itself): vschedctl's start-up and the admin path, which
# are part of every decision's figure.
#
#   bench/flood.sh [BUILD_DIR]        MODES: agent_msg_rate 20000 (the default) and 0 (none)
#
# Environment: SECONDS_EACH (5), DECISIONS (200, even). Takes no real-time lock itself (no
# scheduler runs); run it
# under `flock /tmp/vsched-rt.lock` on a shared machine so that no scheduler test runs
# meanwhile, and record `uptime` with the figures. Bounded: every process has a timeout.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
BIN=$BUILD/bin
S=${SECONDS_EACH:-5}
N=${DECISIONS:-200}
for b in vsched-controller vschedctl fakeagent; do
	[ -x "$BIN/$b" ] || { echo "no $BIN/$b: build it first (scripts/build.sh)" >&2; exit 1; }
done
TMP=$(mktemp -d /tmp/vsflood.XXXXXX)
CPID= FP= WP=
cleanup() {
	local p
	for p in "$CPID" "$FP" "$WP"; do
		[ -z "$p" ] || kill -TERM "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	rm -rf "$TMP"
}
trap cleanup EXIT

K=$TMP/keys
mkdir -p "$K/allow/agents" "$K/allow/admins"
"$BIN/vschedctl" keygen "$K/ctl" >/dev/null
for n in victim flooder worker; do
	"$BIN/vschedctl" keygen "$K/$n" --node "$n" >/dev/null
	cp "$K/$n" "$K/allow/agents/"
done
fa() { local n=$1; shift; timeout 60 "$BIN/fakeagent" -k "$K/${n}_secret" -s "$K/ctl" "$AG" "$n" "$@"; }
# fa_bg NAME ARGS...: in the background, FA_PID the timeout's pid (it passes SIGTERM on)
fa_bg() {
	local n=$1
	shift
	timeout 600 "$BIN/fakeagent" -k "$K/${n}_secret" -s "$K/ctl" "$AG" "$n" "$@" &
	FA_PID=$!
}
field() { sed -n "s/.*$1=\([0-9]*\).*/\1/p" <<<"$2"; }
ms() { awk -v a="$(field p50_us "$1")" -v b="$(field p99_us "$1")" -v c="$(field max_us "$1")" \
	'BEGIN { printf "%.1f / %.1f / %.1f", a / 1000, b / 1000, c / 1000 }'; }
ctl() { "$BIN/vschedctl" -C "ipc://$TMP/admin.sock" "$@"; }
source "$ROOT/tests/helpers/decision_lib.sh"

echo "uptime: $(uptime)"
echo "commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'), build: $BUILD"
echo
printf '| agent_msg_rate | flooder frames/s | dropped | victim alone p50 / p99 / max (ms) | victim under flood p50 / p99 / max (ms) | echoes lost |\n'
printf '|---|---|---|---|---|---|\n'
DEC_ROWS=()
for rate in 20000 0; do
	cat >"$TMP/ctld.conf" <<EOF
curve_key = "$K/ctl_secret";
allow_dir = "$K/allow";
heartbeat = "1s";
node_timeout = "30s";
agent_msg_rate = $rate;
EOF
	: >"$TMP/ctld.log"
	timeout 300 "$BIN/vsched-controller" -f -c "$TMP/ctld.conf" -A 'tcp://127.0.0.1:*' \
		-a "ipc://$TMP/admin.sock" -S "$TMP/st-$rate" >"$TMP/ctld.log" 2>&1 &
	CPID=$!
	for _ in $(seq 50); do grep -q 'admin: listening' "$TMP/ctld.log" && break; sleep 0.1; done
	AG=$(sed -n 's/.*agents: listening on \(tcp:[^ ]*\).*/\1/p' "$TMP/ctld.log")
	fa_bg worker accept 600 work >"$TMP/worker.out"
	WP=$FA_PID
	for _ in $(seq 50); do ctl job show work >/dev/null 2>&1 && break; sleep 0.1; done
	ctl job set work --rmax 1000 >/dev/null
	alone=$(fa victim ping "$S" 10)
	req_alone=$(request_times "$BIN/vschedctl" "ipc://$TMP/admin.sock" work "$N")
	dec_alone=$(decision_times "$BIN/vschedctl" "ipc://$TMP/admin.sock" work "$N")
	fa_bg flooder flood 600 >"$TMP/flood.out" # until SIGTERM
	FP=$FA_PID
	sleep 0.5
	under=$(fa victim ping "$S" 10)
	req_under=$(request_times "$BIN/vschedctl" "ipc://$TMP/admin.sock" work "$N")
	dec_under=$(decision_times "$BIN/vschedctl" "ipc://$TMP/admin.sock" work "$N")
	kill -TERM "$FP" 2>/dev/null || { echo "the flood ended before the measurements" >&2; exit 1; }
	wait "$FP"
	FP=
	kill -TERM "$WP"
	wait "$WP"
	WP=
	flood=$(cat "$TMP/flood.out")
	dropped=$({ grep -o 'node flooder: over agent_msg_rate ([0-9]*/s): [0-9]*' "$TMP/ctld.log" ||
		true; } | tail -1 | awk '{ print $NF }')
	printf '| %s | %s | %s | %s | %s | %s |\n' "$rate" \
		"$(awk -v n="$(field sent "$flood")" -v s="$(sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' <<<"$flood")" \
			'BEGIN { printf "%.0f", n / s }')" \
		"${dropped:-0} (log lines are rate-limited: a lower bound)" "$(ms "$alone")" "$(ms "$under")" \
		"$(field lost "$under")"
	DEC_ROWS+=("$(printf '| %s | %s | %s | %s | %s | %s |' "$rate" "$(ms "$req_alone")" \
		"$(ms "$req_under")" "$(ms "$dec_alone")" "$(ms "$dec_under")" \
		"$(($(field failed "$dec_alone") + $(field failed "$dec_under"))) of $((2 * N))")")
	kill -TERM "$CPID"
	wait "$CPID" || true
	CPID=
done
echo
echo "Another node's control decisions: $N calls each, p50 / p99 / max (ms), vschedctl start-up included"
echo
printf '| agent_msg_rate | job show alone | job show under flood | decision alone | decision under flood | failed |\n'
printf '|---|---|---|---|---|---|\n'
printf '%s\n' "${DEC_ROWS[@]}"
