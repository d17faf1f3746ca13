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
#include <sys/epoll.h>
#include <unistd.h>

#include "duration.h"
#include "log.h"

#define SWEEP_INTERVAL   (1 * NSEC_PER_SEC)  /* with events: safety sweep, watchdog check */
#define STOP_WARN_PERIOD (2 * NSEC_PER_MSEC) /* see warn_stop_threads */
#define EV_TASK          1ULL                /* epoll data: (pid << 8) | kind */
#define EV_PROC          2ULL
#define EV_WATCHDOG      3ULL
#define EV_CLIENT        4ULL /* a caller's fd (sched_poll): the caller drains it */

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

/* Watches fd in the API thread's poll set (sched_poll_fd) with tag data. */
static void poll_add(struct sched *s, int fd, uint64_t data)
{
	struct epoll_event e = {.events = EPOLLIN, .data.u64 = data};

	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &e) < 0)
		log_warn("epoll_ctl add fd %d", fd);
}

/* Watches the guardian's socket: it reads EOF when the guardian dies (watchdog.c). */
static void poll_watchdog(struct sched *s)
{
	int fd = s->wd ? watchdog_fd(s->wd) : -1;

	if (fd >= 0 && fd != s->wd_polled) {
		poll_add(s, fd, EV_WATCHDOG);
		s->wd_polled = fd;
	}
}

void sched_attach_watchdog(struct sched *s, struct watchdog *wd)
{
	s->wd = wd;
	poll_watchdog(s);
}

/*
 * How `stop` parks (config stop_method): a cgroup freezer — v1 when a v1 freezer hierarchy
 * is mounted, else v2 — or signals. "freezer" refuses to start without one; "freezer-v2"
 * takes the v2 one even where a v1 hierarchy is mounted, and refuses to start without it
 * (the v2 freezer is what a machine with only cgroup v2, a stock Debian 12, uses).
 */
static int stop_setup(struct sched *s, char *why, size_t whylen)
{
	s->fz.kind = FREEZER_NONE;
	s->fz.sentinel_fd = -1;
	if (s->cfg.stop_method == STOP_SIGNAL)
		return 0;
	if (s->cfg.stop_method == STOP_FREEZER_V2 || freezer_find(&s->fz, FREEZER_V1) < 0)
		freezer_find(&s->fz, FREEZER_V2);
	if (s->fz.kind != FREEZER_NONE && freezer_sentinel_start(&s->fz) < 0) {
		log_warn("freezer %s: cannot freeze a sentinel cgroup", s->fz.mnt);
		s->fz.kind = FREEZER_NONE;
	}
	if (s->fz.kind == FREEZER_NONE && s->cfg.stop_method == STOP_FREEZER) {
		snprintf(why, whylen, "stop_method \"freezer\": no usable cgroup freezer here");
		return -1;
	}
	if (s->fz.kind == FREEZER_NONE && s->cfg.stop_method == STOP_FREEZER_V2) {
		snprintf(why, whylen,
		         "stop_method \"freezer-v2\": no usable cgroup v2 freezer here");
		return -1;
	}
	log_info("stop parking: %s%s%s", vsp_stop_name(sched_stop_method(s)),
	         s->fz.kind ? " at " : "", s->fz.kind ? s->fz.mnt : "");
	return 0;
}

void sched_poll(struct sched *s, int fd)
{
	poll_add(s, fd, EV_CLIENT);
}

void sched_unpoll(struct sched *s, int fd)
{
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, fd, NULL);
}

void sched_info(const struct sched *s, struct vsp_node_info *out)
{
	memset(out, 0, sizeof(*out));
	out->ncpus = (uint32_t)s->cfg.ncpus;
	out->cap_ppm = (uint32_t)(s->cap * 1e6 + 0.5);
	out->ntasks = (uint32_t)s->ntasks;
	out->stop_method = sched_stop_method(s);
	out->perf = s->perf;
}

int sched_cpu_of(struct sched *s, pid_t pid)
{
	const struct task *t = find_task(s, pid);

	return t ? t->cpu : -1;
}

