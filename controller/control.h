/*
 * Per-job feedback control of a periodic real-time constraint (period, slice).
 * Pure decision logic: no sockets, no threads, no clock reads (the caller passes `now`),
 * no allocation after control_job_init() (the per-report path never allocates).
 *
 * Source: Lin, Sundararaj, Dinda 2008 (papers/004), Sect. 4; DESIGN.md §5.1; docs/control.md.
 * Every job has a target r_target (% of R_max); the error e = r_current - r_target
 * (percentage points) drives its constraint (period, slice), U = slice / period:
 *   - CONTROL_ALGO_FLOATING (default): U is the controlled variable. The job's rate as a
 *     function of U at the current period is learnt online (slope fit over recent
 *     evaluations, efficiency r/U before there are two), and U moves to where the measured
 *     rate equals the target, within [min_slice/period, min(u_max, admission limit)]; the
 *     period is searched only for efficiency (the largest rate at the same U), never below
 *     the nodes' floor (see control_floating.c);
 *   - CONTROL_ALGO_LINEAR: the paper's algorithm exactly, U = r_target (control_linear.c);
 *   - CONTROL_ALGO_ADAPTIVE: U = r_target, fewer iterations: drops reports measured under
 *     an older constraint, averages reports once in band (hysteresis), remembers per job
 *     which periods gave which error at which U and jumps straight to a known-good period on
 *     a target change, and searches the period geometrically then by golden section
 *     (see control_adaptive.c).
 * linear and adaptive keep U = r_target / 100 (asserted by the tests on every decision).
 * Every algorithm runs a job at U = 1 while R_max is being calibrated.
 *
 * A job has `nranks` ranks, each reporting (units, interval) on its own; a job-level
 * "report" (one control iteration, an evaluation) happens when every rank has reported
 * since the last one (or after round_timeout_ns with at least one rank); with floating, an
 * evaluation also spans at least control_floating_eval_len() of wall time, and a rank's rate
 * is its units over the intervals of all its reports in it (whole application iterations:
 * libapprate reports at progress calls). The job's rate is the slowest rank's (default, a
 * BSP job runs at the speed of its slowest process) or the mean.
 */
#ifndef VSCHED_CONTROL_H
#define VSCHED_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "timeutil.h"

#define CONTROL_MAX_RANKS 65536u
#define CONTROL_MEMO_SIZE 32 /* remembered (period, U) -> error entries per job */
#define CONTROL_HIST_SIZE 16 /* evaluations kept for state classification */
#define CONTROL_AVG_MAX   8  /* at most this many reports averaged (adaptive) */

enum control_algo {
	CONTROL_ALGO_LINEAR = 0,   /* paper 004, U = target */
	CONTROL_ALGO_ADAPTIVE = 1, /* U = target, faster period search */
	CONTROL_ALGO_FLOATING = 2, /* U controlled, period searched for efficiency (default) */
};
#define CONTROL_ALGO_COUNT 3

enum control_agg {
	CONTROL_AGG_SLOWEST = 0, /* job rate = min over ranks */
	CONTROL_AGG_MEAN = 1,    /* job rate = mean over ranks */
};

/* For the dashboard. Precise definitions in docs/control.md and control_core.c. */
enum control_state {
	CONTROL_CALIBRATING = 0, /* measuring R_max at U = 1 */
	CONTROL_CONVERGING,      /* out of band or no report under the current constraint yet */
	CONTROL_STABLE,          /* the last evaluation kept the schedule, in band */
	CONTROL_OSCILLATING,     /* cannot hold the band: see control_core.c */
	CONTROL_REJECTED, /* a node refused the constraint, or no period reaches the target */
};

