#!/usr/bin/env bash
# Installs everything vsched needs to build, test, benchmark and run its demo (Debian 12, as root).
# Idempotent: does nothing when every package is already installed.
set -euo pipefail
pkgs=(build-essential cmake pkg-config clang-format
      libzmq3-dev libconfig-dev liburcu-dev libcmocka-dev
      # the fuzz harnesses (tests/fuzz): clang and its runtimes (libFuzzer, sanitizers)
      clang libclang-rt-dev
      jq rt-tests rt-app stress-ng socat iproute2 procps util-linux
      # libapprate-mpi and its tests: both MPIs (they coexist: mpicc.openmpi, mpicc.mpich)
      gfortran openmpi-bin libopenmpi-dev mpich libmpich-dev
      # the Slurm plugin and its test: a one-node Slurm on loopback
      libslurm-dev slurmctld slurmd slurm-client munge
      # bench/mpi_app.sh: a packaged MPI application
      lammps
      # the package (scripts/package.sh: dpkg-shlibdeps), its man pages (man) and systemd
      # units (systemd-analyze verify); the clang build uses the clang above
      dpkg-dev man-db systemd)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "install-deps: missing ${missing[*]}; run as root" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
