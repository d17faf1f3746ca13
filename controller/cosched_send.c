/*
 * Co-scheduling messages to the agents (common/proto_ctl.h): CONSTRAINT with several
 * windows, and EPOCH. Kept apart from agents.c so that unit tests can stand in for
 * agents_send_constraint() and for these without pulling each other's file.
 */
#include "controller.h"

#include <errno.h>
#include <string.h>
#include <zmq.h>

#include "log.h"

static int send_msg(struct ctld *d, int node, const struct pctl_msg *m)
{
	struct node *n = d->nodes[node];
	uint8_t buf[512];
	int len = pctl_encode(m, buf, sizeof(buf));

	if (len < 0) {
		log_warnx("cannot encode %s for node %s: %s", pctl_type_name(m->type), n->name,
		          strerror(-len));
		return -1;
	}
	if (!n->up || d->agents == NULL ||
	    zmq_send(d->agents, n->id, n->idlen, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 ||
	    zmq_send(d->agents, buf, (size_t)len, ZMQ_DONTWAIT) < 0)
		return -1;
	return 0;
}

int cosched_send_windows(struct ctld *d, int node, const char *job, uint64_t gen, uint8_t nwin,
                         const struct vsp_resv *win)
{
	struct pctl_msg m;

	memset(&m, 0, sizeof(m));
	m.type = PCTL_CONSTRAINT;
	m.u.cons.gen = gen;
	m.u.cons.nwin = nwin;
	memcpy(m.u.cons.win, win, nwin * sizeof(win[0]));
	snprintf(m.u.cons.job, sizeof(m.u.cons.job), "%s", job);
	if (send_msg(d, node, &m) != 0) {
		log_warnx("job %s: windows gen %llu not sent to node %s (not connected)", job,
		          (unsigned long long)gen, d->nodes[node]->name);
		return -1;
	}
	log_debug("job %s: %u window(s) gen %llu -> node %s", job, nwin, (unsigned long long)gen,
	          d->nodes[node]->name);
	return 0;
}

int cosched_send_epoch(struct ctld *d, int node)
{
	struct pctl_msg m;

	memset(&m, 0, sizeof(m));
	m.type = PCTL_EPOCH;
	m.u.epoch.realtime_ns = d->plan.epoch_ns;
	if (send_msg(d, node, &m) != 0) {
		log_warnx("node %s: epoch not sent (not connected)", d->nodes[node]->name);
		return -1;
	}
	log_info("node %s: epoch %llu.%09llu (frames of the cluster start there)",
	         d->nodes[node]->name, (unsigned long long)(d->plan.epoch_ns / NSEC_PER_SEC),
	         (unsigned long long)(d->plan.epoch_ns % NSEC_PER_SEC));
	return 0;
}
