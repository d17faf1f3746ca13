/*
 * Iteration stamps: the application's own record of when each iteration ended, for judging
 * a controller from the application's side (bench/, tests). One line per iteration,
 * "ITERATION MONOTONIC_NS", buffered in memory and written at most once a second (and at the
 * end), so that recording costs no system call per iteration. CLOCK_MONOTONIC is the clock
 * of every process on the machine, so the stamps of several programs line up.
 */
#include "apps.h"

#include <stdio.h>
#include <stdlib.h>

#define STAMPS_BUF 4096 /* stamps held before a write */

struct stamps {
	FILE *f;
	uint64_t n;
	uint64_t buf[STAMPS_BUF][2];
	uint32_t used;
	uint64_t flushed_at; /* ns */
};

struct stamps *stamps_open(const char *path)
{
	struct stamps *s;

	if (!path)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		app_fail("--stamps: out of memory");
	s->f = fopen(path, "w");
	if (!s->f)
		app_fail("--stamps %s: cannot create", path);
	return s;
}

static void stamps_flush(struct stamps *s)
{
	for (uint32_t i = 0; i < s->used; i++)
		fprintf(s->f, "%llu %llu\n", (unsigned long long)s->buf[i][0],
		        (unsigned long long)s->buf[i][1]);
	s->used = 0;
	fflush(s->f);
}

void stamps_add(struct stamps *s, uint64_t now_ns)
{
	if (!s)
		return;
	s->n++;
	s->buf[s->used][0] = s->n;
	s->buf[s->used][1] = now_ns;
	if (++s->used == STAMPS_BUF || now_ns - s->flushed_at >= NSEC_PER_SEC) {
		stamps_flush(s);
		s->flushed_at = now_ns;
	}
}

void stamps_close(struct stamps **sp)
{
	struct stamps *s = sp ? *sp : NULL;

	if (!s)
		return;
	stamps_flush(s);
	fclose(s->f);
	free(s);
	*sp = NULL;
}
