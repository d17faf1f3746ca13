/*
 * vsched/dispatch.c: one dispatcher thread per managed CPU — partitioned EDF over CPU-time
 * budgets, applied by real-time priority (DESIGN.md §2, paper 004 Sect. 3).
 *
 * Each dispatcher is pinned to its CPU at SCHED_FIFO 99 and loops: read the CPU's task
 * table under rcu_read_lock(), then
 *   1. sample: the CPU clock of every task it let run (budget = CPU time actually used);
 *   2. jobs: close, open or rebuild each window's job (jobs.c: epoch grid or wake-up);
 *   3. chain: the tasks with budget left in EDF order, then the dormant wake-up-anchored
 *      tasks (they must be able to run to be seen waking);
 *   4. apply: park the others, continue the chain at strictly falling SCHED_RR priorities
 *      from 98 in its order (a task keeps its priority while that order allows it);
 *   5. sleep to the next event (release, deadline, a budget end it must time itself) as an
 *      absolute CLOCK_MONOTONIC time, or until woken (API change, perfwatch detector).
 *
 * Guarantees
 *  - On one CPU only the tasks of the current EDF chain run under their reservations, the
 *    earliest deadline first: a lower one runs only while every one above it is blocked or
 *    stopped at its budget end. So a sleeping task neither loses its budget nor holds the
 *    CPU idle.
 *  - Budget ends: a single-threaded `stop` task has a perfwatch enforcer that stops it at
 *    its budget end in the kernel — the next task in the chain takes over with no
 *    dispatcher wake-up. Other tasks' budget ends are slept to, early by the measured
 *    wake-up latency (at most slice/8); what a job uses beyond its budget is taken from the
 *    next one (jobs.c), so the long-run share is slice/period.
 *  - No allocation, logging, locks or blocking I/O here; nothing but syscalls on the tasks.
 *    No task pointer is kept across a sleep.
 *
 * Accounting (struct task_acct) is done by jobs.c at each job's deadline; cpu_ns here.
 */
#include "vsched.h"

#include <assert.h>
#include <errno.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"

#define EPS_NS         (20 * NSEC_PER_USEC)  /* budget left below this counts as used up */
#define BLOCK_SLACK    (100 * NSEC_PER_USEC) /* idle beyond wall/5 + this means "blocked" */
#define POLL_NS        (5 * NSEC_PER_MSEC)   /* re-sample a timed raised task this often */
#define MAX_SLEEP      (1 * NSEC_PER_SEC)
#define COMP_MAX       (300 * NSEC_PER_USEC) /* largest wake-latency compensation */
#define COMP_SLICE_DIV 8 /* ... and at most slice / this: a short slice keeps most of itself */
#define OVERRUN_DIV    4 /* a timed wake-up-anchored job may run slice / this past its budget */
#define LAT_SAMPLE_MAX (1 * NSEC_PER_MSEC)   /* one late wake counts at most this much */
#define MAX_CHAIN      (VS_PRIO_RAISED - 1)  /* SCHED_RR 98 down to 2 */
#define ENF_LATE_NS    (100 * NSEC_PER_USEC) /* ran less since a SIGCONT: a late stop may hold it */
#define ENF_STOP_LAG   (20 * NSEC_PER_USEC)  /* a cgroup enforcer's threads' counters: this later */
#define STACK_SIZE     (256 * 1024)

struct disp {
	struct sched *s;
	int idx; /* index in cfg.cpus */
	int cpu;
	int cap; /* capacity of the per-task arrays: cfg.max_tasks */
	struct edf_job *jobs;
	int *chain;                       /* task indexes continued, in priority order */
	int *rank;                        /* per task index: position in chain, -1 if parked */
	uint64_t *delta;                  /* per task index: CPU ns used since the last sample */
	bool *timed;                      /* per task index: its budget end is a dispatcher timer */
	uint64_t *woke;                   /* per task index: CPU since a wake-up seen, 0 if none */
	mono_ns applied_at;               /* end of the previous iteration */
	uint64_t lat;                     /* EWMA of how late timed wake-ups are, ns */
	uint64_t lat_max;                 /* latest timed wake-up seen, ns (logged at stop) */
	uint64_t late_1ms;                /* timed wake-ups more than 1 ms late */
	uint64_t wakes;                   /* loop iterations (logged at stop) */
	uint64_t chg_n, chg_sum, chg_max; /* reservation change: publish -> applied, ns */
	bool started;
};

