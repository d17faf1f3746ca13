/*
 * libapprate's slow path: building and sending REGISTER, REPORT and BYTES messages, and
 * starting over in a forked child. Runs at most once per report interval, in whichever
 * application thread first sees the interval pass, and only while that thread holds the
 * report claim (next_due == APRT_BUSY), so the reporter state and the ZeroMQ socket are
 * never used by two threads at once. It may make a few non-blocking syscalls (getpid,
 * zmq_send); it never logs, never sleeps and never blocks.
 *
 * Registration policy: a REGISTER (job, rank, pid, interval) goes out before the first
 * REPORT, and again
 *   - in a forked child (new handle, its own pid: reason "fork"),
 *   - when the connection to the agent is (re-)established (ZeroMQ monitor: "reconnect"),
 *   - when an earlier REGISTER could not be sent ("retry"),
 *   - every APRT_REFRESH_NS (10 s) as a safety net for an agent that lost its table.
 * REGISTER is idempotent on the agent's side, so a duplicate is harmless.
 */
#include "apprate_int.h"
#include "timeutil.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

static void inc(_Atomic uint64_t *c, uint64_t v)
{
	/* Single writer (the claim holder): no locked instruction needed. */
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v,
	                      memory_order_relaxed);
}

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* A random non-zero 32-bit wire handle (getrandom, or a mix of pid, time and salt). */
uint32_t aprt_new_handle(const void *salt)
{
	uint32_t h = 0;
	if (getrandom(&h, sizeof(h), GRND_NONBLOCK) != (ssize_t)sizeof(h))
		h = (uint32_t)splitmix64((uint64_t)getpid() << 32 ^ mono_now() ^
		                         (uint64_t)(uintptr_t)salt);
	return h ? h : 1;
}

/*
 * Starts the handle over in a forked child: forget (never close) the parent's ZeroMQ
 * objects, take a new wire handle and pid, count from the units present now, and register
 * before the next report. Allocation-free; safe in a pthread_atfork child handler. Leaves
 * next_due alone: the caller holds the report claim, or sets it.
 */
void aprt_fork_reset(struct apprate *r, pid_t pid)
{
	uint64_t u, m, n;
	aprt_transport_abandon(r);
	aprt_sums(r, &u, &m, &n);
	r->pid = pid;
	r->handle = aprt_new_handle(r);
	r->seq = 0;
	r->last_units = u;
	r->last_mem = m;
	r->last_net = n;
	r->last_t = mono_now();
	r->last_register = 0;
	r->need_register = true;
	r->counted = false;
	r->reg_reason = APROTO_REG_FORK;
	memset(&r->c, 0, sizeof(r->c));
	atomic_store(&r->units_base, u);
	atomic_store(&r->st_handle, r->handle);
	atomic_store(&r->st_pid, (int32_t)pid);
}

static void send_register(struct apprate *r, uint64_t now)
{
	uint8_t buf[APROTO_REGISTER_MAX];
	struct aproto_register m = {.handle = r->handle,
	                            .rank = (uint32_t)r->rank,
	                            .pid = (uint32_t)r->pid,
	                            .interval_ns = r->interval_ns,
	                            .reason = r->reg_reason};
	memcpy(m.job, r->job, sizeof(m.job));
	int len = aproto_encode_register(&m, buf, sizeof(buf));
	if (len > 0 && aprt_transport_send(r, buf, (size_t)len) == 0) {
		inc(&r->c.registers_sent, 1);
		inc(&r->c.wire_bytes, (uint64_t)len);
		r->need_register = false;
		r->registered = true;
		r->last_register = now;
	} else {
		inc(&r->c.registers_dropped, 1);
		r->reg_reason = r->registered ? APROTO_REG_RETRY : r->reg_reason;
	}
}

/* Starts a new report interval at now, with sums u, m, n; discarded units are counted. */
static void restart_interval(struct apprate *r, uint64_t now, uint64_t u, uint64_t m, uint64_t n,
                             bool discard)
{
	if (discard)
		inc(&r->c.units_dropped, u - r->last_units);
	r->last_units = u;
	r->last_mem = m;
	r->last_net = n;
	r->last_t = now;
}

/* True until the handle counts its first unit or byte (since open or fork). */
static bool nothing_counted(struct apprate *r)
{
	uint64_t u, m, n;
	if (r->counted)
		return false;
	aprt_sums(r, &u, &m, &n);
	return u == r->last_units && m == r->last_mem && n == r->last_net;
}

/* aprt_report without a socket: lazily (re)open (in a forked child, or after a failed
 * open). A connection just started cannot carry anything yet: register and report from the
 * next interval on; the units wait, as for a dropped report. */
