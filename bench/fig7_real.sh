#!/usr/bin/env bash
# fig7_real.sh — paper 004 Fig. 7 on this machine with the real system: vsched (both CPUs),
# vsched-agent, vsched-controller and a real 2-rank bsp job (--ratio C:M split, fixed after
# one calibration), for the control algorithms `linear` (paper 004 Sect. 4.2) and `adaptive`.
#
#   bash bench/fig7_real.sh [OUTDIR]       (root; build first: bash scripts/build.sh build-fig7)
#
# Per compute/communicate ratio (RATIOS, default "5:1 1:1 1:5"):
#   calib   bsp --ratio C:M --iter-time ITER_TIME once (SCHED_FIFO) -> fixed --compute/--msg
# Per ratio and algorithm (ALGOS, default "linear adaptive"), one locked run "resp":
#   R_max = slowest rank's iterations/s in a RMAX_S run at SCHED_FIFO (given to the controller),
#   epsilon RESP_EPS (3, the paper's), target 30 % for D_INIT s (initial convergence from the
#   200 ms initial period), then `vschedctl rate JOB 50` (response), D_RESP s, then back to 30
#   (second response; for adaptive a revisit of a known granularity), D_RESP s.
# Per ratio in EPS_RATIOS (default "1:1 5:1 1:5", run after all "resp" runs) and algorithm, one locked run "eps":
#   target 50 %, for each epsilon in EPS_LIST (10 8 5 3 2): `vschedctl job set --epsilon E`
#   (which re-initialises the job's control state: search again from the initial period),
#   D_EPS s; stability judged on the last OBS_EPS s (definition in the summary it prints).
# Variants used in the results (environment): F7_JOBSET_EXTRA="--initial-period 20ms
# --delta-period 200us" (appended to every `vschedctl job set`: scaled periods);
# VSCHED_REPORT_MS=2000 (libapprate report interval of the ranks: one report, hence one
# controller evaluation, per ~2 s of whole iterations instead of per iteration).
# A single run: bash bench/fig7_real.sh --one resp|eps RATIO ALGO COMPUTE_MS MSG_BYTES OUTDIR
# Each run takes /tmp/vsched-rt.lock (tests/helpers/rt_lock.sh) for itself only, and is
# bounded by `timeout`. Results: OUTDIR/{calib,resp,eps,wire}.tsv, per-run directories with
# logs and samples, and OUTDIR/summary.md. Nothing is written outside OUTDIR and the
# per-run temporary directories (removed unless KEEP=1).
set -euo pipefail
F7_SRC=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/fig7_lib.sh
source "$F7_SRC/bench/fig7_lib.sh"

RATIOS=${RATIOS:-"5:1 1:1 1:5"}
ALGOS=${ALGOS:-"linear adaptive"}
EPS_LIST=${EPS_LIST:-"10 8 5 3 2"}
EPS_RATIOS=${EPS_RATIOS:-"1:1 5:1 1:5"}
ITER_TIME=${ITER_TIME:-200ms}
RMAX_S=${RMAX_S:-4}
RESP_EPS=${RESP_EPS:-3}
T_LOW=${T_LOW:-30}
T_HIGH=${T_HIGH:-50}
D_INIT=${D_INIT:-60}
D_RESP=${D_RESP:-40}
D_EPS=${D_EPS:-40}
OBS_EPS=${OBS_EPS:-20}
LOCK_WAIT=${LOCK_WAIT:-900}

# ---------------------------------------------------------------- one locked run (child)
one_calib() { # RATIO
	rt_lock "$LOCK_WAIT"
	f7_bsp_calibrate "$1" "$ITER_TIME"
}

# run_setup NAME COMPUTE_MS MSG DURATION_S: daemons, R_max, job; sets RMAX, BSPA
run_setup() {
	RUN=$(mktemp -d "/tmp/vsched-fig7.XXXXXX")
	trap 'f7_cleanup; if [ "${KEEP:-}" = 1 ]; then echo "kept $RUN" >&2; else rm -rf "$RUN"; fi' EXIT
	trap 'exit 143' TERM INT
	BSPA=(--compute "${2}ms" --msg "$3")
	RMAX=$(f7_rmax "$RMAX_S" "${BSPA[@]}")
	[ -n "$RMAX" ] || f7_die "R_max measurement failed"
	f7_log "$1: R_max = $RMAX it/s (bsp ${BSPA[*]}, 2 ranks, SCHED_FIFO, ${RMAX_S}s)"
	f7_start_daemons
	f7_start_job job "$4" "${BSPA[@]}"
	f7_start_sampler job
}

