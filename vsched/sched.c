/*
 * vsched/sched.c: the task tables and the requests that change them (API thread only).
 *
 * Guarantees
 *  - Partitioned EDF admission (DESIGN.md §2; placement.c, admission.c): on every managed
 *    CPU the windows' processor demand fits what the CPU gives (every deadline met), and
 *    Σ slice / period <= s->cap, where s->cap = min(configured cap, kernel RT limit -
 *    reserve). A request that would break it is refused, naming the CPU, its load, the
 *    request and what does not fit, and nothing changes.
 *  - Every request validates fully before it changes anything; a failure after validation
 *    (pinning, parking) is undone (restore, untrack) before the refusal.
 *  - Every task is recorded with the watchdog before vsched changes anything on it, and
 *    forgotten only after it was restored or has exited.
 *  - Tables, reservations and thread lists are replaced as a whole and published with
 *    rcu_assign_pointer(); a removed task is touched (restored, freed) only after
 *    synchronize_rcu(), so no dispatcher still sees it. Old tables and reservations are
 *    freed with call_rcu(), keeping `set` off the grace-period wait.
 */
#include "vsched.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "log.h"

#define REFRESH_INTERVAL (20 * NSEC_PER_MSEC) /* thread-list rereads */
#define STOP_WARN_PERIOD (2 * NSEC_PER_MSEC)  /* see warn_stop_threads */

static void free_table_rcu(struct rcu_head *h)
{
	free(caa_container_of(h, struct cpu_table, rcu));
}

static void free_resv_rcu(struct rcu_head *h)
{
	free(caa_container_of(h, struct task_resv, rcu));
}

static struct cpu_table *table_new(int n)
{
	struct cpu_table *ct = calloc(1, sizeof(*ct) + (size_t)n * sizeof(struct task *));

	if (!ct)
		fatal("sched: out of memory");
	ct->n = n;
	return ct;
}

/* Publishes nt as the table of CPU index idx; the old one is freed after a grace period. */
static void table_publish(struct sched *s, int idx, struct cpu_table *nt)
{
	struct cpu_table *old = s->table[idx];
	double load = 0, util = 0;

	for (int i = 0; i < nt->n; i++) {
		const struct task_resv *rv = nt->task[i]->resv;
		load += admission_density_n(rv->w, rv->n);
		util += admission_util_n(rv->w, rv->n);
	}
	nt->load = load;
	nt->util = util;
	rcu_assign_pointer(s->table[idx], nt);
	if (old)
		call_rcu(&old->rcu, free_table_rcu);
}

/* The task managing pid, or NULL. API thread: the tables are its own. */
static struct task *find_task(struct sched *s, pid_t pid)
{
	for (int c = 0; c < s->cfg.ncpus; c++) {
		struct cpu_table *ct = s->table[c];
		for (int i = 0; i < ct->n; i++)
			if (ct->task[i]->pid == pid)
				return ct->task[i];
	}
	return NULL;
}

static const char *dur(uint64_t ns, char *buf, size_t len)
{
	return duration_format(ns, buf, len);
}

int sched_init(struct sched *s, const struct vsched_config *cfg, char *why, size_t whylen)
{
	double limit;
	uint64_t rt_period;

	memset(s, 0, sizeof(*s));
	s->cfg = *cfg;
	if (cfg->ncpus < 1 || cfg->ncpus > VS_MAX_CPUS) {
		snprintf(why, whylen, "cpus: %d managed CPUs, need 1..%d", cfg->ncpus, VS_MAX_CPUS);
		return -1;
	}
	if (admission_read_rt_limit("/proc/sys/kernel/sched_rt_runtime_us",
	                            "/proc/sys/kernel/sched_rt_period_us", &limit, &rt_period, why,
	                            whylen) < 0)
		return -1;
	s->cap = admission_cap(cfg->utilization_cap, limit, cfg->reserve);
	s->supply.cap = s->cap;
	s->supply.burst = (limit - s->cap) * (double)rt_period; /* admission.c */
	if (!(s->cap > 0)) {
		snprintf(why, whylen,
		         "no capacity: utilization_cap %.1f%%, RT limit %.1f%%, reserve %.1f%%",
		         100 * cfg->utilization_cap, 100 * limit, 100 * cfg->reserve);
		return -1;
	}
	atomic_store(&s->epoch, mono_now());
	for (int i = 0; i < cfg->ncpus; i++)
		s->table[i] = table_new(0);
	rcu_register_thread();
	s->rcu_registered = true;
	log_info("effective cap %.1f%% per CPU (configured %.1f%%, RT limit %.1f%%, reserve "
	         "%.1f%%)",
	         100 * s->cap, 100 * cfg->utilization_cap, 100 * limit, 100 * cfg->reserve);
	return 0;
}

