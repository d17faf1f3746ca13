/*
 * The event loop: one thread, one zmq_poll over the agents' and the administrators'
 * sockets and the ZAP handler's (auth.c). A turn reads what is waiting, runs the timers, and ends
 * with the flush of what the turn decided to say: the nodes' outboxes, then the state file, then
 * the replies (loop_end_turn: the durability contract of persist.c). Between turns the loop sleeps
 * until the earliest deadline any module has (a node's timeout, an acknowledgement's, the
 * planner's, a state write's retry, the dashboard's next frame) or until a message comes,
 * like Redis's ae.c, or a signal (the wake-up pipe of sigutil.h); it never wakes for nothing.
 */
#include "controller.h"

#include <errno.h>
#include <zmq.h>

#include "log.h"
#include "sigutil.h"

void loop_timers(struct ctld *d, mono_ns now)
{
	nodes_tick(d, now);
	txn_tick(d, now);
	capacity_tick(d, now);
	silence_tick(d, now);
	if (d->cfg.cs.on)
		cosched_tick(d, now);
}

void loop_end_turn(struct ctld *d, mono_ns now)
{
	agents_flush(d, now);
	persist_commit(d, now);
	admin_flush(d);
}

/* The earlier of two deadlines, 0 meaning none. */
static mono_ns earliest(mono_ns a, mono_ns b)
{
	if (a == 0)
		return b;
	if (b == 0)
		return a;
	return mono_min(a, b);
}

mono_ns loop_next_deadline(const struct ctld *d)
{
	mono_ns next = earliest(nodes_next(d), txn_next(d));

	next = earliest(next, persist_next(d));
	next = earliest(next, capacity_next(d));
	next = earliest(next, silence_next(d));
	if (d->cfg.cs.on)
		next = earliest(next, cosched_next(d));
	if (d->dashboard)
		next = earliest(next, d->dash_at ? d->dash_at : 1);
	return next;
}

/* Milliseconds zmq_poll may sleep until deadline (0: none, sleep until a message). */
static long poll_timeout(mono_ns deadline, mono_ns now)
{
	if (deadline == 0)
		return -1;
	if (!mono_before(now, deadline))
		return 0;
	return (long)((deadline - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC);
}

void loop_run(struct ctld *d, const volatile sig_atomic_t *quit, volatile sig_atomic_t *reload,
              int wakefd)
{
	while (!*quit) {
		/* auth.c's sockets may be absent (NULL): then fd -1, which poll ignores */
		zmq_pollitem_t items[6] = {
		    {.socket = d->agents, .events = ZMQ_POLLIN},
		    {.socket = d->admin, .events = ZMQ_POLLIN},
		    {.socket = d->auth.zap, .fd = -1, .events = ZMQ_POLLIN},
		    {.socket = d->auth.mon[0], .fd = -1, .events = ZMQ_POLLIN},
		    {.socket = d->auth.mon[1], .fd = -1, .events = ZMQ_POLLIN},
		    {.fd = wakefd, .events = ZMQ_POLLIN},
		};
		mono_ns now = mono_now();
		int n = zmq_poll(items, 6, poll_timeout(loop_next_deadline(d), now));

		if (n < 0 && zmq_errno() != EINTR)
			fatalx("zmq_poll: %s", zmq_strerror(zmq_errno()));
		/* drained before the flags are read: a signal after this wakes the next poll */
		sig_wake_drain();
		now = mono_now();
		if (*reload) {
			*reload = 0;
			auth_reload(d);
		}
		/* handshakes first: a client waits for them before it can send anything */
		if (n > 0 && (items[2].revents & ZMQ_POLLIN))
			auth_zap_recv(d, now);
		for (int k = 0; k < 2; k++)
			if (n > 0 && (items[3 + k].revents & ZMQ_POLLIN))
				auth_monitor_recv(d, k, now);
		if (n > 0 && (items[0].revents & ZMQ_POLLIN))
			agents_recv(d, now);
		if (n > 0 && (items[1].revents & ZMQ_POLLIN))
			admin_recv(d, now);
		loop_timers(d, now);
		loop_end_turn(d, now);
		if (d->dashboard && !mono_before(now, d->dash_at)) {
			listing_dashboard(d, stdout, now);
			d->dash_at = now + d->cfg.dashboard_interval;
		}
	}
}
