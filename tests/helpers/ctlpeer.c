/*
 * ctlpeer: a test peer for vsched-agent.
 *
 *   ctlpeer router ENDPOINT [--refuse-hello] [--no-echo]
 *       Stands in for the controller: a ROUTER bound to ENDPOINT (tcp://127.0.0.1:PORT or
 *       tcp://127.0.0.1:* ) that prints every message it receives as one line on stdout
 *       ("LISTEN tcp://127.0.0.1:PORT" first), answers NODE_HELLO with HELLO_ACK (or
 *       refuses it), echoes heartbeats, answers anything from an unregistered peer with
 *       HELLO_ACK -ENOENT, and reads commands from stdin:
 *         constraint JOB GEN PERIOD SLICE [DEADLINE [PHASE]]   (durations with units)
 *         wconstraint JOB GEN PERIOD PHASE+LEN[/SLICE]...   (1..8 windows of one frame)
 *         epoch REALTIME_NS                                 (PCTL_EPOCH)
 *         raw HEX                                              (any bytes, one frame)
 *         raw2 HEX HEX                          (two frames as one multipart message)
 *         forget        (plays a restarted controller: every peer is unregistered)
 *         quit
 *   ctlpeer push ENDPOINT FRAME...
 *       Stands in for an application: PUSH-connects to the agent and sends each FRAME:
 *         hex:HEX                               raw bytes
 *         multi:HEX:HEX                         two frames as one multipart message
 *         register:HANDLE:JOB:RANK:PID|self     proto_apprate REGISTER
 *         report:HANDLE:RANK:SEQ:UNITS:INTERVAL_NS
 *         bytes:HANDLE:RANK:SEQ:MEM:NET
 *         sleep:MS                              pause (keeps the process alive)
 *       HANDLE is hexadecimal. Exits 0 when every frame was queued.
 *   ctlpeer app ENDPOINT JOB RANK SECONDS [ITER_MS [MEM_BYTES_PER_ITER [TCP_BYTES_PER_ITER]]]
 *       A real libapprate application (when built with it; else exits 77): one iteration
 *       every ITER_MS (default 20) for SECONDS, each also reporting MEM_BYTES_PER_ITER
 *       memory bytes (default 0) through apprate_bytes, and sending TCP_BYTES_PER_ITER
 *       bytes over a loopback TCP connection to itself (default 0). Prints its libapprate
 *       counters and "tcp_bytes=N elapsed_ns=T" (from the first TCP byte on).
 * Bounded: router exits on "quit", stdin EOF, or SIGTERM.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#ifdef CTLPEER_WITH_APPRATE
#include "apprate.h"
#endif
#include "duration.h"
#include "proto_apprate.h"
#include "proto_ctl.h"

#define MAX_PEERS 16

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct peer {
	uint8_t id[256];
	size_t idlen;
	int registered;
};

static struct peer peers[MAX_PEERS];
static int npeers, last_peer = -1;
static int refuse_hello, no_echo;

static int find_peer(const uint8_t *id, size_t len, int add)
{
	for (int i = 0; i < npeers; i++)
		if (peers[i].idlen == len && memcmp(peers[i].id, id, len) == 0)
			return i;
	if (!add || len > sizeof(peers[0].id))
		return -1;
	if (npeers == MAX_PEERS)
		npeers = 0; /* recycle: tests use few */
	memcpy(peers[npeers].id, id, len);
	peers[npeers].idlen = len;
	peers[npeers].registered = 0;
	return npeers++;
}

static void send_to(void *sock, int p, const uint8_t *buf, size_t len)
{
	if (p < 0)
		return;
	zmq_send(sock, peers[p].id, peers[p].idlen, ZMQ_SNDMORE | ZMQ_DONTWAIT);
	zmq_send(sock, buf, len, ZMQ_DONTWAIT);
}

static void send_msg(void *sock, int p, const struct pctl_msg *m)
{
	uint8_t buf[1024];
	int n = pctl_encode(m, buf, sizeof(buf));

	if (n < 0) {
		printf("ERROR encode %s: %d\n", pctl_type_name(m->type), n);
		return;
	}
	send_to(sock, p, buf, (size_t)n);
}

static void hello_ack(void *sock, int p, int status, const char *reason)
{
	struct pctl_msg m;

	memset(&m, 0, sizeof(m));
	m.type = PCTL_HELLO_ACK;
	m.u.hello_ack.status = status;
	m.u.hello_ack.ctl_instance = 0xc0ffee;
	snprintf(m.u.hello_ack.reason, sizeof(m.u.hello_ack.reason), "%s", reason);
	send_msg(sock, p, &m);
}