static long futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *ts,
                  uint32_t val3)
{
	return syscall(SYS_futex, (uint32_t *)word, op, val, ts, NULL, val3);
}

void dispatch_wake(struct sched *s, int idx)
{
	atomic_fetch_add(&s->wake_seq[idx], 1);
	futex(&s->wake_seq[idx], FUTEX_WAKE_PRIVATE, 1, NULL, 0);
}

/*
 * The task's budget ends are enforced by its perfwatch enforcer (kernel stop), not timed:
 * while it has one thread, and, with a cgroup enforcer, an epoch-anchored task with any
 * number. A wake-up-anchored one with several stays timed: a 1 ms job that sleeps between
 * jobs missed 2.9 points more than SCHED_DEADLINE in the same minutes when enforced, 1.3
 * when timed (an enforcer stop overruns the budget by its margin and the stop's delay, the
 * next job is short by that, and stops come in runs; a timed budget end comes early
 * instead; bench/RESULTS.md session 35). Timed, it has an overrun allowance (jobs.c).
 */
static bool enforced(const struct task *t, const struct task_threads *th)
{
	return t->enf_fd >= 0 && t->park == VSP_PARK_STOP &&
	       (th->n == 1 || (t->enf_cgroup && th->stop &&
	                       rcu_dereference(t->resv)->anchor == VSP_ANCHOR_EPOCH));
}

/* Disables task t's enforcer counters (the leader's, and its threads' if a cgroup one). */
static void disarm_enforcer(const struct task *t, const struct task_threads *th)
{
	perfwatch_disarm(t->enf_fd);
	if (t->enf_cgroup)
		task_disarm_stoppers(th);
}

/* How far past its budget the enforcer lets task t's current job run (enf_plan.c). */
static uint64_t task_enf_margin(const struct task *t)
{
	return enf_margin(rcu_dereference(t->resv)->w[t->run.cur].slice);
}

/*
 * The enforcer may have stopped the task: its current job ran to the counter's overflow
 * (its budget and at least half the margin, see enf_plan.c). A task that used its budget
 * but not that is parked by the dispatcher: by its clock the job is spent.
 */
static bool kstop_possible(const struct task *t)
{
	const struct task_run *run = &t->run;
	const struct win_run *wr = &run->win[run->cur];

	return run->enf.armed && wr->used + EPS_NS >= wr->budget + task_enf_margin(t) / 2;
}

/*
 * True when task t's enforcer fired since its stops were last answered: its record head
 * moved (each overflow writes a record before it queues the SIGSTOP). Then counts them as
 * answered (the caller continues the task) and asks for one recheck (enforcer_stopped).
 */
static bool enforcer_unanswered(struct task *t)
{
	struct task_run *run = &t->run;
	uint64_t head;

	if (!t->enf_page)
		return false;
	head = perfwatch_fired(t->enf_page);
	if (head == run->enf_head)
		return false;
	run->enf_head = head;
	/*
	 * The counter overflowed just before where the task's clock stands now (it is stopped
	 * since; the stop's delay is left out, which only makes enf_plan see the next overflow
	 * that much later) and its period restarted there: the next overflow is enf.len of
	 * counted CPU from here, whatever the counter gained on the clock before (steal time,
	 * see enf_plan.c).
	 */
	if (run->enf.armed)
		run->enf.cpu0 = run->cpu_at_raise;
	run->enf_cont_cpu = run->cpu_at_raise;
	run->enf_recheck = true;
	return true;
}

/*
 * Whether task t's enforcer stopped it since it was last continued: it fired since then
 * (enforcer_unanswered). And once more, at the next job, when the task ran less than
 * ENF_LATE_NS since the SIGCONT that answered a stop: the stop is queued from an irq_work
 * after the record and may land after that SIGCONT. (run->cpu_at_raise is current here: the
 * task was sampled in this pass, or is parked `stop` and its clock stood still.)
 * Only these get a SIGCONT. One sent to a task the enforcer did not stop would discard a
 * SIGSTOP that someone else sent while the task was frozen: a tracer's PTRACE_ATTACH (gdb,
 * LeakSanitizer's leak check at exit) then waits for good for a stop that never comes, and a
 * job its administrator stopped would be resumed.
 */
