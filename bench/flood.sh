#!/usr/bin/env bash
# What a flooding node does to another node (issue 11, docs/security.md "Abuse limits").
# A fresh vsched-controller with CURVE on tcp://127.0.0.1:* (keys made here) and two
# authenticated fakeagents (tests/helpers/fakeagent.c): "victim" sends a heartbeat every
# 10 ms and measures each echo's round trip (the controller reads, handles and answers it
# on the same path as a report: agents_recv -> outbox -> flush); "flooder" registers, joins
# a job and sends RATE frames as fast as its socket takes them. For each MODE the victim
# runs alone for SECONDS, then again under the flood; the table gives the flooder's frames
# sent, the drops the controller counted, and the victim's round trips side by side.
#
#   bench/flood.sh [BUILD_DIR]        MODES: agent_msg_rate 20000 (the default) and 0 (none)
#
# Environment: SECONDS_EACH (5). Takes no real-time lock itself (no scheduler runs); run it
# under `flock /tmp/vsched-rt.lock` on a shared machine so that no scheduler test runs
# meanwhile, and record `uptime` with the figures. Bounded: every process has a timeout.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
BIN=$BUILD/bin
S=${SECONDS_EACH:-5}
for b in vsched-controller vschedctl fakeagent; do
	[ -x "$BIN/$b" ] || { echo "no $BIN/$b: build it first (scripts/build.sh)" >&2; exit 1; }
done
TMP=$(mktemp -d /tmp/vsflood.XXXXXX)
CPID=
cleanup() {
	[ -z "$CPID" ] || kill -TERM "$CPID" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$TMP"
}
trap cleanup EXIT

K=$TMP/keys
mkdir -p "$K/allow/agents" "$K/allow/admins"
"$BIN/vschedctl" keygen "$K/ctl" >/dev/null
for n in victim flooder; do
	"$BIN/vschedctl" keygen "$K/$n" --node "$n" >/dev/null
	cp "$K/$n" "$K/allow/agents/"
done
fa() { local n=$1; shift; timeout 60 "$BIN/fakeagent" -k "$K/${n}_secret" -s "$K/ctl" "$AG" "$n" "$@"; }
field() { sed -n "s/.*$1=\([0-9]*\).*/\1/p" <<<"$2"; }

echo "uptime: $(uptime)"
echo "commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'), build: $BUILD"
echo
printf '| agent_msg_rate | flooder frames/s | dropped | victim alone p50 / p99 / max (ms) | victim under flood p50 / p99 / max (ms) | echoes lost |\n'
printf '|---|---|---|---|---|---|\n'
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
	alone=$(fa victim ping "$S" 10)
	fa flooder flood $((S + 1)) >"$TMP/flood.out" &
	FP=$!
	sleep 0.5
	under=$(fa victim ping "$S" 10)
	wait "$FP"
	flood=$(cat "$TMP/flood.out")
	dropped=$({ grep -o 'node flooder: over agent_msg_rate ([0-9]*/s): [0-9]*' "$TMP/ctld.log" ||
		true; } | tail -1 | awk '{ print $NF }')
	ms() { awk -v a="$(field p50_us "$1")" -v b="$(field p99_us "$1")" -v c="$(field max_us "$1")" \
		'BEGIN { printf "%.1f / %.1f / %.1f", a / 1000, b / 1000, c / 1000 }'; }
	printf '| %s | %s | %s | %s | %s | %s |\n' "$rate" \
		"$(awk -v n="$(field sent "$flood")" -v s="$(sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' <<<"$flood")" \
			'BEGIN { printf "%.0f", n / s }')" \
		"${dropped:-0} (log lines are rate-limited: a lower bound)" "$(ms "$alone")" "$(ms "$under")" \
		"$(field lost "$under")"
	kill -TERM "$CPID"
	wait "$CPID" || true
	CPID=
done
