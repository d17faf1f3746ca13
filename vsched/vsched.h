/*
 * vsched: the node's periodic real-time scheduler (DESIGN.md §2, paper 004 Sect. 3).
 * Private header: prototypes grouped by the file that defines them.
 *
 * Threads and ownership
 *  - The API thread (main thread) owns the task tables: it validates requests, builds a new
 *    per-CPU table and publishes it with rcu_assign_pointer(); after synchronize_rcu() it
 *    alone touches removed tasks (restore, free).
 *  - One dispatcher thread per managed CPU (SCHED_FIFO 99, pinned) reads its table under
 *    rcu_read_lock() and owns each task's `run` state and the raise/park transitions. It
 *    never allocates, logs, locks or does blocking I/O, and holds no task pointer across
 *    a sleep.
 *  - A watchdog process (watchdog.c) outlives vsched and restores every task if it dies.
 */
#ifndef VSCHED_VSCHED_H
#define VSCHED_VSCHED_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* also given by CMake as -D_GNU_SOURCE (=1): do not redefine */
#endif
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <urcu.h> /* default (memb) flavour: rcu_read_lock, synchronize_rcu, call_rcu */

struct perf_event_mmap_page; /* <linux/perf_event.h>: a perfwatch enforcer's records */

#include "proto_vsched.h"
#include "timeutil.h"

#define VS_MAX_CPUS      64
#define VS_PRIO_DISPATCH 99 /* dispatchers, API thread, ZeroMQ I/O thread, watchdog */
#define VS_PRIO_RAISED   98 /* the task entitled to its CPU right now */
#define TASK_PEND_MAX    16 /* new threads of one task awaiting adoption (more wait longer) */
#define ENF_CONT_JOBS    3  /* jobs a task is continued at after its enforcer stopped watching */
#define VS_SIG_NOTIFY    SIGRTMIN /* perfwatch detectors -> dispatcher (interrupts its wait) */

/* How `stop` parking is done (config stop_method; the result is per daemon). */
enum stop_method {
	STOP_AUTO = 0,       /* config only: the freezer if one is usable, else signals */
	STOP_FREEZER = 1,    /* config only: the freezer, refuse to start without one */
	STOP_SIGNAL = 2,     /* SIGSTOP/SIGCONT (one per process, plus one per other thread) */
	STOP_FREEZER_V2 = 3, /* config only: the cgroup v2 freezer, refuse to start without */
};

/* A cgroup freezer hierarchy (freezer.c). */
enum { FREEZER_NONE = 0, FREEZER_V1 = 1, FREEZER_V2 = 2 };
struct freezer {
	int kind;        /* FREEZER_* */
	char mnt[256];   /* where the hierarchy is mounted */
	char mroot[256]; /* the hierarchy's path mounted there ("" for its root) */
	int sentinel_fd; /* v1: state file of the frozen sentinel cgroup, -1 if none */
};

enum placement_rule {
	PLACE_WORST_FIT = 0, /* lowest load first: spreads load (default) */
	PLACE_FIRST_FIT = 1, /* lowest-numbered CPU that fits: packs load */
};

struct vsched_config {
	int ncpus;
	int cpus[VS_MAX_CPUS];  /* managed CPUs, ascending, unique, online */
	double utilization_cap; /* per CPU, as configured, (0, 1] */
	double reserve;         /* per CPU share kept for vsched itself */
	uint64_t min_period;    /* ns */
	uint64_t min_slice;     /* ns */
	uint8_t park;           /* default enum vsp_park */
	int placement;          /* enum placement_rule */
	int max_tasks;          /* whole node */
	int stop_method;        /* enum stop_method */
	bool perf_events;       /* perfwatch enforcers and detectors where the kernel allows */
	bool selftest_at_start; /* measure the finest period at start (selftest.c) */
	char endpoint[256]; /* ZeroMQ endpoint of the local API, e.g. ipc:///run/vsched/api.sock */
	unsigned endpoint_mode; /* file mode of an ipc socket, e.g. 0600 */
};

/* Scheduling attributes a task had before vsched touched it; restored on exit. */
struct sched_saved {
	int policy; /* as from sched_getscheduler(), SCHED_RESET_ON_FORK included */
	int priority;
	cpu_set_t affinity;
};

/*
 * Thread ids of a task, published with RCU by the API thread. det[i] is thread tid[i]'s
 * perfwatch detector (-1: none), stop[i] its cgroup enforcer's counter (the task's
 * enf_fd for the leader, -1: none); the list owns them and closes them when it is freed.
 */
struct task_threads {
	uint64_t gen; /* increases with every new list of a task (never reused: no ABA) */
	uint32_t n;
	struct rcu_head rcu;
	int *det;    /* n entries, or NULL when the task has no detectors */
	int *stop;   /* n entries, or NULL when the task has no cgroup enforcer */
	pid_t tid[]; /* ascending */
};

/*
 * A task's reservation, replaced as a whole (RCU) on `set`; gen increases on every change.
 * One window (w[0], any period/deadline/phase), or 2..VSP_MAX_WINDOWS windows of one frame:
 * same period, sorted by phase, disjoint, inside the period (vsp_check_windows). Each window
 * is its own EDF job sequence; the task is entitled while one of them has budget left.
 */