# phase TARGET_OR_- EPS_OR_- DURATION OBS_S: changes target (rate) or epsilon (job set) at
# T0, waits DURATION, prints the stats line (observation window = last OBS_S s).
phase() {
	local tg=$1 eps=$2 dur=$3 obs=$4 t0 t1
	t0=$(f7_now)
	if [ "$eps" != - ]; then
		actl job set job --epsilon "$eps" >/dev/null || f7_die "job set --epsilon $eps refused"
		f7_mark epsilon "$eps"
	fi
	if [ "$tg" != - ]; then
		actl rate job "$tg" >/dev/null || f7_die "rate $tg refused"
		f7_mark target "$tg"
	fi
	sleep "$dur"
	t1=$(f7_now)
	f7_phase_stats "$t0" "$t1" "$CUR_TG" "$CUR_EPS" "$(awk -v a="$t1" -v o="$obs" 'BEGIN { printf "%.3f", a - o }')"
}

one_resp() { # RATIO ALGO COMPUTE_MS MSG OUT
	local ratio=$1 algo=$2 out=$5 w0 w1 r0 r1 e_sum=0 s line p
	rt_lock "$LOCK_WAIT"
	run_setup "resp $ratio $algo" "$3" "$4" $((D_INIT + 2 * D_RESP + 20))
	actl job set job --rmax "$RMAX" --algorithm "$algo" --epsilon "$RESP_EPS" >/dev/null
	CUR_EPS=$RESP_EPS
	CUR_TG=$T_LOW
	line=$(phase "$T_LOW" - "$D_INIT" $((D_INIT / 2)))
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$ratio" "$algo" "$RMAX" "$3" "$4" "init-$T_LOW" "$RESP_EPS" "$line" >>"$out/resp.tsv"
	f7_log "resp $ratio $algo init -> $T_LOW: $line"
	read -r w0 r0 <<<"$(f7_wire)"
	p=$(f7_agent_rates)
	for s in "$T_HIGH" "$T_LOW"; do
		CUR_TG=$s
		line=$(phase "$s" - "$D_RESP" $((D_RESP / 2)))
		e_sum=$((e_sum + $(cut -f1 <<<"$line")))
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$ratio" "$algo" "$RMAX" "$3" "$4" "to-$s" "$RESP_EPS" "$line" >>"$out/resp.tsv"
		f7_log "resp $ratio $algo -> $s: $line"
	done
	read -r w1 r1 <<<"$(f7_wire)"
	s=$(f7_agent_rates)
	printf '%s\t%s\t%d\t%d\t%d\t%d\n' "$ratio" "$algo" "$e_sum" $((s - p)) $((w1 - w0)) $((r1 - r0)) >>"$out/wire.tsv"
	grep -h 'rank=' "$RUN/job.out" >&2 || true
	cp "$RUN/samples.tsv" "$out/samples-resp-${ratio/:/_}-$algo.tsv"
	cp "$RUN/events.tsv" "$out/events-resp-${ratio/:/_}-$algo.tsv"
}

one_eps() { # RATIO ALGO COMPUTE_MS MSG OUT
	local ratio=$1 algo=$2 out=$5 e line first=1 n
	rt_lock "$LOCK_WAIT"
	n=$(wc -w <<<"$EPS_LIST")
	run_setup "eps $ratio $algo" "$3" "$4" $((n * D_EPS + 20))
	CUR_TG=$T_HIGH
	for e in $EPS_LIST; do
		CUR_EPS=$e
		if [ $first = 1 ]; then
			actl job set job --rmax "$RMAX" --algorithm "$algo" --epsilon "$e" >/dev/null
			f7_mark epsilon "$e"
			line=$(phase "$T_HIGH" - "$D_EPS" "$OBS_EPS")
			first=0
		else
			line=$(phase - "$e" "$D_EPS" "$OBS_EPS")
		fi
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$ratio" "$algo" "$RMAX" "$3" "$4" "eps" "$e" "$line" >>"$out/eps.tsv"
		f7_log "eps $ratio $algo eps=$e: $line"
	done
	cp "$RUN/samples.tsv" "$out/samples-eps-${ratio/:/_}-$algo.tsv"
	cp "$RUN/events.tsv" "$out/events-eps-${ratio/:/_}-$algo.tsv"
}

