/*
 * Unit tests of common/proto_vsched.c: round trips of every frame type, exact byte layout,
 * refusal of every truncation, bad headers, oversize frames and out-of-range fields.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto_vsched.h"

#define MS 1000000ULL

static struct vsp_request sample_request(uint8_t type)
{
	struct vsp_request q;

	memset(&q, 0, sizeof(q));
	q.type = type;
	q.cpu = -1;
	switch (type) {
	case VSP_ADD:
		q.pid = 4242;
		q.cpu = 1;
		q.park = VSP_PARK_IDLE;
		q.resv = (struct vsp_resv){10 * MS, 3 * MS, 8 * MS, 2 * MS};
		break;
	case VSP_SET:
		q.pid = 77;
		q.resv = (struct vsp_resv){86400000 * MS, 1000 * MS, 0, 5 * MS};
		break;
	case VSP_DEL:
		q.pid = 0x7fffffff;
		break;
	case VSP_EPOCH:
		q.epoch_realtime_ns = 0x0102030405060708ULL;
		break;
	default:
		break;
	}
	return q;
}

static const uint8_t req_types[] = {VSP_ADD, VSP_SET, VSP_DEL, VSP_LIST, VSP_EPOCH};
static const int req_lens[] = {48, 44, 8, 4, 12};
#define NREQ 5

static int encode(const struct vsp_request *q, uint8_t *buf)
{
	return vsp_encode_request(q, buf, VSP_MAX_FRAME);
}

static void test_request_round_trip(void **state)
{
	(void)state;
	for (int i = 0; i < NREQ; i++) {
		struct vsp_request q = sample_request(req_types[i]), back;
		uint8_t buf[VSP_MAX_FRAME];
		char why[128] = "";
		int len = encode(&q, buf);

		assert_int_equal(len, req_lens[i]);
		memset(&back, 0xaa, sizeof(back));
		assert_int_equal(vsp_decode_request(buf, (size_t)len, &back, why, sizeof(why)), 0);
		assert_int_equal(back.type, q.type);
		assert_int_equal(back.pid, q.pid);
		if (q.type == VSP_ADD) {
			assert_int_equal(back.cpu, q.cpu);
			assert_int_equal(back.park, q.park);
		}
		if (q.type == VSP_ADD || q.type == VSP_SET)
			assert_memory_equal(&back.resv, &q.resv, sizeof(q.resv));
		assert_int_equal(back.epoch_realtime_ns, q.epoch_realtime_ns);
	}
}

/* The layout is little-endian field by field, independent of the host. */
/* ADD may leave the park policy to the daemon's configuration. */
static void test_request_park_default(void **state)
{
	struct vsp_request q = sample_request(VSP_ADD), back;
	uint8_t buf[VSP_MAX_FRAME];
	char why[128] = "";
	int len;

	(void)state;
	q.park = VSP_PARK_DEFAULT;
	len = encode(&q, buf);
	assert_int_equal(vsp_decode_request(buf, (size_t)len, &back, why, sizeof(why)), 0);
	assert_int_equal(back.park, VSP_PARK_DEFAULT);
}

static void test_request_bytes(void **state)
{
	struct vsp_request q = sample_request(VSP_ADD);
	uint8_t buf[VSP_MAX_FRAME];
	const uint8_t head[] = {'V',  VSP_VERSION, VSP_ADD, 0, 0x92, 0x10, 0, 0, /* pid 4242 */
	                        1,    0,           0,       0,                   /* cpu 1 */
	                        1,    1,           0,       0, /* park, nwin, pad */
	                        0x80, 0x96,        0x98,    0, 0,    0,    0, 0}; /* period 10 ms */
	(void)state;
	assert_int_equal(encode(&q, buf), 48);
	assert_memory_equal(buf, head, sizeof(head));
	q = sample_request(VSP_EPOCH);
	assert_int_equal(encode(&q, buf), 12);
	const uint8_t ep[] = {'V', VSP_VERSION, VSP_EPOCH, 0, 8, 7, 6, 5, 4, 3, 2, 1};
	assert_memory_equal(buf, ep, sizeof(ep));
}

