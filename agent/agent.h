/*
 * vsched-agent: the node's link between applications (libapprate), the node scheduler
 * (vsched) and the cluster controller (DESIGN.md §4). Private header: prototypes grouped
 * by the file that defines them.
 *
 * One thread, one zmq_poll loop (main.c): the controller link (DEALER + its monitor), the
 * applications' PULL socket, and timers for heartbeats, sampling (every q) and task
 * statistics. Calls to vsched are synchronous REQ/REP exchanges bounded by a timeout.
 */
#ifndef VSCHED_AGENT_H
#define VSCHED_AGENT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "proto_apprate.h"
#include "proto_ctl.h"
#include "proto_vsched.h"
#include "timeutil.h"

#define AGENT_ENDPOINT_MAX 256
#define AGENT_WMAX         16 /* largest w (windows averaged) */
#define AGENT_MAX_JOBS     256
#define AGENT_MAX_HANDLES  4096
/*
 * A handle is stale after this many of its report intervals without a frame, capped at
 * AGENT_STALE_MAX_NS (libapprate intervals go up to 1 h). See registry_reap().
 */
#define AGENT_STALE_INTERVALS 4
#define AGENT_STALE_MAX_NS    (5 * NSEC_PER_SEC)

struct agent_config {
	char node[PCTL_NAME_MAX + 1];
	char controller[AGENT_ENDPOINT_MAX];      /* tcp://host:port of the controller's ROUTER */
	char app_endpoint[AGENT_ENDPOINT_MAX];    /* PULL for libapprate, ipc://... */
	unsigned app_endpoint_mode;               /* file mode of an ipc socket */
	char vsched_endpoint[AGENT_ENDPOINT_MAX]; /* vsched's local API */
	uint64_t heartbeat;                       /* ns */
	uint64_t controller_timeout;              /* ns without a message: link presumed lost */
	uint64_t vsched_timeout;                  /* ns per vsched request */
	uint64_t sample_interval;                 /* q, ns */
	int windows;                              /* w */
	uint64_t stats_interval;                  /* TASK_STATS period, ns */
	uint64_t log_stats_interval;              /* counters line in the log, ns */
	int ncpus;
	double mem_capacity_mbs;     /* M, 10^6 bytes/s, 0 = unknown */
	double net_capacity_mbs;     /* N, 10^6 bytes/s, 0 = unknown */
	struct vsp_resv provisional; /* period 0: processes wait for the controller */
	uint8_t park;                /* enum vsp_park for processes the agent adds */
	int max_procs;
	char resctrl_root[AGENT_ENDPOINT_MAX];
	/* security (docs/security.md) */
	char curve_key[AGENT_ENDPOINT_MAX];      /* this node's secret certificate; "": none */
	char controller_key[AGENT_ENDPOINT_MAX]; /* the controller's public certificate */
	bool insecure; /* a non-loopback controller without keys is allowed */
	/* loaded from those files by agent_config_check (Z85; "" without CURVE) */
	char curve_pub[41], curve_sec[41], curve_server[41];
};

/* Sliding-window average of a byte counter (MemBUS: mean of the last w windows). */
struct bwavg {
	unsigned w;              /* windows averaged, 1..AGENT_WMAX */
	unsigned n;              /* windows held, <= w */
	unsigned head;           /* next slot */
	double rate[AGENT_WMAX]; /* bytes/s per window */
	uint64_t last;           /* counter at last_t */
	mono_ns last_t;
	bool primed;
};

/* Memory-bandwidth sources found at start; the test injects the probes. */
struct smem_ops {
	/* Opens a counting cache-miss event on pid; returns fd or -errno. */
	int (*perf_open)(pid_t pid);
	/* Reads the counter of fd; returns 0 or -errno. */
	int (*perf_read)(int fd, uint64_t *count);
	const char *resctrl_root; /* "/sys/fs/resctrl" */
};

struct smem {
	struct smem_ops ops;
	bool pmu;           /* perf_event_open cache misses work */
	bool resctrl;       /* MBM total bytes offered */
	unsigned line_size; /* bytes per cache miss */
	char why_pmu[160];  /* why pmu is false */
	char why_resctrl[160];
};

/* Per-process memory sampling state. */
struct smem_proc {
	int perf_fd;   /* -1: none */
	bool rc_group; /* resctrl monitoring group made */
	char rc_path[AGENT_ENDPOINT_MAX + 64];
};

