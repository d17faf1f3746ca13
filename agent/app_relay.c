/*
 * The applications' side: a PULL socket (ipc) where libapprate pushes REGISTER, REPORT
 * and BYTES frames (common/proto_apprate.h). REGISTER binds a library handle to
 * (job, rank, pid) and puts a new process under vsched; REPORT becomes a 32-byte RATE to
 * the controller; BYTES feeds the "app" memory/network source.
 *
 * Trust: every frame is decoded and checked before use. A REGISTER may only name the
 * sender's own pid (SO_PEERCRED of the ipc connection, from ZeroMQ's Peer-Address
 * metadata), unless the sender is root (a launcher registering its child). REPORT and
 * BYTES must carry a handle a REGISTER bound. Refusals are counted and logged; the agent
 * carries on.
 */
#include "agent.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zmq.h>

#include "log.h"
#include "procfs.h"
#include "text.h"
#include "zmsg.h"

#define RECV_MAX 1000 /* frames per call: the controller link gets its turn */

int relay_open(struct agent *a)
{
	int zero = 0, hwm = 10000;

	a->app = zmq_socket(a->zctx, ZMQ_PULL);
	if (!a->app)
		return -1;
	zmq_setsockopt(a->app, ZMQ_LINGER, &zero, sizeof(zero));
	zmq_setsockopt(a->app, ZMQ_RCVHWM, &hwm, sizeof(hwm));
	if (strncmp(a->cfg.app_endpoint, "ipc://", 6) == 0) {
		/* The socket's directory (/run/vsched by default) may not exist yet. */
		char dir[AGENT_ENDPOINT_MAX];
		char *slash;
		snprintf(dir, sizeof(dir), "%s", a->cfg.app_endpoint + 6);
		slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = '\0';
			if (mkdir(dir, 0755) != 0 && errno != EEXIST)
				log_warn("mkdir %s", dir);
		}
	}
	if (zmq_bind(a->app, a->cfg.app_endpoint) != 0) {
		log_warnx("app_endpoint %s: %s", a->cfg.app_endpoint, zmq_strerror(zmq_errno()));
		zmq_close(a->app);
		a->app = NULL;
		return -1;
	}
	if (strncmp(a->cfg.app_endpoint, "ipc://", 6) == 0 &&
	    chmod(a->cfg.app_endpoint + 6, a->cfg.app_endpoint_mode) != 0)
		log_warn("chmod %s", a->cfg.app_endpoint + 6);
	log_info("applications: listening on %s", a->cfg.app_endpoint);
	return 0;
}

void relay_close(struct agent *a)
{
	if (a->app)
		zmq_close(a->app);
	a->app = NULL;
}

int relay_parse_peer(const char *s, long *uid, long *pid)
{
	const char *c[3];
	const char *p;
	int n = 0;
	char *end;

	if (!s)
		return -1;
	/* Last three ':'-separated fields: "[path]:uid:gid:pid". */
	for (p = s + strlen(s); p > s && n < 3; p--)
		if (p[-1] == ':')
			c[n++] = p;
	if (n < 3)
		return -1;
	errno = 0;
	*pid = strtol(c[0], &end, 10);
	if (errno || *end || end == c[0] || *pid <= 0)
		return -1;
	*uid = strtol(c[2], &end, 10);
	if (errno || *end != ':' || end == c[2] || *uid < 0)
		return -1;
	return 0;
}

