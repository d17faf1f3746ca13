/*
 * ctl_scale: the controller's scale through the real daemon (DESIGN.md §8: 1,000 nodes x
 * 200 jobs, control cycle <= 10 ms on one core). One process plays NODES protocol-correct
 * vsched-agents against a running vsched-controller: one ZeroMQ DEALER per simulated node
 * to the controller's agent ROUTER (common/proto_ctl.h), and one DEALER per job to its
 * admin ROUTER (common/proto_admin.h) for the targets.
 *
 * Every simulated agent registers (NODE_HELLO, again on HELLO_ACK < 0), announces its ranks
 * (JOB_PROC joined), heartbeats every `heartbeat` (the controller's HELLO_ACK value), sends
 * BW every 500 ms and TASK_STATS every 2 s (the agent's defaults), and answers every
 * CONSTRAINT with CONSTRAINT_ACK at once: status 0, -ESTALE for an older generation (as
 * vsched-agent does). Jobs: JOBS jobs of RANKS ranks, rank r of job j on node
 * (j mod (NODES/RANKS)) * RANKS + r: every job on RANKS distinct nodes, JOBS*RANKS/NODES ranks
 * per node (4 with the defaults: one rank each of 4 jobs, the same 4 jobs on a group of
 * RANKS nodes).
 *
 * Application model: controller/sim.h's simulated BSP application, used for its rate model
 * only: a job progresses at R_max * min over its nodes of sim_model_rate(period, slice of
 * the constraint in force on that node) (a BSP job runs at its slowest rank's speed), times
 * (1 + 1 % N(0,1)) per report interval. Every rank reports like libapprate does, every
 * INTERVAL: RATE with the units done since its last report and the interval (x (1 + 0.2 %
 * N(0,1)) per rank). The ranks of a job report together (a barrier); jobs are spread evenly
 * over the interval, or all report at the same instant with --burst (the worst case). A
 * constraint is in force on a node from the moment its CONSTRAINT is read. Nodes start
 * under the agent's provisional reservation (100 ms, 20 ms). Job j's ratio is
 * 5:1, 1:1 or 1:5 (j mod 3).
 *
 * Targets go through the admin protocol (SET_RATE, what `vschedctl rate` sends; EBUSY is
 * retried every 20 ms as vschedctl does), once after the first reports and once more in the
 * middle of the measured window (every job to another target).
 *
 * Measured in the window [warm-up, warm-up + measure), separately for its first half
 * ("steady") and its second half ("retarget", which starts with the second SET_RATE of
 * every job); times on this process's CLOCK_MONOTONIC, a message is "received" when this
 * process reads it:
 *   control cycle   last RATE of a job's round sent -> its resulting CONSTRAINT received,
 *                   at the first node and at the last of the job's nodes (rounds whose
 *                   evaluation changed the constraint; only those produce a message);
 *   target change   SET_RATE sent -> the admin reply (constraint on every node of the job,
 *                   every node acknowledged, committed, state file written);
 *   full round      --burst only: every job reports at the tick; each node sends its
 *                   heartbeat after its RATEs; first RATE sent -> last heartbeat echo
 *                   received (the controller answers a node's heartbeat after having
 *                   handled everything that node sent before: per-connection FIFO); only
 *                   ticks with every echo back and whose reports went out at the tick;
 *   heartbeat RTT   every heartbeat, send -> echo;
 *   controller CPU  utime + stime of /proc/PID/stat over the window, % of one CPU (also the
 *                   largest 1 s sample), VmRSS and VmHWM at the end; and for the controller
 *                   and this process the time on a CPU and runnable-but-waiting from
 *                   /proc/PID/task/ * /schedstat (a shared machine shows up there);
 *   messages        frames sent to / received from the controller per second;
 *   job states      JOB_LIST at the start, the retarget and the end of the window: control
 *                   evaluations and constraint changes in between, states and |error|.
 *
 * usage: ctl_scale -A AGENT_ENDPOINT -a ADMIN_ENDPOINT -p CONTROLLER_PID [--nodes N]
 *                  [--jobs N] [--ranks N] [--interval DUR] [--warmup DUR] [--measure DUR]
 *                  [--rmax UNITS_PER_S] [--burst] [--seed N] [--label TEXT]
 * --rmax must be the controller's r_max (the script configures both). Exit 0 when the run
 * was complete (every node registered, every target applied), 1 otherwise.
 */
#include <errno.h>
#include <dirent.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zmq.h>

#include "duration.h"
#include "procfs.h"
#include "proto_admin.h"
#include "proto_ctl.h"
#include "sim.h"
#include "timeutil.h"

#define MAX_SLOTS      16 /* ranks per simulated node */
#define PROV_PERIOD    (100 * NSEC_PER_MSEC)
#define PROV_SLICE     (20 * NSEC_PER_MSEC)
#define BW_EVERY       (500 * NSEC_PER_MSEC)
#define STATS_EVERY    (2 * NSEC_PER_SEC)
#define EBUSY_RETRY    (20 * NSEC_PER_MSEC)
#define RECV_EVERY     32 /* events fired between two receive passes */
#define JOB_NOISE      0.01
#define RANK_NOISE     0.002
#define HELLO_RESEND   (5 * NSEC_PER_SEC)
#define REGISTER_LIMIT (60 * NSEC_PER_SEC)

/* ---- the constraint's reservation: the one place that knows struct pctl_constraint ---- */

/* (period, utilised slice) of a CONSTRAINT: the frame period of its first window, the sum of
 * the windows' slices (one window: that reservation). */
static void cons_resv(const struct pctl_constraint *c, mono_ns *period, mono_ns *slice)
{
	*period = c->win[0].period;
	*slice = 0;
	for (unsigned i = 0; i < c->nwin; i++)
		*slice += c->win[i].slice;
}

/* ---- samples ---- */

struct samples {
	double *v;
	size_t n, cap;
};

static void samples_add(struct samples *s, double x)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 1024;
		double *v = realloc(s->v, cap * sizeof(*v));
		if (v == NULL) {
			fprintf(stderr, "ctl_scale: out of memory\n");
			exit(1);
		}
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = x;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted v. */
static double pct(const struct samples *s, double p)
{
	size_t k;

	if (s->n == 0)
		return NAN;
	k = (size_t)ceil(p / 100.0 * (double)s->n);
	if (k < 1)
		k = 1;
	return s->v[k - 1];
}

/* ---- state ---- */

struct slot {
	int job;
	uint32_t rank;
	uint32_t handle;
	int32_t pid;
	mono_ns period, slice; /* the constraint in force for the job on this node */
	uint64_t gen;
};

struct snode {
	void *sock;
	char name[16];
	bool up;
	mono_ns hello_sent;
	struct slot slot[MAX_SLOTS];
	int nslots; /* <= MAX_SLOTS (checked where a slot is added) */
	uint64_t hb_seq;
};

/* n->nslots, bounded by MAX_SLOTS where the compiler can see it (per-slot arrays). */
static int slots_of(const struct snode *n)
{
	return n->nslots < MAX_SLOTS ? n->nslots : MAX_SLOTS;
}

