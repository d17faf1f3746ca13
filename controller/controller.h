/*
 * vsched-controller: the cluster brain (DESIGN.md §5). Private header of the daemon,
 * prototypes grouped by the file that defines them.
 *
 * One thread, one zmq_poll loop (main.c) over two sockets:
 *   - a ROUTER for the agents (agents.c, protocol common/proto_ctl.h): registration,
 *     heartbeats, JOB_PROC, RATE, BW, TASK_STATS in; HELLO_ACK, HEARTBEAT, CONSTRAINT out;
 *   - a ROUTER for vschedctl (admin.c, protocol common/proto_admin.h).
 * Per-job feedback control is the pure library vsched_control (control.h); jobs.c wraps it,
 * turns its decisions into CONSTRAINT messages and keeps the "never half-applied" rule:
 *
 *   Constraint change protocol (apply, then roll back). vsched offers no prepare/commit, so
 *   a two-phase commit is not available. A change of a job's constraint is a transaction:
 *   the new (period, slice) goes with a fresh generation to every up node that hosts a rank
 *   of the job; each agent applies it to all the job's processes on its node or to none
 *   and answers CONSTRAINT_ACK. When every node accepted, the change is committed (and
 *   the target persisted). When any node refused (status < 0) or did not answer within
 *   ack_timeout, the job's previous constraint is sent, with a newer generation, to every
 *   node that accepted or did not answer, the control state is rolled back
 *   (control_reject()), and the job is shown `rejected` with the node's reason. An admin
 *   request waits for the outcome and gets it as its reply. While a transaction is open,
 *   the job's rate reports are not fed to the control loop (they were measured under a
 *   constraint that may be about to change).
 *
 *   Generations only go forward per job on every agent (older ones are refused as stale),
 *   also across controller restarts: the controller numbers constraints from
 *   max(persisted last generation + 1, wall-clock seconds at start << 20) upwards (fewer
 *   than 2^20 constraints per second of uptime on average keeps this monotonic even
 *   without the state file; the numbers stay below 2^53, exact in JSON).
 *
 *   U = 1 ("calibrating R_max" or "no target") is not sent to the nodes: vsched's
 *   admission cap (< 1) would refuse it. During those phases the job's processes run as
 *   the agent placed them (unmanaged, or the agent's provisional reservation).
 */
#ifndef VSCHED_CONTROLLER_H
#define VSCHED_CONTROLLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "control.h"
#include "proto_admin.h"
#include "proto_ctl.h"
#include "timeutil.h"

#define CTLD_ENDPOINT_MAX 256
#define CTLD_PATH_MAX     512
#define CTLD_ID_MAX       256 /* ZeroMQ routing ids are at most 255 bytes */

#define CTLD_DEFAULT_CONFIG "/etc/vsched/controller.conf"
#define CTLD_DEFAULT_AGENTS "tcp://127.0.0.1:7710"
#define CTLD_DEFAULT_ADMIN  "tcp://127.0.0.1:7711"
#define CTLD_DEFAULT_STATE  "/var/lib/vsched/controller.state"

/* Per-job settings: defaults from the config, overridable per job (JOB_SET), persisted. */
struct job_settings {
	uint8_t algo; /* enum padm_algo (= enum control_algo) */
	uint8_t agg;  /* enum padm_agg (= enum control_agg) */
	double eps_pct;
	double r_max;     /* units/s; 0 = calibrate */
	bool r_max_given; /* given by the administrator (else measured, when r_max > 0) */
	mono_ns delta_period, min_period, min_slice, initial_period;
};

struct ctld_config {
	char agents[CTLD_ENDPOINT_MAX]; /* ROUTER for the agents */
	char admin[CTLD_ENDPOINT_MAX];  /* ROUTER for vschedctl */
	char state_file[CTLD_PATH_MAX];
	mono_ns heartbeat;     /* told to the agents in HELLO_ACK */
	mono_ns node_timeout;  /* no message for this long: node down */
	mono_ns ack_timeout;   /* a node that does not acknowledge a constraint in time refused */
	mono_ns round_timeout; /* control: evaluate an incomplete round after this */
	mono_ns apply_latency; /* control: decision -> effect on the nodes */
	mono_ns dashboard_interval;
	uint8_t calib;           /* enum control_calib for jobs without R_max */
	double default_target;   /* for jobs first seen; 0 = none */
	struct job_settings job; /* defaults for new jobs */
};

