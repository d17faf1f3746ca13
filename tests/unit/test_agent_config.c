/*
 * vsched-agent configuration (agent/config.c) and calibration helpers (agent/calibrate.c):
 * the shipped configs/agent.conf parses; every bad value is refused with its key named;
 * -n output parses back to the same configuration; the NIC speed is read from a fake
 * /sys/class/net (down links and lo ignored, Mb/s -> bytes/s); a short memory stream
 * gives a plausible figure.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent.h"

#ifndef VS_SRC_DIR
#define VS_SRC_DIR "."
#endif

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_agent_cfg.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];
	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

static const char *write_conf(const char *text)
{
	static char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/agent.conf", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

/* The shipped example, found from the test's source tree or the working directory. */
static void test_shipped_config_parses(void **state)
{
	struct agent_config c;
	char why[256] = "";
	const char *paths[] = {VS_SRC_DIR "/configs/agent.conf", "../configs/agent.conf",
	                       "../../configs/agent.conf", "/work/main/configs/agent.conf", NULL};
	int i;

	(void)state;
	for (i = 0; paths[i] && access(paths[i], R_OK) != 0; i++)
		;
	if (!paths[i])
		skip();
	agent_config_defaults(&c);
	assert_int_equal(agent_config_load(paths[i], &c, why, sizeof(why)), 0);
	assert_true(c.sample_interval == 500 * NSEC_PER_MSEC);
	assert_int_equal(c.windows, 2);
	assert_true(c.provisional.period == 100 * NSEC_PER_MSEC);
}

static void expect_refused(const char *text, const char *key)
{
	struct agent_config c;
	char why[256] = "";

	agent_config_defaults(&c);
	assert_int_equal(agent_config_load(write_conf(text), &c, why, sizeof(why)), -1);
	if (!strstr(why, key))
		fail_msg("config '%s': reason '%s' does not name %s", text, why, key);
}

static void test_bad_values_name_the_key(void **state)
{
	(void)state;
	expect_refused("sample_windows = 17;", "sample_windows");
	expect_refused("sample_windows = \"2\";", "sample_windows");
	expect_refused("sample_interval = \"1ms\";", "sample_interval");
	expect_refused("sample_interval = 500;", "sample_interval");
	expect_refused("heartbeat = \"2s\"; controller_timeout = \"2s\";", "controller_timeout");
	expect_refused("controller = \"udp://x\";", "controller");
	expect_refused("app_endpoint = \"/tmp/sock\";", "app_endpoint");
	expect_refused("app_endpoint_mode = \"999\";", "app_endpoint_mode");
	expect_refused("node_name = \"\";", "node_name");
	expect_refused("park = 1;", "park");
	expect_refused("max_procs = 0;", "max_procs");
	expect_refused("net_capacity_mbs = \"fast\";", "net_capacity_mbs");
	expect_refused("provisional_slice = \"10ms\";", "provisional_slice");
	expect_refused("provisional_period = \"10ms\"; provisional_slice = \"0ns\";",
	               "provisional_slice");
	expect_refused("sample_window = 2;", "sample_window");
	expect_refused("heartbeat = ;", "agent.conf:1"); /* syntax: file:line */
}

static void test_print_parses_back(void **state)
{
	struct agent_config a, b;
	char why[256] = "", path[128];
	FILE *f;

	(void)state;
	agent_config_defaults(&a);
	assert_int_equal(
	    agent_config_load(write_conf("node_name = \"n7\"; sample_windows = 4;\n"
	                                 "provisional_period = \"1.5s\";\n"
	                                 "provisional_slice = \"250ms\";\n"
	                                 "app_endpoint_mode = \"0660\";\n"
	                                 "park = \"idle\"; mem_capacity_mbs = 12345.5;\n"),
	                      &a, why, sizeof(why)),
	    0);
	snprintf(path, sizeof(path), "%s/printed.conf", dir);
	f = fopen(path, "w");
	agent_config_print(f, &a);
	fclose(f);
	agent_config_defaults(&b);
	assert_int_equal(agent_config_load(path, &b, why, sizeof(why)), 0);
	assert_string_equal(b.node, "n7");
	assert_int_equal(b.windows, 4);
	assert_true(b.provisional.period == 1500 * NSEC_PER_MSEC);
	assert_true(b.provisional.slice == 250 * NSEC_PER_MSEC);
	assert_int_equal(b.app_endpoint_mode, 0660);
	assert_int_equal(b.park, VSP_PARK_IDLE);
	assert_float_equal(b.mem_capacity_mbs, 12345.5, 0.01);
	assert_true(b.heartbeat == a.heartbeat && b.sample_interval == a.sample_interval);
}

static void test_calib_net_fake_sysfs(void **state)
{
	char cmd[512], ifname[32];
	double bps;

	(void)state;
	snprintf(cmd, sizeof(cmd),
	         "cd '%s' && mkdir -p net/lo net/eth0 net/eth1 net/wlan0 net/down0 && "
	         "echo 100000 > net/lo/speed && echo 1000 > net/eth0/speed && "
	         "echo 25000 > net/eth1/speed && echo -1 > net/wlan0/speed && "
	         "printf '' > net/down0/speed",
	         dir);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/net", dir);
	bps = calib_net(cmd, ifname, sizeof(ifname));
	assert_float_equal(bps, 25000 * 1e6 / 8, 1); /* 25 Gb/s = 3.125 GB/s; lo ignored */
	assert_string_equal(ifname, "eth1");
	assert_float_equal(calib_net("/nonexistent", ifname, sizeof(ifname)), 0, 0);
	assert_string_equal(ifname, "");
}

static void test_calib_mem_plausible(void **state)
{
	/* 30 ms only: this machine is shared with RT experiments. */
	double bps = calib_mem(30);

	(void)state;
	print_message("memory copy: %.0f MB/s\n", bps / 1e6);
	assert_true(bps > 100e6 && bps < 1e12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_shipped_config_parses),
	    cmocka_unit_test(test_bad_values_name_the_key),
	    cmocka_unit_test(test_print_parses_back),
	    cmocka_unit_test(test_calib_net_fake_sysfs),
	    cmocka_unit_test(test_calib_mem_plausible),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
