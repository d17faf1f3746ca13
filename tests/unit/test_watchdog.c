/*
 * Unit tests for vsched/watchdog.c: when vsched ends, the guardian gives every tracked task
 * back its policy, priority and affinity and leaves it running.
 *
 * Each scenario forks a "fake vsched" that starts the watchdog, saves and tracks victims
 * (children of the test process that spin, at most VICTIM_LIFE_S seconds), changes them to
 * SCHED_FIFO 98 pinned to one CPU (and SIGSTOPs them), then dies in some way. The test
 * polls the victims and asserts they are SCHED_OTHER, on their original CPUs and not
 * stopped within RESTORE_BOUND_MS (generous; the goal is 100 ms, the time is printed).
 * Needs root for SCHED_FIFO and two CPUs; skips otherwise. The test process is a child
 * subreaper, so the guardians orphaned by a dead fake vsched are reaped here.
 *
 * The guardian re-executes this binary with --watchdog ...: main() below dispatches it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procfs.h"
#include "vsched.h"

#define VICTIM_LIFE_S    20
#define RESTORE_BOUND_MS 1000
#define MAX_VICTIMS      2

/* How the fake vsched ends. */
enum fake_end {
	END_KILL9,          /* the test sends SIGKILL */
	END_ABORT,          /* abort(): a crash */
	END_EXIT,           /* _exit(3) without watchdog_stop: a bug or a fatal() */
	END_STOP,           /* watchdog_stop, then _exit(0): orderly, nothing restored */
	END_RESTART_KILL9,  /* kills its guardian, watchdog_check restarts it; then SIGKILL */
	END_SCRIBBLE_KILL9, /* overwrites the table header (a wild write), then SIGKILL */
};

struct scenario {
	int nvictims;
	bool stop[MAX_VICTIMS];   /* SIGSTOP the victim after raising it */
	uint64_t starttime_delta; /* added to the tracked start time (pid-reuse guard test) */
	enum fake_end end;
};

struct fake_report {
	int ok;         /* 1, or 0 with why */
	pid_t guardian; /* guardian serving at the end (after a restart, the new one) */
	char why[128];
};

struct run {
	pid_t fake;
	pid_t victim[MAX_VICTIMS];
	cpu_set_t orig_mask;
	int pin_cpu;
	struct fake_report rep;
	int cmd_fd; /* test -> fake vsched */
};

static int pin_cpu_choice = -1;

/* ---- helpers ---- */

static void sleep_us(long us)
{
	struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* State (field 3) and start time (field 22) of pid; returns 0 or -1. */
static int proc_stat(pid_t pid, char *state, uint64_t *starttime)
{
	struct procfs_stat ps;

	if (procfs_stat(pid, 0, &ps) != 0)
		return -1;
	if (state)
		*state = ps.state;
	if (starttime)
		*starttime = ps.starttime;
	return 0;
}

static char proc_state(pid_t pid)
{
	char st = '?';
	proc_stat(pid, &st, NULL);
	return st;
}

static bool can_run_rt(void)
{
	struct sched_param p = {.sched_priority = 1};
	pid_t pid;
	int status;

	if (geteuid() != 0)
		return false;
	pid = fork();
	if (pid == 0)
		_exit(sched_setscheduler(0, SCHED_FIFO, &p) == 0 ? 0 : 1);
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0;
}

static void need_rt(void)
{
	if (!can_run_rt()) {
		print_message("SKIP: needs root and SCHED_FIFO\n");
		skip();
	}
	if (pin_cpu_choice < 0) {
		print_message("SKIP: needs two CPUs in the test's affinity mask\n");
		skip();
	}
}

/* A victim: spins in 1 ms bursts with 1 ms pauses, VICTIM_LIFE_S at most. */
static pid_t spawn_victim(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		mono_ns end = mono_now() + VICTIM_LIFE_S * NSEC_PER_SEC;

		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		while (mono_before(mono_now(), end)) {
			mono_ns burst = mono_now() + NSEC_PER_MSEC;
			while (mono_before(mono_now(), burst))
				;
			sleep_us(1000);
		}
		_exit(0);
	}
	return pid;
}

/*
 * Waits up to ms for pid (our child) to exit; SIGKILLs it after. Returns the wait status, -1
 * if it had to be killed or is not our child (anymore).
 */
