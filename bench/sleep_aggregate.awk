# sleep_aggregate.awk: sums the runs of one (side, period, phase) of a sched_sleep.sh raw
# file (several with SLEEP_REPEAT) into one line of the same form:
#   sleep SIDE PERIOD_US PHASE_PCT jobs=J misses=M miss_pct=X runs=R held=H held_pct=Y
# (held: bench_periodic's misses of jobs that woke on time; "-" when a run did not report
# it. A case whose runs all failed: jobs=- misses=- miss_pct=- ... held=- held_pct=-.)
# Other lines are dropped.
function field(name,    i, kv) {
	for (i = 5; i <= NF; i++)
		if (index($i, name "=") == 1) { split($i, kv, "="); return kv[2] }
	return "-"
}
$1 == "sleep" {
	k = $2 " " $3 " " $4
	if (!(k in runs)) { order[++nk] = k; runs[k] = 0; hok[k] = 1 }
	runs[k]++
	split($5, j, "="); split($6, m, "=")
	if (j[2] != "-" && m[2] != "-") {
		jobs[k] += j[2]; miss[k] += m[2]; ok[k]++
		h = field("held")
		if (h == "-") hok[k] = 0; else held[k] += h
	}
}
END {
	for (i = 1; i <= nk; i++) {
		k = order[i]
		if (ok[k] && jobs[k] > 0) {
			hs = hok[k] ? sprintf("held=%d held_pct=%.2f", held[k], 100 * held[k] / jobs[k]) : "held=- held_pct=-"
			printf "sleep %s jobs=%d misses=%d miss_pct=%.2f runs=%d %s\n", k, jobs[k], miss[k], 100 * miss[k] / jobs[k], runs[k], hs
		} else
			printf "sleep %s jobs=- misses=- miss_pct=- runs=%d held=- held_pct=-\n", k, runs[k]
	}
}
