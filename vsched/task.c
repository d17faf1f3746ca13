/*
 * vsched/task.c: one managed process, held by a pidfd.
 *
 * Guarantees
 *  - A task is identified by its pidfd: signals go through pidfd_send_signal(), so a
 *    recycled pid is never signalled. task_open() checks the process is still alive through
 *    the pidfd after reading /proc, so everything it read belongs to that process.
 *  - Per-thread calls (sched_setscheduler, sched_setaffinity) need thread ids; a thread id
 *    could only be recycled after that thread exited and the pid space wrapped, a window we
 *    accept (the kernel offers no per-thread pidfd for these calls).
 *  - The dispatcher-side functions (task_raise, task_park, task_cputime) only make syscalls:
 *    no allocation, logging or locks. Everything else runs on the API thread.
 *  - Every thread of a managed process gets SCHED_RESET_ON_FORK with its real-time policy,
 *    so a child the task forks is never an unmanaged SCHED_FIFO process. New threads start
 *    SCHED_OTHER (pinned: affinity is inherited) until sched_housekeep publishes them and
 *    the dispatcher applies the task's state to them.
 *  - `stop` parking is one freezer write per park or unpark when the task has a freezer
 *    cgroup (freezer.c), else SIGSTOP/SIGCONT. Either parks the task's own threads only: a
 *    process it forks is moved out of its cgroup (task_evict_children). A perfwatch
 *    enforcer may also stop a single-threaded task with SIGSTOP at its budget end; the
 *    raise that follows sends SIGCONT (kstop).
 */
#include "vsched.h"

#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "procfs.h"

#define PF_KTHREAD 0x00200000 /* include/linux/sched.h */

static int sys_pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static int pidfd_signal(int pidfd, int sig)
{
	return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

uint64_t task_read_starttime(pid_t pid)
{
	return procfs_starttime(pid);
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

/*
 * Reads the thread ids of pid, ascending, into a new list (caller owns). Returns NULL with
 * errno set when /proc/PID/task cannot be read (ESRCH when the process is gone).
 */
static struct task_threads *read_threads(pid_t pid)
{
	char path[64];
	struct task_threads *th = NULL, *bigger;
	uint32_t cap = 16;
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d) {
		if (errno == ENOENT)
			errno = ESRCH;
		return NULL;
	}
	th = calloc(1, sizeof(*th) + cap * sizeof(pid_t));
	if (!th)
		fatal("read_threads: out of memory");
	while ((de = readdir(d)) != NULL) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);
		if (de->d_name[0] < '0' || de->d_name[0] > '9' || *end || tid <= 0)
			continue;
		if (th->n == cap) {
			cap *= 2;
			bigger = realloc(th, sizeof(*th) + cap * sizeof(pid_t));
			if (!bigger)
				fatal("read_threads: out of memory");
			th = bigger;
		}
		th->tid[th->n++] = (pid_t)tid;
	}
	closedir(d);
	if (th->n == 0) {
		free(th);
		errno = ESRCH;
		return NULL;
	}
	qsort(th->tid, th->n, sizeof(pid_t), cmp_pid);
	return th;
}

/* Frees a thread list and closes its detectors. */
static void threads_free(struct task_threads *th)
{
	if (!th)
		return;
	for (uint32_t i = 0; th->det && i < th->n; i++)
		if (th->det[i] >= 0)
			close(th->det[i]);
	for (uint32_t i = 0; th->stop && i < th->n; i++)
		if (th->stop[i] >= 0)
			close(th->stop[i]);
	free(th->det);
	free(th->stop);
	free(th);
}

static void free_threads_rcu(struct rcu_head *h)
{
	threads_free(caa_container_of(h, struct task_threads, rcu));
}

