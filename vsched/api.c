/*
 * api.c — vsched's local API: one ZeroMQ ROUTER socket on cfg.endpoint, served by the main
 * thread between calls to sched_housekeep() (DESIGN.md §2 "Local API", wire format in
 * common/proto_vsched.h). Clients are REQ sockets (vschedctl, the agent); DEALER clients
 * that send the bare request frame are answered too.
 *
 * Why ROUTER and not REP: the protocol is strictly one request, one reply, served one at a
 * time on this thread, which is what REP does — but REP is not robust against hostile
 * input in libzmq 4.3.4. A message without an envelope delimiter (any non-ZMTP garbage that
 * libzmq's ZMTP/1.0 fallback turns into frames) makes REP roll back its reply pipe; when
 * that peer is already gone the rollback leaves ROUTER's "more" state set and the *next*
 * client's reply is silently dropped (measured here: 3 of 5 requests lost right after
 * 64 KiB of random bytes on the socket, 0 of 5 with ROUTER). With ROUTER we keep the
 * envelope ourselves: the routing id and everything up to the first empty frame is echoed
 * in front of the reply; nothing is ever rolled back. libzmq still fair-queues between
 * clients (an idle or slow one never blocks another) and drops a reply whose client has
 * gone.
 *
 * Guarantees kept here:
 *  - Nothing a client sends can crash the daemon: frames are received as zmq_msg_t (any
 *    length up to ZMQ_MAXMSGSIZE, larger ones make libzmq drop the connection), every
 *    frame is decoded by vsp_decode_request (exact length, magic, version, type, ranges);
 *    multi-part messages, oversized frames and undecodable ones get an error reply with the
 *    reason, are logged once (rate-limited), and the loop carries on.
 *  - The request path is not starved by the SCHED_FIFO 98 tasks it manages: ZeroMQ's I/O
 *    thread runs at SCHED_FIFO 99 (VS_PRIO_DISPATCH) when the process may use it.
 *  - sched_housekeep() runs when its poll set reports something (a task exited, threads
 *    were born, the guardian died) and by sched_next_housekeep() at the latest, whatever
 *    the request traffic; with nothing to do the thread sleeps.
 *  - An ipc socket file is created under umask 077 (never world-accessible, not even for a
 *    moment), then set to cfg.endpoint_mode, and removed at exit if it is still ours.
 */
#include "vsched.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <zmq.h>

#include "duration.h"
#include "log.h"

#define API_MAXMSGSIZE   65536 /* frames up to this get a reasoned refusal; larger: dropped */
#define API_HANDSHAKE_MS 2000  /* drop connections that never complete a ZMTP handshake */
#define API_BURST        64    /* requests served per wake-up before housekeeping is checked */
#define API_LOG_PER_SEC  50    /* bad-request log lines per second, the rest counted */
#define API_MAX_FRAMES   16    /* frames of one message kept (envelope and body) */
#define API_IPC_PREFIX   "ipc://"

struct api {
	struct sched *s;
	void *ctx;
	void *sock;
	char ipc_path[sizeof(((struct vsched_config *)0)->endpoint)]; /* "" if no file */
	bool own_file;
	dev_t dev;
	ino_t ino;
	/* log limiter for messages caused by clients */
	mono_ns log_window;
	unsigned log_count;
	unsigned log_suppressed;
};

/*
 * Logs one line about a client's request, at most API_LOG_PER_SEC per second so that a
 * client sending garbage in a loop cannot flood the log; suppressed lines are counted and
 * reported with the next line that gets through.
 */
__attribute__((format(printf, 3, 4))) static void api_log(struct api *a, bool warn, const char *fmt,
                                                          ...)
{
	mono_ns now = mono_now();
	char line[512];
	va_list ap;

	if (now - a->log_window >= NSEC_PER_SEC) {
		a->log_window = now;
		a->log_count = 0;
	}
	if (a->log_count >= API_LOG_PER_SEC) {
		a->log_suppressed++;
		return;
	}
	a->log_count++;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (a->log_suppressed > 0) {
		if (warn)
			log_warnx("api: %s (%u similar lines suppressed)", line, a->log_suppressed);
		else
			log_info("api: %s (%u similar lines suppressed)", line, a->log_suppressed);
		a->log_suppressed = 0;
	} else if (warn) {
		log_warnx("api: %s", line);
	} else {
		log_info("api: %s", line);
	}
}

