/*
 * Unit tests of vsched/perfwatch.c's enforcer against the real kernel (the contract the
 * dispatcher relies on, dispatch.c enforcer_stopped): the record head moves at each stop the
 * enforcer sends, and only then — a SIGSTOP someone else sends does not move it; a cgroup
 * enforcer's stop sent by another thread's counter moves the main thread's counter's head
 * (needs a cgroup v2 hierarchy as well).
 * Skipped where perf counters on other processes are not allowed (needs root or
 * CAP_PERFMON). Each test forks one spinning child; its teardown kills it (by pid), also
 * when an assertion failed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "vsched.h"

#define WAIT_MS 3000 /* longest wait for a state change (the child needs ms of CPU) */

static pid_t child = -1;     /* the test's spinner, killed by teardown */
static struct freezer cg_fz; /* a cgroup the test made (cg_dir), removed by teardown */
static char cg_dir[PATH_MAX];

static pid_t spinner(void)
{
	child = fork();
	if (child == 0)
		for (;;)
			;
	assert_true(child > 0);
	return child;
}

static int teardown(void **state)
{
	(void)state;
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	child = -1;
	if (cg_dir[0] && freezer_release(&cg_fz, cg_dir) != 0)
		print_message("cannot remove %s\n", cg_dir);
	cg_dir[0] = '\0';
	return 0;
}

/* The state letter of /proc/PID/stat (R, S, T, ...), '?' if unreadable. */
static char proc_state(pid_t p)
{
	char path[64], st = '?';
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)p);
	f = fopen(path, "r");
	if (!f)
		return '?';
	if (fscanf(f, "%*d %*s %c", &st) != 1)
		st = '?';
	fclose(f);
	return st;
}

/* Waits up to WAIT_MS for process p to be in state want (or not in it when !is). */
static bool wait_state(pid_t p, char want, bool is)
{
	struct timespec ms = {0, 1000000};

	for (int i = 0; i < WAIT_MS; i++) {
		if ((proc_state(p) == want) == is)
			return true;
		nanosleep(&ms, NULL);
	}
	return false;
}

static void skip_without_perf(void)
{
	if (!perfwatch_probe()) {
		print_message("SKIP: perf counters on other processes not allowed here\n");
		skip();
	}
}

/* A spinning child (*p) with an enforcer on it (returned, not armed yet) and its records. */
static int enforced_spinner(pid_t *p, struct perf_event_mmap_page **pg)
{
	int fd;

	skip_without_perf();
	*p = spinner();
	fd = perfwatch_enforcer(*p, pg);
	if (fd < 0)
		fail_msg("perfwatch_enforcer: %d", fd);
	assert_non_null(*pg);
	assert_int_equal(perfwatch_fired(*pg), 0); /* no record yet */
	return fd;
}

/* Each enforcer stop moves the head by one record; continuing the task does not. */
static void test_head_moves_at_each_stop(void **state)
{
	struct perf_event_mmap_page *pg = NULL;
	pid_t p;
	int fd;
	uint64_t h1, h2;

	(void)state;
	fd = enforced_spinner(&p, &pg);

	assert_int_equal(perfwatch_arm(fd, 2 * NSEC_PER_MSEC, false, true), 0);
	assert_true(wait_state(p, 'T', true));
	h1 = perfwatch_fired(pg);
	assert_true(h1 > 0);

	kill(p, SIGCONT);
	assert_true(wait_state(p, 'T', false));
	assert_true(wait_state(p, 'T', true)); /* the next 2 ms: stopped again */
	h2 = perfwatch_fired(pg);
	assert_true(h2 > h1);
	assert_int_equal(h2 % h1, 0); /* records of one size: one per overflow */

	perfwatch_close(&fd, &pg);
	assert_int_equal(fd, -1);
	assert_null(pg);
}

