/*
 * The protocol between vsched-agent (one per node, ZeroMQ DEALER) and vsched-controller
 * (ZeroMQ ROUTER over TCP), defined once here for both sides (DESIGN.md §1, §4, §5).
 *
 * Wire format: one ZeroMQ frame per message, little-endian, fixed layout, no padding,
 * encoded field by field (never a struct memcpy). Every frame starts with a 4-byte header:
 *   u8 magic 'C', u8 version PCTL_VERSION, u8 type, u8 reserved (0)
 * Strings are a u8 length followed by that many bytes, no NUL. Names (node, job) are
 * 1..PCTL_NAME_MAX bytes of printable ASCII without blanks; reasons are 0..PCTL_REASON_MAX
 * printable bytes. A frame whose length is not exactly what its type and counts need is
 * refused.
 *
 * Agent -> controller (body after the header):
 *   NODE_HELLO  u16 proto_version, u16 ncpus, u64 mem_capacity B/s (0: unknown),
 *               u64 net_capacity B/s (0: unknown), u64 instance (random per agent start),
 *               str node                                                    (33 + n bytes)
 *   HEARTBEAT   u64 seq, u64 sent_ns (sender's CLOCK_MONOTONIC), u32 nprocs     (24 bytes)
 *   JOB_PROC    u32 job (agent's handle), u32 rank, i32 pid, u8 event, str job  (18 + n)
 *   RATE        u32 job, u32 rank, u32 seq, u64 units, u64 interval_ns     (32 bytes, the
 *               whole per-iteration feedback: the DESIGN.md §8 target is <= 32 bytes)
 *   BW          u64 window_ns, u64 node_rx B/s, u64 node_tx B/s, u8 node_src, u16 n,
 *               n * { u32 job, u32 rank, i32 pid, u64 mem B/s, u64 net_tx B/s,
 *                     u64 net_rx B/s, u8 mem_src, u8 net_src }           (31 + 38 n bytes)
 *   TASK_STATS  u16 n, n * { u32 job, u32 rank, u64 gen, i32 pid, i32 cpu, u8 park,
 *               u32 nthreads, u64 period, slice, deadline, phase, u64 managed_ns, periods,
 *               cpu_ns, misses, lateness_total_ns, lateness_max_ns }     (6 + 109 n bytes)
 *   CONSTRAINT_ACK u64 gen, i32 status (0 or -errno), str job, str reason  (18 + n + m)
 *   NODE_INFO   u64 min_period_ns, u8 selftest (enum vsp_selftest), u32 cap_ppm: vsched's
 *               self-test, the finest period it serves with < 1 % misses (0: unknown; only
 *               with DONE, at most PCTL_MIN_PERIOD_MAX), and its effective per-CPU admission
 *               cap in parts per million (0: unknown; at most PCTL_CAP_PPM_MAX); sent after
 *               registering and when they change                            (17 bytes)
 *               A 13-byte frame (without cap_ppm: an agent from before the field) is
 *               accepted with cap_ppm 0, so that an older agent's self-test figure still
 *               counts while the controller uses its default cap; any other length is
 *               refused.
 * Controller -> agent:
 *   HELLO_ACK   i32 status (0: registered; < 0: refused, send NODE_HELLO again later),
 *               u32 heartbeat_ms (0: keep the agent's own), u64 ctl_instance,
 *               str reason                                                  (21 + n bytes)
 *   HEARTBEAT   as above (the controller echoes the agent's seq and sent_ns)
 *   CONSTRAINT  u64 gen, u8 nwin, nwin * { u64 period, u64 slice, u64 deadline (0: =
 *               period), u64 phase }, str job                     (14 + 32 nwin + n bytes)
 *               nwin 1..PCTL_MAX_WINDOWS windows checked by vsp_check_windows: one
 *               reservation, or the disjoint windows of a co-scheduling frame
 *   EPOCH       u64 epoch as CLOCK_REALTIME ns: the cluster's release anchor; the agent
 *               gives it to vsched (VSP_EPOCH) so that phases line up across nodes (8 bytes)
 *
 * Jobs: the agent gives every job it sees a u32 handle (stable while the agent runs) and
 * announces (handle, name) in JOB_PROC, so that RATE stays 32 bytes. The controller
 * addresses jobs by name in CONSTRAINT. A CONSTRAINT applies to every process of the job on
 * the node or to none ("never half-applied"); the agent answers CONSTRAINT_ACK with the
 * same gen. Generations increase per job within one controller instance (HELLO_ACK
 * ctl_instance); an older one is refused (-ESTALE), and when the instance changes the agent
 * accepts generations from the start again. A controller that gets anything but NODE_HELLO
 * from a peer it does not know
 * answers HELLO_ACK with status -ENOENT, and the agent registers again.
 */
