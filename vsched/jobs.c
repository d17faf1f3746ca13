/*
 * vsched/jobs.c: the job sequence of one reservation window — when jobs are released, what
 * they are owed, when they end, and how they are accounted. Pure but for the task's
 * accounting counters (relaxed atomics): no clock reads, no syscalls; the dispatcher passes
 * the time and the CPU time it measured (dispatch.c).
 *
 * Two anchors (enum vsp_anchor):
 *  - epoch (DESIGN.md §2): job k is released at epoch + phase + k·T and owed slice by its
 *    deadline, release + D. A job (re)built inside its window (task added, reservation
 *    changed, epoch moved) is owed slice·(deadline − now)/D: density is kept.
 *  - wakeup (CBS, Abeni & Buttazzo 1998; the rule SCHED_DEADLINE uses): a job is released
 *    when the task runs again after its last job ended — the wake-up t — with deadline
 *    t + D and slice owed. A job that used its whole budget is throttled until release + T
 *    and then replenished (next job released there, or now if that is more than a period
 *    ago: lost time is not paid back as a burst). A job whose deadline passes with budget
 *    left ends (the task blocked, or the CPU was overloaded) and the window turns dormant:
 *    no job until the task uses CPU again. Bandwidth: jobs are released at least T apart,
 *    each gets at most slice (minus the previous job's overrun), and its CPU is used after
 *    its release (a dormant task's first CPU time is counted in the job it starts) — so the
 *    task never receives more than slice per period, however often it wakes.
 *    The wake-up is seen as CPU time used while dormant: t = now − used − wake_lat, the
 *    latest time the task can have started running less the CPU's measured wake-up
 *    latency (at most slice/8) — SCHED_DEADLINE releases at the wake-up itself, before the
 *    task runs. Released later, a periodic task's next wake-up fell inside its last job,
 *    unseen by the dispatcher, and ran on that job's leftover (bench/RESULTS.md, session
 *    29). Never before the window went dormant, so releases stay a period apart.
 *    A task that slept and wakes inside its job (the dispatcher saw it asleep: ctx
 *    woke_ran) starts a new job there when its budget left cannot be used by the
 *    deadline at the reserved rate (cbs_wake): a periodic task that sleeps between jobs
 *    gets a whole slice from each wake-up, not the rest of the last one.
 *
 * Overrun allowance (job_ctx overrun, the wake-up anchor of a task whose budget ends the
 * dispatcher times): a job may run that much past its budget, after every job with budget
 * left, and its next job's budget is short by what it ran past. So a periodic job whose
 * demand now and then exceeds its slice finishes in its own period and the next, shorter
 * job (it needed less) pays it back, as on SCHED_DEADLINE, whose budget is enforced at the
 * scheduler tick on kernels without HRTICK: a 300 us / 1 ms task ran 0.3-4 ms at a time
 * there (HZ 250). Without it such a job was held to its next release: a miss, and, for a
 * task on an absolute timer, the next jobs late too. Bandwidth: every job still ends with
 * at most slice plus the allowance, and debt carries the excess, so over any run the task
 * gets slice/period plus at most one slice and one allowance, and at most two slices and
 * one allowance in any period.
 *
 * Accounting, per job at its deadline: periods += 1; a miss when it ended owing more than
 * thr although the task never blocked while it could run (a blocked task declined its CPU);
 * lateness: the CPU time still owed then. CPU a job used beyond its budget (the stop came
 * late) is taken from the next job's budget, at most one slice, so the long-run share is
 * slice/period.
 */
#include "vsched.h"

#define JOB_COST_DIV 32 /* scheduler cost allowed in a job with no slack: D / this */
#define JOB_LOST_MAX (1 * NSEC_PER_MSEC) /* start latency forgiven per job, at most */
#define JOB_FAR      (1ULL << 62)

static void acct_add(_Atomic uint64_t *c, uint64_t v)
{
	atomic_fetch_add_explicit(c, v, memory_order_relaxed);
}

static void acct_miss(struct task_acct *a, uint64_t owed, uint64_t n)
{
	acct_add(&a->misses, n);
	acct_add(&a->lateness_total_ns, owed * n);
	/* Single writer (the dispatcher of the task's CPU): load + store is enough. */
	if (owed > atomic_load_explicit(&a->lateness_max_ns, memory_order_relaxed))
		atomic_store_explicit(&a->lateness_max_ns, owed, memory_order_relaxed);
}

/*
 * Ends the current job at its deadline: a period, and a miss if it was short by more than
 * thr and did not block. CPU time the window could not offer because of the scheduler
 * itself — the job started after its release (wake-up latency) and vsched's own work
 * inside the window (D / JOB_COST_DIV) — beyond the job's slack (D − slice), at most
 * JOB_LOST_MAX, is not counted as owed: a full window (slice = D) would otherwise miss by
 * that much in every job.
 */
