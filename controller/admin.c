/*
 * The admin side of the controller: a ZeroMQ ROUTER for vschedctl's REQ sockets
 * (common/proto_admin.h). Messages are [client id][empty][frame]. Listings are answered at
 * once; SET_RATE and JOB_SET that change a job's constraint are answered when every node
 * of the job has acknowledged or refused (jobs.c), so the administrator learns the real
 * outcome. Every request is validated; a bad one gets a reply with the reason.
 * "At once" means at the end of the loop turn: every reply is held until the turn's state
 * is on disk (admin_end_turn, state_commit()), so nothing the administrator is told can
 * be lost by a crash.
 */
#include "controller.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <zmq.h>

#include "dashboard.h"
#include "fitness.h"
#include "log.h"

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
	if (zmq_bind(d->admin, d->cfg.admin) != 0) {
		log_warnx("cannot bind the admin endpoint %s: %s", d->cfg.admin,
		          zmq_strerror(zmq_errno()));
		return -1;
	}
	size_t len = sizeof(d->cfg.admin);
	zmq_getsockopt(d->admin, ZMQ_LAST_ENDPOINT, d->cfg.admin, &len);
	/* an ipc admin socket is for the administrator only, like vsched's own */
	if (strncmp(d->cfg.admin, "ipc://", 6) == 0)
		chmod(d->cfg.admin + 6, 0600);
	log_info("admin: listening on %s", d->cfg.admin);
	return 0;
}

/* An encoded reply waiting for the end of the loop turn (admin_end_turn). */
struct held_reply {
	uint8_t cid[CTLD_ID_MAX];
	size_t cidlen;
	uint8_t *buf; /* owned */
	size_t len;
};

static void held_free(struct ctld *d)
{
	for (int i = 0; i < d->nheld; i++)
		free(d->held[i].buf);
	free(d->held);
	d->held = NULL;
	d->nheld = d->cap_held = 0;
}

void admin_close(struct ctld *d)
{
	if (d->admin)
		zmq_close(d->admin);
	d->admin = NULL;
	held_free(d);
}

/*
 * Encodes the reply and holds it until the end of the turn: it may report state (a target
 * applied, a listing) that is committed to the state file only then (state_commit()).
 * A turn holds at most one reply per request read (admin_recv reads <= 256) plus one per
 * transaction that finished, so this stays small.
 */
static void send_reply(struct ctld *d, const uint8_t *cid, size_t cidlen,
                       const struct padm_reply *r)
{
	int n = padm_reply_size(r);
	struct held_reply *h;

	if (n < 0) {
		log_warnx("admin: cannot encode a reply");
		return;
	}
	if (cidlen > CTLD_ID_MAX) { /* admin_recv and txn_start keep ids within this */
		log_warnx("admin: client id too long: reply dropped");
		return;
	}
	if (d->nheld == d->cap_held) {
		int cap = d->cap_held ? 2 * d->cap_held : 16;
		struct held_reply *nh = realloc(d->held, (size_t)cap * sizeof(*nh));
		if (nh == NULL)
			fatalx("out of memory");
		d->held = nh;
		d->cap_held = cap;
	}
	h = &d->held[d->nheld];
	h->buf = malloc((size_t)n);
	if (h->buf == NULL)
		fatalx("out of memory");
	padm_encode_reply(r, h->buf, (size_t)n);
	h->len = (size_t)n;
	memcpy(h->cid, cid, cidlen);
	h->cidlen = cidlen;
	d->nheld++;
}

