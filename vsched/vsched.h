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

#include "proto_vsched.h"
#include "timeutil.h"

#define VS_MAX_CPUS      64
#define VS_PRIO_DISPATCH 99 /* dispatchers, API thread, ZeroMQ I/O thread, watchdog */
#define VS_PRIO_RAISED   98 /* the task entitled to its CPU right now */

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
	char endpoint[256]; /* ZeroMQ endpoint of the local API, e.g. ipc:///run/vsched/api.sock */
	unsigned endpoint_mode; /* file mode of an ipc socket, e.g. 0600 */
};

/* Scheduling attributes a task had before vsched touched it; restored on exit. */
struct sched_saved {
	int policy; /* as from sched_getscheduler(), SCHED_RESET_ON_FORK included */
	int priority;
	cpu_set_t affinity;
};

/* Thread ids of a task, published with RCU by the API thread. */
struct task_threads {
	uint64_t gen; /* increases with every new list of a task (never reused: no ABA) */
	uint32_t n;
	struct rcu_head rcu;
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
	mono_ns first_raise; /* when the task was first raised for this job, 0: not yet */
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
	int prio;              /* SCHED_FIFO priority last applied to every thread, 0 if none */
	bool raised;           /* currently entitled (FIFO prio / continued) */
	bool started;          /* first jobs set up */
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
	struct sched_saved saved;
	int wd_slot; /* watchdog slot, -1 if none */
	mono_ns added_at;

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

struct sched {
	struct vsched_config cfg;
	double cap;               /* effective per-CPU cap: min(configured, rt limit - reserve) */
	struct adm_supply supply; /* what each CPU gives the reservations (admission.c) */
	_Atomic mono_ns epoch;    /* monotonic time of the release anchor */
	struct cpu_table *table[VS_MAX_CPUS]; /* RCU, indexed like cfg.cpus */
	struct watchdog *wd;
	int ntasks;           /* over every table; API thread only */
	mono_ns last_refresh; /* last thread-list refresh (sched_housekeep) */
	bool rcu_registered;  /* the API thread registered itself with liburcu */

	/* dispatch.c */
	pthread_t disp[VS_MAX_CPUS];
	_Atomic uint32_t wake_seq[VS_MAX_CPUS]; /* futex words */
	_Atomic bool stopping;
	int ndisp;
	struct disp *dctx; /* per-dispatcher state, preallocated by dispatch_start */
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
	uint64_t remaining;   /* CPU ns still owed in this job */
	bool runnable;        /* false when the task has exited */
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
 * The job EDF runs at time now: among runnable jobs with release <= now < deadline and
 * remaining > 0, the earliest deadline (ties: lowest index). Returns its index or -1.
 */
int edf_select(const struct edf_job *j, int n, mono_ns now);
/*
 * The next time the selection can change: the earliest future release, next_release or
 * deadline of any job, and now + remaining of the selected one (sel >= 0).
 */
mono_ns edf_next_event(const struct edf_job *j, int n, mono_ns now, int sel);

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
/* Gives back saved policy, priority, affinity to every thread, then SIGCONT. API thread. */
int task_restore(struct task *t);
/* Rereads /proc/PID/task; publishes a new list if it changed. Returns 1 changed, 0, -errno. */
int task_refresh_threads(struct task *t);
/*
 * Dispatcher-safe (syscalls only; no allocation, logging or locks). They return 0 or
 * -errno (-ESRCH: the process is gone).
 * task_raise: lets the task run at SCHED_FIFO prio: `stop` tasks get every thread set to
 * prio first only when full (new thread list or other prio), then SIGCONT; `idle` tasks get
 * every thread set to FIFO prio. task_park: `stop` tasks get SIGSTOP (with every thread set
 * to FIFO VS_PRIO_RAISED first when full, so they stay at FIFO 98 permanently); `idle`
 * tasks get every thread set to SCHED_IDLE.
 */
int task_raise(struct task *t, const struct task_threads *th, int prio, bool full);
int task_park(struct task *t, const struct task_threads *th, bool full);
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
 * Periodic upkeep (call every ~20 ms or more often): reaps exited tasks at every call; at
 * most every 20 ms refreshes thread lists and runs watchdog_check().
 */
void sched_housekeep(struct sched *s);
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
 * Records a task before vsched changes it (starttime: task_read_starttime, never 0). Any
 * thread, lock-free. Returns the slot, or -1 (logged) when the table is full or an argument
 * is invalid; then the task must not be changed.
 */
int watchdog_track(struct watchdog *wd, pid_t pid, uint64_t starttime,
                   const struct sched_saved *saved);
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
/* Pid of the current guardian, -1 if none (logging, tests). */
pid_t watchdog_pid(const struct watchdog *wd);
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