int task_open(pid_t pid, struct task **out, char *why, size_t whylen)
{
	struct procfs_stat st;
	struct sched_param sp;
	struct task *t;
	int err;

	*out = NULL;
	if (pid <= 0) {
		snprintf(why, whylen, "pid %d: invalid", (int)pid);
		return -EINVAL;
	}
	if (pid == getpid()) {
		snprintf(why, whylen, "pid %d: is vsched itself", (int)pid);
		return -EINVAL;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		fatal("task_open: out of memory");
	t->pid = pid;
	t->cpu = -1;
	t->cpu_idx = -1;
	t->wd_slot = -1;
	t->freeze_fd = -1;
	t->enf_fd = -1;
	t->enf_cpu = -1;
	t->cg_fd = -1;
	t->pidfd = sys_pidfd_open(pid);
	if (t->pidfd < 0) {
		err = errno;
		snprintf(why, whylen, "pid %d: %s", (int)pid,
		         err == ESRCH ? "no such process" : strerror(err));
		goto fail;
	}
	t->starttime = task_read_starttime(pid);
	if (procfs_stat(pid, 0, &st) == 0 && (st.flags & PF_KTHREAD)) {
		err = EINVAL;
		snprintf(why, whylen, "pid %d: is a kernel thread", (int)pid);
		goto fail;
	}
	err = clock_getcpuclockid(pid, &t->cpuclock);
	if (err) {
		snprintf(why, whylen, "pid %d: no CPU clock: %s", (int)pid, strerror(err));
		goto fail;
	}
	t->saved.policy = sched_getscheduler(pid);
	if (t->saved.policy < 0 || sched_getparam(pid, &sp) < 0 ||
	    sched_getaffinity(pid, sizeof(t->saved.affinity), &t->saved.affinity) < 0) {
		err = errno;
		snprintf(why, whylen, "pid %d: cannot read scheduling attributes: %s", (int)pid,
		         strerror(err));
		goto fail;
	}
	t->saved.priority = sp.sched_priority;
	t->threads = read_threads(pid);
	if (!t->threads) {
		err = errno;
		snprintf(why, whylen, "pid %d: cannot list threads: %s", (int)pid, strerror(err));
		goto fail;
	}
	t->threads->gen = 1;
	/* Still alive through the pidfd: every /proc read above was about this process. */
	if (t->starttime == 0 || pidfd_signal(t->pidfd, 0) < 0) {
		err = ESRCH;
		snprintf(why, whylen, "pid %d: no such process", (int)pid);
		goto fail;
	}
	*out = t;
	return 0;
fail:
	task_close(&t);
	return -err;
}

void task_close(struct task **tp)
{
	struct task *t;

	if (!tp || !*tp)
		return;
	t = *tp;
	if (t->pidfd >= 0)
		close(t->pidfd);
	perfwatch_close(&t->enf_fd, &t->enf_page);
	if (t->cg_fd >= 0)
		close(t->cg_fd);
	if (t->freeze_fd >= 0)
		close(t->freeze_fd);
	free(t->cg_dir);
	free(t->resv);
	threads_free(t->threads);
	free(t);
	*tp = NULL;
}

int task_pin(struct task *t, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	for (uint32_t i = 0; i < t->threads->n; i++) {
		pid_t tid = t->threads->tid[i];
		if (sched_setaffinity(tid, sizeof(set), &set) < 0) {
			/* A thread other than the leader may have ended meanwhile. */
			if (errno == ESRCH && tid != t->pid)
				continue;
			return -errno;
		}
	}
	return 0;
}

/*
 * The real-time policy of a raised task's threads. SCHED_RR rather than SCHED_FIFO: the
 * threads of one process share its CPU at one priority, and under FIFO a thread that never
 * blocks (a compute loop) would keep its siblings — other compute threads, or a library's
 * I/O thread such as libapprate's ZeroMQ sender — from running at all while the task holds
 * its reservation. RR rotates them every sched_rr_timeslice_ms. The dispatcher (FIFO 99)
 * preempts either.
 */
#define TASK_RT_POLICY SCHED_RR

/*
 * Sets policy|SCHED_RESET_ON_FORK at prio on every thread of th. A vanished thread other
 * than the leader is skipped. Dispatcher-safe. Returns 0 or -errno.
 */
static int set_policy_all(const struct task *t, const struct task_threads *th, int policy, int prio)
{
	struct sched_param sp = {.sched_priority = prio};

	for (uint32_t i = 0; i < th->n; i++) {
		pid_t tid = th->tid[i];
		if (sched_setscheduler(tid, policy | SCHED_RESET_ON_FORK, &sp) < 0) {
			if (errno == ESRCH && tid != t->pid)
				continue;
			return -errno;
		}
	}
	return 0;
}

/* SIGCONT to the process, whatever parks it (a stop its enforcer may have sent). */
static int task_continue(struct task *t)
{
	return pidfd_signal(t->pidfd, SIGCONT) < 0 ? -errno : 0;
}

int task_raise(struct task *t, const struct task_threads *th, int prio, bool setprio, bool cont,
               bool kstop)
{
	int rc;

	if (t->park != VSP_PARK_STOP) {
		rc = set_policy_all(t, th, TASK_RT_POLICY, prio);
		return rc || !kstop ? rc : task_continue(t);
	}
	if (setprio) {
		rc = set_policy_all(t, th, TASK_RT_POLICY, prio);
		if (rc)
			return rc;
	}
	if (cont && t->freeze_fd >= 0) {
		rc = freezer_set(t->freeze_fd, t->stop_kind, false);
		if (rc)
			return rc == -ENOENT || rc == -ENODEV ? -ESRCH : rc;
	}
	if ((cont && t->freeze_fd < 0) || kstop)
		return task_continue(t);
	return 0;
}

int task_park(struct task *t, const struct task_threads *th, bool setprio)
{
	int rc;

	if (t->park != VSP_PARK_STOP)
		return set_policy_all(t, th, SCHED_IDLE, 0);
	if (setprio) {
		rc = set_policy_all(t, th, TASK_RT_POLICY, VS_PRIO_RAISED);
		if (rc)
			return rc;
	}
	if (t->freeze_fd >= 0) {
		rc = freezer_set(t->freeze_fd, t->stop_kind, true);
		return rc == -ENOENT || rc == -ENODEV ? -ESRCH : rc;
	}
	if (pidfd_signal(t->pidfd, SIGSTOP) < 0)
		return -errno;
	/*
	 * A process-wide SIGSTOP wakes one thread, which then stops the others. If that thread
	 * waits behind a spinning FIFO 98 sibling on the same CPU, the group stop never starts.
	 * A SIGSTOP queued on every thread (tgkill checks the tid still belongs to this live
	 * process) lets whichever runs stop at once; SIGCONT flushes the leftovers. (One
	 * thread: the process-wide signal is enough.) The leader is skipped: the process-wide
	 * signal already woke it (the kernel picks the leader first), or it has a signal
	 * pending and takes this one too.
	 */
	for (uint32_t i = 0; th->n > 1 && i < th->n; i++)
		if (th->tid[i] != t->pid)
			syscall(SYS_tgkill, t->pid, th->tid[i], SIGSTOP);
	return 0;
}

uint64_t task_cputime(const struct task *t)
{
	return clock_ns(t->cpuclock);
}

bool task_has_exited(const struct task *t)
{
	struct pollfd p = {.fd = t->pidfd, .events = POLLIN};

	return poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL));
}