static void job_close(struct task_acct *a, struct win_run *wr, const struct vsp_resv *r,
                      const struct job_ctx *c)
{
	uint64_t owed = wr->budget > wr->used ? wr->budget - wr->used : 0;
	uint64_t slack = r->deadline - r->slice;

	if (wr->first_raise && mono_before(wr->release, wr->first_raise)) {
		uint64_t delay = wr->first_raise - wr->release;
		uint64_t cost = (wr->deadline - wr->release) / JOB_COST_DIV;
		uint64_t lost = delay + cost > slack ? delay + cost - slack : 0;

		if (lost > JOB_LOST_MAX)
			lost = JOB_LOST_MAX;
		owed = owed > lost ? owed - lost : 0;
	}
	acct_add(&a->periods, 1);
	if (owed > c->thr && !wr->blocked_in_job && !c->exited)
		acct_miss(a, owed, 1);
	wr->closed = true;
}

/* Starts a job released at rel, owed budget. */
static void job_open(struct win_run *wr, const struct vsp_resv *r, mono_ns rel, uint64_t budget)
{
	wr->release = rel;
	wr->deadline = rel + r->deadline;
	wr->next_release = rel + r->period;
	wr->budget = budget;
	wr->used = 0;
	wr->blocked_in_job = false;
	wr->closed = false;
	wr->dormant = false;
	wr->first_raise = 0;
}

/*
 * The overrun of the job that ended, to be taken from the next one (at most a slice). For a
 * task with a perf enforcer it carries about the enforcer's margin from job to job, and its
 * counter's next overflow already lies where the next budget plus that margin ends, so the
 * enforcer needs no re-arming (enf_plan.c).
 */
static uint64_t job_debt(const struct win_run *wr, const struct vsp_resv *r)
{
	uint64_t debt = wr->used > wr->budget ? wr->used - wr->budget : 0;

	return debt > r->slice ? r->slice : debt;
}

/*
 * Epoch anchor: (re)builds the job holding now; the budget is prorated inside the window
 * (density kept), and is at most the slice less the CPU the job it replaces used, when that
 * job was released inside the new window (a changed reservation, a moved epoch): all of its
 * CPU time then lies in the new window, and a change must not give a window more than its
 * slice. Without that cap a task that had used its slice got most of a new one at every
 * change — measured: a controller stepping U every few seconds ran a job 1 point above what
 * it measured between the changes.
 */
static void epoch_build(struct win_run *wr, const struct vsp_resv *r, const struct job_ctx *c)
{
	mono_ns old_release = wr->release;
	uint64_t old_used = wr->used;
	struct edf_job j;

	edf_window(r, c->epoch, c->now, &j);
	job_open(wr, r, j.release, r->slice);
	if (!mono_before(c->now, j.release) && mono_before(c->now, j.deadline)) {
		double left = (double)(j.deadline - c->now) / (double)r->deadline;
		wr->budget = (uint64_t)((double)r->slice * (left < 1 ? left : 1));
		if (!mono_before(old_release, j.release) && !mono_before(c->now, old_release)) {
			uint64_t rest = r->slice > old_used ? r->slice - old_used : 0;
			if (wr->budget > rest)
				wr->budget = rest;
		}
	} else if (!mono_before(c->now, j.deadline)) {
		wr->budget = 0;
		wr->closed = true; /* between deadline and next release: nothing owed */
	}
}

/* Epoch anchor: opens the job released at or before now, accounting for any job skipped. */
static void epoch_next(struct task_acct *a, struct win_run *wr, const struct vsp_resv *r,
                       const struct job_ctx *c)
{
	uint64_t debt = job_debt(wr, r);
	struct edf_job j;

	edf_window(r, c->epoch, c->now, &j);
	if (mono_before(wr->next_release, j.release)) {
		/* The dispatcher was held off for whole periods: those jobs got nothing. */
		uint64_t skipped = (j.release - wr->next_release) / r->period;
		acct_add(&a->periods, skipped);
		if (!c->exited)
			acct_miss(a, r->slice, skipped);
		debt = 0;
	}
	job_open(wr, r, j.release, r->slice - debt);
	if (!mono_before(c->now, wr->deadline))
		job_close(a, wr, r, c);
}

static void go_dormant(struct win_run *wr, const struct vsp_resv *r, mono_ns now)
{
	job_open(wr, r, now, r->slice);
	wr->dormant = true;
	wr->closed = true;
}

/*
 * The CBS wake-up rule (SCHED_DEADLINE's dl_entity_overflow): a task that wakes with budget
 * left starts a new job at its wake-up t when its current job is over (t past its deadline)
 * or the budget left could not be used by the deadline at the reserved rate
 * (left / (deadline − t) > slice / period). Then t is returned, else 0. Bandwidth: when it
 * overflows, the job used less than slice·(t − release)/period before t, so a new job of
 * slice from t keeps every interval from the old release within slice/period. (t is the
 * wake-up less wake_lat, as for a dormant task: CPU the task used after t and before it
 * slept is counted in the old job, which only makes the test stricter.)
 */
