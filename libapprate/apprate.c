/*
 * libapprate: the public API, configuration, and the hot path.
 *
 * Hot path (apprate_progress/_iteration/_bytes) = a thread-local counter add + a coarse
 * clock check; no syscall, lock, locked instruction or allocation:
 *
 * 1. Counting. Each thread owns a cache-line slot in the handle, found through a one-entry
 *    thread-local cache (initial-exec TLS: one %fs-relative load). Only the owner stores to
 *    its slot, so the add is a plain load + store (relaxed atomics, ~0.3 ns) instead of a
 *    lock xadd (~6 ns here, and a shared line bouncing between CPUs with several threads).
 *    The reporter sums the slots; slot values only grow, so successive sums never go
 *    backwards and the units of all reports add up exactly to the units counted.
 *    Slots are released at thread exit (pthread key destructor) and reused; beyond
 *    APRT_SLOTS threads, the extra threads share one slot with fetch_add (correct, slower).
 *
 * 2. The clock check. Measured on the development VM (AMD EPYC under KVM, kvm-clock, HZ
 *    250), per call: rdtsc 10.8 ns, rdtscp 21 ns, clock_gettime(CLOCK_MONOTONIC) 25.6 ns
 *    (vDSO through pvclock), clock_gettime(CLOCK_MONOTONIC_COARSE) 3.1 ns (vDSO: reads the
 *    time of the last tick, no TSC). rdtsc alone would spend the 10 ns budget, so the check
 *    is "coarse now >= next_due", next_due being a CLOCK_MONOTONIC instant (both clocks
 *    share one time base, so no calibration is needed and TSC drift between vCPUs does
 *    not matter). The coarse clock lags by up to one tick (4 ms here): the slow path
 *    re-reads CLOCK_MONOTONIC and reports only when a full interval has passed, so
 *    reports are at most once per interval, at most a tick late.
 *    Fallback (APRT_CLOCK_COUNT): where the coarse clock is missing, coarser than a quarter
 *    of the interval, or not served by the vDSO (it then costs a syscall, detected at open
 *    by timing it), each thread reads CLOCK_MONOTONIC every N calls, N doubling while
 *    checks come faster than interval/16 and dividing by 4 when slower than interval/4
 *    (1 <= N <= APRT_EVERY_MAX). Its limit: if calls suddenly become rare, a report can be
 *    late by up to N calls.
 *
 * 3. Reporting. The thread that sees the interval pass claims the report by swapping
 *    next_due to APRT_BUSY (compare-and-swap: exactly one winner; the others see a
 *    not-yet-due time and go on), sends through ZeroMQ without blocking (report.c,
 *    transport.c), and publishes the next due time. Reports are driven by progress calls:
 *    an application that stops calling stops reporting (the agent sees the silence).
 *
 * Fork: a pthread_atfork child handler resets every open handle (new wire handle, the
 * child's pid, counting from the fork, slots of the parent's other threads released) and
 * makes the next call re-open ZeroMQ lazily and re-register; the parent's context and
 * sockets are never used or closed in the child. The slow path also compares getpid()
 * with the registered pid, for children made by a raw clone().
 */
#include "apprate_int.h"
#include "timeutil.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

int aprt_force_clock_mode = -1;

/* One-entry cache: this thread's slot in the handle it used last. */
struct aprt_tls {
	uint64_t id; /* handle id, 0 = empty */
	struct aprt_slot *slot;
	uint32_t token; /* this thread's owner token, 0 until first needed */
	bool key_set;
	int32_t countdown; /* APRT_CLOCK_COUNT: calls left before the next clock read */
	int32_t every;
	uint64_t last_check;
};
static __thread struct aprt_tls aprt_tls __attribute__((tls_model("initial-exec")));

/* Open handles, for thread-exit slot release and fork. */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct apprate *reg_head;
static pthread_once_t reg_once = PTHREAD_ONCE_INIT;
static pthread_key_t reg_key;
static bool reg_key_ok;
static _Atomic uint64_t next_id = 1;
static _Atomic uint32_t next_token = 1;

