# sleep_phases.awk: the worst and the median of one figure over the release phases, per
# (period, side), from sleep_aggregate.awk's lines (sched_sleep.sh and run_sched.sh print it).
#   awk -v col=COLUMN -f sleep_phases.awk      COLUMN: 7 miss_pct, 10 held_pct
# Out, one line per (period, side), unordered:
#   PERIOD_US SIDE WORST MEDIAN PHASE:VALUE...
# A phase whose runs all failed shows "-" and is not counted; WORST and MEDIAN are "-" when
# no phase is.
$1 == "sleep" {
	split($col, m, "=")
	k = $3 " " $2
	ph[k] = ph[k] " " $4 ":" m[2]
	if (m[2] == "-")
		next
	n[k]++
	v[k, n[k]] = m[2] + 0
	if (n[k] == 1 || m[2] + 0 > mx[k])
		mx[k] = m[2] + 0
}
END {
	for (k in ph) {
		c = n[k] + 0
		for (i = 1; i <= c; i++)
			x[i] = v[k, i]
		for (i = 2; i <= c; i++) { # insertion sort, for the median
			t = x[i]
			for (j = i - 1; j >= 1 && x[j] > t; j--)
				x[j + 1] = x[j]
			x[j + 1] = t
		}
		if (c)
			printf "%s %.2f %.2f%s\n", k, mx[k], c % 2 ? x[(c + 1) / 2] : (x[c / 2] + x[c / 2 + 1]) / 2, ph[k]
		else
			printf "%s - -%s\n", k, ph[k]
	}
}