uint8_t sched_stop_method(const struct sched *s)
{
	return s->fz.kind == FREEZER_V1   ? VSP_STOP_FREEZER_V1
	       : s->fz.kind == FREEZER_V2 ? VSP_STOP_FREEZER_V2
	                                  : VSP_STOP_SIGNAL;
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
	s->rng = mono_now() | 1;
	s->refresh_gap = SCHED_REFRESH_NS;
	for (int i = 0; i < cfg->ncpus; i++)
		s->table[i] = table_new(0);
	if (stop_setup(s, why, whylen) < 0)
		return -1;
	s->perf = cfg->perf_events && perfwatch_probe();
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0)
		fatal("epoll_create1");
	s->ev = procev_open();
	if (s->ev)
		poll_add(s, procev_fd(s->ev), EV_PROC);
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
	/*
	 * (moved) What mirrors the enforcer's kernel state is kept: whether it is enabled (so
	 * that it is disarmed if the task is no longer enforced there), and the record head its
	 * stops were answered up to (a stop it made before the move, unanswered, is then
	 * answered at the task's next job, and only such a stop).
	 */
	bool enf_on = t->run.enf_on;
	uint64_t enf_head = t->run.enf_head;

	memset(&t->run, 0, sizeof(t->run));
	t->run.enf_on = enf_on;
	t->run.enf_head = enf_head;
	t->run.applied_threads = t->threads->gen;
	t->run.cpu_at_raise = task_cputime(t); /* budget baseline (dispatch.c) */
	t->run.prio = t->park == VSP_PARK_STOP ? VS_PRIO_RAISED : 0;
	t->run.parked = true;
}

/* The anchor of a request: valid, and wakeup only with one window. */
static int check_anchor(const struct vsp_request *req, unsigned nw, char *why, size_t whylen)
{
	if (req->anchor != VSP_ANCHOR_EPOCH && req->anchor != VSP_ANCHOR_WAKEUP) {
		snprintf(why, whylen, "anchor %u: must be epoch or wakeup", req->anchor);
		return -EINVAL;
	}
	if (req->anchor == VSP_ANCHOR_WAKEUP && nw > 1) {
		snprintf(why, whylen, "anchor wakeup takes one window, not %u", nw);
		return -EINVAL;
	}
	return 0;
}

/* Validation of an ADD that needs no task: windows, anchor, park, not managed, room. */
static int check_add(struct sched *s, const struct vsp_request *req, struct vsp_resv *w,
                     unsigned *nw, char *why, size_t whylen)
{
	struct task *other;
	int rc = check_windows(s, req, w, nw, why, whylen);

	if (!rc)
		rc = check_anchor(req, *nw, why, whylen);
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
	return 0;
}

/*
 * Takes t over (tracked by the watchdog first): pinned, moved into its freezer cgroup, parked.
 * On failure everything is undone, t is closed and why says what failed.
 */
static int take_over(struct sched *s, struct task **tp, char *why, size_t whylen)
{
	struct task *t = *tp;
	int rc, cg = t->park == VSP_PARK_STOP ? s->fz.kind : FREEZER_NONE;

	if (s->wd) {
		t->wd_slot = watchdog_track(s->wd, t->pid, t->starttime, &t->saved, cg);
		if (t->wd_slot < 0) {
			snprintf(why, whylen, "pid %d: watchdog table full", (int)t->pid);
			task_close(tp);
			return -ENOSPC;
		}
	}
	rc = task_pin(t, t->cpu);
	if (!rc)
		rc = task_attach_cgroup(t, &s->fz);
	if (!rc) {
		/* Parked until its dispatcher raises it; a stop task sits at RR 98 for good. */
		rc = task_park(t, t->threads, true);
		run_reset(t);
	}
	if (rc) {
		snprintf(why, whylen, "pid %d: cannot take over: %s", (int)t->pid,
		         rc == -ESRCH ? "no such process" : strerror(-rc));
		task_restore(t, &s->fz);
		if (t->wd_slot >= 0)
			watchdog_untrack(s->wd, t->wd_slot);
		task_close(tp);
	}
	return rc;
}

/*
 * The perfwatch counters t uses on CPU index idx: an enforcer for a `stop` task (on its
 * cgroup when that is a v2 one, task_set_cgroup_enforcer; else on its thread while it is
 * single-threaded), a detector on every thread (owned by that CPU's dispatcher). A counter
 * that cannot be opened is logged once and left out: that task's budget ends and wake-ups
 * are then timed and polled by its dispatcher.
 */