/* A TCP socket's counters as last seen. */
struct snet_sock {
	uint64_t ino;
	uint64_t acked;    /* tcpi_bytes_acked (sent and acknowledged) */
	uint64_t received; /* tcpi_bytes_received */
};

/* Every TCP socket on the node, sorted by inode (one sock_diag dump). */
struct snet_table {
	struct snet_sock *s;
	size_t n, cap;
};

/* A network namespace: device and inode of /proc/PID/ns/net. */
struct snet_nsid {
	uint64_t dev, ino;
};

/* Network-namespace probes (snet.c has the real ones); the tests inject them. */
struct snet_nsops {
	/* Opens the calling thread's own network namespace; returns the fd or -errno. */
	int (*open_self)(struct snet_nsid *id);
	/* The network namespace pid lives in. Returns 0 or -errno. */
	int (*ns_of)(pid_t pid, struct snet_nsid *id);
	/*
	 * A NETLINK_INET_DIAG socket created inside namespace id, entered through pid's
	 * /proc/PID/ns/net; selfns/self: the caller's own namespace, to switch back to. Returns
	 * the fd, or -errno with why; returns only in the caller's own namespace.
	 */
	int (*socket_in)(int selfns, const struct snet_nsid *self, pid_t pid,
	                 const struct snet_nsid *id, char *why, size_t whylen);
	/* One dump of every TCP socket through fd (-1: a fresh socket of the caller's own
	 * namespace). Returns 0 or -errno. */
	int (*dump)(int fd, struct snet_table *t);
	void (*close)(int fd);
};

/* One network namespace with registered processes in it. */
struct snet_ns {
	struct snet_nsid id;
	bool own;  /* the agent's own namespace: dumped with a fresh socket, as always */
	int fd;    /* foreign namespace: NETLINK_INET_DIAG socket made inside it; -1: none yet */
	bool used; /* a registered process lives there (this round) */
	bool done; /* socket and dump attempted this round */
	int err;   /* 0, or why this round's table is missing (-errno), explained in why */
	char why[192];
	struct snet_table socks; /* this round's dump */
};

/*
 * The namespaces of the registered processes, one sampling round at a time: begin, then
 * snet_ns_table per process (each namespace dumped once, on first use), then end (sockets of
 * namespaces nobody lives in any more are closed). Fixed capacity: max_procs + 1.
 */
struct snet_nscache {
	struct snet_nsops ops;
	int self_fd; /* the agent's own /proc/thread-self/ns/net, opened at start; -1: unknown */
	struct snet_nsid self;
	bool self_known; /* self is valid (even when self_fd could not be opened) */
	struct snet_ns *ns;
	size_t n, cap;
	char why[192];
	uint64_t entered; /* sockets made inside a foreign namespace */
};

/* snet_ns_table's answer for one process. */
struct snet_nsres {
	const struct snet_table *t; /* its namespace's sockets, valid until snet_ns_end; or NULL */
	const char *why;            /* when t is NULL: why, one line */
	bool own;                   /* it lives in the agent's own namespace */
};

/* Per-process network sampling state: the sockets seen at the previous sample. */
struct snet_proc {
	struct snet_sock *s;
	size_t n;
	bool primed;
	bool had_sockets; /* it has had a TCP socket at some point */
};

/* A reservation as the agent applies it: 1..VSP_MAX_WINDOWS windows (proto_vsched.h). */
struct agent_resv {
	uint8_t n;
	struct vsp_resv w[VSP_MAX_WINDOWS];
};

struct agent_job {
	bool used;
	uint32_t handle; /* the agent's handle, in JOB_PROC and RATE */
	char name[PCTL_NAME_MAX + 1];
	int nprocs;
	bool constrained;       /* a controller CONSTRAINT is in force */
	uint64_t gen;           /* its generation */
	struct agent_resv resv; /* its reservation (windows) */
};

struct agent_proc {
	bool used;
	pid_t pid;
	uint64_t starttime; /* /proc/PID/stat field 22: guards against pid reuse */
	int job;            /* index into jobs */
	uint32_t rank;
	bool exited;         /* pid gone: kept only until its handles fall silent */
	bool managed;        /* under vsched with resv */
	bool seen_in_vsched; /* in vsched's last LIST */
	uint64_t gen;        /* generation applied (0: provisional) */
	struct agent_resv resv;
	/* sampling */
	struct smem_proc mem;
	struct snet_proc net;
	bool net_warned; /* its network figures were unavailable once: logged */
	struct bwavg mem_bw, tx_bw, rx_bw;
	uint8_t mem_src, net_src;
	mono_ns net_t;                         /* time of the previous network sample */
	mono_ns since;                         /* registration time */
	uint64_t app_mem_total, app_net_total; /* sum of BYTES reports */
	bool app_bytes_seen;
};