enum cons_kind { KIND_CONTROL = 0, KIND_ADMIN = 1 };

struct sjob {
	char name[16];
	struct sim_params sp;
	int *node, *slot; /* per rank */
	uint32_t nranks;
	double speed;         /* units/ns now */
	double acc;           /* units since the last report */
	mono_ns acc_at;       /* acc integrated up to */
	mono_ns last_report;  /* when the previous reports were sent */
	mono_ns last_rate_at; /* when the last RATE of the latest round was sent */
	uint32_t seq;
	/* the newest generation seen on any node */
	uint64_t gen;
	mono_ns gen_ref;
	int gen_kind, gen_nodes;
	bool gen_in_window;
	/* admin */
	void *adm;
	bool adm_pending;
	int32_t adm_milli;
	mono_ns adm_first, adm_retry_at; /* retry_at 0: sent, waiting */
	int adm_status;
	uint64_t rng;
};

struct cursor { /* one periodic event per entity, entities evenly spread or together */
	int n;
	mono_ns period, start;
	bool spread;
	uint64_t k; /* events fired */
};

static struct opts {
	const char *agents, *admin, *label;
	int pid;
	int nodes, jobs, ranks;
	mono_ns interval, warmup, measure;
	double rmax;
	bool burst;
	uint64_t seed;
} o = {
    .nodes = 1000,
    .jobs = 200,
    .ranks = 20,
    .interval = NSEC_PER_SEC,
    .warmup = 20 * NSEC_PER_SEC,
    .measure = 30 * NSEC_PER_SEC,
    .rmax = 10000,
    .seed = 1,
    .label = "",
};

static void *zctx, *lst; /* lst: a DEALER on the admin endpoint for JOB_LIST */
static struct snode *nodes;
static struct sjob *jobs;
/* every socket (nodes, then the jobs' admin DEALERs, then lst), its ZMQ_FD in an epoll set;
 * a socket we sent on is drained before waiting (a send may consume ZMQ_FD's signal) */
static void **socks;
static int nsocks, epfd;
static uint8_t *dirty;
static int *dirty_list, ndirty;
static mono_ns hb_every = NSEC_PER_SEC, w0, w1;
static bool in_window;

/* counters (in the window unless said) */
static uint64_t sent_type[256], recv_type[256];
static uint64_t sent_all, recv_all, send_fail, stale_acks, unknown_cons, hello_refused;
static uint64_t ebusy, adm_refused, adm_ok_total, bad_frames;
/* [0]: steady state, first half of the window; [1]: second half, from the retarget on */
static struct samples lat_first[2], lat_all[2], lat_adm_first, lat_adm_all, lat_adm_reply,
    hb_rtt[2], round_t[2];
static mono_ns t_retarget;

static int phase_of(mono_ns t)
{
	return mono_before(t, t_retarget) ? 0 : 1;
}
/* --burst: per heartbeat tick (seq), when its reports started and the echoes */
static mono_ns *tick_t0, *tick_last;
static int *tick_echoes;
static uint64_t nticks;
static mono_ns burst_t0, burst_due;

/* JOB_LIST snapshots */
struct snapshot {
	bool have;
	uint64_t evals, changes;
	int nstate[PADM_ST_MAX + 1];
	int with_rate;
	double abs_err_sum, abs_err_max;
	int in_eps;
};
static struct snapshot snap[3]; /* window start, retarget, window end */
static int snap_want = -1;
/* schedstat of the controller [0] and of this process [1] at window start, retarget, end */
static double sched_run[2][3], sched_wait[2][3];
static int proc_sched(int pid, double *run, double *wait);

static void sched_sample(int k)
{
	proc_sched(o.pid, &sched_run[0][k], &sched_wait[0][k]);
	proc_sched((int)getpid(), &sched_run[1][k], &sched_wait[1][k]);
}

/* ---- controller's /proc ---- */

static int proc_cpu(int pid, double *sec)
{
	struct procfs_stat st;

	if (procfs_stat(pid, 0, &st) != 0)
		return -1;
	*sec = (double)(st.utime + st.stime) / (double)sysconf(_SC_CLK_TCK);
	return 0;
}

static long proc_status_kb(int pid, const char *key)
{
	char path[64], line[256];
	size_t kl = strlen(key);
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, kl) == 0 && line[kl] == ':')
			v = strtol(line + kl + 1, NULL, 10);
	fclose(f);
	return v;
}

/* Sum over pid's threads of /proc/PID/task/TID/schedstat: time on a CPU and time runnable
 * but waiting for one (seconds). 0 or -1. */
static int proc_sched(int pid, double *run, double *wait)
{
	char path[96];
	struct dirent *e;
	DIR *d;
	unsigned long long r, w, sr = 0, sw = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/schedstat", pid, e->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fscanf(f, "%llu %llu", &r, &w) == 2) {
			sr += r;
			sw += w;
		}
		fclose(f);
	}
	closedir(d);
	*run = (double)sr / 1e9;
	*wait = (double)sw / 1e9;
	return 0;
}

static double self_cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* ---- sending ---- */

static void mark_dirty(int i)
{
	if (!dirty[i]) {
		dirty[i] = 1;
		dirty_list[ndirty++] = i;
	}
}

static void send_pctl(struct snode *n, const struct pctl_msg *m)
{
	uint8_t buf[PCTL_HDR + 2 + MAX_SLOTS * PCTL_STATS_ENTRY_WIRE + 64];
	int len = pctl_encode(m, buf, sizeof(buf));

	if (len < 0) {
		fprintf(stderr, "ctl_scale: cannot encode %s: %s\n", pctl_type_name(m->type),
		        strerror(-len));
		exit(1);
	}
	mark_dirty((int)(n - nodes));
	if (zmq_send(n->sock, buf, (size_t)len, ZMQ_DONTWAIT) < 0) {
		send_fail++;
		return;
	}
	if (in_window) {
		sent_type[m->type]++;
		sent_all++;
	}
}

static void send_hello(struct snode *n, mono_ns now)
{
	struct pctl_msg m;

	memset(&m, 0, sizeof(m));
	m.type = PCTL_NODE_HELLO;
	m.u.hello.proto_version = PCTL_VERSION;
	m.u.hello.ncpus = 8;
	m.u.hello.mem_capacity = 20000000000ull;
	m.u.hello.net_capacity = 1250000000ull;
	m.u.hello.instance = (uint64_t)(n - nodes) + 1;
	snprintf(m.u.hello.node, sizeof(m.u.hello.node), "%s", n->name);
	send_pctl(n, &m);
	n->hello_sent = now;
}

static void send_procs(struct snode *n)
{
	struct pctl_msg m;

	for (int s = 0; s < n->nslots; s++) {
		memset(&m, 0, sizeof(m));
		m.type = PCTL_JOB_PROC;
		m.u.proc.job = n->slot[s].handle;
		m.u.proc.rank = n->slot[s].rank;
		m.u.proc.pid = n->slot[s].pid;
		m.u.proc.event = PCTL_PROC_JOINED;
		snprintf(m.u.proc.name, sizeof(m.u.proc.name), "%s", jobs[n->slot[s].job].name);
		send_pctl(n, &m);
	}
}

