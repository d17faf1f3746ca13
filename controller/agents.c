/*
 * The agents' socket: a ZeroMQ ROUTER (common/proto_ctl.h). Agents are DEALERs; every
 * message is [routing id][frame]. Messages are decoded and checked here and handed to the
 * module that owns what they are about: registrations to nodes.c, reports to reports.c,
 * acknowledgements to txn.c. Anything from an unknown routing id is answered at once with
 * HELLO_ACK -ENOENT, which makes the agent register again (that is how a restarted
 * controller learns its nodes back); everything else the controller says to a node waits
 * in the node's outbox until agents_flush, in the order it was queued: at the end of the
 * loop turn, and every FLUSH_EVERY messages of a long batch. Malformed frames are logged and
 * counted; nothing an agent sends can stop the daemon.
 */
#include "controller.h"

#include <errno.h>
#include <string.h>
#include <zmq.h>

#include "log.h"
#include "text.h"
#include "zmsg.h"

#define RECV_MAX    4096 /* messages per call: the admin socket and timers are not starved */
#define FLUSH_EVERY 64   /* messages read between two sends of the outboxes in a long batch */

int agents_open(struct ctld *d)
{
	int zero = 0, one = 1;
	int64_t maxmsg = PCTL_MAX_FRAME;

	d->agents = zmq_socket(d->zctx, ZMQ_ROUTER);
	if (d->agents == NULL) {
		log_warnx("agents socket: %s", zmq_strerror(zmq_errno()));
		return -1;
	}
	zmq_setsockopt(d->agents, ZMQ_LINGER, &zero, sizeof(zero));
	/* a frame to a vanished agent fails (EHOSTUNREACH) instead of vanishing silently */
	zmq_setsockopt(d->agents, ZMQ_ROUTER_MANDATORY, &one, sizeof(one));
	zmq_setsockopt(d->agents, ZMQ_MAXMSGSIZE, &maxmsg, sizeof(maxmsg));
	if (auth_secure(d, d->agents, AUTH_DOMAIN_AGENTS, d->cfg.agents, &d->agents_secured) != 0)
		return -1;
	if (zmq_bind(d->agents, d->cfg.agents) != 0) {
		log_warnx("cannot bind the agents' endpoint %s: %s", d->cfg.agents,
		          zmq_strerror(zmq_errno()));
		return -1;
	}
	/* "tcp://127.0.0.1:*": the port the system chose (tests parse this line) */
	size_t len = sizeof(d->cfg.agents);
	zmq_getsockopt(d->agents, ZMQ_LAST_ENDPOINT, d->cfg.agents, &len);
	log_info("agents: listening on %s%s", d->cfg.agents,
	         d->agents_secured ? " (CURVE, agents/ allow-list)" : "");
	return 0;
}

void agents_close(struct ctld *d)
{
	if (d->agents)
		zmq_close(d->agents);
	d->agents = NULL;
}

