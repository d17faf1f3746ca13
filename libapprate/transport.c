/*
 * libapprate's ZeroMQ side: one context and one PUSH socket per handle, connected to the
 * agent's PULL socket, plus a monitor that tells us when the connection is (re)established
 * so that we re-register at once.
 *
 * Socket options and why:
 *   ZMQ_IMMEDIATE 1     messages are queued only on a completed connection: with no agent,
 *                       zmq_send fails at once (EAGAIN) and nothing piles up;
 *   ZMQ_SNDHWM 16       a slow agent makes sends fail after 16 queued messages;
 *   ZMQ_SNDBUF 4096     ... and after a few kB in the kernel, so queued reports stay fresh;
 *   ZMQ_LINGER 0        closing never waits (apprate_close raises it to 100 ms to flush);
 *   reconnect 100 ms, backing off to 1 s while no agent listens.
 * Every send uses ZMQ_DONTWAIT. Nothing here logs: failures are counted by the caller.
 *
 * Fork: a child must neither use nor close the parent's context and sockets (their I/O
 * thread does not exist in the child; zmq_close would wait for it). aprt_transport_abandon
 * forgets them; their memory is kept reachable in orphans[] and never freed.
 */
#include "apprate_int.h"
#include <sched.h>
#include "timeutil.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <zmq.h>

#define MONITOR_EP "inproc://apprate-monitor" /* inproc names are per context */

static void *orphans[16];
static unsigned norphans;

/* zmq's own error codes mapped to system ones, as negative errno. */
static int zerr(void)
{
	int e = zmq_errno();
	if (e == ENOCOMPATPROTO)
		return -EPROTONOSUPPORT;
	if (e == EMTHREAD)
		return -EMFILE;
	if (e == ETERM)
		return -ESHUTDOWN;
	if (e <= 0 || e >= ZMQ_HAUSNUMERO)
		return -EIO;
	return -e;
}

static int setopt_int(void *s, int opt, int v)
{
	return zmq_setsockopt(s, opt, &v, sizeof(v));
}

/* aprt_transport_open in the calling thread. */
static int open_here(struct apprate *r)
{
	int rc;
	void *ctx = zmq_ctx_new(), *sock = NULL, *mon = NULL;
	if (!ctx)
		return zerr();
	zmq_ctx_set(ctx, ZMQ_IO_THREADS, 1);
	sock = zmq_socket(ctx, ZMQ_PUSH);
	if (!sock)
		goto fail;
	if (setopt_int(sock, ZMQ_LINGER, 0) || setopt_int(sock, ZMQ_IMMEDIATE, 1) ||
	    setopt_int(sock, ZMQ_SNDHWM, APRT_SNDHWM) ||
	    setopt_int(sock, ZMQ_SNDBUF, APRT_SNDBUF) || setopt_int(sock, ZMQ_RECONNECT_IVL, 100) ||
	    setopt_int(sock, ZMQ_RECONNECT_IVL_MAX, 1000))
		goto fail;
	/* The monitor is a convenience (prompt re-registration); without it we still
	 * re-register after failed sends and every APRT_REFRESH_NS. */
	if (zmq_socket_monitor(sock, MONITOR_EP,
	                       ZMQ_EVENT_CONNECTED | ZMQ_EVENT_CONNECT_RETRIED |
	                           ZMQ_EVENT_DISCONNECTED) == 0) {
		mon = zmq_socket(ctx, ZMQ_PAIR);
		if (mon && (setopt_int(mon, ZMQ_LINGER, 0) || zmq_connect(mon, MONITOR_EP))) {
			zmq_close(mon);
			mon = NULL;
		}
		if (!mon)
			zmq_socket_monitor(sock, NULL, 0);
	}
	if (zmq_connect(sock, r->endpoint) != 0)
		goto fail;
	r->ctx = ctx;
	r->sock = sock;
	r->mon = mon;
	r->registered = false;
	r->link = APRT_LINK_UNKNOWN;
	r->opened_at = mono_now();
	return 0;
fail:
	rc = zerr();
	if (mon) {
		zmq_socket_monitor(sock, NULL, 0);
		zmq_close(mon);
	}
	if (sock)
		zmq_close(sock);
	zmq_ctx_term(ctx);
	return rc;
}

struct open_call {
	struct apprate *r;
	int rc;
};

static void *open_thread(void *arg)
{
	struct open_call *c = arg;

	c->rc = open_here(c->r);
	return NULL;
}

/*
 * ZeroMQ starts its I/O and reaper threads at the first zmq_socket, and each new thread
 * reads its own policy and priority (glibc: two syscalls) and sets them back, aborting the
 * process if that fails. Under vsched, which switches the policy of every thread of a
 * managed process, the two reads can straddle a switch (priority 98 with SCHED_OTHER:
 * EINVAL; a CI run saw `bsp` abort in src/thread.cpp so), and an unprivileged thread read
 * as SCHED_FIFO but demoted meanwhile gets EPERM. A thread created with explicit
 * attributes has them cached by glibc, and so have the threads it creates: the sockets are
 * therefore made in a short-lived thread with explicit SCHED_OTHER priority 0, a pair
 * every thread may set. vsched gives the new threads the process's policy at its next
 * dispatch, as for any thread the application starts. Without such a thread (pthread
 * refused it), the sockets are made here, as before.
 */
