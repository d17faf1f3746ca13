/*
 * Unit tests of common/proto_apprate.c: round trips, sizes within the 32-byte budget, and
 * refusal of truncated, oversize, wrong magic/version/type/flags and out-of-range frames.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "proto_apprate.h"

static const struct aproto_report rep0 = {.flags = 0,
                                          .handle = 0xdeadbeef,
                                          .rank = 12345,
                                          .seq = 77,
                                          .units = 0x0102030405060708ULL,
                                          .interval_ns = 100000000};

static int decode(const uint8_t *buf, size_t len, struct aproto_msg *m)
{
	char why[128] = "";
	int rc = aproto_decode(buf, len, m, why, sizeof(why));
	if (rc)
		assert_true(why[0] != '\0'); /* every refusal says why */
	return rc;
}

static void test_report_roundtrip(void **state)
{
	(void)state;
	uint8_t buf[64];
	int len = aproto_encode_report(&rep0, buf, sizeof(buf));
	assert_int_equal(len, APROTO_REPORT_SIZE);
	assert_true(len <= 32); /* DESIGN §8: feedback <= 32 bytes per report */
	/* Little-endian, field by field. */
	assert_int_equal(buf[0], 'A');
	assert_int_equal(buf[1], APROTO_VERSION);
	assert_int_equal(buf[2], APROTO_REPORT);
	assert_int_equal(buf[4], 0xef);
	assert_int_equal(buf[16], 0x08);
	struct aproto_msg m;
	assert_int_equal(decode(buf, (size_t)len, &m), 0);
	assert_int_equal(m.type, APROTO_REPORT);
	assert_int_equal(m.u.rep.flags, rep0.flags);
	assert_int_equal(m.u.rep.handle, rep0.handle);
	assert_int_equal(m.u.rep.rank, rep0.rank);
	assert_int_equal(m.u.rep.seq, rep0.seq);
	assert_int_equal(m.u.rep.units, rep0.units);
	assert_int_equal(m.u.rep.interval_ns, rep0.interval_ns);

	struct aproto_report fin = rep0;
	fin.flags = APROTO_F_FINAL;
	assert_int_equal(aproto_encode_report(&fin, buf, sizeof(buf)), 32);
	assert_int_equal(decode(buf, 32, &m), 0);
	assert_int_equal(m.u.rep.flags, APROTO_F_FINAL);
}

static void test_bytes_roundtrip(void **state)
{
	(void)state;
	struct aproto_bytes b = {
	    .handle = 9, .rank = 0, .seq = 3, .mem_bytes = 1ULL << 40, .net_bytes = 12345678};
	uint8_t buf[32];
	assert_int_equal(aproto_encode_bytes(&b, buf, sizeof(buf)), APROTO_BYTES_SIZE);
	assert_true(APROTO_BYTES_SIZE <= 32);
	struct aproto_msg m;
	assert_int_equal(decode(buf, sizeof(buf), &m), 0);
	assert_int_equal(m.type, APROTO_BYTES);
	assert_int_equal(m.u.bytes.handle, b.handle);
	assert_int_equal(m.u.bytes.rank, b.rank);
	assert_int_equal(m.u.bytes.seq, b.seq);
	assert_int_equal(m.u.bytes.mem_bytes, b.mem_bytes);
	assert_int_equal(m.u.bytes.net_bytes, b.net_bytes);
}

