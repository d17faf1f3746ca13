/*
 * Crash safety: a guardian process that restores every managed task when vsched ends.
 *
 * Guarantee (DESIGN.md §2): whatever ends vsched — SIGTERM, SIGINT, a crash, kill -9 — every
 * task it changed gets back the policy (SCHED_RESET_ON_FORK included), priority and CPU
 * affinity it had before and is sent SIGCONT, within 100 ms. An orderly exit restores tasks in
 * vsched itself (sched_shutdown) and then dismisses the guardian with watchdog_stop().
 *
 * How:
 *  - The task table lives in a sealed memfd mapping shared with the guardian: a fixed array of
 *    slots {state, pid, starttime, struct sched_saved}. vsched fills a slot BEFORE it changes
 *    a task (watchdog_track) and frees it only after restoring it (watchdog_untrack). A slot
 *    is claimed with a CAS (FREE -> BUSY), its fields written, then published with a release
 *    store (VALID); the guardian reads state with acquire and copies only VALID slots. So a
 *    vsched that dies half-way through a track leaves a slot that is ignored — correctly,
 *    since the task was not changed yet. The guardian reads the table only once vsched is
 *    dead, so no slot changes under it.
 *  - Death is seen as EOF on a socketpair whose other end only vsched holds (SOCK_CLOEXEC:
 *    no exec'd child inherits it; the guardian closes every fd it does not need). The kernel
 *    closes it however vsched ends, including SIGKILL. PR_SET_PDEATHSIG is not used: it
 *    fires when the forking *thread* exits, not the process.
 *    A socketpair rather than a pipe: it carries the guardian's "ready" byte back, and
 *    send(MSG_NOSIGNAL) to a dead guardian cannot SIGPIPE vsched.
 *  - watchdog_start forks and the child at once re-executes vsched's own binary (fexecve
 *    of /proc/self/exe, opened at start) as `vsched --watchdog MEMFD FD MAX_TASKS`: vsched
 *    is multi-threaded, so between fork and exec only async-signal-safe calls are made.
 *    The guardian (watchdog_main) calls setsid (a terminal's Ctrl-C does not reach it),
 *    ignores SIGINT/SIGTERM/SIGHUP/SIGPIPE/SIGQUIT, mlockalls, sets oom_score_adj -1000,
 *    runs at SCHED_FIFO 99 on every CPU (so SCHED_FIFO 98 tasks still spinning cannot
 *    starve it), reports ready and blocks in read().
 *  - On EOF, for each VALID slot whose /proc/PID start time still matches (pid reuse guard;
 *    the /proc/PID directory fd pins the process, and SIGCONT goes through it as a pidfd):
 *    every thread in /proc/PID/task gets sched_setscheduler(saved) and
 *    sched_setaffinity(saved), repeated until a pass changes nothing (threads created
 *    meanwhile); then, for a task parked through the cgroup freezer, its cgroup is thawed,
 *    every process in it moved back to the parent cgroup and the cgroup removed
 *    (freezer_detach); then SIGCONT. A task that is gone may have left its cgroup behind
 *    (it exited just before vsched died, maybe with a child still in it): that cgroup is
 *    found by name and released the same way (freezer_release_gone). vsched's freezer
 *    sentinel is removed too. A second
 *    SIGCONT pass follows WD_CONT_AGAIN_MS later: a perf enforcer of vsched's could still
 *    stop a task in the moment between vsched's socket and its perf counters closing.
 *    Only then does it log, and exit.
 *  - On 'Q' (watchdog_stop) the guardian exits without touching anything.
 *  - watchdog_check (vsched housekeeping) notices a dead guardian (waitpid WNOHANG on its
 *    unreaped child) and starts a new one over the same memfd: tracked tasks stay protected.
 *  - Both killed at once (a SIGKILL to the whole process tree: CTest's timeout, a service
 *    manager's final kill) leaves the tasks changed, maybe frozen at SCHED_RR 98. So every
 *    slot is mirrored into a copy of the table on file, WD_RUNDIR/tasks.<vsched pid>
 *    (removed at an orderly end, and by the guardian after its restore); the next vsched to
 *    start restores the tasks of every copy whose owner is no running vsched, as the
 *    guardian would have (watchdog_recover), and removes it.
 *
 * Limits: the saved attributes are per process (the main thread's), applied to every thread.
 * Child processes forked by a task are not tracked. A crash that dumps core delays EOF until
 * the dump is written (the kernel closes files after the dump).
 */
#include "vsched.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"