struct task_resv {
	unsigned n;                         /* windows, 1..VSP_MAX_WINDOWS */
	uint8_t anchor;                     /* enum vsp_anchor; VSP_ANCHOR_WAKEUP only with n 1 */
	struct vsp_resv w[VSP_MAX_WINDOWS]; /* deadline already resolved (never 0) */
	uint64_t gen;
	mono_ns published_at; /* when sched_add/sched_set published it (change latency) */
	struct rcu_head rcu;
};

/* The current job of one window (dispatcher-owned, see task_run). */
struct win_run {
	mono_ns release, deadline, next_release;
	uint64_t budget;     /* CPU ns owed in this job (slice, prorated when built mid-window) */
	uint64_t used;       /* CPU ns consumed while raised for this window in this job */
	bool blocked_in_job; /* it slept while raised in this job: not a miss */
	bool closed;         /* the job's deadline passed and was accounted */
	bool dormant;        /* wake-up anchor: no job until the task runs again */
	mono_ns first_raise; /* when the task was first raised for this job, 0: not yet */
};

/* A perf enforcer's overflow points, as the dispatcher reckons them (enf_plan.c). */
struct enf_grid {
	bool armed;    /* the counter overflows every len of counted CPU from cpu0 on */
	uint64_t cpu0; /* task CPU clock at the arming, or at the last stop seen */
	uint64_t len;  /* its period */
};

/*
 * Dispatcher-owned state of the current jobs. Only the dispatcher of task->cpu writes it
 * once the task is published; before that (and while a task moves between CPUs, unpublished)
 * the API thread sets it up.
 */
struct task_run {
	uint64_t gen;             /* task_resv.gen these jobs were built from */
	mono_ns epoch;            /* sched.epoch these jobs were built from */
	uint64_t applied_threads; /* task_threads.gen the raise/park state was applied to */
	struct win_run win[VSP_MAX_WINDOWS]; /* per window of task_resv (n of them) */
	int cur;               /* the window the task was last selected (raised) for */
	uint64_t cpu_at_raise; /* task CPU clock when last raised / last sampled */
	mono_ns wall_at_raise; /* monotonic time of the same sample */
	int prio;              /* RT priority last applied to every thread, 0 if none */
	bool raised;           /* in the chain: continued at prio */
	bool parked;           /* parked by the dispatcher (frozen or SIGSTOP, or SCHED_IDLE) */
	bool kstop;            /* its enforcer may have stopped it: checked at the next raise */
	bool started;          /* first jobs set up */
	struct enf_grid enf;   /* where the enforcer overflows (enf_plan) */
	bool enf_on;           /* the enforcer is enabled (stays so until disarmed) */
	bool detecting;        /* the detectors of thread list det_threads are armed */
	bool idle_seen;        /* raised, it used no CPU over the last sample */
	uint64_t enf_head;     /* its record head when its stops were last answered (or none) */
	uint64_t enf_cont_cpu; /* task CPU clock at the last SIGCONT that answered a stop */
	bool enf_recheck;      /* continue once more if it ran < ENF_LATE_NS since then */
	mono_ns cont_job;      /* release of the job it was last continued for */
	uint32_t cont_after;   /* jobs still to get a SIGCONT (its enforcer stopped watching) */
	uint64_t det_threads;  /* task_threads.gen the detectors were armed on */
	uint64_t enf_threads;  /* task_threads.gen a cgroup enforcer's counters were armed on */
};

/* Counters written by the dispatcher (relaxed atomics), read by the API thread. */
struct task_acct {
	_Atomic uint64_t periods;
	_Atomic uint64_t cpu_ns; /* CPU time received while raised */
	_Atomic uint64_t misses;
	_Atomic uint64_t lateness_total_ns;
	_Atomic uint64_t lateness_max_ns;
};

struct task {
	/* Immutable once the task is published. */
	pid_t pid;
	int pidfd;
	clockid_t cpuclock; /* process CPU clock (all threads) */
	uint64_t starttime; /* /proc/PID/stat field 22: guards against pid reuse */
	int cpu;            /* the CPU it is pinned to */
	int cpu_idx;        /* index of cpu in config.cpus */
	uint8_t park;       /* enum vsp_park */
	int stop_kind;      /* `stop` parking: FREEZER_V1/V2 (freeze_fd), else signals */
	int freeze_fd;      /* state file of the task's freezer cgroup, -1 if none */
	int enf_fd;         /* perfwatch enforcer (stop tasks), -1: none */
	struct perf_event_mmap_page *enf_page; /* its records (perfwatch_fired), or NULL */
	/*
	 * enf_fd is the leader's counter of a cgroup enforcer (perfwatch.c): the other threads'
	 * are task_threads.stop; counted on enf_cpu, on the cgroup open as cg_fd. Else enf_fd
	 * is on the leader thread and enforces the task while it is single-threaded.
	 */
	bool enf_cgroup;
	int enf_cpu;
	int cg_fd;
	char *cg_dir; /* its freezer cgroup (freezer_attach), NULL if none */
	struct sched_saved saved;
	int wd_slot; /* watchdog slot, -1 if none */
	mono_ns added_at;

