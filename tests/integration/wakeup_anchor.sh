#!/bin/bash
# wakeup_anchor.sh: a wake-up-anchored reservation (CBS) never gives a task more than its
# slice per period, however often the task wakes, and still serves it.
# Outcome checked: a greedy task that wants 80 % of a CPU but sleeps 80 times per period
# (bench_periodic: 8 ms of CPU per 10 ms in 80 pieces, 20 us of sleep between them), under
# --anchor wakeup --park stop with 2 ms / 10 ms, receives at most 20 % + 1 point of a CPU
# over the run (the bandwidth bound: replenishing at every wake-up would give it ~80 %) and
# at least 15 %, and at most two slices + 1.5 ms in 99 % of its 10 ms stretches of wall time
# (the end of one job and the start of the next; a CBS that replenished early would give
# ~8 ms in most of them). The 1.5 ms and the percentile: under load on the test VM single
# stretches reached 5.0 ms (2 slices + 1 ms) with the long-run share exact (20.0 %) — the
# thread CPU clock there also counts time the host took from the vCPU, and a budget end
# timed by a dispatcher is woken late by up to ms — so one hiccup must not decide; the worst
# stretch is printed. (With a second thread the budget ends are timed and a job may also run
# a quarter slice past its budget, taken from the next: 2.5 slices + 1 ms, the same bound.)
# Once single-threaded (perf enforcer, kernel stop) and once with a
# sleeping second thread (dispatcher-timed budget ends, freezer or signals).
# Then the same task is moved to --anchor epoch and back with `task set` (both hold).
. "$(dirname "$0")/lib.sh"
need_root
[ -x "$VS_BIN/bench_periodic" ] || skip "bench_periodic not built"
start_vsched

greedy() { # LABEL EXTRA_ARGS...: checks the share and the 10 ms stretches of a greedy run
	local label=$1 out
	shift
	out=$("$VS_BIN/vschedctl" -s "$ENDPOINT" run --period 10ms --slice 2ms --cpu 1 --park stop \
		--anchor wakeup -- "$VS_BIN/bench_periodic" -p 10000 -j 8000 -k 80 -s 20 -d 4 -w 500 "$@") ||
		fail "$label: vschedctl run failed: $out"
	CPU=$(sed -n 's/.*cpu_pct=\([0-9.]*\).*/\1/p' <<<"$out")
	WIN=$(sed -n 's/.*cpu_win_max_us=\([0-9.]*\).*/\1/p' <<<"$out")
	WIN99=$(sed -n 's/.*cpu_win_p99_us=\([0-9.]*\).*/\1/p' <<<"$out")
	[ -n "$CPU" ] && [ -n "$WIN" ] && [ -n "$WIN99" ] || fail "$label: no figures in '$out'"
	echo "$label: cpu ${CPU}% of a CPU; in 10 ms stretches ${WIN99} us at p99, ${WIN} us at most"
	within "$CPU" 15 21 || fail "$label: greedy sleeper got $CPU %, want 15..21 (slice 20 %)"
	within "$WIN99" 0 5500 ||
		fail "$label: $WIN99 us in 1 % of its 10 ms stretches, want <= 2 slices + 1.5 ms"
}

greedy "one thread"
greedy "two threads" -x
pass "wake-up anchor: a task waking 80 times per period held to its slice (one and two threads)"

# The anchor follows `task set`; the reservation holds either way.
spawn "$VS_BIN/bench_periodic" -p 10000 -j 8000 -k 80 -s 20 -d 5 -w 0
p=$SPAWNED
ctl task add "$p" --period 10ms --slice 2ms --cpu 1 --park stop --anchor wakeup >/dev/null ||
	fail "task add --anchor wakeup refused"
sleep 1.1 # bench_periodic releases its first job at the next whole second: idle until then
ctl task list --json | jq -e --argjson p "$p" '.[] | select(.pid == $p) | .anchor == "wakeup"' \
	>/dev/null || fail "task list does not show anchor wakeup"
ctl task set "$p" --period 10ms --slice 2ms --anchor epoch >/dev/null || fail "task set --anchor epoch"
ctl task list --json | jq -e --argjson p "$p" '.[] | select(.pid == $p) | .anchor == "epoch"' \
	>/dev/null || fail "task list does not show anchor epoch after set"
s=$(share "$p" 1)
within "$s" 15 21 || fail "epoch anchor after set: $s %, want 15..21"
ctl task set "$p" --period 10ms --slice 2ms --anchor wakeup >/dev/null || fail "task set --anchor wakeup"
s2=$(share "$p" 1)
within "$s2" 15 21 || fail "wakeup anchor after set: $s2 %, want 15..21"
pass "anchor changed with task set: epoch $s %, wakeup $s2 %"
