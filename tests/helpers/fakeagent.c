/*
 * fakeagent: a scripted agent for the security and abuse tests (tests/integration/
 * security_*.sh, bench/flood.sh). It speaks the agents' protocol (common/proto_ctl.h) to a
 * real vsched-controller, optionally as a CURVE client.
 *
 *   fakeagent [-k SECRET_CERT -s SERVER_CERT] ENDPOINT NODE MODE [ARGS]
 *     hello                 register once; prints REGISTERED, REFUSED STATUS REASON,
 *                           HANDSHAKE_REFUSED or NOANSWER (exit 0, 1, 2, 3)
 *     flood SECONDS         register, announce job "flood" rank 0, then send RATE frames
 *                           as fast as the socket takes them; prints "sent=N seconds=S"
 *     accept SECONDS JOB [REPORT_S]
 *                           register, announce job JOB rank 0 (this pid), heartbeat every
 *                           100 ms and answer every CONSTRAINT at once with CONSTRAINT_ACK
 *                           status 0 (an agent that accepts everything); prints "acked=N".
 *                           With REPORT_S, the rank also reports 10 units per 100 ms for
 *                           its first REPORT_S seconds, then falls silent (heartbeats go on)
 *     ping SECONDS MS       register, then a heartbeat every MS ms: prints the round trips
 *                           of the controller's echoes ("n= lost= p50_us= p99_us= max_us=")
 *     big BYTES             register, send one frame of BYTES; prints DISCONNECTED when
 *                           the controller cut the connection within 3 s, else KEPT
 *   fakeagent loris HOST PORT SECONDS
 *       a raw TCP connection that sends half a ZeroMQ greeting and nothing more; prints
 *       "CLOSED ms=T" when the controller closes it within SECONDS, else "OPEN"
 * Bounded: every mode ends by itself; flood and accept end early at SIGTERM (and still
 * print their figures).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zmq.h>

#include "curve.h"
#include "proto_ctl.h"
#include "timeutil.h"

#define MON "inproc://fakeagent-monitor"

static void *sock, *mon;
static volatile sig_atomic_t stop; /* SIGTERM: flood and accept end */

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static int send_msg(const struct pctl_msg *m, int flags)
{
	uint8_t buf[1024];
	int n = pctl_encode(m, buf, sizeof(buf));

	return n < 0 ? -1 : zmq_send(sock, buf, (size_t)n, flags);
}

/* The monitor's events so far: 1 handshake refused, 2 disconnected, 0 none. Refused: a ZAP
 * denial, a protocol error, or a second connection the server closed during the handshake
 * (the rule of common/zreq.c: a CURVE server may close on a client without a key before
 * it wrote the greeting that would have told the client why). */
static int monitor_event(void)
{
	static int drops;
	int what = 0;

	for (;;) {
		zmq_msg_t ev;
		uint16_t e = 0;

		zmq_msg_init(&ev);
		if (zmq_msg_recv(&ev, mon, ZMQ_DONTWAIT) < 0) {
			zmq_msg_close(&ev);
			return what;
		}
		if (zmq_msg_size(&ev) >= 6)
			memcpy(&e, zmq_msg_data(&ev), 2);
		zmq_msg_close(&ev);
		zmq_msg_init(&ev);
		zmq_msg_recv(&ev, mon, 0);
		zmq_msg_close(&ev);
		if (e == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)
			drops++;
		if (e == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH ||
		    e == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL || drops >= 2)
			what = 1;
		else if (e == ZMQ_EVENT_DISCONNECTED && what == 0)
			what = 2;
	}
}

/* The next controller message within ms: 1 (in *m), 0 none, -1 handshake refused. */
static int recv_msg(struct pctl_msg *m, int ms)
{
	mono_ns end = mono_now() + (mono_ns)ms * NSEC_PER_MSEC;

	for (;;) {
		zmq_pollitem_t it[2] = {{.socket = sock, .events = ZMQ_POLLIN},
		                        {.socket = mon, .events = ZMQ_POLLIN}};
		mono_ns now = mono_now();
		int left = mono_before(now, end) ? (int)((end - now) / NSEC_PER_MSEC) + 1 : 0;
		uint8_t buf[4096];
		char why[128];

		if (zmq_poll(it, 2, left) < 0 && zmq_errno() != EINTR)
			return 0;
		if ((it[1].revents & ZMQ_POLLIN) && monitor_event() == 1)
			return -1;
		if (it[0].revents & ZMQ_POLLIN) {
			int n = zmq_recv(sock, buf, sizeof(buf), 0);
			if (n > 0 && n <= (int)sizeof(buf) &&
			    pctl_decode(buf, (size_t)n, m, why, sizeof(why)) == 0)
				return 1;
		}
		if (left == 0)
			return 0;
	}
}

