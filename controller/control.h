/*
 * Per-job feedback control of a periodic real-time constraint (period, slice).
 * Pure decision logic: no sockets, no threads, no clock reads (the caller passes `now`),
 * no allocation after control_job_init() (the per-report path never allocates).
 *
 * Source: Lin, Sundararaj, Dinda 2008 (papers/004), Sect. 4; DESIGN.md §5.1.
 * Every job has a target r_target (% of R_max) and is given (period, slice) with
 *     U = slice / period = r_target / 100            (asserted on every decision)
 * On every job-level rate report or target change the error e = r_current - r_target
 * (percentage points) drives the choice of the period:
 *   - CONTROL_ALGO_LINEAR: the paper's algorithm exactly (see control_linear.c);
 *   - CONTROL_ALGO_ADAPTIVE: fewer iterations: drops reports measured under an older
 *     constraint, averages reports once in band (hysteresis), remembers per job which
 *     periods gave which error at which U and jumps straight to a known-good period on a
 *     target change, and searches the period geometrically then by golden section
 *     (see control_adaptive.c).
 * Exception to the invariant: while R_max is being calibrated the job runs at U = 1.
 *
 * A job has `nranks` ranks, each reporting (units, interval) on its own; a job-level
 * "report" (one control iteration) happens when every rank has reported since the last
 * one (or after round_timeout_ns with at least one rank). The job's rate is the slowest
 * rank's (default, a BSP job runs at the speed of its slowest process) or the mean.
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
	CONTROL_ALGO_LINEAR = 0,
	CONTROL_ALGO_ADAPTIVE = 1,
};

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
};

struct control_rank {
	double rate;    /* units/s of the last accepted report */
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
/* Parses "linear"/"adaptive". Returns 0 or -EINVAL. */
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

#endif
