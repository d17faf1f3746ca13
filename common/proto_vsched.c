/*
 * Encoding and decoding of the vsched local API (wire format in proto_vsched.h).
 *
 * Every field is written and read one byte at a time in little-endian order, so the code
 * does not depend on host endianness, alignment or struct padding. Decoders check, in this
 * order: header length, magic, version, reserved byte, type, exact frame length, then field
 * ranges; the first failure is reported as one line in why. Decoders fill a local copy and
 * store it in the caller's struct only on success.
 */
#include "proto_vsched.h"
#include "wire.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "text.h"

#define HDR_LEN     4
#define ADD_FIXED   12 /* pid, cpu, park, nwin, anchor, pad */
#define SET_FIXED   8  /* pid, nwin, anchor, pad[2] */
#define DEL_BODY    4
#define LIST_BODY   0
#define EPOCH_BODY  8
#define REPLY_FIXED (4 + 2 + 4) /* status, msglen, ntasks */
#define ERRNO_MAX   4095        /* a status is 0 or -errno, errno in [1, 4095] */

static void put_header(struct wire_w *w, uint8_t type)
{
	wire_put_u8(w, VSP_MAGIC);
	wire_put_u8(w, VSP_VERSION);
	wire_put_u8(w, type);
	wire_put_u8(w, 0);
}

static void put_resv(struct wire_w *w, const struct vsp_resv *r)
{
	wire_put_u64(w, r->period);
	wire_put_u64(w, r->slice);
	wire_put_u64(w, r->deadline);
	wire_put_u64(w, r->phase);
}

static void get_resv(struct wire_r *r, struct vsp_resv *v)
{
	v->period = wire_get_u64(r);
	v->slice = wire_get_u64(r);
	v->deadline = wire_get_u64(r);
	v->phase = wire_get_u64(r);
}

unsigned vsp_request_windows(const struct vsp_request *req, struct vsp_resv *out)
{
	unsigned n = req->nwin;

	if (n == 0) {
		out[0] = req->resv;
		return 1;
	}
	if (n > VSP_MAX_WINDOWS)
		n = VSP_MAX_WINDOWS; /* the encoder refuses it; never read past win[] */
	memcpy(out, req->win, n * sizeof(*out));
	return n;
}

/*
 * Body length of a request type with nwin windows (ADD, SET), or -1 for a type that is not
 * a request.
 */
static int request_body_len(uint8_t type, unsigned nwin)
{
	switch (type) {
	case VSP_ADD:
		return ADD_FIXED + (int)nwin * VSP_WIN_WIRE;
	case VSP_SET:
		return SET_FIXED + (int)nwin * VSP_WIN_WIRE;
	case VSP_DEL:
		return DEL_BODY;
	case VSP_LIST:
	case VSP_INFO:
	case VSP_SELFTEST:
		return LIST_BODY;
	case VSP_EPOCH:
		return EPOCH_BODY;
	default:
		return -1;
	}
}

int vsp_encode_request(const struct vsp_request *req, uint8_t *buf, size_t cap)
{
	struct vsp_resv win[VSP_MAX_WINDOWS];
	unsigned nwin = 1;
	struct wire_w w = {.p = buf, .cap = cap};
	int body;

	if (req->nwin > VSP_MAX_WINDOWS)
		return -EINVAL;
	if (req->type == VSP_ADD || req->type == VSP_SET)
		nwin = vsp_request_windows(req, win);
	body = request_body_len(req->type, nwin);
	if (body < 0)
		return -EINVAL;
	if (cap < (size_t)(HDR_LEN + body))
		return -ENOBUFS;
	put_header(&w, req->type);
	switch (req->type) {
	case VSP_ADD:
		wire_put_i32(&w, req->pid);
		wire_put_i32(&w, req->cpu);
		wire_put_u8(&w, req->park);
		wire_put_u8(&w, (uint8_t)nwin);
		wire_put_u8(&w, req->anchor);
		wire_put_u8(&w, 0);
		for (unsigned i = 0; i < nwin; i++)
			put_resv(&w, &win[i]);
		break;
	case VSP_SET:
		wire_put_i32(&w, req->pid);
		wire_put_u8(&w, (uint8_t)nwin);
		wire_put_u8(&w, req->anchor);
		wire_put_u8(&w, 0);
		wire_put_u8(&w, 0);
		for (unsigned i = 0; i < nwin; i++)
			put_resv(&w, &win[i]);
		break;
	case VSP_DEL:
		wire_put_i32(&w, req->pid);
		break;
	case VSP_EPOCH:
		wire_put_u64(&w, req->epoch_realtime_ns);
		break;
	default: /* VSP_LIST, VSP_INFO, VSP_SELFTEST: header only */
		break;
	}
	return (int)w.len;
}