static void test_register_roundtrip(void **state)
{
	(void)state;
	struct aproto_register r = {.handle = 42,
	                            .rank = 3,
	                            .pid = 4321,
	                            .interval_ns = 100000000,
	                            .reason = APROTO_REG_FORK};
	strcpy(r.job, "lammps-run.7");
	uint8_t buf[APROTO_MAX_FRAME];
	int len = aproto_encode_register(&r, buf, sizeof(buf));
	assert_int_equal(len, APROTO_REGISTER_BASE + (int)strlen("lammps-run.7"));
	struct aproto_msg m;
	assert_int_equal(decode(buf, (size_t)len, &m), 0);
	assert_int_equal(m.type, APROTO_REGISTER);
	assert_int_equal(m.u.reg.handle, 42);
	assert_int_equal(m.u.reg.rank, 3);
	assert_int_equal(m.u.reg.pid, 4321);
	assert_int_equal(m.u.reg.interval_ns, 100000000);
	assert_int_equal(m.u.reg.reason, APROTO_REG_FORK);
	assert_string_equal(m.u.reg.job, "lammps-run.7");

	/* Longest name fits APROTO_MAX_FRAME exactly. */
	memset(r.job, 'x', APROTO_JOB_MAX);
	r.job[APROTO_JOB_MAX] = '\0';
	len = aproto_encode_register(&r, buf, sizeof(buf));
	assert_int_equal(len, APROTO_MAX_FRAME);
	assert_int_equal(decode(buf, (size_t)len, &m), 0);
	assert_int_equal(strlen(m.u.reg.job), APROTO_JOB_MAX);
}

static void test_truncated_and_oversize(void **state)
{
	(void)state;
	uint8_t buf[APROTO_MAX_FRAME + 8];
	struct aproto_msg m;
	int len = aproto_encode_report(&rep0, buf, sizeof(buf));
	for (int n = 0; n < len; n++)
		assert_int_equal(decode(buf, (size_t)n, &m), -EBADMSG);
	assert_int_equal(decode(buf, (size_t)len + 1, &m), -EBADMSG);
	assert_int_equal(decode(buf, sizeof(buf), &m), -EBADMSG); /* > APROTO_MAX_FRAME */
	assert_int_equal(decode(NULL, 32, &m), -EBADMSG);

	struct aproto_bytes b = {.handle = 1};
	len = aproto_encode_bytes(&b, buf, sizeof(buf));
	assert_int_equal(decode(buf, (size_t)len - 1, &m), -EBADMSG);
	assert_int_equal(decode(buf, (size_t)len + 1, &m), -EBADMSG);

	struct aproto_register r = {.handle = 1, .pid = 1, .interval_ns = 1};
	strcpy(r.job, "job");
	len = aproto_encode_register(&r, buf, sizeof(buf));
	for (int n = 0; n < len; n++)
		assert_int_equal(decode(buf, (size_t)n, &m), -EBADMSG);
	assert_int_equal(decode(buf, (size_t)len + 1, &m), -EBADMSG);
	buf[25] = 4; /* name length says more than the frame holds */
	assert_int_equal(decode(buf, (size_t)len, &m), -EBADMSG);
}

static void test_bad_header(void **state)
{
	(void)state;
	uint8_t buf[32];
	struct aproto_msg m;
	aproto_encode_report(&rep0, buf, sizeof(buf));
	buf[0] = 'V';
	assert_int_equal(decode(buf, 32, &m), -EBADMSG);
	aproto_encode_report(&rep0, buf, sizeof(buf));
	buf[1] = APROTO_VERSION + 1;
	assert_int_equal(decode(buf, 32, &m), -EPROTO);
	aproto_encode_report(&rep0, buf, sizeof(buf));
	buf[2] = 0;
	assert_int_equal(decode(buf, 32, &m), -EBADMSG);
	buf[2] = 99;
	assert_int_equal(decode(buf, 32, &m), -EBADMSG);
	aproto_encode_report(&rep0, buf, sizeof(buf));
	buf[3] = 0x80; /* unknown flag */
	assert_int_equal(decode(buf, 32, &m), -EBADMSG);
	/* A BYTES frame is as long as a REPORT: the type decides, flags must be 0. */
	struct aproto_bytes b = {.handle = 1};
	aproto_encode_bytes(&b, buf, sizeof(buf));
	buf[3] = APROTO_F_FINAL;
	assert_int_equal(decode(buf, 32, &m), -EBADMSG);
}

