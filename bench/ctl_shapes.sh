#!/usr/bin/env bash
# ctl_shapes.sh — the controller on job shapes it was not tuned for, judged from the
# applications' own iteration stamps (issue "U as a controlled variable").
#
#   bash bench/ctl_shapes.sh [OUTDIR]     (root; build first: bash scripts/build.sh build)
#   bash bench/ctl_shapes.sh --reanalyse OUTDIR   judge the runs kept in OUTDIR again
#
# Shapes (SHAPES, default "compute wait mem comm"), each a job of 2 ranks:
#   compute  iowait --compute 10ms --wait 0      pure-compute BSP (process-shared barrier)
#   wait     iowait --compute 8ms --wait 4ms     compute + blocking wait, like I/O
#   mem      membench --stride max --size 64MiB  memory-bound, 2 independent ranks
#   comm     bsp --ratio 1:5 (fixed after one calibration)  communication-heavy
# Per shape, R_max = the job's rate alone at SCHED_FIFO (full speed; the better of 2 runs).
# Every process computes with one calibration of the compute loop (APP_SPIN_NS_PER_LOOP,
# measured once at the start unless given; kept in OUTDIR/spin_ns_per_loop).
# Per shape and algorithm (ALGOS, default "linear adaptive floating"), one run: vsched on
# both CPUs, agent, controller (epsilon EPS, 2), two jobs A and B of the shape at once,
# targets (A, B) in phases of PHASE_S (90) s: (20, 45) (45, 20) (70, 20) (20, 70).
# With EXT_LOAD=1 the runs are made again for the algorithm "floating" with a CFS load on
# both CPUs (stress-ng --cpu 2, nice 0), named "floating+load". With COSCHED=1 they are made
# again for "floating" in the controller's co-scheduling mode (coschedule = true, frame
# 100 ms, slot COSCHED_SLOT, 1ms: a job's ranks run in the same slots, U moves in whole
# slots), named "floating+cosched".
#
# Judged per job and phase from the application's stamps (rank 0's iteration ends; for mem
# the slower rank's): the rate over a sliding window of WIN_S (5) s, every second (the
# iterations that ended in it / the window; longer for slow jobs, so that one iteration is
# at most half the tolerance: 11 s for the comm shape's 9.6 it/s). "settle"
# = the first second from which every window up to the phase's end is within +-TOL (2)
# points of the target; a phase passes when settle <= 30 s and the rate then holds for the
# rest of the phase (>= 60 s). Also, from 30 s after the change to the phase end: the mean
# rate and the share of windows within the band. Also: controller evaluations and application iterations to
# settle, the mean U held after settle, and the CPU freed against U = target (target - U).
# Also the state the controller showed most from 30 s (its reason where it says one), and
# whether the phase's pair of targets can be reached at all (FEASIBLE=1, the default: both
# jobs without the controller, every rank under a fixed reservation, the 90 % cap split in
# proportion to the targets, at the periods FEAS_PERIODS, "200 20" ms, FEAS_S, 34 s each;
# see "can a phase's pair of targets be reached at all?" below).
# Output: OUTDIR/results.tsv (one row per shape, algorithm, job, phase), feasible.tsv and
# summary.md (tables per shape, side by side; a count of the phases passed, also of those
# whose pair is not shown unreachable). Each run takes the machine-wide RT lock for itself.
set -euo pipefail
F7_SRC=$(cd "$(dirname "$0")/.." && pwd)
F7_BUILD=${F7_BUILD:-build}
# shellcheck source=bench/fig7_lib.sh
source "$F7_SRC/bench/fig7_lib.sh"

SHAPES=${SHAPES:-"compute wait mem comm"}
ALGOS=${ALGOS:-"linear adaptive floating"}
PHASE_S=${PHASE_S:-90}
EPS=${EPS:-2}
TOL=${TOL:-2}
WIN_S=${WIN_S:-5}
LOCK_WAIT=${LOCK_WAIT:-1800}
PHASES=("20 45" "45 20" "70 20" "20 70")
if [ "${1:-}" = --one ] || [ "${1:-}" = --rmax ] || [ "${1:-}" = --feasible ]; then
	OUT=$OUT_ONE