/* Length of the message as it goes on the wire: up to the NUL, at most VSP_MSG_MAX. */
static size_t msg_wire_len(const struct vsp_reply *rep)
{
	return strnlen(rep->msg, VSP_MSG_MAX);
}

/* Windows a task record carries on the wire: nwin, or 1 when nwin is 0 or too large. */
static unsigned stat_nwin(const struct vsp_task_stat *t)
{
	return t->nwin >= 1 && t->nwin <= VSP_MAX_WINDOWS ? t->nwin : 1;
}

size_t vsp_reply_size(const struct vsp_reply *rep)
{
	size_t len =
	    HDR_LEN + REPLY_FIXED + msg_wire_len(rep) + 1 + (rep->has_info ? VSP_INFO_WIRE : 0);

	for (uint32_t i = 0; i < rep->ntasks && rep->tasks != NULL; i++)
		len += VSP_STAT_WIRE + (stat_nwin(&rep->tasks[i]) - 1) * VSP_WIN_WIRE;
	return len;
}

static void put_stat(struct wire_w *w, const struct vsp_task_stat *t)
{
	wire_put_i32(w, t->pid);
	wire_put_i32(w, t->cpu);
	wire_put_u8(w, t->park);
	wire_put_u8(w, t->anchor);
	wire_put_u32(w, t->nthreads);
	put_resv(w, &t->resv);
	wire_put_u64(w, t->managed_ns);
	wire_put_u64(w, t->periods);
	wire_put_u64(w, t->cpu_ns);
	wire_put_u64(w, t->misses);
	wire_put_u64(w, t->lateness_total_ns);
	wire_put_u64(w, t->lateness_max_ns);
	wire_put_u8(w, (uint8_t)stat_nwin(t));
	for (unsigned k = 1; k < stat_nwin(t); k++)
		put_resv(w, &t->win[k]);
}

static void put_info(struct wire_w *w, const struct vsp_node_info *n)
{
	wire_put_u32(w, n->ncpus);
	wire_put_u32(w, n->cap_ppm);
	wire_put_u32(w, n->ntasks);
	wire_put_u8(w, n->stop_method);
	wire_put_u8(w, n->perf);
	wire_put_u8(w, n->selftest);
	wire_put_u8(w, n->nprobe);
	wire_put_u64(w, n->min_period_ns);
	wire_put_u64(w, n->selftest_at);
	for (int i = 0; i < VSP_MAX_PROBES; i++) {
		wire_put_u64(w, n->probe[i].period_ns);
		wire_put_u32(w, n->probe[i].jobs);
		wire_put_u32(w, n->probe[i].misses);
	}
}

static void get_info(struct wire_r *r, struct vsp_node_info *n)
{
	n->ncpus = wire_get_u32(r);
	n->cap_ppm = wire_get_u32(r);
	n->ntasks = wire_get_u32(r);
	n->stop_method = wire_get_u8(r);
	n->perf = wire_get_u8(r);
	n->selftest = wire_get_u8(r);
	n->nprobe = wire_get_u8(r);
	n->min_period_ns = wire_get_u64(r);
	n->selftest_at = wire_get_u64(r);
	for (int i = 0; i < VSP_MAX_PROBES; i++) {
		n->probe[i].period_ns = wire_get_u64(r);
		n->probe[i].jobs = wire_get_u32(r);
		n->probe[i].misses = wire_get_u32(r);
	}
}

