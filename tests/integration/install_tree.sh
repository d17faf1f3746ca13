# What `cmake --install` installs (docs/install.md), into a DESTDIR: the daemons and
# vschedctl, libapprate (shared, static, header, apprate.pc, CMake package),
# libapprate-mpi and the Slurm plugin when built, the three example configurations under
# SYSCONFDIR/vsched, the systemd units (checked with `systemd-analyze verify` where it
# exists) and the man pages, which man renders without warnings; `man vschedctl` finds its
# page through the installed tree; the configuration pages list every key of the daemon's
# --config-keys. No root, no daemon. Bounded: 180 s.
if [ -z "${INSTALL_TREE_TIMED:-}" ]; then
	INSTALL_TREE_TIMED=1 exec timeout -k 5 180 bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"

BUILD=$(cd "$VS_BIN/.." && pwd)
cache() { sed -n "s/^$1:[A-Z]*=//p" "$BUILD/CMakeCache.txt"; }
PREFIX=$(cache CMAKE_INSTALL_PREFIX)
[ -n "$PREFIX" ] || fail "no CMAKE_INSTALL_PREFIX in $BUILD/CMakeCache.txt"
ROOT="$TMP/root"
DESTDIR="$ROOT" cmake --install "$BUILD" >"$TMP/install.log" 2>&1 ||
	fail "cmake --install: $(tail -5 "$TMP/install.log")"
P="$ROOT$PREFIX"
# SYSCONFDIR as the build resolved it (/etc for the /usr prefix)
ETC="$ROOT$(sed -n 's/.*-DVSCHED_SYSCONFDIR=[\\"]*\([^\\"]*\).*/\1/p' "$BUILD/compile_commands.json" | head -1)"
[ "$ETC" != "$ROOT" ] || fail "no VSCHED_SYSCONFDIR in the build's compile commands"

want() { # FILE...: each must exist
	local f
	for f in "$@"; do [ -e "$f" ] || fail "not installed: ${f#"$ROOT"}"; done
}
want "$P/sbin/vsched" "$P/sbin/vsched-agent" "$P/sbin/vsched-controller" "$P/bin/vschedctl"
want "$P/include/apprate.h" "$ETC/vsched/vsched.conf" "$ETC/vsched/agent.conf" "$ETC/vsched/controller.conf"
LIB=$(dirname "$(find "$P" -name apprate.pc)")/..
want "$LIB/libapprate.a" "$LIB/cmake/apprate/apprateConfig.cmake" "$LIB/cmake/apprate/apprateTargets.cmake"
ls "$LIB"/libapprate.so.* >/dev/null 2>&1 || fail "no versioned libapprate.so in ${LIB#"$ROOT"}"
for f in vsched vsched-agent vsched-controller; do want "$P/lib/systemd/system/$f.service"; done
for page in man8/vsched.8 man8/vsched-agent.8 man8/vsched-controller.8 man1/vschedctl.1 \
	man3/libapprate.3 man5/vsched.conf.5 man5/agent.conf.5 man5/controller.conf.5; do
	want "$P/share/man/$page"
done
for f in "$VS_BIN"/../lib/vsched-mpi/*/libapprate-mpi.so; do
	[ -e "$f" ] || continue
	want "$LIB/vsched/mpi/$(basename "$(dirname "$f")")/libapprate-mpi.so"
done
[ ! -e "$VS_BIN/../lib/vsched_spank.so" ] || want "$LIB/vsched/vsched_spank.so"
# no sample application in PATH
[ ! -e "$P/bin/bsp" ] || fail "the sample bsp is installed in ${P#"$ROOT"}/bin"
pass "installed: daemons, vschedctl, libapprate (so, a, header, pc, CMake), configs, units, man pages"

cmp -s "$ETC/vsched/agent.conf" "$VS_SRC/configs/agent.conf" || fail "installed agent.conf differs from configs/"
grep -q "^ExecStart=$PREFIX/sbin/vsched -f -c ${ETC#"$ROOT"}/vsched/vsched.conf\$" "$P/lib/systemd/system/vsched.service" ||
	fail "vsched.service does not start the installed vsched on the installed config: $(grep ExecStart "$P/lib/systemd/system/vsched.service")"
grep -q '^Restart=' "$P/lib/systemd/system/vsched.service" || fail "vsched.service has no Restart="
for k in Requires After; do
	grep -q "^$k=.*vsched.service" "$P/lib/systemd/system/vsched-agent.service" ||
		fail "vsched-agent.service has no $k=vsched.service"
done
if command -v systemd-analyze >/dev/null; then
	# verify checks the units' syntax and that their ExecStart binaries exist: in the
	# DESTDIR, the unit files have the real paths, so they are checked on copies pointing there.
	mkdir -p "$TMP/units"
	for f in vsched vsched-agent vsched-controller; do
		sed "s|^ExecStart=$PREFIX|ExecStart=$P|" "$P/lib/systemd/system/$f.service" >"$TMP/units/$f.service"
	done
	(cd "$TMP/units" && SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no ./*.service) >"$TMP/verify.log" 2>&1 ||
		fail "systemd-analyze verify: $(cat "$TMP/verify.log")"
	# it exits 0 on a line it ignores: any output is a defect
	[ ! -s "$TMP/verify.log" ] || fail "systemd-analyze verify warns: $(cat "$TMP/verify.log")"
	pass "systemd-analyze verify: the three units are valid"
else
	echo "SKIP (units): systemd-analyze not installed (Debian: systemd), units checked by grep only"
fi

command -v man >/dev/null || fail "man not found (scripts/install-deps.sh installs man-db)"
for f in "$P"/share/man/man*/*; do
	w=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$f" 2>&1 >/dev/null) || fail "man -l ${f#"$P"/}: $w"
	[ -z "$w" ] || fail "man warns on ${f#"$P"/}: $w"
done
out=$(MANPATH="$P/share/man" MANWIDTH=80 man vschedctl 2>&1) || fail "man vschedctl: $out"
grep -q 'task add PID' <<<"$out" || fail "man vschedctl: no command list: $(head -20 <<<"$out")"
pass "man renders every page without warnings; man vschedctl finds the installed page"

for spec in vsched:vsched.conf vsched-agent:agent.conf vsched-controller:controller.conf; do
	prog=${spec%%:*}
	page=$(MANWIDTH=200 man -l "$P/share/man/man5/${spec#*:}.5" 2>/dev/null)
	n=0
	while IFS=$'\t' read -r name _; do
		grep -qE "^ +$name \(" <<<"$page" || fail "${spec#*:}(5) does not list $prog's key $name"
		n=$((n + 1))
	done < <("$VS_BIN/$prog" --config-keys)
	[ "$n" -gt 0 ] || fail "$prog --config-keys listed nothing"
	pass "${spec#*:}(5) lists all $n keys of $prog --config-keys"
done
