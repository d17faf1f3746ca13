/*
 * Period finding over a sequence of symbols (one per MPI call: function and call site):
 * which symbol marks the application's iteration. Pure (no MPI, no clock, no I/O), so it is
 * unit-tested on synthetic sequences (tests/unit/test_mpi_period.c).
 *
 * Model: the main loop makes the same sequence of calls each iteration, so a symbol that
 * occurs once per iteration (the *anchor*) cuts the recent history into segments that are
 * identical. Calls outside the loop's regular pattern (output every k iterations, a
 * checkpoint) make some segments differ; a candidate is accepted when at least
 * PERIOD_MODAL_PCT % of its segments are one and the same sequence (and there are at least
 * PERIOD_MIN_SEGMENTS of them). Among accepted candidates the one that occurs most often,
 * i.e. the shortest period, wins.
 *
 * A symbol called k times per iteration (a halo-exchange loop over neighbours: the same
 * call sites twice per step, once per direction) cuts the iteration into k segments of
 * different kinds (A B A B ...): no single kind reaches 75 %. Such a candidate is accepted
 * with k = q occurrences per iteration when, for the smallest q in 2..PERIOD_MAX_PER_ITER,
 * at least PERIOD_MODAL_PCT % of its segments equal the segment q before them (an odd
 * segment breaks two comparisons) and the window holds PERIOD_MIN_SEGMENTS iterations.
 *
 * Cost: period_record is one store; period_find is O(window) per candidate tested, at most
 * PERIOD_MAX_TESTS candidates (two per distinct occurrence count), ~50-100 us for a full
 * window on the development VM. It runs seldom (see libapprate-mpi/progress.c).
 */
#ifndef PERIOD_H
#define PERIOD_H

#include <stdbool.h>
#include <stdint.h>

#define PERIOD_WINDOW       4096 /* events analysed, a power of two */
#define PERIOD_TABLE        1024 /* distinct symbols tracked per analysis, a power of two */
#define PERIOD_MIN_SEGMENTS 4    /* repetitions needed before a period is believed */
#define PERIOD_MODAL_PCT    75   /* share of segments that must be identical */
#define PERIOD_MAX_TESTS    12   /* candidates tested per analysis */
#define PERIOD_MAX_PER_ITER 8    /* most anchor occurrences per iteration */

struct period_sym {
	uint32_t sym; /* 0 = free slot */
	uint32_t count;
	uint32_t first; /* window position of the first occurrence */
};

struct period {
	uint64_t n; /* events recorded so far */
	uint32_t ring[PERIOD_WINDOW];
	/* scratch of period_find */
	struct period_sym tab[PERIOD_TABLE];
	uint32_t cand[PERIOD_TABLE];
	uint64_t seg_hash[PERIOD_WINDOW];
	uint32_t seg_len[PERIOD_WINDOW];
};

struct period_found {
	uint32_t anchor;      /* the symbol that marks the iteration */
	uint32_t per_iter;    /* anchor occurrences per iteration (1..PERIOD_MAX_PER_ITER) */
	uint32_t seglen;      /* events per iteration */
	uint32_t segments;    /* segments in the window */
	uint32_t modal_pct;   /* of which alike (per_iter 1: the modal one; else lag per_iter), % */
	uint64_t occurrences; /* anchor occurrences in the window at event index >= since */
	uint64_t last_at;     /* event index of the anchor's last occurrence */
};

/* Records one event; sym must not be 0. */
static inline void period_record(struct period *p, uint32_t sym)
{
	p->ring[p->n++ & (PERIOD_WINDOW - 1)] = sym;
}

/*
 * Looks for the iteration in the last min(n, PERIOD_WINDOW) events. If prefer is not 0 it is
 * tested first and kept when it still qualifies (so a locked anchor does not flip to an
 * equivalent symbol). Returns true with *f filled; false if no symbol qualifies (f
 * untouched). occurrences counts the anchor's occurrences at event indices >= since.
 */
bool period_find(struct period *p, uint32_t prefer, uint64_t since, struct period_found *f);

#endif
