/*
 * vsc (vsched client): the agent's conversation with vsched's local API
 * (common/proto_vsched.h): every request the agent makes of vsched is made here. One
 * REQ/REP exchange per request, bounded by
 * vsched_timeout. A REQ socket that timed out is stuck in its send/receive state machine,
 * so it is closed and made again ("lazy pirate"); the next call reconnects.
 *
 * The controller's epoch is kept here too: remembered when it arrives, given to vsched at
 * once, again when vsched answers after not answering (a restarted vsched) and every
 * AGENT_EPOCH_REASSERT (vsched ignores the same epoch), and every second while it was not
 * given. Never blocks longer than one request.
 */
#include "agent.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "log.h"

static int open_req(struct vsc *v)
{
	int linger = 0, one = 1;

	v->req = zmq_socket(v->zctx, ZMQ_REQ);
	if (!v->req)
		return -1;
	zmq_setsockopt(v->req, ZMQ_LINGER, &linger, sizeof(linger));
	/* No connection, no queueing: a vsched that is not running fails the call at once. */
	zmq_setsockopt(v->req, ZMQ_IMMEDIATE, &one, sizeof(one));
	if (zmq_connect(v->req, v->endpoint) != 0) {
		log_warnx("vsched endpoint %s: %s", v->endpoint, zmq_strerror(zmq_errno()));
		zmq_close(v->req);
		v->req = NULL;
		return -1;
	}
	return 0;
}

int vsc_open(struct vsc *v, void *zctx, const char *endpoint, uint64_t timeout)
{
	memset(v, 0, sizeof(*v));
	v->zctx = zctx;
	snprintf(v->endpoint, sizeof(v->endpoint), "%s", endpoint);
	v->timeout = timeout;
	return open_req(v);
}

void vsc_close(struct vsc *v)
{
	if (v->req)
		zmq_close(v->req);
	v->req = NULL;
}

int vsc_call(struct vsc *v, const struct vsp_request *req, struct vsp_reply *rep)
{
	uint8_t out[VSP_MAX_FRAME];
	zmq_msg_t in;
	zmq_pollitem_t it;
	char why[160];
	int len, rc;
	long ms = (long)(v->timeout / NSEC_PER_MSEC);

	memset(rep, 0, sizeof(*rep));
	if (!v->req && open_req(v) != 0)
		return -ENOTCONN;
	len = vsp_encode_request(req, out, sizeof(out));
	if (len < 0)
		return len;
	/* A fresh socket may still be connecting: wait a little for it (bounded). */
	it.socket = v->req;
	it.events = ZMQ_POLLOUT;
	it.fd = 0;
	it.revents = 0;
	if (zmq_poll(&it, 1, ms < 100 ? ms : 100) <= 0 ||
	    zmq_send(v->req, out, (size_t)len, ZMQ_DONTWAIT) != len) {
		v->up = false;
		return -ENOTCONN; /* not running: the socket stays, and reconnects by itself */
	}
	it.events = ZMQ_POLLIN;
	it.revents = 0;
	do
		rc = zmq_poll(&it, 1, ms);
	while (rc < 0 && zmq_errno() == EINTR);
	if (rc <= 0) {
		vsc_close(v);
		v->up = false;
		return -ETIMEDOUT;
	}
	zmq_msg_init(&in);
	if (zmq_msg_recv(&in, v->req, ZMQ_DONTWAIT) < 0) {
		zmq_msg_close(&in);
		vsc_close(v);
		return -EIO;
	}
	rc = vsp_decode_reply(zmq_msg_data(&in), zmq_msg_size(&in), rep, why, sizeof(why));
	zmq_msg_close(&in);
	if (!v->up)
		v->fresh = true; /* answered again (or for the first time): (re)connected */
	v->up = true;
	if (rc != 0) {
		log_warnx("vsched: bad reply: %s", why);
		snprintf(rep->msg, sizeof(rep->msg), "bad reply: %s", why);
		rep->status = rc;
		return rc;
	}
	return rep->status;
}

/* Reason for a failed request: vsched's message, else the error. */
static void say_failure(int rc, const struct vsp_reply *rep, char *why, size_t whylen)
{
	snprintf(why, whylen, "vsched: %s",
	         rep->msg[0]        ? rep->msg
	         : rc == -ETIMEDOUT ? "no answer (timeout)"
	         : rc == -ENOTCONN  ? "not running"
	                            : strerror(-rc));
}