static int check_info(const struct vsp_node_info *n, char *why, size_t whylen)
{
	if (n->stop_method > VSP_STOP_FREEZER_V2 || n->perf > 1 ||
	    n->selftest > VSP_SELFTEST_FAILED || n->nprobe > VSP_MAX_PROBES ||
	    n->cap_ppm > 1000000) {
		text_fmt(why, whylen, "reply node info: field out of range");
		return -EINVAL;
	}
	return 0;
}

/* Also returns -EINVAL for more than VSP_MAX_TASKS tasks or tasks == NULL with ntasks > 0. */
int vsp_encode_reply(const struct vsp_reply *rep, uint8_t *buf, size_t cap)
{
	size_t len, mlen = msg_wire_len(rep);
	struct wire_w w = {.p = buf, .cap = cap};

	if (rep->ntasks > VSP_MAX_TASKS || (rep->ntasks > 0 && rep->tasks == NULL))
		return -EINVAL;
	len = vsp_reply_size(rep);
	if (cap < len)
		return -ENOBUFS;
	put_header(&w, VSP_REPLY);
	wire_put_i32(&w, rep->status);
	wire_put_u16(&w, (uint16_t)mlen);
	wire_put_bytes(&w, rep->msg, mlen);
	wire_put_u32(&w, rep->ntasks);
	for (uint32_t i = 0; i < rep->ntasks; i++)
		put_stat(&w, &rep->tasks[i]);
	wire_put_u8(&w, rep->has_info ? 1 : 0);
	if (rep->has_info)
		put_info(&w, &rep->info);
	return (int)len;
}

/*
 * Checks the 4-byte header of a frame of len bytes. Returns 0 and the type, or -EBADMSG /
 * -EPROTO with why.
 */
static int check_header(const uint8_t *buf, size_t len, uint8_t *type, char *why, size_t whylen)
{
	if (len < HDR_LEN) {
		text_fmt(why, whylen, "frame too short: %zu bytes, header needs %d", len, HDR_LEN);
		return -EBADMSG;
	}
	if (buf[0] != VSP_MAGIC) {
		text_fmt(why, whylen, "bad magic 0x%02x (expected 0x%02x)", buf[0], VSP_MAGIC);
		return -EBADMSG;
	}
	if (buf[1] != VSP_VERSION) {
		text_fmt(why, whylen, "protocol version %u not supported (this is version %d)",
		         buf[1], VSP_VERSION);
		return -EPROTO;
	}
	if (buf[3] != 0) {
		text_fmt(why, whylen, "reserved header byte is 0x%02x, must be 0", buf[3]);
		return -EBADMSG;
	}
	*type = buf[2];
	return 0;
}

static bool park_valid(uint8_t park)
{
	return park == VSP_PARK_STOP || park == VSP_PARK_IDLE;
}

