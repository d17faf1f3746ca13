# slurm_spank: a real Slurm on this machine (munge, slurmctld, slurmd from Debian's
# packages, loopback, config in $TMP) with vsched's SPANK plugin, and the whole vsched
# stack (controller, agent, vsched on both CPUs). Outcomes checked:
#  - `srun -n 2 --mpi=pmix --vsched-rate=30 jacobi` (an unmodified Open MPI program) runs
#    as a 2-rank vsched job and reaches 30 % of its full speed within 5 points, both
#    measured from the program's own progress lines. Full speed: the same srun just before,
#    each rank under a 90 % reservation (`vschedctl run`), scaled to 100 % — an unmanaged
#    run would measure the other tenants' load on this shared machine, not the program.
#    The controller is given that R_max (`job set --rmax`, as controller_e2e does) so the
#    test judges control, not calibration;
#  - a task the plugin cannot register (agent unreachable) still runs, with one line in
#    the job's stderr naming the default job name JOBID.STEPID;
#  - user_rate=no refuses --vsched-rate in srun with one line; a bad value is refused.
# Everything is stopped and removed afterwards. Skipped where Slurm or Open MPI is missing.
source "$(dirname "$0")/lib.sh"
source "$VS_SRC/tests/helpers/ctld_lib.sh"
source "$VS_SRC/tests/helpers/slurm_lib.sh"
need_root
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
! grep -q 'NEEDED.*libasan' <<<"$(readelf -d "$VS_BIN/vschedctl" 2>/dev/null)" ||
	skip "sanitizer build: the plugin and the interposer are built uninstrumented, as in the optimised build, which runs this test"
slurm_need
PLUGIN=$VS_BIN/../lib/vsched_spank.so
[ -f "$PLUGIN" ] || skip "SPANK plugin not built (no libslurm-dev at configure time)"
source "$VS_BIN/mpi-impls.sh"
[[ " $MPI_IMPLS " == *" openmpi "* ]] || skip "libapprate-mpi not built for Open MPI"
JAC=$VS_BIN/mpi-openmpi/jacobi
# One node: shared memory between the ranks. Without this, Open MPI under srun picks UCX,
# whose progress here is dominated by wake-up latency (8x slower than under mpirun).
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader
TARGET=30 TOL=5 RUN=40 WINDOW=12
trap 'slurm_stop; cleanup' EXIT

rt_lock
start_ctld
start_node n1 "0, 1"
plug() { echo "required $PLUGIN controller=$ADMIN_EP mpi_dir=$VS_BIN/../lib/vsched-mpi $*"; }
slurm_start "$(plug agent=ipc://$TMP/agent-n1.sock)"

# rate_between FILE T0: iterations per second from the progress line at or after T0 to the
# last one ("jacobi: t=SECONDS iter=N", rank 0, one a second).
rate_between() {
	awk -v t0="$2" '/^jacobi: t=/ { split($2, t, "="); split($3, i, "=");
		if (t[2] >= t0 && !s) { s = 1; ta = t[2]; ia = i[2] } tb = t[2]; ib = i[2] }
		END { if (tb > ta) printf "%.3f\n", (ib - ia) / (tb - ta) }' "$1"
}

slurm_srun -n 2 --mpi=pmix "$VS_BIN/vschedctl" -s "ipc://$TMP/vs-n1.sock" run --period 100ms \
	--slice 90ms -- "$JAC" -s 1024 -d 6 -v >"$TMP/full.out" 2>"$TMP/full.err" ||
	slurm_fail "full-speed run: exit $?: $(tail -3 "$TMP/full.err")"
FULL=$(rate_between "$TMP/full.out" 2 | awk '{ printf "%.3f\n", $1 / 0.9 }')
[ -n "$FULL" ] || fail "no full-speed rate: $(cat "$TMP/full.out") $(tail -5 "$TMP/full.err")"
echo "full speed: $FULL iterations/s (srun, ranks at 90 %, scaled)"

slurm_srun -n 2 --mpi=pmix --vsched-rate=$TARGET --vsched-job=jac "$JAC" -s 1024 -d $RUN -v \
	>"$TMP/jac.out" 2>"$TMP/jac.err" &
SRUN=$!
PIDS+=("$SRUN")
wait_until 15 job_is jac ranks 2 || ctld_fail "the controller does not show job jac with 2 ranks"
actl job set jac --rmax "$FULL" >/dev/null || ctld_fail "job set jac --rmax $FULL refused"
[ "$(job_field jac target_pct)" = "$TARGET" ] || ctld_fail "job jac: target $(job_field jac target_pct), want $TARGET"
wait "$SRUN" || slurm_fail "srun --vsched-rate: exit $?: $(tail -3 "$TMP/jac.err")"
grep -q "vsched:" "$TMP/jac.err" && fail "the plugin complained: $(grep vsched: "$TMP/jac.err")"
RATE=$(rate_between "$TMP/jac.out" $((RUN - WINDOW)))
PCT=$(awk -v r="$RATE" -v f="$FULL" 'BEGIN { printf "%.1f", 100 * r / f }')
echo "controlled: $RATE iterations/s over the last $WINDOW s = $PCT % of full speed; controller: $(actl job show jac | head -3 | tail -1)"
within "$PCT" $((TARGET - TOL)) $((TARGET + TOL)) ||
	ctld_fail "job jac ran at $PCT % of its full speed, target $TARGET ± $TOL"
pass "srun --vsched-rate=$TARGET: an unmodified MPI job at $PCT % of its full speed"

# A task that cannot be registered runs anyway, with one line.
echo "$(plug agent=ipc://$TMP/nobody.sock)" >"$SLURM_DIR/plugstack.conf"
out=$(slurm_srun -n 1 --vsched-rate=20 "$VS_BIN/spin" -d 0.2 2>&1) || fail "task failed: $out"
grep -Eq "vsched: task 0 \(job [0-9]+\.0\): .*runs without vsched" <<<"$out" || fail "no one-line reason: '$out'"
[ "$(grep -c 'vsched:' <<<"$out")" = 1 ] || fail "more than one line: '$out'"
pass "unregistrable task ran, one line: $(grep vsched: <<<"$out")"

echo "$(plug agent=ipc://$TMP/agent-n1.sock user_rate=no)" >"$SLURM_DIR/plugstack.conf"
out=$(slurm_srun -n 1 --vsched-rate=20 true 2>&1) && fail "user_rate=no: srun --vsched-rate ran"
grep -q "not allowed on this cluster" <<<"$out" || fail "user_rate=no: '$out'"
out=$(slurm_srun -n 1 --vsched-rate=0 true 2>&1) && fail "--vsched-rate=0 accepted"
grep -q "must be a percentage" <<<"$out" || fail "--vsched-rate=0: '$out'"
pass "user_rate=no and bad values refused in srun"
slurm_stop
[ ! -e "$TMP/slurm" ] || fail "Slurm's directory left behind"
pass "Slurm stopped and removed"
