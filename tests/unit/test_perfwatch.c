/*
 * Unit tests of vsched/perfwatch.c's enforcer against the real kernel (the contract the
 * dispatcher relies on, dispatch.c enforcer_stopped): the record head moves at each stop the
 * enforcer sends, and only then — a SIGSTOP someone else sends does not move it.
 * Skipped where perf counters on other processes are not allowed (needs root or
 * CAP_PERFMON). Each test forks one spinning child; its teardown kills it (by pid), also
 * when an assertion failed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <stdio.h>
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

static pid_t child = -1; /* the test's spinner, killed by teardown */

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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_teardown(test_head_moves_at_each_stop, teardown),
	    cmocka_unit_test_teardown(test_foreign_stop_not_counted, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
