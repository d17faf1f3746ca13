/*
 * Unit tests of the dashboard renderer (common/dashboard.c), shared by `vschedctl top` and
 * `vsched-controller -d`:
 *   - a fixed set of records renders exactly as tests/golden/dashboard_80col.txt
 *     (VS_UPDATE_GOLDEN=1 rewrites the file after a deliberate change; review the diff);
 *   - no line is wider than 79 columns, also with 63-character names, 200-character
 *     reasons and extreme numbers;
 *   - the compact number and duration forms.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dashboard.h"

#ifndef VS_GOLDEN
#error "VS_GOLDEN must name tests/golden/dashboard_80col.txt"
#endif

static struct padm_job jobs[5];
static struct padm_node nodes[3];

static void sample(struct padm_reply *r)
{
	memset(r, 0, sizeof(*r));
	memset(jobs, 0, sizeof(jobs));
	memset(nodes, 0, sizeof(nodes));

	strcpy(jobs[0].name, "bsp-64");
	jobs[0].state = PADM_ST_STABLE;
	jobs[0].flags = PADM_JF_RMAX_KNOWN;
	jobs[0].klass = PADM_CLASS_DEVIL;
	jobs[0].nranks = 64;
	jobs[0].target_milli = 40000;
	jobs[0].current_pct = 39.2;
	jobs[0].err_pct = -0.8;
	jobs[0].period = 120000000;
	jobs[0].slice = 33600000;
	jobs[0].u_pct = 28.0;
	jobs[0].eff = 39.2 / 28.0;
	jobs[0].mem_bps = 1234000000;
	jobs[0].net_bps = 35400000;
	jobs[0].misses = 3;

	strcpy(jobs[1].name, "climate-model-ensemble");
	jobs[1].state = PADM_ST_CALIBRATING;
	jobs[1].nranks = 1024;
	jobs[1].current_pct = 100.0;
	jobs[1].err_pct = NAN;
	jobs[1].klass = PADM_CLASS_UNKNOWN;
	jobs[1].u_pct = NAN;
	jobs[1].eff = NAN;
	jobs[1].misses = 123456;

	strcpy(jobs[2].name, "mc");
	jobs[2].state = PADM_ST_REJECTED;
	jobs[2].flags = PADM_JF_RMAX_KNOWN | PADM_JF_RMAX_GIVEN;
	jobs[2].nranks = 2;
	jobs[2].target_milli = 100000;
	jobs[2].current_pct = 61.5;
	jobs[2].err_pct = -38.5;
	jobs[2].period = 1500000;
	jobs[2].slice = 900000;
	jobs[2].u_pct = 60.0;
	jobs[2].eff = 61.5 / 60.0;
	jobs[2].klass = PADM_CLASS_TURTLE;
	strcpy(jobs[2].reason, "period 100ms slice 95ms refused: node n2: job mc: pid 4242: "
	                       "vsched: cpu 1: load 50.0% + 95.0% exceeds cap 90.0%");

	strcpy(jobs[3].name, "idle-job");
	jobs[3].state = PADM_ST_IDLE;
	jobs[3].current_pct = NAN;
	jobs[3].err_pct = NAN;
	jobs[3].u_pct = NAN;
	jobs[3].eff = NAN;

	/* an unmodified MPI job whose main loop libapprate-mpi has not found yet */
	strcpy(jobs[4].name, "lammps");
	jobs[4].state = PADM_ST_CALIBRATING;
	jobs[4].flags = PADM_JF_NO_SIGNAL;
	jobs[4].nranks = 4;
	jobs[4].target_milli = 30000;
	jobs[4].current_pct = NAN;
	jobs[4].err_pct = NAN;
	jobs[4].u_pct = NAN;
	jobs[4].eff = NAN;

	strcpy(nodes[0].name, "node001");
	nodes[0].up = 1;
	nodes[0].ncpus = 64;
	nodes[0].sum_u = 25.6;
	nodes[0].mem_used = 45600000000ULL;
	nodes[0].mem_cap = 120000000000ULL;
	nodes[0].mem_src = 4;
	nodes[0].net_used = 1200000000;
	nodes[0].net_cap = 12500000000ULL;
	nodes[0].net_src = 5;
	nodes[0].njobs = 3;
	nodes[0].hb_age_ms = 420;
	nodes[0].cap_ppm = 900000;

	strcpy(nodes[1].name, "node-with-a-very-long-name");
	nodes[1].up = 0;
	nodes[1].ncpus = 2;
	nodes[1].njobs = 1;
	nodes[1].hb_age_ms = 754000;
	nodes[1].cap_ppm = 950000;

	strcpy(nodes[2].name, "n3");
	nodes[2].up = 1;
	nodes[2].ncpus = 8;
	nodes[2].hb_age_ms = UINT64_MAX;

	r->njobs = 5;
	r->jobs = jobs;
	r->nnodes = 3;
	r->nodes = nodes;
}

static char *render(const struct padm_reply *r, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	assert_non_null(f);
	dash_render(f, r, "vsched tcp://127.0.0.1:7711", "12:34:56");
	assert_int_equal(fclose(f), 0);
	return text;
}

static void assert_width(const char *text)
{
	const char *p = text;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		if (n > DASH_WIDTH)
			fail_msg("line of %zu columns: %.*s", n, (int)n, p);
		p += n + (nl != NULL);
	}
}