static void *api_probe_thread(void *arg)
{
	(void)arg;
	return NULL;
}

/*
 * True when this process may create a thread at SCHED_FIFO prio. libzmq 4.3.4 applies
 * ZMQ_THREAD_SCHED_POLICY/PRIORITY inside its new I/O thread with pthread_setschedparam()
 * and aborts (posix_assert) if that fails, so we only ask for it after this check.
 */
static bool api_fifo_permitted(int prio)
{
	struct sched_param sp = {.sched_priority = prio};
	pthread_attr_t at;
	pthread_t th;
	int rc;

	if (pthread_attr_init(&at) != 0)
		return false;
	rc = pthread_attr_setinheritsched(&at, PTHREAD_EXPLICIT_SCHED);
	if (rc == 0)
		rc = pthread_attr_setschedpolicy(&at, SCHED_FIFO);
	if (rc == 0)
		rc = pthread_attr_setschedparam(&at, &sp);
	if (rc == 0)
		rc = pthread_create(&th, &at, api_probe_thread, NULL);
	pthread_attr_destroy(&at);
	if (rc != 0)
		return false;
	pthread_join(th, NULL);
	return true;
}

/*
 * A context whose I/O thread runs at SCHED_FIFO VS_PRIO_DISPATCH, on api_cpu when that is
 * >= 0. The options must be set before the first socket: libzmq starts its threads then and
 * applies them only at start.
 */
static void *api_ctx_new(int api_cpu)
{
	void *ctx = zmq_ctx_new();

	if (ctx == NULL)
		fatal("api: zmq_ctx_new");
	if (zmq_ctx_set(ctx, ZMQ_BLOCKY, 0) != 0)
		log_warn("api: zmq_ctx_set ZMQ_BLOCKY");
	if (!api_fifo_permitted(VS_PRIO_DISPATCH)) {
		log_warnx("api: SCHED_FIFO %d not permitted; ZeroMQ I/O thread left at the default"
		          " policy (requests may be delayed by real-time tasks)",
		          VS_PRIO_DISPATCH);
		return ctx;
	}
	if (zmq_ctx_set(ctx, ZMQ_THREAD_SCHED_POLICY, SCHED_FIFO) != 0 ||
	    zmq_ctx_set(ctx, ZMQ_THREAD_PRIORITY, VS_PRIO_DISPATCH) != 0)
		log_warnx("api: cannot raise the ZeroMQ I/O thread: %s", zmq_strerror(zmq_errno()));
	if (api_cpu >= 0 && zmq_ctx_set(ctx, ZMQ_THREAD_AFFINITY_CPU_ADD, api_cpu) != 0)
		log_warnx("api: cannot pin the ZeroMQ I/O thread to CPU %d: %s", api_cpu,
		          zmq_strerror(zmq_errno()));
	return ctx;
}

/*
 * The CPU the request path runs on, or -1 to leave it unpinned. Every request is handed
 * from ZeroMQ's I/O thread to the API thread and back; on this VM each cross-CPU wake-up
 * costs 50-70 us, so both are kept on one CPU (the first managed one). Only when they run
 * at SCHED_FIFO VS_PRIO_DISPATCH: at a lower policy the tasks raised to FIFO 98 on that CPU
 * would starve them. Pins the calling (API) thread; threads it starts later (liburcu's
 * call_rcu thread, a restarted watchdog) inherit the CPU, which they only need briefly.
 */
static int api_pin(const struct sched *s)
{
	int policy, cpu = s->cfg.cpus[0];
	struct sched_param sp;
	cpu_set_t set;

	if (pthread_getschedparam(pthread_self(), &policy, &sp) != 0 || policy != SCHED_FIFO ||
	    sp.sched_priority < VS_PRIO_DISPATCH || !api_fifo_permitted(VS_PRIO_DISPATCH))
		return -1;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0) {
		log_warnx("api: cannot pin the API thread to CPU %d", cpu);
		return -1;
	}
	log_info("api: API thread and ZeroMQ I/O thread on CPU %d", cpu);
	return cpu;
}