static void watch_perf(struct sched *s, struct task *t, int idx)
{
	static bool warned;
	pid_t owner = atomic_load(&s->disp_tid[idx]);

	if (!s->perf)
		return;
	if (!task_set_cgroup_enforcer(t) && t->park == VSP_PARK_STOP && t->threads->n == 1 &&
	    t->enf_fd < 0) {
		t->enf_fd = perfwatch_enforcer(t->pid, &t->enf_page);
		if (t->enf_fd < 0 && !warned) {
			warned = true;
			log_warnx(
			    "pid %d: no perf counter or buffer (%s): budget ends are timed instead",
			    (int)t->pid, strerror(-t->enf_fd));
		}
	}
	task_set_detectors(t, owner);
}

/* Lets the process-event filter through the events of every managed process. */
static void watch_events(struct sched *s)
{
	pid_t *all;
	int k = 0;

	if (!s->ev)
		return;
	all = calloc((size_t)s->ntasks + 1, sizeof(*all));
	if (!all)
		fatal("sched: out of memory");
	for (int c = 0; c < s->cfg.ncpus; c++)
		for (int i = 0; i < s->table[c]->n; i++)
			all[k++] = s->table[c]->task[i]->pid;
	if (procev_watch(s->ev, all, k) < 0)
		log_warn("process events: cannot update the filter");
	free(all);
}

int sched_add(struct sched *s, const struct vsp_request *req, char *why, size_t whylen)
{
	struct vsp_resv w[VSP_MAX_WINDOWS];
	unsigned nw;
	double need;
	struct cpu_table *ct, *nt;
	struct task *t = NULL;
	int idx, rc;

	rc = check_add(s, req, w, &nw, why, whylen);
	if (rc)
		return rc;
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
	t->resv->anchor = req->anchor;
	memcpy(t->resv->w, w, sizeof(w));
	t->resv->gen = 1;
	t->resv->published_at = mono_now();

	/* Validation done. From here every change is undone on failure. */
	rc = take_over(s, &t, why, whylen);
	if (rc)
		return rc;
	watch_perf(s, t, idx);

	ct = s->table[idx];
	nt = table_with(ct, t);
	table_publish(s, idx, nt);
	/* The invariant admission keeps: Σ slice/period <= cap on this CPU (and the
	 * processor-demand test, placement.c). */
	assert(nt->util <= s->cap + 1e-6);
	s->ntasks++;
	dispatch_wake(s, idx);
	poll_add(s, t->pidfd, ((uint64_t)t->pid << 8) | EV_TASK);
	watch_events(s);

	warn_stop_threads(t);

	char a[32], b[32];
	log_debug("pid %d: added on cpu %d, period %s slice %s, %u window(s) (%.1f%%), park %s, "
	          "anchor %s; cpu %d utilisation %.1f%%",
	          (int)t->pid, t->cpu, dur(w[0].period, a, sizeof(a)),
	          dur(w[0].slice, b, sizeof(b)), nw, 100 * need, vsp_park_name(t->park),
	          vsp_anchor_name(t->resv->anchor), t->cpu, 100 * nt->util);
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
	watch_perf(s, t, to); /* detectors now signal the new CPU's dispatcher */
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
	if (!rc)
		rc = check_anchor(req, nw, why, whylen);
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
	nr->anchor = req->anchor;
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
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, t->pidfd, NULL);
		if (restore && !atomic_load(&t->exited)) {
			int rc = task_restore(t, &s->fz);
			if (rc && rc != -ESRCH)
				log_warnx("pid %d: restore failed: %s", (int)t->pid, strerror(-rc));
		}
		task_release_cgroup(t, &s->fz); /* (an exited task's empty cgroup too) */
		if (s->wd && t->wd_slot >= 0)
			watchdog_untrack(s->wd, t->wd_slot);
		task_close(&gone[g]);
		s->ntasks--;
	}
	watch_events(s);
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
			x->anchor = t->resv->anchor;
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

/* procev callback: a thread of tgid was born or died, or tgid forked a process. */
static void on_proc_event(void *arg, int what, pid_t tgid, pid_t tid)
{
	struct task *t = find_task(arg, tgid);

	(void)tid;
	if (t && what == PROCEV_CHILD)
		t->evict = true;
	else if (t)
		t->refresh = true;
}

/* Flags every task for a thread-list re-read (events were lost). */
static void refresh_all(struct sched *s)
{
	for (int c = 0; c < s->cfg.ncpus; c++)
		for (int i = 0; i < s->table[c]->n; i++)
			s->table[c]->task[i]->refresh = true;
}