	/* API thread only: new threads not adopted yet (task.c, adopt_started). */
	struct task_pend {
		pid_t tid;
		uint8_t asleep; /* looks that found it asleep */
	} pend[TASK_PEND_MAX];
	unsigned npend;
	bool refresh; /* a thread was born or died: re-read the list */
	bool evict;   /* it forked a process: task_evict_children */

	struct task_resv *resv;       /* RCU */
	struct task_threads *threads; /* RCU */
	struct task_run run;          /* dispatcher-owned */
	struct task_acct acct;
	_Atomic bool exited; /* set once the pidfd reports exit */
};

/* The tasks of one managed CPU, replaced as a whole (RCU). */
struct cpu_table {
	int n;
	double load; /* Σ density of the tasks (placement.c's fast path; may exceed the cap) */
	double util; /* Σ slice / period of the tasks: <= cap always */
	struct rcu_head rcu;
	struct task *task[];
};

/* What a CPU gives its reservations in an interval of length L: min(L, cap·L + burst)
 * (admission.c). */
struct adm_supply {
	double cap;   /* long-run share, (0, 1] */
	double burst; /* ns beyond cap·L; vsched: (RT limit - cap) · RT accounting period */
};

struct watchdog;
struct disp;

struct procev;
struct selftest;

struct sched {
	struct vsched_config cfg;
	double cap;               /* effective per-CPU cap: min(configured, rt limit - reserve) */
	struct adm_supply supply; /* what each CPU gives the reservations (admission.c) */
	_Atomic mono_ns epoch;    /* monotonic time of the release anchor */
	struct cpu_table *table[VS_MAX_CPUS]; /* RCU, indexed like cfg.cpus */
	struct watchdog *wd;
	struct freezer fz;    /* fz.kind FREEZER_NONE: `stop` parks with signals */
	bool perf;            /* perfwatch usable (cfg.perf_events and the kernel allows it) */
	struct procev *ev;    /* thread births and exits (NULL: /proc is re-read instead) */
	struct selftest *st;  /* the finest-period self-test (selftest.c) */
	pid_t probe_pid;      /* its probe while under a reservation (0: none): placement ranks
	                       * CPUs without it, as it yields to a task put on its CPU */
	int ntasks;           /* over every table; API thread only */
	int epfd;             /* the API thread's poll set: pidfds, events, guardian socket */
	int wd_polled;        /* the guardian socket in epfd, 0 if none */
	mono_ns last_refresh; /* last thread-list upkeep tick (sched_housekeep) */
	mono_ns refresh_gap;  /* from last_refresh to the next tick (sched_refresh_gap) */
	uint64_t rng;         /* sched_refresh_gap's xorshift64 state, never 0 */
	mono_ns last_sweep;   /* last safety sweep and watchdog check */
	bool rcu_registered;  /* the API thread registered itself with liburcu */

	/* dispatch.c */
	pthread_t disp[VS_MAX_CPUS];
	_Atomic uint32_t wake_seq[VS_MAX_CPUS]; /* futex words */
	_Atomic bool stopping;
	int ndisp;
	struct disp *dctx;                   /* per-dispatcher state, preallocated */
	_Atomic pid_t disp_tid[VS_MAX_CPUS]; /* dispatcher thread ids (detector owners) */
};

/* config.c */
void config_defaults(struct vsched_config *cfg);
/* Loads and checks path over the defaults; on error why names the key and the reason. */
int config_load(const char *path, struct vsched_config *cfg, char *why, size_t whylen);
/* Prints cfg normalised, in libconfig syntax (vsched -n). */
void config_print(FILE *f, const struct vsched_config *cfg);
/* One line per key (name, type, default, range, description): the source of vsched.conf's
 * man page. */
void config_keys(FILE *f);

/* edf.c — pure functions, no I/O */
struct edf_job {
	mono_ns release;      /* start of the current window */
	mono_ns deadline;     /* absolute deadline: release + D */
	mono_ns next_release; /* release + T */
	uint64_t remaining;   /* CPU ns still owed in this job (and its overrun allowance) */
	bool runnable;        /* false when the task has exited */
	bool spare;           /* runs on its overrun allowance: after every job with budget left */
};
/* Window containing now, or the first one when now is before epoch + phase. */
void edf_window(const struct vsp_resv *r, mono_ns epoch, mono_ns now, struct edf_job *j);
/*
 * One task with n windows (n jobs in w[]) as one EDF entry *out: the eligible window with
 * the earliest deadline (edf_select over w), or, when none is eligible, a not-eligible entry
 * (remaining 0). In both cases out->next_release is the earliest future event of any window
 * (edf_next_event over w), so edf_next_event over the tasks wakes up for every window.
 * Returns the chosen window's index or -1.
 */
int edf_task_entry(const struct edf_job *w, int n, mono_ns now, struct edf_job *out);
/*
 * Whether job a runs before job b: a job with budget left before one on its overrun
 * allowance (spare), then the earlier deadline. Ties (neither before the other) go to the
 * lower index everywhere.
 */
