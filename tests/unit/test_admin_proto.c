/*
 * Unit tests of the admin protocol vschedctl <-> vsched-controller (common/proto_admin.c):
 * every request and a reply with every record kind survive encode + decode unchanged (NaN
 * included); every truncation and extension of a valid frame is refused; bad magic,
 * version, reserved byte, type, names, enums, masks, counts, statuses and reasons are
 * refused with the right code and a reason; random corruptions never crash the decoder or
 * leak (run under ASan).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto_admin.h"

static uint8_t buf[65536];

static void roundtrip_request(const struct padm_request *q)
{
	struct padm_request out;
	char why[256] = "";
	int n = padm_encode_request(q, buf, sizeof(buf));

	assert_true(n >= PADM_HDR);
	assert_int_equal(padm_decode_request(buf, (size_t)n, &out, why, sizeof(why)), 0);
	assert_int_equal(out.type, q->type);
	assert_string_equal(out.job, q->job);
	if (q->type == PADM_SET_RATE)
		assert_int_equal(out.target_milli, q->target_milli);
	if (q->type == PADM_JOB_SET) {
		assert_int_equal(out.mask, q->mask);
		assert_int_equal(out.algo, q->algo);
		assert_int_equal(out.agg, q->agg);
		assert_int_equal(out.eps_milli, q->eps_milli);
		assert_true(out.r_max == q->r_max);
		assert_int_equal(out.delta_period, q->delta_period);
		assert_int_equal(out.min_period, q->min_period);
		assert_int_equal(out.min_slice, q->min_slice);
		assert_int_equal(out.initial_period, q->initial_period);
		assert_int_equal(out.u_max_milli, q->u_max_milli);
	}
	/* every truncation is refused */
	for (int k = 0; k < n; k++)
		assert_int_equal(padm_decode_request(buf, (size_t)k, &out, why, sizeof(why)),
		                 -EBADMSG);
	/* one byte more is refused */
	buf[n] = 0;
	assert_int_equal(padm_decode_request(buf, (size_t)n + 1, &out, why, sizeof(why)), -EBADMSG);
}

static void test_requests_roundtrip(void **state)
{
	struct padm_request q;
	(void)state;

	memset(&q, 0, sizeof(q));
	q.type = PADM_JOB_LIST;
	roundtrip_request(&q);
	q.type = PADM_NODE_LIST;
	roundtrip_request(&q);
	q.type = PADM_STATUS;
	roundtrip_request(&q);
	q.type = PADM_JOB_SHOW;
	strcpy(q.job, "bsp-64");
	roundtrip_request(&q);
	q.type = PADM_SET_RATE;
	q.target_milli = 40000;
	roundtrip_request(&q);
	q.target_milli = -5000; /* a client may send anything: the controller refuses it */
	roundtrip_request(&q);
	memset(&q, 0, sizeof(q));
	q.type = PADM_JOB_SET;
	memset(q.job, 'j', PADM_NAME_MAX); /* longest name */
	q.mask = PADM_SET_ALL;
	q.algo = PADM_ALGO_LINEAR;
	q.agg = PADM_AGG_MEAN;
	q.eps_milli = 2500;
	q.r_max = 1234.5;
	q.delta_period = 2000000;
	q.min_period = 1000000;
	q.min_slice = 100000;
	q.initial_period = 200000000;
	q.u_max_milli = 62500;
	roundtrip_request(&q);
	q.algo = PADM_ALGO_FLOATING;
	roundtrip_request(&q);
}

