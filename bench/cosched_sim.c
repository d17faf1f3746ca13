/*
 * Co-scheduling simulation of paper 000's (MemBUS) workloads through our planner
 * (controller/fit.c: Algorithm 2 per node, Algorithm 1 reduction, gang slots): the slot
 * tables it builds, and a modelled throughput against random pairing, FCFS/EDF order, the
 * planner's own baselines (pairing = FIT_PAIR_OBLIVIOUS: list order; FIT_PAIR_WORST: farthest
 * from the ideal point) and the worst and best tables (exhaustive search), side by side with
 * the paper's reported gains (Sect. 6, Fig. 4).
 *
 * Simulation, not a measurement: the throughput comes from the contention model below, not
 * from running NAS kernels.
 *
 * Platform (paper 000 Sect. 3): 4 nodes x 2 CPUs. Workloads (Sect. 6): two instances of A
 * plus two instances of X, each instance one process on every node: 4 gang jobs, 4
 * processes per node on 2 CPUs (twice as many processes as CPUs, as in the paper), so U = 0.5
 * each and the ideal throughput is half the stand-alone one (the paper's normalisation).
 *
 * Throughput model (stated; papers/000 Sect. 3 only shows slowdowns, it gives no formula).
 * In a slot, on node l, the running processes demand D_M = sum of their memory bandwidths
 * and D_N = sum of their network bandwidths. When demand exceeds capacity the bus (NIC)
 * is shared in proportion to demand, so its service time stretches by D/cap; process i
 * spends a fraction phi_i = min(1, mem_i / M) of its stand-alone time waiting on memory and
 * psi_i = min(1, net_i / N) on the NIC (a job drawing the whole bus is fully memory-bound):
 *     time per unit of work  t_i = 1 + phi_i * max(0, D_M/M - 1) + psi_i * max(0, D_N/N - 1)
 *     progress rate          r_i = 1 / t_i      (1 = stand-alone speed)
 * A gang job progresses at the rate of its slowest process (BSP: min over its nodes). With
 * --model equal every co-runner instead slows by max(1, D_M/M, D_N/N) (pure proportional
 * share, no compute part), a harsher variant kept to show how much the figures depend on it.
 * Normalised throughput of a job = (sum of r over the slots it ran) / need: 1.0 is the ideal
 * (its full share at stand-alone speed), the paper's Fig. 4 normalisation.
 *
 * M is a documented choice, not given by the paper: M = 700 MB/s, the smallest round value
 * consistent with Fig. 1 (one CG process alone draws 674 MB/s, so M >= 674) that makes two
 * CG "effectively serialised" (Sect. 3; the model gives 89 %). The model under-predicts the
 * other Sect. 3 slowdowns at this M (printed next to the paper's); the least-squares fit to
 * all of them is M = 600 (--mem-cap 600), below CG's stand-alone bandwidth. N = 250 MB/s:
 * one direction of the Myrinet 2+2 Gbps link (Sect. 5.3).
 *
 * usage: cosched_sim [--seeds N] [--frames N] [--slots N] [--mem-cap MB/s] [--net-cap MB/s]
 *                    [--model partial|equal] [--tables]
 * --slots is rounded down to an even number (U = 0.5 must be a whole number of slots);
 * --frames >= 4 (one frame per rotation of the 4-job list); --tables prints the first two
 * frames' slot tables of every workload (default: CG-EP and CG-IS only).
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fit.h"
#include "sim.h" /* sim_uniform: seeded random numbers */

#define NNODES 4
#define NCPUS  2
#define NJOBS  4 /* two instances of A, two of X */
#define MAXS   64

struct bench {
	const char *name;
	double mem, net; /* per process, MB/s */
};

/*
 * Paper 000 Fig. 1, "BW req." column: memory bandwidth of one process running alone on a
 * node (MB/s). The paper gives no per-benchmark network bandwidth (Fig. 2 right is a
 * chart of slowdowns, not of bandwidths), so the NAS kernels' net is 0 here.
 */
static const struct bench nas[] = {
    {"BT", 373, 0}, {"CG", 674, 0}, {"EP", 162, 0}, {"FT", 384, 0},
    {"IS", 475, 0}, {"LU", 491, 0}, {"MG", 565, 0}, {"SP", 567, 0},
};
#define NNAS (sizeof(nas) / sizeof(nas[0]))

