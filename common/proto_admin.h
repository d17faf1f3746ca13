/*
 * The admin protocol between vschedctl (ZeroMQ REQ) and vsched-controller (ZeroMQ ROUTER on
 * its admin endpoint), defined once here for both sides (DESIGN.md §5.3, §6).
 *
 * Wire format: one ZeroMQ frame per message, little-endian, no padding, encoded field by
 * field (never a struct memcpy). Every frame starts with a 4-byte header:
 *   u8 magic 'A', u8 version PADM_VERSION, u8 type, u8 reserved (0)
 * Strings are a u8 length followed by that many bytes, no NUL: names (job, node) are
 * 1..PADM_NAME_MAX printable non-blank ASCII bytes, reasons 0..PADM_REASON_MAX printable
 * bytes. f64 is an IEEE 754 double sent as its u64 bit pattern; NaN means "not known yet",
 * infinities are refused. Percentages in requests are i32 thousandths of a percent
 * (40 % = 40000), so that a client can pass any number it was given and the controller
 * refuses it with its own reason.
 *
 * Requests (body after the header):
 *   JOB_LIST   (empty)                                  jobs, no ranks
 *   NODE_LIST  (empty)                                  nodes
 *   STATUS     (empty)                                  jobs and nodes (the dashboard)
 *   JOB_SHOW   str job                                  one job, its ranks
 *   SET_RATE   str job, i32 target_milli                the job's target, % of R_max
 *   JOB_SET    str job, u16 mask, u8 algo, u8 agg, i32 eps_milli, f64 r_max,
 *              u64 delta_period, u64 min_period, u64 min_slice, u64 initial_period,
 *              i32 u_max_milli
 *              (only the fields whose PADM_SET_* bit is in mask are changed; r_max 0 =
 *              calibrate again)
 * Reply (REPLY), to every request:
 *   i32 status (0 or -errno), str reason (one line; on success a confirmation),
 *   u16 njobs,  njobs  * job record,
 *   u16 nnodes, nnodes * node record,
 *   u16 nranks, nranks * rank record          (records: see struct padm_job/node/rank;
 *                                              wire order = declaration order)
 *   plan: u8 flags (PADM_PF_*), u16 frame_slots, u16 slots, u64 slot_ns, u32 need, u32 got,
 *         u8 nwin, nwin * {u64 period, slice, deadline, phase},
 *   u16 nslots, nslots * {u16 slot, str node, str job}
 *   (the co-scheduling plan of the job of a JOB_SHOW in coschedule mode, all zero
 *   otherwise: its windows, checked as vsp_check_windows does, and every job that runs in
 *   each slot of the sub-frame it holds, on each node it spans: itself and its co-runners)
 * A frame that is not exactly as long as its type and contents need is refused.
 */
#ifndef VSCHED_PROTO_ADMIN_H
#define VSCHED_PROTO_ADMIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "text.h"

/* Versions: 5 node cap; 4 node floor, drops; 3 floating U (u_max, U, eff, need). */
#define PADM_MAGIC       'A'
#define PADM_VERSION     5
#define PADM_NAME_MAX    TEXT_NAME_MAX /* job and node names: text_name_ok() */
#define PADM_REASON_MAX  200           /* reasons, bytes */
#define PADM_MAX_RECORDS 8192          /* of each kind in a reply */
#define PADM_HDR         4
#define PADM_MAX_REQUEST 128 /* largest request frame */

enum padm_type {
	PADM_JOB_LIST = 1,
	PADM_NODE_LIST = 2,
	PADM_STATUS = 3,
	PADM_JOB_SHOW = 4,
	PADM_SET_RATE = 5,
	PADM_JOB_SET = 6,
	PADM_REPLY = 0x80,
};

/* Job states on the dashboard (DESIGN.md §5.3; control.h enum control_state + idle). */
enum padm_state {
	PADM_ST_IDLE = 0, /* no target: not constrained by the controller */
	PADM_ST_CALIBRATING = 1,
	PADM_ST_CONVERGING = 2,
	PADM_ST_STABLE = 3,
	PADM_ST_OSCILLATING = 4,
	PADM_ST_REJECTED = 5,
	PADM_ST_MAX = 5,
};

enum padm_algo {
	PADM_ALGO_LINEAR = 0, /* paper 004 Sect. 4 */
	PADM_ALGO_ADAPTIVE = 1,
	PADM_ALGO_FLOATING = 2, /* U controlled (the default) */
	PADM_ALGO_MAX = 2,
};

enum padm_agg {
	PADM_AGG_SLOWEST = 0,
	PADM_AGG_MEAN = 1,
	PADM_AGG_MAX = 1,
};

