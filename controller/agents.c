/*
 * The agents' side of the controller: a ZeroMQ ROUTER (common/proto_ctl.h). Agents are
 * DEALERs; every message is [routing id][frame]. A node is known by the routing id of the
 * connection its agent registered on (NODE_HELLO); anything else from an unknown id is
 * answered with HELLO_ACK -ENOENT, which makes the agent register again (that is how a
 * restarted controller learns its nodes back). A node is down when nothing came from it
 * for node_timeout (default 3 heartbeats); it is up again on its next message.
 * Malformed frames are logged and counted; nothing an agent sends can stop the daemon.
 */
#include "controller.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "log.h"

int node_find(const struct ctld *d, const char *name)
{
	for (int i = 0; i < d->nnodes; i++)
		if (strcmp(d->nodes[i]->name, name) == 0)
			return i;
	return -1;
}

/*
 * Node by routing id, on the path of every agent message: an open-addressing table
 * (linear probing, FNV-1a) of node indices, sized a power of two > 2 * nnodes so a probe
 * always ends at an empty slot. Routing ids change only in on_hello, which rebuilds the
 * table (O(nnodes), once per registration); there is no deletion. Invariant: every node
 * with idlen > 0 is in the table, and no two nodes share a routing id (on_hello).
 */
static uint32_t id_hash(const uint8_t *id, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ id[i]) * 16777619u;
	return h;
}

void agents_index(struct ctld *d)
{
	uint32_t cap = 16;

	while (cap <= 2 * (uint32_t)d->nnodes)
		cap *= 2;
	if (cap != d->id_cap) {
		int *t = realloc(d->id_tab, cap * sizeof(*t));
		if (t == NULL)
			fatalx("out of memory");
		d->id_tab = t;
		d->id_cap = cap;
	}
	for (uint32_t k = 0; k < cap; k++)
		d->id_tab[k] = -1;
	for (int i = 0; i < d->nnodes; i++) {
		const struct node *n = d->nodes[i];
		uint32_t k;

		if (n->idlen == 0)
			continue;
		k = id_hash(n->id, n->idlen) & (cap - 1);
		while (d->id_tab[k] >= 0)
			k = (k + 1) & (cap - 1);
		d->id_tab[k] = i;
	}
}

int agents_node_by_id(const struct ctld *d, const uint8_t *id, size_t len)
{
	uint32_t k;

	if (d->id_cap == 0 || len == 0)
		return -1;
	k = id_hash(id, len) & (d->id_cap - 1);
	for (int i; (i = d->id_tab[k]) >= 0; k = (k + 1) & (d->id_cap - 1)) {
		const struct node *n = d->nodes[i];

		if (n->idlen == len && memcmp(n->id, id, len) == 0)
			return i;
	}
	return -1;
}

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
	if (zmq_bind(d->agents, d->cfg.agents) != 0) {
		log_warnx("cannot bind the agents' endpoint %s: %s", d->cfg.agents,
		          zmq_strerror(zmq_errno()));
		return -1;
	}
	/* "tcp://127.0.0.1:*": the port the system chose (tests parse this line) */
	size_t len = sizeof(d->cfg.agents);
	zmq_getsockopt(d->agents, ZMQ_LAST_ENDPOINT, d->cfg.agents, &len);
	log_info("agents: listening on %s", d->cfg.agents);
	return 0;
}

void agents_close(struct ctld *d)
{
	if (d->agents)
		zmq_close(d->agents);
	d->agents = NULL;
	free(d->id_tab);
	d->id_tab = NULL;
	d->id_cap = 0;
}