static void send_hb(struct snode *n, uint64_t seq, mono_ns now)
{
	struct pctl_msg m;

	memset(&m, 0, sizeof(m));
	m.type = PCTL_HEARTBEAT;
	m.u.hb.seq = seq;
	m.u.hb.sent_ns = now;
	m.u.hb.nprocs = (uint32_t)n->nslots;
	send_pctl(n, &m);
}

static void send_bw(struct snode *n)
{
	struct pctl_bw_entry e[MAX_SLOTS];
	struct pctl_msg m;

	memset(&m, 0, sizeof(m));
	memset(e, 0, sizeof(e));
	m.type = PCTL_BW;
	m.u.bw.window_ns = BW_EVERY;
	m.u.bw.node_rx_bps = 1000000;
	m.u.bw.node_tx_bps = 1000000;
	m.u.bw.node_src = PCTL_SRC_PROCNETDEV;
	m.u.bw.n = (uint16_t)slots_of(n);
	m.u.bw.e = e;
	for (int s = 0; s < slots_of(n); s++) {
		e[s].job = n->slot[s].handle;
		e[s].rank = n->slot[s].rank;
		e[s].pid = n->slot[s].pid;
		e[s].mem_bps = 500000000ull + 100000000ull * (uint64_t)(n->slot[s].job % 8);
		e[s].net_tx_bps = 250000;
		e[s].net_rx_bps = 250000;
		e[s].mem_src = PCTL_SRC_APP;
		e[s].net_src = PCTL_SRC_SOCKDIAG;
	}
	send_pctl(n, &m);
}

static void send_stats(struct snode *n)
{
	struct pctl_stats_entry e[MAX_SLOTS];
	struct pctl_msg m;

	memset(&m, 0, sizeof(m));
	memset(e, 0, sizeof(e));
	m.type = PCTL_TASK_STATS;
	m.u.stats.n = (uint16_t)slots_of(n);
	m.u.stats.e = e;
	for (int s = 0; s < slots_of(n); s++) {
		const struct slot *sl = &n->slot[s];

		e[s].job = sl->handle;
		e[s].rank = sl->rank;
		e[s].gen = sl->gen;
		e[s].st.pid = sl->pid;
		e[s].st.cpu = s % 8;
		e[s].st.park = 0;
		e[s].st.nthreads = 1;
		e[s].st.resv.period = sl->period;
		e[s].st.resv.slice = sl->slice;
		e[s].st.resv.deadline = sl->period;
		e[s].st.managed_ns = 1;
	}
	send_pctl(n, &m);
}

/* ---- the application model ---- */

static void job_integrate(struct sjob *jb, mono_ns now)
{
	if (mono_before(jb->acc_at, now))
		jb->acc += jb->speed * (double)(now - jb->acc_at);
	jb->acc_at = now;
}

static void job_speed(struct sjob *jb)
{
	double r = 1.0;

	for (uint32_t k = 0; k < jb->nranks; k++) {
		const struct slot *sl = &nodes[jb->node[k]].slot[jb->slot[k]];
		double x = sim_model_rate(&jb->sp, sl->period, sl->slice);
		if (x < r)
			r = x;
	}
	jb->speed = r * o.rmax / 1e9;
}

/* Every rank of the job reports the units done since the previous report. */
static void job_report(struct sjob *jb, mono_ns now)
{
	double k = 1.0 + JOB_NOISE * sim_gauss(&jb->rng);
	mono_ns iv = now - jb->last_report;
	uint64_t units;
	struct pctl_msg m;

	job_integrate(jb, now);
	units = (uint64_t)llround(jb->acc * (k < 0.5 ? 0.5 : k));
	jb->acc = 0;
	jb->last_report = now;
	jb->seq++;
	for (uint32_t r = 0; r < jb->nranks; r++) {
		double kr = 1.0 + RANK_NOISE * sim_gauss(&jb->rng);
		struct snode *n = &nodes[jb->node[r]];

		memset(&m, 0, sizeof(m));
		m.type = PCTL_RATE;
		m.u.rate.job = n->slot[jb->slot[r]].handle;
		m.u.rate.rank = r;
		m.u.rate.seq = jb->seq;
		m.u.rate.units = units;
		m.u.rate.interval_ns = (uint64_t)((double)iv * kr);
		if (m.u.rate.interval_ns == 0)
			m.u.rate.interval_ns = 1;
		send_pctl(n, &m);
	}
	jb->last_rate_at = mono_now();
}

/* ---- admin ---- */

