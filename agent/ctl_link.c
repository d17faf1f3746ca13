/*
 * The link to the controller: a DEALER connected over TCP to the controller's ROUTER.
 *
 * States: DOWN (no TCP connection) -> HELLO (NODE_HELLO sent, resent every heartbeat until
 * HELLO_ACK) -> UP (registered: heartbeats, data). The socket monitor reports TCP connects
 * and disconnects, so a restarted controller is greeted as soon as ZeroMQ has reconnected;
 * a controller that stops answering for controller_timeout (no heartbeat echo) is greeted
 * again too. While the link is not UP, data messages (RATE, BW, TASK_STATS) are dropped and
 * counted; constraints stay in force.
 *
 * Transport only: this file owns the socket, the link's state and its own messages
 * (NODE_HELLO, HEARTBEAT, HELLO_ACK), checks every frame, and hands the rest to its caller
 * (controller.c: constraints, the epoch, what to do on registration).
 */
#include "agent.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "log.h"
#include "zmsg.h"

#define MON_ENDPOINT "inproc://vsched-agent-ctl-monitor"

int ctl_open(struct agent *a)
{
	struct ctl_link *c = &a->ctl;
	int one = 1, zero = 0, ivl = 200, ivl_max = 2000, hwm = 1000;
	int hb_ms = (int)(a->cfg.heartbeat / NSEC_PER_MSEC);
	int hb_to = (int)(a->cfg.controller_timeout / NSEC_PER_MSEC);

	memset(c, 0, sizeof(*c));
	c->heartbeat = a->cfg.heartbeat;
	c->sock = zmq_socket(a->zctx, ZMQ_DEALER);
	if (!c->sock)
		return -1;
	zmq_setsockopt(c->sock, ZMQ_LINGER, &zero, sizeof(zero));
	/* Queue nothing for a controller that is not connected: data goes stale anyway. */
	zmq_setsockopt(c->sock, ZMQ_IMMEDIATE, &one, sizeof(one));
	zmq_setsockopt(c->sock, ZMQ_SNDHWM, &hwm, sizeof(hwm));
	zmq_setsockopt(c->sock, ZMQ_RECONNECT_IVL, &ivl, sizeof(ivl));
	zmq_setsockopt(c->sock, ZMQ_RECONNECT_IVL_MAX, &ivl_max, sizeof(ivl_max));
	/* ZMTP heartbeats find a dead TCP peer (host gone, no RST) and drop the connection. */
	zmq_setsockopt(c->sock, ZMQ_HEARTBEAT_IVL, &hb_ms, sizeof(hb_ms));
	zmq_setsockopt(c->sock, ZMQ_HEARTBEAT_TIMEOUT, &hb_to, sizeof(hb_to));
	/* CURVE: the controller is authenticated by its public key, this node by its own */
	if (a->cfg.curve_sec[0] != '\0' &&
	    (zmq_setsockopt(c->sock, ZMQ_CURVE_SERVERKEY, a->cfg.curve_server, 40) != 0 ||
	     zmq_setsockopt(c->sock, ZMQ_CURVE_PUBLICKEY, a->cfg.curve_pub, 40) != 0 ||
	     zmq_setsockopt(c->sock, ZMQ_CURVE_SECRETKEY, a->cfg.curve_sec, 40) != 0)) {
		log_warnx("controller link: CURVE keys: %s", zmq_strerror(zmq_errno()));
		goto fail;
	}
	if (zmq_socket_monitor(c->sock, MON_ENDPOINT,
	                       ZMQ_EVENT_CONNECTED | ZMQ_EVENT_DISCONNECTED |
	                           ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
	                           ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
	                           ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) != 0)
		goto fail;
	c->mon = zmq_socket(a->zctx, ZMQ_PAIR);
	if (!c->mon || zmq_connect(c->mon, MON_ENDPOINT) != 0)
		goto fail;
	zmq_setsockopt(c->mon, ZMQ_LINGER, &zero, sizeof(zero));
	if (zmq_connect(c->sock, a->cfg.controller) != 0) {
		log_warnx("controller endpoint %s: %s", a->cfg.controller,
		          zmq_strerror(zmq_errno()));
		goto fail;
	}
	c->state = CTL_DOWN;
	log_info("controller link: connecting to %s as node %s%s", a->cfg.controller, a->cfg.node,
	         a->cfg.curve_sec[0] ? " (CURVE)" : "");
	return 0;
fail:
	ctl_close(a);
	return -1;
}

void ctl_close(struct agent *a)
{
	struct ctl_link *c = &a->ctl;

	if (c->sock) {
		zmq_socket_monitor(c->sock, NULL, 0);
		zmq_close(c->sock);
	}
	if (c->mon)
		zmq_close(c->mon);
	c->sock = c->mon = NULL;
}