static void test_request_refusals(void **state)
{
	struct padm_request q, out;
	char why[256];
	int n;
	(void)state;

	/* encoder: bad names, unknown type, small buffer */
	memset(&q, 0, sizeof(q));
	q.type = PADM_SET_RATE;
	assert_int_equal(padm_encode_request(&q, buf, sizeof(buf)), -EINVAL); /* empty name */
	strcpy(q.job, "a b");
	assert_int_equal(padm_encode_request(&q, buf, sizeof(buf)), -EINVAL);
	strcpy(q.job, "ok");
	assert_int_equal(padm_encode_request(&q, buf, 5), -ENOBUFS);
	q.type = 99;
	assert_int_equal(padm_encode_request(&q, buf, sizeof(buf)), -EINVAL);

	q.type = PADM_SET_RATE;
	n = padm_encode_request(&q, buf, sizeof(buf));
	assert_true(n > 0);
	buf[0] = 'X';
	why[0] = '\0';
	assert_int_equal(padm_decode_request(buf, (size_t)n, &out, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "magic"));
	buf[0] = PADM_MAGIC;
	buf[1] = PADM_VERSION + 1;
	assert_int_equal(padm_decode_request(buf, (size_t)n, &out, why, sizeof(why)), -EPROTO);
	buf[1] = PADM_VERSION;
	buf[3] = 1;
	assert_int_equal(padm_decode_request(buf, (size_t)n, &out, why, sizeof(why)), -EBADMSG);
	buf[3] = 0;
	buf[2] = 0x77;
	assert_int_equal(padm_decode_request(buf, (size_t)n, &out, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "unknown request type"));
	buf[2] = PADM_SET_RATE;
	/* a blank and a NUL inside the name */
	buf[PADM_HDR + 1] = ' ';
	assert_int_equal(padm_decode_request(buf, (size_t)n, &out, why, sizeof(why)), -EBADMSG);
	buf[PADM_HDR + 1] = '\0';
	assert_int_equal(padm_decode_request(buf, (size_t)n, &out, why, sizeof(why)), -EBADMSG);
	/* a name length beyond the frame */
	buf[PADM_HDR + 1] = 'o';
	buf[PADM_HDR] = 60;
	assert_int_equal(padm_decode_request(buf, (size_t)n, &out, why, sizeof(why)), -EBADMSG);
	/* zero-length name */
	memset(buf, 0, sizeof(buf));
	memcpy(buf, (uint8_t[]){PADM_MAGIC, PADM_VERSION, PADM_JOB_SHOW, 0, 0}, 5);
	assert_int_equal(padm_decode_request(buf, 5, &out, why, sizeof(why)), -EBADMSG);

	/* JOB_SET: unknown mask bits, enum out of range, infinite r_max */
	memset(&q, 0, sizeof(q));
	q.type = PADM_JOB_SET;
	strcpy(q.job, "j");
	q.mask = PADM_SET_ALGO;
	n = padm_encode_request(&q, buf, sizeof(buf));
	assert_true(n > 0);
	buf[PADM_HDR + 2 + 1] = 0x80; /* mask high byte */
	assert_int_equal(padm_decode_request(buf, (size_t)n, &out, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "unknown field bits"));
	buf[PADM_HDR + 2 + 1] = 0;
	buf[PADM_HDR + 2 + 2] = 7; /* algo */
	assert_int_equal(padm_decode_request(buf, (size_t)n, &out, why, sizeof(why)), -EBADMSG);
	q.r_max = INFINITY;
	assert_int_equal(padm_encode_request(&q, buf, sizeof(buf)), -EINVAL);
	/* too long */
	assert_int_equal(padm_decode_request(buf, PADM_MAX_REQUEST + 1, &out, why, sizeof(why)),
	                 -EBADMSG);
}

static struct padm_job jobs[2];
static struct padm_node nodes[2];
static struct padm_rank ranks[3];

