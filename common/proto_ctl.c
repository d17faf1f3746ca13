/*
 * Encoding, decoding and validation of the agent <-> controller protocol; the layout is
 * documented in proto_ctl.h. Field by field, little-endian, bounds checked on every read:
 * the decoder never reads past len and refuses any frame whose length is not exact.
 */
#include "proto_ctl.h"
#include "wire.h"
#include "text.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- strings (the integer codec is common/wire.h) ------------------------------- */

static void put_str(struct wire_w *w, const char *s)
{
	size_t n = strlen(s);

	wire_put_u8(w, (uint8_t)n);
	for (size_t i = 0; i < n; i++)
		wire_put_u8(w, (uint8_t)s[i]);
}

/*
 * Reads a string of at most max bytes into out (cap > max). A truncated frame only sets
 * short_read (the caller reports it); returns false for a string that is too long, empty
 * where a name is needed, or holds a byte outside printable ASCII.
 */
static bool get_str(struct wire_r *r, char *out, size_t max, bool name)
{
	size_t n = wire_get_u8(r);

	out[0] = '\0';
	if (r->short_read)
		return true;
	if (r->len - r->off < n) {
		r->short_read = true;
		return true;
	}
	if (n > max || (name && n == 0))
		return false;
	for (size_t i = 0; i < n; i++) {
		uint8_t c = r->p[r->off + i];
		if (c < 0x20 || c > 0x7e || (name && c == ' '))
			return false;
		out[i] = (char)c;
	}
	out[n] = '\0';
	r->off += n;
	return true;
}

/* ---- helpers --------------------------------------------------------------------- */

