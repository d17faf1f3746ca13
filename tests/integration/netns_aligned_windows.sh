#!/usr/bin/env bash
# netns_aligned_windows: multi-node end to end, co-scheduling with aligned frames — "a job's
# windows start within a few milliseconds of each other on both nodes". Two namespace-nodes
# (node1: the first CPU, node2: the second; tests/helpers/netns_lib.sh), the controller in
# its own namespace with `coschedule = true; align = true` (frame 100 ms, slot 5 ms;
# granularity held fixed). One
# job `probe` with one rank per node: tests/helpers/runlog, a CPU-bound rank started with
# `vschedctl job run` that reports progress through libapprate (1 unit per ms it ran) and
# records its own run intervals with CLOCK_REALTIME. Target 40 %.
#  (1) both nodes' vsched hold the probe's rank with the same windows (phases, lengths) and
#      the same period, U = 40 % (task list --json);
#  (2) measured by the ranks themselves: for every window start on node1 (a run interval
#      after >= 3 ms off the CPU), the nearest window start on node2: median |delta| <= 2 ms,
#      p95 <= 5 ms, with at least 3 s worth of window starts;
#  (3) control, that (2) can fail: node2's epoch moved (vschedctl -s NODE2 epoch) by a
#      shift chosen from the windows so that no shifted start comes near an unshifted one
#      (distance D >= 5 ms): the same measurement then gives median |delta| >= D/2;
#      node2's agent re-asserts the cluster epoch every 5 s: the moved epoch is put back;
#  (4) after that: aligned again (as in (2));
#  (5) no sanitizer report, a clean exit from every daemon, namespaces removed.
# Note: one machine, one clock (docs/multinode.md, Limits): this checks the alignment logic
# (epoch relay, identical plans, vsched anchoring), not clock synchronisation.
# Skips (77) when namespaces cannot be made here.
source "$(dirname "$0")/lib.sh"
source "$VS_SRC/tests/helpers/netns_test_lib.sh"

[ -x "$VS_BIN/runlog" ] || skip "runlog helper not built"
APPRATE_SO=$(ls "$VS_BIN"/../libapprate/libapprate.so.0 2>/dev/null) ||
	skip "libapprate.so not found next to $VS_BIN"
netns_test_begin vs-t
netns_delete_leftovers
nfail() { fail "$*"; }

MS=1000000
TARGET=40
# The windows are held while they are measured: the probe runs the `linear` algorithm
# (U = target: the floating default would move its slot count with the noise of its rate
# on a busy machine; CI saw 40 -> 45 % mid-run), control periods only in [24 ms, 25 ms] and
# a band of 20 points (the probe's rate is its share, so it stays in band and the control
# loop does not search periods, which would move its windows between window-sets per
# frame). The plan then keeps the windows it started with (1 or 4 window-sets per frame).
NETNS_CTL_EXTRA='coschedule = true;
frame = "100ms";
slot = "5ms";
align = true;
initial_period = "25ms";
min_period = "24ms";
epsilon = 20;'
MIN_GAP_US=3000 # a window start: the probe gets the CPU after >= 3 ms without it (slot 5 ms)

rt_lock 90
T_START=$SECONDS
netns_up 2 || nfail "netns_up 2 failed"
npass "2 namespace-nodes up: node1 CPU $(netns_get node1_cpus), node2 CPU $(netns_get node2_cpus); controller: coschedule, frame 100 ms, slot 5 ms, align"

# The cluster epoch each node's vsched got from the controller (through its agent).
node_epoch() { sed -n 's/.*epoch \([0-9]*\) ns given to vsched.*/\1/p' "$NETNS_STATE/node$1/agent.log" | tail -1; }
have_epochs() { [ -n "$(node_epoch 1)" ] && [ -n "$(node_epoch 2)" ]; }
netns_wait_until 5 have_epochs ||
	nfail "the nodes' vsched did not get the cluster epoch: $(grep -h epoch "$NETNS_STATE"/node*/vsched.log)"