static void test_bad_fields(void **state)
{
	(void)state;
	uint8_t buf[APROTO_MAX_FRAME];
	struct aproto_msg m;
	struct aproto_report rep = rep0;

	/* Encoders refuse what decoders refuse. */
	rep.handle = 0;
	assert_int_equal(aproto_encode_report(&rep, buf, sizeof(buf)), -EINVAL);
	rep = rep0;
	rep.interval_ns = 0;
	assert_int_equal(aproto_encode_report(&rep, buf, sizeof(buf)), -EINVAL);
	rep = rep0;
	rep.rank = 0x80000000u;
	assert_int_equal(aproto_encode_report(&rep, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(aproto_encode_report(&rep0, buf, 31), -ENOBUFS);

	/* Decoders refuse hand-made bad frames. */
	aproto_encode_report(&rep0, buf, sizeof(buf));
	memset(buf + 4, 0, 4); /* handle 0 */
	assert_int_equal(decode(buf, 32, &m), -EINVAL);
	aproto_encode_report(&rep0, buf, sizeof(buf));
	memset(buf + 24, 0, 8); /* interval 0 */
	assert_int_equal(decode(buf, 32, &m), -EINVAL);
	aproto_encode_report(&rep0, buf, sizeof(buf));
	buf[11] = 0x80; /* rank > INT32_MAX */
	assert_int_equal(decode(buf, 32, &m), -EINVAL);

	struct aproto_register r = {.handle = 5, .rank = 1, .pid = 99, .interval_ns = 1000};
	strcpy(r.job, "ok");
	int len = aproto_encode_register(&r, buf, sizeof(buf));
	assert_true(len > 0);
	buf[26] = ' '; /* whitespace in the job name */
	assert_int_equal(decode(buf, (size_t)len, &m), -EINVAL);
	buf[26] = 0x01;
	assert_int_equal(decode(buf, (size_t)len, &m), -EINVAL);
	len = aproto_encode_register(&r, buf, sizeof(buf));
	buf[24] = APROTO_REG_REASON_MAX + 1;
	assert_int_equal(decode(buf, (size_t)len, &m), -EINVAL);
	len = aproto_encode_register(&r, buf, sizeof(buf));
	memset(buf + 12, 0, 4); /* pid 0 */
	assert_int_equal(decode(buf, (size_t)len, &m), -EINVAL);
	/* A zero-length name: 26 bytes, refused as too short. */
	len = aproto_encode_register(&r, buf, sizeof(buf));
	buf[25] = 0;
	assert_int_equal(decode(buf, APROTO_REGISTER_BASE, &m), -EBADMSG);

	strcpy(r.job, "");
	assert_int_equal(aproto_encode_register(&r, buf, sizeof(buf)), -EINVAL);
	strcpy(r.job, "has space");
	assert_int_equal(aproto_encode_register(&r, buf, sizeof(buf)), -EINVAL);
	strcpy(r.job, "fine");
	assert_int_equal(aproto_encode_register(&r, buf, APROTO_REGISTER_BASE + 3), -ENOBUFS);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(aproto_type_name(APROTO_REPORT), "REPORT");
	assert_string_equal(aproto_type_name(200), "?");
	assert_string_equal(aproto_reason_name(APROTO_REG_FORK), "fork");
	assert_string_equal(aproto_reason_name(200), "?");
	assert_int_equal(aproto_check_job("a"), 0);
	assert_int_equal(aproto_check_job(NULL), -EINVAL);
	char longname[APROTO_JOB_MAX + 2];
	memset(longname, 'j', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(aproto_check_job(longname), -EINVAL);
	longname[APROTO_JOB_MAX] = '\0';
	assert_int_equal(aproto_check_job(longname), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_report_roundtrip),
	    cmocka_unit_test(test_bytes_roundtrip),
	    cmocka_unit_test(test_register_roundtrip),
	    cmocka_unit_test(test_truncated_and_oversize),
	    cmocka_unit_test(test_bad_header),
	    cmocka_unit_test(test_bad_fields),
	    cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
