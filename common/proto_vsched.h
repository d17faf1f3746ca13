/*
 * The local API of vsched (one ZeroMQ REQ/REP exchange per request), defined once here for
 * the daemon, vschedctl and the agent.
 *
 * Wire format: little-endian, fixed layout, no padding, encoded field by field (never a
 * struct memcpy). Every frame starts with a 4-byte header:
 *   u8 magic 'V', u8 version VSP_VERSION, u8 type, u8 reserved (0)
 * Requests (body after the header); a window is
 *   { u64 period, u64 slice, u64 deadline (0: = period), u64 phase }        (32 bytes)
 *   ADD      i32 pid, i32 cpu (-1: placement rule), u8 park, u8 nwin, u8 anchor, u8 pad,
 *            nwin * window                                           (12 + 32 nwin bytes)
 *   SET      i32 pid, u8 nwin, u8 anchor, u8 pad[2], nwin * window    (8 + 32 nwin bytes)
 *   DEL      i32 pid                                                       (4 bytes)
 *   LIST     (empty)
 *   EPOCH    u64 epoch as CLOCK_REALTIME ns (0: now)                       (8 bytes)
 *   INFO     (empty): the node's figures, with the last self-test
 *   SELFTEST (empty): starts the self-test now (replies at once, with INFO's figures)
 * nwin is 1..VSP_MAX_WINDOWS: one reservation (as in version 1), or the disjoint windows
 * of one frame (vsp_check_windows). Version 2 added nwin (ADD: in the old first pad byte);
 * version 3 the anchor (enum vsp_anchor; wakeup only with one window), INFO, SELFTEST and
 * the reply's info block.
 * Reply (type VSP_REPLY):
 *   i32 status (0 or -errno), u16 msglen, msg bytes (no NUL, <= VSP_MSG_MAX),
 *   u32 ntasks, ntasks * task record: the fields of vsp_task_stat in declaration order
 *   up to lateness_max_ns with resv = window 1 (VSP_STAT_WIRE - 1 bytes), then u8 nwin
 *   (1..VSP_MAX_WINDOWS) and windows 2..nwin (32 bytes each),
 *   u8 ninfo (0 or 1), ninfo * node info: the fields of vsp_node_info in declaration order,
 *   probe[] always VSP_MAX_PROBES entries (VSP_INFO_WIRE bytes).
 * A frame whose length is not exactly what its type (and nwin) needs is refused (-EBADMSG).
 */
#ifndef VSCHED_PROTO_VSCHED_H
#define VSCHED_PROTO_VSCHED_H

#include <stddef.h>
#include <stdint.h>

#define VSP_MAGIC     'V'
#define VSP_VERSION   3
#define VSP_MSG_MAX   240
#define VSP_MAX_TASKS 4096 /* largest LIST reply */
#define VSP_MAX_FRAME 512  /* largest request frame accepted */

enum vsp_type {
	VSP_ADD = 1,
	VSP_SET = 2,
	VSP_DEL = 3,
	VSP_LIST = 4,
	VSP_EPOCH = 5,
	VSP_INFO = 6,
	VSP_SELFTEST = 7,
	VSP_REPLY = 0x80,
};

enum vsp_park {
	VSP_PARK_STOP = 0,    /* SIGSTOP/SIGCONT: strict, exact utilisation */
	VSP_PARK_IDLE = 1,    /* SCHED_IDLE: work-conserving */
	VSP_PARK_DEFAULT = 2, /* ADD only: the daemon's configured `park` policy */
};

/*
 * Where a reservation's jobs are released (DESIGN.md §2): on the epoch grid, or when the
 * task wakes up (CBS: budget and deadline start at the wake-up, at most slice per period).
 */
enum vsp_anchor {
	VSP_ANCHOR_EPOCH = 0,  /* epoch + phase + k * period (gang windows; the default) */
	VSP_ANCHOR_WAKEUP = 1, /* one window only */
};

/* A reservation: slice of CPU time in every [release, release + deadline), period apart. */
struct vsp_resv {
	uint64_t period;   /* ns, > 0 */
	uint64_t slice;    /* ns, 0 < slice <= deadline */
	uint64_t deadline; /* ns, <= period; 0 means = period */
	uint64_t phase;    /* ns, < period: first release at epoch + phase */
};

#define VSP_MAX_WINDOWS 8 /* reservations (windows) per task */
#define VSP_WIN_WIRE    32

struct vsp_request {
	uint8_t type; /* enum vsp_type */
	int32_t pid;
	int32_t cpu;    /* ADD only; -1 = placement rule */
	uint8_t park;   /* ADD only; enum vsp_park */
	uint8_t anchor; /* ADD, SET: enum vsp_anchor */
	/*
	 * ADD/SET: the reservation. nwin 0 means the one window `resv` (so a caller that only
	 * fills resv keeps working); nwin 1..VSP_MAX_WINDOWS means win[0, nwin) and resv is
	 * ignored by the encoder. The decoder always sets nwin >= 1, win[] and resv = win[0].
	 */
	struct vsp_resv resv;
	uint8_t nwin;
	struct vsp_resv win[VSP_MAX_WINDOWS];
	uint64_t epoch_realtime_ns; /* EPOCH only */
};

/* The windows of an ADD/SET request into out[VSP_MAX_WINDOWS]; returns their number. */
unsigned vsp_request_windows(const struct vsp_request *req, struct vsp_resv *out);

