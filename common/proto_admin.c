/*
 * Encoding and decoding of the admin protocol (wire format in proto_admin.h).
 *
 * Every field is written and read one byte at a time in little-endian order. Frames carry
 * variable-length strings, so the decoder reads through a cursor that refuses to step past
 * the end, and accepts a frame only when the cursor ends exactly at its last byte. Decoders
 * fill local copies and hand them to the caller only on success.
 */
#include "proto_admin.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto_ctl.h"
#include "proto_vsched.h"
#include "wire.h"
#include "text.h"

#define ERRNO_MAX 4095

static bool reason_ok(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < ' ' || s[i] > '~')
			return false;
	return true;
}

/* ---- writer (common/wire.h): the caller has checked that the frame fits ---- */

static void put_f64(struct wire_w *w, double d)
{
	uint64_t v;

	memcpy(&v, &d, sizeof(v));
	wire_put_u64(w, v);
}

/* A string of at most max bytes (callers have checked it). */
static void put_str(struct wire_w *w, const char *s, size_t max)
{
	size_t n = strnlen(s, max);

	wire_put_u8(w, (uint8_t)n);
	wire_put_bytes(w, s, n);
}

static void put_header(struct wire_w *w, uint8_t type)
{
	wire_put_u8(w, PADM_MAGIC);
	wire_put_u8(w, PADM_VERSION);
	wire_put_u8(w, type);
	wire_put_u8(w, 0);
}

/*
 * ---- reader: frames carry variable-length strings, so unlike wire.h's cursor this one
 * checks the remaining length before every field; past the end it reads zeros and marks
 * the frame bad (reported once, by check_end) ----
 */
struct rd {
	const uint8_t *p, *end;
	bool bad; /* read past the end */
};

static bool need(struct rd *r, size_t n)
{
	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		return false;
	}
	return true;
}

#define RD_GET(type, name, n)                                                                      \
	static type get_##name(struct rd *r)                                                       \
	{                                                                                          \
		struct wire_r c = {.p = r->p, .len = n};                                           \
		type v;                                                                            \
		if (!need(r, n))                                                                   \
			return 0;                                                                  \
		v = wire_get_##name(&c);                                                           \
		r->p += c.off;                                                                     \
		return v;                                                                          \
	}
RD_GET(uint8_t, u8, 1)
RD_GET(uint16_t, u16, 2)
RD_GET(uint32_t, u32, 4)
RD_GET(uint64_t, u64, 8)
RD_GET(int32_t, i32, 4)

static double get_f64(struct rd *r)
{
	uint64_t u = get_u64(r);
	double d;
	memcpy(&d, &u, sizeof(d));
	return d;
}

/* Reads a string of at most max bytes into out (NUL-terminated). False when too long. */
static bool get_str(struct rd *r, char *out, size_t max)
{
	uint8_t n = get_u8(r);

	out[0] = '\0';
	if (n > max || !need(r, n))
		return false;
	memcpy(out, r->p, n);
	out[n] = '\0';
	r->p += n;
	return memchr(out, '\0', n) == NULL;
}

/* ---- requests ---- */

static int request_body(const struct padm_request *q)
{
	size_t n = strnlen(q->job, PADM_NAME_MAX + 1);

	switch (q->type) {
	case PADM_JOB_LIST:
	case PADM_NODE_LIST:
	case PADM_STATUS:
		return 0;
	case PADM_JOB_SHOW:
	case PADM_SET_RATE:
	case PADM_JOB_SET:
		if (!text_name_ok(q->job))
			return -EINVAL;
		if (q->type == PADM_JOB_SHOW)
			return (int)(1 + n);
		if (q->type == PADM_SET_RATE)
			return (int)(1 + n + 4);
		if ((q->mask & ~PADM_SET_ALL) != 0 || q->algo > PADM_ALGO_MAX ||
		    q->agg > PADM_AGG_MAX || !isfinite(q->r_max))
			return -EINVAL;
		return (int)(1 + n + 2 + 1 + 1 + 4 + 8 + 4 * 8 + 4);
	default:
		return -EINVAL;
	}
}

