/*
 * The plugin's configuration: plugstack.conf arguments (site settings) and the values of
 * srun's --vsched-* options. Pure: no Slurm, no I/O; every value is checked and refused
 * with a one-line reason.
 *
 *   plugstack.conf:  optional /usr/lib/.../vsched_spank.so [agent=EP] [controller=EP]
 *                    [progress=MODE] [user_rate=yes|no] [mpi_dir=DIR[:DIR...]]
 */
#include "vspank.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An endpoint ZeroMQ can connect to: ipc://PATH or tcp://HOST:PORT, bounded in length. */
static int check_endpoint(const char *key, const char *v, char *why, size_t whylen)
{
	const char *colon = strrchr(v, ':');

	if (strlen(v) >= VSPANK_EP_MAX) {
		snprintf(why, whylen, "%s: longer than %d bytes", key, VSPANK_EP_MAX - 1);
		return -1;
	}
	if (strncmp(v, "ipc://", 6) == 0 && v[6] != '\0')
		return 0;
	if (strncmp(v, "tcp://", 6) == 0 && colon != NULL && colon > v + 6 && colon[1] != '\0' &&
	    strspn(colon + 1, "0123456789") == strlen(colon + 1))
		return 0;
	snprintf(why, whylen, "%s=%s: must be ipc://PATH or tcp://HOST:PORT", key, v);
	return -1;
}

int vspank_site_parse(struct vspank_site *s, const char *mpi_dir_default, int ac, char **av,
                      char *why, size_t whylen)
{
	struct vspank_site n = {.user_rate = true};

	snprintf(n.agent, sizeof(n.agent), "%s", VSPANK_DEFAULT_AGENT);
	snprintf(n.controller, sizeof(n.controller), "%s", VSPANK_DEFAULT_CTRL);
	snprintf(n.mpi_dir, sizeof(n.mpi_dir), "%s", mpi_dir_default);
	for (int i = 0; i < ac; i++) {
		const char *a = av[i], *v = strchr(a, '=');
		size_t kl = v != NULL ? (size_t)(v - a) : 0;

		if (v == NULL || kl == 0) {
			snprintf(why, whylen, "argument '%s': expected KEY=VALUE", a);
			return -1;
		}
		v++;
		if (kl == 5 && strncmp(a, "agent", kl) == 0) {
			if (check_endpoint("agent", v, why, whylen) != 0)
				return -1;
			snprintf(n.agent, sizeof(n.agent), "%s", v);
		} else if (kl == 10 && strncmp(a, "controller", kl) == 0) {
			if (check_endpoint("controller", v, why, whylen) != 0)
				return -1;
			snprintf(n.controller, sizeof(n.controller), "%s", v);
		} else if (kl == 8 && strncmp(a, "progress", kl) == 0) {
			if (mpiprog_parse(v, &n.progress, why, whylen) != 0)
				return -1;
		} else if (kl == 9 && strncmp(a, "user_rate", kl) == 0) {
			if (strcmp(v, "yes") != 0 && strcmp(v, "no") != 0) {
				snprintf(why, whylen, "user_rate=%s: must be yes or no", v);
				return -1;
			}
			n.user_rate = strcmp(v, "yes") == 0;
		} else if (kl == 7 && strncmp(a, "mpi_dir", kl) == 0) {
			if (*v == '\0' || strlen(v) >= sizeof(n.mpi_dir)) {
				snprintf(why, whylen, "mpi_dir: empty or longer than %zu bytes",
				         sizeof(n.mpi_dir) - 1);
				return -1;
			}
			snprintf(n.mpi_dir, sizeof(n.mpi_dir), "%s", v);
		} else {
			snprintf(why, whylen,
			         "unknown argument '%.*s' (agent, controller, progress, user_rate, "
			         "mpi_dir)",
			         (int)kl, a);
			return -1;
		}
	}
	*s = n;
	return 0;
}

int vspank_opt_rate(struct vspank_user *u, const char *arg, char *why, size_t whylen)
{
	char *end;
	double v;

	if (arg == NULL || arg[0] < '0' || arg[0] > '9')
		goto bad;
	errno = 0;
	v = strtod(arg, &end);
	if (*end == '%')
		end++;
	if (errno != 0 || *end != '\0' || !isfinite(v) || v <= 0.0 || v > 100.0)
		goto bad;
	u->rate = v;
	return 0;
bad:
	snprintf(why, whylen, "--vsched-rate=%s: must be a percentage in (0, 100], e.g. 40",
	         arg ? arg : "");
	return -1;
}

int vspank_opt_job(struct vspank_user *u, const char *arg, char *why, size_t whylen)
{
	if (arg == NULL || aproto_check_job(arg) != 0) {
		snprintf(why, whylen,
		         "--vsched-job=%s: must be 1..%d printable ASCII characters, no blanks",
		         arg ? arg : "", APROTO_JOB_MAX);
		return -1;
	}
	snprintf(u->job, sizeof(u->job), "%s", arg);
	return 0;
}

int vspank_opt_progress(struct vspank_user *u, const char *arg, char *why, size_t whylen)
{
	char reason[200];

	if (arg == NULL || *arg == '\0' ||
	    mpiprog_parse(arg, &u->progress, reason, sizeof(reason)) != 0) {
		snprintf(why, whylen, "--vsched-progress: %s",
		         arg && *arg ? reason : "needs auto, mpi:NAME[:N] or pcontrol");
		return -1;
	}
	u->progress_set = true;
	return 0;
}