elif [ "${1:-}" = --reanalyse ]; then
	OUT=${2:?--reanalyse OUTDIR}
else
	OUT=${1:-/tmp/ctl_shapes.$(date +%Y%m%d-%H%M%S)}
fi
mkdir -p "$OUT"
BIN=$F7_BIN

# ---- the shapes ---------------------------------------------------------------------------

# shape_start SHAPE JOB DURATION_S STAMPS_PREFIX: starts the job's 2 ranks reporting through
# the agent, each writing its stamps to STAMPS_PREFIX.R when it can.
shape_start() {
	local shape=$1 job=$2 dur=$3 st=$4 r
	case $shape in
	compute | wait)
		local w=0
		[ "$shape" = wait ] && w=4ms
		local c=10ms
		[ "$shape" = wait ] && c=8ms
		VSCHED_AGENT="ipc://$RUN/agent.sock" VSCHED_JOB=$job "$BIN/iowait" --ranks 2 \
			--compute "$c" --wait "$w" --duration "${dur}s" --stamps "$st.0" \
			>"$RUN/$job.out" 2>&1 &
		F7_PIDS+=("$!")
		;;
	mem)
		for r in 0 1; do
			"$BIN/vschedctl" job run --job "$job" --rank "$r" --agent "ipc://$RUN/agent.sock" -- \
				"$BIN/membench" --stride max --size 64MiB --duration "${dur}s" \
				--stamps "$st.$r" >"$RUN/$job.$r.out" 2>&1 &
			F7_PIDS+=("$!")
		done
		;;
	comm)
		"$BIN/bsp" --local 2 --compute "${COMM_COMPUTE}ms" --msg "$COMM_MSG" \
			--duration "${dur}s" --timeout 60s --stamps "$st.0" -- \
			"$BIN/vschedctl" job run --job "$job" --rank '{rank}' \
			--agent "ipc://$RUN/agent.sock" -- >"$RUN/$job.out" 2>&1 &
		F7_PIDS+=("$!")
		;;
	esac
}

# report_rmax SHAPE RMAX: R_max (stamped iterations/s) in the units the job reports to the
# controller: membench reports one unit per 1 MiB chunk and stamps once per pass over its
# 64 MiB buffer (64 units); the others report and stamp once per iteration. (Before this,
# the mem shape's R_max was given 64x too small: floating then saw the job 9x faster than
# its target and cut U to ~1 %.)
report_rmax() {
	case $1 in
	mem) awk -v r="$2" 'BEGIN { printf "%.6f\n", r * 64 }' ;;
	*) echo "$2" ;;
	esac
}

# shape_rmax SHAPE: the job alone at full speed for 6 s, twice: the better rate (it/s of the
# slower rank, from its own stamps). "Full speed" is the job at SCHED_FIFO (chrt, under the RT
# lock, bounded by the kernel's RT throttling and the 6 s), so that other tenants' CFS load
# on the machine does not lower R_max and with it every target.
shape_rmax() {
	local shape=$1 best=0 i v
	for i in 1 2; do
		RUN=$(mktemp -d /tmp/vsched-shapes.XXXXXX)
		OUT_ONE=$OUT timeout -k 10 $((LOCK_WAIT + 60)) bash "$0" --rmax "$shape" "$RUN/rm"
		v=$(stamps_rate "$RUN/rm" 1 1e18)
		rm -rf "$RUN"
		best=$(awk -v a="$best" -v b="$v" 'BEGIN { print (b > a ? b : a) }')
	done
	echo "$best"
}

# The job without vsched, agent or controller (no reports: no job name).
shape_start_bare() {
	local shape=$1 dur=$2 st=$3 r
	case $shape in
	compute) ${CHRT:-} "$BIN/iowait" --ranks 2 --compute 10ms --wait 0 --duration "${dur}s" --stamps "$st.0" >/dev/null & ;;
	wait) ${CHRT:-} "$BIN/iowait" --ranks 2 --compute 8ms --wait 4ms --duration "${dur}s" --stamps "$st.0" >/dev/null & ;;
	mem)
		for r in 0 1; do
			${CHRT:-} "$BIN/membench" --stride max --size 64MiB --duration "${dur}s" --stamps "$st.$r" >/dev/null &
			F7_PIDS+=("$!")
		done
		return
		;;
	comm)
		${CHRT:-} "$BIN/bsp" --local 2 --compute "${COMM_COMPUTE}ms" --msg "$COMM_MSG" --duration "${dur}s" \
			--timeout 60s --stamps "$st.0" >/dev/null &
		;;
	esac
	F7_PIDS+=("$!")
}