int task_restore(struct task *t, const struct freezer *fz)
{
	struct sched_param sp = {.sched_priority = t->saved.priority};
	struct task_threads *fresh;
	const struct task_threads *th;
	int rc = 0;

	/* No enforcer may stop it after the SIGCONT below (close waits for a pending one). */
	perfwatch_close(&t->enf_fd, &t->enf_page);
	task_disarm_stoppers(t->threads);
	if (task_has_exited(t)) {
		task_release_cgroup(t, fz);
		return -ESRCH;
	}
	/* A fresh list, so a thread born since the last refresh is restored too. */
	fresh = read_threads(t->pid);
	th = fresh ? fresh : t->threads;
	for (uint32_t i = 0; i < th->n; i++) {
		pid_t tid = th->tid[i];
		/* saved.policy carries SCHED_RESET_ON_FORK when the task had it. */
		if (sched_setscheduler(tid, t->saved.policy, &sp) < 0 ||
		    sched_setaffinity(tid, sizeof(t->saved.affinity), &t->saved.affinity) < 0) {
			if (errno == ESRCH && tid != t->pid)
				continue;
			if (!rc)
				rc = -errno;
		}
	}
	threads_free(fresh);
	/* After the policy: thawed at FIFO 98 it would run before its old policy is back. */
	if (task_release_cgroup(t, fz) < 0 && !rc)
		rc = -EIO;
	if (pidfd_signal(t->pidfd, SIGCONT) < 0 && !rc)
		rc = -errno;
	return rc;
}

int task_attach_cgroup(struct task *t, const struct freezer *fz)
{
	char dir[PATH_MAX];
	int rc;

	if (fz->kind == FREEZER_NONE || t->park != VSP_PARK_STOP)
		return 0;
	rc = freezer_attach(fz, t->pid, dir, sizeof(dir), &t->freeze_fd);
	if (rc)
		return rc;
	t->cg_dir = strdup(dir);
	if (!t->cg_dir)
		fatal("task_attach_cgroup: out of memory");
	t->stop_kind = fz->kind;
	return 0;
}

