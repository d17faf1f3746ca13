/*
 * Simulated BSP application (for tests and benchmarks of the controller only).
 *
 * Model. One iteration = compute C then communicate M, ratio C:M (paper 004 uses 5:1, 1:1,
 * 1:5); at full speed it takes t_full seconds, so R_max = 1/t_full iterations/s. Under a
 * constraint (period T, slice s = U*T) on every node, nodes unsynchronised:
 *
 *   - CPU work (compute, and the CPU cost of communication) progresses at the effective
 *     utilisation U_eff = U - o/T, where o is the CPU time lost per period to the switch
 *     in and out and the cache refill: the overhead grows as the period shrinks;
 *   - the communication phase is X = exchanges * M/(C+M) message exchanges. At each one
 *     the partner is descheduled with probability (1-U), and the expected wait until its
 *     next slice is then (1-U)*T/2: an expected (1-U)^2*T/2 per exchange. A coarse period
 *     makes the slices of communicating ranks miss each other for long (Fig. 2).
 *
 *   t_iter(T, U) = t_full / U_eff + X * (1-U)^2 * T / 2,   r(T, U) = t_full / t_iter
 *
 * With U >= 1 (no constraint) r = 1.
 *
 * Non-proportional jobs: the rate above, x, is mapped through a shape S (enum sim_shape):
 * S(x) = (1+a)x/(1+ax) for computation with a blocking wait of a times the compute time
 * (the wait overlaps the parked time: concave, above U), a + (1-a)x for progress made
 * off the CPU, x^a for concave (a < 1) or convex (a > 1, contention) jobs, min(x, a) for a
 * job that cannot run faster than a whatever its share. S(1) = 1 except for the capped one. Finer
 * periods approach r = U (the wait term vanishes) until the overhead term dominates; the best
 * period is ~ sqrt(o / wait coefficient), a few ms with the defaults, and the best |r - U| is a
 * fraction of a point.
 *
 * Noise: each iteration's duration is multiplied by (1 + noise * N(0,1)) (seeded) and,
 * with drift set, by (1 + m), m an Ornstein-Uhlenbeck process of s.d. drift and correlation
 * time drift_tau_s (drawn at each iteration's start): correlated noise, like a co-runner's
 * memory traffic, that successive evaluations share. Each rank measures its interval with an
 * extra (1 + rank_noise * N(0,1)). With slowdown set, every iteration from the next one on is
 * (1 + slowdown) times longer (a step in speed, like an external load starting). All ranks
 * report at the end of every iteration (a BSP barrier), 1 unit each. A constraint change in
 * the middle of an iteration changes the speed from then on (the report then mixes both
 * constraints).
 *
 * Windowed (p.windowed): the job runs only inside each period's window [kT, kT + slice),
 * fixed to the epoch as vsched's reservations are, at T/slice times the mean speed, and is
 * parked in between. The mean rate is the same; what changes is that iterations end, and
 * reports come, only inside windows, so a rate measured between two reports over a span S
 * is off by up to r (1 - U) T / S from where its ends fall in their windows.
 */
#include <math.h>
#include <string.h>

#include "control.h"
#include "sim.h"

void sim_params_default(struct sim_params *p)
{
	memset(p, 0, sizeof(*p));
	p->comp = 1;
	p->comm = 1;
	p->t_full_s = 10.0;
	p->nranks = 4;
	p->exchanges = 400;
	p->ovh_s = 5e-6;
	p->noise = 0.01;
	p->rank_noise = 0.002;
	p->seed = 1;
}