/* mkdir -p of the directory holding path, new directories 0755. Returns 0 or -1 (logged). */
static int api_mkdir_parent(const char *path)
{
	char dir[PATH_MAX];
	char *slash;
	size_t i;

	if (strlen(path) >= sizeof(dir)) {
		log_warnx("api: %s: path too long", path);
		return -1;
	}
	strcpy(dir, path);
	slash = strrchr(dir, '/');
	if (slash == NULL || slash == dir)
		return 0; /* relative name in the cwd, or directly under / */
	*slash = '\0';
	for (i = 1; dir[i] != '\0'; i++) {
		if (dir[i] != '/')
			continue;
		dir[i] = '\0';
		if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
			log_warn("api: mkdir %s", dir);
			return -1;
		}
		dir[i] = '/';
	}
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		log_warn("api: mkdir %s", dir);
		return -1;
	}
	return 0;
}

/*
 * Checks what is at an ipc socket path before binding. libzmq unlinks whatever is there,
 * which would silently take the endpoint away from a running vsched or delete a file that
 * is not a socket: refuse both. A stale socket (nobody accepts) is fine.
 */
static int api_ipc_check(const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct stat st;
	int fd, rc;

	if (lstat(path, &st) != 0) {
		if (errno == ENOENT)
			return 0;
		log_warn("api: %s", path);
		return -1;
	}
	if (!S_ISSOCK(st.st_mode)) {
		log_warnx("api: %s exists and is not a socket; not replacing it", path);
		return -1;
	}
	if (strlen(path) >= sizeof(sun.sun_path)) {
		log_warnx("api: %s: path too long for a unix socket (max %zu bytes)", path,
		          sizeof(sun.sun_path) - 1);
		return -1;
	}
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		log_warn("api: socket");
		return -1;
	}
	rc = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
	close(fd);
	if (rc == 0) {
		log_warnx("api: %s is in use (another vsched running?)", path);
		return -1;
	}
	return 0;
}

/* Creates and binds the ROUTER socket. Returns 0 or -1 (logged). */
static int api_bind(struct api *a)
{
	const struct vsched_config *cfg = &a->s->cfg;
	const char *ep = cfg->endpoint;
	int linger = 0, handshake = API_HANDSHAKE_MS;
	int64_t maxmsg = API_MAXMSGSIZE;
	bool ipc_file = false;
	mode_t old;
	int rc;

	if (ep[0] == '\0') {
		log_warnx("api: no endpoint configured");
		return -1;
	}
	if (strncmp(ep, API_IPC_PREFIX, strlen(API_IPC_PREFIX)) == 0) {
		const char *path = ep + strlen(API_IPC_PREFIX);

		/* "@name" is Linux's abstract namespace, "*" a generated name: no file to manage */
		if (path[0] != '@' && strcmp(path, "*") != 0) {
			if (path[0] == '\0') {
				log_warnx("api: %s: empty ipc path", ep);
				return -1;
			}
			snprintf(a->ipc_path, sizeof(a->ipc_path), "%s", path);
			ipc_file = true;
			if (api_mkdir_parent(path) != 0 || api_ipc_check(path) != 0)
				return -1;
		}
	}

	a->sock = zmq_socket(a->ctx, ZMQ_ROUTER);
	if (a->sock == NULL) {
		log_warnx("api: zmq_socket: %s", zmq_strerror(zmq_errno()));
		return -1;
	}
	if (zmq_setsockopt(a->sock, ZMQ_LINGER, &linger, sizeof(linger)) != 0 ||
	    zmq_setsockopt(a->sock, ZMQ_MAXMSGSIZE, &maxmsg, sizeof(maxmsg)) != 0 ||
	    zmq_setsockopt(a->sock, ZMQ_HANDSHAKE_IVL, &handshake, sizeof(handshake)) != 0) {
		log_warnx("api: zmq_setsockopt: %s", zmq_strerror(zmq_errno()));
		return -1;
	}

	/* umask 077 while binding: the socket file never exists with a wider mode */
	old = umask(077);
	rc = zmq_bind(a->sock, ep);
	umask(old);
	if (rc != 0) {
		log_warnx("api: cannot bind %s: %s", ep, zmq_strerror(zmq_errno()));
		return -1;
	}
	if (ipc_file) {
		struct stat st;

		if (stat(a->ipc_path, &st) != 0) {
			log_warn("api: %s", a->ipc_path);
			return -1;
		}
		a->own_file = true;
		a->dev = st.st_dev;
		a->ino = st.st_ino;
		if (chmod(a->ipc_path, (mode_t)(cfg->endpoint_mode & 07777)) != 0) {
			log_warn("api: chmod %o %s", cfg->endpoint_mode, a->ipc_path);
			return -1;
		}
	}
	log_info("api: listening on %s", ep);
	return 0;
}

