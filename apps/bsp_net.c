/*
 * bsp's network: a full TCP mesh between the ranks and the all-to-all exchange.
 *
 * Setup: rank r listens at peers[r] (or on an inherited socket), connects to every rank
 * below it and accepts every rank above it. Connecting only downwards means nobody waits in
 * a cycle: rank 0 only accepts, rank 1 waits for rank 0 only, and so on. Refused connections
 * are retried (20 ms, backing off to 500 ms) until --connect-timeout. Both ends of every
 * connection exchange a HELLO carrying the rank and the job's configuration; a rank that runs
 * a different configuration is refused with the first difference named.
 *
 * Exchange: one round = a 32-byte header (magic, round number, flags, payload length, aux)
 * plus the payload, to and from every other rank, driven by poll() on non-blocking sockets
 * (sending and receiving at once, so that large messages cannot deadlock on full socket
 * buffers). Exactly one message per peer is consumed per round; a peer that is already in
 * the next round simply waits in the socket buffer. Completing a round is a barrier: nobody
 * finishes round k before everyone has started it.
 *
 * Bounds: every blocking step polls with a deadline. A peer that closes (it exited or was
 * killed) is reported at once; one that sends nothing for --timeout is reported then.
 * Wire integers are little-endian.
 */
#include "bsp.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define HELLO_MAGIC      0x31505342u /* "BSP1" */
#define MSG_MAGIC        0x4d505342u /* "BSPM" */
#define HELLO_F_RATIO    0x1
#define HELLO_WAIT_NS    (5 * NSEC_PER_SEC) /* for the HELLO of an accepted connection */
#define CONNECT_TRY_NS   (2 * NSEC_PER_SEC)
#define BACKOFF_FIRST_NS (20 * NSEC_PER_MSEC)
#define BACKOFF_MAX_NS   (500 * NSEC_PER_MSEC)

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v = 0;

	for (int i = 3; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static const char *addr_str(const struct bsp_net *n, uint32_t rank, char *buf, size_t len)
{
	const struct bsp_addr *a = &n->addrs[rank];

	snprintf(buf, len, strchr(a->host, ':') != NULL ? "[%s]:%s" : "%s:%s", a->host, a->port);
	return buf;
}

/* Milliseconds until deadline for poll(): at least 0, at most 1 s past INT range. */
static int ms_until(mono_ns deadline)
{
	mono_ns now = mono_now();
	uint64_t ms;

	if (!mono_before(now, deadline))
		return 0;
	ms = (deadline - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC;
	return ms > 1000000 ? 1000000 : (int)ms;
}

/* Waits for ev on fd until deadline: 1 ready, 0 timed out, -1 error or signal (errno). */
static int wait_fd(int fd, short ev, mono_ns deadline)
{
	for (;;) {
		struct pollfd p = {.fd = fd, .events = ev};
		int rc = poll(&p, 1, ms_until(deadline));

		if (rc > 0)
			return 1;
		if (rc == 0) {
			if (!mono_before(mono_now(), deadline))
				return 0;
			continue;
		}
		if (errno != EINTR || app_stop)
			return -1;
	}
}

/*
 * Reads (wr false) or writes len bytes on a non-blocking fd by deadline. Returns 0, or -1
 * with errno: ETIMEDOUT, ECONNABORTED (the peer closed), EINTR (a stop signal), other.
 */
static int io_full(int fd, void *buf, size_t len, bool wr, mono_ns deadline)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t k = wr ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
		int rc;

		if (k > 0) {
			p += k;
			len -= (size_t)k;
			continue;
		}
		if (k == 0) {
			errno = ECONNABORTED;
			return -1;
		}
		if (errno != EAGAIN && errno != EINTR)
			return -1;
		rc = wait_fd(fd, wr ? POLLOUT : POLLIN, deadline);
		if (rc == 0)
			errno = ETIMEDOUT;
		if (rc <= 0)
			return -1;
	}
	return 0;
}