struct agent_handle {
	uint32_t handle; /* libapprate's; 0: free slot */
	int proc;        /* index into procs */
	uint32_t next_seq;
	bool closing; /* final REPORT seen: only its BYTES may follow */
	uint32_t final_seq;
	uint64_t interval_ns; /* report interval from REGISTER */
	mono_ns last_seen;
};

/* Bad-input and traffic counters, logged as one "stats:" line. */
struct agent_counters {
	uint64_t app_ok, app_short, app_long, app_type, app_version, app_bad;
	uint64_t app_unknown_handle, app_foreign_pid, app_unknown_job, app_full;
	uint64_t ctl_ok, ctl_short, ctl_long, ctl_type, ctl_version, ctl_bad, ctl_multipart;
	uint64_t ctl_auth_failed; /* handshakes the controller refused (CURVE key) */
	uint64_t ctl_unknown_job, ctl_stale;
	uint64_t rates_sent, rates_dropped, reports_lost;
	uint64_t hellos, registrations, link_losses;
	uint64_t cons_applied, cons_refused, vsched_errors;
	uint64_t epochs, epochs_applied; /* EPOCH from the controller; given to vsched */
	uint64_t net_unavailable;        /* processes whose network namespace was out of reach */
};

enum ctl_state {
	CTL_DOWN = 0,  /* no TCP connection */
	CTL_HELLO = 1, /* NODE_HELLO sent, waiting for HELLO_ACK */
	CTL_UP = 2,    /* registered */
};

struct ctl_link {
	void *sock; /* DEALER */
	void *mon;  /* PAIR on the DEALER's monitor */
	enum ctl_state state;
	bool connected;  /* TCP up, per the monitor */
	bool hello_sent; /* the last NODE_HELLO left (not just attempted) */
	mono_ns last_rx, last_hello, next_hb;
	uint64_t hb_seq;
	uint64_t heartbeat; /* ns, possibly set by the controller */
	uint64_t ctl_instance;
	uint64_t prev_instance; /* at the registration before */
	bool new_instance;      /* the last registration was with another controller instance */
	uint64_t nrefused;      /* frames refused (log_warnx_limited) */
	uint64_t nauth;         /* handshakes refused (log_warnx_limited) */
	uint32_t drops;         /* connections the controller closed during the handshake
	                           since the last registration */
};

struct vsc {
	void *zctx;
	void *req; /* REQ, recreated after a timeout */
	char endpoint[AGENT_ENDPOINT_MAX];
	uint64_t timeout; /* ns */
	bool up;          /* the last call was answered */
	bool fresh;       /* answered after not being (or first time): reconnected */
};

struct agent {
	struct agent_config cfg;
	void *zctx;
	struct ctl_link ctl;
	void *app; /* PULL */
	struct vsc vs;
	struct smem mem;
	struct agent_job jobs[AGENT_MAX_JOBS];
	struct agent_proc *procs; /* cfg.max_procs */
	struct agent_handle *handles;
	int handles_hw; /* every used handle slot is below this index (never shrinks) */
	uint32_t next_job_handle;
	struct snet_nscache netns;
	struct bwavg node_rx, node_tx;
	bool netdev_ok;
	uint64_t instance;
	mono_ns started;
	struct agent_counters cnt;
	uint64_t epoch_ns;  /* the controller's epoch (CLOCK_REALTIME ns), 0: none yet */
	mono_ns epoch_next; /* when to give it to vsched again */
	/* a process was just placed under vsched: its CPU goes to the controller at the next
	 * stats round, brought forward (a co-scheduling plan needs it, cons_place_proc) */
	bool stats_soon;
	bool epoch_pending; /* not given to vsched since it arrived */
	/* nodeinfo.c: the NODE_INFO last sent since registering */
	bool info_sent;
	struct pctl_node_info info_last;
	uint64_t app_refused; /* application frames refused (log_warnx_limited) */
};

/* A process the registry forgot (registry_reap, registry_drop_proc): what its caller still
 * has to tell the controller and to release (the sampling state in proc). */
