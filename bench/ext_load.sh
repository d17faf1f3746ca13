#!/usr/bin/env bash
# ext_load.sh — paper 004 Fig. 9 on this machine: a bsp job (2 ranks, --ratio 3:1 as in the
# paper's figure, epsilon 3) held at 50 % of its full speed by vsched + agent + controller;
# after a while a CPU hog (stress-ng --cpu 1, pinned to the managed CPU of rank 0, an ordinary
# SCHED_OTHER process: "contention 1.0") runs for D_HOG s, then stops. Reports the job's rate
# (% of R_max and of the target) and the controller's (period, slice) before / during / after.
# For contrast (EXT_BASELINE=1, default), the same bsp unmanaged (plain CFS, no vsched)
# without and with the same hog.
#
#   bash bench/ext_load.sh [OUTDIR]        (root; build first: bash scripts/build.sh build-fig7)
#
# Each algorithm (ALGOS, default "adaptive linear") is one run under /tmp/vsched-rt.lock,
# bounded by timeout; everything started is stopped by pid. Results: OUTDIR/ext_load.tsv,
# OUTDIR/ext_load.md, samples per run.
set -euo pipefail
F7_SRC=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/fig7_lib.sh
source "$F7_SRC/bench/fig7_lib.sh"

ALGOS=${ALGOS:-"adaptive linear"}
RATIO=${RATIO:-3:1}
ITER_TIME=${ITER_TIME:-200ms}
TARGET=${TARGET:-50}
EPS=${EPS:-3}
RMAX_S=${RMAX_S:-4}
D_CONV=${D_CONV:-40}
D_BEFORE=${D_BEFORE:-30}
D_HOG=${D_HOG:-40}
D_AFTER=${D_AFTER:-40}
EXT_BASELINE=${EXT_BASELINE:-1}
D_BASE=${D_BASE:-8}
LOCK_WAIT=${LOCK_WAIT:-900}

# window T0 T1: stats of the samples between T0 and T1 (whole window observed)
window() { f7_phase_stats "$1" "$2" "$TARGET" "$EPS" "$1"; }

# rank_cpu PID: the CPU vsched placed PID on
rank_cpu() {
	"$F7_BIN/vschedctl" -s "ipc://$RUN/vsched.sock" task list --json |
		jq -r ".[] | select(.pid == $1) | .cpu"
}

# hog CPU SECONDS: stress-ng --cpu 1 pinned to CPU, in the background (HOG_PID)
hog() {
	stress-ng --cpu 1 --taskset "$1" --timeout "${2}s" --metrics-brief >"$RUN/hog.out" 2>&1 &
	HOG_PID=$!
	F7_PIDS+=("$HOG_PID")
}

one_run() { # ALGO COMPUTE_MS MSG OUT
	local algo=$1 out=$4 t0 t1 t2 t3 t4 cpu pids line ph w
	rt_lock "$LOCK_WAIT"
	RUN=$(mktemp -d "/tmp/vsched-extload.XXXXXX")
	trap 'f7_cleanup; if [ "${KEEP:-}" = 1 ]; then echo "kept $RUN" >&2; else rm -rf "$RUN"; fi' EXIT
	trap 'exit 143' TERM INT
	local bspa=(--compute "${2}ms" --msg "$3")
	RMAX=$(f7_rmax "$RMAX_S" "${bspa[@]}")
	[ -n "$RMAX" ] || f7_die "R_max measurement failed"
	f7_log "ext_load $algo: R_max = $RMAX it/s"
	if [ "$EXT_BASELINE" = 1 ]; then
		# unmanaged bsp (CFS), without and with the hog on CPU 0, per-second rates from -v
		for ph in free hog; do
			[ $ph = hog ] && hog 0 $((D_BASE + 5))
			w=$(timeout -k 5 $((D_BASE + 30)) "$F7_BIN/bsp" --local 2 "${bspa[@]}" \
				--duration "${D_BASE}s" --timeout 20s | sed -n 's/.* rate=\([0-9.]*\) .*/\1/p' |
				sort -g | head -1)
			[ $ph = hog ] && { kill -TERM "$HOG_PID" 2>/dev/null || true; wait "$HOG_PID" 2>/dev/null || true; }
			printf '%s\t%s\tunmanaged-%s\t%s\n' "$algo" "$RMAX" "$ph" "$(awk -v r="$w" -v m="$RMAX" 'BEGIN { printf "%.3f\t%.1f", r, 100 * r / m }')" >>"$out/ext_baseline.tsv"
			f7_log "unmanaged bsp, $ph: $w it/s"
		done
	fi
	f7_start_daemons
	f7_start_job job $((D_CONV + D_BEFORE + D_HOG + D_AFTER + 20)) "${bspa[@]}"
	f7_start_sampler job
	actl job set job --rmax "$RMAX" --algorithm "$algo" --epsilon "$EPS" >/dev/null
	t0=$(f7_now)
	actl rate job "$TARGET" >/dev/null || f7_die "rate $TARGET refused"
	f7_mark target "$TARGET"
	sleep "$D_CONV"
	t1=$(f7_now)
	pids=$(actl job show job --json | jq -r '.rank_list[] | "\(.rank):\(.pid)"' | tr '\n' ' ')
	cpu=$(rank_cpu "$(actl job show job --json | jq -r '.rank_list[] | select(.rank == 0) | .pid')")
	[ -n "$cpu" ] && [ "$cpu" != null ] || cpu=0
	f7_log "ranks (rank:pid) $pids; rank 0 on CPU $cpu"
	"$F7_BIN/vschedctl" -s "ipc://$RUN/vsched.sock" task list >&2 || true
	sleep "$D_BEFORE"
	t2=$(f7_now)
	hog "$cpu" "$D_HOG"
	f7_mark hog-start "$cpu"
	sleep "$D_HOG"
	wait "$HOG_PID" 2>/dev/null || true
	t3=$(f7_now)
	f7_mark hog-stop "$cpu"
	sleep "$D_AFTER"
	t4=$(f7_now)
	for ph in converge before during after; do
		case $ph in
		converge) line=$(window "$t0" "$t1") ;;
		before) line=$(window "$t1" "$t2") ;;
		during) line=$(window "$t2" "$t3") ;;
		after) line=$(window "$t3" "$t4") ;;
		esac
		printf '%s\t%s\t%s\t%s\t%s\n' "$algo" "$RMAX" "$ph" "$cpu" "$line" >>"$out/ext_load.tsv"
		f7_log "ext_load $algo $ph: $line"
	done
	grep -h 'rank=' "$RUN/job.out" >&2 || true
	grep -h 'stress-ng' "$RUN/hog.out" | tail -4 >&2 || true
	cp "$RUN/samples.tsv" "$out/samples-ext-$algo.tsv"
	cp "$RUN/events.tsv" "$out/events-ext-$algo.tsv"
	cp "$RUN/hog.out" "$out/hog-$algo.out"
}

