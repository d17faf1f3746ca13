/*
 * vsched/dispatch.c: one dispatcher thread per managed CPU — partitioned EDF over CPU-time
 * budgets, applied by SCHED_FIFO priority (DESIGN.md §2, paper 004 Sect. 3).
 *
 * Each dispatcher is pinned to its CPU at SCHED_FIFO 99 and loops: read the CPU's task
 * table under rcu_read_lock(), sample the CPU clock of every raised task (budget = CPU time
 * actually consumed), close and open jobs (releases at epoch + phase + k·period, deadline
 * release + D), pick the EDF order, raise the entitled task to real-time priority 98
 * (SCHED_RR, see task.c) and park the others, then sleep to the next event (release,
 * deadline, budget end) as an absolute CLOCK_MONOTONIC time.
 *
 * Guarantees
 *  - On one CPU only the tasks of the current EDF chain run under their reservation: the
 *    earliest-deadline job with budget left is raised at FIFO 98. When that task blocks
 *    (the CPU went idle while it was allowed to run), it keeps its budget and stays raised,
 *    and the next job in EDF order is raised too at FIFO 97 (then 96, ...), so a sleeping
 *    task neither loses its budget nor holds the CPU idle. The chain goes back to one task
 *    when the head of the EDF order changes.
 *  - A job's budget is slice, or slice·(deadline − now)/D when the job is (re)built inside
 *    its window (task added, reservation changed, epoch moved): density is kept, so the
 *    admission test still guarantees the other tasks on the CPU. CPU a job used beyond its
 *    budget (late wake-up) is taken from the next job's budget, so the long-run share is
 *    slice/period; budget ends are slept to early by the measured wake-up latency.
 *  - No allocation, logging, locks or blocking I/O here; nothing but syscalls on the tasks.
 *    No task pointer is kept across a sleep (the primary is remembered by pid).
 *
 * Accounting (struct task_acct), per job at its deadline:
 *  - periods: jobs whose deadline passed;
 *  - cpu_ns: CPU time the task consumed while raised;
 *  - misses: jobs that ended owing more than the "used up" threshold (max(EPS_NS, wake
 *    latency compensation)) of their budget although the task never blocked while raised
 *    in that job (a blocked task declined its CPU: not a miss);
 *  - lateness: for a missed job, the CPU time still owed at its deadline (budget − used) —
 *    how much service came too late, since the rest of the job is dropped. Total and max.
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
#define POLL_NS        (5 * NSEC_PER_MSEC)   /* re-sample a raised task at least this often */
#define POLL_BLOCK_NS  (1 * NSEC_PER_MSEC)   /* ... and this often when it has been blocking */
#define BLOCK_MEMORY   (50 * NSEC_PER_MSEC)  /* how long "has been blocking" lasts */
#define MAX_SLEEP      (1 * NSEC_PER_SEC)
#define COMP_MAX       (300 * NSEC_PER_USEC) /* largest wake-latency compensation */
#define COMP_SLICE_DIV 8 /* ... and at most slice / this: a short slice keeps most of itself */
#define LAT_SAMPLE_MAX (1 * NSEC_PER_MSEC)  /* one late wake counts at most this much */
#define MAX_CHAIN      (VS_PRIO_RAISED - 1) /* FIFO 98 down to 2 */
#define WIN_COST_DIV   32 /* scheduler cost allowed in a job with no slack: D / this */
#define STACK_SIZE     (256 * 1024)