/* Range checks of a decoded request that need no configuration. */
static int check_request(const struct vsp_request *q, char *why, size_t whylen)
{
	struct vsp_resv w[VSP_MAX_WINDOWS];

	if (q->type == VSP_LIST || q->type == VSP_EPOCH || q->type == VSP_INFO ||
	    q->type == VSP_SELFTEST)
		return 0;
	if (q->pid <= 0) {
		text_fmt(why, whylen, "pid %d: must be > 0", (int)q->pid);
		return -EINVAL;
	}
	if (q->type == VSP_DEL)
		return 0;
	if (q->type == VSP_ADD && q->cpu < -1) {
		text_fmt(why, whylen, "cpu %d: must be >= 0, or -1 for the placement rule",
		         (int)q->cpu);
		return -EINVAL;
	}
	if (q->type == VSP_ADD && !park_valid(q->park) && q->park != VSP_PARK_DEFAULT) {
		text_fmt(why, whylen, "park %u: must be 0 (stop), 1 (idle) or 2 (default)",
		         q->park);
		return -EINVAL;
	}
	if (q->anchor != VSP_ANCHOR_EPOCH && q->anchor != VSP_ANCHOR_WAKEUP) {
		text_fmt(why, whylen, "anchor %u: must be 0 (epoch) or 1 (wakeup)", q->anchor);
		return -EINVAL;
	}
	if (q->anchor == VSP_ANCHOR_WAKEUP && q->nwin > 1) {
		text_fmt(why, whylen, "anchor wakeup takes one window, not %u", q->nwin);
		return -EINVAL;
	}
	for (unsigned i = 0; i < q->nwin; i++) {
		w[i] = q->win[i];
		if (w[i].deadline == 0)
			w[i].deadline = w[i].period;
	}
	return vsp_check_windows(w, q->nwin, why, whylen);
}

/* Reads u8 nwin, u8 anchor, the padding (1 byte for ADD, 2 for SET) and the windows. */
static int get_windows(struct wire_r *r, uint8_t type, struct vsp_request *q, char *why,
                       size_t whylen)
{
	q->nwin = wire_get_u8(r);
	q->anchor = wire_get_u8(r);
	for (int i = 0; i < (type == VSP_ADD ? 1 : 2); i++) {
		if (wire_get_u8(r) != 0) {
			text_fmt(why, whylen, "%s request: padding must be 0", vsp_type_name(type));
			return -EBADMSG;
		}
	}
	for (unsigned i = 0; i < q->nwin && i < VSP_MAX_WINDOWS; i++)
		get_resv(r, &q->win[i]);
	q->resv = q->win[0];
	return 0;
}

int vsp_decode_request(const uint8_t *buf, size_t len, struct vsp_request *req, char *why,
                       size_t whylen)
{
	struct vsp_request q;
	struct wire_r r = {.p = buf, .len = len, .off = HDR_LEN};
	uint8_t type = 0;
	unsigned nwin = 1;
	int body, rc;

	if (len > VSP_MAX_FRAME) {
		text_fmt(why, whylen, "frame too long: %zu bytes (at most %d)", len, VSP_MAX_FRAME);
		return -EBADMSG;
	}
	rc = check_header(buf, len, &type, why, whylen);
	if (rc < 0)
		return rc;
	body = request_body_len(type, 1);
	if (body < 0) {
		text_fmt(why, whylen, "unknown request type 0x%02x", type);
		return -EBADMSG;
	}
	if (type == VSP_ADD || type == VSP_SET) {
		/* nwin sits in the fixed part: the length follows from it */
		size_t at = HDR_LEN + (type == VSP_ADD ? 9 : 4);
		if (len < (size_t)HDR_LEN + (type == VSP_ADD ? ADD_FIXED : SET_FIXED)) {
			text_fmt(why, whylen, "%s request: %zu bytes, too short (at least %d)",
			         vsp_type_name(type), len, HDR_LEN + body);
			return -EBADMSG;
		}
		nwin = buf[at];
		if (nwin < 1 || nwin > VSP_MAX_WINDOWS) {
			text_fmt(why, whylen, "%s request: %u windows, expected 1..%d",
			         vsp_type_name(type), nwin, VSP_MAX_WINDOWS);
			return -EBADMSG;
		}
		body = request_body_len(type, nwin);
	}
	if (len != (size_t)(HDR_LEN + body)) {
		text_fmt(why, whylen, "%s request: %zu bytes, must be %d", vsp_type_name(type), len,
		         HDR_LEN + body);
		return -EBADMSG;
	}
	memset(&q, 0, sizeof(q));
	q.type = type;
	q.cpu = -1;
	switch (type) {
	case VSP_ADD:
		q.pid = wire_get_i32(&r);
		q.cpu = wire_get_i32(&r);
		q.park = wire_get_u8(&r);
		rc = get_windows(&r, type, &q, why, whylen);
		if (rc < 0)
			return rc;
		break;
	case VSP_SET:
		q.pid = wire_get_i32(&r);
		rc = get_windows(&r, type, &q, why, whylen);
		if (rc < 0)
			return rc;
		break;
	case VSP_DEL:
		q.pid = wire_get_i32(&r);
		break;
	case VSP_EPOCH:
		q.epoch_realtime_ns = wire_get_u64(&r);
		break;
	default:
		break;
	}
	rc = check_request(&q, why, whylen);
	if (rc < 0)
		return rc;
	*req = q;
	return 0;
}

