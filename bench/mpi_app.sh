#!/usr/bin/env bash
# An unmodified, packaged MPI application driven to a target rate: LAMMPS (Debian's
# `lammps`, `lmp` linked to Open MPI), the Lennard-Jones melt benchmark (4,000 atoms,
# 2 ranks), launched with mpirun (`vschedctl job run --mpi`) and with srun (the SPANK
# plugin, a one-node Slurm from Debian's packages), at 30 % and 60 %. The rate is taken
# from LAMMPS's own thermo output (steps vs its elapsed-time column) over the last WINDOW
# seconds of each run, against its full speed: the same run with each rank under a 90 %
# reservation, scaled to 100 % (an unmanaged run on this shared machine measures the
# other tenants' load). R_max is given to the controller, as in controller_e2e. Also the
# interposer's cost on the application: full speed with and without it, alternated.
# One command, root, under the RT lock:
#   flock /tmp/vsched-rt.lock bash bench/mpi_app.sh [BUILD_DIR]
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
export VS_BIN=$SRC/${1:-build}/bin VS_SRC=$SRC
RUN_S=${RUN_S:-45} WINDOW=${WINDOW:-15}
source "$SRC/tests/integration/lib.sh"
source "$SRC/tests/helpers/ctld_lib.sh"
source "$SRC/tests/helpers/slurm_lib.sh"
trap 'slurm_stop; cleanup' EXIT
command -v lmp >/dev/null || skip "lmp not installed (Debian: lammps; scripts/install-deps.sh)"
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader
source "$VS_BIN/mpi-impls.sh"
LIB=$MPI_LIB_openmpi
echo "# $(date -u +%H:%M) UTC, $(uptime | sed 's/.*load/load/')"

cat >"$TMP/in.lj" <<EOF2
units lj
atom_style atomic
lattice fcc 0.8442
region box block 0 10 0 10 0 10
create_box 1 box
create_atoms 1 box
mass 1 1.0
velocity all create 3.0 87287 loop geom
pair_style lj/cut 2.5
pair_coeff 1 1 1.0 1.0 2.5
neighbor 0.3 bin
neigh_modify delay 0 every 20 check no
fix 1 all nve
thermo 50
thermo_style custom step cpu
timer timeout \${secs}
run 10000000
EOF2

# steps_per_s FILE T0: steps per second of LAMMPS's own clock from the first thermo line
# at or after T0 s to the last one.
steps_per_s() {
	awk -v t0="$2" '/^ *Step +CPU/ { on = 1; next } /^Loop time/ { on = 0 }
		on && NF == 2 && $1 ~ /^[0-9]+$/ { if ($2 >= t0 && !s) { s = 1; a = $1; ta = $2 } b = $1; tb = $2 }
		END { if (tb > ta) printf "%.2f\n", (b - a) / (tb - ta) }' "$1"
}
mpirun2() { timeout $((RUN_S + 60)) mpirun.openmpi --allow-run-as-root -n 2 "$@"; }
lmp_args() { echo -in "$TMP/in.lj" -log none -var secs "$1"; }

start_ctld
start_node n1 "0, 1"

# Full speed, with and without the interposer, each rank under a 90 % reservation.
full() { # full NAME PRELOAD
	LD_PRELOAD=$2 VSCHED_JOB=full VSCHED_AGENT=ipc://$TMP/nobody.sock mpirun2 \
		-x LD_PRELOAD -x VSCHED_JOB -x VSCHED_AGENT "$VS_BIN/vschedctl" -s "ipc://$TMP/vs-n1.sock" \
		run --period 100ms --slice 90ms -- lmp $(lmp_args 15) >"$TMP/$1.out" 2>&1
	steps_per_s "$TMP/$1.out" 3 | awk '{ printf "%.2f\n", $1 / 0.9 }'
}
f1=$(full bare1 "") f2=$(full pre1 "$LIB") f3=$(full bare2 "") f4=$(full pre2 "$LIB")
FULL=$(awk -v a="$f1" -v b="$f3" 'BEGIN { printf "%.2f", (a + b) / 2 }')
echo "full speed (steps/s, 90 % reservation scaled): without interposer $f1 $f3, with $f2 $f4"
awk -v a="$f1" -v b="$f3" -v c="$f2" -v d="$f4" 'BEGIN { printf "interposer cost on LAMMPS: %+.1f %%\n", 100 * ((c + d) / (a + b) - 1) }'

# controlled RESULT_NAME TARGET JOB CMD...: runs CMD in the background, gives the
# controller R_max (and the target, for mpirun) once the job's 2 ranks are there.
controlled() {
	local name=$1 target=$2 job=$3 rate pct
	shift 3
	"$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
	local pid=$!
	PIDS+=("$pid")
	wait_until 20 job_is "$job" ranks 2 || ctld_fail "$name: job $job not seen with 2 ranks"
	actl job set "$job" --rmax "$FULL" >/dev/null
	[ "$(job_field "$job" target_pct)" = "$target" ] || actl rate "$job" "$target" >/dev/null
	wait "$pid" || fail "$name: exit $?: $(tail -3 "$TMP/$name.err")"
	rate=$(steps_per_s "$TMP/$name.out" $((RUN_S - WINDOW)))
	pct=$(awk -v r="$rate" -v f="$FULL" 'BEGIN { printf "%.1f", 100 * r / f }')
	printf '%-7s target %2d %%: %8s steps/s over the last %d s = %5s %% of full speed (error %+.1f)\n' \
		"$name" "$target" "$rate" "$WINDOW" "$pct" "$(awk -v p="$pct" -v t="$target" 'BEGIN { print p - t }')"
}
for t in 30 60; do
	controlled mpirun "$t" "lmp$t" mpirun2 "$VS_BIN/vschedctl" job run --job "lmp$t" --mpi \
		--agent "ipc://$TMP/agent-n1.sock" -- lmp $(lmp_args "$RUN_S")
done
slurm_start "required $VS_BIN/../lib/vsched_spank.so agent=ipc://$TMP/agent-n1.sock controller=$ADMIN_EP mpi_dir=$VS_BIN/../lib/vsched-mpi"
for t in 30 60; do
	controlled srun "$t" "slmp$t" slurm_srun -n 2 --mpi=pmix --vsched-rate="$t" \
		--vsched-job="slmp$t" lmp $(lmp_args "$RUN_S")
done