E1=$(node_epoch 1)
E2=$(node_epoch 2)
[ "$E1" = "$E2" ] || nfail "the nodes got different epochs: node1 $E1, node2 $E2"
EPOCH=$E1
npass "both nodes' vsched anchored at the cluster epoch $EPOCH ns"

netns_run_prog probe 1 \
	"$VS_BIN/runlog" -l "$APPRATE_SO" -d 100 -o "$NETNS_STATE/jobs/probe/{node}.ivl" ||
	nfail "the probe job did not start"
netns_wait_until 15 netns_job_is probe ranks 2 || nfail "the probe's 2 ranks not seen by the controller"
netns_wait_until 5 netns_job_is probe nodes 2 || nfail "the probe not seen on 2 nodes"
# 1 unit per ms of CPU: 1000 units/s at a full CPU
netns_actl job set probe --rmax 1000 --algorithm linear >/dev/null || nfail "job set probe --rmax refused"
netns_actl rate probe "$TARGET" >/dev/null || nfail "rate probe $TARGET refused"
declare -A PID
while read -r _ node pid; do PID[$node]=$pid; done < <(netns_job_pids probe)

# win I: the probe's windows on node I, "PERIOD PHASE+DEADLINE/SLICE ..." (task list --json)
win() {
	netns_vctl "$1" task list --json |
		jq -r ".[] | select(.pid == ${PID[node$1]}) | \"\(.period_ns) \" + ([.windows[] | \"\(.phase_ns)+\(.deadline_ns)/\(.slice_ns)\"] | join(\" \"))"
}
# Windows: until both nodes hold the same windows, unchanged for 2 s (the plan settles
# after the ranks' first reports; the control loop may change the granularity).
same=0 prev='' W1='' W2=''
for ((t = 0; t < 80; t++)); do
	sleep 0.25
	W1=$(win 1)
	W2=$(win 2)
	if [ -n "$W1" ] && [ "$W1" = "$W2" ] && [ "$W1" = "$prev" ] && [[ $W1 == *+* ]]; then
		same=$((same + 1))
	else
		same=0
	fi
	prev=$W1
	[ $same -lt 8 ] || break
done
[ $same -ge 8 ] || nfail "the nodes' windows for the probe did not settle to the same set in 20 s: node1 '$W1', node2 '$W2'"
read -r PERIOD WINS <<<"$W1"
# U = the slots the plan gives per sub-frame: the target rounded up to the slot grid
# (docs/coschedule.md: at K window-sets per frame, ceil(U * slots / K) slots of each).
U=()
for i in 1 2; do
	U[i]=$(netns_vctl "$i" task list --json | jq -r ".[] | select(.pid == ${PID[node$i]}) | .util_pct")
	within "${U[i]}" $((TARGET - 1)) 90 || nfail "node$i: the probe's U is ${U[i]} %, below its target $TARGET %"
done
[ "${U[1]}" = "${U[2]}" ] || nfail "the probe's U differs: node1 ${U[1]} %, node2 ${U[2]} %"
npass "(1) both nodes hold the probe's windows, identical: period $((PERIOD / 1000)) us, windows (phase+deadline/slice ns) $WINS; U ${U[1]} % (target $TARGET %, rounded up to the slot grid)"

# measure FROM TO: the window starts of the two records between FROM and TO (CLOCK_REALTIME
# ns), node2's against node1's. The records are written when the probes end: cut later.
cut_here() { date +%s%N; }

# Phase A: aligned. 6 s.
A0=$(cut_here)
sleep 6
A1=$(cut_here)
[ "$(win 1)" = "$W1" ] && [ "$(win 2)" = "$W1" ] || nfail "the probe's windows changed during phase A: node1 '$(win 1)', node2 '$(win 2)'"