#ifndef VSCHED_PROTO_CTL_H
#define VSCHED_PROTO_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto_vsched.h"
#include "text.h"

#define PCTL_MAGIC            'C'
#define PCTL_VERSION          2
#define PCTL_NAME_MAX         TEXT_NAME_MAX   /* node and job names: text_name_ok() */
#define PCTL_REASON_MAX       200             /* refusal reasons, bytes */
#define PCTL_MAX_ENTRIES      1024            /* BW and TASK_STATS records per message */
#define PCTL_MAX_WINDOWS      VSP_MAX_WINDOWS /* reservations in one CONSTRAINT */
#define PCTL_HDR              4
#define PCTL_RATE_WIRE        32
#define PCTL_BW_ENTRY_WIRE    38
#define PCTL_STATS_ENTRY_WIRE 109
#define PCTL_MIN_PERIOD_MAX   (10ull * 1000000000ull) /* NODE_INFO's largest min_period_ns */
#define PCTL_CAP_PPM_MAX      1000000u /* NODE_INFO's largest cap_ppm: the whole CPU */
#define PCTL_MAX_FRAME        (PCTL_HDR + 2 + PCTL_MAX_ENTRIES * PCTL_STATS_ENTRY_WIRE)

enum pctl_type {
	/* agent -> controller */
	PCTL_NODE_HELLO = 1,
	PCTL_HEARTBEAT = 2, /* both directions */
	PCTL_JOB_PROC = 3,
	PCTL_RATE = 4,
	PCTL_BW = 5,
	PCTL_TASK_STATS = 6,
	PCTL_CONSTRAINT_ACK = 7,
	PCTL_NODE_INFO = 8,
	/* controller -> agent */
	PCTL_HELLO_ACK = 0x41,
	PCTL_CONSTRAINT = 0x42,
	PCTL_EPOCH = 0x43,
};

/* Where a bandwidth figure comes from (DESIGN.md §4). */
enum pctl_src {
	PCTL_SRC_NONE = 0,       /* unavailable */
	PCTL_SRC_PMU = 1,        /* perf_event_open cache misses x line size */
	PCTL_SRC_RESCTRL = 2,    /* resctrl MBM mbm_total_bytes */
	PCTL_SRC_SOCKDIAG = 3,   /* netlink sock_diag tcp_info byte counters */
	PCTL_SRC_APP = 4,        /* bytes the application reported through libapprate */
	PCTL_SRC_PROCNETDEV = 5, /* node totals from /proc/net/dev */
	PCTL_SRC_MAX = 5,
};

enum pctl_proc_event {
	PCTL_PROC_JOINED = 1, /* a rank registered (or is re-announced after a reconnect) */
	PCTL_PROC_LEFT = 2,   /* the process exited or was released */
};

struct pctl_hello {
	uint16_t proto_version;
	uint16_t ncpus;
	uint64_t mem_capacity; /* bytes/s, 0 = unknown */
	uint64_t net_capacity; /* bytes/s, 0 = unknown */
	uint64_t instance;
	char node[PCTL_NAME_MAX + 1];
};

struct pctl_hello_ack {
	int32_t status;
	uint32_t heartbeat_ms;
	uint64_t ctl_instance;
	char reason[PCTL_REASON_MAX + 1];
};

struct pctl_heartbeat {
	uint64_t seq;
	uint64_t sent_ns;
	uint32_t nprocs;
};

struct pctl_job_proc {
	uint32_t job;
	uint32_t rank;
	int32_t pid;
	uint8_t event; /* enum pctl_proc_event */
	char name[PCTL_NAME_MAX + 1];
};

struct pctl_rate {
	uint32_t job;
	uint32_t rank;
	uint32_t seq;
	uint64_t units;
	uint64_t interval_ns;
};