/* Per-task figures returned by LIST. Wire order = declaration order. */
struct vsp_task_stat {
	int32_t pid;
	int32_t cpu;
	uint8_t park;
	uint8_t anchor; /* enum vsp_anchor */
	uint32_t nthreads;
	struct vsp_resv resv;       /* window 1 (what version-1 clients knew) */
	uint64_t managed_ns;        /* wall time since the task was added */
	uint64_t periods;           /* jobs (periods) completed */
	uint64_t cpu_ns;            /* CPU time received under the reservation */
	uint64_t misses;            /* periods runnable throughout but short of the slice */
	uint64_t lateness_total_ns; /* sum over missed periods of the CPU still owed */
	uint64_t lateness_max_ns;
	uint8_t nwin;                         /* 1..VSP_MAX_WINDOWS (0 when encoding: 1) */
	struct vsp_resv win[VSP_MAX_WINDOWS]; /* win[0] = resv */
};
/* Smallest task record (one window) and largest (VSP_MAX_WINDOWS windows). */
#define VSP_STAT_WIRE     (4 + 4 + 1 + 1 + 4 + 4 * 8 + 6 * 8 + 1)
#define VSP_STAT_WIRE_MAX (VSP_STAT_WIRE + (VSP_MAX_WINDOWS - 1) * VSP_WIN_WIRE)

/* How `stop` parks on the node (vsp_node_info.stop_method). */
enum vsp_stop_method {
	VSP_STOP_SIGNAL = 0,     /* SIGSTOP/SIGCONT */
	VSP_STOP_FREEZER_V1 = 1, /* cgroup v1 freezer */
	VSP_STOP_FREEZER_V2 = 2, /* cgroup v2 cgroup.freeze */
};

/* State of the node's self-test (the finest period it serves with < 1 % misses). */
enum vsp_selftest {
	VSP_SELFTEST_NEVER = 0,
	VSP_SELFTEST_RUNNING = 1,
	VSP_SELFTEST_DONE = 2,
	VSP_SELFTEST_FAILED = 3, /* it could not run (no idle CPU, probe failed): see the log */
};

#define VSP_MAX_PROBES 8
struct vsp_probe {
	uint64_t period_ns; /* 0: unused entry */
	uint32_t jobs, misses;
};

/* The node's figures (INFO, SELFTEST). Wire order = declaration order. */
struct vsp_node_info {
	uint32_t ncpus;         /* managed CPUs */
	uint32_t cap_ppm;       /* effective per-CPU admission cap, parts per million */
	uint32_t ntasks;        /* tasks managed now */
	uint8_t stop_method;    /* enum vsp_stop_method */
	uint8_t perf;           /* 1: perf counters stop budgets and see wake-ups */
	uint8_t selftest;       /* enum vsp_selftest */
	uint8_t nprobe;         /* entries of probe[] in use, 0..VSP_MAX_PROBES */
	uint64_t min_period_ns; /* finest period with < 1 % misses (last self-test), 0: unknown */
	uint64_t selftest_at;   /* CLOCK_REALTIME ns when it ended, 0: never */
	struct vsp_probe probe[VSP_MAX_PROBES]; /* the periods tried, finest first */
};
#define VSP_INFO_WIRE (3 * 4 + 4 + 2 * 8 + VSP_MAX_PROBES * 16)

struct vsp_reply {
	int32_t status; /* 0 or -errno */
	char msg[VSP_MSG_MAX + 1];
	uint32_t ntasks;
	struct vsp_task_stat *tasks; /* owned by the decoder's caller: free() it */
	uint8_t has_info;            /* 1: info holds the node's figures */
	struct vsp_node_info info;
};

/* Encoders return the frame length, or -ENOBUFS if cap is too small. */
int vsp_encode_request(const struct vsp_request *req, uint8_t *buf, size_t cap);
int vsp_encode_reply(const struct vsp_reply *rep, uint8_t *buf, size_t cap);
/* Exact size of a reply frame with this message and number of tasks. */
size_t vsp_reply_size(const struct vsp_reply *rep);

/*
 * Decoders check magic, version, type, exact length and field ranges that do not depend on
 * the daemon's configuration (park value, cpu >= -1, pid > 0). Return 0, or -EBADMSG /
 * -EPROTO (bad version) / -EINVAL with a one-line reason in why. On error nothing is
 * allocated. vsp_decode_reply allocates rep->tasks (NULL when ntasks == 0).
 */
int vsp_decode_request(const uint8_t *buf, size_t len, struct vsp_request *req, char *why,
                       size_t whylen);
int vsp_decode_reply(const uint8_t *buf, size_t len, struct vsp_reply *rep, char *why,
                     size_t whylen);

/*
 * Static checks of a reservation (after deadline 0 has been replaced by period):
 * slice > 0, slice <= deadline <= period, phase < period, period <= VSP_PERIOD_MAX.
 * Returns 0 or -EINVAL with the reason ("slice 5ms > deadline 4ms").
 */
#define VSP_PERIOD_MAX (7ULL * 24 * 3600 * 1000000000ULL) /* one week */
int vsp_check_resv(const struct vsp_resv *r, char *why, size_t whylen);

/*
 * A task may hold several reservations ("windows", DESIGN.md §5.2 co-scheduling): the
 * slots of a frame the controller gave its job. Static checks of a set of windows (deadline
 * 0 already replaced by period): 1..VSP_MAX_WINDOWS, each passes vsp_check_resv; with n > 1
 * all have the same period, are sorted by phase, disjoint and end within the period:
 * phase[i] + deadline[i] <= phase[i+1], phase[n-1] + deadline[n-1] <= period.
 * Returns 0 or -EINVAL with the reason ("window 2 overlaps window 1").
 */
int vsp_check_windows(const struct vsp_resv *w, unsigned n, char *why, size_t whylen);

const char *vsp_type_name(uint8_t type);
const char *vsp_park_name(uint8_t park);
const char *vsp_anchor_name(uint8_t anchor);
const char *vsp_stop_name(uint8_t method); /* enum vsp_stop_method */

#endif