static void admin_send(struct sjob *jb, int32_t milli, mono_ns now, bool first)
{
	struct padm_request q;
	uint8_t buf[PADM_MAX_REQUEST];
	int len;

	memset(&q, 0, sizeof(q));
	q.type = PADM_SET_RATE;
	snprintf(q.job, sizeof(q.job), "%s", jb->name);
	q.target_milli = milli;
	len = padm_encode_request(&q, buf, sizeof(buf));
	mark_dirty(o.nodes + (int)(jb - jobs));
	if (len < 0 || zmq_send(jb->adm, "", 0, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 ||
	    zmq_send(jb->adm, buf, (size_t)len, ZMQ_DONTWAIT) < 0) {
		fprintf(stderr, "ctl_scale: %s: SET_RATE not sent\n", jb->name);
		adm_refused++;
		return;
	}
	if (first) {
		jb->adm_first = now;
		jb->adm_pending = true;
		jb->adm_milli = milli;
	}
	jb->adm_retry_at = 0;
}

static void admin_list(int which)
{
	struct padm_request q;
	uint8_t buf[PADM_MAX_REQUEST];
	int len;

	memset(&q, 0, sizeof(q));
	q.type = PADM_JOB_LIST;
	len = padm_encode_request(&q, buf, sizeof(buf));
	mark_dirty(nsocks - 1);
	if (len < 0 || zmq_send(lst, "", 0, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 ||
	    zmq_send(lst, buf, (size_t)len, ZMQ_DONTWAIT) < 0) {
		fprintf(stderr, "ctl_scale: JOB_LIST not sent\n");
		return;
	}
	snap_want = which;
}

/* Reads [empty][reply] from an admin DEALER; 0 with r filled, -1 when nothing / bad. */
static int admin_read(void *sock, struct padm_reply *r)
{
	uint8_t buf[1 << 20];
	char why[256];
	int len, more;
	size_t ml = sizeof(more);

	len = zmq_recv(sock, buf, sizeof(buf), ZMQ_DONTWAIT);
	if (len < 0)
		return -1;
	zmq_getsockopt(sock, ZMQ_RCVMORE, &more, &ml);
	if (len != 0 || !more) {
		bad_frames++;
		return -1;
	}
	len = zmq_recv(sock, buf, sizeof(buf), ZMQ_DONTWAIT);
	if (len < 0 || (size_t)len > sizeof(buf)) {
		bad_frames++;
		return -1;
	}
	if (padm_decode_reply(buf, (size_t)len, r, why, sizeof(why)) != 0) {
		fprintf(stderr, "ctl_scale: bad admin reply: %s\n", why);
		bad_frames++;
		return -1;
	}
	return 0;
}

static void on_admin_reply(struct sjob *jb, mono_ns now)
{
	struct padm_reply r;

	while (admin_read(jb->adm, &r) == 0) {
		if (r.status == -EBUSY) {
			ebusy++;
			jb->adm_retry_at = now + EBUSY_RETRY; /* vschedctl retries for 3 s */
		} else {
			if (r.status != 0) {
				fprintf(stderr, "ctl_scale: %s: SET_RATE refused: %s\n", jb->name,
				        r.reason);
				adm_refused++;
			} else {
				adm_ok_total++;
			}
			if (jb->adm_pending && in_window && mono_before(w0, jb->adm_first))
				samples_add(&lat_adm_reply, (double)(now - jb->adm_first) / 1e6);
			jb->adm_pending = false;
			jb->adm_status = r.status;
		}
		padm_reply_release(&r);
	}
}

static void on_list_reply(void)
{
	struct padm_reply r;

	while (admin_read(lst, &r) == 0) {
		if (snap_want >= 0 && r.status == 0) {
			struct snapshot *s = &snap[snap_want];

			memset(s, 0, sizeof(*s));
			s->have = true;
			for (int i = 0; i < r.njobs; i++) {
				const struct padm_job *pj = &r.jobs[i];
				double e = fabs(pj->err_pct);

				s->evals += pj->evaluations;
				s->changes += pj->changes;
				if (pj->state <= PADM_ST_MAX)
					s->nstate[pj->state]++;
				if (isfinite(e)) {
					s->with_rate++;
					s->abs_err_sum += e;
					if (e > s->abs_err_max)
						s->abs_err_max = e;
					if (e <= pj->eps_pct)
						s->in_eps++;
				}
			}
		}
		snap_want = -1;
		padm_reply_release(&r);
	}
}

/* ---- messages from the controller ---- */

static int job_by_name(const char *name)
{
	char *end;
	long j;

	if (strncmp(name, "job", 3) != 0)
		return -1;
	j = strtol(name + 3, &end, 10);
	if (*end != '\0' || j < 0 || j >= o.jobs)
		return -1;
	return (int)j;
}

static void on_constraint(struct snode *n, const struct pctl_constraint *c, mono_ns now)
{
	struct pctl_msg a;
	int j = job_by_name(c->job), s;
	struct sjob *jb;
	struct slot *sl = NULL;

	memset(&a, 0, sizeof(a));
	a.type = PCTL_CONSTRAINT_ACK;
	a.u.cack.gen = c->gen;
	snprintf(a.u.cack.job, sizeof(a.u.cack.job), "%s", c->job);
	for (s = 0; j >= 0 && s < n->nslots; s++)
		if (n->slot[s].job == j)
			sl = &n->slot[s];
	if (sl == NULL) {
		unknown_cons++;
		a.u.cack.status = -ENOENT;
		snprintf(a.u.cack.reason, sizeof(a.u.cack.reason), "unknown job %s on node %s",
		         c->job, n->name);
		send_pctl(n, &a);
		return;
	}
	jb = &jobs[j];
	if (c->gen < sl->gen) {
		stale_acks++;
		a.u.cack.status = -ESTALE;
		snprintf(a.u.cack.reason, sizeof(a.u.cack.reason),
		         "generation %llu is older than %llu", (unsigned long long)c->gen,
		         (unsigned long long)sl->gen);
		send_pctl(n, &a);
		return;
	}
	if (c->gen > sl->gen) {
		job_integrate(jb, now);
		sl->gen = c->gen;
		cons_resv(c, &sl->period, &sl->slice);
		job_speed(jb);
	}
	send_pctl(n, &a);

	/* latencies: the first node to get a new generation, then the last of the job's */
	if (c->gen > jb->gen) {
		jb->gen = c->gen;
		jb->gen_nodes = 0;
		jb->gen_kind = jb->adm_pending ? KIND_ADMIN : KIND_CONTROL;
		jb->gen_ref = jb->gen_kind == KIND_ADMIN ? jb->adm_first : jb->last_rate_at;
		jb->gen_in_window = in_window && mono_before(w0, jb->gen_ref);
		if (jb->gen_in_window)
			samples_add(jb->gen_kind == KIND_ADMIN ? &lat_adm_first
			                                       : &lat_first[phase_of(jb->gen_ref)],
			            (double)(now - jb->gen_ref) / 1e6);
	}
	if (c->gen == jb->gen && ++jb->gen_nodes == (int)jb->nranks && jb->gen_in_window)
		samples_add(jb->gen_kind == KIND_ADMIN ? &lat_adm_all
		                                       : &lat_all[phase_of(jb->gen_ref)],
		            (double)(now - jb->gen_ref) / 1e6);
}

static void on_node_msg(struct snode *n, const uint8_t *buf, size_t len, mono_ns now)
{
	struct pctl_msg m;
	char why[256];

	if (pctl_decode(buf, len, &m, why, sizeof(why)) != 0) {
		fprintf(stderr, "ctl_scale: %s: bad frame from the controller: %s\n", n->name, why);
		bad_frames++;
		return;
	}
	if (in_window) {
		recv_type[m.type]++;
		recv_all++;
	}
	switch (m.type) {
	case PCTL_HELLO_ACK:
		if (m.u.hello_ack.status == 0) {
			if (m.u.hello_ack.heartbeat_ms > 0)
				hb_every = (mono_ns)m.u.hello_ack.heartbeat_ms * NSEC_PER_MSEC;
			n->up = true;
			send_procs(n); /* (re-)announce every rank, as the agent does */
		} else {
			hello_refused++;
			n->up = false;
			send_hello(n, now);
		}
		break;
	case PCTL_HEARTBEAT:
		if (in_window && mono_before(w0, (mono_ns)m.u.hb.sent_ns))
			samples_add(&hb_rtt[phase_of(m.u.hb.sent_ns)],
			            (double)(now - m.u.hb.sent_ns) / 1e6);
		if (o.burst && m.u.hb.seq < nticks && tick_t0[m.u.hb.seq] != 0) {
			tick_echoes[m.u.hb.seq]++;
			tick_last[m.u.hb.seq] = now;
		}
		break;
	case PCTL_CONSTRAINT:
		on_constraint(n, &m.u.cons, now);
		break;
	default:
		break; /* EPOCH and what else the controller may add: nothing to do here */
	}
	pctl_msg_release(&m);
}

/* Reads every message waiting on socket i. */
static void drain(int i, mono_ns now)
{
	static uint8_t buf[4096];

	if (i < o.nodes) {
		struct snode *n = &nodes[i];
		int len;

		while ((len = zmq_recv(n->sock, buf, sizeof(buf), ZMQ_DONTWAIT)) >= 0) {
			if ((size_t)len > sizeof(buf)) {
				bad_frames++;
				continue;
			}
			on_node_msg(n, buf, (size_t)len, now);
		}
	} else if (i < o.nodes + o.jobs) {
		on_admin_reply(&jobs[i - o.nodes], now);
	} else {
		on_list_reply();
	}
}

/* Reads whatever is waiting; waits up to timeout_ms (-1: forever) when nothing is. */
static void recv_pass(long timeout_ms)
{
	struct epoll_event ev[256];
	mono_ns now = mono_now();
	int n;

	for (int k = ndirty; k > 0 && ndirty > 0; k--) { /* drain() may send (acks) */
		int i = dirty_list[--ndirty];
		dirty[i] = 0;
		drain(i, now);
	}
	n = epoll_wait(epfd, ev, 256, ndirty > 0 ? 0 : (int)timeout_ms);
	now = mono_now();
	for (int k = 0; k < n; k++)
		drain((int)ev[k].data.u32, now);
}

static void watch(int i, void *sock)
{
	struct epoll_event ev = {.events = EPOLLIN};
	size_t len = sizeof(int);
	int fd;

	socks[i] = sock;
	ev.data.u32 = (uint32_t)i;
	if (zmq_getsockopt(sock, ZMQ_FD, &fd, &len) != 0 ||
	    epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		fprintf(stderr, "ctl_scale: cannot watch socket %d: %s\n", i, strerror(errno));
		exit(1);
	}
}

/* ---- periodic events ---- */

static mono_ns cur_due(const struct cursor *c)
{
	uint64_t round = c->k / (uint64_t)c->n, idx = c->k % (uint64_t)c->n;
	mono_ns off = c->spread ? (mono_ns)((double)c->period * (double)idx / c->n) : 0;

	return c->start + round * c->period + off;
}

static int cur_entity(const struct cursor *c)
{
	return (int)(c->k % (uint64_t)c->n);
}

/* ---- set-up ---- */

static void place(void)
{
	int groups = o.nodes / o.ranks;

	for (int j = 0; j < o.jobs; j++) {
		struct sjob *jb = &jobs[j];

		snprintf(jb->name, sizeof(jb->name), "job%03d", j);
		sim_params_default(&jb->sp);
		jb->sp.comp = j % 3 == 0 ? 5 : 1;
		jb->sp.comm = j % 3 == 2 ? 5 : 1;
		jb->nranks = (uint32_t)o.ranks;
		jb->node = calloc((size_t)o.ranks, sizeof(int));
		jb->slot = calloc((size_t)o.ranks, sizeof(int));
		if (jb->node == NULL || jb->slot == NULL) {
			fprintf(stderr, "ctl_scale: out of memory\n");
			exit(1);
		}
		jb->rng = o.seed * 7919 + (uint64_t)j * 0x9E3779B97F4A7C15ull + 1;
		for (int r = 0; r < o.ranks; r++) {
			int ni = (j % groups) * o.ranks + r;
			struct snode *n = &nodes[ni];
			struct slot *sl;

			if (n->nslots == MAX_SLOTS) {
				fprintf(stderr, "ctl_scale: more than %d ranks on a node\n",
				        MAX_SLOTS);
				exit(2);
			}
			sl = &n->slot[n->nslots];
			sl->job = j;
			sl->rank = (uint32_t)r;
			sl->handle = (uint32_t)j + 1;
			sl->pid = 100000 + j * o.ranks + r;
			sl->period = PROV_PERIOD;
			sl->slice = PROV_SLICE;
			jb->node[r] = ni;
			jb->slot[r] = n->nslots++;
		}
	}
	for (int j = 0; j < o.jobs; j++)
		job_speed(&jobs[j]);
}

static void *dealer(const char *ep)
{
	void *s = zmq_socket(zctx, ZMQ_DEALER);
	int zero = 0;

	if (s == NULL) {
		fprintf(stderr, "ctl_scale: zmq_socket: %s (raise the fd limit)\n",
		        zmq_strerror(zmq_errno()));
		exit(1);
	}
	zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof(zero));
	if (zmq_connect(s, ep) != 0) {
		fprintf(stderr, "ctl_scale: connect %s: %s\n", ep, zmq_strerror(zmq_errno()));
		exit(1);
	}
	return s;
}

/* Target of job j in thousandths of a percent: 25..75 %, the second one different. */
static int32_t target_milli(int j, int which)
{
	static const int32_t t[] = {25000, 30000, 40000, 50000, 60000, 70000, 75000};
	int n = (int)(sizeof(t) / sizeof(t[0]));

	return t[(j * 3 + which * 2 + (int)o.seed) % n];
}

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: ctl_scale -A AGENT_ENDPOINT -a ADMIN_ENDPOINT -p CONTROLLER_PID\n"
	        "                 [--nodes N] [--jobs N] [--ranks N] [--interval DUR]\n"
	        "                 [--warmup DUR] [--measure DUR] [--rmax UNITS_PER_S] [--burst]\n"
	        "                 [--seed N] [--label TEXT]\n");
}