#define WD_MAGIC         0x7673776467303032ULL /* "vswdg002" */
#define WD_MAX_TASKS     65536
#define WD_READY_TIMEOUT 2000 /* ms the guardian has to report ready */
#define WD_STOP_TIMEOUT  1000 /* ms the guardian has to exit after 'Q' */
#define WD_MAX_PASSES    4    /* thread-list passes per task at restore */
#define WD_CONT_AGAIN_MS 5    /* second SIGCONT pass after the restore */
#define WD_EOF_WAIT_MS   100  /* how long a guardian that closed its socket has to exit */
#define WD_EXIT_USAGE    2
#define WD_RUNDIR        "/run/vsched" /* the tables' copies on file: tasks.<vsched pid> */

enum { WD_FREE = 0, WD_BUSY = 1, WD_VALID = 2 };

_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "slot state must be lock-free (shared memory)");

struct wd_slot {
	_Atomic uint32_t state; /* WD_FREE, WD_BUSY (being written), WD_VALID */
	int32_t pid;
	uint64_t starttime; /* /proc/PID/stat field 22 */
	struct sched_saved saved;
	int32_t cgroup; /* FREEZER_* hierarchy the task is parked through, FREEZER_NONE */
};

/* The shared table. Both processes run the same binary, so the layout is the same. */
struct wd_table {
	uint64_t magic;
	uint32_t slot_size; /* sizeof(struct wd_slot), checked by the guardian */
	uint32_t max_tasks;
	struct wd_slot slot[];
};

struct watchdog {
	int memfd;
	struct wd_table *tab; /* MAP_SHARED, read-write in vsched, read-only in the guardian */
	size_t maplen;
	int max_tasks;
	int exefd; /* our own executable, opened once: a restart runs the same binary */
	int sock;  /* vsched's end of the socketpair: its closing is the guardian's signal */
	pid_t pid; /* current guardian (our unreaped child, so the pid is not reused), -1 if none */
	struct wd_table
	    *copy; /* the table's copy in WD_RUNDIR/tasks.<our pid>, MAP_FAILED if none */
};

static size_t wd_table_size(int max_tasks)
{
	return offsetof(struct wd_table, slot) + (size_t)max_tasks * sizeof(struct wd_slot);
}

static int wd_pidfd_signal(int pidfd, int sig)
{
	return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

/* The path of the table's copy of vsched owner. */
static void wd_copy_path(pid_t owner, char *buf, size_t len)
{
	snprintf(buf, len, "%s/tasks.%d", WD_RUNDIR, (int)owner);
}

/* ---- vsched side ---- */

/*
 * Creates the table's copy on file (tmpfs: gone at reboot, like every process it names), for
 * watchdog_recover. Without it (no /run: not root) a vsched killed together with its guardian
 * leaves its tasks as they are; logged.
 */
static void wd_copy_open(struct watchdog *wd)
{
	char path[64];
	int fd = -1;

	wd->copy = MAP_FAILED;
	wd_copy_path(getpid(), path, sizeof(path));
	if ((mkdir(WD_RUNDIR, 0700) == 0 || errno == EEXIST) &&
	    (fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600)) >= 0 &&
	    ftruncate(fd, (off_t)wd->maplen) == 0)
		wd->copy = mmap(NULL, wd->maplen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (fd >= 0)
		close(fd);
	if (wd->copy == MAP_FAILED) {
		log_warn("watchdog: %s (no copy of the task table: if vsched and its guardian are "
		         "killed together, their tasks are left as they are)",
		         path);
		if (fd >= 0)
			unlink(path);
		return;
	}
	wd->copy->magic = WD_MAGIC;
	wd->copy->slot_size = sizeof(struct wd_slot);
	wd->copy->max_tasks = (uint32_t)wd->max_tasks;
}

/* Mirrors slot i of the table (owned by the caller) into the copy. */
static void wd_copy_slot(struct watchdog *wd, int i)
{
	const struct wd_slot *s = &wd->tab->slot[i];
	struct wd_slot *d;
	uint32_t st;

	if (wd->copy == MAP_FAILED)
		return;
	d = &wd->copy->slot[i];
	st = atomic_load_explicit(&s->state, memory_order_acquire);
	if (st == WD_VALID) {
		d->pid = s->pid;
		d->starttime = s->starttime;
		d->saved = s->saved;
		d->cgroup = s->cgroup;
	}
	atomic_store_explicit(&d->state, st == WD_VALID ? WD_VALID : WD_FREE, memory_order_release);
}

static void wd_copy_close(struct watchdog *wd)
{
	char path[64];

	if (wd->copy == MAP_FAILED)
		return;
	munmap(wd->copy, wd->maplen);
	wd->copy = MAP_FAILED;
	wd_copy_path(getpid(), path, sizeof(path));
	unlink(path);
}

/*
 * Moves fd above 2 (close-on-exec kept): the guardian refuses descriptors 0-2, which vsched
 * could be handed if it was started with stdio closed. Returns the fd, or -1 with fd closed.
 */
static int wd_fd_above2(int fd)
{
	int nfd;

	if (fd < 0 || fd > 2)
		return fd;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return nfd;
}

/* Waits up to timeout_ms for fd to become readable. Returns 1, 0 on timeout, -1 on error. */
static int wd_wait_readable(int fd, int timeout_ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	mono_ns end = mono_now() + (mono_ns)timeout_ms * NSEC_PER_MSEC;

	for (;;) {
		mono_ns now = mono_now();
		int left = mono_before(now, end) ? (int)((end - now) / NSEC_PER_MSEC) + 1 : 0;
		int r = poll(&p, 1, left);

		if (r >= 0 || errno != EINTR)
			return r > 0 ? 1 : r;
	}
}

/*
 * True once the guardian has exited; reaps it then. The guardian is our child and stays
 * unreaped until here, so its pid cannot name another process (vsched never calls
 * waitpid(-1); if something else reaped it anyway, ECHILD also means it is gone).
 * waitpid rather than a pidfd: valgrind does not know pidfd_open.
 */
static bool wd_exited(struct watchdog *wd)
{
	pid_t r;

	if (wd->pid <= 0)
		return true;
	do
		r = waitpid(wd->pid, NULL, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return false;
	wd->pid = -1;
	return true;
}

/* Reaps the guardian, waiting up to timeout_ms for it to exit, then SIGKILLs it. */
static void wd_reap(struct watchdog *wd, int timeout_ms)
{
	for (int i = 0; i < timeout_ms && !wd_exited(wd); i++)
		usleep(1000);
	if (wd_exited(wd))
		return;
	log_warnx("watchdog: guardian %d did not exit; killing it", (int)wd->pid);
	kill(wd->pid, SIGKILL);
	while (waitpid(wd->pid, NULL, 0) < 0 && errno == EINTR)
		;
	wd->pid = -1;
}

/*
 * Starts a guardian over wd->memfd and waits until it reports ready. Returns 0, or -1
 * (logged) with no guardian running and wd->sock closed.
 */
static int wd_spawn(struct watchdog *wd)
{
	extern char **environ;
	char a_mem[16], a_sock[16], a_max[16], ready = 0;
	char *argv[] = {"vsched-watchdog", "--watchdog", a_mem, a_sock, a_max, NULL};
	sigset_t all;
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		log_warn("watchdog: socketpair");
		return -1;
	}
	sv[1] = wd_fd_above2(sv[1]);
	if (sv[1] < 0) {
		log_warn("watchdog: dup");
		close(sv[0]);
		return -1;
	}
	/* Everything the child needs is prepared here: after fork it only calls AS-safe code. */
	snprintf(a_mem, sizeof(a_mem), "%d", wd->memfd);
	snprintf(a_sock, sizeof(a_sock), "%d", sv[1]);
	snprintf(a_max, sizeof(a_max), "%d", wd->max_tasks);
	sigemptyset(&all);

	pid = fork();
	if (pid < 0) {
		log_warn("watchdog: fork");
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0) {
		/* Child of a possibly multi-threaded process: async-signal-safe calls only. */
		if (fcntl(wd->memfd, F_SETFD, 0) < 0 || fcntl(sv[1], F_SETFD, 0) < 0)
			_exit(127);
		sigprocmask(SIG_SETMASK, &all, NULL);
		fexecve(wd->exefd, argv, environ);
		_exit(127);
	}
	close(sv[1]);
	wd->sock = sv[0];
	wd->pid = pid;

	/* 'R': running at SCHED_FIFO 99; 'r': running without real-time priority. */
	if (wd_wait_readable(wd->sock, WD_READY_TIMEOUT) != 1 || read(wd->sock, &ready, 1) != 1 ||
	    (ready != 'R' && ready != 'r')) {
		log_warnx("watchdog: guardian %d did not start (re-exec of vsched failed?)",
		          (int)pid);
		wd_reap(wd, 0);
		goto fail;
	}
	if (ready == 'r')
		log_warnx("watchdog: guardian %d runs without SCHED_FIFO %d: busy real-time tasks "
		          "may delay a restore",
		          (int)pid, VS_PRIO_DISPATCH);
	log_debug("watchdog: guardian %d ready", (int)pid);
	return 0;
fail:
	close(wd->sock);
	wd->sock = -1;
	wd->pid = -1;
	return -1;
}

struct watchdog *watchdog_start(int max_tasks)
{
	struct watchdog *wd;

	if (max_tasks < 1 || max_tasks > WD_MAX_TASKS) {
		log_warnx("watchdog: max_tasks %d not in [1, %d]", max_tasks, WD_MAX_TASKS);
		return NULL;
	}
	wd = calloc(1, sizeof(*wd));
	if (wd == NULL) {
		log_warn("watchdog: calloc");
		return NULL;
	}
	wd->max_tasks = max_tasks;
	wd->maplen = wd_table_size(max_tasks);
	wd->sock = -1;
	wd->pid = -1;
	wd->tab = MAP_FAILED;
	wd->copy = MAP_FAILED;
	wd->memfd = -1;

	/*
	 * Opened rather than exec'ed by path: the guardian is the same binary even after a
	 * package upgrade replaced the file (a new layout would be refused), and valgrind
	 * hands its client's executable for this path.
	 */
	wd->exefd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (wd->exefd < 0) {
		log_warn("watchdog: /proc/self/exe");
		goto fail;
	}

	wd->memfd = wd_fd_above2(memfd_create("vsched-watchdog", MFD_CLOEXEC | MFD_ALLOW_SEALING));
	if (wd->memfd < 0) {
		log_warn("watchdog: memfd_create");
		goto fail;
	}
	/* Fixed size, sealed: the guardian can trust it and never takes SIGBUS. */
	if (ftruncate(wd->memfd, (off_t)wd->maplen) < 0 ||
	    fcntl(wd->memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		log_warn("watchdog: sizing the task table");
		goto fail;
	}
	wd->tab = mmap(NULL, wd->maplen, PROT_READ | PROT_WRITE, MAP_SHARED, wd->memfd, 0);
	if (wd->tab == MAP_FAILED) {
		log_warn("watchdog: mmap");
		goto fail;
	}
	/* A fresh memfd reads as zeros: every slot is WD_FREE. */
	wd->tab->magic = WD_MAGIC;
	wd->tab->slot_size = sizeof(struct wd_slot);
	wd->tab->max_tasks = (uint32_t)max_tasks;
	wd_copy_open(wd);

	if (wd_spawn(wd) < 0)
		goto fail;
	return wd;
fail:
	wd_copy_close(wd);
	if (wd->tab != MAP_FAILED)
		munmap(wd->tab, wd->maplen);
	if (wd->memfd >= 0)
		close(wd->memfd);
	if (wd->exefd >= 0)
		close(wd->exefd);
	free(wd);
	return NULL;
}

int watchdog_track(struct watchdog *wd, pid_t pid, uint64_t starttime,
                   const struct sched_saved *saved, int cgroup)
{
	if (wd == NULL || pid <= 0 || starttime == 0 || saved == NULL || cgroup < FREEZER_NONE ||
	    cgroup > FREEZER_V2) {
		log_warnx("watchdog: refusing to track pid %d (start time %llu)", (int)pid,
		          (unsigned long long)starttime);
		return -1;
	}
	for (int i = 0; i < wd->max_tasks; i++) {
		struct wd_slot *s = &wd->tab->slot[i];
		uint32_t expect = WD_FREE;

		/* Claim: only one thread can move a slot FREE -> BUSY. */
		if (!atomic_compare_exchange_strong_explicit(
		        &s->state, &expect, WD_BUSY, memory_order_acquire, memory_order_relaxed))
			continue;
		s->pid = pid;
		s->starttime = starttime;
		s->saved = *saved;
		s->cgroup = cgroup;
		/* Publish: the fields above are visible before VALID (release). */
		atomic_store_explicit(&s->state, WD_VALID, memory_order_release);
		wd_copy_slot(wd, i);
		return i;
	}
	log_warnx("watchdog: table full (%d tasks); pid %d is not protected", wd->max_tasks,
	          (int)pid);
	return -1;
}

void watchdog_untrack(struct watchdog *wd, int slot)
{
	if (wd == NULL || slot < 0 || slot >= wd->max_tasks)
		return;
	atomic_store_explicit(&wd->tab->slot[slot].state, WD_FREE, memory_order_release);
	wd_copy_slot(wd, slot);
}

/* Slots in use (for messages). */
static int wd_in_use(const struct watchdog *wd)
{
	int n = 0;

	for (int i = 0; i < wd->max_tasks; i++)
		if (atomic_load_explicit(&wd->tab->slot[i].state, memory_order_relaxed) != WD_FREE)
			n++;
	return n;
}

/* True when the guardian's socket reads EOF: it closed it, so it is dying. */
static bool wd_sock_eof(const struct watchdog *wd)
{
	char c;

	return wd->sock >= 0 && recv(wd->sock, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

int watchdog_check(struct watchdog *wd)
{
	pid_t old;

	if (wd == NULL)
		return -1;
	old = wd->pid;
	if (wd_sock_eof(wd))
		wd_reap(wd, WD_EOF_WAIT_MS);
	if (!wd_exited(wd))
		return 0;
	if (old > 0) /* (-1: the last restart failed; try again) */
		log_warnx("watchdog: guardian %d died; starting a new one (%d task(s) tracked)",
		          (int)old, wd_in_use(wd));
	if (wd->sock >= 0) {
		close(wd->sock);
		wd->sock = -1;
	}
	if (wd_spawn(wd) < 0)
		return -1; /* logged; the next call retries */
	log_info("watchdog: guardian %d started", (int)wd->pid);
	return 1;
}

pid_t watchdog_pid(const struct watchdog *wd)
{
	return wd ? wd->pid : -1;
}

int watchdog_fd(const struct watchdog *wd)
{
	return wd ? wd->sock : -1;
}

void watchdog_stop(struct watchdog **wdp)
{
	struct watchdog *wd;
	int left;

	if (wdp == NULL || *wdp == NULL)
		return;
	wd = *wdp;
	*wdp = NULL;
	left = wd_in_use(wd);
	if (left > 0)
		log_warnx("watchdog: stopping with %d task(s) still tracked; they are left as they "
		          "are",
		          left);
	if (wd->sock >= 0) {
		/* 'Q' before EOF: the guardian exits without restoring. */
		if (send(wd->sock, "Q", 1, MSG_NOSIGNAL) != 1)
			log_warn("watchdog: telling guardian %d to quit", (int)wd->pid);
		close(wd->sock);
	}
	wd_reap(wd, WD_STOP_TIMEOUT);
	wd_copy_close(wd);
	munmap(wd->tab, wd->maplen);
	close(wd->memfd);
	close(wd->exefd);
	free(wd);
}

/* ---- guardian side ---- */

/* Start time (field 22) from the stat file of the /proc/PID directory dfd; 0 if unreadable. */
static uint64_t wd_starttime(int dfd)
{
	char buf[1024], *p, *end;
	ssize_t n;
	int fd = openat(dfd, "stat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* comm may contain blanks and ')' */
	if (p == NULL)
		return 0;
	for (int field = 3; field <= 22; field++) { /* p: the blank before field `field` */
		p = strchr(p + 1, ' ');
		if (p == NULL)
			return 0;
	}
	errno = 0;
	uint64_t v = strtoull(p + 1, &end, 10);
	return (errno || end == p + 1) ? 0 : v;
}

/* Policy and priority the guardian applies: the saved ones, or SCHED_OTHER if they are bad. */
static void wd_target(const struct sched_saved *sv, int *policy, struct sched_param *prm)
{
	int pol = sv->policy & ~SCHED_RESET_ON_FORK;
	int lo = sched_get_priority_min(pol), hi = sched_get_priority_max(pol);

	/* sched_setscheduler cannot set SCHED_DEADLINE; a corrupt slot gets the safe default. */
	if (pol == SCHED_DEADLINE || lo < 0 || sv->priority < lo || sv->priority > hi) {
		*policy = SCHED_OTHER;
		prm->sched_priority = 0;
		return;
	}
	*policy = sv->policy;
	prm->sched_priority = sv->priority;
}

/* True when thread tid already has the target attributes. */
static bool wd_thread_ok(pid_t tid, int policy, const struct sched_param *prm,
                         const cpu_set_t *mask)
{
	struct sched_param cur;
	cpu_set_t cmask;

	if (sched_getscheduler(tid) != policy || sched_getparam(tid, &cur) < 0 ||
	    cur.sched_priority != prm->sched_priority)
		return false;
	if (mask == NULL)
		return true;
	return sched_getaffinity(tid, sizeof(cmask), &cmask) == 0 && CPU_EQUAL(&cmask, mask);
}

/*
 * One pass over the threads of the process at dfd. Returns the number of threads it had to
 * change (0: all done), -1 if the thread list cannot be read. *failed counts refusals.
 */
static int wd_restore_pass(int dfd, int policy, const struct sched_param *prm,
                           const cpu_set_t *mask, int *failed)
{
	struct dirent *de;
	int changed = 0, tfd;
	DIR *d;

	tfd = openat(dfd, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (tfd < 0)
		return -1;
	d = fdopendir(tfd);
	if (d == NULL) {
		close(tfd);
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);

		if (*end != '\0' || tid <= 0 || tid > INT_MAX)
			continue; /* "." and ".." */
		if (wd_thread_ok((pid_t)tid, policy, prm, mask))
			continue;
		changed++;
		/* Policy first: the thread must not stay at SCHED_FIFO 98 once continued. */
		if (sched_setscheduler((pid_t)tid, policy, prm) < 0 && errno != ESRCH)
			(*failed)++;
		if (mask && sched_setaffinity((pid_t)tid, sizeof(*mask), mask) < 0 &&
		    errno != ESRCH)
			(*failed)++;
	}
	closedir(d);
	return changed;
}

/*
 * SIGCONT to the process at /proc dir dfd, only after its policy is back. The dir fd is
 * accepted as a pidfd; without pidfd_send_signal (valgrind), kill() after checking the
 * start time again. Returns 0, or -1 if refused.
 */
static int wd_continue(int dfd, const struct wd_slot *s)
{
	if (wd_pidfd_signal(dfd, SIGCONT) == 0)
		return 0;
	if (errno == ENOSYS && wd_starttime(dfd) == s->starttime)
		kill(s->pid, SIGCONT);
	else if (errno != ESRCH)
		return -1;
	return 0;
}

/*
 * Restores one task. Returns 1 restored, 0 gone or pid reused (nothing touched), -1 if some
 * call was refused (it still gets SIGCONT).
 */
static int wd_restore_task(const struct wd_slot *s)
{
	struct sched_param prm;
	const cpu_set_t *mask = &s->saved.affinity;
	char path[32];
	int dfd, policy, failed = 0, passes = 0, r;

	snprintf(path, sizeof(path), "/proc/%d", (int)s->pid);
	/* The directory fd pins this process: a later pid reuse cannot redirect us. */
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		/* Exited before vsched removed its cgroup: thawed and removed here (a child may
		 * still be in it). */
		struct freezer fz;
		if (s->cgroup != FREEZER_NONE && freezer_find(&fz, s->cgroup) == 0)
			freezer_release_gone(&fz, s->pid);
		return 0;
	}
	if (wd_starttime(dfd) != s->starttime) {
		close(dfd);
		return 0;
	}
	wd_target(&s->saved, &policy, &prm);
	if (CPU_COUNT(mask) == 0)
		mask = NULL; /* a corrupt mask: leave affinity alone rather than fail */
	/* Repeat until a pass changes nothing: catches threads created during a pass. */
	do
		r = wd_restore_pass(dfd, policy, &prm, mask, &failed);
	while (r > 0 && ++passes < WD_MAX_PASSES);
	if (r != 0)
		failed++;
	/* Thawed and out of its cgroup only after the policy is back. */
	if (s->cgroup != FREEZER_NONE) {
		struct freezer fz;
		if (freezer_find(&fz, s->cgroup) < 0 || freezer_detach(&fz, s->pid) < 0)
			failed++;
	}
	if (wd_continue(dfd, s) < 0)
		failed++;
	close(dfd);
	return failed ? -1 : 1;
}

/* Copies VALID slot i of tab (checked) into *out. */
static bool wd_slot_copy(const struct wd_table *tab, uint32_t i, struct wd_slot *out)
{
	if (atomic_load_explicit(&tab->slot[i].state, memory_order_acquire) != WD_VALID)
		return false;
	out->pid = tab->slot[i].pid;
	out->starttime = tab->slot[i].starttime;
	out->saved = tab->slot[i].saved;
	out->cgroup = tab->slot[i].cgroup;
	if (out->cgroup < FREEZER_NONE || out->cgroup > FREEZER_V2)
		out->cgroup = FREEZER_NONE;
	return out->pid > 0;
}

/* SIGCONT again to every task still alive (see the file comment). */
static void wd_continue_again(const struct wd_table *tab, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct wd_slot s;
		char path[32];
		int dfd;

		if (!wd_slot_copy(tab, i, &s))
			continue;
		snprintf(path, sizeof(path), "/proc/%d", (int)s.pid);
		dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			continue;
		if (wd_starttime(dfd) == s.starttime)
			wd_continue(dfd, &s);
		close(dfd);
	}
}

/*
 * Restores every VALID slot of the n checked at start (not tab->max_tasks: a crashing vsched
 * may have scribbled over the header, and every field read here is checked before use),
 * then removes the freezer sentinel of vsched (owner). Called once vsched is dead, so the
 * table no longer changes.
 */
static void wd_restore_all(const struct wd_table *tab, uint32_t n, pid_t owner)
{
	mono_ns t0 = mono_now();
	int ok = 0, gone = 0, bad = 0;
	struct freezer fz;

	for (uint32_t i = 0; i < n; i++) {
		struct wd_slot s;

		if (!wd_slot_copy(tab, i, &s))
			continue;
		switch (wd_restore_task(&s)) {
		case 1:
			ok++;
			break;
		case 0:
			gone++;
			break;
		default:
			bad++;
			log_warnx("pid %d: restored only in part", (int)s.pid);
		}
	}
	mono_ns t1 = mono_now();
	if (freezer_find(&fz, FREEZER_V1) == 0)
		freezer_sentinel_remove(&fz, owner);
	usleep(WD_CONT_AGAIN_MS * 1000);
	wd_continue_again(tab, n);
	/* Logged after the work: a blocked stderr must not delay a restore. */
	log_info("vsched ended: restored %d task(s) in %llu us (%d gone, %d in part)", ok,
	         (unsigned long long)((t1 - t0) / NSEC_PER_USEC), gone, bad);
}

/* Parses a decimal int in [lo, hi]; returns 0 or -1. */
static int wd_parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	long v;

	if (s == NULL || *s == '\0')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end != '\0' || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

/* Closes every fd above 2 except keep. */
static void wd_close_others(int keep)
{
	if (keep > 3)
		close_range(3, (unsigned)keep - 1, 0);
	close_range((unsigned)keep + 1, ~0U, 0);
}

static void wd_usage(const char *why)
{
	fprintf(stderr,
	        "vsched --watchdog: %s (started by vsched itself: "
	        "--watchdog MEMFD FD MAX_TASKS)\n",
	        why);
}

/*
 * Checks the guardian's arguments (they are reachable from the command line) and maps the
 * table read-only. Returns it with *sock and *max set, or NULL after a usage line.
 */
static struct wd_table *wd_args(int argc, char **argv, int *sock, int *max)
{
	struct wd_table *tab;
	struct stat st;
	int memfd;

	if (argc != 5 || strcmp(argv[1], "--watchdog") != 0) {
		wd_usage("expected 3 arguments");
		return NULL;
	}
	if (wd_parse_int(argv[2], 3, INT_MAX, &memfd) < 0 ||
	    wd_parse_int(argv[3], 3, INT_MAX, sock) < 0 || memfd == *sock) {
		wd_usage("MEMFD and FD must be two distinct descriptors >= 3");
		return NULL;
	}
	if (wd_parse_int(argv[4], 1, WD_MAX_TASKS, max) < 0) {
		wd_usage("MAX_TASKS must be an integer in [1, 65536]");
		return NULL;
	}
	/* Only memfds (shmem) support seals. */
	if (fstat(memfd, &st) < 0 || !S_ISREG(st.st_mode) || fcntl(memfd, F_GET_SEALS) < 0) {
		wd_usage("MEMFD is not an open memfd");
		return NULL;
	}
	if ((size_t)st.st_size != wd_table_size(*max)) {
		wd_usage("MEMFD size does not match MAX_TASKS");
		return NULL;
	}
	if (fstat(*sock, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		wd_usage("FD is not an open socket");
		return NULL;
	}
	tab = mmap(NULL, wd_table_size(*max), PROT_READ, MAP_SHARED, memfd, 0);
	if (tab == MAP_FAILED) {
		wd_usage("cannot map MEMFD");
		return NULL;
	}
	if (tab->magic != WD_MAGIC || tab->slot_size != sizeof(struct wd_slot) ||
	    tab->max_tasks != (uint32_t)*max) {
		wd_usage("MEMFD does not hold a vsched task table");
		munmap(tab, wd_table_size(*max));
		return NULL;
	}
	close(memfd); /* the mapping stays */
	return tab;
}

/*
 * Becomes the guardian: no fd of vsched's but sock, its own session, deaf to terminal and
 * termination signals, locked in memory, last for the OOM killer, SCHED_FIFO 99 on every
 * CPU. Returns true when it runs at SCHED_FIFO.
 */
static bool wd_become(int sock)
{
	static const int ignored[] = {SIGINT,  SIGTERM, SIGHUP,  SIGPIPE,
	                              SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU};
	struct sched_param prm = {.sched_priority = VS_PRIO_DISPATCH};
	struct stat st;
	cpu_set_t all;
	sigset_t none;
	int mcl, fd;

	wd_close_others(sock); /* no fd of vsched's, above all no socket end, stays open */
	/* Log to stderr unless it is /dev/null (or closed), then to syslog. */
	log_init("vsched-watchdog", fstat(2, &st) == 0 && (!S_ISCHR(st.st_mode) || isatty(2)), 0);
	setsid();
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		signal(ignored[i], SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	prctl(PR_SET_NAME, "vsched-watchdog", 0, 0, 0);
	if (chdir("/") < 0)
		log_warn("chdir /");
	/* Not the first to be killed when memory runs out (root only; best effort). */
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "-1000", 5) < 0)
			log_debug("oom_score_adj: %s", strerror(errno));
		close(fd);
	}
	/* No page fault on the restore path. (ASan reserves terabytes: lock on fault only.) */
	mcl = MCL_CURRENT | MCL_FUTURE;
#ifdef VSCHED_SANITIZE
	mcl |= MCL_ONFAULT;
#endif
	if (mlockall(mcl) < 0)
		log_warn("mlockall");
	/* Allowed on every CPU (vsched's thread may have been pinned), above every task. */
	memset(&all, 0xff, sizeof(all));
	sched_setaffinity(0, sizeof(all), &all);
	if (sched_setscheduler(0, SCHED_FIFO, &prm) == 0)
		return true;
	log_warn("SCHED_FIFO %d", VS_PRIO_DISPATCH);
	return false;
}

/* Blocks until vsched says 'Q' (returns true) or its end of sock closes (false). */
static bool wd_wait(int sock)
{
	for (;;) {
		char c;
		ssize_t n = read(sock, &c, 1);

		if (n == 1 && c == 'Q')
			return true; /* orderly stop: vsched restored its tasks itself */
		if (n == 1)
			continue; /* unknown byte: ignore */
		if (n < 0 && errno == EINTR)
			continue;
		return false; /* EOF (or a reset): vsched is gone */
	}
}

int watchdog_main(int argc, char **argv)
{
	pid_t owner = getppid(); /* vsched: its freezer sentinel is removed at the end */
	struct wd_table *tab;
	int sock, max;
	bool rt;

	tab = wd_args(argc, argv, &sock, &max);
	if (!tab)
		return WD_EXIT_USAGE;
	rt = wd_become(sock);
	if (write(sock, rt ? "R" : "r", 1) != 1) {
		/* vsched is already gone: the read in wd_wait sees EOF. */
	}
	if (!wd_wait(sock)) {
		char path[64];

		wd_restore_all(tab, (uint32_t)max, owner);
		wd_copy_path(owner, path, sizeof(path));
		unlink(path); /* restored: nothing left for watchdog_recover */
	}
	return 0;
}

/* ---- recovery: vsched and its guardian both ended (a process-tree SIGKILL) ---- */

/* True when pid is a running vsched other than this process (by its name). */
static bool wd_vsched_alive(pid_t pid)
{
	char path[40], comm[32] = "";
	FILE *f;

	if (pid == getpid())
		return false;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return false;
	if (fgets(comm, sizeof(comm), f) == NULL)
		comm[0] = '\0';
	fclose(f);
	return strcmp(comm, "vsched\n") == 0;
}

/* Restores the tasks listed in the copy at path (of vsched owner, gone), then removes it. */
static void wd_recover_file(const char *path, pid_t owner)
{
	struct wd_table *tab = MAP_FAILED;
	struct stat st = {0};
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (size_t)st.st_size >= offsetof(struct wd_table, slot))
		tab = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (tab == MAP_FAILED || tab->magic != WD_MAGIC ||
	    tab->slot_size != sizeof(struct wd_slot) || tab->max_tasks < 1 ||
	    tab->max_tasks > WD_MAX_TASKS ||
	    wd_table_size((int)tab->max_tasks) != (size_t)st.st_size) {
		log_warnx("watchdog: %s is not a task table of this vsched: removed", path);
	} else {
		log_warnx("watchdog: vsched %d ended together with its guardian: restoring its "
		          "tasks from %s",
		          (int)owner, path);
		wd_restore_all(tab, tab->max_tasks, owner);
	}
	if (tab != MAP_FAILED)
		munmap(tab, (size_t)st.st_size);
	unlink(path);
}

int watchdog_recover(void)
{
	struct dirent *de;
	int n = 0;
	DIR *d = opendir(WD_RUNDIR);

	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		char path[300], *end;
		long owner;

		if (strncmp(de->d_name, "tasks.", 6) != 0)
			continue;
		owner = strtol(de->d_name + 6, &end, 10);
		if (*end != '\0' || owner <= 0 || owner > INT_MAX || wd_vsched_alive((pid_t)owner))
			continue;
		snprintf(path, sizeof(path), "%s/%s", WD_RUNDIR, de->d_name);
		wd_recover_file(path, (pid_t)owner);
		n++;
	}
	closedir(d);
	return n;
}