/* One request whose reply carries no task list; on failure why says why. */
static int call_simple(struct vsc *v, const struct vsp_request *req, char *why, size_t whylen)
{
	struct vsp_reply rep;
	int rc = vsc_call(v, req, &rep);

	free(rep.tasks);
	if (rc != 0)
		say_failure(rc, &rep, why, whylen);
	return rc;
}

int vsc_put(struct vsc *v, pid_t pid, const struct agent_resv *resv, uint8_t park, bool managed,
            char *why, size_t whylen)
{
	struct vsp_request req;
	int rc;

	memset(&req, 0, sizeof(req));
	req.type = managed ? VSP_SET : VSP_ADD;
	req.pid = pid;
	req.cpu = -1;
	req.park = park;
	req.nwin = resv->n;
	memcpy(req.win, resv->w, sizeof(req.win));
	req.resv = resv->w[0];
	rc = call_simple(v, &req, why, whylen);
	if ((rc == -EEXIST && req.type == VSP_ADD) || (rc == -ESRCH && req.type == VSP_SET)) {
		/* ADD of a task already managed (say, started by `vschedctl job run`): SET;
		 * SET of a task vsched no longer has (vsched restarted): ADD. */
		req.type = req.type == VSP_ADD ? VSP_SET : VSP_ADD;
		rc = call_simple(v, &req, why, whylen);
	}
	return rc;
}

int vsc_del(struct vsc *v, pid_t pid, char *why, size_t whylen)
{
	struct vsp_request req;

	memset(&req, 0, sizeof(req));
	req.type = VSP_DEL;
	req.pid = pid;
	return call_simple(v, &req, why, whylen);
}

int vsc_add(struct vsc *v, pid_t pid, const struct vsp_resv *resv, uint8_t park, char *why,
            size_t whylen)
{
	struct vsp_request req;

	memset(&req, 0, sizeof(req));
	req.type = VSP_ADD;
	req.pid = pid;
	req.cpu = -1;
	req.park = park;
	req.resv = *resv;
	return call_simple(v, &req, why, whylen);
}

int vsc_list(struct vsc *v, struct vsp_reply *rep, char *why, size_t whylen)
{
	struct vsp_request req;
	int rc;

	memset(&req, 0, sizeof(req));
	req.type = VSP_LIST;
	rc = vsc_call(v, &req, rep);
	if (rc != 0)
		say_failure(rc, rep, why, whylen);
	return rc;
}

static int epoch_request(struct vsc *v, uint64_t realtime_ns, char *why, size_t whylen)
{
	struct vsp_request req;

	memset(&req, 0, sizeof(req));
	req.type = VSP_EPOCH;
	req.epoch_realtime_ns = realtime_ns;
	return call_simple(v, &req, why, whylen);
}

void vsc_epoch_set(struct agent *a, uint64_t realtime_ns)
{
	a->cnt.epochs++;
	if (realtime_ns == a->epoch_ns && !a->epoch_pending) {
		log_debug("controller: epoch %llu ns again", (unsigned long long)realtime_ns);
		return;
	}
	a->epoch_ns = realtime_ns;
	a->epoch_pending = true;
	a->epoch_next = 0;
	log_info("controller: epoch %llu ns (CLOCK_REALTIME)", (unsigned long long)realtime_ns);
	vsc_epoch_tick(a, mono_now());
}

void vsc_epoch_tick(struct agent *a, mono_ns now)
{
	char why[300];
	int rc;

	if (a->epoch_ns == 0)
		return;
	if (!a->vs.fresh && mono_before(now, a->epoch_next))
		return;
	a->vs.fresh = false;
	rc = epoch_request(&a->vs, a->epoch_ns, why, sizeof(why));
	/* again after a second while not given, then every re-assertion */
	a->epoch_next = now + (rc != 0 && a->epoch_pending ? NSEC_PER_SEC : AGENT_EPOCH_REASSERT);
	if (rc != 0) {
		if (a->epoch_pending && a->cnt.epochs_applied == 0)
			log_warnx("epoch %llu ns not given to vsched: %s",
			          (unsigned long long)a->epoch_ns, why);
		else
			log_debug("epoch not given to vsched: %s", why);
		a->cnt.vsched_errors++;
		return;
	}
	if (a->epoch_pending)
		log_info("epoch %llu ns given to vsched", (unsigned long long)a->epoch_ns);
	a->epoch_pending = false;
	a->cnt.epochs_applied++;
}
