/*
 * The floating algorithm's evaluation length under noise, on the SIMULATED application
 * (controller/sim.c), judged as bench/ctl_shapes.sh judges the real jobs: the application's
 * rate over sliding 5 s windows (10 s for 0.1 s iterations), every second, within +-2 points
 * of the target from <= 30 s after a target change to the phase's end. Side by side on the
 * same seeds:
 *   grow   the length doubles while one evaluation's s.d. exceeds eps/3, up to eval_max 8 s
 *          (len_trial false, the default)
 *   trial  a doubling is kept only where it averaged the noise (len_trial)
 *   1 s    growth up to 1 s only (eval_max 1 s; a reference: best under correlated noise,
 *          worse under independent noise, see tests/unit/test_control_floating.c)
 * Noise cases: independent iteration noise, and correlated noise (an Ornstein-Uhlenbeck
 * speed factor, like a co-runner's memory traffic or the host taking CPU time) of a few
 * correlation times. Each run: one job of 2 ranks, targets 20, 45, 70, 20 % for 90 s each.
 *
 * With --windowed the job runs only inside its epoch-anchored window of each period, as
 * under vsched (sim_params.windowed), so a rate measured between reports also carries the
 * slice's phase.
 *
 * usage: control_noise [--seeds N] [--windowed]     (simulation only: no RT lock needed)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "sim.h"

#define PHASE_S  90
#define NPHASES  4
#define WIN_S    5
#define TOL      2.0
#define SETTLE_S 30
#define MAX_IT   200000

static const double phase_target[NPHASES] = {20, 45, 70, 20};

struct noise_case {
	const char *name;
	enum sim_shape shape;
	double a, comp, comm, t_full_s, noise, drift, tau_s;
};

static const struct noise_case cases[] = {
    {"compute, iteration noise 5 %", SIM_SHAPE_LINEAR, 0, 1, 0, 0.01, 0.05, 0, 0},
    {"compute, + drift 2 %, tau 2 s", SIM_SHAPE_LINEAR, 0, 1, 0, 0.01, 0.05, 0.02, 2},
    {"compute, + drift 3 %, tau 5 s", SIM_SHAPE_LINEAR, 0, 1, 0, 0.01, 0.05, 0.03, 5},
    {"compute, + drift 3 %, tau 20 s", SIM_SHAPE_LINEAR, 0, 1, 0, 0.01, 0.05, 0.03, 20},
    {"wait 8:4, + drift 3 %, tau 5 s", SIM_SHAPE_WAIT, 0.5, 1, 0, 0.01, 0.05, 0.03, 5},
    {"compute 0.1 s, iteration noise 30 %", SIM_SHAPE_LINEAR, 0, 1, 0, 0.1, 0.3, 0, 0},
    {"compute 0.1 s, 30 % + drift 3 %, tau 5 s", SIM_SHAPE_LINEAR, 0, 1, 0, 0.1, 0.3, 0.03, 5},
};

struct tally {
	unsigned phases, passed, changes;
	double win_in, win_n, abs_err;
};

/* One run of NPHASES phases; iteration end times go to ends[] (seconds from the start). */
struct rule {
	const char *name;
	bool trial;
	double eval_max_s;
};
static const struct rule rules[] = {{"grow", false, 8}, {"trial", true, 8}, {"1 s", false, 1}};
#define NRULES (sizeof(rules) / sizeof(rules[0]))

static bool windowed;

static void run_one(const struct noise_case *c, const struct rule *rule, uint64_t seed,
                    struct tally *t)
{
	static double ends[MAX_IT];
	struct sim_params sp;
	struct control_params cp;
	struct control_job job;
	struct control_decision d;
	struct sim s;
	mono_ns t0 = NSEC_PER_SEC;
	size_t n = 0;
	uint64_t changes[NPHASES + 1];

