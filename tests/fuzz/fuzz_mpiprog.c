/*
 * libapprate-mpi's progress mode (VSCHED_PROGRESS, `vschedctl job run --progress`, the
 * Slurm plugin's progress=): mpiprog_parse. An accepted string names a wrapped function
 * (for mpi:NAME) and an N in range, and its canonical form parses to the same mode.
 */
#include "fuzz.h"

#include "mpi_progress.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mpiprog p, q;
	char why[200], b[MPIPROG_MAX + 1];

	why[0] = '\0';
	if (mpiprog_parse(fuzz_string(data, size), &p, why, sizeof(why)) != 0) {
		FUZZ_CHECK(why[0] != '\0');
		return 0;
	}
	fuzz_accepted();
	FUZZ_CHECK(p.kind >= MPIPROG_AUTO && p.kind <= MPIPROG_PCONTROL);
	if (p.kind == MPIPROG_CALL)
		FUZZ_CHECK(p.fn >= 0 && p.fn < MPIFN_COUNT && p.every >= 1 &&
		           p.every <= MPIPROG_EVERY_MAX);
	mpiprog_format(&p, b, sizeof(b));
	FUZZ_CHECK(mpiprog_parse(b, &q, why, sizeof(why)) == 0);
	FUZZ_CHECK(q.kind == p.kind);
	if (p.kind == MPIPROG_CALL)
		FUZZ_CHECK(q.fn == p.fn && q.every == p.every);
	return 0;
}
