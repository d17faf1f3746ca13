#!/usr/bin/env bash
# apprate_agent_killed: killing the agent never stalls the application (libapprate issue,
# acceptance item). A small C program built here against the build's libapprate calls
# apprate_progress() in a tight loop for 12 s (long enough that a slow, shared machine still
# kills and restarts the agent mid-run) and prints, every 50 ms, its elapsed time and how
# many calls it has made. It reports to a real vsched-agent (with a real vsched and
# `ctlpeer router` standing in for the controller). About 2 s in, the test kill -9s the
# agent (by pid; it started it), waits 1.5 s, and starts a new agent on the same endpoint.
# Outcomes checked:
#  - the app's reports reached the stand-in controller before the kill (it was connected);
#  - no stall: no gap between the app's progress lines (or from its start to its first
#    line, or from its last line to its end) larger than 500 ms (the interval is 50 ms);
#  - its call rate while the agent is dead, and after the restart, is at least 50 % of its
#    rate before the kill (generous: the machine is noisy; a library that blocked on the
#    dead agent would show as a stall or a collapse);
#  - it runs to its end and exits 0; every apprate_progress() returned 0; its
#    apprate_stats() count every call (units = calls) and show reports dropped (the
#    outage is counted, not an error), reports sent as well;
#  - after the restart its reports reach the controller again through the new agent
#    (libapprate re-registers on the new connection).
# Bounded: the whole test runs under a 55 s timeout (exit 124 = failed by timeout).
if [ -z "${AGENT_TEST_TIMED:-}" ]; then
	AGENT_TEST_TIMED=1 exec timeout -k 5 55 bash "$0" "$@"
fi
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"

need_root
for b in vsched vsched-agent ctlpeer; do
	[ -x "$VS_BIN/$b" ] || skip "$b not built"
done
command -v cc >/dev/null || skip "cc not found"
LIBDIR=$(cd "$VS_BIN/../libapprate" 2>/dev/null && pwd) || skip "no libapprate in the build"
[ -f "$LIBDIR/libapprate.so" ] || skip "libapprate.so not built"

APP_PID=
source "$VS_SRC/tests/helpers/agent_lib.sh"
on_fail_more() {
	echo "--- second agent log (tail)"
	tail -20 "$TMP/agent2.log" 2>/dev/null || true
	echo "--- app (tail)"
	tail -5 "$TMP/app.out" 2>/dev/null || true
}
# app_ms: the elapsed time (ms) of the app's last progress line.
app_ms() { awk '$1 == "T" { t = $2 } END { print t + 0 }' "$TMP/app.out"; }

# --- the application ------------------------------------------------------------------------
CFLAGS_EXTRA=()
if grep -q 'NEEDED.*libasan' <<<"$(readelf -d "$LIBDIR/libapprate.so" 2>/dev/null)"; then
	CFLAGS_EXTRA=("-fsanitize=address,undefined")
fi
cat >"$TMP/app.c" <<'EOF'
#define _POSIX_C_SOURCE 200809L
#include <apprate.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* app ENDPOINT SECONDS: apprate_progress in a tight loop; "T ms calls" every 50 ms. */
int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	struct apprate_opts o = APPRATE_OPTS_INIT;
	struct apprate_stats st;
	o.endpoint = argv[1];
	o.rank = 0;
	o.report_ms = 100;
	apprate_t *r = apprate_open("killjob", &o);
	if (!r) {
		printf("open: %s\n", apprate_strerror(-errno));
		return 1;
	}
	long long t0 = now_ns(), end = t0 + atoll(argv[2]) * 1000000000LL, next = t0 + 50000000LL;
	unsigned long long calls = 0, errors = 0;
	long long t;
	printf("START\n");
	fflush(stdout);
	do {
		for (int k = 0; k < 1024; k++)
			if (apprate_progress(r, 1) != 0)
				errors++;
		calls += 1024;
		t = now_ns();
		if (t >= next) {
			printf("T %lld %llu\n", (t - t0) / 1000000, calls);
			fflush(stdout);
			next = t + 50000000LL;
		}
	} while (t < end);
	printf("END %lld %llu\n", (t - t0) / 1000000, calls);
	if (apprate_stats(r, &st) != 0)
		return 1;
	printf("STATS calls=%llu errors=%llu units=%llu units_reported=%llu units_dropped=%llu "
	       "reports_sent=%llu reports_dropped=%llu registers_sent=%llu\n",
	       calls, errors, (unsigned long long)st.units, (unsigned long long)st.units_reported,
	       (unsigned long long)st.units_dropped, (unsigned long long)st.reports_sent,
	       (unsigned long long)st.reports_dropped, (unsigned long long)st.registers_sent);
	apprate_close(&r);
	return errors != 0 || st.units != calls;
}
EOF
cc -std=c11 -Wall -Wextra -Werror "${CFLAGS_EXTRA[@]}" -I"$VS_SRC/libapprate" "$TMP/app.c" \
	-o "$TMP/app" -L"$LIBDIR" -lapprate -Wl,-rpath,"$LIBDIR" >"$TMP/cc.log" 2>&1 ||
	fail "building the app: $(cat "$TMP/cc.log")"

# --- vsched, stand-in controller, agent --------------------------------------------------
start_vsched
start_peer

# provisional_period 0 (the default): the app runs unmanaged, so its call rate is not
# shaped by a reservation and before/after rates compare directly.
write_agent_config node_name='"killnode"' controller_timeout='"2s"' sample_windows= \
	mem_capacity_mbs= net_capacity_mbs= provisional_period= provisional_slice=