static bool enforcer_stopped(struct task *t)
{
	struct task_run *run = &t->run;

	if (enforcer_unanswered(t))
		return true;
	if (!run->enf_recheck)
		return false;
	run->enf_recheck = false;
	return run->cpu_at_raise < run->enf_cont_cpu + ENF_LATE_NS;
}

/*
 * 1. Sample: charges the CPU each continued task used since the last sample to the window
 * it runs for, and marks a job blocked when the CPU was clearly not used by it or by the
 * tasks above it (wall − their CPU > 20 % of wall + 100 µs): nothing kept it from running
 * but itself. A task that had not run at the last sample, and now ran in a sample that
 * was blocked by this test, woke up in it: d->woke (a task that was only preempted never
 * counts as waking: the CPU it did not get was used above it).
 */
static void sample(struct disp *d, struct cpu_table *ct, int n, mono_ns now)
{
	for (int i = 0; i < n; i++) {
		struct task *t = ct->task[i];
		struct task_run *run = &t->run;
		uint64_t c;

		d->delta[i] = 0;
		d->woke[i] = 0;
		if (!run->raised) {
			run->idle_seen = false;
			continue;
		}
		c = task_cputime(t);
		if (c == 0) /* clock gone: the process exited */
			continue;
		d->delta[i] = c > run->cpu_at_raise ? c - run->cpu_at_raise : 0;
		if (d->delta[i] > 0)
			run->detecting =
			    false; /* it ran: its detectors fired or no longer matter */
		run->cpu_at_raise = c;
		run->wall_at_raise = now;
		run->win[run->cur].used += d->delta[i];
		atomic_fetch_add_explicit(&t->acct.cpu_ns, d->delta[i], memory_order_relaxed);
	}
	if (!d->started || !mono_before(d->applied_at, now))
		return;
	uint64_t wall = now - d->applied_at, slack = wall / 5 + BLOCK_SLACK;
	for (int i = 0; i < n; i++) {
		struct task_run *run = &ct->task[i]->run;
		uint64_t above = 0;
		bool blocked;

		if (!run->raised)
			continue;
		for (int k = 0; k < n; k++)
			if (ct->task[k]->run.raised && ct->task[k]->run.prio >= run->prio)
				above += d->delta[k];
		blocked = wall > above + slack;
		if (blocked)
			run->win[run->cur].blocked_in_job = true;
		if (run->idle_seen && d->delta[i] > 0 && blocked)
			d->woke[i] = d->delta[i];
		run->idle_seen = d->delta[i] == 0;
	}
}

/* Reservation change: publish -> seen here (change latency, logged at stop). */
static void count_change(struct disp *d, const struct task_resv *rv, mono_ns now)
{
	if (!mono_before(rv->published_at, now))
		return;
	uint64_t dt = now - rv->published_at;
	d->chg_n++;
	d->chg_sum += dt;
	if (dt > d->chg_max)
		d->chg_max = dt;
}

/*
 * 2. Jobs of task i: every window brought up to now (jobs.c), and the task's EDF entry in
 * d->jobs[i]: its eligible window with the earliest deadline.
 */