/* Reads what the poll set (sched_poll_fd) reported: exits, thread events, a dead guardian. */
static void read_events(struct sched *s)
{
	struct epoll_event ev[32];
	int n = epoll_wait(s->epfd, ev, 32, 0);

	for (int i = 0; i < n; i++) {
		uint64_t kind = ev[i].data.u64 & 0xff;
		struct task *t;

		if (kind == EV_TASK) {
			t = find_task(s, (pid_t)(ev[i].data.u64 >> 8));
			if (t)
				atomic_store(&t->exited, true);
		} else if (kind == EV_PROC) {
			if (procev_drain(s->ev, on_proc_event, s) < 0)
				refresh_all(s);
		} else if (kind == EV_WATCHDOG && s->wd) {
			/* EOF: the guardian died (watchdog_check waits for it and starts another)
			 */
			epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->wd_polled, NULL);
			s->wd_polled = 0;
			watchdog_check(s->wd);
			poll_watchdog(s);
		}
	}
}

/*
 * Which tasks' thread lists to re-read now. With process events: the ones that had events,
 * and at each tick those with threads awaiting adoption, and at each sweep those whose
 * thread count differs. Without: at each tick those whose count differs, and each task once
 * per 10 SCHED_REFRESH_NS anyway (a thread that exits while another starts keeps the count;
 * its slot is spread over the window by pid; a long gap may skip a slot once). Also which
 * tasks' freezer cgroups to clear of children (evict_children).
 */
static void mark_refresh(struct sched *s, mono_ns now, bool tick, bool sweep)
{
	uint64_t slot = now / SCHED_REFRESH_NS % 10;

	for (int c = 0; c < s->cfg.ncpus; c++)
		for (int i = 0; i < s->table[c]->n; i++) {
			struct task *t = s->table[c]->task[i];
			bool mine = tick && (uint64_t)t->pid % 10 == slot;
			if (s->ev)
				t->refresh |=
				    (tick && t->npend > 0) || (sweep && task_threads_differ(t));
			else if (tick)
				t->refresh |= mine || task_threads_differ(t);
			/* Children: at each sweep (a fork the events do not name: CLONE_PARENT, a
			 * grandchild), and without events at the task's slot too. */
			t->evict |= sweep || (!s->ev && mine);
		}
}

/*
 * Moves the children of the flagged tasks out of their freezer cgroups: parking a task
 * parks its own threads only (freezer.c).
 */
static void evict_children(struct sched *s)
{
	for (int c = 0; c < s->cfg.ncpus; c++)
		for (int i = 0; i < s->table[c]->n; i++) {
			struct task *t = s->table[c]->task[i];
			if (t->evict && !atomic_load(&t->exited))
				task_evict_children(t);
			t->evict = false;
		}
}

/* Re-reads the flagged thread lists; wakes a dispatcher whose task's list changed. */
static void refresh_threads(struct sched *s)
{
	for (int c = 0; c < s->cfg.ncpus; c++) {
		bool wake = false;
		for (int i = 0; i < s->table[c]->n; i++) {
			struct task *t = s->table[c]->task[i];
			pid_t owner = s->perf ? atomic_load(&s->disp_tid[c]) : 0;
			uint32_t was = t->threads->n;
			int rc;

			if (!t->refresh || atomic_load(&t->exited))
				continue;
			t->refresh = false;
			rc = task_refresh_threads(t, owner);
			if (rc == 1)
				wake = true;
			else if (rc == -ESRCH)
				atomic_store(&t->exited, true);
			/* `vschedctl run` adds a task before it starts threads. */
			if (rc == 1 && was == 1)
				warn_stop_threads(t);
		}
		if (wake)
			dispatch_wake(s, c);
	}
}

/* Removes the tasks that have exited from every table. */
static void reap(struct sched *s)
{
	for (int c = 0; c < s->cfg.ncpus; c++) {
		struct cpu_table *ct = s->table[c];
		struct task **gone = NULL;
		int ngone = 0;

		for (int i = 0; i < ct->n; i++) {
			struct task *t = ct->task[i];
			if (!atomic_load(&t->exited))
				continue;
			if (!gone) {
				gone = calloc((size_t)ct->n, sizeof(*gone));
				if (!gone)
					fatal("sched_housekeep: out of memory");
			}
			gone[ngone++] = t;
			log_info("pid %d: exited, removed from cpu %d", (int)t->pid, t->cpu);
		}
		if (ngone)
			remove_tasks(s, c, gone, ngone, false);
		free(gone);
	}
}