bool edf_before(const struct edf_job *a, const struct edf_job *b);
/*
 * The job EDF runs at time now: among runnable jobs with release <= now < deadline and
 * remaining > 0, the first by edf_before (ties: lowest index). Returns its index or -1.
 */
int edf_select(const struct edf_job *j, int n, mono_ns now);
/*
 * The next time the selection can change: the earliest future release, next_release or
 * deadline of any job, and now + remaining of the selected one (sel >= 0).
 */
mono_ns edf_next_event(const struct edf_job *j, int n, mono_ns now, int sel);

/* jobs.c — one window's job sequence (pure but for the accounting counters) */
struct job_ctx {
	mono_ns now, epoch;
	uint64_t thr;  /* budget left at or below this counts as used up */
	uint64_t comp; /* a budget end is slept to this early (wake latency), < thr */
	/*
	 * The CPU's measured wake-up latency (at most slice / 8): a task seen running since
	 * it woke is released this much before it can have started (wake-up anchor).
	 */
	uint64_t wake_lat;
	/*
	 * CPU a job may run past its budget (0: none), after every job with budget left; the
	 * next job's budget is short by what it ran past (job_debt), so the long-run share
	 * stays slice/period. See jobs.c.
	 */
	uint64_t overrun;
	bool exited; /* the task has exited: no misses */
	/*
	 * > 0: the task had not run at the last sample while raised, and in this one it ran
	 * this much after leaving the CPU unused (nothing above it took it): it woke up, at the
	 * latest at now - woke_ran. The wake-up anchor applies the CBS wake-up rule; 0: no.
	 */
	uint64_t woke_ran;
};
/*
 * Brings wr up to now: closes the job at its deadline, opens the next (anchor epoch: on
 * the epoch grid; wakeup: CBS, see jobs.c), or rebuilds it for a new reservation or epoch.
 * wr->used must already hold the CPU time used since the job's release (dormant: since
 * the window went dormant).
 */
void jobs_update(struct task_acct *a, struct win_run *wr, const struct vsp_resv *r, uint8_t anchor,
                 bool rebuild, const struct job_ctx *c);
/* The window's EDF entry: eligible (remaining > 0) iff its job has more than thr left. */
void jobs_entry(struct win_run *wr, const struct job_ctx *c, struct edf_job *out);

/* admission.c — pure except admission_read_rt_limit (model and sources: its top comment) */
/* Density slice / min(deadline, period) (deadline 0 means period). */
double admission_density(const struct vsp_resv *r);
/* Σ density and Σ slice / period of n windows. */
double admission_density_n(const struct vsp_resv *w, unsigned n);
double admission_util_n(const struct vsp_resv *w, unsigned n);
/* One window of a CPU: a periodic job sequence (deadline resolved, 0 < slice <= deadline). */
struct adm_win {
	uint64_t period, slice, deadline, phase;
	int owner; /* caller's id, e.g. -1 for the request */
	int idx;   /* window number within its owner */
};
/* Cost limits; adm_default_limits are vsched's. */
struct adm_limits {
	uint64_t max_jobs;         /* exact test: jobs in one hyperperiod, at most */
	uint64_t max_cluster_jobs; /* sound test: jobs in one cluster's hyperperiod */
	uint64_t cluster_budget;   /* sound test: Σ over clusters of jobs^2 */
	uint64_t max_points;       /* sound test: lengths checked before giving up (refused) */
};
extern const struct adm_limits adm_default_limits;
struct adm_result {
	bool exact;           /* decided by the exact test (short hyperperiod) */
	bool util_over;       /* Σ slice / period > cap */
	double util;          /* Σ slice / period */
	uint64_t hyperperiod; /* exact test: the pattern's period H */
	/* ADM_DEMAND: jobs released in [from, to] and due in it need demand > supply. Exact
	 * test: from in [0, H) from the epoch; sound test: from = 0, to = the length. */
	uint64_t from, to, demand;
	double supply;
	int a, b;         /* exact test: windows (indexes into w) with jobs inside it, or -1 */
	uint64_t checked; /* intervals or lengths examined (the cost) */
	int clusters;     /* sound test: clusters of windows */
};
enum {
	ADM_FITS = 0,
	ADM_DEMAND = -1,    /* an interval needs more than the CPU gives (res: from, to, ...) */
	ADM_UTIL = -2,      /* Σ slice / period > cap, every interval fits */
	ADM_UNDECIDED = -3, /* the sound test could not decide within its limits: refused */
	ADM_INVALID = -4,   /* a malformed window */
};
/*
 * EDF feasibility of the windows w[n] on one CPU giving sp (processor demand): exact when
 * their hyperperiod holds at most lim->max_jobs jobs, sound otherwise. ADM_DEMAND is reported
 * before ADM_UTIL. want: the owner a conflict names first (the request). lim NULL: defaults.
 * Allocates scratch only.
 */
int admission_test(const struct adm_win *w, int n, const struct adm_supply *sp,
                   const struct adm_limits *lim, int want, struct adm_result *res);