/* A SIGSTOP from elsewhere (a debugger, a batch system's suspend) leaves the head alone. */
static void test_foreign_stop_not_counted(void **state)
{
	struct perf_event_mmap_page *pg = NULL;
	pid_t p;
	int fd;
	uint64_t h;

	(void)state;
	fd = enforced_spinner(&p, &pg);
	/* armed for 10 s of its CPU: no overflow within this test */
	assert_int_equal(perfwatch_arm(fd, 10ULL * NSEC_PER_SEC, false, true), 0);
	h = perfwatch_fired(pg);
	kill(p, SIGSTOP);
	assert_true(wait_state(p, 'T', true));
	assert_int_equal(perfwatch_fired(pg), h);
	kill(p, SIGCONT);
	assert_true(wait_state(p, 'T', false));
	assert_int_equal(perfwatch_fired(pg), h);

	perfwatch_close(&fd, &pg);
}

static void *spin_main(void *arg)
{
	(void)arg;
	for (;;)
		;
	return NULL;
}

/*
 * A child pinned to CPU cpu whose main thread sleeps while a second thread spins (child is
 * set: teardown kills it). Returns the spinning thread's id.
 */
static pid_t sleeper_with_spinner(int cpu)
{
	cpu_set_t set;
	pthread_t th;
	struct timespec ms = {0, 1000000};

	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) != 0 ||
		    pthread_create(&th, NULL, spin_main, NULL) != 0)
			_exit(1);
		for (;;)
			pause();
	}
	for (int i = 0; i < WAIT_MS; i++) {
		char path[64];
		struct dirent *e;
		pid_t tid = 0;
		DIR *d;

		snprintf(path, sizeof(path), "/proc/%d/task", (int)child);
		d = opendir(path);
		while (d && (e = readdir(d)))
			if (atoi(e->d_name) > 0 && atoi(e->d_name) != child)
				tid = atoi(e->d_name);
		if (d)
			closedir(d);
		if (tid)
			return tid;
		nanosleep(&ms, NULL);
	}
	fail_msg("the child's spinning thread did not start");
	return 0;
}

/*
 * A cgroup enforcer (perfwatch_enforcer_cgroup on the main thread, perfwatch_cgroup_stopper
 * on another): the spinning thread's counter stops the process, the main thread's counter is
 * never armed, and the stop is recorded in the main thread's counter's ring, where the
 * dispatcher reads it (with the records on that counter only, such a stop went unseen and a
 * task stayed stopped for good).
 */
static void test_cgroup_stopper_records_in_main_ring(void **state)
{
	struct perf_event_mmap_page *pg = NULL;
	int cpu = 0, state_fd = -1, cg_fd, fd, st;
	pid_t tid;

	(void)state;
	skip_without_perf();
	if (freezer_find(&cg_fz, FREEZER_V2) < 0) {
		print_message("SKIP: needs a cgroup v2 hierarchy\n");
		skip();
	}
	tid = sleeper_with_spinner(cpu);
	assert_int_equal(freezer_attach(&cg_fz, child, cg_dir, sizeof(cg_dir), &state_fd), 0);
	cg_fd = open(cg_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(cg_fd >= 0);
	fd = perfwatch_enforcer_cgroup(cg_fd, cpu, child, &pg);
	if (fd < 0)
		fail_msg("perfwatch_enforcer_cgroup: %d", fd);
	st = perfwatch_cgroup_stopper(cg_fd, cpu, tid, fd);
	if (st < 0)
		fail_msg("perfwatch_cgroup_stopper: %d", st);
	assert_int_equal(perfwatch_fired(pg), 0);

	assert_int_equal(perfwatch_arm(st, 2 * NSEC_PER_MSEC, false, true), 0);
	assert_true(wait_state(child, 'T', true)); /* the sleeping main thread stopped too */
	assert_true(perfwatch_fired(pg) > 0);

	close(st);
	perfwatch_close(&fd, &pg);
	close(cg_fd);
	close(state_fd);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	child = -1;
	assert_int_equal(freezer_release(&cg_fz, cg_dir), 0);
	cg_dir[0] = '\0';
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_teardown(test_head_moves_at_each_stop, teardown),
	    cmocka_unit_test_teardown(test_foreign_stop_not_counted, teardown),
	    cmocka_unit_test_teardown(test_cgroup_stopper_records_in_main_ring, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