static void test_request_every_truncation_refused(void **state)
{
	(void)state;
	for (int i = 0; i < NREQ; i++) {
		struct vsp_request q = sample_request(req_types[i]), back;
		uint8_t buf[VSP_MAX_FRAME];
		char why[128];
		int len = encode(&q, buf);

		for (int l = 0; l < len; l++) {
			why[0] = '\0';
			assert_int_equal(
			    vsp_decode_request(buf, (size_t)l, &back, why, sizeof(why)), -EBADMSG);
			assert_true(strlen(why) > 0);
		}
		/* one byte too many is refused too */
		buf[len] = 0;
		assert_int_equal(vsp_decode_request(buf, (size_t)len + 1, &back, why, sizeof(why)),
		                 -EBADMSG);
	}
}

static void test_request_bad_header(void **state)
{
	struct vsp_request q = sample_request(VSP_DEL), back;
	uint8_t buf[VSP_MAX_FRAME];
	char why[128];
	(void)state;

	int len = encode(&q, buf);
	buf[0] = 'X';
	assert_int_equal(vsp_decode_request(buf, (size_t)len, &back, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "magic"));
	buf[0] = 'V';
	buf[1] = VSP_VERSION + 1;
	assert_int_equal(vsp_decode_request(buf, (size_t)len, &back, why, sizeof(why)), -EPROTO);
	assert_non_null(strstr(why, "version"));
	buf[1] = VSP_VERSION;
	buf[3] = 1;
	assert_int_equal(vsp_decode_request(buf, (size_t)len, &back, why, sizeof(why)), -EBADMSG);
	buf[3] = 0;
	buf[2] = 9;
	assert_int_equal(vsp_decode_request(buf, (size_t)len, &back, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "type"));
	buf[2] = VSP_REPLY; /* a reply is not a request */
	assert_int_equal(vsp_decode_request(buf, (size_t)len, &back, why, sizeof(why)), -EBADMSG);
	buf[2] = VSP_DEL;
	assert_int_equal(vsp_decode_request(buf, (size_t)len, &back, why, sizeof(why)), 0);
}

static void test_request_oversize(void **state)
{
	uint8_t *buf = calloc(1, VSP_MAX_FRAME + 1);
	struct vsp_request back;
	char why[128];
	(void)state;

	assert_non_null(buf);
	buf[0] = 'V';
	buf[1] = VSP_VERSION;
	buf[2] = VSP_LIST;
	assert_int_equal(vsp_decode_request(buf, VSP_MAX_FRAME + 1, &back, why, sizeof(why)),
	                 -EBADMSG);
	assert_non_null(strstr(why, "long"));
	free(buf);
}

static void test_request_encode_small_buffer(void **state)
{
	struct vsp_request q = sample_request(VSP_ADD);
	uint8_t buf[48];
	(void)state;
	assert_int_equal(vsp_encode_request(&q, buf, 47), -ENOBUFS);
	assert_int_equal(vsp_encode_request(&q, buf, 48), 48);
	q.type = 99;
	assert_int_equal(vsp_encode_request(&q, buf, 48), -EINVAL);
}

/* Decodes q's encoding; expects err and a reason containing needle. */
static void refused(const struct vsp_request *q, int err, const char *needle)
{
	uint8_t buf[VSP_MAX_FRAME];
	struct vsp_request back = sample_request(VSP_LIST);
	char why[128] = "";
	int len = encode(q, buf);

	assert_true(len > 0);
	assert_int_equal(vsp_decode_request(buf, (size_t)len, &back, why, sizeof(why)), err);
	assert_non_null(strstr(why, needle));
	assert_int_equal(back.type, VSP_LIST); /* caller's struct untouched */
}