/* min(len, cap · len + burst) */
double admission_supply(const struct adm_supply *sp, uint64_t len);
/*
 * Reads the kernel RT throttling limit runtime/period (runtime -1: no limit, 1.0) and the
 * period in ns (period_ns may be NULL). Returns 0 or -1 with why; nothing set on error.
 */
int admission_read_rt_limit(const char *runtime_path, const char *period_path, double *limit,
                            uint64_t *period_ns, char *why, size_t whylen);
/* Effective per-CPU cap: min(configured, rt_limit - reserve), never below 0. */
double admission_cap(double configured, double rt_limit, double reserve);
/* load + density <= cap (with 1e-9 slack for rounding). */
bool admission_fits(double load, double density, double cap);

/* placement.c — API thread: admission of windows on a CPU's table, and the CPU choice */
/*
 * Whether CPU index idx admits windows w[n] of a request, not counting task skip's own
 * windows (`set`; NULL for `add`): Σ density <= cap (sufficient, O(1)), else admission_test
 * over every window of the CPU. On refusal writes a one-line reason naming the CPU, its load,
 * the request and what does not fit. Allocates scratch only.
 */
bool placement_admits(const struct sched *s, int idx, const struct task *skip,
                      const struct vsp_resv *w, unsigned n, char *why, size_t whylen);
/*
 * The CPU index for windows w[n]: req_cpu when >= 0 (must be managed and admit them), else
 * by the placement rule among the CPUs that admit them (worst-fit: lowest utilisation without
 * skip). Returns the index, or -errno with why (the reason of the least loaded CPU).
 */
int placement_choose(const struct sched *s, int req_cpu, const struct task *skip,
                     const struct vsp_resv *w, unsigned n, char *why, size_t whylen);
/*
 * Chooses among the CPUs where ok[i] (the caller ran the admission test): worst-fit takes
 * the lowest key (load), ties lowest index; first-fit the lowest index. -1 if none.
 */
int placement_pick_ok(const bool *ok, const double *key, int n, int rule);

/* freezer.c — API thread and guardian, except freezer_set */
/* Finds the mount of a FREEZER_V1 or FREEZER_V2 hierarchy. Returns 0, or -1 (fz->kind NONE). */
int freezer_find(struct freezer *fz, int kind);
/*
 * The cgroup path of a /proc/PID/cgroup line ("ID:CONTROLLERS:PATH\n") when the line is of
 * hierarchy kind (v2: "0::PATH"; v1: controllers naming freezer), else NULL. Cuts line.
 */
char *freezer_cgroup_path(int kind, char *line);
/* v1: creates and freezes the sentinel cgroup of this process (see freezer.c). 0 or -errno. */
int freezer_sentinel_start(struct freezer *fz);
/* v1: thaws and removes the sentinel of vsched process owner (vsched's exit, the guardian). */
void freezer_sentinel_remove(const struct freezer *fz, pid_t owner);
/*
 * Moves pid into a new cgroup <its cgroup>/vsched.<pid>, written to dir, and opens its
 * state file (*state_fd). Returns 0 or -errno with nothing left behind.
 */
int freezer_attach(const struct freezer *fz, pid_t pid, char *dir, size_t dirlen, int *state_fd);
/* Freezes or thaws through a state file from freezer_attach: one pwrite. 0 or -errno. */
int freezer_set(int state_fd, int kind, bool frozen);
/*
 * Moves every process in dir (a cgroup from freezer_attach) but keep to its parent: the
 * children a task forked. Returns how many it moved, or -errno (-ENOENT: dir is gone).
 */
int freezer_evict(const char *dir, pid_t keep);
/*
 * Thaws dir, moves every process in it to its parent and removes it. 0 (also when dir is
 * gone) or -errno: then dir is left thawed. Waits up to 100 ms for a process that is exiting
 * to leave it.
 */
int freezer_release(const struct freezer *fz, const char *dir);
/*
 * Retries removing the cgroups freezer_release found busy (-EBUSY: it keeps them, at most 32,
 * for 60 calls; logged when removed or given up). API thread, once a second.
 */
void freezer_retry(void);
/* freezer_release of pid's cgroup if it is one of ours (from /proc/PID/cgroup). */
int freezer_detach(const struct freezer *fz, pid_t pid);
/*
 * For a pid that no longer exists: freezer_release of a cgroup vsched.<pid> found below the
 * mount (a task that exited before vsched could release its cgroup, which may still hold
 * its children). 0 (also when there is none, or pid exists) or -errno.
 */
int freezer_release_gone(const struct freezer *fz, pid_t pid);

/* enf_plan.c — where an enforcer should overflow (see the file comment; struct enf_grid) */
/* How far past its budget the enforcer lets a job of this slice run. */
uint64_t enf_margin(uint64_t slice);
/*
 * 0: keep the counter as it is; else the period to arm it with now. c: the task's CPU clock
 * now; rest: its job's budget left; slice: the job's window slice.
 */
uint64_t enf_plan(const struct enf_grid *g, uint64_t c, uint64_t rest, uint64_t slice);