int padm_encode_request(const struct padm_request *q, uint8_t *buf, size_t cap)
{
	int body = request_body(q);
	struct wire_w w = {.p = buf, .cap = cap};

	if (body < 0)
		return body;
	if (cap < (size_t)(PADM_HDR + body))
		return -ENOBUFS;
	put_header(&w, q->type);
	switch (q->type) {
	case PADM_JOB_SHOW:
		put_str(&w, q->job, PADM_NAME_MAX);
		break;
	case PADM_SET_RATE:
		put_str(&w, q->job, PADM_NAME_MAX);
		wire_put_i32(&w, q->target_milli);
		break;
	case PADM_JOB_SET:
		put_str(&w, q->job, PADM_NAME_MAX);
		wire_put_u16(&w, q->mask);
		wire_put_u8(&w, q->algo);
		wire_put_u8(&w, q->agg);
		wire_put_i32(&w, q->eps_milli);
		put_f64(&w, q->r_max);
		wire_put_u64(&w, q->delta_period);
		wire_put_u64(&w, q->min_period);
		wire_put_u64(&w, q->min_slice);
		wire_put_u64(&w, q->initial_period);
		wire_put_i32(&w, q->u_max_milli);
		break;
	default:
		break;
	}
	return (int)w.len;
}

static int check_header(const uint8_t *buf, size_t len, uint8_t *type, char *why, size_t whylen)
{
	if (len < PADM_HDR) {
		text_fmt(why, whylen, "frame too short: %zu bytes, header needs %d", len, PADM_HDR);
		return -EBADMSG;
	}
	if (buf[0] != PADM_MAGIC) {
		text_fmt(why, whylen, "bad magic 0x%02x (expected 0x%02x)", buf[0], PADM_MAGIC);
		return -EBADMSG;
	}
	if (buf[1] != PADM_VERSION) {
		text_fmt(why, whylen,
		         "admin protocol version %u not supported (this is version %d)", buf[1],
		         PADM_VERSION);
		return -EPROTO;
	}
	if (buf[3] != 0) {
		text_fmt(why, whylen, "reserved header byte is 0x%02x, must be 0", buf[3]);
		return -EBADMSG;
	}
	*type = buf[2];
	return 0;
}

/* The cursor ended exactly at the end of the frame; else a reason. */
static int check_end(const struct rd *r, const char *what, char *why, size_t whylen)
{
	if (r->bad) {
		text_fmt(why, whylen, "%s: frame truncated", what);
		return -EBADMSG;
	}
	if (r->p != r->end) {
		text_fmt(why, whylen, "%s: %zu bytes of junk after the message", what,
		         (size_t)(r->end - r->p));
		return -EBADMSG;
	}
	return 0;
}

