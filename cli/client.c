/*
 * One request/reply exchange with the local vsched (common/zreq.h). Bounded in time: the
 * whole exchange (connect, send, receive) takes at most CLI_TIMEOUT_MS, after which the
 * user is told that vsched did not answer.
 */
#include "vschedctl.h"

#include <stdio.h>
#include <string.h>

#include "zreq.h"

/* Largest reply: header, fixed part, message, VSP_MAX_TASKS records. */
#define CLIENT_MAX_REPLY (4 + 10 + VSP_MSG_MAX + (size_t)VSP_MAX_TASKS * VSP_STAT_WIRE_MAX)

int client_request(const char *endpoint, const struct vsp_request *req, struct vsp_reply *rep)
{
	uint8_t buf[VSP_MAX_FRAME];
	char why[256] = "";
	zmq_msg_t msg;
	int len, rc;

	memset(rep, 0, sizeof(*rep));
	len = vsp_encode_request(req, buf, sizeof(buf));
	if (len < 0) {
		fprintf(stderr, "vschedctl: cannot encode the request: %s\n", strerror(-len));
		return CLI_EXIT_FAIL;
	}
	rc = zreq_exchange(endpoint, NULL, buf, (size_t)len, CLI_TIMEOUT_MS,
	                   (int64_t)CLIENT_MAX_REPLY, &msg, why, sizeof(why));
	if (rc == ZREQ_NOANSWER && why[0] == '\0') {
		fprintf(stderr, "vschedctl: no answer from %s (is vsched running?)\n", endpoint);
		return CLI_EXIT_NOANSWER;
	}
	if (rc != ZREQ_OK) {
		fprintf(stderr, "vschedctl: %s\n", why);
		return rc == ZREQ_NOANSWER      ? CLI_EXIT_NOANSWER
		       : rc == ZREQ_BADENDPOINT ? CLI_EXIT_USAGE
		                                : CLI_EXIT_FAIL;
	}
	rc = vsp_decode_reply(zmq_msg_data(&msg), zmq_msg_size(&msg), rep, why, sizeof(why));
	zmq_msg_close(&msg);
	if (rc != 0) {
		fprintf(stderr, "vschedctl: bad reply from %s: %s\n", endpoint, why);
		memset(rep, 0, sizeof(*rep));
		return CLI_EXIT_FAIL;
	}
	return 0;
}
