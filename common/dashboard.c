/*
 * Dashboard rendering (see dashboard.h). Pure: records in, text out, nothing read from
 * the clock or the environment. No libm (vschedctl does not link it).
 *
 * Job table (79 columns), one row per job:
 *   JOB RNK TGT% CUR% ERR U% EFF PERIOD STATE MEM NET CLS MISS
 *   = JOB, RANKS, TARGET%, CURRENT% (of R_max; '*' after it: R_max not measured or given
 *   yet), ERR (points), U% (slice/period: with the floating algorithm not the target),
 *   EFF (efficiency, CUR% / U%: above 1 the job runs faster than its share), PERIOD,
 *   STATE, MEM MB/s, NET MB/s, CLASS (devil/semi-devil/turtle), MISSES (deadline misses,
 *   sum over ranks). Below the table, one line per rejected or unreachable job: why.
 * Node table, one row per node:
 *   NODE CPUs SUM-U MEM MB/s used/cap NET MB/s used/cap STATE JOBS LAST-HB
 */
#include "dashboard.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "text.h"

/*
 * A number in at most 4 characters plus the unit: one decimal below 10 when it has one
 * ("1.5"), an integer up to 999; "huge" beyond (callers move to the next unit first).
 */
static void num3(double v, const char *unit, char *buf, size_t len)
{
	double t = (double)(long long)(v * 10 + 0.5) / 10; /* rounded to one decimal */

	if (!(v < 999.5))
		text_fmt(buf, len, "huge");
	else if (t < 10 && t != (double)(long long)t)
		text_fmt(buf, len, "%.1f%s", t, unit);
	else
		text_fmt(buf, len, "%.0f%s", v, unit);
}

const char *dash_dur(uint64_t ns, char *buf, size_t len)
{
	static const struct {
		uint64_t ns;
		const char *unit;
	} units[] = {
	    {86400000000000ULL, "d"}, {3600000000000ULL, "h"}, {60000000000ULL, "m"},
	    {1000000000ULL, "s"},     {1000000ULL, "ms"},      {1000ULL, "us"},
	};

	if (ns == 0) {
		snprintf(buf, len, "-");
		return buf;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (ns >= units[i].ns) {
			double v = (double)ns / (double)units[i].ns;
			/* 999.6ms would print as "1000ms": show it in the next unit up */
			if (v >= 999.5 && i > 0) {
				num3(v / ((double)units[i - 1].ns / (double)units[i].ns),
				     units[i - 1].unit, buf, len);
				return buf;
			}
			num3(v, units[i].unit, buf, len);
			return buf;
		}
	}
	snprintf(buf, len, "%lluns", (unsigned long long)ns);
	return buf;
}

const char *dash_count(uint64_t v, char *buf, size_t len)
{
	if (v < 10000)
		snprintf(buf, len, "%llu", (unsigned long long)v);
	else if (v < 999500)
		num3((double)v / 1e3, "k", buf, len);
	else if (v < 999500000ULL)
		num3((double)v / 1e6, "M", buf, len);
	else
		num3((double)v / 1e9, "G", buf, len); /* "huge" from 999.5 G on */
	return buf;
}

const char *dash_mbs(uint64_t bps, char *buf, size_t len)
{
	double mb = (double)bps / 1e6;

	if (bps == 0)
		snprintf(buf, len, "0");
	else if (mb < 999.5)
		num3(mb, "", buf, len);
	else if (mb < 999500)
		num3(mb / 1e3, "k", buf, len);
	else if (mb < 999500000)
		num3(mb / 1e6, "M", buf, len);
	else
		num3(mb / 1e9, "G", buf, len);
	return buf;
}

/* name cut to width with '~' as its last character when longer */
static const char *cut(const char *s, int width, char *buf, size_t len)
{
	if ((int)strlen(s) <= width) {
		text_fmt(buf, len, "%s", s);
	} else {
		text_fmt(buf, len, "%.*s~", width - 1, s);
	}
	return buf;
}

/* 11+4+4+4+5+4+4+6+6+5+5+4+4 characters and 12 blanks: 78 columns */
#define NSEC_PER_MS_DASH 1000000ULL
#define JOB_FMT          "%-11s %4s %4s %4s %5s %4s %4s %6s %-6s %5s %5s %-4s %4s\n"

static const char *state_abbrev(uint8_t st)
{
	static const char *const names[] = {"idle", "calib", "conv", "stable", "oscil", "REJECT"};

	return st <= PADM_ST_MAX ? names[st] : "?";
}

static const char *class_abbrev(uint8_t c)
{
	static const char *const names[] = {"-", "turt", "semi", "dev"};

	return c <= PADM_CLASS_MAX ? names[c] : "?";
}