int padm_decode_request(const uint8_t *buf, size_t len, struct padm_request *out, char *why,
                        size_t whylen)
{
	struct rd r = {buf + PADM_HDR, buf + len, false};
	struct padm_request q;
	uint8_t type = 0;
	int rc;

	if (len > PADM_MAX_REQUEST) {
		text_fmt(why, whylen, "request too long: %zu bytes (at most %d)", len,
		         PADM_MAX_REQUEST);
		return -EBADMSG;
	}
	rc = check_header(buf, len, &type, why, whylen);
	if (rc < 0)
		return rc;
	memset(&q, 0, sizeof(q));
	q.type = type;
	switch (type) {
	case PADM_JOB_LIST:
	case PADM_NODE_LIST:
	case PADM_STATUS:
		break;
	case PADM_JOB_SHOW:
	case PADM_SET_RATE:
	case PADM_JOB_SET:
		if (!get_str(&r, q.job, PADM_NAME_MAX) && !r.bad) {
			text_fmt(why, whylen, "%s: job name too long or has a NUL byte",
			         padm_type_name(type));
			return -EBADMSG;
		}
		if (!r.bad && !text_name_ok(q.job)) {
			text_fmt(why, whylen,
			         "%s: job name must be 1..%d printable characters without blanks",
			         padm_type_name(type), PADM_NAME_MAX);
			return -EBADMSG;
		}
		if (type == PADM_SET_RATE) {
			q.target_milli = get_i32(&r);
		} else if (type == PADM_JOB_SET) {
			q.mask = get_u16(&r);
			q.algo = get_u8(&r);
			q.agg = get_u8(&r);
			q.eps_milli = get_i32(&r);
			q.r_max = get_f64(&r);
			q.delta_period = get_u64(&r);
			q.min_period = get_u64(&r);
			q.min_slice = get_u64(&r);
			q.initial_period = get_u64(&r);
			q.u_max_milli = get_i32(&r);
		}
		break;
	default:
		text_fmt(why, whylen, "unknown request type 0x%02x", type);
		return -EBADMSG;
	}
	rc = check_end(&r, padm_type_name(type), why, whylen);
	if (rc < 0)
		return rc;
	if (type == PADM_JOB_SET) {
		if (q.mask & ~PADM_SET_ALL) {
			text_fmt(why, whylen, "job_set: unknown field bits 0x%04x",
			         q.mask & ~PADM_SET_ALL);
			return -EBADMSG;
		}
		if (q.algo > PADM_ALGO_MAX || q.agg > PADM_AGG_MAX) {
			text_fmt(why, whylen,
			         "job_set: algorithm %u or aggregation %u out of range", q.algo,
			         q.agg);
			return -EBADMSG;
		}
		if (!isfinite(q.r_max)) {
			text_fmt(why, whylen, "job_set: r_max is not a finite number");
			return -EBADMSG;
		}
	}
	*out = q;
	return 0;
}

/* ---- replies ---- */

static bool measure_ok(double d)
{
	return !isinf(d); /* NaN: not known yet */
}

static bool job_ok(const struct padm_job *j)
{
	return text_name_ok(j->name) && j->state <= PADM_ST_MAX && j->algo <= PADM_ALGO_MAX &&
	       j->agg <= PADM_AGG_MAX && (j->flags & ~PADM_JF_ALL) == 0 &&
	       j->klass <= PADM_CLASS_MAX && measure_ok(j->current_pct) && measure_ok(j->err_pct) &&
	       isfinite(j->r_max) && isfinite(j->eps_pct) && measure_ok(j->u_pct) &&
	       measure_ok(j->eff) && measure_ok(j->need_u_pct) && isfinite(j->u_max_pct) &&
	       reason_ok(j->reason, strnlen(j->reason, PADM_REASON_MAX));
}

static bool node_ok(const struct padm_node *n)
{
	return text_name_ok(n->name) && n->up <= 1 && isfinite(n->sum_u) &&
	       n->mem_src <= PCTL_SRC_MAX && n->net_src <= PCTL_SRC_MAX && n->cap_ppm <= 1000000;
}

static bool rank_ok(const struct padm_rank *k)
{
	return text_name_ok(k->job) && text_name_ok(k->node) && k->up <= 1 && measure_ok(k->rate);
}

static bool plan_ok(const struct padm_plan *p, uint16_t nslots)
{
	struct vsp_resv w[PADM_MAX_WINDOWS];
	char why[160];

	if (p->flags & ~PADM_PF_ALL || p->nwin > PADM_MAX_WINDOWS)
		return false;
	if (!(p->flags & PADM_PF_ON))
		return p->flags == 0 && p->frame_slots == 0 && p->slots == 0 && p->slot_ns == 0 &&
		       p->need == 0 && p->got == 0 && p->nwin == 0 && nslots == 0;
	if (p->slots == 0 || p->frame_slots % p->slots != 0 || p->slot_ns == 0 ||
	    p->got > p->slots || p->need > p->slots)
		return false;
	if (p->nwin == 0)
		return true;
	for (uint8_t i = 0; i < p->nwin; i++) {
		w[i].period = p->win[i].period;
		w[i].slice = p->win[i].slice;
		w[i].deadline = p->win[i].deadline;
		w[i].phase = p->win[i].phase;
	}
	return vsp_check_windows(w, p->nwin, why, sizeof(why)) == 0;
}