static void test_golden(void **state)
{
	struct padm_reply r;
	size_t len;
	char *text, *want;
	long wlen;
	FILE *g;
	(void)state;

	sample(&r);
	text = render(&r, &len);
	if (getenv("VS_UPDATE_GOLDEN") != NULL) {
		g = fopen(VS_GOLDEN, "w");
		assert_non_null(g);
		fwrite(text, 1, len, g);
		fclose(g);
	}
	g = fopen(VS_GOLDEN, "r");
	assert_non_null(g);
	fseek(g, 0, SEEK_END);
	wlen = ftell(g);
	rewind(g);
	want = calloc(1, (size_t)wlen + 1);
	assert_non_null(want);
	assert_int_equal(fread(want, 1, (size_t)wlen, g), (size_t)wlen);
	fclose(g);
	if (strcmp(text, want) != 0)
		fail_msg("dashboard differs from %s:\n--- got\n%s--- want\n%s", VS_GOLDEN, text,
		         want);
	assert_width(text);
	free(want);
	free(text);
}

/* The caps line: one figure when every node reports the same cap. */
static void test_caps_same(void **state)
{
	struct padm_reply r;
	size_t len;
	char *text;
	(void)state;

	sample(&r);
	for (int i = 0; i < 3; i++)
		nodes[i].cap_ppm = 900000;
	text = render(&r, &len);
	assert_non_null(strstr(text, "vsched admits 90 % per CPU on every node\n"));
	free(text);
	for (int i = 0; i < 3; i++)
		nodes[i].cap_ppm = 0;
	text = render(&r, &len);
	assert_non_null(strstr(text, "vsched's per-CPU cap: not reported yet\n"));
	free(text);
}

static void test_extremes_fit(void **state)
{
	struct padm_reply r;
	size_t len;
	char *text;
	(void)state;

	sample(&r);
	for (int i = 0; i < 4; i++) {
		memset(jobs[i].name, 'J', PADM_NAME_MAX);
		jobs[i].name[PADM_NAME_MAX] = '\0';
		jobs[i].nranks = UINT32_MAX;
		jobs[i].current_pct = i % 2 ? 1e9 : -1e9;
		jobs[i].err_pct = i % 2 ? 1e12 : -1e12;
		jobs[i].period = UINT64_MAX;
		jobs[i].slice = UINT64_MAX / 3;
		jobs[i].mem_bps = UINT64_MAX;
		jobs[i].net_bps = UINT64_MAX;
		jobs[i].misses = UINT64_MAX;
		jobs[i].state = PADM_ST_REJECTED;
		memset(jobs[i].reason, 'x', PADM_REASON_MAX);
		jobs[i].reason[PADM_REASON_MAX] = '\0';
	}
	for (int i = 0; i < 3; i++) {
		memset(nodes[i].name, 'N', PADM_NAME_MAX);
		nodes[i].name[PADM_NAME_MAX] = '\0';
		nodes[i].ncpus = UINT16_MAX;
		nodes[i].sum_u = 65535.99;
		nodes[i].mem_used = nodes[i].mem_cap = UINT64_MAX;
		nodes[i].net_used = nodes[i].net_cap = UINT64_MAX;
		nodes[i].mem_src = nodes[i].net_src = 1;
		nodes[i].njobs = UINT16_MAX;
		nodes[i].hb_age_ms = UINT64_MAX - 1;
	}
	text = render(&r, &len);
	assert_width(text);
	free(text);

	/* empty tables */
	memset(&r, 0, sizeof(r));
	text = render(&r, &len);
	assert_non_null(strstr(text, "(no jobs)"));
	assert_non_null(strstr(text, "(no nodes)"));
	assert_width(text);
	free(text);
}

static void test_compact_forms(void **state)
{
	char b[32];
	(void)state;

	assert_string_equal(dash_dur(0, b, sizeof(b)), "-");
	assert_string_equal(dash_dur(200000000, b, sizeof(b)), "200ms");
	assert_string_equal(dash_dur(1500000, b, sizeof(b)), "1.5ms");
	assert_string_equal(dash_dur(250000, b, sizeof(b)), "250us");
	assert_string_equal(dash_dur(999600000, b, sizeof(b)), "1s");
	assert_string_equal(dash_dur(UINT64_MAX, b, sizeof(b)), "huge");
	assert_string_equal(dash_count(UINT64_MAX, b, sizeof(b)), "huge");
	assert_string_equal(dash_count(123456, b, sizeof(b)), "123k");
	assert_string_equal(dash_dur(90000000000ULL, b, sizeof(b)), "1.5m");
	assert_string_equal(dash_dur(500, b, sizeof(b)), "500ns");
	assert_string_equal(dash_count(9999, b, sizeof(b)), "9999");
	assert_string_equal(dash_count(12345, b, sizeof(b)), "12k");
	assert_string_equal(dash_count(1234567, b, sizeof(b)), "1.2M");
	assert_string_equal(dash_mbs(0, b, sizeof(b)), "0");
	assert_string_equal(dash_mbs(3400000, b, sizeof(b)), "3.4");
	assert_string_equal(dash_mbs(1234000000, b, sizeof(b)), "1.2k");
	assert_string_equal(dash_mbs(512000000, b, sizeof(b)), "512");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_golden),
	    cmocka_unit_test(test_caps_same),
	    cmocka_unit_test(test_extremes_fit),
	    cmocka_unit_test(test_compact_forms),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