static void get_stat(struct wire_r *r, struct vsp_task_stat *t)
{
	t->pid = wire_get_i32(r);
	t->cpu = wire_get_i32(r);
	t->park = wire_get_u8(r);
	t->anchor = wire_get_u8(r);
	t->nthreads = wire_get_u32(r);
	get_resv(r, &t->resv);
	t->managed_ns = wire_get_u64(r);
	t->periods = wire_get_u64(r);
	t->cpu_ns = wire_get_u64(r);
	t->misses = wire_get_u64(r);
	t->lateness_total_ns = wire_get_u64(r);
	t->lateness_max_ns = wire_get_u64(r);
	t->nwin = wire_get_u8(r); /* 1..VSP_MAX_WINDOWS: check_reply_layout */
	t->win[0] = t->resv;
	for (unsigned k = 1; k < t->nwin && k < VSP_MAX_WINDOWS; k++)
		get_resv(r, &t->win[k]);
}

static int check_stat(const struct vsp_task_stat *t, uint32_t i, char *why, size_t whylen)
{
	if (t->pid <= 0 || t->cpu < 0 || !park_valid(t->park) || t->anchor > VSP_ANCHOR_WAKEUP) {
		text_fmt(why, whylen, "reply task %u: bad pid %d, cpu %d, park %u or anchor %u", i,
		         (int)t->pid, (int)t->cpu, t->park, t->anchor);
		return -EINVAL;
	}
	return 0;
}

/* Checks the reply's fixed part and exact length; sets msglen, ntasks and ninfo. */
static int check_reply_layout(const uint8_t *buf, size_t len, uint16_t *msglen, uint32_t *ntasks,
                              uint8_t *ninfo, char *why, size_t whylen)
{
	struct wire_r r = {.p = buf, .len = len, .off = HDR_LEN + 4};
	size_t need;

	if (len < HDR_LEN + REPLY_FIXED) {
		text_fmt(why, whylen, "reply too short: %zu bytes (at least %d)", len,
		         HDR_LEN + REPLY_FIXED);
		return -EBADMSG;
	}
	*msglen = wire_get_u16(&r);
	if (*msglen > VSP_MSG_MAX) {
		text_fmt(why, whylen, "reply message length %u > %d", *msglen, VSP_MSG_MAX);
		return -EBADMSG;
	}
	if (len < (size_t)HDR_LEN + REPLY_FIXED + *msglen) {
		text_fmt(why, whylen, "reply truncated: %zu bytes", len);
		return -EBADMSG;
	}
	r.off += *msglen;
	*ntasks = wire_get_u32(&r);
	if (*ntasks > VSP_MAX_TASKS) {
		text_fmt(why, whylen, "reply lists %u tasks (at most %d)", *ntasks, VSP_MAX_TASKS);
		return -EBADMSG;
	}
	/* Records are VSP_STAT_WIRE bytes plus 32 per window beyond the first. */
	need = (size_t)HDR_LEN + REPLY_FIXED + *msglen;
	for (uint32_t i = 0; i < *ntasks; i++) {
		unsigned nwin;

		if (len < need + VSP_STAT_WIRE) {
			text_fmt(why, whylen, "reply: %zu bytes, truncated in task %u of %u", len,
			         i + 1, *ntasks);
			return -EBADMSG;
		}
		nwin = buf[need + VSP_STAT_WIRE - 1];
		if (nwin < 1 || nwin > VSP_MAX_WINDOWS) {
			text_fmt(why, whylen, "reply task %u: %u windows, expected 1..%d", i + 1,
			         nwin, VSP_MAX_WINDOWS);
			return -EBADMSG;
		}
		need += VSP_STAT_WIRE + (size_t)(nwin - 1) * VSP_WIN_WIRE;
	}
	if (len < need + 1) {
		text_fmt(why, whylen, "reply: %zu bytes, truncated before the info count", len);
		return -EBADMSG;
	}
	*ninfo = buf[need];
	if (*ninfo > 1) {
		text_fmt(why, whylen, "reply: %u info blocks (0 or 1)", *ninfo);
		return -EBADMSG;
	}
	need += 1 + (size_t)*ninfo * VSP_INFO_WIRE;
	if (len != need) {
		text_fmt(why, whylen, "reply: %zu bytes, must be %zu for %u tasks", len, need,
		         *ntasks);
		return -EBADMSG;
	}
	return 0;
}