# Phase B: node2's epoch shifted by S: S is chosen (among a few fractions of the period)
# to keep every shifted window start farthest from every unshifted one; D = that distance.
read -r SHIFT D < <(for f in 0.5 0.25 0.75 0.375 0.625 0.125 0.875 0.3 0.7; do
	awk -v P="$PERIOD" -v f="$f" -v w="$WINS" 'BEGIN {
		n = split(w, a, " "); s = int(P * f); d = P
		for (i = 1; i <= n; i++) for (j = 1; j <= n; j++) {
			split(a[i], x, "+"); split(a[j], y, "+")
			x1 = x[1] + 0; y1 = (y[1] + s) % P; e = x1 - y1; if (e < 0) e = -e
			if (P - e < e) e = P - e
			if (e < d) d = e
		}
		print s, d }'
done | sort -k2,2nr | head -1)
[ "$D" -ge $((5 * MS)) ] || nfail "no epoch shift keeps the window starts 5 ms apart (best: $SHIFT ns, $D ns)"
# node2's agent gives vsched the cluster epoch again every 5 s (docs/vsched-agent.md), so a
# moved epoch holds until the next re-assertion: move it, wait for the agent to put it back
# (that is checked too), move it again at once and measure the 2.5 s that follow, before
# the next re-assertion; then measure after that one (phase C, aligned again).
# What node2's vsched holds is read from its log: one 'epoch set (monotonic NS ns)' line per
# change of its epoch, written before it answers (a set to the epoch it holds is not logged:
# vsched/sched.c, sched_set_epoch). Lines are told apart by their value, not counted: the
# agent's re-assertion may come at any moment, also between the hand-set and a read of the
# log that follows it (then no later re-assertion changes anything, nor logs a line).
epochs() { sed -n 's/.*epoch set (monotonic \([0-9]*\) ns).*/\1/p' "$NETNS_STATE/node2/vsched.log"; }
# set_line N VALUE: the number of the last line after line N of epochs within 1 ms of VALUE
# (the mapping to CLOCK_MONOTONIC is exact to a few us; SHIFT >= D >= 5 ms), else nothing.
set_line() {
	epochs | awk -v n="$1" -v v="$2" 'NR > n { d = $1 - v; if (d < 0) d = -d; if (d < 1e6) k = NR }
		END { if (k) print k }'
}
# The cluster epoch as node2's vsched holds it: its last set, by the agent (aligned in (2)).
EM=$(epochs | tail -1)
[ -n "$EM" ] || nfail "node2's vsched logged no epoch set: $(grep epoch "$NETNS_STATE/node2/vsched.log")"
# move_epoch: node2's epoch moved by SHIFT by hand; MOVED = the number of its line in epochs.
move_epoch() {
	local n
	n=$(epochs | wc -l)
	netns_vctl 2 epoch $((EPOCH + SHIFT)) >/dev/null || nfail "vschedctl -s node2 epoch refused"
	MOVED=$(set_line "$n" $((EM + SHIFT)))
	[ -n "$MOVED" ] ||
		nfail "node2's vsched did not log the moved epoch $((EM + SHIFT)) ns: $(epochs | tail -3 | tr '\n' ' ')"
}
# put_back: since the last hand-set, node2's vsched got the cluster epoch again.
put_back() { [ -n "$(set_line "$MOVED" "$EM")" ]; }
move_epoch
T0=$(date +%s%N)
# within 12 s: a re-assertion is due within 5 s; the bound leaves room for one that vsched
# does not answer in time (the agent gives the epoch again when vsched next answers)
netns_wait_until 12 put_back ||
	nfail "node2's agent did not give vsched the cluster epoch back within 12 s of a moved epoch (vsched's last epochs: $(epochs | tail -4 | tr '\n' ' '); cluster $EM, moved $((EM + SHIFT)))"
npass "node2's epoch moved by hand is put back by its agent after $((($(date +%s%N) - T0) / MS)) ms"
move_epoch
sleep 0.3
B0=$(cut_here)
sleep 2.5
B1=$(cut_here)
! put_back || nfail "node2's epoch was put back during the shifted phase (re-assertion sooner than 5 s)"