/* Refusal bookkeeping: count, and log (rate-limited: a flood must not fill the log). */
static int refuse(struct agent *a, uint64_t *counter, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int refuse(struct agent *a, uint64_t *counter, int rc, const char *fmt, ...)
{
	char msg[300];
	va_list ap;

	(*counter)++;
	va_start(ap, fmt);
	text_vfmt(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_warnx_limited(&a->app_refused, "application frame refused: %s", msg);
	return rc;
}

static int on_register(struct agent *a, const struct aproto_register *r, long peer_pid,
                       long peer_uid)
{
	pid_t pid = (pid_t)r->pid;
	struct agent_handle *h = registry_find_handle(a, r->handle);
	uint64_t st;
	int p;
	char why[200];

	if (peer_pid > 0 && peer_uid != 0 && peer_pid != (long)pid)
		return refuse(a, &a->cnt.app_foreign_pid, -EPERM,
		              "REGISTER job %s pid %d from pid %ld: not the sender's pid", r->job,
		              (int)pid, peer_pid);
	st = procfs_starttime(pid);
	if (st == 0)
		return refuse(a, &a->cnt.app_foreign_pid, -ESRCH,
		              "REGISTER job %s pid %d: no such process", r->job, (int)pid);
	p = registry_find_proc(a, pid);
	if (p >= 0 && a->procs[p].starttime != st) {
		/* The pid was reused: the old process is gone. */
		struct agent_gone gone;

		registry_drop_proc(a, p, &gone);
		sampler_forget(a, &gone);
		p = -1;
	}
	if (p >= 0 && strcmp(a->jobs[a->procs[p].job].name, r->job) != 0)
		return refuse(a, &a->cnt.app_unknown_job, -EEXIST,
		              "REGISTER job %s pid %d: already registered in job %s", r->job,
		              (int)pid, a->jobs[a->procs[p].job].name);
	if (h && h->proc != p) /* a known handle re-bound elsewhere: forget the old binding */
		memset(h, 0, sizeof(*h));
	if (p < 0) {
		p = registry_add_proc(a, r->job, r->rank, pid, st, why, sizeof(why));
		if (p < 0)
			return refuse(a, &a->cnt.app_full, -ENOSPC, "REGISTER job %s pid %d: %s",
			              r->job, (int)pid, why);
		log_info("job %s: rank %u pid %d registered (%s)", r->job, r->rank, (int)pid,
		         aproto_reason_name(r->reason));
		sampler_attach(a, p);
		controller_announce_proc(a, p, PCTL_PROC_JOINED);
		cons_place_proc(a, p);
	} else if (a->procs[p].rank != r->rank) {
		a->procs[p].rank = r->rank;
		controller_announce_proc(a, p, PCTL_PROC_JOINED);
	}
	if (registry_bind_handle(a, r->handle, p, r->interval_ns) != 0)
		return refuse(a, &a->cnt.app_full, -ENOSPC, "REGISTER: handle table full");
	return 0;
}

static int on_report(struct agent *a, const struct aproto_report *r)
{
	struct agent_handle *h = registry_find_handle(a, r->handle);
	struct agent_proc *pr;
	struct pctl_msg m;

	if (!h || h->closing)
		return refuse(a, &a->cnt.app_unknown_handle, -ENOENT, "REPORT handle %08x: %s",
		              r->handle, h ? "already closed" : "never registered");
	pr = &a->procs[h->proc];
	if (pr->rank != r->rank)
		return refuse(a, &a->cnt.app_bad, -EINVAL,
		              "REPORT handle %08x: rank %u, registered as %u", r->handle, r->rank,
		              pr->rank);
	if (r->seq > h->next_seq)
		a->cnt.reports_lost += r->seq - h->next_seq;
	h->next_seq = r->seq + 1;
	h->last_seen = mono_now();
	memset(&m, 0, sizeof(m));
	m.type = PCTL_RATE;
	m.u.rate.job = a->jobs[pr->job].handle;
	m.u.rate.rank = pr->rank;
	m.u.rate.seq = r->seq;
	m.u.rate.units = r->units;
	m.u.rate.interval_ns = r->interval_ns;
	ctl_send(a, &m);
	if (r->flags & APROTO_F_FINAL) {
		/* The BYTES of this last report may still follow; then the handle goes. */
		h->closing = true;
		h->final_seq = r->seq;
	}
	return 0;
}

static int on_bytes(struct agent *a, const struct aproto_bytes *b)
{
	struct agent_handle *h = registry_find_handle(a, b->handle);
	struct agent_proc *pr;

	if (!h)
		return refuse(a, &a->cnt.app_unknown_handle, -ENOENT,
		              "BYTES handle %08x: never registered", b->handle);
	if (h->closing && b->seq != h->final_seq)
		return refuse(a, &a->cnt.app_unknown_handle, -ENOENT,
		              "BYTES handle %08x: already closed", b->handle);
	pr = &a->procs[h->proc];
	pr->app_mem_total += b->mem_bytes;
	pr->app_net_total += b->net_bytes;
	pr->app_bytes_seen = true;
	h->last_seen = mono_now();
	if (h->closing)
		memset(h, 0, sizeof(*h));
	return 0;
}

int relay_handle(struct agent *a, const uint8_t *buf, size_t len, long peer_pid, long peer_uid)
{
	struct aproto_msg m;
	char why[200];
	int rc;

	if (len < APROTO_HDR_SIZE)
		return refuse(a, &a->cnt.app_short, -EBADMSG, "short frame: %zu bytes", len);
	if (len > APROTO_MAX_FRAME)
		return refuse(a, &a->cnt.app_long, -EBADMSG, "frame of %zu bytes > %d", len,
		              APROTO_MAX_FRAME);
	rc = aproto_decode(buf, len, &m, why, sizeof(why));
	if (rc == -EPROTO)
		return refuse(a, &a->cnt.app_version, rc, "%s", why);
	if (rc != 0) {
		uint8_t t = buf[2];
		if (buf[0] == APROTO_MAGIC && t != APROTO_REGISTER && t != APROTO_REPORT &&
		    t != APROTO_BYTES)
			return refuse(a, &a->cnt.app_type, rc, "%s", why);
		if (buf[0] == APROTO_MAGIC && (t == APROTO_REPORT || t == APROTO_BYTES))
			return refuse(
			    a, len < APROTO_REPORT_SIZE ? &a->cnt.app_short : &a->cnt.app_long, rc,
			    "%s", why);
		return refuse(a, &a->cnt.app_bad, rc, "%s", why);
	}
	switch (m.type) {
	case APROTO_REGISTER:
		rc = on_register(a, &m.u.reg, peer_pid, peer_uid);
		break;
	case APROTO_REPORT:
		rc = on_report(a, &m.u.rep);
		break;
	case APROTO_BYTES:
		rc = on_bytes(a, &m.u.bytes);
		break;
	default:
		rc = refuse(a, &a->cnt.app_type, -EBADMSG, "type %u", m.type);
	}
	if (rc == 0)
		a->cnt.app_ok++;
	return rc;
}

void relay_on_frames(struct agent *a)
{
	for (int i = 0; i < RECV_MAX; i++) {
		zmq_msg_t in;
		long uid = -1, pid = -1;
		int n = zmsg_recv(a->app, &in, 1);

		if (n == ZMSG_NONE)
			return;
		if (n == ZMSG_TOO_MANY) {
			/* One message = one frame: every part of a multipart one is dropped. */
			refuse(a, &a->cnt.app_bad, -EBADMSG, "multipart message");
			continue;
		}
		if (relay_parse_peer(zmq_msg_gets(&in, "Peer-Address"), &uid, &pid) != 0)
			uid = pid = -1;
		relay_handle(a, zmq_msg_data(&in), zmq_msg_size(&in), pid, uid);
		zmq_msg_close(&in);
	}
}