int aprt_transport_open(struct apprate *r)
{
	struct open_call c = {.r = r, .rc = -EIO};
	struct sched_param sp = {.sched_priority = 0};
	pthread_attr_t at;
	pthread_t t;
	bool done = false;

	if (pthread_attr_init(&at) == 0) {
		if (pthread_attr_setinheritsched(&at, PTHREAD_EXPLICIT_SCHED) == 0 &&
		    pthread_attr_setschedpolicy(&at, SCHED_OTHER) == 0 &&
		    pthread_attr_setschedparam(&at, &sp) == 0 &&
		    pthread_create(&t, &at, open_thread, &c) == 0)
			done = pthread_join(t, NULL) == 0;
		pthread_attr_destroy(&at);
	}
	return done ? c.rc : open_here(r);
}

void aprt_transport_close(struct apprate *r, int linger_ms)
{
	if (!r->ctx)
		return;
	if (r->mon) {
		zmq_socket_monitor(r->sock, NULL, 0);
		zmq_close(r->mon);
	}
	setopt_int(r->sock, ZMQ_LINGER, linger_ms);
	zmq_close(r->sock);
	zmq_ctx_term(r->ctx); /* waits for the linger at most */
	r->ctx = r->sock = r->mon = NULL;
}

void aprt_transport_abandon(struct apprate *r)
{
	if (r->ctx)
		orphans[norphans++ % (sizeof(orphans) / sizeof(orphans[0]))] = r->ctx;
	r->ctx = r->sock = r->mon = NULL;
	r->registered = false;
}

int aprt_transport_send(struct apprate *r, const uint8_t *buf, size_t len)
{
	if (!r->sock)
		return -ENOTCONN;
	if (zmq_send(r->sock, buf, len, ZMQ_DONTWAIT) != (int)len)
		return zerr();
	/*
	 * The frame is now queued for ZeroMQ's I/O thread. Under vsched every thread of the
	 * process runs at the same real-time priority on one CPU, so a caller that goes on
	 * computing would keep the I/O thread from ever writing the frame. Yielding once (one
	 * syscall per report interval, never on the hot path) lets it run now.
	 */
	sched_yield();
	return 0;
}

/*
 * Drains the monitor, updating r->link. Returns true if a connection was established since
 * the last call (the agent may be new: register again).
 */
bool aprt_transport_events(struct apprate *r)
{
	bool connected = false;
	if (!r->mon)
		return false;
	for (int i = 0; i < 64; i++) {
		zmq_msg_t msg;
		zmq_msg_init(&msg);
		if (zmq_msg_recv(&msg, r->mon, ZMQ_DONTWAIT) < 0) {
			zmq_msg_close(&msg);
			break;
		}
		/* Frame 1: u16 event, u32 value; frame 2: the endpoint. */
		if (zmq_msg_size(&msg) >= 2) {
			uint16_t ev;
			memcpy(&ev, zmq_msg_data(&msg), sizeof(ev));
			if (ev == ZMQ_EVENT_CONNECTED) {
				connected = true;
				r->link = APRT_LINK_UP;
			} else if (ev == ZMQ_EVENT_CONNECT_RETRIED ||
			           ev == ZMQ_EVENT_DISCONNECTED) {
				r->link = APRT_LINK_DOWN;
			}
		}
		bool more = zmq_msg_more(&msg);
		zmq_msg_close(&msg);
		if (more) {
			zmq_msg_init(&msg);
			zmq_msg_recv(&msg, r->mon, ZMQ_DONTWAIT);
			zmq_msg_close(&msg);
		}
	}
	return connected;
}

/*
 * Waits up to timeout_ms for the socket to accept a message (the connection to the agent
 * has completed its handshake), giving up at once when the monitor says no agent listens.
 * Used by apprate_close, on a connection opened moments before, and by libapprate-mpi at
 * MPI_Init (to register before the rank's first MPI call): the only places where the
 * library may wait.
 */
bool aprt_transport_wait_writable(struct apprate *r, int timeout_ms)
{
	if (!r->sock)
		return false;
	uint64_t deadline = mono_now() + (uint64_t)timeout_ms * NSEC_PER_MSEC;
	for (;;) {
		aprt_transport_events(r);
		if (r->link == APRT_LINK_DOWN)
			return false;
		uint64_t now = mono_now();
		if (now >= deadline)
			return false;
		zmq_pollitem_t it[2] = {{.socket = r->sock, .events = ZMQ_POLLOUT},
		                        {.socket = r->mon, .events = ZMQ_POLLIN}};
		int left_ms = (int)((deadline - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC);
		if (zmq_poll(it, r->mon ? 2 : 1, left_ms) < 0)
			return false;
		if (it[0].revents & ZMQ_POLLOUT)
			return true;
	}
}