/* NODE_HELLO until HELLO_ACK: 0 registered, 1 refused, 2 handshake refused, 3 no answer. */
static int do_hello(const char *node, bool print)
{
	struct pctl_msg m;
	mono_ns end = mono_now() + 5 * NSEC_PER_SEC;

	memset(&m, 0, sizeof(m));
	m.type = PCTL_NODE_HELLO;
	m.u.hello.proto_version = PCTL_VERSION;
	m.u.hello.ncpus = 1;
	m.u.hello.instance = (uint64_t)getpid();
	snprintf(m.u.hello.node, sizeof(m.u.hello.node), "%s", node);
	send_msg(&m, 0); /* queued until the handshake is done (or dropped when refused) */
	while (mono_before(mono_now(), end)) {
		int rc = recv_msg(&m, 200);
		if (rc < 0) {
			if (print)
				printf("HANDSHAKE_REFUSED\n");
			return 2;
		}
		if (rc == 1 && m.type == PCTL_HELLO_ACK) {
			if (print && m.u.hello_ack.status == 0)
				printf("REGISTERED\n");
			else if (print)
				printf("REFUSED %d %s\n", m.u.hello_ack.status,
				       m.u.hello_ack.reason);
			return m.u.hello_ack.status == 0 ? 0 : 1;
		}
		if (rc == 1)
			pctl_msg_release(&m);
	}
	if (print)
		printf("NOANSWER\n");
	return 3;
}

/* JOB_PROC: this process joined job NAME (handle 1) as rank 0. */
static void announce(const char *name)
{
	struct pctl_msg m;

	memset(&m, 0, sizeof(m));
	m.type = PCTL_JOB_PROC;
	m.u.proc.job = 1;
	m.u.proc.pid = getpid();
	m.u.proc.event = PCTL_PROC_JOINED;
	snprintf(m.u.proc.name, sizeof(m.u.proc.name), "%s", name);
	send_msg(&m, 0);
}

static int do_flood(double seconds)
{
	struct pctl_msg m;
	mono_ns t0 = mono_now(), end = t0 + (mono_ns)(seconds * 1e9);
	uint64_t sent = 0;
	uint8_t sink[4096];

	announce("flood");
	memset(&m, 0, sizeof(m));
	m.type = PCTL_RATE;
	m.u.rate.job = 1;
	m.u.rate.interval_ns = 1000000;
	while (!stop && mono_before(mono_now(), end)) {
		for (int k = 0; k < 256; k++) {
			m.u.rate.seq++;
			m.u.rate.units = 1 + (m.u.rate.seq % 7);
			if (send_msg(&m, ZMQ_DONTWAIT) < 0) {
				zmq_pollitem_t it = {.socket = sock, .events = ZMQ_POLLOUT};
				zmq_poll(&it, 1, 10);
				break;
			}
			sent++;
		}
		while (zmq_recv(sock, sink, sizeof(sink), ZMQ_DONTWAIT) >= 0)
			; /* what the controller says is not read */
	}
	printf("sent=%llu seconds=%.3f\n", (unsigned long long)sent,
	       (double)(mono_now() - t0) / 1e9);
	return 0;
}

/* Heartbeats every 100 ms (and for report_s seconds a RATE of 10 units with each);
 * every CONSTRAINT acknowledged at once, same gen and job. */