static int parse_dur(const char *s, mono_ns *out, const char *what)
{
	uint64_t v;

	if (duration_parse(s, &v) != 0 || v == 0) {
		fprintf(stderr, "ctl_scale: %s: bad duration '%s'\n", what, s);
		return -1;
	}
	*out = v;
	return 0;
}

static int parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
	    {"nodes", required_argument, NULL, 'N'},  {"jobs", required_argument, NULL, 'J'},
	    {"ranks", required_argument, NULL, 'R'},  {"interval", required_argument, NULL, 'i'},
	    {"warmup", required_argument, NULL, 'w'}, {"measure", required_argument, NULL, 'm'},
	    {"rmax", required_argument, NULL, 'r'},   {"burst", no_argument, NULL, 'b'},
	    {"seed", required_argument, NULL, 's'},   {"label", required_argument, NULL, 'l'},
	    {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
	};
	int c;

	while ((c = getopt_long(argc, argv, "A:a:p:h", lo, NULL)) != -1) {
		switch (c) {
		case 'A':
			o.agents = optarg;
			break;
		case 'a':
			o.admin = optarg;
			break;
		case 'p':
			o.pid = atoi(optarg);
			break;
		case 'N':
			o.nodes = atoi(optarg);
			break;
		case 'J':
			o.jobs = atoi(optarg);
			break;
		case 'R':
			o.ranks = atoi(optarg);
			break;
		case 'i':
			if (parse_dur(optarg, &o.interval, "--interval") != 0)
				return -1;
			break;
		case 'w':
			if (parse_dur(optarg, &o.warmup, "--warmup") != 0)
				return -1;
			break;
		case 'm':
			if (parse_dur(optarg, &o.measure, "--measure") != 0)
				return -1;
			break;
		case 'r':
			o.rmax = atof(optarg);
			break;
		case 'b':
			o.burst = true;
			break;
		case 's':
			o.seed = strtoull(optarg, NULL, 10);
			break;
		case 'l':
			o.label = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			return -1;
		}
	}
	if (optind != argc || o.agents == NULL || o.admin == NULL || o.pid <= 0 || o.nodes < 1 ||
	    o.jobs < 1 || o.jobs > 1000 || o.ranks < 1 || o.ranks > o.nodes || !(o.rmax > 0) ||
	    (long)o.jobs * o.ranks > (long)(o.nodes / o.ranks) * o.ranks * MAX_SLOTS)
		return -1;
	return 0;
}