static bool slot_ok(const struct padm_slot *s, const struct padm_plan *p)
{
	return s->slot < p->slots && text_name_ok(s->node) && text_name_ok(s->job);
}

int padm_reply_size(const struct padm_reply *r)
{
	size_t n = PADM_HDR + 4 + 1 + strnlen(r->reason, PADM_REASON_MAX) + 6;

	if (r->njobs > PADM_MAX_RECORDS || r->nnodes > PADM_MAX_RECORDS ||
	    r->nranks > PADM_MAX_RECORDS || (r->njobs && !r->jobs) || (r->nnodes && !r->nodes) ||
	    (r->nranks && !r->ranks))
		return -EINVAL;
	if (r->status > 0 || r->status < -ERRNO_MAX ||
	    !reason_ok(r->reason, strnlen(r->reason, PADM_REASON_MAX)))
		return -EINVAL;
	for (uint16_t i = 0; i < r->njobs; i++) {
		if (!job_ok(&r->jobs[i]))
			return -EINVAL;
		n += PADM_JOB_FIXED + 2 + strlen(r->jobs[i].name) +
		     strnlen(r->jobs[i].reason, PADM_REASON_MAX);
	}
	for (uint16_t i = 0; i < r->nnodes; i++) {
		if (!node_ok(&r->nodes[i]))
			return -EINVAL;
		n += PADM_NODE_FIXED + 1 + strlen(r->nodes[i].name);
	}
	for (uint16_t i = 0; i < r->nranks; i++) {
		if (!rank_ok(&r->ranks[i]))
			return -EINVAL;
		n += PADM_RANK_FIXED + 2 + strlen(r->ranks[i].job) + strlen(r->ranks[i].node);
	}
	if (r->nslots > PADM_MAX_RECORDS || (r->nslots && !r->slots) ||
	    !plan_ok(&r->plan, r->nslots))
		return -EINVAL;
	n += PADM_PLAN_FIXED + (size_t)r->plan.nwin * 32 + 2;
	for (uint16_t i = 0; i < r->nslots; i++) {
		if (!slot_ok(&r->slots[i], &r->plan))
			return -EINVAL;
		n += PADM_SLOT_FIXED + 2 + strlen(r->slots[i].node) + strlen(r->slots[i].job);
	}
	return n > (size_t)INT32_MAX ? -EINVAL : (int)n;
}

static void put_job(struct wire_w *w, const struct padm_job *j)
{
	put_str(w, j->name, PADM_NAME_MAX);
	wire_put_u8(w, j->state);
	wire_put_u8(w, j->algo);
	wire_put_u8(w, j->agg);
	wire_put_u8(w, j->flags);
	wire_put_u8(w, j->klass);
	wire_put_u32(w, j->nranks);
	wire_put_u16(w, j->nnodes);
	wire_put_i32(w, j->target_milli);
	put_f64(w, j->current_pct);
	put_f64(w, j->err_pct);
	put_f64(w, j->r_max);
	put_f64(w, j->eps_pct);
	wire_put_u64(w, j->period);
	wire_put_u64(w, j->slice);
	wire_put_u64(w, j->delta_period);
	wire_put_u64(w, j->min_period);
	wire_put_u64(w, j->min_slice);
	wire_put_u64(w, j->initial_period);
	wire_put_u64(w, j->gen);
	wire_put_u64(w, j->mem_bps);
	wire_put_u64(w, j->net_bps);
	wire_put_u64(w, j->misses);
	wire_put_u64(w, j->evaluations);
	wire_put_u64(w, j->changes);
	put_f64(w, j->u_pct);
	put_f64(w, j->eff);
	put_f64(w, j->need_u_pct);
	put_f64(w, j->u_max_pct);
	wire_put_u64(w, j->floor);
	put_str(w, j->reason, PADM_REASON_MAX);
}