if [ "${1:-}" = --one ]; then
	shift
	one_run "$@"
	exit 0
fi

[ "$(id -u)" -eq 0 ] || f7_die "needs root (vsched uses SCHED_FIFO)"
[ -x "$F7_BIN/vsched-controller" ] || f7_die "build first: bash scripts/build.sh $F7_BUILD"
command -v stress-ng >/dev/null || f7_die "needs stress-ng"
OUT=${1:-/tmp/ext-load.$(date -u +%Y%m%dT%H%M%S)}
mkdir -p "$OUT"
[ -f "$OUT/ext_load.tsv" ] || printf 'algo\trmax\tphase\thog_cpu\tevals\tmissed\tfirst_in\tfirst_in_s\tresp_it\tresp_s\tchanges\tlast_change_it\tobs_evals\tobs_inband\tobs_mean\tobs_sd\tobs_changes\tperiod_ms\tslice_ms\tstates\n' >"$OUT/ext_load.tsv"
[ -f "$OUT/ext_baseline.tsv" ] || printf 'algo\trmax\tphase\trate\tpct_of_rmax\n' >"$OUT/ext_baseline.tsv"
if [ ! -s "$OUT/calib" ]; then
	timeout -k 10 $((LOCK_WAIT + 90)) bash -c "source '$F7_SRC/bench/fig7_lib.sh'; rt_lock $LOCK_WAIT; f7_bsp_calibrate $RATIO $ITER_TIME" >"$OUT/calib"
fi
read -r cms msg <"$OUT/calib"
f7_log "bsp --ratio $RATIO --iter-time $ITER_TIME -> --compute ${cms}ms --msg $msg"
RUN_MAX=$((D_CONV + D_BEFORE + D_HOG + D_AFTER + 3 * D_BASE + 150))
for algo in $ALGOS; do
	timeout -k 15 $((LOCK_WAIT + RUN_MAX)) bash "$0" --one "$algo" "$cms" "$msg" "$OUT" ||
		f7_log "ext_load $algo: run failed (exit $?)"
done

{
	echo "### External load (paper 004 Fig. 9): bsp --ratio $RATIO (--compute ${cms}ms --msg $msg), 2 ranks, target $TARGET %, ε $EPS"
	echo
	echo "Paper 004 Fig. 9 (Patterns 3:1 on 4 nodes, target 50 %, ε 3 %): external load of contention 1.0"
	echo "placed on one node at about the 15th iteration; \"the combination of VSched and the feedback"
	echo "controller are able to keep the performance of Patterns independent of this load\"."
	echo
	echo "| algorithm | phase | duration s | evaluations | rate % of R_max (mean ± s.d.) | % of target | in ±ε | constraint changes | (period, slice) at end of phase |"
	echo "|---|---|---|---|---|---|---|---|---|"
	awk -F'\t' -v tg="$TARGET" -v dc="$D_CONV" -v db="$D_BEFORE" -v dh="$D_HOG" -v da="$D_AFTER" 'FNR > 1 {
		d = $3 == "converge" ? dc : $3 == "before" ? db : $3 == "during" ? dh : da
		printf "| %s | %s%s | %s | %s | %s ± %s | %.1f %% | %.0f %% | %s | (%.2f ms, %.2f ms) |\n", $1, $3,
			$3 == "during" ? " (hog on CPU " $4 ")" : "", d, $5, $15, $16, 100 * $15 / tg, 100 * $14, $11, $18, $19 }' "$OUT/ext_load.tsv"
	echo
	if [ "$(wc -l <"$OUT/ext_baseline.tsv")" -gt 1 ]; then
		echo "Contrast, the same bsp unmanaged (CFS, no vsched), ${D_BASE} s each, slowest rank:"
		echo
		echo "| before run of | phase | rate it/s | % of R_max |"
		echo "|---|---|---|---|"
		awk -F'\t' 'FNR > 1 { printf "| %s | %s | %s | %s |\n", $1, $3, $4, $5 }' "$OUT/ext_baseline.tsv"
		echo
	fi
} >"$OUT/ext_load.md"
cat "$OUT/ext_load.md"
