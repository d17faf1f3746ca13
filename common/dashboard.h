/*
 * The dashboard (DESIGN.md §5.3): admin records -> text, one pure function shared by
 * `vschedctl top` and `vsched-controller -d`. Every line fits 80 columns (at most
 * DASH_WIDTH characters); long names are cut with '~'. Deterministic: the same records
 * and strings give the same bytes (tests/golden/dashboard_80col.txt).
 */
#ifndef VSCHED_DASHBOARD_H
#define VSCHED_DASHBOARD_H

#include <stdio.h>

#include "proto_admin.h"

#define DASH_WIDTH 79
/* Cursor home and clear screen, written before each frame when refreshing in place. */
#define DASH_ANSI_HOME_CLEAR "\033[H\033[2J"

/*
 * Writes one frame: a title line (title left, when right), the job table (sorted as
 * given), reasons of rejected jobs, the node table and a legend. r->ranks is ignored.
 */
void dash_render(FILE *f, const struct padm_reply *r, const char *title, const char *when);

/* The job table (with the reasons of rejected jobs) and the node table alone, as in the
 * frame (`vschedctl job list`, `node list`). */
void dash_jobs(FILE *f, const struct padm_reply *r);
void dash_nodes(FILE *f, const struct padm_reply *r);

/* Compact forms used by the tables, exposed for the listings and tests. Return buf. */
const char *dash_dur(uint64_t ns, char *buf, size_t len);  /* "200ms", "1.5ms", "-" */
const char *dash_count(uint64_t v, char *buf, size_t len); /* "999", "12k", "1.2M" */
const char *dash_mbs(uint64_t bps, char *buf, size_t len); /* MB/s: "0", "3.4", "1.2k" */

#endif