# stamps_rate PREFIX FROM_S TO_S: iterations/s between two instants (s since the stamps'
# clock origin, CLOCK_MONOTONIC) of the slower of the stamp files PREFIX.*.
stamps_rate() {
	local f r worst=""
	for f in "$1".*; do
		[ -s "$f" ] || continue
		r=$(awk -v a="$2" -v b="$3" '$2 / 1e9 >= a && $2 / 1e9 <= b { if (!n) t0 = $2; t1 = $2; n++ }
			END { if (n > 1) printf "%.6f\n", (n - 1) / ((t1 - t0) / 1e9); else print 0 }' "$f")
		if [ -z "$worst" ] || awk -v x="$r" -v y="$worst" 'BEGIN { exit !(x < y) }'; then worst=$r; fi
	done
	echo "${worst:-0}"
}

# ---- can a phase's pair of targets be reached at all? ---------------------------------------
# Two jobs share each CPU under vsched's cap (90 %). If both run short of their targets when
# the whole cap is split between them in proportion to their targets, no split reaches both:
# a job given more U than its part leaves the other less U (and more contention). Such a
# phase can only be shown unreachable (docs/control.md, "Bounds and saturation"), not
# passed. Measured without the controller: every rank under a fixed reservation, at each
# period of FEAS_PERIODS (ms).

FEAS_PERIODS=${FEAS_PERIODS:-"200 20"}
FEAS_S=${FEAS_S:-34} # one probe; its rate counts from 8 s on (ranks started, connected)
FEAS_CAP=90 # vsched's utilization_cap in f7_start_vsched, in %

# rank_pids SHAPE PID...: the processes that are the job's ranks, in rank order (iowait and
# bsp --local fork theirs; each membench rank is a process of its own).
rank_pids() {
	local shape=$1
	shift
	case $shape in
	mem) echo "$@" ;;
	*) pgrep -P "$1" | sort -n | tr '\n' ' ' ;;
	esac
}

# ranks_up SHAPE PID...: both ranks of the job are there.
ranks_up() { [ "$(rank_pids "$@" | wc -w)" = 2 ]; }

# held_inband PREFIX FROM_S TO_S TARGET: how steady the job is by itself under a fixed
# reservation: the share (%) of the judge's windows in (FROM, TO] whose rate, scaled so that
# the mean over (FROM, TO] is TARGET, is within +-TOL points of it. A controller that holds
# the job's mean exactly on target gets no more windows in band than that.
held_inband() {
	local win
	win=$(judge_window "$RMAX")
	awk -v a="$2" -v b="$3" -v g="$4" -v win="$win" -v tol="$TOL" '
		FNR == 1 { nf++ }
		{ t = $2 / 1e9; if (t > a && t <= b) { n[nf]++; ts[nf, n[nf]] = t } }
		END {
			m = -1
			for (f = 1; f <= nf; f++) if (m < 0 || n[f] < m) { m = n[f]; slow = f }
			if (m < 2) { print "-"; exit }
			mean = m / (b - a)
			for (t = a + win; t <= b; t += 1) {
				c = 0
				for (i = 1; i <= n[slow]; i++) if (ts[slow, i] > t - win && ts[slow, i] <= t) c++
				d = (c / win / mean - 1) * g; nw++
				if (d >= -tol && d <= tol) in_band++
			}
			if (nw) printf "%.0f\n", 100 * in_band / nw; else print "-"
		}' "$1".*
}

