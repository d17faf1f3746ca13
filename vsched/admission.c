/*
 * Admission control for partitioned EDF (DESIGN.md §2, papers/004 Sect. 3).
 *
 * A reservation (T, S, D) has density S / min(D, T). On one CPU a task set is accepted while
 *   Σ density <= cap,   cap = min(utilization_cap, rt_limit - reserve), cap >= 0,
 * where rt_limit = sched_rt_runtime_us / sched_rt_period_us is the kernel's RT throttling
 * limit (1.0 when runtime is -1). Σ density <= 1 is sufficient for EDF to meet every
 * deadline (exact for D = T); the cap keeps the tasks below RT throttling and leaves the
 * reserve to vsched's own threads. Everything here is pure except admission_read_rt_limit.
 */
#include "vsched.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define RT_RUNTIME_PATH "/proc/sys/kernel/sched_rt_runtime_us"
#define RT_PERIOD_PATH  "/proc/sys/kernel/sched_rt_period_us"
#define FIT_SLACK       1e-9 /* rounding slack of admission_fits */

double admission_density(const struct vsp_resv *r)
{
	uint64_t d = r->deadline ? r->deadline : r->period;
	uint64_t w = d < r->period ? d : r->period;

	if (w == 0)
		return r->slice ? INFINITY : 0.0; /* malformed: never fits */
	return (double)r->slice / (double)w;
}

static void set_why(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_why(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (why == NULL || whylen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
}

/* Reads one decimal integer (optionally followed by a newline) from path. */
static int read_ll(const char *path, long long *v, char *why, size_t whylen)
{
	char buf[64], *end;
	FILE *f = fopen(path, "r");
	size_t n;

	if (f == NULL) {
		set_why(why, whylen, "%s: %s", path, strerror(errno));
		return -1;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	errno = 0;
	*v = strtoll(buf, &end, 10);
	if (end == buf || errno != 0 || (*end != '\0' && strcmp(end, "\n") != 0)) {
		set_why(why, whylen, "%s: not an integer", path);
		return -1;
	}
	return 0;
}

/* NULL paths mean the kernel's files under /proc/sys/kernel. */
int admission_read_rt_limit(const char *runtime_path, const char *period_path, double *limit,
                            char *why, size_t whylen)
{
	long long runtime, period;

	runtime_path = runtime_path ? runtime_path : RT_RUNTIME_PATH;
	period_path = period_path ? period_path : RT_PERIOD_PATH;
	if (read_ll(runtime_path, &runtime, why, whylen) < 0 ||
	    read_ll(period_path, &period, why, whylen) < 0)
		return -1;
	if (period <= 0) {
		set_why(why, whylen, "%s: period %lld must be > 0", period_path, period);
		return -1;
	}
	if (runtime == -1) {
		*limit = 1.0; /* RT throttling off */
		return 0;
	}
	if (runtime < 0) {
		set_why(why, whylen, "%s: runtime %lld must be >= 0 or -1", runtime_path, runtime);
		return -1;
	}
	*limit = runtime >= period ? 1.0 : (double)runtime / (double)period;
	return 0;
}

double admission_cap(double configured, double rt_limit, double reserve)
{
	double cap = rt_limit - reserve;

	if (configured < cap)
		cap = configured;
	return cap > 0.0 ? cap : 0.0; /* also maps NaN to 0 */
}

bool admission_fits(double load, double density, double cap)
{
	/* Σ density <= cap; NaN compares false and is refused. */
	return load + density <= cap + FIT_SLACK;
}