int task_release_cgroup(struct task *t, const struct freezer *fz)
{
	int rc;

	if (!t->cg_dir)
		return 0;
	if (t->enf_cgroup) { /* it counts the cgroup: nothing to stop once the task leaves */
		perfwatch_close(&t->enf_fd, &t->enf_page);
		t->enf_cgroup = false;
	}
	if (t->cg_fd >= 0)
		close(t->cg_fd);
	t->cg_fd = -1;
	rc = freezer_release(fz, t->cg_dir);
	if (rc)
		log_warnx("pid %d: cannot remove freezer cgroup %s: %s%s", (int)t->pid, t->cg_dir,
		          strerror(-rc), rc == -EBUSY ? " (thawed; retried every second)" : "");
	if (t->freeze_fd >= 0)
		close(t->freeze_fd);
	t->freeze_fd = -1;
	free(t->cg_dir);
	t->cg_dir = NULL;
	return rc;
}

int task_evict_children(struct task *t)
{
	int n;

	if (!t->cg_dir)
		return 0;
	n = freezer_evict(t->cg_dir, t->pid);
	if (n > 0)
		log_debug("pid %d: %d child process(es) moved out of its freezer cgroup",
		          (int)t->pid, n);
	else if (n < 0 && n != -ENOENT)
		log_warnx("pid %d: cannot move its children out of %s: %s", (int)t->pid, t->cg_dir,
		          strerror(-n));
	return n;
}

/*
 * Number of threads of pid from one stat() of /proc/PID/task, whose link count the kernel
 * reports as 2 + threads (proc_task_getattr); -1 when it cannot be read. ~2 us here, against
 * ~8 us for a /proc/PID/task walk (and ~7 us for reading /proc/PID/stat).
 */
static long thread_count(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (stat(path, &st) < 0 || st.st_nlink < 3)
		return -1;
	return (long)st.st_nlink - 2;
}

bool task_threads_differ(const struct task *t)
{
	return t->npend > 0 || thread_count(t->pid) != (long)t->threads->n;
}

/*
 * A new thread is adopted (pinned, published to the dispatcher, raised and parked with the
 * rest) only once it has clearly started: it has run ADOPT_MIN_RUN_NS of CPU time, or it
 * has run and was found asleep at ADOPT_ASLEEP_SEEN separate refreshes. Until then it keeps
 * what it was born with: the creator's CPU affinity and, through SCHED_RESET_ON_FORK,
 * SCHED_OTHER (and, under `stop` with a freezer, its process's cgroup). This keeps vsched
 * from changing a thread's policy while the thread's own start-up code reads and re-applies
 * it: libzmq's I/O thread reads its policy and priority with two calls and sets them back
 * (thread_t::applySchedulingParameters), and aborts the process (EINVAL) when vsched
 * raised it in between — seen once under ASan with a one-look rule. Two looks at least
 * 15 ms apart (SCHED_REFRESH_NS - SCHED_REFRESH_JITTER_NS / 2), or 2 ms of CPU, are well
 * past that start-up code.
 */
#define ADOPT_MIN_RUN_NS  (2 * NSEC_PER_MSEC)
#define ADOPT_ASLEEP_SEEN 2

/*
 * 1: started (adopt), 0: not yet, -1: gone. *asleep: found asleep, frozen or stopped after
 * having run. (A new thread of a `stop` task whose real-time siblings spin is starved while
 * the task is raised; while it is parked it is frozen, or stopped when parking uses signals:
 * it never runs 2 ms, so it is only ever adopted by these looks.)
 */
static int thread_state(pid_t pid, pid_t tid, bool *asleep)
{
	char path[80];
	struct procfs_stat st;
	unsigned long long run_ns = 0;
	FILE *f;

	*asleep = false;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fscanf(f, "%llu", &run_ns) != 1)
		run_ns = 0;
	fclose(f);
	if (run_ns >= ADOPT_MIN_RUN_NS)
		return 1;
	if (run_ns == 0)
		return 0;
	if (procfs_stat(pid, tid, &st) < 0)
		return -1;
	/* T: stopped by `stop` parking with signals, as D is frozen by the cgroup freezer */
	*asleep = st.state == 'S' || st.state == 'D' || st.state == 'T';
	return 0;
}

