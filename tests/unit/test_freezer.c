/*
 * Unit tests of vsched/freezer.c:
 *  - /proc/PID/cgroup lines of either hierarchy are told apart (no root needed);
 * and, with a real cgroup freezer (root; skipped without):
 *  - a task's cgroup that freezer_release finds busy is not forgotten — freezer_retry
 *    removes it once it can be;
 *  - on cgroup v2 a process is moved into its own cgroup, frozen, thawed and given back
 *    (the v2 line of /proc/PID/cgroup was never recognised: every `stop` task was refused
 *    with "no such process" where the v2 freezer is the one in use).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

/* freezer_cgroup_path of a copy of line: want, or NULL. */
static void expect_path(int kind, const char *line, const char *want)
{
	char buf[256];
	char *p;

	snprintf(buf, sizeof(buf), "%s", line);
	p = freezer_cgroup_path(kind, buf);
	if (!want) {
		assert_null(p);
		return;
	}
	assert_non_null(p);
	assert_string_equal(p, want);
}

static void test_cgroup_path_lines(void **state)
{
	(void)state;
	expect_path(FREEZER_V2, "0::/user.slice/session-1.scope\n", "/user.slice/session-1.scope");
	expect_path(FREEZER_V2, "0::/\n", "/");
	expect_path(FREEZER_V1, "6:freezer:/a/b\n", "/a/b");
	expect_path(FREEZER_V1, "3:cpu,freezer:/c\n", "/c");
	expect_path(FREEZER_V1, "9:name=systemd:/x\n", NULL);
	expect_path(FREEZER_V1, "4:memory:/d\n", NULL);
	expect_path(FREEZER_V1, "junk\n", NULL);
	expect_path(FREEZER_V2, "6:freezer:/a\n", NULL);
	expect_path(FREEZER_V1, "0::/e\n", NULL);
	expect_path(FREEZER_V2, "10::/f\n", NULL);
}

/* The "0::PATH" line of pid's /proc/PID/cgroup, into buf ("" if none). */
static void v2_line(pid_t pid, char *buf, size_t len)
{
	char path[64], line[PATH_MAX + 64];
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "0::", 3) == 0 && strlen(line + 3) < len)
			memcpy(buf, line + 3, strlen(line + 3) + 1);
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

static void test_v2_attach_freeze_detach(void **state)
{
	char dir[PATH_MAX], before[PATH_MAX], in[PATH_MAX], after[PATH_MAX], want[64];
	struct freezer fz;
	int fd = -1, st;
	pid_t c;

	(void)state;
	if (geteuid() != 0 || freezer_find(&fz, FREEZER_V2) < 0) {
		print_message("SKIP: needs root and a cgroup v2 hierarchy\n");
		skip();
	}
	c = fork();
	assert_true(c >= 0);
	if (c == 0) { /* ends with the test, even one that fails before its kill below */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(0);
		pause();
		_exit(0);
	}
	v2_line(c, before, sizeof(before));
	assert_int_equal(freezer_attach(&fz, c, dir, sizeof(dir), &fd), 0);
	v2_line(c, in, sizeof(in));
	snprintf(want, sizeof(want), "/vsched.%d", (int)c);
	assert_non_null(strstr(in, want));
	assert_int_equal(freezer_set(fd, FREEZER_V2, true), 0);
	assert_int_equal(freezer_set(fd, FREEZER_V2, false), 0);
	close(fd);
	assert_int_equal(freezer_detach(&fz, c), 0);
	v2_line(c, after, sizeof(after));
	assert_string_equal(after, before);
	assert_int_equal(access(dir, F_OK), -1);
	kill(c, SIGKILL);
	assert_int_equal(waitpid(c, &st, 0), c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cgroup_path_lines),
	    cmocka_unit_test(test_v2_attach_freeze_detach),
	    cmocka_unit_test(test_busy_retried),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
