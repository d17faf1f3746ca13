/*
 * Little-endian field codec shared by every wire protocol (proto_vsched, proto_ctl,
 * proto_admin, proto_apprate), and the one-line refusal reason they all produce.
 *
 * Cursors are bounds-checked: a writer never stores past cap but keeps counting len, so
 * an encoder can compare len with cap at the end (or size a frame with cap 0); a reader
 * never reads past len, returns 0 instead and sets short_read, so a decoder checks it once
 * after reading a record. Integers are encoded byte by byte, so the layout never depends
 * on the host's struct padding or endianness. Header-only (static inline) so libapprate
 * can use it without linking vsched_common.
 */
#ifndef VSCHED_WIRE_H
#define VSCHED_WIRE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct wire_w {
	uint8_t *p;
	size_t cap, len;
};

struct wire_r {
	const uint8_t *p;
	size_t len, off;
	bool short_read;
};

static inline void wire_put_u8(struct wire_w *w, uint8_t v)
{
	if (w->len < w->cap)
		w->p[w->len] = v;
	w->len++;
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
	for (size_t i = 0; i < n; i++)
		wire_put_u8(w, ((const uint8_t *)src)[i]);
}

static inline uint8_t wire_get_u8(struct wire_r *r)
{
	if (r->off >= r->len) {
		r->short_read = true;
		return 0;
	}
	return r->p[r->off++];
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

/* Copies n bytes out, or sets short_read (and copies nothing) if fewer remain. */
static inline void wire_get_bytes(struct wire_r *r, void *dst, size_t n)
{
	if (r->len - r->off < n || r->off > r->len) {
		r->short_read = true;
		return;
	}
	memcpy(dst, r->p + r->off, n);
	r->off += n;
}

#endif