int ctl_send_now(struct agent *a, const struct pctl_msg *m)
{
	uint8_t stackbuf[512], *buf = stackbuf;
	int n = pctl_size(m), rc = -1;

	if (n < 0) {
		log_warnx("controller link: cannot encode %s", pctl_type_name(m->type));
		return -1;
	}
	if ((size_t)n > sizeof(stackbuf)) {
		buf = malloc((size_t)n);
		if (!buf)
			fatalx("out of memory");
	}
	if (pctl_encode(m, buf, (size_t)n) == n &&
	    zmq_send(a->ctl.sock, buf, (size_t)n, ZMQ_DONTWAIT) == n)
		rc = 0;
	if (buf != stackbuf)
		free(buf);
	return rc;
}

int ctl_send(struct agent *a, const struct pctl_msg *m)
{
	if (a->ctl.state != CTL_UP || ctl_send_now(a, m) != 0) {
		if (m->type == PCTL_RATE)
			a->cnt.rates_dropped++;
		return -1;
	}
	if (m->type == PCTL_RATE)
		a->cnt.rates_sent++;
	return 0;
}

static void send_hello(struct agent *a, mono_ns now)
{
	struct pctl_msg m;

	memset(&m, 0, sizeof(m));
	m.type = PCTL_NODE_HELLO;
	m.u.hello.proto_version = PCTL_VERSION;
	m.u.hello.ncpus = (uint16_t)a->cfg.ncpus;
	m.u.hello.mem_capacity = (uint64_t)(a->cfg.mem_capacity_mbs * 1e6);
	m.u.hello.net_capacity = (uint64_t)(a->cfg.net_capacity_mbs * 1e6);
	m.u.hello.instance = a->instance;
	snprintf(m.u.hello.node, sizeof(m.u.hello.node), "%s", a->cfg.node);
	a->ctl.state = CTL_HELLO;
	a->ctl.last_hello = now;
	a->ctl.hello_sent = ctl_send_now(a, &m) == 0;
	if (a->ctl.hello_sent) {
		a->cnt.hellos++;
		log_debug("controller link: NODE_HELLO sent");
	}
}

static void link_lost(struct agent *a, const char *why)
{
	if (a->ctl.state == CTL_UP) {
		a->cnt.link_losses++;
		log_warnx("controller link lost (%s); %d job constraint(s) stay in force", why,
		          registry_nconstrained(a));
	}
}

void ctl_on_monitor(struct agent *a)
{
	for (;;) {
		zmq_msg_t ev, addr;
		uint16_t event = 0;
		uint32_t value = 0;

		zmq_msg_init(&ev);
		if (zmq_msg_recv(&ev, a->ctl.mon, ZMQ_DONTWAIT) < 0) {
			zmq_msg_close(&ev);
			return;
		}
		if (zmq_msg_size(&ev) >= 6) {
			memcpy(&event, zmq_msg_data(&ev), sizeof(event)); /* host order */
			memcpy(&value, (const uint8_t *)zmq_msg_data(&ev) + 2, sizeof(value));
		}
		zmq_msg_close(&ev);
		zmq_msg_init(&addr); /* second frame: the endpoint */
		zmq_msg_recv(&addr, a->ctl.mon, ZMQ_DONTWAIT);
		zmq_msg_close(&addr);
		if (event == ZMQ_EVENT_CONNECTED) {
			log_info("controller link: connected to %s", a->cfg.controller);
			a->ctl.connected = true;
			send_hello(a, mono_now());
		} else if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH ||
		           event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) {
			/* the controller refused this node's key (or the security mechanism) */
			a->cnt.ctl_auth_failed++;
			log_warnx_limited(&a->ctl.nauth,
			                  "controller link: handshake refused (%s %u): "
			                  "is this node's public key in the controller's agents/?",
			                  event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH
			                      ? "ZAP status"
			                      : "protocol error",
			                  value);
		} else if (event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL && ++a->ctl.drops >= 2) {
			/* libzmq's CURVE server closes at a mechanism mismatch as soon as it read
			 * the client's greeting, which the client then sees as a bare close; one
			 * can be a controller that stopped, two in a row are a refusal (as in
			 * common/zreq.c) */
			a->cnt.ctl_auth_failed++;
			log_warnx_limited(
			    &a->ctl.nauth,
			    "controller link: the controller closed the connection during "
			    "the handshake %u times: CURVE on one side only, or this "
			    "node's key not allowed?",
			    a->ctl.drops);
		} else if (event == ZMQ_EVENT_DISCONNECTED) {
			link_lost(a, "disconnected");
			a->ctl.connected = false;
			a->ctl.state = CTL_DOWN;
		}
	}
}

/* HELLO_ACK 0: the link is up; a->ctl.new_instance says whether the controller is another
 * one than at the previous registration. */
static void on_registered(struct agent *a, const struct pctl_hello_ack *ack, mono_ns now)
{
	a->ctl.state = CTL_UP;
	a->ctl.drops = 0;
	a->ctl.next_hb = now;
	if (ack->heartbeat_ms)
		a->ctl.heartbeat = (uint64_t)ack->heartbeat_ms * NSEC_PER_MSEC;
	a->ctl.new_instance = a->ctl.ctl_instance && ack->ctl_instance != a->ctl.ctl_instance;
	a->ctl.prev_instance = a->ctl.ctl_instance;
	a->ctl.ctl_instance = ack->ctl_instance;
	a->cnt.registrations++;
}

