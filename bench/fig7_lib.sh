# shellcheck shell=bash
# fig7_lib.sh — shared by bench/fig7_real.sh and bench/ext_load.sh (sourced, not run).
#
# One "run" = a one-node cluster on this machine, everything on ipc sockets in a fresh
# temporary directory (the controller's agent link on a loopback port the system picks):
#   vsched (both CPUs, utilization_cap 0.9), vsched-controller, vsched-agent (no provisional
#   reservation: ranks run unmanaged until the controller's first constraint), and one bsp
#   job of 2 ranks started through `vschedctl job run`.
# A sampler polls `vschedctl job show JOB --json` every SAMPLE_S seconds into samples.tsv:
#   wall_s evaluations changes current_pct period_ns slice_ns state reason target eps gen
# and the analysis works on the rows where the controller's evaluation counter moved
# (one evaluation = one control iteration = one round of reports from every rank).
# Every process started is recorded and only those are signalled (by pid) at the end.
# Needs: root (vsched uses SCHED_FIFO), jq, ss (iproute2), flock.

F7_SRC=${F7_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
F7_BUILD=${F7_BUILD:-build-fig7}
F7_BIN=${F7_BIN:-$F7_SRC/$F7_BUILD/bin}
SAMPLE_S=${SAMPLE_S:-0.1}
F7_PIDS=()

f7_log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
f7_die() {
	f7_log "FATAL: $*"
	exit 1
}
# skip is what tests/helpers/rt_lock.sh calls when the lock stays busy
skip() { f7_die "skip: $*"; }
# shellcheck source=tests/helpers/rt_lock.sh
source "$F7_SRC/tests/helpers/rt_lock.sh"

f7_cleanup() {
	local i
	for ((i = ${#F7_PIDS[@]} - 1; i >= 0; i--)); do
		kill -TERM "${F7_PIDS[i]}" 2>/dev/null || true
	done
	for ((i = ${#F7_PIDS[@]} - 1; i >= 0; i--)); do
		wait "${F7_PIDS[i]}" 2>/dev/null || true
	done
	F7_PIDS=()
}

# f7_wait SECONDS CMD...: retries CMD every 100 ms until it succeeds.
f7_wait() {
	local n=$(($1 * 10))
	shift
	until "$@" >/dev/null 2>&1; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.1
	done
}

# F7_JOBSET_EXTRA (e.g. "--initial-period 20ms --delta-period 200us") is appended to every
# `job set` (the scaled-period variant of the benchmark).
actl() {
	if [ "${1:-}" = job ] && [ "${2:-}" = set ] && [ -n "${F7_JOBSET_EXTRA:-}" ]; then
		# shellcheck disable=SC2086 # word splitting of the extra options is intended
		"$F7_BIN/vschedctl" -C "ipc://$RUN/admin.sock" "$@" $F7_JOBSET_EXTRA
	else
		"$F7_BIN/vschedctl" -C "ipc://$RUN/admin.sock" "$@"
	fi
}

# f7_bsp_calibrate RATIO ITER_TIME: runs bsp --ratio once (SCHED_FIFO, nothing else managed)
# and prints "COMPUTE_MS MSG_BYTES" as bsp chose them; later runs use these fixed values so
# that R_max and the controlled run do exactly the same work.
f7_bsp_calibrate() {
	local line
	line=$(timeout -k 5 60 "$F7_BIN/bsp" --local 2 --ratio "$1" --iter-time "$2" --iterations 5 \
		--timeout 20s -- chrt -f 1 2>&1 >/dev/null | grep -- '--ratio' | head -1) || true
	[ -n "$line" ] || f7_die "bsp --ratio $1 calibration printed nothing"
	echo "$line" >&2
	sed -n 's/.*compute \([0-9.]*\) ms, msg \([0-9]*\) bytes.*/\1 \2/p' <<<"$line"
}

# f7_rmax SECONDS BSP_ARGS...: the job's full speed, iterations/s of the slowest rank, both
# ranks SCHED_FIFO priority 1 (so the machine's other, CFS, load does not slow them — the
# controlled ranks also run SCHED_FIFO inside their slices). Bounded by --duration.
# Two runs; R_max = the better one (memory-bandwidth interference from the machine's other
# tenants only ever slows a run down). Both are logged.
f7_rmax_once() {
	local s=$1
	shift
	timeout -k 5 $((s + 30)) "$F7_BIN/bsp" --local 2 "$@" --duration "${s}s" --timeout 20s \
		-- chrt -f 1 | sed -n 's/.* rate=\([0-9.]*\) .*/\1/p' | sort -g | head -1
}
f7_rmax() {
	local a b
	a=$(f7_rmax_once "$@")
	b=$(f7_rmax_once "$@")
	f7_log "R_max runs: $a $b it/s"
	printf '%s\n%s\n' "$a" "$b" | sort -g | tail -1
}

# f7_selftest_over: vsched's start-up self-test has a result (done or failed).
f7_selftest_over() {
	"$F7_BIN/vschedctl" -s "ipc://$RUN/vsched.sock" status --json |
		jq -e '.selftest == "done" or .selftest == "failed"' >/dev/null
}

# f7_start_vsched: vsched on both CPUs (cap 90 %, `stop` parking) in $RUN, on
# ipc://$RUN/vsched.sock, once its self-test is over (at most 15 s).
f7_start_vsched() {
	cat >"$RUN/vsched.conf" <<EOF
utilization_cap = 0.9;
min_period = "1ms";
min_slice = "50us";
park = "stop";
endpoint = "ipc://$RUN/vsched.sock";
EOF
	"$F7_BIN/vsched" -f -c "$RUN/vsched.conf" >"$RUN/vsched.log" 2>&1 &
	F7_PIDS+=("$!")
	f7_wait 10 "$F7_BIN/vschedctl" -s "ipc://$RUN/vsched.sock" task list ||
		f7_die "vsched did not start"
	# vsched measures the finest period it serves at start (its self-test, reported by the
	# agent as the node's period floor); a node does that before jobs come, here jobs come
	# at once and would interrupt it (then the floor is only learnt from misses): wait
	f7_wait 15 f7_selftest_over || f7_log "vsched's self-test not over after 15 s"
	f7_log "vsched self-test: $("$F7_BIN/vschedctl" -s "ipc://$RUN/vsched.sock" status --json | jq -r '"\(.selftest), finest period \(.min_period_ns / 1e6) ms"')"
}

# f7_start_daemons: vsched + controller + agent in $RUN. Sets AGENT_PORT.
f7_start_daemons() {
	local i
	cat >"$RUN/controller.conf" <<EOF
heartbeat = "1s";
node_timeout = "3s";
ack_timeout = "2s";
round_timeout = "3s";
apply_latency = "5ms";
EOF
	# F7_CTL_EXTRA: more controller settings (libconfig lines), e.g. co-scheduling mode
	[ -z "${F7_CTL_EXTRA:-}" ] || printf '%s\n' "$F7_CTL_EXTRA" >>"$RUN/controller.conf"
	"$F7_BIN/vsched-controller" -f -v -c "$RUN/controller.conf" -A 'tcp://127.0.0.1:*' \
		-a "ipc://$RUN/admin.sock" -S "$RUN/controller.state" >"$RUN/controller.log" 2>&1 &
	F7_PIDS+=("$!")
	for i in $(seq 1 50); do
		grep -q 'agents: listening on tcp://' "$RUN/controller.log" && break
		sleep 0.1
	done
	AGENT_EP=$(sed -n 's/.*agents: listening on \(tcp:[^ ]*\).*/\1/p' "$RUN/controller.log" | head -1)
	[ -n "$AGENT_EP" ] || f7_die "controller did not start ($RUN/controller.log)"
	AGENT_PORT=${AGENT_EP##*:}
	# the controller would have a node of its own in a cluster; here it shares 2 CPUs with
	# other tenants' builds (load ~10): nice -10 keeps its reaction time near that
	renice -n -10 -p "${F7_PIDS[-1]}" >/dev/null 2>&1 || true
	f7_start_vsched
	cat >"$RUN/agent.conf" <<EOF
node_name = "f7node";
controller = "$AGENT_EP";
app_endpoint = "ipc://$RUN/agent.sock";
vsched_endpoint = "ipc://$RUN/vsched.sock";
heartbeat = "1s";
controller_timeout = "3s";
stats_interval = "2s";
sample_interval = "500ms";
EOF
	"$F7_BIN/vsched-agent" -f -v -c "$RUN/agent.conf" >"$RUN/agent.log" 2>&1 &
	AGENT_PID=$!
	F7_PIDS+=("$AGENT_PID")
	renice -n -10 -p "$AGENT_PID" >/dev/null 2>&1 || true
	f7_wait 10 sh -c "'$F7_BIN/vschedctl' -C 'ipc://$RUN/admin.sock' node list | grep -q f7node" ||
		f7_die "agent did not register"
}

# f7_start_job JOB DURATION_S BSP_ARGS...: 2 ranks reporting through the agent.
f7_start_job() {
	local job=$1 dur=$2
	shift 2
	"$F7_BIN/bsp" --local 2 "$@" --duration "${dur}s" --timeout 60s -- \
		"$F7_BIN/vschedctl" job run --job "$job" --rank '{rank}' --agent "ipc://$RUN/agent.sock" -- \
		>"$RUN/$job.out" 2>"$RUN/$job.err" &
	F7_PIDS+=("$!")
	f7_wait 20 sh -c "'$F7_BIN/vschedctl' -C 'ipc://$RUN/admin.sock' job list --json | jq -e '.[] | select(.name == \"$job\" and .ranks == 2)'" ||
		f7_die "job $job: 2 ranks not seen by the controller"
}

# f7_sampler JOB: background poller -> $RUN/samples.tsv
# (awk, not jq: a jq start costs more than the poll interval on this loaded 2-CPU VM)
f7_sample_once() {
	actl job show "$1" --json 2>/dev/null | awk '
	function val(k,   i, r) {
		i = index(head, "\"" k "\": ")
		if (!i) return "nan"
		r = substr(head, i + length(k) + 4)
		if (substr(r, 1, 1) == "\"") { r = substr(r, 2); return substr(r, 1, index(r, "\"") - 1) }
		match(r, /^[^,}]*/)
		r = substr(r, 1, RLENGTH)
		return r == "null" ? "nan" : r
	}
	{ head = head $0 }
	END {
		sub(/"rank_list".*/, "", head)
		printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", val("evaluations"), val("changes"),
			val("current_pct"), val("period_ns"), val("slice_ns"), val("state"), val("reason"),
			val("target_pct"), val("epsilon_pct"), val("gen")
	}'
}
f7_sampler() {
	local job=$1 line
	sleep 0.05
	while :; do
		line=$(f7_sample_once "$job") || true
		[ -n "$line" ] && printf '%s\t%s\n' "$(date +%s.%N)" "$line"
		sleep "$SAMPLE_S"
	done >>"$RUN/samples.tsv"
}
f7_start_sampler() {
	: >"$RUN/samples.tsv"
	# SCHED_FIFO 1: the poll must keep its pace beside the other engineers' builds (CFS load
	# ~10 on 2 CPUs); vsched raises the ranks to FIFO 98 in their slices, so it never delays
	# them. (Children inherit the policy: the policy is set before the first poll.)
	f7_sampler "$1" &
	SAMPLER_PID=$!
	F7_PIDS+=("$SAMPLER_PID")
	chrt -f -p 1 "$SAMPLER_PID" >/dev/null 2>&1 || true
}

# f7_mark NAME VALUE: an event line in $RUN/events.tsv (wall time first).
f7_mark() { printf '%s\t%s\t%s\n' "$(date +%s.%N)" "$1" "$2" >>"$RUN/events.tsv"; }

# f7_wire: "AGENT_TO_CTL_BYTES CTL_TO_AGENT_BYTES" over the agent's TCP connection to the
# controller (the agent's socket: bytes_acked = sent and acknowledged, bytes_received), as
# the kernel counts TCP payload (ZeroMQ framing included, TCP/IP headers not).
f7_wire() {
	ss -tinH state established "( dport = :$AGENT_PORT )" 2>/dev/null |
		awk '{ for (i = 1; i <= NF; i++) { if ($i ~ /^bytes_acked:/) { split($i, a, ":"); s += a[2] }
		       if ($i ~ /^bytes_received:/) { split($i, b, ":"); r += b[2] } } }
		     END { printf "%d %d\n", s, r }'
}

# f7_agent_rates: the agent's rates_sent counter (SIGUSR1 makes it log its counters line).
f7_agent_rates() {
	local n
	n=$(grep -c 'stats: procs=' "$RUN/agent.log" || true)
	kill -USR1 "$AGENT_PID" 2>/dev/null || true
	for _ in $(seq 1 20); do
		[ "$(grep -c 'stats: procs=' "$RUN/agent.log" || true)" -gt "$n" ] && break
		sleep 0.05
	done
	grep 'stats: procs=' "$RUN/agent.log" | tail -1 | sed -n 's/.* rates=\([0-9]*\) .*/\1/p'
}

# f7_phase_stats T0 T1 TARGET EPS OBS_FROM: analyses samples between wall times T0 and T1
# (target changed / settings set at T0). One TSV line:
#   evals missed first_in first_in_s resp_it resp_s changes last_change_it obs_evals
#   obs_inband_frac obs_mean obs_sd obs_changes period_ms slice_ms states_seen
# resp_it: 1-based index of the first evaluation after T0 within ±EPS of TARGET that is
# followed by HOLD (4) more evaluations all within the band ("reached and stays");
# obs_*: over evaluations after OBS_FROM (wall time).
f7_phase_stats() {
	awk -F'\t' -v t0="$1" -v t1="$2" -v tg="$3" -v eps="$4" -v of="$5" -v hold=4 '
	function abs(x) { return x < 0 ? -x : x }
	$1 < t0 { pe = $2; pc = $3; next }
	$1 > t1 { exit }
	{
		if (pe == "") { pe = $2; pc = $3 }
		if ($2 + 0 < pe + 0) { pe = 0 }          # settings reset the counters
		if ($3 + 0 < pc + 0) { pc = 0 }
		st[$7] = 1; per = $5; sl = $6
		if ($3 + 0 > pc + 0) { ch += $3 - pc; lastch = n + ($2 - pe); if ($1 >= of) och += $3 - pc }
		pc = $3
		d = $2 - pe
		if (d <= 0) next
		missed += d - 1
		n += d; pe = $2
		r = $4 + 0; ok = ($4 != "nan" && abs(r - tg) <= eps)
		it[n] = n; tt[n] = $1 - t0; inb[n] = ok; have[n] = 1
		if (ok && fi == "") { fi = n; fis = $1 - t0 }
		if ($1 >= of && $4 != "nan") { on++; if (ok) oin++; s += r; ss += r * r }
	}
	END {
		resp = ""; resps = ""
		for (k = 1; k <= n; k++) {
			if (!have[k] || !inb[k]) continue
			good = 1; seen = 0
			for (j = k + 1; j <= n && seen < hold; j++) { if (!have[j]) continue; seen++; if (!inb[j]) { good = 0; break } }
			if (good && seen == hold) { resp = k; resps = tt[k]; break }
		}
		m = on ? s / on : "nan"; sd = on > 1 ? sqrt((ss - on * m * m) / (on - 1)) : "nan"
		states = ""; for (x in st) states = states (states ? "," : "") x
		printf "%d\t%d\t%s\t%s\t%s\t%s\t%d\t%s\t%d\t%s\t%s\t%s\t%d\t%.3f\t%.3f\t%s\n",
			n, missed, (fi == "" ? "-" : fi), (fis == "" ? "-" : sprintf("%.1f", fis)),
			(resp == "" ? "-" : resp), (resps == "" ? "-" : sprintf("%.1f", resps)), ch,
			(lastch == "" ? "-" : lastch), on, (on ? sprintf("%.2f", oin / on) : "nan"),
			(on ? sprintf("%.2f", m) : "nan"), (on > 1 ? sprintf("%.2f", sd) : "nan"), och,
			per / 1e6, sl / 1e6, states
	}' "$RUN/samples.tsv"
}

f7_now() { date +%s.%N; }
