/*
 * vschedctl job SUBCOMMAND: dispatch by subcommand (run here; list, show, set in cmd_ctl.c),
 * and `job run`.
 *
 *   vschedctl job run --job NAME [--rank N] [--rate PERCENT] [--agent ENDPOINT] -- CMD [ARGS]
 *
 * `job run` starts CMD as a rank of job NAME: it sets the environment libapprate reads
 * (VSCHED_JOB, VSCHED_RANK, VSCHED_AGENT, and VSCHED_TARGET with --rate; DESIGN.md §3, §6),
 * so that the application registers with the node's agent, and then *execs* CMD in place.
 * Same process, same pid: the pid the application registers is the one a `vschedctl run`
 * around it put under a reservation; SIGINT/SIGTERM sent to vschedctl reach CMD itself; and
 * vschedctl's exit status is CMD's (as a shell reports it: 128+N when killed by signal N).
 * If CMD cannot be executed: one line, exit 127. Bad arguments: one line, exit 2, CMD not run.
 *
 * Without --rank the rank is kept from $VSCHED_RANK, else taken from the launcher's rank
 * variable (SLURM_PROCID, PMIX_RANK, PMI_RANK, OMPI_COMM_WORLD_RANK), else 0, so that
 * `mpirun -n 4 vschedctl job run --job J -- ./app` numbers its ranks. Without --agent an
 * inherited $VSCHED_AGENT is kept (else libapprate's default endpoint applies).
 *
 * --mpi [--progress MODE]: CMD is an unmodified MPI program. The libapprate-mpi built for
 * the MPI library CMD links (common/mpi_find.c: the dynamic loader's answer, not a guess)
 * is appended to LD_PRELOAD and VSCHED_PROGRESS is set (auto unless --progress), so the
 * program reports its iterations (docs/mpi.md). No matching interposer: one line, exit 1,
 * CMD not run. Interposers are looked for in $VSCHED_MPI_DIR (':'-separated), else in the
 * build tree beside this binary (../lib/vsched-mpi) and the installed VSCHED_MPI_INSTALL_DIR.
 */
#include "vschedctl.h"

#include "ctladmin.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_find.h"
#include "mpi_progress.h"
#include "proto_apprate.h"

#ifndef VSCHED_MPI_INSTALL_DIR
#define VSCHED_MPI_INSTALL_DIR "/usr/lib/vsched/mpi"
#endif

/* Rank variables of common launchers, checked in this order when --rank is not given. */
static const char *const rank_vars[] = {"VSCHED_RANK", "SLURM_PROCID", "PMIX_RANK", "PMI_RANK",
                                        "OMPI_COMM_WORLD_RANK"};

/* A rank: decimal digits, 0..INT32_MAX. Returns 0 or -1. */
static int parse_rank(const char *s, long *out)
{
	long v = 0;

	if (*s == '\0' || strlen(s) > 10)
		return -1;
	for (const char *p = s; *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (*p - '0');
	}
	if (v > INT32_MAX)
		return -1;
	*out = v;
	return 0;
}

/* A target rate in percent: a decimal number, optional '%', in (0, 100]. */
static double parse_rate(const char *s)
{
	char *end;
	double v;

	if (s[0] < '0' || s[0] > '9') /* no sign, blank, "inf", "nan" */
		args_fail("job run", "--rate '%s': must be a percentage in (0, 100], e.g. 40", s);
	errno = 0;
	v = strtod(s, &end);
	if (*end == '%')
		end++;
	if (errno != 0 || *end != '\0' || !isfinite(v))
		args_fail("job run", "--rate '%s': must be a percentage in (0, 100], e.g. 40", s);
	if (v <= 0.0 || v > 100.0)
		args_fail("job run", "--rate '%s': must be greater than 0 and at most 100", s);
	return v;
}

/* ipc://PATH or tcp://HOST:PORT, the transports an agent can be reached by. */
static void check_agent(const char *s)
{
	const char *colon, *port;
	long p = 0;

	if (strncmp(s, "ipc://", 6) == 0) {
		size_t len = strlen(s + 6);

		if (len == 0)
			args_fail("job run", "--agent '%s': ipc:// needs a socket path", s);
		if (len > 107) /* sizeof(sun_path) - 1 */
			args_fail("job run", "--agent '%s': ipc path longer than 107 bytes", s);
		return;
	}
	if (strncmp(s, "tcp://", 6) == 0) {
		colon = strrchr(s + 6, ':');
		port = colon != NULL ? colon + 1 : "";

		if (colon == NULL || colon == s + 6 || parse_rank(port, &p) != 0 || p < 1 ||
		    p > 65535)
			args_fail("job run",
			          "--agent '%s': must be tcp://HOST:PORT (port 1..65535)", s);
		return;
	}
	args_fail("job run", "--agent '%s': must be ipc://PATH or tcp://HOST:PORT", s);
}

/* The interposer directories to search: $VSCHED_MPI_DIR, else beside this binary's build
 * tree and the install directory. */