static void get_job(struct rd *r, struct padm_job *j, bool *strs)
{
	*strs &= get_str(r, j->name, PADM_NAME_MAX);
	j->state = get_u8(r);
	j->algo = get_u8(r);
	j->agg = get_u8(r);
	j->flags = get_u8(r);
	j->klass = get_u8(r);
	j->nranks = get_u32(r);
	j->nnodes = get_u16(r);
	j->target_milli = get_i32(r);
	j->current_pct = get_f64(r);
	j->err_pct = get_f64(r);
	j->r_max = get_f64(r);
	j->eps_pct = get_f64(r);
	j->period = get_u64(r);
	j->slice = get_u64(r);
	j->delta_period = get_u64(r);
	j->min_period = get_u64(r);
	j->min_slice = get_u64(r);
	j->initial_period = get_u64(r);
	j->gen = get_u64(r);
	j->mem_bps = get_u64(r);
	j->net_bps = get_u64(r);
	j->misses = get_u64(r);
	j->evaluations = get_u64(r);
	j->changes = get_u64(r);
	j->u_pct = get_f64(r);
	j->eff = get_f64(r);
	j->need_u_pct = get_f64(r);
	j->u_max_pct = get_f64(r);
	j->floor = get_u64(r);
	*strs &= get_str(r, j->reason, PADM_REASON_MAX);
}

static void put_node(struct wire_w *w, const struct padm_node *n)
{
	put_str(w, n->name, PADM_NAME_MAX);
	wire_put_u8(w, n->up);
	wire_put_u16(w, n->ncpus);
	wire_put_u32(w, n->nprocs);
	wire_put_u16(w, n->njobs);
	put_f64(w, n->sum_u);
	wire_put_u64(w, n->mem_used);
	wire_put_u64(w, n->mem_cap);
	wire_put_u64(w, n->net_used);
	wire_put_u64(w, n->net_cap);
	wire_put_u8(w, n->mem_src);
	wire_put_u8(w, n->net_src);
	wire_put_u64(w, n->hb_age_ms);
	wire_put_u64(w, n->floor);
	wire_put_u64(w, n->dropped);
	wire_put_u32(w, n->cap_ppm);
}

static void get_node(struct rd *r, struct padm_node *n, bool *strs)
{
	*strs &= get_str(r, n->name, PADM_NAME_MAX);
	n->up = get_u8(r);
	n->ncpus = get_u16(r);
	n->nprocs = get_u32(r);
	n->njobs = get_u16(r);
	n->sum_u = get_f64(r);
	n->mem_used = get_u64(r);
	n->mem_cap = get_u64(r);
	n->net_used = get_u64(r);
	n->net_cap = get_u64(r);
	n->mem_src = get_u8(r);
	n->net_src = get_u8(r);
	n->hb_age_ms = get_u64(r);
	n->floor = get_u64(r);
	n->dropped = get_u64(r);
	n->cap_ppm = get_u32(r);
}

static void put_rank(struct wire_w *w, const struct padm_rank *k)
{
	put_str(w, k->job, PADM_NAME_MAX);
	put_str(w, k->node, PADM_NAME_MAX);
	wire_put_u32(w, k->rank);
	wire_put_i32(w, k->pid);
	wire_put_u8(w, k->up);
	put_f64(w, k->rate);
	wire_put_u64(w, k->period);
	wire_put_u64(w, k->slice);
	wire_put_u64(w, k->gen);
	wire_put_u64(w, k->misses);
	wire_put_u64(w, k->mem_bps);
	wire_put_u64(w, k->net_bps);
}