struct agent_gone {
	struct agent_proc proc;
	uint32_t job_handle;
	char job[PCTL_NAME_MAX + 1];
};

/* config.c */
void agent_config_defaults(struct agent_config *cfg);
/* Loads path over the defaults; on error why names the key. Returns 0 or -1. */
int agent_config_load(const char *path, struct agent_config *cfg, char *why, size_t whylen);
/* Checks values that may also come from the command line and loads the CURVE keys
 * (curve_pub, curve_sec, curve_server). Returns 0 or -1 with why. */
int agent_config_check(struct agent_config *cfg, char *why, size_t whylen);
/* Prints cfg normalised, in libconfig syntax (vsched-agent -n). */
void agent_config_print(FILE *f, const struct agent_config *cfg);
/* One line per key (name, type, default, range, description): vsched-agent --config-keys,
 * the source of the configuration's man page. */
void agent_config_keys(FILE *f);

/* bwavg.c — pure */
void bwavg_init(struct bwavg *b, unsigned w);
/*
 * Feeds a cumulative byte counter read at t. The first sample, and one where the counter
 * went backwards (reset), only primes. Returns 1 when a window was added, else 0.
 */
int bwavg_push_counter(struct bwavg *b, uint64_t counter, mono_ns t);
/* Feeds the bytes moved in a window of dt ns (dt > 0). */
void bwavg_push_delta(struct bwavg *b, uint64_t bytes, uint64_t dt);
/* Mean of the last min(n, w) window rates, bytes/s; 0 when no window yet. */
double bwavg_rate(const struct bwavg *b);

/* smem.c */
/* The real probes (perf_event_open, read, /sys/fs/resctrl). */
struct smem_ops smem_default_ops(void);
/* Finds the sources offered; logs one line per absent hardware source. */
void smem_detect(struct smem *m, const struct smem_ops *ops);
/* Starts sampling pid with the best hardware source. Never fails: no source = none. */
void smem_attach(struct smem *m, struct smem_proc *p, pid_t pid);
void smem_detach(struct smem *m, struct smem_proc *p);
/*
 * The process's cumulative memory traffic in bytes and its source, in fallback order
 * pmu, resctrl, app (app_total when app_seen), none.
 */
uint8_t smem_read(struct smem *m, struct smem_proc *p, bool app_seen, uint64_t app_total,
                  uint64_t *bytes);

/* snet.c */
/* Dumps every TCP socket (IPv4, IPv6) with its byte counters. Returns 0 or -errno. */
int snet_dump(struct snet_table *t);
/* The same through fd, a NETLINK_INET_DIAG socket (-1: a fresh one). Returns 0 or -errno. */
int snet_dump_fd(int fd, struct snet_table *t);
/* The real namespace probes (/proc/PID/ns/net, setns). */
struct snet_nsops snet_default_nsops(void);
/*
 * Room for cap namespaces; opens the caller's own namespace (ops->open_self). Call it from
 * the thread that samples. Returns 0, or -ENOMEM (nothing allocated); an own namespace that
 * cannot be opened is logged once: every other namespace is then unavailable.
 */
int snet_ns_init(struct snet_nscache *c, const struct snet_nsops *ops, size_t cap);
void snet_ns_free(struct snet_nscache *c);
/* A sampling round starts: nothing dumped yet, no namespace used. */
void snet_ns_begin(struct snet_nscache *c);
/*
 * The TCP sockets of pid's network namespace this round: dumped on the first call for that
 * namespace (a foreign one through a socket made inside it and kept). Returns 0, or -errno
 * with r->why (namespace unreadable, cannot be entered, dump failed). Never leaves the
 * calling thread in another namespace: a failed switch back is fatal.
 */
int snet_ns_table(struct snet_nscache *c, pid_t pid, struct snet_nsres *r);
/* The round ends: namespaces no process used this round are closed and forgotten. */
void snet_ns_end(struct snet_nscache *c);
void snet_table_free(struct snet_table *t);
const struct snet_sock *snet_find(const struct snet_table *t, uint64_t ino);
/* Socket inodes open in /proc/PID/fd (at most cap). Returns the count or -errno. */
int snet_proc_inodes(pid_t pid, uint64_t *ino, size_t cap);
/*
 * Bytes sent (acked) and received by the sockets in ino[] since the previous call for p.
 * Sockets new since then count from 0; closed ones are forgotten. The first call primes and
 * returns 1 (no window), later calls 0. Returns -ENOMEM on allocation failure.
 */
