#!/usr/bin/env bash
# libapprate as an application sees it: `cmake --install` the apprate component into a
# temporary prefix, then build a tiny program with
#   cc app.c $(pkg-config --cflags --libs apprate)
# (shared library) and once more against the static archive, and run both: open, progress,
# stats, close with no agent present, plus one bad call checked through apprate_strerror.
# Also checks that the shared library exports only the apprate_ API.
# Then (root only, else that part is skipped with a message) the same pkg-config-built app
# runs against a real vsched-agent (with a real vsched) registered with `ctlpeer router`
# standing in for the controller: its progress must reach the peer as 32-byte RATE messages
# whose units add up exactly to the units the app counted (the rule of agent_bsp_relay.sh:
# the agent is up before the app starts, dropped reports carry their units into the next
# one, apprate_close sends the rest as FINAL, and the agent relays queued frames of an
# exited pid; the app also checks units_dropped == 0, so nothing may be missing).
# That part runs in a subshell that sources lib.sh (its own temp dir, pids and cleanup).
# Exit 0 = pass, 1 = fail. Bounded: the whole test runs under a 55 s timeout.
if [ -z "${APPRATE_PC_TIMED:-}" ]; then
	APPRATE_PC_TIMED=1 exec timeout -k 5 55 bash "$0" "$@"
fi
set -u

