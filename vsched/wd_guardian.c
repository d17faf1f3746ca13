/*
 * vsched/wd_guardian.c: the guardian process, `vsched --watchdog MEMFD FD MAX_TASKS`, started
 * by vsched itself (watchdog.c's file comment): it checks its arguments, becomes a process
 * that nothing but SIGKILL ends, and waits for vsched to end; then it restores the tasks of
 * the table (wd_restore.c) unless vsched dismissed it.
 */
#include "wd_table.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

#define WD_EXIT_USAGE 2

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
	if (!wd_table_ok(tab, (uint32_t)*max)) {
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
