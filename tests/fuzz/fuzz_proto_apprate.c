/*
 * libapprate -> agent frames (aproto_decode). An accepted frame has a known type and
 * in-range fields, and encodes back to exactly the same bytes (the format has one encoding
 * per message).
 */
#include "fuzz.h"

#include <string.h>

#include "proto_apprate.h"

static int encode(const struct aproto_msg *m, uint8_t *buf, size_t cap)
{
	switch (m->type) {
	case APROTO_REGISTER:
		return aproto_encode_register(&m->u.reg, buf, cap);
	case APROTO_REPORT:
		return aproto_encode_report(&m->u.rep, buf, cap);
	case APROTO_BYTES:
		return aproto_encode_bytes(&m->u.bytes, buf, cap);
	default:
		return -1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct aproto_msg m;
	uint8_t out[APROTO_MAX_FRAME];
	char why[160];
	int n;

	why[0] = '\0';
	if (aproto_decode(data, size, &m, why, sizeof(why)) != 0) {
		FUZZ_CHECK(why[0] != '\0');
		return 0;
	}
	fuzz_accepted();
	FUZZ_CHECK(m.type >= APROTO_REGISTER && m.type <= APROTO_BYTES);
	FUZZ_CHECK(strcmp(aproto_type_name(m.type), "?") != 0);
	if (m.type == APROTO_REGISTER) {
		FUZZ_CHECK(m.u.reg.reason <= APROTO_REG_REASON_MAX);
		FUZZ_CHECK(aproto_check_job(m.u.reg.job) == 0);
	}
	n = encode(&m, out, sizeof(out));
	FUZZ_CHECK(n == (int)size);
	FUZZ_CHECK(memcmp(out, data, size) == 0);
	return 0;
}
