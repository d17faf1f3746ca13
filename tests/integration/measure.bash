# Precise CPU-share measurement for the engine's integration tests (sourced after lib.sh;
# not a test itself: CTest runs integration/*.sh only).
# lib.sh's `share` reads the CPU time and the clock in separate forked commands; on a loaded
# machine the gap between them skews a 3 s window by tens of ms. Here the clock and every
# task's CPU time are read back to back in one process ($EPOCHREALTIME, `read` builtins), and
# all tasks are measured over the same interval.

# snap PID...: "wall_ns cpu_ns(PID1) cpu_ns(PID2) ..." from one instant.
snap() {
	local t0=${EPOCHREALTIME/./} p f v sum out=""
	for p in "$@"; do
		sum=0
		for f in /proc/"$p"/task/*/schedstat; do
			read -r v _ <"$f" 2>/dev/null || continue
			sum=$((sum + v))
		done
		out+=" $sum"
	done
	local t1=${EPOCHREALTIME/./}
	echo "$(((t0 + t1) / 2 * 1000))$out"
}

# shares SECONDS PID...: the percent of one CPU each PID used over the same SECONDS, one
# value per line, in the order given (1 decimal).
shares() {
	local secs=$1 a b
	shift
	a=$(snap "$@")
	sleep "$secs"
	b=$(snap "$@")
	awk -v a="$a" -v b="$b" 'BEGIN {
		n = split(a, x, " "); split(b, y, " ")
		for (i = 2; i <= n; i++) printf "%.1f\n", 100 * (y[i] - x[i]) / (y[1] - x[1])
	}'
}
