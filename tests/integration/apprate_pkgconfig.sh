#!/usr/bin/env bash
# libapprate as an application sees it: `cmake --install` the apprate component into a
# temporary prefix, then build a tiny program with
#   cc app.c $(pkg-config --cflags --libs apprate)
# (shared library) and once more against the static archive, and run both: open, progress,
# stats, close with no agent present, plus one bad call checked through apprate_strerror.
# Also checks that the shared library exports only the apprate_ API.
# Self-contained (sources nothing). Exit 0 = pass, 1 = fail.
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
export PKG_CONFIG_PATH="$(dirname "$pc")"
pkg-config --exists apprate || fail "pkg-config does not find apprate in $PKG_CONFIG_PATH"
libdir=$(pkg-config --variable=libdir apprate)
[ -f "$libdir/libapprate.a" ] || fail "libapprate.a not in $libdir"
ls "$libdir"/libapprate.so.* >/dev/null 2>&1 || fail "versioned libapprate.so not in $libdir"

# Only the public API is exported.
bad=$(nm -D --defined-only "$libdir/libapprate.so" | awk '$2 ~ /[TDB]/ {print $3}' |
	grep -v '^apprate_' || true)
[ -z "$bad" ] || fail "libapprate.so exports more than apprate_*: $bad"

# A sanitizer build installs an instrumented library: build the apps the same way.
CFLAGS_EXTRA=
if readelf -d "$libdir/libapprate.so" 2>/dev/null | grep -q 'NEEDED.*libasan'; then
	CFLAGS_EXTRA="-fsanitize=address,undefined"
fi

cat >"$TMP/app.c" <<'EOF'
#include <apprate.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
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
cc -std=c11 -Wall -Werror $CFLAGS_EXTRA "$TMP/app.c" -o "$TMP/app" $(pkg-config --cflags --libs apprate) \
	>"$TMP/cc.log" 2>&1 || fail "shared build: $(cat "$TMP/cc.log")"
out=$(LD_LIBRARY_PATH="$libdir" timeout 30 "$TMP/app" 2>&1) || fail "shared app: $out"
[ "$out" = ok ] || fail "shared app printed: $out"
LD_LIBRARY_PATH="$libdir" ldd "$TMP/app" | grep -q "$libdir/libapprate.so" ||
	fail "app is not linked against the installed libapprate.so"

# Static: the archive plus pkg-config's private dependencies; no libapprate.so needed.
cc -std=c11 -Wall -Werror $CFLAGS_EXTRA $(pkg-config --cflags apprate) "$TMP/app.c" -o "$TMP/app_static" \
	"$libdir/libapprate.a" $(pkg-config --static --libs-only-l apprate | sed 's/-lapprate//') \
	>"$TMP/cc.log" 2>&1 || fail "static build: $(cat "$TMP/cc.log")"
ldd "$TMP/app_static" | grep -q libapprate && fail "static app still needs libapprate.so"
out=$(timeout 30 "$TMP/app_static" 2>&1) || fail "static app: $out"
[ "$out" = ok ] || fail "static app printed: $out"

echo "ok - libapprate installs, pkg-config builds and runs shared and static apps"
exit 0