static const char *io_error(int err)
{
	return err == ECONNABORTED ? "connection closed by the peer" : strerror(err);
}

static void hello_encode(const struct bsp_cfg *c, uint8_t *h)
{
	memset(h, 0, BSP_HELLO_SIZE);
	put32(h + 0, HELLO_MAGIC);
	put32(h + 4, c->rank);
	put32(h + 8, c->nranks);
	put32(h + 12, c->ratio ? HELLO_F_RATIO : 0);
	put64(h + 16, c->compute_ns);
	put64(h + 24, c->ratio ? 0 : c->msg);
	put64(h + 32, c->ratio ? c->iter_ns : 0);
	put64(h + 40, c->iterations);
	put32(h + 48, c->ratio_c);
	put32(h + 52, c->ratio_m);
}

/*
 * Compares a peer's HELLO with ours. Returns NULL when it matches, else the name of the
 * first setting that differs (the job is misconfigured: fatal).
 */
static const char *hello_mismatch(const struct bsp_cfg *c, const uint8_t *h)
{
	uint8_t mine[BSP_HELLO_SIZE];

	hello_encode(c, mine);
	if (get32(h + 8) != c->nranks)
		return "the number of ranks (--peers)";
	if (get32(h + 12) != get32(mine + 12))
		return "--ratio";
	if (get64(h + 16) != c->compute_ns)
		return "--compute";
	if (get64(h + 24) != get64(mine + 24))
		return "--msg";
	if (get64(h + 32) != get64(mine + 32) || get32(h + 48) != c->ratio_c ||
	    get32(h + 52) != c->ratio_m)
		return "--ratio/--iter-time";
	if (get64(h + 40) != c->iterations)
		return "--iterations";
	return NULL;
}

static int listen_socket(const struct bsp_net *n, const struct bsp_cfg *c)
{
	const struct bsp_addr *me = &c->peers[c->rank];
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
	                         .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	struct addrinfo *res = NULL, *ai;
	char where[BSP_HOST_MAX + 16];
	int fd = -1, err = 0, one = 1, rc, acc = 0;
	socklen_t len = sizeof(acc);

	addr_str(n, c->rank, where, sizeof(where));
	if (c->listen_fd >= 0) {
		if (getsockopt(c->listen_fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &len) != 0 || !acc) {
			fprintf(stderr, "bsp: rank %u: --listen-fd %d is not a listening socket\n",
			        c->rank, c->listen_fd);
			return -1;
		}
		fcntl(c->listen_fd, F_SETFD, FD_CLOEXEC);
		fcntl(c->listen_fd, F_SETFL, fcntl(c->listen_fd, F_GETFL) | O_NONBLOCK);
		return c->listen_fd;
	}
	if (c->bind_host != NULL)
		snprintf(where, sizeof(where), strchr(c->bind_host, ':') ? "[%s]:%s" : "%s:%s",
		         c->bind_host, me->port);
	rc = getaddrinfo(c->bind_host != NULL ? c->bind_host : me->host, me->port, &hints, &res);
	if (rc != 0) {
		fprintf(stderr, "bsp: rank %u: cannot listen on %s: %s\n", c->rank, where,
		        gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			err = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, BSP_RANKS_MAX) == 0)
			break;
		err = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		fprintf(stderr, "bsp: rank %u: cannot listen on %s: %s\n", c->rank, where,
		        strerror(err));
	return fd;
}

/* One connection attempt to ai, bounded by deadline. Returns the fd or -1 (errno). */
static int try_connect(const struct addrinfo *ai, mono_ns deadline)
{
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int err = 0, rc;
	socklen_t len = sizeof(err);

	if (fd < 0)
		return -1;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
		return fd;
	if (errno != EINPROGRESS)
		goto fail;
	rc = wait_fd(fd, POLLOUT, deadline);
	if (rc == 0)
		errno = ETIMEDOUT;
	if (rc <= 0)
		goto fail;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
		goto fail;
	if (err == 0)
		return fd;
	errno = err;
fail:
	err = errno;
	close(fd);
	errno = err;
	return -1;
}