/* A percentage in 4 characters: "39.2", "100", "1234"; ">9k" beyond. */
static const char *pct(double v, char *buf, size_t len)
{
	if (isnan(v))
		text_fmt(buf, len, "-");
	else if (v < 99.95 && v > -9.95)
		text_fmt(buf, len, "%.1f", v);
	else if (v < 9999.5 && v > -999.5)
		text_fmt(buf, len, "%.0f", v);
	else
		text_fmt(buf, len, v > 0 ? ">9k" : "<-1k");
	return buf;
}

static const char *err(double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (v < 99.95 && v > -99.95)
		snprintf(buf, len, "%+.1f", v);
	else if (v < 9999.5 && v > -9999.5)
		snprintf(buf, len, "%+.0f", v);
	else
		snprintf(buf, len, v > 0 ? "+big" : "-big");
	return buf;
}

/* An efficiency in 4 characters: "0.83", "1.21", "12.5", "99+"; "-" when not known. */
static const char *eff(double v, char *buf, size_t len)
{
	if (isnan(v) || v < 0)
		text_fmt(buf, len, "-");
	else if (v < 9.995)
		text_fmt(buf, len, "%.2f", v);
	else if (v < 99.95)
		text_fmt(buf, len, "%.1f", v);
	else
		text_fmt(buf, len, "99+");
	return buf;
}

static void job_row(FILE *f, const struct padm_job *j)
{
	char name[16], rnk[16], tgt[16], cur[24], e[16], per[16], u[16], ef[16], mem[16], net[16],
	    miss[16];

	if (j->target_milli > 0)
		pct(j->target_milli / 1000.0, tgt, sizeof(tgt));
	else
		text_fmt(tgt, sizeof(tgt), "-");
	pct(j->current_pct, cur, sizeof(cur));
	if (!isnan(j->current_pct) && !(j->flags & PADM_JF_RMAX_KNOWN) && strlen(cur) < 4)
		strcat(cur, "*");
	if (j->period > 0)
		pct(100.0 * (double)j->slice / (double)j->period, u, sizeof(u));
	else
		text_fmt(u, sizeof(u), "-");
	fprintf(f, JOB_FMT, cut(j->name, 11, name, sizeof(name)),
	        dash_count(j->nranks, rnk, sizeof(rnk)), tgt, cur, err(j->err_pct, e, sizeof(e)), u,
	        eff(j->eff, ef, sizeof(ef)), dash_dur(j->period, per, sizeof(per)),
	        j->flags & PADM_JF_NO_SIGNAL ? "nosig" : state_abbrev(j->state),
	        dash_mbs(j->mem_bps, mem, sizeof(mem)), dash_mbs(j->net_bps, net, sizeof(net)),
	        class_abbrev(j->klass), dash_count(j->misses, miss, sizeof(miss)));
}

static const char *used_cap(uint64_t used, uint64_t cap, bool have_used, char *buf, size_t len)
{
	char a[16], b[16];

	snprintf(buf, len, "%s/%s", have_used ? dash_mbs(used, a, sizeof(a)) : "-",
	         cap ? dash_mbs(cap, b, sizeof(b)) : "?");
	return buf;
}

static const char *age(uint64_t ms, char *buf, size_t len)
{
	if (ms == UINT64_MAX)
		text_fmt(buf, len, "never");
	else if (ms < 100000)
		text_fmt(buf, len, "%.1fs", (double)ms / 1000.0);
	else if (ms < UINT64_MAX / NSEC_PER_MS_DASH)
		dash_dur(ms * NSEC_PER_MS_DASH, buf, len);
	else
		text_fmt(buf, len, "huge");
	return buf;
}

static void node_row(FILE *f, const struct padm_node *n)
{
	char name[16], cpus[16], su[16], mem[40], net[40], hb[16], jobs[16];

	if (n->sum_u < 99.995)
		text_fmt(su, sizeof(su), "%.2f", n->sum_u);
	else
		num3(n->sum_u, "", su, sizeof(su));
	fprintf(f, "%-12s %4s %6s %15s %15s %-5s %4s %8s\n", cut(n->name, 12, name, sizeof(name)),
	        dash_count(n->ncpus, cpus, sizeof(cpus)), su,
	        used_cap(n->mem_used, n->mem_cap, n->mem_src != 0, mem, sizeof(mem)),
	        used_cap(n->net_used, n->net_cap, n->net_src != 0, net, sizeof(net)),
	        n->up ? "up" : "DOWN", dash_count(n->njobs, jobs, sizeof(jobs)),
	        age(n->hb_age_ms, hb, sizeof(hb)));
}