/* How often thread tid was found asleep so far (pending list), and records one more look. */
static unsigned pend_look(struct task *t, pid_t tid, bool asleep, struct task_pend *next,
                          unsigned *nnext)
{
	unsigned seen = 0;

	for (unsigned i = 0; i < t->npend; i++)
		if (t->pend[i].tid == tid)
			seen = t->pend[i].asleep;
	seen += asleep;
	if (seen < ADOPT_ASLEEP_SEEN && *nnext < TASK_PEND_MAX)
		next[(*nnext)++] = (struct task_pend){tid, (uint8_t)seen};
	return seen;
}

/*
 * Keeps in th (ascending) the threads of old and the new ones that have started; remembers
 * the others in t->pend for the next look.
 */
static void adopt_started(struct task *t, struct task_threads *th, const struct task_threads *old)
{
	struct task_pend next[TASK_PEND_MAX];
	uint32_t i, j = 0, keep = 0;
	unsigned nnext = 0;

	for (i = 0; i < th->n; i++) {
		pid_t tid = th->tid[i];
		bool asleep;
		int st;

		while (j < old->n && old->tid[j] < tid)
			j++;
		if (j < old->n && old->tid[j] == tid) {
			th->tid[keep++] = tid;
			continue;
		}
		st = thread_state(t->pid, tid, &asleep);
		if (st == 1 ||
		    (st == 0 && pend_look(t, tid, asleep, next, &nnext) >= ADOPT_ASLEEP_SEEN))
			th->tid[keep++] = tid;
	}
	th->n = keep;
	memcpy(t->pend, next, nnext * sizeof(next[0]));
	t->npend = nnext;
}

/*
 * Thread tid's counter in old (fds: old's det or stop, or NULL), dup'ed (each list closes
 * its own); -1 if it has none. *j: a cursor into old, as tid ascends.
 */
static int dup_counter(const struct task_threads *old, const int *fds, uint32_t *j, pid_t tid)
{
	while (*j < old->n && old->tid[*j] < tid)
		(*j)++;
	if (!fds || *j >= old->n || old->tid[*j] != tid || fds[*j] < 0)
		return -1;
	return fcntl(fds[*j], F_DUPFD_CLOEXEC, 3);
}

/*
 * Gives th the detectors of its threads: the old list's or new ones owned by the
 * dispatcher thread owner. A thread whose detector cannot be opened gets -1 (its wake-ups
 * are then seen by the dispatcher's samples only).
 */
static void give_detectors(struct task_threads *th, const struct task_threads *old, pid_t owner)
{
	uint32_t j = 0;

	th->det = malloc(th->n * sizeof(int));
	if (!th->det)
		fatal("task: out of memory");
	for (uint32_t i = 0; i < th->n; i++) {
		th->det[i] = dup_counter(old, old->det, &j, th->tid[i]);
		if (th->det[i] < 0)
			th->det[i] = perfwatch_open(th->tid[i], false, owner, VS_SIG_NOTIFY);
		if (th->det[i] < 0)
			th->det[i] = -1;
	}
}

/*
 * Gives th the cgroup enforcer counters of its threads (t->enf_cgroup): the old list's
 * (dup'ed) when keep and the thread had one, else new ones, disabled (the dispatcher arms
 * them all together at a new list). The leader's entry is t->enf_fd's (-1 here). A counter
 * that cannot be opened is -1: that thread, when it is the one running at the overflow,
 * is stopped late (the others' SIGSTOPs wake their threads to stop the process).
 */
static void give_stoppers(const struct task *t, struct task_threads *th,
                          const struct task_threads *old, bool keep)
{
	uint32_t j = 0;

	th->stop = malloc(th->n * sizeof(int));
	if (!th->stop)
		fatal("task: out of memory");
	for (uint32_t i = 0; i < th->n; i++) {
		th->stop[i] = dup_counter(old, keep ? old->stop : NULL, &j, th->tid[i]);
		if (th->tid[i] == t->pid) {
			if (th->stop[i] >= 0)
				close(th->stop[i]);
			th->stop[i] = -1;
		} else if (th->stop[i] < 0) {
			th->stop[i] =
			    perfwatch_cgroup_stopper(t->cg_fd, t->enf_cpu, th->tid[i], t->enf_fd);
		}
		if (th->stop[i] < 0)
			th->stop[i] = -1;
	}
}

/* A new list with old's threads and no counters (each list owns its own). */
static struct task_threads *copy_tids(const struct task_threads *old)
{
	struct task_threads *th = malloc(sizeof(*th) + old->n * sizeof(pid_t));