static void print_msg(const struct pctl_msg *m, size_t len)
{
	switch (m->type) {
	case PCTL_NODE_HELLO:
		printf("HELLO node=%s ncpus=%u mem=%llu net=%llu version=%u instance=%llx\n",
		       m->u.hello.node, m->u.hello.ncpus,
		       (unsigned long long)m->u.hello.mem_capacity,
		       (unsigned long long)m->u.hello.net_capacity, m->u.hello.proto_version,
		       (unsigned long long)m->u.hello.instance);
		break;
	case PCTL_HEARTBEAT:
		printf("HEARTBEAT seq=%llu nprocs=%u\n", (unsigned long long)m->u.hb.seq,
		       m->u.hb.nprocs);
		break;
	case PCTL_JOB_PROC:
		printf("JOB_PROC job=%u rank=%u pid=%d event=%s name=%s\n", m->u.proc.job,
		       m->u.proc.rank, m->u.proc.pid,
		       m->u.proc.event == PCTL_PROC_JOINED ? "joined" : "left", m->u.proc.name);
		break;
	case PCTL_RATE:
		printf("RATE job=%u rank=%u seq=%u units=%llu interval_ns=%llu bytes=%zu\n",
		       m->u.rate.job, m->u.rate.rank, m->u.rate.seq,
		       (unsigned long long)m->u.rate.units,
		       (unsigned long long)m->u.rate.interval_ns, len);
		break;
	case PCTL_BW:
		printf("BW window_ns=%llu node_rx=%llu node_tx=%llu node_src=%s n=%u\n",
		       (unsigned long long)m->u.bw.window_ns,
		       (unsigned long long)m->u.bw.node_rx_bps,
		       (unsigned long long)m->u.bw.node_tx_bps, pctl_src_name(m->u.bw.node_src),
		       m->u.bw.n);
		for (unsigned i = 0; i < m->u.bw.n; i++) {
			const struct pctl_bw_entry *e = &m->u.bw.e[i];
			printf("BWE job=%u rank=%u pid=%d mem=%llu mem_src=%s tx=%llu rx=%llu "
			       "net_src=%s\n",
			       e->job, e->rank, e->pid, (unsigned long long)e->mem_bps,
			       pctl_src_name(e->mem_src), (unsigned long long)e->net_tx_bps,
			       (unsigned long long)e->net_rx_bps, pctl_src_name(e->net_src));
		}
		break;
	case PCTL_TASK_STATS:
		printf("TASK_STATS n=%u\n", m->u.stats.n);
		for (unsigned i = 0; i < m->u.stats.n; i++) {
			const struct pctl_stats_entry *e = &m->u.stats.e[i];
			printf("TS job=%u rank=%u gen=%llu pid=%d cpu=%d period=%llu slice=%llu "
			       "periods=%llu cpu_ns=%llu misses=%llu\n",
			       e->job, e->rank, (unsigned long long)e->gen, e->st.pid, e->st.cpu,
			       (unsigned long long)e->st.resv.period,
			       (unsigned long long)e->st.resv.slice,
			       (unsigned long long)e->st.periods, (unsigned long long)e->st.cpu_ns,
			       (unsigned long long)e->st.misses);
		}
		break;
	case PCTL_CONSTRAINT_ACK:
		printf("CONSTRAINT_ACK gen=%llu status=%d job=%s reason=\"%s\"\n",
		       (unsigned long long)m->u.cack.gen, m->u.cack.status, m->u.cack.job,
		       m->u.cack.reason);
		break;
	default:
		printf("UNEXPECTED %s\n", pctl_type_name(m->type));
	}
}