static void fill_reply(struct padm_reply *r)
{
	memset(r, 0, sizeof(*r));
	memset(jobs, 0, sizeof(jobs));
	memset(nodes, 0, sizeof(nodes));
	memset(ranks, 0, sizeof(ranks));
	strcpy(jobs[0].name, "alpha");
	jobs[0].state = PADM_ST_STABLE;
	jobs[0].algo = PADM_ALGO_ADAPTIVE;
	jobs[0].flags = PADM_JF_RMAX_KNOWN | PADM_JF_RMAX_GIVEN;
	jobs[0].klass = PADM_CLASS_DEVIL;
	jobs[0].nranks = 64;
	jobs[0].nnodes = 16;
	jobs[0].target_milli = 40000;
	jobs[0].current_pct = 39.25;
	jobs[0].err_pct = -0.75;
	jobs[0].r_max = 1e6;
	jobs[0].eps_pct = 3;
	jobs[0].period = 120000000;
	jobs[0].slice = 48000000;
	jobs[0].gen = UINT64_MAX;
	jobs[0].mem_bps = 5000000000ULL;
	jobs[0].misses = 7;
	jobs[0].u_pct = 28.0;
	jobs[0].eff = 39.25 / 28.0;
	jobs[0].need_u_pct = NAN;
	jobs[0].u_max_pct = 90;
	jobs[0].floor = 2000000;
	strcpy(jobs[0].reason, "");
	strcpy(jobs[1].name, "beta");
	jobs[1].state = PADM_ST_REJECTED;
	jobs[1].current_pct = NAN;
	jobs[1].err_pct = NAN;
	jobs[1].algo = PADM_ALGO_FLOATING;
	jobs[1].u_pct = NAN;
	jobs[1].eff = NAN;
	jobs[1].need_u_pct = 62.5;
	jobs[1].u_max_pct = 100;
	memset(jobs[1].reason, 'r', PADM_REASON_MAX);
	strcpy(nodes[0].name, "n1");
	nodes[0].up = 1;
	nodes[0].ncpus = 64;
	nodes[0].sum_u = 12.5;
	nodes[0].hb_age_ms = UINT64_MAX;
	nodes[0].mem_src = 4;
	nodes[0].cap_ppm = 900000;
	strcpy(nodes[1].name, "n2");
	for (int i = 0; i < 3; i++) {
		strcpy(ranks[i].job, "alpha");
		snprintf(ranks[i].node, sizeof(ranks[i].node), "n%d", i);
		ranks[i].rank = (uint32_t)i;
		ranks[i].pid = 100 + i;
		ranks[i].rate = i == 1 ? NAN : 10.5 * i;
		ranks[i].up = 1;
	}
	r->status = 0;
	strcpy(r->reason, "ok: done");
	r->njobs = 2;
	r->jobs = jobs;
	r->nnodes = 2;
	r->nodes = nodes;
	r->nranks = 3;
	r->ranks = ranks;
}