/* Sleeps ns or until a stop signal. */
static void nap(uint64_t ns)
{
	struct timespec ts = ns_to_ts(ns);

	if (!app_stop)
		nanosleep(&ts, NULL);
}

static int connect_peer(struct bsp_net *n, const struct bsp_cfg *c, uint32_t j, mono_ns deadline)
{
	const struct bsp_addr *a = &c->peers[j];
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
	uint64_t backoff = BACKOFF_FIRST_NS;
	uint8_t hello[BSP_HELLO_SIZE];
	char where[BSP_HOST_MAX + 16];
	const char *diff;
	int fd = -1, err = 0;
	mono_ns now;

	addr_str(n, j, where, sizeof(where));
	while (fd < 0) {
		struct addrinfo *res = NULL;
		int rc = getaddrinfo(a->host, a->port, &hints, &res);

		if (rc != 0 && rc != EAI_AGAIN) {
			fprintf(stderr, "bsp: rank %u: cannot resolve rank %u's address %s: %s\n",
			        c->rank, j, where, gai_strerror(rc));
			return -1;
		}
		for (struct addrinfo *ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
			mono_ns t = mono_now() + CONNECT_TRY_NS;

			fd = try_connect(ai, mono_before(t, deadline) ? t : deadline);
			err = errno;
		}
		if (res != NULL)
			freeaddrinfo(res);
		if (fd >= 0)
			break;
		if (app_stop) {
			fprintf(stderr, "bsp: rank %u: interrupted while connecting\n", c->rank);
			return -1;
		}
		now = mono_now();
		if (!mono_before(now, deadline)) {
			fprintf(stderr,
			        "bsp: rank %u: cannot connect to rank %u at %s within %.1f s: %s\n",
			        c->rank, j, where, app_sec(c->connect_timeout_ns),
			        rc != 0 ? gai_strerror(rc) : strerror(err));
			return -1;
		}
		nap(mono_before(now + backoff, deadline) ? backoff : deadline - now);
		backoff = backoff * 2 > BACKOFF_MAX_NS ? BACKOFF_MAX_NS : backoff * 2;
	}

	hello_encode(c, hello);
	if (io_full(fd, hello, sizeof(hello), true, deadline) != 0 ||
	    io_full(fd, hello, sizeof(hello), false, deadline) != 0) {
		fprintf(stderr, "bsp: rank %u: no HELLO from rank %u at %s: %s\n", c->rank, j,
		        where, io_error(errno));
		close(fd);
		return -1;
	}
	if (get32(hello) != HELLO_MAGIC || get32(hello + 4) != j) {
		fprintf(stderr, "bsp: rank %u: %s is not bsp rank %u (check --peers)\n", c->rank,
		        where, j);
		close(fd);
		return -1;
	}
	diff = hello_mismatch(c, hello);
	if (diff != NULL) {
		fprintf(stderr, "bsp: rank %u: rank %u at %s runs with a different %s\n", c->rank,
		        j, where, diff);
		close(fd);
		return -1;
	}
	n->peers[j].fd = fd;
	return 0;
}

/*
 * Accepts one connection and identifies it. Returns 1 when a rank above us connected, 0
 * when the connection was not a usable bsp peer (ignored), -1 on a fatal error.
 */
