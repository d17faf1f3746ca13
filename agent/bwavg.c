/*
 * Sliding-window bandwidth averages, as MemBUS (paper 000, Sect. 4, Fig. 3) predicts a
 * process's demand: the figure is the mean of the rates of the last w windows of length q,
 * (1/w) * sum_{k=1..w} BW^{-k}. Fewer than w windows seen: the mean of those there are.
 * Pure code, no I/O.
 */
#include "agent.h"

#include <string.h>

void bwavg_init(struct bwavg *b, unsigned w)
{
	memset(b, 0, sizeof(*b));
	if (w < 1)
		w = 1;
	if (w > AGENT_WMAX)
		w = AGENT_WMAX;
	b->w = w;
}

void bwavg_push_delta(struct bwavg *b, uint64_t bytes, uint64_t dt)
{
	if (dt == 0)
		return;
	b->rate[b->head] = (double)bytes * (double)NSEC_PER_SEC / (double)dt;
	b->head = (b->head + 1) % b->w;
	if (b->n < b->w)
		b->n++;
}

int bwavg_push_counter(struct bwavg *b, uint64_t counter, mono_ns t)
{
	int added = 0;

	/* Windows need a previous sample, strictly earlier, and a counter that did not reset. */
	if (b->primed && mono_before(b->last_t, t) && counter >= b->last) {
		bwavg_push_delta(b, counter - b->last, t - b->last_t);
		added = 1;
	}
	b->last = counter;
	b->last_t = t;
	b->primed = true;
	return added;
}

double bwavg_rate(const struct bwavg *b)
{
	double sum = 0;

	if (b->n == 0)
		return 0;
	for (unsigned i = 0; i < b->n; i++)
		sum += b->rate[i];
	return sum / b->n;
}
