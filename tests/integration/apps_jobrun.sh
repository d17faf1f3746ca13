# apps_jobrun: `vschedctl job run` starts a command as a rank of a job.
# Outcomes checked:
#  - the command sees VSCHED_JOB, VSCHED_RANK, VSCHED_AGENT and, with --rate, VSCHED_TARGET;
#  - without --rank the rank comes from $VSCHED_RANK, else a launcher's rank variable
#    (SLURM_PROCID, ...), else 0; an inherited VSCHED_AGENT is kept without --agent;
#  - the command runs in vschedctl's own process (same pid: what a `vschedctl run` around it
#    reserved is what registers), so its exit status and signals are vschedctl's: exit 7
#    gives 7, SIGTERM to the pid ends the command (143), a missing command gives 127;
#  - every bad argument: one line on stderr, exit 2, the command never runs.
source "$(dirname "$0")/lib.sh"
VC=$VS_BIN/vschedctl
[ -x "$VC" ] || skip "vschedctl not built"

out=$("$VC" job run --job lammps --rank 3 --rate 40 --agent "ipc://$TMP/agent.sock" -- env) || fail "job run env: exit $?"
for want in VSCHED_JOB=lammps VSCHED_RANK=3 "VSCHED_AGENT=ipc://$TMP/agent.sock" VSCHED_TARGET=40; do
	grep -qx "$want" <<<"$out" || fail "missing $want in: $(grep VSCHED <<<"$out")"
done
out=$("$VC" job run --job j --rate 12.5% -- env)
grep -qx VSCHED_TARGET=12.5 <<<"$out" || fail "--rate 12.5%: $(grep VSCHED <<<"$out")"
pass "environment set: $(grep VSCHED_ <<<"$("$VC" job run --job lammps --rank 3 --rate 40 -- env)" | sort | tr '\n' ' ')"

rank_with() { env -u VSCHED_RANK -u SLURM_PROCID -u PMIX_RANK -u PMI_RANK -u OMPI_COMM_WORLD_RANK "$@" \
	"$VC" job run --job j -- env | sed -n 's/^VSCHED_RANK=//p'; }
[ "$(rank_with)" = 0 ] || fail "default rank $(rank_with)"
[ "$(rank_with SLURM_PROCID=5)" = 5 ] || fail "SLURM_PROCID=5 gave rank $(rank_with SLURM_PROCID=5)"
[ "$(rank_with OMPI_COMM_WORLD_RANK=2)" = 2 ] || fail "OMPI rank"
[ "$(rank_with VSCHED_RANK=4 SLURM_PROCID=5)" = 4 ] || fail "VSCHED_RANK does not win"
agent=$(VSCHED_AGENT=tcp://127.0.0.1:5555 "$VC" job run --job j -- env | sed -n 's/^VSCHED_AGENT=//p')
[ "$agent" = tcp://127.0.0.1:5555 ] || fail "inherited VSCHED_AGENT lost: '$agent'"
target=$(env -u VSCHED_TARGET "$VC" job run --job j -- env | grep -c '^VSCHED_TARGET=' || true)
[ "$target" = 0 ] || fail "VSCHED_TARGET set without --rate"
pass "rank from VSCHED_RANK / SLURM_PROCID / OMPI_COMM_WORLD_RANK / 0; inherited agent kept"

set +e
"$VC" job run --job j -- sh -c 'exit 7'
rc=$?
set -e
[ $rc = 7 ] || fail "exit status $rc, expected 7"
# shellcheck disable=SC2016
"$VC" job run --job j -- sh -c 'echo $$; exec sleep 20' >"$TMP/pid.out" &
P=$!
PIDS+=("$P")
for _ in $(seq 1 40); do [ -s "$TMP/pid.out" ] && break; sleep 0.05; done
[ "$(cat "$TMP/pid.out")" = "$P" ] || fail "command pid $(cat "$TMP/pid.out") != vschedctl's $P"
t0=$(date +%s%N)
set +e
stop_wait "$P" 10
rc=$?
set -e
t1=$(date +%s%N)
[ $rc = 143 ] || fail "SIGTERM: status $rc, expected 143"
[ $(((t1 - t0) / 1000000)) -lt 1000 ] || fail "SIGTERM took $(((t1 - t0) / 1000000)) ms"
set +e
err=$("$VC" job run --job j -- /nonexistent/cmd 2>&1)
rc=$?
set -e
[ $rc = 127 ] && grep -q "/nonexistent/cmd: No such file" <<<"$err" || fail "missing command: exit $rc '$err'"
pass "exit 7 passed through; same pid, SIGTERM gives 143; missing command 127 ('$err')"

while IFS='|' read -r args want; do
	rm -f "$TMP/ran"
	set +e
	# shellcheck disable=SC2086
	err=$("$VC" job $args -- touch "$TMP/ran" 2>&1)
	rc=$?
	set -e
	[ $rc = 2 ] && [ "$(wc -l <<<"$err")" = 1 ] && grep -q -- "$want" <<<"$err" ||
		fail "job $args: exit $rc '$err' (expected exit 2 mentioning '$want')"
	[ ! -e "$TMP/ran" ] || fail "job $args: the command ran"
done <<EOF2
run|--job NAME is required
run --job $(printf 'x%.0s' $(seq 64))|--job
run --job a/b --rank x|--rank
run --job a --rank 2147483648|--rank
run --job a --rank -1|--rank
run --job a --rate 0|--rate
run --job a --rate 100.5|--rate
run --job a --rate nan|--rate
run --job a --rate -5|--rate
run --job a --agent foo|--agent
run --job a --agent ipc://|--agent
run --job a --agent tcp://host|--agent
run --job a --bogus|unknown option
frob|unknown subcommand
EOF2
set +e
err=$("$VC" job run --job a 2>&1)
rc=$?
err2=$(SLURM_PROCID=x "$VC" job run --job a -- true 2>&1)
rc2=$?
set -e
[ $rc = 2 ] && grep -q "missing command" <<<"$err" || fail "no command: exit $rc '$err'"
[ $rc2 = 2 ] && grep -q "SLURM_PROCID" <<<"$err2" || fail "bad SLURM_PROCID: exit $rc2 '$err2'"
pass "bad arguments: one line each, exit 2, command not run"
