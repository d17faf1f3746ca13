/*
 * Period finding: which symbol occurs once per iteration (model and limits in period.h and
 * docs/mpi.md).
 */
#include "period.h"

#include <stdlib.h>
#include <string.h>

#define MASK(x) ((x) & (PERIOD_WINDOW - 1))

struct window {
	const struct period *p;
	uint64_t base; /* event index of window position 0 */
	uint32_t m;    /* events in the window */
};

static uint32_t at(const struct window *w, uint32_t i)
{
	return w->p->ring[MASK(w->base + i)];
}

/* Counts every symbol of the window into p->tab; symbols beyond PERIOD_TABLE are ignored. */
static void count_symbols(struct period *p, const struct window *w)
{
	memset(p->tab, 0, sizeof(p->tab));
	for (uint32_t i = 0; i < w->m; i++) {
		uint32_t s = at(w, i);
		uint32_t h = (s * 0x9e3779b1u) >> 22; /* 10 bits: PERIOD_TABLE */
		for (uint32_t k = 0; k < PERIOD_TABLE; k++, h = (h + 1) & (PERIOD_TABLE - 1)) {
			struct period_sym *e = &p->tab[h];
			if (e->sym == s) {
				e->count++;
				break;
			}
			if (e->sym == 0) {
				*e = (struct period_sym){s, 1, i};
				break;
			}
		}
	}
}

static uint32_t count_of(const struct period *p, uint32_t s)
{
	uint32_t h = (s * 0x9e3779b1u) >> 22;
	for (uint32_t k = 0; k < PERIOD_TABLE; k++, h = (h + 1) & (PERIOD_TABLE - 1)) {
		if (p->tab[h].sym == s)
			return p->tab[h].count;
		if (p->tab[h].sym == 0)
			return 0;
	}
	return 0;
}

/* per_iter = 1: the share of segments equal to the most common one (majority vote). */
static uint32_t modal_share(const struct period *p, uint32_t nseg, uint32_t *len)
{
	uint32_t cand = 0, votes = 0, modal = 0;

	for (uint32_t k = 0; k < nseg; k++) { /* Boyer-Moore majority vote */
		if (votes == 0) {
			cand = k;
			votes = 1;
		} else {
			votes += p->seg_hash[k] == p->seg_hash[cand] ? 1 : -1u;
		}
	}
	for (uint32_t k = 0; k < nseg; k++)
		if (p->seg_hash[k] == p->seg_hash[cand]) {
			modal++;
			*len = p->seg_len[k];
		}
	return (uint32_t)((uint64_t)modal * 100 / nseg);
}

/* per_iter = q >= 2: the share of segments equal to the one q before; *len the events of
 * q segments that repeat. */
static uint32_t lag_share(const struct period *p, uint32_t nseg, uint32_t q, uint32_t *len)
{
	uint32_t same = 0;

	for (uint32_t k = q; k < nseg; k++)
		if (p->seg_hash[k] == p->seg_hash[k - q]) {
			same++;
			if (k >= 2 * q && p->seg_hash[k - q] == p->seg_hash[k - 2 * q]) {
				*len = 0;
				for (uint32_t i = k - q + 1; i <= k; i++)
					*len += p->seg_len[i];
			}
		}
	return (uint32_t)((uint64_t)same * 100 / (nseg - q));
}

/*
 * Cuts the window at every occurrence of anchor and judges the segments (see period.h).
 * Returns true with *f filled when anchor qualifies.
 */
static bool test_anchor(struct period *p, const struct window *w, uint32_t anchor, uint64_t since,
                        struct period_found *f)
{
	uint32_t nseg = 0, len = 0, share = 0, q;
	uint64_t h = 0, occ = 0, last = 0;
	bool started = false;

	for (uint32_t i = 0; i < w->m; i++) {
		uint32_t s = at(w, i);
		if (s == anchor) {
			if (started) {
				p->seg_hash[nseg] = h;
				p->seg_len[nseg++] = len;
			}
			started = true;
			h = 1469598103934665603ull;
			len = 0;
			last = w->base + i;
			occ += last >= since;
		}
		h = (h ^ s) * 1099511628211ull; /* FNV-1a over the segment's symbols */
		len++;
	}
	for (q = 1; q <= PERIOD_MAX_PER_ITER; q++) {
		if (nseg < PERIOD_MIN_SEGMENTS * q)
			return false;
		share = q == 1 ? modal_share(p, nseg, &len) : lag_share(p, nseg, q, &len);
		if (share >= PERIOD_MODAL_PCT)
			break;
	}
	if (q > PERIOD_MAX_PER_ITER)
		return false;
	*f = (struct period_found){.anchor = anchor,
	                           .per_iter = q,
	                           .seglen = len,
	                           .segments = nseg,
	                           .modal_pct = share,
	                           .occurrences = occ,
	                           .last_at = last};
	return true;
}

/* Most frequent first; among equals, the earliest first occurrence. */
static int by_count(const void *a, const void *b, void *ctx)
{
	const struct period *p = ctx;
	const struct period_sym *x = &p->tab[*(const uint32_t *)a];
	const struct period_sym *y = &p->tab[*(const uint32_t *)b];
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

bool period_find(struct period *p, uint32_t prefer, uint64_t since, struct period_found *f)
{
	struct window w = {p, 0, 0};
	uint32_t nc = 0, tests = 0, last_count = 0, same = 0;

	w.m = p->n < PERIOD_WINDOW ? (uint32_t)p->n : PERIOD_WINDOW;
	w.base = p->n - w.m;
	count_symbols(p, &w);
	if (prefer != 0 && count_of(p, prefer) > PERIOD_MIN_SEGMENTS &&
	    test_anchor(p, &w, prefer, since, f))
		return true;
	for (uint32_t i = 0; i < PERIOD_TABLE; i++)
		if (p->tab[i].sym != 0 && p->tab[i].count > PERIOD_MIN_SEGMENTS)
			p->cand[nc++] = i;
	qsort_r(p->cand, nc, sizeof(p->cand[0]), by_count, p);
	for (uint32_t k = 0; k < nc && tests < PERIOD_MAX_TESTS; k++) {
		const struct period_sym *c = &p->tab[p->cand[k]];
		/* Symbols of one loop share a count and all pass or fail alike: two tests per
		 * count leave room for the next, longer period. */
		same = c->count == last_count ? same + 1 : 0;
		last_count = c->count;
		if (same >= 2)
			continue;
		tests++;
		if (test_anchor(p, &w, c->sym, since, f))
			return true;
	}
	return false;
}
