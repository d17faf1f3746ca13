/*
 * One request/reply exchange with the local vsched over ZeroMQ REQ. Bounded in time: the
 * whole exchange (connect, send, receive) takes at most CTL_TIMEOUT_MS, after which the
 * user is told that vsched did not answer. Nothing lingers after the call (ZMQ_LINGER 0,
 * context terminated), so it can be used between fork() and exec-style code paths.
 */
#include "vschedctl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "timeutil.h"

/* Largest reply: header, fixed part, message, VSP_MAX_TASKS records. */
#define CTL_MAX_REPLY (4 + 10 + VSP_MSG_MAX + (size_t)VSP_MAX_TASKS * VSP_STAT_WIRE_MAX)

static int no_answer(const char *endpoint)
{
	fprintf(stderr, "vschedctl: no answer from %s (is vsched running?)\n", endpoint);
	return CTL_EXIT_NOANSWER;
}

/*
 * For an ipc endpoint whose socket file is missing or not ours to open, fail at once with
 * the reason instead of waiting for the timeout. Returns 0 to go on, or an exit status.
 */
static int ipc_precheck(const char *endpoint)
{
	const char *path;
	struct stat st;

	if (strncmp(endpoint, "ipc://", 6) != 0)
		return 0;
	path = endpoint + 6;
	if (path[0] == '@' || path[0] == '\0')
		return 0; /* abstract namespace: nothing to check */
	if (stat(path, &st) != 0) {
		if (errno == ENOENT)
			return no_answer(endpoint);
		fprintf(stderr, "vschedctl: %s: %s\n", endpoint, strerror(errno));
		return CTL_EXIT_NOANSWER;
	}
	if (!S_ISSOCK(st.st_mode)) {
		fprintf(stderr, "vschedctl: %s: not a socket\n", endpoint);
		return CTL_EXIT_NOANSWER;
	}
	if (access(path, W_OK) != 0) {
		fprintf(stderr, "vschedctl: %s: %s (vsched's socket is for root)\n", endpoint,
		        strerror(errno));
		return CTL_EXIT_NOANSWER;
	}
	return 0;
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
static int wait_for(void *sock, short events, mono_ns deadline)
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

int ctl_request(const char *endpoint, const struct vsp_request *req, struct vsp_reply *rep)
{
	mono_ns deadline = mono_now() + (mono_ns)CTL_TIMEOUT_MS * NSEC_PER_MSEC;
	int timeout = CTL_TIMEOUT_MS, linger = 0, rc, ret = CTL_EXIT_FAIL;
	int64_t maxmsg = (int64_t)CTL_MAX_REPLY;
	uint8_t buf[VSP_MAX_FRAME];
	char why[256] = "";
	void *ctx, *sock = NULL;
	zmq_msg_t msg;
	int len;

	memset(rep, 0, sizeof(*rep));
	rc = ipc_precheck(endpoint);
	if (rc != 0)
		return rc;
	len = vsp_encode_request(req, buf, sizeof(buf));
	if (len < 0) {
		fprintf(stderr, "vschedctl: cannot encode the request: %s\n", strerror(-len));
		return CTL_EXIT_FAIL;
	}

	ctx = zmq_ctx_new();
	if (ctx == NULL) {
		fprintf(stderr, "vschedctl: zmq_ctx_new: %s\n", zmq_strerror(zmq_errno()));
		return CTL_EXIT_FAIL;
	}
	sock = zmq_socket(ctx, ZMQ_REQ);
	if (sock == NULL || zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof(linger)) != 0 ||
	    zmq_setsockopt(sock, ZMQ_RCVTIMEO, &timeout, sizeof(timeout)) != 0 ||
	    zmq_setsockopt(sock, ZMQ_SNDTIMEO, &timeout, sizeof(timeout)) != 0 ||
	    zmq_setsockopt(sock, ZMQ_MAXMSGSIZE, &maxmsg, sizeof(maxmsg)) != 0) {
		fprintf(stderr, "vschedctl: zmq socket: %s\n", zmq_strerror(zmq_errno()));
		goto out;
	}
	if (zmq_connect(sock, endpoint) != 0) {
		fprintf(stderr, "vschedctl: cannot connect to %s: %s\n", endpoint,
		        zmq_strerror(zmq_errno()));
		ret = zmq_errno() == EINVAL || zmq_errno() == EPROTONOSUPPORT ? CTL_EXIT_USAGE
		                                                              : CTL_EXIT_FAIL;
		goto out;
	}

	/* one deadline for the whole exchange; the socket timeouts are a second bound */
	rc = wait_for(sock, ZMQ_POLLOUT, deadline);
	if (rc == 1)
		rc = zmq_send(sock, buf, (size_t)len, ZMQ_DONTWAIT) == len ? 1 : -1;
	if (rc == 1)
		rc = wait_for(sock, ZMQ_POLLIN, deadline);
	if (rc == 0 || (rc < 0 && zmq_errno() == EAGAIN)) {
		ret = no_answer(endpoint);
		goto out;
	}
	if (rc < 0) {
		fprintf(stderr, "vschedctl: %s: %s\n", endpoint, zmq_strerror(zmq_errno()));
		goto out;
	}

	zmq_msg_init(&msg);
	if (zmq_msg_recv(&msg, sock, ZMQ_DONTWAIT) < 0) {
		zmq_msg_close(&msg);
		ret = no_answer(endpoint);
		goto out;
	}
	if (zmq_msg_more(&msg)) {
		fprintf(stderr, "vschedctl: bad reply from %s: more than one frame\n", endpoint);
		zmq_msg_close(&msg);
		goto out;
	}
	rc = vsp_decode_reply(zmq_msg_data(&msg), zmq_msg_size(&msg), rep, why, sizeof(why));
	zmq_msg_close(&msg);
	if (rc != 0) {
		fprintf(stderr, "vschedctl: bad reply from %s: %s\n", endpoint, why);
		memset(rep, 0, sizeof(*rep));
		goto out;
	}
	ret = 0;
out:
	if (sock != NULL)
		zmq_close(sock);
	zmq_ctx_term(ctx);
	return ret;
}