static void get_rank(struct rd *r, struct padm_rank *k, bool *strs)
{
	*strs &= get_str(r, k->job, PADM_NAME_MAX);
	*strs &= get_str(r, k->node, PADM_NAME_MAX);
	k->rank = get_u32(r);
	k->pid = get_i32(r);
	k->up = get_u8(r);
	k->rate = get_f64(r);
	k->period = get_u64(r);
	k->slice = get_u64(r);
	k->gen = get_u64(r);
	k->misses = get_u64(r);
	k->mem_bps = get_u64(r);
	k->net_bps = get_u64(r);
}

int padm_encode_reply(const struct padm_reply *r, uint8_t *buf, size_t cap)
{
	int len = padm_reply_size(r);
	struct wire_w w = {.p = buf, .cap = cap};

	if (len < 0)
		return len;
	if (cap < (size_t)len)
		return -ENOBUFS;
	put_header(&w, PADM_REPLY);
	wire_put_i32(&w, r->status);
	put_str(&w, r->reason, PADM_REASON_MAX);
	wire_put_u16(&w, r->njobs);
	for (uint16_t i = 0; i < r->njobs; i++)
		put_job(&w, &r->jobs[i]);
	wire_put_u16(&w, r->nnodes);
	for (uint16_t i = 0; i < r->nnodes; i++)
		put_node(&w, &r->nodes[i]);
	wire_put_u16(&w, r->nranks);
	for (uint16_t i = 0; i < r->nranks; i++)
		put_rank(&w, &r->ranks[i]);
	wire_put_u8(&w, r->plan.flags);
	wire_put_u16(&w, r->plan.frame_slots);
	wire_put_u16(&w, r->plan.slots);
	wire_put_u64(&w, r->plan.slot_ns);
	wire_put_u32(&w, r->plan.need);
	wire_put_u32(&w, r->plan.got);
	wire_put_u8(&w, r->plan.nwin);
	for (uint8_t i = 0; i < r->plan.nwin; i++) {
		wire_put_u64(&w, r->plan.win[i].period);
		wire_put_u64(&w, r->plan.win[i].slice);
		wire_put_u64(&w, r->plan.win[i].deadline);
		wire_put_u64(&w, r->plan.win[i].phase);
	}
	wire_put_u16(&w, r->nslots);
	for (uint16_t i = 0; i < r->nslots; i++) {
		wire_put_u16(&w, r->slots[i].slot);
		put_str(&w, r->slots[i].node, PADM_NAME_MAX);
		put_str(&w, r->slots[i].job, PADM_NAME_MAX);
	}
	return (int)w.len;
}

/*
 * Reads a u16 count of records of at least min_wire bytes each and allocates them. The
 * count is checked against the bytes left before anything is allocated, so a frame cannot
 * make the decoder allocate more than its own size allows.
 */
static int get_count(struct rd *r, size_t min_wire, size_t elem, uint16_t *n, void **arr,
                     const char *what, char *why, size_t whylen)
{
	*n = get_u16(r);
	*arr = NULL;
	if (r->bad)
		return 0; /* reported by check_end */
	if (*n > PADM_MAX_RECORDS || (size_t)(r->end - r->p) / min_wire < *n) {
		text_fmt(why, whylen, "reply: %u %s records do not fit in the frame", *n, what);
		return -EBADMSG;
	}
	if (*n == 0)
		return 0;
	*arr = calloc(*n, elem);
	if (*arr == NULL) {
		text_fmt(why, whylen, "out of memory for %u %s records", *n, what);
		return -ENOMEM;
	}
	return 0;
}

