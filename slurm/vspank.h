/*
 * The vsched SPANK plugin's private header (docs/slurm.md). Prototypes grouped by file:
 * conf.c (plugstack.conf arguments and user options: pure, unit-tested without Slurm),
 * link.c (messages to the node's agent and to the controller), vsched_spank.c (the Slurm
 * hooks).
 */
#ifndef VSPANK_H
#define VSPANK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "mpi_progress.h"
#include "proto_apprate.h"

#define VSPANK_EP_MAX        256
#define VSPANK_DIRS_MAX      1024
#define VSPANK_DEFAULT_AGENT "ipc:///run/vsched/agent.sock"
#define VSPANK_DEFAULT_CTRL  "tcp://127.0.0.1:7711"
#define VSPANK_RATE_WAIT_MS  5000 /* task 0 waits this long for the controller to know the job */

/* Site settings: the plugstack.conf line's arguments. */
struct vspank_site {
	char agent[VSPANK_EP_MAX];      /* agent=ENDPOINT */
	char controller[VSPANK_EP_MAX]; /* controller=ENDPOINT */
	char mpi_dir[VSPANK_DIRS_MAX];  /* mpi_dir=DIR[:DIR...] (interposers) */
	struct mpiprog progress;        /* progress=MODE (default for --vsched-progress) */
	bool user_rate;                 /* user_rate=yes|no: may users ask for a rate */
};

/* What the user asked for with srun's options. */
struct vspank_user {
	double rate;                  /* --vsched-rate, 0: none */
	char job[APROTO_JOB_MAX + 1]; /* --vsched-job, "": <jobid>.<stepid> */
	bool progress_set;            /* --vsched-progress given */
	struct mpiprog progress;
};

/* conf.c */
/* Defaults, then the plugstack arguments av[0..ac). Returns 0 or -1 with a reason in why. */
int vspank_site_parse(struct vspank_site *s, const char *mpi_dir_default, int ac, char **av,
                      char *why, size_t whylen);
/* Option values. Each returns 0 or -1 with a reason in why (u unchanged). */
int vspank_opt_rate(struct vspank_user *u, const char *arg, char *why, size_t whylen);
int vspank_opt_job(struct vspank_user *u, const char *arg, char *why, size_t whylen);
int vspank_opt_progress(struct vspank_user *u, const char *arg, char *why, size_t whylen);

/* link.c — both bounded in time, never blocking longer than stated */
/*
 * Registers pid as rank of job with the agent at endpoint (an apprate REGISTER; the
 * plugin runs as root in slurmstepd, which the agent accepts for another pid). Waits at
 * most timeout_ms for the connection. Returns 0 or -1 with a reason in why.
 */
int vspank_register(const char *endpoint, const char *job, uint32_t rank, pid_t pid, int timeout_ms,
                    char *why, size_t whylen);
/*
 * Sets job's target to pct with the controller at endpoint, retrying while the controller
 * does not know the job yet or is applying another change, at most timeout_ms in all.
 * Returns 0, or -1 with the controller's (or the transport's) reason in why.
 */
int vspank_set_rate(const char *endpoint, const char *job, double pct, int timeout_ms, char *why,
                    size_t whylen);

#endif