/* ---- output ---- */

static void sort(struct samples *s)
{
	qsort(s->v, s->n, sizeof(double), cmp_double);
}

static void cells(const struct samples *s)
{
	if (s->n == 0)
		printf(" – | – | – | 0 |");
	else
		printf(" %.2f | %.2f | %.2f | %zu |", pct(s, 50), pct(s, 99), s->v[s->n - 1], s->n);
}

/* One row: steady state (first half) and after the retarget (second half). */
static void row2(const char *what, struct samples s[2], const char *ref)
{
	sort(&s[0]);
	sort(&s[1]);
	printf("| %s |", what);
	cells(&s[0]);
	cells(&s[1]);
	printf(" %s |\n", ref);
}

static void row1(const char *what, struct samples *s, const char *ref)
{
	sort(s);
	printf("| %s | – | – | – | – |", what);
	cells(s);
	printf(" %s |\n", ref);
}

static void snap_line(const char *when, const struct snapshot *a)
{
	if (!a->have) {
		printf("| jobs %s | JOB_LIST not answered |\n", when);
		return;
	}
	printf("| jobs %s: stable / converging / oscillating / rejected / idle+calibrating; "
	       "|err| ≤ ε | %d / %d / %d / %d / %d; %d of %d, mean |err| %.2f, max %.2f points "
	       "|\n",
	       when, a->nstate[PADM_ST_STABLE], a->nstate[PADM_ST_CONVERGING],
	       a->nstate[PADM_ST_OSCILLATING], a->nstate[PADM_ST_REJECTED],
	       a->nstate[PADM_ST_IDLE] + a->nstate[PADM_ST_CALIBRATING], a->in_eps, a->with_rate,
	       a->with_rate ? a->abs_err_sum / a->with_rate : NAN, a->abs_err_max);
}

static void report(double cpu0, double cpu_mid, double cpu1, double cpu_peak, double self, long rss,
                   long hwm)
{
	double win = (double)o.measure / 1e9, half = win / 2;
	double rounds = win * 1e9 / (double)o.interval;
	char ivs[32], ws[32];

	duration_format(o.interval, ivs, sizeof(ivs));
	duration_format(o.measure, ws, sizeof(ws));
	printf("\n### %s%s%d nodes x %d jobs x %d ranks, every rank reports every %s, %s, "
	       "window %s\n\n",
	       o.label, o.label[0] ? ": " : "", o.nodes, o.jobs, o.ranks, ivs,
	       o.burst ? "burst (all jobs report at the same instant)"
	               : "jobs spread evenly over the interval",
	       ws);
	printf("Times in ms. Steady = first half of the window; retarget = second half, which "
	       "starts with a SET_RATE for every job.\n\n");
	printf("| figure | steady p50 | p99 | max | n | retarget p50 | p99 | max | n | "
	       "reference / goal |\n|---|---|---|---|---|---|---|---|---|---|\n");
	row2("control cycle: last RATE of a round → CONSTRAINT at the first node", lat_first,
	     "≤ 10 ms (DESIGN.md §8); logic alone 2.46 / 6.53");
	row2("control cycle: last RATE of a round → CONSTRAINT at all the job's nodes", lat_all,
	     "≤ 10 ms");
	row2("full round (--burst): first RATE → last node's heartbeat echo", round_t,
	     "≤ 10 ms; logic alone 2.46 / 6.53");
	row2("heartbeat RTT", hb_rtt, "–");
	row1("target change: SET_RATE → CONSTRAINT at all the job's nodes", &lat_adm_all, "–");
	row1("target change: SET_RATE → reply (all acked, committed)", &lat_adm_reply,
	     "what `vschedctl rate` waits for");
	printf("\n| figure | value |\n|---|---|\n");
	printf("| controller CPU, utime+stime, %% of one CPU: whole window / steady / retarget "
	       "half (largest 1 s) | %.1f %% / %.1f %% / %.1f %% (%.1f %%) |\n",
	       100.0 * (cpu1 - cpu0) / win, 100.0 * (cpu_mid - cpu0) / half,
	       100.0 * (cpu1 - cpu_mid) / half, cpu_peak);
	printf("| controller CPU per report interval, steady (all %d jobs' rounds + that "
	       "interval's heartbeats, BW, TASK_STATS) | %.2f ms |\n",
	       o.jobs, 1000.0 * (cpu_mid - cpu0) / (rounds / 2));
	printf("| controller RSS / peak RSS at the end | %.1f MiB / %.1f MiB |\n",
	       (double)rss / 1024.0, (double)hwm / 1024.0);
	printf("| messages to the controller | %.0f /s (RATE %.0f, HEARTBEAT %.0f, BW %.0f, "
	       "TASK_STATS %.0f, CONSTRAINT_ACK %.0f) |\n",
	       (double)sent_all / win, (double)sent_type[PCTL_RATE] / win,
	       (double)sent_type[PCTL_HEARTBEAT] / win, (double)sent_type[PCTL_BW] / win,
	       (double)sent_type[PCTL_TASK_STATS] / win,
	       (double)sent_type[PCTL_CONSTRAINT_ACK] / win);
	printf("| messages from the controller | %.0f /s (HEARTBEAT %.0f, CONSTRAINT %.0f, "
	       "HELLO_ACK %.0f) |\n",
	       (double)recv_all / win, (double)recv_type[PCTL_HEARTBEAT] / win,
	       (double)recv_type[PCTL_CONSTRAINT] / win, (double)recv_type[PCTL_HELLO_ACK] / win);
	for (int h = 0; h < 2; h++) {
		const struct snapshot *a = &snap[h], *b = &snap[h + 1];
		if (a->have && b->have)
			printf("| control evaluations / constraint changes, %s | %.1f /s / %.1f /s "
			       "|\n",
			       h == 0 ? "steady" : "retarget half",
			       (double)(b->evals - a->evals) / half,
			       (double)(b->changes - a->changes) / half);
	}
	snap_line("before the retarget", &snap[1]);
	snap_line("at the end", &snap[2]);
	printf("| simulator CPU (this process, both threads) | %.1f %% of one CPU |\n",
	       100.0 * self / win);
	for (int w = 0; w < 2; w++)
		printf("| %s, all threads, steady / retarget half: on a CPU; runnable but waiting "
		       "for a CPU (schedstat) | %.1f %% / %.1f %%; %.1f %% / %.1f %% |\n",
		       w == 0 ? "controller" : "simulator",
		       100.0 * (sched_run[w][1] - sched_run[w][0]) / half,
		       100.0 * (sched_run[w][2] - sched_run[w][1]) / half,
		       100.0 * (sched_wait[w][1] - sched_wait[w][0]) / half,
		       100.0 * (sched_wait[w][2] - sched_wait[w][1]) / half);
	printf("| anomalies | EBUSY retries %llu, SET_RATE refused %llu, HELLO_ACK refusals "
	       "%llu, stale constraints %llu, constraints for unknown jobs %llu, bad frames "
	       "%llu, sends failed %llu |\n",
	       (unsigned long long)ebusy, (unsigned long long)adm_refused,
	       (unsigned long long)hello_refused, (unsigned long long)stale_acks,
	       (unsigned long long)unknown_cons, (unsigned long long)bad_frames,
	       (unsigned long long)send_fail);
	printf("RESULT label=%s interval_ms=%.0f burst=%d cyc_p50=%.3f cyc_p99=%.3f "
	       "cycall_p50=%.3f cycall_p99=%.3f round_p50=%.3f round_p99=%.3f hb_p50=%.3f "
	       "hb_p99=%.3f rt_cyc_p50=%.3f rt_cyc_p99=%.3f adm_p50=%.3f adm_p99=%.3f "
	       "cpu_steady=%.1f cpu_rt=%.1f cpu_peak=%.1f rss_mib=%.1f msg_in=%.0f msg_out=%.0f "
	       "sim_cpu=%.1f ctl_wait_steady=%.1f\n",
	       o.label[0] ? o.label : "-", (double)o.interval / 1e6, o.burst,
	       pct(&lat_first[0], 50), pct(&lat_first[0], 99), pct(&lat_all[0], 50),
	       pct(&lat_all[0], 99), pct(&round_t[0], 50), pct(&round_t[0], 99),
	       pct(&hb_rtt[0], 50), pct(&hb_rtt[0], 99), pct(&lat_first[1], 50),
	       pct(&lat_first[1], 99), pct(&lat_adm_reply, 50), pct(&lat_adm_reply, 99),
	       100.0 * (cpu_mid - cpu0) / half, 100.0 * (cpu1 - cpu_mid) / half, cpu_peak,
	       (double)rss / 1024.0, (double)sent_all / win, (double)recv_all / win,
	       100.0 * self / win, 100.0 * (sched_wait[0][1] - sched_wait[0][0]) / half);
}

