/*
 * vsched/sched.c: the task tables and the requests that change them (API thread only).
 *
 * Guarantees
 *  - Partitioned EDF admission (DESIGN.md §2, paper 004 Sect. 3): on every managed CPU
 *    Σ slice / min(deadline, period) <= s->cap, where s->cap = min(configured cap,
 *    kernel RT limit - reserve). A request that would break it is refused, naming the CPU,
 *    its load, the request and the cap, and nothing changes.
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
	double load = 0;

	for (int i = 0; i < nt->n; i++)
		load += admission_density(&nt->task[i]->resv->r);
	nt->load = load;
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

static int cpu_index(const struct sched *s, int cpu)
{
	for (int i = 0; i < s->cfg.ncpus; i++)
		if (s->cfg.cpus[i] == cpu)
			return i;
	return -1;
}

static const char *dur(uint64_t ns, char *buf, size_t len)
{
	return duration_format(ns, buf, len);
}

int sched_init(struct sched *s, const struct vsched_config *cfg, char *why, size_t whylen)
{
	double limit;

	memset(s, 0, sizeof(*s));
	s->cfg = *cfg;
	if (cfg->ncpus < 1 || cfg->ncpus > VS_MAX_CPUS) {
		snprintf(why, whylen, "cpus: %d managed CPUs, need 1..%d", cfg->ncpus, VS_MAX_CPUS);
		return -1;
	}
	if (admission_read_rt_limit("/proc/sys/kernel/sched_rt_runtime_us",
	                            "/proc/sys/kernel/sched_rt_period_us", &limit, why, whylen) < 0)
		return -1;
	s->cap = admission_cap(cfg->utilization_cap, limit, cfg->reserve);
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

/* Checks a reservation against the protocol rules and the configured minimums. */
static int check_resv(const struct sched *s, struct vsp_resv *r, char *why, size_t whylen)
{
	char a[32], b[32];

	if (r->deadline == 0)
		r->deadline = r->period;
	if (vsp_check_resv(r, why, whylen) < 0)
		return -EINVAL;
	if (r->period < s->cfg.min_period) {
		snprintf(why, whylen, "period %s below min_period %s", dur(r->period, a, sizeof(a)),
		         dur(s->cfg.min_period, b, sizeof(b)));
		return -EINVAL;
	}
	if (r->slice < s->cfg.min_slice) {
		snprintf(why, whylen, "slice %s below min_slice %s", dur(r->slice, a, sizeof(a)),
		         dur(s->cfg.min_slice, b, sizeof(b)));
		return -EINVAL;
	}
	return 0;
}

static void refuse_load(const struct sched *s, int idx, double load, double need, char *why,
                        size_t whylen)
{
	snprintf(why, whylen, "cpu %d: load %.1f%% + %.1f%% exceeds cap %.1f%%", s->cfg.cpus[idx],
	         100 * load, 100 * need, 100 * s->cap);
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

	if (t->park != VSP_PARK_STOP || t->threads->n < 2 || t->resv->r.period >= STOP_WARN_PERIOD)
		return;
	log_warnx("pid %d: %u threads parked with `stop` at period %s: every park wakes each "
	          "thread at the task's cost, so short jobs may miss; use park idle below 2 ms",
	          (int)t->pid, t->threads->n, dur(t->resv->r.period, a, sizeof(a)));
}