enum control_reason {
	CONTROL_R_NONE = 0,
	/* the schedule was kept */
	CONTROL_R_INBAND,      /* |e| <= eps */
	CONTROL_R_HYSTERESIS,  /* adaptive: this report out of band, the average is in band */
	CONTROL_R_WAIT_RANKS,  /* not every rank has reported in this round yet */
	CONTROL_R_STALE,       /* report measured (partly) under an older constraint: dropped */
	CONTROL_R_CALIB_WAIT,  /* calibration in progress */
	CONTROL_R_UNREACHABLE, /* adaptive: search exhausted, parked at the best period */
	CONTROL_R_NOTARGET,    /* no target set yet */
	CONTROL_R_CONFIRM,     /* floating: near the target, first evaluation at this constraint */
	/* the schedule changed */
	CONTROL_R_INIT,       /* first constraint (period = initial) */
	CONTROL_R_CALIBRATE,  /* run at U = 1 to measure R_max */
	CONTROL_R_CALIBRATED, /* R_max known: first constraint at the target */
	CONTROL_R_TARGET,     /* target changed: slice rescaled, period kept */
	CONTROL_R_STEP,       /* linear: period -= delta_period */
	CONTROL_R_RESET,      /* linear: period <= min_period, back to the initial period */
	CONTROL_R_MEMO,       /* adaptive: jumped to a remembered good period */
	CONTROL_R_SEARCH,     /* adaptive: next probe of the period search */
	CONTROL_R_BEST,       /* adaptive: search exhausted, moved to the best period seen */
	CONTROL_R_ROLLBACK,   /* control_reject(): back to the constraint before */
	CONTROL_R_USTEP,      /* floating: U moved towards the target */
	CONTROL_R_PROBE,      /* floating: a neighbouring period tried for efficiency */
	CONTROL_R_LIMIT,      /* floating: U cut to what admission allows */
	CONTROL_R_FLOOR,      /* the period raised to the nodes' floor */
	CONTROL_R_SILENT,     /* floating: no report for long at U < target: U = target */
};

/* How R_max is obtained when params.r_max is 0. */
enum control_calib {
	CONTROL_CALIB_RUN = 0,      /* run at U = 1 for calib_rounds rounds, R_max = their mean */
	CONTROL_CALIB_OBSERVED = 1, /* no full-speed run: R_max = max job rate observed so far
	                               (an estimate: marked uncalibrated; r_current is then
	                               overstated until the job has once run near full speed) */
};

struct control_params {
	enum control_algo algo;
	enum control_agg agg;
	enum control_calib calib;
	uint32_t nranks;           /* >= 1 */
	double target_pct;         /* (0, 100]; 0 = no target yet (job runs unconstrained) */
	double epsilon_pct;        /* threshold, percentage points; default 3 */
	double r_max;              /* units/s at full speed; 0 = calibrate */
	mono_ns delta_period_ns;   /* linear step; default 2 ms */
	mono_ns min_period_ns;     /* smallest period the nodes support; default 1 ms */
	mono_ns min_slice_ns;      /* smallest slice; default 100 us */
	mono_ns initial_period_ns; /* default 200 ms; also the largest period searched */
	uint32_t calib_rounds;     /* default 2 */
	mono_ns round_timeout_ns;  /* evaluate an incomplete round after this; 0 = never */
	mono_ns apply_latency_ns;  /* time from a decision to its effect on the nodes; default 0 */
	double stale_frac;         /* adaptive: a report counts for the current constraint only if
	                              at most this fraction of its interval lies before decision +
	                              apply_latency; default 0.05 (a report's interval starts when
	                              the previous report was sent, slightly before the decision
	                              that report caused, so 0 would drop every report) */
	uint32_t avg_reports;      /* adaptive: reports averaged once in band; default 8 */
	double noise_pct;          /* adaptive: initial guess of the s.d. of one report's error
	                              (points), refined while holding; default 0.5 */
	double jump_factor;        /* adaptive: a single report with |e| > jump_factor*eps
	                              leaves the band at once; default 3 */
	uint32_t osc_window;       /* evaluations looked at; default 16 (<= CONTROL_HIST_SIZE) */
	uint32_t osc_count;        /* band exits or sign flips that make it oscillating; 3 */
	double u_max_pct;      /* floating: the most U the job may hold, (0, 100]; default 100 */
	uint32_t eval_periods; /* floating: an evaluation spans at least this many periods (4),
	                        * and the length the slice's phase needs (docs/control.md) */
	mono_ns eval_min_ns;   /* floating: ... and at least this long; default 0 */
	mono_ns eval_max_ns;   /* floating: the noise-driven evaluation length stops here; 1 s */
	mono_ns u_slot_ns;     /* floating: U in whole slots of this length per period (the
	                          co-scheduling slot q); 0: continuous (default) */
	bool len_trial;        /* floating: a doubled evaluation length is kept only where it
	                          averaged the noise; false (default): it grows while noisy */
};

