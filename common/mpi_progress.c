/*
 * VSCHED_PROGRESS modes and the table of wrapped MPI functions (see mpi_progress.h).
 */
#include "mpi_progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const struct mpifn_info mpifn_info[MPIFN_COUNT] = {
#define MPIFN_INFO(id, name, flags) [MPIFN_##id] = {#name, flags},
    MPIFN_LIST(MPIFN_INFO)
#undef MPIFN_INFO
};

/* The function named s (len bytes, no NUL needed), or -1. */
static int find_fn(const char *s, size_t len)
{
	if (len > 4 && strncasecmp(s, "MPI_", 4) == 0) {
		s += 4;
		len -= 4;
	}
	for (int i = 0; i < MPIFN_COUNT; i++)
		if (strlen(mpifn_info[i].name) == len &&
		    strncasecmp(s, mpifn_info[i].name, len) == 0)
			return i;
	return -1;
}

/* N of mpi:NAME:N: decimal digits only, 1..MPIPROG_EVERY_MAX. */
static int parse_every(const char *s, uint32_t *out)
{
	unsigned long v = 0;

	if (*s == '\0' || strlen(s) > 10)
		return -1;
	for (const char *p = s; *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (unsigned long)(*p - '0');
	}
	if (v < 1 || v > MPIPROG_EVERY_MAX)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

int mpiprog_parse(const char *s, struct mpiprog *p, char *why, size_t whylen)
{
	struct mpiprog m = {.kind = MPIPROG_AUTO, .fn = -1, .every = 1};
	const char *name, *colon;

	if (s == NULL || *s == '\0' || strcmp(s, "auto") == 0)
		goto ok;
	if (strlen(s) > MPIPROG_MAX) {
		snprintf(why, whylen, "progress mode longer than %d characters", MPIPROG_MAX);
		return -1;
	}
	if (strcmp(s, "pcontrol") == 0) {
		m.kind = MPIPROG_PCONTROL;
		goto ok;
	}
	if (strncmp(s, "mpi:", 4) != 0) {
		snprintf(why, whylen, "progress mode '%s': must be auto, mpi:NAME[:N] or pcontrol",
		         s);
		return -1;
	}
	name = s + 4;
	colon = strchr(name, ':');
	m.kind = MPIPROG_CALL;
	m.fn = find_fn(name, colon ? (size_t)(colon - name) : strlen(name));
	if (m.fn < 0) {
		snprintf(
		    why, whylen,
		    "progress mode '%s': unknown or unwrapped MPI function (e.g. mpi:Allreduce, "
		    "mpi:MPI_Waitall:2; see docs/mpi.md)",
		    s);
		return -1;
	}
	if (colon && parse_every(colon + 1, &m.every) != 0) {
		snprintf(why, whylen, "progress mode '%s': N must be an integer 1..%u", s,
		         MPIPROG_EVERY_MAX);
		return -1;
	}
ok:
	*p = m;
	return 0;
}

void mpiprog_format(const struct mpiprog *p, char *buf, size_t len)
{
	if (p->kind == MPIPROG_PCONTROL)
		snprintf(buf, len, "pcontrol");
	else if (p->kind == MPIPROG_CALL && p->every == 1)
		snprintf(buf, len, "mpi:%s", mpifn_info[p->fn].name);
	else if (p->kind == MPIPROG_CALL)
		snprintf(buf, len, "mpi:%s:%u", mpifn_info[p->fn].name, p->every);
	else
		snprintf(buf, len, "auto");
}