static void test_reply_roundtrip(void **state)
{
	struct padm_reply r, out;
	char why[256] = "";
	int n;
	(void)state;

	fill_reply(&r);
	n = padm_encode_reply(&r, buf, sizeof(buf));
	assert_int_equal(n, padm_reply_size(&r));
	assert_int_equal(padm_decode_reply(buf, (size_t)n, &out, why, sizeof(why)), 0);
	assert_string_equal(out.reason, "ok: done");
	assert_int_equal(out.njobs, 2);
	assert_int_equal(out.nnodes, 2);
	assert_int_equal(out.nranks, 3);
	assert_string_equal(out.jobs[0].name, "alpha");
	assert_int_equal(out.jobs[0].state, PADM_ST_STABLE);
	assert_int_equal(out.jobs[0].klass, PADM_CLASS_DEVIL);
	assert_int_equal(out.jobs[0].flags, PADM_JF_RMAX_KNOWN | PADM_JF_RMAX_GIVEN);
	assert_true(out.jobs[0].current_pct == 39.25 && out.jobs[0].err_pct == -0.75);
	assert_true(out.jobs[0].gen == UINT64_MAX);
	assert_int_equal(out.jobs[0].period, 120000000);
	assert_int_equal(out.jobs[0].mem_bps, 5000000000ULL);
	assert_true(isnan(out.jobs[1].current_pct) && isnan(out.jobs[1].err_pct));
	assert_true(out.jobs[0].u_pct == 28.0 && out.jobs[0].eff == 39.25 / 28.0);
	assert_true(isnan(out.jobs[0].need_u_pct) && out.jobs[0].u_max_pct == 90);
	assert_int_equal(out.jobs[0].floor, 2000000);
	assert_int_equal(out.jobs[1].algo, PADM_ALGO_FLOATING);
	assert_true(isnan(out.jobs[1].u_pct) && out.jobs[1].need_u_pct == 62.5);
	assert_int_equal(strlen(out.jobs[1].reason), PADM_REASON_MAX);
	assert_int_equal(out.nodes[0].ncpus, 64);
	assert_true(out.nodes[0].sum_u == 12.5);
	assert_true(out.nodes[0].hb_age_ms == UINT64_MAX);
	assert_int_equal(out.nodes[0].cap_ppm, 900000);
	assert_string_equal(out.ranks[2].node, "n2");
	assert_int_equal(out.ranks[2].pid, 102);
	assert_true(isnan(out.ranks[1].rate));
	padm_reply_release(&out);
	assert_null(out.jobs);
	padm_reply_release(NULL);

	/* every truncation and one extra byte are refused, nothing leaks (ASan) */
	for (int k = 0; k < n; k++)
		assert_int_equal(padm_decode_reply(buf, (size_t)k, &out, why, sizeof(why)),
		                 -EBADMSG);
	buf[n] = 0;
	assert_int_equal(padm_decode_reply(buf, (size_t)n + 1, &out, why, sizeof(why)), -EBADMSG);

	/* an empty reply: status and reason only */
	memset(&r, 0, sizeof(r));
	r.status = -ENOENT;
	strcpy(r.reason, "unknown job 'x'");
	n = padm_encode_reply(&r, buf, sizeof(buf));
	/* + the empty plan: flags 0, no windows, no slot records */
	assert_int_equal(n, PADM_HDR + 4 + 1 + 15 + 6 + PADM_PLAN_FIXED + 2);
	assert_int_equal(padm_decode_reply(buf, (size_t)n, &out, why, sizeof(why)), 0);
	assert_int_equal(out.status, -ENOENT);
	assert_string_equal(out.reason, "unknown job 'x'");
	padm_reply_release(&out);
}

/* The co-scheduling plan of a JOB_SHOW: 2 windows and 3 slot records. */
static struct padm_slot slots[3];

static void fill_plan(struct padm_reply *r)
{
	fill_reply(r);
	r->njobs = 1;
	memset(slots, 0, sizeof(slots));
	r->plan.flags = PADM_PF_ON | PADM_PF_PLANNED | PADM_PF_COLOURABLE | PADM_PF_COMPLETE;
	r->plan.frame_slots = 20;
	r->plan.slots = 20;
	r->plan.slot_ns = 5000000;
	r->plan.need = 9;
	r->plan.got = 9;
	r->plan.nwin = 2;
	r->plan.win[0] = (struct padm_window){100000000, 10000000, 10000000, 0};
	r->plan.win[1] = (struct padm_window){100000000, 35000000, 35000000, 65000000};
	for (int i = 0; i < 3; i++) {
		slots[i].slot = (uint16_t)(i == 2 ? 19 : 0);
		strcpy(slots[i].node, "n1");
		strcpy(slots[i].job, i == 1 ? "beta" : "alpha");
	}
	r->nslots = 3;
	r->slots = slots;
}

static void test_plan_roundtrip(void **state)
{
	struct padm_reply r, out;
	char why[256] = "";
	int n;
	(void)state;

	fill_plan(&r);
	n = padm_encode_reply(&r, buf, sizeof(buf));
	assert_int_equal(n, padm_reply_size(&r));
	assert_int_equal(padm_decode_reply(buf, (size_t)n, &out, why, sizeof(why)), 0);
	assert_int_equal(out.plan.flags, r.plan.flags);
	assert_int_equal(out.plan.frame_slots, 20);
	assert_int_equal(out.plan.slot_ns, 5000000);
	assert_int_equal(out.plan.need, 9);
	assert_int_equal(out.plan.nwin, 2);
	assert_memory_equal(out.plan.win, r.plan.win, 2 * sizeof(r.plan.win[0]));
	assert_int_equal(out.nslots, 3);
	assert_int_equal(out.slots[2].slot, 19);
	assert_string_equal(out.slots[1].job, "beta");
	assert_string_equal(out.slots[1].node, "n1");
	padm_reply_release(&out);
	assert_null(out.slots);
	assert_int_equal(out.plan.nwin, 0);
	/* every truncation refused */
	for (int k = 0; k < n; k++)
		assert_int_equal(padm_decode_reply(buf, (size_t)k, &out, why, sizeof(why)),
		                 -EBADMSG);
}