/*
 * Why the ticks are not evenly spaced: a new thread of a `stop` task whose real-time
 * siblings spin is runnable but starved while the task is raised, and stopped (T) or frozen
 * (D) while it is parked, so adopt_started (task.c) can only find it asleep at a tick that
 * falls in the parked part of the task's period. Fixed 20 ms ticks are a multiple of the
 * common periods (1, 2, 5, 10, 20 ms) and drift against them only by the upkeep's own time
 * (tens of us: the API thread runs at SCHED_FIFO 99, with no timer slack), so they could
 * stay in the raised part for seconds (up to raised part / drift ticks). A gap drawn from a
 * 10 ms range puts each tick at an independent phase of any period from 2.5 to 10 ms, and
 * keeps longer ones from locking. (api_run's poll takes whole ms, so the phase in periods of
 * 1 and 2 ms still moves only by the upkeep's time: there the wait is at most raised part /
 * that time, ~1.4 s for 1.8 ms.)
 */
mono_ns sched_refresh_gap(uint64_t *rng)
{
	uint64_t x = *rng ? *rng : 1;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*rng = x;
	return SCHED_REFRESH_NS - SCHED_REFRESH_JITTER_NS / 2 + x % SCHED_REFRESH_JITTER_NS;
}

void sched_housekeep(struct sched *s)
{
	mono_ns now = mono_now();
	bool tick = !mono_before(now, s->last_refresh + s->refresh_gap);
	bool sweep = !mono_before(now, s->last_sweep + SWEEP_INTERVAL);

	read_events(s);
	if (tick) {
		s->last_refresh = now;
		s->refresh_gap = sched_refresh_gap(&s->rng);
	}
	if (sweep) {
		s->last_sweep = now;
		/* A dead guardian is replaced over the same table (watchdog.c). */
		if (s->wd && watchdog_check(s->wd) == 1) {
			s->wd_polled = 0; /* (the new socket may have the old one's number) */
			poll_watchdog(s);
		}
		freezer_retry();
	}
	mark_refresh(s, now, tick, sweep);
	evict_children(s);
	refresh_threads(s);
	reap(s);
}

int sched_poll_fd(const struct sched *s)
{
	return s->epfd;
}

mono_ns sched_next_housekeep(const struct sched *s)
{
	bool pending = false;

	for (int c = 0; c < s->cfg.ncpus && !pending; c++)
		for (int i = 0; i < s->table[c]->n; i++)
			pending |= s->table[c]->task[i]->npend > 0;
	mono_ns next =
	    !s->ev || pending ? s->last_refresh + s->refresh_gap : s->last_sweep + SWEEP_INTERVAL;
	return next;
}

void sched_shutdown(struct sched *s)
{
	procev_close(&s->ev);
	dispatch_stop(s);
	for (int c = 0; c < s->cfg.ncpus; c++) {
		struct cpu_table *ct = s->table[c];
		if (!ct)
			continue;
		for (int i = 0; i < ct->n; i++) {
			struct task *t = ct->task[i];
			if (!atomic_load(&t->exited)) {
				int rc = task_restore(t, &s->fz);
				if (rc && rc != -ESRCH)
					log_warnx("pid %d: restore failed: %s", (int)t->pid,
					          strerror(-rc));
			}
			task_release_cgroup(t, &s->fz);
			if (s->wd && t->wd_slot >= 0)
				watchdog_untrack(s->wd, t->wd_slot);
			task_close(&ct->task[i]);
		}
		s->table[c] = NULL;
		free(ct);
	}
	s->ntasks = 0;
	if (s->fz.sentinel_fd >= 0) {
		close(s->fz.sentinel_fd);
		freezer_sentinel_remove(&s->fz, getpid());
		s->fz.sentinel_fd = -1;
	}
	if (s->epfd > 0)
		close(s->epfd);
	s->epfd = -1;
	if (s->rcu_registered) {
		rcu_barrier(); /* runs pending call_rcu frees before we go */
		rcu_unregister_thread();
		s->rcu_registered = false;
	}
}