static void thread_exit(void *unused)
{
	uint32_t tok = aprt_tls.token;
	pthread_mutex_lock(&reg_lock);
	for (struct apprate *r = reg_head; r; r = r->next) {
		uint32_t n = atomic_load(&r->nslots);
		for (uint32_t i = 0; i < n; i++)
			if (atomic_load_explicit(&r->slots[i].owner, memory_order_relaxed) == tok)
				atomic_store_explicit(&r->slots[i].owner, 0, memory_order_release);
	}
	pthread_mutex_unlock(&reg_lock);
	aprt_tls.id = 0;
}

static void fork_prepare(void)
{
	pthread_mutex_lock(&reg_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&reg_lock);
}

/* In the child only this thread exists: release the other threads' slots, start over. */
static void fork_child(void)
{
	pid_t pid = getpid();
	for (struct apprate *r = reg_head; r; r = r->next) {
		uint32_t n = atomic_load(&r->nslots);
		for (uint32_t i = 0; i < n; i++)
			if (atomic_load(&r->slots[i].owner) != aprt_tls.token)
				atomic_store(&r->slots[i].owner, 0);
		aprt_fork_reset(r, pid);
		atomic_store(&r->next_due, 0); /* the next call opens ZeroMQ, to register soon */
	}
	pthread_mutex_unlock(&reg_lock);
}

static void reg_init(void)
{
	reg_key_ok = pthread_key_create(&reg_key, thread_exit) == 0;
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* On dlclose: no thread may call thread_exit once our code is unmapped. (glibc drops the
 * atfork handlers of an unloaded object by itself.) */
__attribute__((destructor)) static void aprt_fini(void)
{
	if (reg_key_ok)
		pthread_key_delete(reg_key);
}

void aprt_sums(struct apprate *r, uint64_t *units, uint64_t *mem, uint64_t *net)
{
	uint64_t u = atomic_load_explicit(&r->shared.units, memory_order_relaxed);
	uint64_t m = atomic_load_explicit(&r->shared.mem, memory_order_relaxed);
	uint64_t n = atomic_load_explicit(&r->shared.net, memory_order_relaxed);
	uint32_t k = atomic_load_explicit(&r->nslots, memory_order_acquire);
	for (uint32_t i = 0; i < k; i++) {
		u += atomic_load_explicit(&r->slots[i].units, memory_order_relaxed);
		m += atomic_load_explicit(&r->slots[i].mem, memory_order_relaxed);
		n += atomic_load_explicit(&r->slots[i].net, memory_order_relaxed);
	}
	*units = u;
	*mem = m;
	*net = n;
}

/* Cache miss: find or claim this thread's slot in r. Lock-free; never fails. */
__attribute__((noinline)) static struct aprt_slot *slot_lookup(struct apprate *r)
{
	struct aprt_tls *t = &aprt_tls;
	if (!t->token) {
		do
			t->token = atomic_fetch_add(&next_token, 1);
		while (t->token == 0);
	}
	if (!t->key_set && reg_key_ok)
		t->key_set = pthread_setspecific(reg_key, (void *)1) == 0;
	struct aprt_slot *s = NULL;
	uint32_t n = atomic_load_explicit(&r->nslots, memory_order_acquire);
	for (uint32_t i = 0; i < n && !s; i++)
		if (atomic_load_explicit(&r->slots[i].owner, memory_order_acquire) == t->token)
			s = &r->slots[i];
	for (uint32_t i = 0; i < APRT_SLOTS && !s; i++) {
		uint32_t free_owner = 0;
		if (atomic_compare_exchange_strong(&r->slots[i].owner, &free_owner, t->token)) {
			s = &r->slots[i];
			uint32_t k = atomic_load(&r->nslots);
			while (k < i + 1 && !atomic_compare_exchange_weak(&r->nslots, &k, i + 1))
				;
		}
	}
	if (!s)
		s = &r->shared;
	t->id = r->id;
	t->slot = s;
	t->countdown = 1;
	t->every = 1;
	return s;
}

static inline struct aprt_slot *slot_of(struct apprate *r)
{
	if (likely(aprt_tls.id == r->id))
		return aprt_tls.slot;
	return slot_lookup(r);
}

static inline void slot_add(struct aprt_slot *s, _Atomic uint64_t *c, uint64_t v)
{
	if (likely(!s->rmw))
		atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v,
		                      memory_order_relaxed);
	else
		atomic_fetch_add_explicit(c, v, memory_order_relaxed);
}