static void test_request_bad_ranges(void **state)
{
	struct vsp_request q;
	(void)state;

	q = sample_request(VSP_ADD);
	q.pid = 0;
	refused(&q, -EINVAL, "pid");
	q = sample_request(VSP_DEL);
	q.pid = -5;
	refused(&q, -EINVAL, "pid");
	q = sample_request(VSP_ADD);
	q.cpu = -2;
	refused(&q, -EINVAL, "cpu");
	q = sample_request(VSP_ADD);
	q.park = 3;
	refused(&q, -EINVAL, "park");
	q = sample_request(VSP_ADD);
	q.resv.slice = 9 * MS; /* > deadline 8 ms */
	refused(&q, -EINVAL, "slice 9ms > deadline 8ms");
	q = sample_request(VSP_SET);
	q.resv.slice = 0;
	refused(&q, -EINVAL, "slice");
	q = sample_request(VSP_SET);
	q.resv.phase = q.resv.period;
	refused(&q, -EINVAL, "phase");
	q = sample_request(VSP_SET);
	q.resv.deadline = q.resv.period + 1;
	refused(&q, -EINVAL, "deadline");
	q = sample_request(VSP_ADD);
	q.resv.period = VSP_PERIOD_MAX + 1;
	q.resv.deadline = 0;
	refused(&q, -EINVAL, "period");

	/* nonzero padding in ADD */
	uint8_t buf[VSP_MAX_FRAME];
	struct vsp_request back;
	char why[128];
	q = sample_request(VSP_ADD);
	int len = encode(&q, buf);
	buf[4 + 11] = 1;
	assert_int_equal(vsp_decode_request(buf, (size_t)len, &back, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "padding"));
	buf[4 + 11] = 0;
	/* anchor: 0 epoch, 1 wakeup, nothing else */
	buf[4 + 10] = 2;
	assert_int_equal(vsp_decode_request(buf, (size_t)len, &back, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "anchor"));
	buf[4 + 10] = 1;
	assert_int_equal(vsp_decode_request(buf, (size_t)len, &back, why, sizeof(why)), 0);
	assert_int_equal(back.anchor, VSP_ANCHOR_WAKEUP);
	buf[4 + 10] = 0;
	/* nwin 0 and 9 are refused before the length is even considered */
	buf[4 + 9] = 0;
	assert_int_equal(vsp_decode_request(buf, (size_t)len, &back, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "windows"));
	buf[4 + 9] = 9;
	assert_int_equal(vsp_decode_request(buf, (size_t)len, &back, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "windows"));
	/* nwin 2 with the length of one window */
	buf[4 + 9] = 2;
	assert_int_equal(vsp_decode_request(buf, (size_t)len, &back, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "must be 80"));
	buf[4 + 9] = 1;
	/* cpu -1 (placement rule) and deadline 0 (= period) are fine */
	q.cpu = -1;
	q.resv.deadline = 0;
	len = encode(&q, buf);
	assert_int_equal(vsp_decode_request(buf, (size_t)len, &back, why, sizeof(why)), 0);
	assert_int_equal(back.cpu, -1);
	assert_int_equal(back.resv.deadline, 0);
}

static struct vsp_task_stat sample_stat(int i)
{
	struct vsp_task_stat t = {
	    .pid = 1000 + i,
	    .cpu = i % 2,
	    .park = (uint8_t)(i % 2),
	    .anchor = (uint8_t)(i % 2),
	    .nthreads = 3 + (uint32_t)i,
	    .resv = {(10 + (uint64_t)i) * MS, MS, 5 * MS, 0},
	    .managed_ns = 123456789012ULL + (uint64_t)i,
	    .periods = 1000 + (uint64_t)i,
	    .cpu_ns = 999999999999ULL,
	    .misses = (uint64_t)i,
	    .lateness_total_ns = 0xfedcba9876543210ULL,
	    .lateness_max_ns = 1ULL << 40,
	};
	return t;
}

static void test_reply_round_trip_list(void **state)
{
	struct vsp_task_stat tasks[5];
	struct vsp_reply rep = {.status = 0, .ntasks = 5, .tasks = tasks}, back;
	uint8_t buf[4096];
	char why[128];
	(void)state;

	for (int i = 0; i < 5; i++)
		tasks[i] = sample_stat(i);
	strcpy(rep.msg, "5 tasks");
	size_t want = 4 + 4 + 2 + 7 + 4 + 5 * VSP_STAT_WIRE + 1;
	assert_int_equal(vsp_reply_size(&rep), want);
	int len = vsp_encode_reply(&rep, buf, sizeof(buf));
	assert_int_equal(len, (int)want);
	assert_int_equal(vsp_decode_reply(buf, (size_t)len, &back, why, sizeof(why)), 0);
	assert_int_equal(back.status, 0);
	assert_string_equal(back.msg, "5 tasks");
	assert_int_equal(back.ntasks, 5);
	assert_non_null(back.tasks);
	for (int i = 0; i < 5; i++) {
		const struct vsp_task_stat *a = &tasks[i], *b = &back.tasks[i];
		assert_int_equal(b->pid, a->pid);
		assert_int_equal(b->cpu, a->cpu);
		assert_int_equal(b->park, a->park);
		assert_int_equal(b->anchor, a->anchor);
		assert_int_equal(b->nthreads, a->nthreads);
		assert_memory_equal(&b->resv, &a->resv, sizeof(a->resv));
		assert_int_equal(b->managed_ns, a->managed_ns);
		assert_int_equal(b->periods, a->periods);
		assert_int_equal(b->cpu_ns, a->cpu_ns);
		assert_int_equal(b->misses, a->misses);
		assert_int_equal(b->lateness_total_ns, a->lateness_total_ns);
		assert_int_equal(b->lateness_max_ns, a->lateness_max_ns);
	}
	free(back.tasks);
}

