/* One whole ZeroMQ message received without blocking (zmsg.h). */
#include "zmsg.h"

/* Receives and drops the rest of a message whose first frames were taken. */
static void drain(void *sock)
{
	int more = 1;

	while (more) {
		zmq_msg_t junk;

		zmq_msg_init(&junk);
		if (zmq_msg_recv(&junk, sock, ZMQ_DONTWAIT) < 0) {
			zmq_msg_close(&junk);
			return;
		}
		more = zmq_msg_more(&junk);
		zmq_msg_close(&junk);
	}
}

int zmsg_recv(void *sock, zmq_msg_t *part, int max)
{
	int n = 0;

	for (;;) {
		zmq_msg_init(&part[n]);
		if (zmq_msg_recv(&part[n], sock, ZMQ_DONTWAIT) < 0) {
			zmq_msg_close(&part[n]);
			return n > 0 ? n : ZMSG_NONE;
		}
		if (!zmq_msg_more(&part[n++]))
			return n;
		if (n == max) {
			drain(sock);
			zmsg_close(part, n);
			return ZMSG_TOO_MANY;
		}
	}
}

void zmsg_close(zmq_msg_t *part, int n)
{
	for (int i = 0; i < n; i++)
		zmq_msg_close(&part[i]);
}
