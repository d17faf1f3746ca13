/*
 * vsched/wd_restore.c: puts back every task of a watchdog table (watchdog.c's file comment
 * says when and why): policy and priority on every thread, CPU affinity, out of its freezer
 * cgroup, SIGCONT. Used by the guardian when vsched ends (wd_guardian.c), and by a starting
 * vsched for the tables of a vsched killed together with its guardian (watchdog_recover).
 */
#include "wd_table.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"

#define WD_MAX_PASSES    4 /* thread-list passes per task at restore */
#define WD_CONT_AGAIN_MS 5 /* second SIGCONT pass after the restore */

static int wd_pidfd_signal(int pidfd, int sig)
{
	return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

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
void wd_restore_all(const struct wd_table *tab, uint32_t n, pid_t owner)
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
	if (tab == MAP_FAILED || tab->max_tasks < 1 || tab->max_tasks > WD_MAX_TASKS ||
	    !wd_table_ok(tab, tab->max_tasks) ||
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