static void test_plan_refusals(void **state)
{
	struct padm_reply r, out;
	char why[256] = "";
	int n;
	(void)state;

	/* overlapping windows, a window past its period, unknown flags, a slot out of the
	 * sub-frame, a bad name, slots that do not divide the frame, records without the
	 * mode: refused by the encoder */
	fill_plan(&r);
	r.plan.win[1].phase = 5000000;
	assert_int_equal(padm_encode_reply(&r, buf, sizeof(buf)), -EINVAL);
	fill_plan(&r);
	r.plan.win[1].phase = 70000000;
	assert_int_equal(padm_encode_reply(&r, buf, sizeof(buf)), -EINVAL);
	fill_plan(&r);
	r.plan.flags |= 0x80;
	assert_int_equal(padm_encode_reply(&r, buf, sizeof(buf)), -EINVAL);
	fill_plan(&r);
	slots[2].slot = 20;
	assert_int_equal(padm_encode_reply(&r, buf, sizeof(buf)), -EINVAL);
	fill_plan(&r);
	strcpy(slots[0].job, "a b");
	assert_int_equal(padm_encode_reply(&r, buf, sizeof(buf)), -EINVAL);
	fill_plan(&r);
	r.plan.slots = 7;
	assert_int_equal(padm_encode_reply(&r, buf, sizeof(buf)), -EINVAL);
	fill_plan(&r);
	r.plan.flags = 0;
	assert_int_equal(padm_encode_reply(&r, buf, sizeof(buf)), -EINVAL);
	fill_plan(&r);
	r.plan.nwin = 9;
	assert_int_equal(padm_encode_reply(&r, buf, sizeof(buf)), -EINVAL);

	/* decoder: the same, patched into a valid frame (window 2's phase, last 8 bytes of
	 * the windows, before the slot count and the 3 slot records) */
	fill_plan(&r);
	n = padm_encode_reply(&r, buf, sizeof(buf));
	assert_true(n > 0);
	{
		size_t recs = 3 * (2 + 2) + strlen("n1") * 3 + strlen("alpha") * 2 + strlen("beta");
		size_t phase_off = (size_t)n - recs - 2 - 8;
		uint64_t ph = 0;
		for (int b = 0; b < 8; b++)
			ph |= (uint64_t)buf[phase_off + b] << (8 * b);
		assert_int_equal(ph, 65000000);
		buf[phase_off + 3] = 0; /* phase 65 ms -> 0xe0 00 00 00: overlaps window 1 */
		buf[phase_off + 2] = 0;
		assert_int_equal(padm_decode_reply(buf, (size_t)n, &out, why, sizeof(why)),
		                 -EBADMSG);
		assert_non_null(strstr(why, "plan"));
	}
	n = padm_encode_reply(&r, buf, sizeof(buf));
	buf[n - 1 - 5 - 1 - 2 - 1] = 25; /* last record's slot, high byte: 19 -> 6419 */
	assert_int_equal(padm_decode_reply(buf, (size_t)n, &out, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "slot record 2"));
}