static void update_task_jobs(struct disp *d, struct task *t, int i, mono_ns now, mono_ns epoch)
{
	const struct task_resv *rv = rcu_dereference(t->resv);
	const struct task_threads *th = rcu_dereference(t->threads);
	struct task_run *run = &t->run;
	struct edf_job wj[VSP_MAX_WINDOWS];
	bool moved = run->epoch != epoch && rv->anchor == VSP_ANCHOR_EPOCH;
	bool rebuild = !run->started || run->gen != rv->gen || moved;
	bool timed = !enforced(t, th);
	uint64_t lat = d->lat < COMP_MAX ? d->lat : COMP_MAX;
	int nw = (int)rv->n, cur;

	if (rebuild && run->started && run->gen != rv->gen)
		count_change(d, rv, now);
	for (int w = 0; w < nw; w++) {
		const struct vsp_resv *r = &rv->w[w];
		/*
		 * Per window: comp <= slice / COMP_SLICE_DIV. With the CPU-wide latency alone
		 * (50-140 us here) a 300 us slice would count as used up after 160-250 us, so a
		 * job that needs 80 % of its slice could never finish in it. The latency not
		 * compensated makes a job overrun; jobs.c takes that from the next budget.
		 */
		uint64_t wake_lat =
		    lat < r->slice / COMP_SLICE_DIV ? lat : r->slice / COMP_SLICE_DIV;
		uint64_t comp = timed ? wake_lat : 0; /* (enforced: the kernel stops it on time) */
		bool allowance = timed && rv->anchor == VSP_ANCHOR_WAKEUP; /* (jobs.c) */
		struct job_ctx c = {.now = now,
		                    .epoch = epoch,
		                    .thr = comp > EPS_NS ? comp : EPS_NS,
		                    .comp = comp,
		                    .wake_lat = wake_lat,
		                    .overrun = allowance ? r->slice / OVERRUN_DIV : 0,
		                    .exited = atomic_load(&t->exited),
		                    .woke_ran = d->woke[i]};

		jobs_update(&t->acct, &run->win[w], r, rv->anchor, rebuild, &c);
		jobs_entry(&run->win[w], &c, &wj[w]);
	}
	if (rebuild) {
		run->gen = rv->gen;
		run->epoch = epoch;
		run->started = true;
	}
	if (nw == 1) {
		d->jobs[i] = wj[0];
		cur = 0;
	} else {
		cur = edf_task_entry(wj, nw, now, &d->jobs[i]);
	}
	/* The window a continued task is charged to; kept while none is eligible. */
	if (cur >= 0)
		run->cur = cur;
	else if (run->cur >= nw)
		run->cur = 0;
	d->timed[i] = timed;
}

/*
 * 3. The chain: every task with an eligible job, earliest deadline first (ties: lowest
 * index; a job past its budget, on its overrun allowance, after every other), then the
 * dormant wake-up-anchored ones. Fills d->chain and d->rank; returns its
 * length (at most MAX_CHAIN: beyond that tasks wait, parked).
 */
static int order_chain(struct disp *d, struct cpu_table *ct, int n, mono_ns now)
{
	int len = 0;

	for (int i = 0; i < n; i++) {
		const struct edf_job *j = &d->jobs[i];
		int k = len++;

		d->rank[i] = -1;
		if (!j->runnable || atomic_load(&ct->task[i]->exited) || j->remaining == 0 ||
		    mono_before(now, j->release) || !mono_before(now, j->deadline)) {
			len--;
			continue;
		}
		/* insertion by edf_before: strictly before moves ahead (ties keep index order) */
		while (k > 0 && edf_before(j, &d->jobs[d->chain[k - 1]])) {
			d->chain[k] = d->chain[k - 1];
			k--;
		}
		d->chain[k] = i;
	}
	if (len > MAX_CHAIN)
		len = MAX_CHAIN;
	for (int i = 0; i < n && len < MAX_CHAIN; i++) {
		const struct task_run *run = &ct->task[i]->run;
		if (run->win[run->cur].dormant && !atomic_load(&ct->task[i]->exited))
			d->chain[len++] = i;
	}
	for (int k = 0; k < len; k++)
		d->rank[d->chain[k]] = k;
	return len;
}

static void note_gone(struct task *t, int rc)
{
	if (rc == -ESRCH)
		atomic_store(&t->exited, true);
}

/* 4a. Parks every task outside the chain (a task its enforcer stopped is left so). */
static void park_others(struct disp *d, struct cpu_table *ct, int n)
{
	for (int i = 0; i < n; i++) {
		struct task *t = ct->task[i];
		const struct task_threads *th = rcu_dereference(t->threads);
		struct task_run *run = &t->run;
		bool full = th->gen != run->applied_threads;

		if (d->rank[i] >= 0 || atomic_load(&t->exited) || (!run->raised && !full))
			continue;
		if (run->raised && kstop_possible(t))
			run->kstop = true; /* stopped by the kernel past its budget end */
		if (full || !run->kstop) {
			note_gone(t, task_park(t, th, full));
			run->parked = true;
		}
		run->raised = false;
		run->applied_threads = th->gen;
		if (full)
			run->prio = t->park == VSP_PARK_STOP ? VS_PRIO_RAISED : 0;
	}
}