/* The microbenchmarks of Sect. 3/6 have no published bandwidths: ASSUMED values.
 * membench-min: stride 1, one miss per 32-byte line, "excellent cache locality", no I/O.
 * myribench: all-to-all over Myrinet near link rate; its memory traffic is the NIC's DMA
 * (BW^M = BW^C + BW^N, Sect. 4) and the paper calls its memory demand "rather low". */
static const struct bench membench_min = {"mb-min", 50, 0};
static const struct bench myribench = {"myri", 200, 200};

struct params {
	double mem_cap, net_cap;
	uint32_t nslots, frames, seeds;
	bool equal_model, tables;
};

/* Rate of every job in a slot where run[] (NJOBS flags) run together; all jobs span all
 * nodes with one process each, so every node sees the same co-runners. */
static void slot_rates(const struct params *p, const struct bench *const *jb, const uint8_t *run,
                       double *rate)
{
	double dm = 0, dn = 0;
	for (int i = 0; i < NJOBS; i++)
		if (run[i]) {
			dm += jb[i]->mem;
			dn += jb[i]->net;
		}
	double om = fmax(0, dm / p->mem_cap - 1), on = fmax(0, dn / p->net_cap - 1);
	for (int i = 0; i < NJOBS; i++) {
		if (!run[i]) {
			rate[i] = 0;
			continue;
		}
		double t;
		if (p->equal_model)
			t = fmax(1, fmax(dm / p->mem_cap, dn / p->net_cap));
		else
			t = 1 + fmin(1, jb[i]->mem / p->mem_cap) * om +
			    fmin(1, jb[i]->net / p->net_cap) * on;
		/* identical nodes: the min over a job's nodes is this node's rate */
		rate[i] = 1 / t;
	}
}

/* Sum of rates per job over one frame's table (table[i * nslots + k]). */
static void table_progress(const struct params *p, const struct bench *const *jb,
                           const uint8_t *table, double *prog)
{
	for (uint32_t k = 0; k < p->nslots; k++) {
		uint8_t run[NJOBS];
		double r[NJOBS];
		for (int i = 0; i < NJOBS; i++)
			run[i] = table[i * p->nslots + k];
		slot_rates(p, jb, run, r);
		for (int i = 0; i < NJOBS; i++)
			prog[i] += r[i];
	}
}

/* The planner's problem: every job one process on every node, U = 0.5. */
struct problem {
	struct fit_job jobs[NJOBS];
	struct fit_node nodes[NNODES];
	struct fit_place place[NNODES * NJOBS];
	uint32_t off[NNODES + 1];
	struct fit_problem pb;
};

static void problem_init(struct problem *q, const struct params *p, const struct bench *const *jb)
{
	for (int i = 0; i < NJOBS; i++)
		q->jobs[i] =
		    (struct fit_job){.mem_bw = jb[i]->mem, .net_bw = jb[i]->net, .util = 0.5};
	for (int l = 0; l < NNODES; l++) {
		q->nodes[l] =
		    (struct fit_node){.cpus = NCPUS, .mem_cap = p->mem_cap, .net_cap = p->net_cap};
		q->off[l] = (uint32_t)(l * NJOBS);
		for (int i = 0; i < NJOBS; i++)
			q->place[l * NJOBS + i] =
			    (struct fit_place){.job = (uint32_t)i, .node = (uint32_t)l, .procs = 1};
	}
	q->off[NNODES] = NNODES * NJOBS;
	q->pb = (struct fit_problem){.njobs = NJOBS,
	                             .nnodes = NNODES,
	                             .nslots = p->nslots,
	                             .jobs = q->jobs,
	                             .nodes = q->nodes,
	                             .place = q->place,
	                             .nplace = NNODES * NJOBS,
	                             .node_off = q->off};
}

static uint32_t scratch[1024];

/* The real planner, one frame, with the given Algorithm 2 pairing rule (FIT_PAIR_FITNESS =
 * MemBUS, FIT_PAIR_WORST = farthest from the ideal point, FIT_PAIR_OBLIVIOUS = list order);
 * exits if a job does not get its share (starvation). */
static void plan_fit(struct problem *q, uint32_t frame, enum fit_pairing pairing, uint8_t *table)
{
	uint32_t got[NJOBS];
	q->pb.rotate = frame;
	q->pb.pairing = (uint8_t)pairing;
	int rc = fit_schedule(&q->pb, scratch, sizeof(scratch), table, got);
	for (int i = 0; i < NJOBS; i++)
		if (rc || got[i] != fit_need(0.5, q->pb.nslots)) {
			fprintf(stderr, "fit_schedule (pairing %d): rc %d, job %d got %u slots\n",
			        (int)pairing, rc, i, got[i]);
			exit(1);
		}
}

