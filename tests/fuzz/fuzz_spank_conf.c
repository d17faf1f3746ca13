/*
 * The Slurm plugin's settings (slurm/conf.c): the plugstack.conf arguments (the input split
 * at blanks) and srun's --vsched-rate, --vsched-job and --vsched-progress values (the whole
 * input), which users give and slurmstepd parses as root. Accepted values are in range.
 */
#include "fuzz.h"

#include <stdio.h>
#include <string.h>

#include "vspank.h"

#define MAX_ARGS 16

static void site(const char *text)
{
	char copy[4096], *av[MAX_ARGS], *save = NULL;
	struct vspank_site s;
	char why[300];
	int ac = 0;

	snprintf(copy, sizeof(copy), "%s", text);
	for (char *t = strtok_r(copy, " \t\n", &save); t != NULL && ac < MAX_ARGS;
	     t = strtok_r(NULL, " \t\n", &save))
		av[ac++] = t;
	why[0] = '\0';
	if (vspank_site_parse(&s, "/usr/lib/vsched/mpi", ac, av, why, sizeof(why)) != 0) {
		FUZZ_CHECK(why[0] != '\0');
		return;
	}
	fuzz_accepted();
	FUZZ_CHECK(strncmp(s.agent, "ipc://", 6) == 0 || strncmp(s.agent, "tcp://", 6) == 0);
	FUZZ_CHECK(strncmp(s.controller, "ipc://", 6) == 0 ||
	           strncmp(s.controller, "tcp://", 6) == 0);
	FUZZ_CHECK(s.mpi_dir[0] != '\0');
}

static void options(const char *arg)
{
	struct vspank_user u;
	char why[300];

	memset(&u, 0, sizeof(u));
	if (vspank_opt_rate(&u, arg, why, sizeof(why)) == 0)
		FUZZ_CHECK(u.rate > 0 && u.rate <= 100);
	if (vspank_opt_job(&u, arg, why, sizeof(why)) == 0)
		FUZZ_CHECK(aproto_check_job(u.job) == 0);
	if (vspank_opt_progress(&u, arg, why, sizeof(why)) == 0)
		FUZZ_CHECK(u.progress_set && u.progress.kind <= MPIPROG_PCONTROL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = fuzz_string(data, size);

	site(text);
	options(text);
	return 0;
}