/*
 * Arms task t's enforcer so that the task stops a margin past where its current job's budget
 * ends (enf_plan.c: why the margin, and when the counter is kept as it is), or disarms it
 * when the task is not enforced any more. continued: it was just sent a SIGCONT.
 */
static void arm_enforcer(struct task *t, const struct task_threads *th, bool continued)
{
	struct task_run *run = &t->run;
	const struct win_run *wr = &run->win[run->cur];
	uint64_t c = run->cpu_at_raise, rest = wr->budget > wr->used ? wr->budget - wr->used : 0;
	uint64_t p;

	if (t->enf_fd < 0)
		return;
	if (!enforced(t, th)) {
		if (run->enf_on)
			disarm_enforcer(t, th);
		run->enf.armed = run->enf_on = false;
		run->enf_threads = 0;
		return;
	}
	/*
	 * A cgroup enforcer: the leader's counter overflows first and the other threads'
	 * ENF_STOP_LAG later; they stop the task only when one of them is the thread running
	 * (the leader's SIGSTOP wakes the leader thread, which waits behind it). Every stop
	 * moves the leader's record head (perfwatch.c). Armed together: at a new thread list
	 * (new threads' counters are disabled), and at each SIGCONT after a stop (the lagging
	 * counters, paused short of their overflow by the stop, would stop the task again just
	 * after it was continued). While the task has one thread only the leader's counter
	 * exists, kept as enf_plan says (re-armed at each SIGCONT, 32 single-threaded tasks
	 * cost 2,900 ioctls/s more and 0.6-0.75 % more CPU).
	 */
	bool all = t->enf_cgroup && th->stop && th->n > 1 &&
	           (run->enf_threads != th->gen || !run->enf_on || continued);
	if (all)
		run->enf.armed = false;
	p = enf_plan(&run->enf, c, rest, rcu_dereference(t->resv)->w[run->cur].slice);
	if (p == 0)
		return;
	/*
	 * An overflow not answered yet (the counter runs ahead of the CPU clock the dispatcher
	 * counts by, so the task can be stopped while the dispatcher still sees budget left):
	 * continued now, or the new arming would forget that it is stopped (seen: a task at 0 %
	 * for good after `task set`).
	 */
	if (enforcer_unanswered(t))
		note_gone(t, task_raise(t, th, run->prio, false, false, true));
	if (perfwatch_arm(t->enf_fd, p, false, !run->enf_on) == 0) {
		run->enf_on = true;
		run->enf = (struct enf_grid){.armed = true, .cpu0 = c, .len = p};
	}
	for (uint32_t k = 0; t->enf_cgroup && th->stop && k < th->n; k++)
		if (th->stop[k] >= 0)
			perfwatch_arm(th->stop[k], p + ENF_STOP_LAG, false, all);
	run->enf_threads = th->gen;
}

/*
 * Arms the detectors of task t when want (it is dormant, or it used no CPU since the last
 * sample although it could run: asleep, or waiting below others), once; the first to fire
 * disarms itself. A task that has them armed needs no budget timer: it cannot use its
 * budget without running, and running 20 µs wakes the dispatcher.
 */
static void arm_detectors(struct task *t, const struct task_threads *th, bool want)
{
	struct task_run *run = &t->run;

	if (!want || !th->det) {
		run->detecting = false;
		return;
	}
	if (run->detecting && th->gen == run->det_threads)
		return;
	for (uint32_t k = 0; k < th->n; k++)
		if (th->det[k] >= 0)
			perfwatch_arm(th->det[k], PERFWATCH_DETECT_NS, true, true);
	run->detecting = true;
	run->det_threads = th->gen;
}

/*
 * The SCHED_RR priority of chain position k (of len) below priority hi: the task's current
 * one, cur, when it is below hi and leaves one priority for each position under k down to
 * VS_PRIO_RAISED - MAX_CHAIN + 1; else hi. Priorities fall strictly along the chain (its
 * EDF order), and a task leaving or joining the chain does not re-prioritise the others.
 */
static int chain_prio(int cur, int hi, int k, int len)
{
	int lo = VS_PRIO_RAISED - MAX_CHAIN + 1 + (len - 1 - k);

	assert(lo <= hi);
	return cur >= lo && cur <= hi ? cur : hi;
}