static inline uint64_t coarse_now(void)
{
#ifdef CLOCK_MONOTONIC_COARSE
	return clock_ns(CLOCK_MONOTONIC_COARSE);
#else
	return mono_now();
#endif
}

/* APRT_CLOCK_COUNT: read the precise clock every t->every calls, adapting every. */
__attribute__((noinline)) static uint64_t count_check(struct apprate *r)
{
	struct aprt_tls *t = &aprt_tls;
	uint64_t now = mono_now();
	uint64_t dt = now - t->last_check;
	t->last_check = now;
	if (dt < r->interval_ns / 16 && t->every < APRT_EVERY_MAX)
		t->every *= 2;
	else if (dt > r->interval_ns / 4)
		t->every = t->every / 4 > 1 ? t->every / 4 : 1;
	t->countdown = t->every;
	return now;
}

/* Slow path: the interval may have passed. Exactly one thread wins the claim. */
__attribute__((noinline)) static void report_due(struct apprate *r, uint64_t now)
{
	uint64_t due = atomic_load_explicit(&r->next_due, memory_order_acquire);
	if (now < due || !atomic_compare_exchange_strong(&r->next_due, &due, APRT_BUSY))
		return;
	aprt_report(r, false, 0);
}

static inline void check_clock(struct apprate *r)
{
	uint64_t now;
	if (likely(r->clock_mode == APRT_CLOCK_COARSE)) {
		now = coarse_now();
	} else {
		if (likely(--aprt_tls.countdown > 0))
			return;
		now = count_check(r);
	}
	if (unlikely(now >= atomic_load_explicit(&r->next_due, memory_order_relaxed)))
		report_due(r, now);
}

static inline int progress(apprate_t *r, uint64_t units)
{
	if (unlikely(!r))
		return -EINVAL;
	struct aprt_slot *s = slot_of(r);
	slot_add(s, &s->units, units);
	check_clock(r);
	return 0;
}

APPRATE_EXPORT int apprate_progress(apprate_t *r, uint64_t units)
{
	return progress(r, units);
}

APPRATE_EXPORT int apprate_iteration(apprate_t *r)
{
	return progress(r, 1);
}

APPRATE_EXPORT int apprate_bytes(apprate_t *r, uint64_t mem_bytes, uint64_t net_bytes)
{
	if (unlikely(!r))
		return -EINVAL;
	struct aprt_slot *s = slot_of(r);
	slot_add(s, &s->mem, mem_bytes);
	slot_add(s, &s->net, net_bytes);
	check_clock(r);
	return 0;
}

/* Takes the report claim whatever the due time; waits for another holder if wait. */
static bool claim_now(struct apprate *r, bool wait)
{
	for (int spins = 0;; spins++) {
		uint64_t due = atomic_load(&r->next_due);
		if (due != APRT_BUSY &&
		    atomic_compare_exchange_strong(&r->next_due, &due, APRT_BUSY))
			return true;
		if (!wait || spins > 20000) /* a holder never keeps it this long (~1 s) */
			return false;
		struct timespec ts = {0, 50000};
		nanosleep(&ts, NULL);
	}
}

/*
 * Runs the slow path at once, whatever the due time: sends a pending REGISTER if the
 * connection takes it, and a REPORT only if one is due (never before the first unit).
 * apprate_progress(r, 0) cannot promise this: its due check reads the coarse clock, which
 * shows a time before the open until the next tick (4 ms at HZ 250). Never blocks. Returns
 * aprt_report's result, or -EBUSY if another thread holds the report claim.
 */
int aprt_register_now(struct apprate *r)
{
	if (!claim_now(r, false))
		return -EBUSY;
	return aprt_report(r, false, 0);
}

