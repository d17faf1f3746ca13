# cosched_rates.sh (sourced by bench/cosched_throughput.sh and bench/cosched_replay.sh):
# throughput of membench and bsp from their own per-second `-v` lines.
#   nlines FILE PROG        how many "PROG: ... t=" lines FILE holds so far
#   mb_rate FILE N0 N1      membench MB/s over lines N0+1..N1: bytes of each interval
#                           (mb_s * (t_i - t_(i-1))), summed, over t_N1 - t_N0
#   it_rate FILE N0 N1      bsp rank 0 iterations/s between line N0 and line N1
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
