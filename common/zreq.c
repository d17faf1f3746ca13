/* One request/reply exchange over ZeroMQ REQ with a timeout (zreq.h). */
#include "zreq.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "text.h"
#include "timeutil.h"

/* An ipc endpoint whose socket file is missing or not ours to open: ZREQ_NOANSWER at once
 * (why empty for a missing file), else ZREQ_OK to go on. */
static int ipc_precheck(const char *endpoint, char *why, size_t whylen)
{
	const char *path;
	struct stat st;

	why[0] = '\0';
	if (strncmp(endpoint, "ipc://", 6) != 0)
		return ZREQ_OK;
	path = endpoint + 6;
	if (path[0] == '@' || path[0] == '\0')
		return ZREQ_OK; /* abstract namespace: nothing to check */
	if (stat(path, &st) != 0) {
		if (errno != ENOENT)
			text_fmt(why, whylen, "%s: %s", endpoint, strerror(errno));
		return ZREQ_NOANSWER;
	}
	if (!S_ISSOCK(st.st_mode)) {
		text_fmt(why, whylen, "%s: not a socket", endpoint);
		return ZREQ_NOANSWER;
	}
	if (access(path, W_OK) != 0) {
		text_fmt(why, whylen, "%s: %s (the socket is for its owner)", endpoint,
		         strerror(errno));
		return ZREQ_NOANSWER;
	}
	return ZREQ_OK;
}

/* Milliseconds left until deadline (CLOCK_MONOTONIC ns), 0 when past. */
static long ms_left(mono_ns deadline)
{
	mono_ns now = mono_now();

	if (!mono_before(now, deadline))
		return 0;
	return (long)((deadline - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC);
}

/* Waits for events on sock until deadline. Returns 1 ready, 0 timed out, -1 error. */
static int wait_ready(void *sock, short events, mono_ns deadline)
{
	zmq_pollitem_t item = {.socket = sock, .events = events};

	for (;;) {
		int rc = zmq_poll(&item, 1, ms_left(deadline));

		if (rc < 0 && zmq_errno() == EINTR)
			continue;
		if (rc < 0)
			return -1;
		if (item.revents & events)
			return 1;
		if (ms_left(deadline) == 0)
			return 0;
	}
}

/* The socket, connected. Returns ZREQ_OK or the status with why. */
static int open_req(void *ctx, const char *endpoint, int64_t maxmsg, void **sock, char *why,
                    size_t whylen)
{
	int linger = 0;

	*sock = zmq_socket(ctx, ZMQ_REQ);
	if (*sock == NULL || zmq_setsockopt(*sock, ZMQ_LINGER, &linger, sizeof(linger)) != 0 ||
	    zmq_setsockopt(*sock, ZMQ_MAXMSGSIZE, &maxmsg, sizeof(maxmsg)) != 0) {
		text_fmt(why, whylen, "zmq socket: %s", zmq_strerror(zmq_errno()));
		return ZREQ_FAILED;
	}
	if (zmq_connect(*sock, endpoint) != 0) {
		text_fmt(why, whylen, "cannot connect to %s: %s", endpoint,
		         zmq_strerror(zmq_errno()));
		return ZREQ_BADENDPOINT;
	}
	return ZREQ_OK;
}

/* Send, then one whole reply, both before deadline. */
static int exchange(void *sock, const void *req, size_t len, mono_ns deadline, zmq_msg_t *reply,
                    const char *endpoint, char *why, size_t whylen)
{
	int rc = wait_ready(sock, ZMQ_POLLOUT, deadline);

	if (rc == 1)
		rc = zmq_send(sock, req, len, ZMQ_DONTWAIT) == (int)len ? 1 : -1;
	if (rc == 1)
		rc = wait_ready(sock, ZMQ_POLLIN, deadline);
	if (rc == 0 || (rc < 0 && zmq_errno() == EAGAIN))
		return ZREQ_NOANSWER;
	if (rc < 0) {
		text_fmt(why, whylen, "%s: %s", endpoint, zmq_strerror(zmq_errno()));
		return ZREQ_FAILED;
	}
	zmq_msg_init(reply);
	if (zmq_msg_recv(reply, sock, ZMQ_DONTWAIT) < 0) {
		zmq_msg_close(reply);
		return ZREQ_NOANSWER;
	}
	if (zmq_msg_more(reply)) {
		zmq_msg_close(reply);
		text_fmt(why, whylen, "bad reply from %s: more than one frame", endpoint);
		return ZREQ_FAILED;
	}
	return ZREQ_OK;
}

int zreq_exchange(const char *endpoint, const void *req, size_t len, int timeout_ms, int64_t maxmsg,
                  zmq_msg_t *reply, char *why, size_t whylen)
{
	mono_ns deadline = mono_now() + (mono_ns)timeout_ms * NSEC_PER_MSEC;
	void *ctx, *sock = NULL;
	int rc = ipc_precheck(endpoint, why, whylen);

	if (rc != ZREQ_OK)
		return rc;
	ctx = zmq_ctx_new();
	if (ctx == NULL) {
		text_fmt(why, whylen, "zmq_ctx_new: %s", zmq_strerror(zmq_errno()));
		return ZREQ_FAILED;
	}
	rc = open_req(ctx, endpoint, maxmsg, &sock, why, whylen);
	if (rc == ZREQ_OK)
		rc = exchange(sock, req, len, deadline, reply, endpoint, why, whylen);
	if (sock != NULL)
		zmq_close(sock);
	zmq_ctx_term(ctx);
	return rc;
}