	sim_params_default(&sp);
	sp.comp = c->comp;
	sp.comm = c->comm;
	sp.t_full_s = c->t_full_s;
	sp.nranks = 2;
	sp.shape = c->shape;
	sp.shape_a = c->a;
	sp.noise = c->noise;
	sp.drift = c->drift;
	sp.drift_tau_s = c->tau_s;
	sp.seed = seed;
	sp.windowed = windowed;
	sim_init(&s, &sp, t0);
	control_params_default(&cp);
	cp.nranks = sp.nranks;
	cp.r_max = 1.0 / sp.t_full_s;
	cp.target_pct = phase_target[0];
	cp.u_max_pct = 90;
	cp.len_trial = rule->trial;
	cp.eval_max_ns = (mono_ns)(rule->eval_max_s * 1e9);
	if (control_job_init(&job, &cp, s.now, &d)) {
		fprintf(stderr, "control_job_init failed\n");
		exit(1);
	}
	sim_set(&s, d.period_ns, d.slice_ns);
	changes[0] = job.changes;
	for (int k = 0; k < NPHASES; k++) {
		mono_ns end = t0 + (mono_ns)(k + 1) * PHASE_S * NSEC_PER_SEC;
		if (k > 0) {
			control_set_target(&job, phase_target[k], s.now, &d);
			if (d.changed)
				sim_set(&s, d.period_ns, d.slice_ns);
		}
		while (s.now < end && n < MAX_IT) {
			if (sim_feed_job(&s, &job, &d)) {
				fprintf(stderr, "control_on_report failed\n");
				exit(1);
			}
			ends[n++] = (double)(s.now - t0) / 1e9;
		}
		changes[k + 1] = job.changes;
	}
	control_job_fini(&job);

	/* judge each phase from the iteration ends, as ctl_shapes.sh does: windows of WIN_S,
	 * longer where one iteration would be more than half the tolerance */
	double win = fmax(WIN_S, ceil(200.0 * sp.t_full_s / TOL));
	size_t lo = 0, hi = 0;
	for (int k = 0; k < NPHASES; k++) {
		double p0 = k * PHASE_S, p1 = p0 + PHASE_S, g = phase_target[k];
		double settle = -1;
		for (double w = p0 + win; w <= p1 + 1e-9; w += 1) {
			while (hi < n && ends[hi] <= w)
				hi++;
			while (lo < n && ends[lo] <= w - win)
				lo++;
			double r = 100.0 * (double)(hi - lo) / win * sp.t_full_s;
			bool in = fabs(r - g) <= TOL;
			if (!in)
				settle = -1;
			else if (settle < 0)
				settle = w - p0;
			if (w >= p0 + SETTLE_S) {
				t->win_n++;
				t->win_in += in;
				t->abs_err += fabs(r - g);
			}
		}
		t->phases++;
		t->passed += settle >= 0 && settle <= SETTLE_S;
		t->changes += (unsigned)(changes[k + 1] - changes[k]);
	}
}

int main(int argc, char **argv)
{
	unsigned seeds = 10;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--seeds") == 0 && i + 1 < argc)
			seeds = (unsigned)atoi(argv[++i]);
		else if (strcmp(argv[i], "--windowed") == 0)
			windowed = true;
		else
			seeds = 0;
	}
	if (seeds < 1 || seeds > 1000) {
		fprintf(stderr, "usage: control_noise [--seeds N (1..1000)] [--windowed]\n");
		return 2;
	}
	printf("floating, evaluation length under noise%s: %u seeds x %d phases of %d s "
	       "(targets 20 45 70 20), windows of %d s (10 s for 0.1 s iterations), band +-%.0f "
	       "from %d s after the change\n\n",
	       windowed ? ", windowed" : "", seeds, NPHASES, PHASE_S, WIN_S, TOL, SETTLE_S);
	printf("| noise | rule | phases passed | windows in band from 30 s | mean |error| of "
	       "a window | U changes per phase |\n|---|---|---|---|---|---|\n");
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		for (size_t k = 0; k < NRULES; k++) {
			struct tally t = {0};
			for (unsigned sd = 1; sd <= seeds; sd++)
				run_one(&cases[c], &rules[k], 1000 + sd, &t);
			printf("| %s | %s | %u / %u | %.1f %% | %.2f | %.1f |\n", cases[c].name,
			       rules[k].name, t.passed, t.phases, 100 * t.win_in / t.win_n,
			       t.abs_err / t.win_n, (double)t.changes / t.phases);
		}
	}
	return 0;
}