/* Removes the ipc socket file if it is still the one we bound (not a successor's). */
static void api_unlink(struct api *a)
{
	struct stat st;

	if (!a->own_file)
		return;
	if (lstat(a->ipc_path, &st) == 0 && st.st_dev == a->dev && st.st_ino == a->ino &&
	    unlink(a->ipc_path) != 0)
		log_warn("api: unlink %s", a->ipc_path);
	a->own_file = false;
}

static void api_close(struct api *a)
{
	if (a->sock != NULL) {
		zmq_close(a->sock);
		a->sock = NULL;
	}
	api_unlink(a);
	if (a->ctx != NULL) {
		zmq_ctx_term(a->ctx);
		a->ctx = NULL;
	}
}

/* Copies s into a reply message, truncated to VSP_MSG_MAX bytes. */
static void reply_msg(struct vsp_reply *rep, const char *s)
{
	snprintf(rep->msg, sizeof(rep->msg), "%s", s);
}

/* Σ slice / period over the task's windows, in percent. */
static double stat_util_pct(const struct vsp_task_stat *t)
{
	unsigned n = t->nwin >= 1 && t->nwin <= VSP_MAX_WINDOWS ? t->nwin : 1;
	double u = 0;

	for (unsigned i = 0; i < n; i++) {
		const struct vsp_resv *r = i == 0 ? &t->resv : &t->win[i];
		u += r->period > 0 ? 100.0 * (double)r->slice / (double)r->period : 0.0;
	}
	return u;
}

/*
 * Finds pid's record in a fresh snapshot and puts it in the reply (ntasks 1), so that the
 * client learns where the task went. Returns the record or NULL (reply left without one).
 */
static const struct vsp_task_stat *reply_task(struct api *a, pid_t pid, struct vsp_reply *rep)
{
	struct vsp_task_stat *all = NULL;
	uint32_t n = 0, i;

	if (sched_list(a->s, &all, &n) != 0 || all == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		if (all[i].pid == pid) {
			if (i != 0)
				all[0] = all[i];
			rep->tasks = all;
			rep->ntasks = 1;
			return &all[0];
		}
	}
	free(all);
	return NULL;
}

static void describe_task(const struct vsp_task_stat *t, const char *verb, char *out, size_t len)
{
	char p[32], sl[32], d[32];

	duration_format(t->resv.period, p, sizeof(p));
	duration_format(t->resv.slice, sl, sizeof(sl));
	duration_format(t->resv.deadline, d, sizeof(d));
	if (t->nwin > 1) {
		size_t k;
		char ph[32];

		k = (size_t)snprintf(out, len, "pid %d %s on CPU %d: period %s, %u windows",
		                     (int)t->pid, verb, (int)t->cpu, p, t->nwin);
		for (unsigned i = 0; i < t->nwin && i < VSP_MAX_WINDOWS && k < len; i++) {
			const struct vsp_resv *r = &t->win[i];
			duration_format(r->phase, ph, sizeof(ph));
			duration_format(r->deadline, d, sizeof(d));
			duration_format(r->slice, sl, sizeof(sl));
			k += (size_t)snprintf(out + k, len - k, "%s %s+%s/%s", i ? "," : "", ph, d,
			                      sl);
		}
		if (k < len)
			snprintf(out + k, len - k, " (U %.1f%%)", stat_util_pct(t));
		return;
	}
	snprintf(out, len, "pid %d %s on CPU %d: period %s slice %s deadline %s (U %.1f%%)",
	         (int)t->pid, verb, (int)t->cpu, p, sl, d, stat_util_pct(t));
}

/* The confirmation of a successful request (req->type ADD, SET, DEL, EPOCH) into ok. */
static void ok_message(struct api *a, const struct vsp_request *req, struct vsp_reply *rep,
                       char *ok, size_t len)
{
	const struct vsp_task_stat *t;

	switch (req->type) {
	case VSP_ADD:
	case VSP_SET:
		t = reply_task(a, req->pid, rep);
		if (t != NULL)
			describe_task(t, req->type == VSP_ADD ? "added" : "updated", ok, len);
		else
			snprintf(ok, len, "pid %d %s", (int)req->pid,
			         req->type == VSP_ADD ? "added" : "updated");
		break;
	case VSP_DEL:
		snprintf(ok, len, "pid %d removed", (int)req->pid);
		break;
	case VSP_EPOCH:
		if (req->epoch_realtime_ns == 0)
			snprintf(ok, len, "epoch set to now");
		else
			snprintf(ok, len, "epoch set to %llu ns (CLOCK_REALTIME)",
			         (unsigned long long)req->epoch_realtime_ns);
		break;
	default:
		ok[0] = '\0';
		break;
	}
}