int snet_proc_delta(struct snet_proc *p, const struct snet_table *t, const uint64_t *ino,
                    size_t nino, uint64_t *tx, uint64_t *rx);
void snet_proc_free(struct snet_proc *p);
/* Sums rx/tx bytes in /proc/net/dev format from f, every interface but "lo". */
int snet_parse_netdev(FILE *f, uint64_t *rx, uint64_t *tx);

/* sampler.c */
/* One sampling round (every q): forgets exited processes, refreshes every process's
 * figures, sends BW. */
void sampler_round(struct agent *a);
/* Starts sampling process p (just registered). */
void sampler_attach(struct agent *a, int p);
/* A process the registry forgot: tells the controller it left, releases its sampling. */
void sampler_forget(struct agent *a, struct agent_gone *g);
/* Releases the sampling state of every process (at exit). */
void sampler_release_all(struct agent *a);
/* Builds the BW message from the current averages; e is cfg.max_procs long. */
void sampler_fill_bw(struct agent *a, struct pctl_bw *bw, struct pctl_bw_entry *e);

/* registry.c: a pure table (no messages, no counters opened) */
int registry_init(struct agent *a);
void registry_free(struct agent *a);
int registry_find_job(struct agent *a, const char *name);
int registry_find_proc(struct agent *a, pid_t pid);
struct agent_handle *registry_find_handle(struct agent *a, uint32_t handle);
/* Adds pid to job (made if new). Returns the proc index, or -1 with why. */
int registry_add_proc(struct agent *a, const char *job, uint32_t rank, pid_t pid,
                      uint64_t starttime, char *why, size_t whylen);
/* Forgets a process (and its handles, and its job when it was the last); *gone: the
 * record as it was. */
void registry_drop_proc(struct agent *a, int idx, struct agent_gone *gone);
/*
 * Binds a libapprate handle (report interval interval_ns) to a proc. Returns 0 or -1
 * (table full).
 */
int registry_bind_handle(struct agent *a, uint32_t handle, int proc, uint64_t interval_ns);
/* Processes registered and alive (exited ones waiting for their last frames not counted). */
int registry_nprocs(const struct agent *a);
/* Jobs under a controller constraint. */
int registry_nconstrained(const struct agent *a);
/*
 * Every q: marks processes whose pid is gone (or reused) exited, forgets an exited process
 * once every handle bound to it has been silent for its stale time (AGENT_STALE_INTERVALS
 * report intervals, at most AGENT_STALE_MAX_NS), and frees closing handles (FINAL seen) of
 * live processes after the same silence. Returns the number of processes forgotten, their
 * records in gone[] (room for cfg.max_procs).
 */
int registry_reap(struct agent *a, mono_ns now, struct agent_gone *gone);

/* nodeinfo.c: vsched's self-test figures to the controller (PCTL_NODE_INFO) */
/* Every stats_interval: asks vsched, sends them when changed or not yet sent. */
void nodeinfo_tick(struct agent *a);
/* After (re)registering: send them again on the next tick. */
void nodeinfo_reset(struct agent *a);

/* vsc.c */
int vsc_open(struct vsc *v, void *zctx, const char *endpoint, uint64_t timeout);
void vsc_close(struct vsc *v);
/* One request; *rep owned by the caller (free rep->tasks). Returns 0, or -errno when
 * vsched did not answer (-ETIMEDOUT) or answered with an error (rep->status, rep->msg). */
int vsc_call(struct vsc *v, const struct vsp_request *req, struct vsp_reply *rep);
/*
 * Puts pid under resv: SET when we believe vsched manages it (managed), else ADD; each falls
 * back to the other when vsched says otherwise. Returns 0 or -errno with why.
 */
int vsc_put(struct vsc *v, pid_t pid, const struct agent_resv *resv, uint8_t park, bool managed,
            char *why, size_t whylen);
int vsc_del(struct vsc *v, pid_t pid, char *why, size_t whylen);
/* ADD only (-EEXIST: vsched manages pid already). Returns 0 or -errno with why. */
int vsc_add(struct vsc *v, pid_t pid, const struct vsp_resv *resv, uint8_t park, char *why,
            size_t whylen);
/* LIST: every task vsched runs (*rep owned by the caller: free rep->tasks, also on failure).
 * Returns 0 or -errno with why. */