static int do_accept(double seconds, const char *job, double report_s)
{
	mono_ns t0 = mono_now(), end = t0 + (mono_ns)(seconds * 1e9), beat = 0;
	mono_ns report_end = t0 + (mono_ns)(report_s * 1e9);
	uint64_t seq = 0, acked = 0;
	struct pctl_msg m;

	announce(job);
	while (!stop && mono_before(mono_now(), end)) {
		if (!mono_before(mono_now(), beat)) {
			memset(&m, 0, sizeof(m));
			m.type = PCTL_HEARTBEAT;
			m.u.hb.seq = ++seq;
			m.u.hb.sent_ns = mono_now();
			m.u.hb.nprocs = 1;
			send_msg(&m, ZMQ_DONTWAIT);
			if (mono_before(mono_now(), report_end)) {
				memset(&m, 0, sizeof(m));
				m.type = PCTL_RATE;
				m.u.rate.job = 1;
				m.u.rate.seq = seq;
				m.u.rate.units = 10;
				m.u.rate.interval_ns = 100 * NSEC_PER_MSEC;
				send_msg(&m, ZMQ_DONTWAIT);
			}
			beat = mono_now() + 100 * NSEC_PER_MSEC;
		}
		if (recv_msg(&m, 20) != 1)
			continue;
		if (m.type == PCTL_CONSTRAINT) {
			struct pctl_msg a = {.type = PCTL_CONSTRAINT_ACK};
			a.u.cack.gen = m.u.cons.gen;
			memcpy(a.u.cack.job, m.u.cons.job, sizeof(a.u.cack.job));
			acked += send_msg(&a, ZMQ_DONTWAIT) >= 0;
		}
		pctl_msg_release(&m);
	}
	printf("acked=%llu\n", (unsigned long long)acked);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int do_ping(double seconds, int ms)
{
	size_t cap = (size_t)(seconds * 1000 / ms) + 2, n = 0, sent = 0;
	uint64_t *rtt = calloc(cap, sizeof(*rtt));
	mono_ns end = mono_now() + (mono_ns)(seconds * 1e9);
	struct pctl_msg m;

	if (rtt == NULL)
		return 1;
	while (mono_before(mono_now(), end) && sent < cap) {
		mono_ns due = mono_now() + (mono_ns)ms * NSEC_PER_MSEC;
		memset(&m, 0, sizeof(m));
		m.type = PCTL_HEARTBEAT;
		m.u.hb.seq = ++sent;
		m.u.hb.sent_ns = mono_now();
		send_msg(&m, ZMQ_DONTWAIT);
		while (mono_before(mono_now(), due)) {
			int left = (int)((due - mono_now()) / NSEC_PER_MSEC) + 1;
			if (recv_msg(&m, left) != 1)
				continue;
			if (m.type == PCTL_HEARTBEAT && m.u.hb.seq >= 1 && n < cap)
				rtt[n++] = mono_now() - m.u.hb.sent_ns;
			pctl_msg_release(&m);
		}
	}
	qsort(rtt, n, sizeof(*rtt), cmp_u64);
	printf("n=%zu lost=%zu p50_us=%llu p99_us=%llu max_us=%llu\n", n, sent - n,
	       n ? (unsigned long long)(rtt[n / 2] / 1000) : 0,
	       n ? (unsigned long long)(rtt[(n * 99) / 100] / 1000) : 0,
	       n ? (unsigned long long)(rtt[n - 1] / 1000) : 0);
	free(rtt);
	return 0;
}

static int do_big(size_t bytes)
{
	uint8_t *buf = calloc(1, bytes);
	mono_ns end = mono_now() + 3 * NSEC_PER_SEC;

	if (buf == NULL)
		return 1;
	buf[0] = PCTL_MAGIC;
	buf[1] = PCTL_VERSION;
	buf[2] = PCTL_BW;
	zmq_send(sock, buf, bytes, 0);
	free(buf);
	while (mono_before(mono_now(), end)) {
		zmq_pollitem_t it = {.socket = mon, .events = ZMQ_POLLIN};
		zmq_poll(&it, 1, 100);
		if ((it.revents & ZMQ_POLLIN) && monitor_event() == 2) {
			printf("DISCONNECTED\n");
			return 0;
		}
	}
	printf("KEPT\n");
	return 0;
}

static int do_loris(const char *host, int port, double seconds)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	mono_ns t0 = mono_now(), end = t0 + (mono_ns)(seconds * 1e9);
	const uint8_t half[5] = {0xff, 0, 0, 0, 0}; /* the start of a ZMTP 3 signature */
	char b[256];

	if (fd < 0 || inet_pton(AF_INET, host, &a.sin_addr) != 1 ||
	    connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    write(fd, half, sizeof(half)) != (ssize_t)sizeof(half)) {
		printf("ERROR %s\n", strerror(errno));
		return 1;
	}
	while (mono_before(mono_now(), end)) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 100) > 0) {
			ssize_t n = read(fd, b, sizeof(b)); /* the server's greeting, then EOF */
			if (n <= 0) {
				printf("CLOSED ms=%llu\n",
				       (unsigned long long)((mono_now() - t0) / NSEC_PER_MSEC));
				close(fd);
				return 0;
			}
		}
	}
	printf("OPEN\n");
	close(fd);
	return 0;
}