void admin_end_turn(struct ctld *d, mono_ns now)
{
	/* the order is the durability contract (state.c, state_commit()): state first, then
	 * the replies that may tell of it; a failed write is logged there and the replies
	 * still go (as before group commit: the change is in force, its write is retried) */
	state_commit(d, now);
	for (int i = 0; i < d->nheld; i++) {
		struct held_reply *h = &d->held[i];

		if (d->reply_hook)
			d->reply_hook(d, h->cid, h->cidlen);
		if (zmq_send(d->admin, h->cid, h->cidlen, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 ||
		    zmq_send(d->admin, "", 0, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 ||
		    zmq_send(d->admin, h->buf, h->len, ZMQ_DONTWAIT) < 0)
			log_debug("admin: reply not sent: %s", zmq_strerror(zmq_errno()));
		free(h->buf);
		h->buf = NULL;
	}
	d->nheld = 0;
}

void admin_reply(struct ctld *d, const uint8_t *cid, size_t cidlen, int32_t status,
                 const char *reason)
{
	struct padm_reply r;

	memset(&r, 0, sizeof(r));
	r.status = status;
	snprintf(r.reason, sizeof(r.reason), "%s", reason);
	/* keep the reason printable: it came partly from an agent */
	for (char *p = r.reason; *p; p++)
		if (*p < ' ' || *p > '~')
			*p = '?';
	log_debug("admin: reply %d: %s", (int)status, r.reason);
	send_reply(d, cid, cidlen, &r);
}

static int by_job_name(const void *a, const void *b)
{
	return strcmp(((const struct padm_job *)a)->name, ((const struct padm_job *)b)->name);
}

static int by_node_name(const void *a, const void *b)
{
	return strcmp(((const struct padm_node *)a)->name, ((const struct padm_node *)b)->name);
}

static uint8_t job_class(const struct ctld *d, const struct job *jb)
{
	struct fit_class_params cp;
	struct fit_node fn = {0};
	double mem = 0;
	uint32_t n = 0;

	for (uint32_t r = 0; r < jb->cap_ranks; r++) {
		const struct rank *rk = &jb->ranks[r];

		if (!rk->used || rk->mem_src == PCTL_SRC_NONE)
			continue;
		mem += (double)rk->mem_bps;
		if (n++ == 0) {
			fn.cpus = d->nodes[rk->node]->ncpus;
			fn.mem_cap = (double)d->nodes[rk->node]->mem_cap;
			fn.net_cap = (double)d->nodes[rk->node]->net_cap;
		}
	}
	if (n == 0 || fn.mem_cap <= 0 || fn.cpus == 0)
		return PADM_CLASS_UNKNOWN;
	fit_class_params_default(&cp);
	switch (fit_classify_bw(mem / n, &fn, &cp)) {
	case FIT_TURTLE:
		return PADM_CLASS_TURTLE;
	case FIT_SEMIDEVIL:
		return PADM_CLASS_SEMIDEVIL;
	case FIT_DEVIL:
		return PADM_CLASS_DEVIL;
	default:
		return PADM_CLASS_UNKNOWN;
	}
}

static void fill_job(const struct ctld *d, const struct job *jb, struct padm_job *o)
{
	memset(o, 0, sizeof(*o));
	snprintf(o->name, sizeof(o->name), "%s", jb->name);
	o->state = job_state(jb);
	o->algo = jb->set.algo;
	o->agg = jb->set.agg;
	if (jb->ctl.r_max > 0)
		o->flags |= PADM_JF_RMAX_KNOWN;
	if (jb->set.r_max_given)
		o->flags |= PADM_JF_RMAX_GIVEN;
	if (jb->txn.active)
		o->flags |= PADM_JF_PENDING;
	/* coschedule: the class the plan uses (bandwidth averaged over bw_window) */
	o->klass = d->cfg.cs.on ? jb->klass : job_class(d, jb);
	o->nranks = jb->nranks;
	for (int i = 0; i < d->nnodes; i++) {
		for (uint32_t r = 0; r < jb->cap_ranks; r++) {
			if (jb->ranks[r].used && jb->ranks[r].node == i) {
				o->nnodes++;
				break;
			}
		}
	}
	o->target_milli = (int32_t)lround(jb->target_pct * 1000);
	o->current_pct = jb->ctl.last_rate_pct;
	o->err_pct = jb->target_pct > 0 ? jb->ctl.last_err_pct : NAN;
	if (isinf(o->current_pct))
		o->current_pct = NAN;
	if (isinf(o->err_pct))
		o->err_pct = NAN;
	o->r_max = isfinite(jb->ctl.r_max) ? jb->ctl.r_max : 0;
	o->eps_pct = jb->set.eps_pct;
	o->period = jb->period;
	o->slice = jb->slice;
	o->delta_period = jb->set.delta_period;
	o->min_period = jb->set.min_period;
	o->min_slice = jb->set.min_slice;
	o->initial_period = jb->set.initial_period;
	o->gen = jb->gen;
	for (uint32_t r = 0; r < jb->cap_ranks; r++) {
		if (!jb->ranks[r].used)
			continue;
		o->mem_bps += jb->ranks[r].mem_bps;
		o->net_bps += jb->ranks[r].net_bps;
		o->misses += jb->ranks[r].misses;
	}
	o->evaluations = jb->ctl.evaluations;
	o->changes = jb->ctl.changes;
	snprintf(o->reason, sizeof(o->reason), "%s", jb->reason);
	for (char *p = o->reason; *p; p++)
		if (*p < ' ' || *p > '~')
			*p = '?';
}

static void fill_node(const struct ctld *d, int i, struct padm_node *o, mono_ns now)
{
	const struct node *n = d->nodes[i];

	memset(o, 0, sizeof(*o));
	snprintf(o->name, sizeof(o->name), "%s", n->name);
	o->up = n->up;
	o->ncpus = n->ncpus;
	o->nprocs = n->nprocs;
	for (int j = 0; j < d->njobs; j++) {
		const struct job *jb = d->jobs[j];
		for (uint32_t r = 0; r < jb->cap_ranks; r++) {
			if (jb->ranks[r].used && jb->ranks[r].node == i) {
				o->njobs++;
				break;
			}
		}
	}
	o->sum_u = isfinite(n->sum_u) ? n->sum_u : 0;
	o->mem_used = n->mem_used;
	o->mem_cap = n->mem_cap;
	o->net_used = n->net_used;
	o->net_cap = n->net_cap;
	o->mem_src = n->mem_src;
	o->net_src = n->net_src;
	o->hb_age_ms = n->last_seen ? (now - n->last_seen) / NSEC_PER_MSEC : UINT64_MAX;
}

/* The plan row of job j, or -1. */
static int plan_row(const struct cs_plan *p, int j)
{
	for (uint32_t x = 0; p->valid && x < p->njobs; x++)
		if (p->job_of[x] == j)
			return (int)x;
	return -1;
}

/* The job's slot table (coschedule mode): its windows, and who runs in its slots on each
 * of its nodes (itself included). */
static void fill_plan(const struct ctld *d, int j, struct padm_reply *r)
{
	const struct cs_plan *p = &d->plan;
	const struct job *jb = d->jobs[j];
	int x = plan_row(p, j);
	uint32_t n = 0;

	memset(&r->plan, 0, sizeof(r->plan));
	r->plan.flags = PADM_PF_ON;
	r->plan.frame_slots = (uint16_t)(d->cfg.cs.frame / d->cfg.cs.slot);
	r->plan.slots = p->valid ? (uint16_t)p->res.slots : r->plan.frame_slots;
	r->plan.slot_ns = d->cfg.cs.slot;
	if (p->valid && p->res.colourable)
		r->plan.flags |= PADM_PF_COLOURABLE;
	if (p->valid && p->res.complete)
		r->plan.flags |= PADM_PF_COMPLETE;
	if (x < 0)
		return;
	r->plan.flags |= PADM_PF_PLANNED;
	if (jb->plan_merged)
		r->plan.flags |= PADM_PF_MERGED;
	r->plan.need = jb->plan_need;
	r->plan.got = jb->plan_got;
	r->plan.nwin = jb->plan_nwin;
	for (uint8_t w = 0; w < jb->plan_nwin; w++) {
		r->plan.win[w].period = jb->plan_win[w].period;
		r->plan.win[w].slice = jb->plan_win[w].slice;
		r->plan.win[w].deadline = jb->plan_win[w].deadline;
		r->plan.win[w].phase = jb->plan_win[w].phase;
	}
	/* two passes: count, then fill */
	for (int pass = 0; pass < 2; pass++) {
		n = 0;
		for (uint32_t y = 0; y < p->nnodes; y++) {
			bool on = false;
			for (uint32_t k = p->node_off[y]; k < p->node_off[y + 1]; k++)
				on |= p->place[k].job == (uint32_t)x;
			if (!on)
				continue;
			for (uint32_t s = 0; s < p->res.slots; s++) {
				if (!p->table[(size_t)x * p->res.slots + s])
					continue;
				for (uint32_t k = p->node_off[y]; k < p->node_off[y + 1]; k++) {
					uint32_t o = p->place[k].job;
					if (!p->table[(size_t)o * p->res.slots + s])
						continue;
					if (pass == 1 && n < r->nslots) {
						struct padm_slot *ps = &r->slots[n];
						ps->slot = (uint16_t)s;
						snprintf(ps->node, sizeof(ps->node), "%s",
						         d->nodes[p->node_of[y]]->name);
						snprintf(ps->job, sizeof(ps->job), "%s",
						         d->jobs[p->job_of[o]]->name);
					}
					n++;
				}
			}
		}
		if (pass == 0) {
			if (n > PADM_MAX_RECORDS)
				n = PADM_MAX_RECORDS;
			r->nslots = (uint16_t)n;
			r->slots = n ? calloc(n, sizeof(*r->slots)) : NULL;
			if (n && !r->slots)
				fatalx("out of memory");
		}
	}
}

int admin_fill(const struct ctld *d, struct padm_reply *r, bool jobs, bool nodes, int ranks_of,
               mono_ns now)
{
	int nj = jobs ? d->njobs : 0, nn = nodes ? d->nnodes : 0, nr = 0;

	if (nj > PADM_MAX_RECORDS)
		nj = PADM_MAX_RECORDS;
	if (nn > PADM_MAX_RECORDS)
		nn = PADM_MAX_RECORDS;
	if (ranks_of >= 0) {
		const struct job *jb = d->jobs[ranks_of];
		for (uint32_t k = 0; k < jb->cap_ranks; k++)
			nr += jb->ranks[k].used;
		if (nr > PADM_MAX_RECORDS)
			nr = PADM_MAX_RECORDS;
	}
	r->jobs = nj ? calloc((size_t)nj, sizeof(*r->jobs)) : NULL;
	r->nodes = nn ? calloc((size_t)nn, sizeof(*r->nodes)) : NULL;
	r->ranks = nr ? calloc((size_t)nr, sizeof(*r->ranks)) : NULL;
	if ((nj && !r->jobs) || (nn && !r->nodes) || (nr && !r->ranks))
		fatalx("out of memory");
	for (int i = 0; i < nj; i++)
		fill_job(d, d->jobs[i], &r->jobs[i]);
	for (int i = 0; i < nn; i++)
		fill_node(d, i, &r->nodes[i], now);
	if (ranks_of >= 0) {
		const struct job *jb = d->jobs[ranks_of];
		int k = 0;

		for (uint32_t q = 0; q < jb->cap_ranks && k < nr; q++) {
			const struct rank *rk = &jb->ranks[q];
			struct padm_rank *o = &r->ranks[k];

			if (!rk->used)
				continue;
			snprintf(o->job, sizeof(o->job), "%s", jb->name);
			snprintf(o->node, sizeof(o->node), "%s", d->nodes[rk->node]->name);
			o->rank = q;
			o->pid = rk->pid;
			o->up = d->nodes[rk->node]->up;
			o->rate = isinf(rk->rate) ? NAN : rk->rate;
			o->period = rk->period;
			o->slice = rk->slice;
			o->gen = rk->gen;
			o->misses = rk->misses;
			o->mem_bps = rk->mem_bps;
			o->net_bps = rk->net_bps;
			k++;
		}
	}
	r->njobs = (uint16_t)nj;
	r->nnodes = (uint16_t)nn;
	r->nranks = (uint16_t)nr;
	if (ranks_of >= 0 && d->cfg.cs.on)
		fill_plan(d, ranks_of, r);
	if (nj > 1)
		qsort(r->jobs, (size_t)nj, sizeof(*r->jobs), by_job_name);
	if (nn > 1)
		qsort(r->nodes, (size_t)nn, sizeof(*r->nodes), by_node_name);
	return 0;
}

static void reply_listing(struct ctld *d, const uint8_t *cid, size_t cidlen, bool jobs, bool nodes,
                          int ranks_of, const char *reason, mono_ns now)
{
	struct padm_reply r;

	memset(&r, 0, sizeof(r));
	snprintf(r.reason, sizeof(r.reason), "%s", reason);
	admin_fill(d, &r, jobs, nodes, ranks_of, now);
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
	send_reply(d, cid, cidlen, &r);
	padm_reply_release(&r);
}

static void handle(struct ctld *d, const uint8_t *cid, size_t cidlen, const uint8_t *buf,
                   size_t len, mono_ns now)
{
	struct padm_request q;
	char why[PADM_REASON_MAX + 1];
	int j, rc;

	rc = padm_decode_request(buf, len, &q, why, sizeof(why));
	if (rc != 0) {
		log_warnx("admin: bad request refused: %s", why);
		admin_reply(d, cid, cidlen, rc, why);
		return;
	}
	log_debug("admin: %s %s", padm_type_name(q.type), q.job);
	switch (q.type) {
	case PADM_JOB_LIST:
		reply_listing(d, cid, cidlen, true, false, -1, "", now);
		return;
	case PADM_NODE_LIST:
		reply_listing(d, cid, cidlen, false, true, -1, "", now);
		return;
	case PADM_STATUS:
		reply_listing(d, cid, cidlen, true, true, -1, "", now);
		return;
	default:
		break;
	}
	j = job_find(d, q.job);
	if (j < 0) {
		snprintf(why, sizeof(why), "unknown job '%s' (see vschedctl job list)", q.job);
		log_info("admin: %s refused: %s", padm_type_name(q.type), why);
		admin_reply(d, cid, cidlen, -ENOENT, why);
		return;
	}
	switch (q.type) {
	case PADM_JOB_SHOW:
		reply_listing(d, cid, cidlen, true, false, j, "", now);
		return;
	case PADM_SET_RATE:
		rc = jobs_set_target(d, j, q.target_milli / 1000.0, cid, cidlen, now, why,
		                     sizeof(why));
		break;
	case PADM_JOB_SET:
		rc = jobs_set_settings(d, j, &q, cid, cidlen, now, why, sizeof(why));
		break;
	default:
		return;
	}
	if (rc == 1 || rc == 2)
		return; /* answered when the nodes have acknowledged, or already */
	if (rc < 0)
		log_info("admin: %s refused: %s", padm_type_name(q.type), why);
	else
		log_info("admin: %s", why);
	admin_reply(d, cid, cidlen, rc, why);
}

void admin_recv(struct ctld *d, mono_ns now)
{
	for (int k = 0; k < 256; k++) {
		zmq_msg_t part[3];
		int n = 0, more = 1;
		bool bad = false;

		while (more) {
			zmq_msg_t m;

			zmq_msg_init(&m);
			if (zmq_msg_recv(&m, d->admin, ZMQ_DONTWAIT) < 0) {
				zmq_msg_close(&m);
				if (n == 0)
					return;
				bad = true;
				break;
			}
			more = zmq_msg_more(&m);
			if (n < 3)
				part[n++] = m;
			else {
				bad = true;
				zmq_msg_close(&m);
			}
		}
		/* [id][empty][frame] from a REQ socket; anything else is dropped */
		if (!bad && n == 3 && zmq_msg_size(&part[1]) == 0 &&
		    zmq_msg_size(&part[0]) <= CTLD_ID_MAX)
			handle(d, zmq_msg_data(&part[0]), zmq_msg_size(&part[0]),
			       zmq_msg_data(&part[2]), zmq_msg_size(&part[2]), now);
		else
			log_warnx("admin: malformed envelope dropped");
		for (int i = 0; i < n; i++)
			zmq_msg_close(&part[i]);
	}
}

void admin_dashboard(const struct ctld *d, FILE *f, mono_ns now)
{
	struct padm_reply r;
	char title[160], when[32];
	time_t t = time(NULL);
	struct tm tm;

	memset(&r, 0, sizeof(r));
	admin_fill(d, &r, true, true, -1, now);
	localtime_r(&t, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	ctld_fmt(title, sizeof(title), "vsched-controller %s", d->cfg.admin);
	fputs(DASH_ANSI_HOME_CLEAR, f);
	dash_render(f, &r, title, when);
	fflush(f);
	padm_reply_release(&r);
}