static bool reason_ok(const char *s)
{
	size_t n = strnlen(s, PCTL_REASON_MAX + 1);

	if (n > PCTL_REASON_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return false;
	return true;
}

static bool src_ok(uint8_t s)
{
	return s <= PCTL_SRC_MAX;
}

/* Checks a constraint's windows as vsched would statically (deadline 0 means period). */
static int windows_ok(const struct pctl_constraint *c, char *why, size_t whylen)
{
	struct vsp_resv w[PCTL_MAX_WINDOWS];

	if (c->nwin == 0 || c->nwin > PCTL_MAX_WINDOWS)
		return vsp_check_windows(c->win, c->nwin, why, whylen);
	for (unsigned i = 0; i < c->nwin; i++) {
		w[i] = c->win[i];
		if (w[i].deadline == 0)
			w[i].deadline = w[i].period;
	}
	return vsp_check_windows(w, c->nwin, why, whylen);
}

/* NODE_INFO's fields: a known state, a period only with DONE and not absurd, a cap of at
 * most the whole CPU. */
static int node_info_check(const struct pctl_node_info *i, char *why, size_t whylen)
{
	if (i->selftest > VSP_SELFTEST_FAILED) {
		text_fmt(why, whylen, "node_info: self-test state %u", i->selftest);
		return -EINVAL;
	}
	if (i->min_period_ns > PCTL_MIN_PERIOD_MAX ||
	    (i->min_period_ns != 0 && i->selftest != VSP_SELFTEST_DONE)) {
		text_fmt(why, whylen, "node_info: min_period %llu ns with self-test state %u",
		         (unsigned long long)i->min_period_ns, i->selftest);
		return -EINVAL;
	}
	if (i->cap_ppm > PCTL_CAP_PPM_MAX) {
		text_fmt(why, whylen, "node_info: cap %u ppm > %u (the whole CPU)", i->cap_ppm,
		         PCTL_CAP_PPM_MAX);
		return -EINVAL;
	}
	return 0;
}

bool pctl_from_agent(uint8_t t)
{
	return t >= PCTL_NODE_HELLO && t <= PCTL_NODE_INFO;
}

bool pctl_from_controller(uint8_t t)
{
	return t == PCTL_HELLO_ACK || t == PCTL_HEARTBEAT || t == PCTL_CONSTRAINT ||
	       t == PCTL_EPOCH;
}

const char *pctl_type_name(uint8_t t)
{
	switch (t) {
	case PCTL_NODE_HELLO:
		return "node_hello";
	case PCTL_HEARTBEAT:
		return "heartbeat";
	case PCTL_JOB_PROC:
		return "job_proc";
	case PCTL_RATE:
		return "rate";
	case PCTL_BW:
		return "bw";
	case PCTL_TASK_STATS:
		return "task_stats";
	case PCTL_CONSTRAINT_ACK:
		return "constraint_ack";
	case PCTL_NODE_INFO:
		return "node_info";
	case PCTL_HELLO_ACK:
		return "hello_ack";
	case PCTL_CONSTRAINT:
		return "constraint";
	case PCTL_EPOCH:
		return "epoch";
	}
	return "unknown";
}

const char *pctl_src_name(uint8_t s)
{
	switch (s) {
	case PCTL_SRC_NONE:
		return "none";
	case PCTL_SRC_PMU:
		return "pmu";
	case PCTL_SRC_RESCTRL:
		return "resctrl";
	case PCTL_SRC_SOCKDIAG:
		return "sockdiag";
	case PCTL_SRC_APP:
		return "app";
	case PCTL_SRC_PROCNETDEV:
		return "procnetdev";
	}
	return "?";
}

/* ---- encode ---------------------------------------------------------------------- */

/* Semantic checks shared by pctl_size and pctl_encode. */
static int check_msg(const struct pctl_msg *m)
{
	switch (m->type) {
	case PCTL_NODE_HELLO:
		return text_name_ok(m->u.hello.node) ? 0 : -EINVAL;
	case PCTL_HELLO_ACK:
		return reason_ok(m->u.hello_ack.reason) ? 0 : -EINVAL;
	case PCTL_HEARTBEAT:
	case PCTL_RATE:
		return 0;
	case PCTL_JOB_PROC:
		if (m->u.proc.event != PCTL_PROC_JOINED && m->u.proc.event != PCTL_PROC_LEFT)
			return -EINVAL;
		return text_name_ok(m->u.proc.name) && m->u.proc.pid > 0 ? 0 : -EINVAL;
	case PCTL_BW:
		if (m->u.bw.n > PCTL_MAX_ENTRIES || (m->u.bw.n && !m->u.bw.e) ||
		    !src_ok(m->u.bw.node_src))
			return -EINVAL;
		for (unsigned i = 0; i < m->u.bw.n; i++)
			if (!src_ok(m->u.bw.e[i].mem_src) || !src_ok(m->u.bw.e[i].net_src))
				return -EINVAL;
		return 0;
	case PCTL_TASK_STATS:
		if (m->u.stats.n > PCTL_MAX_ENTRIES || (m->u.stats.n && !m->u.stats.e))
			return -EINVAL;
		return 0;
	case PCTL_CONSTRAINT:
		if (!text_name_ok(m->u.cons.job) || windows_ok(&m->u.cons, NULL, 0) != 0)
			return -EINVAL;
		return 0;
	case PCTL_EPOCH:
		return m->u.epoch.realtime_ns > 0 ? 0 : -EINVAL;
	case PCTL_NODE_INFO:
		return node_info_check(&m->u.info, NULL, 0);
	case PCTL_CONSTRAINT_ACK:
		return text_name_ok(m->u.cack.job) && reason_ok(m->u.cack.reason) ? 0 : -EINVAL;
	}
	return -EINVAL;
}

static void encode_bw(const struct pctl_bw *b, struct wire_w *w)
{
	wire_put_u64(w, b->window_ns);
	wire_put_u64(w, b->node_rx_bps);
	wire_put_u64(w, b->node_tx_bps);
	wire_put_u8(w, b->node_src);
	wire_put_u16(w, b->n);
	for (unsigned i = 0; i < b->n; i++) {
		const struct pctl_bw_entry *e = &b->e[i];
		wire_put_u32(w, e->job);
		wire_put_u32(w, e->rank);
		wire_put_u32(w, (uint32_t)e->pid);
		wire_put_u64(w, e->mem_bps);
		wire_put_u64(w, e->net_tx_bps);
		wire_put_u64(w, e->net_rx_bps);
		wire_put_u8(w, e->mem_src);
		wire_put_u8(w, e->net_src);
	}
}

static void encode_stats(const struct pctl_task_stats *s, struct wire_w *w)
{
	wire_put_u16(w, s->n);
	for (unsigned i = 0; i < s->n; i++) {
		const struct pctl_stats_entry *e = &s->e[i];
		wire_put_u32(w, e->job);
		wire_put_u32(w, e->rank);
		wire_put_u64(w, e->gen);
		wire_put_u32(w, (uint32_t)e->st.pid);
		wire_put_u32(w, (uint32_t)e->st.cpu);
		wire_put_u8(w, e->st.park);
		wire_put_u32(w, e->st.nthreads);
		wire_put_u64(w, e->st.resv.period);
		wire_put_u64(w, e->st.resv.slice);
		wire_put_u64(w, e->st.resv.deadline);
		wire_put_u64(w, e->st.resv.phase);
		wire_put_u64(w, e->st.managed_ns);
		wire_put_u64(w, e->st.periods);
		wire_put_u64(w, e->st.cpu_ns);
		wire_put_u64(w, e->st.misses);
		wire_put_u64(w, e->st.lateness_total_ns);
		wire_put_u64(w, e->st.lateness_max_ns);
	}
}

static void encode_constraint(const struct pctl_constraint *c, struct wire_w *w)
{
	wire_put_u64(w, c->gen);
	wire_put_u8(w, c->nwin);
	for (unsigned i = 0; i < c->nwin; i++) {
		wire_put_u64(w, c->win[i].period);
		wire_put_u64(w, c->win[i].slice);
		wire_put_u64(w, c->win[i].deadline);
		wire_put_u64(w, c->win[i].phase);
	}
	put_str(w, c->job);
}

static void encode_body(const struct pctl_msg *m, struct wire_w *w)
{
	wire_put_u8(w, PCTL_MAGIC);
	wire_put_u8(w, PCTL_VERSION);
	wire_put_u8(w, m->type);
	wire_put_u8(w, 0);
	switch (m->type) {
	case PCTL_NODE_HELLO: {
		const struct pctl_hello *h = &m->u.hello;
		wire_put_u16(w, h->proto_version);
		wire_put_u16(w, h->ncpus);
		wire_put_u64(w, h->mem_capacity);
		wire_put_u64(w, h->net_capacity);
		wire_put_u64(w, h->instance);
		put_str(w, h->node);
		break;
	}
	case PCTL_HELLO_ACK: {
		const struct pctl_hello_ack *a = &m->u.hello_ack;
		wire_put_u32(w, (uint32_t)a->status);
		wire_put_u32(w, a->heartbeat_ms);
		wire_put_u64(w, a->ctl_instance);
		put_str(w, a->reason);
		break;
	}
	case PCTL_HEARTBEAT:
		wire_put_u64(w, m->u.hb.seq);
		wire_put_u64(w, m->u.hb.sent_ns);
		wire_put_u32(w, m->u.hb.nprocs);
		break;
	case PCTL_JOB_PROC: {
		const struct pctl_job_proc *p = &m->u.proc;
		wire_put_u32(w, p->job);
		wire_put_u32(w, p->rank);
		wire_put_u32(w, (uint32_t)p->pid);
		wire_put_u8(w, p->event);
		put_str(w, p->name);
		break;
	}
	case PCTL_RATE: {
		const struct pctl_rate *r = &m->u.rate;
		wire_put_u32(w, r->job);
		wire_put_u32(w, r->rank);
		wire_put_u32(w, r->seq);
		wire_put_u64(w, r->units);
		wire_put_u64(w, r->interval_ns);
		break;
	}
	case PCTL_BW:
		encode_bw(&m->u.bw, w);
		break;
	case PCTL_TASK_STATS:
		encode_stats(&m->u.stats, w);
		break;
	case PCTL_CONSTRAINT:
		encode_constraint(&m->u.cons, w);
		break;
	case PCTL_EPOCH:
		wire_put_u64(w, m->u.epoch.realtime_ns);
		break;
	case PCTL_NODE_INFO:
		wire_put_u64(w, m->u.info.min_period_ns);
		wire_put_u8(w, m->u.info.selftest);
		wire_put_u32(w, m->u.info.cap_ppm);
		break;
	case PCTL_CONSTRAINT_ACK: {
		const struct pctl_constraint_ack *a = &m->u.cack;
		wire_put_u64(w, a->gen);
		wire_put_u32(w, (uint32_t)a->status);
		put_str(w, a->job);
		put_str(w, a->reason);
		break;
	}
	}
}

int pctl_size(const struct pctl_msg *m)
{
	struct wire_w w = {.p = NULL, .cap = 0, .len = 0};
	int rc = check_msg(m);

	if (rc)
		return rc;
	encode_body(m, &w);
	return (int)w.len;
}

int pctl_encode(const struct pctl_msg *m, uint8_t *buf, size_t cap)
{
	int n = pctl_size(m);
	struct wire_w w = {.p = buf, .cap = cap, .len = 0};

	if (n < 0)
		return n;
	if ((size_t)n > cap)
		return -ENOBUFS;
	encode_body(m, &w);
	return n;
}

/* ---- decode ---------------------------------------------------------------------- */

/* Fixed part of each type's body (bytes after the header, before strings / entries). */
static long fixed_body(uint8_t t)
{
	switch (t) {
	case PCTL_NODE_HELLO:
		return 2 + 2 + 8 + 8 + 8 + 1;
	case PCTL_HELLO_ACK:
		return 4 + 4 + 8 + 1;
	case PCTL_HEARTBEAT:
		return 8 + 8 + 4;
	case PCTL_JOB_PROC:
		return 4 + 4 + 4 + 1 + 1;
	case PCTL_RATE:
		return PCTL_RATE_WIRE - PCTL_HDR;
	case PCTL_BW:
		return 8 + 8 + 8 + 1 + 2;
	case PCTL_TASK_STATS:
		return 2;
	case PCTL_CONSTRAINT:
		return 8 + 1 + 1; /* + 32 per window */
	case PCTL_EPOCH:
		return 8;
	case PCTL_NODE_INFO:
		return 8 + 1; /* + 4: cap_ppm (absent in the older 13-byte frame) */
	case PCTL_CONSTRAINT_ACK:
		return 8 + 4 + 1 + 1;
	}
	return -1;
}

/* n entries of wire bytes each must fill the rest of the frame exactly. */
static int entries_ok(const struct wire_r *r, unsigned n, size_t wire, const char *tn, char *why,
                      size_t whylen)
{
	size_t need = (size_t)n * wire, have = r->len - r->off;

	if (n > PCTL_MAX_ENTRIES) {
		text_fmt(why, whylen, "%s: %u entries > %d", tn, n, PCTL_MAX_ENTRIES);
		return -EBADMSG;
	}
	if (have != need) {
		text_fmt(why, whylen, "%s: %s frame: %zu bytes for %u entries, need %zu", tn,
		         have < need ? "short" : "long", have, n, need);
		return -EBADMSG;
	}
	return 0;
}

static int decode_hello(struct wire_r *r, struct pctl_hello *h, const char *tn, char *why,
                        size_t whylen)
{
	h->proto_version = wire_get_u16(r);
	h->ncpus = wire_get_u16(r);
	h->mem_capacity = wire_get_u64(r);
	h->net_capacity = wire_get_u64(r);
	h->instance = wire_get_u64(r);
	if (!get_str(r, h->node, PCTL_NAME_MAX, true)) {
		text_fmt(why, whylen, "%s: bad node name", tn);
		return -EBADMSG;
	}
	if (!r->short_read && h->ncpus == 0) {
		text_fmt(why, whylen, "%s: ncpus 0", tn);
		return -EBADMSG;
	}
	return 0;
}

static int decode_job_proc(struct wire_r *r, struct pctl_job_proc *p, const char *tn, char *why,
                           size_t whylen)
{
	p->job = wire_get_u32(r);
	p->rank = wire_get_u32(r);
	p->pid = (int32_t)wire_get_u32(r);
	p->event = wire_get_u8(r);
	if (!get_str(r, p->name, PCTL_NAME_MAX, true)) {
		text_fmt(why, whylen, "%s: bad job name", tn);
		return -EBADMSG;
	}
	if (r->short_read)
		return 0;
	if (p->pid <= 0) {
		text_fmt(why, whylen, "%s: pid %d", tn, (int)p->pid);
		return -EBADMSG;
	}
	if (p->event != PCTL_PROC_JOINED && p->event != PCTL_PROC_LEFT) {
		text_fmt(why, whylen, "%s: unknown event %u", tn, p->event);
		return -EBADMSG;
	}
	return 0;
}

static int decode_bw(struct wire_r *r, struct pctl_bw *b, const char *tn, char *why, size_t whylen)
{
	int rc;

	b->window_ns = wire_get_u64(r);
	b->node_rx_bps = wire_get_u64(r);
	b->node_tx_bps = wire_get_u64(r);
	b->node_src = wire_get_u8(r);
	b->n = wire_get_u16(r);
	b->e = NULL;
	if (r->short_read)
		return 0;
	if ((rc = entries_ok(r, b->n, PCTL_BW_ENTRY_WIRE, tn, why, whylen)) != 0)
		return rc;
	if (!src_ok(b->node_src)) {
		text_fmt(why, whylen, "%s: unknown source %u", tn, b->node_src);
		return -EBADMSG;
	}
	if (b->n && (b->e = calloc(b->n, sizeof(*b->e))) == NULL) {
		text_fmt(why, whylen, "%s: out of memory", tn);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < b->n; i++) {
		struct pctl_bw_entry *e = &b->e[i];
		e->job = wire_get_u32(r);
		e->rank = wire_get_u32(r);
		e->pid = (int32_t)wire_get_u32(r);
		e->mem_bps = wire_get_u64(r);
		e->net_tx_bps = wire_get_u64(r);
		e->net_rx_bps = wire_get_u64(r);
		e->mem_src = wire_get_u8(r);
		e->net_src = wire_get_u8(r);
		if (!src_ok(e->mem_src) || !src_ok(e->net_src)) {
			text_fmt(why, whylen, "%s: entry %u: unknown source", tn, i);
			free(b->e);
			b->e = NULL;
			return -EBADMSG;
		}
	}
	return 0;
}

static void decode_stats_entry(struct wire_r *r, struct pctl_stats_entry *e)
{
	e->job = wire_get_u32(r);
	e->rank = wire_get_u32(r);
	e->gen = wire_get_u64(r);
	e->st.pid = (int32_t)wire_get_u32(r);
	e->st.cpu = (int32_t)wire_get_u32(r);
	e->st.park = wire_get_u8(r);
	e->st.nthreads = wire_get_u32(r);
	e->st.resv.period = wire_get_u64(r);
	e->st.resv.slice = wire_get_u64(r);
	e->st.resv.deadline = wire_get_u64(r);
	e->st.resv.phase = wire_get_u64(r);
	e->st.managed_ns = wire_get_u64(r);
	e->st.periods = wire_get_u64(r);
	e->st.cpu_ns = wire_get_u64(r);
	e->st.misses = wire_get_u64(r);
	e->st.lateness_total_ns = wire_get_u64(r);
	e->st.lateness_max_ns = wire_get_u64(r);
}

static int decode_stats(struct wire_r *r, struct pctl_task_stats *s, const char *tn, char *why,
                        size_t whylen)
{
	int rc;

	s->n = wire_get_u16(r);
	s->e = NULL;
	if (r->short_read)
		return 0;
	if ((rc = entries_ok(r, s->n, PCTL_STATS_ENTRY_WIRE, tn, why, whylen)) != 0)
		return rc;
	if (s->n && (s->e = calloc(s->n, sizeof(*s->e))) == NULL) {
		text_fmt(why, whylen, "%s: out of memory", tn);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < s->n; i++)
		decode_stats_entry(r, &s->e[i]);
	return 0;
}

static int decode_constraint(struct wire_r *r, struct pctl_constraint *c, const char *tn, char *why,
                             size_t whylen)
{
	char rwhy[160];

	c->gen = wire_get_u64(r);
	c->nwin = wire_get_u8(r);
	if (r->short_read)
		return 0;
	if (c->nwin == 0 || c->nwin > PCTL_MAX_WINDOWS) {
		text_fmt(why, whylen, "%s: %u windows, expected 1..%d", tn, c->nwin,
		         PCTL_MAX_WINDOWS);
		return -EBADMSG;
	}
	for (unsigned i = 0; i < c->nwin; i++) {
		c->win[i].period = wire_get_u64(r);
		c->win[i].slice = wire_get_u64(r);
		c->win[i].deadline = wire_get_u64(r);
		c->win[i].phase = wire_get_u64(r);
	}
	if (!get_str(r, c->job, PCTL_NAME_MAX, true)) {
		text_fmt(why, whylen, "%s: bad job name", tn);
		return -EBADMSG;
	}
	if (r->short_read)
		return 0;
	rwhy[0] = '\0';
	if (windows_ok(c, rwhy, sizeof(rwhy)) != 0) {
		text_fmt(why, whylen, "%s %s: %s", tn, c->job, rwhy);
		return -EINVAL;
	}
	return 0;
}

/* A string field of the message: name (1..PCTL_NAME_MAX, no blanks) or reason. */
static int decode_str(struct wire_r *r, char *out, bool name, const char *tn, char *why,
                      size_t whylen)
{
	if (get_str(r, out, name ? PCTL_NAME_MAX : PCTL_REASON_MAX, name))
		return 0;
	text_fmt(why, whylen, "%s: %s", tn, name ? "bad job name" : "bad reason string");
	return -EBADMSG;
}

static int decode_body(struct wire_r *r, struct pctl_msg *m, char *why, size_t whylen)
{
	const char *tn = pctl_type_name(m->type);
	int rc = 0;

	switch (m->type) {
	case PCTL_NODE_HELLO:
		return decode_hello(r, &m->u.hello, tn, why, whylen);
	case PCTL_HELLO_ACK:
		m->u.hello_ack.status = (int32_t)wire_get_u32(r);
		m->u.hello_ack.heartbeat_ms = wire_get_u32(r);
		m->u.hello_ack.ctl_instance = wire_get_u64(r);
		return decode_str(r, m->u.hello_ack.reason, false, tn, why, whylen);
	case PCTL_HEARTBEAT:
		m->u.hb.seq = wire_get_u64(r);
		m->u.hb.sent_ns = wire_get_u64(r);
		m->u.hb.nprocs = wire_get_u32(r);
		return 0;
	case PCTL_JOB_PROC:
		return decode_job_proc(r, &m->u.proc, tn, why, whylen);
	case PCTL_RATE:
		m->u.rate.job = wire_get_u32(r);
		m->u.rate.rank = wire_get_u32(r);
		m->u.rate.seq = wire_get_u32(r);
		m->u.rate.units = wire_get_u64(r);
		m->u.rate.interval_ns = wire_get_u64(r);
		return 0;
	case PCTL_BW:
		return decode_bw(r, &m->u.bw, tn, why, whylen);
	case PCTL_TASK_STATS:
		return decode_stats(r, &m->u.stats, tn, why, whylen);
	case PCTL_CONSTRAINT:
		return decode_constraint(r, &m->u.cons, tn, why, whylen);
	case PCTL_CONSTRAINT_ACK:
		m->u.cack.gen = wire_get_u64(r);
		m->u.cack.status = (int32_t)wire_get_u32(r);
		if ((rc = decode_str(r, m->u.cack.job, true, tn, why, whylen)) != 0)
			return rc;
		return decode_str(r, m->u.cack.reason, false, tn, why, whylen);
	case PCTL_EPOCH:
		m->u.epoch.realtime_ns = wire_get_u64(r);
		if (!r->short_read && m->u.epoch.realtime_ns == 0) {
			text_fmt(why, whylen, "%s: epoch 0", tn);
			return -EINVAL;
		}
		return 0;
	case PCTL_NODE_INFO:
		m->u.info.min_period_ns = wire_get_u64(r);
		m->u.info.selftest = wire_get_u8(r);
		/* exactly 4 more bytes: cap_ppm; none: an older agent's frame, cap unknown;
		 * anything else is a long frame (pctl_decode) */
		if (!r->short_read && r->len - r->off == 4)
			m->u.info.cap_ppm = wire_get_u32(r);
		return r->short_read ? 0 : node_info_check(&m->u.info, why, whylen);
	}
	return rc;
}

int pctl_decode(const uint8_t *buf, size_t len, struct pctl_msg *m, char *why, size_t whylen)
{
	struct wire_r r = {.p = buf, .len = len, .off = PCTL_HDR, .short_read = false};
	long fixed;
	int rc;

	memset(m, 0, sizeof(*m));
	if (len < PCTL_HDR) {
		text_fmt(why, whylen, "short frame: %zu bytes", len);
		return -EBADMSG;
	}
	if (len > PCTL_MAX_FRAME) {
		text_fmt(why, whylen, "frame of %zu bytes > %d", len, PCTL_MAX_FRAME);
		return -EBADMSG;
	}
	if (buf[0] != PCTL_MAGIC) {
		text_fmt(why, whylen, "bad magic 0x%02x", buf[0]);
		return -EBADMSG;
	}
	if (buf[1] != PCTL_VERSION) {
		text_fmt(why, whylen, "protocol version %u, expected %u", buf[1], PCTL_VERSION);
		return -EPROTO;
	}
	fixed = fixed_body(buf[2]);
	if (fixed < 0) {
		text_fmt(why, whylen, "unknown message type %u", buf[2]);
		return -ENOMSG;
	}
	if (buf[3] != 0) {
		text_fmt(why, whylen, "%s: reserved byte 0x%02x", pctl_type_name(buf[2]), buf[3]);
		return -EBADMSG;
	}
	if (len < PCTL_HDR + (size_t)fixed) {
		text_fmt(why, whylen, "%s: short frame: %zu bytes, need at least %ld",
		         pctl_type_name(buf[2]), len, PCTL_HDR + fixed);
		return -EBADMSG;
	}
	m->type = buf[2];
	rc = decode_body(&r, m, why, whylen);
	/* a frame of the wrong length is malformed even when a field is also out of range:
	 * -EINVAL promises a well-formed frame (pctl_peek_constraint reads its job) */
	if ((rc == 0 || rc == -EINVAL) && (r.short_read || r.off != len)) {
		text_fmt(why, whylen, "%s: %s frame: %zu bytes", pctl_type_name(m->type),
		         r.short_read ? "short" : "long", len);
		rc = -EBADMSG;
	}
	if (rc != 0) {
		pctl_msg_release(m);
		m->type = 0;
	}
	return rc;
}

int pctl_peek_constraint(const uint8_t *buf, size_t len, uint64_t *gen, char job[PCTL_NAME_MAX + 1])
{
	struct wire_r r = {.p = buf, .len = len, .off = PCTL_HDR, .short_read = false};
	size_t fixed;
	uint8_t nwin;

	if (len < PCTL_HDR + 8 + 1 || buf[0] != PCTL_MAGIC || buf[1] != PCTL_VERSION ||
	    buf[2] != PCTL_CONSTRAINT || buf[3] != 0)
		return -EBADMSG;
	*gen = wire_get_u64(&r);
	nwin = wire_get_u8(&r);
	if (nwin == 0 || nwin > PCTL_MAX_WINDOWS)
		return -EBADMSG;
	fixed = PCTL_HDR + 8 + 1 + 32 * (size_t)nwin;
	if (len < fixed + 1 || len > fixed + 1 + PCTL_NAME_MAX)
		return -EBADMSG;
	r.off = fixed;
	if (!get_str(&r, job, PCTL_NAME_MAX, true) || r.short_read || r.off != len)
		return -EBADMSG;
	return 0;
}

void pctl_msg_release(struct pctl_msg *m)
{
	if (!m)
		return;
	if (m->type == PCTL_BW) {
		free(m->u.bw.e);
		m->u.bw.e = NULL;
	} else if (m->type == PCTL_TASK_STATS) {
		free(m->u.stats.e);
		m->u.stats.e = NULL;
	}
}