static int send_to(struct ctld *d, const uint8_t *id, size_t idlen, const struct pctl_msg *m)
{
	uint8_t buf[512];
	int n = pctl_encode(m, buf, sizeof(buf));

	if (n < 0) {
		log_warnx("cannot encode %s: %s", pctl_type_name(m->type), strerror(-n));
		return -1;
	}
	if (zmq_send(d->agents, id, idlen, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 ||
	    zmq_send(d->agents, buf, (size_t)n, ZMQ_DONTWAIT) < 0) {
		log_debug("send %s: %s", pctl_type_name(m->type), zmq_strerror(zmq_errno()));
		return -1;
	}
	return 0;
}

static void hello_ack(struct ctld *d, const uint8_t *id, size_t idlen, int32_t status,
                      const char *reason)
{
	struct pctl_msg m;

	memset(&m, 0, sizeof(m));
	m.type = PCTL_HELLO_ACK;
	m.u.hello_ack.status = status;
	m.u.hello_ack.heartbeat_ms = (uint32_t)(d->cfg.heartbeat / NSEC_PER_MSEC);
	m.u.hello_ack.ctl_instance = d->ctl_instance;
	snprintf(m.u.hello_ack.reason, sizeof(m.u.hello_ack.reason), "%s", reason);
	send_to(d, id, idlen, &m);
}

int agents_send_constraint(struct ctld *d, int node, const char *job, uint64_t gen, mono_ns period,
                           mono_ns slice)
{
	struct node *n = d->nodes[node];
	struct pctl_msg m;

	memset(&m, 0, sizeof(m));
	m.type = PCTL_CONSTRAINT;
	m.u.cons.gen = gen;
	m.u.cons.nwin = 1;
	m.u.cons.win[0].period = period;
	m.u.cons.win[0].slice = slice;
	m.u.cons.win[0].deadline = period;
	snprintf(m.u.cons.job, sizeof(m.u.cons.job), "%s", job);
	if (!n->up || send_to(d, n->id, n->idlen, &m) != 0) {
		log_warnx("job %s: constraint gen %llu not sent to node %s (not connected)", job,
		          (unsigned long long)gen, n->name);
		return -1;
	}
	log_debug("job %s: constraint gen %llu -> node %s", job, (unsigned long long)gen, n->name);
	return 0;
}

/* NODE_HELLO: register (or re-register) the node under this connection. */
static void on_hello(struct ctld *d, const uint8_t *id, size_t idlen, const struct pctl_hello *h,
                     mono_ns now)
{
	int i = node_find(d, h->node);
	struct node *n;

	if (h->proto_version != PCTL_VERSION) {
		log_warnx("node %s: protocol version %u refused", h->node, h->proto_version);
		hello_ack(d, id, idlen, -EPROTO, "protocol version not supported");
		return;
	}
	if (i < 0) {
		if (d->nnodes == d->cap_nodes) {
			int cap = d->cap_nodes ? 2 * d->cap_nodes : 16;
			struct node **nn = realloc(d->nodes, (size_t)cap * sizeof(*nn));
			if (nn == NULL)
				fatalx("out of memory");
			d->nodes = nn;
			d->cap_nodes = cap;
		}
		n = calloc(1, sizeof(*n));
		if (n == NULL)
			fatalx("out of memory");
		snprintf(n->name, sizeof(n->name), "%s", h->node);
		i = d->nnodes;
		d->nodes[d->nnodes++] = n;
		log_info("node %s registered: %u CPUs, memory %llu MB/s, network %llu MB/s",
		         n->name, h->ncpus, (unsigned long long)(h->mem_capacity / 1000000),
		         (unsigned long long)(h->net_capacity / 1000000));
	} else {
		n = d->nodes[i];
		if (n->up && (n->idlen != idlen || memcmp(n->id, id, idlen) != 0))
			log_warnx("node %s: registered again from another connection (agent "
			          "restarted?); the new one wins",
			          n->name);
		else
			log_info("node %s registered again%s", n->name,
			         n->instance != h->instance ? " (agent restarted)" : "");
		/* its job handles are void: the agent re-announces every process */
		jobs_node_reset(d, i);
	}
	/* a routing id belongs to one node: a connection re-used under another name */
	for (int k = 0; k < d->nnodes; k++) {
		if (k != i && d->nodes[k]->idlen == idlen &&
		    memcmp(d->nodes[k]->id, id, idlen) == 0) {
			d->nodes[k]->idlen = 0;
			if (d->nodes[k]->up) {
				d->nodes[k]->up = false;
				jobs_node_down(d, k, now);
			}
		}
	}
	memcpy(n->id, id, idlen);
	n->idlen = idlen;
	agents_index(d);
	n->ncpus = h->ncpus;
	n->mem_cap = h->mem_capacity;
	n->net_cap = h->net_capacity;
	n->instance = h->instance;
	n->up = true;
	n->last_seen = now;
	n->hello_at = now;
	n->sum_u = 0;
	n->nprocs = 0;
	hello_ack(d, id, idlen, 0, "registered");
	/* co-scheduling: the node's frames start at the cluster epoch, before any window */
	if (d->cfg.cs.on && d->cfg.cs.align)
		cosched_send_epoch(d, i);
}

static void handle(struct ctld *d, const uint8_t *id, size_t idlen, const uint8_t *buf, size_t len,
                   mono_ns now)
{
	struct pctl_msg m;
	char why[256];
	int rc, i;

	rc = pctl_decode(buf, len, &m, why, sizeof(why));
	if (rc != 0) {
		d->bad_msgs++;
		i = agents_node_by_id(d, id, idlen);
		log_warnx("agent %s: bad message refused: %s", i >= 0 ? d->nodes[i]->name : "?",
		          why);
		return;
	}
	if (!pctl_from_agent(m.type)) {
		d->bad_msgs++;
		log_warnx("agent: unexpected %s message ignored", pctl_type_name(m.type));
		goto out;
	}
	if (m.type == PCTL_NODE_HELLO) {
		on_hello(d, id, idlen, &m.u.hello, now);
		goto out;
	}
	i = agents_node_by_id(d, id, idlen);
	if (i < 0) {
		hello_ack(d, id, idlen, -ENOENT, "unknown node: register first");
		goto out;
	}
	if (!d->nodes[i]->up) {
		log_info("node %s is back", d->nodes[i]->name);
		d->nodes[i]->up = true;
		cosched_dirty(d); /* its jobs are planned again */
	}
	d->nodes[i]->last_seen = now;
	switch (m.type) {
	case PCTL_HEARTBEAT:
		d->nodes[i]->nprocs = m.u.hb.nprocs;
		send_to(d, id, idlen, &m); /* echo: seq and sent_ns as received */
		break;
	case PCTL_JOB_PROC:
		jobs_proc(d, i, &m.u.proc, now);
		break;
	case PCTL_RATE:
		jobs_rate(d, i, &m.u.rate, now);
		break;
	case PCTL_BW:
		jobs_bw(d, i, &m.u.bw, now);
		break;
	case PCTL_TASK_STATS:
		jobs_stats(d, i, &m.u.stats);
		break;
	case PCTL_CONSTRAINT_ACK:
		jobs_ack(d, i, &m.u.cack, now);
		break;
	default:
		break;
	}
out:
	pctl_msg_release(&m);
}

void agents_recv(struct ctld *d, mono_ns now)
{
	/* bounded per call, so that the admin socket and timers are not starved */
	for (int k = 0; k < 4096; k++) {
		zmq_msg_t id, body;
		int more;

		zmq_msg_init(&id);
		if (zmq_msg_recv(&id, d->agents, ZMQ_DONTWAIT) < 0) {
			zmq_msg_close(&id);
			return;
		}
		more = zmq_msg_more(&id);
		zmq_msg_init(&body);
		if (!more || zmq_msg_recv(&body, d->agents, ZMQ_DONTWAIT) < 0) {
			zmq_msg_close(&id);
			zmq_msg_close(&body);
			continue;
		}
		if (zmq_msg_more(&body)) {
			/* more than one frame: drain and refuse */
			zmq_msg_t junk;
			d->bad_msgs++;
			do {
				zmq_msg_init(&junk);
				if (zmq_msg_recv(&junk, d->agents, ZMQ_DONTWAIT) < 0) {
					zmq_msg_close(&junk);
					break;
				}
				more = zmq_msg_more(&junk);
				zmq_msg_close(&junk);
			} while (more);
			log_warnx("agent: multi-frame message refused");
		} else if (zmq_msg_size(&id) <= CTLD_ID_MAX) {
			handle(d, zmq_msg_data(&id), zmq_msg_size(&id), zmq_msg_data(&body),
			       zmq_msg_size(&body), now);
		}
		zmq_msg_close(&id);
		zmq_msg_close(&body);
	}
}

void agents_tick(struct ctld *d, mono_ns now)
{
	for (int i = 0; i < d->nnodes; i++) {
		struct node *n = d->nodes[i];

		if (!n->up || now - n->last_seen <= d->cfg.node_timeout)
			continue;
		n->up = false;
		log_warnx("node %s down: nothing heard for %.1f s", n->name,
		          (double)(now - n->last_seen) / 1e9);
		jobs_node_down(d, i, now);
	}
}
