# mpi_progress: unmodified MPI programs report their iterations through libapprate-mpi,
# for every MPI implementation it was built for (Open MPI, MPICH), launched as a user would:
#   MPIRUN -n 2 vschedctl job run --job J --mpi [--progress MODE] --agent EP -- PROGRAM
# tests/helpers/apprate_sink stands in for the agent. Outcomes checked, per rank:
#  - auto: the units reported add up to the iterations the program ran, +-1, for a C
#    Jacobi stencil (halo exchange + allreduce), a program with irregular output steps,
#    a set-up phase and polling calls, and a Fortran program (`use mpi`);
#  - mpi:Allreduce and pcontrol: exactly one unit per call;
#  - the rank registers at MPI_Init and nothing is reported before a period is found: the
#    first REPORT carries units, and a run too short to show a period (3 iterations)
#    registers without any REPORT ("no progress signal yet");
#  - job run --mpi refuses a program that links no MPI, naming it, and does not run it.
source "$(dirname "$0")/lib.sh"
SINK=$VS_BIN/apprate_sink VC=$VS_BIN/vschedctl
[ -f "$VS_BIN/mpi-impls.sh" ] || skip "no MPI test programs built"
source "$VS_BIN/mpi-impls.sh"
[ -n "$MPI_IMPLS" ] || skip "libapprate-mpi not built: no MPI found at configure time"

AGENT="ipc://$TMP/agent.sock"
"$SINK" "$AGENT" 200 >"$TMP/sink.out" &
PIDS+=($!)
for _ in $(seq 1 100); do grep -q '^LISTEN' "$TMP/sink.out" 2>/dev/null && break; sleep 0.05; done
grep -q '^LISTEN' "$TMP/sink.out" || fail "sink did not bind $AGENT"

# mpirun IMPL ARGS...: that implementation's launcher with 2 ranks, bounded.
mpirun() {
	local impl=$1 run
	shift
	run=MPI_RUN_$impl
	if [ "$impl" = openmpi ]; then
		timeout 60 "${!run}" --allow-run-as-root --oversubscribe -n 2 "$@"
	else
		timeout 60 "${!run}" -n 2 "$@"
	fi
}

# units JOB RANK [nowait]: units reported by JOB's RANK (its handle from REGISTER); "none"
# if it registered without any REPORT, "noreg" if it never registered. Waits for the
# REGISTER (3 s at most: the sink prints what the rank's socket delivered after the rank
# may have exited) and for the FINAL report (3 s at most) unless nowait.
units() {
	local h _
	for _ in $(seq 1 60); do
		h=$(sed -n "s/^REGISTER handle=\([0-9a-f]*\) job=$1 rank=$2 .*/\1/p" "$TMP/sink.out" | head -1)
		[ -z "$h" ] || break
		sleep 0.05
	done
	[ -n "$h" ] || { echo "noreg"; return; }
	for _ in $(seq 1 60); do
		[ -z "${3:-}" ] || break
		grep -q "^REPORT handle=$h .* final=1" "$TMP/sink.out" && break
		sleep 0.05
	done
	awk -v h="handle=$h" '$1 == "REPORT" && $2 == h { split($5, u, "="); s += u[2]; n++ }
		END { print (n ? s : "none") }' "$TMP/sink.out"
}
# first_units JOB RANK: units of the rank's first REPORT.
first_units() {
	local h
	h=$(sed -n "s/^REGISTER handle=\([0-9a-f]*\) job=$1 rank=$2 .*/\1/p" "$TMP/sink.out" | head -1)
	awk -v h="handle=$h" '$1 == "REPORT" && $2 == h { split($5, u, "="); print u[2]; exit }' "$TMP/sink.out"
}

# check IMPL NAME MODE TOLERANCE PROGRAM ARGS...: runs it, compares each rank's units with
# the iterations it printed.
check() {
	local impl=$1 name=$2 mode=$3 tol=$4 job r it u f
	shift 4
	job="$impl-$name-${mode//:/_}"
	mpirun "$impl" "$VC" job run --job "$job" --mpi --progress "$mode" --agent "$AGENT" -- \
		"$@" >"$TMP/$job.out" 2>"$TMP/$job.err" || fail "$job: exit $?: $(tail -3 "$TMP/$job.err")"
	for r in 0 1; do
		it=$(sed -n "s/.*rank=$r iterations=\([0-9]*\).*/\1/p" "$TMP/$job.out")
		[ -n "$it" ] || fail "$job: rank $r printed no iteration count: $(cat "$TMP/$job.out")"
		u=$(units "$job" $r)
		[ "$u" != noreg ] || fail "$job rank $r: never registered: $(cat "$TMP/$job.err")"
		[ "$u" != none ] || fail "$job rank $r: registered, no units reported ($it iterations)"
		[ $((u - it)) -le "$tol" ] && [ $((it - u)) -le "$tol" ] ||
			fail "$job rank $r: $u units reported for $it iterations (tolerance $tol)"
		f=$(first_units "$job" $r)
		[ "$f" -gt 0 ] || fail "$job rank $r: a REPORT without units before the period was found"
	done
	pass "$job: $u units for $it iterations per rank"
}

for impl in $MPI_IMPLS; do
	d=$VS_BIN/mpi-$impl
	check "$impl" jacobi auto 1 "$d/jacobi" -n 300
	check "$impl" jacobi mpi:Allreduce 0 "$d/jacobi" -n 200
	check "$impl" jacobi pcontrol 0 "$d/jacobi" -n 200 -p -o 10
	check "$impl" irregular auto 1 "$d/irregular" -n 400
	fc=MPI_FC_$impl
	if [ -n "${!fc:-}" ]; then
		check "$impl" fortran auto 1 "$d/jacobi_f" 200
		check "$impl" fortran mpi:allreduce 0 "$d/jacobi_f" 150
		check "$impl" fortran pcontrol 0 "$d/jacobi_f" 150
	fi

	# too short to show a period: both ranks registered at MPI_Init, no rate. Its few MPI
	# calls may all come within one tick of the coarse clock after the connection is up.
	job=$impl-short
	mpirun "$impl" "$VC" job run --job "$job" --mpi --agent "$AGENT" -- "$d/jacobi" -n 3 \
		>"$TMP/$job.out" 2>&1 || fail "$job: exit $?: $(tail -3 "$TMP/$job.out")"
	for r in 0 1; do
		u=$(units "$job" $r nowait)
		[ "$u" = none ] || fail "$job rank $r: expected a registration without reports, got '$u'"
	done
	pass "$impl: a run without a period registers both ranks and reports nothing"
done

out=$("$VC" job run --job nompi --mpi --agent "$AGENT" -- "$VS_BIN/spin" -d 1 2>&1) && fail "job run --mpi ran a program without MPI"
grep -q "links no MPI library" <<<"$out" || fail "job run --mpi on spin: '$out'"
pass "job run --mpi refuses a program without MPI: $out"
