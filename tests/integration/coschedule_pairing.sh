# coschedule_pairing: the controller's co-scheduling mode on this 2-CPU machine (issue 5,
# docs/coschedule.md). Controller (coschedule on, frame 100 ms of 5 ms slots, pairing
# "fitness"), one node (vsched on both CPUs + agent), four jobs at 45 %: two membench at a
# stride of one cache line (`--stride max`, membench-max: every access a new line, the
# memory-bound case of paper 000) and two compute-bound bsp ranks (no messages).
# Outcomes checked:
#  - the membench jobs are classed devil, the bsp jobs are not (memory bandwidth from the
#    agent, averaged over bw_window);
#  - every job is planned with its share, ceil(0.45 * 20) = 9 slots = 45 ms per frame, and
#    its windows are committed on the node;
#  - in the controller's slot table no slot runs the two membench jobs together, nor the
#    two bsp jobs, and at least 16 of the 20 slots pair a membench with a bsp;
#  - what vsched actually holds agrees: over every two tasks on different CPUs whose
#    windows overlap, each pairs a membench task with a bsp task; and each task holds
#    45 ms of windows per 100 ms.
# The jobs run up to 240 s and are ended by the clean-up: the four reservations hold 90 % of
# both CPUs, so vschedctl, jq and the ASan daemons share the rest and a check can come late
# (CI under ASan: the 90 s jobs had ended before the task list was read).
source "$(dirname "$0")/lib.sh"
source "$VS_SRC/tests/helpers/ctld_lib.sh"
source "$VS_SRC/tests/helpers/cosched_lib.sh"
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
if grep -q "applies one reservation only" "$VS_SRC/agent/constraint.c" 2>/dev/null; then
	skip "this agent applies one window per job only"
fi

# on failure: the controller's plans, classes and refusals first
cs_fail() {
	echo "--- ctld.log (plans, classes, refusals)" >&2
	grep -E "plan|class|granularity|refused|registered|down|slots it needs" "$TMP/ctld.log" |
		tail -40 >&2 || true
	ctld_fail "$@"
}

ctld_test_begin
cosched_config fitness
start_ctld
cosched_start_node n1 "0, 1"
EP="ipc://$TMP/agent-n1.sock"

for j in mA mB; do
	"$VS_BIN/vschedctl" job run --job "$j" --agent "$EP" -- \
		"$VS_BIN/membench" --stride max --size 64MiB --duration 240s >"$TMP/$j.out" 2>&1 &
	PIDS+=("$!")
done
for j in cA cB; do
	start_bsp "$j" "$EP" --local 1 --msg 0 --compute 5ms --duration 240s
done
for j in mA mB cA cB; do
	wait_until 15 job_is "$j" ranks 1 || cs_fail "job $j: its rank not seen by the controller"
done

# classes from the averaged memory bandwidth
classed() { job_is mA class devil && job_is mB class devil; }
wait_until 20 classed || cs_fail "membench jobs not classed devil: $(actl job list --json | jq -c '[.[] | {name, class, mem_bps}]')"
for j in cA cB; do
	c=$(job_field "$j" class)
	[ "$c" != devil ] || cs_fail "compute-bound job $j classed devil"
done
echo "classes: mA $(job_field mA class), mB $(job_field mB class), cA $(job_field cA class), cB $(job_field cB class)"

wait_until 20 cosched_settled mA mB cA cB ||
	cs_fail "plan not committed: $(for j in mA mB cA cB; do actl job show "$j" --json | jq -c '{name, state, reason, pending, slice_ns, coschedule: {planned: .coschedule.planned, need: .coschedule.need, got: .coschedule.got}}'; done)"
sleep 1 # the agents' task statistics (every 500 ms) show the committed windows

# the controller's slot table
declare -A kind=([mA]=m [mB]=m [cA]=c [cB]=c)
mixed=0
while read -r slot a b extra; do
	[ -z "$extra" ] || cs_fail "slot $slot runs 3 jobs on 2 CPUs: $a $b $extra"
	[ -n "$b" ] || continue
	[ "${kind[$a]}" != "${kind[$b]}" ] || cs_fail "slot $slot pairs $a with $b"
	mixed=$((mixed + 1))
done < <(for j in mA mB; do slot_table "$j"; done | sort -un)
[ "$mixed" -ge 16 ] || cs_fail "only $mixed slots pair a membench job with a bsp job"
pass "controller: $mixed of 20 slots pair a membench job with a bsp job, none pairs alike"
actl job show mA | sed 's/^/  /'

# what vsched holds: every overlapping pair on different CPUs is a mixed pair
: >"$TMP/pidmap"
for j in mA mB cA cB; do
	for p in $(job_rank_pids "$j"); do echo "$p $j" >>"$TMP/pidmap"; done
done
n=0
while read -r a b; do
	[ "${kind[$a]}" != "${kind[$b]}" ] || cs_fail "vsched runs $a and $b at the same time: $(vctl n1 task list)"
	n=$((n + 1))
done < <(vsched_corunners n1 "$TMP/pidmap")
[ "$n" -ge 2 ] || cs_fail "vsched: only $n overlapping pairs of tasks: $(vctl n1 task list)"
while read -r p j; do
	s=$(vctl n1 task list --json | jq -r ".[] | select(.pid == $p) | [.windows[].slice_ns] | add")
	[ "$s" = 45000000 ] || cs_fail "vsched: $j (pid $p) holds $s ns of windows per frame, not 45 ms"
done <"$TMP/pidmap"
pass "vsched: $n overlapping pairs of tasks on different CPUs, each a membench with a bsp"
vctl n1 task list | sed 's/^/  /'
ctld_check_clean
pass "coschedule pairing"
