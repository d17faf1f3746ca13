# shellcheck shell=bash
# cosched_rates.sh (sourced after tests/integration/lib.sh by bench/cosched_throughput.sh,
# bench/cosched_replay.sh and bench/cosched_rate_throughput.sh): throughput of membench and
# bsp from their own per-second `-v` lines, and their speed outside vsched.
#   nlines FILE PROG        how many "PROG: ... t=" lines FILE holds so far
#   mb_rate FILE N0 N1      membench MB/s over lines N0+1..N1: bytes of each interval
#                           (mb_s * (t_i - t_(i-1))), summed, over t_N1 - t_N0
#   it_rate FILE N0 N1      bsp rank 0 iterations/s between line N0 and line N1
#   seg_rates SEG SKIP PROG:FILE...  waits SEG s and prints, on one line, each FILE's rate
#                           (mb_rate for membench, it_rate for bsp) over the last SEG - SKIP s
#   ref_mb TAG CPU          membench --stride max 64 MiB alone on CPU at SCHED_FIFO 1, 6 s: MB/s
#   ref_pair                two of them at once on CPUs 0 and 1: "MB/s + MB/s"
#   ref_beside_compute      ref_mb on CPU 0 beside a compute-bound bsp on CPU 1: MB/s
#   ref_bsp CPU             bsp --msg 0 --compute 5ms alone on CPU at SCHED_FIFO 1, 4 s: it/s
#   edf_overlap SPEC...     ms per frame that task 0 (on CPU 0) and task 2 (on CPU 1) are
#                           both dispatched, modelled (below)
nlines() { grep -c "^$2: .*t=" "$1" || true; }

mb_rate() {
	awk -v n0="$2" -v n1="$3" '/^membench: t=/ {
		k++; split($2, a, "="); split($3, b, "="); t = a[2]; m = b[2]
		if (k == n0) t0 = t
		if (k > n0 && k <= n1) { bytes += m * (t - prev); t1 = t }
		prev = t }
		END { if (t1 > t0) printf "%.1f", bytes / (t1 - t0); else print "nan" }' "$1"
}

it_rate() {
	awk -v n0="$2" -v n1="$3" '/^bsp: rank=0 t=/ {
		k++; split($3, a, "="); split($4, b, "=")
		if (k == n0) { t0 = a[2]; i0 = b[2] }
		if (k == n1) { t1 = a[2]; i1 = b[2] } }
		END { if (t1 > t0) printf "%.2f", (i1 - i0) / (t1 - t0); else print "nan" }' "$1"
}

seg_rates() {
	local seg=$1 skip=$2 a i=0 n0=() out=
	shift 2
	sleep "$skip"
	for a in "$@"; do n0+=("$(nlines "${a#*:}" "${a%%:*}")"); done
	sleep "$(awk -v a="$seg" -v b="$skip" 'BEGIN { print a - b }')"
	for a in "$@"; do
		if [ "${a%%:*}" = membench ]; then
			out+=" $(mb_rate "${a#*:}" "${n0[i]}" "$(nlines "${a#*:}" membench)")"
		else
			out+=" $(it_rate "${a#*:}" "${n0[i]}" "$(nlines "${a#*:}" bsp)")"
		fi
		i=$((i + 1))
	done
	echo "${out# }"
}

# The references run at SCHED_FIFO 1 so that other processes' CPU time does not count as
# lost bandwidth (RT throttling stays as it is).
ref_mb() {
	local out=$TMP/ref-$1-$2.out
	chrt -f 1 taskset -c "$2" "$VS_BIN/membench" --stride max --size 64MiB --duration 6s >"$out" 2>&1
	sed -n 's/.* mb_s=\([0-9.]*\).*/\1/p' "$out"
}
ref_pair() {
	ref_mb pair 0 >"$TMP/pair0" &
	local p=$! b
	b=$(ref_mb pair 1)
	wait "$p"
	echo "$(cat "$TMP/pair0") + $b"
}
# membench on CPU 0 beside the compute-bound bsp on CPU 1: if this costs membench as much as
# a second membench does, the two CPUs share something other than the memory bus (e.g. one
# core's two hyperthreads), and no pairing by memory bandwidth can win here
ref_beside_compute() {
	chrt -f 1 taskset -c 1 "$VS_BIN/bsp" --local 1 --msg 0 --compute 5ms --duration 8s >/dev/null 2>&1 &
	local p=$! m
	sleep 1
	m=$(ref_mb besidecpu 0)
	wait "$p" || true
	echo "$m"
}
ref_bsp() {
	chrt -f 1 taskset -c "$1" "$VS_BIN/bsp" --local 1 --msg 0 --compute 5ms --duration 4s 2>/dev/null |
		sed -n 's/^bsp: rank=0 ranks=.* rate=\([0-9.]*\) .*/\1/p'
}

# edf_overlap "CPU PHASE DEADLINE SLICE" x4 (ms; tasks 0, 1 on CPU 0, tasks 2, 3 on CPU 1,
# one period of 100 ms): preemptive EDF per CPU as vsched dispatches it (releases at
# PHASE + k*100, absolute deadline release + DEADLINE, SLICE of CPU each, ties to the lower
# task index, nothing runs outside its slice: `park = "stop"`), in 0.1 ms steps; prints the
# ms of the fourth frame (steady state) in which task 0 and task 2 both run.
edf_overlap() {
	printf '%s\n' "$@" | awk '
		{ cpu[NR - 1] = $1; ph[NR - 1] = $2; dl[NR - 1] = $3; sl[NR - 1] = $4 }
		END {
			n = NR; step = 0.1; both = 0
			for (s = 0; s < 4000; s++) {
				t = s * step
				for (c = 0; c < 2; c++) run[c] = -1
				for (i = 0; i < n; i++) {
					# the job of task i that holds t: released at r <= t
					k = int((t - ph[i]) / 100); if (t - ph[i] < 0) k = -1
					r = ph[i] + k * 100
					if (k < 0 || t >= r + dl[i]) continue
					if (job[i] != k) { job[i] = k; used[i] = 0 }
					if (used[i] >= sl[i] - 1e-9) continue
					c = cpu[i]
					if (run[c] < 0 || r + dl[i] < rd[c]) { run[c] = i; rd[c] = r + dl[i] }
				}
				for (c = 0; c < 2; c++) if (run[c] >= 0) used[run[c]] += step
				if (t >= 300 && run[0] == 0 && run[1] == 2) both += step
			}
			printf "%.1f", both }'
}