/* The job, node and rank records of a reply. 0 or the status with why. */
static int read_records(struct rd *r, struct padm_reply *p, bool *strs, char *why, size_t whylen)
{
	void *arr;
	int rc;

	rc =
	    get_count(r, PADM_JOB_FIXED + 2, sizeof(*p->jobs), &p->njobs, &arr, "job", why, whylen);
	if (rc < 0)
		return rc;
	p->jobs = arr;
	for (uint16_t i = 0; i < p->njobs && !r->bad; i++)
		get_job(r, &p->jobs[i], strs);
	rc = get_count(r, PADM_NODE_FIXED + 1, sizeof(*p->nodes), &p->nnodes, &arr, "node", why,
	               whylen);
	if (rc < 0)
		return rc;
	p->nodes = arr;
	for (uint16_t i = 0; i < p->nnodes && !r->bad; i++)
		get_node(r, &p->nodes[i], strs);
	rc = get_count(r, PADM_RANK_FIXED + 2, sizeof(*p->ranks), &p->nranks, &arr, "rank", why,
	               whylen);
	if (rc < 0)
		return rc;
	p->ranks = arr;
	for (uint16_t i = 0; i < p->nranks && !r->bad; i++)
		get_rank(r, &p->ranks[i], strs);
	return 0;
}

/* The co-scheduling plan of a reply and its slot records. 0 or the status with why. */
static int read_plan(struct rd *r, struct padm_reply *p, bool *strs, char *why, size_t whylen)
{
	void *arr;
	int rc;

	p->plan.flags = get_u8(r);
	p->plan.frame_slots = get_u16(r);
	p->plan.slots = get_u16(r);
	p->plan.slot_ns = get_u64(r);
	p->plan.need = get_u32(r);
	p->plan.got = get_u32(r);
	p->plan.nwin = get_u8(r);
	if (p->plan.nwin > PADM_MAX_WINDOWS) {
		text_fmt(why, whylen, "reply: %u windows, at most %d", p->plan.nwin,
		         PADM_MAX_WINDOWS);
		return -EBADMSG;
	}
	for (uint8_t i = 0; i < p->plan.nwin; i++) {
		p->plan.win[i].period = get_u64(r);
		p->plan.win[i].slice = get_u64(r);
		p->plan.win[i].deadline = get_u64(r);
		p->plan.win[i].phase = get_u64(r);
	}
	rc = get_count(r, PADM_SLOT_FIXED + 2, sizeof(*p->slots), &p->nslots, &arr, "slot", why,
	               whylen);
	if (rc < 0)
		return rc;
	p->slots = arr;
	for (uint16_t i = 0; i < p->nslots && !r->bad; i++) {
		p->slots[i].slot = get_u16(r);
		*strs &= get_str(r, p->slots[i].node, PADM_NAME_MAX);
		*strs &= get_str(r, p->slots[i].job, PADM_NAME_MAX);
	}
	return 0;
}

/* The first malformed record of a reply: its kind (NULL: none) and index in *i. */
static const char *bad_record(const struct padm_reply *p, uint16_t *i)
{
	for (*i = 0; *i < p->njobs; (*i)++)
		if (!job_ok(&p->jobs[*i]))
			return "job";
	for (*i = 0; *i < p->nnodes; (*i)++)
		if (!node_ok(&p->nodes[*i]))
			return "node";
	for (*i = 0; *i < p->nranks; (*i)++)
		if (!rank_ok(&p->ranks[*i]))
			return "rank";
	return NULL;
}

/* Every field of a decoded reply in range. 0 or -EBADMSG with why. */
static int reply_valid(const struct padm_reply *p, bool strs, char *why, size_t whylen)
{
	const char *kind;
	uint16_t i;

	if (!strs) {
		text_fmt(why, whylen, "reply: a string is too long or has a NUL byte");
	} else if (p->status > 0 || p->status < -ERRNO_MAX) {
		text_fmt(why, whylen, "reply status %d: must be 0 or -errno", (int)p->status);
	} else if (!reason_ok(p->reason, strlen(p->reason))) {
		text_fmt(why, whylen, "reply: reason has unprintable bytes");
	} else if ((kind = bad_record(p, &i)) != NULL) {
		text_fmt(why, whylen, "reply: %s record %u is malformed", kind, i);
	} else if (!plan_ok(&p->plan, p->nslots)) {
		text_fmt(why, whylen, "reply: the plan is malformed (flags, slots or windows)");
	} else {
		for (i = 0; i < p->nslots; i++) {
			if (!slot_ok(&p->slots[i], &p->plan)) {
				text_fmt(why, whylen, "reply: slot record %u is malformed", i);
				return -EBADMSG;
			}
		}
		return 0;
	}
	return -EBADMSG;
}

