#!/usr/bin/env bash
# libapprate-mpi's overhead per wrapped MPI call (goal: <= 50 ns median, DESIGN.md §8),
# for every MPI it was built for and every progress mode, against the bare call (PMPI_) in
# the same process: bench/mpi_overhead.c. Also the same program without the interposer
# (MPI_ is then the bare call too: the noise floor of the pairing).
# Usage: flock /tmp/vsched-rt.lock bash bench/mpi_overhead.sh [BUILD_DIR]
set -euo pipefail
B=${1:-build}/bin
source "$B/mpi-impls.sh"
echo "# $(uptime)"
for impl in $MPI_IMPLS; do
	run=MPI_RUN_$impl lib=MPI_LIB_$impl prog=$B/mpi-$impl/mpi_overhead
	one() {
		if [ "$impl" = openmpi ]; then
			"${!run}" --allow-run-as-root -n 1 -x LD_PRELOAD -x VSCHED_JOB -x VSCHED_PROGRESS \
				-x VSCHED_AGENT "$prog"
		else
			"${!run}" -n 1 "$prog"
		fi
	}
	printf '%-8s %-14s %s\n' "$impl" "no-preload" "$(LD_PRELOAD= one)"
	for mode in auto mpi:Allreduce pcontrol; do
		printf '%-8s %-14s %s\n' "$impl" "$mode" "$(LD_PRELOAD=${!lib} VSCHED_JOB=bench \
			VSCHED_PROGRESS=$mode VSCHED_AGENT=ipc:///tmp/mpi_overhead.nobody.sock one)"
	done
done