int sched_add(struct sched *s, const struct vsp_request *req, char *why, size_t whylen)
{
	struct vsp_resv r = req->resv;
	double load[VS_MAX_CPUS], need;
	struct cpu_table *ct, *nt;
	struct task *t = NULL, *other;
	int idx, rc;

	rc = check_resv(s, &r, why, whylen);
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
	need = admission_density(&r);
	for (int i = 0; i < s->cfg.ncpus; i++)
		load[i] = s->table[i]->load;
	if (req->cpu >= 0) {
		idx = cpu_index(s, req->cpu);
		if (idx < 0) {
			snprintf(why, whylen, "cpu %d: not managed by vsched", (int)req->cpu);
			return -EINVAL;
		}
		if (!admission_fits(load[idx], need, s->cap)) {
			refuse_load(s, idx, load[idx], need, why, whylen);
			return -ENOSPC;
		}
	} else {
		idx = placement_pick(load, s->cfg.ncpus, need, s->cap, s->cfg.placement);
		if (idx < 0) {
			int low = 0;
			for (int i = 1; i < s->cfg.ncpus; i++)
				if (load[i] < load[low])
					low = i;
			refuse_load(s, low, load[low], need, why, whylen);
			return -ENOSPC;
		}
	}
	assert(admission_fits(load[idx], need, s->cap));

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
	t->resv->r = r;
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
	/* The invariant admission keeps: Σ density <= cap on this CPU. */
	assert(nt->load <= s->cap + 1e-6);
	s->ntasks++;
	dispatch_wake(s, idx);

	warn_stop_threads(t);

	char a[32], b[32];
	log_debug("pid %d: added on cpu %d, period %s slice %s (%.1f%%), park %s; cpu %d load "
	          "%.1f%%",
	          (int)t->pid, t->cpu, dur(r.period, a, sizeof(a)), dur(r.slice, b, sizeof(b)),
	          100 * need, vsp_park_name(t->park), t->cpu, 100 * nt->load);
	return 0;
}

int sched_set(struct sched *s, const struct vsp_request *req, char *why, size_t whylen)
{
	struct vsp_resv r = req->resv;
	struct task_resv *old, *nr;
	struct cpu_table *ct;
	struct task *t;
	double need, others;
	int rc;

	rc = check_resv(s, &r, why, whylen);
	if (rc)
		return rc;
	t = find_task(s, req->pid);
	if (!t) {
		snprintf(why, whylen, "pid %d: not managed", (int)req->pid);
		return -ESRCH;
	}
	ct = s->table[t->cpu_idx];
	old = t->resv;
	need = admission_density(&r);
	others = ct->load - admission_density(&old->r);
	if (others < 0)
		others = 0;
	if (!admission_fits(others, need, s->cap)) {
		refuse_load(s, t->cpu_idx, others, need, why, whylen);
		return -ENOSPC;
	}
	nr = calloc(1, sizeof(*nr));
	if (!nr)
		fatal("sched_set: out of memory");
	nr->r = r;
	nr->gen = old->gen + 1;
	nr->published_at = mono_now();
	rcu_assign_pointer(t->resv, nr);
	/* Only the API thread reads load; dispatchers never do. */
	ct->load = others + need;
	assert(ct->load <= s->cap + 1e-6);
	dispatch_wake(s, t->cpu_idx);
	call_rcu(&old->rcu, free_resv_rcu);

	char a[32], b[32];
	log_debug("pid %d: set period %s slice %s (%.1f%%); cpu %d load %.1f%%", (int)t->pid,
	          dur(r.period, a, sizeof(a)), dur(r.slice, b, sizeof(b)), 100 * need, t->cpu,
	          100 * ct->load);
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
			x->resv = t->resv->r;
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

int sched_set_epoch(struct sched *s, uint64_t realtime_ns, char *why, size_t whylen)
{
	mono_ns epoch;

	if (realtime_ns == 0) {
		epoch = mono_now();
	} else {
		/*
		 * realtime_ns - (now_realtime - now_mono), in modular 64-bit arithmetic: an
		 * epoch before boot wraps, and every comparison with it is wrap-safe.
		 */
		uint64_t rt = clock_ns(CLOCK_REALTIME);
		mono_ns mono = mono_now();
		epoch = realtime_ns - (rt - mono);
		if ((int64_t)(realtime_ns - rt) > (int64_t)(30ULL * 24 * 3600 * NSEC_PER_SEC)) {
			snprintf(why, whylen, "epoch more than 30 days in the future");
			return -EINVAL;
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