static uint64_t xs64(uint64_t *s)
{
	uint64_t x = *s ? *s : 0x9E3779B97F4A7C15ULL;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

double sim_uniform(uint64_t *state)
{
	return ((double)(xs64(state) >> 11) + 0.5) / 9007199254740992.0; /* (0, 1) */
}

double sim_gauss(uint64_t *state)
{
	double u1 = sim_uniform(state), u2 = sim_uniform(state);
	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

static double shape(const struct sim_params *p, double x)
{
	double a = p->shape_a;

	switch (p->shape) {
	case SIM_SHAPE_WAIT:
		return (1 + a) * x / (1 + a * x);
	case SIM_SHAPE_OFFSET:
		return a + (1 - a) * x;
	case SIM_SHAPE_POWER:
		return pow(x, a);
	case SIM_SHAPE_CAPPED:
		return x < a ? x : a;
	default:
		return x;
	}
}

static double bsp_rate(const struct sim_params *p, mono_ns period, mono_ns slice)
{
	if (period == 0 || slice >= period)
		return 1.0;
	double t = (double)period / 1e9;
	double u = (double)slice / (double)period;
	double ueff = u - p->ovh_s / t;
	if (ueff < 0.01 * u)
		ueff = 0.01 * u;
	double x = p->exchanges * p->comm / (p->comp + p->comm);
	double t_iter = p->t_full_s / ueff + x * (1 - u) * (1 - u) * t / 2;
	return p->t_full_s / t_iter;
}

double sim_model_rate(const struct sim_params *p, mono_ns period, mono_ns slice)
{
	return shape(p, bsp_rate(p, period, slice));
}

static void new_iteration(struct sim *s)
{
	double k = (1.0 + s->p.noise * sim_gauss(&s->rng)) * (1.0 + s->p.slowdown);

	if (s->p.drift > 0 && s->p.drift_tau_s > 0) {
		double a = exp(-(double)(s->now - s->drift_at) / 1e9 / s->p.drift_tau_s);
		s->drift = a * s->drift + sqrt(1 - a * a) * s->p.drift * sim_gauss(&s->rng);
		s->drift_at = s->now;
		k *= 1.0 + s->drift;
	}
	s->iter_scale = k < 0.5 ? 0.5 : k;
	s->progress = 0;
	s->iter_start = s->now;
}

void sim_init(struct sim *s, const struct sim_params *p, mono_ns start)
{
	memset(s, 0, sizeof(*s));
	s->p = *p;
	if (s->p.nranks > 64)
		s->p.nranks = 64;
	if (s->p.nranks < 1)
		s->p.nranks = 1;
	s->rng = p->seed * 0x9E3779B97F4A7C15ULL + 1;
	s->now = start;
	s->drift_at = start;
	s->period_ns = 0;
	s->slice_ns = 0;
	new_iteration(s);
}

void sim_set(struct sim *s, mono_ns period, mono_ns slice)
{
	s->period_ns = period;
	s->slice_ns = slice;
}

/* Fraction of an iteration done per ns at the current constraint. */
static double speed(const struct sim *s)
{
	double r = sim_model_rate(&s->p, s->period_ns, s->slice_ns);
	return r / (s->p.t_full_s * 1e9 * s->iter_scale);
}

/* Windowed: runs at v T/slice inside the windows from s->now until the iteration ends or
 * `until` (0: no limit). Returns true on the iteration's end, s->now then at it. */
static bool advance_windowed(struct sim *s, double v, mono_ns until)
{
	mono_ns t = s->period_ns, w = s->slice_ns;
	double vin = v * (double)t / (double)w;

	for (;;) {
		mono_ns ph = s->now % t;
		/* the end of the window it is in, else the start of the next one */
		mono_ns stop = s->now + (ph < w ? w - ph : t - ph);
		if (until != 0 && until < stop)
			stop = until;
		if (ph < w) {
			double left_ns = (1.0 - s->progress) / vin;
			if ((double)(stop - s->now) >= left_ns) {
				s->now += (mono_ns)ceil(left_ns);
				return true;
			}
			s->progress += vin * (double)(stop - s->now);
		}
		s->now = stop;
		if (until != 0 && s->now >= until)
			return false;
	}
}

bool sim_advance(struct sim *s, mono_ns until, mono_ns *interval_ns)
{
	double v = speed(s);
	double left_ns = (1.0 - s->progress) / v;

	if (s->p.windowed && s->period_ns > 0 && s->slice_ns < s->period_ns) {
		if (!advance_windowed(s, v, until))
			return false;
	} else if (until != 0 && (double)(until - s->now) < left_ns) {
		s->progress += v * (double)(until - s->now);
		s->now = until;
		return false;
	} else {
		s->now += (mono_ns)ceil(left_ns);
	}
	mono_ns dur = s->now - s->iter_start;
	for (uint32_t i = 0; interval_ns && i < s->p.nranks; i++) {
		double k = 1.0 + s->p.rank_noise * sim_gauss(&s->rng);
		interval_ns[i] = (mono_ns)((double)dur * (k < 0.5 ? 0.5 : k));
		if (interval_ns[i] == 0)
			interval_ns[i] = 1;
	}
	s->iters++;
	new_iteration(s);
	return true;
}

void sim_next_report(struct sim *s, mono_ns *interval_ns)
{
	sim_advance(s, 0, interval_ns);
}

int sim_feed_job(struct sim *s, struct control_job *job, struct control_decision *last)
{
	mono_ns iv[64];
	struct control_decision d;
	uint32_t n = s->p.nranks < 64 ? s->p.nranks : 64;

	sim_next_report(s, iv);
	s->last_rate = INFINITY;
	for (uint32_t i = 0; i < n; i++) {
		double r = 1e9 / (double)iv[i];
		if (r < s->last_rate)
			s->last_rate = r;
		int rc = control_on_report(job, i, 1, iv[i], s->now, &d);
		if (rc)
			return rc;
		if (d.changed)
			sim_set(s, d.period_ns, d.slice_ns);
		if (last && i == n - 1)
			*last = d;
	}
	return 0;
}
