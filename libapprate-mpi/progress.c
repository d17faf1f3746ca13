/*
 * libapprate-mpi's progress signal: turns the MPI calls the wrappers see into libapprate
 * units, in the mode VSCHED_PROGRESS selects (common/mpi_progress.h):
 *
 *   auto      every call (but polling ones, MPIFN_POLL) becomes a symbol = hash(function,
 *             call site) recorded in a ring (period.h). The ring is analysed after 32, 64,
 *             ... events, then every half window while no period is known (backing off to
 *             16 windows for programs without one). Once an anchor is found, the iterations
 *             already seen in the window are counted at once and every later per_iter-th
 *             occurrence of the anchor is one unit (per_iter: period.h). The anchor is checked
 * again every 8 windows of events, and at once when it has not been seen for 8 iterations' worth of
 * events (a new phase): it is kept while it still qualifies, else replaced (counting the new
 * anchor's occurrences since the old one's last) or dropped. mpi:F:N   one unit per N calls of F
 * (any thread). pcontrol  one unit per MPI_Pcontrol(1).
 *
 * The rank registers at MPI_Init; until the first unit, every call also calls
 * apprate_progress(r, 0), so that libapprate retries a REGISTER that could not be sent, all
 * without sending a rate: the controller knows the rank but shows "no progress signal yet".
 * Cost per call in auto mode: a hash, a store, a compare and, on the anchor,
 * apprate_iteration (~5 ns); bench/mpi_overhead.c measures it.
 *
 * Threads: with MPI_THREAD_MULTIPLE only the thread that initialised MPI feeds the period
 * finder (the ring has one writer); counting modes count every thread (apprate is
 * thread-safe). The library never prints except one line at MPI_Init when it cannot work
 * (bad VSCHED_PROGRESS, no VSCHED_JOB, libapprate refused its configuration), and, with
 * VSCHED_PROGRESS_DEBUG=1, one line each time auto adopts or loses a period.
 */
#include "mpiw.h"

#include <errno.h>
#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apprate.h"
#include "apprate_int.h"
#include "period.h"

#define FIRST_CHECK      32                   /* events before the first analysis */
#define CHECK_LOCKED     (8 * PERIOD_WINDOW)  /* events between checks of a known anchor */
#define CHECK_MAX        (16 * PERIOD_WINDOW) /* longest back-off without a period */
#define LOST_ITERATIONS  8                    /* anchor silent this long: a new phase? */
#define REGISTER_WAIT_MS 1000                 /* at MPI_Init, for the agent connection */

bool mpiw_on;
__thread int mpiw_depth __attribute__((tls_model("initial-exec")));
static __thread bool main_thread __attribute__((tls_model("initial-exec")));

static struct {
	bool initialised;
	struct mpiprog mode;
	apprate_t *r;
	bool counted;           /* a unit was counted: no more progress(0) calls */
	bool all_threads;       /* auto: not MPI_THREAD_MULTIPLE */
	_Atomic uint64_t calls; /* mpi:F:N */
	struct period *pd;      /* auto */
	uint32_t anchor;        /* 0: none */
	uint32_t per_iter;      /* anchor occurrences per iteration */
	uint32_t sub;           /* occurrences counted towards the next iteration */
	uint64_t last_anchor;   /* event index of the last anchor counted (+1), 0: none */
	uint64_t lost_after;    /* events without the anchor that trigger a check */
	uint64_t next_check;    /* event count of the next scheduled analysis */
	uint64_t due;           /* next analysis: min(next_check, anchor silent too long) */
	uint64_t backoff;       /* events between analyses while no period is known */
	bool debug;             /* VSCHED_PROGRESS_DEBUG=1: one line per anchor change */
	int rank;
} w;

/* One line on stderr: the only output of the library. */
static void warn(const char *what)
{
	fprintf(stderr, "vsched: libapprate-mpi: %s; no progress reported\n", what);
}

void mpiw_init(int provided)
{
	struct apprate_opts o = APPRATE_OPTS_INIT;
	char why[200];
	int rank = 0;

	if (w.initialised)
		return;
	w.initialised = true;
	if (mpiprog_parse(getenv("VSCHED_PROGRESS"), &w.mode, why, sizeof(why)) != 0) {
		warn(why);
		return;
	}
	if (getenv("VSCHED_JOB") == NULL || getenv("VSCHED_JOB")[0] == '\0') {
		warn("VSCHED_JOB is not set");
		return;
	}
	PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	o.rank = rank;
	w.rank = rank;
	w.debug =
	    getenv("VSCHED_PROGRESS_DEBUG") && strcmp(getenv("VSCHED_PROGRESS_DEBUG"), "1") == 0;
	w.r = apprate_open(NULL, &o);
	if (w.r == NULL) {
		snprintf(why, sizeof(why),
		         "libapprate: %s (VSCHED_JOB, VSCHED_AGENT, VSCHED_REPORT_MS)",
		         apprate_strerror(-errno));
		warn(why);
		return;
	}
	if (w.mode.kind == MPIPROG_AUTO) {
		w.pd = calloc(1, sizeof(*w.pd));
		if (w.pd == NULL) {
			warn("out of memory");
			apprate_close(&w.r);
			return;
		}
		w.next_check = w.due = FIRST_CHECK;
		w.backoff = PERIOD_WINDOW / 2;
	}
	w.all_threads = provided < MPI_THREAD_MULTIPLE;
	main_thread = true;
	/* Register now, so that the rank is known (and placed under its job's reservation)
	 * before it has a rate: wait for the connection, then send the REGISTER (no REPORT
	 * before the first unit) through aprt_register_now, not apprate_progress(r, 0), whose
	 * coarse clock check skips the slow path until the next tick: a short run may make
	 * all its MPI calls before it. Without the wait a REGISTER dropped here is retried
	 * only at the first MPI call one report interval later, which a short run may never
	 * make. The wait ends at once when no agent listens; it lasts up to REGISTER_WAIT_MS
	 * only while a reachable agent's handshake is slow (a starved machine: 100 ms proved
	 * too short). */
	aprt_transport_wait_writable(w.r, REGISTER_WAIT_MS);
	aprt_register_now(w.r);
	mpiw_on = true;
}

