/*
 * The administrators' socket: a ZeroMQ ROUTER for vschedctl's REQ sockets
 * (common/proto_admin.h). Messages are [client id][empty][frame]. Every request is
 * validated; a bad one gets a reply with the reason. Listings are answered in the turn
 * they arrive (listing.c); SET_RATE and JOB_SET (change.c) that change a job's constraint
 * are answered when every node of the job has acknowledged or refused (txn.c), so the
 * administrator learns the real outcome. Every reply waits in the reply outbox (outbox.c)
 * until admin_flush at the end of the loop turn, after the turn's state is on disk
 * (persist.c), so nothing the administrator is told can be lost by a crash.
 */
#include "controller.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "log.h"
#include "text.h"
#include "zmsg.h"

#define RECV_MAX 256 /* requests per call: the agents' socket and timers are not starved */

int admin_open(struct ctld *d)
{
	int zero = 0;
	int64_t maxmsg = PADM_MAX_REQUEST;

	d->admin = zmq_socket(d->zctx, ZMQ_ROUTER);
	if (d->admin == NULL) {
		log_warnx("admin socket: %s", zmq_strerror(zmq_errno()));
		return -1;
	}
	zmq_setsockopt(d->admin, ZMQ_LINGER, &zero, sizeof(zero));
	zmq_setsockopt(d->admin, ZMQ_MAXMSGSIZE, &maxmsg, sizeof(maxmsg));
	if (auth_secure(d, d->admin, AUTH_DOMAIN_ADMIN, d->cfg.admin, &d->admin_secured) != 0)
		return -1;
	if (zmq_bind(d->admin, d->cfg.admin) != 0) {
		log_warnx("cannot bind the admin endpoint %s: %s", d->cfg.admin,
		          zmq_strerror(zmq_errno()));
		return -1;
	}
	size_t len = sizeof(d->cfg.admin);
	zmq_getsockopt(d->admin, ZMQ_LAST_ENDPOINT, d->cfg.admin, &len);
	/* an ipc admin socket is for the administrator (and admin_group) only; the peer's
	 * uid is checked too (auth.c), which also covers abstract sockets (ipc://@name) */
	if (strncmp(d->cfg.admin, "ipc://", 6) == 0 && d->cfg.admin[6] != '@') {
		if (d->auth.has_group && chown(d->cfg.admin + 6, (uid_t)-1, d->auth.admin_gid) != 0)
			log_warn("admin socket: chown to admin_group");
		chmod(d->cfg.admin + 6, d->auth.has_group ? 0660 : 0600);
	}
	log_info("admin: listening on %s%s", d->cfg.admin,
	         !d->admin_secured                  ? ""
	         : curve_endpoint_tcp(d->cfg.admin) ? " (CURVE, admins/ allow-list)"
	                                            : " (peer credentials checked)");
	return 0;
}

void admin_close(struct ctld *d)
{
	if (d->admin)
		zmq_close(d->admin);
	d->admin = NULL;
	outbox_replies_free(d);
}

