/*
 * Encoding, decoding and validation of the libapprate -> vsched-agent messages. The layout
 * and the meaning of every field are in proto_apprate.h. Linked both into vsched_common
 * (for the agent) and directly into libapprate, so it depends on nothing but libc.
 */
#include "proto_apprate.h"
#include "wire.h"
#include "text.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Fixed-offset access on top of the shared codec (wire.h): every field here has a fixed offset. */
static void put_u32(uint8_t *p, uint32_t v)
{
	wire_put_u32(&(struct wire_w){.p = p, .cap = 4}, v);
}

static void put_u64(uint8_t *p, uint64_t v)
{
	wire_put_u64(&(struct wire_w){.p = p, .cap = 8}, v);
}

static uint32_t get_u32(const uint8_t *p)
{
	return wire_get_u32(&(struct wire_r){.p = p, .len = 4});
}

static uint64_t get_u64(const uint8_t *p)
{
	return wire_get_u64(&(struct wire_r){.p = p, .len = 8});
}

static void put_hdr(uint8_t *p, uint8_t type, uint8_t flags)
{
	p[0] = APROTO_MAGIC;
	p[1] = APROTO_VERSION;
	p[2] = type;
	p[3] = flags;
}

__attribute__((format(printf, 4, 5))) static int refuse(int err, char *why, size_t whylen,
                                                        const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	text_vfmt(why, whylen, fmt, ap);
	va_end(ap);
	return err;
}

static int check_name(const uint8_t *s, size_t n)
{
	if (n == 0 || n > APROTO_JOB_MAX)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x21 || s[i] > 0x7e)
			return -EINVAL;
	return 0;
}

int aproto_check_job(const char *name)
{
	if (!name)
		return -EINVAL;
	size_t n = strnlen(name, APROTO_JOB_MAX + 1);
	return check_name((const uint8_t *)name, n);
}

int aproto_encode_register(const struct aproto_register *m, uint8_t *buf, size_t cap)
{
	if (m->handle == 0 || m->rank > INT32_MAX || m->pid == 0 || m->pid > INT32_MAX ||
	    m->interval_ns == 0 || m->reason > APROTO_REG_REASON_MAX || aproto_check_job(m->job))
		return -EINVAL;
	size_t n = strlen(m->job);
	size_t len = APROTO_REGISTER_BASE + n;
	if (cap < len)
		return -ENOBUFS;
	put_hdr(buf, APROTO_REGISTER, 0);
	put_u32(buf + 4, m->handle);
	put_u32(buf + 8, m->rank);
	put_u32(buf + 12, m->pid);
	put_u64(buf + 16, m->interval_ns);
	buf[24] = m->reason;
	buf[25] = (uint8_t)n;
	memcpy(buf + 26, m->job, n);
	return (int)len;
}

int aproto_encode_report(const struct aproto_report *m, uint8_t *buf, size_t cap)
{
	if (m->handle == 0 || m->rank > INT32_MAX || m->interval_ns == 0 ||
	    (m->flags & ~APROTO_F_FINAL))
		return -EINVAL;
	if (cap < APROTO_REPORT_SIZE)
		return -ENOBUFS;
	put_hdr(buf, APROTO_REPORT, m->flags);
	put_u32(buf + 4, m->handle);
	put_u32(buf + 8, m->rank);
	put_u32(buf + 12, m->seq);
	put_u64(buf + 16, m->units);
	put_u64(buf + 24, m->interval_ns);
	return APROTO_REPORT_SIZE;
}

int aproto_encode_bytes(const struct aproto_bytes *m, uint8_t *buf, size_t cap)
{
	if (m->handle == 0 || m->rank > INT32_MAX)
		return -EINVAL;
	if (cap < APROTO_BYTES_SIZE)
		return -ENOBUFS;
	put_hdr(buf, APROTO_BYTES, 0);
	put_u32(buf + 4, m->handle);
	put_u32(buf + 8, m->rank);
	put_u32(buf + 12, m->seq);
	put_u64(buf + 16, m->mem_bytes);
	put_u64(buf + 24, m->net_bytes);
	return APROTO_BYTES_SIZE;
}

