# sleep_aggregate.awk: sums the runs of one (side, period, phase) of a sched_sleep.sh raw
# file (several with SLEEP_REPEAT) into one line of the same form:
#   sleep SIDE PERIOD_US PHASE_PCT jobs=J misses=M miss_pct=X runs=R
# (a case whose runs all failed: jobs=- misses=- miss_pct=-). Other lines are dropped.
$1 == "sleep" {
	k = $2 " " $3 " " $4
	if (!(k in runs)) { order[++nk] = k; runs[k] = 0 }
	runs[k]++
	split($5, j, "="); split($6, m, "=")
	if (j[2] != "-" && m[2] != "-") { jobs[k] += j[2]; miss[k] += m[2]; ok[k]++ }
}
END {
	for (i = 1; i <= nk; i++) {
		k = order[i]
		if (ok[k] && jobs[k] > 0)
			printf "sleep %s jobs=%d misses=%d miss_pct=%.2f runs=%d\n", k, jobs[k], miss[k], 100 * miss[k] / jobs[k], runs[k]
		else
			printf "sleep %s jobs=- misses=- miss_pct=- runs=%d\n", k, runs[k]
	}
}
