/*
 * The wire format between libapprate (inside applications) and vsched-agent, defined once
 * here for both. Transport: the application's ZeroMQ PUSH socket connects to the agent's
 * PULL socket (ipc); one message per frame, never multipart.
 *
 * Little-endian, fixed layout, no padding, encoded field by field (never a struct memcpy).
 * Every frame starts with a 4-byte header:
 *   u8 magic 'A', u8 version APROTO_VERSION, u8 type, u8 flags
 * flags is 0 except in REPORT, where APROTO_F_FINAL marks the last report of a handle.
 *
 *   REGISTER  u32 handle, u32 rank, u32 pid, u64 interval_ns, u8 reason, u8 joblen,
 *             joblen bytes of job name (no NUL)                  (26 + joblen, <= 89 bytes)
 *   REPORT    u32 handle, u32 rank, u32 seq, u64 units, u64 interval_ns      (32 bytes)
 *   BYTES     u32 handle, u32 rank, u32 seq, u64 mem_bytes, u64 net_bytes    (32 bytes)
 *
 * Meaning (the agent relies on this):
 * - handle: 32-bit random, non-zero, chosen by the library per open and again in a forked
 *   child. REGISTER binds it to (job, rank, pid); REPORT and BYTES carry only the handle.
 *   A REGISTER for a known handle replaces the binding (re-registration is idempotent).
 * - seq: REPORT sequence number per handle, starting at 0, +1 per report the library tried
 *   to send: a gap means attempts that could not be sent (no connection, queue full).
 * - units / interval_ns: units of progress counted in exactly the interval_ns nanoseconds
 *   (CLOCK_MONOTONIC) that end now and start at the previous REPORT that was *sent* (or at
 *   the open, or the fork). rate = units / interval_ns is right for every report, gap or
 *   not: the units of failed attempts are carried into the next report, whose interval is
 *   longer. After 10 report intervals without a successful send the library discards the
 *   old units and starts a new interval, so a report never averages over a long outage.
 *   Summing units over the REPORTs received gives the handle's total progress, less what
 *   was discarded that way.
 * - BYTES with sequence s: bytes the application said it moved to memory and network in the
 *   same interval as REPORT s; sent right after REPORT s and only when non-zero (also after
 *   a FINAL REPORT).
 * - interval_ns in REGISTER: the configured report interval, so that the agent can call a
 *   handle stale after a few intervals without reports. Reports are driven by the
 *   application's progress calls: no calls, no reports (the application is stalled, or
 *   between phases): the library runs no reporting thread of its own.
 * - REGISTER is sent before the first REPORT of a handle, again after a (re)connection,
 *   after a failed send, and every 10 s. It is idempotent.
 * - FINAL: apprate_close's last REPORT; the handle is not used again.
 * Decoders check magic, version, type, flags, exact length and field ranges; a frame that
 * fails any check is refused with a one-line reason.
 */
#ifndef VSCHED_PROTO_APPRATE_H
#define VSCHED_PROTO_APPRATE_H

#include <stddef.h>
#include <stdint.h>

#define APROTO_MAGIC   'A'
#define APROTO_VERSION 1
#define APROTO_JOB_MAX 63 /* bytes of job name; graphic ASCII only (0x21..0x7e) */

#define APROTO_HDR_SIZE      4
#define APROTO_REGISTER_BASE 26 /* REGISTER without the job name */
#define APROTO_REGISTER_MAX  (APROTO_REGISTER_BASE + APROTO_JOB_MAX)
#define APROTO_REPORT_SIZE   32
#define APROTO_BYTES_SIZE    32
#define APROTO_MAX_FRAME     APROTO_REGISTER_MAX /* largest valid frame */

#define APROTO_F_FINAL 0x01 /* REPORT: last report of this handle (apprate_close) */

enum aproto_type {
	APROTO_REGISTER = 1,
	APROTO_REPORT = 2,
	APROTO_BYTES = 3,
};

/* Why a REGISTER was sent. Informational: the agent treats all of them alike. */
enum aproto_reason {
	APROTO_REG_OPEN = 0,      /* first message after apprate_open */
	APROTO_REG_FORK = 1,      /* first message of a forked child (new handle, new pid) */
	APROTO_REG_RECONNECT = 2, /* the connection to the agent was (re-)established */
	APROTO_REG_REFRESH = 3,   /* periodic refresh */
	APROTO_REG_RETRY = 4,     /* an earlier REGISTER could not be sent */
	APROTO_REG_REASON_MAX = APROTO_REG_RETRY,
};

struct aproto_register {
	uint32_t handle; /* != 0 */
	uint32_t rank;   /* <= INT32_MAX */
	uint32_t pid;    /* > 0 */
	uint64_t interval_ns;
	uint8_t reason;               /* enum aproto_reason */
	char job[APROTO_JOB_MAX + 1]; /* NUL-terminated, 1..APROTO_JOB_MAX graphic chars */
};

struct aproto_report {
	uint8_t flags;   /* APROTO_F_FINAL or 0 */
	uint32_t handle; /* != 0 */
	uint32_t rank;
	uint32_t seq;
	uint64_t units;
	uint64_t interval_ns; /* > 0 */
};

struct aproto_bytes {
	uint32_t handle; /* != 0 */
	uint32_t rank;
	uint32_t seq;
	uint64_t mem_bytes;
	uint64_t net_bytes;
};

/* A decoded frame of any type: type says which member is valid. */
struct aproto_msg {
	uint8_t type; /* enum aproto_type */
	union {
		struct aproto_register reg;
		struct aproto_report rep;
		struct aproto_bytes bytes;
	} u;
};

/*
 * Encoders write one frame into buf and return its length, -ENOBUFS if cap is too small,
 * or -EINVAL if a field is out of range (the same checks the decoder makes). They do not
 * allocate and cannot block.
 */
int aproto_encode_register(const struct aproto_register *m, uint8_t *buf, size_t cap);
int aproto_encode_report(const struct aproto_report *m, uint8_t *buf, size_t cap);
int aproto_encode_bytes(const struct aproto_bytes *m, uint8_t *buf, size_t cap);

/*
 * Decodes and validates one frame of any type. Returns 0, or -EBADMSG (bad magic, type,
 * flags or length), -EPROTO (other version) or -EINVAL (field out of range), with a
 * one-line reason in why (may be NULL). On error *m is unspecified; nothing is allocated.
 */
int aproto_decode(const uint8_t *buf, size_t len, struct aproto_msg *m, char *why, size_t whylen);

/* 0 if name is a valid job name (1..APROTO_JOB_MAX graphic ASCII chars), else -EINVAL. */
int aproto_check_job(const char *name);

const char *aproto_type_name(uint8_t type);
const char *aproto_reason_name(uint8_t reason);

#endif