/* LIST: every task's record (at most VSP_MAX_TASKS). Returns 0 or -errno with why. */
static int api_list(struct api *a, struct vsp_reply *rep, char *why, size_t whylen)
{
	struct vsp_task_stat *all = NULL;
	uint32_t n = 0;
	int rc = sched_list(a->s, &all, &n);

	if (rc != 0) {
		snprintf(why, whylen, "cannot list tasks: %s", strerror(-rc));
		return rc;
	}
	if (n > VSP_MAX_TASKS) {
		snprintf(why, whylen, "%u tasks, first %u listed", n, VSP_MAX_TASKS);
		n = VSP_MAX_TASKS;
	} else {
		snprintf(why, whylen, "%u task%s", n, n == 1 ? "" : "s");
	}
	rep->tasks = all;
	rep->ntasks = n;
	return 0;
}

/*
 * ADD and SET. A running self-test never costs a client anything: a request refused for
 * room while the probe holds its share is retried once the test has ended, and a task
 * added to the probe's CPU ends the test (selftest_yield).
 */
static int api_add_set(struct sched *s, const struct vsp_request *req, char *why, size_t whylen)
{
	bool add = req->type == VSP_ADD;
	int rc = add ? sched_add(s, req, why, whylen) : sched_set(s, req, why, whylen);

	if (rc == -ENOSPC && selftest_yield(s, req->pid, -1))
		rc = add ? sched_add(s, req, why, whylen) : sched_set(s, req, why, whylen);
	if (rc == 0 && add)
		selftest_yield(s, req->pid, sched_cpu_of(s, req->pid));
	return rc;
}

/*
 * Runs one decoded request against the engine and fills rep. The engine validates fully
 * and changes nothing on refusal; refusals are logged here (the request came from outside).
 * INFO and SELFTEST replies carry the node's figures, a refused SELFTEST too.
 */
static void api_dispatch(struct api *a, const struct vsp_request *req, struct vsp_reply *rep)
{
	char why[VSP_MSG_MAX + 1] = "";
	char ok[VSP_MSG_MAX + 1];
	int rc = -EINVAL;

	switch (req->type) {
	case VSP_ADD:
	case VSP_SET:
		rc = api_add_set(a->s, req, why, sizeof(why));
		break;
	case VSP_DEL:
		rc = sched_del(a->s, req->pid, why, sizeof(why));
		break;
	case VSP_LIST:
		rc = api_list(a, rep, ok, sizeof(ok));
		if (rc == 0) {
			reply_msg(rep, ok);
			rep->status = 0;
			return;
		}
		snprintf(why, sizeof(why), "%s", ok);
		break;
	case VSP_EPOCH:
		rc = sched_set_epoch(a->s, req->epoch_realtime_ns, why, sizeof(why));
		break;
	case VSP_INFO:
	case VSP_SELFTEST:
		rc = req->type == VSP_SELFTEST ? selftest_start(a->s, why, sizeof(why)) : 0;
		sched_info(a->s, &rep->info);
		selftest_info(a->s, &rep->info);
		rep->has_info = 1;
		if (rc == 0) {
			reply_msg(rep,
			          req->type == VSP_SELFTEST ? "self-test started" : "node info");
			rep->status = 0;
			return;
		}
		break;
	default:
		/* vsp_decode_request only returns known types; keep the daemon safe anyway */
		snprintf(why, sizeof(why), "unknown request type %u", req->type);
		rc = -EBADMSG;
		break;
	}

	if (rc > 0) /* contract says 0 or -errno; never send a positive status */
		rc = -EIO;
	rep->status = rc;
	if (rc != 0) {
		if (why[0] == '\0')
			snprintf(why, sizeof(why), "%s", strerror(-rc));
		reply_msg(rep, why);
		if (req->type == VSP_EPOCH || req->type == VSP_SELFTEST)
			api_log(a, false, "%s refused: %s", vsp_type_name(req->type), why);
		else
			api_log(a, false, "%s pid %d refused: %s", vsp_type_name(req->type),
			        (int)req->pid, why);
		return;
	}
	ok_message(a, req, rep, ok, sizeof(ok));
	log_debug("api: %s", ok);
	reply_msg(rep, ok);
}

