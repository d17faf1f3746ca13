/*
 * Memory-bandwidth sources of vsched-agent (agent/smem.c) with injected probes: the
 * fallback order pmu -> resctrl -> app -> none, a clean fallback when the PMU is absent
 * (as on these VMs), bytes = misses x line size on the PMU path, and the resctrl MBM path
 * on a fake /sys/fs/resctrl tree. Also checks that the real probe agrees with the machine:
 * where `perf_event_open` cannot count cache misses, detection says so.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent.h"
#include "log.h"

static uint64_t fake_count;
static int fake_opens;

static int no_pmu_open(pid_t pid)
{
	(void)pid;
	fake_opens++;
	return -ENOENT; /* what perf_event_open says here: no such hardware event */
}

static int pmu_open(pid_t pid)
{
	(void)pid;
	fake_opens++;
	return dup(2); /* any fd: reads go through pmu_read */
}

static int pmu_read(int fd, uint64_t *v)
{
	(void)fd;
	*v = fake_count;
	return 0;
}

static int no_read(int fd, uint64_t *v)
{
	(void)fd;
	(void)v;
	return -EIO;
}

static char root[128];

static void write_file(const char *rel, const char *text)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void mkdirs(const char *rel)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/%s'", root, rel);
	assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/test_agent_mem.XXXXXX");
	assert_non_null(mkdtemp(root));
	log_init("test", 1, 0);
	return 0;
}

static int teardown(void **state)
{
	char cmd[256];
	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

static void test_no_pmu_no_resctrl_falls_back_to_app_then_none(void **state)
{
	struct smem_ops ops = {
	    .perf_open = no_pmu_open, .perf_read = no_read, .resctrl_root = "/nonexistent/resctrl"};
	struct smem m;
	struct smem_proc p;
	uint64_t bytes = 99;

	(void)state;
	fake_opens = 0;
	smem_detect(&m, &ops);
	assert_false(m.pmu);
	assert_false(m.resctrl);
	assert_non_null(strstr(m.why_pmu, "perf_event_open"));
	smem_attach(&m, &p, getpid());
	assert_int_equal(fake_opens, 1); /* probed once at start, not again per process */
	assert_int_equal(p.perf_fd, -1);
	assert_int_equal(smem_read(&m, &p, false, 0, &bytes), PCTL_SRC_NONE);
	assert_true(bytes == 0);
	assert_int_equal(smem_read(&m, &p, true, 12345, &bytes), PCTL_SRC_APP);
	assert_true(bytes == 12345);
	smem_detach(&m, &p);
}

static void test_pmu_first(void **state)
{
	struct smem_ops ops = {
	    .perf_open = pmu_open, .perf_read = pmu_read, .resctrl_root = "/nonexistent/resctrl"};
	struct smem m;
	struct smem_proc p;
	uint64_t bytes;

	(void)state;
	smem_detect(&m, &ops);
	assert_true(m.pmu);
	smem_attach(&m, &p, getpid());
	assert_true(p.perf_fd >= 0);
	fake_count = 1000;
	/* PMU wins over application-reported bytes. */
	assert_int_equal(smem_read(&m, &p, true, 5, &bytes), PCTL_SRC_PMU);
	assert_true(bytes == 1000ULL * m.line_size);
	assert_true(m.line_size >= 16 && m.line_size <= 4096);
	smem_detach(&m, &p);
	assert_int_equal(p.perf_fd, -1);
}

static void test_resctrl_mbm(void **state)
{
	struct smem_ops ops = {
	    .perf_open = no_pmu_open, .perf_read = no_read, .resctrl_root = root};
	struct smem m;
	struct smem_proc p;
	uint64_t bytes;
	char grp[128], rel[512];

	(void)state;
	/* Without mbm_total_bytes in mon_features: not offered. */
	mkdirs("info/L3_MON");
	write_file("info/L3_MON/mon_features", "llc_occupancy\n");
	smem_detect(&m, &ops);
	assert_false(m.resctrl);
	write_file("info/L3_MON/mon_features", "llc_occupancy\nmbm_total_bytes\nmbm_local_bytes\n");
	smem_detect(&m, &ops);
	assert_true(m.resctrl);
	/* The kernel makes the group's files on mkdir; here the test plays the kernel. */
	snprintf(grp, sizeof(grp), "mon_groups/vsched-agent-%d", (int)getpid());
	snprintf(rel, sizeof(rel), "%s/mon_data/mon_L3_00", grp);
	mkdirs(rel);
	snprintf(rel, sizeof(rel), "%s/mon_data/mon_L3_01", grp);
	mkdirs(rel);
	snprintf(rel, sizeof(rel), "%s/tasks", grp);
	write_file(rel, "");
	snprintf(rel, sizeof(rel), "%s/mon_data/mon_L3_00/mbm_total_bytes", grp);
	write_file(rel, "1000\n");
	snprintf(rel, sizeof(rel), "%s/mon_data/mon_L3_01/mbm_total_bytes", grp);
	write_file(rel, "Unavailable\n"); /* a domain without an RMID is skipped */
	smem_attach(&m, &p, getpid());
	assert_true(p.rc_group);
	assert_int_equal(smem_read(&m, &p, true, 7, &bytes), PCTL_SRC_RESCTRL);
	assert_true(bytes == 1000);
	snprintf(rel, sizeof(rel), "%s/mon_data/mon_L3_01/mbm_total_bytes", grp);
	write_file(rel, "500\n");
	assert_int_equal(smem_read(&m, &p, true, 7, &bytes), PCTL_SRC_RESCTRL);
	assert_true(bytes == 1500);
	/* Our thread ids were written to the group's tasks file. */
	{
		char path[512], line[64];
		FILE *f;
		snprintf(path, sizeof(path), "%s/%s/tasks", root, grp);
		f = fopen(path, "r");
		assert_non_null(f);
		assert_non_null(fgets(line, sizeof(line), f));
		assert_int_equal(atoi(line), (int)getpid());
		fclose(f);
	}
	/* Group data gone (process left the group): falls back to app. */
	snprintf(rel, sizeof(rel), "rm -rf '%s/%s/mon_data'", root, grp);
	assert_int_equal(system(rel), 0);
	assert_int_equal(smem_read(&m, &p, true, 7, &bytes), PCTL_SRC_APP);
	p.rc_group = false; /* the fake group is not empty: leave it to teardown */
	smem_detach(&m, &p);
}

/* The real probe on this machine: consistent with perf_event_open's own answer. */
static void test_real_detection_is_clean(void **state)
{
	struct smem_ops ops = smem_default_ops();
	struct smem m;
	struct smem_proc p;
	uint64_t bytes;
	uint8_t src;

	(void)state;
	ops.resctrl_root = "/nonexistent/resctrl";
	smem_detect(&m, &ops);
	smem_attach(&m, &p, getpid());
	src = smem_read(&m, &p, false, 0, &bytes);
	if (m.pmu) {
		assert_int_equal(src, PCTL_SRC_PMU);
	} else {
		assert_int_equal(src, PCTL_SRC_NONE);
		assert_true(m.why_pmu[0] != '\0');
		print_message("no PMU here: %s\n", m.why_pmu);
	}
	smem_detach(&m, &p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_no_pmu_no_resctrl_falls_back_to_app_then_none),
	    cmocka_unit_test(test_pmu_first),
	    cmocka_unit_test(test_resctrl_mbm),
	    cmocka_unit_test(test_real_detection_is_clean),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