/* Random pairing: every job's need tokens shuffled into slots of NCPUS, redrawn until no
 * slot holds a job twice (uniform over the valid tables as multisets of tokens). */
static void plan_random(const struct params *p, uint64_t *rng, uint8_t *table)
{
	uint32_t need = fit_need(0.5, p->nslots), n = need * NJOBS, tok[NJOBS * MAXS];
	for (;;) {
		for (uint32_t t = 0; t < n; t++)
			tok[t] = t / need;
		for (uint32_t t = n - 1; t > 0; t--) {
			uint32_t u = (uint32_t)(sim_uniform(rng) * (t + 1));
			if (u > t)
				u = t;
			uint32_t x = tok[t];
			tok[t] = tok[u];
			tok[u] = x;
		}
		memset(table, 0, (size_t)NJOBS * p->nslots);
		bool ok = true;
		for (uint32_t t = 0; t < n && ok; t++) {
			uint8_t *c = &table[tok[t] * p->nslots + t / NCPUS];
			ok = !*c;
			*c = 1;
		}
		if (ok)
			return;
	}
}

/* FCFS = EDF order: all jobs have the same period and deadline (the frame), so EDF runs
 * them in submission order (A1 A2 X1 X2), each to the end of its share. */
static void plan_fcfs(const struct params *p, uint8_t *table)
{
	uint32_t rem[NJOBS];
	for (int i = 0; i < NJOBS; i++)
		rem[i] = fit_need(0.5, p->nslots);
	memset(table, 0, (size_t)NJOBS * p->nslots);
	for (uint32_t k = 0; k < p->nslots; k++)
		for (int i = 0, c = 0; i < NJOBS && c < NCPUS; i++)
			if (rem[i]) {
				table[i * p->nslots + k] = 1;
				rem[i]--;
				c++;
			}
}

/*
 * Best and worst table by exhaustive search. Throughput is a sum over slots of a function
 * of the co-running set, so a table is a multiset of the 6 pairs (NCPUS = 2 of 4 jobs)
 * with every job in exactly need of them; enumerate the pair counts.
 */
_Static_assert(NCPUS == 2 && NJOBS == 4, "the exhaustive search enumerates the 6 pairs");

struct pairs {
	int a[6], b[6];
	double tot[6];
	double rate[6][NJOBS];
};

static void pairs_init(struct pairs *ps, const struct params *p, const struct bench *const *jb)
{
	int n = 0;
	for (int a = 0; a < NJOBS; a++)
		for (int b = a + 1; b < NJOBS; b++) {
			uint8_t run[NJOBS] = {0};
			run[a] = run[b] = 1;
			ps->a[n] = a;
			ps->b[n] = b;
			slot_rates(p, jb, run, ps->rate[n]);
			ps->tot[n] = ps->rate[n][a] + ps->rate[n][b];
			n++;
		}
}

struct extreme {
	double best, worst;
	double best_prog[NJOBS], worst_prog[NJOBS];
};

static void enum_pairs(const struct pairs *ps, int idx, int left, int *cnt, uint32_t need,
                       struct extreme *ex)
{
	if (idx == 5) {
		cnt[5] = left;
		int per[NJOBS] = {0};
		double prog[NJOBS] = {0}, tot = 0;
		for (int x = 0; x < 6; x++) {
			per[ps->a[x]] += cnt[x];
			per[ps->b[x]] += cnt[x];
			prog[ps->a[x]] += cnt[x] * ps->rate[x][ps->a[x]];
			prog[ps->b[x]] += cnt[x] * ps->rate[x][ps->b[x]];
			tot += cnt[x] * ps->tot[x];
		}
		for (int i = 0; i < NJOBS; i++)
			if (per[i] != (int)need)
				return;
		if (tot > ex->best) {
			ex->best = tot;
			memcpy(ex->best_prog, prog, sizeof(prog));
		}
		if (tot < ex->worst) {
			ex->worst = tot;
			memcpy(ex->worst_prog, prog, sizeof(prog));
		}
		return;
	}
	for (int c = 0; c <= left; c++) {
		cnt[idx] = c;
		enum_pairs(ps, idx + 1, left - c, cnt, need, ex);
	}
}

static const char *job_label(const struct bench *const *jb, int i, char *buf, size_t len)
{
	snprintf(buf, len, "%s%d", jb[i]->name, i % 2 + 1);
	return buf;
}