/* Counts a refused frame by kind; the decoder's reason says short or long. */
static void count_bad(struct agent *a, int rc, const char *why)
{
	if (rc == -EPROTO)
		a->cnt.ctl_version++;
	else if (rc == -ENOMSG)
		a->cnt.ctl_type++;
	else if (strstr(why, "short"))
		a->cnt.ctl_short++;
	else if (strstr(why, "long") || strstr(why, "frame of"))
		a->cnt.ctl_long++;
	else
		a->cnt.ctl_bad++;
}

/* A frame that did not decode as a controller message: counted, logged (limited); a
 * CONSTRAINT with a bad reservation is still named (gen, job in m) for its answer. */
static int refused_frame(struct agent *a, zmq_msg_t *in, int rc, struct pctl_msg *m,
                         const char *why)
{
	count_bad(a, rc, why);
	log_warnx_limited(&a->ctl.nrefused, "controller: frame refused: %s", why);
	memset(m, 0, sizeof(*m));
	if (rc == -EINVAL && pctl_peek_constraint(zmq_msg_data(in), zmq_msg_size(in),
	                                          &m->u.cons.gen, m->u.cons.job) == 0) {
		m->type = PCTL_CONSTRAINT;
		return CTL_RX_BAD_CONSTRAINT;
	}
	return CTL_RX_DONE;
}

/* HELLO_ACK and HEARTBEAT are the link's; the rest goes to the caller. */
static int on_message(struct agent *a, const struct pctl_msg *m, mono_ns now)
{
	switch (m->type) {
	case PCTL_HELLO_ACK:
		if (m->u.hello_ack.status == 0) {
			on_registered(a, &m->u.hello_ack, now);
			return CTL_RX_REGISTERED;
		}
		log_warnx("controller: registration refused: %s (%s)", m->u.hello_ack.reason,
		          strerror(-m->u.hello_ack.status));
		if (a->ctl.state == CTL_UP)
			link_lost(a, "controller does not know this node");
		a->ctl.state = CTL_HELLO; /* retried after a heartbeat */
		return CTL_RX_DONE;
	case PCTL_HEARTBEAT:
		log_debug("controller: heartbeat %llu echoed", (unsigned long long)m->u.hb.seq);
		return CTL_RX_DONE;
	default:
		return CTL_RX_MSG;
	}
}

int ctl_recv(struct agent *a, struct pctl_msg *m, char *why, size_t whylen)
{
	zmq_msg_t in;
	int n = zmsg_recv(a->ctl.sock, &in, 1), rc;

	if (n == ZMSG_NONE)
		return CTL_RX_NONE;
	if (n == ZMSG_TOO_MANY) {
		a->cnt.ctl_multipart++;
		log_warnx("controller: multipart message refused");
		return CTL_RX_DONE;
	}
	rc = pctl_decode(zmq_msg_data(&in), zmq_msg_size(&in), m, why, whylen);
	if (rc == 0 && !pctl_from_controller(m->type)) {
		snprintf(why, whylen, "%s is not a controller message", pctl_type_name(m->type));
		pctl_msg_release(m);
		rc = -ENOMSG;
	}
	if (rc != 0) {
		rc = refused_frame(a, &in, rc, m, why);
		zmq_msg_close(&in);
		return rc;
	}
	zmq_msg_close(&in);
	a->cnt.ctl_ok++;
	a->ctl.last_rx = mono_now();
	rc = on_message(a, m, a->ctl.last_rx);
	if (rc != CTL_RX_MSG)
		pctl_msg_release(m);
	return rc;
}

mono_ns ctl_tick(struct agent *a, mono_ns now)
{
	struct ctl_link *c = &a->ctl;
	mono_ns next = now + c->heartbeat;

	switch (c->state) {
	case CTL_DOWN:
		break;
	case CTL_HELLO: {
		/* Not sent (the connection was still being set up): retry soon; sent: wait for
		 * the answer one heartbeat, then greet again. */
		uint64_t retry = c->hello_sent ? c->heartbeat : 20 * NSEC_PER_MSEC;
		if (!mono_before(now, c->last_hello + retry)) {
			send_hello(a, now);
			retry = c->hello_sent ? c->heartbeat : 20 * NSEC_PER_MSEC;
		}
		next = c->last_hello + retry;
		break;
	}
	case CTL_UP:
		if (!mono_before(now, c->last_rx + a->cfg.controller_timeout)) {
			link_lost(a, "no answer within controller_timeout");
			send_hello(a, now);
			return c->last_hello + c->heartbeat;
		}
		if (!mono_before(now, c->next_hb)) {
			struct pctl_msg m;
			memset(&m, 0, sizeof(m));
			m.type = PCTL_HEARTBEAT;
			m.u.hb.seq = ++c->hb_seq;
			m.u.hb.sent_ns = now;
			m.u.hb.nprocs = (uint32_t)registry_nprocs(a);
			ctl_send_now(a, &m);
			c->next_hb = now + c->heartbeat;
		}
		next = mono_min(c->next_hb, c->last_rx + a->cfg.controller_timeout);
		break;
	}
	return next;
}
