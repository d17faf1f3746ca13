/*
 * Unit tests of vsched/freezer.c that need a real cgroup freezer (root): a task's cgroup
 * that freezer_release finds busy is not forgotten — freezer_retry removes it once it can be.
 * Skipped without root or a freezer hierarchy.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "vsched.h"

/* A cgroup named as a task's (vsched.<pid>, a pid that no process has) below the mount. */
static bool make_task_cgroup(const struct freezer *fz, char *dir, size_t len)
{
	for (int pid = 4000000; pid < 4000100; pid++)
		if (kill(pid, 0) < 0 && errno == ESRCH) {
			snprintf(dir, len, "%s/vsched.%d", fz->mnt, pid);
			return mkdir(dir, 0700) == 0;
		}
	return false;
}

/*
 * A cgroup busy at release (here: it has a child cgroup; in vsched: a process still exiting)
 * is left, thawed, and retried: removed by the first freezer_retry after it became free.
 */
static void test_busy_retried(void **state)
{
	char dir[PATH_MAX], sub[PATH_MAX + 8];
	struct freezer fz;

	(void)state;
	if (geteuid() != 0 ||
	    (freezer_find(&fz, FREEZER_V1) < 0 && freezer_find(&fz, FREEZER_V2) < 0)) {
		print_message("SKIP: needs root and a cgroup freezer\n");
		skip();
	}
	assert_true(make_task_cgroup(&fz, dir, sizeof(dir)));
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	assert_int_equal(mkdir(sub, 0700), 0);

	assert_int_equal(freezer_release(&fz, dir), -EBUSY);
	assert_int_equal(access(dir, F_OK), 0);
	freezer_retry(); /* still busy: kept */
	assert_int_equal(access(dir, F_OK), 0);

	assert_int_equal(rmdir(sub), 0);
	freezer_retry();
	assert_int_equal(access(dir, F_OK), -1);
	assert_int_equal(errno, ENOENT);
	freezer_retry(); /* nothing left to do */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_busy_retried),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