static void test_reply_refusals(void **state)
{
	struct padm_reply r, out;
	char why[256] = "";
	int n;
	(void)state;

	/* encoder refuses what the decoder would */
	fill_reply(&r);
	jobs[0].state = 9;
	assert_int_equal(padm_encode_reply(&r, buf, sizeof(buf)), -EINVAL);
	fill_reply(&r);
	strcpy(nodes[1].name, "has blank");
	assert_int_equal(padm_encode_reply(&r, buf, sizeof(buf)), -EINVAL);
	fill_reply(&r);
	nodes[1].cap_ppm = 1000001; /* more than the whole CPU */
	assert_int_equal(padm_encode_reply(&r, buf, sizeof(buf)), -EINVAL);
	fill_reply(&r);
	jobs[0].current_pct = INFINITY;
	assert_int_equal(padm_encode_reply(&r, buf, sizeof(buf)), -EINVAL);
	fill_reply(&r);
	r.status = 5;
	assert_int_equal(padm_encode_reply(&r, buf, sizeof(buf)), -EINVAL);
	fill_reply(&r);
	strcpy(r.reason, "two\nlines");
	assert_int_equal(padm_encode_reply(&r, buf, sizeof(buf)), -EINVAL);
	fill_reply(&r);
	assert_int_equal(padm_encode_reply(&r, buf, 10), -ENOBUFS);

	/* decoder: a job count that cannot fit is refused before allocating */
	memset(&r, 0, sizeof(r));
	n = padm_encode_reply(&r, buf, sizeof(buf));
	buf[PADM_HDR + 4 + 1] = 0xff; /* njobs low byte */
	buf[PADM_HDR + 4 + 2] = 0xff;
	assert_int_equal(padm_decode_reply(buf, (size_t)n, &out, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "do not fit"));
	/* a request is not a reply */
	memcpy(buf, (uint8_t[]){PADM_MAGIC, PADM_VERSION, PADM_JOB_LIST, 0}, 4);
	assert_int_equal(padm_decode_reply(buf, 4, &out, why, sizeof(why)), -EBADMSG);
	/* a record with an out-of-range enum, patched into a valid frame */
	fill_reply(&r);
	n = padm_encode_reply(&r, buf, sizeof(buf));
	{
		size_t state_off = PADM_HDR + 4 + 1 + strlen(r.reason) + 2 + 1 + strlen("alpha");
		assert_int_equal(buf[state_off], PADM_ST_STABLE);
		buf[state_off] = 42;
		assert_int_equal(padm_decode_reply(buf, (size_t)n, &out, why, sizeof(why)),
		                 -EBADMSG);
		assert_non_null(strstr(why, "job record 0"));
	}
}

/* Random corruptions of a valid reply: the decoder refuses or accepts, never crashes. */
static void test_reply_fuzz(void **state)
{
	struct padm_reply r, out;
	uint8_t good[4096];
	char why[256];
	int n;
	(void)state;

	fill_reply(&r);
	n = padm_encode_reply(&r, good, sizeof(good));
	assert_true(n > 0);
	srand(12345);
	for (int it = 0; it < 20000; it++) {
		memcpy(buf, good, (size_t)n);
		for (int k = 0; k < 1 + it % 4; k++)
			buf[rand() % n] = (uint8_t)rand();
		if (padm_decode_reply(buf, (size_t)(n - it % 3), &out, why, sizeof(why)) == 0)
			padm_reply_release(&out);
	}
}

static void test_names(void **state)
{
	uint8_t v;
	(void)state;

	assert_true(text_name_ok("a"));
	assert_false(text_name_ok(""));
	assert_false(text_name_ok("tab\there"));
	assert_string_equal(padm_state_name(PADM_ST_OSCILLATING), "oscillating");
	assert_string_equal(padm_state_name(77), "?");
	assert_string_equal(padm_type_name(PADM_SET_RATE), "set_rate");
	assert_int_equal(padm_algo_parse("linear", &v), 0);
	assert_int_equal(v, PADM_ALGO_LINEAR);
	assert_int_equal(padm_algo_parse("fast", &v), -EINVAL);
	assert_int_equal(padm_agg_parse("mean", &v), 0);
	assert_int_equal(v, PADM_AGG_MEAN);
	assert_string_equal(padm_class_name(PADM_CLASS_SEMIDEVIL), "semidevil");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_requests_roundtrip), cmocka_unit_test(test_request_refusals),
	    cmocka_unit_test(test_reply_roundtrip),    cmocka_unit_test(test_reply_refusals),
	    cmocka_unit_test(test_reply_fuzz),         cmocka_unit_test(test_names),
	    cmocka_unit_test(test_plan_roundtrip),     cmocka_unit_test(test_plan_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