/* perfwatch.c — see the file comment; arm/disarm are dispatcher-safe */
#define PERFWATCH_DETECT_NS (20 * NSEC_PER_USEC) /* a detector fires after this much CPU */
#define PERFWATCH_MIN_NS    (10 * NSEC_PER_USEC) /* the kernel's floor for hrtimer sw events */
/*
 * A task-clock counter on thread tid whose overflow sends sig to owner: the whole process
 * owner when to_process, else thread owner. Disabled until armed. Returns the fd or -errno.
 */
int perfwatch_open(pid_t tid, bool to_process, pid_t owner, int sig);
/* Re-targets a counter's signal at thread owner_tid. 0 or -errno. */
int perfwatch_owner(int fd, pid_t owner_tid);
/*
 * Arms: overflow after ns of the thread's CPU (at least 10 µs), counted from now; once:
 * then disabled (detector); else enabled when enable (the first arming of an enforcer).
 */
int perfwatch_arm(int fd, uint64_t ns, bool once, bool enable);
int perfwatch_disarm(int fd);
/*
 * An enforcer on single-threaded process pid (perfwatch_open(pid, true, pid, SIGSTOP)) with
 * its records mapped at *page. Returns the fd or -errno (EPERM: the mlock limit for perf
 * buffers, perf_event_mlock_kb, without CAP_IPC_LOCK).
 */
int perfwatch_enforcer(pid_t pid, struct perf_event_mmap_page **page);
/*
 * A counter on the cgroup v2 open as cg_fd, counting on CPU cpu, whose overflow sends
 * SIGSTOP to thread tid and writes its record into the ring of records_fd (a
 * perfwatch_enforcer_cgroup on the same CPU); disabled until armed. Returns the fd or -errno.
 */
int perfwatch_cgroup_stopper(int cg_fd, int cpu, pid_t tid, int records_fd);
/* The same with its records mapped at *page (the leader's: perfwatch_fired). */
int perfwatch_enforcer_cgroup(int cg_fd, int cpu, pid_t tid, struct perf_event_mmap_page **page);
/* Closes an enforcer (or a counter without a page) and sets *fd = -1, *page = NULL. */
void perfwatch_close(int *fd, struct perf_event_mmap_page **page);
/*
 * The enforcer's record head: moves (by one record) at each of its overflows, each of which
 * sent a SIGSTOP; it never moves otherwise (no throttling at one overflow per job). Never
 * goes back; 0 when opened. A memory read.
 */
uint64_t perfwatch_fired(const struct perf_event_mmap_page *page);
/* True when this process may open perf counters at all. */
bool perfwatch_probe(void);

/* procev.c — API thread */
/*
 * Called for every event let through: PROCEV_THREAD, thread tid born in process tgid;
 * PROCEV_CHILD, process tgid forked a new process tid; PROCEV_EXIT, thread or process tid
 * of process tgid exited.
 */
enum { PROCEV_THREAD, PROCEV_CHILD, PROCEV_EXIT };
typedef void (*procev_fn)(void *arg, int what, pid_t tgid, pid_t tid);
/* Subscribes to process events and checks they arrive; NULL (logged) when unavailable. */
struct procev *procev_open(void);
/* Lets through only the events of these processes (replaces the previous set). 0 or -errno. */
int procev_watch(struct procev *ev, const pid_t *tgid, int n);
int procev_fd(const struct procev *ev); /* readable when events wait */
/* Calls fn for every waiting event. Returns 0, or -1 when the kernel dropped some. */
int procev_drain(struct procev *ev, procev_fn fn, void *arg);
void procev_close(struct procev **ev); /* accepts NULL, clears *ev */

/* task.c */
/*
 * Opens pid for management: pidfd, CPU clock, start time, saved attributes, thread list.
 * Does not change the process. Returns 0 and a new task in *out (caller owns), or -errno
 * with why ("pid 123: no such process"); nothing allocated on error.
 */
int task_open(pid_t pid, struct task **out, char *why, size_t whylen);
/* Frees a task (closes pidfd, frees resv and threads); accepts NULL, clears *t. */
void task_close(struct task **t);
/* Pins every thread to cpu. API thread. Returns 0 or -errno. */
int task_pin(struct task *t, int cpu);
/*
 * Gives back saved policy, priority, affinity to every thread, closes the enforcer, moves
 * the process out of its freezer cgroup (thawed, cgroup removed), then SIGCONT. API thread.
 */
int task_restore(struct task *t, const struct freezer *fz);
/*
 * `stop` tasks when fz has a hierarchy: moves the process into its own freezer cgroup
 * (freezer_attach) and parks through it from then on. Returns 0 (also when nothing is to
 * do) or -errno with nothing changed. task_release_cgroup undoes it (thawed, moved back,
 * removed; also for an exited task); 0 or -errno (logged).
 */
int task_attach_cgroup(struct task *t, const struct freezer *fz);
int task_release_cgroup(struct task *t, const struct freezer *fz);
/*
 * Moves every process in t's freezer cgroup but t itself (the children t forked since it was
 * attached) to the cgroup t came from, so that parking t does not freeze them. Returns how
 * many it moved (0 when t has no cgroup) or -errno (logged, but not -ENOENT).
 */