/*
 * One message as ROUTER delivers it: the routing id frame, then the envelope a REQ client
 * adds (an empty delimiter), then the body. Only the first API_MAX_FRAMES frames are kept;
 * further ones are received, counted and dropped.
 */
struct api_msg {
	zmq_msg_t f[API_MAX_FRAMES];
	unsigned kept;  /* frames in f[] */
	unsigned total; /* frames in the message */
	unsigned env;   /* frames of the envelope to echo in the reply: f[0, env) */
};

static void api_msg_close(struct api_msg *m)
{
	for (unsigned i = 0; i < m->kept; i++)
		zmq_msg_close(&m->f[i]);
	m->kept = 0;
}

/*
 * Receives a whole message if one is waiting. Returns 1, 0 when none is waiting, or -1 on a
 * socket error (logged). The frames of a message arrive together, so the loop never waits.
 */
static int api_msg_recv(struct api *a, struct api_msg *m)
{
	zmq_msg_t extra;
	int more = 1;

	m->kept = m->total = m->env = 0;
	while (more) {
		zmq_msg_t *f = m->kept < API_MAX_FRAMES ? &m->f[m->kept] : &extra;

		zmq_msg_init(f);
		if (zmq_msg_recv(f, a->sock, ZMQ_DONTWAIT) < 0) {
			int e = zmq_errno();

			zmq_msg_close(f);
			if (m->total == 0 && (e == EAGAIN || e == EINTR))
				return 0;
			if (m->total == 0) {
				log_warnx("api: receive: %s", zmq_strerror(e));
				return -1;
			}
			break; /* cannot happen (atomic delivery); keep what we have */
		}
		more = zmq_msg_more(f);
		m->total++;
		if (f == &extra)
			zmq_msg_close(f);
		else
			m->kept++;
	}
	/*
	 * Envelope: the routing id and, for REQ clients, everything up to the first empty
	 * frame. A message without one (a DEALER client, or garbage) is answered to its
	 * routing id alone.
	 */
	m->env = m->kept > 0 ? 1 : 0;
	for (unsigned i = 1; i < m->kept; i++) {
		if (zmq_msg_size(&m->f[i]) == 0) {
			m->env = i + 1;
			break;
		}
	}
	return 1;
}

/*
 * Sends the envelope of m, then rep. Never blocks: ROUTER drops a reply whose client has
 * gone or does not read (no ZMQ_ROUTER_MANDATORY), and a dropped routing id makes it drop
 * the rest of that message, never misroute it.
 */