static void mpi_dirs(char *buf, size_t len)
{
	const char *env = getenv("VSCHED_MPI_DIR");
	char exe[4096];
	ssize_t n;

	if (env != NULL && *env != '\0') {
		snprintf(buf, len, "%s", env);
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	if (strrchr(exe, '/') != NULL)
		*strrchr(exe, '/') = '\0';
	snprintf(buf, len, "%s/../lib/vsched-mpi:%s", exe, VSCHED_MPI_INSTALL_DIR);
}

/*
 * --mpi: sets LD_PRELOAD (the interposer appended: a preload the user set stays first)
 * and VSCHED_PROGRESS for cmd. Returns 0, or CLI_EXIT_FAIL after one line on stderr.
 */
static int setup_mpi(const char *cmd, const char *progress)
{
	char dirs[8400], lib[4096], why[600], mode[MPIPROG_MAX + 16], *pre;
	const char *old = getenv("LD_PRELOAD");
	struct mpiprog p;
	int rc;

	if (mpiprog_parse(progress, &p, why, sizeof(why)) != 0)
		args_fail("job run", "--progress: %s", why);
	mpi_dirs(dirs, sizeof(dirs));
	if (mpi_find_interposer(cmd, dirs, lib, sizeof(lib), why, sizeof(why)) != 0) {
		fprintf(stderr, "vschedctl: job run: --mpi: %s\n", why);
		return CLI_EXIT_FAIL;
	}
	mpiprog_format(&p, mode, sizeof(mode));
	if (old != NULL && *old != '\0')
		rc = asprintf(&pre, "%s:%s", old, lib);
	else
		rc = asprintf(&pre, "%s", lib);
	if (rc < 0 || setenv("LD_PRELOAD", pre, 1) != 0 ||
	    setenv("VSCHED_PROGRESS", mode, 1) != 0) {
		fprintf(stderr, "vschedctl: job run: setenv: %s\n", strerror(errno));
		return CLI_EXIT_FAIL;
	}
	free(pre);
	return 0;
}

static int job_run(const char *endpoint, int argc, char **argv)
{
	struct cli_opt opts[] = {
	    {"job", true, NULL},   {"rank", true, NULL}, {"rate", true, NULL},
	    {"agent", true, NULL}, {"mpi", false, NULL}, {"progress", true, NULL},
	    {NULL, false, NULL},
	};
	const char *job = NULL, *rank = NULL;
	char **cmd = NULL, rate[32], rankbuf[16];
	int ncmd = 0;
	long r = 0;

	(void)endpoint; /* job run talks to nobody: the application's libapprate does */
	args_parse("job run", argc, argv, opts, NULL, 0, true, &cmd, &ncmd);
	job = opts[0].value;
	if (job == NULL)
		args_fail("job run", "--job NAME is required");
	if (aproto_check_job(job) != 0)
		args_fail("job run",
		          "--job '%s': must be 1..%d printable ASCII characters, no "
		          "blanks",
		          job, APROTO_JOB_MAX);
	if (opts[1].value != NULL) {
		rank = opts[1].value;
		if (parse_rank(rank, &r) != 0)
			args_fail("job run", "--rank '%s': must be an integer 0..%d", rank,
			          INT32_MAX);
	} else {
		for (size_t i = 0; i < sizeof(rank_vars) / sizeof(rank_vars[0]) && !rank; i++) {
			const char *v = getenv(rank_vars[i]);

			if (v == NULL || v[0] == '\0')
				continue;
			if (parse_rank(v, &r) != 0)
				args_fail("job run", "$%s '%s' is not a rank (0..%d); give --rank",
				          rank_vars[i], v, INT32_MAX);
			rank = v;
		}
	}
	if (opts[3].value != NULL)
		check_agent(opts[3].value);
	if (opts[2].value != NULL)
		snprintf(rate, sizeof(rate), "%g", parse_rate(opts[2].value));
	if (ncmd == 0)
		args_fail("job run", "missing command (vschedctl job run --job NAME -- CMD)");
	if (opts[5].value != NULL && opts[4].value == NULL)
		args_fail("job run", "--progress is for MPI programs: give --mpi too");
	if (opts[4].value != NULL && setup_mpi(cmd[0], opts[5].value) != 0)
		return CLI_EXIT_FAIL;

	snprintf(rankbuf, sizeof(rankbuf), "%ld", r);
	if (setenv("VSCHED_JOB", job, 1) != 0 || setenv("VSCHED_RANK", rankbuf, 1) != 0 ||
	    (opts[3].value != NULL && setenv("VSCHED_AGENT", opts[3].value, 1) != 0) ||
	    (opts[2].value != NULL && setenv("VSCHED_TARGET", rate, 1) != 0)) {
		fprintf(stderr, "vschedctl: job run: setenv: %s\n", strerror(errno));
		return CLI_EXIT_FAIL;
	}
	fflush(NULL);
	execvp(cmd[0], cmd);
	fprintf(stderr, "vschedctl: job run: %s: %s\n", cmd[0], strerror(errno));
	return 127;
}

/*
 * Subcommands of `job`. `run` is local (above); `list`, `show` and `set` ask
 * vsched-controller (cmd_ctl.c, endpoint from -C / $VSCHED_CONTROLLER).
 */
static const struct {
	const char *name;
	int (*fn)(const char *endpoint, int argc, char **argv);
} job_cmds[] = {
    {"run", job_run},
    {"list", cmd_job_list}, /* cmd_ctl.c: vsched-controller */
    {"show", cmd_job_show},
    {"set", cmd_job_set},
};

int cmd_job(const char *endpoint, int argc, char **argv)
{
	if (argc < 1)
		args_fail("job", "missing subcommand (run, list, show or set)");
	for (size_t i = 0; i < sizeof(job_cmds) / sizeof(job_cmds[0]); i++)
		if (strcmp(argv[0], job_cmds[i].name) == 0)
			return job_cmds[i].fn(endpoint, argc - 1, argv + 1);
	args_fail("job", "unknown subcommand '%s' (run, list, show or set)", argv[0]);
}
