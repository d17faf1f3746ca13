/*
 * libapprate: progress calls for applications run under vsched.
 *
 * An application opens one handle per job it belongs to and calls apprate_progress()
 * (or apprate_iteration()) as it works. The library sends the node's vsched-agent a small
 * rate report at most once per report interval, without ever blocking the caller: with no
 * agent, or a slow one, reports are dropped and counted. See docs/libapprate.md.
 *
 *	apprate_t *r = apprate_open("lammps", NULL);	// job, rank, agent from env
 *	for (...) { step(); apprate_iteration(r); }
 *	apprate_close(&r);
 *
 * Errors are negative errno values; apprate_strerror() turns them into text.
 * Thread safety: apprate_progress/_iteration/_bytes/_flush/_stats may be called from any
 * number of threads at once. apprate_close must not race with other calls on the handle.
 * Fork: a child may keep using the handle; it re-registers with its own pid.
 */
#ifndef APPRATE_H
#define APPRATE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define APPRATE_EXPORT __attribute__((visibility("default")))
#else
#define APPRATE_EXPORT
#endif

#define APPRATE_DEFAULT_ENDPOINT  "ipc:///run/vsched/agent.sock"
#define APPRATE_DEFAULT_REPORT_MS 100
#define APPRATE_REPORT_MS_MAX     3600000 /* one hour */
#define APPRATE_JOB_MAX           63      /* bytes of job name, graphic ASCII */
#define APPRATE_RANK_ENV          (-1)    /* opts.rank: take $VSCHED_RANK (default 0) */

typedef struct apprate apprate_t;

/*
 * Options for apprate_open. Start from APPRATE_OPTS_INIT; a field left at its initial
 * value is taken from the environment, then from the default.
 */
struct apprate_opts {
	const char *endpoint; /* NULL: $VSCHED_AGENT, else APPRATE_DEFAULT_ENDPOINT */
	int rank;             /* >= 0, or APPRATE_RANK_ENV: $VSCHED_RANK, else 0 */
	unsigned report_ms;   /* 1..APPRATE_REPORT_MS_MAX; 0: $VSCHED_REPORT_MS, else 100 */
};
#define APPRATE_OPTS_INIT                                                                          \
	{                                                                                          \
		NULL, APPRATE_RANK_ENV, 0                                                          \
	}

/* Counters of one handle (this process only; a forked child starts from zero). */
struct apprate_stats {
	uint64_t units;           /* units counted by apprate_progress/_iteration */
	uint64_t units_reported;  /* of which carried by reports that were sent */
	uint64_t units_dropped;   /* discarded: not sent for 10 report intervals */
	uint64_t reports_sent;    /* REPORT messages handed to ZeroMQ */
	uint64_t reports_dropped; /* REPORTs not sent (no agent, agent slow): their units
	                             wait for the next report, see units_dropped */
	uint64_t registers_sent;  /* REGISTER messages handed to ZeroMQ */
	uint64_t registers_dropped;
	uint64_t bytes_sent; /* BYTES messages handed to ZeroMQ */
	uint64_t bytes_dropped;
	uint64_t wire_bytes; /* bytes of all messages handed to ZeroMQ */
	uint32_t handle;     /* the wire handle currently registered (changes after fork) */
	int32_t pid;         /* the pid the handle is registered with */
};

/*
 * Opens a handle for job (NULL: $VSCHED_JOB) as rank opts->rank, reporting to the agent at
 * opts->endpoint every opts->report_ms; opts NULL takes everything from the environment.
 * Connecting is asynchronous: an absent agent is not an error. Returns the handle, or NULL
 * with errno set (EINVAL: bad job name, rank, interval or environment value; EPROTONOSUPPORT
 * or EINVAL: bad endpoint; ENOMEM, EMFILE: resources) and nothing allocated. Pass -errno to
 * apprate_strerror(). Starts ZeroMQ's I/O thread; may take a few hundred microseconds.
 */
APPRATE_EXPORT apprate_t *apprate_open(const char *job, const struct apprate_opts *opts);

/*
 * Counts units of progress (hot path: a thread-local counter add and a coarse clock read,
 * no syscall, lock or allocation, a few ns). When the report interval has passed, the
 * calling thread sends one report without blocking. Returns 0, or -EINVAL if r is NULL.
 */
APPRATE_EXPORT int apprate_progress(apprate_t *r, uint64_t units);

/* apprate_progress(r, 1). */
APPRATE_EXPORT int apprate_iteration(apprate_t *r);

/*
 * Adds bytes the application moved to/from memory and over the network, for machines
 * where the agent has no hardware counters. Reported with the next report. Same cost and
 * guarantees as apprate_progress; returns 0 or -EINVAL.
 */
APPRATE_EXPORT int apprate_bytes(apprate_t *r, uint64_t mem_bytes, uint64_t net_bytes);

/*
 * Sends a report now, whatever the interval (non-blocking). Returns 0 if it was handed to
 * ZeroMQ, -EAGAIN if it was dropped (no agent, agent slow), -EBUSY if another thread is
 * sending a report at this moment, -EINVAL if r is NULL.
 */
APPRATE_EXPORT int apprate_flush(apprate_t *r);

/* Copies the handle's counters into *st. Returns 0, or -EINVAL if r or st is NULL. */
APPRATE_EXPORT int apprate_stats(const apprate_t *r, struct apprate_stats *st);

/*
 * Sends a last report (flagged final), closes the connection and frees the handle; sets *r
 * to NULL. Accepts NULL and a pointer to NULL. Waits at most 100 ms for queued messages to
 * reach a connected agent, never longer. No other thread may use the handle during or
 * after the call.
 */
APPRATE_EXPORT void apprate_close(apprate_t **r);

/* A static, human-readable text for a negative (or positive) errno returned by the API. */
APPRATE_EXPORT const char *apprate_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif
