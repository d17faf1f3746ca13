/*
 * vsched-controller: the cluster brain (DESIGN.md §5). Private header of the daemon,
 * prototypes grouped by the file that defines them; docs/architecture.md has the module map.
 *
 * One thread, one zmq_poll loop (loop.c) over two sockets:
 *   - a ROUTER for the agents (agents.c, protocol common/proto_ctl.h): registration,
 *     heartbeats, JOB_PROC, RATE, BW, TASK_STATS in; HELLO_ACK, HEARTBEAT, CONSTRAINT,
 *     EPOCH out;
 *   - a ROUTER for vschedctl (admin.c, protocol common/proto_admin.h).
 * Only agents.c and admin.c touch those sockets. Every other module queues what it wants
 * sent: protocol messages in the outbox of a node (struct node.out), replies to
 * administrators in the reply outbox (struct ctld.replies), both in outbox.c. The nodes'
 * outboxes are sent at the end of each loop turn (and during a long batch of agent
 * messages), the replies at the end of the turn after its state is on disk (persist.c).
 *
 * Per-job feedback control is the pure library vsched_control (control.h); reports.c feeds
 * it and txn.c turns its decisions into constraints under the "never half-applied" rule:
 *
 *   Constraint change protocol (apply, then roll back). vsched offers no prepare/commit, so
 *   a two-phase commit is not available. A change of a job's constraint is a transaction:
 *   the new (period, slice) goes with a fresh generation to every up node that hosts a rank
 *   of the job; each agent applies it to all the job's processes on its node or to none
 *   and answers CONSTRAINT_ACK. When every node accepted, the change is committed (and
 *   the target persisted: written at the end of the loop turn, before the admin reply
 *   leaves; see persist_commit()). When any node refused (status < 0), could not be sent
 *   the message, or did not answer within ack_timeout, the job's previous constraint is
 *   sent, with a newer generation, to every node that accepted or did not answer, the
 *   control state is rolled back (control_reject()), and the job is shown `rejected` with
 *   the node's reason. An admin request waits for the outcome and gets it as its reply.
 *   While a transaction is open, the job's rate reports are not fed to the control loop
 *   (they were measured under a constraint that may be about to change).
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

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "control.h"
#include "coplan.h"
#include "curve.h"
#include "fit.h"
#include "proto_admin.h"
#include "proto_ctl.h"
#include "timeutil.h"
#include <zmq.h>

#define CTLD_ENDPOINT_MAX 256
#define CTLD_PATH_MAX     512
#define CTLD_ID_MAX       256  /* ZeroMQ routing ids are at most 255 bytes */
#define U_CEILING_PCT     95.0 /* the most U a floating job asks a node for (settings.c) */

#define CTLD_DEFAULT_CONFIG VSCHED_SYSCONFDIR "/vsched/controller.conf"
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
	double u_max_pct; /* floating: the most U the job may hold, (0, 100] */
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
	/* security (auth.c, docs/security.md) */
	char curve_key[CTLD_PATH_MAX]; /* the controller's secret certificate; "": no CURVE */
	char allow_dir[CTLD_PATH_MAX]; /* agents/ and admins/: the allowed public keys */
	char admin_group[64];          /* may use an ipc admin endpoint besides root */
	bool insecure;                 /* allows non-loopback tcp endpoints without keys */
	mono_ns handshake_timeout;     /* a connection that has not finished its handshake: cut */
	uint64_t agent_msg_rate;       /* messages/s a node may send (burst: 1 s); 0: no limit */
};

struct node_job { /* an agent's job handle on one node */
	uint32_t handle;
	int job;
};

/* Messages for one node, in the order they were queued (outbox.c; flushed by agents.c). */
struct outbox {
	struct pctl_msg *msg; /* fixed-size types only: HELLO_ACK, HEARTBEAT, CONSTRAINT, EPOCH */
	uint32_t n, cap;
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
	mono_ns floor; /* the smallest period its vsched serves with < 1 % misses (capacity.c):
	                * the larger of the two below */
	mono_ns selftest_floor; /* vsched's last self-test (NODE_INFO), 0: none */
	mono_ns miss_floor;     /* learnt from deadline misses; only rises */
	uint32_t cap_ppm; /* vsched's per-CPU admission cap (NODE_INFO), ppm; 0: not reported */
	struct node_job *handles;
	uint32_t nhandles, cap_handles;
	struct outbox out; /* to its agent, sent at the end of the loop turn */
	double tokens;     /* messages it may send now (agent_msg_rate, agents.c) */
	mono_ns tokens_at;
	uint64_t dropped;  /* messages over agent_msg_rate, dropped */
	uint64_t nlimited; /* log limit of those drops */
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
	/* when its last RATE report arrived (0: never) and the mean gap between its reports
	 * (EWMA, 1/8): a rank silent for much longer has stopped making progress (listing.c) */
	mono_ns last_report, report_gap;
	uint64_t period, slice, gen, misses;
	/* the windows vsched holds for it (TASK_STATS, generation gen; 0: provisional): after
	 * a controller restart, what the earlier controller left there until a plan replaces
	 * it (cospush.c) */
	uint8_t held_nwin;
	struct vsp_resv held[VSP_MAX_WINDOWS];
	int32_t cpu;               /* the CPU vsched pinned it to (TASK_STATS); -1: not known */
	uint64_t mem_bps, net_bps; /* last report */
	uint8_t mem_src;
	/* the last reports, for the average over bw_window (coschedule) */
	struct bw_sample bw[RANK_BW_SAMPLES];
	uint32_t nbw, bw_head;
	/* deadline misses counted since (capacity.c): at this period, from these counters */
	mono_ns st_period;
	uint64_t st_periods, st_misses;
};

/* A rank that has reported is silent when nothing came from it for RANK_SILENT_GAPS of its
 * usual gaps between reports, and at least RANK_SILENT_MIN_NS: a hung, blocked or starved
 * process, or one whose node lost its link. Returns when it is (or becomes) silent; 0 for a
 * rank that never reported. */
#define RANK_SILENT_GAPS   5
#define RANK_SILENT_MIN_NS (10 * NSEC_PER_SEC)
static inline mono_ns rank_silent_at(const struct rank *rk)
{
	mono_ns limit = RANK_SILENT_GAPS * rk->report_gap;

	if (!rk->used || !rk->last_report)
		return 0;
	return rk->last_report + (limit > RANK_SILENT_MIN_NS ? limit : RANK_SILENT_MIN_NS);
}

/* Whether vsched holds windows for rk under a constraint generation (not the provisional
 * reservation): what a plan must count as taken until this controller commits the job's. */
static inline bool rank_holds_windows(const struct rank *rk)
{
	return rk->used && rk->gen != 0 && rk->held_nwin > 0 && rk->held[0].period > 0;
}

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
	bool staged;     /* intermediate windows went out before it (cospush.c): a node that
	                  * refuses it holds those, and gets the roll-back too */
	bool has_client; /* an admin request waits for the outcome */
	uint8_t cid[CTLD_ID_MAX];
	size_t cidlen;
	/* TXN_SETTINGS: what to restore on refusal */
	struct control_job saved_ctl;
	struct job_settings saved_set;
};

/* What the administrator asked for and the feedback loop's state (reports.c, change.c). */
struct job_control {
	struct job_settings set;
	double target_pct;       /* the administrator's target; 0 = none */
	struct control_job loop; /* vsched_control's state (control.h) */
	uint64_t deferred;       /* reports dropped while a transaction was open */
	/* floating: the bounds from the nodes (capacity.c) */
	mono_ns floor;      /* its nodes' floor when last given to the loop */
	mono_ns retry_at;   /* when a refused rise is tried again (0: not capped) */
	uint32_t retries;   /* refused rises in a row (the back-off) */
	mono_ns revoked_at; /* when others last gave back U to this job */
	char limit_why[PADM_REASON_MAX + 1]; /* the refusal that capped U (shown while capped) */
	uint32_t silence_gen; /* the constraint generation silence_tick last acted on (silence.c) */
};

/* The constraint committed on the nodes (txn.c). */
struct job_commit {
	mono_ns period, slice; /* 0: none; with windows: their period and total slice */
	uint8_t nwin;          /* > 0 in coschedule mode: the windows */
	struct vsp_resv win[PCTL_MAX_WINDOWS];
	uint64_t gen;
	mono_ns at;            /* when it was committed */
	uint64_t rollback_gen; /* generation of the last roll-back sent */
	bool refused;          /* shown rejected: reason says why */
	char reason[PADM_REASON_MAX + 1];
};

/* Who a connection is (auth.c): the role of its key, or of a local peer. */
enum auth_role {
	AUTH_NONE = 0,   /* refused */
	AUTH_OPEN,       /* an endpoint without authentication (loopback without keys) */
	AUTH_AGENT,      /* an agent key: the agents' protocol, its own node name only */
	AUTH_ADMIN_READ, /* listings only */
	AUTH_ADMIN_FULL, /* every admin request */
};
#define AUTH_DOMAIN_AGENTS "agents"
#define AUTH_DOMAIN_ADMIN  "admin"
#define AUTH_REFUSED_MAX   64 /* keys whose refusals are rate-limited in the log */

struct auth_key {
	char pub[CURVE_Z85_LEN + 1];
	uint8_t role;                  /* AUTH_AGENT, AUTH_ADMIN_READ, AUTH_ADMIN_FULL */
	char name[CURVE_NAME_MAX + 1]; /* agents: the node name; admins: the file name */
};

struct auth_refusal {
	char who[96];
	mono_ns at; /* last logged */
	uint64_t suppressed;
};

struct auth {
	bool curve; /* curve_key set: tcp endpoints are CURVE servers */
	char pub[CURVE_Z85_LEN + 1], sec[CURVE_Z85_LEN + 1];
	struct auth_key *keys; /* sorted by pub */
	int nkeys;
	unsigned admin_gid;
	bool has_group;
	void *zap;        /* REP on inproc://zeromq.zap.01 */
	void *mon[2];     /* the agents' and the admin socket's handshake failures (PAIR) */
	void *watched[2]; /* the sockets mon[] reads the monitors of (auth_unwatch) */
	struct auth_refusal refused[AUTH_REFUSED_MAX];
	uint64_t refusals;
};

/* Coschedule: the job's place in the plan (cosched.c). */
struct job_plan {
	uint8_t nwin; /* 0: not in the plan */
	struct vsp_resv win[PCTL_MAX_WINDOWS];
	bool merged;
	uint32_t need, got; /* slots per (sub-)frame */
	mono_ns push_at;    /* when to (re)try pushing the windows */
	uint8_t klass;      /* enum padm_class, from the averaged memory bandwidth */
	uint32_t want_k;    /* windows-per-frame granularity from the control loop */
	uint32_t loop_gen;  /* the control loop's constraint generation the plan was made for */
};

struct job {
	char name[PCTL_NAME_MAX + 1];
	struct rank *ranks; /* indexed by rank number */
	uint32_t cap_ranks;
	uint32_t nranks; /* ranks in use */
	struct job_control control;
	struct job_commit commit;
	struct txn txn; /* at most one open per job */
	struct job_plan plan;
};