/* 4b. Continues the chain at strictly falling SCHED_RR priorities from 98 in its order. */
static void raise_chain(struct disp *d, struct cpu_table *ct, int len, mono_ns now)
{
	int hi = VS_PRIO_RAISED;

	for (int k = 0; k < len; k++) {
		struct task *t = ct->task[d->chain[k]];
		const struct task_threads *th = rcu_dereference(t->threads);
		struct task_run *run = &t->run;
		int prio = chain_prio(run->prio, hi, k, len);
		bool setprio = th->gen != run->applied_threads || run->prio != prio;
		/*
		 * An enforced task is checked at every new job, not only when its enforcer may
		 * have fired by the dispatcher's count (a stop can land a little after the count
		 * said so, or after the task was frozen): a stop missed would last for good. It
		 * gets a SIGCONT only when its clock shows the enforcer fired (enforcer_stopped).
		 * (Without an enforcer nothing else stops a raised task.)
		 */
		bool fresh_job = enforced(t, th) && run->cont_job != run->win[run->cur].release;
		bool was = run->raised;
		/*
		 * An enforcer that stops watching (the task grew threads: a bsp rank when its
		 * libapprate starts ZeroMQ's; or its parking changed) may have stopped the task
		 * just before, unseen by our count, or may still deliver a stop queued from its
		 * irq_work; nothing above would continue it then: a thaw or a priority does not
		 * end a SIGSTOP (seen: a rank at 0 CPU for 30 s in its first iteration). So it
		 * gets a SIGCONT at this job and the next ENF_CONT_JOBS - 1, whatever parks it.
		 */
		if (run->enf_on && !enforced(t, th))
			run->cont_after = ENF_CONT_JOBS;
		bool cont_after =
		    run->cont_after > 0 && run->cont_job != run->win[run->cur].release;
		/* one SIGCONT per raise, whichever asks for it */
		bool kstop = ((run->kstop || fresh_job) && enforcer_stopped(t)) || cont_after;

		assert(prio >= 1 && prio <= VS_PRIO_RAISED);
		hi = prio - 1;
		if (atomic_load(&t->exited))
			continue;
		/*
		 * Budget baseline. A parked `stop` task's clock stood still since its last sample
		 * (taken just before it was parked), so that sample is the baseline and the
		 * little it ran after the stop is charged too; an idle-parked task may have run
		 * at SCHED_IDLE meanwhile, which is free: read its clock now.
		 */
		if (!was && t->park == VSP_PARK_IDLE) {
			uint64_t c = task_cputime(t);
			if (c)
				run->cpu_at_raise = c;
		}
		if (!was || setprio || kstop) {
			note_gone(t, task_raise(t, th, prio, setprio, run->parked, kstop));
			if (!was)
				run->wall_at_raise = now;
		}
		if (cont_after)
			run->cont_after--;
		arm_enforcer(t, th, kstop);
		run->cont_job = run->win[run->cur].release;
		arm_detectors(t, th,
		              run->win[run->cur].dormant ||
		                  (d->timed[d->chain[k]] && was && d->delta[d->chain[k]] == 0));
		run->raised = true;
		run->parked = false;
		run->kstop = false;
		run->prio = prio;
		run->applied_threads = th->gen;
		/* when the job first got its CPU (jobs.c: start latency) */
		if (run->win[run->cur].first_raise == 0)
			run->win[run->cur].first_raise = now;
	}
}

/*
 * 5. Next event: a release or deadline of any job, the earliest budget end the dispatcher
 * times itself (a continued task without an enforcer could use its budget by then), a
 * dormant task's slice when nothing else watches it, and a periodic re-sample of timed
 * tasks.
 */
static mono_ns next_event(struct disp *d, struct cpu_table *ct, int n, int len, mono_ns now)
{
	mono_ns next = n > 0 ? edf_next_event(d->jobs, n, now, -1) : now + MAX_SLEEP;
	bool timed = false;

	for (int k = 0; k < len; k++) {
		int i = d->chain[k];
		const struct task *t = ct->task[i];
		const struct win_run *wr = &t->run.win[t->run.cur];

		if (!d->timed[i] || t->run.detecting)
			continue; /* (enforced, or its detectors wake us when it runs) */
		timed = true;
		if (!wr->dormant) {
			next = mono_min(next, now + d->jobs[i].remaining);
		} else {
			uint64_t left = wr->budget > wr->used ? wr->budget - wr->used : 0;
			next = mono_min(next, now + (left > EPS_NS ? left : EPS_NS));
		}
	}
	if (timed)
		next = mono_min(next, now + POLL_NS);
	if (!mono_before(now, next))
		next = now + EPS_NS; /* never spin */
	return mono_min(next, now + MAX_SLEEP);
}