struct control_decision {
	bool changed; /* period/slice differ from the previous decision */
	mono_ns period_ns;
	mono_ns slice_ns; /* slice/period == target/100 except at U = 1 (calibrating, no
	                     target) */
	enum control_reason reason;
	uint32_t gen;    /* constraint generation: bumped on every change */
	double err_pct;  /* e of the latest evaluation (NAN if none yet); a kept decision
	                    for a stale or waiting report carries the previous one */
	double rate_pct; /* r_current of the latest evaluation (NAN if none yet) */
	double u_pct;    /* U = slice/period of the constraint in force, percent */
};

struct control_rank {
	double rate;    /* units/s of the last accepted report (floating: over the round) */
	double units;   /* floating: units reported in this round */
	mono_ns ivl;    /* floating: and the intervals they cover */
	mono_ns end;    /* when it was received */
	uint32_t round; /* round in which it last reported */
	bool seen;      /* reported at least once */
};

struct control_memo {
	mono_ns period_ns;
	double u;       /* utilisation it was measured at (0..1) */
	double err_sum; /* sum of e over n reports */
	uint32_t n;
	uint32_t stamp; /* LRU */
};

struct control_hist {
	float err;
	uint8_t inband; /* the algorithm judged it in band */
	uint8_t acted;  /* the schedule changed because of this evaluation */
};

enum control_search {
	CONTROL_S_IDLE = 0, /* not searching: verifying or holding */
	CONTROL_S_DESCEND,  /* halving the period while |e| improves */
	CONTROL_S_ASCEND,   /* doubling (the start was finer than the optimum) */
	CONTROL_S_GOLDEN,   /* golden section inside a bracket, on log2(period) */
	CONTROL_S_PARKED,   /* exhausted: sitting at the best period */
};

#define CONTROL_FPTS 6 /* floating: evaluations kept for the slope fit */

struct control_fpoint {
	double u, r; /* U and the rate measured there, percent */
};

enum control_fsearch {
	CONTROL_FS_NONE = 0, /* holding the period, moving U */
	CONTROL_FS_PROBE,    /* measuring a neighbouring period at the same U */
};

/* The floating algorithm's state (control_floating.c). */
struct control_float {
	double u_limit_pct;   /* the most U admission allows now (control_set_u_limit); 100: none */
	double u_refused_pct; /* the lowest U refused under this limit (100: none); the limit is
	                       * bisected towards it (control_probe_u_limit) */
	double slope;         /* dr/dU at the current period (points per point); 0: not known */
	struct control_fpoint pts[CONTROL_FPTS]; /* evaluations at the current period (ring) */
	uint32_t npts, pts_pos;
	double noise_pct;   /* s.d. of one evaluation's rate, points */
	uint32_t noise_n;   /* measured pairs in noise_pct (besides the configured guess) */
	uint32_t shifts;    /* pairs taken as a shift of the job's speed, not as noise */
	uint8_t big;        /* the last pairs, newest in bit 0: 1 = apart as far as a shift */
	double prev_e;      /* previous evaluation's error at this constraint and target (NAN) */
	uint32_t blind;     /* small U steps in a row, each from an evaluation without a pair */
	uint32_t win_mult;  /* evaluation length multiplier, 1..: doubled while noisy ... */
	uint32_t win_cap;   /* ... up to this (lowered where doubling did not average) */
	double len_var;     /* sum of the pairs' variances (d^2/2) at the current length ... */
	uint32_t len_pairs; /* ... over this many pairs, of len_evals evaluations */
	uint32_t len_evals;
	double var_before;    /* a doubling on trial: the variance before it (0: none) ... */
	uint32_t mult_before; /* ... and the multiplier */
	uint32_t settled;     /* consecutive evaluations inside the dead band */
	uint32_t steps;       /* U steps at the current period */
	bool full_step;       /* the last step was against a real change (beyond 3 dead bands) */
	double need_u_pct;    /* unreachable: the U the model says the target needs (NAN) */
	uint8_t search;       /* enum control_fsearch */
	int8_t dir;           /* probing direction: -1 finer, +1 coarser */
	bool searched;        /* the period search is done (until the floor moves) */
	bool improved;        /* a probe of this search beat the start */
	mono_ns best_period;  /* the search's best period so far and the U it needs */
	double best_u;
	bool unplaced;    /* the first U of its target was refused: no reservation held (U 100 in
	                   * the loop means unconstrained); the limit is bisected up from 0 */
	uint32_t probe_n; /* evaluations of the running probe so far ... */
	double probe_sum; /* ... and the sum of their rates (the probe is judged on the mean) */
};