static int accept_peer(struct bsp_net *n, const struct bsp_cfg *c, int lfd, mono_ns deadline)
{
	uint8_t hello[BSP_HELLO_SIZE];
	mono_ns hello_by = mono_now() + HELLO_WAIT_NS;
	const char *diff;
	uint32_t j;
	int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0) {
		if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED)
			return 0;
		fprintf(stderr, "bsp: rank %u: accept: %s\n", c->rank, strerror(errno));
		return -1;
	}
	if (io_full(fd, hello, sizeof(hello), false,
	            mono_before(hello_by, deadline) ? hello_by : deadline) != 0) {
		if (app_stop) {
			close(fd);
			return -1;
		}
		fprintf(stderr, "bsp: rank %u: warning: ignoring a connection without HELLO: %s\n",
		        c->rank, io_error(errno));
		close(fd);
		return 0;
	}
	j = get32(hello + 4);
	if (get32(hello) != HELLO_MAGIC || j <= c->rank || j >= c->nranks || n->peers[j].fd >= 0) {
		fprintf(stderr,
		        "bsp: rank %u: warning: ignoring a connection from a stranger "
		        "or a duplicate rank\n",
		        c->rank);
		close(fd);
		return 0;
	}
	/* answer first, so that a mismatch is seen (and named) on both sides */
	diff = hello_mismatch(c, hello);
	hello_encode(c, hello);
	if (io_full(fd, hello, sizeof(hello), true, deadline) != 0) {
		fprintf(stderr, "bsp: rank %u: cannot answer rank %u: %s\n", c->rank, j,
		        io_error(errno));
		close(fd);
		return -1;
	}
	if (diff != NULL) {
		fprintf(stderr, "bsp: rank %u: rank %u runs with a different %s\n", c->rank, j,
		        diff);
		close(fd);
		return -1;
	}
	n->peers[j].fd = fd;
	return 1;
}