/* The co-scheduling plan in force (coschedule mode), for listings. */
struct cs_plan {
	bool valid, dirty;
	uint64_t changes;    /* plan_changed() calls */
	uint64_t seen;       /* changes at the last tick */
	mono_ns quiet_since; /* no change since (the timer waits for PLAN_QUIET of quiet) */
	mono_ns dirty_since;
	uint64_t seq; /* plans made */
	mono_ns made_at;
	mono_ns tick_at; /* next class check */
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

/* An encoded reply to an administrator, waiting for the end of the loop turn. */
struct reply_out {
	uint8_t cid[CTLD_ID_MAX];
	size_t cidlen;
	uint8_t *buf; /* owned */
	size_t len;
};

struct replies {
	struct reply_out *r; /* in the order they were queued */
	int n, cap;
};

struct ctld {
	struct ctld_config cfg;
	const char *config_path;
	bool dashboard; /* -d */
	void *zctx, *agents, *admin;
	bool agents_secured, admin_secured; /* their connections authenticated (auth_secure) */
	struct node **nodes;
	int nnodes, cap_nodes;
	int *id_tab;     /* node index by agent routing id (nodes.c): open addressing, -1 empty */
	uint32_t id_cap; /* slots, a power of two > 2 * nnodes; 0: no table */
	struct job **jobs;
	int njobs, cap_jobs;
	uint64_t next_gen;
	uint64_t ctl_instance;
	/* group commit (persist.c): the state file is written at most once per loop turn,
	 * and the turn's replies (outbox.c) leave only after it has been */
	bool state_dirty;      /* the state file is behind memory */
	bool state_sync;       /* changed this turn (persist_mark): write at the end of it */
	mono_ns state_due;     /* a failed write is retried from then on (1/s) */
	uint64_t state_writes; /* state files written (counted for tests) */
	struct replies replies;
	mono_ns dash_at; /* next dashboard frame (-d) */
	/* silence.c: when the jobs were last looked at, and when next (the earliest a job can
	 * become silent; a scan of every rank, so not on every turn) */
	mono_ns silence_scan, silence_due;
	uint64_t bad_msgs;
	struct cs_plan plan;
	struct auth auth;
};

/*
 * Something the co-scheduling plan depends on changed (a rank, a node, a target or
 * settings, a class, a granularity): the planner plans again at its next tick. A flag the
 * planner reads, so that the modules it calls need not call it back.
 */
static inline void plan_changed(struct ctld *d)
{
	d->plan.dirty = true;
	d->plan.changes++;
}

/* The per-CPU share a co-scheduling plan assumes vsched admits on a node whose agent has not
 * reported it (NODE_INFO cap_ppm 0: not yet, or an older agent): vsched's default
 * utilization_cap, and its default RT limit 95 % minus reserve 5 %. Never the whole CPU:
 * windows planned beyond a node's cap are refused there. */
#define CTLD_CAP_DEFAULT_PPM 900000u

/* Windows a node refused: the plan is tried again this much later. */
#define CTLD_PUSH_RETRY (5 * NSEC_PER_SEC)

/* config.c */
void ctld_config_defaults(struct ctld_config *c);
/* Loads path over the defaults. Returns 0, or -1 with a one-line reason in why. */
int ctld_config_load(const char *path, struct ctld_config *c, char *why, size_t whylen);
/* Without curve_key, every endpoint must be local (loopback tcp or ipc) unless insecure
 * is set. 0 or -1 with a one-line reason (checked after the command line's endpoints). */
int ctld_config_exposure(const struct ctld_config *c, char *why, size_t whylen);
/* Prints the configuration normalised (libconfig syntax, every key). */
void ctld_config_print(FILE *f, const struct ctld_config *c);
/* One line per key (name, type, default, range, description): vsched-controller
 * --config-keys, the source of the configuration's man page. */
void ctld_config_keys(FILE *f);

/* settings.c: per-job settings */
/* The one check of a job's settings (config defaults, JOB_SET, state file): every period
 * and slice in (0, a week], min_slice <= min_period <= initial_period, epsilon in (0, 50],
 * r_max finite and >= 0. Returns 0 or -EINVAL with the reason in why. */
int settings_check(const struct job_settings *s, char *why, size_t whylen);
/* s with the fields of a JOB_SET request; then settings_check. 0 or -EINVAL with why. */
int settings_apply(const struct padm_request *q, struct job_settings *s, char *why, size_t whylen);
/* Control parameters for a job from its settings, its target and the daemon's config. */
void settings_control_params(const struct ctld_config *c, const struct job_settings *s,
                             double target, struct control_params *p);

/* jobs.c: the job and rank tables */
int jobs_find(const struct ctld *d, const char *name);
/* Finds or creates the job (with the config's defaults). */
int jobs_get(struct ctld *d, const char *name, mono_ns now);
/* Creates a job restored from the state file (settings the control library refuses: no
 * target and the config's settings instead, logged). */
int jobs_restore(struct ctld *d, const char *name, const struct job_settings *s, double target,
                 mono_ns now);
/* Frees every job (and its open transaction). */
void jobs_free(struct ctld *d);
/* Dashboard state of a job (enum padm_state). */
uint8_t jobs_state(const struct job *jb);
bool jobs_on_node(const struct job *jb, int node);
/* Co-scheduling: whether jb's planned windows are not its committed ones (a move to make). */
bool jobs_plan_moves(const struct job *jb);
bool jobs_has_up_node(const struct ctld *d, const struct job *jb);
/* Keeps the control library's rank count at highest rank + 1 (it never shrinks). */
void jobs_fit_ranks(struct job *jb);
/* Rank `rank` of jb now runs as pid on node (agent handle); a fresh record. */
void jobs_rank_join(struct job *jb, uint32_t rank, int node, uint32_t handle, int32_t pid);
/* Forgets every rank on node (its agent registered again: it re-announces them). */
void jobs_forget_node(struct ctld *d, int node);

/* nodes.c: the nodes, their agents' routing ids and job handles */
int nodes_find(const struct ctld *d, const char *name);
/* The node whose agent connection has this routing id, or -1: a hash lookup in id_tab. */
int nodes_by_id(const struct ctld *d, const uint8_t *id, size_t len);
/* Rebuilds id_tab from the nodes' routing ids (after any of them changed). */
void nodes_index(struct ctld *d);
/* NODE_HELLO on connection id: registers the node or registers it again (its ranks are
 * forgotten, its pending acknowledgements void); a connection re-used under another name
 * takes the id from the node that had it (that node goes down). Returns the node. */
int nodes_register(struct ctld *d, const uint8_t *id, size_t idlen, const struct pctl_hello *h,
                   mono_ns now);
/* A message from node i: it is seen (and up again if it was down). */
void nodes_seen(struct ctld *d, int i, mono_ns now);
/* Marks nodes down whose agent has been silent for node_timeout. */
void nodes_tick(struct ctld *d, mono_ns now);
/* When nodes_tick next has something to do (the earliest node timeout); 0: nothing. */
mono_ns nodes_next(const struct ctld *d);
/* The job of an agent's handle on node n, or -1; and its binding. */
int nodes_handle_job(const struct node *n, uint32_t handle);
void nodes_handle_set(struct node *n, uint32_t handle, int job);
void nodes_free(struct ctld *d);

/* outbox.c: what is to be sent at the end of the loop turn */
void outbox_push(struct outbox *o, const struct pctl_msg *m);
void outbox_free(struct outbox *o);
/* A CONSTRAINT for node: the reservation (period, slice) when nwin is 0, else the windows. */
void outbox_constraint(struct node *n, const char *job, uint64_t gen, mono_ns period, mono_ns slice,
                       uint8_t nwin, const struct vsp_resv *win);
/* Queues an encoded reply to admin client cid (ids longer than CTLD_ID_MAX are dropped). */
void outbox_reply(struct ctld *d, const uint8_t *cid, size_t cidlen, const struct padm_reply *r);
/* A reply with a status and a one-line reason (made printable: it may come from an agent). */
void outbox_status(struct ctld *d, const uint8_t *cid, size_t cidlen, int32_t status,
                   const char *reason);
void outbox_replies_free(struct ctld *d);

/* txn.c: the transaction engine (apply, then roll back) */
uint64_t txn_next_gen(struct ctld *d);
/* "period P slice S" for logs and reasons. */
void txn_fmt_resv(mono_ns period, mono_ns slice, char *buf, size_t len);
/*
 * Opens a transaction (kind and what to restore taken from tpl; client cid if any) for
 * (period, slice), or tpl's windows when tpl->nwin > 0, on every up node of the job.
 * Returns 1 when it is open (the outcome, and the client's reply, come with the
 * acknowledgements), 0 when it was committed at once (no node to ask, or nothing changes
 * on the nodes; the client, if any, is the caller's to answer).
 */
int txn_start(struct ctld *d, struct job *jb, const struct txn *tpl, mono_ns period, mono_ns slice,
              const uint8_t *cid, size_t cidlen, mono_ns now);
/* Coschedule: pushes the job's planned windows as a transaction (kind and what to restore
 * from tpl, NULL: TXN_PLAN). As txn_start; -1 when a transaction is open or the job is
 * not in the plan (nothing done). */
int txn_push_plan(struct ctld *d, int j, const struct txn *tpl, const uint8_t *cid, size_t cidlen,
                  mono_ns now);
/* Sends the committed constraint to a node that hosts ranks but has not got it. */
void txn_push_committed(struct ctld *d, struct job *jb, int node);
void txn_on_ack(struct ctld *d, int node, const struct pctl_constraint_ack *a, mono_ns now);
/* A CONSTRAINT (job, gen) could not be sent to node: counts as its refusal. */
void txn_unreachable(struct ctld *d, int node, const char *job, uint64_t gen, mono_ns now);
/* Node went away: its pending acknowledgements are void; with finish, transactions that
 * no longer wait for anyone end now (else at the next txn_tick). */
void txn_node_gone(struct ctld *d, int node, bool finish, mono_ns now);
/* Acknowledgement timeouts, and transactions that no longer wait for anyone. */
void txn_tick(struct ctld *d, mono_ns now);
/* The earliest acknowledgement deadline; 0: none. */
mono_ns txn_next(const struct ctld *d);

/* reports.c: the agents' reports */
void reports_proc(struct ctld *d, int node, const struct pctl_job_proc *p, mono_ns now);
void reports_rate(struct ctld *d, int node, const struct pctl_rate *r, mono_ns now);
void reports_bw(struct ctld *d, int node, const struct pctl_bw *b, mono_ns now);
void reports_stats(struct ctld *d, int node, const struct pctl_task_stats *s, mono_ns now);

/* decide.c: the control library's decisions carried out */
/* A decision: a transaction when it changed and is a real reservation (U < 1), in
 * coschedule mode a new U and granularity for the plan. Nothing while a transaction is open. */
void decide_apply(struct ctld *d, struct job *jb, const struct control_decision *dec, mono_ns now);
/* The committed constraint differs from the control library's: bring the nodes to it. */
void decide_sync(struct ctld *d, struct job *jb, mono_ns now);

/* capacity.c: the nodes' period floors and the U floating jobs may hold */
/* A rank's task statistics (periods served, misses): the node's floor rises when its
 * vsched cannot serve a period with < 1 % misses; the job floors that depend on it move. */
void capacity_stats(struct ctld *d, int node, struct rank *rk, const struct vsp_task_stat *st,
                    mono_ns now);
/* Lifts the admission caps of floating jobs that are due to try again, and gives back the
 * U jobs borrowed beyond their target when a job below its target needs it. */
void capacity_tick(struct ctld *d, mono_ns now);
/* When capacity_tick next has something to do; 0: nothing. */
mono_ns capacity_next(const struct ctld *d);
/* Floating jobs none of whose ranks has reported for long, since their constraint was decided:
 * a U below the target goes to the target (control_on_silence()), once per constraint. */
void silence_tick(struct ctld *d, mono_ns now);
/* When silence_tick next has something to do; 0: nothing. */
mono_ns silence_next(const struct ctld *d);
/* vsched's figures for node (NODE_INFO). Its self-test: its finest period with < 1 % misses
 * replaces the node's last one; the node's floor is the larger of it and the miss floor; the
 * job floors that depend on it move. Its per-CPU admission cap replaces the node's (0: not
 * known, CTLD_CAP_DEFAULT_PPM is planned); a new one makes the co-scheduling plan again. */
void capacity_node_info(struct ctld *d, int node, const struct pctl_node_info *info, mono_ns now);
/* The job's loop takes the floor of its nodes (the largest): after a floor moved, or a rank
 * joined a node with a floor. */
void capacity_sync_floor(struct ctld *d, struct job *jb, mono_ns now);
/* The period floor of job jb's nodes (0: none). */
mono_ns capacity_job_floor(const struct ctld *d, const struct job *jb);

/* jobbw.c: per-process bandwidth of jobs and their class */
/* A rank's BW report: keeps the sample for the bw_window average. */
void jobbw_sample(struct rank *rk, uint64_t mem, bool mem_ok, uint64_t net, mono_ns now);
/* Per-process averages of a job over bw_window (NAN when no report; mem NAN also when no
 * report had a memory source). */
void jobbw_average(const struct ctld *d, const struct job *jb, mono_ns now, double *mem,
                   double *net);
/* Class of the job (enum padm_class): averaged over bw_window with the co-scheduling
 * capacities when averaged, else from the ranks' last reports and the nodes' M. */
uint8_t jobbw_class(const struct ctld *d, const struct job *jb, bool averaged, mono_ns now);

/* change.c: changes an administrator asks for */
/* SET_RATE. Returns 1 when the reply is deferred to the end of the transaction (the
 * client id is kept), else the status (0 or -errno) with the reason or outcome in why. */
int change_target(struct ctld *d, int j, double pct, const uint8_t *cid, size_t cidlen, mono_ns now,
                  char *why, size_t whylen);
/* JOB_SET; returns as change_target. */
int change_settings(struct ctld *d, int j, const struct padm_request *q, const uint8_t *cid,
                    size_t cidlen, mono_ns now, char *why, size_t whylen);

/* listing.c: listings and the dashboard */
/* Records for the dashboard / listings. The caller releases with padm_reply_release. */
void listing_fill(const struct ctld *d, struct padm_reply *r, bool jobs, bool nodes, int ranks_of,
                  mono_ns now);
/* One dashboard frame on f (vsched-controller -d). */
void listing_dashboard(const struct ctld *d, FILE *f, mono_ns now);

/* cospush.c: a plan's windows to the nodes in an order in which every step fits */
/*
 * Pushes the windows of the jobs marked in due[] (one per job; cleared for the jobs held
 * back, below): first, per node, the
 * intermediate windows that make room (shrink, park: see cospush.c), then every due job's
 * planned windows as its transaction, the job `target` (-1: none) with tpl and client cid.
 * A due job that would take a slot from a job that moves without it (its transaction is
 * open, or its push waits for a retry) is not pushed: it stays due for a later tick.
 * Returns txn_push_plan's result for target, -EAGAIN when target waits so, -1 when target
 * is -1 or not pushed otherwise; another job whose push fails is tried again
 * CTLD_PUSH_RETRY later.
 */
int cospush_plan(struct ctld *d, bool *due, int target, const struct txn *tpl, const uint8_t *cid,
                 size_t cidlen, mono_ns now);

/* cosched.c: co-scheduling mode (docs/coschedule.md) */
/* Picks the cluster epoch (wall clock now rounded down to a frame). */
void cosched_init(struct ctld *d);
void cosched_free(struct ctld *d);
/* Re-plans now (whatever dirty says); the jobs whose windows changed are due for a push. */
void cosched_replan(struct ctld *d, mono_ns now);
/*
 * The plan's windows to the nodes (cospush_plan): every job due for a push, and job j
 * (-1: none) now whatever its retry time, with tpl and client cid. Returns as
 * cospush_plan for j.
 */
int cosched_push(struct ctld *d, int j, const struct txn *tpl, const uint8_t *cid, size_t cidlen,
                 mono_ns now);
/*
 * Whether the plan has room for job j at target pct (U = pct): a trial plan, nothing
 * changes. 0 when j would get its target's slots and no other job that has its share now
 * would get fewer than its own target needs, or when j cannot be planned yet (R_max being
 * measured, no ranks); else -ENOSPC with why ("no room: ...").
 */
int cosched_room(struct ctld *d, int j, double pct, mono_ns now, char *why, size_t whylen);
/* Timer: classes, plan when dirty, pushes the windows that are due. */
void cosched_tick(struct ctld *d, mono_ns now);
/* When cosched_tick next has something to do. */
mono_ns cosched_next(const struct ctld *d);
/* A control decision of a job in coschedule mode: its U and granularity are the plan's. */
void cosched_decided(struct ctld *d, struct job *jb);
/* The plan gives the job the U its loop decided, and those windows are in force on the
 * nodes (reports measure them); false while the plan or the push is pending. */
bool cosched_in_force(const struct ctld *d, const struct job *jb);

/* state.c: the state file format, a pure load/save pair */
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

/* persist.c: the daemon's state on disk (group commit) */
/* Saves the daemon's jobs now. Returns 0 or -1 (logged; state_dirty stays set). */
int persist_save(struct ctld *d);
/* The persisted state changed (a committed target or settings, a measured R_max): it is
 * written at the end of this loop turn, before any admin reply is sent. */
void persist_mark(struct ctld *d);
/* The group commit, once per loop turn: writes the state when dirty (see persist.c for
 * the durability contract). Returns 0 (written or nothing to write) or -1 (logged). */
int persist_commit(struct ctld *d, mono_ns now);
/* When a failed write is retried; 0: nothing to retry. */
mono_ns persist_next(const struct ctld *d);
/* Loads the state file into the daemon. Returns 0 or -1 with why. */
int persist_restore(struct ctld *d, mono_ns now, char *why, size_t whylen);

/* agents.c: the agents' socket */
int agents_open(struct ctld *d);
void agents_close(struct ctld *d);
/* Reads and handles the messages waiting on the agents' socket (a bounded number). */
void agents_recv(struct ctld *d, mono_ns now);
/* Sends every node's outbox, in order; a CONSTRAINT that cannot be sent is the node's
 * refusal (txn_unreachable). Never blocks. */
void agents_flush(struct ctld *d, mono_ns now);

/* admin.c: the administrators' socket */
int admin_open(struct ctld *d);
void admin_close(struct ctld *d);
/* Reads and handles the requests waiting (a bounded number); replies are queued. */
void admin_recv(struct ctld *d, mono_ns now);
/* Sends the queued replies, in order. Never blocks. */
void admin_flush(struct ctld *d);

/* auth.c: who may connect, and what each key may do (docs/security.md) */
/* The controller's key and the allow-lists (when curve_key is set), admin_group. 0 or -1
 * with why; on failure nothing is held. */
int auth_load(struct auth *a, const struct ctld_config *c, char *why, size_t whylen);
void auth_free(struct auth *a);
/* SIGHUP: the allow-lists read again; on error the previous ones stay (logged). */
void auth_reload(struct ctld *d);
const struct auth_key *auth_find(const struct auth *a, const char *pub);
/* Binds the ZAP handler (before any other socket binds). 0 or -1 (logged). */
int auth_open(struct ctld *d);
/* Stops the monitors of the watched sockets (their pending events read first) and closes
 * their PAIR sockets; call it before those sockets close. libzmq 4.3 sends a monitor event
 * with a blocking send: with the PAIR closed and the monitor still on, an event would block
 * the I/O thread for ever, and zmq_ctx_term with it. Idempotent. */
void auth_unwatch(struct ctld *d);
/* auth_unwatch, then closes the ZAP handler and frees the allow-lists. */
void auth_close(struct ctld *d);
/* Sets the security options of sock (domain AUTH_DOMAIN_*) before it binds endpoint and
 * watches its failed handshakes; *secured: its connections are authenticated. 0 or -1
 * (logged). */
int auth_secure(struct ctld *d, void *sock, const char *domain, const char *endpoint,
                bool *secured);
/* The ZAP handler's decision (see auth.c): 200 (user set) or 400 (why set). */
int auth_decide(struct auth *a, const char *domain, const char *address, const char *mech,
                const uint8_t *cred, size_t credlen, char *user, size_t ulen, char *why,
                size_t whylen);
/* Role of the connection a received message m came by (*name: node or admin key name);
 * secured: the socket authenticates (else AUTH_OPEN). */
uint8_t auth_role(const struct auth *a, bool secured, zmq_msg_t *m, const char **name);
/* Reads monitor k (0: agents, 1: admin): each failed handshake counted, logged at most once
 * a minute per endpoint. */
void auth_monitor_recv(struct ctld *d, int k, mono_ns now);
/* Answers the waiting ZAP requests. */
void auth_zap_recv(struct ctld *d, mono_ns now);

/* loop.c: the event loop */
/* Timers of one loop turn (node liveness, acknowledgement timeouts, the planner). */
void loop_timers(struct ctld *d, mono_ns now);
/* End of a loop turn: the node outboxes, then the state file (persist_commit), then the
 * admin replies that may tell of it (durability contract: persist.c). */
void loop_end_turn(struct ctld *d, mono_ns now);
/* The earliest deadline of every timer, 0: none; the loop sleeps until then (or until a
 * message comes). */
mono_ns loop_next_deadline(const struct ctld *d);
/* Polls and runs turns until *quit is set (by a signal handler); *reload set (SIGHUP):
 * the allow-lists are read again. wakefd: sig_wake_fd(), readable once a handler ran
 * (sigutil.h); the loop drains it. Returns within one turn of a signal that sets *quit. */
void loop_run(struct ctld *d, const volatile sig_atomic_t *quit, volatile sig_atomic_t *reload,
              int wakefd);

#endif
