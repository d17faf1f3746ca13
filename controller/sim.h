/*
 * A simulated BSP application under a (period, slice) constraint, for testing and
 * benchmarking the control logic only. It is a model with the qualitative behaviour of
 * paper 004 Fig. 2 (coarse periods hurt a communicating application, finer periods
 * approach r = U, very fine periods lose to per-period overhead), not a claim about any
 * real application. The model is documented in sim.c.
 */
#ifndef VSCHED_SIM_H
#define VSCHED_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "timeutil.h"

/* How the job's speed maps from the BSP model's rate x (0..1) to its real rate: the shapes
 * of non-proportional jobs (sim.c). */
enum sim_shape {
	SIM_SHAPE_LINEAR = 0, /* r = x: the BSP model itself */
	SIM_SHAPE_WAIT,       /* compute C + blocking wait a*C: r = (1+a) x / (1 + a x), concave */
	SIM_SHAPE_OFFSET,     /* progress a made without the CPU: r = a + (1-a) x */
	SIM_SHAPE_POWER,      /* r = x^a: concave for a < 1, convex (contention) for a > 1 */
	SIM_SHAPE_CAPPED,     /* r = min(x, a): cannot run faster than a */
};

struct sim_params {
	double comp, comm;  /* compute : communicate ratio, e.g. 5:1, 1:1, 1:5 */
	double t_full_s;    /* iteration time at full speed (R_max = 1/t_full_s iter/s) */
	uint32_t nranks;    /* ranks (one per node, <= 64), each reports every iteration */
	double exchanges;   /* message exchanges per iteration if it only communicated */
	double ovh_s;       /* CPU time lost per period (context switches, cache refill) */
	double noise;       /* relative s.d. of an iteration's duration */
	double rank_noise;  /* relative s.d. of a rank's measured interval */
	double drift;       /* relative s.d. of a slowly varying speed factor (0: none) ... */
	double drift_tau_s; /* ... and its correlation time (e.g. a co-runner's phases) */
	double slowdown;    /* iterations this much longer from the next one on (0: none; 0.1:
	                     * 10 % longer): a load that starts; may be changed at any time */
	enum sim_shape shape;
	double shape_a; /* the shape's parameter */
	bool windowed;  /* progress only in each period's window [kT, kT + slice) (vsched's
	                 * epoch-anchored reservation), at T/slice times the mean speed */
	uint64_t seed;
};

struct sim {
	struct sim_params p;
	uint64_t rng;
	mono_ns now;
	mono_ns period_ns, slice_ns;
	double progress;   /* fraction of the current iteration done */
	double iter_scale; /* this iteration's duration multiplier (noise) */
	double drift;      /* the drift factor's current value (relative) */
	mono_ns drift_at;  /* when it was last drawn */
	mono_ns iter_start;
	uint64_t iters;
	double last_rate; /* job rate of the last report: slowest rank, units/s */
};

/* Defaults: 10 s iterations at full speed, 4 ranks, 400 exchanges, 5 us overhead, 1 %
 * iteration noise, 0.2 % rank noise, ratio 1:1. */
void sim_params_default(struct sim_params *p);
/* Noise-free rate as a fraction of full speed (0..1] under (period, slice). */
double sim_model_rate(const struct sim_params *p, mono_ns period, mono_ns slice);
void sim_init(struct sim *s, const struct sim_params *p, mono_ns start);
/* The constraint changes at s->now. */
void sim_set(struct sim *s, mono_ns period, mono_ns slice);
/* Advances time to `until` or to the end of the current iteration, whichever is first.
 * On an iteration end returns true, sets s->now to it and fills interval_ns[nranks] (each
 * rank's measured interval for its 1 unit of progress). */
bool sim_advance(struct sim *s, mono_ns until, mono_ns *interval_ns);
/* Runs to the end of the current iteration (the next report). */
void sim_next_report(struct sim *s, mono_ns *interval_ns);
struct control_job;
struct control_decision;
/* Runs the simulation to the next iteration end and feeds every rank's report (1 unit,
 * its interval) to the controller, applying changed decisions to the simulation at once.
 * *last (may be NULL) receives the decision of the evaluation (the last rank's report);
 * s->last_rate is the report's job rate (slowest rank), what r_current truly was.
 * Returns 0 or the first error of control_on_report(). */
int sim_feed_job(struct sim *s, struct control_job *job, struct control_decision *last);
/* Deterministic normal variate (xorshift64* + Box-Muller). */
double sim_gauss(uint64_t *state);
double sim_uniform(uint64_t *state);

#endif