if [ "${1:-}" = --one ]; then
	shift
	mode=$1
	shift
	case $mode in
	calib) one_calib "$@" ;;
	resp) one_resp "$@" ;;
	eps) one_eps "$@" ;;
	*) f7_die "unknown mode $mode" ;;
	esac
	exit 0
fi

# ---------------------------------------------------------------- driver
[ "$(id -u)" -eq 0 ] || f7_die "needs root (vsched uses SCHED_FIFO)"
[ -x "$F7_BIN/vsched-controller" ] || f7_die "build first: bash scripts/build.sh $F7_BUILD"
command -v jq >/dev/null || f7_die "needs jq"
OUT=${1:-/tmp/fig7-real.$(date -u +%Y%m%dT%H%M%S)}
mkdir -p "$OUT"
HDR="ratio\talgo\trmax\tcompute_ms\tmsg\tphase\teps\tevals\tmissed\tfirst_in\tfirst_in_s\tresp_it\tresp_s\tchanges\tlast_change_it\tobs_evals\tobs_inband\tobs_mean\tobs_sd\tobs_changes\tperiod_ms\tslice_ms\tstates"
for f in resp eps; do [ -f "$OUT/$f.tsv" ] || printf '%b\n' "$HDR" >"$OUT/$f.tsv"; done
[ -f "$OUT/wire.tsv" ] || printf 'ratio\talgo\tevals\trates_sent\tagent_to_ctl_bytes\tctl_to_agent_bytes\n' >"$OUT/wire.tsv"
f7_log "results in $OUT; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s)
RUN_MAX_RESP=$((D_INIT + 2 * D_RESP + 120))
RUN_MAX_EPS=$(($(wc -w <<<"$EPS_LIST") * D_EPS + 120))

declare -A CMS MSG
for ratio in $RATIOS $EPS_RATIOS; do
	[ -z "${CMS[$ratio]:-}" ] || continue
	if [ ! -s "$OUT/calib-${ratio/:/_}" ]; then
		timeout -k 10 $((LOCK_WAIT + 90)) bash "$0" --one calib "$ratio" >"$OUT/calib-${ratio/:/_}"
	fi
	read -r c m <"$OUT/calib-${ratio/:/_}"
	CMS[$ratio]=$c
	MSG[$ratio]=$m
	printf '%s\t%s\t%s\n' "$ratio" "${CMS[$ratio]}" "${MSG[$ratio]}" >>"$OUT/calib.tsv"
done
# all response runs first, then the epsilon sweeps (EPS_RATIOS in the order given)
for ratio in $RATIOS; do
	for algo in $ALGOS; do
		timeout -k 15 $((LOCK_WAIT + RUN_MAX_RESP)) bash "$0" --one resp "$ratio" "$algo" \
			"${CMS[$ratio]}" "${MSG[$ratio]}" "$OUT" || f7_log "resp $ratio $algo: run failed (exit $?)"
	done
done
for ratio in $EPS_RATIOS; do
	for algo in $ALGOS; do
		timeout -k 15 $((LOCK_WAIT + RUN_MAX_EPS)) bash "$0" --one eps "$ratio" "$algo" \
			"${CMS[$ratio]}" "${MSG[$ratio]}" "$OUT" || f7_log "eps $ratio $algo: run failed (exit $?)"
	done
done
f7_log "all runs done in $(($(date +%s) - start)) s"
bash "$F7_SRC/bench/fig7_report.sh" "$OUT" >"$OUT/summary.md" || f7_log "report failed"
cat "$OUT/summary.md"
