# libapprate as a CMake project sees it: `cmake --install` the apprate component into a
# temporary prefix, then configure and build a tiny consumer project that does
#   find_package(apprate REQUIRED)
# and links one program to apprate::apprate (the shared library) and one to
# apprate::apprate_static (the archive, with its libzmq and threads dependencies), and run
# both: open, progress, stats, close with no agent present. Also checks that the package
# refuses a newer major version. No root, no daemon. Bounded: 180 s.
if [ -z "${APPRATE_CMAKE_TIMED:-}" ]; then
	APPRATE_CMAKE_TIMED=1 exec timeout -k 5 180 bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"

BUILD=$(cd "$VS_BIN/.." && pwd)
for tool in cmake cc; do
	command -v "$tool" >/dev/null || fail "$tool not found"
done
PREFIX="$TMP/prefix"
cmake --install "$BUILD" --prefix "$PREFIX" --component apprate >"$TMP/install.log" 2>&1 ||
	fail "cmake --install --component apprate: $(tail -3 "$TMP/install.log")"
cfg=$(find "$PREFIX" -name apprateConfig.cmake)
[ -n "$cfg" ] || fail "apprateConfig.cmake not installed under $PREFIX"
pass "apprate component installed with its CMake package ($(dirname "${cfg#"$PREFIX"/}"))"

# A sanitizer build installs an instrumented library: the consumer is built the same way.
SAN=
if grep -q '^VSCHED_SANITIZE:BOOL=ON' "$BUILD/CMakeCache.txt" 2>/dev/null; then
	SAN="-fsanitize=address,undefined"
fi
mkdir -p "$TMP/app"
cat >"$TMP/app/CMakeLists.txt" <<'EOC'
cmake_minimum_required(VERSION 3.18)
project(consumer C)
find_package(apprate 0.1 REQUIRED)
add_executable(app_shared app.c)
target_link_libraries(app_shared PRIVATE apprate::apprate)
add_executable(app_static app.c)
target_link_libraries(app_static PRIVATE apprate::apprate_static)
EOC
cat >"$TMP/app/app.c" <<'EOC'
#include <apprate.h>
#include <errno.h>
#include <stdio.h>

int main(void)
{
	struct apprate_opts o = APPRATE_OPTS_INIT;
	struct apprate_stats st;
	o.endpoint = "ipc:///nonexistent-dir/agent.sock"; /* no agent: must not matter */
	o.rank = 1;
	apprate_t *r = apprate_open("cmake-check", &o);
	if (!r) {
		printf("open: %s\n", apprate_strerror(-errno));
		return 1;
	}
	for (int i = 0; i < 1000; i++)
		apprate_iteration(r);
	if (apprate_stats(r, &st) != 0 || st.units != 1000) {
		printf("stats: units %llu\n", (unsigned long long)st.units);
		return 1;
	}
	apprate_close(&r);
	printf("ok\n");
	return 0;
}
EOC
cmake -S "$TMP/app" -B "$TMP/app/build" -DCMAKE_PREFIX_PATH="$PREFIX" \
	-DCMAKE_C_FLAGS="$SAN" >"$TMP/cfg.log" 2>&1 || fail "configure with find_package(apprate): $(tail -5 "$TMP/cfg.log")"
cmake --build "$TMP/app/build" >"$TMP/build.log" 2>&1 || fail "build: $(tail -10 "$TMP/build.log")"
for app in app_shared app_static; do
	out=$(timeout 30 "$TMP/app/build/$app" 2>&1) || fail "$app: $out"
	[ "$out" = ok ] || fail "$app printed: $out"
done
grep -q "$PREFIX/.*libapprate.so" <<<"$(ldd "$TMP/app/build/app_shared")" ||
	fail "app_shared is not linked against the installed libapprate.so: $(ldd "$TMP/app/build/app_shared")"
grep -q libapprate <<<"$(ldd "$TMP/app/build/app_static")" && fail "app_static still needs libapprate.so"
pass "find_package(apprate): apprate::apprate and apprate::apprate_static build and run"

sed -i 's/find_package(apprate 0.1 REQUIRED)/find_package(apprate 99 REQUIRED)/' "$TMP/app/CMakeLists.txt"
rm -rf "$TMP/app/build"
cmake -S "$TMP/app" -B "$TMP/app/build" -DCMAKE_PREFIX_PATH="$PREFIX" >"$TMP/cfg.log" 2>&1 &&
	fail "find_package(apprate 99) was accepted by version $(sed -n 's/.*PACKAGE_VERSION "\(.*\)".*/\1/p' "$(dirname "$cfg")/apprateConfigVersion.cmake")"
grep -q 'compatible with requested version "99"' "$TMP/cfg.log" || fail "find_package(apprate 99) failed for another reason: $(tail -5 "$TMP/cfg.log")"
pass "find_package(apprate 99) is refused (version 0.x installed)"
