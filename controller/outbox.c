/*
 * What the controller has to say, queued during a loop turn and sent at its end: protocol
 * messages per node (struct node.out, sent by agents_flush in the order queued) and
 * replies to administrators (struct ctld.replies, sent by admin_flush after the turn's
 * state is on disk). Modules decide what to send; only agents.c and admin.c touch sockets.
 * Queues keep their memory between turns; a turn holds at most one reply per request read
 * plus one per transaction that finished.
 */
#include "controller.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "text.h"

void outbox_push(struct outbox *o, const struct pctl_msg *m)
{
	if (o->n == o->cap) {
		uint32_t cap = o->cap ? 2 * o->cap : 8;
		struct pctl_msg *nm = realloc(o->msg, cap * sizeof(*nm));
		if (nm == NULL)
			fatalx("out of memory");
		o->msg = nm;
		o->cap = cap;
	}
	o->msg[o->n++] = *m;
}

void outbox_free(struct outbox *o)
{
	free(o->msg);
	memset(o, 0, sizeof(*o));
}

void outbox_constraint(struct node *n, const char *job, uint64_t gen, mono_ns period, mono_ns slice,
                       uint8_t nwin, const struct vsp_resv *win)
{
	struct pctl_msg m;

	memset(&m, 0, sizeof(m));
	m.type = PCTL_CONSTRAINT;
	m.u.cons.gen = gen;
	if (nwin > 0) {
		m.u.cons.nwin = nwin;
		memcpy(m.u.cons.win, win, nwin * sizeof(win[0]));
	} else {
		m.u.cons.nwin = 1;
		m.u.cons.win[0].period = period;
		m.u.cons.win[0].slice = slice;
		m.u.cons.win[0].deadline = period;
	}
	text_fmt(m.u.cons.job, sizeof(m.u.cons.job), "%s", job);
	outbox_push(&n->out, &m);
}

void outbox_reply(struct ctld *d, const uint8_t *cid, size_t cidlen, const struct padm_reply *r)
{
	struct replies *q = &d->replies;
	int n = padm_reply_size(r);
	struct reply_out *h;

	if (n < 0) {
		log_warnx("admin: cannot encode a reply");
		return;
	}
	if (cidlen > CTLD_ID_MAX) { /* admin_recv and txn_start keep ids within this */
		log_warnx("admin: client id too long: reply dropped");
		return;
	}
	if (q->n == q->cap) {
		int cap = q->cap ? 2 * q->cap : 16;
		struct reply_out *nr = realloc(q->r, (size_t)cap * sizeof(*nr));
		if (nr == NULL)
			fatalx("out of memory");
		q->r = nr;
		q->cap = cap;
	}
	h = &q->r[q->n];
	h->buf = malloc((size_t)n);
	if (h->buf == NULL)
		fatalx("out of memory");
	padm_encode_reply(r, h->buf, (size_t)n);
	h->len = (size_t)n;
	memcpy(h->cid, cid, cidlen);
	h->cidlen = cidlen;
	q->n++;
}

void outbox_status(struct ctld *d, const uint8_t *cid, size_t cidlen, int32_t status,
                   const char *reason)
{
	struct padm_reply r;

	memset(&r, 0, sizeof(r));
	r.status = status;
	text_fmt(r.reason, sizeof(r.reason), "%s", reason);
	text_scrub(r.reason); /* it came partly from an agent */
	log_debug("admin: reply %d: %s", (int)status, r.reason);
	outbox_reply(d, cid, cidlen, &r);
}

void outbox_replies_free(struct ctld *d)
{
	struct replies *q = &d->replies;

	for (int i = 0; i < q->n; i++)
		free(q->r[i].buf);
	free(q->r);
	memset(q, 0, sizeof(*q));
}