int vsp_decode_reply(const uint8_t *buf, size_t len, struct vsp_reply *rep, char *why,
                     size_t whylen)
{
	struct vsp_task_stat *tasks = NULL;
	struct wire_r r = {.p = buf, .len = len, .off = HDR_LEN};
	const uint8_t *msg;
	uint8_t type = 0;
	uint16_t msglen;
	uint32_t ntasks;
	uint8_t ninfo;
	int32_t status;
	int rc;

	rc = check_header(buf, len, &type, why, whylen);
	if (rc < 0)
		return rc;
	if (type != VSP_REPLY) {
		text_fmt(why, whylen, "expected a reply, got type 0x%02x", type);
		return -EBADMSG;
	}
	rc = check_reply_layout(buf, len, &msglen, &ntasks, &ninfo, why, whylen);
	if (rc < 0)
		return rc;
	status = wire_get_i32(&r);
	if (status > 0 || status < -ERRNO_MAX) {
		text_fmt(why, whylen, "reply status %d: must be 0 or -errno", (int)status);
		return -EINVAL;
	}
	r.off += 2; /* msglen, already read */
	if (memchr(r.p + r.off, '\0', msglen) != NULL) {
		text_fmt(why, whylen, "reply message contains a NUL byte");
		return -EBADMSG;
	}
	msg = r.p + r.off;
	r.off += msglen + 4; /* message, ntasks */
	if (ntasks > 0) {
		tasks = calloc(ntasks, sizeof(*tasks));
		if (tasks == NULL) {
			text_fmt(why, whylen, "out of memory for %u tasks", ntasks);
			return -ENOMEM;
		}
	}
	for (uint32_t i = 0; i < ntasks; i++) {
		get_stat(&r, &tasks[i]);
		rc = check_stat(&tasks[i], i, why, whylen);
		if (rc < 0) {
			free(tasks);
			return rc;
		}
	}
	r.off += 1; /* ninfo, already read */
	memset(&rep->info, 0, sizeof(rep->info));
	if (ninfo) {
		get_info(&r, &rep->info);
		rc = check_info(&rep->info, why, whylen);
		if (rc < 0) {
			free(tasks);
			return rc;
		}
	}
	rep->status = status;
	memcpy(rep->msg, msg, msglen);
	rep->msg[msglen] = '\0';
	rep->ntasks = ntasks;
	rep->tasks = tasks;
	rep->has_info = ninfo;
	return 0;
}