/* Slot table of one frame: per slot, per node, the jobs running (gang: same on every node,
 * which the table shows rather than assumes), and the bus demand on each node. */
static void print_table(const struct params *p, const struct problem *q,
                        const struct bench *const *jb, uint32_t frame, const uint8_t *table)
{
	char buf[32];
	printf("  frame %u (rotate %u):\n  slot |", frame, frame);
	for (int l = 0; l < NNODES; l++)
		printf(" node %d          |", l);
	printf(" bus MB/s\n");
	for (uint32_t k = 0; k < p->nslots; k++) {
		double dm = 0;
		printf("  %4u |", k);
		for (int l = 0; l < NNODES; l++) {
			char cell[64] = "";
			for (uint32_t x = q->off[l]; x < q->off[l + 1]; x++) {
				int i = (int)q->place[x].job;
				if (!table[i * p->nslots + k])
					continue;
				if (cell[0])
					strcat(cell, "+");
				strcat(cell, job_label(jb, i, buf, sizeof(buf)));
				if (l == 0)
					dm += jb[i]->mem;
			}
			printf(" %-16s|", cell);
		}
		printf(" %4.0f%s\n", dm, dm > p->mem_cap ? " >M" : "");
	}
	printf("  share:");
	for (int i = 0; i < NJOBS; i++) {
		uint32_t g = 0;
		for (uint32_t k = 0; k < p->nslots; k++)
			g += table[i * p->nslots + k];
		printf(" %s %u/%u", job_label(jb, i, buf, sizeof(buf)), g, p->nslots);
	}
	struct fit_window w[MAXS];
	int nw = fit_windows(&table[0], p->nslots, w, MAXS);
	printf("; %s windows: %d\n", job_label(jb, 0, buf, sizeof(buf)), nw);
}

struct stat3 {
	double sum, min, max;
	uint32_t n;
};

static void st_add(struct stat3 *s, double v)
{
	if (s->n == 0 || v < s->min)
		s->min = v;
	if (s->n == 0 || v > s->max)
		s->max = v;
	s->sum += v;
	s->n++;
}

/* Per workload results, normalised (1.0 = ideal): A = mean of the two A instances, X = of
 * the two X instances, T = mean of all four. */
struct result {
	double fit[3], maxd[3], obl[3], fcfs[3], worst[3], best[3];
	struct stat3 rnd[3];
	uint32_t fit_like[NJOBS]; /* per rotate (first frame with it): slots in which A ran
	                           * with A or X with X */
};

static void norm3(const double *prog, double denom, double *out)
{
	out[0] = (prog[0] + prog[1]) / (2 * denom);
	out[1] = (prog[2] + prog[3]) / (2 * denom);
	out[2] = (prog[0] + prog[1] + prog[2] + prog[3]) / (4 * denom);
}

static void run_workload(const struct params *p, const struct bench *a, const struct bench *x,
                         struct result *res, bool show)
{
	const struct bench *jb[NJOBS] = {a, a, x, x};
	struct problem q;
	uint8_t table[NJOBS * MAXS];
	double prog[NJOBS], denom;
	uint32_t need = fit_need(0.5, p->nslots);

	memset(res, 0, sizeof(*res));
	problem_init(&q, p, jb);

	/* the planner: frames 0..frames-1, rotate = frame number */
	denom = (double)need * p->frames;
	memset(prog, 0, sizeof(prog));
	for (uint32_t f = 0; f < p->frames; f++) {
		plan_fit(&q, f, FIT_PAIR_FITNESS, table);
		table_progress(p, jb, table, prog);
		for (uint32_t k = 0; k < p->nslots && f < NJOBS; k++)
			if ((table[0 * p->nslots + k] && table[1 * p->nslots + k]) ||
			    (table[2 * p->nslots + k] && table[3 * p->nslots + k]))
				res->fit_like[f]++;
		if (show && f < 2)
			print_table(p, &q, jb, f, table);
	}
	norm3(prog, denom, res->fit);
	memset(prog, 0, sizeof(prog));
	for (uint32_t f = 0; f < p->frames; f++) {
		plan_fit(&q, f, FIT_PAIR_WORST, table);
		table_progress(p, jb, table, prog);
	}
	norm3(prog, denom, res->maxd);
	memset(prog, 0, sizeof(prog));
	for (uint32_t f = 0; f < p->frames; f++) {
		plan_fit(&q, f, FIT_PAIR_OBLIVIOUS, table);
		table_progress(p, jb, table, prog);
	}
	norm3(prog, denom, res->obl);