static int send_to(struct ctld *d, const uint8_t *id, size_t idlen, const struct pctl_msg *m)
{
	uint8_t buf[512];
	int n = pctl_encode(m, buf, sizeof(buf));

	if (n < 0) {
		log_warnx("cannot encode %s: %s", pctl_type_name(m->type), strerror(-n));
		return -1;
	}
	if (d->agents == NULL || zmq_send(d->agents, id, idlen, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 ||
	    zmq_send(d->agents, buf, (size_t)n, ZMQ_DONTWAIT) < 0) {
		log_debug("send %s: %s", pctl_type_name(m->type), zmq_strerror(zmq_errno()));
		return -1;
	}
	return 0;
}

static void hello_ack(const struct ctld *d, struct pctl_msg *m, int32_t status, const char *reason)
{
	memset(m, 0, sizeof(*m));
	m->type = PCTL_HELLO_ACK;
	m->u.hello_ack.status = status;
	m->u.hello_ack.heartbeat_ms = (uint32_t)(d->cfg.heartbeat / NSEC_PER_MSEC);
	m->u.hello_ack.ctl_instance = d->ctl_instance;
	text_fmt(m->u.hello_ack.reason, sizeof(m->u.hello_ack.reason), "%s", reason);
}

/* A refusal to a connection that is no node: at once, nothing else goes there. */
static void refuse_conn(struct ctld *d, const uint8_t *id, size_t idlen, int32_t status,
                        const char *reason)
{
	struct pctl_msg m;

	hello_ack(d, &m, status, reason);
	send_to(d, id, idlen, &m);
}

/* Sends what node i has queued, to the connection it has now. */
static void flush_node(struct ctld *d, int i, mono_ns now)
{
	struct node *n = d->nodes[i];
	struct outbox *o = &n->out;

	/* o->n is read each time: a message queued meanwhile is sent too */
	for (uint32_t k = 0; k < o->n; k++) {
		const struct pctl_msg m = o->msg[k];
		bool ok = n->up && n->idlen > 0 && send_to(d, n->id, n->idlen, &m) == 0;

		if (m.type == PCTL_CONSTRAINT && !ok) {
			log_warnx("job %s: constraint gen %llu not sent to node %s (not connected)",
			          m.u.cons.job, (unsigned long long)m.u.cons.gen, n->name);
			txn_unreachable(d, i, m.u.cons.job, m.u.cons.gen, now);
		} else if (m.type == PCTL_CONSTRAINT) {
			log_debug("job %s: %u window(s) gen %llu -> node %s", m.u.cons.job,
			          m.u.cons.nwin, (unsigned long long)m.u.cons.gen, n->name);
		} else if (m.type == PCTL_EPOCH && !ok) {
			log_warnx("node %s: epoch not sent (not connected)", n->name);
		}
	}
	o->n = 0;
}

void agents_flush(struct ctld *d, mono_ns now)
{
	bool again = true;

	/* a CONSTRAINT that cannot be sent may roll a transaction back, which queues the
	 * previous constraint for nodes already flushed: go round until nothing is left (a
	 * roll-back is never rolled back, so this ends) */
	while (again) {
		again = false;
		for (int i = 0; i < d->nnodes; i++) {
			if (d->nodes[i]->out.n > 0) {
				flush_node(d, i, now);
				again = true;
			}
		}
	}
}

/* EPOCH: the node's frames start at the cluster epoch, before any window. */
static void queue_epoch(struct ctld *d, struct node *n)
{
	struct pctl_msg m;

	memset(&m, 0, sizeof(m));
	m.type = PCTL_EPOCH;
	m.u.epoch.realtime_ns = d->plan.epoch_ns;
	outbox_push(&n->out, &m);
	log_info("node %s: epoch %llu.%09llu (frames of the cluster start there)", n->name,
	         (unsigned long long)(d->plan.epoch_ns / NSEC_PER_SEC),
	         (unsigned long long)(d->plan.epoch_ns % NSEC_PER_SEC));
}

/* NODE_HELLO: register (or re-register) the node under this connection. key: the node
 * name the connection's key is bound to, NULL on an open endpoint. */
static void on_hello(struct ctld *d, const uint8_t *id, size_t idlen, const struct pctl_hello *h,
                     const char *key, mono_ns now)
{
	struct pctl_msg m;
	char why[PCTL_REASON_MAX + 1];
	int i;

	if (key != NULL && strcmp(key, h->node) != 0) {
		text_fmt(why, sizeof(why), "this key may register node %s only", key);
		log_warnx_limited(&d->bad_msgs, "node %s refused: its key is bound to node %s",
		                  h->node, key);
		refuse_conn(d, id, idlen, -EACCES, why);
		return;
	}
	if (h->proto_version != PCTL_VERSION) {
		log_warnx("node %s: protocol version %u refused", h->node, h->proto_version);
		refuse_conn(d, id, idlen, -EPROTO, "protocol version not supported");
		return;
	}
	/* what was queued for this node, or for this connection, goes where it was meant to
	 * before the registration moves them */
	i = nodes_find(d, h->node);
	if (i >= 0)
		flush_node(d, i, now);
	i = nodes_by_id(d, id, idlen);
	if (i >= 0)
		flush_node(d, i, now);
	i = nodes_register(d, id, idlen, h, now);
	hello_ack(d, &m, 0, "registered");
	outbox_push(&d->nodes[i]->out, &m);
	if (d->cfg.cs.on && d->cfg.cs.align)
		queue_epoch(d, d->nodes[i]);
}

/* A message from registered node i. */
static void on_node_msg(struct ctld *d, int i, const struct pctl_msg *m, mono_ns now)
{
	nodes_seen(d, i, now);
	switch (m->type) {
	case PCTL_HEARTBEAT:
		d->nodes[i]->nprocs = m->u.hb.nprocs;
		outbox_push(&d->nodes[i]->out, m); /* echo: seq and sent_ns as received */
		break;
	case PCTL_JOB_PROC:
		reports_proc(d, i, &m->u.proc, now);
		break;
	case PCTL_RATE:
		reports_rate(d, i, &m->u.rate, now);
		break;
	case PCTL_BW:
		reports_bw(d, i, &m->u.bw, now);
		break;
	case PCTL_TASK_STATS:
		reports_stats(d, i, &m->u.stats, now);
		break;
	case PCTL_CONSTRAINT_ACK:
		txn_on_ack(d, i, &m->u.cack, now);
		break;
	case PCTL_NODE_INFO:
		capacity_node_info(d, i, &m->u.info, now);
		break;
	default:
		break;
	}
}

/* Node i may send one more message now (agent_msg_rate, a token bucket of 1 s); the rest
 * are dropped and counted, so that a flooding node cannot take the others' turn. */
static bool within_rate(struct ctld *d, int i, mono_ns now)
{
	struct node *n = d->nodes[i];
	double rate = (double)d->cfg.agent_msg_rate;

	if (rate <= 0)
		return true;
	if (n->tokens_at == 0) /* a new node starts with a full bucket */
		n->tokens_at = now - NSEC_PER_SEC;
	n->tokens += (double)(now - n->tokens_at) / NSEC_PER_SEC * rate;
	n->tokens = n->tokens > rate ? rate : n->tokens;
	n->tokens_at = now;
	if (n->tokens >= 1.0) {
		n->tokens -= 1.0;
		return true;
	}
	n->dropped++;
	log_warnx_limited(&n->nlimited,
	                  "node %s: over agent_msg_rate (%.0f/s): %llu message(s) "
	                  "dropped",
	                  n->name, rate, (unsigned long long)n->dropped);
	return false;
}

/* The connection's key may speak for node i? (A key bound to another node cannot use a
 * routing id it learnt.) */
static bool key_is_node(struct ctld *d, const char *key, int i)
{
	if (key == NULL || strcmp(key, d->nodes[i]->name) == 0)
		return true;
	log_warnx_limited(&d->bad_msgs, "message for node %s by the key of node %s dropped",
	                  d->nodes[i]->name, key);
	return false;
}

static void handle(struct ctld *d, const uint8_t *id, size_t idlen, const uint8_t *buf, size_t len,
                   const char *key, mono_ns now)
{
	struct pctl_msg m;
	char why[256];
	int rc, i;

	i = nodes_by_id(d, id, idlen);
	if (i >= 0 && (!key_is_node(d, key, i) || !within_rate(d, i, now)))
		return;
	rc = pctl_decode(buf, len, &m, why, sizeof(why));
	if (rc != 0) {
		log_warnx_limited(&d->bad_msgs, "agent %s: bad message refused: %s",
		                  i >= 0 ? d->nodes[i]->name : "?", why);
		return;
	}
	if (!pctl_from_agent(m.type)) {
		d->bad_msgs++;
		log_warnx("agent: unexpected %s message ignored", pctl_type_name(m.type));
	} else if (m.type == PCTL_NODE_HELLO) {
		on_hello(d, id, idlen, &m.u.hello, key, now);
	} else if (i < 0) {
		refuse_conn(d, id, idlen, -ENOENT, "unknown node: register first");
	} else {
		on_node_msg(d, i, &m, now);
	}
	pctl_msg_release(&m);
}

void agents_recv(struct ctld *d, mono_ns now)
{
	for (int k = 0; k < RECV_MAX; k++) {
		/* a burst of reports does not hold back the constraints decided early in it
		 * (the order per node stays that of the queue) */
		if (k > 0 && k % FLUSH_EVERY == 0)
			agents_flush(d, now);
		zmq_msg_t part[2];
		int n = zmsg_recv(d->agents, part, 2);

		if (n == ZMSG_NONE)
			return;
		if (n == ZMSG_TOO_MANY) {
			d->bad_msgs++;
			log_warnx("agent: multi-frame message refused");
		} else if (n == 2 && zmq_msg_size(&part[0]) <= CTLD_ID_MAX) {
			const char *key;
			uint8_t role = auth_role(&d->auth, d->agents_secured, &part[1], &key);

			if (role == AUTH_OPEN || role == AUTH_AGENT)
				handle(d, zmq_msg_data(&part[0]), zmq_msg_size(&part[0]),
				       zmq_msg_data(&part[1]), zmq_msg_size(&part[1]),
				       role == AUTH_AGENT ? key : NULL, now);
			else
				refuse_conn(d, zmq_msg_data(&part[0]), zmq_msg_size(&part[0]),
				            -EACCES, "this key is not (or no longer) allowed");
		}
		zmsg_close(part, n);
	}
}
