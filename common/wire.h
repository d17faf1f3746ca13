/*
 * Little-endian field codec shared by every wire protocol (proto_vsched, proto_ctl,
 * proto_admin, proto_apprate), and the one-line refusal reason they all produce.
 *
 * Cursors do no bounds checking: each encoder computes the exact frame size and checks
 * the buffer capacity first, each decoder checks the exact frame length first. Integers
 * are encoded byte by byte, so the layout never depends on the host's struct padding or
 * endianness. Header-only (static inline) so libapprate can use it without vsched_common.
 */
#ifndef VSCHED_WIRE_H
#define VSCHED_WIRE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct wire_w {
	uint8_t *p;
};

struct wire_r {
	const uint8_t *p;
};

static inline void wire_put_u8(struct wire_w *w, uint8_t v)
{
	*w->p++ = v;
}

static inline void wire_put_u16(struct wire_w *w, uint16_t v)
{
	wire_put_u8(w, (uint8_t)v);
	wire_put_u8(w, (uint8_t)(v >> 8));
}

static inline void wire_put_u32(struct wire_w *w, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		wire_put_u8(w, (uint8_t)(v >> (8 * i)));
}

static inline void wire_put_u64(struct wire_w *w, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		wire_put_u8(w, (uint8_t)(v >> (8 * i)));
}

static inline void wire_put_i32(struct wire_w *w, int32_t v)
{
	wire_put_u32(w, (uint32_t)v);
}

static inline void wire_put_bytes(struct wire_w *w, const void *src, size_t n)
{
	memcpy(w->p, src, n);
	w->p += n;
}

static inline uint8_t wire_get_u8(struct wire_r *r)
{
	return *r->p++;
}

static inline uint16_t wire_get_u16(struct wire_r *r)
{
	uint16_t v = wire_get_u8(r);
	return (uint16_t)(v | (uint16_t)wire_get_u8(r) << 8);
}

static inline uint32_t wire_get_u32(struct wire_r *r)
{
	uint32_t v = 0;
	for (int i = 0; i < 4; i++)
		v |= (uint32_t)wire_get_u8(r) << (8 * i);
	return v;
}

static inline uint64_t wire_get_u64(struct wire_r *r)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)wire_get_u8(r) << (8 * i);
	return v;
}

static inline int32_t wire_get_i32(struct wire_r *r)
{
	uint32_t u = wire_get_u32(r);
	int32_t v;
	memcpy(&v, &u, sizeof(v)); /* two's complement reinterpretation, no UB */
	return v;
}

static inline void wire_get_bytes(struct wire_r *r, void *dst, size_t n)
{
	memcpy(dst, r->p, n);
	r->p += n;
}

/* Writes a one-line reason into why (if given); always NUL-terminated. */
static inline void wire_vwhy(char *why, size_t whylen, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
static inline void wire_vwhy(char *why, size_t whylen, const char *fmt, va_list ap)
{
	if (why != NULL && whylen > 0)
		vsnprintf(why, whylen, fmt, ap);
}

static inline void wire_why(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline void wire_why(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	wire_vwhy(why, whylen, fmt, ap);
	va_end(ap);
}

#endif