static void test_reply_error_no_tasks(void **state)
{
	struct vsp_reply rep = {.status = -EBUSY}, back;
	uint8_t buf[512];
	char why[128];
	(void)state;

	memset(rep.msg, 'x', VSP_MSG_MAX);
	rep.msg[VSP_MSG_MAX] = '\0';
	int len = vsp_encode_reply(&rep, buf, sizeof(buf));
	assert_int_equal(len, 4 + 10 + VSP_MSG_MAX + 1);
	assert_int_equal(vsp_decode_reply(buf, (size_t)len, &back, why, sizeof(why)), 0);
	assert_int_equal(back.status, -EBUSY);
	assert_int_equal(strlen(back.msg), VSP_MSG_MAX);
	assert_int_equal(back.ntasks, 0);
	assert_null(back.tasks);
	assert_int_equal(vsp_encode_reply(&rep, buf, (size_t)len - 1), -ENOBUFS);
}

static void test_reply_every_truncation_refused(void **state)
{
	struct vsp_task_stat tasks[3] = {sample_stat(0), sample_stat(1), sample_stat(2)};
	struct vsp_reply rep = {.status = 0, .ntasks = 3, .tasks = tasks}, back;
	uint8_t buf[1024];
	char why[128];
	(void)state;

	strcpy(rep.msg, "ok");
	int len = vsp_encode_reply(&rep, buf, sizeof(buf));
	assert_true(len > 0);
	for (int l = 0; l < len; l++) {
		back.tasks = (void *)0x1;
		assert_int_equal(vsp_decode_reply(buf, (size_t)l, &back, why, sizeof(why)),
		                 -EBADMSG);
		assert_ptr_equal(back.tasks, (void *)0x1); /* nothing allocated or stored */
	}
	buf[len] = 0;
	assert_int_equal(vsp_decode_reply(buf, (size_t)len + 1, &back, why, sizeof(why)), -EBADMSG);
}

static int reply_frame(uint8_t *buf, size_t cap)
{
	struct vsp_task_stat t = sample_stat(1);
	struct vsp_reply rep = {.status = 0, .ntasks = 1, .tasks = &t};
	strcpy(rep.msg, "hi");
	return vsp_encode_reply(&rep, buf, cap);
}

