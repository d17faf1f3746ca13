# The Debian package end to end (docs/install.md), as root, holding the machine-wide RT lock
# from install to removal: dpkg -i the package scripts/package.sh built; start the
# installed vsched, vsched-controller and vsched-agent from the installed configurations in
# /etc/vsched (only their sockets and the state file moved into this test's temp dir, the
# controller's agent port picked by the system); run a bsp job (the installed sample) under
# `vschedctl job run` and set it to 40 % of its full speed with the installed vschedctl:
# it must reach 40 ± 10 % (3 readings 1 s apart) within 60 s; stop everything
# (each daemon must exit 0) and dpkg -P the package: every file dpkg -L listed is gone,
# /etc/vsched and /var/lib/vsched too, and no process runs an installed file.
# Skipped (with the reason) without root, without a package, when vsched is already
# installed, and in a sanitizer build (the package is built without sanitizers).
# Bounded: 200 s.
if [ -z "${DEB_PACKAGE_TIMED:-}" ]; then
	DEB_PACKAGE_TIMED=1 exec timeout -k 10 200 bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"
source "$VS_SRC/tests/helpers/rt_lock.sh"
need_root
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
BUILD=$(cd "$VS_BIN/.." && pwd)
if grep -q '^VSCHED_SANITIZE:BOOL=ON' "$BUILD/CMakeCache.txt" 2>/dev/null; then
	skip "the package is built without sanitizers (scripts/package.sh): tested with the optimised build"
fi
for tool in dpkg dpkg-query jq; do command -v "$tool" >/dev/null || skip "$tool not installed"; done
DEB=${VSCHED_DEB:-$(ls -t "$VS_SRC"/build-deb/vsched_*.deb 2>/dev/null | head -1 || true)}
[ -n "$DEB" ] && [ -f "$DEB" ] || skip "no package: run bash scripts/package.sh (scripts/test.sh does)"
dpkg-query -W -f='${Status}' vsched 2>/dev/null | grep -q 'ok installed' &&
	skip "a vsched package is installed on this machine: not touching it"
for d in /etc/vsched /var/lib/vsched; do
	[ ! -e "$d" ] || skip "$d exists (another vsched installation): not touching it"
done

