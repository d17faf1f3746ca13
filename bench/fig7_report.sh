#!/usr/bin/env bash
# fig7_report.sh OUTDIR — markdown tables from bench/fig7_real.sh's OUTDIR/{calib,resp,eps,wire}.tsv.
# Stability (epsilon sweep), judged on the observation window (the last OBS_EPS s of each
# epsilon's phase, default 20 s of 40): (1) the constraint changed in at most 10 % of the
# window's evaluations, (2) at least 80 % of the window's evaluations are within ±eps of the
# target, (3) the window's mean rate is within ±eps of the target. Smallest stable eps = the
# smallest swept eps that is stable and every larger swept eps is stable too.
set -euo pipefail
OUT=${1:?usage: fig7_report.sh OUTDIR}
STAB_CH=${STAB_CH:-0.10}
STAB_IN=${STAB_IN:-0.80}

echo "### Fig. 7 on the real system (bsp, 2 ranks, one node with 2 CPUs)"
echo
echo "Paper 004 Fig. 7 (4 nodes, Patterns, GigE, Linux 2.4): response 29.16 s (5:1), 31.33 s (1:1),"
echo "32.01 s (1:5), \"a couple of iterations\" (Fig. 6: ~32 s = 2 iterations at 1:1); threshold limit 2 %"
echo "for all three; feedback 32 bytes/iteration."
echo
echo "bsp work per ratio (from one \`bsp --ratio C:M --iter-time\` calibration, then fixed):"
echo
echo "| ratio | compute per iteration | message per peer |"
echo "|---|---|---|"
sort -u "$OUT/calib.tsv" | awk -F'\t' '{ printf "| %s | %s ms | %.1f MB |\n", $1, $2, $3 / 1e6 }'
echo

# ---- summary table
awk -F'\t' -v stch="$STAB_CH" -v stin="$STAB_IN" '
FILENAME ~ /wire.tsv$/ && FNR > 1 { k = $1 SUBSEP $2; wev[k] = $3; wrate[k] = $4; wup[k] = $5; wdn[k] = $6; next }
FILENAME ~ /resp.tsv$/ && FNR > 1 {
	k = $1 SUBSEP $2; rmax[k] = $3
	if ($6 == "to-50") { r50it[k] = $12; r50s[k] = $13; f50[k] = $10 }
	if ($6 == "to-30") { r30it[k] = $12; r30s[k] = $13; f30[k] = $10 }
	if ($6 ~ /^init/) { iit[k] = $12; is[k] = $13 }
	ratios[$1] = 1; algos[$2] = 1; next
}
FILENAME ~ /eps.tsv$/ && FNR > 1 {
	k = $1 SUBSEP $2; e = $7 + 0
	stable = ($16 > 0 && $20 <= stch * $16 && $17 >= stin && ($18 - 50 <= e && 50 - $18 <= e))
	ne[k]++; ev[k, ne[k]] = e; st[k, ne[k]] = stable; swept[k] = 1; next
}
END {
	print "| ratio | algorithm | resp. 30→50 % (iterations / s) | resp. 50→30 % (iterations / s) | initial 200 ms → 30 % (iterations / s) | smallest stable ε | RATE bytes per job iteration (2 ranks) | TCP payload agent→controller per iteration | controller→agent per iteration |"
	print "|---|---|---|---|---|---|---|---|---|"
	split("5:1 1:1 1:5", ro, " ")
	split("29.16 31.33 32.01", pr, " ")
	for (i = 1; i <= 3; i++) {
		r = ro[i]
		printf "| %s | **paper 004** | ~2 / %s | – | – | 2 %% | 32 | – | – |\n", r, pr[i]
		for (a = 1; a <= 2; a++) {
			al = a == 1 ? "linear" : "adaptive"; k = r SUBSEP al
			if (!(k in rmax)) { printf "| | %s | not run | | | | | | |\n", al; continue }
			# smallest stable: sort swept eps descending; walk while stable
			sm = "not swept"
			if (k in swept) {
				sm = "none ≤ " ev[k, 1] " %"
				# entries were run in descending order
				for (j = 1; j <= ne[k]; j++) { if (!st[k, j]) break; sm = ev[k, j] " %" }
				if (j == 1) sm = "none of " ev[k, 1] "…" ev[k, ne[k]] " %"
			}
			ew = wev[k] > 0 ? wev[k] : 1
			printf "| | %s | %s / %s | %s / %s | %s / %s | %s | %.0f (%.2f RATE × 32 B) | %.0f B | %.0f B |\n", al,
				r50it[k], r50s[k], r30it[k], r30s[k], iit[k], is[k], sm,
				32 * wrate[k] / ew, wrate[k] / ew, wup[k] / ew, wdn[k] / ew
		}
	}
}' "$OUT/wire.tsv" "$OUT/resp.tsv" "$OUT/eps.tsv"
echo
echo "\"–\" in a response cell: the rate did not reach ±ε of the new target and stay there for"
echo "4 more evaluations within the phase."
echo

echo "#### Every phase of the response runs (ε = 3)"
echo
echo "| ratio | algorithm | R_max it/s | phase | evaluations (missed by the poll) | first in band (it / s) | reached and stayed (it / s) | constraint changes | 2nd half: evals, in band, mean %, s.d. | final period / slice ms | states seen |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
awk -F'\t' 'FNR > 1 { printf "| %s | %s | %s | %s | %s (%s) | %s / %s | %s / %s | %s | %s, %s, %s, %s | %.1f / %.1f | %s |\n",
	$1, $2, $3, $6, $8, $9, $10, $11, $12, $13, $14, $16, $17, $18, $19, $21, $22, $23 }' "$OUT/resp.tsv"
echo

if [ "$(wc -l <"$OUT/eps.tsv")" -gt 1 ]; then
	echo "#### ε sweep (target 50 %; \`job set --epsilon E\` restarts the search from the 200 ms initial period; $((${D_EPS:-40})) s per ε, window = last ${OBS_EPS:-20} s)"
	echo
	echo "| ratio | algorithm | ε | evaluations | last change at it | window: evals | changes | in band | mean % | s.d. | stable | final period / slice ms | states seen |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	awk -F'\t' -v stch="$STAB_CH" -v stin="$STAB_IN" 'FNR > 1 {
		e = $7 + 0
		stable = ($16 > 0 && $20 <= stch * $16 && $17 >= stin && ($18 - 50 <= e && 50 - $18 <= e))
		printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.1f / %.1f | %s |\n",
			$1, $2, $7, $8, $15, $16, $20, $17, $18, $19, stable ? "yes" : "**no**", $21, $22, $23 }' "$OUT/eps.tsv"
	echo
fi

echo "#### Feedback traffic, measured"
echo
echo "| ratio | algorithm | evaluations | RATE messages (agent counter) | agent→controller TCP payload bytes | controller→agent |"
echo "|---|---|---|---|---|---|"
awk -F'\t' 'FNR > 1 { printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6 }' "$OUT/wire.tsv"