/* One scheduling decision for the CPU; returns when to wake up next. Under rcu_read_lock. */
static mono_ns dispatch_once(struct disp *d, mono_ns now)
{
	struct sched *s = d->s;
	struct cpu_table *ct = rcu_dereference(s->table[d->idx]);
	mono_ns epoch = atomic_load(&s->epoch), next;
	int n = ct->n < d->cap ? ct->n : d->cap, len;

	/* sched_add keeps every CPU's table within max_tasks, the size of our arrays. */
	assert(ct->n <= d->cap);
	sample(d, ct, n, now);
	for (int i = 0; i < n; i++)
		update_task_jobs(d, ct->task[i], i, now, epoch);
	len = order_chain(d, ct, n, now);
	park_others(d, ct, n); /* first, so two tasks never both run at 98 here */
	raise_chain(d, ct, len, now);
	next = next_event(d, ct, n, len, now);
	d->applied_at = mono_now();
	d->started = true;
	return next;
}

/* Folds how late a timed wake-up was into the latency EWMA (weight 1/8). */
static void note_latency(struct disp *d, mono_ns next)
{
	mono_ns late = mono_now() - next;

	if ((int64_t)late < 0)
		late = 0;
	if (late > d->lat_max)
		d->lat_max = late;
	d->late_1ms += late > NSEC_PER_MSEC;
	if (late > LAT_SAMPLE_MAX)
		late = LAT_SAMPLE_MAX;
	d->lat = (uint64_t)((int64_t)d->lat + ((int64_t)late - (int64_t)d->lat) / 8);
}

static void on_notify(int sig)
{
	(void)sig; /* only interrupts the dispatcher's FUTEX_WAIT */
}

static void *dispatcher(void *arg)
{
	struct disp *d = arg;
	struct sched *s = d->s;
	sigset_t notify;

	atomic_store(&s->disp_tid[d->idx], (pid_t)syscall(SYS_gettid));
	sigemptyset(&notify);
	sigaddset(&notify, VS_SIG_NOTIFY);
	sigaddset(&notify, SIGIO); /* what the kernel sends when the notify queue is full */
	pthread_sigmask(SIG_UNBLOCK, &notify, NULL);
	rcu_register_thread();
	while (!atomic_load(&s->stopping)) {
		/*
		 * Load the futex word before reading any state: a dispatch_wake() after this
		 * load changes the word, so the FUTEX_WAIT below returns at once instead of
		 * sleeping through the change. FUTEX_WAIT_BITSET with FUTEX_BITSET_MATCH_ANY
		 * takes an absolute CLOCK_MONOTONIC timeout: it is the wakeable, race-free form
		 * of clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME). A detector's signal ends
		 * it with EINTR.
		 */
		uint32_t seq = atomic_load(&s->wake_seq[d->idx]);
		mono_ns next;

		rcu_read_lock();
		next = dispatch_once(d, mono_now());
		rcu_read_unlock();
		d->wakes++;

		struct timespec ts = ns_to_ts(next);
		if (futex(&s->wake_seq[d->idx], FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, seq, &ts,
		          FUTEX_BITSET_MATCH_ANY) < 0 &&
		    errno == ETIMEDOUT)
			note_latency(d, next);
	}
	rcu_unregister_thread();
	return NULL;
}

/* Allocates a dispatcher's arrays (touched now: mlockall'ed, no page fault in the loop). */
static void disp_alloc(struct disp *d)
{
	d->jobs = calloc((size_t)d->cap, sizeof(*d->jobs));
	d->chain = calloc((size_t)d->cap, sizeof(*d->chain));
	d->rank = calloc((size_t)d->cap, sizeof(*d->rank));
	d->delta = calloc((size_t)d->cap, sizeof(*d->delta));
	d->timed = calloc((size_t)d->cap, sizeof(*d->timed));
	d->woke = calloc((size_t)d->cap, sizeof(*d->woke));
	if (!d->jobs || !d->chain || !d->rank || !d->delta || !d->timed || !d->woke)
		fatal("dispatch_start: out of memory");
	memset(d->jobs, 0, (size_t)d->cap * sizeof(*d->jobs));
}