/* ---- main ---- */

/* The run's schedule and what it measured of the controller's CPU (main's phases). */
struct run {
	mono_ns t_start, t_set, t_end;
	struct cursor cj, chb, cbw, cst;
	double cpu0, cpu1, cpu_mid, self0, self1, cpu_prev, cpu_peak;
	mono_ns next_cpu, prev_cpu_at;
	int ok, set_done, retarget_done;
};

/* Context, sockets' tables, epoll, per-tick records, the nodes' names and placement. */
static int setup(void)
{
	struct rlimit rl;

	/* 1,000 DEALERs: two descriptors each (mailbox, TCP) */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	zctx = zmq_ctx_new();
	if (zctx == NULL || zmq_ctx_set(zctx, ZMQ_MAX_SOCKETS, o.nodes + o.jobs + 64) != 0) {
		fprintf(stderr, "ctl_scale: zmq context: %s\n", zmq_strerror(zmq_errno()));
		return -1;
	}
	nodes = calloc((size_t)o.nodes, sizeof(*nodes));
	jobs = calloc((size_t)o.jobs, sizeof(*jobs));
	nsocks = o.nodes + o.jobs + 1;
	socks = calloc((size_t)nsocks, sizeof(*socks));
	dirty = calloc((size_t)nsocks, 1);
	dirty_list = calloc((size_t)nsocks, sizeof(*dirty_list));
	epfd = epoll_create1(EPOLL_CLOEXEC);
	nticks = (uint64_t)((o.warmup + o.measure) / NSEC_PER_MSEC) + 1000; /* >= 1 ms heartbeats */
	tick_t0 = calloc(nticks, sizeof(*tick_t0));
	tick_last = calloc(nticks, sizeof(*tick_last));
	tick_echoes = calloc(nticks, sizeof(*tick_echoes));
	if (!nodes || !jobs || !socks || !dirty || !dirty_list || epfd < 0 || !tick_t0 ||
	    !tick_last || !tick_echoes) {
		fprintf(stderr, "ctl_scale: out of memory\n");
		return -1;
	}
	for (int i = 0; i < o.nodes; i++)
		snprintf(nodes[i].name, sizeof(nodes[i].name), "node%04d", i);
	place();
	return 0;
}

/* Connects every node and registers it, the jobs' and the listing's admin sockets. */
static int register_all(void)
{
	mono_ns now = mono_now(), t_reg = now;
	int registered = 0;

	for (int i = 0; i < o.nodes; i++) {
		nodes[i].sock = dealer(o.agents);
		watch(i, nodes[i].sock);
		send_hello(&nodes[i], now);
	}
	for (int j = 0; j < o.jobs; j++) {
		jobs[j].adm = dealer(o.admin);
		watch(o.nodes + j, jobs[j].adm);
	}
	lst = dealer(o.admin);
	watch(nsocks - 1, lst);
	while (registered < o.nodes) {
		recv_pass(100);
		now = mono_now();
		registered = 0;
		for (int i = 0; i < o.nodes; i++) {
			registered += nodes[i].up;
			if (!nodes[i].up && now - nodes[i].hello_sent > HELLO_RESEND)
				send_hello(&nodes[i], now);
		}
		if (now - t_reg > REGISTER_LIMIT) {
			fprintf(stderr, "ctl_scale: only %d of %d nodes registered in 60 s\n",
			        registered, o.nodes);
			return -1;
		}
	}
	fprintf(stderr, "ctl_scale: %d nodes registered in %.0f ms, %d jobs x %d ranks\n", o.nodes,
	        (double)(mono_now() - t_reg) / 1e6, o.jobs, o.ranks);
	return 0;
}

/* The run: reports from t_start, targets at t_set, window [w0, w1), retarget mid. */
static void schedule(struct run *r)
{
	r->t_start = mono_now() + 500 * NSEC_PER_MSEC;
	r->t_set = r->t_start + (2 * o.interval > NSEC_PER_SEC ? 2 * o.interval : NSEC_PER_SEC);
	w0 = r->t_start + o.warmup;
	w1 = w0 + o.measure;
	t_retarget = w0 + o.measure / 2;
	r->t_end = w1 + 2 * NSEC_PER_SEC; /* outstanding replies */
	for (int j = 0; j < o.jobs; j++) {
		jobs[j].acc_at = r->t_start;
		jobs[j].last_report = r->t_start;
		jobs[j].last_rate_at = r->t_start;
	}
	r->cj = (struct cursor){o.jobs, o.interval, r->t_start, !o.burst, 0};
	r->chb = (struct cursor){o.nodes, hb_every, r->t_start, !o.burst, 0};
	r->cbw = (struct cursor){o.nodes, BW_EVERY, r->t_start, !o.burst, 0};
	r->cst = (struct cursor){o.nodes, STATS_EVERY, r->t_start, !o.burst, 0};
}