static void test_reply_bad_fields(void **state)
{
	uint8_t buf[512];
	struct vsp_reply back;
	char why[128];
	int len;
	(void)state;

	len = reply_frame(buf, sizeof(buf));
	buf[2] = VSP_LIST; /* not a reply */
	assert_int_equal(vsp_decode_reply(buf, (size_t)len, &back, why, sizeof(why)), -EBADMSG);
	len = reply_frame(buf, sizeof(buf));
	buf[1] = VSP_VERSION + 1;
	assert_int_equal(vsp_decode_reply(buf, (size_t)len, &back, why, sizeof(why)), -EPROTO);
	len = reply_frame(buf, sizeof(buf));
	buf[0] = 'v';
	assert_int_equal(vsp_decode_reply(buf, (size_t)len, &back, why, sizeof(why)), -EBADMSG);
	len = reply_frame(buf, sizeof(buf));
	buf[4] = 1; /* status +1 */
	assert_int_equal(vsp_decode_reply(buf, (size_t)len, &back, why, sizeof(why)), -EINVAL);
	len = reply_frame(buf, sizeof(buf));
	buf[10] = '\0'; /* NUL inside the message */
	assert_int_equal(vsp_decode_reply(buf, (size_t)len, &back, why, sizeof(why)), -EBADMSG);
	len = reply_frame(buf, sizeof(buf));
	buf[8] = VSP_MSG_MAX + 1; /* msglen too large */
	buf[9] = 0;
	assert_int_equal(vsp_decode_reply(buf, (size_t)len, &back, why, sizeof(why)), -EBADMSG);
	len = reply_frame(buf, sizeof(buf));
	buf[12] = 2; /* ntasks 2 but only one record */
	assert_int_equal(vsp_decode_reply(buf, (size_t)len, &back, why, sizeof(why)), -EBADMSG);
	len = reply_frame(buf, sizeof(buf));
	buf[12] = 0xff; /* ntasks 0xffff..: over VSP_MAX_TASKS */
	buf[13] = 0xff;
	buf[14] = 0xff;
	buf[15] = 0xff;
	assert_int_equal(vsp_decode_reply(buf, (size_t)len, &back, why, sizeof(why)), -EBADMSG);
	len = reply_frame(buf, sizeof(buf));
	buf[16 + 8] = 7; /* park of the task record */
	assert_int_equal(vsp_decode_reply(buf, (size_t)len, &back, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "park"));
	len = reply_frame(buf, sizeof(buf));
	assert_int_equal(vsp_decode_reply(buf, (size_t)len, &back, why, sizeof(why)), 0);
	free(back.tasks);
}

static void test_reply_encode_limits(void **state)
{
	struct vsp_reply rep = {.ntasks = VSP_MAX_TASKS + 1, .tasks = NULL};
	uint8_t buf[64];
	(void)state;
	rep.msg[0] = '\0';
	assert_int_equal(vsp_encode_reply(&rep, buf, sizeof(buf)), -EINVAL);
	rep.ntasks = 1; /* tasks NULL */
	assert_int_equal(vsp_encode_reply(&rep, buf, sizeof(buf)), -EINVAL);
}

static void test_reply_max_tasks(void **state)
{
	struct vsp_task_stat *t = calloc(VSP_MAX_TASKS, sizeof(*t));
	struct vsp_reply rep = {.ntasks = VSP_MAX_TASKS}, back;
	char why[128];
	(void)state;

	assert_non_null(t);
	for (int i = 0; i < VSP_MAX_TASKS; i++)
		t[i] = sample_stat(i);
	rep.tasks = t;
	rep.msg[0] = '\0';
	size_t size = vsp_reply_size(&rep);
	uint8_t *buf = malloc(size);
	assert_non_null(buf);
	assert_int_equal(vsp_encode_reply(&rep, buf, size), (int)size);
	assert_int_equal(vsp_decode_reply(buf, size, &back, why, sizeof(why)), 0);
	assert_int_equal(back.ntasks, VSP_MAX_TASKS);
	assert_int_equal(back.tasks[VSP_MAX_TASKS - 1].pid, 1000 + VSP_MAX_TASKS - 1);
	free(back.tasks);
	free(buf);
	free(t);
}