void dash_jobs(FILE *f, const struct padm_reply *r)
{
	fprintf(f, JOB_FMT, "JOB", "RNK", "TGT%", "CUR%", "ERR", "U%", "EFF", "PERIOD", "STATE",
	        "MEM", "NET", "CLS", "MISS");
	if (r->njobs == 0)
		fprintf(f, "(no jobs)\n");
	for (uint16_t i = 0; i < r->njobs; i++)
		job_row(f, &r->jobs[i]);
	for (uint16_t i = 0; i < r->njobs; i++) {
		char line[DASH_WIDTH + 1], name[16];

		if (r->jobs[i].state != PADM_ST_REJECTED || r->jobs[i].reason[0] == '\0')
			continue;
		text_fmt(line, sizeof(line), "! %s: %s",
		         cut(r->jobs[i].name, 11, name, sizeof(name)), r->jobs[i].reason);
		fprintf(f, "%s\n", line);
	}
}

/* One line: the per-CPU admission cap of the nodes' vsched ("90 % on every node", else
 * node by node, cut at the dashboard's width); nothing without nodes. */
static void node_caps(FILE *f, const struct padm_reply *r)
{
	char line[DASH_WIDTH + 1], item[64];
	bool same = true;
	size_t len;

	if (r->nnodes == 0)
		return;
	for (uint16_t i = 1; i < r->nnodes; i++)
		same &= r->nodes[i].cap_ppm == r->nodes[0].cap_ppm;
	if (same && r->nodes[0].cap_ppm)
		text_fmt(line, sizeof(line), "vsched admits %.4g %% per CPU on every node",
		         r->nodes[0].cap_ppm / 1e4);
	else if (same)
		text_fmt(line, sizeof(line), "vsched's per-CPU cap: not reported yet");
	else {
		text_fmt(line, sizeof(line), "vsched admits per CPU:");
		for (uint16_t i = 0; i < r->nnodes; i++) {
			char name[16];
			if (r->nodes[i].cap_ppm)
				text_fmt(item, sizeof(item), " %s %.4g %%%s",
				         cut(r->nodes[i].name, 12, name, sizeof(name)),
				         r->nodes[i].cap_ppm / 1e4, i + 1 < r->nnodes ? "," : "");
			else
				text_fmt(item, sizeof(item), " %s ?%s",
				         cut(r->nodes[i].name, 12, name, sizeof(name)),
				         i + 1 < r->nnodes ? "," : "");
			len = strlen(line);
			if (len + strlen(item) > DASH_WIDTH - 4) {
				text_fmt(line + len, sizeof(line) - len, " ...");
				break;
			}
			text_fmt(line + len, sizeof(line) - len, "%s", item);
		}
	}
	fprintf(f, "%s\n", line);
}

void dash_nodes(FILE *f, const struct padm_reply *r)
{
	fprintf(f, "%-12s %4s %6s %15s %15s %-5s %4s %8s\n", "NODE", "CPUs", "SUM-U",
	        "MEM used/cap", "NET used/cap", "STATE", "JOBS", "LAST-HB");
	if (r->nnodes == 0)
		fprintf(f, "(no nodes)\n");
	for (uint16_t i = 0; i < r->nnodes; i++)
		node_row(f, &r->nodes[i]);
	node_caps(f, r);
	for (uint16_t i = 0; i < r->nnodes; i++)
		if (r->nodes[i].dropped)
			fprintf(f, "%.40s: %llu messages dropped (over agent_msg_rate)\n",
			        r->nodes[i].name, (unsigned long long)r->nodes[i].dropped);
}

void dash_render(FILE *f, const struct padm_reply *r, const char *title, const char *when)
{
	char head[DASH_WIDTH + 1], left[DASH_WIDTH + 1];
	int down = 0, pad;

	for (uint16_t i = 0; i < r->nnodes; i++)
		down += !r->nodes[i].up;
	text_fmt(left, sizeof(left), "%s  jobs %u  nodes %u (%d down)", title ? title : "",
	         r->njobs, r->nnodes, down);
	pad = DASH_WIDTH - (int)strlen(left) - (int)strlen(when ? when : "");
	if (pad < 1)
		pad = 1;
	text_fmt(head, sizeof(head), "%s%*s%s", left, pad, "", when ? when : "");
	fprintf(f, "%s\n\n", head);

	dash_jobs(f, r);
	fputc('\n', f);
	dash_nodes(f, r);
	fprintf(f, "\nTGT/CUR%%: of R_max (* = not known yet)  ERR: points  EFF: CUR/U  "
	           "MEM/NET: MB/s\n");
}
