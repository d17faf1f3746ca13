/*
 * The controller's state file (controller/state.c: state_load). An accepted file holds
 * valid job names, targets in [0, 100], known algorithms and aggregations; saved again
 * (state_save) it loads back to the same jobs and generation.
 */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller.h"

static char dir[64], path[96];

static void remove_dir(void)
{
	unlink(path);
	rmdir(dir);
}

/* A file in a private directory for state_save (on /dev/shm when it is writable). */
static const char *save_path(void)
{
	if (dir[0] != '\0')
		return path;
	snprintf(dir, sizeof(dir), "%s/vsched-fuzz-XXXXXX",
	         access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	FUZZ_CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/state", dir);
	atexit(remove_dir);
	return path;
}

static void same_job(const struct state_job *a, const struct state_job *b)
{
	FUZZ_CHECK(strcmp(a->name, b->name) == 0 && a->target == b->target);
	FUZZ_CHECK(a->set.algo == b->set.algo && a->set.agg == b->set.agg);
	FUZZ_CHECK(a->set.eps_pct == b->set.eps_pct && a->set.r_max == b->set.r_max);
	FUZZ_CHECK(a->set.r_max_given == b->set.r_max_given &&
	           a->set.u_max_pct == b->set.u_max_pct);
	FUZZ_CHECK(a->set.delta_period == b->set.delta_period &&
	           a->set.min_period == b->set.min_period);
	FUZZ_CHECK(a->set.min_slice == b->set.min_slice &&
	           a->set.initial_period == b->set.initial_period);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct state_job *jobs, *again;
	uint64_t gen, gen2;
	char why[512];
	int n, n2;

	why[0] = '\0';
	if (state_load(fuzz_file(data, size), &gen, &jobs, &n, why, sizeof(why)) != 0) {
		FUZZ_CHECK(why[0] != '\0');
		return 0;
	}
	fuzz_accepted();
	for (int i = 0; i < n; i++) {
		FUZZ_CHECK(text_name_ok(jobs[i].name));
		FUZZ_CHECK(jobs[i].target >= 0 && jobs[i].target <= 100);
		FUZZ_CHECK(jobs[i].set.algo <= PADM_ALGO_MAX && jobs[i].set.agg <= PADM_AGG_MAX);
	}
	FUZZ_CHECK(state_save(save_path(), gen, jobs, n, why, sizeof(why)) == 0);
	FUZZ_CHECK(state_load(save_path(), &gen2, &again, &n2, why, sizeof(why)) == 0);
	FUZZ_CHECK(gen2 == gen && n2 == n);
	for (int i = 0; i < n; i++)
		same_job(&jobs[i], &again[i]);
	free(again);
	free(jobs);
	return 0;
}
