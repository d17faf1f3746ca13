/*
 * The vsched local API (vsp_decode_request, vsp_decode_reply): every input goes through
 * both decoders. An accepted frame has a known type, in-range fields and windows that pass
 * vsp_check_windows, and encodes back to exactly the same bytes.
 */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "proto_vsched.h"

static void request(const uint8_t *data, size_t size)
{
	struct vsp_request q;
	uint8_t out[VSP_MAX_FRAME];
	char why[200];

	why[0] = '\0';
	if (vsp_decode_request(data, size, &q, why, sizeof(why)) != 0) {
		FUZZ_CHECK(why[0] != '\0');
		return;
	}
	fuzz_accepted();
	FUZZ_CHECK(q.type >= VSP_ADD && q.type <= VSP_SELFTEST);
	if (q.type == VSP_ADD || q.type == VSP_SET) {
		FUZZ_CHECK(q.nwin >= 1 && q.nwin <= VSP_MAX_WINDOWS && q.pid > 0);
		FUZZ_CHECK(q.type == VSP_SET || q.park <= VSP_PARK_DEFAULT);
	}
	FUZZ_CHECK(vsp_encode_request(&q, out, sizeof(out)) == (int)size);
	FUZZ_CHECK(memcmp(out, data, size) == 0);
}

static void reply(const uint8_t *data, size_t size)
{
	struct vsp_reply r;
	uint8_t *out;
	char why[200];

	why[0] = '\0';
	if (vsp_decode_reply(data, size, &r, why, sizeof(why)) != 0) {
		FUZZ_CHECK(why[0] != '\0');
		return;
	}
	fuzz_accepted();
	FUZZ_CHECK(r.ntasks <= VSP_MAX_TASKS && r.status <= 0);
	for (uint32_t i = 0; i < r.ntasks; i++) {
		const struct vsp_task_stat *t = &r.tasks[i];

		FUZZ_CHECK(t->park == VSP_PARK_STOP || t->park == VSP_PARK_IDLE);
		FUZZ_CHECK(t->nwin >= 1 && t->nwin <= VSP_MAX_WINDOWS && t->pid > 0);
	}
	FUZZ_CHECK(vsp_reply_size(&r) == size);
	out = malloc(size);
	FUZZ_CHECK(out != NULL);
	FUZZ_CHECK(vsp_encode_reply(&r, out, size) == (int)size);
	FUZZ_CHECK(memcmp(out, data, size) == 0);
	free(out);
	free(r.tasks);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	request(data, size);
	reply(data, size);
	return 0;
}
