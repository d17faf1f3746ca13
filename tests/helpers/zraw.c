/*
 * zraw: sends raw bytes to a ZeroMQ endpoint as a REQ and prints the reply, for tests that
 * feed vsched garbage.
 *
 *   zraw [-t MS] ENDPOINT FRAME [FRAME...]
 *
 * Each FRAME is hex ("5601040000", blanks and ':' ignored, "" for an empty frame),
 * optionally "HEX*N" for the pattern repeated N times (large frames without a huge argv).
 * Several FRAMEs go out as one multi-part message. The reply is decoded with
 * vsp_decode_reply and printed as "status N: MESSAGE (T tasks)" on stdout.
 * Exit: 0 a reply was decoded, 1 undecodable reply (printed as "bad reply: REASON"),
 * 2 usage, 3 no reply within the timeout (default 3000 ms; printed as "no reply").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "proto_vsched.h"

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Parses a FRAME argument into a new buffer (*out, caller frees). Returns 0 or -1. */
static int parse_frame(const char *arg, unsigned char **out, size_t *len)
{
	const char *star = strrchr(arg, '*');
	size_t hexlen = star != NULL ? (size_t)(star - arg) : strlen(arg);
	unsigned long long reps = 1;
	unsigned char pat[4096];
	size_t plen = 0, i;
	int hi = -1;

	if (star != NULL) {
		char *end;

		errno = 0;
		reps = strtoull(star + 1, &end, 10);
		if (errno != 0 || *end != '\0' || star[1] == '\0' || reps > 64ULL << 20) {
			fprintf(stderr, "zraw: %s: bad repeat count\n", arg);
			return -1;
		}
	}
	for (i = 0; i < hexlen; i++) {
		int v = hexval(arg[i]);

		if (arg[i] == ' ' || arg[i] == ':')
			continue;
		if (v < 0 || plen >= sizeof(pat)) {
			fprintf(stderr, "zraw: %s: not hex (or longer than %zu bytes)\n", arg,
			        sizeof(pat));
			return -1;
		}
		if (hi < 0) {
			hi = v;
		} else {
			pat[plen++] = (unsigned char)(hi << 4 | v);
			hi = -1;
		}
	}
	if (hi >= 0) {
		fprintf(stderr, "zraw: %s: odd number of hex digits\n", arg);
		return -1;
	}
	if (plen > 0 && reps > (64ULL << 20) / plen) {
		fprintf(stderr, "zraw: %s: frame too large\n", arg);
		return -1;
	}
	*len = plen * (size_t)reps;
	*out = malloc(*len > 0 ? *len : 1);
	if (*out == NULL) {
		fprintf(stderr, "zraw: out of memory\n");
		return -1;
	}
	for (i = 0; i < *len; i++)
		(*out)[i] = pat[i % plen];
	return 0;
}

int main(int argc, char **argv)
{
	int timeout = 3000, linger = 0, i = 1, ret = 3;
	struct vsp_reply rep = {0};
	char why[256] = "";
	void *ctx, *sock;
	zmq_msg_t msg;

	if (argc > 2 && strcmp(argv[1], "-t") == 0) {
		timeout = atoi(argv[2]);
		i = 3;
	}
	if (argc - i < 2 || timeout <= 0) {
		fprintf(stderr, "usage: zraw [-t MS] ENDPOINT FRAME [FRAME...]\n");
		return 2;
	}
	ctx = zmq_ctx_new();
	sock = zmq_socket(ctx, ZMQ_REQ);
	zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof(linger));
	zmq_setsockopt(sock, ZMQ_RCVTIMEO, &timeout, sizeof(timeout));
	zmq_setsockopt(sock, ZMQ_SNDTIMEO, &timeout, sizeof(timeout));
	if (zmq_connect(sock, argv[i]) != 0) {
		fprintf(stderr, "zraw: connect %s: %s\n", argv[i], zmq_strerror(zmq_errno()));
		ret = 2;
		goto out;
	}
	for (int f = i + 1; f < argc; f++) {
		unsigned char *buf;
		size_t len;

		if (parse_frame(argv[f], &buf, &len) != 0) {
			ret = 2;
			goto out;
		}
		if (zmq_send(sock, buf, len, f + 1 < argc ? ZMQ_SNDMORE : 0) < 0) {
			free(buf);
			printf("no reply (send: %s)\n", zmq_strerror(zmq_errno()));
			goto out;
		}
		free(buf);
	}
	zmq_msg_init(&msg);
	if (zmq_msg_recv(&msg, sock, 0) < 0) {
		zmq_msg_close(&msg);
		printf("no reply\n");
		goto out;
	}
	if (vsp_decode_reply(zmq_msg_data(&msg), zmq_msg_size(&msg), &rep, why, sizeof(why)) != 0) {
		printf("bad reply: %s\n", why);
		ret = 1;
	} else {
		printf("status %d: %s (%u tasks)\n", (int)rep.status, rep.msg, rep.ntasks);
		free(rep.tasks);
		ret = 0;
	}
	zmq_msg_close(&msg);
out:
	zmq_close(sock);
	zmq_ctx_term(ctx);
	return ret;
}