static void on_frame(void *sock)
{
	uint8_t id[256], buf[PCTL_MAX_FRAME + 16];
	int idlen, len, more = 0, p;
	size_t ml = sizeof(more);
	struct pctl_msg m;
	char why[256];

	idlen = zmq_recv(sock, id, sizeof(id), ZMQ_DONTWAIT);
	if (idlen < 0)
		return;
	len = zmq_recv(sock, buf, sizeof(buf), 0);
	zmq_getsockopt(sock, ZMQ_RCVMORE, &more, &ml);
	while (more) { /* agents send single frames; drop any extra */
		char junk[64];
		zmq_recv(sock, junk, sizeof(junk), 0);
		zmq_getsockopt(sock, ZMQ_RCVMORE, &more, &ml);
	}
	if (len < 0)
		return;
	if ((size_t)len > sizeof(buf)) {
		printf("BAD oversized frame %d\n", len);
		return;
	}
	if (pctl_decode(buf, (size_t)len, &m, why, sizeof(why)) != 0) {
		printf("BAD %s\n", why);
		return;
	}
	p = find_peer(id, (size_t)idlen, 1);
	last_peer = p;
	if (m.type == PCTL_NODE_HELLO) {
		print_msg(&m, (size_t)len);
		if (refuse_hello) {
			hello_ack(sock, p, -EACCES, "refused by test");
		} else {
			peers[p].registered = 1;
			hello_ack(sock, p, 0, "");
		}
	} else if (!peers[p].registered) {
		printf("UNREGISTERED %s\n", pctl_type_name(m.type));
		hello_ack(sock, p, -ENOENT, "unknown node: send NODE_HELLO");
	} else {
		print_msg(&m, (size_t)len);
		if (m.type == PCTL_HEARTBEAT && !no_echo)
			send_msg(sock, p, &m);
	}
	pctl_msg_release(&m);
	fflush(stdout);
}

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

static int unhex(const char *s, uint8_t *out, size_t cap)
{
	size_t n = 0;

	while (s[0] && s[1] && n < cap) {
		int h = hexval(s[0]), l = hexval(s[1]);
		if (h < 0 || l < 0)
			return -1;
		out[n++] = (uint8_t)(h << 4 | l);
		s += 2;
	}
	return s[0] ? -1 : (int)n;
}

/* "JOB GEN PERIOD PHASE+LEN[/SLICE]..." -> one CONSTRAINT with those windows. */
static void on_wconstraint(void *sock, char *args)
{
	struct pctl_msg m;
	char *save = NULL, *tok;
	unsigned long long gen;
	int k = 0;

	memset(&m, 0, sizeof(m));
	m.type = PCTL_CONSTRAINT;
	for (tok = strtok_r(args, " ", &save); tok; tok = strtok_r(NULL, " ", &save), k++) {
		char *plus, *slash;
		struct vsp_resv *w;

		if (k == 0) {
			snprintf(m.u.cons.job, sizeof(m.u.cons.job), "%.63s", tok);
		} else if (k == 1) {
			gen = strtoull(tok, NULL, 10);
			m.u.cons.gen = gen;
		} else if (k == 2) {
			if (duration_parse(tok, &m.u.cons.win[0].period)) {
				printf("ERROR bad period %s\n", tok);
				return;
			}
		} else {
			if (m.u.cons.nwin >= PCTL_MAX_WINDOWS) {
				printf("ERROR more than %d windows\n", PCTL_MAX_WINDOWS);
				return;
			}
			w = &m.u.cons.win[m.u.cons.nwin];
			w->period = m.u.cons.win[0].period;
			plus = strchr(tok, '+');
			if (!plus) {
				printf("ERROR window %s: PHASE+LEN[/SLICE]\n", tok);
				return;
			}
			*plus++ = '\0';
			slash = strchr(plus, '/');
			if (slash)
				*slash++ = '\0';
			if (duration_parse(tok, &w->phase) || duration_parse(plus, &w->deadline) ||
			    (slash && duration_parse(slash, &w->slice))) {
				printf("ERROR bad duration in window\n");
				return;
			}
			if (!slash)
				w->slice = w->deadline;
			m.u.cons.nwin++;
		}
	}
	if (k < 4) {
		printf("ERROR wconstraint JOB GEN PERIOD PHASE+LEN[/SLICE]...\n");
		return;
	}
	send_msg(sock, last_peer, &m);
	printf("SENT wconstraint %s gen=%llu nwin=%u\n", m.u.cons.job,
	       (unsigned long long)m.u.cons.gen, m.u.cons.nwin);
}