	/* random pairing: seeds x frames, statistics over seeds */
	for (uint32_t s = 0; s < p->seeds; s++) {
		uint64_t rng = 0x9e3779b97f4a7c15ULL * (s + 1);
		double r3[3];
		memset(prog, 0, sizeof(prog));
		for (uint32_t f = 0; f < p->frames; f++) {
			plan_random(p, &rng, table);
			table_progress(p, jb, table, prog);
		}
		norm3(prog, denom, r3);
		for (int c = 0; c < 3; c++)
			st_add(&res->rnd[c], r3[c]);
	}

	memset(prog, 0, sizeof(prog));
	plan_fcfs(p, table);
	table_progress(p, jb, table, prog);
	norm3(prog, need, res->fcfs);

	struct pairs ps;
	struct extreme ex = {.best = -INFINITY, .worst = INFINITY};
	int cnt[6];
	pairs_init(&ps, p, jb);
	enum_pairs(&ps, 0, (int)p->nslots, cnt, need, &ex);
	norm3(ex.best_prog, need, res->best);
	norm3(ex.worst_prog, need, res->worst);
}

/* Paper 000 Sect. 6 gains of MemBUS over Linux 2.6 (blocking MPICH-GM), where the text
 * gives a number (the job it is for in brackets); the rest of Fig. 4 is a chart. */
struct paper_gain {
	int set;
	const char *x;
	const char *txt;
};

static const struct paper_gain gains[] = {
    {0, "CG", "+6% (CG)"},    {0, "IS", "+44% (CG)"},   {1, "CG", "+39.0% (CG)"},
    {1, "BT", "+24.4% (BT)"}, {1, "SP", "+19.9% (SP)"}, {2, "EP", "+4% (myri)"},
    {2, "MG", "+25% (myri)"},
};

static const char *paper_for(int set, const char *x)
{
	for (size_t g = 0; g < sizeof(gains) / sizeof(gains[0]); g++)
		if (gains[g].set == set && !strcmp(gains[g].x, x))
			return gains[g].txt;
	return "-";
}

static double gain(double a, double b)
{
	return 100.0 * (a / b - 1);
}

static void usage(void)
{
	fprintf(stderr, "usage: cosched_sim [--seeds N] [--frames N] [--slots N] [--mem-cap MB/s] "
	                "[--net-cap MB/s] [--model partial|equal] [--tables]\n");
	exit(2);
}

static double num_arg(int argc, char **argv, int *i, double lo, double hi)
{
	if (*i + 1 >= argc)
		usage();
	char *end;
	double v = strtod(argv[++*i], &end);
	if (*end || !(v >= lo && v <= hi))
		usage();
	return v;
}

static void parse_args(int argc, char **argv, struct params *p)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seeds"))
			p->seeds = (uint32_t)num_arg(argc, argv, &i, 1, 1e7);
		else if (!strcmp(argv[i], "--frames"))
			p->frames = (uint32_t)num_arg(argc, argv, &i, NJOBS, 1e6);
		else if (!strcmp(argv[i], "--slots"))
			p->nslots = 2 * ((uint32_t)num_arg(argc, argv, &i, 2, MAXS) / 2);
		else if (!strcmp(argv[i], "--mem-cap"))
			p->mem_cap = num_arg(argc, argv, &i, 1, 1e6);
		else if (!strcmp(argv[i], "--net-cap"))
			p->net_cap = num_arg(argc, argv, &i, 1, 1e6);
		else if (!strcmp(argv[i], "--model") && i + 1 < argc) {
			i++;
			if (!strcmp(argv[i], "equal"))
				p->equal_model = true;
			else if (strcmp(argv[i], "partial"))
				usage();
		} else if (!strcmp(argv[i], "--tables"))
			p->tables = true;
		else
			usage();
	}
}

/* The model against paper 000 Sect. 3 (one node, two single-process runs). */
static void model_check(const struct params *p)
{
	const struct bench mm = {"membench-max", p->mem_cap, 0};
	const struct {
		const struct bench *a, *b;
		const char *paper;
	} chk[] = {
	    {&nas[1], &nas[1], "~100% (serialised)"},
	    {&nas[6], &nas[6], "84-96%"},
	    {&nas[7], &nas[7], "84-96%"},
	    {&nas[4], &mm, "80.4%"},
	    {&nas[0], &mm, "42.9%"},
	    {&nas[3], &mm, "57.4%"},
	    {&nas[2], &nas[2], "(lowest)"},
	};

	printf("\nmodel check: slowdown of the first job when two run on one node\n");
	printf("| pair | model | paper 000 Sect. 3 |\n|---|---|---|\n");
	for (size_t c = 0; c < sizeof(chk) / sizeof(chk[0]); c++) {
		const struct bench *jb[NJOBS] = {chk[c].a, chk[c].b, chk[c].a, chk[c].a};
		uint8_t run[NJOBS] = {1, 1, 0, 0};
		double r[NJOBS];
		slot_rates(p, jb, run, r);
		printf("| %s + %s | %.0f%% | %s |\n", chk[c].a->name, chk[c].b->name,
		       100 * (1 / r[0] - 1), chk[c].paper);
	}
}