/* Starts dispatcher i pinned to its CPU at SCHED_FIFO VS_PRIO_DISPATCH. 0 or -1 (logged). */
static int disp_spawn(struct sched *s, int i)
{
	struct disp *d = &s->dctx[i];
	struct sched_param sp = {.sched_priority = VS_PRIO_DISPATCH};
	pthread_attr_t attr;
	cpu_set_t set;
	char name[16];
	int rc;

	d->s = s;
	d->idx = i;
	d->cpu = s->cfg.cpus[i];
	d->cap = s->cfg.max_tasks > 0 ? s->cfg.max_tasks : 1;
	disp_alloc(d);
	CPU_ZERO(&set);
	CPU_SET(d->cpu, &set);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, STACK_SIZE);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
	pthread_attr_setschedparam(&attr, &sp);
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	rc = pthread_create(&s->disp[i], &attr, dispatcher, d);
	pthread_attr_destroy(&attr);
	if (rc) {
		errno = rc;
		log_warn("cpu %d: cannot start dispatcher at SCHED_FIFO %d", d->cpu,
		         VS_PRIO_DISPATCH);
		return -1;
	}
	snprintf(name, sizeof(name), "vsched-cpu%d", d->cpu);
	pthread_setname_np(s->disp[i], name);
	return 0;
}

int dispatch_start(struct sched *s)
{
	struct sigaction sa;
	sigset_t all, old;
	int rc = 0;

	assert(s->ndisp == 0);
	atomic_store(&s->stopping, false);
	s->dctx = calloc((size_t)s->cfg.ncpus, sizeof(*s->dctx));
	if (!s->dctx)
		fatal("dispatch_start: out of memory");
	/* Detector signals only interrupt a dispatcher's wait (no SA_RESTART). */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_notify;
	sigemptyset(&sa.sa_mask);
	sigaction(VS_SIG_NOTIFY, &sa, NULL);
	sigaction(SIGIO, &sa, NULL);
	/* Dispatchers take no other signals: they are the main thread's business. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (int i = 0; i < s->cfg.ncpus && rc == 0; i++) {
		rc = disp_spawn(s, i);
		if (rc == 0)
			s->ndisp++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		dispatch_stop(s);
		return -1;
	}
	/* The detectors' owners: each dispatcher publishes its thread id first thing. */
	for (int i = 0; i < s->ndisp; i++)
		while (atomic_load(&s->disp_tid[i]) == 0)
			usleep(100);
	log_info("%d dispatchers running at SCHED_FIFO %d", s->ndisp, VS_PRIO_DISPATCH);
	return 0;
}

static void disp_log(const struct disp *d)
{
	if (d->jobs)
		log_info("cpu %d: %llu dispatches; timer wake-up latency %.1f us (EWMA), max "
		         "%.1f us, %llu wake-ups over 1 ms late",
		         d->cpu, (unsigned long long)d->wakes, (double)d->lat / 1e3,
		         (double)d->lat_max / 1e3, (unsigned long long)d->late_1ms);
	if (d->chg_n)
		log_info("cpu %d: %llu reservation changes seen by the dispatcher %.1f us after "
		         "publication on average, %.1f us at most",
		         d->cpu, (unsigned long long)d->chg_n,
		         (double)d->chg_sum / (double)d->chg_n / 1e3, (double)d->chg_max / 1e3);
}

void dispatch_stop(struct sched *s)
{
	atomic_store(&s->stopping, true);
	for (int i = 0; i < s->ndisp; i++)
		dispatch_wake(s, i);
	for (int i = 0; i < s->ndisp; i++)
		pthread_join(s->disp[i], NULL);
	s->ndisp = 0;
	if (!s->dctx)
		return;
	for (int i = 0; i < s->cfg.ncpus; i++) {
		struct disp *d = &s->dctx[i];
		disp_log(d);
		free(d->jobs);
		free(d->chain);
		free(d->rank);
		free(d->delta);
		free(d->timed);
		free(d->woke);
	}
	free(s->dctx);
	s->dctx = NULL;
}