APPRATE_EXPORT int apprate_flush(apprate_t *r)
{
	if (!r)
		return -EINVAL;
	if (!claim_now(r, false))
		return -EBUSY;
	int rc = aprt_report(r, true, 0);
	return rc < 0 ? -EAGAIN : 0;
}

APPRATE_EXPORT int apprate_stats(const apprate_t *cr, struct apprate_stats *st)
{
	if (!cr || !st)
		return -EINVAL;
	struct apprate *r = (struct apprate *)cr; /* aprt_sums only reads */
	uint64_t u, m, n;
	aprt_sums(r, &u, &m, &n);
	memset(st, 0, sizeof(*st));
	st->units = u - atomic_load(&r->units_base);
	st->units_reported = atomic_load(&r->c.units_reported);
	st->units_dropped = atomic_load(&r->c.units_dropped);
	st->reports_sent = atomic_load(&r->c.reports_sent);
	st->reports_dropped = atomic_load(&r->c.reports_dropped);
	st->registers_sent = atomic_load(&r->c.registers_sent);
	st->registers_dropped = atomic_load(&r->c.registers_dropped);
	st->bytes_sent = atomic_load(&r->c.bytes_sent);
	st->bytes_dropped = atomic_load(&r->c.bytes_dropped);
	st->wire_bytes = atomic_load(&r->c.wire_bytes);
	st->handle = atomic_load(&r->st_handle);
	st->pid = atomic_load(&r->st_pid);
	return 0;
}

/* Parses a whole decimal string in [lo, hi]; empty, trailing junk or out of range: -EINVAL. */
static int parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

static int configure(struct apprate *r, const char *job, const struct apprate_opts *opts)
{
	struct apprate_opts o = APPRATE_OPTS_INIT;
	if (opts)
		o = *opts;
	long v;

	if (!job)
		job = getenv("VSCHED_JOB");
	if (aproto_check_job(job))
		return -EINVAL;
	snprintf(r->job, sizeof(r->job), "%s", job);

	if (o.rank == APPRATE_RANK_ENV) {
		const char *e = getenv("VSCHED_RANK");
		if (e && *e) {
			if (parse_long(e, 0, INT32_MAX, &v))
				return -EINVAL;
			o.rank = (int)v;
		} else {
			o.rank = 0;
		}
	}
	if (o.rank < 0)
		return -EINVAL;
	r->rank = o.rank;

	if (o.report_ms == 0) {
		const char *e = getenv("VSCHED_REPORT_MS");
		if (e && *e) {
			if (parse_long(e, 1, APPRATE_REPORT_MS_MAX, &v))
				return -EINVAL;
			o.report_ms = (unsigned)v;
		} else {
			o.report_ms = APPRATE_DEFAULT_REPORT_MS;
		}
	}
	if (o.report_ms > APPRATE_REPORT_MS_MAX)
		return -EINVAL;
	r->interval_ns = (uint64_t)o.report_ms * NSEC_PER_MSEC;

	if (!o.endpoint) {
		const char *e = getenv("VSCHED_AGENT");
		o.endpoint = e && *e ? e : APPRATE_DEFAULT_ENDPOINT;
	}
	if (!*o.endpoint || strlen(o.endpoint) > 1024)
		return -EINVAL;
	r->endpoint = strdup(o.endpoint);
	return r->endpoint ? 0 : -ENOMEM;
}

/* Coarse clock if it is fine enough for the interval and served without a syscall. */
static int choose_clock(uint64_t interval_ns)
{
	if (aprt_force_clock_mode >= 0)
		return aprt_force_clock_mode;
#ifdef CLOCK_MONOTONIC_COARSE
	struct timespec res;
	if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) != 0 || ts_to_ns(&res) > interval_ns / 4)
		return APRT_CLOCK_COUNT;
	uint64_t best = UINT64_MAX;
	for (int k = 0; k < 3; k++) {
		uint64_t t0 = mono_now();
		for (int i = 0; i < 64; i++)
			(void)clock_ns(CLOCK_MONOTONIC_COARSE);
		uint64_t dt = mono_now() - t0;
		best = dt < best ? dt : best;
	}
	return best / 64 <= 40 ? APRT_CLOCK_COARSE : APRT_CLOCK_COUNT; /* a syscall is > 40 ns */