/* The window's edges (CPU, scheduler and job samples) and the controller's CPU every s. */
static void window_edges(struct run *r, mono_ns now)
{
	if (!in_window && !mono_before(now, w0) && mono_before(now, w1)) {
		in_window = true;
		proc_cpu(o.pid, &r->cpu0);
		sched_sample(0);
		r->self0 = self_cpu();
		r->cpu_prev = r->cpu0;
		r->prev_cpu_at = now;
		r->next_cpu = now + NSEC_PER_SEC;
		admin_list(0);
	}
	if (in_window && !mono_before(now, w1)) {
		in_window = false;
		proc_cpu(o.pid, &r->cpu1);
		sched_sample(2);
		r->self1 = self_cpu();
		admin_list(2);
	}
	if (in_window && !mono_before(now, r->next_cpu)) {
		double c;
		if (proc_cpu(o.pid, &c) == 0) {
			double p =
			    100.0 * (c - r->cpu_prev) / ((double)(now - r->prev_cpu_at) / 1e9);
			if (p > r->cpu_peak)
				r->cpu_peak = p;
			r->cpu_prev = c;
			r->prev_cpu_at = now;
		}
		r->next_cpu += NSEC_PER_SEC;
	}
}

/* The targets at t_set and the retarget; EBUSY retries. Returns the next retry time. */
static mono_ns admin_phases(struct run *r, mono_ns now, mono_ns next)
{
	if (!r->set_done && !mono_before(now, r->t_set)) {
		r->set_done = 1;
		for (int j = 0; j < o.jobs; j++)
			admin_send(&jobs[j], target_milli(j, 0), now, true);
	}
	if (!r->retarget_done && !mono_before(now, t_retarget)) {
		r->retarget_done = 1;
		proc_cpu(o.pid, &r->cpu_mid);
		sched_sample(1);
		admin_list(1);
		for (int j = 0; j < o.jobs; j++) {
			if (jobs[j].adm_pending) {
				fprintf(stderr, "ctl_scale: %s: first target still pending\n",
				        jobs[j].name);
				r->ok = 0;
				continue;
			}
			admin_send(&jobs[j], target_milli(j, 1), now, true);
		}
	}
	for (int j = 0; j < o.jobs; j++) {
		struct sjob *jb = &jobs[j];
		if (jb->adm_pending && jb->adm_retry_at != 0) {
			if (!mono_before(now, jb->adm_retry_at))
				admin_send(jb, jb->adm_milli, now, false);
			else
				next = mono_min(next, jb->adm_retry_at);
		}
	}
	return next;
}

/* Entity e of cursor c is due: its report, BW, TASK_STATS or heartbeat. */
static void fire(struct run *r, struct cursor *c, int e, mono_ns t)
{
	if (c == &r->cj) {
		if (e == 0) {
			burst_t0 = t;
			burst_due = cur_due(c);
		}
		job_report(&jobs[e], t);
	} else if (c == &r->cbw) {
		if (nodes[e].up)
			send_bw(&nodes[e]);
	} else if (c == &r->cst) {
		if (nodes[e].up)
			send_stats(&nodes[e]);
	} else {
		uint64_t seq = c->k / (uint64_t)o.nodes;
		/* a full round: the heartbeats that follow a tick's reports */
		if (o.burst && seq < nticks && e == 0 && in_window && burst_due == cur_due(c))
			tick_t0[seq] = burst_t0;
		if (nodes[e].up)
			send_hb(&nodes[e], seq, t);
		else if (t - nodes[e].hello_sent > HELLO_RESEND)
			send_hello(&nodes[e], t);
	}
}

/* Fires what is due, reading the controller's messages every few events. Returns when the
 * next one is due. */
static mono_ns fire_due(struct run *r, mono_ns next)
{
	struct cursor *cs[4] = {&r->cj, &r->cbw, &r->cst, &r->chb}; /* heartbeats last */
	int fired = 0;

	for (int c = 0; c < 4; c++) {
		/* bounded, so that window edges and replies are handled when behind */
		for (int burst = 0;
		     burst < 4 * RECV_EVERY && !mono_before(mono_now(), cur_due(cs[c])); burst++) {
			fire(r, cs[c], cur_entity(cs[c]), mono_now());
			cs[c]->k++;
			if (++fired % RECV_EVERY == 0)
				recv_pass(0);
		}
		next = mono_min(next, cur_due(cs[c]));
	}
	return next;
}

static void run(struct run *r)
{
	for (;;) {
		mono_ns now = mono_now(), next = r->t_end;

		if (!mono_before(now, r->t_end))
			break;
		window_edges(r, now);
		next = admin_phases(r, now, next);
		next = fire_due(r, next);
		if (in_window)
			next = mono_min(next, mono_min(r->next_cpu, w1));
		else if (mono_before(now, w0))
			next = mono_min(next, w0);
		next = mono_min(next, r->set_done ? t_retarget : r->t_set);
		now = mono_now();
		recv_pass(mono_before(now, next)
		              ? (long)((next - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC)
		              : 0);
	}
}

/* Closes and frees everything; false when a target change was never answered. */
static bool teardown(void)
{
	bool ok = true;

	for (int j = 0; j < o.jobs; j++) {
		if (jobs[j].adm_pending) {
			fprintf(stderr, "ctl_scale: %s: target change not answered\n",
			        jobs[j].name);
			ok = false;
		}
		zmq_close(jobs[j].adm);
		free(jobs[j].node);
		free(jobs[j].slot);
	}
	for (int i = 0; i < o.nodes; i++)
		zmq_close(nodes[i].sock);
	zmq_close(lst);
	zmq_ctx_term(zctx);
	free(nodes);
	free(jobs);
	free(socks);
	free(dirty);
	free(dirty_list);
	close(epfd);
	free(tick_t0);
	free(tick_last);
	free(tick_echoes);
	for (int h = 0; h < 2; h++) {
		free(lat_first[h].v);
		free(lat_all[h].v);
		free(hb_rtt[h].v);
		free(round_t[h].v);
	}
	free(lat_adm_first.v);
	free(lat_adm_all.v);
	free(lat_adm_reply.v);
	return ok;
}

int main(int argc, char **argv)
{
	struct run r = {.ok = 1};
	long rss, hwm;

	if (parse_args(argc, argv) != 0) {
		usage(stderr);
		return 2;
	}
	if (setup() != 0 || register_all() != 0)
		return 1;
	schedule(&r);
	run(&r);
	rss = proc_status_kb(o.pid, "VmRSS");
	hwm = proc_status_kb(o.pid, "VmHWM");
	/* full rounds (--burst): ticks whose every node's echo came back */
	for (uint64_t k = 0; o.burst && k < nticks; k++)
		if (tick_t0[k] != 0 && tick_echoes[k] == o.nodes)
			samples_add(&round_t[phase_of(tick_t0[k])],
			            (double)(tick_last[k] - tick_t0[k]) / 1e6);
	report(r.cpu0, r.cpu_mid, r.cpu1, r.cpu_peak, r.self1 - r.self0, rss, hwm);
	if (!teardown() || adm_refused > 0 || bad_frames > 0)
		r.ok = 0;
	return r.ok ? 0 : 1;
}
