/*
 * The admin protocol (padm_decode_request, padm_decode_reply): every input goes through
 * both decoders. An accepted frame has a known type and in-range enums, and encodes back to
 * exactly the same bytes; what the reply decoder allocated is released (LeakSanitizer).
 */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "proto_admin.h"
#include "proto_ctl.h"

static void request(const uint8_t *data, size_t size)
{
	struct padm_request q;
	uint8_t out[PADM_MAX_REQUEST];
	char why[200];

	why[0] = '\0';
	if (padm_decode_request(data, size, &q, why, sizeof(why)) != 0) {
		FUZZ_CHECK(why[0] != '\0');
		return;
	}
	fuzz_accepted();
	FUZZ_CHECK(q.type >= PADM_JOB_LIST && q.type <= PADM_JOB_SET);
	if (q.type >= PADM_JOB_SHOW)
		FUZZ_CHECK(text_name_ok(q.job));
	if (q.type == PADM_JOB_SET)
		FUZZ_CHECK((q.mask & ~PADM_SET_ALL) == 0 && q.algo <= PADM_ALGO_MAX &&
		           q.agg <= PADM_AGG_MAX);
	FUZZ_CHECK(padm_encode_request(&q, out, sizeof(out)) == (int)size);
	FUZZ_CHECK(memcmp(out, data, size) == 0);
}

static void check_reply_enums(const struct padm_reply *r)
{
	for (unsigned i = 0; i < r->njobs; i++) {
		const struct padm_job *j = &r->jobs[i];

		FUZZ_CHECK(j->state <= PADM_ST_MAX && j->algo <= PADM_ALGO_MAX);
		FUZZ_CHECK(j->agg <= PADM_AGG_MAX && j->klass <= PADM_CLASS_MAX);
		FUZZ_CHECK((j->flags & ~PADM_JF_ALL) == 0 && text_name_ok(j->name));
	}
	for (unsigned i = 0; i < r->nnodes; i++) {
		const struct padm_node *n = &r->nodes[i];

		FUZZ_CHECK(n->up <= 1 && text_name_ok(n->name));
		FUZZ_CHECK(n->mem_src <= PCTL_SRC_MAX && n->net_src <= PCTL_SRC_MAX);
	}
	for (unsigned i = 0; i < r->nranks; i++)
		FUZZ_CHECK(r->ranks[i].up <= 1);
	FUZZ_CHECK((r->plan.flags & ~PADM_PF_ALL) == 0 && r->plan.nwin <= PADM_MAX_WINDOWS);
	for (unsigned i = 0; i < r->nslots; i++)
		FUZZ_CHECK(r->slots[i].slot < r->plan.slots);
}

static void reply(const uint8_t *data, size_t size)
{
	struct padm_reply r;
	uint8_t *out;
	char why[200];

	why[0] = '\0';
	memset(&r, 0, sizeof(r));
	if (padm_decode_reply(data, size, &r, why, sizeof(why)) != 0) {
		FUZZ_CHECK(why[0] != '\0');
		FUZZ_CHECK(r.jobs == NULL && r.nodes == NULL && r.ranks == NULL && r.slots == NULL);
		return;
	}
	fuzz_accepted();
	FUZZ_CHECK(r.status <= 0);
	check_reply_enums(&r);
	FUZZ_CHECK(padm_reply_size(&r) == (int)size);
	out = malloc(size);
	FUZZ_CHECK(out != NULL);
	FUZZ_CHECK(padm_encode_reply(&r, out, size) == (int)size);
	FUZZ_CHECK(memcmp(out, data, size) == 0);
	free(out);
	padm_reply_release(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	request(data, size);
	reply(data, size);
	return 0;
}