# feasible_probe SHAPE PERIOD_MS TA TB: jobs A and B bare, rank r of each on CPU r under
# (PERIOD, U x PERIOD), U the cap split in proportion to the targets TA and TB; prints
# their rates in % of RMAX and held_inband() of each at its target, tab-separated.
feasible_probe() {
	local shape=$1 p=$2 ta=$3 tb=$4 j u ua ub n0 pid r t0 t1 ra rb
	local -a mine=()
	ua=$(awk -v a="$ta" -v b="$tb" -v c="$FEAS_CAP" 'BEGIN { print c * a / (a + b) }')
	ub=$(awk -v a="$ta" -v b="$tb" -v c="$FEAS_CAP" 'BEGIN { print c * b / (a + b) }')
	for j in A B; do
		n0=${#F7_PIDS[@]}
		rm -f "$RUN/st.$j".*
		shape_start_bare "$shape" "$FEAS_S" "$RUN/st.$j"
		mine+=("${F7_PIDS[@]:n0}")
		u=$ua
		[ "$j" = B ] && u=$ub
		f7_wait 5 ranks_up "$shape" "${F7_PIDS[@]:n0}" ||
			f7_die "feasibility: $shape job $j: 2 ranks not seen"
		r=0
		for pid in $(rank_pids "$shape" "${F7_PIDS[@]:n0}"); do
			"$BIN/vschedctl" -s "ipc://$RUN/vsched.sock" task add "$pid" --period "${p}ms" \
				--slice "$(awk -v u="$u" -v p="$p" 'BEGIN { printf "%.0fus", u * p * 10 }')" \
				--cpu "$r" >/dev/null || f7_die "feasibility: task add $pid refused"
			r=$((r + 1))
		done
	done
	t0=$(mono_now)
	for pid in "${mine[@]}"; do wait "$pid" 2>/dev/null || true; done
	F7_PIDS=("${F7_PIDS[@]:0:1}") # vsched only: the jobs are reaped, their pids no longer ours
	t0=$(awk -v t="$t0" 'BEGIN { print t + 8 }')
	t1=$(mono_now)
	ra=$(stamps_rate "$RUN/st.A" "$t0" "$t1")
	rb=$(stamps_rate "$RUN/st.B" "$t0" "$t1")
	printf '%s\t%s\t%s\n' "$(awk -v a="$ra" -v b="$rb" -v m="$RMAX" 'BEGIN { printf "%.2f\t%.2f\n", 100 * a / m, 100 * b / m }')" \
		"$(held_inband "$RUN/st.A" "$t0" "$t1" "$ta")" "$(held_inband "$RUN/st.B" "$t0" "$t1" "$tb")"
}

# feasible_run SHAPE RMAX (internal, one locked run): "TA TB PERIOD_MS RATE_A RATE_B
# INBAND_A INBAND_B" for every distinct pair of targets of PHASES and every period of
# FEAS_PERIODS.
feasible_run() {
	local shape=$1 pair ta tb p res
	RMAX=$2
	rt_lock "$LOCK_WAIT"
	RUN=$(mktemp -d /tmp/vsched-shapes.XXXXXX)
	trap 'f7_cleanup; rm -rf "$RUN"' EXIT
	F7_PIDS=()
	f7_start_vsched # the same vsched as in the controlled runs
	for pair in $(printf '%s\n' "${PHASES[@]}" | awk '{ print ($1 < $2 ? $1 "," $2 : $2 "," $1) }' | sort -u); do
		ta=${pair%,*} tb=${pair#*,}
		for p in $FEAS_PERIODS; do
			res=$(feasible_probe "$shape" "$p" "$ta" "$tb") || exit 1
			printf '%s\t%s\t%s\t%s\n' "$ta" "$tb" "$p" "$res"
		done
	done
}

# reachable SHAPE TA TB: "yes" when at some period both jobs came within TOL of their targets
# at the proportional split, "no" when at every period both fell short by more, else "?".
reachable() {
	[ -s "$OUT/feasible.tsv" ] || {
		echo -
		return
	}
	awk -F'\t' -v s="$1" -v a="$2" -v b="$3" -v tol="$TOL" '
		BEGIN { all_short = 1 }
		$1 == s && (($2 == a && $3 == b) || ($2 == b && $3 == a)) {
			ra = $2 == a ? $5 : $6; rb = $2 == a ? $6 : $5; n++
			if (ra >= a - tol && rb >= b - tol) yes = 1
			if (!(ra < a - tol && rb < b - tol)) all_short = 0
		}
		END { print n == 0 ? "-" : yes ? "yes" : all_short ? "no" : "?" }' "$OUT/feasible.tsv"
}

# ---- one run: a shape, an algorithm ---------------------------------------------------------

# Seconds on the stamps' clock: /proc/uptime is CLOCK_BOOTTIME, which equals CLOCK_MONOTONIC
# on a machine that has never been suspended (a server; these VMs).
mono_now() { cut -d' ' -f1 /proc/uptime; }

# sampler JOB: every second, "mono_s evaluations u_pct current_pct state reason" of the job.
sampler() {
	local job=$1
	while :; do
		printf '%s\t%s\n' "$(mono_now)" \
			"$(actl job show "$job" --json 2>/dev/null | jq -r '[.evaluations, .u_pct, .current_pct, .state, .reason] | @tsv' 2>/dev/null)"
		sleep 1
	done >>"$RUN/samples.$job.tsv"
}

one_run() { # SHAPE ALGO RMAX NAME
	local shape=$1 algo=$2 rmax=$3 name=$4 total=$((${#PHASES[@]} * PHASE_S + 20)) j k
	rt_lock "$LOCK_WAIT"
	RUN=$(mktemp -d /tmp/vsched-shapes.XXXXXX)
	trap 'f7_cleanup; rm -rf "$RUN"' EXIT
	[ "${algo#*+}" != cosched ] ||
		F7_CTL_EXTRA="coschedule = true; frame = \"100ms\"; slot = \"${COSCHED_SLOT:-1ms}\";"
	f7_start_daemons
	if [ -n "${LOAD:-}" ]; then
		stress-ng --cpu 2 --timeout "$((total + 30))s" >/dev/null 2>&1 &
		F7_PIDS+=("$!")
	fi
	for j in A B; do
		shape_start "$shape" "$j" "$total" "$RUN/stamps.$j"
	done
	for j in A B; do
		f7_wait 30 sh -c "'$BIN/vschedctl' -C 'ipc://$RUN/admin.sock' job list --json | jq -e '.[] | select(.name == \"$j\" and .ranks == 2)'" ||
			f7_die "$name: job $j: 2 ranks not seen"
		actl job set "$j" --rmax "$(report_rmax "$shape" "$rmax")" --algorithm "${algo%+*}" \
			--epsilon "$EPS" >/dev/null
		sampler "$j" &
		F7_PIDS+=("$!")
	done
	: >"$RUN/phases.tsv"
	local prev_b=0 first second
	for k in "${!PHASES[@]}"; do
		read -r ta tb <<<"${PHASES[k]}"
		printf '%s\t%s\t%s\t%s\n' "$k" "$(mono_now)" "$ta" "$tb" >>"$RUN/phases.tsv"
		# the job whose target falls first, as an administrator would: its room is freed
		# before the other asks for more
		first="A $ta" second="B $tb"
		[ "$tb" -ge "$prev_b" ] || { first="B $tb" second="A $ta"; }
		prev_b=$tb
		for j in "$first" "$second"; do
			# shellcheck disable=SC2086 # "JOB PERCENT"
			actl rate $j >/dev/null 2>&1 || f7_log "$name: rate $j refused: $(actl rate $j 2>&1)"
		done
		sleep "$PHASE_S"
	done
	printf '%s\t%s\t-\t-\n' end "$(mono_now)" >>"$RUN/phases.tsv"
	analyse "$shape" "$algo" "$rmax" >>"$OUT/results.tsv"
	mkdir -p "$OUT/$name"
	cp "$RUN"/*.tsv "$RUN"/*.log "$RUN"/stamps.* "$OUT/$name/" 2>/dev/null || true
}

# judge_window RMAX: the judge's window, seconds: WIN_S, or longer where one iteration would
# be more than half the tolerance (100 / (RMAX * window) points <= TOL / 2): a window of a
# slow job holds few iterations, and counting one more or less must not decide the verdict.
judge_window() {
	awk -v w="$WIN_S" -v r="$1" -v tol="$TOL" \
		'BEGIN { m = 200 / (r * tol); m = m == int(m) ? m : int(m) + 1; print (m > w ? m : w) }'
}

# analyse SHAPE ALGO RMAX: one row per job and phase (see the top of the file).
analyse() {
	local shape=$1 algo=$2 rmax=$3 j win
	win=$(judge_window "$rmax")
	for j in A B; do
		awk -v shape="$shape" -v algo="$algo" -v job="$j" -v rmax="$rmax" -v win="$win" \
			-v tol="$TOL" -v phases="$RUN/phases.tsv" -v samples="$RUN/samples.$j.tsv" '
		# The slower rank rate over the window (t - win, t]: iterations ended in it / win.
		# Not (n - 1) / (last - first): under a reservation iterations come in bursts, the
		# edges of a window fall in the gaps between bursts more often than not, and that
		# span is then shorter than the window: biased high by up to a gap / win.
		function upto(f, t,   lo, hi, mid) { # stamps of file f at or before t (binary search)
			lo = 0; hi = cnt[f]
			while (lo < hi) {
				mid = int((lo + hi + 1) / 2)
				if (ts[f, mid] <= t) lo = mid; else hi = mid - 1
			}
			return lo
		}
		function rate_at(t,   r) {
			worst = -1
			for (f = 0; f < nf; f++) {
				r = (upto(f, t) - upto(f, t - win)) / win
				if (worst < 0 || r < worst) worst = r
			}
			return 100 * worst / rmax
		}
		BEGIN {
			nf = 0
			while ((getline line < phases) > 0) {
				split(line, p, "\t"); np++; pk[np] = p[1]; pt[np] = p[2]
				tgt[np] = job == "A" ? p[3] : p[4]
			}
			while ((getline line < samples) > 0) {
				split(line, s, "\t"); ns++; st[ns] = s[1]; sev[ns] = s[2]; su[ns] = s[3]
				sst[ns] = s[5]; srs[ns] = s[6]
			}
		}
		FNR == 1 { nf++ }
		{ cnt[nf - 1]++; ts[nf - 1, cnt[nf - 1]] = $2 / 1e9 }
		END {
			for (k = 1; k < np; k++) {
				t0 = pt[k]; t1 = pt[k + 1]; g = tgt[k]; settle = -1
				for (t = t0 + win; t <= t1; t += 1) {
					r = rate_at(t)
					if (r < g - tol || r > g + tol) settle = -1
					else if (settle < 0) settle = t - t0
				}
				# evaluations, iterations to settle; U held after it
				ev0 = ev1 = ""; us = 0; un = 0
				for (i = 1; i <= ns; i++) {
					if (st[i] < t0 || st[i] > t1) continue
					if (ev0 == "") ev0 = sev[i]
					if (settle >= 0 && st[i] <= t0 + settle) ev1 = sev[i]
					if (settle >= 0 && st[i] >= t0 + settle && su[i] != "null" && su[i] != "") { us += su[i]; un++ }
				}
				it = 0
				for (i = 1; i <= cnt[0]; i++) if (ts[0, i] >= t0 && settle >= 0 && ts[0, i] <= t0 + settle) it++
				u = un ? us / un : -1
				ok = settle >= 0 && settle <= 30 && t1 - t0 - settle >= 60
				# from 30 s after the change: share of windows in the band, mean rate
				nb = nin = 0; rs = 0
				for (t = t0 + 30; t <= t1; t += 1) {
					r = rate_at(t); nb++; rs += r
					if (r >= g - tol && r <= g + tol) nin++
				}
				# the state the controller showed most from 30 s, and its last reason then
				delete seen; mode = "-"; why = ""
				for (i = 1; i <= ns; i++) {
					if (st[i] < t0 + 30 || st[i] > t1 || sst[i] == "") continue
					if (++seen[sst[i]] > seen[mode]) mode = sst[i]
					if (sst[i] == mode) why = srs[i]
				}
				gsub(/[\t|]/, " ", why)
				printf "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%.2f\t%.2f\t%s\t%.0f\t%.2f\t%s\t%s\n", shape, algo, job, k - 1, g,
					settle < 0 ? "never" : sprintf("%.0f", settle),
					settle < 0 || ev1 == "" ? "-" : ev1 - ev0, settle < 0 ? "-" : it,
					ok ? "pass" : "FAIL", u, u < 0 ? 0 : g - u, rate_at(t1),
					nb ? 100 * nin / nb : 0, nb ? rs / nb : 0, mode, why == "" ? "-" : why
			}
		}' "$RUN/stamps.$j".*
	done
}

# ---- the whole benchmark --------------------------------------------------------------------

summary() {
	{
		echo "# ctl_shapes: $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
		echo "phases of ${PHASE_S} s, (A, B) targets: ${PHASES[*]}; epsilon $EPS; pass = within +-$TOL"
		echo "points of the target from <= 30 s after the change to the phase end (>= 60 s)"
		for shape in $SHAPES; do
			local rmax
			rmax=$(awk -F"\t" -v s="$shape" '$1 == s { print $2 }' "$OUT/rmax.tsv")
			[ -n "$rmax" ] || continue
			echo
			echo "## $shape (R_max $rmax it/s; judged over windows of $(judge_window "$rmax") s)"
			echo
			if [ -s "$OUT/feasible.tsv" ]; then
				echo "Pairs at the proportional split of the 90 % cap, fixed reservations, no controller"
				echo "(rates in % of R_max; reachable: yes / no / ? as in reachable()):"
				echo
				echo "| targets (A, B) | period ms | U A / B % | rate A / B % | windows in band at a steady mean on target, A / B |"
				echo "|---|---|---|---|---|"
				awk -F'\t' -v s="$shape" -v c="$FEAS_CAP" '$1 == s { printf "| %s, %s | %s | %.1f / %.1f | %.1f / %.1f | %s / %s %% |\n", $2, $3, $4, c * $2 / ($2 + $3), c * $3 / ($2 + $3), $5, $6, $7 == "" ? "?" : $7, $8 == "" ? "?" : $8 }' "$OUT/feasible.tsv"
				echo
			fi
			echo "| algorithm | job | phase | target % | pair reachable | settle s | evaluations | iterations | result | U held % | CPU freed (target - U) | mean rate % from 30 s | windows in band from 30 s | state shown from 30 s (reason) |"
			echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
			local k reach=()
			for k in "${!PHASES[@]}"; do
				# shellcheck disable=SC2086 # "TA TB"
				reach[k]=$(reachable "$shape" ${PHASES[k]})
			done
			awk -F'\t' -v s="$shape" -v reach="${reach[*]}" 'BEGIN { split(reach, rc, " ") }
				$1 == s { printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.1f | %s %% | %s |\n", $2, $3, $4, $5, rc[$4 + 1], $6, $7, $8, $9, $10 < 0 ? "-" : sprintf("%.1f", $10), $10 < 0 ? "-" : sprintf("%+.1f", $11), $14 == "" ? $12 : $14, $13 == "" ? "?" : $13, $15 == "" ? "-" : $15 ($16 == "" || $16 == "-" ? "" : " (" $16 ")") }' "$OUT/results.tsv"
			echo
			awk -F'\t' -v s="$shape" -v reach="${reach[*]}" 'BEGIN { split(reach, rc, " ") }
				$1 == s { n[$2]++; if ($9 == "pass") p[$2]++; if (rc[$4 + 1] != "no") { m[$2]++; if ($9 == "pass") q[$2]++ } }
				END { for (a in n) printf "%s: %d of %d phases passed; of those whose pair is not shown unreachable: %d of %d\n", a, p[a], n[a], q[a], m[a] }' "$OUT/results.tsv" | sort
		done
	} >"$OUT/summary.md"
}

if [ "${1:-}" = --reanalyse ]; then # OUTDIR: judge the runs kept in OUTDIR again
	for RUN in "$OUT"/*-*/; do
		RUN=${RUN%/}
		name=${RUN##*/}
		shape=${name%%-*}
		algo=${name#*-}
		rmax=$(awk -F'\t' -v s="$shape" '$1 == s { print $2 }' "$OUT/rmax.tsv")
		[ -n "$rmax" ] && [ -s "$RUN/phases.tsv" ] || continue
		analyse "$shape" "$algo" "$rmax"
	done >"$OUT/results.tsv.new"
	mv "$OUT/results.tsv.new" "$OUT/results.tsv"
	summary
	cat "$OUT/summary.md"
	exit 0
fi
if [ "${1:-}" = --rmax ]; then # internal: SHAPE STAMPS_PREFIX, one locked full-speed run
	rt_lock "$LOCK_WAIT"
	[ "$2" = comm ] && read -r COMM_COMPUTE COMM_MSG <"$OUT_ONE/comm.fixed"
	F7_PIDS=()
	CHRT="chrt -f 10" shape_start_bare "$2" 6 "$3"
	for p in "${F7_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	exit 0
fi
if [ "${1:-}" = --feasible ]; then # internal: SHAPE RMAX, the fixed-reservation probes
	[ "$2" = comm ] && read -r COMM_COMPUTE COMM_MSG <"$OUT_ONE/comm.fixed"
	feasible_run "$2" "$3"
	exit 0
fi
if [ "${1:-}" = --one ]; then # internal: one locked run in its own process
	shift
	[ "$1" = comm ] && read -r COMM_COMPUTE COMM_MSG <"$OUT_ONE/comm.fixed"
	one_run "$@"
	exit 0
fi

[ "$(id -u)" = 0 ] || f7_die "needs root (vsched uses SCHED_FIFO)"
: >"$OUT/results.tsv"
: >"$OUT/rmax.tsv"
: >"$OUT/feasible.tsv"
# One calibration of the compute loop for every process of every run, so that R_max and the
# controlled runs do the same work per iteration (apps/spin.c: a calibration made under load
# or steal time differs): measured once here on the quiet machine, unless given.
APP_SPIN_NS_PER_LOOP=${APP_SPIN_NS_PER_LOOP:-$("$BIN/iowait" --calibrate)}
export APP_SPIN_NS_PER_LOOP
printf '%s\n' "$APP_SPIN_NS_PER_LOOP" >"$OUT/spin_ns_per_loop"
f7_log "compute loop: $APP_SPIN_NS_PER_LOOP CPU ns per step, every process (APP_SPIN_NS_PER_LOOP)"
for shape in $SHAPES; do
	if [ "$shape" = comm ]; then
		f7_bsp_calibrate 1:5 100ms >"$OUT/comm.fixed"
		read -r COMM_COMPUTE COMM_MSG <"$OUT/comm.fixed"
	fi
	rmax=$(shape_rmax "$shape")
	printf '%s\t%s\n' "$shape" "$rmax" >>"$OUT/rmax.tsv"
	f7_log "$shape: R_max $rmax it/s"
	if [ "${FEASIBLE:-1}" != 0 ]; then
		OUT_ONE=$OUT timeout -k 10 $((LOCK_WAIT + 600)) bash "$0" --feasible "$shape" "$rmax" |
			sed "s/^/$shape\t/" >>"$OUT/feasible.tsv" || f7_log "$shape: feasibility probe failed"
		f7_log "$shape: pairs reachable at a split of the cap: $(for ph in "${PHASES[@]}"; do
			# shellcheck disable=SC2086 # "TA TB"
			printf '(%s) %s ' "$ph" "$(reachable "$shape" $ph)"
		done)"
	fi
	runs=$ALGOS
	[ -n "${EXT_LOAD:-}" ] && runs="$runs floating+load"
	[ -n "${COSCHED:-}" ] && runs="$runs floating+cosched"
	for algo in $runs; do
		f7_log "$shape / $algo"
		LOAD=$([ "${algo#*+}" = load ] && echo 1 || true) OUT_ONE=$OUT \
			timeout -k 10 $((${#PHASES[@]} * PHASE_S + LOCK_WAIT + 300)) \
			bash "$0" --one "$shape" "$algo" "$rmax" "$shape-$algo" || f7_log "$shape / $algo: run failed"
	done
done
summary
cat "$OUT/summary.md"