rt_lock 150 # held until this script ends: install, run and removal
# dpkg_wait LOG ARGS...: dpkg ARGS, retried for up to 60 s while another dpkg or apt holds
# dpkg's lock (other work on this machine may be installing packages).
dpkg_wait() {
	local log=$1 i
	shift
	for i in $(seq 1 60); do
		dpkg "$@" >"$log" 2>&1 && return 0
		grep -q 'lock' "$log" || return 1
		sleep 1
	done
	return 1
}
INSTALLED=0
# Daemons first (lib.sh's cleanup), then the package, whatever happened.
deb_cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [ "$INSTALLED" = 1 ]; then dpkg_wait "$TMP/dpkg-cleanup.log" -P vsched || true; fi
	cleanup
}
trap deb_cleanup EXIT
on_fail() {
	local f
	for f in "$TMP"/*.log; do
		echo "--- $(basename "$f") (tail)"
		tail -15 "$f"
	done
}

# the package's directories that do not exist yet: purge must remove them again
dpkg-deb -c "$DEB" | awk '$1 ~ /^d/ { sub(/^\./, "", $6); sub(/\/$/, "", $6); print $6 }' |
	while read -r d; do [ -z "$d" ] || [ -e "$d" ] || echo "$d"; done >"$TMP/newdirs"
dpkg_wait "$TMP/dpkg-i.log" -i "$DEB" && INSTALLED=1 ||
	{ INSTALLED=1; fail "dpkg -i $(basename "$DEB"): $(tail -5 "$TMP/dpkg-i.log")"; }
dpkg-query -L vsched | while read -r f; do [ -d "$f" ] || echo "$f"; done >"$TMP/files"
for f in /usr/sbin/vsched /usr/sbin/vsched-agent /usr/sbin/vsched-controller /usr/bin/vschedctl \
	/etc/vsched/vsched.conf /etc/vsched/agent.conf /etc/vsched/controller.conf \
	/usr/libexec/vsched/bsp /usr/share/man/man1/vschedctl.1; do
	grep -qx "$f" "$TMP/files" || fail "the package does not hold $f"
done
man -w vschedctl >/dev/null 2>&1 || fail "man vschedctl: no page found after install"
pass "dpkg -i $(basename "$DEB"): $(wc -l <"$TMP/files") files, man vschedctl found"

VS_EP="ipc://$TMP/vsched.sock"
AG_EP="ipc://$TMP/agent.sock"
ADMIN="ipc://$TMP/admin.sock"
CTL=/usr/bin/vschedctl
actl() { "$CTL" -C "$ADMIN" "$@"; }
job_field() { actl job list --json | jq -r ".[] | select(.name == \"debjob\") | .$1"; }

/usr/sbin/vsched -f -c /etc/vsched/vsched.conf -s "$VS_EP" >"$TMP/vsched.log" 2>&1 &
VSCHED=$!
PIDS+=("$VSCHED")
wait_until 5 "$CTL" -s "$VS_EP" task list || fail "installed vsched: API not up"
/usr/sbin/vsched-controller -f -c /etc/vsched/controller.conf -A 'tcp://127.0.0.1:*' \
	-a "$ADMIN" -S "$TMP/controller.state" >"$TMP/controller.log" 2>&1 &
CTLD=$!
PIDS+=("$CTLD")
wait_for "$TMP/controller.log" 'agents: listening on tcp://' 5
AGENTS=$(sed -n 's/.*agents: listening on \(tcp:[^ ]*\).*/\1/p' "$TMP/controller.log" | head -1)
/usr/sbin/vsched-agent -f -c /etc/vsched/agent.conf -C "$AGENTS" -a "$AG_EP" -s "$VS_EP" \
	-N debnode >"$TMP/agent.log" 2>&1 &
AGENT=$!
PIDS+=("$AGENT")
wait_until 10 sh -c "'$CTL' -C '$ADMIN' node list | grep -q debnode" || fail "the agent did not register"
pass "installed daemons up on the installed configs (agents on $AGENTS)"

BSP=/usr/libexec/vsched/bsp
BSP_ARGS=(--local 2 --compute 20ms --msg 16KiB)
# full speed at nice -20: the CPU, not a share of it with other tenants' builds
RMAX=$(nice -n -20 "$BSP" "${BSP_ARGS[@]}" --duration 3s | sed -n 's/.* rate=\([0-9.]*\) .*/\1/p' | sort -g | head -1)
[ -n "$RMAX" ] || fail "could not measure the job's full speed with the installed bsp"
"$BSP" "${BSP_ARGS[@]}" --duration 100s -- "$CTL" job run --job debjob --rank '{rank}' \
	--agent "$AG_EP" -- >"$TMP/job.log" 2>&1 &
JOB=$!
PIDS+=("$JOB")
wait_until 15 sh -c "[ \"\$('$CTL' -C '$ADMIN' job list --json | jq -r '.[] | select(.name == \"debjob\") | .ranks')\" = 2 ]" ||
	fail "the job's 2 ranks did not register"
actl job set debjob --rmax "$RMAX" >/dev/null || fail "job set --rmax refused"
actl rate debjob 40 >/dev/null || fail "rate debjob 40 refused"
ok=0
for t in $(seq 1 60); do
	sleep 1
	cur=$(job_field current_pct)
	if [ "$cur" != null ] && within "$cur" 30 50; then ok=$((ok + 1)); else ok=0; fi
	[ $ok -lt 3 ] || break
done
[ $ok -ge 3 ] || fail "debjob did not reach 40 ± 10 % in 60 s (now $cur %): $(actl job show debjob)"
pass "a bsp job at 40 % of its full speed (R_max $RMAX/s): $cur % after $t s (3 readings 1 s apart)"

kill -TERM "$JOB"
wait "$JOB" 2>/dev/null || true
for d in AGENT CTLD VSCHED; do
	kill -TERM "${!d}"
	rc=0
	wait "${!d}" || rc=$?
	[ $rc = 0 ] || fail "installed ${d,,} exited $rc on SIGTERM"
done
PIDS=()
dpkg_wait "$TMP/dpkg-P.log" -P vsched || fail "dpkg -P vsched: $(tail -5 "$TMP/dpkg-P.log")"
INSTALLED=0
left=$(while read -r f; do [ ! -e "$f" ] || echo "$f"; done <"$TMP/files")
[ -z "$left" ] || fail "left behind after dpkg -P: $left"
grep -qx /etc/vsched "$TMP/newdirs" || fail "the package has no /etc/vsched directory"
for d in $(cat "$TMP/newdirs") /var/lib/vsched; do
	[ ! -e "$d" ] || fail "$d left behind after dpkg -P"
done
dpkg-query -W -f='${Status}' vsched 2>/dev/null | grep -q 'ok installed' && fail "dpkg still lists vsched"
procs=$(for e in /proc/[0-9]*/exe; do
	x=$(readlink "$e" 2>/dev/null) || continue
	grep -qxF "${x% (deleted)}" "$TMP/files" && echo "${e%/exe}: $x"
done || true)
[ -z "$procs" ] || fail "processes still run installed files: $procs"
pass "stopped (every daemon exit 0) and purged: none of the $(wc -l <"$TMP/files") files and $(wc -l <"$TMP/newdirs") directories left, no process"