struct pctl_bw_entry {
	uint32_t job;
	uint32_t rank;
	int32_t pid;
	uint64_t mem_bps;
	uint64_t net_tx_bps;
	uint64_t net_rx_bps;
	uint8_t mem_src; /* enum pctl_src */
	uint8_t net_src;
};

struct pctl_bw {
	uint64_t window_ns;
	uint64_t node_rx_bps;
	uint64_t node_tx_bps;
	uint8_t node_src;
	uint16_t n;
	struct pctl_bw_entry *e; /* n entries; see pctl_msg_release */
};

struct pctl_stats_entry {
	uint32_t job;
	uint32_t rank;
	uint64_t gen; /* generation of the constraint in force (0: provisional) */
	struct vsp_task_stat st;
};

struct pctl_task_stats {
	uint16_t n;
	struct pctl_stats_entry *e; /* n entries; see pctl_msg_release */
};

struct pctl_constraint {
	uint64_t gen;
	uint8_t nwin;                          /* 1..PCTL_MAX_WINDOWS */
	struct vsp_resv win[PCTL_MAX_WINDOWS]; /* vsp_check_windows() after deadline 0 -> period */
	char job[PCTL_NAME_MAX + 1];
};

struct pctl_epoch {
	uint64_t realtime_ns; /* > 0 */
};

struct pctl_constraint_ack {
	uint64_t gen;
	int32_t status;
	char job[PCTL_NAME_MAX + 1];
	char reason[PCTL_REASON_MAX + 1];
};

struct pctl_node_info {
	uint64_t min_period_ns; /* finest period with < 1 % misses, 0: unknown */
	uint8_t selftest;       /* enum vsp_selftest */
	uint32_t cap_ppm;       /* vsched's effective per-CPU admission cap, ppm; 0: unknown */
};

struct pctl_msg {
	uint8_t type; /* enum pctl_type */
	union {
		struct pctl_hello hello;
		struct pctl_hello_ack hello_ack;
		struct pctl_heartbeat hb;
		struct pctl_job_proc proc;
		struct pctl_rate rate;
		struct pctl_bw bw;
		struct pctl_task_stats stats;
		struct pctl_constraint cons;
		struct pctl_constraint_ack cack;
		struct pctl_epoch epoch;
		struct pctl_node_info info;
	} u;
};

/*
 * Exact frame length of m, or -EINVAL when m cannot be encoded (unknown type, bad string,
 * too many entries).
 */
int pctl_size(const struct pctl_msg *m);
/*
 * Encodes m into buf. Returns the frame length, -ENOBUFS when cap is too small, or -EINVAL
 * (as pctl_size, plus field ranges the decoder would refuse). Nothing is allocated.
 */
int pctl_encode(const struct pctl_msg *m, uint8_t *buf, size_t cap);
/*
 * Decodes and validates a frame: magic, version, type, exact length, strings, enum and
 * reservation ranges. Returns 0; -EBADMSG (short, long, bad magic, bad field), -EPROTO
 * (other version) or -ENOMSG (unknown type), with a one-line reason in why. On success BW
 * and TASK_STATS entries are allocated (release with pctl_msg_release); on error nothing
 * is allocated and m->type is 0.
 */
int pctl_decode(const uint8_t *buf, size_t len, struct pctl_msg *m, char *why, size_t whylen);
/*
 * For a CONSTRAINT frame pctl_decode refused with -EINVAL (a reservation out of range):
 * reads its generation and job name, so that the agent can refuse it by name in a
 * CONSTRAINT_ACK. Returns 0, or -EBADMSG when the frame is not such a frame.
 */
int pctl_peek_constraint(const uint8_t *buf, size_t len, uint64_t *gen,
                         char job[PCTL_NAME_MAX + 1]);
/* Frees what pctl_decode allocated; m stays valid for another decode. Accepts NULL. */
void pctl_msg_release(struct pctl_msg *m);

/* True for types the agent sends / the controller sends (HEARTBEAT: both). */
bool pctl_from_agent(uint8_t type);
bool pctl_from_controller(uint8_t type);
/* "node_hello", ..., "unknown" */
const char *pctl_type_name(uint8_t type);
/* "none", "pmu", "resctrl", "sockdiag", "app", "procnetdev", "?" */
const char *pctl_src_name(uint8_t src);

#endif
