# apps_bsp_rt: bsp ranks under a vsched reservation run at the reserved fraction of their
# speed — the effect the whole system is built on (papers/004 Sect. 5.2, Fig. 2).
# Outcome checked: 2 ranks (one per CPU), compute-dominated (40 ms of CPU per iteration,
# 1 KiB messages), each started as `vschedctl run --period 20ms --slice 10ms -- vschedctl
# job run --job bsprt --rank R -- bsp ...`, run at 0.5 ± 0.1 of their full speed; both ranks
# were under vsched (task list) while they ran.
# Full speed is the rate on a dedicated CPU: 1 / (CPU time of an iteration's compute +
# wall time of its exchange), both taken from a run without reservation. The unreserved
# run's own rate is printed but not used: other tenants of a shared machine slow it down,
# while the reserved run is shielded from them by SCHED_FIFO.
source "$(dirname "$0")/lib.sh"
source "$VS_SRC/tests/helpers/rt_lock.sh"
need_root
BSP=$VS_BIN/bsp
[ -x "$BSP" ] || skip "bsp not built"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
field() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }
# --spin cpu: exactly 40 ms of CPU per iteration in both runs, whatever the other tenants of
# this machine do to the loop's speed (cache, SMT sibling)
ARGS=(--local 2 --duration 4s --compute 40ms --msg 1KiB --spin cpu)

rt_lock
start_vsched

# rate_of FILE: the slowest rank's iteration rate in a bsp output file.
rate_of() { sed -n 's/.* rate=\([0-9.]*\) .*/\1/p' "$1" | sort -g | head -1; }

# the reference run at nice -20: full speed means the CPU, not a share of it with other
# (non-real-time) tenants' builds; the reserved run is shielded from them by SCHED_FIFO
timeout 30 nice -n -20 "$BSP" "${ARGS[@]}" >"$TMP/free.out" 2>"$TMP/free.err" || fail "bsp alone: exit $? $(cat "$TMP/free.err")"
free=$(rate_of "$TMP/free.out")
# full speed from the slowest rank's per-iteration CPU and exchange time
full=$(awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	r = 1000 / (v["compute_cpu_ms"] + v["comm_ms"]); if (!n++ || r < m) m = r }
	END { printf "%.3f", m }' "$TMP/free.out")

timeout 30 "$BSP" "${ARGS[@]}" -- "$VS_BIN/vschedctl" -s "$ENDPOINT" run --period 20ms --slice 10ms -- \
	"$VS_BIN/vschedctl" job run --job bsprt --rank '{rank}' -- >"$TMP/rt.out" 2>"$TMP/rt.err" &
RT=$!
PIDS+=("$RT")
sleep 2
ctl task list --json >"$TMP/tasks.json" || true
set +e
wait "$RT"
rc=$?
set -e
[ $rc = 0 ] || fail "bsp under vsched: exit $rc $(cat "$TMP/rt.err")"
n=$(grep -c '"period_ns": 20000000' "$TMP/tasks.json" || true)
[ "$n" = 2 ] || fail "expected 2 tasks with period 20ms while bsp ran: $(cat "$TMP/tasks.json")"
resv=$(rate_of "$TMP/rt.out")
ratio=$(awk -v a="$resv" -v b="$full" 'BEGIN { printf "%.3f", a / b }')
echo "free: $(head -1 "$TMP/free.out")"
echo "reserved: $(head -1 "$TMP/rt.out")"
within "$ratio" 0.4 0.6 || fail "rate $resv it/s under 10ms/20ms vs full speed $full it/s (measured unreserved: $free): ratio $ratio, expected 0.5 ± 0.1"
pass "rate $resv it/s under 10ms/20ms vs full speed $full it/s (measured unreserved: $free): ratio $ratio (expected 0.5 ± 0.1)"