static void api_send(struct api *a, struct api_msg *m, struct vsp_reply *rep)
{
	size_t size = vsp_reply_size(rep);
	zmq_msg_t msg;
	int n;

	if (zmq_msg_init_size(&msg, size) != 0)
		fatalx("api: out of memory for a %zu-byte reply", size);
	n = vsp_encode_reply(rep, zmq_msg_data(&msg), size);
	if (n < 0 || (size_t)n != size) {
		/* a bug of ours, not the client's: answer something valid all the same */
		struct vsp_reply err = {.status = -EIO};

		log_warnx("api: cannot encode a reply (%d of %zu bytes)", n, size);
		zmq_msg_close(&msg);
		reply_msg(&err, "internal error: cannot encode the reply");
		size = vsp_reply_size(&err);
		if (zmq_msg_init_size(&msg, size) != 0)
			fatalx("api: out of memory for a %zu-byte reply", size);
		n = vsp_encode_reply(&err, zmq_msg_data(&msg), size);
		if (n < 0)
			fatalx("api: cannot encode an error reply");
	}
	for (unsigned i = 0; i < m->env; i++) {
		/* zmq_msg_send takes the frame: it is not closed again by api_msg_close */
		if (zmq_msg_send(&m->f[i], a->sock, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) {
			/* still end the message below, or ROUTER would glue the next reply to it */
			log_warnx("api: reply envelope not sent: %s", zmq_strerror(zmq_errno()));
			break;
		}
		zmq_msg_init(&m->f[i]);
	}
	if (zmq_msg_send(&msg, a->sock, ZMQ_DONTWAIT) < 0) {
		log_warnx("api: reply not sent: %s", zmq_strerror(zmq_errno()));
		zmq_msg_close(&msg);
	}
}

/*
 * Receives one whole message if one is waiting, answers it and returns 1; returns 0 when
 * nothing is waiting, -1 on a socket error (logged).
 */
static int api_serve_one(struct api *a)
{
	struct vsp_reply rep = {0};
	struct vsp_request req;
	char why[VSP_MSG_MAX + 1] = "";
	struct api_msg m;
	unsigned nbody;
	zmq_msg_t *body;
	size_t len;
	int rc;

	rc = api_msg_recv(a, &m);
	if (rc <= 0)
		return rc;
	nbody = m.total - m.env;
	body = m.env < m.kept ? &m.f[m.env] : NULL;
	len = body != NULL ? zmq_msg_size(body) : 0;
	log_debug("api: message of %u frame%s after a %u-frame envelope, first %zu bytes", nbody,
	          nbody == 1 ? "" : "s", m.env, len);

	if (nbody == 0) {
		rep.status = -EBADMSG;
		snprintf(why, sizeof(why), "empty message: no request frame");
	} else if (body == NULL) {
		rep.status = -EBADMSG;
		snprintf(why, sizeof(why), "envelope of %u frames: at most %d", m.env,
		         API_MAX_FRAMES - 1);
	} else if (nbody > 1) {
		rep.status = -EBADMSG;
		snprintf(why, sizeof(why), "multi-part message (%u frames): one frame per request",
		         nbody);
	} else if (len > VSP_MAX_FRAME) {
		rep.status = -EMSGSIZE;
		snprintf(why, sizeof(why), "frame of %zu bytes: requests are at most %d bytes", len,
		         VSP_MAX_FRAME);
	} else {
		rc = vsp_decode_request(zmq_msg_data(body), len, &req, why, sizeof(why));
		if (rc != 0) {
			rep.status = rc < 0 ? rc : -EBADMSG;
			if (why[0] == '\0')
				snprintf(why, sizeof(why), "undecodable request (%zu bytes)", len);
		}
	}

	if (rep.status != 0) {
		api_log(a, true, "bad request: %s", why);
		reply_msg(&rep, why);
	} else {
		api_dispatch(a, &req, &rep);
	}
	api_send(a, &m, &rep);
	api_msg_close(&m);
	free(rep.tasks);
	return 1;
}

/* The engine's upkeep, then the self-test's (its probe's pipe is in the engine's poll set). */
static void housekeep(struct sched *s)
{
	sched_housekeep(s);
	selftest_poll(s);
}

/* When housekeep must run at the latest: the engine's upkeep or the probe's time limit. */
static mono_ns next_housekeep(const struct sched *s)
{
	mono_ns next = sched_next_housekeep(s), st = selftest_deadline(s);

	return st && mono_before(st, next) ? st : next;
}

int api_run(struct sched *s, volatile sig_atomic_t *stop)
{
	struct api a = {.s = s};
	zmq_pollitem_t item[2];
	int rc = 0;

	a.ctx = api_ctx_new(api_pin(s));
	if (api_bind(&a) != 0) {
		api_close(&a);
		return -1;
	}
	item[0] = (zmq_pollitem_t){.socket = a.sock, .events = ZMQ_POLLIN};
	item[1] = (zmq_pollitem_t){.fd = sched_poll_fd(s), .events = ZMQ_POLLIN};
	housekeep(s);

	while (!*stop) {
		mono_ns now = mono_now(), next_hk = next_housekeep(s);
		long timeout_ms = mono_before(now, next_hk)
		                      ? (long)((next_hk - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC)
		                      : 0;

		if (zmq_poll(item, 2, timeout_ms) < 0) {
			if (zmq_errno() == EINTR)
				continue;
			log_warnx("api: zmq_poll: %s", zmq_strerror(zmq_errno()));
			rc = -1;
			break;
		}
		if ((item[1].revents & ZMQ_POLLIN) || !mono_before(mono_now(), next_hk))
			housekeep(s);
		if (!(item[0].revents & ZMQ_POLLIN))
			continue;
		for (int i = 0; i < API_BURST && !*stop; i++) {
			if (api_serve_one(&a) <= 0)
				break;
			if (!mono_before(mono_now(), next_housekeep(s)))
				break; /* housekeeping is due; come back after it */
		}
	}
	api_close(&a);
	return rc;
}