/* The throughput table of set s (A = the set's pair of jobs, X = each NAS kernel). */
static void print_set(const struct params *p, int s, const struct bench *a,
                      const struct result *res)
{
	static const char *const jn[3] = {"A", "X", "T"};

	printf("\nnormalised throughput (1.00 = ideal share at stand-alone speed); "
	       "A = the two %s, X = the two X, T = all four\n",
	       a->name);
	printf("| X | job | fitness | random mean [min, max] | FCFS/EDF | oblivious | "
	       "max distance | min table | max table | fitness vs random | fitness vs FCFS | "
	       "fitness vs max distance | A+A or X+X slots, rotate 0/1/2/3 (fitness) | "
	       "paper 000: MemBUS vs Linux |\n"
	       "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (size_t x = 0; x < NNAS; x++) {
		const struct result *r = &res[x];
		for (int c = 0; c < 3; c++) {
			printf("| %s | %s | %.3f | %.3f [%.3f, %.3f] | %.3f | %.3f | %.3f "
			       "| %.3f | "
			       "%.3f | %+.1f%% | %+.1f%% | %+.1f%% |",
			       c == 0 ? nas[x].name : "", jn[c], r->fit[c],
			       r->rnd[c].sum / r->rnd[c].n, r->rnd[c].min, r->rnd[c].max,
			       r->fcfs[c], r->obl[c], r->maxd[c], r->worst[c], r->best[c],
			       gain(r->fit[c], r->rnd[c].sum / r->rnd[c].n),
			       gain(r->fit[c], r->fcfs[c]), gain(r->fit[c], r->maxd[c]));
			if (c == 0)
				printf(" %u/%u/%u/%u of %u | %s |\n", r->fit_like[0],
				       r->fit_like[1], r->fit_like[2], r->fit_like[3], p->nslots,
				       paper_for(s, nas[x].name));
			else
				printf(" | |\n");
		}
	}
}

int main(int argc, char **argv)
{
	struct params p = {.mem_cap = 700,
	                   /* Myrinet 2+2 Gbps link (Sect. 5.3): 250 MB/s per direction */
	                   .net_cap = 250,
	                   .nslots = 8, /* q = 0.5 s (Sect. 6), frame T = 4 s */
	                   .frames = 8,
	                   .seeds = 1000};
	static const char *const set_name[3] = {
	    "Set 1: 2x CG + 2x X (paper 000 Sect. 6, Fig. 4 first graph)",
	    "Set 2: 2x membench-min + 2x X (Fig. 4 second graph; membench-min bandwidth assumed)",
	    "Set 3: 2x myribench + 2x X (Fig. 4 third graph; myribench bandwidths assumed)"};
	const struct bench *set_a[3] = {&nas[1], &membench_min, &myribench};

	parse_args(argc, argv, &p);
	printf("cosched_sim: %d nodes x %d CPUs, M = %.0f MB/s, N = %.0f MB/s, %u slots/frame, "
	       "%u frames, %u random seeds, model %s\n",
	       NNODES, NCPUS, p.mem_cap, p.net_cap, p.nslots, p.frames, p.seeds,
	       p.equal_model ? "equal" : "partial");
	model_check(&p);
	for (int s = 0; s < 3; s++) {
		struct result res[NNAS];
		printf("\n%s\n", set_name[s]);
		for (size_t x = 0; x < NNAS; x++) {
			bool show =
			    p.tables ||
			    (s == 0 && (!strcmp(nas[x].name, "IS") || !strcmp(nas[x].name, "EP")));
			if (show)
				printf("\n slot table, %s-%s (fitness, every job 4 of 8 slots):\n",
				       set_a[s]->name, nas[x].name);
			run_workload(&p, set_a[s], &nas[x], &res[x], show);
		}
		print_set(&p, s, set_a[s], res);
	}
	return 0;
}