/* The DEALER, with CURVE keys when given, connected. */
static int open_sock(void *ctx, const char *ep, const char *key, const char *server)
{
	int zero = 0;

	sock = zmq_socket(ctx, ZMQ_DEALER);
	zmq_setsockopt(sock, ZMQ_LINGER, &zero, sizeof(zero));
	if (key != NULL) {
		struct curve_cert mine, ctl;
		char why[512];
		if (curve_cert_load(key, true, &mine, why, sizeof(why)) != 0 ||
		    curve_cert_load(server, false, &ctl, why, sizeof(why)) != 0) {
			fprintf(stderr, "fakeagent: %s\n", why);
			return -1;
		}
		zmq_setsockopt(sock, ZMQ_CURVE_SERVERKEY, ctl.pub, 40);
		zmq_setsockopt(sock, ZMQ_CURVE_PUBLICKEY, mine.pub, 40);
		zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, mine.sec, 40);
	}
	zmq_socket_monitor(sock, MON,
	                   ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
	                       ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_DISCONNECTED);
	mon = zmq_socket(ctx, ZMQ_PAIR);
	zmq_connect(mon, MON);
	return zmq_connect(sock, ep);
}

int main(int argc, char **argv)
{
	const char *key = NULL, *server = NULL;
	struct sigaction term = {.sa_handler = on_term}; /* no SA_RESTART: zmq_poll returns */
	void *ctx;
	int i = 1, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	sigaction(SIGTERM, &term, NULL);
	if (argc == 5 && strcmp(argv[1], "loris") == 0)
		return do_loris(argv[2], atoi(argv[3]), atof(argv[4]));
	while (i + 1 < argc && argv[i][0] == '-') {
		if (strcmp(argv[i], "-k") == 0)
			key = argv[i + 1];
		else if (strcmp(argv[i], "-s") == 0)
			server = argv[i + 1];
		i += 2;
	}
	if (argc - i < 3 || (key == NULL) != (server == NULL)) {
		fprintf(stderr,
		        "usage: fakeagent [-k SECRET -s SERVER] ENDPOINT NODE MODE [ARGS]\n");
		return 2;
	}
	ctx = zmq_ctx_new();
	if (open_sock(ctx, argv[i], key, server) != 0)
		return 2;
	rc = do_hello(argv[i + 1], strcmp(argv[i + 2], "hello") == 0);
	if (rc == 0 && strcmp(argv[i + 2], "flood") == 0 && argc - i >= 4)
		rc = do_flood(atof(argv[i + 3]));
	else if (rc == 0 && strcmp(argv[i + 2], "accept") == 0 && argc - i >= 5)
		rc = do_accept(atof(argv[i + 3]), argv[i + 4],
		               argc - i >= 6 ? atof(argv[i + 5]) : 0);
	else if (rc == 0 && strcmp(argv[i + 2], "ping") == 0 && argc - i >= 5)
		rc = do_ping(atof(argv[i + 3]), atoi(argv[i + 4]));
	else if (rc == 0 && strcmp(argv[i + 2], "big") == 0 && argc - i >= 4)
		rc = do_big((size_t)atol(argv[i + 3]));
	else if (rc == 0 && strcmp(argv[i + 2], "hello") != 0) {
		fprintf(stderr, "fakeagent: unknown mode or missing arguments: %s\n", argv[i + 2]);
		rc = 2;
	}
	zmq_close(mon);
	zmq_socket_monitor(sock, NULL, 0);
	zmq_close(sock);
	zmq_ctx_term(ctx);
	return rc;
}