/* One job's controller state. Owned by the caller; initialise with control_job_init(),
 * release with control_job_fini(). Plain data, no hidden pointers except `ranks`. */
struct control_job {
	struct control_params p;
	struct control_rank *ranks; /* nranks, allocated by control_job_init() */
	uint32_t nranks;

	/* current constraint */
	double target_pct;
	mono_ns period_ns, slice_ns;
	uint32_t gen;      /* constraint generation */
	mono_ns gen_start; /* when the current constraint was decided */
	mono_ns floor_ns;  /* the nodes' period floor (control_set_floor); 0: none */
	enum control_state state;
	bool rejected;    /* node refused; cleared by the next accepted change */
	bool unreachable; /* no period reaches the target (search exhausted / 2 sweeps) */

	/* the current constraint's utilisation and the target it was made for, and the same
	 * for the constraint before the last change (for control_reject()) */
	double cur_u_pct, cur_target_pct;
	double prev_u_pct, prev_target_pct;
	mono_ns prev_period_ns;

	/* rate */
	double r_max; /* units/s; 0 while unknown */
	bool r_max_calibrated;
	double calib_sum;
	uint32_t calib_n;
	double r_observed_max; /* max job rate ever seen (units/s) */
	double last_rate_pct;  /* last job-level r_current (% of R_max), NAN if none */
	double last_err_pct;

	/* rounds */
	uint32_t round;
	uint32_t round_count; /* ranks reported in this round */
	mono_ns round_start;
	mono_ns last_span_ns; /* how long the last evaluated round lasted */

	/* counters */
	uint64_t reports;             /* rank reports accepted */
	uint64_t stale;               /* rank reports dropped as stale (adaptive) */
	uint64_t evaluations;         /* job-level reports (control iterations) */
	uint64_t changes;             /* decisions that changed the schedule */
	uint32_t resets;              /* linear: resets since the last target change */
	uint32_t inband_since_target; /* evaluations in band since the last target change */
	bool lost; /* linear: reset after having been in band since the target change */

	/* classification history (ring) */
	struct control_hist hist[CONTROL_HIST_SIZE];
	uint32_t hist_n, hist_pos;

	/* adaptive: averaging at the current constraint */
	double avg_buf[CONTROL_AVG_MAX];
	uint32_t avg_n, avg_pos;
	bool holding;     /* in band at the current constraint */
	double noise_pct; /* estimated s.d. of one report's error (points) */

	/* adaptive: memo of granularities */
	struct control_memo memo[CONTROL_MEMO_SIZE];
	uint32_t memo_n, memo_clock;

	/* adaptive: period search on x = log2(period_ns) */
	enum control_search search;
	double s_lo, s_hi; /* bracket */
	double s_best_x, s_best_e;
	double s_prev_x, s_prev_e; /* previous probe */
	double s_x;                /* probe being measured */
	double s_gx1, s_gx2;       /* golden section interior points */
	double s_ge1, s_ge2;
	uint32_t s_steps;

	struct control_float fl;
};