static void test_check_resv(void **state)
{
	char why[128];
	struct vsp_resv r = {10 * MS, 5 * MS, 4 * MS, 0};
	(void)state;

	assert_int_equal(vsp_check_resv(&r, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "slice 5ms > deadline 4ms");
	r.deadline = 5 * MS; /* slice == deadline is fine */
	assert_int_equal(vsp_check_resv(&r, why, sizeof(why)), 0);
	r.deadline = 10 * MS;
	r.phase = 10 * MS - 1;
	assert_int_equal(vsp_check_resv(&r, why, sizeof(why)), 0);
	r.phase = 10 * MS;
	assert_int_equal(vsp_check_resv(&r, why, sizeof(why)), -EINVAL);
	r = (struct vsp_resv){0, 0, 0, 0};
	assert_int_equal(vsp_check_resv(&r, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "period"));
	r = (struct vsp_resv){VSP_PERIOD_MAX, 1, VSP_PERIOD_MAX, 0};
	assert_int_equal(vsp_check_resv(&r, why, sizeof(why)), 0);
	r.period++;
	assert_int_equal(vsp_check_resv(&r, why, sizeof(why)), -EINVAL);
	r = (struct vsp_resv){10 * MS, 1, 11 * MS, 0};
	assert_int_equal(vsp_check_resv(&r, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "deadline 11ms > period 10ms");
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(vsp_type_name(VSP_ADD), "add");
	assert_string_equal(vsp_type_name(VSP_EPOCH), "epoch");
	assert_string_equal(vsp_type_name(VSP_REPLY), "reply");
	assert_string_equal(vsp_type_name(77), "unknown");
	assert_string_equal(vsp_park_name(VSP_PARK_STOP), "stop");
	assert_string_equal(vsp_park_name(VSP_PARK_IDLE), "idle");
	assert_string_equal(vsp_park_name(9), "unknown");
}

/* Three windows of a 100 ms frame: 0+30ms, 50+20ms (slice 10ms), 70+25ms. */
static struct vsp_request windows_request(uint8_t type)
{
	struct vsp_request q = sample_request(type);

	q.nwin = 3;
	q.win[0] = (struct vsp_resv){100 * MS, 30 * MS, 30 * MS, 0};
	q.win[1] = (struct vsp_resv){100 * MS, 10 * MS, 20 * MS, 50 * MS};
	q.win[2] = (struct vsp_resv){100 * MS, 25 * MS, 25 * MS, 70 * MS};
	return q;
}

static void test_windows_round_trip(void **state)
{
	const uint8_t types[] = {VSP_ADD, VSP_SET};
	(void)state;

	for (int t = 0; t < 2; t++) {
		struct vsp_request q = windows_request(types[t]), back;
		uint8_t buf[VSP_MAX_FRAME];
		char why[128] = "";
		int len = encode(&q, buf);

		assert_int_equal(len, 4 + (t == 0 ? 12 : 8) + 3 * 32);
		memset(&back, 0xaa, sizeof(back));
		assert_int_equal(vsp_decode_request(buf, (size_t)len, &back, why, sizeof(why)), 0);
		assert_int_equal(back.nwin, 3);
		assert_int_equal(back.pid, q.pid);
		assert_memory_equal(back.win, q.win, 3 * sizeof(q.win[0]));
		assert_memory_equal(&back.resv, &q.win[0], sizeof(q.win[0]));
		/* every truncation and one byte more refused */
		for (int l = 0; l < len; l++)
			assert_int_equal(
			    vsp_decode_request(buf, (size_t)l, &back, why, sizeof(why)), -EBADMSG);
		buf[len] = 0;
		assert_int_equal(vsp_decode_request(buf, (size_t)len + 1, &back, why, sizeof(why)),
		                 -EBADMSG);
	}
	/* eight windows fit in a frame; nine cannot be encoded */
	struct vsp_request q = sample_request(VSP_ADD), back;
	uint8_t buf[VSP_MAX_FRAME];
	char why[128] = "";
	q.nwin = VSP_MAX_WINDOWS;
	for (int i = 0; i < VSP_MAX_WINDOWS; i++)
		q.win[i] = (struct vsp_resv){80 * MS, 5 * MS, 10 * MS, (uint64_t)i * 10 * MS};
	int len = encode(&q, buf);
	assert_int_equal(len, 4 + 12 + 8 * 32);
	assert_int_equal(vsp_decode_request(buf, (size_t)len, &back, why, sizeof(why)), 0);
	assert_int_equal(back.nwin, 8);
	q.nwin = VSP_MAX_WINDOWS + 1;
	assert_int_equal(vsp_encode_request(&q, buf, sizeof(buf)), -EINVAL);
	/* nwin 0 means the one reservation in resv: the version-1 meaning */
	q = sample_request(VSP_SET);
	q.nwin = 0;
	len = encode(&q, buf);
	assert_int_equal(len, 44);
	assert_int_equal(vsp_decode_request(buf, (size_t)len, &back, why, sizeof(why)), 0);
	assert_int_equal(back.nwin, 1);
	assert_memory_equal(&back.win[0], &q.resv, sizeof(q.resv));
}

static void test_windows_bad(void **state)
{
	struct vsp_request q;
	(void)state;

	q = windows_request(VSP_ADD);
	q.win[1].phase = 20 * MS; /* overlaps window 1 (0 + 30 ms) */
	refused(&q, -EINVAL, "window 2");
	q = windows_request(VSP_SET);
	q.win[2].period = 50 * MS;
	q.win[2].phase = 10 * MS;
	refused(&q, -EINVAL, "period");
	q = windows_request(VSP_ADD);
	q.win[2].phase = 80 * MS; /* 80 + 25 > 100 */
	refused(&q, -EINVAL, "window 3: phase + deadline");
	q = windows_request(VSP_ADD);
	q.win[1].slice = 21 * MS; /* > its deadline 20 ms */
	refused(&q, -EINVAL, "window 2: slice 21ms > deadline 20ms");
	q = windows_request(VSP_SET);
	q.win[0] = q.win[2]; /* out of order */
	q.win[2] = (struct vsp_resv){100 * MS, 30 * MS, 30 * MS, 0};
	refused(&q, -EINVAL, "overlaps");
	/* deadline 0 (= period) is a full-frame window: cannot share the frame */
	q = windows_request(VSP_ADD);
	q.win[0].deadline = 0;
	refused(&q, -EINVAL, "window");
}

static void test_reply_windows(void **state)
{
	struct vsp_task_stat t[2];
	struct vsp_reply rep = {.status = 0, .ntasks = 2, .tasks = t}, back;
	uint8_t buf[2048];
	char why[128];
	(void)state;

	memset(t, 0, sizeof(t));
	for (int i = 0; i < 2; i++) {
		t[i].pid = 10 + i;
		t[i].cpu = 1;
		t[i].park = VSP_PARK_STOP;
		t[i].nthreads = 1;
	}
	t[0].nwin = 3;
	t[0].win[0] = t[0].resv = (struct vsp_resv){100 * MS, 30 * MS, 30 * MS, 0};
	t[0].win[1] = (struct vsp_resv){100 * MS, 20 * MS, 20 * MS, 50 * MS};
	t[0].win[2] = (struct vsp_resv){100 * MS, 25 * MS, 25 * MS, 70 * MS};
	t[1].resv = (struct vsp_resv){10 * MS, 1 * MS, 10 * MS, 0}; /* nwin 0: one window */
	strcpy(rep.msg, "2 tasks");
	size_t want = 4 + 10 + 7 + 2 * VSP_STAT_WIRE + 2 * 32 + 1;
	assert_int_equal(vsp_reply_size(&rep), want);
	int len = vsp_encode_reply(&rep, buf, sizeof(buf));
	assert_int_equal(len, (int)want);
	assert_int_equal(vsp_decode_reply(buf, (size_t)len, &back, why, sizeof(why)), 0);
	assert_int_equal(back.ntasks, 2);
	assert_int_equal(back.tasks[0].nwin, 3);
	assert_memory_equal(back.tasks[0].win, t[0].win, 3 * sizeof(t[0].win[0]));
	assert_memory_equal(&back.tasks[0].resv, &t[0].resv, sizeof(t[0].resv));
	assert_int_equal(back.tasks[1].nwin, 1);
	assert_memory_equal(&back.tasks[1].win[0], &t[1].resv, sizeof(t[1].resv));
	assert_int_equal(back.tasks[1].pid, 11);
	free(back.tasks);
	for (int l = 0; l < len; l++) {
		back.tasks = (void *)0x1;
		assert_int_equal(vsp_decode_reply(buf, (size_t)l, &back, why, sizeof(why)),
		                 -EBADMSG);
		assert_ptr_equal(back.tasks, (void *)0x1);
	}
	/* a record's nwin out of range, or not matching the length */
	size_t at = 4 + 10 + 7 + VSP_STAT_WIRE - 1;
	assert_int_equal(buf[at], 3);
	buf[at] = 0;
	assert_int_equal(vsp_decode_reply(buf, (size_t)len, &back, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "windows"));
	buf[at] = 9;
	assert_int_equal(vsp_decode_reply(buf, (size_t)len, &back, why, sizeof(why)), -EBADMSG);
	buf[at] = 2; /* the next record then starts 32 bytes early: refused either way */
	assert_int_equal(vsp_decode_reply(buf, (size_t)len, &back, why, sizeof(why)), -EBADMSG);
}

/* INFO and SELFTEST are header-only requests; the reply's node info block round-trips. */
static void test_info_round_trip(void **state)
{
	struct vsp_request q = {.type = VSP_INFO}, back;
	struct vsp_reply rep = {.status = 0, .has_info = 1}, got;
	uint8_t buf[1024];
	char why[128];
	int len;
	(void)state;

	len = encode(&q, buf);
	assert_int_equal(len, 4);
	assert_int_equal(vsp_decode_request(buf, (size_t)len, &back, why, sizeof(why)), 0);
	assert_int_equal(back.type, VSP_INFO);
	q.type = VSP_SELFTEST;
	len = encode(&q, buf);
	assert_int_equal(vsp_decode_request(buf, (size_t)len, &back, why, sizeof(why)), 0);
	assert_int_equal(back.type, VSP_SELFTEST);

	strcpy(rep.msg, "node info");
	rep.info = (struct vsp_node_info){.ncpus = 2,
	                                  .cap_ppm = 850000,
	                                  .ntasks = 3,
	                                  .stop_method = VSP_STOP_FREEZER_V1,
	                                  .perf = 1,
	                                  .selftest = VSP_SELFTEST_DONE,
	                                  .nprobe = 2,
	                                  .min_period_ns = 1 * MS,
	                                  .selftest_at = 1234567890123456789ULL};
	rep.info.probe[0] = (struct vsp_probe){500000, 600, 40};
	rep.info.probe[1] = (struct vsp_probe){1 * MS, 300, 0};
	len = vsp_encode_reply(&rep, buf, sizeof(buf));
	assert_int_equal(len, 4 + 10 + 9 + 1 + VSP_INFO_WIRE);
	assert_int_equal(vsp_decode_reply(buf, (size_t)len, &got, why, sizeof(why)), 0);
	assert_int_equal(got.has_info, 1);
	assert_memory_equal(&got.info, &rep.info, sizeof(rep.info));
	/* a bad field, a wrong count, a short block: refused */
	buf[4 + 10 + 9 + 1 + 12] = 7; /* stop_method */
	assert_int_equal(vsp_decode_reply(buf, (size_t)len, &got, why, sizeof(why)), -EINVAL);
	buf[4 + 10 + 9 + 1 + 12] = 1;
	buf[4 + 10 + 9] = 2; /* ninfo */
	assert_int_equal(vsp_decode_reply(buf, (size_t)len, &got, why, sizeof(why)), -EBADMSG);
	buf[4 + 10 + 9] = 1;
	assert_int_equal(vsp_decode_reply(buf, (size_t)len - 1, &got, why, sizeof(why)), -EBADMSG);
}

/* anchor wakeup takes exactly one window */
static void test_anchor_windows(void **state)
{
	struct vsp_request q = sample_request(VSP_SET), back;
	uint8_t buf[VSP_MAX_FRAME];
	char why[128];
	int len;
	(void)state;

	q.anchor = VSP_ANCHOR_WAKEUP;
	len = encode(&q, buf);
	assert_int_equal(vsp_decode_request(buf, (size_t)len, &back, why, sizeof(why)), 0);
	assert_int_equal(back.anchor, VSP_ANCHOR_WAKEUP);
	q.nwin = 2;
	q.win[0] = (struct vsp_resv){10 * MS, 1 * MS, 2 * MS, 0};
	q.win[1] = (struct vsp_resv){10 * MS, 1 * MS, 2 * MS, 5 * MS};
	len = encode(&q, buf);
	assert_int_equal(vsp_decode_request(buf, (size_t)len, &back, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "one window"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_info_round_trip),
	    cmocka_unit_test(test_anchor_windows),
	    cmocka_unit_test(test_request_round_trip),
	    cmocka_unit_test(test_windows_round_trip),
	    cmocka_unit_test(test_windows_bad),
	    cmocka_unit_test(test_reply_windows),
	    cmocka_unit_test(test_request_park_default),
	    cmocka_unit_test(test_request_bytes),
	    cmocka_unit_test(test_request_every_truncation_refused),
	    cmocka_unit_test(test_request_bad_header),
	    cmocka_unit_test(test_request_oversize),
	    cmocka_unit_test(test_request_encode_small_buffer),
	    cmocka_unit_test(test_request_bad_ranges),
	    cmocka_unit_test(test_reply_round_trip_list),
	    cmocka_unit_test(test_reply_error_no_tasks),
	    cmocka_unit_test(test_reply_every_truncation_refused),
	    cmocka_unit_test(test_reply_bad_fields),
	    cmocka_unit_test(test_reply_encode_limits),
	    cmocka_unit_test(test_reply_max_tasks),
	    cmocka_unit_test(test_check_resv),
	    cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