static void on_command(void *sock, char *line)
{
	char job[128], hex[8192], ps[32], ss[32], ds[32] = "0ns", phs[32] = "0ns";
	unsigned long long gen;
	struct pctl_msg m;
	uint8_t raw[4096];
	int n;

	line[strcspn(line, "\n")] = '\0';
	if (strncmp(line, "wconstraint ", 12) == 0) {
		on_wconstraint(sock, line + 12);
		return;
	}
	if (strncmp(line, "epoch ", 6) == 0) {
		memset(&m, 0, sizeof(m));
		m.type = PCTL_EPOCH;
		m.u.epoch.realtime_ns = strtoull(line + 6, NULL, 10);
		send_msg(sock, last_peer, &m);
		printf("SENT epoch %llu\n", (unsigned long long)m.u.epoch.realtime_ns);
		return;
	}
	if (sscanf(line, "constraint %127s %llu %31s %31s %31s %31s", job, &gen, ps, ss, ds, phs) >=
	    4) {
		memset(&m, 0, sizeof(m));
		m.type = PCTL_CONSTRAINT;
		m.u.cons.gen = gen;
		m.u.cons.nwin = 1;
		snprintf(m.u.cons.job, sizeof(m.u.cons.job), "%.63s", job);
		if (duration_parse(ps, &m.u.cons.win[0].period) ||
		    duration_parse(ss, &m.u.cons.win[0].slice) ||
		    duration_parse(ds, &m.u.cons.win[0].deadline) ||
		    duration_parse(phs, &m.u.cons.win[0].phase)) {
			printf("ERROR bad duration in: %s\n", line);
			return;
		}
		send_msg(sock, last_peer, &m);
		printf("SENT constraint %s gen=%llu\n", job, gen);
	} else if (strncmp(line, "raw ", 4) == 0 && sscanf(line + 4, "%8191s", hex) == 1) {
		n = unhex(hex, raw, sizeof(raw));
		if (n < 0) {
			printf("ERROR bad hex\n");
			return;
		}
		send_to(sock, last_peer, raw, (size_t)n);
		printf("SENT raw %d bytes\n", n);
	} else if (strncmp(line, "raw2 ", 5) == 0) {
		char h1[4096], h2[4096];
		uint8_t r2[2048];
		int n2;
		if (sscanf(line, "raw2 %4095s %4095s", h1, h2) != 2 ||
		    (n = unhex(h1, raw, sizeof(raw))) < 0 || (n2 = unhex(h2, r2, sizeof(r2))) < 0 ||
		    last_peer < 0) {
			printf("ERROR bad raw2\n");
			return;
		}
		zmq_send(sock, peers[last_peer].id, peers[last_peer].idlen,
		         ZMQ_SNDMORE | ZMQ_DONTWAIT);
		zmq_send(sock, raw, (size_t)n, ZMQ_SNDMORE | ZMQ_DONTWAIT);
		zmq_send(sock, r2, (size_t)n2, ZMQ_DONTWAIT);
		printf("SENT raw2 %d+%d bytes\n", n, n2);
	} else if (strcmp(line, "forget") == 0) {
		for (int i = 0; i < npeers; i++)
			peers[i].registered = 0;
		printf("FORGOT %d peer(s)\n", npeers);
	} else if (strcmp(line, "quit") == 0) {
		stop = 1;
	} else if (line[0]) {
		printf("ERROR unknown command: %s\n", line);
	}
	fflush(stdout);
}

static int run_router(const char *endpoint)
{
	void *ctx = zmq_ctx_new(), *sock = zmq_socket(ctx, ZMQ_ROUTER);
	int zero = 0, one = 1;
	char last[256];
	size_t ll = sizeof(last);
	char line[16384];
	size_t used = 0;

	zmq_setsockopt(sock, ZMQ_LINGER, &zero, sizeof(zero));
	zmq_setsockopt(sock, ZMQ_ROUTER_HANDOVER, &one, sizeof(one));
	if (zmq_bind(sock, endpoint) != 0) {
		fprintf(stderr, "ctlpeer: bind %s: %s\n", endpoint, zmq_strerror(zmq_errno()));
		return 1;
	}
	zmq_getsockopt(sock, ZMQ_LAST_ENDPOINT, last, &ll);
	printf("LISTEN %s\n", last);
	fflush(stdout);
	while (!stop) {
		zmq_pollitem_t it[2] = {{.socket = sock, .events = ZMQ_POLLIN},
		                        {.fd = 0, .events = ZMQ_POLLIN}};
		if (zmq_poll(it, 2, 200) < 0) {
			if (zmq_errno() == EINTR)
				continue;
			break;
		}
		if (it[0].revents & ZMQ_POLLIN)
			on_frame(sock);
		if (it[1].revents & ZMQ_POLLIN) {
			ssize_t r = read(0, line + used, sizeof(line) - 1 - used);
			char *nl;
			if (r <= 0)
				break; /* EOF: the test is done with us */
			used += (size_t)r;
			line[used] = '\0';
			while ((nl = strchr(line, '\n')) != NULL) {
				*nl = '\0';
				on_command(sock, line);
				memmove(line, nl + 1, used - (size_t)(nl + 1 - line) + 1);
				used -= (size_t)(nl + 1 - line);
			}
			if (used == sizeof(line) - 1)
				used = 0;
		}
	}
	zmq_close(sock);
	zmq_ctx_term(ctx);
	return 0;
}