#else
	return APRT_CLOCK_COUNT;
#endif
}

APPRATE_EXPORT apprate_t *apprate_open(const char *job, const struct apprate_opts *opts)
{
	int rc;
	pthread_once(&reg_once, reg_init);
	struct apprate *r = aligned_alloc(64, sizeof(*r));
	if (!r) {
		errno = ENOMEM;
		return NULL;
	}
	memset(r, 0, sizeof(*r));
	r->shared.rmw = true;
	rc = configure(r, job, opts);
	if (rc)
		goto fail;
	r->id = atomic_fetch_add(&next_id, 1);
	r->clock_mode = choose_clock(r->interval_ns);
	r->pid = getpid();
	r->handle = aprt_new_handle(r);
	r->need_register = true;
	r->reg_reason = APROTO_REG_OPEN;
	r->last_t = mono_now();
	atomic_store(&r->st_handle, r->handle);
	atomic_store(&r->st_pid, (int32_t)r->pid);
	/* First call registers (the connection is usually up by then); reports follow every
	 * interval. */
	atomic_store(&r->next_due, r->last_t);
	rc = aprt_transport_open(r);
	if (rc)
		goto fail;
	pthread_mutex_lock(&reg_lock);
	r->next = reg_head;
	reg_head = r;
	pthread_mutex_unlock(&reg_lock);
	return r;
fail:
	free(r->endpoint);
	free(r);
	errno = -rc;
	return NULL;
}

APPRATE_EXPORT void apprate_close(apprate_t **rp)
{
	if (!rp || !*rp)
		return;
	struct apprate *r = *rp;
	*rp = NULL;
	pthread_mutex_lock(&reg_lock);
	for (struct apprate **pp = &reg_head; *pp; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			break;
		}
	pthread_mutex_unlock(&reg_lock);

	if (claim_now(r, true)) {
		if (getpid() != r->pid)
			aprt_fork_reset(r, getpid());
		uint64_t u, m, n;
		aprt_sums(r, &u, &m, &n);
		/* A handle that never counted a unit and never reported has no rate to end (a
		 * forked child that closes before exec does not even start ZeroMQ). */
		if (r->counted || u != r->last_units || m != r->last_mem || n != r->last_net) {
			if (!r->sock)
				aprt_transport_open(r);
			/* A connection younger than the linger may still be handshaking: give it
			 * the rest of the linger to come up, so the last report is not lost. */
			uint64_t age_ms = (mono_now() - r->opened_at) / NSEC_PER_MSEC;
			if (r->sock && age_ms < APRT_CLOSE_LINGER_MS)
				aprt_transport_wait_writable(r, APRT_CLOSE_LINGER_MS - (int)age_ms);
			aprt_report(r, true, APROTO_F_FINAL);
		}
	}
	aprt_transport_close(r, APRT_CLOSE_LINGER_MS);
	if (aprt_tls.id == r->id)
		aprt_tls.id = 0;
	free(r->endpoint);
	free(r);
}

APPRATE_EXPORT const char *apprate_strerror(int err)
{
	unsigned e = err < 0 ? 0u - (unsigned)err : (unsigned)err; /* no overflow at INT_MIN */
	switch (e) {
	case 0:
		return "success";
	case EINVAL:
		return "invalid argument (handle, job name, rank, report interval or endpoint)";
	case EPROTONOSUPPORT:
		return "endpoint transport not supported";
	case EAGAIN:
		return "report dropped: no agent connected, or the agent is not keeping up";
	case EBUSY:
		return "another thread is sending a report";
	case ENOMEM:
		return "out of memory";
	case EMFILE:
		return "too many open files or threads";
	case ENOTCONN:
		return "not connected to the agent";
	default: {
		const char *s = e <= INT_MAX ? strerrordesc_np((int)e) : NULL;
		return s ? s : "unknown error";
	}
	}
}