/* control_core.c */
/* Fills defaults (see struct control_params). */
void control_params_default(struct control_params *p);
/* Validates p. Returns 0 or -EINVAL. */
int control_params_check(const struct control_params *p);
/* Initialises job from p and computes the first decision into *out (may be NULL): with a
 * target and R_max known, (initial period, U*initial); with R_max unknown and
 * calib == RUN, (initial, initial) i.e. U = 1 (calibrating). Allocates the rank array
 * (the only allocation). Returns 0, -EINVAL (bad params; nothing allocated) or -ENOMEM. */
int control_job_init(struct control_job *job, const struct control_params *p, mono_ns now,
                     struct control_decision *out);
/* Frees the rank array. Accepts NULL and an already finished job. */
void control_job_fini(struct control_job *job);
/* Changes the number of ranks (allocates; not on the report path). The round restarts.
 * Returns 0, -EINVAL or -ENOMEM (then nothing changed). */
int control_set_nranks(struct control_job *job, uint32_t nranks);
/* A rank's report: `units` of progress over the `interval_ns` ending at `now`.
 * Never allocates, never blocks. Returns 0 and a decision in *out (out->changed tells
 * whether to send a new constraint), or -EINVAL (zero interval, NULL) / -ERANGE (rank >=
 * nranks); on error nothing changes. */
int control_on_report(struct control_job *job, uint32_t rank, uint64_t units, mono_ns interval_ns,
                      mono_ns now, struct control_decision *out);
/* Changes the target (pct in (0, 100]). Returns 0 and a decision, or -EINVAL (nothing
 * changed). A target whose slice would be below min_slice at the initial period is refused
 * with -ERANGE. */
int control_set_target(struct control_job *job, double pct, mono_ns now,
                       struct control_decision *out);
/* Sets R_max (units/s > 0) given by the administrator; marks it calibrated. */
int control_set_rmax(struct control_job *job, double r_max, mono_ns now,
                     struct control_decision *out);
/* The last changed decision was refused by a node (admission control): restore the
 * constraint and target in force before it (one level of undo; every decision is assumed
 * accepted unless this is called), state REJECTED until the next change. */
void control_reject(struct control_job *job, mono_ns now, struct control_decision *out);

const char *control_state_name(enum control_state s);
const char *control_reason_name(enum control_reason r);
const char *control_algo_name(enum control_algo a);
/* Sets the nodes' period floor (the smallest period every node of the job serves with
 * < 1 % misses; 0: the params' min_period). A constraint below it moves up at once. Returns
 * 0 and a decision, or -EINVAL. */
int control_set_floor(struct control_job *job, mono_ns floor_ns, mono_ns now,
                      struct control_decision *out);
/* Floating: the most U admission allows the job now (percent, (0, 100]). A U above it is cut
 * at once (CONTROL_R_LIMIT). A limit below 100 also closes the bisection of a refused rise
 * (control_probe_u_limit): the job rises again only after its back-off
 * (control_retry_u_limit). Other algorithms keep U = target: -EINVAL. */
int control_set_u_limit(struct control_job *job, double u_pct, mono_ns now,
                        struct control_decision *out);
/* Floating, capped by a refused rise: true while the gap between the limit (admitted) and
 * the lowest refused U is wider than a point and the job holds its limit. */
bool control_u_limit_open(const struct control_job *job);
/* One bisection step of that gap: the limit rises to its middle and U with it (a decision to
 * send; a refusal of it narrows the gap from above, control_reject()). Returns 0, or
 * -EAGAIN when there is nothing to probe (the gap is closed then). */
int control_probe_u_limit(struct control_job *job, mono_ns now, struct control_decision *out);
/* The daemon's back-off after a refused rise is over. A job that needs more U than its cap
 * (unreachable below its target) bisects at once between its cap and the U the model says it
 * needs (+1 point), as control_probe_u_limit() does after a refusal: a decision to send now,
 * the next steps from control_probe_u_limit(); room freed for it (another job gave U back) is
 * taken before anyone else's next evaluation can take it. Any other job has its cap lifted
 * (control_set_u_limit(100): its next evaluation may rise). Returns 0, or -EINVAL. */
