/*
 * Agent <-> controller frames (pctl_decode, pctl_peek_constraint). An accepted frame has a
 * known type, known enum values and names the protocol allows, and encodes back to exactly
 * the same bytes; what the decoder allocated is released (LeakSanitizer checks).
 */
#include "fuzz.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto_ctl.h"

static void check_enums(const struct pctl_msg *m)
{
	FUZZ_CHECK(pctl_from_agent(m->type) || pctl_from_controller(m->type));
	FUZZ_CHECK(strcmp(pctl_type_name(m->type), "unknown") != 0);
	switch (m->type) {
	case PCTL_NODE_HELLO:
		FUZZ_CHECK(text_name_ok(m->u.hello.node));
		break;
	case PCTL_JOB_PROC:
		FUZZ_CHECK(m->u.proc.event == PCTL_PROC_JOINED ||
		           m->u.proc.event == PCTL_PROC_LEFT);
		FUZZ_CHECK(text_name_ok(m->u.proc.name));
		break;
	case PCTL_BW:
		FUZZ_CHECK(m->u.bw.n <= PCTL_MAX_ENTRIES);
		FUZZ_CHECK(m->u.bw.node_src <= PCTL_SRC_MAX);
		for (unsigned i = 0; i < m->u.bw.n; i++)
			FUZZ_CHECK(m->u.bw.e[i].mem_src <= PCTL_SRC_MAX &&
			           m->u.bw.e[i].net_src <= PCTL_SRC_MAX);
		break;
	case PCTL_TASK_STATS:
		FUZZ_CHECK(m->u.stats.n <= PCTL_MAX_ENTRIES);
		break;
	case PCTL_CONSTRAINT:
		FUZZ_CHECK(m->u.cons.nwin >= 1 && m->u.cons.nwin <= PCTL_MAX_WINDOWS);
		FUZZ_CHECK(text_name_ok(m->u.cons.job));
		break;
	case PCTL_CONSTRAINT_ACK:
		FUZZ_CHECK(text_name_ok(m->u.cack.job));
		break;
	case PCTL_EPOCH:
		FUZZ_CHECK(m->u.epoch.realtime_ns > 0);
		break;
	case PCTL_NODE_INFO:
		FUZZ_CHECK(m->u.info.selftest <= VSP_SELFTEST_FAILED);
		FUZZ_CHECK(m->u.info.min_period_ns <= PCTL_MIN_PERIOD_MAX);
		FUZZ_CHECK(m->u.info.min_period_ns == 0 || m->u.info.selftest == VSP_SELFTEST_DONE);
		FUZZ_CHECK(m->u.info.cap_ppm <= PCTL_CAP_PPM_MAX);
		break;
	}
}

/* A CONSTRAINT refused for its reservations still names its job for the refusal. */
static void check_peek(const uint8_t *data, size_t size, int rc)
{
	char job[PCTL_NAME_MAX + 1];
	uint64_t gen;
	int prc = pctl_peek_constraint(data, size, &gen, job);

	if (prc == 0)
		FUZZ_CHECK(text_name_ok(job));
	if (rc == -EINVAL && size >= PCTL_HDR && data[2] == PCTL_CONSTRAINT)
		FUZZ_CHECK(prc == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pctl_msg m;
	char why[200];
	uint8_t *out;
	int rc, n;

	why[0] = '\0';
	rc = pctl_decode(data, size, &m, why, sizeof(why));
	check_peek(data, size, rc);
	if (rc != 0) {
		FUZZ_CHECK(why[0] != '\0' && m.type == 0);
		return 0;
	}
	fuzz_accepted();
	check_enums(&m);
	n = pctl_size(&m);
	if (m.type == PCTL_NODE_INFO && size == PCTL_HDR + 9) {
		/* an older agent's NODE_INFO, without cap_ppm: re-encoded with cap_ppm 0 */
		static const uint8_t zero[4];
		FUZZ_CHECK(m.u.info.cap_ppm == 0 && n == (int)size + 4);
		out = malloc((size_t)n);
		FUZZ_CHECK(out != NULL);
		FUZZ_CHECK(pctl_encode(&m, out, (size_t)n) == n);
		FUZZ_CHECK(memcmp(out, data, size) == 0 && memcmp(out + size, zero, 4) == 0);
		free(out);
		pctl_msg_release(&m);
		return 0;
	}
	FUZZ_CHECK(n == (int)size);
	out = malloc(size);
	FUZZ_CHECK(out != NULL);
	FUZZ_CHECK(pctl_encode(&m, out, size) == (int)size);
	FUZZ_CHECK(memcmp(out, data, size) == 0);
	free(out);
	pctl_msg_release(&m);
	return 0;
}