static mono_ns cbs_wake(const struct win_run *wr, const struct vsp_resv *r, const struct job_ctx *c)
{
	mono_ns t = c->now - c->woke_ran - c->wake_lat;
	uint64_t before = wr->used > c->woke_ran ? wr->used - c->woke_ran : 0;
	uint64_t left = wr->budget > before ? wr->budget - before : 0;

	if (c->woke_ran == 0 || wr->closed || left <= c->thr)
		return 0; /* (closed and not dormant: spent, throttled until its next release) */
	if (mono_before(t, wr->release))
		t = wr->release;
	if (!mono_before(t, wr->deadline))
		return t;
	double need = (double)left * (double)r->period; /* left / (deadline − t) > slice / T */
	double rate = (double)(wr->deadline - t) * (double)r->slice;

	return need > rate ? t : 0;
}

/* Wake-up anchor (CBS), see the file comment. */
static void wakeup_update(struct task_acct *a, struct win_run *wr, const struct vsp_resv *r,
                          bool rebuild, const struct job_ctx *c)
{
	mono_ns woke;

	if (rebuild) {
		job_open(wr, r, c->now, r->slice); /* a new reservation: a job now */
		return;
	}
	if (wr->dormant) {
		if (wr->used == 0)
			return;
		/* It ran: released at its wake-up, now − used − wake_lat (see the file comment). */
		mono_ns t = c->now - wr->used - c->wake_lat;
		uint64_t used = wr->used;
		if (mono_before(t, wr->release)) /* (release = when it went dormant) */
			t = wr->release;
		job_open(wr, r, t, r->slice);
		wr->used = used;
		return;
	}
	woke = cbs_wake(wr, r, c);
	if (woke) {
		wr->blocked_in_job = true; /* it slept with budget left: declined, not missed */
		if (!wr->closed)
			job_close(a, wr, r, c);
		job_open(wr, r, woke, r->slice);
		wr->used = c->woke_ran;
		return;
	}
	bool spent = wr->used + c->thr >= wr->budget;
	if (!wr->closed && !mono_before(c->now, wr->deadline))
		job_close(a, wr, r, c);
	if (wr->closed && !spent) {
		/* Ended with budget left: it blocked (or was starved). No job until it runs. */
		go_dormant(wr, r, c->now);
		return;
	}
	if (spent && !mono_before(c->now, wr->next_release)) {
		/* Throttled until release + T: replenish, never as a burst for lost periods. */
		mono_ns rel = wr->next_release;
		uint64_t debt = job_debt(wr, r);
		if (!mono_before(c->now, rel + r->period))
			rel = c->now;
		if (!wr->closed)
			job_close(a, wr, r, c);
		job_open(wr, r, rel, r->slice - debt);
	}
}

void jobs_update(struct task_acct *a, struct win_run *wr, const struct vsp_resv *r, uint8_t anchor,
                 bool rebuild, const struct job_ctx *c)
{
	if (anchor == VSP_ANCHOR_WAKEUP) {
		wakeup_update(a, wr, r, rebuild, c);
		return;
	}
	if (rebuild) {
		epoch_build(wr, r, c);
		return;
	}
	if (!wr->closed && !mono_before(c->now, wr->deadline))
		job_close(a, wr, r, c);
	if (!mono_before(c->now, wr->next_release))
		epoch_next(a, wr, r, c);
}

void jobs_entry(struct win_run *wr, const struct job_ctx *c, struct edf_job *out)
{
	if (wr->dormant) {
		*out = (struct edf_job){.release = c->now + JOB_FAR,
		                        .deadline = c->now + JOB_FAR,
		                        .next_release = c->now + JOB_FAR,
		                        .runnable = !c->exited};
		return;
	}
	uint64_t limit = wr->budget + c->overrun;

	/* At most thr left counts as used up, for good: the job is served. */
	if (!wr->closed && wr->budget > wr->used && wr->budget - wr->used <= c->thr)
		wr->used = wr->budget;
	out->release = wr->release;
	out->deadline = wr->deadline;
	out->next_release = wr->next_release;
	/*
	 * Eligible iff more than thr is left of the budget and its overrun allowance; the end
	 * is comp early (wake latency). Past its budget a job runs only after those with budget
	 * left, and what it runs there is taken from its next job (job_debt).
	 */
	out->remaining = !wr->closed && limit > wr->used + c->thr ? limit - wr->used - c->comp : 0;
	out->spare = out->remaining > 0 && wr->used >= wr->budget;
	out->runnable = !c->exited;
}