static int make_frame(const char *spec, uint8_t *buf, size_t cap)
{
	char job[128], pidtxt[32];
	unsigned long long a1, a2, a3, a4, a5;
	unsigned h;

	if (strncmp(spec, "hex:", 4) == 0)
		return unhex(spec + 4, buf, cap);
	if (sscanf(spec, "register:%x:%127[^:]:%llu:%31s", &h, job, &a1, pidtxt) == 4) {
		struct aproto_register r;
		memset(&r, 0, sizeof(r));
		r.handle = h;
		r.rank = (uint32_t)a1;
		r.pid = strcmp(pidtxt, "self") == 0 ? (uint32_t)getpid()
		                                    : (uint32_t)strtoul(pidtxt, NULL, 10);
		r.interval_ns = 100000000;
		snprintf(r.job, sizeof(r.job), "%.63s", job);
		return aproto_encode_register(&r, buf, cap);
	}
	if (sscanf(spec, "report:%x:%llu:%llu:%llu:%llu", &h, &a1, &a2, &a3, &a4) == 5) {
		struct aproto_report r = {.handle = h,
		                          .rank = (uint32_t)a1,
		                          .seq = (uint32_t)a2,
		                          .units = a3,
		                          .interval_ns = a4};
		return aproto_encode_report(&r, buf, cap);
	}
	if (sscanf(spec, "bytes:%x:%llu:%llu:%llu:%llu", &h, &a1, &a2, &a3, &a5) == 5) {
		struct aproto_bytes b = {.handle = h,
		                         .rank = (uint32_t)a1,
		                         .seq = (uint32_t)a2,
		                         .mem_bytes = a3,
		                         .net_bytes = a5};
		return aproto_encode_bytes(&b, buf, cap);
	}
	return -1;
}

static int run_push(const char *endpoint, int n, char **frames)
{
	void *ctx = zmq_ctx_new(), *sock = zmq_socket(ctx, ZMQ_PUSH);
	int linger = 2000, rc = 0;

	zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof(linger));
	if (zmq_connect(sock, endpoint) != 0) {
		fprintf(stderr, "ctlpeer: connect %s: %s\n", endpoint, zmq_strerror(zmq_errno()));
		return 1;
	}
	for (int i = 0; i < n && !stop; i++) {
		uint8_t buf[4096];
		int len;

		if (strncmp(frames[i], "sleep:", 6) == 0) {
			struct timespec ts;
			long ms = atol(frames[i] + 6);
			ts.tv_sec = ms / 1000;
			ts.tv_nsec = (ms % 1000) * 1000000L;
			nanosleep(&ts, NULL);
			continue;
		}
		if (strncmp(frames[i], "multi:", 6) == 0) {
			char h1[2048], h2[2048];
			uint8_t b2[1024];
			int l1, l2;
			if (sscanf(frames[i] + 6, "%2047[0-9a-fA-F]:%2047[0-9a-fA-F]", h1, h2) !=
			        2 ||
			    (l1 = unhex(h1, buf, sizeof(buf))) < 0 ||
			    (l2 = unhex(h2, b2, sizeof(b2))) < 0) {
				fprintf(stderr, "ctlpeer: bad frame spec %s\n", frames[i]);
				rc = 2;
				continue;
			}
			zmq_send(sock, buf, (size_t)l1, ZMQ_SNDMORE);
			zmq_send(sock, b2, (size_t)l2, 0);
			continue;
		}
		len = make_frame(frames[i], buf, sizeof(buf));
		if (len < 0) {
			fprintf(stderr, "ctlpeer: bad frame spec %s\n", frames[i]);
			rc = 2;
			continue;
		}
		if (zmq_send(sock, buf, (size_t)len, 0) != len) {
			fprintf(stderr, "ctlpeer: send: %s\n", zmq_strerror(zmq_errno()));
			rc = 1;
		}
	}
	zmq_close(sock);
	zmq_ctx_term(ctx);
	return rc;
}