int padm_decode_reply(const uint8_t *buf, size_t len, struct padm_reply *out, char *why,
                      size_t whylen)
{
	struct rd r = {buf + PADM_HDR, buf + len, false};
	struct padm_reply p;
	uint8_t type = 0;
	bool strs = true;
	int rc;

	rc = check_header(buf, len, &type, why, whylen);
	if (rc < 0)
		return rc;
	if (type != PADM_REPLY) {
		text_fmt(why, whylen, "expected a reply, got type 0x%02x", type);
		return -EBADMSG;
	}
	memset(&p, 0, sizeof(p));
	p.status = get_i32(&r);
	strs &= get_str(&r, p.reason, PADM_REASON_MAX);
	if ((rc = read_records(&r, &p, &strs, why, whylen)) < 0 ||
	    (rc = read_plan(&r, &p, &strs, why, whylen)) < 0 ||
	    (rc = check_end(&r, "reply", why, whylen)) < 0 ||
	    (rc = reply_valid(&p, strs, why, whylen)) < 0) {
		padm_reply_release(&p);
		return rc;
	}
	*out = p;
	return 0;
}

void padm_reply_release(struct padm_reply *r)
{
	if (r == NULL)
		return;
	free(r->jobs);
	free(r->nodes);
	free(r->ranks);
	free(r->slots);
	r->jobs = NULL;
	r->nodes = NULL;
	r->ranks = NULL;
	r->slots = NULL;
	r->njobs = r->nnodes = r->nranks = r->nslots = 0;
	memset(&r->plan, 0, sizeof(r->plan));
}

const char *padm_type_name(uint8_t type)
{
	switch (type) {
	case PADM_JOB_LIST:
		return "job_list";
	case PADM_NODE_LIST:
		return "node_list";
	case PADM_STATUS:
		return "status";
	case PADM_JOB_SHOW:
		return "job_show";
	case PADM_SET_RATE:
		return "set_rate";
	case PADM_JOB_SET:
		return "job_set";
	case PADM_REPLY:
		return "reply";
	default:
		return "unknown";
	}
}

const char *padm_state_name(uint8_t state)
{
	static const char *const names[] = {"idle",   "calibrating", "converging",
	                                    "stable", "oscillating", "rejected"};

	return state <= PADM_ST_MAX ? names[state] : "?";
}

const char *const padm_algo_names[] = {"linear", "adaptive", "floating", NULL};
const char *const padm_agg_names[] = {"slowest", "mean", NULL};

const char *padm_algo_name(uint8_t algo)
{
	return algo <= PADM_ALGO_MAX ? padm_algo_names[algo] : "?";
}

const char *padm_agg_name(uint8_t agg)
{
	return agg <= PADM_AGG_MAX ? padm_agg_names[agg] : "?";
}

/* The index of s in names (NULL-terminated) into *out; -EINVAL when absent. */
static int name_index(const char *const *names, const char *s, uint8_t *out)
{
	for (uint8_t i = 0; s != NULL && names[i] != NULL; i++) {
		if (strcmp(s, names[i]) == 0) {
			*out = i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *padm_class_name(uint8_t c)
{
	static const char *const names[] = {"unknown", "turtle", "semidevil", "devil"};

	return c <= PADM_CLASS_MAX ? names[c] : "?";
}

int padm_algo_parse(const char *s, uint8_t *out)
{
	return name_index(padm_algo_names, s, out);
}

int padm_agg_parse(const char *s, uint8_t *out)
{
	return name_index(padm_agg_names, s, out);
}