int vsc_list(struct vsc *v, struct vsp_reply *rep, char *why, size_t whylen);
/*
 * The controller's EPOCH: remembered and given to vsched at once; again when the vsched
 * client reconnects and every AGENT_EPOCH_REASSERT (vsched ignores the same epoch, so a
 * restarted vsched gets it back within that time). Never blocks longer than one vsched
 * request.
 */
void vsc_epoch_set(struct agent *a, uint64_t realtime_ns);
/* Gives the remembered epoch to vsched when due (main loop, every tick). */
void vsc_epoch_tick(struct agent *a, mono_ns now);
#define AGENT_EPOCH_REASSERT (5 * NSEC_PER_SEC)

/* constraint.c */
/*
 * Applies a CONSTRAINT to every process of the job on this node, or to none: on a failure
 * the processes already changed are put back. Returns 0 or -errno with why.
 */
int cons_apply(struct agent *a, const struct pctl_constraint *c, char *why, size_t whylen);
/* Puts a newly registered process under its job's constraint (or the provisional one). */
void cons_place_proc(struct agent *a, int idx);

/* stats.c */
/*
 * Every stats_interval: vsched's LIST; our processes' statistics go to the controller
 * (TASK_STATS, when registered), and managed processes vsched lost are put back.
 */
void stats_send(struct agent *a);

/* controller.c: the conversation with the controller above the link */
/* JOB_PROC (event enum pctl_proc_event) for a process, by its fields or its index. */
void controller_announce(struct agent *a, uint32_t job_handle, const char *job, uint32_t rank,
                         pid_t pid, uint8_t event);
void controller_announce_proc(struct agent *a, int p, uint8_t event);
/* Handles what the controller sent (a bounded number of frames); call when readable. */
void controller_on_frames(struct agent *a);

/* ctl_link.c: the link to the controller, transport only */
int ctl_open(struct agent *a);
void ctl_close(struct agent *a);
/* Handles monitor events (TCP connected, disconnected); call when the monitor is readable. */
void ctl_on_monitor(struct agent *a);
enum ctl_rx {
	CTL_RX_NONE = 0,       /* nothing (more) waiting */
	CTL_RX_DONE,           /* a link message handled, or a frame refused (counted, logged) */
	CTL_RX_REGISTERED,     /* HELLO_ACK: registered (again); see ctl.new_instance */
	CTL_RX_MSG,            /* *m: a CONSTRAINT or EPOCH (release with pctl_msg_release) */
	CTL_RX_BAD_CONSTRAINT, /* a CONSTRAINT refused by the decoder: gen, job in m->u.cons */
};
/* The next frame from the controller (non-blocking), checked; why: a refused frame's
 * reason. Returns an enum ctl_rx. */
int ctl_recv(struct agent *a, struct pctl_msg *m, char *why, size_t whylen);
/* Timers: hello retry, heartbeat, link loss. Returns the next deadline. */
mono_ns ctl_tick(struct agent *a, mono_ns now);
/* Sends m when registered (HELLO: when connected). Returns 0, or -1 (dropped). */
int ctl_send(struct agent *a, const struct pctl_msg *m);
/* Sends m whatever the link's state (an answer to a message just received). 0 or -1. */
int ctl_send_now(struct agent *a, const struct pctl_msg *m);

/* app_relay.c */
int relay_open(struct agent *a);
void relay_close(struct agent *a);
/* Drains the PULL socket (non-blocking). */
void relay_on_frames(struct agent *a);
/*
 * Handles one frame from an application; peer_pid/peer_uid from SO_PEERCRED (-1 unknown).
 * Returns 0 (accepted) or -errno (refused, counted, logged).
 */
int relay_handle(struct agent *a, const uint8_t *buf, size_t len, long peer_pid, long peer_uid);
/* Parses ZeroMQ's ipc "Peer-Address" metadata (":uid:gid:pid"). Returns 0 or -1. */
int relay_parse_peer(const char *s, long *uid, long *pid);

/* calibrate.c */
/* Streams memory for about ms milliseconds; returns bytes/s moved (read + write). */
double calib_mem(unsigned ms);
/* Fastest NIC under sysfs_net ("/sys/class/net"), bytes/s; 0 when none reports a speed. */
double calib_net(const char *sysfs_net, char *ifname, size_t iflen);

/* main.c */
void agent_log_stats(const struct agent *a);

#endif
