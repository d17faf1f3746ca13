/*
 * One request/reply exchange over ZeroMQ REQ with a timeout: what a command-line tool
 * does to ask a daemon something. A fresh context and socket per call, nothing lingers
 * after it (ZMQ_LINGER 0, context terminated), so it can be used between fork() and exec.
 */
#ifndef VSCHED_ZREQ_H
#define VSCHED_ZREQ_H

#include <stddef.h>
#include <stdint.h>
#include <zmq.h>

/* CURVE client keys (Z85): this client's pair and the server's public key. */
struct zreq_curve {
	char pub[41], sec[41], server[41];
};

enum zreq_status {
	ZREQ_OK = 0,      /* *reply holds the answer (one frame): zmq_msg_close() it */
	ZREQ_NOANSWER,    /* no answer within the time, or no ipc socket there; why may say more */
	ZREQ_BADENDPOINT, /* the endpoint cannot be connected to (why) */
	ZREQ_FAILED,      /* a local error or an answer of more than one frame (why) */
	ZREQ_REFUSED,     /* the server refused the handshake: key or credentials (why) */
};

/*
 * Sends req (len bytes) to endpoint (as a CURVE client when curve is not NULL) and waits
 * for the reply, timeout_ms at most for the
 * whole exchange; replies longer than maxmsg bytes are refused by ZeroMQ. For an ipc
 * endpoint whose socket file is missing, not a socket or not writable, fails at once
 * (ZREQ_NOANSWER; why says which but for a missing file). Returns an enum zreq_status.
 */
int zreq_exchange(const char *endpoint, const struct zreq_curve *curve, const void *req, size_t len,
                  int timeout_ms, int64_t maxmsg, zmq_msg_t *reply, char *why, size_t whylen);

#endif
