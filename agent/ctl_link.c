/*
 * The link to the controller: a DEALER connected over TCP to the controller's ROUTER.
 *
 * States: DOWN (no TCP connection) -> HELLO (NODE_HELLO sent, resent every heartbeat until
 * HELLO_ACK) -> UP (registered: heartbeats, data). The socket monitor reports TCP connects
 * and disconnects, so a restarted controller is greeted as soon as ZeroMQ has reconnected;
 * a controller that stops answering for controller_timeout (no heartbeat echo) is greeted
 * again too. On every registration the agent re-announces each process (JOB_PROC), since
 * the controller keeps tasks and rates as soft state. While the link is not UP, data
 * messages (RATE, BW, TASK_STATS) are dropped and counted; constraints stay in force.
 */
#include "agent.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "log.h"

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
	if (zmq_socket_monitor(c->sock, MON_ENDPOINT,
	                       ZMQ_EVENT_CONNECTED | ZMQ_EVENT_DISCONNECTED) != 0)
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
	log_info("controller link: connecting to %s as node %s", a->cfg.controller, a->cfg.node);
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

/* Encodes and sends without looking at the state. */
static int send_raw(struct agent *a, const struct pctl_msg *m)
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
	if (a->ctl.state != CTL_UP || send_raw(a, m) != 0) {
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
	a->ctl.hello_sent = send_raw(a, &m) == 0;
	if (a->ctl.hello_sent) {
		a->cnt.hellos++;
		log_debug("controller link: NODE_HELLO sent");
	}
}

void ctl_announce(struct agent *a, int p, uint8_t event)
{
	struct pctl_msg m;
	const struct agent_proc *pr = &a->procs[p];

	memset(&m, 0, sizeof(m));
	m.type = PCTL_JOB_PROC;
	m.u.proc.job = a->jobs[pr->job].handle;
	m.u.proc.rank = pr->rank;
	m.u.proc.pid = pr->pid;
	m.u.proc.event = event;
	snprintf(m.u.proc.name, sizeof(m.u.proc.name), "%s", a->jobs[pr->job].name);
	ctl_send(a, &m);
}

static void link_lost(struct agent *a, const char *why)
{
	int njobs = 0;

	if (a->ctl.state == CTL_UP) {
		a->cnt.link_losses++;
		for (int j = 0; j < AGENT_MAX_JOBS; j++)
			njobs += a->jobs[j].used && a->jobs[j].constrained;
		log_warnx("controller link lost (%s); %d job constraint(s) stay in force", why,
		          njobs);
	}
}

void ctl_on_monitor(struct agent *a)
{
	for (;;) {
		zmq_msg_t ev, addr;
		uint16_t event = 0;

		zmq_msg_init(&ev);
		if (zmq_msg_recv(&ev, a->ctl.mon, ZMQ_DONTWAIT) < 0) {
			zmq_msg_close(&ev);
			return;
		}
		if (zmq_msg_size(&ev) >= 6)
			memcpy(&event, zmq_msg_data(&ev), sizeof(event)); /* host order */
		zmq_msg_close(&ev);
		zmq_msg_init(&addr); /* second frame: the endpoint */
		zmq_msg_recv(&addr, a->ctl.mon, ZMQ_DONTWAIT);
		zmq_msg_close(&addr);
		if (event == ZMQ_EVENT_CONNECTED) {
			log_info("controller link: connected to %s", a->cfg.controller);
			a->ctl.connected = true;
			send_hello(a, mono_now());
		} else if (event == ZMQ_EVENT_DISCONNECTED) {
			link_lost(a, "disconnected");
			a->ctl.connected = false;
			a->ctl.state = CTL_DOWN;
		}
	}
}