struct node_job { /* an agent's job handle on one node */
	uint32_t handle;
	int job;
};

struct node {
	char name[PCTL_NAME_MAX + 1];
	uint8_t id[CTLD_ID_MAX]; /* routing id of its agent's connection */
	size_t idlen;
	bool up;
	uint16_t ncpus;
	uint64_t mem_cap, net_cap, instance;
	mono_ns last_seen; /* any message */
	mono_ns hello_at;
	uint64_t net_used, mem_used;
	uint8_t mem_src, net_src;
	double sum_u;
	uint32_t nprocs;
	struct node_job *handles;
	uint32_t nhandles, cap_handles;
};

struct rank {
	bool used;
	int node;
	uint32_t handle;
	int32_t pid;
	double rate; /* units/s of the last report, NAN before */
	uint64_t period, slice, gen, misses;
	uint64_t mem_bps, net_bps;
	uint8_t mem_src;
};

enum txn_kind {
	TXN_CONTROL = 0, /* a decision of the control loop */
	TXN_TARGET,      /* SET_RATE */
	TXN_SETTINGS,    /* JOB_SET */
};

enum txn_node_state {
	TXN_PENDING = 0,
	TXN_ACCEPTED,
	TXN_REFUSED,
	TXN_GONE, /* the node went down meanwhile: it gets the committed one on return */
};

struct txn {
	bool active;
	enum txn_kind kind;
	uint64_t gen;
	mono_ns period, slice;
	mono_ns deadline; /* ack_timeout */
	int *nodes;       /* nodes involved */
	uint8_t *st;      /* enum txn_node_state per node involved */
	int n, npending;
	bool refused;
	int32_t status;                /* first refusal's status */
	char why[PADM_REASON_MAX + 1]; /* first refusal's reason */
	double old_target, new_target; /* TXN_TARGET */
	bool has_client;               /* an admin request waits for the outcome */
	uint8_t cid[CTLD_ID_MAX];
	size_t cidlen;
	/* TXN_SETTINGS: what to restore on refusal */
	struct control_job saved_ctl;
	struct job_settings saved_set;
};

struct job {
	char name[PCTL_NAME_MAX + 1];
	struct job_settings set;
	double target_pct; /* the administrator's target; 0 = none */
	struct control_job ctl;
	/* the constraint committed on the nodes (0: none) */
	mono_ns period, slice;
	uint64_t gen;
	uint64_t rollback_gen; /* generation of the last roll-back sent */
	bool refused;          /* shown rejected: reason says why */
	char reason[PADM_REASON_MAX + 1];
	struct rank *ranks; /* indexed by rank number */
	uint32_t cap_ranks;
	uint32_t nranks;   /* ranks in use */
	uint64_t deferred; /* reports dropped while a transaction was open */
	struct txn txn;
};

struct ctld {
	struct ctld_config cfg;
	const char *config_path;
	bool dashboard; /* -d */
	void *zctx, *agents, *admin;
	struct node **nodes;
	int nnodes, cap_nodes;
	struct job **jobs;
	int njobs, cap_jobs;
	uint64_t next_gen;
	uint64_t ctl_instance;
	bool state_dirty;
	mono_ns state_due;
	uint64_t bad_msgs;
};