struct disp {
	struct sched *s;
	int idx; /* index in cfg.cpus */
	int cpu;
	int cap; /* capacity of jobs[], chain[], rank[]: cfg.max_tasks */
	struct edf_job *jobs;
	int *chain;      /* task indexes raised, EDF order */
	int *rank;       /* per task index: position in chain, -1 if parked */
	uint64_t *delta; /* per task index: CPU ns consumed since the last sample */
	pid_t primary;
	int chain_len;
	mono_ns applied_at;               /* end of the previous iteration */
	mono_ns idle_seen_at;             /* last time raised tasks left the CPU idle */
	uint64_t lat;                     /* EWMA of how late timed wake-ups are, ns */
	uint64_t lat_max;                 /* latest timed wake-up seen, ns (logged at stop) */
	uint64_t late_1ms;                /* timed wake-ups more than 1 ms late */
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

static void acct_add(_Atomic uint64_t *c, uint64_t v)
{
	atomic_fetch_add_explicit(c, v, memory_order_relaxed);
}

static void acct_max(_Atomic uint64_t *c, uint64_t v)
{
	/* Single writer (this dispatcher): load + store is enough. */
	if (v > atomic_load_explicit(c, memory_order_relaxed))
		atomic_store_explicit(c, v, memory_order_relaxed);
}

static void acct_miss(struct task *t, uint64_t owed, uint64_t n)
{
	acct_add(&t->acct.misses, n);
	acct_add(&t->acct.lateness_total_ns, owed * n);
	acct_max(&t->acct.lateness_max_ns, owed);
}

/*
 * Ends the current job of a window at its deadline: a period, and a miss if it was short by
 * more than thr (the "used up" threshold) and did not block. CPU time the window could not
 * offer because of the scheduler itself — the job started after its release (wake-up
 * latency) and vsched's own work inside the window (D / WIN_COST_DIV) — beyond the job's
 * slack (deadline - slice), at most LAT_SAMPLE_MAX, is not counted as owed: a full window
 * (slice = deadline) would otherwise miss by that much in every job. With slack to spare
 * (slice < deadline - latency - D/32) nothing changes.
 */
static void job_close(struct task *t, struct win_run *wr, uint64_t slack, uint64_t thr)
{
	uint64_t owed = wr->budget > wr->used ? wr->budget - wr->used : 0;

	if (wr->first_raise && mono_before(wr->release, wr->first_raise)) {
		uint64_t delay = wr->first_raise - wr->release;
		/*
		 * Plus the scheduler's own cost inside the window (its polls at FIFO 99, the
		 * stop/continue, the late wake at the deadline): about 1 % of a window here,
		 * measured up to 0.4 ms in a 30 ms full window. Allowed up to D / 32.
		 */
		uint64_t cost = (wr->deadline - wr->release) / WIN_COST_DIV;
		uint64_t lost = delay + cost > slack ? delay + cost - slack : 0;

		if (lost > LAT_SAMPLE_MAX)
			lost = LAT_SAMPLE_MAX;
		owed = owed > lost ? owed - lost : 0;
	}
	acct_add(&t->acct.periods, 1);
	if (owed > thr && !wr->blocked_in_job && !atomic_load(&t->exited))
		acct_miss(t, owed, 1);
	wr->closed = true;
}

/*
 * (Re)builds the job containing now for window r (new task, changed reservation, moved
 * epoch). Inside the window the budget is prorated to what is left of it.
 */
static void job_build(struct win_run *wr, const struct vsp_resv *r, mono_ns epoch, mono_ns now)
{
	struct edf_job j;

	edf_window(r, epoch, now, &j);
	wr->release = j.release;
	wr->deadline = j.deadline;
	wr->next_release = j.next_release;
	wr->used = 0;
	wr->blocked_in_job = false;
	wr->closed = false;
	wr->first_raise = 0;
	if (mono_before(now, j.release)) {
		wr->budget = r->slice;
	} else if (mono_before(now, j.deadline)) {
		double left = (double)(j.deadline - now) / (double)r->deadline;
		wr->budget = (uint64_t)((double)r->slice * (left < 1 ? left : 1));
	} else {
		wr->budget = 0;
		wr->closed = true; /* between deadline and next release: nothing owed */
	}
}

/* Opens the window's job released at or before now, accounting for any job skipped. */
static void job_next(struct task *t, struct win_run *wr, const struct vsp_resv *r, mono_ns epoch,
                     mono_ns now, uint64_t thr)
{
	uint64_t debt = 0;
	struct edf_job j;

	edf_window(r, epoch, now, &j);
	/*
	 * A job that ran past its budget (the dispatcher woke late) pays the excess back from
	 * the next one, at most one slice: over many periods the task gets exactly
	 * slice/period, not slice/period plus the wake-up latency.
	 */
	if (wr->used > wr->budget)
		debt = wr->used - wr->budget;
	if (debt > r->slice)
		debt = r->slice;
	if (mono_before(wr->next_release, j.release)) {
		/* The dispatcher was held off for whole periods: those jobs got nothing. */
		uint64_t skipped = (j.release - wr->next_release) / r->period;
		acct_add(&t->acct.periods, skipped);
		if (!atomic_load(&t->exited))
			acct_miss(t, r->slice, skipped);
		debt = 0;
	}
	wr->release = j.release;
	wr->deadline = j.deadline;
	wr->next_release = j.next_release;
	wr->budget = r->slice - debt;
	wr->used = 0;
	wr->blocked_in_job = false;
	wr->closed = false;
	wr->first_raise = 0;
	if (!mono_before(now, wr->deadline))
		job_close(t, wr, r->deadline - r->slice, thr);
}

/* One scheduling decision for the CPU; returns when to wake up next. Under rcu_read_lock. */
static mono_ns dispatch_once(struct disp *d, mono_ns now)
{
	struct sched *s = d->s;
	struct cpu_table *ct = rcu_dereference(s->table[d->idx]);
	mono_ns epoch = atomic_load(&s->epoch);
	int n = ct->n < d->cap ? ct->n : d->cap;
	uint64_t cpu_sum = 0;
	int nraised = 0, sel, len = 0;
	bool idle = false;
	/*
	 * Wake-up latency compensation: a budget end is slept to lat early, and a budget with
	 * at most thr left counts as used up. A task then runs budget - lat + (actual latency)
	 * per job: its budget on average, instead of budget + latency. (comp: per task, at
	 * most slice / COMP_SLICE_DIV, see below.)
	 */
	uint64_t comp_cpu = d->lat < COMP_MAX ? d->lat : COMP_MAX;

	/* sched_add keeps every CPU's table within max_tasks, the size of our arrays. */
	assert(ct->n <= d->cap);

	/* 1. Sample raised tasks: budget = CPU time actually consumed. */
	for (int i = 0; i < n; i++) {
		struct task *t = ct->task[i];
		struct task_run *run = &t->run;
		uint64_t c, delta;

		d->delta[i] = 0;
		if (!run->raised)
			continue;
		nraised++;
		c = task_cputime(t);
		if (c == 0) /* clock gone: the process exited */
			continue;
		delta = c > run->cpu_at_raise ? c - run->cpu_at_raise : 0;
		run->cpu_at_raise = c;
		run->wall_at_raise = now;
		/* charged to the window it was raised for */
		run->win[run->cur].used += delta;
		acct_add(&t->acct.cpu_ns, delta);
		d->delta[i] = delta;
		cpu_sum += delta;
	}
	/*
	 * Every raised task has been raised, at its prio, since the previous iteration ended.
	 * A raised task blocked if the CPU was clearly not used by it or by the raised tasks
	 * above it (wall − their CPU > 20% of wall + 100 µs): nothing kept it from running but
	 * itself. If that holds for all of them together, the CPU went idle: grow the chain.
	 */
	if (nraised && d->started && mono_before(d->applied_at, now)) {
		uint64_t wall = now - d->applied_at, slack = wall / 5 + BLOCK_SLACK;

		idle = wall > cpu_sum + slack;
		for (int i = 0; i < n; i++) {
			struct task_run *run = &ct->task[i]->run;
			uint64_t above = 0;

			if (!run->raised)
				continue;
			for (int k = 0; k < n; k++)
				if (ct->task[k]->run.raised && ct->task[k]->run.prio >= run->prio)
					above += d->delta[k];
			if (wall > above + slack)
				run->win[run->cur].blocked_in_job = true;
		}
	}
	if (idle)
		d->idle_seen_at = now;

	/* 2. Jobs: close at the deadline, open at the release, rebuild on a change. */
	for (int i = 0; i < n; i++) {
		struct task *t = ct->task[i];
		const struct task_resv *rv = rcu_dereference(t->resv);
		struct task_run *run = &t->run;
		struct edf_job wj[VSP_MAX_WINDOWS];
		bool rebuild = !run->started || run->gen != rv->gen || run->epoch != epoch;
		int nw = (int)rv->n, cur;

		if (rebuild && run->started && run->gen != rv->gen &&
		    mono_before(rv->published_at, now)) {
			uint64_t dt = now - rv->published_at;
			d->chg_n++;
			d->chg_sum += dt;
			if (dt > d->chg_max)
				d->chg_max = dt;
		}
		for (int w = 0; w < nw; w++) {
			const struct vsp_resv *r = &rv->w[w];
			struct win_run *wr = &run->win[w];
			/*
			 * Per window: comp <= slice / COMP_SLICE_DIV. With the CPU-wide latency
			 * alone (50-140 us here) a 300 us slice would count as used up after
			 * 160-250 us, so a job that needs 80 % of its slice could never finish in
			 * it and would be stopped and continued every period. The latency not
			 * compensated makes a job overrun; job_next() takes that from the next
			 * budget, so the long-run share stays slice / period.
			 */
			uint64_t comp = comp_cpu < r->slice / COMP_SLICE_DIV
			                    ? comp_cpu
			                    : r->slice / COMP_SLICE_DIV;
			uint64_t thr = comp > EPS_NS ? comp : EPS_NS;

			if (rebuild) {
				job_build(wr, r, epoch, now);
			} else {
				if (!wr->closed && !mono_before(now, wr->deadline))
					job_close(t, wr, r->deadline - r->slice, thr);
				if (!mono_before(now, wr->next_release))
					job_next(t, wr, r, epoch, now, thr);
			}
			wj[w].release = wr->release;
			wj[w].deadline = wr->deadline;
			wj[w].next_release = wr->next_release;
			/*
			 * At most thr left counts as used up, for good: the job is served,
			 * whatever thr is by its deadline.
			 */
			if (!wr->closed && wr->budget > wr->used && wr->budget - wr->used <= thr)
				wr->used = wr->budget;
			/* remaining > 0 (eligible) iff more than thr is left; it ends comp early.
			 */
			wj[w].remaining = !wr->closed && wr->budget > wr->used + thr
			                      ? wr->budget - wr->used - comp
			                      : 0;
			wj[w].runnable = !atomic_load(&t->exited);
		}
		if (rebuild) {
			run->gen = rv->gen;
			run->epoch = epoch;
			run->started = true;
		}
		/* The task's EDF entry: its eligible window with the earliest deadline. */
		if (nw == 1) {
			d->jobs[i] = wj[0];
			cur = 0;
		} else {
			cur = edf_task_entry(wj, nw, now, &d->jobs[i]);
		}
		/*
		 * The window a raised task is charged to. Kept while none is eligible (its
		 * last window's CPU goes there until it is parked).
		 */
		if (cur >= 0)
			run->cur = cur;
		else if (run->cur >= nw)
			run->cur = 0;
	}

	/* 3. The chain: EDF order, as long as the tasks before have been blocking. */
	sel = edf_select(d->jobs, n, now);
	if (sel < 0 || ct->task[sel]->pid != d->primary) {
		d->primary = sel >= 0 ? ct->task[sel]->pid : 0;
		d->chain_len = 1;
	} else if (idle) {
		d->chain_len++;
	}
	for (int i = 0; i < n; i++)
		d->rank[i] = -1;
	if (sel >= 0) {
		d->chain[len] = sel;
		d->rank[sel] = len++;
		while (len < d->chain_len && len < MAX_CHAIN) {
			int nx;
			for (int k = 0; k < len; k++)
				d->jobs[d->chain[k]].runnable = false;
			nx = edf_select(d->jobs, n, now);
			for (int k = 0; k < len; k++)
				d->jobs[d->chain[k]].runnable = true;
			if (nx < 0)
				break;
			assert(d->rank[nx] < 0);
			d->chain[len] = nx;
			d->rank[nx] = len++;
		}
	}
	d->chain_len = len > 0 ? len : 1;

	/* 4. Apply: park first, so two tasks never both run at FIFO 98 here; then raise. */
	for (int i = 0; i < n; i++) {
		struct task *t = ct->task[i];
		const struct task_threads *th = rcu_dereference(t->threads);
		struct task_run *run = &t->run;
		bool full = th->gen != run->applied_threads;
		int rc;

		if (d->rank[i] >= 0 || atomic_load(&t->exited) || (!run->raised && !full))
			continue;
		rc = task_park(t, th, full);
		if (rc == -ESRCH)
			atomic_store(&t->exited, true);
		run->raised = false;
		run->applied_threads = th->gen;
		if (full)
			run->prio = t->park == VSP_PARK_STOP ? VS_PRIO_RAISED : 0;
	}
	for (int k = 0; k < len; k++) {
		struct task *t = ct->task[d->chain[k]];
		const struct task_threads *th = rcu_dereference(t->threads);
		struct task_run *run = &t->run;
		int prio = VS_PRIO_RAISED - k;
		bool full = th->gen != run->applied_threads || run->prio != prio;
		int rc;

		assert(prio >= 1 && prio <= VS_PRIO_RAISED);
		if (atomic_load(&t->exited) || (run->raised && !full))
			continue;
		/*
		 * Budget baseline. A stopped task's clock stood still since its last sample
		 * (taken just before it was parked), so that sample is the baseline and the
		 * little it ran after SIGSTOP is charged too; an idle-parked task may have run
		 * at SCHED_IDLE meanwhile, which is free: read its clock now.
		 */
		if (!run->raised && t->park == VSP_PARK_IDLE) {
			uint64_t c = task_cputime(t);
			if (c)
				run->cpu_at_raise = c;
		}
		if (!run->raised)
			run->wall_at_raise = now;
		rc = task_raise(t, th, prio, full);
		if (rc == -ESRCH)
			atomic_store(&t->exited, true);
		run->raised = true;
		run->prio = prio;
		/* when the job first got its CPU (job_close: start latency) */
		if (run->win[run->cur].first_raise == 0)
			run->win[run->cur].first_raise = mono_now();
		run->applied_threads = th->gen;
	}

	/* 5. Next event: release, deadline, budget end of any raised task, or a re-sample. */
	mono_ns next = n > 0 ? edf_next_event(d->jobs, n, now, sel) : now + MAX_SLEEP;
	for (int k = 1; k < len; k++)
		next = mono_min(next, now + d->jobs[d->chain[k]].remaining);
	if (len > 0) {
		bool blocking = mono_before(now, d->idle_seen_at + BLOCK_MEMORY);
		next = mono_min(next, now + (blocking ? POLL_BLOCK_NS : POLL_NS));
	}
	if (!mono_before(now, next))
		next = now + EPS_NS; /* never spin */
	next = mono_min(next, now + MAX_SLEEP);
	d->applied_at = mono_now();
	d->started = true;
	return next;
}

static void *dispatcher(void *arg)
{
	struct disp *d = arg;
	struct sched *s = d->s;

	rcu_register_thread();
	while (!atomic_load(&s->stopping)) {
		/*
		 * Load the futex word before reading any state: a dispatch_wake() after this
		 * load changes the word, so the FUTEX_WAIT below returns at once instead of
		 * sleeping through the change. FUTEX_WAIT_BITSET with FUTEX_BITSET_MATCH_ANY
		 * takes an absolute CLOCK_MONOTONIC timeout: it is the wakeable, race-free form
		 * of clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME).
		 */
		uint32_t seq = atomic_load(&s->wake_seq[d->idx]);
		mono_ns next;

		rcu_read_lock();
		next = dispatch_once(d, mono_now());
		rcu_read_unlock();

		struct timespec ts = ns_to_ts(next);
		if (futex(&s->wake_seq[d->idx], FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, seq, &ts,
		          FUTEX_BITSET_MATCH_ANY) < 0 &&
		    errno == ETIMEDOUT) {
			mono_ns late = mono_now() - next;
			if ((int64_t)late < 0)
				late = 0;
			if (late > d->lat_max)
				d->lat_max = late;
			d->late_1ms += late > NSEC_PER_MSEC;
			if (late > LAT_SAMPLE_MAX)
				late = LAT_SAMPLE_MAX;
			/* EWMA, weight 1/8 (signed step: the estimate may go down). */
			d->lat =
			    (uint64_t)((int64_t)d->lat + ((int64_t)late - (int64_t)d->lat) / 8);
		}
	}
	rcu_unregister_thread();
	return NULL;
}

int dispatch_start(struct sched *s)
{
	sigset_t all, old;
	int rc = 0;

	assert(s->ndisp == 0);
	atomic_store(&s->stopping, false);
	s->dctx = calloc((size_t)s->cfg.ncpus, sizeof(*s->dctx));
	if (!s->dctx)
		fatal("dispatch_start: out of memory");
	/* Dispatchers take no signals: they are the main thread's business. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (int i = 0; i < s->cfg.ncpus; i++) {
		struct disp *d = &s->dctx[i];
		struct sched_param sp = {.sched_priority = VS_PRIO_DISPATCH};
		pthread_attr_t attr;
		cpu_set_t set;

		d->s = s;
		d->idx = i;
		d->cpu = s->cfg.cpus[i];
		d->cap = s->cfg.max_tasks > 0 ? s->cfg.max_tasks : 1;
		d->chain_len = 1;
		d->jobs = calloc((size_t)d->cap, sizeof(*d->jobs));
		d->chain = calloc((size_t)d->cap, sizeof(*d->chain));
		d->rank = calloc((size_t)d->cap, sizeof(*d->rank));
		d->delta = calloc((size_t)d->cap, sizeof(*d->delta));
		if (!d->jobs || !d->chain || !d->rank || !d->delta)
			fatal("dispatch_start: out of memory");
		/* Touch everything now: mlockall'ed, no page fault in the loop. */
		memset(d->jobs, 0, (size_t)d->cap * sizeof(*d->jobs));

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
			break;
		}
		char name[16];
		snprintf(name, sizeof(name), "vsched-cpu%d", d->cpu);
		pthread_setname_np(s->disp[i], name);
		s->ndisp++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		dispatch_stop(s);
		return -1;
	}
	log_info("%d dispatchers running at SCHED_FIFO %d", s->ndisp, VS_PRIO_DISPATCH);
	return 0;
}