void admin_flush(struct ctld *d)
{
	struct replies *q = &d->replies;

	/* the durability contract (persist.c): every change marked this turn has been written
	 * (or its write tried) before any reply leaves */
	assert(q->n == 0 || !d->state_sync);
	for (int i = 0; i < q->n; i++) {
		struct reply_out *h = &q->r[i];

		if (d->admin == NULL ||
		    zmq_send(d->admin, h->cid, h->cidlen, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 ||
		    zmq_send(d->admin, "", 0, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 ||
		    zmq_send(d->admin, h->buf, h->len, ZMQ_DONTWAIT) < 0)
			log_debug("admin: reply not sent: %s", zmq_strerror(zmq_errno()));
		free(h->buf);
		h->buf = NULL;
	}
	q->n = 0;
}

static void reply_listing(struct ctld *d, const uint8_t *cid, size_t cidlen, bool jobs, bool nodes,
                          int ranks_of, mono_ns now)
{
	struct padm_reply r;

	memset(&r, 0, sizeof(r));
	listing_fill(d, &r, jobs, nodes, ranks_of, now);
	if (ranks_of >= 0) {
		/* only the job asked for */
		for (uint16_t i = 0; i < r.njobs; i++) {
			if (strcmp(r.jobs[i].name, d->jobs[ranks_of]->name) == 0) {
				r.jobs[0] = r.jobs[i];
				break;
			}
		}
		r.njobs = r.njobs ? 1 : 0;
	}
	outbox_reply(d, cid, cidlen, &r);
	padm_reply_release(&r);
}

/* A request about job j (SET_RATE, JOB_SET, JOB_SHOW). */
static void on_job_request(struct ctld *d, const uint8_t *cid, size_t cidlen,
                           const struct padm_request *q, int j, mono_ns now)
{
	char why[PADM_REASON_MAX + 1];
	int rc;

	switch (q->type) {
	case PADM_JOB_SHOW:
		reply_listing(d, cid, cidlen, true, false, j, now);
		return;
	case PADM_SET_RATE:
		rc = change_target(d, j, q->target_milli / 1000.0, cid, cidlen, now, why,
		                   sizeof(why));
		break;
	case PADM_JOB_SET:
		rc = change_settings(d, j, q, cid, cidlen, now, why, sizeof(why));
		break;
	default:
		return;
	}
	if (rc == 1)
		return; /* answered when the nodes have acknowledged */
	if (rc < 0)
		log_info("admin: %s refused: %s", padm_type_name(q->type), why);
	else
		log_info("admin: %s", why);
	outbox_status(d, cid, cidlen, rc, why);
}

/* Read-only requests: what a read-only admin key may ask. */
static bool read_only(uint8_t type)
{
	return type == PADM_JOB_LIST || type == PADM_NODE_LIST || type == PADM_STATUS ||
	       type == PADM_JOB_SHOW;
}

static void handle(struct ctld *d, const uint8_t *cid, size_t cidlen, const uint8_t *buf,
                   size_t len, uint8_t role, const char *who, mono_ns now)
{
	struct padm_request q;
	char why[PADM_REASON_MAX + 1];
	int j, rc;

	rc = padm_decode_request(buf, len, &q, why, sizeof(why));
	if (rc != 0) {
		log_warnx("admin: bad request refused: %s", why);
		outbox_status(d, cid, cidlen, rc, why);
		return;
	}
	if (role != AUTH_OPEN && role != AUTH_ADMIN_FULL &&
	    !(role == AUTH_ADMIN_READ && read_only(q.type))) {
		text_fmt(why, sizeof(why), "%s",
		         role == AUTH_ADMIN_READ ? "permission denied: a read-only admin key"
		                                 : "permission denied: key not allowed");
		log_warnx("admin: %s by %s refused: %s", padm_type_name(q.type), who, why);
		outbox_status(d, cid, cidlen, -EACCES, why);
		return;
	}
	log_debug("admin: %s %s", padm_type_name(q.type), q.job);
	switch (q.type) {
	case PADM_JOB_LIST:
		reply_listing(d, cid, cidlen, true, false, -1, now);
		return;
	case PADM_NODE_LIST:
		reply_listing(d, cid, cidlen, false, true, -1, now);
		return;
	case PADM_STATUS:
		reply_listing(d, cid, cidlen, true, true, -1, now);
		return;
	default:
		break;
	}
	j = jobs_find(d, q.job);
	if (j < 0) {
		text_fmt(why, sizeof(why), "unknown job '%s' (see vschedctl job list)", q.job);
		log_info("admin: %s refused: %s", padm_type_name(q.type), why);
		outbox_status(d, cid, cidlen, -ENOENT, why);
		return;
	}
	on_job_request(d, cid, cidlen, &q, j, now);
}

void admin_recv(struct ctld *d, mono_ns now)
{
	for (int k = 0; k < RECV_MAX; k++) {
		zmq_msg_t part[3];
		int n = zmsg_recv(d->admin, part, 3);

		if (n == ZMSG_NONE)
			return;
		/* [id][empty][frame] from a REQ socket; anything else is dropped */
		if (n == 3 && zmq_msg_size(&part[1]) == 0 &&
		    zmq_msg_size(&part[0]) <= CTLD_ID_MAX) {
			const char *who;
			uint8_t role = auth_role(&d->auth, d->admin_secured, &part[2], &who);

			handle(d, zmq_msg_data(&part[0]), zmq_msg_size(&part[0]),
			       zmq_msg_data(&part[2]), zmq_msg_size(&part[2]), role, who, now);
		} else
			log_warnx("admin: malformed envelope dropped");
		zmsg_close(part, n);
	}
}
