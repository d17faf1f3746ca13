/* One request/reply exchange over ZeroMQ REQ with a timeout (zreq.h). */
#include "zreq.h"

#include <errno.h>
#include <stdbool.h>
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

#define MON_ENDPOINT "inproc://zreq-monitor" /* one context per exchange */

/* Connections the server closed during the handshake that make a refusal (see refused). */
#define DROPS_REFUSED 2

/*
 * A handshake refusal reported by the monitor? A refusal is a ZAP denial (FAILED_AUTH), a
 * protocol error (FAILED_PROTOCOL: a client without CURVE that read the CURVE server's
 * greeting), or DROPS_REFUSED connections closed by the server during the handshake
 * (FAILED_NO_DETAIL, counted in *drops): libzmq 4.3's server closes at a security mechanism
 * mismatch as soon as it has read the client's greeting, and when it read it before it had
 * written its own, the client sees only the close. One such close can also be a server that
 * stopped; two, on connections ZMQ_RECONNECT_IVL (100 ms) apart, are a server that refuses.
 */
static bool refused(void *mon, int *drops)
{
	bool yes = false;

	for (;;) {
		zmq_msg_t ev;
		uint16_t event = 0;
		int more;

		zmq_msg_init(&ev);
		if (zmq_msg_recv(&ev, mon, ZMQ_DONTWAIT) < 0) {
			zmq_msg_close(&ev);
			return yes;
		}
		if (zmq_msg_size(&ev) >= 6)
			memcpy(&event, zmq_msg_data(&ev), sizeof(event));
		more = zmq_msg_more(&ev);
		zmq_msg_close(&ev);
		if (more) { /* the endpoint frame */
			zmq_msg_init(&ev);
			zmq_msg_recv(&ev, mon, ZMQ_DONTWAIT);
			zmq_msg_close(&ev);
		}
		if (event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)
			(*drops)++;
		yes |= event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH ||
		       event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL || *drops >= DROPS_REFUSED;
	}
}

/* Waits for events on sock until deadline. Returns 1 ready, 0 timed out, -1 error, -2
 * refused at the handshake (mon; *drops: see refused). */
static int wait_ready(void *sock, void *mon, short events, mono_ns deadline, int *drops)
{
	zmq_pollitem_t item[2] = {{.socket = sock, .events = events},
	                          {.socket = mon, .events = ZMQ_POLLIN}};

	for (;;) {
		int rc = zmq_poll(item, mon ? 2 : 1, ms_left(deadline));

		if (rc < 0 && zmq_errno() == EINTR)
			continue;
		if (rc < 0)
			return -1;
		if (item[0].revents & events)
			return 1;
		if (mon && (item[1].revents & ZMQ_POLLIN) && refused(mon, drops))
			return -2;
		if (ms_left(deadline) == 0)
			return 0;
	}
}

/* The socket (with its handshake monitor), connected. Returns ZREQ_OK or the status with
 * why. */
static int open_req(void *ctx, const char *endpoint, const struct zreq_curve *curve, int64_t maxmsg,
                    void **sock, void **mon, char *why, size_t whylen)
{
	int linger = 0;

	*sock = zmq_socket(ctx, ZMQ_REQ);
	if (*sock == NULL || zmq_setsockopt(*sock, ZMQ_LINGER, &linger, sizeof(linger)) != 0 ||
	    zmq_setsockopt(*sock, ZMQ_MAXMSGSIZE, &maxmsg, sizeof(maxmsg)) != 0 ||
	    (curve != NULL && (zmq_setsockopt(*sock, ZMQ_CURVE_SERVERKEY, curve->server, 40) != 0 ||
	                       zmq_setsockopt(*sock, ZMQ_CURVE_PUBLICKEY, curve->pub, 40) != 0 ||
	                       zmq_setsockopt(*sock, ZMQ_CURVE_SECRETKEY, curve->sec, 40) != 0)) ||
	    zmq_socket_monitor(*sock, MON_ENDPOINT,
	                       ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
	                           ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
	                           ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) != 0 ||
	    (*mon = zmq_socket(ctx, ZMQ_PAIR)) == NULL ||
	    zmq_setsockopt(*mon, ZMQ_LINGER, &linger, sizeof(linger)) != 0 ||
	    zmq_connect(*mon, MON_ENDPOINT) != 0) {
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
static int exchange(void *sock, void *mon, const void *req, size_t len, mono_ns deadline,
                    zmq_msg_t *reply, const char *endpoint, char *why, size_t whylen)
{
	int drops = 0, rc = wait_ready(sock, mon, ZMQ_POLLOUT, deadline, &drops);

	if (rc == 1)
		rc = zmq_send(sock, req, len, ZMQ_DONTWAIT) == (int)len ? 1 : -1;
	if (rc == 1)
		rc = wait_ready(sock, mon, ZMQ_POLLIN, deadline, &drops);
	if (rc == -2) {
		text_fmt(why, whylen,
		         "%s refused the connection at the handshake (key not allowed, "
		         "or not an allowed local user)",
		         endpoint);
		return ZREQ_REFUSED;
	}
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

int zreq_exchange(const char *endpoint, const struct zreq_curve *curve, const void *req, size_t len,
                  int timeout_ms, int64_t maxmsg, zmq_msg_t *reply, char *why, size_t whylen)
{
	mono_ns deadline = mono_now() + (mono_ns)timeout_ms * NSEC_PER_MSEC;
	void *ctx, *sock = NULL, *mon = NULL;
	int rc = ipc_precheck(endpoint, why, whylen);

	if (rc != ZREQ_OK)
		return rc;
	ctx = zmq_ctx_new();
	if (ctx == NULL) {
		text_fmt(why, whylen, "zmq_ctx_new: %s", zmq_strerror(zmq_errno()));
		return ZREQ_FAILED;
	}
	rc = open_req(ctx, endpoint, curve, maxmsg, &sock, &mon, why, whylen);
	if (rc == ZREQ_OK)
		rc = exchange(sock, mon, req, len, deadline, reply, endpoint, why, whylen);
	if (sock != NULL) {
		zmq_socket_monitor(sock, NULL, 0);
		zmq_close(sock);
	}
	if (mon != NULL)
		zmq_close(mon);
	zmq_ctx_term(ctx);
	return rc;
}