enum padm_class {
	PADM_CLASS_UNKNOWN = 0,
	PADM_CLASS_TURTLE = 1,
	PADM_CLASS_SEMIDEVIL = 2,
	PADM_CLASS_DEVIL = 3,
	PADM_CLASS_MAX = 3,
};

/* padm_job.flags */
#define PADM_JF_RMAX_KNOWN 0x01 /* r_max is known (given or measured) */
#define PADM_JF_RMAX_GIVEN 0x02 /* r_max was given by the administrator */
#define PADM_JF_PENDING    0x04 /* a constraint change is being applied */
#define PADM_JF_NO_SIGNAL  0x08 /* ranks registered, none has reported progress yet */
#define PADM_JF_ALL        0x0f

/* JOB_SET mask */
#define PADM_SET_ALGO           0x0001
#define PADM_SET_AGG            0x0002
#define PADM_SET_EPS            0x0004
#define PADM_SET_RMAX           0x0008
#define PADM_SET_DELTA_PERIOD   0x0010
#define PADM_SET_MIN_PERIOD     0x0020
#define PADM_SET_MIN_SLICE      0x0040
#define PADM_SET_INITIAL_PERIOD 0x0080
#define PADM_SET_U_MAX          0x0100
#define PADM_SET_ALL            0x01ff

/* padm_plan.flags */
#define PADM_PF_ON         0x01 /* the controller runs in coschedule mode */
#define PADM_PF_PLANNED    0x02 /* the job is in the plan */
#define PADM_PF_COLOURABLE 0x04 /* every node of the plan can pin its slots to CPUs */
#define PADM_PF_MERGED     0x08 /* the job's windows were merged to fit 8 */
#define PADM_PF_COMPLETE   0x10 /* every job of the plan got its share */
#define PADM_PF_ALL        0x1f
#define PADM_MAX_WINDOWS   8

struct padm_window {
	uint64_t period, slice, deadline, phase; /* ns */
};

struct padm_plan {
	uint8_t flags;        /* PADM_PF_* */
	uint16_t frame_slots; /* T / q */
	uint16_t slots;       /* per sub-frame: frame_slots / windows-sets per frame */
	uint64_t slot_ns;     /* q */
	uint32_t need, got;   /* slots per sub-frame the job needs, got */
	uint8_t nwin;
	struct padm_window win[PADM_MAX_WINDOWS]; /* the planned windows, period = sub-frame */
};
#define PADM_PLAN_FIXED (1 + 2 + 2 + 8 + 4 + 4 + 1)

/* "job runs in slot on node" */
struct padm_slot {
	uint16_t slot; /* < plan.slots */
	char node[PADM_NAME_MAX + 1];
	char job[PADM_NAME_MAX + 1];
};
#define PADM_SLOT_FIXED 2

struct padm_request {
	uint8_t type; /* enum padm_type */
	char job[PADM_NAME_MAX + 1];
	int32_t target_milli; /* SET_RATE */
	/* JOB_SET */
	uint16_t mask;
	uint8_t algo, agg;
	int32_t eps_milli;
	double r_max;
	uint64_t delta_period, min_period, min_slice, initial_period;
	int32_t u_max_milli; /* the most U the job may hold, thousandths of a percent */
};

struct padm_job {
	char name[PADM_NAME_MAX + 1];
	uint8_t state; /* enum padm_state */
	uint8_t algo;  /* enum padm_algo */
	uint8_t agg;   /* enum padm_agg */
	uint8_t flags; /* PADM_JF_* */
	uint8_t klass; /* enum padm_class */
	uint32_t nranks;
	uint16_t nnodes;
	int32_t target_milli; /* 0: no target */
	double current_pct;   /* job rate, % of R_max (NaN: none yet) */
	double err_pct;       /* current - target, points (NaN: none yet) */
	double r_max;         /* units/s (0: unknown) */
	double eps_pct;
	uint64_t period, slice; /* constraint in force (0: none) */
	uint64_t delta_period, min_period, min_slice, initial_period;
	uint64_t gen;     /* generation of the constraint in force */
	uint64_t mem_bps; /* sum over ranks, bytes/s */
	uint64_t net_bps;
	uint64_t misses;                  /* deadline misses, sum over ranks */
	uint64_t evaluations;             /* control iterations */
	uint64_t changes;                 /* constraint changes */
	double u_pct;                     /* U = slice/period of the constraint in force (NaN) */
	double eff;                       /* efficiency: current_pct / u_pct (NaN: not known) */
	double need_u_pct;                /* unreachable: the U the target needs (NaN: reachable) */
	double u_max_pct;                 /* the most U the job may hold */
	uint64_t floor;                   /* the period floor of its nodes, ns (0: none) */
	char reason[PADM_REASON_MAX + 1]; /* why rejected or not on target, or the last event */
};
#define PADM_JOB_FIXED (5 + 4 + 2 + 4 + 4 * 8 + 6 * 8 + 6 * 8 + 4 * 8 + 8)