void dispatch_stop(struct sched *s)
{
	atomic_store(&s->stopping, true);
	for (int i = 0; i < s->ndisp; i++)
		dispatch_wake(s, i);
	for (int i = 0; i < s->ndisp; i++)
		pthread_join(s->disp[i], NULL);
	s->ndisp = 0;
	if (s->dctx) {
		for (int i = 0; i < s->cfg.ncpus; i++) {
			if (s->dctx[i].jobs)
				log_info(
				    "cpu %d: timer wake-up latency %.1f us (EWMA), max %.1f us, "
				    "%llu wake-ups over 1 ms late",
				    s->dctx[i].cpu, (double)s->dctx[i].lat / 1e3,
				    (double)s->dctx[i].lat_max / 1e3,
				    (unsigned long long)s->dctx[i].late_1ms);
			if (s->dctx[i].chg_n)
				log_info("cpu %d: %llu reservation changes seen by the dispatcher "
				         "%.1f us after publication on average, %.1f us at most",
				         s->dctx[i].cpu, (unsigned long long)s->dctx[i].chg_n,
				         (double)s->dctx[i].chg_sum / (double)s->dctx[i].chg_n /
				             1e3,
				         (double)s->dctx[i].chg_max / 1e3);
			free(s->dctx[i].jobs);
			free(s->dctx[i].chain);
			free(s->dctx[i].rank);
			free(s->dctx[i].delta);
		}
		free(s->dctx);
		s->dctx = NULL;
	}
}