/*
 * Checks the windows of a request against the protocol rules and the configured minimums,
 * resolving deadline 0 to the period. Fills w[] and *n.
 */
static int check_windows(const struct sched *s, const struct vsp_request *req, struct vsp_resv *w,
                         unsigned *n, char *why, size_t whylen)
{
	char a[32], b[32], pre[32] = "";

	if (req->nwin > VSP_MAX_WINDOWS) {
		snprintf(why, whylen, "%u windows, expected 1..%d", req->nwin, VSP_MAX_WINDOWS);
		return -EINVAL;
	}
	*n = vsp_request_windows(req, w);
	for (unsigned i = 0; i < *n; i++)
		if (w[i].deadline == 0)
			w[i].deadline = w[i].period;
	if (vsp_check_windows(w, *n, why, whylen) < 0)
		return -EINVAL;
	for (unsigned i = 0; i < *n; i++) {
		if (*n > 1)
			snprintf(pre, sizeof(pre), "window %u: ", i + 1);
		if (w[i].period < s->cfg.min_period) {
			snprintf(why, whylen, "%speriod %s below min_period %s", pre,
			         dur(w[i].period, a, sizeof(a)),
			         dur(s->cfg.min_period, b, sizeof(b)));
			return -EINVAL;
		}
		if (w[i].slice < s->cfg.min_slice) {
			snprintf(why, whylen, "%sslice %s below min_slice %s", pre,
			         dur(w[i].slice, a, sizeof(a)),
			         dur(s->cfg.min_slice, b, sizeof(b)));
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * Every SIGSTOP/SIGCONT wakes each thread of the process, and that CPU is charged to the
 * reservation (measured: ~70 us per stop/continue cycle for rt-app's 2 threads, one of them
 * asleep). Below STOP_WARN_PERIOD that is a large part of a slice: a job that overruns once
 * keeps overrunning (bench/RESULTS.md). Tells the operator, once when the task is added and
 * once when it grows from one thread to more; `idle` parking has no such cost.
 */
static void warn_stop_threads(const struct task *t)
{
	char a[32];

	if (t->park != VSP_PARK_STOP || t->threads->n < 2 ||
	    t->resv->w[0].period >= STOP_WARN_PERIOD)
		return;
	log_warnx("pid %d: %u threads parked with `stop` at period %s: every park wakes each "
	          "thread at the task's cost, so short jobs may miss; use park idle below 2 ms",
	          (int)t->pid, t->threads->n, dur(t->resv->w[0].period, a, sizeof(a)));
}

int sched_add(struct sched *s, const struct vsp_request *req, char *why, size_t whylen)
{
	struct vsp_resv w[VSP_MAX_WINDOWS];
	unsigned nw;
	double need;
	struct cpu_table *ct, *nt;
	struct task *t = NULL, *other;
	int idx, rc;

	rc = check_windows(s, req, w, &nw, why, whylen);
	if (rc)
		return rc;
	if (req->park != VSP_PARK_STOP && req->park != VSP_PARK_IDLE &&
	    req->park != VSP_PARK_DEFAULT) {
		snprintf(why, whylen, "park %u: must be stop or idle", req->park);
		return -EINVAL;
	}
	other = find_task(s, req->pid);
	if (other) {
		snprintf(why, whylen, "pid %d: already managed on cpu %d", (int)req->pid,
		         other->cpu);
		return -EEXIST;
	}
	if (s->ntasks >= s->cfg.max_tasks) {
		snprintf(why, whylen, "max_tasks %d reached", s->cfg.max_tasks);
		return -ENOSPC;
	}
	need = admission_util_n(w, nw);
	idx = placement_choose(s, req->cpu, NULL, w, nw, why, whylen);
	if (idx < 0)
		return idx;
	assert(admission_fits(s->table[idx]->util, need, s->cap));

	rc = task_open(req->pid, &t, why, whylen);
	if (rc)
		return rc;
	t->cpu = s->cfg.cpus[idx];
	t->cpu_idx = idx;
	t->park = req->park == VSP_PARK_DEFAULT ? s->cfg.park : req->park;
	t->added_at = mono_now();
	t->resv = calloc(1, sizeof(*t->resv));
	if (!t->resv)
		fatal("sched_add: out of memory");
	t->resv->n = nw;
	memcpy(t->resv->w, w, sizeof(w));
	t->resv->gen = 1;
	t->resv->published_at = mono_now();

	/* Validation done. From here every change is undone on failure. */
	if (s->wd) {
		t->wd_slot = watchdog_track(s->wd, t->pid, t->starttime, &t->saved);
		if (t->wd_slot < 0) {
			snprintf(why, whylen, "pid %d: watchdog table full", (int)t->pid);
			task_close(&t);
			return -ENOSPC;
		}
	}
	rc = task_pin(t, t->cpu);
	if (!rc) {
		/* Parked until its dispatcher raises it; a stop task sits at FIFO 98 for good. */
		rc = task_park(t, t->threads, true);
		t->run.applied_threads = t->threads->gen;
		t->run.cpu_at_raise = task_cputime(t); /* budget baseline (dispatch.c) */
		t->run.prio = t->park == VSP_PARK_STOP ? VS_PRIO_RAISED : 0;
	}
	if (rc) {
		snprintf(why, whylen, "pid %d: cannot take over: %s", (int)t->pid,
		         rc == -ESRCH ? "no such process" : strerror(-rc));
		task_restore(t);
		if (t->wd_slot >= 0)
			watchdog_untrack(s->wd, t->wd_slot);
		task_close(&t);
		return rc;
	}

	ct = s->table[idx];
	nt = table_new(ct->n + 1);
	memcpy(nt->task, ct->task, (size_t)ct->n * sizeof(struct task *));
	nt->task[ct->n] = t;
	table_publish(s, idx, nt);
	/* The invariant admission keeps: Σ slice/period <= cap on this CPU (and the
	 * processor-demand test, placement.c). */
	assert(nt->util <= s->cap + 1e-6);
	s->ntasks++;
	dispatch_wake(s, idx);

	warn_stop_threads(t);

	char a[32], b[32];
	log_debug("pid %d: added on cpu %d, period %s slice %s, %u window(s) (%.1f%%), park %s; "
	          "cpu %d utilisation %.1f%%",
	          (int)t->pid, t->cpu, dur(w[0].period, a, sizeof(a)),
	          dur(w[0].slice, b, sizeof(b)), nw, 100 * need, vsp_park_name(t->park), t->cpu,
	          100 * nt->util);
	return 0;
}

/* Table of CPU index idx without task t (not published). */
static struct cpu_table *table_without(const struct cpu_table *ct, const struct task *t)
{
	struct cpu_table *nt = table_new(ct->n - 1);
	int k = 0;

	for (int i = 0; i < ct->n; i++)
		if (ct->task[i] != t)
			nt->task[k++] = ct->task[i];
	assert(k == nt->n);
	return nt;
}

static struct cpu_table *table_with(const struct cpu_table *ct, struct task *t)
{
	struct cpu_table *nt = table_new(ct->n + 1);

	memcpy(nt->task, ct->task, (size_t)ct->n * sizeof(struct task *));
	nt->task[ct->n] = t;
	return nt;
}

/* The dispatcher-owned state of a task that no dispatcher sees, as sched_add sets it up. */
static void run_reset(struct task *t)
{
	memset(&t->run, 0, sizeof(t->run));
	t->run.applied_threads = t->threads->gen;
	t->run.cpu_at_raise = task_cputime(t);
	t->run.prio = t->park == VSP_PARK_STOP ? VS_PRIO_RAISED : 0;
}

/*
 * Moves task t to CPU index to with reservation nr (`set` whose windows no longer fit on
 * its CPU). The task leaves its table first; after a grace period no dispatcher sees it, and
 * the API thread parks it and pins every thread to the new CPU. If pinning fails it is
 * pinned back and returns to its old table with its old reservation (nr freed): nothing
 * changed for the client. Blocks for one RCU grace period.
 */
static int move_task(struct sched *s, struct task *t, int to, struct task_resv *nr, char *why,
                     size_t whylen)
{
	int from = t->cpu_idx, rc;
	struct task_resv *old = t->resv;

	table_publish(s, from, table_without(s->table[from], t));
	dispatch_wake(s, from);
	synchronize_rcu(); /* the old dispatcher no longer sees t */
	rc = task_park(t, t->threads, true);
	if (!rc)
		rc = task_pin(t, s->cfg.cpus[to]);
	if (rc) {
		snprintf(why, whylen, "pid %d: cannot move to cpu %d: %s", (int)t->pid,
		         s->cfg.cpus[to], rc == -ESRCH ? "no such process" : strerror(-rc));
		task_pin(t, s->cfg.cpus[from]);
		free(nr);
		nr = NULL;
		to = from;
	}
	if (nr) {
		t->resv = nr; /* unpublished task: no reader */
		call_rcu(&old->rcu, free_resv_rcu);
	} else {
		/* same reservation, new jobs: bump gen so the dispatcher rebuilds them */
		nr = calloc(1, sizeof(*nr));
		if (!nr)
			fatal("sched_set: out of memory");
		*nr = *old;
		nr->gen = old->gen + 1;
		t->resv = nr;
		call_rcu(&old->rcu, free_resv_rcu);
	}
	t->cpu = s->cfg.cpus[to];
	t->cpu_idx = to;
	run_reset(t);
	table_publish(s, to, table_with(s->table[to], t));
	dispatch_wake(s, to);
	return rc;
}

int sched_set(struct sched *s, const struct vsp_request *req, char *why, size_t whylen)
{
	struct vsp_resv w[VSP_MAX_WINDOWS];
	unsigned nw;
	struct task_resv *old, *nr;
	struct cpu_table *ct;
	struct task *t;
	char here[VSP_MSG_MAX + 1] = "";
	int rc, to, from;

	rc = check_windows(s, req, w, &nw, why, whylen);
	if (rc)
		return rc;
	t = find_task(s, req->pid);
	if (!t) {
		snprintf(why, whylen, "pid %d: not managed", (int)req->pid);
		return -ESRCH;
	}
	from = t->cpu_idx;
	to = from;
	if (!placement_admits(s, from, t, w, nw, here, sizeof(here))) {
		/*
		 * Windows (new or old): another CPU where the new ones fit, and the task moves
		 * there. One window for one: refused, as always (the CPU of a task with one
		 * reservation changes only by del + add).
		 */
		to = nw > 1 || t->resv->n > 1 ? placement_choose(s, -1, t, w, nw, why, whylen)
		                              : -ENOSPC;
		if (to < 0 || to == from) {
			snprintf(why, whylen, "%s", here);
			return -ENOSPC;
		}
	}
	ct = s->table[from];
	old = t->resv;
	nr = calloc(1, sizeof(*nr));
	if (!nr)
		fatal("sched_set: out of memory");
	nr->n = nw;
	memcpy(nr->w, w, sizeof(w));
	nr->gen = old->gen + 1;
	nr->published_at = mono_now();

	char a[32], b[32];
	if (to != from) {
		rc = move_task(s, t, to, nr, why, whylen);
		if (rc)
			return rc;
		log_info("pid %d: set %u window(s), period %s; moved from cpu %d to cpu %d "
		         "(utilisation %.1f%%)",
		         (int)t->pid, nw, dur(w[0].period, a, sizeof(a)), s->cfg.cpus[from], t->cpu,
		         100 * s->table[to]->util);
		return 0;
	}
	rcu_assign_pointer(t->resv, nr);
	/* Only the API thread reads load and util; dispatchers never do. */
	ct->load += admission_density_n(w, nw) - admission_density_n(old->w, old->n);
	ct->util += admission_util_n(w, nw) - admission_util_n(old->w, old->n);
	if (ct->load < 0)
		ct->load = 0;
	assert(ct->util <= s->cap + 1e-6);
	dispatch_wake(s, t->cpu_idx);
	call_rcu(&old->rcu, free_resv_rcu);

	log_debug("pid %d: set period %s slice %s, %u window(s); cpu %d utilisation %.1f%%",
	          (int)t->pid, dur(w[0].period, a, sizeof(a)), dur(w[0].slice, b, sizeof(b)), nw,
	          t->cpu, 100 * ct->util);
	return 0;
}

/*
 * Removes the tasks for which gone[] is set from CPU index idx, waits for a grace period,
 * then restores those still alive (restore true) and frees them all.
 */
static void remove_tasks(struct sched *s, int idx, struct task **gone, int ngone, bool restore)
{
	struct cpu_table *ct = s->table[idx], *nt;
	int k = 0;

	nt = table_new(ct->n - ngone);
	for (int i = 0; i < ct->n; i++) {
		bool drop = false;
		for (int g = 0; g < ngone; g++)
			drop |= ct->task[i] == gone[g];
		if (!drop)
			nt->task[k++] = ct->task[i];
	}
	assert(k == nt->n);
	table_publish(s, idx, nt);
	dispatch_wake(s, idx); /* re-select without them */
	synchronize_rcu();     /* no dispatcher sees them any more */
	for (int g = 0; g < ngone; g++) {
		struct task *t = gone[g];
		if (restore && !atomic_load(&t->exited)) {
			int rc = task_restore(t);
			if (rc && rc != -ESRCH)
				log_warnx("pid %d: restore failed: %s", (int)t->pid, strerror(-rc));
		}
		if (s->wd && t->wd_slot >= 0)
			watchdog_untrack(s->wd, t->wd_slot);
		task_close(&gone[g]);
		s->ntasks--;
	}
}

int sched_del(struct sched *s, pid_t pid, char *why, size_t whylen)
{
	struct task *t = find_task(s, pid);

	if (!t) {
		snprintf(why, whylen, "pid %d: not managed", (int)pid);
		return -ESRCH;
	}
	int cpu = t->cpu;
	remove_tasks(s, t->cpu_idx, &t, 1, true);
	log_info("pid %d: deleted from cpu %d, restored", (int)pid, cpu);
	return 0;
}

int sched_list(struct sched *s, struct vsp_task_stat **out, uint32_t *n)
{
	struct vsp_task_stat *st = NULL;
	mono_ns now = mono_now();
	uint32_t k = 0;

	*out = NULL;
	*n = 0;
	if (s->ntasks > 0) {
		st = calloc((size_t)s->ntasks, sizeof(*st));
		if (!st)
			fatal("sched_list: out of memory");
	}
	for (int c = 0; c < s->cfg.ncpus; c++) {
		struct cpu_table *ct = s->table[c];
		for (int i = 0; i < ct->n; i++) {
			struct task *t = ct->task[i];
			struct vsp_task_stat *x = &st[k++];
			assert(k <= (uint32_t)s->ntasks);
			x->pid = t->pid;
			x->cpu = t->cpu;
			x->park = t->park;
			x->nthreads = t->threads->n;
			x->resv = t->resv->w[0];
			x->nwin = (uint8_t)t->resv->n;
			memcpy(x->win, t->resv->w, sizeof(x->win));
			x->managed_ns = now - t->added_at;
			x->periods = atomic_load_explicit(&t->acct.periods, memory_order_relaxed);
			x->cpu_ns = atomic_load_explicit(&t->acct.cpu_ns, memory_order_relaxed);
			x->misses = atomic_load_explicit(&t->acct.misses, memory_order_relaxed);
			x->lateness_total_ns =
			    atomic_load_explicit(&t->acct.lateness_total_ns, memory_order_relaxed);
			x->lateness_max_ns =
			    atomic_load_explicit(&t->acct.lateness_max_ns, memory_order_relaxed);
		}
	}
	*out = st;
	*n = k;
	return 0;
}

/*
 * Offset CLOCK_REALTIME - CLOCK_MONOTONIC, read as mono, real, mono and taking the
 * midpoint of the two monotonic reads; retried (a few times) when they are more than
 * 20 us apart (preempted between the reads), so the mapping error is at most ~10 us.
 */
static uint64_t realtime_offset(void)
{
	uint64_t best_off = 0, best_gap = UINT64_MAX;

	for (int i = 0; i < 5; i++) {
		mono_ns m1 = mono_now();
		uint64_t rt = clock_ns(CLOCK_REALTIME);
		mono_ns m2 = mono_now();
		uint64_t gap = m2 - m1;

		if (gap < best_gap) {
			best_gap = gap;
			best_off = rt - (m1 + gap / 2);
		}
		if (gap <= 20 * NSEC_PER_USEC)
			break;
	}
	return best_off;
}

/*
 * Releases are at epoch + phase + k*period: every task's jobs are re-anchored at once (the
 * dispatchers see the new epoch and rebuild: the job holding now gets the part of its slice
 * that is left of its window, never more than admission counted; the job that was in progress under
 * the old epoch ends without being counted as a period or a miss). Before the epoch (a
 * future one) nothing is released. The same epoch again (within EPOCH_SAME, the mapping's
 * own error) changes nothing, so the agent may repeat it.
 */
#define EPOCH_SAME (50 * NSEC_PER_USEC)

int sched_set_epoch(struct sched *s, uint64_t realtime_ns, char *why, size_t whylen)
{
	mono_ns epoch, cur = atomic_load(&s->epoch);

	if (realtime_ns == 0) {
		epoch = mono_now();
	} else {
		/*
		 * realtime_ns - (now_realtime - now_mono), in modular 64-bit arithmetic: an
		 * epoch before boot wraps, and every comparison with it is wrap-safe.
		 */
		uint64_t off = realtime_offset();
		uint64_t rt = mono_now() + off;

		if ((int64_t)(realtime_ns - rt) > (int64_t)(30ULL * 24 * 3600 * NSEC_PER_SEC)) {
			snprintf(why, whylen, "epoch more than 30 days in the future");
			return -EINVAL;
		}
		epoch = realtime_ns - off;
		if ((int64_t)(epoch - cur) < (int64_t)EPOCH_SAME &&
		    (int64_t)(cur - epoch) < (int64_t)EPOCH_SAME) {
			log_debug("epoch unchanged (monotonic %llu ns)", (unsigned long long)cur);
			return 0;
		}
	}
	atomic_store(&s->epoch, epoch);
	for (int i = 0; i < s->cfg.ncpus; i++)
		dispatch_wake(s, i);
	log_info("epoch set (monotonic %llu ns)", (unsigned long long)epoch);
	return 0;
}

void sched_housekeep(struct sched *s)
{
	mono_ns now = mono_now();
	bool refresh = !mono_before(now, s->last_refresh + REFRESH_INTERVAL);

	if (refresh) {
		s->last_refresh = now;
		/* A dead guardian is replaced over the same table (watchdog.c). */
		if (s->wd)
			watchdog_check(s->wd);
	}
	for (int c = 0; c < s->cfg.ncpus; c++) {
		struct cpu_table *ct = s->table[c];
		struct task **gone = NULL;
		int ngone = 0;
		bool wake = false;

		for (int i = 0; i < ct->n; i++) {
			struct task *t = ct->task[i];
			if (!atomic_load(&t->exited) && refresh) {
				uint32_t was = t->threads->n;
				int rc = task_refresh_threads(t);
				if (rc == 1)
					wake = true;
				else if (rc == -ESRCH)
					atomic_store(&t->exited, true);
				/* `vschedctl run` adds a task before it starts threads. */
				if (rc == 1 && was == 1)
					warn_stop_threads(t);
			}
			if (!atomic_load(&t->exited) && task_has_exited(t))
				atomic_store(&t->exited, true);
			if (atomic_load(&t->exited)) {
				if (!gone) {
					gone = calloc((size_t)ct->n, sizeof(*gone));
					if (!gone)
						fatal("sched_housekeep: out of memory");
				}
				gone[ngone++] = t;
			}
		}
		if (wake)
			dispatch_wake(s, c);
		if (ngone) {
			for (int g = 0; g < ngone; g++)
				log_info("pid %d: exited, removed from cpu %d", (int)gone[g]->pid,
				         gone[g]->cpu);
			remove_tasks(s, c, gone, ngone, false);
		}
		free(gone);
	}
}

void sched_shutdown(struct sched *s)
{
	dispatch_stop(s);
	for (int c = 0; c < s->cfg.ncpus; c++) {
		struct cpu_table *ct = s->table[c];
		if (!ct)
			continue;
		for (int i = 0; i < ct->n; i++) {
			struct task *t = ct->task[i];
			if (!atomic_load(&t->exited)) {
				int rc = task_restore(t);
				if (rc && rc != -ESRCH)
					log_warnx("pid %d: restore failed: %s", (int)t->pid,
					          strerror(-rc));
			}
			if (s->wd && t->wd_slot >= 0)
				watchdog_untrack(s->wd, t->wd_slot);
			task_close(&ct->task[i]);
		}
		s->table[c] = NULL;
		free(ct);
	}
	s->ntasks = 0;
	if (s->rcu_registered) {
		rcu_barrier(); /* runs pending call_rcu frees before we go */
		rcu_unregister_thread();
		s->rcu_registered = false;
	}
}