int vsp_check_resv(const struct vsp_resv *r, char *why, size_t whylen)
{
	char a[32], b[32];

	if (r->period == 0) {
		text_fmt(why, whylen, "period must be > 0");
		return -EINVAL;
	}
	if (r->period > VSP_PERIOD_MAX) {
		text_fmt(why, whylen, "period %s > %s", duration_format(r->period, a, sizeof(a)),
		         duration_format(VSP_PERIOD_MAX, b, sizeof(b)));
		return -EINVAL;
	}
	if (r->slice == 0) {
		text_fmt(why, whylen, "slice must be > 0");
		return -EINVAL;
	}
	if (r->slice > r->deadline) {
		text_fmt(why, whylen, "slice %s > deadline %s",
		         duration_format(r->slice, a, sizeof(a)),
		         duration_format(r->deadline, b, sizeof(b)));
		return -EINVAL;
	}
	if (r->deadline > r->period) {
		text_fmt(why, whylen, "deadline %s > period %s",
		         duration_format(r->deadline, a, sizeof(a)),
		         duration_format(r->period, b, sizeof(b)));
		return -EINVAL;
	}
	if (r->phase >= r->period) {
		text_fmt(why, whylen, "phase %s >= period %s",
		         duration_format(r->phase, a, sizeof(a)),
		         duration_format(r->period, b, sizeof(b)));
		return -EINVAL;
	}
	return 0;
}

int vsp_check_windows(const struct vsp_resv *w, unsigned n, char *why, size_t whylen)
{
	char a[32], b[32], rwhy[160];

	if (n == 0 || n > VSP_MAX_WINDOWS) {
		text_fmt(why, whylen, "%u windows, expected 1..%d", n, VSP_MAX_WINDOWS);
		return -EINVAL;
	}
	for (unsigned i = 0; i < n; i++) {
		if (vsp_check_resv(&w[i], rwhy, sizeof(rwhy)) != 0) {
			if (n == 1)
				text_fmt(why, whylen, "%s", rwhy);
			else
				text_fmt(why, whylen, "window %u: %s", i + 1, rwhy);
			return -EINVAL;
		}
	}
	if (n == 1)
		return 0;
	for (unsigned i = 0; i < n; i++) {
		if (w[i].period != w[0].period) {
			text_fmt(why, whylen, "window %u: period %s, window 1 has %s", i + 1,
			         duration_format(w[i].period, a, sizeof(a)),
			         duration_format(w[0].period, b, sizeof(b)));
			return -EINVAL;
		}
		if (w[i].phase + w[i].deadline > w[i].period) {
			text_fmt(why, whylen, "window %u: phase + deadline %s > period %s", i + 1,
			         duration_format(w[i].phase + w[i].deadline, a, sizeof(a)),
			         duration_format(w[i].period, b, sizeof(b)));
			return -EINVAL;
		}
		if (i > 0 && w[i - 1].phase + w[i - 1].deadline > w[i].phase) {
			text_fmt(why, whylen,
			         "window %u (phase %s) overlaps window %u or is out of order",
			         i + 1, duration_format(w[i].phase, a, sizeof(a)), i);
			return -EINVAL;
		}
	}
	return 0;
}

const char *vsp_type_name(uint8_t type)
{
	switch (type) {
	case VSP_ADD:
		return "add";
	case VSP_SET:
		return "set";
	case VSP_DEL:
		return "del";
	case VSP_LIST:
		return "list";
	case VSP_EPOCH:
		return "epoch";
	case VSP_INFO:
		return "info";
	case VSP_SELFTEST:
		return "selftest";
	case VSP_REPLY:
		return "reply";
	default:
		return "unknown";
	}
}

const char *vsp_anchor_name(uint8_t anchor)
{
	return anchor == VSP_ANCHOR_WAKEUP ? "wakeup" : anchor == VSP_ANCHOR_EPOCH ? "epoch" : "?";
}

const char *vsp_stop_name(uint8_t method)
{
	switch (method) {
	case VSP_STOP_FREEZER_V1:
		return "freezer-v1";
	case VSP_STOP_FREEZER_V2:
		return "freezer-v2";
	default:
		return "signal";
	}
}

const char *vsp_park_name(uint8_t park)
{
	switch (park) {
	case VSP_PARK_STOP:
		return "stop";
	case VSP_PARK_IDLE:
		return "idle";
	default:
		return "unknown";
	}
}