int net_setup(struct bsp_net *n, const struct bsp_cfg *c)
{
	mono_ns deadline = mono_now() + c->connect_timeout_ns;
	uint32_t missing = c->nranks - 1 - c->rank;
	int lfd = -1, one = 1;

	*n = (struct bsp_net){
	    .rank = c->rank, .nranks = c->nranks, .addrs = c->peers, .timeout_ns = c->timeout_ns};
	n->peers = calloc(c->nranks, sizeof(*n->peers));
	n->buf = malloc(BSP_BUF);
	if (n->peers == NULL || n->buf == NULL) {
		fprintf(stderr, "bsp: rank %u: out of memory\n", c->rank);
		goto fail;
	}
	memset(n->buf, 0x5a, BSP_BUF);
	for (uint32_t j = 0; j < c->nranks; j++) {
		n->peers[j].fd = -1;
		n->peers[j].rank = j;
	}
	if (c->nranks == 1)
		return 0;
	if (missing > 0 || c->listen_fd >= 0) {
		lfd = listen_socket(n, c);
		if (lfd < 0)
			goto fail;
	}
	for (uint32_t j = 0; j < c->rank; j++)
		if (connect_peer(n, c, j, deadline) != 0)
			goto fail;
	while (missing > 0) {
		int rc = wait_fd(lfd, POLLIN, deadline);

		if (rc == 0) {
			char list[64] = "";
			size_t len = 0;

			for (uint32_t j = c->rank + 1; j < c->nranks && len + 12 < sizeof(list);
			     j++)
				if (n->peers[j].fd < 0)
					len += (size_t)snprintf(list + len, sizeof(list) - len,
					                        len ? ",%u" : "%u", j);
			fprintf(stderr, "bsp: rank %u: rank(s) %s did not connect within %.1f s\n",
			        c->rank, list, app_sec(c->connect_timeout_ns));
			goto fail;
		}
		if (rc < 0) {
			fprintf(stderr, "bsp: rank %u: interrupted while waiting for peers\n",
			        c->rank);
			goto fail;
		}
		rc = accept_peer(n, c, lfd, deadline);
		if (rc < 0)
			goto fail;
		missing -= (uint32_t)rc;
	}
	if (lfd >= 0)
		close(lfd);
	for (uint32_t j = 0; j < c->nranks; j++)
		if (n->peers[j].fd >= 0)
			setsockopt(n->peers[j].fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return 0;
fail:
	if (lfd >= 0)
		close(lfd);
	net_close(n);
	return -1;
}

static void hdr_encode(uint8_t *h, uint32_t seq, uint32_t flags, uint64_t len, uint64_t aux)
{
	put32(h + 0, MSG_MAGIC);
	put32(h + 4, seq);
	put32(h + 8, flags);
	put32(h + 12, 0);
	put64(h + 16, len);
	put64(h + 24, aux);
}

/* Sends what the socket takes of peer p's message. Returns 0 or -1 (message printed). */
static int send_some(struct bsp_net *n, struct bsp_peer *p, uint64_t msg)
{
	uint64_t total = BSP_HDR_SIZE + msg;
	char where[BSP_HOST_MAX + 16];

	while (p->out_done < total) {
		struct iovec iov[2];
		struct msghdr mh = {.msg_iov = iov};
		uint64_t pay = p->out_done < BSP_HDR_SIZE ? 0 : p->out_done - BSP_HDR_SIZE;
		uint64_t left = msg - pay;
		ssize_t k;

		if (p->out_done < BSP_HDR_SIZE) {
			iov[mh.msg_iovlen++] =
			    (struct iovec){p->hout + p->out_done, BSP_HDR_SIZE - p->out_done};
		}
		if (left > 0)
			iov[mh.msg_iovlen++] =
			    (struct iovec){n->buf, left < BSP_BUF ? (size_t)left : BSP_BUF};
		k = sendmsg(p->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return 0;
			fprintf(stderr,
			        "bsp: rank %u: lost rank %u (%s) in round %u: %s (it exited or was "
			        "killed?)\n",
			        n->rank, p->rank, addr_str(n, p->rank, where, sizeof(where)),
			        n->seq, strerror(errno));
			return -1;
		}
		p->out_done += (uint64_t)k;
	}
	n->msgs_sent++;
	n->bytes_sent += msg;
	return 0;
}

/*
 * Receives what is there of peer p's message (never more than this round's). Checks the
 * header as soon as it is complete. Returns 0 or -1 (message printed).
 */
static int recv_some(struct bsp_net *n, struct bsp_peer *p, uint64_t msg, uint32_t *flags_or,
                     uint64_t *aux0)
{
	uint64_t total = BSP_HDR_SIZE + msg;
	char where[BSP_HOST_MAX + 16];

	while (p->in_done < total) {
		ssize_t k;

		if (p->in_done < BSP_HDR_SIZE) {
			k = recv(p->fd, p->hin + p->in_done, BSP_HDR_SIZE - p->in_done, 0);
		} else {
			uint64_t left = total - p->in_done;

			k = recv(p->fd, n->buf, left < BSP_BUF ? (size_t)left : BSP_BUF, 0);
		}
		if (k == 0) {
			fprintf(stderr,
			        "bsp: rank %u: rank %u (%s) closed the connection in round %u "
			        "(it exited or was killed)\n",
			        n->rank, p->rank, addr_str(n, p->rank, where, sizeof(where)),
			        n->seq);
			return -1;
		}
		if (k < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return 0;
			fprintf(stderr,
			        "bsp: rank %u: lost rank %u (%s) in round %u: %s (it exited or was "
			        "killed?)\n",
			        n->rank, p->rank, addr_str(n, p->rank, where, sizeof(where)),
			        n->seq, strerror(errno));
			return -1;
		}
		if (p->in_done < BSP_HDR_SIZE && p->in_done + (uint64_t)k == BSP_HDR_SIZE) {
			uint32_t seq = get32(p->hin + 4);
			uint64_t len = get64(p->hin + 16);

			if (get32(p->hin) != MSG_MAGIC || seq != n->seq || len != msg) {
				fprintf(
				    stderr,
				    "bsp: rank %u: rank %u sent round %u with %llu bytes, expected "
				    "round %u with %llu (out of step)\n",
				    n->rank, p->rank, seq, (unsigned long long)len, n->seq,
				    (unsigned long long)msg);
				return -1;
			}
			*flags_or |= get32(p->hin + 8);
			if (p->rank == 0 && aux0 != NULL)
				*aux0 = get64(p->hin + 24);
		}
		p->in_done += (uint64_t)k;
	}
	n->msgs_recv++;
	n->bytes_recv += msg;
	return 0;
}

int net_exchange(struct bsp_net *n, uint64_t msg, uint32_t flags, uint64_t aux, uint32_t *flags_or,
                 uint64_t *aux0)
{
	uint64_t total = BSP_HDR_SIZE + msg;
	struct pollfd pf[BSP_RANKS_MAX];
	uint32_t idx[BSP_RANKS_MAX];
	mono_ns idle_until = mono_now() + n->timeout_ns;
	char where[BSP_HOST_MAX + 16];

	*flags_or = flags;
	if (n->rank == 0 && aux0 != NULL)
		*aux0 = aux;
	for (uint32_t j = 0; j < n->nranks; j++) {
		struct bsp_peer *p = &n->peers[j];

		p->out_done = p->in_done = 0;
		if (p->fd >= 0)
			hdr_encode(p->hout, n->seq, flags, msg, aux);
	}
	for (;;) {
		nfds_t np = 0;
		int rc;

		for (uint32_t j = 0; j < n->nranks; j++) {
			struct bsp_peer *p = &n->peers[j];
			short ev = (short)((p->out_done < total ? POLLOUT : 0) |
			                   (p->in_done < total ? POLLIN : 0));

			if (p->fd < 0 || ev == 0)
				continue;
			pf[np] = (struct pollfd){.fd = p->fd, .events = ev};
			idx[np++] = j;
		}
		if (np == 0)
			break;
		rc = poll(pf, np, ms_until(idle_until));
		if (rc < 0) {
			if (errno == EINTR && !app_stop)
				continue;
			fprintf(stderr, "bsp: rank %u: %s in round %u\n", n->rank,
			        errno == EINTR ? "interrupted" : strerror(errno), n->seq);
			return -1;
		}
		if (rc == 0) {
			uint32_t slow = idx[0];

			if (mono_before(mono_now(), idle_until))
				continue;
			for (nfds_t i = 0; i < np; i++)
				if (n->peers[idx[i]].in_done < total) {
					slow = idx[i]; /* one we are waiting to hear from */
					break;
				}
			fprintf(
			    stderr,
			    "bsp: rank %u: no progress with rank %u (%s) for %.1f s in round %u "
			    "(peer stopped or too slow? see --timeout)\n",
			    n->rank, slow, addr_str(n, slow, where, sizeof(where)),
			    app_sec(n->timeout_ns), n->seq);
			return -1;
		}
		for (nfds_t i = 0; i < np; i++) {
			struct bsp_peer *p = &n->peers[idx[i]];
			short re = pf[i].revents;

			if (re == 0)
				continue;
			/* an error or hang-up shows in recv/send, with its reason */
			if ((re & (POLLOUT | POLLERR | POLLHUP)) && p->out_done < total &&
			    send_some(n, p, msg) != 0)
				return -1;
			if ((re & (POLLIN | POLLERR | POLLHUP)) && p->in_done < total &&
			    recv_some(n, p, msg, flags_or, aux0) != 0)
				return -1;
		}
		idle_until = mono_now() + n->timeout_ns;
	}
	n->seq++;
	return 0;
}

void net_reset_counters(struct bsp_net *n)
{
	n->msgs_sent = n->msgs_recv = n->bytes_sent = n->bytes_recv = 0;
}

void net_close(struct bsp_net *n)
{
	if (n->peers != NULL)
		for (uint32_t j = 0; j < n->nranks; j++)
			if (n->peers[j].fd >= 0)
				close(n->peers[j].fd);
	free(n->peers);
	free(n->buf);
	n->peers = NULL;
	n->buf = NULL;
}