struct padm_node {
	char name[PADM_NAME_MAX + 1];
	uint8_t up;
	uint16_t ncpus;
	uint32_t nprocs;
	uint16_t njobs;
	double sum_u;               /* sum of the reservations' utilisations on the node (CPUs) */
	uint64_t mem_used, mem_cap; /* bytes/s; cap 0 = unknown */
	uint64_t net_used, net_cap;
	uint8_t mem_src, net_src; /* enum pctl_src */
	uint64_t hb_age_ms;       /* since the last message; UINT64_MAX: never */
	uint64_t floor;           /* the finest period the controller asks of it, ns (0: none) */
	uint64_t dropped;         /* its messages over agent_msg_rate, dropped */
	uint32_t cap_ppm;         /* its vsched's per-CPU admission cap, ppm (<= 1e6); 0: not
	                           * reported yet */
};
#define PADM_NODE_FIXED (1 + 2 + 4 + 2 + 8 + 4 * 8 + 2 + 8 + 2 * 8 + 4)

struct padm_rank {
	char job[PADM_NAME_MAX + 1];
	char node[PADM_NAME_MAX + 1];
	uint32_t rank;
	int32_t pid;
	uint8_t up;                  /* its node is up */
	double rate;                 /* units/s of the last report (NaN: none) */
	uint64_t period, slice, gen; /* as reported by the node's task statistics */
	uint64_t misses;
	uint64_t mem_bps, net_bps;
};
#define PADM_RANK_FIXED (4 + 4 + 1 + 8 + 3 * 8 + 3 * 8)

struct padm_reply {
	int32_t status; /* 0 or -errno */
	char reason[PADM_REASON_MAX + 1];
	uint16_t njobs, nnodes, nranks;
	struct padm_job *jobs; /* see padm_reply_release */
	struct padm_node *nodes;
	struct padm_rank *ranks;
	struct padm_plan plan;
	uint16_t nslots;
	struct padm_slot *slots;
};

/*
 * Encoders return the frame length, -ENOBUFS when cap is too small, or -EINVAL when the
 * message could not be decoded (bad name, unknown type, too many records, out-of-range
 * enum). Nothing is allocated. padm_reply_size gives the exact length (or -EINVAL).
 */
int padm_encode_request(const struct padm_request *q, uint8_t *buf, size_t cap);
int padm_reply_size(const struct padm_reply *r);
int padm_encode_reply(const struct padm_reply *r, uint8_t *buf, size_t cap);

/*
 * Decoders check magic, version, reserved byte, type, every string and enum, and the exact
 * length. Return 0, or -EBADMSG / -EPROTO (other version) with a one-line reason in why.
 * Value ranges that are the controller's policy (target in (0, 100], known job) are not
 * checked here. On error nothing is allocated; on success padm_decode_reply allocates the
 * record arrays (release with padm_reply_release).
 */
int padm_decode_request(const uint8_t *buf, size_t len, struct padm_request *q, char *why,
                        size_t whylen);
int padm_decode_reply(const uint8_t *buf, size_t len, struct padm_reply *r, char *why,
                      size_t whylen);
/* Frees the record arrays and clears the counts. Accepts NULL. */
void padm_reply_release(struct padm_reply *r);

const char *padm_type_name(uint8_t type);
/* "idle", "calibrating", "converging", "stable", "oscillating", "rejected", "?" */
const char *padm_state_name(uint8_t state);
/* The names of enum padm_algo and enum padm_agg, by value, NULL-terminated: the one list
 * of them (config keys, state file, vschedctl, the control library). */
extern const char *const padm_algo_names[];
extern const char *const padm_agg_names[];
const char *padm_algo_name(uint8_t algo); /* "linear", "adaptive", "floating"; "?" out of range */
const char *padm_agg_name(uint8_t agg);   /* "slowest", "mean" */
const char *padm_class_name(uint8_t c);   /* "unknown", "turtle", "semidevil", "devil" */
/* Parses names as printed above. Return 0 or -EINVAL. */
int padm_algo_parse(const char *s, uint8_t *out);
int padm_agg_parse(const char *s, uint8_t *out);

#endif
