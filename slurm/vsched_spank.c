/*
 * vsched's SPANK plugin: `srun --vsched-rate=40 [--vsched-job=NAME]
 * [--vsched-progress=MODE] PROGRAM` runs every task of the step as a rank of a vsched job
 * (docs/slurm.md). Nothing happens for a step that gives none of these options.
 *
 *   srun (local)          options checked; user_rate=no refuses --vsched-rate
 *   slurmstepd, per task  task_post_fork (root, before the task runs): REGISTER the task's
 *                         pid as rank = global task id with the node's agent; task 0 then
 *                         sets the job's target with the controller (retrying until the
 *                         controller knows the job, VSPANK_RATE_WAIT_MS at most)
 *                         task_init (in the task, as the user, before exec): VSCHED_JOB,
 *                         VSCHED_RANK, VSCHED_AGENT, and for a program that links an MPI
 *                         library libapprate-mpi built for, LD_PRELOAD and VSCHED_PROGRESS
 *
 * Failure never stops a task: a task that cannot be registered, or a target the controller
 * refuses, gets one line in the job's stderr and runs without vsched. Only the user's own
 * mistakes (a bad option value, a rate where the site forbids it) and a bad plugstack.conf
 * line fail srun, with one line. The job name defaults to <jobid>.<stepid>. The agent
 * forgets a task by itself when its pid ends; the plugin keeps no state between hooks
 * but the options, and every ZeroMQ context it makes is closed before the hook returns.
 */
#include <slurm/spank.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_find.h"
#include "vspank.h"

#ifndef VSCHED_MPI_INSTALL_DIR
#define VSCHED_MPI_INSTALL_DIR "/usr/lib/vsched/mpi"
#endif

SPANK_PLUGIN(vsched, 1);

static struct vspank_site site;
static struct vspank_user user;

enum { OPT_RATE = 1, OPT_JOB, OPT_PROGRESS };

static int on_option(int val, const char *arg, int remote)
{
	char why[300];
	int rc;

	(void)remote;
	if (val == OPT_RATE)
		rc = vspank_opt_rate(&user, arg, why, sizeof(why));
	else if (val == OPT_JOB)
		rc = vspank_opt_job(&user, arg, why, sizeof(why));
	else
		rc = vspank_opt_progress(&user, arg, why, sizeof(why));
	if (rc != 0)
		slurm_error("vsched: %s", why);
	return rc;
}

static struct spank_option options[] = {
    {"vsched-rate", "PERCENT", "Run the step at PERCENT % of its full speed (vsched)", 1, OPT_RATE,
     on_option},
    {"vsched-job", "NAME", "vsched job name of the step (default JOBID.STEPID)", 1, OPT_JOB,
     on_option},
    {"vsched-progress", "MODE",
     "Progress of MPI tasks: auto, mpi:NAME[:N] or pcontrol (default: the site's, auto)", 1,
     OPT_PROGRESS, on_option},
};

static bool active(void)
{
	return user.rate > 0 || user.job[0] != '\0';
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	char why[300];

	for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++)
		if (spank_option_register(sp, &options[i]) != ESPANK_SUCCESS) {
			slurm_error("vsched: cannot register option --%s", options[i].name);
			return -1;
		}
	if (vspank_site_parse(&site, VSCHED_MPI_INSTALL_DIR, ac, av, why, sizeof(why)) != 0) {
		slurm_error("vsched: plugstack.conf: %s", why);
		return -1;
	}
	return 0;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	(void)sp, (void)ac, (void)av;
	if (user.rate > 0 && !site.user_rate) {
		if (spank_context() == S_CTX_LOCAL) {
			slurm_error("vsched: --vsched-rate is not allowed on this cluster "
			            "(plugstack.conf: user_rate=no)");
			return -1;
		}
		user.rate = 0;
	}
	if (!user.progress_set)
		user.progress = site.progress;
	return 0;
}

/* The job name: --vsched-job, else <jobid>.<stepid>. */
static int job_name(spank_t sp, char *buf, size_t len)
{
	uint32_t job = 0, step = 0;

	if (user.job[0] != '\0') {
		snprintf(buf, len, "%s", user.job);
		return 0;
	}
	if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS)
		return -1;
	snprintf(buf, len, "%u.%u", job, step);
	return 0;
}

int slurm_spank_task_post_fork(spank_t sp, int ac, char **av)
{
	char job[APROTO_JOB_MAX + 1], why[400];
	uint32_t rank = 0;
	pid_t pid = 0;

	(void)ac, (void)av;
	if (!active() || !spank_remote(sp))
		return 0;
	if (job_name(sp, job, sizeof(job)) != 0 ||
	    spank_get_item(sp, S_TASK_GLOBAL_ID, &rank) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_TASK_PID, &pid) != ESPANK_SUCCESS) {
		slurm_error("vsched: cannot read the task's id and pid; it runs without vsched");
		return 0;
	}
	if (vspank_register(site.agent, job, rank, pid, 1000, why, sizeof(why)) != 0) {
		slurm_error("vsched: task %u (job %s): %s; it runs without vsched", rank, job, why);
		return 0;
	}
	if (rank == 0 && user.rate > 0 &&
	    vspank_set_rate(site.controller, job, user.rate, VSPANK_RATE_WAIT_MS, why,
	                    sizeof(why)) != 0)
		slurm_error("vsched: job %s: target %g %% not set: %s", job, user.rate, why);
	return 0;
}

/* Sets LD_PRELOAD and VSCHED_PROGRESS in the task's environment if argv[0] is an MPI
 * program libapprate-mpi was built for. */
static void setup_mpi(spank_t sp)
{
	char path[4096], lib[4096], why[600], pre[8192], mode[MPIPROG_MAX + 16];
	char **argv = NULL;
	int argc = 0;

	if (spank_get_item(sp, S_JOB_ARGV, &argc, &argv) != ESPANK_SUCCESS || argc < 1)
		return;
	/* This process becomes the task: resolve the program with the task's PATH. */
	if (spank_getenv(sp, "PATH", path, sizeof(path)) == ESPANK_SUCCESS)
		setenv("PATH", path, 1);
	if (mpi_find_interposer(argv[0], site.mpi_dir, lib, sizeof(lib), why, sizeof(why)) != 0) {
		if (user.progress_set)
			slurm_error("vsched: --vsched-progress ignored: %s", why);
		return;
	}
	if (spank_getenv(sp, "LD_PRELOAD", pre, sizeof(pre)) == ESPANK_SUCCESS && pre[0] != '\0')
		snprintf(pre + strlen(pre), sizeof(pre) - strlen(pre), ":%s", lib);
	else
		snprintf(pre, sizeof(pre), "%s", lib);
	mpiprog_format(&user.progress, mode, sizeof(mode));
	spank_setenv(sp, "LD_PRELOAD", pre, 1);
	spank_setenv(sp, "VSCHED_PROGRESS", mode, 1);
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	char job[APROTO_JOB_MAX + 1], rankbuf[16];
	uint32_t rank = 0;

	(void)ac, (void)av;
	if (!active() || !spank_remote(sp))
		return 0;
	if (job_name(sp, job, sizeof(job)) != 0 ||
	    spank_get_item(sp, S_TASK_GLOBAL_ID, &rank) != ESPANK_SUCCESS)
		return 0;
	snprintf(rankbuf, sizeof(rankbuf), "%u", rank);
	spank_setenv(sp, "VSCHED_JOB", job, 1);
	spank_setenv(sp, "VSCHED_RANK", rankbuf, 1);
	spank_setenv(sp, "VSCHED_AGENT", site.agent, 1);
	setup_mpi(sp);
	return 0;
}