/* config.c */
/* snprintf that may cut: messages are one line of bounded length, cutting is fine. */
void ctld_fmt(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void ctld_config_defaults(struct ctld_config *c);
/* Loads path over the defaults. Returns 0, or -1 with a one-line reason in why. */
int ctld_config_load(struct ctld_config *c, const char *path, char *why, size_t whylen);
/* Prints the configuration normalised (libconfig syntax, every key). */
void ctld_config_print(const struct ctld_config *c, FILE *f);
/* Control parameters for a job from its settings and the daemon's config. */
void ctld_config_control_params(const struct ctld_config *c, const struct job_settings *s,
                                double target, struct control_params *p);

/* agents.c */
int agents_open(struct ctld *d);
void agents_close(struct ctld *d);
/* Reads and handles every message waiting on the agents' socket. Never blocks. */
void agents_recv(struct ctld *d, mono_ns now);
/* Marks nodes down whose agent has been silent for node_timeout. */
void agents_tick(struct ctld *d, mono_ns now);
/* Sends a CONSTRAINT for job to node. Returns 0 or -1 (not connected, logged). */
int agents_send_constraint(struct ctld *d, int node, const char *job, uint64_t gen, mono_ns period,
                           mono_ns slice);
int node_find(const struct ctld *d, const char *name);

/* jobs.c */
int job_find(const struct ctld *d, const char *name);
/* Finds or creates the job (with the config's defaults). -1 when out of room. */
int job_get(struct ctld *d, const char *name, mono_ns now);
/* Creates a job restored from the state file. */
int job_restore(struct ctld *d, const char *name, const struct job_settings *s, double target,
                mono_ns now);
void jobs_free(struct ctld *d);
void jobs_proc(struct ctld *d, int node, const struct pctl_job_proc *p, mono_ns now);
void jobs_rate(struct ctld *d, int node, const struct pctl_rate *r, mono_ns now);
void jobs_bw(struct ctld *d, int node, const struct pctl_bw *b);
void jobs_stats(struct ctld *d, int node, const struct pctl_task_stats *s);
void jobs_ack(struct ctld *d, int node, const struct pctl_constraint_ack *a, mono_ns now);
/* The node registered again (its handles are void) or went down. */
void jobs_node_reset(struct ctld *d, int node);
void jobs_node_down(struct ctld *d, int node, mono_ns now);
/* Transaction timeouts. */
void jobs_tick(struct ctld *d, mono_ns now);
/* Admin: change the target / settings. Returns 0 when the reply is deferred to the end of
 * the transaction (the client id is kept), else the status with the reason in why. */
int jobs_set_target(struct ctld *d, int j, double pct, const uint8_t *cid, size_t cidlen,
                    mono_ns now, char *why, size_t whylen);
int jobs_set_settings(struct ctld *d, int j, const struct padm_request *q, const uint8_t *cid,
                      size_t cidlen, mono_ns now, char *why, size_t whylen);
/* Dashboard state of a job. */
uint8_t job_state(const struct job *jb);
uint64_t ctld_next_gen(struct ctld *d);

/* admin.c */
int admin_open(struct ctld *d);
void admin_close(struct ctld *d);
void admin_recv(struct ctld *d, mono_ns now);
/* Sends a reply to a waiting client (deferred SET_RATE / JOB_SET). */
void admin_reply(struct ctld *d, const uint8_t *cid, size_t cidlen, int32_t status,
                 const char *reason);
/* Records for the dashboard / listings. The caller releases with padm_reply_release. */
int admin_fill(const struct ctld *d, struct padm_reply *r, bool jobs, bool nodes, int ranks_of,
               mono_ns now);
/* One dashboard frame on f (vsched-controller -d). */
void admin_dashboard(const struct ctld *d, FILE *f, mono_ns now);

/* state.c */
struct state_job {
	char name[PCTL_NAME_MAX + 1];
	double target;
	struct job_settings set;
};
/*
 * Writes the state atomically: a temporary file in the same directory, fsync, rename over
 * path, fsync of the directory. On failure the previous file is untouched and no
 * temporary file is left. Returns 0 or -1 with the reason in why.
 */
int state_save(const char *path, uint64_t last_gen, const struct state_job *jobs, int n, char *why,
               size_t whylen);
/*
 * Reads a state file. Returns 0 (*jobs allocated, free() it), -ENOENT when there is none
 * (a fresh start), or -EINVAL with "FILE:LINE: reason" / "FILE: job N: reason" in why
 * (a corrupt file is refused, never half-read).
 */
int state_load(const char *path, uint64_t *last_gen, struct state_job **jobs, int *n, char *why,
               size_t whylen);
/* Saves the daemon's jobs now. Returns 0 or -1 (logged). */
int state_save_all(struct ctld *d);
/* Loads the state file into the daemon. Returns 0 or -1 with why. */
int state_restore(struct ctld *d, mono_ns now, char *why, size_t whylen);

#endif
