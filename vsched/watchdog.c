/*
 * Crash safety: a guardian process that restores every managed task when vsched ends.
 * This file is vsched's side (start, track, check, stop the guardian; the table's copy on
 * file); the guardian process is wd_guardian.c, the restore of a table's tasks wd_restore.c,
 * the table's layout wd_table.h.
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
#include "wd_table.h"

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

#define WD_READY_TIMEOUT 2000 /* ms the guardian has to report ready */
#define WD_STOP_TIMEOUT  1000 /* ms the guardian has to exit after 'Q' */
#define WD_EOF_WAIT_MS   100  /* how long a guardian that closed its socket has to exit */

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