#ifdef CTLPEER_WITH_APPRATE
/* A loopback TCP connection to ourselves: *tx sends, *rx receives. Returns 0 or -1. */
static int tcp_pair(int *tx, int *rx)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);
	int l = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(l, 1) != 0 ||
	    getsockname(l, (struct sockaddr *)&sa, &sl) != 0)
		return -1;
	*tx = socket(AF_INET, SOCK_STREAM, 0);
	if (*tx < 0 || connect(*tx, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		return -1;
	*rx = accept(l, NULL, NULL);
	close(l);
	return *rx < 0 ? -1 : 0;
}

static double mono_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}
#endif

static int run_app(int argc, char **argv)
{
#ifdef CTLPEER_WITH_APPRATE
	struct apprate_opts o = APPRATE_OPTS_INIT;
	struct apprate_stats st;
	apprate_t *r;
	double secs = atof(argv[5]), t0, t_tcp = 0, now;
	long iter_ms = argc > 6 ? atol(argv[6]) : 20;
	unsigned long long mem = argc > 7 ? strtoull(argv[7], NULL, 10) : 0;
	unsigned long long tcp = argc > 8 ? strtoull(argv[8], NULL, 10) : 0, tcp_total = 0;
	static char buf[1 << 16];
	int tx = -1, rx = -1;

	if (tcp && tcp_pair(&tx, &rx) != 0) {
		perror("ctlpeer: loopback tcp");
		return 1;
	}
	o.endpoint = argv[2];
	o.rank = atoi(argv[4]);
	o.report_ms = 100;
	r = apprate_open(argv[3], &o);
	if (!r) {
		fprintf(stderr, "ctlpeer: apprate_open: %s\n", apprate_strerror(-errno));
		return 1;
	}
	t0 = mono_s();
	do {
		struct timespec ts = {.tv_sec = iter_ms / 1000,
		                      .tv_nsec = (iter_ms % 1000) * 1000000L};
		nanosleep(&ts, NULL);
		apprate_iteration(r);
		if (mem)
			apprate_bytes(r, mem, 0);
		if (tcp) {
			unsigned long long left = tcp;
			if (!t_tcp)
				t_tcp = mono_s();
			while (left) {
				ssize_t n =
				    send(tx, buf, left < sizeof(buf) ? left : sizeof(buf), 0);
				if (n <= 0)
					return 1;
				left -= (unsigned long long)n;
				tcp_total += (unsigned long long)n;
				while (recv(rx, buf, sizeof(buf), MSG_DONTWAIT) > 0)
					;
			}
		}
		now = mono_s();
	} while (!stop && now - t0 < secs);
	while (tcp && recv(rx, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
	apprate_stats(r, &st);
	printf("APP pid=%d handle=%08x units=%llu reports_sent=%llu dropped=%llu tcp_bytes=%llu "
	       "elapsed_ns=%.0f\n",
	       (int)getpid(), st.handle, (unsigned long long)st.units,
	       (unsigned long long)st.reports_sent, (unsigned long long)st.reports_dropped,
	       tcp_total, t_tcp ? (now - t_tcp) * 1e9 : 0.0);
	apprate_close(&r);
	return 0;
#else
	(void)argc;
	(void)argv;
	fprintf(stderr, "ctlpeer: built without libapprate\n");
	return 77;
#endif
}

int main(int argc, char **argv)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 3 && strcmp(argv[1], "router") == 0) {
		for (int i = 3; i < argc; i++) {
			if (strcmp(argv[i], "--refuse-hello") == 0)
				refuse_hello = 1;
			else if (strcmp(argv[i], "--no-echo") == 0)
				no_echo = 1;
		}
		return run_router(argv[2]);
	}
	if (argc >= 3 && strcmp(argv[1], "push") == 0)
		return run_push(argv[2], argc - 3, argv + 3);
	if (argc >= 6 && strcmp(argv[1], "app") == 0)
		return run_app(argc, argv);
	fprintf(stderr, "usage: ctlpeer router ENDPOINT [--refuse-hello] [--no-echo]\n"
	                "       ctlpeer push ENDPOINT FRAME...\n"
	                "       ctlpeer app ENDPOINT JOB RANK SECONDS [ITER_MS [MEM_BYTES "
	                "[TCP_BYTES]]]\n");
	return 2;
}