int task_evict_children(struct task *t);
/* One stat(): the thread count differs from the published list, or threads await adoption. */
bool task_threads_differ(const struct task *t);
/*
 * Rereads /proc/PID/task, adopts the new threads that have started (task.c: ADOPT_*), pins
 * them, and publishes a new list if it changed; with det_owner > 0 (a dispatcher's thread
 * id) every thread has a perfwatch detector owned by it. Returns 1 changed, 0, -errno.
 */
int task_refresh_threads(struct task *t, pid_t det_owner);
/*
 * Gives every thread a detector owned by det_owner (> 0), or drops them (0); publishes a
 * new list when that changes anything. Returns 1 published, 0.
 */
int task_set_detectors(struct task *t, pid_t det_owner);
/*
 * Opens t's cgroup enforcer on its CPU (t->enf_cgroup: its cgroup is a v2 one), or again
 * after a move to another CPU, and publishes a thread list whose threads have their
 * counters and no detectors (task_set_detectors next). Returns 1 when it has one, 0 when
 * not (logged once). Before t is published to a dispatcher only.
 */
int task_set_cgroup_enforcer(struct task *t);
/* Disables the cgroup enforcer counters of th's threads, if any (dispatcher-safe). */
void task_disarm_stoppers(const struct task_threads *th);
/*
 * Dispatcher-safe (syscalls only; no allocation, logging or locks). They return 0 or
 * -errno (-ESRCH: the process is gone).
 * task_raise: lets the task run at RT priority prio. `stop` tasks: every thread set to prio
 * first when setprio (new thread list or other prio), then unparked when cont (thawed, or
 * SIGCONT without a freezer); `idle` tasks: every thread set to prio. Either kind gets
 * SIGCONT when kstop (an enforcer may have stopped it), at most one per call.
 * task_park: `stop` tasks are frozen, or get SIGSTOP (every thread set to VS_PRIO_RAISED
 * first when setprio, so they stay at the raised priority while parked); `idle` tasks get
 * every thread set to SCHED_IDLE.
 */
int task_raise(struct task *t, const struct task_threads *th, int prio, bool setprio, bool cont,
               bool kstop);
int task_park(struct task *t, const struct task_threads *th, bool setprio);
uint64_t task_cputime(const struct task *t); /* process CPU clock, ns */
bool task_has_exited(const struct task *t);  /* pidfd readable */
/* Start time (field 22 of /proc/PID/stat) of pid, 0 if unreadable. */
uint64_t task_read_starttime(pid_t pid);

/* sched.c — API thread only */
/* Sets up the tables and the effective cap; starts nothing. Returns 0 or -1 with why. */
int sched_init(struct sched *s, const struct vsched_config *cfg, char *why, size_t whylen);
/*
 * Requests. Each validates fully first (ranges, min_period, min_slice, pid alive and not
 * managed, CPU managed, admission) and on refusal changes nothing and returns -errno with
 * a one-line reason in why. Success wakes the dispatcher concerned.
 */
int sched_add(struct sched *s, const struct vsp_request *req, char *why, size_t whylen);
int sched_set(struct sched *s, const struct vsp_request *req, char *why, size_t whylen);
int sched_del(struct sched *s, pid_t pid, char *why, size_t whylen);
/* Snapshot of every task; *out is malloc'ed (caller frees; NULL when *n is 0). */
int sched_list(struct sched *s, struct vsp_task_stat **out, uint32_t *n);
/* New release anchor given as CLOCK_REALTIME ns (0: now), mapped onto CLOCK_MONOTONIC. */
int sched_set_epoch(struct sched *s, uint64_t realtime_ns, char *why, size_t whylen);
/*
 * Upkeep: reaps exited tasks, re-reads the thread lists of tasks whose threads were born or
 * died, adopts new threads, replaces a dead guardian. Call it when sched_poll_fd() is
 * readable and at sched_next_housekeep() at the latest; it never blocks (but for a guardian
 * restart).
 */
void sched_housekeep(struct sched *s);
int sched_poll_fd(const struct sched *s);
mono_ns sched_next_housekeep(const struct sched *s);
/*
 * Thread-list upkeep ticks (new threads awaiting adoption, or /proc polling without process
 * events) come every SCHED_REFRESH_NS on average: each gap is drawn by sched_refresh_gap
 * from SCHED_REFRESH_NS ± SCHED_REFRESH_JITTER_NS / 2 (upper bound excluded), advancing *rng
 * (xorshift64 state; 0 is taken as 1).
 */
#define SCHED_REFRESH_NS        (20 * NSEC_PER_MSEC)
#define SCHED_REFRESH_JITTER_NS (10 * NSEC_PER_MSEC)
mono_ns sched_refresh_gap(uint64_t *rng);
/* Hands the daemon's watchdog to s (its socket joins the poll set). */
void sched_attach_watchdog(struct sched *s, struct watchdog *wd);
/* enum vsp_stop_method in use. */
uint8_t sched_stop_method(const struct sched *s);
/* The node's figures for INFO/SELFTEST replies (selftest_info adds the self-test's). */
void sched_info(const struct sched *s, struct vsp_node_info *out);
/* The CPU number of managed task pid, -1 if none. */
int sched_cpu_of(struct sched *s, pid_t pid);
/*
 * Adds fd to (removes it from) the poll set: readable, it makes sched_poll_fd() readable
 * until the caller drains it (the self-test's probe pipe; housekeeping ignores it).
 */
