/*
 * Monotonic time in 64-bit nanoseconds. CLOCK_MONOTONIC is the only clock used for
 * scheduling; comparisons are wrap-safe (signed difference).
 */
#ifndef VSCHED_TIMEUTIL_H
#define VSCHED_TIMEUTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

typedef uint64_t mono_ns;

#define NSEC_PER_USEC 1000ULL
#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_SEC  1000000000ULL

static inline uint64_t ts_to_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * NSEC_PER_SEC + (uint64_t)ts->tv_nsec;
}

static inline struct timespec ns_to_ts(uint64_t ns)
{
	struct timespec ts = {.tv_sec = (time_t)(ns / NSEC_PER_SEC),
	                      .tv_nsec = (long)(ns % NSEC_PER_SEC)};
	return ts;
}

/* Reads a clock; never fails for the clocks we use (a failure returns 0). */
static inline uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	if (clock_gettime(id, &ts) != 0)
		return 0;
	return ts_to_ns(&ts);
}

static inline mono_ns mono_now(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* a < b, wrap-safe. */
static inline bool mono_before(mono_ns a, mono_ns b)
{
	return (int64_t)(a - b) < 0;
}

static inline mono_ns mono_min(mono_ns a, mono_ns b)
{
	return mono_before(a, b) ? a : b;
}

#endif