static int reap_within(pid_t pid, int ms)
{
	int status = -1;

	for (int i = 0; i < ms; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return status;
		if (r < 0 && errno == ECHILD)
			return -1;
		sleep_us(1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

/* True when pid is SCHED_OTHER, has mask and is not stopped. */
static bool is_restored(pid_t pid, const cpu_set_t *mask)
{
	cpu_set_t cur;
	char st = proc_state(pid);

	return sched_getscheduler(pid) == SCHED_OTHER &&
	       sched_getaffinity(pid, sizeof(cur), &cur) == 0 && CPU_EQUAL(&cur, mask) &&
	       st != 'T' && st != 't';
}

/* True when pid is still as the fake vsched left it: FIFO 98, pinned, stopped if stopped. */
static bool is_untouched(pid_t pid, int cpu, bool stopped)
{
	struct sched_param p;
	cpu_set_t cur;

	return sched_getscheduler(pid) == SCHED_FIFO && sched_getparam(pid, &p) == 0 &&
	       p.sched_priority == VS_PRIO_RAISED &&
	       sched_getaffinity(pid, sizeof(cur), &cur) == 0 && CPU_COUNT(&cur) == 1 &&
	       CPU_ISSET(cpu, &cur) && (!stopped || proc_state(pid) == 'T');
}

/* ---- the fake vsched ---- */

static _Noreturn void fake_fail(int rep_fd, struct fake_report *r, const char *why)
{
	r->ok = 0;
	snprintf(r->why, sizeof(r->why), "%s (%s)", why, strerror(errno));
	if (write(rep_fd, r, sizeof(*r)) < 0)
		_exit(2);
	_exit(2);
}

/*
 * A wild write by a crashing vsched: sets the max_tasks word of the shared table header
 * (offset 12: u64 magic, u32 slot size, u32 max_tasks) to 0xffffffff. Returns 0 or -1.
 */
static int scribble_table_header(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int rc = -1;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long start;

		if (strstr(line, "memfd:vsched-watchdog") == NULL ||
		    strstr(line, " rw-s ") == NULL || sscanf(line, "%lx-", &start) != 1)
			continue;
		*(volatile uint32_t *)(start + 12) = 0xffffffffu;
		rc = 0;
		break;
	}
	fclose(f);
	return rc;
}

/* Body of the fake vsched child: never returns. */
static _Noreturn void fake_vsched(const struct scenario *sc, const struct run *run, int rep_fd,
                                  int cmd_fd)
{
	struct sched_param fifo = {.sched_priority = VS_PRIO_RAISED};
	struct fake_report r = {0};
	struct rlimit nocore = {0, 0};
	struct watchdog *wd;
	cpu_set_t pin;
	char cmd;

	setrlimit(RLIMIT_CORE, &nocore); /* abort() must not leave a core file */
	wd = watchdog_start(8);
	if (wd == NULL)
		fake_fail(rep_fd, &r, "watchdog_start");
	CPU_ZERO(&pin);
	CPU_SET(run->pin_cpu, &pin);
	for (int i = 0; i < sc->nvictims; i++) {
		pid_t v = run->victim[i];
		struct sched_saved saved;
		struct sched_param p;
		uint64_t st = 0;

		/* What vsched's task_open does: save, then track before any change. */
		saved.policy = sched_getscheduler(v);
		if (saved.policy < 0 || sched_getparam(v, &p) < 0 ||
		    sched_getaffinity(v, sizeof(saved.affinity), &saved.affinity) < 0 ||
		    proc_stat(v, NULL, &st) < 0)
			fake_fail(rep_fd, &r, "reading victim");
		saved.priority = p.sched_priority;
		if (watchdog_track(wd, v, st + sc->starttime_delta, &saved, FREEZER_NONE) < 0)
			fake_fail(rep_fd, &r, "watchdog_track");
		if (sched_setaffinity(v, sizeof(pin), &pin) < 0 ||
		    sched_setscheduler(v, SCHED_FIFO, &fifo) < 0)
			fake_fail(rep_fd, &r, "raising victim");
		if (sc->stop[i] && kill(v, SIGSTOP) < 0)
			fake_fail(rep_fd, &r, "stopping victim");
	}
	if (sc->end == END_SCRIBBLE_KILL9 && scribble_table_header() < 0)
		fake_fail(rep_fd, &r, "table mapping not found");
	if (sc->end == END_RESTART_KILL9) {
		pid_t g = watchdog_pid(wd);
		int rc = 0;

		/* Terminal signals do not end the guardian. */
		kill(g, SIGTERM);
		kill(g, SIGINT);
		kill(g, SIGHUP);
		sleep_us(50000);
		if (watchdog_check(wd) != 0)
			fake_fail(rep_fd, &r, "guardian died of SIGTERM/SIGINT/SIGHUP");
		kill(g, SIGKILL);
		for (int i = 0; i < 1000 && (rc = watchdog_check(wd)) == 0; i++)
			sleep_us(1000);
		if (rc != 1 || watchdog_pid(wd) == g || watchdog_pid(wd) <= 0)
			fake_fail(rep_fd, &r, "watchdog_check did not restart the guardian");
	}
	for (int v = 0; v < sc->nvictims; v++) /* SIGSTOP is asynchronous */
		for (int i = 0; sc->stop[v] && i < 1000 && proc_state(run->victim[v]) != 'T'; i++)
			sleep_us(1000);
	r.ok = 1;
	r.guardian = watchdog_pid(wd);
	if (write(rep_fd, &r, sizeof(r)) != sizeof(r))
		_exit(2);
	if (read(cmd_fd, &cmd, 1) != 1)
		_exit(2); /* the test went away: die, the guardian restores */
	switch (sc->end) {
	case END_ABORT:
		abort();
	case END_STOP:
		watchdog_stop(&wd);
		_exit(wd == NULL ? 0 : 1);
	case END_EXIT:
	default:
		_exit(3); /* END_KILL9*: the test's SIGKILL normally comes first */
	}
}

/* Starts victims and the fake vsched; returns once the victims are changed. */
static void run_start(const struct scenario *sc, struct run *run)
{
	int rep[2], cmd[2];
	ssize_t n;

	memset(run, 0, sizeof(*run));
	run->pin_cpu = pin_cpu_choice;
	assert_int_equal(sched_getaffinity(0, sizeof(run->orig_mask), &run->orig_mask), 0);
	for (int i = 0; i < sc->nvictims; i++) {
		run->victim[i] = spawn_victim();
		assert_true(run->victim[i] > 0);
	}
	assert_int_equal(pipe2(rep, O_CLOEXEC), 0);
	assert_int_equal(pipe2(cmd, O_CLOEXEC), 0);
	run->fake = fork();
	assert_true(run->fake >= 0);
	if (run->fake == 0) {
		close(rep[0]);
		close(cmd[1]);
		fake_vsched(sc, run, rep[1], cmd[0]);
	}
	close(rep[1]);
	close(cmd[0]);
	run->cmd_fd = cmd[1];
	n = read(rep[0], &run->rep, sizeof(run->rep));
	close(rep[0]);
	if (n != sizeof(run->rep) || !run->rep.ok)
		print_message("fake vsched failed: %s\n",
		              n == sizeof(run->rep) ? run->rep.why : "?");
	assert_int_equal(n, sizeof(run->rep));
	assert_true(run->rep.ok);
}

/* Ends the fake vsched as the scenario says; returns the monotonic time it was told to. */
static mono_ns run_end(const struct scenario *sc, struct run *run)
{
	mono_ns t0 = mono_now();

	if (sc->end == END_KILL9 || sc->end == END_RESTART_KILL9 || sc->end == END_SCRIBBLE_KILL9)
		kill(run->fake, SIGKILL);
	else
		assert_int_equal(write(run->cmd_fd, "x", 1), 1);
	return t0;
}

/* Kills the victims and reaps everything this run started. */
static void run_cleanup(struct run *run, const struct scenario *sc)
{
	close(run->cmd_fd);
	reap_within(run->fake, 2000);
	for (int i = 0; i < sc->nvictims; i++) {
		kill(run->victim[i], SIGKILL);
		reap_within(run->victim[i], 2000);
	}
	/* Orphaned guardians come to us (subreaper); they exit after restoring. */
	if (run->rep.guardian > 0)
		reap_within(run->rep.guardian, 2000);
}

/* Polls every 200 us until all victims are restored; returns the ms taken, -1 on timeout. */
static double wait_all_restored(const struct scenario *sc, const struct run *run, mono_ns t0)
{
	for (;;) {
		bool all = true;
		mono_ns now;

		for (int i = 0; i < sc->nvictims; i++)
			all = all && is_restored(run->victim[i], &run->orig_mask);
		now = mono_now();
		if (all)
			return (double)(now - t0) / 1e6;
		if (now - t0 > (mono_ns)RESTORE_BOUND_MS * NSEC_PER_MSEC)
			return -1;
		sleep_us(200);
	}
}

/* The common crash check: vsched dies as sc says, every victim is back within the bound. */
static void check_restore(const struct scenario *sc, const char *what)
{
	struct run run;
	double ms;
	int status;

	run_start(sc, &run);
	for (int i = 0; i < sc->nvictims; i++)
		assert_true(is_untouched(run.victim[i], run.pin_cpu, sc->stop[i]));
	ms = wait_all_restored(sc, &run, run_end(sc, &run));
	print_message("%s: %d task(s) restored in %.2f ms (goal 100 ms)\n", what, sc->nvictims, ms);
	/* The guardian exits by itself once it has restored. Reaping the fake vsched first
	 * makes sure the orphan has been handed to us. */
	reap_within(run.fake, 2000);
	status = reap_within(run.rep.guardian, 2000);
	run_cleanup(&run, sc);
	assert_true(ms >= 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* ---- tests ---- */

/* kill -9: a stopped and a running SCHED_FIFO 98 task are both given back. */
static void test_kill9_restores(void **state)
{
	struct scenario sc = {.nvictims = 2, .stop = {true, false}, .end = END_KILL9};
	struct sched_param p;
	struct run run;
	char comm[32] = "";
	int fd;
	double ms;

	(void)state;
	need_rt();
	run_start(&sc, &run);
	/* The guardian is named and runs above the tasks. */
	snprintf(comm, sizeof(comm), "/proc/%d/comm", (int)run.rep.guardian);
	fd = open(comm, O_RDONLY | O_CLOEXEC);
	memset(comm, 0, sizeof(comm));
	if (fd >= 0) {
		if (read(fd, comm, sizeof(comm) - 1) < 0)
			comm[0] = '\0';
		close(fd);
	}
	assert_string_equal(comm, "vsched-watchdog\n");
	assert_int_equal(sched_getscheduler(run.rep.guardian), SCHED_FIFO);
	assert_int_equal(sched_getparam(run.rep.guardian, &p), 0);
	assert_int_equal(p.sched_priority, VS_PRIO_DISPATCH);
	assert_true(is_untouched(run.victim[0], run.pin_cpu, true));
	assert_true(is_untouched(run.victim[1], run.pin_cpu, false));

	ms = wait_all_restored(&sc, &run, run_end(&sc, &run));
	print_message("kill -9: 2 tasks (1 stopped, 1 spinning at FIFO 98) restored in %.2f ms "
	              "(goal 100 ms)\n",
	              ms);
	run_cleanup(&run, &sc);
	assert_true(ms >= 0);
}

static void test_abort_restores(void **state)
{
	struct scenario sc = {.nvictims = 1, .stop = {true}, .end = END_ABORT};

	(void)state;
	need_rt();
	check_restore(&sc, "abort()");
}

static void test_exit_restores(void **state)
{
	struct scenario sc = {.nvictims = 1, .stop = {true}, .end = END_EXIT};

	(void)state;
	need_rt();
	check_restore(&sc, "_exit() without watchdog_stop");
}

/* An orderly watchdog_stop leaves tasks alone (vsched restored them itself). */
static void test_stop_leaves_tasks(void **state)
{
	struct scenario sc = {.nvictims = 1, .stop = {true}, .end = END_STOP};
	struct run run;
	int status;

	(void)state;
	need_rt();
	run_start(&sc, &run);
	run_end(&sc, &run);
	status = reap_within(run.fake, 2000); /* watchdog_stop reaped the guardian already */
	sleep_us(50000);
	assert_true(is_untouched(run.victim[0], run.pin_cpu, true));
	run_cleanup(&run, &sc);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* A slot whose start time does not match (the pid was reused) is not touched. */
static void test_pid_reuse_guard(void **state)
{
	struct scenario sc = {
	    .nvictims = 1, .stop = {true}, .starttime_delta = 1, .end = END_KILL9};
	struct run run;
	int status;

	(void)state;
	need_rt();
	run_start(&sc, &run);
	run_end(&sc, &run);
	reap_within(run.fake, 2000);
	status = reap_within(run.rep.guardian, 2000); /* it exits after its (empty) restore */
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(is_untouched(run.victim[0], run.pin_cpu, true));
	run_cleanup(&run, &sc);
}

/* A killed guardian is replaced by watchdog_check, and the new one still protects. */
static void test_check_restarts_guardian(void **state)
{
	struct scenario sc = {.nvictims = 1, .stop = {true}, .end = END_RESTART_KILL9};

	(void)state;
	need_rt();
	check_restore(&sc, "kill -9 after a guardian restart");
}

/* A header overwritten by the dying vsched does not derail (or crash) the guardian. */
static void test_scribbled_header(void **state)
{
	struct scenario sc = {.nvictims = 1, .stop = {true}, .end = END_SCRIBBLE_KILL9};

	(void)state;
	need_rt();
	check_restore(&sc, "kill -9 after a wild write over the table header");
}

/* watchdog_main refuses bad arguments with status 2 and changes nothing. */
static void test_main_rejects_bad_args(void **state)
{
	int mfd, wrong, sv[2], pfd[2], rfd;
	char a[16], b[16], c[16];
	struct sched_param p;
	int pol = sched_getscheduler(0);

	(void)state;
	mfd = memfd_create("t", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	wrong = memfd_create("t2", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	rfd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	assert_true(mfd >= 3 && wrong >= 3 && rfd >= 3);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	assert_int_equal(ftruncate(mfd, 0), 0);
	assert_int_equal(ftruncate(wrong, 1000), 0);

#define MAIN(...)                                                                                  \
	watchdog_main((int)(sizeof((char *[]){__VA_ARGS__}) / sizeof(char *)),                     \
	              (char *[]){__VA_ARGS__})
	assert_int_equal(MAIN("x", "--watchdog"), 2);
	assert_int_equal(MAIN("x", "--watchdog", "1", "2", "3", "4"), 2);
	assert_int_equal(MAIN("x", "--watchdog", "abc", "4", "1"), 2);
	assert_int_equal(MAIN("x", "--watchdog", "5x", "4", "1"), 2);
	assert_int_equal(MAIN("x", "--watchdog", "1", "2", "1"), 2);     /* stdio fds */
	assert_int_equal(MAIN("x", "--watchdog", "999", "998", "1"), 2); /* not open */
	snprintf(a, sizeof(a), "%d", rfd);
	snprintf(b, sizeof(b), "%d", sv[1]);
	assert_int_equal(MAIN("x", "--watchdog", a, b, "1"), 2); /* not a memfd */
	snprintf(a, sizeof(a), "%d", wrong);
	assert_int_equal(MAIN("x", "--watchdog", a, b, "4"), 2); /* size mismatch */
	assert_int_equal(MAIN("x", "--watchdog", a, a, "4"), 2); /* same fd */
	snprintf(a, sizeof(a), "%d", mfd);
	assert_int_equal(MAIN("x", "--watchdog", a, b, "0"), 2);
	assert_int_equal(MAIN("x", "--watchdog", a, b, "99999999999"), 2);
	snprintf(c, sizeof(c), "%d", pfd[0]);
	assert_int_equal(MAIN("x", "--watchdog", a, c, "1"), 2); /* a pipe, not a socket */
#undef MAIN
	/* Nothing was changed: same policy, still in our session, fds still open. */
	assert_int_equal(sched_getscheduler(0), pol);
	assert_int_equal(sched_getparam(0, &p), 0);
	assert_true(fcntl(sv[1], F_GETFD) >= 0 && fcntl(rfd, F_GETFD) >= 0);
	close(mfd);
	close(wrong);
	close(rfd);
	close(sv[0]);
	close(sv[1]);
	close(pfd[0]);
	close(pfd[1]);
}

/* Table bounds and argument checks; runs without root (the guardian then lacks FIFO 99). */
static void test_track_bounds(void **state)
{
	struct sched_saved saved = {.policy = SCHED_OTHER, .priority = 0};
	struct watchdog *wd;
	uint64_t st = 0;
	int s0, s1;

	(void)state;
	assert_null(watchdog_start(0));
	assert_null(watchdog_start(1 << 20));
	CPU_ZERO(&saved.affinity);
	assert_int_equal(sched_getaffinity(0, sizeof(saved.affinity), &saved.affinity), 0);
	assert_int_equal(proc_stat(getpid(), NULL, &st), 0);

	wd = watchdog_start(2);
	assert_non_null(wd);
	assert_true(watchdog_pid(wd) > 0);
	assert_int_equal(watchdog_check(wd), 0);
	assert_int_equal(watchdog_track(wd, getpid(), 0, &saved, FREEZER_NONE),
	                 -1);                                                  /* no start time */
	assert_int_equal(watchdog_track(wd, 0, st, &saved, FREEZER_NONE), -1); /* bad pid */
	assert_int_equal(watchdog_track(wd, getpid(), st, NULL, FREEZER_NONE), -1);
	s0 = watchdog_track(wd, getpid(), st, &saved, FREEZER_NONE);
	s1 = watchdog_track(wd, getpid(), st, &saved, FREEZER_NONE);
	assert_true(s0 >= 0 && s1 >= 0 && s0 != s1);
	assert_int_equal(watchdog_track(wd, getpid(), st, &saved, FREEZER_NONE), -1); /* full */
	watchdog_untrack(wd, s0);
	watchdog_untrack(wd, -1); /* out of range: ignored */
	watchdog_untrack(wd, 2);
	assert_int_equal(watchdog_track(wd, getpid(), st, &saved, FREEZER_NONE),
	                 s0); /* slot reused */
	watchdog_untrack(wd, s0);
	watchdog_untrack(wd, s1);
	watchdog_stop(&wd);
	assert_null(wd);
	watchdog_stop(&wd); /* NULL accepted */
	watchdog_stop(NULL);
	assert_int_equal(watchdog_check(NULL), -1);
	assert_int_equal(watchdog_pid(NULL), -1);
}

/* A vsched started with stdin and stdout closed still gets a guardian (fds kept above 2). */
static void test_start_with_stdio_closed(void **state)
{
	pid_t pid;
	int status = -1;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct watchdog *wd;

		close(0);
		close(1);
		wd = watchdog_start(1);
		if (wd == NULL || watchdog_check(wd) != 0)
			_exit(1);
		watchdog_stop(&wd);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/*
 * Fake vsched for test_gone_cgroup: tracks pid (start time st) as parked through a freezer
 * of kind, writes its guardian's pid to rep_fd, and _exits (no watchdog_stop) on a byte from
 * cmd_fd.
 */
static _Noreturn void fake_track_gone(pid_t pid, uint64_t st, int kind, int rep_fd, int cmd_fd)
{
	struct sched_saved saved = {.policy = SCHED_OTHER};
	struct watchdog *wd = watchdog_start(8);
	pid_t g;
	char cmd;

	sched_getaffinity(0, sizeof(saved.affinity), &saved.affinity);
	if (wd == NULL || watchdog_track(wd, pid, st, &saved, kind) < 0)
		_exit(2);
	g = watchdog_pid(wd);
	if (write(rep_fd, &g, sizeof(g)) != sizeof(g) || read(cmd_fd, &cmd, 1) < 0)
		_exit(2);
	_exit(3);
}

/* True when pid's freezer cgroup (v1 line, else the cgroup2 one) is line. */
static bool in_cgroup(pid_t pid, const char *line)
{
	char path[64], l[512], v2[512] = "", v1[512] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(l, sizeof(l), f))
		if (strstr(l, ":freezer:"))
			snprintf(v1, sizeof(v1), "%s", l);
		else if (strncmp(l, "0::", 3) == 0)
			snprintf(v2, sizeof(v2), "%s", l);
	fclose(f);
	return strcmp(v1[0] ? v1 : v2, line) == 0;
}

/*
 * A task that exited while vsched still had its freezer cgroup, with a child of the task in
 * it, frozen: the guardian thaws the child, moves it back to the task's original cgroup and
 * removes the cgroup (found by name: the task's /proc entry is gone).
 */
static void test_gone_cgroup(void **state)
{
	char dir[PATH_MAX], orig[512] = "", l[512], path[PATH_MAX + 32], pidbuf[24];
	struct freezer fz;
	int rep[2], cmd[2], fd = -1, status;
	pid_t task, child, fake, guardian = -1;
	uint64_t st = 0;
	mono_ns t0;
	bool done = false;
	FILE *f;

	(void)state;
	need_rt();
	if (freezer_find(&fz, FREEZER_V1) < 0 && freezer_find(&fz, FREEZER_V2) < 0) {
		print_message("SKIP: no cgroup freezer\n");
		skip();
	}
	task = spawn_victim();
	child = spawn_victim();
	assert_true(task > 0 && child > 0);
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)child);
	f = fopen(path, "re");
	assert_non_null(f);
	while (fgets(l, sizeof(l), f))
		if (strstr(l, ":freezer:") || (!orig[0] && strncmp(l, "0::", 3) == 0))
			snprintf(orig, sizeof(orig), "%s", l);
	fclose(f);
	/* As vsched leaves it: the task in vsched.<task> with its child; the task exits. */
	assert_int_equal(proc_stat(task, NULL, &st), 0);
	assert_int_equal(freezer_attach(&fz, task, dir, sizeof(dir), &fd), 0);
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)child);
	f = fopen(path, "we");
	assert_non_null(f);
	fputs(pidbuf, f);
	assert_int_equal(fclose(f), 0);
	kill(task, SIGKILL);
	reap_within(task, 2000);
	assert_int_equal(freezer_set(fd, fz.kind, true), 0);
	close(fd);
	for (int i = 0; i < 1000 && proc_state(child) != 'D'; i++)
		sleep_us(1000);
	assert_int_equal(proc_state(child), 'D');

	assert_int_equal(pipe2(rep, O_CLOEXEC), 0);
	assert_int_equal(pipe2(cmd, O_CLOEXEC), 0);
	fake = fork();
	assert_true(fake >= 0);
	if (fake == 0)
		fake_track_gone(task, st, fz.kind, rep[1], cmd[0]);
	close(rep[1]);
	close(cmd[0]);
	if (read(rep[0], &guardian, sizeof(guardian)) != sizeof(guardian))
		guardian = -1;
	assert_int_equal(write(cmd[1], "x", 1), 1);
	t0 = mono_now();
	while (!done && mono_now() - t0 < (mono_ns)RESTORE_BOUND_MS * NSEC_PER_MSEC) {
		done = access(dir, F_OK) < 0 && in_cgroup(child, orig) && proc_state(child) != 'D';
		sleep_us(200);
	}
	print_message("exited task's cgroup: %s after %.2f ms\n",
	              done ? "child thawed and back, cgroup removed" : "still there",
	              (double)(mono_now() - t0) / 1e6);
	reap_within(fake, 2000);
	status = guardian > 0 ? reap_within(guardian, 2000) : -1;
	close(rep[0]);
	close(cmd[1]);
	if (!done)
		freezer_release(&fz, dir); /* leave nothing behind */
	kill(child, SIGKILL);
	reap_within(child, 2000);
	assert_true(done);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* The highest CPU in our mask, if the mask has two or more (victims are pinned to it). */
static int choose_pin_cpu(void)
{
	cpu_set_t m;
	int last = -1;

	if (sched_getaffinity(0, sizeof(m), &m) < 0 || CPU_COUNT(&m) < 2)
		return -1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &m))
			last = c;
	return last;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_track_bounds),
	    cmocka_unit_test(test_main_rejects_bad_args),
	    cmocka_unit_test(test_start_with_stdio_closed),
	    cmocka_unit_test(test_kill9_restores),
	    cmocka_unit_test(test_abort_restores),
	    cmocka_unit_test(test_exit_restores),
	    cmocka_unit_test(test_stop_leaves_tasks),
	    cmocka_unit_test(test_pid_reuse_guard),
	    cmocka_unit_test(test_check_restarts_guardian),
	    cmocka_unit_test(test_scribbled_header),
	    cmocka_unit_test(test_gone_cgroup),
	};

	/* The guardian is this binary re-executed (watchdog_start). */
	if (argc > 1 && strcmp(argv[1], "--watchdog") == 0)
		return watchdog_main(argc, argv);
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	pin_cpu_choice = choose_pin_cpu();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