void sched_poll(struct sched *s, int fd);
void sched_unpoll(struct sched *s, int fd);

/* selftest.c — API thread; a client of the engine (sched_add/sched_del), driven by api.c */
void selftest_init(struct sched *s); /* after sched_init; selftest_* accept s->st NULL */
void selftest_stop(struct sched *s); /* kills a running probe */
/*
 * Starts the self-test (the finest period with < 1 % misses, see selftest.c) on a managed
 * CPU without reservations. Returns 0, or -EBUSY (running, or no free CPU) / -errno with why.
 */
int selftest_start(struct sched *s, char *why, size_t whylen);
/* Advances a running self-test: reads a probe's result, starts the next, enforces time. */
void selftest_poll(struct sched *s);
/*
 * Ends a running self-test (its probe removed and killed) when a request for pid needs its
 * CPU: cpu (a CPU number) is the probe's, or -1 (the request fits nowhere). Not for the
 * probe itself. Returns true when it ended one (retry the request).
 */
bool selftest_yield(struct sched *s, pid_t pid, int cpu);
/* When selftest_poll must run at the latest (a probe's time limit), 0 if none. */
mono_ns selftest_deadline(const struct sched *s);
void selftest_info(const struct sched *s, struct vsp_node_info *out);
/* The probe process (argv[1] "--probe"): main() returns its value. */
int selftest_probe_main(int argc, char **argv);
/* Stops the dispatchers and restores every task. */
void sched_shutdown(struct sched *s);

/* dispatch.c */
/* Starts one dispatcher per managed CPU. Returns 0 or -1 (logged). */
int dispatch_start(struct sched *s);
/* Makes the dispatcher of CPU index idx re-select now. Async-signal-safe, never blocks. */
void dispatch_wake(struct sched *s, int idx);
/* Stops and joins every dispatcher; tasks are left as they are (sched_shutdown restores). */
void dispatch_stop(struct sched *s);

/* watchdog.c */
/*
 * Forks the guardian process. It holds a shared-memory table of managed tasks and, when
 * vsched ends in any way (its socket reaches EOF), restores every task listed there (policy,
 * priority, affinity, SIGCONT) at SCHED_FIFO 99, then exits. Call it before any task is
 * changed; waits (up to 2 s) until the guardian is ready. Returns NULL (logged) on failure.
 */
struct watchdog *watchdog_start(int max_tasks);
/*
 * Records a task before vsched changes it (starttime: task_read_starttime, never 0; cgroup:
 * the FREEZER_* hierarchy it is about to be moved into, or FREEZER_NONE). Any thread,
 * lock-free. Returns the slot, or -1 (logged) when the table is full or an argument
 * is invalid; then the task must not be changed.
 */
int watchdog_track(struct watchdog *wd, pid_t pid, uint64_t starttime,
                   const struct sched_saved *saved, int cgroup);
/* Forgets a slot after the task was restored or has exited. */
void watchdog_untrack(struct watchdog *wd, int slot);
/* Orderly end: the guardian exits without touching tasks. Accepts NULL, clears *wd. */
void watchdog_stop(struct watchdog **wd);
/*
 * Housekeeping (API thread, every ~20 ms): returns 0 while the guardian lives. If it died,
 * logs a warning and starts a new one over the same table (tracked tasks stay protected):
 * returns 1, or -1 if that failed (logged; the next call retries). Blocks only then, for the
 * few ms the new guardian takes to report ready.
 */
int watchdog_check(struct watchdog *wd);
/*
 * At start, before watchdog_start: restores the tasks of every vsched that ended together
 * with its guardian, from the copies of their tables on file, and removes the copies.
 * Returns how many copies it found.
 */
int watchdog_recover(void);
/* Pid of the current guardian, -1 if none (logging, tests). */
pid_t watchdog_pid(const struct watchdog *wd);
/* vsched's end of the guardian's socket (readable at EOF: it died), -1 if none. */
int watchdog_fd(const struct watchdog *wd);
/*
 * The guardian's entry point: main() must call it first thing when argv[1] is "--watchdog"
 * (watchdog_start re-executes vsched's binary as: --watchdog MEMFD FD MAX_TASKS) and return
 * its value.
 * Bad arguments: a one-line reason on stderr, exit status 2, nothing changed.
 */
int watchdog_main(int argc, char **argv);

/* api.c */
/*
 * Serves the local API on cfg->endpoint until *stop is set, running sched_housekeep
 * between requests. Every frame is validated; a bad one gets an error reply and is logged.
 * Returns 0, or -1 if the endpoint cannot be bound.
 */
int api_run(struct sched *s, volatile sig_atomic_t *stop);

#endif
