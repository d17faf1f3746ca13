/*
 * The compute phase of the test applications: a busy loop measured in CPU time, so that a
 * process under a CPU reservation needs proportionally more wall time for the same work.
 *
 * SPIN_WORK runs a fixed number of steps of a dependent multiply-add chain (no memory
 * traffic, so the loop's speed does not depend on co-runners' cache use), calibrated at
 * start against the thread's CPU clock: like a real application, an iteration is a fixed
 * amount of work. SPIN_CPU spins until the thread's CPU clock has advanced by the requested
 * time, exact in CPU time whatever the machine does (clock read every ~20 µs).
 *
 * A calibration depends on the moment it runs (a vCPU's steal time counts as the thread's CPU
 * time), so processes calibrated apart may do different work per "ms". Benchmarks that compare
 * runs give them all one value: APP_SPIN_NS_PER_LOOP (printed by `iowait --calibrate`).
 */
#include "apps.h"

#include <stdlib.h>

#define CALIB_STEPS  (1u << 14) /* loop steps per timed chunk, ~20 µs */
#define CALIB_CHUNKS 255        /* timed chunks; the median is kept */
#define CPU_CHECK    (1u << 14) /* SPIN_CPU: steps between CPU clock reads */

/* n steps of an LCG chain; the empty asm keeps the compiler from folding or vectorising. */
static uint64_t spin_steps(uint64_t n, uint64_t x)
{
	for (uint64_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

double spin_given_ns_per_loop(void)
{
	const char *v = getenv(SPIN_ENV);
	char *end;
	double x;

	if (!v || !*v)
		return 0;
	x = strtod(v, &end);
	if (*end || !(x >= 0.01 && x <= 1000))
		app_usage_fail("%s='%s': expected CPU ns per loop step, 0.01..1000", SPIN_ENV, v);
	return x;
}

void spin_init(struct spin *s, enum spin_mode mode)
{
	uint64_t t[CALIB_CHUNKS];

	s->mode = mode;
	s->sink = 1;
	s->ns_per_loop = 1.0;
	if (mode != SPIN_WORK)
		return;
	s->ns_per_loop = spin_given_ns_per_loop();
	if (s->ns_per_loop > 0)
		return;
	s->sink = spin_steps(CALIB_STEPS, s->sink); /* warm up */
	for (int i = 0; i < CALIB_CHUNKS; i++) {
		uint64_t c0 = app_thread_cpu_ns();

		s->sink = spin_steps(CALIB_STEPS, s->sink);
		t[i] = app_thread_cpu_ns() - c0;
	}
	/* the median: a chunk that a preemption or interrupt landed in does not count */
	qsort(t, CALIB_CHUNKS, sizeof(t[0]), cmp_u64);
	s->ns_per_loop = (double)t[CALIB_CHUNKS / 2] / CALIB_STEPS;
	if (s->ns_per_loop <= 0.0)
		s->ns_per_loop = 1.0;
}

bool spin_run(struct spin *s, uint64_t cpu_ns)
{
	if (s->mode == SPIN_WORK) {
		uint64_t left = (uint64_t)((double)cpu_ns / s->ns_per_loop + 0.5);

		while (left > 0) {
			uint64_t n = left < CPU_CHECK ? left : CPU_CHECK;

			if (app_stop)
				return false;
			s->sink = spin_steps(n, s->sink);
			left -= n;
		}
		return true;
	}
	uint64_t end = app_thread_cpu_ns() + cpu_ns;

	while (mono_before(app_thread_cpu_ns(), end)) {
		if (app_stop)
			return false;
		s->sink = spin_steps(CPU_CHECK, s->sink);
	}
	return true;
}