static int decode_register(const uint8_t *buf, size_t len, struct aproto_register *m, char *why,
                           size_t whylen)
{
	if (len < APROTO_REGISTER_BASE + 1)
		return refuse(-EBADMSG, why, whylen, "REGISTER of %zu bytes, need at least %d", len,
		              APROTO_REGISTER_BASE + 1);
	size_t n = buf[25];
	if (len != APROTO_REGISTER_BASE + n)
		return refuse(-EBADMSG, why, whylen,
		              "REGISTER of %zu bytes, job name of %zu needs exactly %zu", len, n,
		              APROTO_REGISTER_BASE + n);
	m->handle = get_u32(buf + 4);
	m->rank = get_u32(buf + 8);
	m->pid = get_u32(buf + 12);
	m->interval_ns = get_u64(buf + 16);
	m->reason = buf[24];
	if (m->handle == 0)
		return refuse(-EINVAL, why, whylen, "REGISTER with handle 0");
	if (m->rank > INT32_MAX)
		return refuse(-EINVAL, why, whylen, "REGISTER with rank %u > %d", m->rank,
		              INT32_MAX);
	if (m->pid == 0 || m->pid > INT32_MAX)
		return refuse(-EINVAL, why, whylen, "REGISTER with pid %u", m->pid);
	if (m->interval_ns == 0)
		return refuse(-EINVAL, why, whylen, "REGISTER with interval 0");
	if (m->reason > APROTO_REG_REASON_MAX)
		return refuse(-EINVAL, why, whylen, "REGISTER with unknown reason %u", m->reason);
	if (check_name(buf + 26, n))
		return refuse(-EINVAL, why, whylen,
		              "REGISTER job name of %zu bytes is not 1..%d graphic ASCII chars", n,
		              APROTO_JOB_MAX);
	memcpy(m->job, buf + 26, n);
	m->job[n] = '\0';
	return 0;
}

int aproto_decode(const uint8_t *buf, size_t len, struct aproto_msg *m, char *why, size_t whylen)
{
	if (!buf || len < APROTO_HDR_SIZE)
		return refuse(-EBADMSG, why, whylen, "frame of %zu bytes is shorter than a header",
		              buf ? len : 0);
	if (len > APROTO_MAX_FRAME)
		return refuse(-EBADMSG, why, whylen, "frame of %zu bytes exceeds %d", len,
		              APROTO_MAX_FRAME);
	if (buf[0] != APROTO_MAGIC)
		return refuse(-EBADMSG, why, whylen, "bad magic 0x%02x", buf[0]);
	if (buf[1] != APROTO_VERSION)
		return refuse(-EPROTO, why, whylen, "version %u, expected %u", buf[1],
		              APROTO_VERSION);
	uint8_t type = buf[2], flags = buf[3];
	memset(m, 0, sizeof(*m));
	m->type = type;
	switch (type) {
	case APROTO_REGISTER:
		if (flags)
			return refuse(-EBADMSG, why, whylen, "REGISTER with flags 0x%02x", flags);
		return decode_register(buf, len, &m->u.reg, why, whylen);
	case APROTO_REPORT:
		if (len != APROTO_REPORT_SIZE)
			return refuse(-EBADMSG, why, whylen, "REPORT of %zu bytes, expected %d",
			              len, APROTO_REPORT_SIZE);
		if (flags & ~APROTO_F_FINAL)
			return refuse(-EBADMSG, why, whylen, "REPORT with flags 0x%02x", flags);
		m->u.rep.flags = flags;
		m->u.rep.handle = get_u32(buf + 4);
		m->u.rep.rank = get_u32(buf + 8);
		m->u.rep.seq = get_u32(buf + 12);
		m->u.rep.units = get_u64(buf + 16);
		m->u.rep.interval_ns = get_u64(buf + 24);
		if (m->u.rep.handle == 0)
			return refuse(-EINVAL, why, whylen, "REPORT with handle 0");
		if (m->u.rep.rank > INT32_MAX)
			return refuse(-EINVAL, why, whylen, "REPORT with rank %u", m->u.rep.rank);
		if (m->u.rep.interval_ns == 0)
			return refuse(-EINVAL, why, whylen, "REPORT with interval 0");
		return 0;
	case APROTO_BYTES:
		if (len != APROTO_BYTES_SIZE)
			return refuse(-EBADMSG, why, whylen, "BYTES of %zu bytes, expected %d", len,
			              APROTO_BYTES_SIZE);
		if (flags)
			return refuse(-EBADMSG, why, whylen, "BYTES with flags 0x%02x", flags);
		m->u.bytes.handle = get_u32(buf + 4);
		m->u.bytes.rank = get_u32(buf + 8);
		m->u.bytes.seq = get_u32(buf + 12);
		m->u.bytes.mem_bytes = get_u64(buf + 16);
		m->u.bytes.net_bytes = get_u64(buf + 24);
		if (m->u.bytes.handle == 0)
			return refuse(-EINVAL, why, whylen, "BYTES with handle 0");
		if (m->u.bytes.rank > INT32_MAX)
			return refuse(-EINVAL, why, whylen, "BYTES with rank %u", m->u.bytes.rank);
		return 0;
	default:
		return refuse(-EBADMSG, why, whylen, "unknown message type %u", type);
	}
}

const char *aproto_type_name(uint8_t type)
{
	switch (type) {
	case APROTO_REGISTER:
		return "REGISTER";
	case APROTO_REPORT:
		return "REPORT";
	case APROTO_BYTES:
		return "BYTES";
	default:
		return "?";
	}
}

const char *aproto_reason_name(uint8_t reason)
{
	static const char *const names[] = {"open", "fork", "reconnect", "refresh", "retry"};
	return reason <= APROTO_REG_REASON_MAX ? names[reason] : "?";
}