static int report_unconnected(struct apprate *r, bool force)
{
	uint64_t now, u, m, n;

	if (aprt_transport_open(r) == 0 && !r->need_register) {
		r->need_register = true;
		r->reg_reason = APROTO_REG_RECONNECT;
	}
	now = mono_now();
	uint64_t waited = now - r->last_t;
	bool due = force || (waited >= r->interval_ns && !nothing_counted(r));
	if (due) {
		inc(&r->c.reports_dropped, 1);
		r->seq++;
		if (waited >= APRT_CARRY_INTERVALS * r->interval_ns) {
			aprt_sums(r, &u, &m, &n);
			restart_interval(r, now, u, m, n, true);
		}
	}
	atomic_store_explicit(&r->next_due, now + r->interval_ns, memory_order_release);
	return due ? -ENOTCONN : 1;
}

/*
 * Called with the claim held (next_due == APRT_BUSY); releases it. Registers if needed, then,
 * if a full interval has passed since the previous report (or force), tries to send report
 * seq with any BYTES. Before the handle has counted its first unit only force sends a
 * report: a registered rank without units has no rate yet (not a rate of 0). Returns 0 if a report
 * was sent, a negative errno (-EAGAIN: no agent or agent slow; -ENOTCONN: no socket, or not
 * registered) if it was dropped, 1 if none was due.
 *
 * What a report covers: the units counted since the last report that was sent. If a report
 * is dropped, its units are carried into the next one (which then spans a longer interval,
 * so the rate stays right), unless the last sent report is more than APRT_CARRY_INTERVALS
 * intervals old: then the old units are discarded (counted in units_dropped) rather than
 * averaged into one stale report after an outage. seq counts every attempt, so a gap tells
 * the agent that attempts failed in between.
 */
int aprt_report(struct apprate *r, bool force, uint8_t flags)
{
	pid_t pid = getpid();
	if (pid != r->pid) /* forked without our atfork handler (raw clone) */
		aprt_fork_reset(r, pid);
	uint64_t now, u, m, n;
	if (!r->sock)
		return report_unconnected(r, force);
	now = mono_now();
	if (aprt_transport_events(r) && !r->need_register) {
		r->need_register = true;
		r->reg_reason = APROTO_REG_RECONNECT;
	}
	if (!r->need_register && now - r->last_register >= APRT_REFRESH_NS) {
		r->need_register = true;
		r->reg_reason = APROTO_REG_REFRESH;
	}
	if (r->need_register)
		send_register(r, now);

	uint64_t elapsed = now - r->last_t;
	if (!force && nothing_counted(r)) {
		/* No unit counted yet: the rank is registered but has no rate. Its first report
		 * covers the time since open (last_t is left alone), so its rate is right. */
		atomic_store_explicit(&r->next_due, now + r->interval_ns, memory_order_release);
		return 1;
	}
	r->counted = true;
	aprt_sums(r, &u, &m, &n);
	if (!force && elapsed < r->interval_ns) {
		/* Early: the coarse clock runs up to a tick behind. Keep "at most one report
		 * per interval" exact. */
		atomic_store_explicit(&r->next_due, r->last_t + r->interval_ns,
		                      memory_order_release);
		return 1;
	}

	struct aproto_report rep = {.flags = flags,
	                            .handle = r->handle,
	                            .rank = (uint32_t)r->rank,
	                            .seq = r->seq++,
	                            .units = u - r->last_units,
	                            .interval_ns = elapsed ? elapsed : 1};
	struct aproto_bytes by = {.handle = r->handle,
	                          .rank = (uint32_t)r->rank,
	                          .seq = rep.seq,
	                          .mem_bytes = m - r->last_mem,
	                          .net_bytes = n - r->last_net};
	uint8_t buf[APROTO_REPORT_SIZE];
	int rc = -ENOTCONN;
	int len = aproto_encode_report(&rep, buf, sizeof(buf));
	/* Not registered: the agent could not attribute the report; keep the units. */
	if (len > 0 && !r->need_register)
		rc = aprt_transport_send(r, buf, (size_t)len);
	bool restart = rc == 0, discard = false;
	if (rc == 0) {
		inc(&r->c.reports_sent, 1);
		inc(&r->c.units_reported, rep.units);
		inc(&r->c.wire_bytes, (uint64_t)len);
		if (by.mem_bytes || by.net_bytes) {
			len = aproto_encode_bytes(&by, buf, sizeof(buf));
			if (len > 0 && aprt_transport_send(r, buf, (size_t)len) == 0) {
				inc(&r->c.bytes_sent, 1);
				inc(&r->c.wire_bytes, (uint64_t)len);
			} else {
				inc(&r->c.bytes_dropped, 1);
			}
		}
	} else {
		inc(&r->c.reports_dropped, 1);
		/* The agent may have lost us: register again before the next report. */
		if (r->registered && !r->need_register) {
			r->need_register = true;
			r->reg_reason = APROTO_REG_RETRY;
		}
		if (elapsed >= APRT_CARRY_INTERVALS * r->interval_ns)
			restart = discard = true;
	}
	if (restart)
		restart_interval(r, now, u, m, n, discard);
	/* Invariant: next report no earlier than one interval after this one. */
	atomic_store_explicit(&r->next_due, now + r->interval_ns, memory_order_release);
	return rc;
}