	if (!th)
		fatal("task: out of memory");
	memcpy(th, old, sizeof(*th) + old->n * sizeof(pid_t));
	th->det = NULL;
	th->stop = NULL;
	return th;
}

/* Pins the threads of th that old does not have (both ascending) to t's CPU. */
static void pin_new(const struct task *t, const struct task_threads *th,
                    const struct task_threads *old)
{
	cpu_set_t set;
	uint32_t i, j = 0;

	CPU_ZERO(&set);
	CPU_SET(t->cpu, &set);
	for (i = 0; i < th->n; i++) {
		while (j < old->n && old->tid[j] < th->tid[i])
			j++;
		if (j < old->n && old->tid[j] == th->tid[i])
			continue;
		if (t->cpu >= 0 && sched_setaffinity(th->tid[i], sizeof(set), &set) < 0 &&
		    errno != ESRCH)
			log_warn("pid %d: cannot pin new thread %d", (int)t->pid, (int)th->tid[i]);
	}
}

/* Publishes th as t's thread list; the old one is freed after a grace period. */
static void publish_threads(struct task *t, struct task_threads *th)
{
	struct task_threads *old = t->threads;

	th->gen = old->gen + 1;
	rcu_assign_pointer(t->threads, th);
	call_rcu(&old->rcu, free_threads_rcu);
}

int task_refresh_threads(struct task *t, pid_t det_owner)
{
	struct task_threads *old = t->threads, *th;

	if (task_has_exited(t))
		return -ESRCH;
	th = read_threads(t->pid);
	if (!th)
		return -errno;
	adopt_started(t, th, old);
	if (th->n == old->n && memcmp(th->tid, old->tid, th->n * sizeof(pid_t)) == 0 &&
	    (det_owner > 0) == (old->det != NULL)) {
		threads_free(th);
		return 0;
	}
	pin_new(t, th, old);
	if (det_owner > 0)
		give_detectors(th, old, det_owner);
	if (t->enf_cgroup)
		give_stoppers(t, th, old, true);
	publish_threads(t, th);
	return 1;
}

int task_set_detectors(struct task *t, pid_t det_owner)
{
	const struct task_threads *old = t->threads;
	struct task_threads *th;

	if ((det_owner > 0) == (old->det != NULL)) {
		for (uint32_t i = 0; det_owner > 0 && i < old->n; i++)
			if (old->det[i] >= 0)
				perfwatch_owner(old->det[i], det_owner);
		return 0;
	}
	th = copy_tids(old);
	if (det_owner > 0)
		give_detectors(th, old, det_owner);
	if (t->enf_cgroup)
		give_stoppers(t, th, old, true);
	publish_threads(t, th);
	return 1;
}

int task_set_cgroup_enforcer(struct task *t)
{
	static bool warned;
	const struct task_threads *old = t->threads;
	struct task_threads *th;
	int fd;

	if (t->park != VSP_PARK_STOP || t->stop_kind != FREEZER_V2 || !t->cg_dir)
		return 0;
	if (t->enf_cgroup && t->enf_cpu == t->cpu)
		return 1;
	if (t->cg_fd < 0)
		t->cg_fd = open(t->cg_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->enf_fd >= 0) { /* moved: counted on the old CPU, and it may have stopped it */
		perfwatch_close(&t->enf_fd, &t->enf_page);
		t->run.enf_on = false;
		t->run.enf.armed = false;
		t->run.enf_head = 0;
		t->run.cont_after = ENF_CONT_JOBS;
	}
	fd = t->cg_fd < 0 ? -errno
	                  : perfwatch_enforcer_cgroup(t->cg_fd, t->cpu, t->pid, &t->enf_page);
	t->enf_cgroup = fd >= 0;
	if (fd < 0) {
		if (!warned)
			log_warnx("pid %d: no perf counter on its cgroup (%s): budget ends of "
			          "multi-threaded tasks are timed",
			          (int)t->pid, strerror(-fd));
		warned = true;
		return 0;
	}
	t->enf_fd = fd;
	t->enf_cpu = t->cpu;
	th = copy_tids(old); /* (watch_perf gives detectors next: task_set_detectors) */
	give_stoppers(t, th, old, false);
	publish_threads(t, th);
	return 1;
}

void task_disarm_stoppers(const struct task_threads *th)
{
	for (uint32_t i = 0; th->stop && i < th->n; i++)
		if (th->stop[i] >= 0)
			perfwatch_disarm(th->stop[i]);
}