int control_retry_u_limit(struct control_job *job, mono_ns now, struct control_decision *out);
/* A refused target change that keeps the new target (floating, a U step the nodes have no
 * room for): the constraint goes back as control_reject() does, the target stays, and U is
 * capped at the U in force before the change. */
void control_reject_keep_target(struct control_job *job, mono_ns now, struct control_decision *out);
/* A refused first target of a floating job (no constraint before it): the target stays, the
 * job holds no reservation (unplaced) and its U limit is bisected up from 0 towards the
 * refused U (control_probe_u_limit), as for a refused rise. */
void control_reject_unplaced(struct control_job *job, mono_ns now, struct control_decision *out);
/* Floating: none of the job's ranks has reported for long (the caller's judgement: many of
 * their usual gaps between reports). A U so small that no iteration completes sends no
 * report, and without a report no evaluation would ever correct it; so when the job holds
 * less U than its target, U goes to the target (the proportional model), at the best period
 * known. Returns 0 and a decision, or -EAGAIN when U is already at or above that (a job that
 * is silent there is hung or waiting, not starved: nothing to correct). */
int control_on_silence(struct control_job *job, mono_ns now, struct control_decision *out);
/* The constraint in force took effect at `at` (e.g. windows committed after the decision):
 * reports measured before it are stale, the round starts again there. */
void control_restart_round(struct control_job *job, mono_ns at);
/* The job's U in force, percent. */
double control_u_pct(const struct control_job *job);
/* Parses "linear"/"adaptive"/"floating". Returns 0 or -EINVAL. */
int control_algo_parse(const char *s, enum control_algo *out);

/* control_step.c: internal, shared by control_*.c */
void control_apply(struct control_job *job, mono_ns period, double u_pct, mono_ns now,
                   enum control_reason why, struct control_decision *out);
void control_keep(const struct control_job *job, enum control_reason why,
                  struct control_decision *out);
mono_ns control_slice_for(mono_ns period, double u_pct);
mono_ns control_min_period(const struct control_job *job, double u_pct);

/* control_linear.c */
void control_linear_eval(struct control_job *job, double e, mono_ns now,
                         struct control_decision *out);
void control_linear_target(struct control_job *job, double old_pct, mono_ns now,
                           struct control_decision *out);

/* control_adaptive.c */
bool control_adaptive_fresh(const struct control_job *job, mono_ns interval_ns, mono_ns now);
void control_adaptive_eval(struct control_job *job, double e, mono_ns now,
                           struct control_decision *out);
void control_adaptive_target(struct control_job *job, double old_pct, mono_ns now,
                             struct control_decision *out);
void control_adaptive_reset(struct control_job *job);

/* control_floating.c */
void control_floating_init(struct control_job *job);
/* Wall time an evaluation must span at the current constraint. */
mono_ns control_floating_eval_len(const struct control_job *job);
void control_floating_eval(struct control_job *job, double e, mono_ns now,
                           struct control_decision *out);
void control_floating_target(struct control_job *job, mono_ns now, struct control_decision *out);
/* After the floor or the limit moved: re-place the constraint inside the bounds. */
void control_floating_bounds(struct control_job *job, enum control_reason why, mono_ns now,
                             struct control_decision *out);
/* control_reject() for a floating job: a refused rise of U caps it where it was. */
void control_floating_rejected(struct control_job *job, double refused_u_pct);
/* control_reject_unplaced() for a floating job, after control_reject_keep_target(). */
void control_floating_unplaced(struct control_job *job, double refused_u_pct);
/* U for a first constraint at the target: the target, within the floating bounds. */
double control_start_u(const struct control_job *job);
/* For control_retry_u_limit(): a capped job that needs more U than its cap gets the U it needs
 * (+1 point) as the bisection's upper end; false when there is nothing to bisect. */
bool control_floating_reopen_limit(struct control_job *job);
/* In the dead band (held, not stepped) on the last evaluation. */
bool control_floating_inband(const struct control_job *job);

#endif