static void on_registered(struct agent *a, const struct pctl_hello_ack *ack, mono_ns now)
{
	int n = 0;

	a->ctl.state = CTL_UP;
	a->ctl.next_hb = now;
	if (ack->heartbeat_ms)
		a->ctl.heartbeat = (uint64_t)ack->heartbeat_ms * NSEC_PER_MSEC;
	if (a->ctl.ctl_instance && ack->ctl_instance != a->ctl.ctl_instance) {
		/* A new controller numbers its generations afresh; what is in force stays. */
		for (int j = 0; j < AGENT_MAX_JOBS; j++)
			a->jobs[j].gen = 0;
		log_info("controller instance changed (%llx -> %llx): constraint generations "
		         "start over",
		         (unsigned long long)a->ctl.ctl_instance,
		         (unsigned long long)ack->ctl_instance);
	}
	a->ctl.ctl_instance = ack->ctl_instance;
	a->cnt.registrations++;
	for (int p = 0; p < a->cfg.max_procs; p++)
		if (a->procs[p].used && !a->procs[p].exited) {
			ctl_announce(a, p, PCTL_PROC_JOINED);
			n++;
		}
	log_info("controller link: registered as %s (controller instance %llx), "
	         "%d process(es) announced",
	         a->cfg.node, (unsigned long long)ack->ctl_instance, n);
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

/* Answers a CONSTRAINT: status 0 or -errno with the reason. */
static void send_ack(struct agent *a, uint64_t gen, const char *job, int rc, char *why)
{
	struct pctl_msg ack;

	memset(&ack, 0, sizeof(ack));
	ack.type = PCTL_CONSTRAINT_ACK;
	ack.u.cack.gen = gen;
	ack.u.cack.status = rc;
	snprintf(ack.u.cack.job, sizeof(ack.u.cack.job), "%s", job);
	/* Reasons are printable ASCII; anything else from vsched is replaced. */
	for (char *p = why; *p; p++)
		if (*p < 0x20 || *p > 0x7e)
			*p = '?';
	snprintf(ack.u.cack.reason, sizeof(ack.u.cack.reason), "%s", why);
	if (send_raw(a, &ack) != 0)
		log_warnx("constraint gen %llu: CONSTRAINT_ACK not sent", (unsigned long long)gen);
}

static void handle_constraint(struct agent *a, const struct pctl_constraint *c)
{
	char why[PCTL_REASON_MAX + 1] = "";
	int rc = cons_apply(a, c, why, sizeof(why));

	if (rc == 0)
		a->cnt.cons_applied++;
	else {
		a->cnt.cons_refused++;
		log_warnx("constraint gen %llu for job %s refused: %s", (unsigned long long)c->gen,
		          c->job, why);
	}
	send_ack(a, c->gen, c->job, rc, why);
}

void ctl_on_frame(struct agent *a)
{
	static uint64_t nrefused;

	for (int i = 0; i < 1000; i++) { /* bounded: the applications get their turn */
		zmq_msg_t in;
		struct pctl_msg m;
		char why[200];
		int more, rc;
		size_t len;
		mono_ns now;

		zmq_msg_init(&in);
		if (zmq_msg_recv(&in, a->ctl.sock, ZMQ_DONTWAIT) < 0) {
			zmq_msg_close(&in);
			return;
		}
		more = zmq_msg_more(&in);
		len = zmq_msg_size(&in);
		if (more) {
			/* Multipart: refuse the whole message. */
			a->cnt.ctl_multipart++;
			log_warnx("controller: multipart message refused");
			while (more) {
				zmq_msg_close(&in);
				zmq_msg_init(&in);
				if (zmq_msg_recv(&in, a->ctl.sock, ZMQ_DONTWAIT) < 0)
					break;
				more = zmq_msg_more(&in);
			}
			zmq_msg_close(&in);
			continue;
		}
		rc = pctl_decode(zmq_msg_data(&in), len, &m, why, sizeof(why));
		if (rc == 0 && !pctl_from_controller(m.type)) {
			snprintf(why, sizeof(why), "%s is not a controller message",
			         pctl_type_name(m.type));
			pctl_msg_release(&m);
			rc = -ENOMSG;
		}
		if (rc != 0) {
			uint64_t gen;
			char job[PCTL_NAME_MAX + 1];

			count_bad(a, rc, why);
			/* Logged: the first 20, then every 1000th (a flood must not fill the log).
			 */
			if (++nrefused <= 20 || nrefused % 1000 == 0)
				log_warnx("controller: frame refused: %s", why);
			/* A CONSTRAINT with a bad reservation is still answered, by name. */
			if (rc == -EINVAL &&
			    pctl_peek_constraint(zmq_msg_data(&in), len, &gen, job) == 0) {
				a->cnt.cons_refused++;
				send_ack(a, gen, job, -EINVAL, why);
			}
			zmq_msg_close(&in);
			continue;
		}
		zmq_msg_close(&in);
		a->cnt.ctl_ok++;
		now = mono_now();
		a->ctl.last_rx = now;
		switch (m.type) {
		case PCTL_HELLO_ACK:
			if (m.u.hello_ack.status == 0) {
				on_registered(a, &m.u.hello_ack, now);
			} else {
				log_warnx("controller: registration refused: %s (%s)",
				          m.u.hello_ack.reason, strerror(-m.u.hello_ack.status));
				if (a->ctl.state == CTL_UP)
					link_lost(a, "controller does not know this node");
				a->ctl.state = CTL_HELLO; /* retried after a heartbeat */
			}
			break;
		case PCTL_HEARTBEAT:
			log_debug("controller: heartbeat %llu echoed",
			          (unsigned long long)m.u.hb.seq);
			break;
		case PCTL_CONSTRAINT:
			handle_constraint(a, &m.u.cons);
			break;
		case PCTL_EPOCH:
			cons_set_epoch(a, m.u.epoch.realtime_ns);
			break;
		}
		pctl_msg_release(&m);
	}
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
			send_raw(a, &m);
			c->next_hb = now + c->heartbeat;
		}
		next = mono_min(c->next_hb, c->last_rx + a->cfg.controller_timeout);
		break;
	}
	return next;
}
