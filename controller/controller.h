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
 *   the target persisted: written at the end of the loop turn, before the admin reply
 *   leaves; see state_commit()). When any node refused (status < 0) or did not answer within
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
#include "coplan.h"
#include "fitness.h"
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

struct held_reply; /* admin.c */

/* Per-job settings: defaults from the config, overridable per job (JOB_SET), persisted. */
struct job_settings {
	uint8_t algo; /* enum padm_algo (= enum control_algo) */
	uint8_t agg;  /* enum padm_agg (= enum control_agg) */
	double eps_pct;
	double r_max;     /* units/s; 0 = calibrate */
	bool r_max_given; /* given by the administrator (else measured, when r_max > 0) */
	mono_ns delta_period, min_period, min_slice, initial_period;
};

/* Co-scheduling mode (DESIGN.md §5.2, docs/coschedule.md; config keys of the same names). */
struct ctld_cosched {
	bool on;           /* coschedule */
	mono_ns frame;     /* T */
	mono_ns slot;      /* q; frame % slot == 0, frame / slot <= COPLAN_MAX_SLOTS */
	mono_ns bw_window; /* w: per-process bandwidths averaged over this */
	uint64_t mem_cap;  /* M, B/s; 0: the agents' NODE_HELLO figure */
	uint64_t net_cap;  /* N, B/s; 0: the agents' */
	uint8_t pairing;   /* enum fit_pairing */
	bool align;        /* send EPOCH so that frames line up across nodes */
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
	struct ctld_cosched cs;
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

#define RANK_BW_SAMPLES 16 /* BW reports kept per rank for the bw_window average */

struct bw_sample {
	mono_ns at;
	uint64_t mem, net; /* B/s */
	bool mem_ok;       /* the memory figure has a source (else unavailable, counted 0) */
};

struct rank {
	bool used;
	int node;
	uint32_t handle;
	int32_t pid;
	double rate; /* units/s of the last report, NAN before */
	uint64_t period, slice, gen, misses;
	int32_t cpu;               /* the CPU vsched pinned it to (TASK_STATS); -1: not known */
	uint64_t mem_bps, net_bps; /* last report */
	uint8_t mem_src;
	/* the last reports, for the average over bw_window (coschedule) */
	struct bw_sample bw[RANK_BW_SAMPLES];
	uint32_t nbw, bw_head;
};

enum txn_kind {
	TXN_CONTROL = 0, /* a decision of the control loop */
	TXN_TARGET,      /* SET_RATE */
	TXN_SETTINGS,    /* JOB_SET */
	TXN_PLAN,        /* coschedule: the plan's windows (the control state is not involved) */
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
	uint8_t nwin; /* 0: the reservation (period, slice); else co-scheduling windows */
	struct vsp_resv win[PCTL_MAX_WINDOWS];
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
	/* the constraint committed on the nodes (0: none); in coschedule mode its windows
	 * (nwin > 0: period = their period, slice = their total slice) */
	mono_ns period, slice;
	uint8_t nwin;
	struct vsp_resv win[PCTL_MAX_WINDOWS];
	uint64_t gen;
	uint64_t rollback_gen; /* generation of the last roll-back sent */
	bool refused;          /* shown rejected: reason says why */
	char reason[PADM_REASON_MAX + 1];
	struct rank *ranks; /* indexed by rank number */
	uint32_t cap_ranks;
	uint32_t nranks;   /* ranks in use */
	uint64_t deferred; /* reports dropped while a transaction was open */
	struct txn txn;
	/* coschedule: the plan's windows for the job (plan_nwin 0: not in the plan), when
	 * to (re)try pushing them, the class and granularity the plan was made with */
	uint8_t plan_nwin;
	struct vsp_resv plan_win[PCTL_MAX_WINDOWS];
	bool plan_merged;
	uint32_t plan_need, plan_got;
	mono_ns push_at;
	uint8_t klass;   /* enum padm_class, from the averaged memory bandwidth */
	uint32_t want_k; /* windows-per-frame granularity from the control loop */
};

/* The co-scheduling plan in force (coschedule mode), for listings. */
struct cs_plan {
	bool valid, dirty;
	uint64_t changes;    /* cosched_dirty() calls */
	uint64_t seen;       /* changes at the last tick */
	mono_ns quiet_since; /* no change since (the timer waits for PLAN_QUIET of quiet) */
	mono_ns dirty_since;
	uint64_t seq; /* plans made */
	mono_ns made_at;
	struct coplan_result res;
	uint32_t njobs, nnodes;
	int *job_of;  /* plan row -> job index */
	int *node_of; /* plan node -> node index */
	struct fit_place *place;
	uint32_t *node_off; /* nnodes + 1 */
	uint32_t nplace;
	uint8_t *table;    /* njobs * res.slots */
	uint64_t epoch_ns; /* cluster epoch (CLOCK_REALTIME), a multiple of the frame */
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
	/* group commit (state.c, state_commit()): the state file is written at most once per
	 * loop turn, and admin replies are held until it has been (admin.c) */
	bool state_dirty;        /* the state file is behind memory */
	bool state_sync;         /* changed this turn (state_mark): write at the end of it */
	mono_ns state_due;       /* a failed write is retried from then on (1/s) */
	uint64_t state_writes;   /* state files written (counted for tests) */
	struct held_reply *held; /* admin replies of this turn, in order */
	int nheld, cap_held;
	/* tests: called just before a held reply is sent (admin_end_turn) */
	void (*reply_hook)(struct ctld *d, const uint8_t *cid, size_t cidlen);
	int *id_tab;     /* node index by agent routing id (agents.c): open addressing, -1 empty */
	uint32_t id_cap; /* slots, a power of two > 2 * nnodes; 0: no table */
	uint64_t bad_msgs;
	struct cs_plan plan;
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
/* The node whose agent connection has this routing id, or -1: a hash lookup in id_tab. */
int agents_node_by_id(const struct ctld *d, const uint8_t *id, size_t len);
/* Rebuilds id_tab from the nodes' routing ids (after any of them changed). */
void agents_index(struct ctld *d);

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
void jobs_bw(struct ctld *d, int node, const struct pctl_bw *b, mono_ns now);
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
/* Coschedule: pushes the job's planned windows as a transaction (kind and what to restore
 * from tpl, client cid if any). Returns as txn_start: 1 open, 2 refused at once (client
 * answered), 0 committed at once or nothing to change; -1 when a transaction is open. */
int jobs_push_windows(struct ctld *d, int j, const struct txn *tpl, const uint8_t *cid,
                      size_t cidlen, mono_ns now);
/* Dashboard state of a job. */
uint8_t job_state(const struct job *jb);
uint64_t ctld_next_gen(struct ctld *d);

/* admin.c */
int admin_open(struct ctld *d);
void admin_close(struct ctld *d);
void admin_recv(struct ctld *d, mono_ns now);
/* Replies to a client (also a deferred SET_RATE / JOB_SET). Every reply is held until the
 * end of the loop turn (admin_end_turn): it leaves only after the state is committed. */
void admin_reply(struct ctld *d, const uint8_t *cid, size_t cidlen, int32_t status,
                 const char *reason);
/* End of a loop turn: commits the state (state_commit), then sends the replies held
 * during the turn, in order. Never blocks but for the state file's fsync. */
void admin_end_turn(struct ctld *d, mono_ns now);
/* Records for the dashboard / listings. The caller releases with padm_reply_release. */
int admin_fill(const struct ctld *d, struct padm_reply *r, bool jobs, bool nodes, int ranks_of,
               mono_ns now);
/* One dashboard frame on f (vsched-controller -d). */
void admin_dashboard(const struct ctld *d, FILE *f, mono_ns now);

/* cosched.c: co-scheduling mode (docs/coschedule.md) */
/* Picks the cluster epoch (wall clock now rounded down to a frame). */
void cosched_init(struct ctld *d);
void cosched_free(struct ctld *d);
/* Something the plan depends on changed: plan again at the next tick. */
void cosched_dirty(struct ctld *d);
/* A rank's BW report: keeps the sample for the bw_window average. */
void cosched_bw_sample(struct ctld *d, struct rank *rk, uint64_t mem, bool mem_ok, uint64_t net,
                       mono_ns now);
/* Per-process averages of a job over bw_window (NAN when no report; mem NAN also when no
 * report had a memory source). */
void cosched_job_bw(const struct ctld *d, const struct job *jb, mono_ns now, double *mem,
                    double *net);
/* Class of the job from its averaged memory bandwidth (enum padm_class). */
uint8_t cosched_job_class(const struct ctld *d, const struct job *jb, mono_ns now);
/* Re-plans now (whatever dirty says); the jobs whose windows changed are due for a push. */
void cosched_replan(struct ctld *d, mono_ns now);
/* Timer: classes, plan when dirty, pushes the windows that are due. */
void cosched_tick(struct ctld *d, mono_ns now);
/* A control decision of a job in coschedule mode: only its granularity matters. */
void cosched_decided(struct ctld *d, struct job *jb);

/* cosched_send.c */
/* Sends a CONSTRAINT with windows to node; 0 or -1 (not connected, logged). */
int cosched_send_windows(struct ctld *d, int node, const char *job, uint64_t gen, uint8_t nwin,
                         const struct vsp_resv *win);
/* Sends EPOCH (the cluster's release anchor) to node; 0 or -1. */
int cosched_send_epoch(struct ctld *d, int node);

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
/* Saves the daemon's jobs now. Returns 0 or -1 (logged; state_dirty stays set). */
int state_save_all(struct ctld *d);
/* The persisted state changed (a committed target or settings, a measured R_max): it is
 * written at the end of this loop turn, before any admin reply is sent. */
void state_mark(struct ctld *d);
/* The group commit, once per loop turn: writes the state when dirty (see state.c for the
 * durability contract). Returns 0 (written or nothing to write) or -1 (logged). */
int state_commit(struct ctld *d, mono_ns now);
/* Loads the state file into the daemon. Returns 0 or -1 with why. */
int state_restore(struct ctld *d, mono_ns now, char *why, size_t whylen);

#endif