: "${VS_BIN:?VS_BIN must point at the bin/ directory of the build}"
BUILD=$(cd "$VS_BIN/.." && pwd)
TMP=$(mktemp -d /tmp/apprate-pc.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

for tool in cmake pkg-config cc; do
	command -v "$tool" >/dev/null || fail "$tool not found"
done

PREFIX="$TMP/prefix"
cmake --install "$BUILD" --prefix "$PREFIX" --component apprate >"$TMP/install.log" 2>&1 ||
	fail "cmake --install --component apprate: $(tail -3 "$TMP/install.log")"

pc=$(find "$PREFIX" -name apprate.pc -path '*/pkgconfig/*' | head -1)
[ -n "$pc" ] || fail "apprate.pc not installed under $PREFIX"
[ -f "$PREFIX/include/apprate.h" ] || fail "apprate.h not installed in $PREFIX/include"
PKG_CONFIG_PATH=$(dirname "$pc")
export PKG_CONFIG_PATH
pkg-config --exists apprate || fail "pkg-config does not find apprate in $PKG_CONFIG_PATH"
libdir=$(pkg-config --variable=libdir apprate)
[ -f "$libdir/libapprate.a" ] || fail "libapprate.a not in $libdir"
ls "$libdir"/libapprate.so.* >/dev/null 2>&1 || fail "versioned libapprate.so not in $libdir"

# Only the public API is exported.
bad=$(nm -D --defined-only "$libdir/libapprate.so" | awk '$2 ~ /[TDB]/ {print $3}' |
	grep -v '^apprate_' || true)
[ -z "$bad" ] || fail "libapprate.so exports more than apprate_*: $bad"

# A sanitizer build installs an instrumented library: build the apps the same way.
CFLAGS_EXTRA=()
if grep -q 'NEEDED.*libasan' <<<"$(readelf -d "$libdir/libapprate.so" 2>/dev/null)"; then
	CFLAGS_EXTRA=("-fsanitize=address,undefined")
fi
# pkg-config's answers, split into words as a shell command line would.
read -ra PC_SHARED <<<"$(pkg-config --cflags --libs apprate)"
read -ra PC_CFLAGS <<<"$(pkg-config --cflags apprate)"
read -ra PC_STATIC_LIBS <<<"$(pkg-config --static --libs-only-l apprate | sed 's/-lapprate//')"

cat >"$TMP/app.c" <<'EOF'
#define _POSIX_C_SOURCE 200809L
#include <apprate.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* app ENDPOINT: reports to the agent at ENDPOINT for about 1.5 s, prints its counters. */
static int with_agent(const char *endpoint)
{
	struct apprate_opts o = APPRATE_OPTS_INIT;
	struct apprate_stats st;
	struct timespec ms = {0, 1000000L};
	o.endpoint = endpoint;
	o.rank = 2;
	o.report_ms = 100;
	apprate_t *r = apprate_open("pkgconfig-check", &o);
	if (!r) {
		printf("open: %s\n", apprate_strerror(-errno));
		return 1;
	}
	for (int i = 0; i < 1500; i++) {
		nanosleep(&ms, NULL);
		if (apprate_progress(r, 1 + (unsigned)i % 7) != 0)
			return 1;
	}
	if (apprate_stats(r, &st) != 0)
		return 1;
	apprate_close(&r);
	printf("units=%llu reported=%llu units_dropped=%llu sent=%llu dropped=%llu\n",
	       (unsigned long long)st.units, (unsigned long long)st.units_reported,
	       (unsigned long long)st.units_dropped, (unsigned long long)st.reports_sent,
	       (unsigned long long)st.reports_dropped);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		return with_agent(argv[1]);
	struct apprate_opts o = APPRATE_OPTS_INIT;
	o.endpoint = "ipc:///nonexistent-dir/agent.sock"; /* no agent: must not matter */
	o.rank = 2;
	apprate_t *r = apprate_open("pkgconfig-check", &o);
	if (!r) {
		printf("open: %s\n", apprate_strerror(-errno));
		return 1;
	}
	for (int i = 0; i < 1000000; i++)
		apprate_iteration(r);
	apprate_progress(r, 5);
	struct apprate_stats st;
	if (apprate_stats(r, &st) != 0 || st.units != 1000005) {
		printf("stats: units %llu\n", (unsigned long long)st.units);
		return 1;
	}
	apprate_close(&r);
	if (r != NULL || apprate_progress(NULL, 1) != -EINVAL ||
	    strlen(apprate_strerror(-EINVAL)) == 0)
		return 1;
	o.rank = -5;
	if (apprate_open("x", &o) != NULL || errno != EINVAL)
		return 1;
	printf("ok\n");
	return 0;
}
EOF

# Shared: exactly the documented command line.
cc -std=c11 -Wall -Wextra -Werror "${CFLAGS_EXTRA[@]}" "$TMP/app.c" -o "$TMP/app" "${PC_SHARED[@]}" \
	>"$TMP/cc.log" 2>&1 || fail "shared build: $(cat "$TMP/cc.log")"
out=$(LD_LIBRARY_PATH="$libdir" timeout 30 "$TMP/app" 2>&1) || fail "shared app: $out"
[ "$out" = ok ] || fail "shared app printed: $out"
grep -q "$libdir/libapprate.so" <<<"$(LD_LIBRARY_PATH="$libdir" ldd "$TMP/app")" ||
	fail "app is not linked against the installed libapprate.so"

# Static: the archive plus pkg-config's private dependencies; no libapprate.so needed.
cc -std=c11 -Wall -Wextra -Werror "${CFLAGS_EXTRA[@]}" "${PC_CFLAGS[@]}" "$TMP/app.c" -o "$TMP/app_static" \
	"$libdir/libapprate.a" "${PC_STATIC_LIBS[@]}" \
	>"$TMP/cc.log" 2>&1 || fail "static build: $(cat "$TMP/cc.log")"
grep -q libapprate <<<"$(ldd "$TMP/app_static")" && fail "static app still needs libapprate.so"
out=$(timeout 30 "$TMP/app_static" 2>&1) || fail "static app: $out"
[ "$out" = ok ] || fail "static app printed: $out"

echo "ok - libapprate installs, pkg-config builds and runs shared and static apps"

# --- The pkg-config-built app against a real agent and a stand-in controller ------------
APP_BIN="$TMP/app"
APP_LIBDIR="$libdir"
export APP_BIN APP_LIBDIR
if [ -z "${VS_SRC:-}" ]; then
	echo "SKIP (agent part): VS_SRC not set, cannot use tests/integration/lib.sh"
	exit 0
fi
(
	# shellcheck source=tests/integration/lib.sh
	source "$(dirname "$0")/lib.sh"
	need_root
	for b in vsched vsched-agent ctlpeer vschedctl; do
		[ -x "$VS_BIN/$b" ] || skip "$b not built"
	done
	source "$VS_SRC/tests/helpers/agent_lib.sh"
	on_fail_more() {
		echo "--- app"
		cat "$TMP/app.out" 2>/dev/null || true
	}

	start_vsched
	start_peer
	write_agent_config node_name='"pcnode"' controller_timeout='"2s"' sample_windows= \
		mem_capacity_mbs= net_capacity_mbs= provisional_period= provisional_slice=
	start_agent
	wait_for "$TMP/peer.out" '^HELLO node=pcnode ' 5
	wait_for "$TMP/agent.log" 'controller link: registered' 5

	LD_LIBRARY_PATH="$APP_LIBDIR" timeout 30 "$APP_BIN" "ipc://$TMP/agent.sock" >"$TMP/app.out" 2>&1 ||
		fail "app against the agent: exit status $?"
	units=; udrop=
	read -r units udrop < <(sed -n 's/^units=\([0-9]*\) .* units_dropped=\([0-9]*\) .*/\1 \2/p' "$TMP/app.out") || true
	if [ -z "$units" ] || [ "$units" -le 0 ]; then fail "app printed no unit count"; fi
	[ "$udrop" = 0 ] || fail "app discarded $udrop units with the agent up"
	wait_for "$TMP/peer.out" '^JOB_PROC job=[0-9]+ rank=2 pid=[0-9]+ event=joined name=pkgconfig-check$' 5
	JOB=$(sed -n 's/^JOB_PROC job=\([0-9]*\) rank=2 .*event=joined name=pkgconfig-check$/\1/p' "$TMP/peer.out" | head -1)
	wait_for "$TMP/peer.out" "^JOB_PROC job=$JOB rank=2 pid=[0-9]+ event=left name=pkgconfig-check$" 5
	grep -E "^RATE job=$JOB rank=2 " "$TMP/peer.out" | grep -vq ' bytes=32$' &&
		fail "a RATE message is not 32 bytes"
	sum=; n=
	read -r sum n < <(grep -E "^RATE job=$JOB rank=2 " "$TMP/peer.out" |
		sed -n 's/.* units=\([0-9]*\) .*/\1/p' | awk '{ s += $1; n++ } END { printf "%d %d\n", s, n }') || true
	[ "$sum" = "$units" ] ||
		fail "RATE units add up to $sum in $n messages, the app counted units=$units"
	stop_wait "$AGENT_PID" 10 || fail "agent exit status $? on SIGTERM"
	grep -q 'app_refused=0 ' "$TMP/agent.log" || fail "an application frame was refused"
	echo "ok - the pkg-config-built app's progress reaches the stand-in controller: $n RATE messages (32 bytes), units add up to units=$units exactly"
)
rc=$?
case $rc in
0) ;;
77) echo "(the agent part was skipped, see SKIP above; the install/build/run checks passed)" ;;
*) fail "the pkg-config-built app against a real agent (exit $rc)" ;;
esac
exit 0