# Phase C: node2's agent puts the cluster epoch back.
netns_wait_until 12 put_back || nfail "node2's agent did not give vsched the cluster epoch back within 12 s"
sleep 0.3
C0=$(cut_here)
sleep 3
C1=$(cut_here)
[ "$(win 1)" = "$W1" ] && [ "$(win 2)" = "$W1" ] || nfail "the probe's windows changed during the run: node1 '$(win 1)', node2 '$(win 2)'"

netns_stop 'rank:probe'
for i in 1 2; do
	[ -s "$NETNS_STATE/jobs/probe/node$i.ivl" ] ||
		nfail "node$i's probe wrote no record: $(cat "$NETNS_STATE"/jobs/probe/rank-*.out)"
done
cat "$NETNS_STATE"/jobs/probe/rank-*.out

# cmp FROM TO: the comparison line for the records between FROM and TO.
cmp_part() {
	local i
	for i in 1 2; do
		awk -v a="$1" -v b="$2" '$1 >= a && $2 <= b' "$NETNS_STATE/jobs/probe/node$i.ivl" >"$TMP/n$i.part"
	done
	"$VS_BIN/runlog" -c "$TMP/n1.part" "$TMP/n2.part" -G $MIN_GAP_US
}
get() { sed -n "s/.*\b$2=\(-\?[0-9.]*\).*/\1/p" <<<"$1"; }
NWIN=$(wc -w <<<"$WINS")
# check_aligned WHAT LINE SECONDS
check_aligned() {
	local what=$1 r=$2 secs=$3 n min
	n=$(get "$r" pairs)
	# at least 40 % of the windows (a window split at the period's end is one start) in the phase (period, windows per period)
	min=$(awk -v s="$secs" -v P="$PERIOD" -v k="$NWIN" 'BEGIN { printf "%d", 0.4 * s * 1e9 / P * k }')
	[ "$n" -ge "$min" ] || nfail "$what: only $n window starts compared (expected >= $min): $r"
	[ "$(get "$r" med_abs_us)" -le 2000 ] || nfail "$what: median |delta| $(get "$r" med_abs_us) us > 2 ms: $r"
	[ "$(get "$r" p95_abs_us)" -le 5000 ] || nfail "$what: p95 |delta| $(get "$r" p95_abs_us) us > 5 ms: $r"
	npass "$what: node2's window starts within $(get "$r" med_abs_us) us (median), $(get "$r" p95_abs_us) us (p95), $(get "$r" max_abs_us) us (max) of node1's, $n windows"
}
RA=$(cmp_part "$A0" "$A1")
echo "phase A (aligned):          $RA"
RB=$(cmp_part "$B0" "$B1")
echo "phase B (node2 +$((SHIFT / 1000)) us): $RB"
RC=$(cmp_part "$C0" "$C1")
echo "phase C (node2 put back):   $RC"
check_aligned "(2) aligned" "$RA" 6
nb=$(get "$RB" pairs)
[ "$nb" -ge "$(awk -v P="$PERIOD" -v k="$NWIN" 'BEGIN { printf "%d", 0.4 * 2.5e9 / P * k }')" ] || nfail "(3) shifted: only $nb window starts compared: $RB"
[ "$(get "$RB" med_abs_us)" -ge $((D / 2000)) ] ||
	nfail "(3) node2's epoch shifted by $((SHIFT / 1000)) us (starts >= $((D / 1000)) us apart), but the measured median |delta| is only $(get "$RB" med_abs_us) us: $RB"
npass "(3) control: node2's epoch shifted by $((SHIFT / 1000)) us is detected: median |delta| $(get "$RB" med_abs_us) us (expected ~$((D / 1000)) us, bound >= $((D / 2000)) us)"
check_aligned "(4) node2 back at the cluster epoch (put back by its agent)" "$RC" 3

# Stop the daemons: each must exit 0 with no sanitizer report in its log.
netns_end_clean || nfail "$NETNS_END_WHY"
npass "(5) every daemon stopped cleanly (exit 0, no sanitizer report); namespaces and veth pairs removed"