/* A symbol for (function, call site): never 0. */
static inline uint32_t symbol(unsigned fn, const void *site)
{
	uint64_t x = ((uint64_t)(uintptr_t)site ^ ((uint64_t)fn << 56)) * 0x9e3779b97f4a7c15ull;
	uint32_t s = (uint32_t)(x >> 32);
	return s ? s : 1;
}

static void count(uint64_t units)
{
	apprate_progress(w.r, units);
	w.counted = true;
}

/* The next analysis: the scheduled one, or earlier if the anchor stays silent from now. */
static inline void schedule(uint64_t now)
{
	uint64_t lost = now + w.lost_after;
	w.due = lost < w.next_check ? lost : w.next_check;
}

/* Auto mode: runs the period finder and adopts, keeps or drops the anchor. */
static void analyse(void)
{
	struct period *p = w.pd;
	struct period_found f;
	uint64_t since = w.last_anchor; /* occurrences not counted yet start here */

	if (period_find(p, w.anchor, since, &f)) {
		if (f.anchor != w.anchor) {
			if (w.debug)
				fprintf(stderr,
				        "vsched: libapprate-mpi: rank %d: period of %u calls "
				        "(anchor %u "
				        "times per period) at call %llu (%u%% of %u segments "
				        "alike), %llu "
				        "iterations counted at once\n",
				        w.rank, f.seglen, f.per_iter, (unsigned long long)p->n,
				        f.modal_pct, f.segments,
				        (unsigned long long)(f.occurrences / f.per_iter));
			if (f.occurrences >= f.per_iter)
				count(f.occurrences / f.per_iter);
			w.sub = (uint32_t)(f.occurrences % f.per_iter);
			w.per_iter = f.per_iter;
			w.anchor = f.anchor;
			w.last_anchor = f.last_at + 1;
		}
		w.lost_after = (uint64_t)LOST_ITERATIONS * f.seglen + 64;
		w.next_check = p->n + CHECK_LOCKED;
		w.backoff = PERIOD_WINDOW / 2;
		schedule(p->n);
		return;
	}
	if (w.debug && w.anchor != 0)
		fprintf(stderr, "vsched: libapprate-mpi: rank %d: period lost at call %llu\n",
		        w.rank, (unsigned long long)p->n);
	w.anchor = 0; /* a phase without a period: count nothing until one is found */
	w.next_check = p->n < PERIOD_WINDOW ? 2 * p->n : p->n + w.backoff;
	if (p->n >= PERIOD_WINDOW && w.backoff < CHECK_MAX)
		w.backoff *= 2;
	w.due = w.next_check;
}

static void event_auto(unsigned fn, const void *site)
{
	struct period *p = w.pd;
	uint32_t s;

	if (mpifn_info[fn].flags & MPIFN_POLL)
		return;
	if (!w.all_threads && !main_thread)
		return;
	s = symbol(fn, site);
	period_record(p, s);
	if (s == w.anchor) {
		w.last_anchor = p->n;
		schedule(p->n);
		if (++w.sub >= w.per_iter) {
			w.sub = 0;
			count(1);
		}
	} else if (!w.counted) {
		apprate_progress(w.r, 0);
	}
	if (mpiw_unlikely(p->n >= w.due))
		analyse();
}

void mpiw_event(unsigned fn, const void *site)
{
	switch (w.mode.kind) {
	case MPIPROG_AUTO:
		event_auto(fn, site);
		break;
	case MPIPROG_CALL:
		if ((int)fn == w.mode.fn &&
		    (w.mode.every == 1 ||
		     (atomic_fetch_add_explicit(&w.calls, 1, memory_order_relaxed) + 1) %
		             w.mode.every ==
		         0))
			count(1);
		else if (!w.counted)
			apprate_progress(w.r, 0);
		break;
	default: /* pcontrol: only MPI_Pcontrol(1) counts */
		if (!w.counted)
			apprate_progress(w.r, 0);
		break;
	}
}

void mpiw_pcontrol(int level, const void *site)
{
	if (w.mode.kind == MPIPROG_PCONTROL && level == 1)
		count(1);
	else
		mpiw_event(MPIFN_PCONTROL, site);
}

void mpiw_fini(void)
{
	if (!mpiw_on)
		return;
	mpiw_on = false;
	/* A short run may end before the scheduled analysis: look once more. */
	if (w.mode.kind == MPIPROG_AUTO && w.anchor == 0 && w.pd->n > 0)
		analyse();
	apprate_close(&w.r);
	free(w.pd);
	w.pd = NULL;
}
