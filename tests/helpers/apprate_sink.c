/*
 * apprate_sink: stands in for vsched-agent's application side in tests. Binds a ZeroMQ
 * PULL socket and prints every libapprate message it receives, decoded with
 * common/proto_apprate.h, one line each on stdout:
 *
 *   apprate_sink ENDPOINT [SECONDS]
 *
 *   LISTEN ENDPOINT                                        (once bound)
 *   REGISTER handle=H job=J rank=R pid=P interval_ns=I reason=NAME
 *   REPORT handle=H rank=R seq=S units=U interval_ns=I final=0|1
 *   BYTES handle=H rank=R seq=S mem=M net=N
 *   BAD len=L why=REASON                                   (a frame that failed decoding)
 *
 * Bounded: exits 0 after SECONDS (default 30), or at once on SIGINT/SIGTERM. Exit 1 when
 * the endpoint cannot be bound, 2 on usage errors.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "proto_apprate.h"
#include "timeutil.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void print_msg(const struct aproto_msg *m)
{
	switch (m->type) {
	case APROTO_REGISTER:
		printf("REGISTER handle=%08" PRIx32 " job=%s rank=%" PRIu32 " pid=%" PRIu32
		       " interval_ns=%" PRIu64 " reason=%s\n",
		       m->u.reg.handle, m->u.reg.job, m->u.reg.rank, m->u.reg.pid,
		       m->u.reg.interval_ns, aproto_reason_name(m->u.reg.reason));
		break;
	case APROTO_REPORT:
		printf("REPORT handle=%08" PRIx32 " rank=%" PRIu32 " seq=%" PRIu32 " units=%" PRIu64
		       " interval_ns=%" PRIu64 " final=%d\n",
		       m->u.rep.handle, m->u.rep.rank, m->u.rep.seq, m->u.rep.units,
		       m->u.rep.interval_ns, (m->u.rep.flags & APROTO_F_FINAL) != 0);
		break;
	case APROTO_BYTES:
		printf("BYTES handle=%08" PRIx32 " rank=%" PRIu32 " seq=%" PRIu32 " mem=%" PRIu64
		       " net=%" PRIu64 "\n",
		       m->u.bytes.handle, m->u.bytes.rank, m->u.bytes.seq, m->u.bytes.mem_bytes,
		       m->u.bytes.net_bytes);
		break;
	default:
		printf("BAD type=%u\n", m->type);
	}
}

int main(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = on_signal};
	long seconds = 30;
	mono_ns end;
	void *ctx, *sock;
	int linger = 0;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: apprate_sink ENDPOINT [SECONDS]\n");
		return 2;
	}
	if (argc == 3) {
		char *e;

		seconds = strtol(argv[2], &e, 10);
		if (*e != '\0' || seconds < 1 || seconds > 3600) {
			fprintf(stderr, "apprate_sink: SECONDS must be 1..3600\n");
			return 2;
		}
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	ctx = zmq_ctx_new();
	sock = ctx != NULL ? zmq_socket(ctx, ZMQ_PULL) : NULL;
	if (sock == NULL || zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof(linger)) != 0 ||
	    zmq_bind(sock, argv[1]) != 0) {
		fprintf(stderr, "apprate_sink: %s: %s\n", argv[1], zmq_strerror(zmq_errno()));
		return 1;
	}
	printf("LISTEN %s\n", argv[1]);
	fflush(stdout);

	end = mono_now() + (uint64_t)seconds * NSEC_PER_SEC;
	while (!stop && mono_before(mono_now(), end)) {
		zmq_pollitem_t it = {.socket = sock, .events = ZMQ_POLLIN};
		uint8_t buf[256];
		struct aproto_msg m;
		char why[128];
		int n;

		if (zmq_poll(&it, 1, 100) <= 0 || !(it.revents & ZMQ_POLLIN))
			continue;
		n = zmq_recv(sock, buf, sizeof(buf), ZMQ_DONTWAIT);
		if (n < 0)
			continue;
		if (n > (int)sizeof(buf) ||
		    aproto_decode(buf, (size_t)n, &m, why, sizeof(why)) != 0)
			printf("BAD len=%d why=%s\n", n, n > (int)sizeof(buf) ? "too long" : why);
		else
			print_msg(&m);
		fflush(stdout);
	}
	zmq_close(sock);
	zmq_ctx_term(ctx);
	return 0;
}