# start_logged_agent LOG: a new agent; its pid in AGENT_PID (and PIDS, for cleanup).
start_logged_agent() {
	"$VS_BIN/vsched-agent" -f -c "$TMP/agent.conf" >>"$1" 2>&1 &
	AGENT_PID=$!
	PIDS+=("$AGENT_PID")
	wait_for "$1" 'controller link: registered' 5
}
start_logged_agent "$TMP/agent.log"
pass "agent registered with the stand-in controller"

"$TMP/app" "ipc://$TMP/agent.sock" 12 >"$TMP/app.out" 2>"$TMP/app.err" &
APP_PID=$!
PIDS+=("$APP_PID")
wait_for "$TMP/peer.out" '^JOB_PROC job=[0-9]+ rank=0 pid=[0-9]+ event=joined name=killjob$' 5
JOB=$(sed -n 's/^JOB_PROC job=\([0-9]*\) rank=0 .*event=joined name=killjob$/\1/p' "$TMP/peer.out" | head -1)
wait_for "$TMP/peer.out" "^RATE job=$JOB rank=0 " 5
pass "the app registered and its reports reach the controller (job $JOB)"

# Kill the agent about 2 s into the run.
for _ in $(seq 1 100); do
	[ "$(app_ms)" -ge 2000 ] && break
	sleep 0.05
done
kill -0 "$APP_PID" 2>/dev/null || fail "the app ended before the kill"
kill -KILL "$AGENT_PID"
KILL_MS=$(app_ms)
wait "$AGENT_PID" 2>/dev/null || true
PIDS=("$PEER_PID" "$APP_PID") # the killed agent is reaped: its pid must not be signalled again
sleep 1.5
RESTART_MS=$(app_ms)
kill -0 "$APP_PID" 2>/dev/null || fail "the app ended while the agent was dead"
HELLOS=$(grep -c '^HELLO node=killnode ' "$TMP/peer.out" || true)
start_logged_agent "$TMP/agent2.log"
pass "agent killed at app time ${KILL_MS} ms, a new one started at ${RESTART_MS} ms"

status=0
wait "$APP_PID" || status=$?
PIDS=("$PEER_PID" "$AGENT_PID")
[ "$status" = 0 ] || fail "the app exited with status $status: $(tail -2 "$TMP/app.out") $(cat "$TMP/app.err")"
grep -q '^END ' "$TMP/app.out" || fail "the app did not run to its end"

# No stall: gaps between progress lines (from START at 0 to END).
read -r maxgap at < <(awk '$1 == "T" || $1 == "END" { if ($2 - p > g) { g = $2 - p; a = p } p = $2 }
	END { print g + 0, a + 0 }' "$TMP/app.out")
[ "$maxgap" -le 500 ] || fail "the app stalled: ${maxgap} ms without progress from ${at} ms"
pass "no stall: longest gap between progress lines ${maxgap} ms (at ${at} ms; bound 500 ms)"

# Call rates (calls per ms) before the kill (from 300 ms on), with the agent dead, after.
# rate A B: calls per ms between the first lines at or after A and at or after B ms.
rate() {
	awk -v a="$1" -v b="$2" '$1 == "T" || $1 == "END" {
		if (!ta && $2 >= a) { ta = $2; ca = $3 }
		if (!tb && $2 >= b) { tb = $2; cb = $3 } }
		END { if (tb > ta) printf "%.0f\n", (cb - ca) / (tb - ta); else print 0 }' "$TMP/app.out"
}
END_MS=$(awk '$1 == "END" { print $2 }' "$TMP/app.out")
BEFORE=$(rate 300 "$KILL_MS")
DEAD=$(rate "$KILL_MS" "$RESTART_MS")
AFTER=$(rate "$RESTART_MS" "$END_MS")
[ "$BEFORE" -gt 0 ] || fail "no calls measured before the kill"
for w in DEAD AFTER; do
	within "${!w}" "$((BEFORE / 2))" 1e18 ||
		fail "call rate ${w,,} ${!w}/ms, below 50 % of the rate before the kill ($BEFORE/ms)"
done
pass "call rate (calls/ms): before the kill $BEFORE, agent dead $DEAD, after the restart $AFTER"

# Counted, not errors.
stats=$(grep '^STATS ' "$TMP/app.out") || fail "no STATS line"
get() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$stats"; }
[ "$(get errors)" = 0 ] || fail "apprate_progress returned errors: $stats"
[ "$(get units)" = "$(get calls)" ] || fail "units != calls: $stats"
[ "$(get reports_dropped)" -gt 0 ] || fail "no report counted as dropped during the outage: $stats"
[ "$(get reports_sent)" -gt 0 ] || fail "no report sent: $stats"
pass "stats: ${stats#STATS }"

# Reports reach the controller again through the new agent (lines after its HELLO).
awk -v h="$HELLOS" '/^HELLO node=killnode / { n++ } n > h && /^RATE job=[0-9]+ rank=0 / { ok = 1 }
	END { exit !ok }' "$TMP/peer.out" ||
	fail "no RATE from the app reached the controller through the restarted agent"
pass "after the restart the app's reports reach the controller again"

stop_wait "$AGENT_PID" 10 || fail "agent exit status $? on SIGTERM"
PIDS=("$PEER_PID")
exit 0
