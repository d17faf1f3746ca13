/*
 * The plugin's messages: a REGISTER to the node's agent (common/proto_apprate.h) and a
 * SET_RATE to the controller (common/proto_admin.h). Each call makes its own ZeroMQ
 * context and ends it before returning, so that no ZeroMQ thread outlives the call inside
 * slurmstepd. Bounded in time; nothing here logs (the caller reports one line).
 */
#include "vspank.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <zmq.h>

#include "proto_admin.h"

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

int vspank_register(const char *endpoint, const char *job, uint32_t rank, pid_t pid, int timeout_ms,
                    char *why, size_t whylen)
{
	struct aproto_register m = {.rank = rank,
	                            .pid = (uint32_t)pid,
	                            .interval_ns = 1000000000ull,
	                            .reason = APROTO_REG_OPEN};
	uint8_t buf[APROTO_REGISTER_MAX];
	int len, one = 1, linger = timeout_ms, rc = -1;
	void *ctx = zmq_ctx_new(), *sock = NULL;

	if (getrandom(&m.handle, sizeof(m.handle), GRND_NONBLOCK) != sizeof(m.handle) ||
	    m.handle == 0)
		m.handle = (uint32_t)pid * 2654435761u | 1;
	snprintf(m.job, sizeof(m.job), "%s", job);
	len = aproto_encode_register(&m, buf, sizeof(buf));
	if (ctx == NULL || len < 0) {
		snprintf(why, whylen, "cannot build the registration");
		goto out;
	}
	sock = zmq_socket(ctx, ZMQ_PUSH);
	if (sock == NULL || zmq_setsockopt(sock, ZMQ_IMMEDIATE, &one, sizeof(one)) != 0 ||
	    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof(linger)) != 0 ||
	    zmq_setsockopt(sock, ZMQ_SNDTIMEO, &timeout_ms, sizeof(timeout_ms)) != 0 ||
	    zmq_connect(sock, endpoint) != 0) {
		snprintf(why, whylen, "agent %s: %s", endpoint, zmq_strerror(zmq_errno()));
		goto out;
	}
	/* ZMQ_IMMEDIATE: the send waits (SNDTIMEO) for a connected agent, never queues. */
	if (zmq_send(sock, buf, (size_t)len, 0) != len) {
		snprintf(why, whylen, "agent %s: not reachable in %d ms (is vsched-agent running?)",
		         endpoint, timeout_ms);
		goto out;
	}
	rc = 0;
out:
	if (sock != NULL)
		zmq_close(sock); /* lingers until delivered, timeout_ms at most */
	if (ctx != NULL)
		zmq_ctx_term(ctx);
	return rc;
}

/* One SET_RATE exchange. Returns 0 with the reply's status in *status, or -1 (transport). */
static int set_rate_once(void *ctx, const char *endpoint, const uint8_t *req, int len, int wait_ms,
                         int *status, char *why, size_t whylen)
{
	void *sock = zmq_socket(ctx, ZMQ_REQ);
	int zero = 0, rc = -1;
	zmq_pollitem_t it;
	zmq_msg_t msg;
	struct padm_reply rep;

	if (sock == NULL || zmq_setsockopt(sock, ZMQ_LINGER, &zero, sizeof(zero)) != 0 ||
	    zmq_connect(sock, endpoint) != 0 || zmq_send(sock, req, (size_t)len, 0) != len) {
		snprintf(why, whylen, "controller %s: %s", endpoint, zmq_strerror(zmq_errno()));
		goto out;
	}
	it = (zmq_pollitem_t){.socket = sock, .events = ZMQ_POLLIN};
	if (zmq_poll(&it, 1, wait_ms) <= 0) {
		snprintf(why, whylen, "controller %s: no answer (is vsched-controller running?)",
		         endpoint);
		goto out;
	}
	zmq_msg_init(&msg);
	if (zmq_msg_recv(&msg, sock, ZMQ_DONTWAIT) >= 0 &&
	    padm_decode_reply(zmq_msg_data(&msg), zmq_msg_size(&msg), &rep, why, whylen) == 0) {
		*status = rep.status;
		snprintf(why, whylen, "%s", rep.reason);
		padm_reply_release(&rep);
		rc = 0;
	}
	zmq_msg_close(&msg);
out:
	if (sock != NULL)
		zmq_close(sock);
	return rc;
}

int vspank_set_rate(const char *endpoint, const char *job, double pct, int timeout_ms, char *why,
                    size_t whylen)
{
	struct padm_request q = {.type = PADM_SET_RATE,
	                         .target_milli = (int32_t)lround(pct * 1000.0)};
	uint8_t buf[PADM_MAX_REQUEST];
	long end = now_ms() + timeout_ms;
	void *ctx = zmq_ctx_new();
	int len, status = -1, rc = -1;

	snprintf(q.job, sizeof(q.job), "%s", job);
	len = padm_encode_request(&q, buf, sizeof(buf));
	if (ctx == NULL || len < 0) {
		snprintf(why, whylen, "cannot build the request");
		goto out;
	}
	for (;;) {
		long left = end - now_ms();
		if (left <= 0)
			break;
		if (set_rate_once(ctx, endpoint, buf, len, (int)left, &status, why, whylen) != 0)
			break;
		if (status == 0) {
			rc = 0;
			break;
		}
		/* The agent's announcement of the job may still be on its way; or another
		 * change of the job is being applied. Anything else is final. */
		if (status != -ENOENT && status != -EBUSY)
			break;
		sleep_ms(100);
	}
out:
	if (ctx != NULL)
		zmq_ctx_term(ctx);
	return rc;
}
